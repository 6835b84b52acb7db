/*
 * Latency and bandwidth of put and get (OSU style): unit 0 moves 1 B to
 * 4 MiB to and from unit 1, libdart side by side with the baselines in the
 * same run:
 *   dart         dart_put/get_blocking, dart_put/get + dart_flush,
 *                dart_put/get_handle + dart_wait
 *   memcpy       memcpy + fence through an MPI-3 shared window (the floor;
 *                only where unit 1 shares the node)
 *   mpi_dyn      MPI_Put/MPI_Get + MPI_Win_flush on a dynamic window
 *   mpi_alloc    the same on an MPI_Win_allocate window
 * Latency: the median over repetitions of the time per operation, each
 * operation complete before the next. Bandwidth: windows of 16 operations
 * completed together. Other units wait; with --smoke every transfer's data
 * is checked.
 */
#define _POSIX_C_SOURCE 200809L
#include <dart/dart.h>
#include <dart/dart_ext.h>
#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>

#include "dart_bench.h"
#include "pair.h"

#define WINDOW 16

static const size_t sizes[] = {1, 8, 64, 512, 4096, 32768, 262144, 1048576,
                               4194304};

typedef enum { PUT, GET } dir_t;

/* One implementation: n operations of bytes each (complete each when
 * window is 1, else complete every window) between local and unit 1. */
typedef struct {
  const char *name;
  void (*run)(dir_t dir, int mode, char *local, size_t bytes, long n,
              int window);
} impl_t;

static bench_pair_t pair; /* unit 1's memory: dart, shared, dynamic */
static MPI_Win alloc_win;
static int failed;

