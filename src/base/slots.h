/*
 * Slot table: a dense, two-level array of pointers indexed by a small id,
 * with O(1) lookup (no hashing, no search) and stable storage (chunks never
 * move, so a lookup never races with growth). Which free id an insert
 * takes is the table's reuse order:
 *   LATEST   the most recently freed id first, fresh ids when none is
 *            freed (DART-MPI's order: a freed segment id is issued again
 *            by the next allocation)
 *   DELAYED  fresh ids first, then the oldest freed, so that a stale id
 *            stays invalid as long as possible
 */
#ifndef DART__BASE__SLOTS_H_
#define DART__BASE__SLOTS_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DART__SLOTS_CHUNK 256u
#define DART__SLOTS_MAX_CHUNKS 256u

typedef enum {
  DART__SLOTS_REUSE_LATEST = 0,
  DART__SLOTS_REUSE_DELAYED = 1
} dart__slots_reuse_t;

typedef struct {
  void **chunks[DART__SLOTS_MAX_CHUNKS];
  uint32_t capacity;   /* ids are 0 .. capacity-1 */
  uint32_t next_fresh; /* ids below have been issued at least once */
  dart__slots_reuse_t reuse;
  uint32_t *freed;     /* ring of released ids, oldest first */
  uint32_t freed_head, freed_count, freed_cap;
} dart__slots_t;

void dart__base__slots_init(dart__slots_t *slots, uint32_t capacity,
                            dart__slots_reuse_t reuse);
void dart__base__slots_destroy(dart__slots_t *slots);

/* The pointer stored at id, or NULL (also for ids out of range). */
static inline void *dart__base__slots_get(const dart__slots_t *slots,
                                          uint32_t id)
{
  if (id >= slots->capacity) return NULL;
  void **chunk = slots->chunks[id / DART__SLOTS_CHUNK];
  return chunk ? chunk[id % DART__SLOTS_CHUNK] : NULL;
}

/* The id the next insert takes (nothing is reserved); -1 if none is left. */
int dart__base__slots_next(const dart__slots_t *slots, uint32_t *id);
/* Whether id can be taken. */
bool dart__base__slots_is_free(const dart__slots_t *slots, uint32_t id);
/* Sets bit id % 64 of mask[id / 64] for every free id (mask holds
 * (capacity + 63) / 64 words). */
void dart__base__slots_free_mask(const dart__slots_t *slots, uint64_t *mask);
/* Reserves the next id and stores value there; -1 if none is left or no
 * memory. */
int dart__base__slots_insert(dart__slots_t *slots, void *value, uint32_t *id);
/* Stores value at the free id (fresh ids skipped on the way stay free);
 * -1, with nothing changed, if id is taken or out of range, or no memory. */
int dart__base__slots_insert_at(dart__slots_t *slots, uint32_t id,
                                void *value);
/* Empties the slot and queues its id for reuse. */
void dart__base__slots_remove(dart__slots_t *slots, uint32_t id);

#endif
