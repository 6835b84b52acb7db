#include "types/pattern.h"

#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Runs of fewer elements than this on average: operations other than
 * copies take index lists, which their typed loops walk faster than a
 * call per run. */
#define MIN_AVG_RUN 8
/* Blocks of fewer elements than this on average (scattered pairs): index
 * lists only. Otherwise blocks are kept, which copies walk by typed
 * strided loops (a strided column is one block of one-element runs). */
#define MIN_AVG_BLOCK 8

/* Whether run (a, b, len) continues blk as its next run in a row. */
static int extends_row(dart__pattern_block_t *blk, int64_t a, int64_t b,
                       size_t len)
{
  if (blk->n2 != 1 || blk->len != len) return 0;
  if (blk->n1 == 1) {
    blk->a1 = a - blk->a;
    blk->b1 = b - blk->b;
  } else if (a != blk->a + (int64_t)blk->n1 * blk->a1 ||
             b != blk->b + (int64_t)blk->n1 * blk->b1) {
    return 0;
  }
  blk->n1++;
  return 1;
}

/* Whether the one-row block next continues blk as its next row. */
static int extends_box(dart__pattern_block_t *blk,
                       const dart__pattern_block_t *next)
{
  if (blk->len != next->len || blk->n1 != next->n1 ||
      (next->n1 > 1 && (blk->a1 != next->a1 || blk->b1 != next->b1)))
    return 0;
  if (blk->n2 == 1) {
    blk->a2 = next->a - blk->a;
    blk->b2 = next->b - blk->b;
  } else if (next->a != blk->a + (int64_t)blk->n2 * blk->a2 ||
             next->b != blk->b + (int64_t)blk->n2 * blk->b2) {
    return 0;
  }
  blk->n2++;
  return 1;
}

/* Whether blocks x and y have one shape (the strides that matter: those
 * of more than one run or row). */
static bool same_shape(const dart__pattern_block_t *x,
                       const dart__pattern_block_t *y)
{
  return x->len == y->len && x->n1 == y->n1 && x->n2 == y->n2 &&
         (x->n1 == 1 || (x->a1 == y->a1 && x->b1 == y->b1)) &&
         (x->n2 == 1 || (x->a2 == y->a2 && x->b2 == y->b2));
}

static int cmp_index(const void *x, const void *y)
{
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return (a > b) - (a < b);
}

/* The elements of side b (b_side) or a of the n blocks from blk on, into
 * v; their count. */
static size_t block_elements(const dart__pattern_block_t *blk, size_t n,
                             bool b_side, int64_t *v)
{
  size_t m = 0;
  for (size_t k = 0; k < n; k++) {
    const dart__pattern_block_t *x = &blk[k];
    int64_t start = b_side ? x->b : x->a;
    int64_t s1 = b_side ? x->b1 : x->a1, s2 = b_side ? x->b2 : x->a2;
    for (size_t i2 = 0; i2 < x->n2; i2++)
      for (size_t i1 = 0; i1 < x->n1; i1++)
        for (size_t e = 0; e < x->len; e++)
          v[m++] = start + (int64_t)i2 * s2 + (int64_t)i1 * s1 + (int64_t)e;
  }
  return m;
}

/* Whether the n elements of v hold one twice (v ends up sorted). */
static bool sorted_dups(int64_t *v, size_t n)
{
  qsort(v, n, sizeof *v, cmp_index);
  for (size_t k = 1; k < n; k++)
    if (v[k] == v[k - 1]) return true;
  return false;
}

/* Whether the two blocks from blk on name no element of either side
 * twice, so that copying them together writes what copying them in turn
 * does; false without the memory to tell. */
static bool pair_distinct(const dart__pattern_block_t *blk)
{
  size_t count = 0;
  for (size_t k = 0; k < 2; k++) count += blk[k].len * blk[k].n1 * blk[k].n2;
  int64_t *v = malloc(count * sizeof *v);
  bool distinct = v != NULL;
  for (int side = 0; side < 2 && distinct; side++)
    distinct = !sorted_dups(v, block_elements(blk, 2, side, v));
  free(v);
  return distinct;
}

