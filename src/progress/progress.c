/*
 * Progress (progress.h): the table of sources and every way of driving
 * them. The progress thread polls the sources every DART_PROGRESS_INTERVAL
 * microseconds, sleeping in between so that it takes no core from the
 * computation; it waits on a receive from its own unit, which dart_exit
 * completes to stop it.
 */
#include "progress/progress.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "base/env.h"
#include "base/log.h"
#include "base/runtime.h"

/* UCX, MPI, staging, and room for the transports to come */
#define MAX_SOURCES 8

static struct {
  const dart__progress_source_t *sources[MAX_SOURCES];
  int nsources;
} table;

static struct {
  bool running;
  pthread_t thread;
  MPI_Comm comm;
  MPI_Request stop;
} thread;

dart_ret_t dart__progress__add(const char *func,
                               const dart__progress_source_t *source)
{
  if (table.nsources == MAX_SOURCES) {
    DART_LOG_ERROR_IN(func, "no room for progress source %s (%d taken)",
                      source->name, MAX_SOURCES);
    return DART_ERR_OTHER;
  }
  table.sources[table.nsources++] = source;
  return DART_OK;
}

void dart__progress__remove(const dart__progress_source_t *source)
{
  for (int i = 0; i < table.nsources; i++) {
    if (table.sources[i] != source) continue;
    table.sources[i] = table.sources[--table.nsources];
    return;
  }
}

/* Polls the sources (the costly ones too where costly): the operations
 * they served. */
static unsigned poll_sources(bool costly)
{
  unsigned events = 0;
  for (int i = 0; i < table.nsources; i++)
    if (costly || !table.sources[i]->costly)
      events += table.sources[i]->poll();
  return events;
}

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

/* One turn of a wait, the costly sources polled where costly: served
 * traffic restarts the fast spins (more tends to follow at once). */
static void wait_turn(unsigned *spins, bool costly)
{
  if (poll_sources(costly) > 0) {
    *spins = 0;
    return;
  }
  backoff(spins);
}

void dart__progress__wait_turn(unsigned *spins)
{
  /* the unit we wait for may itself wait for us inside MPI (a flush of the
   * MPI path), so the costly sources come now and then, once a wait is no
   * longer short */
  wait_turn(spins, *spins >= 32 && *spins % 16 == 15);
}

void dart__progress__wait_turn_served(unsigned *spins, bool costly)
{
  wait_turn(spins, costly || *spins >= 32);
}

dart_ret_t dart__progress__serve(void)
{
  static atomic_uint serves; /* lost counts between threads: harmless */
  unsigned n = atomic_load_explicit(&serves, memory_order_relaxed) + 1;
  atomic_store_explicit(&serves, n, memory_order_relaxed);
  poll_sources(n % DART__PROGRESS_SERVE_EVERY == 0);
  return DART_OK;
}

bool dart__progress__must_poll(void)
{
  for (int i = 0; i < table.nsources; i++)
    if (table.sources[i]->outside_mpi && table.sources[i]->outside_mpi())
      return true;
  return false;
}

dart_ret_t dart__progress__wait(const char *func, int n, MPI_Request reqs[])
{
  const bool poll = dart__progress__must_poll();
  int ret = MPI_SUCCESS;
  for (int i = 0; i < n && ret == MPI_SUCCESS; i++) {
    int done = 0;
    unsigned spins = 0;
    if (!poll) ret = MPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
    else
      while ((ret = MPI_Test(&reqs[i], &done, MPI_STATUS_IGNORE)) ==
                 MPI_SUCCESS && !done)
        dart__progress__wait_turn(&spins);
  }
  if (ret != MPI_SUCCESS) {
    DART_LOG_ERROR_IN(func, "waiting for MPI failed (error %d)", ret);
    return DART_ERR_OTHER;
  }
  return DART_OK;
}

dart_ret_t dart__progress__barrier(const char *func, MPI_Comm comm)
{
  /* MPI's blocking barrier takes half the time of its nonblocking one */
  if (!dart__progress__must_poll()) {
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
  return dart__progress__wait(func, 1, &req);
}

static void *thread_main(void *arg)
{
  (void)arg;
  long us = dart__base__config.progress_interval;
  struct timespec pause = {us / 1000000, us % 1000000 * 1000};
  int stopped = 0;
  for (unsigned turn = 1; !stopped; turn++) {
    if (MPI_Test(&thread.stop, &stopped, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      DART_LOG_ERROR("MPI_Test failed: the progress thread stops");
      break;
    }
    if (stopped) break;
    if (poll_sources(turn % DART__PROGRESS_SERVE_EVERY == 0) == 0)
      nanosleep(&pause, NULL);
  }
  return NULL;
}

dart_ret_t dart__progress__start(void)
{
  if (!dart__base__config.progress_thread) return DART_OK;
  if (dart__rt.thread_level != DART_THREAD_MULTIPLE) {
    DART_LOG_WARN("DART_PROGRESS_THREAD=1 needs MPI_THREAD_MULTIPLE, which "
                  "MPI does not provide: no progress thread");
    return DART_OK;
  }
  DART__MPI_CHECK(MPI_Comm_dup(dart__rt.comm, &thread.comm));
  if (MPI_Irecv(NULL, 0, MPI_BYTE, dart__rt.myid, 0, thread.comm,
                &thread.stop) != MPI_SUCCESS) {
    DART_LOG_ERROR("MPI_Irecv for the progress thread failed");
    goto fail_comm;
  }
  if (pthread_create(&thread.thread, NULL, thread_main, NULL) != 0) {
    DART_LOG_ERROR("cannot start the progress thread");
    goto fail_recv;
  }
  thread.running = true;
  DART_LOG_INFO("progress thread started (every %d us)",
                dart__base__config.progress_interval);
  return DART_OK;

fail_recv:
  MPI_Cancel(&thread.stop);
  MPI_Wait(&thread.stop, MPI_STATUS_IGNORE);
fail_comm:
  MPI_Comm_free(&thread.comm);
  return DART_ERR_OTHER;
}

void dart__progress__stop(void)
{
  if (!thread.running) return;
  if (MPI_Send(NULL, 0, MPI_BYTE, dart__rt.myid, 0, thread.comm) !=
      MPI_SUCCESS)
    DART_LOG_ERROR("cannot stop the progress thread");
  pthread_join(thread.thread, NULL);
  MPI_Comm_free(&thread.comm);
  thread.running = false;
}
