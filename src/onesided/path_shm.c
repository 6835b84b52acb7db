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

/*
 * CPU atomics on one element of N bits: the CPU's own instruction where
 * there is one (add, exchange, and non-fetching and/or/xor), else a
 * compare-and-swap loop over dart__onesided__atomic_apply.
 * All sequentially consistent, so they also order the caller's other
 * accesses. old_out may be NULL.
 */
#define DEFINE_CPU_RMW(N)                                                    \
  /* op: dart__onesided__one_instruction(); no load-then-swap (x86) */    \
  static inline __attribute__((always_inline)) void cpu_update##N(           \
      uint##N##_t *p, dart_operation_t op, uint##N##_t v)                    \
  {                                                                          \
    switch (op) {                                                            \
    case DART_OP_SUM: __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); break;     \
    case DART_OP_BXOR: __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST); break;    \
    case DART_OP_BAND: __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST); break;    \
    default: __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); break;               \
    }                                                                        \
  }                                                                          \
  static inline __attribute__((always_inline)) void cpu_rmw##N(              \
      uint##N##_t *p, const dart__atomic_t *a, const void *operand,          \
      void *old_out)                                                         \
  {                                                                          \
    uint##N##_t v = 0, old, next;                                            \
    if (operand) memcpy(&v, operand, sizeof v);                              \
    bool integral = dart__globmem__basic_types[a->type].integral;            \
    if (old_out == NULL && integral &&                                       \
        dart__onesided__one_instruction(a->op)) {                            \
      cpu_update##N(p, a->op, v);                                            \
      return;                                                                \
    }                                                                        \
    if (a->op == DART_OP_REPLACE) {                                          \
      old = __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);                     \
    } else if (a->op == DART_OP_NO_OP) {                                     \
      old = __atomic_load_n(p, __ATOMIC_SEQ_CST);                            \
    } else if (integral && a->op == DART_OP_SUM) {                           \
      old = __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);                      \
    } else { /* fetching AND/OR/XOR are swap loops on x86 too */             \
      old = __atomic_load_n(p, __ATOMIC_RELAXED);                            \
      do {                                                                   \
        dart__onesided__atomic_apply(a, &old, operand, &next);               \
      } while (!__atomic_compare_exchange_n(p, &old, next, true,             \
                                            __ATOMIC_SEQ_CST,                \
                                            __ATOMIC_RELAXED));              \
    }                                                                        \
    if (old_out) memcpy(old_out, &old, sizeof old);                          \
  }                                                                          \
  static inline __attribute__((always_inline)) void cpu_cas##N(              \
      uint##N##_t *p, const void *value, const void *compare, void *old_out) \
  {                                                                          \
    uint##N##_t v, expected;                                                 \
    memcpy(&v, value, sizeof v);                                             \
    memcpy(&expected, compare, sizeof expected);                             \
    __atomic_compare_exchange_n(p, &expected, v, false, __ATOMIC_SEQ_CST,    \
                                __ATOMIC_SEQ_CST);                           \
    memcpy(old_out, &expected, sizeof expected);                             \
  }

DEFINE_CPU_RMW(8)
DEFINE_CPU_RMW(16)
DEFINE_CPU_RMW(32)
DEFINE_CPU_RMW(64)

static inline __attribute__((always_inline)) void
cpu_element(const dart__atomic_t *a, char *p, const void *operand,
            void *old_out)
{
  bool cas = a->kind == DART__ATOMIC_CAS;
  switch (a->size) {
  case 1:
    if (cas) cpu_cas8((uint8_t *)p, operand, a->compare, old_out);
    else cpu_rmw8((uint8_t *)p, a, operand, old_out);
    break;
  case 2:
    if (cas) cpu_cas16((uint16_t *)p, operand, a->compare, old_out);
    else cpu_rmw16((uint16_t *)p, a, operand, old_out);
    break;
  case 4:
    if (cas) cpu_cas32((uint32_t *)p, operand, a->compare, old_out);
    else cpu_rmw32((uint32_t *)p, a, operand, old_out);
    break;
  default:
    if (cas) cpu_cas64((uint64_t *)p, operand, a->compare, old_out);
    else cpu_rmw64((uint64_t *)p, a, operand, old_out);
    break;
  }
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

static inline __attribute__((always_inline)) void
cpu_atomic(const dart__atomic_t *a, char *p)
{
  if (a->kind != DART__ATOMIC_ACCUMULATE) {
    cpu_element(a, p, a->values, a->result);
    return;
  }
  const char *operand = a->values;
  for (size_t i = 0; i < a->nelem; i++)
    cpu_element(a, p + i * a->size, operand ? operand + i * a->size : NULL,
                NULL);
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
