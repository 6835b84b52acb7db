/*
 * The five-point Jacobi stencil shared by the stencil example and the
 * stencil benchmark, so that every variant computes exactly the same floats
 * and only the halo exchange differs.
 *
 * The grid: n x n interior points plus a fixed boundary: 1.0 above the
 * grid, 0.5 left of it, 0 right and below. The left boundary makes every
 * row change from the first iteration on, so that every halo exchange
 * carries data (with the top one alone, rows far from the top stay 0 for
 * many iterations and a broken exchange goes unnoticed).
 *
 * Units own block rows; each keeps (rows + 2) lines of (n + 2) floats:
 * line 0 and line rows + 1 are the halos (a neighbour's edge row, or the
 * fixed boundary at the ends), columns 0 and n + 1 the fixed left and
 * right boundary.
 */
#ifndef DART_EXAMPLES_STENCIL_H_
#define DART_EXAMPLES_STENCIL_H_

#include <dart/dart.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Unit u's rows [*first, *first + *rows) of n: the first n % units units
 * take one row more, so no unit has more than one row above another. */
static inline void stencil_rows(int n, int u, int units, int *first,
                                int *rows)
{
  int q = n / units, r = n % units;
  *first = u * q + (u < r ? u : r);
  *rows = q + (u < r ? 1 : 0);
}

/* Floats in one line of a block (interior plus the two boundary columns). */
static inline size_t stencil_ld(int n) { return (size_t)n + 2; }

/* The start state of a block: the interior 0, the left boundary 0.5 and,
 * on the unit that owns row 0, the top boundary. Both buffers of a run get
 * it, so the fixed boundary is in place whichever buffer is current. */
static inline void stencil_init(float *b, int n, int rows, int first)
{
  size_t ld = stencil_ld(n);
  memset(b, 0, (size_t)(rows + 2) * ld * sizeof *b);
  for (int i = 0; i < rows + 2; i++) b[(size_t)i * ld] = 0.5f;
  if (first == 0)
    for (size_t j = 0; j < ld; j++) b[j] = 1.0f;
}

/* One Jacobi sweep of a block: the interior of nw from old (whose halos
 * must be current). The same expression everywhere keeps the serial and
 * the distributed results bitwise equal. */
static inline void stencil_sweep(const float *restrict old,
                                 float *restrict nw, int n, int rows)
{
  size_t ld = stencil_ld(n);
  for (int i = 1; i <= rows; i++) {
    const float *up = old + (size_t)(i - 1) * ld, *mid = up + ld,
                *down = mid + ld;
    float *out = nw + (size_t)i * ld;
    for (int j = 1; j <= n; j++)
      out[j] = 0.25f * (up[j] + down[j] + mid[j - 1] + mid[j + 1]);
  }
}

/* This block's part of the residual (the sum of the squared updates of
 * one iteration over the grid): the sum of (a - b)^2 over the owned rows,
 * in double so that the total hardly depends on the order of the parts. */
static inline double stencil_diff2(const float *a, const float *b, int n,
                                   int rows)
{
  size_t ld = stencil_ld(n);
  double s = 0;
  for (int i = 1; i <= rows; i++)
    for (int j = 1; j <= n; j++) {
      double d = (double)a[(size_t)i * ld + j] - (double)b[(size_t)i * ld + j];
      s += d * d;
    }
  return s;
}

/* The reference: iters sweeps of the whole grid as one block. Returns the
 * last iterate (free it) and its diff2 in *diff2, or NULL without memory. */
static inline float *stencil_serial(int n, int iters, double *diff2)
{
  size_t elems = (size_t)(n + 2) * stencil_ld(n);
  float *a = malloc(elems * sizeof *a), *b = malloc(elems * sizeof *b);
  if (!a || !b) {
    free(a);
    free(b);
    return NULL;
  }
  stencil_init(a, n, n, 0);
  stencil_init(b, n, n, 0);
  for (int it = 0; it < iters; it++) {
    stencil_sweep(a, b, n, n);
    float *t = a;
    a = b;
    b = t;
  }
  *diff2 = stencil_diff2(a, b, n, n);
  free(b);
  return a;
}

/*
 * The DART version. Both buffers lie in one collective allocation, each
 * unit's part sized for the largest block so that every part has the same
 * layout: buffer k starts at k * buf floats. A sweep writes the new buffer;
 * then each unit puts its first and last new row straight into its
 * neighbours' halo lines of their new buffer, completes the puts with
 * dart_flush_all and meets them in dart_barrier, after which the halos are
 * complete (the barrier orders the puts' writes before the next sweep) and
 * no unit still reads the old buffer that the next exchange overwrites.
 */
