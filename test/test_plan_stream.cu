/*
 * Plans on a CUDA stream (dart_plan.h, the _stream forms): a kernel writes
 * the roots, the bcast runs behind it on the same stream, a kernel checks
 * the leaves behind the bcast's end, with no host synchronisation in
 * between; then the same for reduce. Every leaf references the next
 * unit's root of the same index; 4 Mi ints per unit, so that a pack that
 * did not wait for the producer (or a checker that did not wait for the
 * unpack) shows; several rounds, so that reused buffers are covered.
 * Then bcasts where unit 1's stream is slow: from 3 units on, where unit
 * 0 gets nothing from unit 1, unit 0's stream runs rounds ahead, and its
 * packs into unit 1's slots must wait for unit 1's stream to have read
 * them. Needs a CUDA device: skipped without one, and under emulation.
 */
#include "dart_test_cuda.h"

#include <dart/dart_memkind.h>
#include <dart/dart_plan.h>

#define N ((size_t)4 << 20)
#define ROUNDS 4
#define SLOW_ROUNDS 8
#define SLOW_NS 2000000ull /* unit 1's wait before each end */

int main(int argc, char **argv)
{
  dart_test_init(&argc, &argv);
  int me = dart_test_unit, n = dart_test_units;
  dart_test_need_cuda();
  int next = (me + 1) % n, prev = (me + n - 1) % n;
  dart_plan_root_t *iremote =
      (dart_plan_root_t *)malloc(N * sizeof *iremote);
  for (size_t i = 0; i < N; i++) {
    iremote[i].unit.id = next;
    iremote[i].index = i;
  }
  dart_plan_t plan;
  CHECK_OK(dart_plan_create(DART_TEAM_ALL, N, N, NULL, iremote,
                            DART_TYPE_INT, &plan));
  free(iremote);
  int *roots, *leaves;
  unsigned long long *bad, bad_host = 0;
  cudaStream_t s;
  CUDA_OK(cudaMalloc((void **)&roots, N * sizeof(int)));
  CUDA_OK(cudaMalloc((void **)&leaves, N * sizeof(int)));
  CUDA_OK(cudaMalloc((void **)&bad, sizeof *bad));
  CUDA_OK(cudaMemset(bad, 0, sizeof *bad));
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (int round = 0; round < ROUNDS; round++) {
    /* bcast: my leaves get the next unit's roots */
    produce<<<1024, 256, 0, s>>>(roots, N, 10 * round + me);
    CHECK_OK(dart_plan_bcast_begin_stream(plan, roots, leaves,
                                          DART_OP_REPLACE, s));
    CHECK_OK(dart_plan_bcast_end_stream(plan, roots, leaves,
                                        DART_OP_REPLACE, s));
    consume<<<1024, 256, 0, s>>>(leaves, N, 10 * round + next, bad);
    /* reduce: my roots get the previous unit's leaves added */
    produce<<<1024, 256, 0, s>>>(leaves, N, 10 * round + me);
    CUDA_OK(cudaMemsetAsync(roots, 0, N * sizeof(int), s));
    CHECK_OK(dart_plan_reduce_begin_stream(plan, leaves, roots, DART_OP_SUM,
                                           s));
    CHECK_OK(dart_plan_reduce_end_stream(plan, leaves, roots, DART_OP_SUM,
                                         s));
    consume<<<1024, 256, 0, s>>>(roots, N, 10 * round + prev, bad);
  }
  for (int round = 0; round < SLOW_ROUNDS; round++) {
    int seed = 100 + 10 * round;
    produce<<<1024, 256, 0, s>>>(roots, N, seed + me);
    CHECK_OK(dart_plan_bcast_begin_stream(plan, roots, leaves,
                                          DART_OP_REPLACE, s));
    if (me == 1) busy<<<1, 1, 0, s>>>(SLOW_NS);
    CHECK_OK(dart_plan_bcast_end_stream(plan, roots, leaves,
                                        DART_OP_REPLACE, s));
    consume<<<1024, 256, 0, s>>>(leaves, N, seed + next, bad);
  }
  CUDA_OK(cudaStreamSynchronize(s));
  CUDA_OK(cudaMemcpy(&bad_host, bad, sizeof bad_host, cudaMemcpyDeviceToHost));
  CHECK_EQ(bad_host, 0);
  CHECK_OK(dart_plan_destroy(&plan));
  CUDA_OK(cudaStreamDestroy(s));
  CUDA_OK(cudaFree(roots));
  CUDA_OK(cudaFree(leaves));
  CUDA_OK(cudaFree(bad));
  return dart_test_finish();
}
