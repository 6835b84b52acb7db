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
 * right boundary. That is the ghosted block of dart_plan_create_halo for
 * an n x n grid over units x 1 units with a halo of 1 (dart_plan.h):
 * stencil_rows is its block distribution, and the boundary columns lie
 * beyond the grid's edge, so they are no leaves.
 */
#ifndef DART_EXAMPLES_STENCIL_H_
#define DART_EXAMPLES_STENCIL_H_

#include <dart/dart.h>
#include <dart/dart_plan.h>
#include <dart/dart_signal.h>
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
 *
 * The signal version (stencil_dart_iterate_signal) makes the same puts
 * with dart_put_signal, each of which then sets one of the neighbour's two
 * signal words ("from above", "from below"; a second allocation) to the
 * iteration number; a unit then waits for its own words of the sides that
 * have a neighbour: only neighbours wait for each other, nobody flushes
 * everything or meets everyone.
 *
 * The plan version (stencil_dart_alloc_plan, stencil_dart_iterate_plan)
 * needs no global memory: its buffers are malloc'd, and the plan of
 * dart_plan_create_halo moves the edge rows (its roots) into the
 * neighbours' halo lines (its leaves) with a bcast. As with signals, only
 * neighbours wait for each other; and as the plan writes this unit's
 * buffers only within this unit's own calls, no neighbour can run into a
 * buffer still being read.
 */
typedef struct {
  int n, me, units, first, rows;
  size_t buf;      /* floats per buffer: (largest block + 2) lines; the
                      plan version: (own block + 2) lines */
  dart_gptr_t g;   /* the allocation (unit 0, offset 0) */
  dart_gptr_t sig; /* the signal words, 2 uint64_t per unit (unit 0) */
  float *local;    /* this unit's part: buffer 0, then buffer 1; the plan
                      version: malloc'd, and buffer 2 its bcast's roots */
  int cur;         /* the buffer holding the current iterate */
  uint64_t iter;   /* signal version: iterations so far, across resets */
  dart_plan_t plan; /* plan version: the halo plan; NULL in the others */
} stencil_dart_t;

/* A unit's signal words: set by the unit above (its last row came into
 * line 0) and by the unit below (its first row came into line rows + 1). */
enum { STENCIL_FROM_ABOVE, STENCIL_FROM_BELOW };

static inline dart_gptr_t stencil_dart_signal(const stencil_dart_t *s,
                                              int unit, int word)
{
  dart_gptr_t gp = s->sig;
  gp.unitid = unit;
  gp.addr_or_offs.offset += (uint64_t)word * sizeof(uint64_t);
  return gp;
}

static inline dart_ret_t stencil_dart_alloc(stencil_dart_t *s, int n, int me,
                                            int units)
{
  int f, maxrows;
  s->n = n;
  s->me = me;
  s->units = units;
  s->iter = 0;
  s->plan = NULL;
  stencil_rows(n, me, units, &s->first, &s->rows);
  stencil_rows(n, 0, units, &f, &maxrows); /* unit 0 has the most rows */
  s->buf = (size_t)(maxrows + 2) * stencil_ld(n);
  dart_ret_t ret = dart_team_memalloc_aligned(DART_TEAM_ALL, 2 * s->buf,
                                              DART_TYPE_FLOAT, &s->g);
  if (ret != DART_OK) return ret;
  ret = dart_team_memalloc_aligned(DART_TEAM_ALL, 2, DART_TYPE_ULONGLONG,
                                   &s->sig);
  if (ret != DART_OK) {
    dart_team_memfree(s->g);
    return ret;
  }
  /* Signal words are atomics: 0 by an atomic update, never a store. The
   * barrier of stencil_dart_reset, due before the first iteration, keeps
   * the neighbours' first signals after it. */
  for (int w = STENCIL_FROM_ABOVE; w <= STENCIL_FROM_BELOW; w++)
    if (ret == DART_OK)
      ret = dart_signal(stencil_dart_signal(s, me, w), 0, DART_SIGNAL_SET);
  dart_gptr_t mine = s->g;
  mine.unitid = me; /* in DART_TEAM_ALL the team id is the global id */
  if (ret == DART_OK) ret = dart_gptr_getaddr(mine, (void **)&s->local);
  return ret;
}

/* The plan version's set-up (collective): its three buffers and the plan
 * of an n x n grid over units x 1 units, halo 1, not periodic. */
