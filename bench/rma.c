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

#include "bench.h"

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

static dart_gptr_t dart_target; /* unit 1's part */
static char *shm_peer;          /* unit 1's part of the shared window */
static MPI_Win dyn_win, alloc_win;
static MPI_Aint dyn_disp;
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
        TRY(dir == PUT ? dart_put_blocking(dart_target, local, bytes,
                                           DART_TYPE_BYTE, DART_TYPE_BYTE)
                       : dart_get_blocking(local, dart_target, bytes,
                                           DART_TYPE_BYTE, DART_TYPE_BYTE));
      else if (mode == NB_FLUSH)
        TRY(dir == PUT ? dart_put(dart_target, local, bytes, DART_TYPE_BYTE,
                                  DART_TYPE_BYTE)
                       : dart_get(local, dart_target, bytes, DART_TYPE_BYTE,
                                  DART_TYPE_BYTE));
      else
        TRY(dir == PUT ? dart_put_handle(dart_target, local, bytes,
                                         DART_TYPE_BYTE, DART_TYPE_BYTE, &h[w])
                       : dart_get_handle(local, dart_target, bytes,
                                         DART_TYPE_BYTE, DART_TYPE_BYTE,
                                         &h[w]));
    }
    if (mode == NB_FLUSH) TRY(dart_flush(dart_target));
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
        memcpy(shm_peer, local, bytes);
      } else {
        atomic_thread_fence(memory_order_acquire);
        memcpy(local, shm_peer, bytes);
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
  run_mpi(dyn_win, dyn_disp, dir, local, bytes, n, window);
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
  if (dart_init(&argc, &argv) != DART_OK) return 1;
  bench_opts_t o;
  bench_parse(argc, argv, &o);
  dart_global_unit_t myid;
  size_t units;
  dart_myid(&myid);
  dart_size(&units);
  int me = myid.id;
  if (units < 2) {
    if (me == 0) printf("# bench_rma needs 2 units\n");
    dart_exit();
    return 77;
  }
  size_t max = o.max_size;

  /* dart: a collective allocation; is unit 1 a node peer? */
  dart_gptr_t seg;
  dart_team_memalloc_aligned(DART_TEAM_ALL, max, DART_TYPE_BYTE, &seg);
  dart_target = seg;
  dart_target.unitid = 1;
  dart_gptr_t mine = seg;
  mine.unitid = me;
  dart_gptr_getaddr(mine, (void **)&target_mem[0]);
  void *peer_addr = NULL;
  dart_gptr_getaddr_shared(dart_target, &peer_addr);
  int shared = me == 0 && peer_addr != NULL;
  MPI_Bcast(&shared, 1, MPI_INT, 0, MPI_COMM_WORLD);

  /* the floor: a shared window among units of one (emulated) node */
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Win shm_win = MPI_WIN_NULL;
  if (shared) {
    MPI_Comm_split(MPI_COMM_WORLD, me < 2 ? 0 : MPI_UNDEFINED, me, &node);
    if (node != MPI_COMM_NULL) {
      MPI_Win_allocate_shared((MPI_Aint)max, 1, MPI_INFO_NULL, node,
                              &target_mem[1], &shm_win);
      MPI_Aint size;
      int disp_unit;
      MPI_Win_shared_query(shm_win, 1, &size, &disp_unit, &shm_peer);
    }
  }
  /* MPI baselines */
  target_mem[2] = malloc(max);
  MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn_win);
  MPI_Win_attach(dyn_win, target_mem[2], (MPI_Aint)max);
  MPI_Aint my_disp;
  MPI_Get_address(target_mem[2], &my_disp);
  MPI_Aint *disps = malloc(units * sizeof *disps);
  MPI_Allgather(&my_disp, 1, MPI_AINT, disps, 1, MPI_AINT, MPI_COMM_WORLD);
  dyn_disp = disps[1];
  free(disps);
  MPI_Win_allocate((MPI_Aint)max, 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                   &target_mem[3], &alloc_win);
  MPI_Win_lock_all(0, dyn_win);
  MPI_Win_lock_all(0, alloc_win);

  const impl_t impls[4] = {{"dart", run_dart},
                           {"memcpy", run_memcpy},
                           {"mpi_dyn", run_mpi_dyn},
                           {"mpi_alloc", run_mpi_alloc}};
  char *local = malloc(max);
  int u = (int)units;
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes && sizes[s] <= max;
       s++) {
    size_t bytes = sizes[s];
    for (int which = 0; which < 4; which++) {
      if (which == 1 && !shared) continue;
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
            bench_row(&o, "latency", op, impls[which].name, u, bytes,
                      lat * 1e6, "us");
          if (bytes < 4096 || (which == 0 && mode == BLOCKING)) continue;
          double per = measure(&o, &impls[which], which, mode, dir, local,
                               bytes, WINDOW, me);
          snprintf(op, sizeof op, "%s_%s", dir == PUT ? "put" : "get",
                   which == 0 ? mode_name[mode] : "nb_flush");
          if (me == 0)
            bench_row(&o, "bandwidth", op, impls[which].name, u, bytes, (double)bytes / per * 1e-6,
                      "MB/s");
        }
      }
    }
  }

  MPI_Win_unlock_all(alloc_win);
  MPI_Win_unlock_all(dyn_win);
  MPI_Win_free(&alloc_win);
  MPI_Win_detach(dyn_win, target_mem[2]);
  MPI_Win_free(&dyn_win);
  if (shm_win != MPI_WIN_NULL) MPI_Win_free(&shm_win);
  if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
  free(target_mem[2]);
  free(local);
  dart_team_memfree(seg);
  int any;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  dart_exit();
  return any ? 1 : 0;
}
