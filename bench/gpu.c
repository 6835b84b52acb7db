/*
 * Device memory: unit 0 puts and gets 8 B to 64 MiB between its device and
 * unit 1's device part, blocking, side by side with the floor in the same
 * run:
 *   dart        dart_put_blocking / dart_get_blocking, device buffer to a
 *               device segment: CUDA IPC on the node (--layout node),
 *               host staging on other nodes (upn1)
 *   copy_d2d    a device-to-device copy on unit 0's own device
 *               (dart_memkind_copy = cudaMemcpy with cudaMemcpyDefault):
 *               the floor the IPC path is measured against
 * Latency (us) and bandwidth (GB/s): median over repetitions. Skipped
 * without a device; DART_GPU_EMULATE=1 runs it on emulated devices (the
 * smoke test does). With --smoke every transfer is checked.
 */
#define _POSIX_C_SOURCE 200809L
#include <dart/dart.h>
#include <dart/dart_ext.h>
#include <dart/dart_memkind.h>
#include <stdint.h>

#include "bench.h"

static const size_t sizes[] = {8,       64,       4096,     65536,
                               1 << 20, 4 << 20, 16 << 20, 64 << 20};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static int me, units;
static bench_opts_t o;
static dart_gptr_t target;
static char *dev_a, *dev_b, *host;

typedef enum { DART_PUT, DART_GET, COPY } op_t;

static void one(op_t op, size_t bytes)
{
  dart_ret_t ret = DART_OK;
  switch (op) {
  case DART_PUT:
    ret = dart_put_blocking(target, dev_a, bytes, DART_TYPE_BYTE,
                            DART_TYPE_BYTE);
    break;
  case DART_GET:
    ret = dart_get_blocking(dev_b, target, bytes, DART_TYPE_BYTE,
                            DART_TYPE_BYTE);
    break;
  case COPY: ret = dart_memkind_copy(dev_b, dev_a, bytes); break;
  }
  if (ret != DART_OK) {
    fprintf(stderr, "bench_gpu: operation %d of %zu bytes failed\n", (int)op,
            bytes);
    exit(1);
  }
}

/* Median seconds of one operation of bytes. */
static double measure(op_t op, size_t bytes)
{
  double t0 = bench_now();
  one(op, bytes); /* warm-up: maps the peer's part, sizes the iterations */
  long iters = bench_iters(&o, bench_now() - t0, 1);
  double v[64];
  int reps = o.reps < 64 ? o.reps : 64;
  for (int r = 0; r < reps; r++) {
    double start = bench_now();
    for (long i = 0; i < iters; i++) one(op, bytes);
    v[r] = (bench_now() - start) / (double)iters;
  }
  return bench_median(v, reps);
}

static void check(size_t bytes)
{
  for (size_t i = 0; i < bytes; i++) host[i] = (char)(i * 7 + bytes);
  dart_memkind_copy(dev_a, host, bytes);
  one(DART_PUT, bytes);
  memset(host, 0, bytes);
  dart_memkind_copy(dev_b, host, bytes);
  one(DART_GET, bytes);
  dart_memkind_copy(host, dev_b, bytes);
  for (size_t i = 0; i < bytes; i++)
    if (host[i] != (char)(i * 7 + bytes)) {
      fprintf(stderr, "bench_gpu: byte %zu of %zu wrong\n", i, bytes);
      exit(1);
    }
}

int main(int argc, char **argv)
{
  bench_parse(argc, argv, &o);
  size_t max = o.smoke ? 65536 : sizes[NSIZES - 1];
  if (dart_init(&argc, &argv) != DART_OK) return 1;
  dart_global_unit_t id;
  size_t n;
  int device = -1;
  dart_myid(&id);
  dart_size(&n);
  me = id.id;
  units = (int)n;
  dart_memkind_device(&device);
  if (device < 0 || units < 2) {
    if (me == 0) fprintf(stderr, "bench_gpu: needs 2 units with devices\n");
    dart_exit();
    return 77;
  }
  if (dart_team_memalloc_kind(DART_TEAM_ALL, max, DART_TYPE_BYTE,
                              DART_MEMKIND_CUDA, &target) != DART_OK ||
      dart_memkind_alloc(max, DART_MEMKIND_CUDA, (void **)&dev_a) != DART_OK ||
      dart_memkind_alloc(max, DART_MEMKIND_CUDA, (void **)&dev_b) != DART_OK ||
      (host = malloc(max)) == NULL) {
    fprintf(stderr, "bench_gpu: allocation failed\n");
    return 1;
  }
  target.unitid = 1;
  if (me == 0) {
    dart_path_t path;
    dart_gptr_path(target, &path);
    for (size_t s = 0; s < NSIZES && sizes[s] <= max; s++) {
      size_t b = sizes[s];
      if (o.smoke) {
        check(b);
        continue;
      }
      static const char *const ops[] = {"put_blocking", "get_blocking",
                                        "copy"};
      for (int op = DART_PUT; op <= COPY; op++) {
        double t = measure((op_t)op, b);
        const char *impl = op == COPY ? "copy_d2d"
                           : path == DART_PATH_IPC ? "dart_ipc"
                                                   : "dart_stage";
        bench_row(&o, "gpu_latency", ops[op], impl, units, b, t * 1e6, "us");
        bench_row(&o, "gpu_bandwidth", ops[op], impl, units, b,
                  (double)b / t / 1e9, "GB/s");
      }
    }
  }
  /* the others wait here, serving staged transfers */
  dart_barrier(DART_TEAM_ALL);
  dart_team_memfree(target);
  dart_memkind_free(dev_a, DART_MEMKIND_CUDA);
  dart_memkind_free(dev_b, DART_MEMKIND_CUDA);
  free(host);
  dart_exit();
  return 0;
}
