/*
 * Plans on a CUDA stream: the _stream forms of dart_plan.h against the
 * same plan's host-synchronised forms, side by side in one run, on a ring
 * (each unit's leaves are the next unit's roots) of n ints per unit:
 *   stream   a kernel writes the roots, bcast_begin_stream/_end_stream,
 *            a kernel reads the leaves: all queued on one stream, the
 *            host never waits for the device
 *   host     the same kernels, with cudaStreamSynchronize before begin
 *            and the plain bcast_begin/_end (which return with the data
 *            there)
 * Rows: time per round (us, median over repetitions of many rounds), and
 * "host_wait": the host's time inside one round's plan calls while a busy
 * kernel of 1 ms runs ahead of them on the stream. Each repetition ends
 * with a check that every leaf holds its root.
 * Then reduce with SUM on the stream form, n leaves per unit on the next
 * unit's roots: "fan_in4", four leaves on each root (n / 4 roots, leaf i
 * on root i % (n / 4)), whose sums the device computes with a thread per
 * root, against "fan_in1", one leaf per root (n roots), a thread per
 * leaf: rows gpu_plan_reduce, time per round (zero the roots, a kernel
 * writes the leaves, the reduce), each repetition checked.
 * Needs CUDA devices (77 without, as under emulation); --smoke: small
 * sizes, few rounds; --max-size: the largest n * sizeof(int) (4 MiB by
 * default, bench.h; scripts/device-check asks for 16 MiB).
 */
#include <cuda_runtime.h>
#include <dart/dart.h>
#include <dart/dart_memkind.h>
#include <dart/dart_plan.h>

#include "bench.h"
#include "dart_cuda_data.cuh"

#define CUDA_OK(call)                                                      \
  do {                                                                     \
    cudaError_t err_ = (call);                                             \
    if (err_ != cudaSuccess) {                                             \
      fprintf(stderr, "bench_gpu_plan: %s: %s\n", #call,                   \
              cudaGetErrorString(err_));                                   \
      exit(1);                                                             \
    }                                                                      \
  } while (0)
#define DART_OK_OR_EXIT(call)                                              \
  do {                                                                     \
    if ((call) != DART_OK) {                                               \
      fprintf(stderr, "bench_gpu_plan: %s failed\n", #call);               \
      exit(1);                                                             \
    }                                                                      \
  } while (0)

static int me, units, next;
static cudaStream_t s;
static int *roots, *leaves;
static unsigned long long *bad;

/* The bcast of one round: on the stream, or after synchronising it. */
static void bcast(dart_plan_t plan, bool streamed)
{
  if (streamed) {
    DART_OK_OR_EXIT(dart_plan_bcast_begin_stream(plan, roots, leaves,
                                                 DART_OP_REPLACE, s));
    DART_OK_OR_EXIT(dart_plan_bcast_end_stream(plan, roots, leaves,
                                               DART_OP_REPLACE, s));
  } else {
    CUDA_OK(cudaStreamSynchronize(s));
    DART_OK_OR_EXIT(dart_plan_bcast_begin(plan, roots, leaves,
                                          DART_OP_REPLACE));
    DART_OK_OR_EXIT(dart_plan_bcast_end(plan, roots, leaves,
                                        DART_OP_REPLACE));
  }
}

/* One round; seed names the data. */
static void round_of(dart_plan_t plan, size_t n, bool streamed, int seed)
{
  produce<<<256, 256, 0, s>>>(roots, n, seed * units + me);
  bcast(plan, streamed);
  consume<<<256, 256, 0, s>>>(leaves, n, seed * units + next, bad);
}

/* Seconds per round over rounds rounds (the device done at the end). */
static double rounds_of(dart_plan_t plan, size_t n, bool streamed,
                        int rounds, int *seed)
{
  dart_barrier(DART_TEAM_ALL);
  double t0 = bench_now();
  for (int r = 0; r < rounds; r++) round_of(plan, n, streamed, (*seed)++);
  CUDA_OK(cudaStreamSynchronize(s));
  return (bench_now() - t0) / rounds;
}

/* The host's seconds in one round's plan calls behind a busy kernel. */
static double host_wait(dart_plan_t plan, size_t n, bool streamed,
                        unsigned long long ns, int *seed)
{
  dart_barrier(DART_TEAM_ALL);
  busy<<<1, 1, 0, s>>>(ns);
  produce<<<256, 256, 0, s>>>(roots, n, *seed * units + me);
  double t0 = bench_now();
  bcast(plan, streamed);
  double t = bench_now() - t0;
  consume<<<256, 256, 0, s>>>(leaves, n, *seed * units + next, bad);
  (*seed)++;
  CUDA_OK(cudaStreamSynchronize(s));
  return t;
}

/* Counts into *bad the roots that are not the sum of their fan_in leaves
 * of produce(seed), leaf i on root i % nroots (wrapping as int does). */
__global__ void check_sums(const int *roots, size_t nroots, int fan_in,
                           int seed, unsigned long long *bad)
{
  for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; j < nroots;
       j += (size_t)gridDim.x * blockDim.x) {
    unsigned sum = 0;
    for (int t = 0; t < fan_in; t++)
      sum += (unsigned)seed * 1000003u + (unsigned)(j + t * nroots);
    if ((unsigned)roots[j] != sum) atomicAdd(bad, 1ull);
  }
}