/* Pairs blocks of single elements of one shape that follow each other
 * (pair): a dimension's two faces of a block of two or three. */
static void pair_blocks(dart__pattern_block_t *blocks, size_t n)
{
  for (size_t k = 0; k + 1 < n; k++)
    if (blocks[k].len == 1 && same_shape(&blocks[k], &blocks[k + 1]) &&
        pair_distinct(&blocks[k]))
      blocks[k++].pair = true;
}

/* Whether every index fits the index form's 32 bits (half the bytes the
 * hot path reads per element). */
static bool fits_index_form(const int64_t *a, const int64_t *b, size_t n)
{
  for (size_t k = 0; k < n; k++)
    if (a[k] < 0 || a[k] > UINT32_MAX ||
        (b && (b[k] < 0 || b[k] > UINT32_MAX)))
      return false;
  return true;
}

static dart_ret_t index_form(const int64_t *a, const int64_t *b, size_t n,
                             dart__pattern_t *p)
{
  p->a_at = malloc(n * sizeof *p->a_at);
  p->b_at = b ? malloc(n * sizeof *p->b_at) : NULL;
  if (p->a_at == NULL || (b && p->b_at == NULL)) {
    dart__types__pattern_free(p);
    return DART_ERR_NOMEM;
  }
  for (size_t k = 0; k < n; k++) {
    p->a_at[k] = (uint32_t)a[k];
    if (b) p->b_at[k] = (uint32_t)b[k];
  }
  return DART_OK;
}

/* The blocks of the count pairs first, first + step, first + 2 * step, ...
 * into blocks (room for count): runs consecutive on both sides, runs at
 * constant strides into rows, rows at constant strides into boxes; their
 * number, and the runs in *runs. */
static size_t find_blocks(const int64_t *a, const int64_t *b, size_t first,
                          size_t step, size_t count,
                          dart__pattern_block_t *blocks, size_t *runs)
{
#define A(j) a[first + (j) * step]
#define B(j) (b ? b[first + (j) * step] : (int64_t)(first + (j) * step))
  size_t nb = 0;
  *runs = 0;
  for (size_t k = 0; k < count;) {
    int64_t ak = A(k), bk = B(k);
    size_t len = 1;
    while (k + len < count && A(k + len) == ak + (int64_t)len &&
           B(k + len) == bk + (int64_t)len)
      len++;
    k += len;
    ++*runs;
    if (nb > 0 && extends_row(&blocks[nb - 1], ak, bk, len)) continue;
    blocks[nb++] = (dart__pattern_block_t){.a = ak, .b = bk, .len = len,
                                           .n1 = 1, .n2 = 1};
  }
#undef A
#undef B
  size_t nbox = 0;
  for (size_t k = 0; k < nb; k++) {
    if (nbox > 0 && extends_box(&blocks[nbox - 1], &blocks[k])) continue;
    blocks[nbox++] = blocks[k];
  }
  return nbox;
}

/* Where the n pairs alternate between two boxes of single elements of one
 * shape (a dimension's two faces in a message, whose rows hold one element
 * of each), the pair of the two; else (or without the memory to tell)
 * NULL. Copies walk a pair in this order, so the elements need not be
 * distinct here. */
static dart__pattern_block_t *interleaved_pair(const int64_t *a,
                                               const int64_t *b, size_t n)
{
  if (n % 2 != 0 || n < 2 * MIN_AVG_BLOCK) return NULL;
  /* room for the second half's blocks after the first's one */
  dart__pattern_block_t *pair = malloc((n / 2 + 1) * sizeof *pair);
  size_t runs;
  if (pair == NULL || find_blocks(a, b, 0, 2, n / 2, pair, &runs) != 1 ||
      find_blocks(a, b, 1, 2, n / 2, pair + 1, &runs) != 1 ||
      pair[0].len != 1 || !same_shape(&pair[0], &pair[1])) {
    free(pair);
    return NULL;
  }
  pair[0].pair = true;
  dart__pattern_block_t *shrunk = realloc(pair, 2 * sizeof *pair);
  return shrunk ? shrunk : pair;
}

