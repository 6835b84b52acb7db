/*
 * Progress. MPI's one-sided operations may need the target to enter MPI
 * (Open MPI's osc/pt2pt serves them from its progress engine), and UCX's
 * emulated RMA needs the target to call ucp_worker_progress: while a unit
 * computes without calling DART, or blocks in a plain MPI call, its peers'
 * operations on its memory wait. So do staged transfers to its device
 * memory from other nodes (src/gpu/path_stage.c).
 *
 * So blocking waits on MPI requests here poll MPI and UCX together, and
 * the progress thread (DART_PROGRESS_THREAD=1) polls both every
 * DART_PROGRESS_INTERVAL microseconds, sleeping in between so that it
 * takes no core from the computation. It waits on a receive from its own
 * unit, which dart_exit completes to stop it.
 */
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "base/env.h"
#include "gpu/gpu.h"
#include "onesided/onesided.h"
#include "team/runtime.h"

static struct {
  bool running;
  pthread_t thread;
  MPI_Comm comm;
  MPI_Request stop;
} progress;

/* Waits politely: a few spins, then gives the core away; at once where
 * units outnumber the CPUs, since the unit waited for may need this one. */
static void backoff(unsigned *spins)
{
  if (++*spins < 32 && !dart__rt.oversubscribed) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  } else {
    sched_yield();
  }
}

void dart__onesided__wait_turn(unsigned *spins)
{
  /* served traffic restarts the fast spins: more tends to follow at once;
   * both are polled every turn (a busy one must not starve the other) */
  unsigned events = dart__ucx__progress();
  if (dart__gpu__stage_serve() || events > 0) {
    *spins = 0;
    return;
  }
  /* the unit we wait for may itself wait for us inside MPI (a flush of
   * the MPI path, which also serves grown pool chunks): enter MPI now and
   * then, once a wait is no longer short (MPI_Iprobe costs as much as a
   * small transfer) */
  if (*spins >= 32 && *spins % 16 == 15) {
    int flag;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, dart__rt.comm, &flag,
               MPI_STATUS_IGNORE);
  }
  backoff(spins);
}

/* MPI's progress (MPI_Iprobe) costs ten times UCX's: it comes every
 * SERVE_MPI_EVERY-th serve, a few microseconds of polling apart */
#define SERVE_MPI_EVERY 32

dart_ret_t dart__onesided__serve(void)
{
  static atomic_uint serves; /* lost counts between threads: harmless */
  dart__ucx__progress();
  dart__gpu__stage_serve();
  unsigned n = atomic_load_explicit(&serves, memory_order_relaxed) + 1;
  atomic_store_explicit(&serves, n, memory_order_relaxed);
  if (n % SERVE_MPI_EVERY == 0 &&
      atomic_load_explicit(&dart__team__windows, memory_order_relaxed) > 0) {
    int flag;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, dart__rt.comm, &flag,
               MPI_STATUS_IGNORE);
  }
  return DART_OK;
}

/* Whether waits must poll: MPI's own waits serve MPI's one-sided
 * operations, but not UCX's or staged transfers. */
static bool must_poll(void)
{
  return dart__rt.transport == DART__TRANSPORT_UCX ||
         atomic_load_explicit(&dart__gpu.staged_segments,
                              memory_order_relaxed) > 0;
}

dart_ret_t dart__onesided__progress_wait(const char *func, int n,
                                         MPI_Request reqs[])
{
  const bool poll = must_poll();
  int ret = MPI_SUCCESS;
  for (int i = 0; i < n && ret == MPI_SUCCESS; i++) {
    int done = 0;
    unsigned spins = 0;
    if (!poll) ret = MPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
    else
      while ((ret = MPI_Test(&reqs[i], &done, MPI_STATUS_IGNORE)) ==
                 MPI_SUCCESS && !done)
        dart__onesided__wait_turn(&spins);
  }
  if (ret != MPI_SUCCESS) {
    DART_LOG_ERROR_IN(func, "waiting for MPI failed (error %d)", ret);
    return DART_ERR_OTHER;
  }
  return DART_OK;
}

dart_ret_t dart__onesided__progress_barrier(const char *func, MPI_Comm comm)
{
  /* MPI's blocking barrier takes half the time of its nonblocking one */
  if (!must_poll()) {
    int ret = MPI_Barrier(comm);
    if (ret != MPI_SUCCESS)
      DART_LOG_ERROR_IN(func, "MPI_Barrier failed (error %d)", ret);
    return ret == MPI_SUCCESS ? DART_OK : DART_ERR_OTHER;
  }
  MPI_Request req;
  if (MPI_Ibarrier(comm, &req) != MPI_SUCCESS) {
    DART_LOG_ERROR_IN(func, "MPI_Ibarrier failed");
    return DART_ERR_OTHER;
  }
  return dart__onesided__progress_wait(func, 1, &req);
}

static void *progress_main(void *arg)
{
  (void)arg;
  long us = dart__base__config.progress_interval;
  struct timespec pause = {us / 1000000, us % 1000000 * 1000};
  int stopped = 0;
  while (!stopped) {
    if (MPI_Test(&progress.stop, &stopped, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      DART_LOG_ERROR("MPI_Test failed: the progress thread stops");
      break;
    }
    if (stopped) break;
    unsigned events = dart__ucx__progress();
    if (!dart__gpu__stage_serve() && events == 0) nanosleep(&pause, NULL);
  }
  return NULL;
}

dart_ret_t dart__onesided__progress_start(void)
{
  if (!dart__base__config.progress_thread) return DART_OK;
  if (dart__rt.thread_level != DART_THREAD_MULTIPLE) {
    DART_LOG_WARN("DART_PROGRESS_THREAD=1 needs MPI_THREAD_MULTIPLE, which "
                  "MPI does not provide: no progress thread");
    return DART_OK;
  }
  DART__MPI_CHECK(MPI_Comm_dup(dart__rt.comm, &progress.comm));
  if (MPI_Irecv(NULL, 0, MPI_BYTE, dart__rt.myid, 0, progress.comm,
                &progress.stop) != MPI_SUCCESS) {
    DART_LOG_ERROR("MPI_Irecv for the progress thread failed");
    goto fail_comm;
  }
  if (pthread_create(&progress.thread, NULL, progress_main, NULL) != 0) {
    DART_LOG_ERROR("cannot start the progress thread");
    goto fail_recv;
  }
  progress.running = true;
  DART_LOG_INFO("progress thread started (every %d us)",
                dart__base__config.progress_interval);
  return DART_OK;

fail_recv:
  MPI_Cancel(&progress.stop);
  MPI_Wait(&progress.stop, MPI_STATUS_IGNORE);
fail_comm:
  MPI_Comm_free(&progress.comm);
  return DART_ERR_OTHER;
}

void dart__onesided__progress_stop(void)
{
  if (!progress.running) return;
  if (MPI_Send(NULL, 0, MPI_BYTE, dart__rt.myid, 0, progress.comm) !=
      MPI_SUCCESS)
    DART_LOG_ERROR("cannot stop the progress thread");
  pthread_join(progress.thread, NULL);
  MPI_Comm_free(&progress.comm);
  progress.running = false;
}