/* A reduce round of the stream form: n leaves on n / fan_in roots. */
static void reduce_round(dart_plan_t plan, size_t n, int fan_in, int seed)
{
  CUDA_OK(cudaMemsetAsync(roots, 0, n / fan_in * sizeof(int), s));
  produce<<<256, 256, 0, s>>>(leaves, n, seed * units + me);
  DART_OK_OR_EXIT(
      dart_plan_reduce_begin_stream(plan, leaves, roots, DART_OP_SUM, s));
  DART_OK_OR_EXIT(
      dart_plan_reduce_end_stream(plan, leaves, roots, DART_OP_SUM, s));
}

/* Seconds per reduce round; the last round's sums checked. */
static double reduce_rounds(dart_plan_t plan, size_t n, int fan_in,
                            int rounds, int *seed)
{
  dart_barrier(DART_TEAM_ALL);
  double t0 = bench_now();
  for (int r = 0; r < rounds; r++) reduce_round(plan, n, fan_in, (*seed)++);
  CUDA_OK(cudaStreamSynchronize(s));
  double t = (bench_now() - t0) / rounds;
  /* my roots got the previous unit's leaves of the last round */
  int prev = (me + units - 1) % units;
  check_sums<<<256, 256, 0, s>>>(roots, n / fan_in, fan_in,
                                 (*seed - 1) * units + prev, bad);
  CUDA_OK(cudaStreamSynchronize(s));
  return t;
}

/* A plan of n leaves per unit, leaf i on root i % (n / fan_in) of the
 * next unit. */
static dart_plan_t ring_plan(size_t n, int fan_in)
{
  size_t nroots = n / fan_in;
  dart_plan_root_t *iremote = (dart_plan_root_t *)malloc(n * sizeof *iremote);
  for (size_t i = 0; i < n; i++) {
    iremote[i].unit.id = next;
    iremote[i].index = i % nroots;
  }
  dart_plan_t plan;
  DART_OK_OR_EXIT(dart_plan_create(DART_TEAM_ALL, nroots, n, NULL, iremote,
                                   DART_TYPE_INT, &plan));
  free(iremote);
  return plan;
}

static void check(void)
{
  unsigned long long host_bad = 0;
  CUDA_OK(cudaMemcpy(&host_bad, bad, sizeof host_bad,
                     cudaMemcpyDeviceToHost));
  if (host_bad != 0) {
    fprintf(stderr, "bench_gpu_plan: unit %d: %llu leaves wrong\n", me,
            host_bad);
    exit(1);
  }
}