typedef struct {
  int n, me, units, first, rows;
  size_t buf;      /* floats per buffer: (largest block + 2) lines */
  dart_gptr_t g;   /* the allocation (unit 0, offset 0) */
  float *local;    /* this unit's part: buffer 0, then buffer 1 */
  int cur;         /* the buffer holding the current iterate */
} stencil_dart_t;

static inline dart_ret_t stencil_dart_alloc(stencil_dart_t *s, int n, int me,
                                            int units)
{
  int f, maxrows;
  s->n = n;
  s->me = me;
  s->units = units;
  stencil_rows(n, me, units, &s->first, &s->rows);
  stencil_rows(n, 0, units, &f, &maxrows); /* unit 0 has the most rows */
  s->buf = (size_t)(maxrows + 2) * stencil_ld(n);
  dart_ret_t ret = dart_team_memalloc_aligned(DART_TEAM_ALL, 2 * s->buf,
                                              DART_TYPE_FLOAT, &s->g);
  if (ret != DART_OK) return ret;
  dart_gptr_t mine = s->g;
  mine.unitid = me; /* in DART_TEAM_ALL the team id is the global id */
  return dart_gptr_getaddr(mine, (void **)&s->local);
}

/* Start state in both buffers; a barrier, so that no neighbour's put of
 * the first iteration lands before this unit has cleared its halos. */
static inline dart_ret_t stencil_dart_reset(stencil_dart_t *s)
{
  stencil_init(s->local, s->n, s->rows, s->first);
  stencil_init(s->local + s->buf, s->n, s->rows, s->first);
  s->cur = 0;
  return dart_barrier(DART_TEAM_ALL);
}

/* One iteration: sweep, then the halo exchange described above. */
static inline dart_ret_t stencil_dart_iterate(stencil_dart_t *s)
{
  size_t ld = stencil_ld(s->n);
  float *old = s->local + (size_t)s->cur * s->buf;
  float *nw = s->local + (size_t)(1 - s->cur) * s->buf;
  stencil_sweep(old, nw, s->n, s->rows);
  /* the neighbours' new buffer starts at the same offset in their parts */
  uint64_t base = (uint64_t)(1 - s->cur) * s->buf * sizeof(float);
  dart_gptr_t gp = s->g;
  dart_ret_t ret = DART_OK;
  if (s->me > 0) { /* first row -> bottom halo (line rows + 1) above */
    int f, up_rows;
    stencil_rows(s->n, s->me - 1, s->units, &f, &up_rows);
    gp.unitid = s->me - 1;
    gp.addr_or_offs.offset =
        base + ((size_t)(up_rows + 1) * ld + 1) * sizeof(float);
    ret = dart_put(gp, nw + ld + 1, (size_t)s->n, DART_TYPE_FLOAT,
                   DART_TYPE_FLOAT);
  }
  if (ret == DART_OK && s->me < s->units - 1) { /* last row -> top halo below */
    gp.unitid = s->me + 1;
    gp.addr_or_offs.offset = base + sizeof(float);
    ret = dart_put(gp, nw + (size_t)s->rows * ld + 1, (size_t)s->n,
                   DART_TYPE_FLOAT, DART_TYPE_FLOAT);
  }
  if (ret == DART_OK) ret = dart_flush_all(s->g);
  if (ret == DART_OK) ret = dart_barrier(DART_TEAM_ALL);
  s->cur = 1 - s->cur;
  return ret;
}

/* The residual of the last iteration over the whole grid, on every unit. */
static inline dart_ret_t stencil_dart_residual(const stencil_dart_t *s,
                                               double *residual2)
{
  double mine = stencil_diff2(s->local, s->local + s->buf, s->n, s->rows);
  return dart_allreduce(&mine, residual2, 1, DART_TYPE_DOUBLE, DART_OP_SUM,
                        DART_TEAM_ALL);
}

/* The current iterate of this unit's block (line 0 is the top halo). */
static inline const float *stencil_dart_block(const stencil_dart_t *s)
{
  return s->local + (size_t)s->cur * s->buf;
}

static inline dart_ret_t stencil_dart_free(stencil_dart_t *s)
{
  return dart_team_memfree(s->g);
}

#endif
