#include "ralloc.h"

#include <stdlib.h>
#include <string.h>

static int reserve(dart__extent_t **array, size_t *cap, size_t need)
{
  if (need <= *cap) return 0;
  size_t new_cap = *cap ? *cap * 2 : 16;
  while (new_cap < need) new_cap *= 2;
  dart__extent_t *grown = realloc(*array, new_cap * sizeof **array);
  if (grown == NULL) return -1;
  *array = grown;
  *cap = new_cap;
  return 0;
}

/* index of the first extent whose offset is >= offset */
static size_t lower_bound(const dart__extent_t *array, size_t n, size_t offset)
{
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (array[mid].offset < offset) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static int insert_at(dart__extent_t **array, size_t *n, size_t *cap,
                     size_t index, dart__extent_t value)
{
  if (reserve(array, cap, *n + 1) != 0) return -1;
  memmove(*array + index + 1, *array + index, (*n - index) * sizeof **array);
  (*array)[index] = value;
  (*n)++;
  return 0;
}

static void remove_at(dart__extent_t *array, size_t *n, size_t index)
{
  memmove(array + index, array + index + 1, (*n - index - 1) * sizeof *array);
  (*n)--;
}

int dart__base__ralloc_init(dart__ralloc_t *ra, size_t capacity)
{
  memset(ra, 0, sizeof *ra);
  ra->capacity = capacity;
  if (capacity == 0) return 0;
  dart__extent_t all = {0, capacity};
  return insert_at(&ra->free_list, &ra->nfree, &ra->free_cap, 0, all);
}

void dart__base__ralloc_destroy(dart__ralloc_t *ra)
{
  free(ra->free_list);
  free(ra->used);
  memset(ra, 0, sizeof *ra);
}

int dart__base__ralloc_alloc(dart__ralloc_t *ra, size_t length, size_t align,
                             size_t *offset)
{
  if (length == 0 || align == 0 || (align & (align - 1)) != 0) return -1;
  /* room in the used list first, so that nothing fails half-way */
  if (reserve(&ra->used, &ra->used_cap, ra->nused + 1) != 0) return -1;
  if (reserve(&ra->free_list, &ra->free_cap, ra->nfree + 1) != 0) return -1;
  for (size_t i = 0; i < ra->nfree; i++) {
    dart__extent_t hole = ra->free_list[i];
    size_t start = (hole.offset + align - 1) & ~(align - 1);
    if (start < hole.offset) continue; /* wrapped */
    size_t pad = start - hole.offset;
    if (pad > hole.length || hole.length - pad < length) continue;
    size_t tail = hole.length - pad - length;
    /* split the hole into [pad][block][tail] */
    if (pad == 0 && tail == 0) {
      remove_at(ra->free_list, &ra->nfree, i);
    } else if (pad == 0) {
      ra->free_list[i].offset = start + length;
      ra->free_list[i].length = tail;
    } else {
      ra->free_list[i].length = pad;
      if (tail > 0) {
        dart__extent_t rest = {start + length, tail};
        insert_at(&ra->free_list, &ra->nfree, &ra->free_cap, i + 1, rest);
      }
    }
    dart__extent_t block = {start, length};
    insert_at(&ra->used, &ra->nused, &ra->used_cap,
              lower_bound(ra->used, ra->nused, start), block);
    *offset = start;
    return 0;
  }
  return -1;
}

int dart__base__ralloc_free(dart__ralloc_t *ra, size_t offset)
{
  size_t u = lower_bound(ra->used, ra->nused, offset);
  if (u == ra->nused || ra->used[u].offset != offset) return -1;
  if (reserve(&ra->free_list, &ra->free_cap, ra->nfree + 1) != 0) return -1;
  dart__extent_t block = ra->used[u];
  remove_at(ra->used, &ra->nused, u);
  size_t f = lower_bound(ra->free_list, ra->nfree, block.offset);
  int joins_prev = f > 0 && ra->free_list[f - 1].offset +
                                    ra->free_list[f - 1].length ==
                                block.offset;
  int joins_next = f < ra->nfree &&
                   block.offset + block.length == ra->free_list[f].offset;
  if (joins_prev && joins_next) {
    ra->free_list[f - 1].length += block.length + ra->free_list[f].length;
    remove_at(ra->free_list, &ra->nfree, f);
  } else if (joins_prev) {
    ra->free_list[f - 1].length += block.length;
  } else if (joins_next) {
    ra->free_list[f].offset = block.offset;
    ra->free_list[f].length += block.length;
  } else {
    insert_at(&ra->free_list, &ra->nfree, &ra->free_cap, f, block);
  }
  return 0;
}

int dart__base__ralloc_find(const dart__ralloc_t *ra, size_t offset,
                            dart__extent_t *block)
{
  size_t u = lower_bound(ra->used, ra->nused, offset + 1);
  if (u == 0) return -1;
  const dart__extent_t *candidate = &ra->used[u - 1];
  if (offset - candidate->offset >= candidate->length) return -1;
  *block = *candidate;
  return 0;
}
