/*
 * Hardware transactions (x86 RTM): plain loads and stores that commit
 * together, atomic with every other access to the lines they touched, or
 * abort with nothing done (a conflicting access, an interrupt, a page not
 * yet mapped, too many lines).
 */
#ifndef DART__BASE__HTM_H_
#define DART__BASE__HTM_H_

#include <stdbool.h>

/* Whether this CPU runs transactions: it has RTM and its microcode does not
 * make every transaction abort. */
bool dart__base__htm_supported(void);

#if defined(__x86_64__)
/*
 * Starts a transaction: true inside it. Where it aborts, the CPU undoes
 * its stores and registers and comes back here with false. Only
 * dart__base__htm_supported CPUs may call it.
 */
static inline __attribute__((always_inline)) bool dart__base__htm_begin(void)
{
  unsigned status = ~0u; /* XBEGIN keeps it when the transaction starts */
  __asm__ __volatile__("xbegin 1f\n1:" : "+a"(status) : : "memory");
  return status == ~0u;
}

/* Commits the transaction dart__base__htm_begin started. */
static inline __attribute__((always_inline)) void dart__base__htm_end(void)
{
  __asm__ __volatile__("xend" : : : "memory");
}
#else
static inline bool dart__base__htm_begin(void) { return false; }
static inline void dart__base__htm_end(void) {}
#endif

#endif