dart_ret_t dart__types__pattern_build(const int64_t *a, const int64_t *b,
                                      size_t n, dart__pattern_t *p)
{
  *p = (dart__pattern_t){.nelem = n};
  if (n == 0) return DART_OK;
  /* at most one block per element; shrunk below */
  dart__pattern_block_t *blocks = malloc(n * sizeof *blocks);
  if (blocks == NULL) return DART_ERR_NOMEM;
  size_t runs;
  size_t nbox = find_blocks(a, b, 0, 1, n, blocks, &runs);
  if (n < MIN_AVG_RUN * runs && fits_index_form(a, b, n)) {
    dart_ret_t ret = index_form(a, b, n, p);
    if (ret != DART_OK) {
      free(blocks);
      return ret;
    }
  }
  size_t rows = 0;
  for (size_t k = 0; k < nbox; k++) rows += blocks[k].n2;
  bool lists_only = p->a_at != NULL && n < MIN_AVG_BLOCK * nbox;
  /* a loop per row costs more than an index per element where rows are
   * short, so copies take the lists there */
  bool copy_lists = p->a_at != NULL && n < MIN_AVG_RUN * rows;
  /* the blocks kept, or none, before looking for a pair, which takes
   * memory of its own */
  if (lists_only) {
    free(blocks);
    blocks = NULL;
  } else {
    dart__pattern_block_t *shrunk = realloc(blocks, nbox * sizeof *blocks);
    if (shrunk != NULL) blocks = shrunk;
  }
  dart__pattern_block_t *pair =
      lists_only || copy_lists ? interleaved_pair(a, b, n) : NULL;
  if (pair != NULL) {
    /* the lists keep the pairs' order, which the pair interleaves */
    free(blocks);
    p->blocks = pair;
    p->nblocks = 2;
    p->copy_blocks = true;
    return DART_OK;
  }
  if (lists_only) return DART_OK;
  pair_blocks(blocks, nbox);
  p->blocks = blocks;
  p->nblocks = nbox;
  p->copy_blocks = !copy_lists;
  return DART_OK;
}

void dart__types__pattern_free(dart__pattern_t *p)
{
  free(p->blocks);
  free(p->a_at);
  free(p->b_at);
  *p = (dart__pattern_t){0};
}

void dart__types__pattern_elements(const dart__pattern_t *p, bool b_side,
                                   int64_t *v)
{
  if (p->a_at) {
    const uint32_t *at = b_side ? p->b_at : p->a_at;
    for (size_t k = 0; k < p->nelem; k++) v[k] = at ? at[k] : (int64_t)k;
  } else {
    /* the blocks hold the same pairs where both forms are kept */
    block_elements(p->blocks, p->nblocks, b_side, v);
  }
}

typedef struct {
  int64_t element;
  size_t pair;
} element_pair_t;

static int cmp_element_pair(const void *x, const void *y)
{
  const element_pair_t *a = x, *b = y;
  if (a->element != b->element) return (a->element > b->element) ? 1 : -1;
  return (a->pair > b->pair) - (a->pair < b->pair);
}

dart_ret_t dart__types__pattern_groups(const dart__pattern_t *p, bool b_side,
                                       dart__pattern_groups_t *g)
{
  const size_t n = p->nelem;
  *g = (dart__pattern_groups_t){.ngroups = n};
  if (n < 2) return DART_OK;
  dart_ret_t ret = DART_ERR_NOMEM;
  int64_t *v = malloc(n * sizeof *v);
  element_pair_t *e = malloc(n * sizeof *e);
  size_t *order = NULL, *first = NULL;
  if (v == NULL || e == NULL) goto out;
  dart__types__pattern_elements(p, b_side, v);
  for (size_t k = 0; k < n; k++) e[k] = (element_pair_t){v[k], k};
  qsort(e, n, sizeof *e, cmp_element_pair);
  size_t groups = 1;
  for (size_t k = 1; k < n; k++) groups += e[k].element != e[k - 1].element;
  ret = DART_OK;
  if (groups == n) goto out;
  ret = DART_ERR_NOMEM;
  order = malloc(n * sizeof *order);
  first = malloc((groups + 1) * sizeof *first);
  if (order == NULL || first == NULL) goto out;
  size_t m = 0;
  for (size_t k = 0; k < n; k++) {
    if (k == 0 || e[k].element != e[k - 1].element) first[m++] = k;
    order[k] = e[k].pair;
  }
  first[m] = n;
  *g = (dart__pattern_groups_t){order, first, groups};
  order = NULL;
  first = NULL;
  ret = DART_OK;
out:
  free(first);
  free(order);
  free(e);
  free(v);
  return ret;
}

