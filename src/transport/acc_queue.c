/*
 * The accumulate queue (acc_queue.h): applied in hardware transactions
 * where the CPU has them, else with locked instructions; and CPU atomics
 * out of line.
 */
#include "base/env.h"
#include "base/htm.h"
#include "base/runtime.h"
#include "transport/acc_queue.h"
#include "transport/cpu_atomic.h"
#include "types/atomic_apply.h"

dart__queued_acc_t dart__transport__acc_queue[DART__ACC_QUEUE_LEN];
unsigned dart__transport__acc_queued;
uint64_t dart__transport__acc_batches[DART__ACC_HOW_COUNT];

/*
 * Hardware transactions for the queue. Where one aborts, the queue is
 * applied with locked instructions. A conflict with another unit's access
 * (the CPU says a retry may commit) changes nothing else; after an abort
 * for a reason that stays (a page fault, an interrupt, a CPU whose
 * microcode aborts them all, valgrind), the next batches go with locked
 * instructions too, twice as many after each such abort in a row, so that
 * transactions that cannot commit cost next to nothing; after a commit
 * every batch tries again.
 * Transactions pay for their begin and end from about four updates on
 * (about 12 ns together against 5-7 ns a locked update on a Sapphire
 * Rapids core), so smaller batches are not tried.
 */
#define HTM_MIN_BATCH 4
#define HTM_MAX_BACKOFF 1024

static struct {
  bool on;          /* DART_HTM and the CPU has them */
  unsigned skip;    /* batches left to apply with locked instructions */
  unsigned backoff; /* the skip after the next abort */
} htm;

void dart__transport__acc_init(void)
{
  htm.on = dart__base__config.htm && dart__base__htm_supported();
  htm.skip = 0;
  htm.backoff = 1;
  memset(dart__transport__acc_batches, 0, sizeof dart__transport__acc_batches);
}

bool dart__transport__acc_htm(void) { return htm.on; }

/* One queued accumulate of N bits (T: the basic type of that width whose
 * arithmetic, atomic_apply.h's, is the locked instruction's): inside a
 * transaction a relaxed load and store (plain moves, atomic together with
 * the transaction's others), else a locked instruction. */
#define APPLY_QUEUED(N, T)                                                   \
  do {                                                                       \
    uint##N##_t v, *p = q->addr;                                             \
    memcpy(&v, q->operand, sizeof v);                                        \
    if (in_transaction) {                                                    \
      uint##N##_t old = __atomic_load_n(p, __ATOMIC_RELAXED), next;          \
      dart__types__apply_value(T, (int)q->op, &old, &v, &next);              \
      __atomic_store_n(p, next, __ATOMIC_RELAXED);                           \
    } else {                                                                 \
      cpu_update##N(p, q->op, v);                                            \
    }                                                                        \
  } while (0)

static inline __attribute__((always_inline)) void
apply_queue(unsigned n, bool in_transaction)
{
  for (unsigned i = 0; i < n; i++) {
    const dart__queued_acc_t *q = &dart__transport__acc_queue[i];
    switch (q->size) {
    case 1: APPLY_QUEUED(8, DART_TYPE_BYTE); break;
    case 2: APPLY_QUEUED(16, DART_TYPE_SHORT); break;
    case 4: APPLY_QUEUED(32, DART_TYPE_UINT); break;
    default: APPLY_QUEUED(64, DART_TYPE_ULONGLONG); break;
    }
  }
}

/* The queue applied in one transaction, if one is tried: how it went. */
static dart__acc_how_t apply_in_transaction(unsigned n)
{
  if (!htm.on || n < HTM_MIN_BATCH) return DART__ACC_LOCKED;
  if (htm.skip > 0) {
    htm.skip--;
    return DART__ACC_LOCKED;
  }
  const unsigned status = dart__base__htm_begin();
  if (status != DART__BASE__HTM_STARTED) {
    if (!DART__BASE__HTM_MAY_RETRY(status)) {
      htm.skip = htm.backoff;
      if (htm.backoff < HTM_MAX_BACKOFF) htm.backoff *= 2;
    }
    return DART__ACC_AFTER_ABORT;
  }
  apply_queue(n, true);
  dart__base__htm_end();
  htm.backoff = 1;
  return DART__ACC_IN_TRANSACTION;
}

void dart__transport__acc_apply(void)
{
  const unsigned n = dart__transport__acc_queued;
  const dart__acc_how_t how = apply_in_transaction(n);
  if (how != DART__ACC_IN_TRANSACTION) apply_queue(n, false);
  dart__transport__acc_batches[how]++;
  dart__transport__acc_queued = 0;
}

void dart__transport__cpu_atomic(const dart__atomic_t *a, char *p)
{
  cpu_atomic(a, p);
}
