/*
 * Access patterns (of communication plans, dart_plan.h): which elements
 * of an array (a) pair with which elements of another (b): a packed
 * message, or a unit's own leaves. Set-up merges the pairs into runs
 * consecutive on both sides, runs at constant strides into rows and rows
 * at constant strides into boxes (the faces of 2-D and 3-D blocks), so
 * that the hot path walks a few blocks instead of an index per element.
 * Where the runs are short the pattern also keeps 32-bit index lists,
 * which operations other than copies walk by typed loops in chunks; where
 * the blocks are small too (scattered elements) it keeps the lists only.
 * Copies walk blocks by typed strided loops where their rows are long
 * (a strided column is one block of one row; two such columns of one
 * shape, a dimension's two faces, together), else the lists.
 */
#ifndef DART__TYPES__PATTERN_H_
#define DART__TYPES__PATTERN_H_

#include <dart/dart_types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types/op.h"

/* n2 rows of n1 runs of len elements: run (i2, i1) starts at element
 * a + i2 * a2 + i1 * a1 of a and b + i2 * b2 + i1 * b1 of b. pair: copies
 * take this block and the next, both of single elements and of one
 * shape, element by element together (a 3-D block's two x-faces lie in
 * the same rows); false on the second of a pair too. A pair's pairs may
 * alternate between its two blocks (a message of both faces, row by row):
 * such a pattern keeps the index lists, which give the pairs' order. */
typedef struct {
  int64_t a, b;
  size_t len, n1, n2;
  int64_t a1, b1, a2, b2;
  bool pair;
} dart__pattern_block_t;

typedef struct {
  dart__pattern_block_t *blocks; /* block form (NULL: none) */
  size_t nblocks;
  uint32_t *a_at, *b_at;      /* index form (a_at != NULL), of the same
                                 pairs where both are kept: pair k is
                                 (a_at[k], b_at[k]), or (a_at[k], k)
                                 where b_at is NULL */
  size_t nelem;               /* pairs */
  bool copy_blocks;           /* copies walk the blocks (long rows) */
} dart__pattern_t;

/* The pattern of n element pairs (a[k], b[k]), in this order (b == NULL:
 * b[k] = k, a packed buffer). DART_ERR_NOMEM without memory. */
dart_ret_t dart__types__pattern_build(const int64_t *a, const int64_t *b,
                                      size_t n, dart__pattern_t *p);
void dart__types__pattern_free(dart__pattern_t *p);

/* The elements of side a (or b) of p's pairs, in pair order, into v
 * (p->nelem of them). */
void dart__types__pattern_elements(const dart__pattern_t *p, bool b_side,
                                   int64_t *v);

/* p's pairs by their element of one side: pairs order[first[g]] to
 * order[first[g + 1] - 1] name one element, in pair order, so that a
 * device can give each element a thread of its own where several pairs
 * write it (several leaves on one root). */
typedef struct {
  size_t *order; /* nelem pairs; NULL: the side names no element twice */
  size_t *first; /* ngroups + 1 */
  size_t ngroups;
} dart__pattern_groups_t;

/* p's groups by side a (or b); g->order NULL where every element of that
 * side is in one pair. DART_ERR_NOMEM without memory. */
dart_ret_t dart__types__pattern_groups(const dart__pattern_t *p, bool b_side,
                                       dart__pattern_groups_t *g);
void dart__types__pattern_groups_free(dart__pattern_groups_t *g);

/* The operations on the pairs, elements of es bytes, in pair order:
 *   pack:  b[j] = a[i], where b is a packed buffer (built with b NULL)
 *   apply: a[i] = a[i] op b[j]
 *   apply_to_b: b[j] = b[j] op a[i], where b is an array (built with b)
 *   fetch: c[j] = a[i], then a[i] = a[i] op b[j] */
void dart__types__pattern_pack(const dart__pattern_t *p, const char *a,
                               char *b, size_t es);
void dart__types__pattern_apply(const dart__pattern_t *p, char *a,
                                const char *b, size_t es,
                                const dart__op_local_t *op);
void dart__types__pattern_apply_to_b(const dart__pattern_t *p, const char *a,
                                     char *b, size_t es,
                                     const dart__op_local_t *op);
void dart__types__pattern_fetch(const dart__pattern_t *p, char *a,
                                const char *b, char *c, size_t es,
                                const dart__op_local_t *op);

#endif