static inline dart_ret_t stencil_dart_alloc_plan(stencil_dart_t *s, int n,
                                                 int me, int units)
{
  s->n = n;
  s->me = me;
  s->units = units;
  s->iter = 0;
  s->g = s->sig = DART_GPTR_NULL;
  stencil_rows(n, me, units, &s->first, &s->rows);
  s->buf = (size_t)(s->rows + 2) * stencil_ld(n);
  s->local = malloc(3 * s->buf * sizeof *s->local);
  if (s->local == NULL) return DART_ERR_NOMEM;
  size_t extent[2] = {(size_t)n, (size_t)n};
  int grid[2] = {units, 1};
  dart_ret_t ret = dart_plan_create_halo(DART_TEAM_ALL, 2, extent, grid, 1, 0,
                                         DART_TYPE_FLOAT, &s->plan);
  if (ret != DART_OK) free(s->local);
  return ret;
}

/* Start state in both buffers; a barrier, so that no neighbour's put of
 * the first iteration lands before this unit has cleared its halos. The
 * signal words keep their values: s->iter goes on from there. */
static inline dart_ret_t stencil_dart_reset(stencil_dart_t *s)
{
  stencil_init(s->local, s->n, s->rows, s->first);
  stencil_init(s->local + s->buf, s->n, s->rows, s->first);
  s->cur = 0;
  return dart_barrier(DART_TEAM_ALL);
}

/* Where this unit's edge rows of the new buffer go: the offsets of the
 * bottom halo above (for the first row) and of the top halo below (for
 * the last row) in the neighbours' parts. */
static inline void stencil_dart_halos(const stencil_dart_t *s,
                                      uint64_t *above, uint64_t *below)
{
  size_t ld = stencil_ld(s->n);
  /* the neighbours' new buffer starts at the same offset in their parts */
  uint64_t base = s->g.addr_or_offs.offset +
                  (uint64_t)(1 - s->cur) * s->buf * sizeof(float);
  int f, up_rows = 0;
  if (s->me > 0) stencil_rows(s->n, s->me - 1, s->units, &f, &up_rows);
  *above = base + ((size_t)(up_rows + 1) * ld + 1) * sizeof(float);
  *below = base + sizeof(float);
}

/* One iteration: sweep, then the halo exchange described above. */
static inline dart_ret_t stencil_dart_iterate(stencil_dart_t *s)
{
  size_t ld = stencil_ld(s->n);
  float *old = s->local + (size_t)s->cur * s->buf;
  float *nw = s->local + (size_t)(1 - s->cur) * s->buf;
  stencil_sweep(old, nw, s->n, s->rows);
  uint64_t above, below;
  stencil_dart_halos(s, &above, &below);
  dart_gptr_t gp = s->g;
  dart_ret_t ret = DART_OK;
  if (s->me > 0) { /* first row -> bottom halo (line rows + 1) above */
    gp.unitid = s->me - 1;
    gp.addr_or_offs.offset = above;
    ret = dart_put(gp, nw + ld + 1, (size_t)s->n, DART_TYPE_FLOAT,
                   DART_TYPE_FLOAT);
  }
  if (ret == DART_OK && s->me < s->units - 1) { /* last row -> top halo below */
    gp.unitid = s->me + 1;
    gp.addr_or_offs.offset = below;
    ret = dart_put(gp, nw + (size_t)s->rows * ld + 1, (size_t)s->n,
                   DART_TYPE_FLOAT, DART_TYPE_FLOAT);
  }
  if (ret == DART_OK) ret = dart_flush_all(s->g);
  if (ret == DART_OK) ret = dart_barrier(DART_TEAM_ALL);
  s->cur = 1 - s->cur;
  return ret;
}

/*
 * One iteration of the signal version: sweep, put the edge rows with
 * signals (value: the iteration number), wait for this unit's own.
 *
 * Two buffers still suffice. In iteration k a unit reads buffer (k-1) % 2,
 * writes the interior of buffer k % 2 (a sweep never writes halo lines)
 * and gets its neighbours' rows of k in the halos of buffer k % 2. A
 * neighbour ends its iteration k waiting for this unit's rows of k, so it
 * runs at most one iteration ahead. Its puts of k + 1 go into the halos of
 * buffer (k+1) % 2: after this unit's sweep k, the last to read them (the
 * rows of k follow it), and during this unit's sweep k + 1 at the latest,
 * which writes that buffer's interior only; sweep k + 2 reads them after
 * the wait of k + 1. The next puts into buffer k % 2's halos (k + 2) wait
 * in turn for this unit's rows of k + 1, sent after sweep k + 1 read them.
 * A word may show k + 1 while the unit waits for k, hence >=.
 *
 * The words are never reset: s->iter goes on across resets, so no wait is
 * met by a signal of an earlier run. When a run ends, every put into this
 * unit's part has been signalled and waited for, so stencil_dart_reset's
 * stores race with none, and its barrier keeps the next run's puts after
 * them.
 */
