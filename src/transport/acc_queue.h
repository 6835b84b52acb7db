/*
 * Non-fetching accumulates of one integer element on memory this unit
 * reaches with CPU atomics wait in a short queue and are applied together
 * (acc_queue.c). A locked instruction waits for its cache line, and the call
 * around each one fills the CPU's reorder window, so applied one by one
 * every random update pays a whole miss. Queued, each line is prefetched for
 * writing when its update arrives and is in cache when the queue is applied:
 * when full, and at every flush, barrier, other atomic, segment free and
 * dart_exit (dart_accumulate only completes at a flush). Where the CPU
 * has hardware transactions (DART_HTM), a queue is applied in one, with
 * plain loads and stores: a locked instruction each would wait for the one
 * before. Off with DART_THREAD_MULTIPLE, where a flush completes other
 * threads' updates too.
 */
#ifndef DART__TRANSPORT__ACC_QUEUE_H_
#define DART__TRANSPORT__ACC_QUEUE_H_

#include <dart/dart_types.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/copy.h"
#include "base/runtime.h"
#include "types/datatype.h"

#define DART__ACC_QUEUE_LEN 32

typedef struct {
  void *addr;
  unsigned char operand[8]; /* size bytes */
  dart_operation_t op;      /* dart__transport__one_instruction() */
  size_t size;
} dart__queued_acc_t;

extern dart__queued_acc_t dart__transport__acc_queue[DART__ACC_QUEUE_LEN];
extern unsigned dart__transport__acc_queued;

/* Applies the queued accumulates; the queue is empty after. */
void dart__transport__acc_apply(void);

/* The batches applied since dart_init (dart_acc_batches): in one hardware
 * transaction each; with one locked instruction per update after their
 * transaction aborted; and so without one tried. */
typedef enum {
  DART__ACC_IN_TRANSACTION,
  DART__ACC_AFTER_ABORT,
  DART__ACC_LOCKED,
  DART__ACC_HOW_COUNT
} dart__acc_how_t;
extern uint64_t dart__transport__acc_batches[DART__ACC_HOW_COUNT];

/* At dart_init: batches go in hardware transactions from now on where
 * DART_HTM asks for them and the CPU has them; the counts start at 0. */
void dart__transport__acc_init(void);

/* Whether batches go in hardware transactions (DART_INFO). */
bool dart__transport__acc_htm(void);

static inline void dart__transport__acc_complete(void)
{
  if (dart__transport__acc_queued) dart__transport__acc_apply();
}

/* The non-fetching integer operations that are one locked instruction. */
static inline bool dart__transport__one_instruction(dart_operation_t op)
{
  return op == DART_OP_SUM || op == DART_OP_BXOR || op == DART_OP_BAND ||
         op == DART_OP_BOR;
}

static inline bool dart__transport__acc_queueable(const dart__dtype_t *t,
                                                  dart_operation_t op)
{
  return t->integral && dart__transport__one_instruction(op) &&
         dart__rt.thread_level != DART_THREAD_MULTIPLE;
}

/* Queues *operand op'd into the element of size bytes at addr. */
static inline void dart__transport__acc_enqueue(void *addr, const void *operand,
                                                size_t size,
                                                dart_operation_t op)
{
  dart__base__prefetch_write(addr);
  dart__queued_acc_t *q =
      &dart__transport__acc_queue[dart__transport__acc_queued];
  q->addr = addr;
  dart__base__copy(q->operand, operand, size);
  q->op = op;
  q->size = size;
  if (++dart__transport__acc_queued == DART__ACC_QUEUE_LEN)
    dart__transport__acc_apply();
}

#endif
