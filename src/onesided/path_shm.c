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

#include "onesided/acc_queue.h"
#include "onesided/cpu_atomic.h"
#include "onesided/onesided.h"
#include "team/runtime.h"

atomic_bool dart__onesided__stores_unfenced;

static dart_ret_t shm_put(const dart__xfer_t *x, dart__mode_t mode,
                          dart_handle_t *handle)
{
  const dart__target_t *t = x->target;
  dart__globmem__dtype_copy(t->route->base + t->offset, x->remote_t, x->local,
                            x->local_t, x->nelem);
  dart__onesided__stores_done(mode, handle);
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
  dart__onesided__stores_fence();
  return DART_OK;
}

dart__queued_acc_t dart__onesided__acc_queue[DART__ACC_QUEUE_LEN];
unsigned dart__onesided__acc_queued;

#define APPLY_QUEUED(N)                                                      \
  do {                                                                       \
    uint##N##_t v;                                                           \
    memcpy(&v, q->operand, sizeof v);                                        \
    cpu_update##N(q->addr, q->op, v);                                        \
  } while (0)

void dart__onesided__acc_apply(void)
{
  for (unsigned i = 0; i < dart__onesided__acc_queued; i++) {
    const dart__queued_acc_t *q = &dart__onesided__acc_queue[i];
    switch (q->size) {
    case 1: APPLY_QUEUED(8); break;
    case 2: APPLY_QUEUED(16); break;
    case 4: APPLY_QUEUED(32); break;
    default: APPLY_QUEUED(64); break;
    }
  }
  dart__onesided__acc_queued = 0;
}

/* Accumulates the caller could queue are queued before they get here
 * (acc_queue.h). */
static dart_ret_t shm_atomic(const dart__atomic_t *a)
{
  const dart__target_t *t = a->target;
  cpu_atomic(a, t->route->base + t->offset);
  return DART_OK;
}

void dart__onesided__cpu_atomic(const dart__atomic_t *a, char *p)
{
  cpu_atomic(a, p);
}

const dart__path_ops_t dart__path_self = {shm_put, shm_get, shm_flush,
                                          shm_flush, shm_atomic};
const dart__path_ops_t dart__path_shm = {shm_put, shm_get, shm_flush,
                                         shm_flush, shm_atomic};