void dart__types__pattern_groups_free(dart__pattern_groups_t *g)
{
  free(g->order);
  free(g->first);
  *g = (dart__pattern_groups_t){0};
}

/* ---- the index form ---- */

typedef struct {
  char *a, *b;
  size_t es;
  const dart__op_local_t *op;
} run_ctx_t;

/* The index lists walked in one pass: a pack gathers into its packed
 * buffer; the operations (REPLACE too) take their indexed loop. */
static void lists_pack(const dart__pattern_t *p, const run_ctx_t *r)
{
  const uint32_t *at = p->a_at;
  const size_t n = p->nelem, es = r->es;
#define GATHER(T)                                                          \
  for (size_t k = 0; k < n; k++)                                           \
    ((T *)(void *)r->b)[k] = ((const T *)(const void *)r->a)[at[k]];       \
  return
  switch (es) {
  case 1: GATHER(uint8_t);
  case 2: GATHER(uint16_t);
  case 4: GATHER(uint32_t);
  case 8: GATHER(uint64_t);
  default:
    for (size_t k = 0; k < n; k++)
      memcpy(r->b + k * es, r->a + (size_t)at[k] * es, es);
  }
#undef GATHER
}

static void lists_apply(const dart__pattern_t *p, const run_ctx_t *r)
{
  r->op->at(r->b, p->b_at, r->a, p->a_at, p->nelem, r->op->ctx);
}

static void lists_apply_to_b(const dart__pattern_t *p, const run_ctx_t *r)
{
  assert(p->b_at != NULL); /* apply_to_b writes arrays, not packed buffers */
  r->op->at(r->a, p->a_at, r->b, p->b_at, p->nelem, r->op->ctx);
}

/* Which way a walk copies, where the operation is a copy. */
typedef enum { NO_COPY, COPY_TO_B, COPY_TO_A } copy_t;

/* ---- the block form ---- */

/* Runs shorter than this are copied by typed loops, not memcpy. */
#define SHORT_RUN 8

/* The copy of blk from side from (stride f1 and f2, in elements) to side
 * to (t1, t2): typed loops where runs are short, stepping pointers (a
 * column of single elements: 15% faster than multiplying out each
 * offset). */
static void box_copy(const dart__pattern_block_t *blk, char *to, int64_t t1,
                     int64_t t2, const char *from, int64_t f1, int64_t f2,
                     size_t es)
{
  const size_t len = blk->len, n1 = blk->n1, n2 = blk->n2;
#define BOX(T)                                                             \
  do {                                                                     \
    for (size_t i2 = 0; i2 < n2; i2++) {                                   \
      T *d = (T *)(void *)to + (int64_t)i2 * t2;                           \
      const T *s = (const T *)(const void *)from + (int64_t)i2 * f2;       \
      if (len == 1)                                                        \
        for (size_t i1 = 0; i1 < n1; i1++, d += t1, s += f1)               \
          *d = *s;                                                         \
      else                                                                 \
        for (size_t i1 = 0; i1 < n1; i1++, d += t1, s += f1)               \
          for (size_t e = 0; e < len; e++) d[e] = s[e];                    \
    }                                                                      \
    return;                                                                \
  } while (0)
  if (len < SHORT_RUN) switch (es) {
    case 1: BOX(uint8_t);
    case 2: BOX(uint16_t);
    case 4: BOX(uint32_t);
    case 8: BOX(uint64_t);
    default: break;
    }
#undef BOX
  for (size_t i2 = 0; i2 < n2; i2++)
    for (size_t i1 = 0; i1 < n1; i1++)
      memcpy(to + ((int64_t)i2 * t2 + (int64_t)i1 * t1) * (int64_t)es,
             from + ((int64_t)i2 * f2 + (int64_t)i1 * f1) * (int64_t)es,
             len * es);
}