#define TRY(call)                                                        \
  do {                                                                   \
    if ((call) != DART_OK) {                                             \
      fprintf(stderr, "bench_rma: %s failed\n", #call);                  \
      failed = 1;                                                        \
      return;                                                            \
    }                                                                    \
  } while (0)

/* dart modes: blocking, non-blocking + flush, handle + wait */
enum { BLOCKING, NB_FLUSH, HANDLE_WAIT, MODES };
static const char *const mode_name[MODES] = {"blocking", "nb_flush",
                                             "handle_wait"};

static void run_dart(dir_t dir, int mode, char *local, size_t bytes, long n,
                     int window)
{
  dart_handle_t h[WINDOW];
  for (long i = 0; i < n; i += window) {
    for (int w = 0; w < window; w++) {
      if (mode == BLOCKING)
        TRY(dir == PUT ? dart_put_blocking(pair.target, local, bytes,
                                           DART_TYPE_BYTE, DART_TYPE_BYTE)
                       : dart_get_blocking(local, pair.target, bytes,
                                           DART_TYPE_BYTE, DART_TYPE_BYTE));
      else if (mode == NB_FLUSH)
        TRY(dir == PUT ? dart_put(pair.target, local, bytes, DART_TYPE_BYTE,
                                  DART_TYPE_BYTE)
                       : dart_get(local, pair.target, bytes, DART_TYPE_BYTE,
                                  DART_TYPE_BYTE));
      else
        TRY(dir == PUT ? dart_put_handle(pair.target, local, bytes,
                                         DART_TYPE_BYTE, DART_TYPE_BYTE, &h[w])
                       : dart_get_handle(local, pair.target, bytes,
                                         DART_TYPE_BYTE, DART_TYPE_BYTE,
                                         &h[w]));
    }
    if (mode == NB_FLUSH) TRY(dart_flush(pair.target));
    if (mode == HANDLE_WAIT) TRY(dart_waitall(h, (size_t)window));
  }
}

static void run_memcpy(dir_t dir, int mode, char *local, size_t bytes, long n,
                       int window)
{
  (void)mode;
  for (long i = 0; i < n; i += window) {
    for (int w = 0; w < window; w++) {
      if (dir == PUT) {
        memcpy(pair.shm_peer, local, bytes);
      } else {
        atomic_thread_fence(memory_order_acquire);
        memcpy(local, pair.shm_peer, bytes);
      }
    }
    atomic_thread_fence(memory_order_seq_cst);
  }
}

static void run_mpi(MPI_Win win, MPI_Aint disp, dir_t dir, char *local,
                    size_t bytes, long n, int window)
{
  for (long i = 0; i < n; i += window) {
    for (int w = 0; w < window; w++) {
      if (dir == PUT)
        MPI_Put(local, (int)bytes, MPI_BYTE, 1, disp, (int)bytes, MPI_BYTE,
                win);
      else
        MPI_Get(local, (int)bytes, MPI_BYTE, 1, disp, (int)bytes, MPI_BYTE,
                win);
    }
    MPI_Win_flush(1, win);
  }
}

static void run_mpi_dyn(dir_t dir, int mode, char *local, size_t bytes, long n,
                        int window)
{
  (void)mode;
  run_mpi(pair.dyn_win, pair.dyn_peer, dir, local, bytes, n, window);
}

static void run_mpi_alloc(dir_t dir, int mode, char *local, size_t bytes,
                          long n, int window)
{
  (void)mode;
  run_mpi(alloc_win, 0, dir, local, bytes, n, window);
}

/* The pattern of round r at byte i. */
static char pattern(int r, size_t i) { return (char)(r * 31 + i % 251 + 1); }

/* Unit 1's memory of each implementation, for the checks. */
static char *target_mem[4];

/* Times impl (unit 0 moves, all units take part in the checks); returns
 * the median seconds per operation (unit 0). */
static double measure(const bench_opts_t *o, const impl_t *impl, int which,
                      int mode, dir_t dir, char *local, size_t bytes,
                      int window, int me)
{
  long iters = 4 * window; /* the warm-up, then calibrated */
  double times[64];
  int reps = o->reps < 64 ? o->reps : 64;
  for (int r = -1; r < reps; r++) { /* r = -1: warm-up */
    int round = r + 2;
    if (me == 1 && dir == GET)
      for (size_t i = 0; i < bytes; i++) target_mem[which][i] = pattern(round, i);
    if (me == 0 && dir == PUT)
      for (size_t i = 0; i < bytes; i++) local[i] = pattern(round, i);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
      double t0 = bench_now();
      impl->run(dir, mode, local, bytes, iters, window);
      double op = (bench_now() - t0) / (double)iters;
      if (r >= 0) times[r] = op;
      else iters = bench_iters(o, op, window);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (!o->smoke) continue;
    char *check = dir == PUT ? (me == 1 ? target_mem[which] : NULL)
                             : (me == 0 ? local : NULL);
    if (check)
      for (size_t i = 0; i < bytes; i++)
        if (check[i] != pattern(round, i)) {
          fprintf(stderr, "bench_rma: %s %s %s %zu B: byte %zu wrong\n",
                  impl->name, dir == PUT ? "put" : "get", mode_name[mode],
                  bytes, i);
          failed = 1;
          break;
        }
  }
  return me == 0 ? bench_median(times, reps) : 0;
}

int main(int argc, char **argv)
{
  bench_opts_t o;
  int me, units;
  if (bench_dart_start(&argc, &argv, &o, &me, &units) < 0) return 1;
  if (units < 2) return bench_dart_skip(me, "bench_rma needs 2 units");
  size_t max = o.max_size;

  bench_pair_open(&pair, max, me);
  target_mem[0] = pair.dart_mine;
  target_mem[1] = pair.shm_mine;
  target_mem[2] = pair.dyn_mine;
  MPI_Win_allocate((MPI_Aint)max, 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                   &target_mem[3], &alloc_win);
  MPI_Win_lock_all(0, alloc_win);

  const impl_t impls[4] = {{"dart", run_dart},
                           {"memcpy", run_memcpy},
                           {"mpi_dyn", run_mpi_dyn},
                           {"mpi_alloc", run_mpi_alloc}};
  char *local = malloc(max);
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes && sizes[s] <= max;
       s++) {
    size_t bytes = sizes[s];
    for (int which = 0; which < 4; which++) {
      if (which == 1 && !pair.shared) continue;
      int modes = which == 0 ? MODES : 1;
      for (int mode = 0; mode < modes; mode++) {
        for (int d = PUT; d <= GET; d++) {
          dir_t dir = (dir_t)d;
          char op[64];
          snprintf(op, sizeof op, "%s_%s", dir == PUT ? "put" : "get",
                   which == 0 ? mode_name[mode] : "blocking");
          double lat = measure(&o, &impls[which], which, mode, dir, local,
                               bytes, 1, me);
          if (me == 0)
            bench_row(&o, "latency", op, impls[which].name, units, bytes,
                      lat * 1e6, "us");
          if (bytes < 4096 || (which == 0 && mode == BLOCKING)) continue;
          double per = measure(&o, &impls[which], which, mode, dir, local,
                               bytes, WINDOW, me);
          snprintf(op, sizeof op, "%s_%s", dir == PUT ? "put" : "get",
                   which == 0 ? mode_name[mode] : "nb_flush");
          if (me == 0)
            bench_row(&o, "bandwidth", op, impls[which].name, units, bytes,
                      (double)bytes / per * 1e-6, "MB/s");
        }
      }
    }
  }

  MPI_Win_unlock_all(alloc_win);
  MPI_Win_free(&alloc_win);
  free(local);
  bench_pair_close(&pair);
  int any;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  dart_exit();
  return any ? 1 : 0;
}