static inline dart_ret_t stencil_dart_iterate_signal(stencil_dart_t *s)
{
  size_t ld = stencil_ld(s->n);
  float *old = s->local + (size_t)s->cur * s->buf;
  float *nw = s->local + (size_t)(1 - s->cur) * s->buf;
  stencil_sweep(old, nw, s->n, s->rows);
  uint64_t it = ++s->iter, above, below;
  stencil_dart_halos(s, &above, &below);
  dart_gptr_t gp = s->g, mine[2];
  size_t waits = 0; /* a single unit waits for nothing */
  dart_ret_t ret = DART_OK;
  if (s->me > 0) { /* first row -> bottom halo above, its "from below" */
    gp.unitid = s->me - 1;
    gp.addr_or_offs.offset = above;
    ret = dart_put_signal(
        gp, nw + ld + 1, (size_t)s->n, DART_TYPE_FLOAT, DART_TYPE_FLOAT,
        stencil_dart_signal(s, s->me - 1, STENCIL_FROM_BELOW), it,
        DART_SIGNAL_SET);
    mine[waits++] = stencil_dart_signal(s, s->me, STENCIL_FROM_ABOVE);
  }
  if (ret == DART_OK && s->me < s->units - 1) { /* last row -> top below */
    gp.unitid = s->me + 1;
    gp.addr_or_offs.offset = below;
    ret = dart_put_signal(
        gp, nw + (size_t)s->rows * ld + 1, (size_t)s->n, DART_TYPE_FLOAT,
        DART_TYPE_FLOAT, stencil_dart_signal(s, s->me + 1, STENCIL_FROM_ABOVE),
        it, DART_SIGNAL_SET);
    mine[waits++] = stencil_dart_signal(s, s->me, STENCIL_FROM_BELOW);
  }
  if (ret == DART_OK && waits > 0)
    ret = dart_signal_wait_until_all(mine, waits, DART_CMP_GE, it);
  s->cur = 1 - s->cur;
  return ret;
}

/*
 * One iteration of the plan version. The edge rows are swept first and
 * their copy in buffer 2 goes out as the bcast's rootdata while the
 * interior rows are swept: the plan wants its roots untouched until the
 * end, and the interior sweep writes the new buffer. The end brings the
 * neighbours' edge rows into this unit's halo lines of the new buffer.
 */
static inline dart_ret_t stencil_dart_iterate_plan(stencil_dart_t *s)
{
  size_t ld = stencil_ld(s->n);
  float *old = s->local + (size_t)s->cur * s->buf;
  float *nw = s->local + (size_t)(1 - s->cur) * s->buf;
  float *roots = s->local + 2 * s->buf;
  /* rows 1 and rows (the same row twice when rows is 1): a sweep of one
   * row from the line above it */
  size_t last = (size_t)(s->rows - 1) * ld;
  stencil_sweep(old, nw, s->n, 1);
  stencil_sweep(old + last, nw + last, s->n, 1);
  memcpy(roots + ld, nw + ld, ld * sizeof *nw);
  memcpy(roots + last + ld, nw + last + ld, ld * sizeof *nw);
  dart_ret_t ret =
      dart_plan_bcast_begin(s->plan, roots, nw, DART_OP_REPLACE);
  if (s->rows > 2) stencil_sweep(old + ld, nw + ld, s->n, s->rows - 2);
  if (ret == DART_OK)
    ret = dart_plan_bcast_end(s->plan, roots, nw, DART_OP_REPLACE);
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
  if (s->plan != NULL) {
    dart_ret_t ret = dart_plan_destroy(&s->plan);
    free(s->local);
    return ret;
  }
  dart_ret_t ret = dart_team_memfree(s->sig);
  dart_ret_t ret2 = dart_team_memfree(s->g);
  return ret != DART_OK ? ret : ret2;
}

#endif
