/*
 * Stream-ordered transfers on a CUDA device: a kernel produces data, the
 * put behind it on the same stream sends it to the next unit of the node
 * with no host synchronisation in between, and the target's kernel checks
 * every element; a get followed on its stream by a checking kernel sees
 * the data the get brought. 64 MiB, so that a copy that did not wait for
 * the producer (or a consumer that did not wait for the copy) shows.
 * Needs a CUDA device: skipped without one, and under emulation.
 */
#include "dart_test_cuda.h"

#include <dart/dart_ext.h>
#include <dart/dart_memkind.h>

#define N ((size_t)16 << 20) /* ints */

int main(int argc, char **argv)
{
  dart_test_init(&argc, &argv);
  int me = dart_test_unit, n = dart_test_units;
  dart_test_need_cuda();
  int next = (me + 1) % n, prev = (me + n - 1) % n;
  dart_gptr_t g;
  CHECK_OK(dart_team_memalloc_kind(DART_TEAM_ALL, N, DART_TYPE_INT,
                                   DART_MEMKIND_CUDA, &g));
  dart_gptr_t to_next = g, mine_g = g;
  to_next.unitid = next;
  mine_g.unitid = me;
  int *src, *dst, *mine;
  unsigned long long *bad, bad_host = 0;
  cudaStream_t s;
  CUDA_OK(cudaMalloc((void **)&src, N * sizeof(int)));
  CUDA_OK(cudaMalloc((void **)&dst, N * sizeof(int)));
  CUDA_OK(cudaMalloc((void **)&bad, sizeof *bad));
  CUDA_OK(cudaMemset(bad, 0, sizeof *bad));
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK_OK(dart_gptr_getaddr(mine_g, (void **)&mine));

  /* producer kernel -> put on the same stream -> target's consumer */
  produce<<<1024, 256, 0, s>>>(src, N, me);
  CHECK_OK(dart_put_stream(to_next, src, N, DART_TYPE_INT, DART_TYPE_INT,
                           s));
  CUDA_OK(cudaStreamSynchronize(s));
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  consume<<<1024, 256, 0, s>>>(mine, N, prev, bad);
  CUDA_OK(cudaStreamSynchronize(s));
  CUDA_OK(cudaMemcpy(&bad_host, bad, sizeof bad_host, cudaMemcpyDeviceToHost));
  CHECK_EQ(bad_host, 0);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));

  /* get (the next unit holds our data) -> consumer on the same stream */
  CUDA_OK(cudaMemset(dst, 0, N * sizeof(int)));
  CUDA_OK(cudaMemset(bad, 0, sizeof *bad));
  CHECK_OK(dart_get_stream(dst, to_next, N, DART_TYPE_INT, DART_TYPE_INT, s));
  consume<<<1024, 256, 0, s>>>(dst, N, me, bad);
  CUDA_OK(cudaStreamSynchronize(s));
  CUDA_OK(cudaMemcpy(&bad_host, bad, sizeof bad_host, cudaMemcpyDeviceToHost));
  CHECK_EQ(bad_host, 0);

  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CUDA_OK(cudaStreamDestroy(s));
  CUDA_OK(cudaFree(src));
  CUDA_OK(cudaFree(dst));
  CUDA_OK(cudaFree(bad));
  CHECK_OK(dart_team_memfree(g));
  return dart_test_finish();
}
