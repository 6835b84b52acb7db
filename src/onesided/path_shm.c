/*
 * The shared-memory paths: the caller's own part (SELF) and node peers'
 * parts in a shared window (SHM). Both are memcpy, so handles complete at
 * once (DART_HANDLE_NULL); the fences order the copies with what the
 * caller does next: at once for blocking and handle puts, at the next
 * flush for non-blocking ones. Transfers of one basic type on both sides
 * are copied in onesided.c (fast_transfer) without coming here.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "base/env.h"
#include "base/htm.h"
#include "base/runtime.h"
#include "onesided/onesided.h"
#include "transport/acc_queue.h"
#include "transport/cpu_atomic.h"
#include "types/atomic_apply.h"


static dart_ret_t shm_put(const dart__xfer_t *x, dart__mode_t mode,
                          dart_handle_t *handle)
{
  const dart__target_t *t = x->target;
  dart__types__dtype_copy(t->route->base + t->offset, x->remote_t, x->local,
                          x->local_t, x->nelem);
  dart__transport__stores_done(mode, handle);
  return DART_OK;
}

static dart_ret_t shm_get(const dart__xfer_t *x, dart__mode_t mode,
                          dart_handle_t *handle)
{
  const dart__target_t *t = x->target;
  atomic_thread_fence(memory_order_acquire);
  dart__types__dtype_copy(x->local, x->local_t, t->route->base + t->offset,
                          x->remote_t, x->nelem);
  if (mode == DART__MODE_HANDLE) *handle = DART_HANDLE_NULL;
  return DART_OK;
}

static dart_ret_t shm_flush(const char *func, dart__team_t *team,
                            int unit)
{
  (void)func;
  (void)team;
  (void)unit;
  dart__transport__stores_fence();
  return DART_OK;
}

/* Accumulates the caller could queue are queued before they get here
 * (acc_queue.h). */
static dart_ret_t shm_atomic(const dart__atomic_t *a)
{
  const dart__target_t *t = a->target;
  cpu_atomic(a, t->route->base + t->offset);
  return DART_OK;
}

/* the caller's own host memory (the caller filled in its base) */
static dart_ret_t self_reach(const char *func, const dart__reach_t *q,
                             dart__route_t *r, bool *reached)
{
  (void)func;
  (void)r;
  *reached = !q->device && q->unit == q->team->myid;
  return DART_OK;
}

/* a node peer's part of a segment's shared window, at its mapping here */
static dart_ret_t shm_reach(const char *func, const dart__reach_t *q,
                            dart__route_t *r, bool *reached)
{
  const dart__team_t *team = q->team;
  *reached = false;
  if (q->device || q->seg == NULL || q->seg->shm_win == MPI_WIN_NULL ||
      !dart__team__shm_peer(team, q->unit))
    return DART_OK;
  MPI_Aint size;
  int disp_unit;
  char *base;
  if (MPI_Win_shared_query(q->seg->shm_win, team->node_rank[q->unit], &size,
                           &disp_unit, &base) != MPI_SUCCESS) {
    DART_LOG_ERROR_IN(func, "MPI_Win_shared_query of unit %d failed",
                      q->unit);
    return DART_ERR_OTHER;
  }
  r->base = dart__globmem__window_part(base) + q->header;
  *reached = true;
  return DART_OK;
}

/* The puts by CPU stores of every thread: one flag for self and shm. */
static dart_ret_t shm_flush_all(const char *func, dart__team_t *team)
{
  (void)func;
  (void)team;
  dart__transport__stores_fence();
  return DART_OK;
}

const dart__path_ops_t dart__path_self = {.info = "self (memcpy)",
                                          .reach = self_reach,
                                          .put = shm_put,
                                          .get = shm_get,
                                          .flush = shm_flush,
                                          .flush_local = shm_flush,
                                          .flush_all = shm_flush_all,
                                          .atomic = shm_atomic};
const dart__path_ops_t dart__path_shm = {
    .info = "shm (memcpy through shared windows)",
    .reach = shm_reach,
    .put = shm_put,
    .get = shm_get,
    .flush = shm_flush,
    .flush_local = shm_flush,
    .flush_all = shm_flush_all,
    .atomic = shm_atomic,
    .am_open = dart__am__shm_open,
    .am_close = dart__am__shm_close,
    .am_send = dart__am__shm_send,
    .am_poll = dart__am__shm_poll,
    .am_ran = dart__am__shm_ran};