int main(int argc, char **argv)
{
  bench_opts_t o;
  bench_parse(argc, argv, &o);
  if (dart_init(&argc, &argv) != DART_OK) return 1;
  dart_global_unit_t id;
  size_t nunits;
  int device = -1;
  dart_myid(&id);
  dart_size(&nunits);
  me = id.id;
  units = (int)nunits;
  next = (me + 1) % units;
  dart_memkind_device(&device);
  const char *emu = getenv("DART_GPU_EMULATE");
  if (device < 0 || (emu && atoi(emu) > 0)) {
    if (me == 0) fprintf(stderr, "bench_gpu_plan: needs CUDA devices\n");
    dart_exit();
    return 77;
  }
  static const size_t sizes[] = {1024, 65536, 1 << 20, 4 << 20};
  size_t nsizes = o.smoke ? 2 : sizeof sizes / sizeof sizes[0];
  while (!o.smoke && nsizes > 1 &&
         sizes[nsizes - 1] * sizeof(int) > o.max_size)
    nsizes--;
  int rounds = o.smoke ? 4 : 100;
  int reps = o.smoke ? 1 : (o.reps < 64 ? o.reps : 64);
  unsigned long long busy_ns = o.smoke ? 1000 : 1000000;
  size_t max = sizes[nsizes - 1];
  CUDA_OK(cudaMalloc((void **)&roots, max * sizeof(int)));
  CUDA_OK(cudaMalloc((void **)&leaves, max * sizeof(int)));
  CUDA_OK(cudaMalloc((void **)&bad, sizeof *bad));
  CUDA_OK(cudaMemset(bad, 0, sizeof *bad));
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int seed = 0;
  for (size_t k = 0; k < nsizes; k++) {
    size_t n = sizes[k];
    dart_plan_t plan = ring_plan(n, 1);
    static const char *const impl[2] = {"host", "stream"};
    double per_round[2][64], waited[2][64];
    for (int m = 0; m < 2; m++) rounds_of(plan, n, m, 2, &seed); /* warm */
    for (int r = 0; r < reps; r++)
      for (int m = 0; m < 2; m++) { /* alternated, one after the other */
        per_round[m][r] = rounds_of(plan, n, m, rounds, &seed);
        waited[m][r] = host_wait(plan, n, m, busy_ns, &seed);
        check();
      }
    for (int m = 0; m < 2 && me == 0; m++) {
      bench_row(&o, "gpu_plan_round", "bcast", impl[m], units,
                n * sizeof(int), bench_median(per_round[m], reps) * 1e6,
                "us");
      bench_row(&o, "gpu_plan_host_wait", "bcast", impl[m], units,
                n * sizeof(int), bench_median(waited[m], reps) * 1e6, "us");
    }
    DART_OK_OR_EXIT(dart_plan_destroy(&plan));
  }
  static const int fan_ins[2] = {4, 1};
  int reduce_rounds_n = o.smoke ? 4 : 20;
  for (size_t k = 0; k < nsizes; k++) {
    size_t n = sizes[k];
    dart_plan_t plans[2];
    double per_round[2][64];
    for (int m = 0; m < 2; m++) {
      plans[m] = ring_plan(n, fan_ins[m]);
      reduce_rounds(plans[m], n, fan_ins[m], 2, &seed); /* warm */
    }
    for (int r = 0; r < reps; r++)
      for (int m = 0; m < 2; m++) {
        per_round[m][r] =
            reduce_rounds(plans[m], n, fan_ins[m], reduce_rounds_n, &seed);
        check();
      }
    for (int m = 0; m < 2; m++) {
      if (me == 0)
        bench_row(&o, "gpu_plan_reduce", "sum",
                  fan_ins[m] == 4 ? "fan_in4" : "fan_in1", units,
                  n * sizeof(int), bench_median(per_round[m], reps) * 1e6,
                  "us");
      DART_OK_OR_EXIT(dart_plan_destroy(&plans[m]));
    }
  }
  CUDA_OK(cudaStreamDestroy(s));
  CUDA_OK(cudaFree(roots));
  CUDA_OK(cudaFree(leaves));
  CUDA_OK(cudaFree(bad));
  dart_exit();
  return 0;
}
