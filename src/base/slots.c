#include "slots.h"

#include <stdlib.h>
#include <string.h>

void dart__base__slots_init(dart__slots_t *slots, uint32_t capacity,
                            dart__slots_reuse_t reuse)
{
  memset(slots, 0, sizeof *slots);
  if (capacity > DART__SLOTS_CHUNK * DART__SLOTS_MAX_CHUNKS)
    capacity = DART__SLOTS_CHUNK * DART__SLOTS_MAX_CHUNKS;
  slots->capacity = capacity;
  slots->reuse = reuse;
}

void dart__base__slots_destroy(dart__slots_t *slots)
{
  for (uint32_t c = 0; c < DART__SLOTS_MAX_CHUNKS; c++) free(slots->chunks[c]);
  free(slots->freed);
  memset(slots, 0, sizeof *slots);
}

/* The i-th released id, oldest first. */
static uint32_t *freed_at(const dart__slots_t *slots, uint32_t i)
{
  return &slots->freed[(slots->freed_head + i) % slots->freed_cap];
}

int dart__base__slots_next(const dart__slots_t *slots, uint32_t *id)
{
  const bool fresh_left = slots->next_fresh < slots->capacity;
  if (slots->freed_count > 0 &&
      (slots->reuse == DART__SLOTS_REUSE_LATEST || !fresh_left)) {
    *id = *freed_at(slots, slots->reuse == DART__SLOTS_REUSE_LATEST
                               ? slots->freed_count - 1
                               : 0);
    return 0;
  }
  if (!fresh_left) return -1;
  *id = slots->next_fresh;
  return 0;
}

/* Position of id among the released ids, or freed_count. */
static uint32_t freed_find(const dart__slots_t *slots, uint32_t id)
{
  uint32_t i = 0;
  while (i < slots->freed_count && *freed_at(slots, i) != id) i++;
  return i;
}

bool dart__base__slots_is_free(const dart__slots_t *slots, uint32_t id)
{
  if (id >= slots->capacity) return false;
  return id >= slots->next_fresh || freed_find(slots, id) < slots->freed_count;
}

void dart__base__slots_free_mask(const dart__slots_t *slots, uint64_t *mask)
{
  memset(mask, 0, (slots->capacity + 63) / 64 * sizeof *mask);
  for (uint32_t id = slots->next_fresh; id < slots->capacity; id++)
    mask[id / 64] |= 1ull << (id % 64);
  for (uint32_t i = 0; i < slots->freed_count; i++) {
    uint32_t id = *freed_at(slots, i);
    mask[id / 64] |= 1ull << (id % 64);
  }
}

/* Room in the ring for n more ids. */
static int freed_reserve(dart__slots_t *slots, uint32_t n)
{
  if (slots->freed_count + n <= slots->freed_cap) return 0;
  uint32_t new_cap = slots->freed_cap ? slots->freed_cap : 64;
  while (new_cap < slots->freed_count + n) new_cap *= 2;
  uint32_t *ring = malloc(new_cap * sizeof *ring);
  if (ring == NULL) return -1;
  /* unrolled, so that the oldest id comes first */
  for (uint32_t i = 0; i < slots->freed_count; i++) ring[i] = *freed_at(slots, i);
  free(slots->freed);
  slots->freed = ring;
  slots->freed_head = 0;
  slots->freed_cap = new_cap;
  return 0;
}

int dart__base__slots_insert_at(dart__slots_t *slots, uint32_t id,
                                void *value)
{
  if (!dart__base__slots_is_free(slots, id)) return -1;
  void ***chunk = &slots->chunks[id / DART__SLOTS_CHUNK];
  if (*chunk == NULL) {
    *chunk = calloc(DART__SLOTS_CHUNK, sizeof **chunk);
    if (*chunk == NULL) return -1;
  }
  /* fresh ids skipped on the way become released ones */
  if (id > slots->next_fresh &&
      freed_reserve(slots, id - slots->next_fresh) != 0)
    return -1;
  /* commit only after everything that can fail */
  if (id >= slots->next_fresh) {
    for (uint32_t skipped = slots->next_fresh; skipped < id; skipped++)
      *freed_at(slots, slots->freed_count++) = skipped;
    slots->next_fresh = id + 1;
  } else {
    uint32_t i = freed_find(slots, id);
    if (i == 0) {
      slots->freed_head = (slots->freed_head + 1) % slots->freed_cap;
    } else {
      for (; i + 1 < slots->freed_count; i++)
        *freed_at(slots, i) = *freed_at(slots, i + 1);
    }
    slots->freed_count--;
  }
  (*chunk)[id % DART__SLOTS_CHUNK] = value;
  return 0;
}

int dart__base__slots_insert(dart__slots_t *slots, void *value, uint32_t *id)
{
  uint32_t slot;
  if (dart__base__slots_next(slots, &slot) != 0 ||
      dart__base__slots_insert_at(slots, slot, value) != 0)
    return -1;
  *id = slot;
  return 0;
}

void dart__base__slots_remove(dart__slots_t *slots, uint32_t id)
{
  if (dart__base__slots_get(slots, id) == NULL) return;
  slots->chunks[id / DART__SLOTS_CHUNK][id % DART__SLOTS_CHUNK] = NULL;
  /* without room the id is leaked rather than reused: always safe */
  if (freed_reserve(slots, 1) != 0) return;
  *freed_at(slots, slots->freed_count++) = id;
}
