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

/* The puts by CPU stores of every thread: one flag for self and shm. */
static dart_ret_t shm_flush_all(const char *func, dart__team_t *team)
{
  (void)func;
  (void)team;
  dart__transport__stores_fence();
  return DART_OK;
}

const dart__path_ops_t dart__path_self = {.info = "self (memcpy)",
                                          .put = shm_put,
                                          .get = shm_get,
                                          .flush = shm_flush,
                                          .flush_local = shm_flush,
                                          .flush_all = shm_flush_all,
                                          .atomic = shm_atomic};
const dart__path_ops_t dart__path_shm = {
    .info = "shm (memcpy through shared windows)",
    .put = shm_put,
    .get = shm_get,
    .flush = shm_flush,
    .flush_local = shm_flush,
    .flush_all = shm_flush_all,
    .atomic = shm_atomic};