/* The copy of a pair of blocks (pair): element (i2, i1) of both in turn,
 * so that the two elements of one row of the arrays are copied while the
 * row is in the cache, both loads before the stores, which the compiler
 * cannot order itself (one array, in place): 2.5x faster than a block
 * after the other for a 3-D block's x-faces. Pointers step along the
 * rows, the second element at a fixed distance from the first: the same
 * loop with each element's offset multiplied out took twice as long.
 * Side a to side b where to_b, else b to a. */
static void pair_copy(const dart__pattern_block_t *blk, char *a, char *b,
                      bool to_b, size_t es)
{
  const size_t n1 = blk->n1, n2 = blk->n2;
  const int64_t t1 = to_b ? blk->b1 : blk->a1, t2 = to_b ? blk->b2 : blk->a2;
  const int64_t f1 = to_b ? blk->a1 : blk->b1, f2 = to_b ? blk->a2 : blk->b2;
  const int64_t to0 = to_b ? blk[0].b : blk[0].a;
  const int64_t to1 = to_b ? blk[1].b : blk[1].a;
  const int64_t from0 = to_b ? blk[0].a : blk[0].b;
  const int64_t from1 = to_b ? blk[1].a : blk[1].b;
  char *to = to_b ? b : a;
  const char *from = to_b ? a : b;
#define PAIR(T)                                                            \
  do {                                                                     \
    const int64_t dt = to1 - to0, df = from1 - from0;                      \
    for (size_t i2 = 0; i2 < n2; i2++) {                                   \
      T *d = (T *)(void *)to + to0 + (int64_t)i2 * t2;                     \
      const T *s = (const T *)(const void *)from + from0 +                 \
                   (int64_t)i2 * f2;                                       \
      for (size_t i1 = 0; i1 < n1; i1++, d += t1, s += f1) {               \
        T x0 = s[0], x1 = s[df];                                           \
        d[0] = x0;                                                         \
        d[dt] = x1;                                                        \
      }                                                                    \
    }                                                                      \
    return;                                                                \
  } while (0)
  switch (es) {
  case 1: PAIR(uint8_t);
  case 2: PAIR(uint16_t);
  case 4: PAIR(uint32_t);
  case 8: PAIR(uint64_t);
  default: break;
  }
#undef PAIR
  for (size_t i2 = 0; i2 < n2; i2++)
    for (size_t i1 = 0; i1 < n1; i1++) {
      int64_t t = (int64_t)i2 * t2 + (int64_t)i1 * t1;
      int64_t f = (int64_t)i2 * f2 + (int64_t)i1 * f1;
      memcpy(to + (to0 + t) * (int64_t)es, from + (from0 + f) * (int64_t)es,
             es);
      memcpy(to + (to1 + t) * (int64_t)es, from + (from1 + f) * (int64_t)es,
             es);
    }
}

/* Every pair in order: copies block by block where the blocks' rows are
 * long (a pair of blocks together, which writes the same: their elements
 * are distinct), other operations over the index lists where there are
 * lists, else by one call of run per run; inlined with run and lists. */
