/*
 * Slot table: a dense, two-level array of pointers indexed by a small id,
 * with O(1) lookup (no hashing, no search) and stable storage (chunks never
 * move, so a lookup never races with growth). Ids are issued fresh first,
 * then reused oldest-freed-first, so a stale id stays invalid as long as
 * possible.
 */
#ifndef DART__BASE__SLOTS_H_
#define DART__BASE__SLOTS_H_

#include <stddef.h>
#include <stdint.h>

#define DART__SLOTS_CHUNK 256u
#define DART__SLOTS_MAX_CHUNKS 256u

typedef struct {
  void **chunks[DART__SLOTS_MAX_CHUNKS];
  uint32_t capacity;   /* ids are 0 .. capacity-1 */
  uint32_t next_fresh; /* ids below have been issued at least once */
  uint32_t *freed;     /* FIFO ring of released ids */
  uint32_t freed_head, freed_count, freed_cap;
} dart__slots_t;

void dart__base__slots_init(dart__slots_t *slots, uint32_t capacity);
void dart__base__slots_destroy(dart__slots_t *slots);

/* The pointer stored at id, or NULL (also for ids out of range). */
static inline void *dart__base__slots_get(const dart__slots_t *slots,
                                          uint32_t id)
{
  if (id >= slots->capacity) return NULL;
  void **chunk = slots->chunks[id / DART__SLOTS_CHUNK];
  return chunk ? chunk[id % DART__SLOTS_CHUNK] : NULL;
}

/* Reserves an id and stores value there; -1 if none is left or no memory. */
int dart__base__slots_insert(dart__slots_t *slots, void *value, uint32_t *id);
/* Empties the slot and queues its id for reuse. */
void dart__base__slots_remove(dart__slots_t *slots, uint32_t id);

#endif
