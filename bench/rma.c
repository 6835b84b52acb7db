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
 *   ucx          raw UCX (built with UCX, only where unit 1 is on another
 *                node): the program's own context and worker,
 *                ucp_put_nbx/ucp_get_nbx + ucp_ep_flush_nbx on memory
 *                unit 1 allocates with ucp_mem_map(UCP_MEM_MAP_ALLOCATE)
 *                (raw_ucx.h)
 * Latency: the median over repetitions of the time per operation, each
 * operation complete before the next; every repetition runs all the
 * measurements of a size in turn. Bandwidth: windows of 16 operations
 * completed together. Other units wait; with --smoke every transfer's data
 * is checked.
 *
 * Waiting units serve the operations aimed at them: UCX emulates RMA on
 * memory it did not allocate itself (DART_UCX_ALLOC=0) with messages the
 * target handles in ucp_worker_progress. So while unit 0 measures dart, the others wait in
 * dart_barrier (which progresses DART's worker); while it measures ucx,
 * in a barrier that progresses the raw worker (ucx_sync).
 */
#define _POSIX_C_SOURCE 200809L
#include <dart/dart.h>
#include <dart/dart_ext.h>
#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>

#include "dart_bench.h"
#include "pair.h"
#ifdef BENCH_HAVE_UCX
#include "raw_ucx.h"
#endif

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

/* the implementations, in the order they run */
enum { DART, MEMCPY, MPI_DYN, MPI_ALLOC, UCX, IMPLS };

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

/* ---- raw UCX (the ucx rows) ---- */
#ifdef BENCH_HAVE_UCX
static raw_ucx_t ucx; /* on: the ucx rows run */

#define UCX_TRY(call)                                                    \
  do {                                                                   \
    if ((call) != 0) {                                                   \
      fprintf(stderr, "bench_rma: %s failed\n", #call);                  \
      failed = 1;                                                        \
      return;                                                            \
    }                                                                    \
  } while (0)

/* Like run_mpi: each window's operations started, then one ep flush; a
 * get alone (window 1) is complete with its request. */
static void run_ucx(dir_t dir, int mode, char *local, size_t bytes, long n,
                    int window)
{
  (void)mode;
  const ucp_request_param_t param = {.op_attr_mask = 0};
  ucs_status_ptr_t reqs[WINDOW];
  ucp_ep_h ep = ucx.ep[1];
  for (long i = 0; i < n; i += window) {
    for (int w = 0; w < window; w++) {
      reqs[w] = dir == PUT ? ucp_put_nbx(ep, local, bytes, ucx.remote[1],
                                         ucx.rkey[1], &param)
                           : ucp_get_nbx(ep, local, bytes, ucx.remote[1],
                                         ucx.rkey[1], &param);
      if (UCS_PTR_IS_ERR(reqs[w])) {
        fprintf(stderr, "bench_rma: ucp_%s_nbx failed: %s\n",
                dir == PUT ? "put" : "get",
                ucs_status_string(UCS_PTR_STATUS(reqs[w])));
        failed = 1;
        while (w-- > 0) UCX_TRY(raw_ucx_wait(&ucx, reqs[w]));
        return;
      }
    }
    if (dir == PUT || window > 1)
      UCX_TRY(raw_ucx_wait(&ucx, ucp_ep_flush_nbx(ep, &param)));
    for (int w = 0; w < window; w++) UCX_TRY(raw_ucx_wait(&ucx, reqs[w]));
  }
}

static void ucx_sync(void) { raw_ucx_sync(&ucx); }
#else
static struct {
  int on;
} ucx;
static void run_ucx(dir_t dir, int mode, char *local, size_t bytes, long n,
                    int window)
{
  (void)dir, (void)mode, (void)local, (void)bytes, (void)n, (void)window;
}
static void ucx_sync(void) { MPI_Barrier(MPI_COMM_WORLD); }
#endif

/* The barrier around a measurement of impl: its targets serve it. */
static void sync_units(int which)
{
  if (which == DART) dart_barrier(DART_TEAM_ALL);
  else if (which == UCX) ucx_sync();
  else MPI_Barrier(MPI_COMM_WORLD);
}

/* The pattern of round r at byte i. */
static char pattern(int r, size_t i) { return (char)(r * 31 + i % 251 + 1); }

/* Unit 1's memory of each implementation, for the checks. */
static char *target_mem[IMPLS];

/* One measurement: an implementation, its mode, a direction, and the
 * operations completed together (1: latency, WINDOW: bandwidth). */
typedef struct {
  int which, mode, window;
  dir_t dir;
  long iters;       /* per repetition, from the warm-up */
  double times[64]; /* seconds per operation, each repetition's */
} case_t;

/* Repetition r of c (r = -1: the warm-up, which sets the operations per
 * repetition); unit 0 moves, all units take part in the checks. */
static void run_case(const bench_opts_t *o, const impl_t *impls, case_t *c,
                     int r, char *local, size_t bytes, int me)
{
  const impl_t *impl = &impls[c->which];
  int round = r + 2;
  if (me == 1 && c->dir == GET)
    for (size_t i = 0; i < bytes; i++)
      target_mem[c->which][i] = pattern(round, i);
  if (me == 0 && c->dir == PUT)
    for (size_t i = 0; i < bytes; i++) local[i] = pattern(round, i);
  sync_units(c->which);
  if (me == 0) {
    long iters = r < 0 ? 4 * c->window : c->iters;
    double t0 = bench_now();
    impl->run(c->dir, c->mode, local, bytes, iters, c->window);
    double op = (bench_now() - t0) / (double)iters;
    if (r >= 0) c->times[r] = op;
    else c->iters = bench_iters(o, op, c->window);
  }
  sync_units(c->which);
  if (!o->smoke) return;
  char *check = c->dir == PUT ? (me == 1 ? target_mem[c->which] : NULL)
                              : (me == 0 ? local : NULL);
  if (check)
    for (size_t i = 0; i < bytes; i++)
      if (check[i] != pattern(round, i)) {
        fprintf(stderr, "bench_rma: %s %s %s %zu B: byte %zu wrong\n",
                impl->name, c->dir == PUT ? "put" : "get",
                mode_name[c->mode], bytes, i);
        failed = 1;
        break;
      }
}

/* Every measurement of one size. Each repetition runs all of them in
 * turn, so that a machine that speeds up or slows down during the run
 * moves libdart and its baselines alike; medians over the repetitions. */
static void measure_size(const bench_opts_t *o, const impl_t *impls,
                         char *local, size_t bytes, int units, int me)
{
  static case_t cases[IMPLS * MODES * 2 * 2];
  int n = 0;
  for (int which = 0; which < IMPLS; which++) {
    if (which == MEMCPY && !pair.shared) continue;
    if (which == UCX && !ucx.on) continue;
    int modes = which == DART ? MODES : 1;
    for (int mode = 0; mode < modes; mode++)
      for (int d = PUT; d <= GET; d++) {
        cases[n++] = (case_t){.which = which, .mode = mode, .window = 1,
                              .dir = (dir_t)d};
        if (bytes >= 4096 && !(which == DART && mode == BLOCKING))
          cases[n++] = (case_t){.which = which, .mode = mode,
                                .window = WINDOW, .dir = (dir_t)d};
      }
  }
  int reps = o->reps < 64 ? o->reps : 64;
  for (int r = -1; r < reps; r++)
    for (int i = 0; i < n; i++) run_case(o, impls, &cases[i], r, local, bytes,
                                         me);
  if (me != 0) return;
  for (int i = 0; i < n; i++) {
    case_t *c = &cases[i];
    double per = bench_median(c->times, reps);
    char op[64];
    snprintf(op, sizeof op, "%s_%s", c->dir == PUT ? "put" : "get",
             c->which == DART ? mode_name[c->mode]
                  : c->window == 1 ? "blocking" : "nb_flush");
    if (c->window == 1)
      bench_row(o, "latency", op, impls[c->which].name, units, bytes,
                per * 1e6, "us");
    else
      bench_row(o, "bandwidth", op, impls[c->which].name, units, bytes,
                (double)bytes / per * 1e-6, "MB/s");
  }
}

int main(int argc, char **argv)
{
  bench_opts_t o;
  int me, units;
  if (bench_dart_start(&argc, &argv, &o, &me, &units) < 0) return 1;
  if (units < 2) return bench_dart_skip(me, "bench_rma needs 2 units");
  size_t max = o.max_size;

  bench_pair_open(&pair, max, me);
  target_mem[DART] = pair.dart_mine;
  target_mem[MEMCPY] = pair.shm_mine;
  target_mem[MPI_DYN] = pair.dyn_mine;
  MPI_Win_allocate((MPI_Aint)max, 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                   &target_mem[MPI_ALLOC], &alloc_win);
  MPI_Win_lock_all(0, alloc_win);
#ifdef BENCH_HAVE_UCX
  /* raw UCX where unit 1 is on another node */
  if (!pair.shared) raw_ucx_open(&ucx, max, UCP_FEATURE_RMA, "bench_rma");
  target_mem[UCX] = ucx.mine;
#endif

  const impl_t impls[IMPLS] = {{"dart", run_dart},
                               {"memcpy", run_memcpy},
                               {"mpi_dyn", run_mpi_dyn},
                               {"mpi_alloc", run_mpi_alloc},
                               {"ucx", run_ucx}};
  char *local = malloc(max);
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes && sizes[s] <= max;
       s++)
    measure_size(&o, impls, local, sizes[s], units, me);

#ifdef BENCH_HAVE_UCX
  if (!pair.shared && raw_ucx_close(&ucx) != 0) {
    fprintf(stderr, "bench_rma: closing the raw UCX endpoints failed\n");
    failed = 1;
  }
#endif
  MPI_Win_unlock_all(alloc_win);
  MPI_Win_free(&alloc_win);
  free(local);
  bench_pair_close(&pair);
  int any;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  dart_exit();
  return any ? 1 : 0;
}