static inline __attribute__((always_inline)) void walk(
    const dart__pattern_t *p,
    void (*run)(const run_ctx_t *r, int64_t a, int64_t b, size_t len),
    void (*lists)(const dart__pattern_t *p, const run_ctx_t *r), copy_t copy,
    const run_ctx_t *r)
{
  if (p->a_at != NULL && (copy == NO_COPY || !p->copy_blocks)) {
    lists(p, r);
    return;
  }
  const int64_t es = (int64_t)r->es;
  for (size_t k = 0; k < p->nblocks; k++) {
    const dart__pattern_block_t *blk = &p->blocks[k];
    char *a = r->a + blk->a * es, *b = r->b + blk->b * es;
    if (copy != NO_COPY && blk->pair) {
      pair_copy(blk, r->a, r->b, copy == COPY_TO_B, r->es);
      k++;
    } else if (copy == COPY_TO_B) {
      box_copy(blk, b, blk->b1, blk->b2, a, blk->a1, blk->a2, r->es);
    } else if (copy == COPY_TO_A) {
      box_copy(blk, a, blk->a1, blk->a2, b, blk->b1, blk->b2, r->es);
    } else {
      for (size_t i2 = 0; i2 < blk->n2; i2++) {
        int64_t ai = blk->a + (int64_t)i2 * blk->a2;
        int64_t bi = blk->b + (int64_t)i2 * blk->b2;
        for (size_t i1 = 0; i1 < blk->n1; i1++, ai += blk->a1, bi += blk->b1)
          run(r, ai, bi, blk->len);
      }
    }
  }
}

static void run_apply(const run_ctx_t *r, int64_t a, int64_t b, size_t len)
{
  r->op->fn(r->b + b * (int64_t)r->es, r->a + a * (int64_t)r->es, len,
            r->op->ctx);
}

static void run_apply_to_b(const run_ctx_t *r, int64_t a, int64_t b,
                           size_t len)
{
  r->op->fn(r->a + a * (int64_t)r->es, r->b + b * (int64_t)r->es, len,
            r->op->ctx);
}

void dart__types__pattern_pack(const dart__pattern_t *p, const char *a,
                               char *b, size_t es)
{
  assert(p->b_at == NULL);
  run_ctx_t r = {.a = (char *)a, .b = b, .es = es};
  walk(p, NULL, lists_pack, COPY_TO_B, &r);
}

void dart__types__pattern_apply(const dart__pattern_t *p, char *a,
                                const char *b, size_t es,
                                const dart__op_local_t *op)
{
  run_ctx_t r = {.a = a, .b = (char *)b, .es = es, .op = op};
  walk(p, run_apply, lists_apply, op->copies ? COPY_TO_A : NO_COPY, &r);
}

void dart__types__pattern_apply_to_b(const dart__pattern_t *p, const char *a,
                                     char *b, size_t es,
                                     const dart__op_local_t *op)
{
  run_ctx_t r = {.a = (char *)a, .b = b, .es = es, .op = op};
  walk(p, run_apply_to_b, lists_apply_to_b,
       op->copies ? COPY_TO_B : NO_COPY, &r);
}

/* One pair of fetch (a run's elements are distinct, and pairs go in
 * order, so a root that several pairs share sees each operand in turn). */
static void fetch_one(char *a, const char *b, char *c, size_t es,
                      const dart__op_local_t *op)
{
  _Alignas(16) char old[32];
  memcpy(old, a, es);
  op->fn(b, a, 1, op->ctx);
  memcpy(c, old, es);
}

void dart__types__pattern_fetch(const dart__pattern_t *p, char *a,
                                const char *b, char *c, size_t es,
                                const dart__op_local_t *op)
{
  if (p->a_at != NULL) {
    for (size_t k = 0; k < p->nelem; k++) {
      size_t j = p->b_at ? p->b_at[k] : k;
      fetch_one(a + (size_t)p->a_at[k] * es, b + j * es, c + j * es, es, op);
    }
    return;
  }
  for (size_t k = 0; k < p->nblocks; k++) {
    const dart__pattern_block_t *blk = &p->blocks[k];
    for (size_t i2 = 0; i2 < blk->n2; i2++)
      for (size_t i1 = 0; i1 < blk->n1; i1++) {
        int64_t ai = blk->a + (int64_t)i2 * blk->a2 + (int64_t)i1 * blk->a1;
        int64_t bi = blk->b + (int64_t)i2 * blk->b2 + (int64_t)i1 * blk->b1;
        for (size_t e = 0; e < blk->len; e++)
          fetch_one(a + (ai + (int64_t)e) * (int64_t)es,
                    b + (bi + (int64_t)e) * (int64_t)es,
                    c + (bi + (int64_t)e) * (int64_t)es, es, op);
      }
  }
}
