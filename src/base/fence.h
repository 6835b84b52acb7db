/* A full memory fence for the hot paths. */
#ifndef DART__BASE__FENCE_H_
#define DART__BASE__FENCE_H_

#include <stdatomic.h>
#include <stdint.h>

/*
 * Orders every earlier load and store of this thread before every later
 * one, as atomic_thread_fence(memory_order_seq_cst). On x86-64 compilers
 * emit that as a locked OR on the word at the stack pointer, which is
 * where a function that returns right after it finds its saved registers:
 * their loads then wait for the locked store. A locked add of zero just
 * below the stack pointer (the red zone; the value does not change) is
 * the same fence without that wait, as Linux's smp_mb.
 */
static inline __attribute__((always_inline)) void dart__base__fence(void)
{
#if defined(__x86_64__)
  __asm__ __volatile__("lock; addl $0,-4(%%rsp)" ::: "memory", "cc");
#else
  atomic_thread_fence(memory_order_seq_cst);
#endif
}

/*
 * Stores the aligned word v at p, then fences as dart__base__fence. On
 * x86-64 one exchange does both: it is locked, so it is the fence, and
 * saves the separate store the locked add would wait for.
 */
static inline __attribute__((always_inline)) void
dart__base__store_fence(uint64_t *p, uint64_t v)
{
#if defined(__x86_64__)
  __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
#else
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
  dart__base__fence();
#endif
}

#endif
