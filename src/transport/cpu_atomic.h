/*
 * CPU atomics on elements of memory this process loads and stores: the
 * shared-memory paths' atomics (onesided/path_shm.c), the public
 * functions' hot paths (onesided/atomic.c), the accumulate queue and the
 * emulated device's atomics.
 */
#ifndef DART__TRANSPORT__CPU_ATOMIC_H_
#define DART__TRANSPORT__CPU_ATOMIC_H_

#include <stdint.h>
#include <string.h>

#include "transport/acc_queue.h"
#include "transport/transport.h"

/*
 * CPU atomics on one element of N bits: the CPU's own instruction where
 * there is one (add, exchange, and non-fetching and/or/xor), else a
 * compare-and-swap loop over dart__transport__atomic_apply.
 * All sequentially consistent, so they also order the caller's other
 * accesses. old_out may be NULL.
 */
#define DEFINE_CPU_RMW(N)                                                    \
  /* op: dart__transport__one_instruction(); no load-then-swap (x86) */    \
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
    bool integral = dart__types__basic_types[a->type].integral;            \
    if (old_out == NULL && integral &&                                       \
        dart__transport__one_instruction(a->op)) {                            \
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
        dart__transport__atomic_apply(a, &old, operand, &next);               \
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

/* a on the element(s) at p (out of line: dart__transport__cpu_atomic). */
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

void dart__transport__cpu_atomic(const dart__atomic_t *a, char *p);

#endif
