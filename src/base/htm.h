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

/* dart__base__htm_begin's answer inside the transaction; any other is
 * the abort status (bits 23:6 are 0 in every one). */
#define DART__BASE__HTM_STARTED (~0u)
/* An abort status that says the transaction may commit if tried again (a
 * conflicting access); without it, it aborted for a reason that stays (a
 * page fault, an interrupt, a CPU that aborts every transaction). */
#define DART__BASE__HTM_MAY_RETRY(status) (((status) & (1u << 1)) != 0)

#if defined(__x86_64__)
/*
 * Starts a transaction: DART__BASE__HTM_STARTED inside it. Where it
 * aborts, the CPU undoes its stores and registers and comes back here with
 * the abort status. Only dart__base__htm_supported CPUs may call it.
 */
static inline __attribute__((always_inline)) unsigned
dart__base__htm_begin(void)
{
  unsigned status = DART__BASE__HTM_STARTED; /* XBEGIN keeps it then */
  __asm__ __volatile__("xbegin 1f\n1:" : "+a"(status) : : "memory");
  return status;
}

/* Commits the transaction dart__base__htm_begin started. */
static inline __attribute__((always_inline)) void dart__base__htm_end(void)
{
  __asm__ __volatile__("xend" : : : "memory");
}
#else
static inline unsigned dart__base__htm_begin(void) { return 0; }
static inline void dart__base__htm_end(void) {}
#endif

#endif
