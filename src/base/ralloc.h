/*
 * Range allocator: hands out aligned, non-overlapping blocks of [0, capacity).
 * Bookkeeping lives outside the managed memory (which other units may write),
 * so a stray remote write cannot corrupt it, and frees are checked exactly:
 * only the start of a live block can be freed.
 */
#ifndef DART__BASE__RALLOC_H_
#define DART__BASE__RALLOC_H_

#include <stddef.h>

typedef struct {
  size_t offset;
  size_t length;
} dart__extent_t;

typedef struct {
  size_t capacity;
  dart__extent_t *free_list; /* sorted by offset, never adjacent */
  size_t nfree, free_cap;
  dart__extent_t *used;      /* sorted by offset */
  size_t nused, used_cap;
} dart__ralloc_t;

/* All return 0 on success. */
int dart__base__ralloc_init(dart__ralloc_t *ra, size_t capacity);
void dart__base__ralloc_destroy(dart__ralloc_t *ra);
/* -1: no room (the caller decides whether that is an error) */
int dart__base__ralloc_alloc(dart__ralloc_t *ra, size_t length, size_t align,
                             size_t *offset);
/* -1: offset is not the start of a live block */
int dart__base__ralloc_free(dart__ralloc_t *ra, size_t offset);
/* The live block containing offset: -1 if none. */
int dart__base__ralloc_find(const dart__ralloc_t *ra, size_t offset,
                            dart__extent_t *block);

#endif
