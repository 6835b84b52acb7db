/*
 * The shared-memory paths: the caller's own part (SELF) and node peers'
 * parts in a shared window (SHM). Both are memcpy, complete on return, so
 * non-blocking and handle forms complete at once (DART_HANDLE_NULL); the
 * fences order the copies with what the caller does next.
 */
#include <stdatomic.h>

#include "onesided/onesided.h"

static dart_ret_t shm_put(const dart__xfer_t *x, dart__mode_t mode,
                          dart_handle_t *handle)
{
  const dart__target_t *t = x->target;
  dart__globmem__dtype_copy(t->route->base + t->offset, x->remote_t, x->local,
                            x->local_t, x->nelem);
  atomic_thread_fence(memory_order_release);
  if (mode == DART__MODE_HANDLE) *handle = DART_HANDLE_NULL;
  return DART_OK;
}

static dart_ret_t shm_get(const dart__xfer_t *x, dart__mode_t mode,
                          dart_handle_t *handle)
{
  const dart__target_t *t = x->target;
  atomic_thread_fence(memory_order_acquire);
  dart__globmem__dtype_copy(x->local, x->local_t, t->route->base + t->offset,
                            x->remote_t, x->nelem);
  if (mode == DART__MODE_HANDLE) *handle = DART_HANDLE_NULL;
  return DART_OK;
}

static dart_ret_t shm_flush(dart__team_t *team, int unit)
{
  (void)team;
  (void)unit;
  atomic_thread_fence(memory_order_seq_cst);
  return DART_OK;
}

const dart__path_ops_t dart__path_self = {"self", shm_put, shm_get, shm_flush,
                                          shm_flush};
const dart__path_ops_t dart__path_shm = {"shm", shm_put, shm_get, shm_flush,
                                         shm_flush};
