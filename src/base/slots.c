#include "slots.h"

#include <stdlib.h>
#include <string.h>

void dart__base__slots_init(dart__slots_t *slots, uint32_t capacity)
{
  memset(slots, 0, sizeof *slots);
  if (capacity > DART__SLOTS_CHUNK * DART__SLOTS_MAX_CHUNKS)
    capacity = DART__SLOTS_CHUNK * DART__SLOTS_MAX_CHUNKS;
  slots->capacity = capacity;
}

void dart__base__slots_destroy(dart__slots_t *slots)
{
  for (uint32_t c = 0; c < DART__SLOTS_MAX_CHUNKS; c++) free(slots->chunks[c]);
  free(slots->freed);
  memset(slots, 0, sizeof *slots);
}

static int take_id(dart__slots_t *slots, uint32_t *id)
{
  if (slots->next_fresh < slots->capacity) {
    *id = slots->next_fresh;
    return 0;
  }
  if (slots->freed_count == 0) return -1;
  *id = slots->freed[slots->freed_head];
  return 0;
}

int dart__base__slots_insert(dart__slots_t *slots, void *value, uint32_t *id)
{
  uint32_t slot;
  if (take_id(slots, &slot) != 0) return -1;
  void ***chunk = &slots->chunks[slot / DART__SLOTS_CHUNK];
  if (*chunk == NULL) {
    *chunk = calloc(DART__SLOTS_CHUNK, sizeof **chunk);
    if (*chunk == NULL) return -1;
  }
  /* commit only after everything that can fail */
  if (slot == slots->next_fresh) {
    slots->next_fresh++;
  } else {
    slots->freed_head = (slots->freed_head + 1) % slots->freed_cap;
    slots->freed_count--;
  }
  (*chunk)[slot % DART__SLOTS_CHUNK] = value;
  *id = slot;
  return 0;
}

void dart__base__slots_remove(dart__slots_t *slots, uint32_t id)
{
  if (dart__base__slots_get(slots, id) == NULL) return;
  if (slots->freed_count == slots->freed_cap) {
    /* grow the ring, unrolling it so that the oldest id comes first */
    uint32_t new_cap = slots->freed_cap ? slots->freed_cap * 2 : 64;
    uint32_t *ring = malloc(new_cap * sizeof *ring);
    if (ring == NULL) {
      /* the id is leaked rather than reused: always safe */
      slots->chunks[id / DART__SLOTS_CHUNK][id % DART__SLOTS_CHUNK] = NULL;
      return;
    }
    for (uint32_t i = 0; i < slots->freed_count; i++)
      ring[i] = slots->freed[(slots->freed_head + i) % slots->freed_cap];
    free(slots->freed);
    slots->freed = ring;
    slots->freed_head = 0;
    slots->freed_cap = new_cap;
  }
  slots->freed[(slots->freed_head + slots->freed_count) % slots->freed_cap] = id;
  slots->freed_count++;
  slots->chunks[id / DART__SLOTS_CHUNK][id % DART__SLOTS_CHUNK] = NULL;
}
