/*
 * Access patterns of a communication plan: which elements of an array (a)
 * go to or come from which elements of another (b), as runs of
 * consecutive elements on both sides, merged at set-up into blocks of up
 * to three levels (runs at constant strides, and such rows at constant
 * strides: the faces of 2-D and 3-D boxes), so that the hot path walks a
 * few blocks instead of an index per element.
 */
#ifndef DART__PLAN__PATTERN_H_
#define DART__PLAN__PATTERN_H_

#include <dart/dart_types.h>
#include <stddef.h>
#include <stdint.h>

/* n2 rows of n1 runs of len elements: run (i2, i1) starts at element
 * a + i2 * a2 + i1 * a1 of a and b + i2 * b2 + i1 * b1 of b. */
typedef struct {
  int64_t a, b;
  size_t len, n1, n2;
  int64_t a1, b1, a2, b2;
} dart__plan_block_t;

typedef struct {
  dart__plan_block_t *blocks;
  size_t nblocks;
  size_t nelem; /* elements in all runs */
} dart__plan_pattern_t;

/* The pattern of n element pairs (a[k], b[k]), in this order (b == NULL:
 * b[k] = k, a packed buffer). DART_ERR_NOMEM without memory. */
dart_ret_t dart__plan__pattern_build(const int64_t *a, const int64_t *b,
                                     size_t n, dart__plan_pattern_t *p);
void dart__plan__pattern_free(dart__plan_pattern_t *p);

/* Calls fn(ctx, a, b, len) for every run, in order. */
static inline __attribute__((always_inline)) void dart__plan__pattern_walk(
    const dart__plan_pattern_t *p,
    void (*fn)(void *ctx, int64_t a, int64_t b, size_t len), void *ctx)
{
  for (size_t k = 0; k < p->nblocks; k++) {
    const dart__plan_block_t *blk = &p->blocks[k];
    for (size_t i2 = 0; i2 < blk->n2; i2++) {
      int64_t a = blk->a + (int64_t)i2 * blk->a2;
      int64_t b = blk->b + (int64_t)i2 * blk->b2;
      for (size_t i1 = 0; i1 < blk->n1; i1++, a += blk->a1, b += blk->b1)
        fn(ctx, a, b, blk->len);
    }
  }
}

#endif
