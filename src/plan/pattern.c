#include "plan/pattern.h"

#include <stdlib.h>

/* Whether run (a, b, len) continues blk as its next run in a row. */
static int extends_row(dart__plan_block_t *blk, int64_t a, int64_t b,
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
static int extends_box(dart__plan_block_t *blk, const dart__plan_block_t *next)
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

dart_ret_t dart__plan__pattern_build(const int64_t *a, const int64_t *b,
                                     size_t n, dart__plan_pattern_t *p)
{
  p->blocks = NULL;
  p->nblocks = 0;
  p->nelem = n;
  if (n == 0) return DART_OK;
  /* at most one block per element; shrunk below */
  dart__plan_block_t *blocks = malloc(n * sizeof *blocks);
  if (blocks == NULL) return DART_ERR_NOMEM;
  size_t nb = 0;
  /* rows: runs at constant strides */
  for (size_t k = 0; k < n;) {
    int64_t ak = a[k], bk = b ? b[k] : (int64_t)k;
    size_t len = 1;
    while (k + len < n && a[k + len] == ak + (int64_t)len &&
           (b ? b[k + len] : (int64_t)(k + len)) == bk + (int64_t)len)
      len++;
    k += len;
    if (nb > 0 && extends_row(&blocks[nb - 1], ak, bk, len)) continue;
    blocks[nb++] = (dart__plan_block_t){.a = ak, .b = bk, .len = len,
                                        .n1 = 1, .n2 = 1};
  }
  /* boxes: rows at constant strides */
  size_t nbox = 0;
  for (size_t k = 0; k < nb; k++) {
    if (nbox > 0 && extends_box(&blocks[nbox - 1], &blocks[k])) continue;
    blocks[nbox++] = blocks[k];
  }
  dart__plan_block_t *shrunk = realloc(blocks, nbox * sizeof *blocks);
  p->blocks = shrunk ? shrunk : blocks;
  p->nblocks = nbox;
  return DART_OK;
}

void dart__plan__pattern_free(dart__plan_pattern_t *p)
{
  free(p->blocks);
  p->blocks = NULL;
  p->nblocks = 0;
  p->nelem = 0;
}
