/*
 * Communication plans (dart_plan.h) against a serial model:
 * - random star forests (seeded; every unit generates the whole graph, so
 *   each can predict its own results), with up to three leaves on one
 *   root from any units, leaves at scattered places of the leaf array:
 *   bcast, reduce and fetch-and-op with every operation on every basic
 *   type, a user operation that does not commute (which checks the
 *   documented order of a root's contributions), leaves listed twice;
 * - halos in 1, 2 and 3 dimensions, periodic or not, halo widths 1 and 2
 *   (wider than some blocks): bcast in place and reduce;
 * - two boxes of single leaves of one shape, copied together, and the
 *   same with roots in both boxes (not together) under REPLACE, every
 *   type; both again with the boxes' leaves alternating, on another
 *   unit's roots (copied together, in that order);
 * - roots in global memory (every fourth round, and the halos' second
 *   bcast), which node peers read in place;
 * - one plan reused DART_TEST_ITERS (default 1000) times with new data
 *   (a smaller DART_TEST_ITERS also leaves out the second random graph);
 * - bad input: an error, one log line naming the function, nothing
 *   written.
 * With --device every operation the device applies runs on device buffers
 * (DART_MEMKIND_CUDA, or emulated devices: DART_GPU_EMULATE), and the
 * others must be refused there; skipped without a device.
 */
#define _GNU_SOURCE
#include <dart/dart.h>
#include <dart/dart_memkind.h>
#include <dart/dart_plan.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dart_test.h"
#include "dart_test_capture.h"

static int me, units;
static int on_device; /* --device */

/* ---- buffers on the device ---- */

/* A device copy of bytes at host, or host itself on the host. */
static void *buf_in(void *host, size_t bytes)
{
  if (!on_device) return host;
  void *dev = NULL;
  CHECK_OK(dart_memkind_alloc(bytes, DART_MEMKIND_CUDA, &dev));
  CHECK_OK(dart_memkind_copy(dev, host, bytes));
  return dev;
}

/* The device copy back into host, and freed. */
static void buf_out(void *host, void *buf, size_t bytes)
{
  if (buf == host) return;
  CHECK_OK(dart_memkind_copy(host, buf, bytes));
  CHECK_OK(dart_memkind_free(buf, DART_MEMKIND_CUDA));
}

/* A copy of bytes at host in this unit's part of global memory of the
 * team (collective), whose node peers read plans' roots in place. */
static void *shared_in(void *host, size_t bytes, dart_gptr_t *g)
{
  void *at = NULL;
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, bytes, DART_TYPE_BYTE,
                                      g));
  g->unitid = me;
  CHECK_OK(dart_gptr_getaddr(*g, &at));
  memcpy(at, host, bytes);
  return at;
}

/* The copy back into host (unless NULL), and freed (collective). */
static void shared_out(void *host, void *at, size_t bytes, dart_gptr_t g)
{
  if (host) memcpy(host, at, bytes);
  CHECK_OK(dart_team_memfree(g));
}

/* Whether the device applies op to elements of t (else the plan refuses
 * device buffers). */
static int device_applies(dart_operation_t op, dart_datatype_t t);

static uint64_t mix(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
  return dart_test_mix64(a ^ dart_test_mix64(b ^ dart_test_mix64(
                                 c ^ dart_test_mix64(d))));
}

/* ---- typed access ---- */

static size_t type_size(dart_datatype_t t)
{
  static const size_t size[DART_TYPE_LAST] = {
      0, sizeof(signed char), sizeof(short), sizeof(int), sizeof(unsigned),
      sizeof(long), sizeof(unsigned long), sizeof(long long),
      sizeof(unsigned long long), sizeof(float), sizeof(double),
      sizeof(long double)};
  return size[t];
}

static int is_floating(dart_datatype_t t)
{
  return t == DART_TYPE_FLOAT || t == DART_TYPE_DOUBLE ||
         t == DART_TYPE_LONG_DOUBLE;
}

#define TYPE_SWITCH(t, DO)                                                 \
  switch (t) {                                                             \
  case DART_TYPE_BYTE: DO(signed char); break;                             \
  case DART_TYPE_SHORT: DO(short); break;                                  \
  case DART_TYPE_INT: DO(int); break;                                      \
  case DART_TYPE_UINT: DO(unsigned); break;                                \
  case DART_TYPE_LONG: DO(long); break;                                    \
  case DART_TYPE_ULONG: DO(unsigned long); break;                          \
  case DART_TYPE_LONGLONG: DO(long long); break;                           \
  case DART_TYPE_ULONGLONG: DO(unsigned long long); break;                 \
  case DART_TYPE_FLOAT: DO(float); break;                                  \
  case DART_TYPE_DOUBLE: DO(double); break;                                \
  default: DO(long double); break;                                         \
  }

static long long get(dart_datatype_t t, const void *buf, size_t i)
{
  long long v = 0;
#define GET(c) v = (long long)((const c *)buf)[i]
  TYPE_SWITCH(t, GET)
#undef GET
  return v;
}

static void set(dart_datatype_t t, void *buf, size_t i, long long v)
{
#define SET(c) ((c *)buf)[i] = (c)v
  TYPE_SWITCH(t, SET)
#undef SET
}

/* The user operation: inout = 3 * inout + in (does not commute). */
static void user_fn(const void *in, void *inout, size_t n, void *data)
{
  (void)data;
  const long *a = in;
  long *b = inout;
  for (size_t i = 0; i < n; i++) b[i] = 3 * b[i] + a[i];
}
static dart_operation_t user_op;

/* The model of every operation (values stay small: exact in every type). */
static long long model(dart_operation_t op, long long a, long long b)
{
  switch (op) {
  case DART_OP_MIN: return b < a ? b : a;
  case DART_OP_MAX: return b > a ? b : a;
  case DART_OP_SUM: return a + b;
  case DART_OP_PROD: return a * b;
  case DART_OP_BAND: return a & b;
  case DART_OP_LAND: return a && b;
  case DART_OP_BOR: return a | b;
  case DART_OP_LOR: return a || b;
  case DART_OP_BXOR: return a ^ b;
  case DART_OP_LXOR: return !a != !b;
  case DART_OP_REPLACE: return b;
  case DART_OP_NO_OP: return a;
  default: return 3 * a + b; /* user_op */
  }
}

static const dart_operation_t int_ops[] = {
    DART_OP_MIN, DART_OP_MAX, DART_OP_SUM, DART_OP_PROD, DART_OP_BAND,
    DART_OP_LAND, DART_OP_BOR, DART_OP_LOR, DART_OP_BXOR, DART_OP_LXOR,
    DART_OP_REPLACE};
static const dart_operation_t float_ops[] = {
    DART_OP_MIN, DART_OP_MAX, DART_OP_SUM, DART_OP_PROD, DART_OP_REPLACE};

static int device_applies(dart_operation_t op, dart_datatype_t t)
{
  return op == DART_OP_REPLACE ||
         (op != user_op && t != DART_TYPE_LONG_DOUBLE);
}

/* ---- random graphs ---- */

typedef struct {
  size_t *nroots, *nleaves, *extent; /* extent: of the leaf array */
  size_t **ilocal;
  dart_plan_root_t **iremote;
  int dups; /* leaves listed twice */
} graph_t;

/* Every unit's arrays of g, empty. */
static void graph_alloc(graph_t *g, int dups)
{
  g->dups = dups;
  g->nroots = calloc(units, sizeof *g->nroots);
  g->nleaves = calloc(units, sizeof *g->nleaves);
  g->extent = calloc(units, sizeof *g->extent);
  g->ilocal = calloc(units, sizeof *g->ilocal);
  g->iremote = calloc(units, sizeof *g->iremote);
}

/* The whole graph (every unit's part), from seed: each root gets 0 to 3
 * leaves on random units; each unit's leaves lie at a random permutation
 * of places with gaps (or, with dups, at places drawn with repeats). */
static void graph_make(graph_t *g, uint64_t seed, int dups)
{
  int n = units;
  graph_alloc(g, dups);
  for (int u = 0; u < n; u++)
    g->nroots[u] = (u == 1 ? 0 : 5) + mix(seed, u, 0, 1) % 40;
  for (int pass = 0; pass < 2; pass++) {
    size_t *fill = calloc(n, sizeof *fill);
    for (int u = 0; u < n; u++)
      for (size_t i = 0; i < g->nroots[u]; i++)
        for (uint64_t j = 0, c = mix(seed, u, i, 2) % 4; j < c; j++) {
          int v = (int)(mix(seed, u, i, 3 + j) % (uint64_t)n);
          if (pass == 1)
            g->iremote[v][fill[v]] = (dart_plan_root_t){{u}, i};
          fill[v]++;
        }
    if (pass == 0) {
      for (int v = 0; v < n; v++) {
        g->nleaves[v] = fill[v];
        g->iremote[v] = calloc(fill[v] + 1, sizeof **g->iremote);
        g->ilocal[v] = calloc(fill[v] + 1, sizeof **g->ilocal);
      }
    }
    free(fill);
  }
  for (int v = 0; v < n; v++) {
    size_t nl = g->nleaves[v], *il = g->ilocal[v];
    for (size_t k = 0; k < nl; k++) il[k] = k;
    for (size_t k = nl; k > 1; k--) { /* Fisher-Yates */
      size_t r = mix(seed, v, k, 4) % k, t = il[k - 1];
      il[k - 1] = il[r];
      il[r] = t;
    }
    size_t ext = 0;
    for (size_t k = 0; k < nl; k++) {
      il[k] = dups ? mix(seed, v, k, 5) % (nl / 2 + 1)
                   : 2 * il[k] + mix(seed, v, k, 6) % 2;
      if (il[k] + 1 > ext) ext = il[k] + 1;
    }
    g->extent[v] = ext + 1;
  }
}

static void graph_free(graph_t *g)
{
  for (int u = 0; u < units; u++) {
    free(g->ilocal[u]);
    free(g->iremote[u]);
  }
  free(g->nroots);
  free(g->nleaves);
  free(g->extent);
  free(g->ilocal);
  free(g->iremote);
}

/* Data values: small, nonzero, depending on the round. */
static long long root_value(int u, size_t i, int round)
{
  return 1 + (long long)(mix(u, i, round, 7) % 3);
}
static long long leaf_value(int u, size_t at, int round)
{
  return 1 + (long long)(mix(u, at, round, 8) % 3);
}

/* Every unit's roots after a reduce or fetch (fetch: *update gets this
 * unit's leafupdate, by place): contributions by unit, then leaf. */
static long long **model_roots(const graph_t *g, dart_operation_t op,
                               int round, long long *update)
{
  long long **roots = calloc(units, sizeof *roots);
  for (int u = 0; u < units; u++) {
    roots[u] = calloc(g->nroots[u] + 1, sizeof **roots);
    for (size_t i = 0; i < g->nroots[u]; i++)
      roots[u][i] = root_value(u, i, round);
  }
  for (int v = 0; v < units; v++)
    for (size_t k = 0; k < g->nleaves[v]; k++) {
      dart_plan_root_t r = g->iremote[v][k];
      long long *root = &roots[r.unit.id][r.index];
      if (v == me && update) update[g->ilocal[v][k]] = *root;
      *root = model(op, *root, leaf_value(v, g->ilocal[v][k], round));
    }
  return roots;
}

static void model_free(long long **roots)
{
  for (int u = 0; u < units; u++) free(roots[u]);
  free(roots);
}

typedef enum { BCAST, REDUCE, FETCH } kind_t;
static const char *kind_names[] = {"bcast", "reduce", "fetch"};

/* One operation on the graph's plan, checked against the model. */
static void run_op(const graph_t *g, dart_plan_t plan, dart_datatype_t t,
                   kind_t kind, dart_operation_t op, int round)
{
  size_t es = type_size(t), nr = g->nroots[me], ext = g->extent[me];
  char *roots = malloc((nr + 1) * es), *leaves = malloc(ext * es),
       *update = malloc(ext * es);
  for (size_t i = 0; i < nr; i++) set(t, roots, i, root_value(me, i, round));
  for (size_t i = 0; i < ext; i++) {
    set(t, leaves, i, leaf_value(me, i, round));
    set(t, update, i, 99);
  }
  long long *want_update = calloc(ext, sizeof *want_update);
  for (size_t i = 0; i < ext; i++) want_update[i] = 99;
  int saved = on_device;
  if (on_device && !device_applies(op, t)) {
    /* refused on device buffers; then on the host */
    void *dr = buf_in(roots, (nr + 1) * es), *dl = buf_in(leaves, ext * es);
    if (kind == REDUCE)
      INVAL("dart_plan_reduce_begin",
            dart_plan_reduce_begin(plan, dl, dr, op));
    else
      INVAL(kind == BCAST ? "dart_plan_bcast_begin"
                          : "dart_plan_fetch_and_op_begin",
            kind == BCAST ? dart_plan_bcast_begin(plan, dr, dl, op)
                          : dart_plan_fetch_and_op_begin(plan, dr, dl, dl,
                                                         op));
    buf_out(roots, dr, (nr + 1) * es);
    buf_out(leaves, dl, ext * es);
    on_device = 0;
  }
  /* every fourth round the roots lie in global memory, on the host (so
   * units that take device memory read them from there) */
  int in_global = round % 4 == 1; /* collective */
  dart_gptr_t rg;
  void *gr = in_global ? shared_in(roots, (nr + 1) * es, &rg) : NULL;
  int use_global = in_global && !(on_device && me % 2 == 0);
  on_device = on_device && !use_global;
  void *r = use_global ? gr : buf_in(roots, (nr + 1) * es);
  void *l = buf_in(leaves, ext * es), *u = buf_in(update, ext * es);
  /* on the device, every other bcast and reduce on the (default) stream */
  int streamed = on_device && round % 2;
  if (kind == BCAST && streamed) {
    CHECK_OK(dart_plan_bcast_begin_stream(plan, r, l, op, NULL));
    CHECK_OK(dart_plan_bcast_end_stream(plan, r, l, op, NULL));
  } else if (kind == BCAST) {
    CHECK_OK(dart_plan_bcast_begin(plan, r, l, op));
    CHECK_OK(dart_plan_bcast_end(plan, r, l, op));
  } else if (kind == REDUCE && streamed) {
    CHECK_OK(dart_plan_reduce_begin_stream(plan, l, r, op, NULL));
    CHECK_OK(dart_plan_reduce_end_stream(plan, l, r, op, NULL));
  } else if (kind == REDUCE) {
    CHECK_OK(dart_plan_reduce_begin(plan, l, r, op));
    CHECK_OK(dart_plan_reduce_end(plan, l, r, op));
  } else {
    CHECK_OK(dart_plan_fetch_and_op_begin(plan, r, l, u, op));
    CHECK_OK(dart_plan_fetch_and_op_end(plan, r, l, u, op));
  }
  if (!use_global) buf_out(roots, r, (nr + 1) * es);
  if (in_global) shared_out(use_global ? roots : NULL, gr, (nr + 1) * es, rg);
  buf_out(leaves, l, ext * es);
  buf_out(update, u, ext * es);
  on_device = saved;
  long long **want = model_roots(g, kind == BCAST ? DART_OP_NO_OP : op,
                                 round, kind == FETCH ? want_update : NULL);
  int wrong = 0;
  for (size_t i = 0; i < nr; i++)
    if (get(t, roots, i) != want[me][i] && wrong++ < 3)
      FAILF("%s type %d op %d round %d: root %zu is %lld, not %lld",
            kind_names[kind], (int)t, (int)op, round, i, get(t, roots, i),
            want[me][i]);
  /* leaves: bcast combines each once (no leaf twice here, or SUM) */
  long long *want_leaf = calloc(ext, sizeof *want_leaf);
  for (size_t i = 0; i < ext; i++) want_leaf[i] = leaf_value(me, i, round);
  if (kind == BCAST)
    for (size_t k = 0; k < g->nleaves[me]; k++) {
      dart_plan_root_t r = g->iremote[me][k];
      size_t at = g->ilocal[me][k];
      want_leaf[at] = model(op, want_leaf[at],
                            root_value(r.unit.id, r.index, round));
    }
  for (size_t i = 0; i < ext; i++) {
    if (get(t, leaves, i) != want_leaf[i] && wrong++ < 3)
      FAILF("%s type %d op %d round %d: leaf %zu is %lld, not %lld",
            kind_names[kind], (int)t, (int)op, round, i, get(t, leaves, i),
            want_leaf[i]);
    if (get(t, update, i) != want_update[i] && wrong++ < 3)
      FAILF("%s type %d op %d round %d: leafupdate %zu is %lld, not %lld",
            kind_names[kind], (int)t, (int)op, round, i, get(t, update, i),
            want_update[i]);
  }
  model_free(want);
  free(want_leaf);
  free(want_update);
  free(roots);
  free(leaves);
  free(update);
}

static void test_random(uint64_t seed)
{
  graph_t g, d;
  graph_make(&g, seed, 0);
  graph_make(&d, seed + 1, 1);
  int round = 0;
  for (dart_datatype_t t = DART_TYPE_BYTE; t < DART_TYPE_LAST; t++) {
    dart_plan_t plan, dplan;
    CHECK_OK(dart_plan_create(DART_TEAM_ALL, g.nroots[me], g.nleaves[me],
                              g.ilocal[me], g.iremote[me], t, &plan));
    CHECK_OK(dart_plan_create(DART_TEAM_ALL, d.nroots[me], d.nleaves[me],
                              d.ilocal[me], d.iremote[me], t, &dplan));
    const dart_operation_t *ops = is_floating(t) ? float_ops : int_ops;
    size_t nops = is_floating(t) ? sizeof float_ops / sizeof *float_ops
                                 : sizeof int_ops / sizeof *int_ops;
    for (size_t o = 0; o < nops; o++) {
      run_op(&g, plan, t, BCAST, ops[o], ++round);
      run_op(&g, plan, t, REDUCE, ops[o], ++round);
      run_op(&g, plan, t, FETCH, ops[o], ++round);
      run_op(&d, dplan, t, REDUCE, ops[o], ++round);
    }
    run_op(&g, plan, t, FETCH, DART_OP_NO_OP, ++round);
    run_op(&d, dplan, t, BCAST, DART_OP_SUM, ++round);
    if (t == DART_TYPE_LONG) {
      run_op(&g, plan, t, REDUCE, user_op, ++round);
      run_op(&g, plan, t, FETCH, user_op, ++round);
      run_op(&d, dplan, t, REDUCE, user_op, ++round);
    }
    CHECK_OK(dart_plan_destroy(&plan));
    CHECK_OK(dart_plan_destroy(&dplan));
    CHECK(plan == NULL);
  }
  graph_free(&g);
  graph_free(&d);
}

/* Each unit's leaves on its own roots, as two boxes of single elements of
 * one shape (2 rows of 8; 3 elements apart in a row, 30 between rows):
 * the first box's leaves 100 places after their roots, the second's 200
 * after the first box's roots, its roots `shift` after the first's. With
 * shift 1 no root is in both boxes, and copies take the boxes together;
 * with shift 3 they share roots, where a reduce with REPLACE must still
 * leave each root the value of its last leaf. With interleave the leaves
 * alternate between the boxes, and their roots are the next unit's: a
 * message of both boxes, element by element, which copies walk together
 * in that order. */
static void graph_boxes(graph_t *g, size_t shift, int interleave)
{
  enum { ROW = 8, ROWS = 2, BOX = ROW * ROWS };
  graph_alloc(g, 0);
  for (int v = 0; v < units; v++) {
    g->nroots[v] = shift + 30 * (ROWS - 1) + 3 * (ROW - 1) + 1;
    g->nleaves[v] = 2 * BOX;
    g->extent[v] = 200 + 30 * (ROWS - 1) + 3 * (ROW - 1) + 1;
    g->ilocal[v] = calloc(2 * BOX, sizeof **g->ilocal);
    g->iremote[v] = calloc(2 * BOX, sizeof **g->iremote);
    for (size_t k = 0; k < 2 * BOX; k++) {
      size_t box = interleave ? k % 2 : k / BOX;
      size_t j = interleave ? k / 2 : k % BOX;
      size_t at = 30 * (j / ROW) + 3 * (j % ROW);
      g->ilocal[v][k] = at + 100 * (box + 1);
      g->iremote[v][k] =
          (dart_plan_root_t){{interleave ? (v + 1) % units : v},
                             at + box * shift};
    }
  }
}

static void test_boxes(void)
{
  static int round = 5000;
  for (int interleave = 0; interleave <= 1; interleave++)
    for (size_t shift = 1; shift <= 3; shift += 2) {
      graph_t g;
      graph_boxes(&g, shift, interleave);
      for (dart_datatype_t t = DART_TYPE_BYTE; t < DART_TYPE_LAST; t++) {
        dart_plan_t plan;
        CHECK_OK(dart_plan_create(DART_TEAM_ALL, g.nroots[me], g.nleaves[me],
                                  g.ilocal[me], g.iremote[me], t, &plan));
        run_op(&g, plan, t, BCAST, DART_OP_REPLACE, ++round);
        run_op(&g, plan, t, REDUCE, DART_OP_REPLACE, ++round);
        run_op(&g, plan, t, REDUCE, DART_OP_SUM, ++round);
        CHECK_OK(dart_plan_destroy(&plan));
      }
      graph_free(&g);
    }
}

/* One plan, many rounds with new data, bcast and reduce alternating. */
static void test_reuse(int rounds)
{
  graph_t g;
  graph_make(&g, 77, 0);
  dart_plan_t plan;
  CHECK_OK(dart_plan_create(DART_TEAM_ALL, g.nroots[me], g.nleaves[me],
                            g.ilocal[me], g.iremote[me], DART_TYPE_DOUBLE,
                            &plan));
  for (int r = 0; r < rounds && dart_test_failures == 0; r++)
    run_op(&g, plan, DART_TYPE_DOUBLE, r % 3 == 2 ? REDUCE : BCAST,
           r % 2 ? DART_OP_REPLACE : DART_OP_SUM, 1000 + r);
  CHECK_OK(dart_plan_destroy(&plan));
  graph_free(&g);
}

/* ---- halos ---- */

typedef struct {
  int ndims, units[3], periodic;
  size_t extent[3], halo;
} geom_t;

static void block_of(size_t extent, int p, int c, size_t *first, size_t *len)
{
  size_t q = extent / p, r = extent % p;
  *first = c * q + ((size_t)c < r ? (size_t)c : r);
  *len = q + ((size_t)c < r);
}

/* Unit u's block and ghosted extents (unused dimensions: 1, no halo). */
static void unit_box(const geom_t *g, int u, size_t first[3], size_t len[3],
                     size_t gext[3])
{
  int c[3] = {0, 0, 0};
  for (int d = g->ndims - 1; d >= 0; d--) {
    c[d] = u % g->units[d];
    u /= g->units[d];
  }
  for (int d = 0; d < 3; d++) {
    if (d < g->ndims) {
      block_of(g->extent[d], g->units[d], c[d], &first[d], &len[d]);
      gext[d] = len[d] + 2 * g->halo;
    } else {
      first[d] = 0;
      len[d] = gext[d] = 1;
    }
  }
}

/* The global element a ghosted place of unit u shows after a bcast, as
 * a global row-major index, or -1 where nothing is exchanged. */
static long long ghost_source(const geom_t *g, int u, const size_t gc[3],
                              int *is_root)
{
  size_t first[3], len[3], gext[3];
  unit_box(g, u, first, len, gext);
  int out = 0;
  long long idx = 0;
  for (int d = 0; d < g->ndims; d++) {
    long long x = (long long)first[d] + (long long)gc[d] - (long long)g->halo;
    int outside = gc[d] < g->halo || gc[d] >= g->halo + len[d];
    out += outside;
    long long e = (long long)g->extent[d];
    if (x < 0 || x >= e) {
      if (!g->periodic) return *is_root = 0, -1;
      x = ((x % e) + e) % e;
    }
    idx = idx * e + x;
  }
  *is_root = out == 0;
  return out <= 1 ? idx : -1;
}

static void test_halo(int ndims, const int *grid, const size_t *extent,
                      size_t halo, int periodic)
{
  geom_t g = {ndims, {1, 1, 1}, periodic, {1, 1, 1}, halo};
  for (int d = 0; d < ndims; d++) {
    g.units[d] = grid[d];
    g.extent[d] = extent[d];
  }
  size_t first[3], len[3], gext[3];
  unit_box(&g, me, first, len, gext);
  size_t total = gext[0] * gext[1] * gext[2];
  double *a = malloc(total * sizeof *a);
  long long *src = malloc(total * sizeof *src);
  int *root = malloc(total * sizeof *root);
  for (size_t at = 0; at < total; at++) {
    size_t gc[3] = {at / (gext[1] * gext[2]), at / gext[2] % gext[1],
                    at % gext[2]};
    size_t shift[3];
    for (int d = 0; d < 3; d++) shift[d] = d < ndims ? gc[d] : 0;
    src[at] = ghost_source(&g, me, shift, &root[at]);
    a[at] = root[at] ? (double)src[at] : -1.0;
  }
  dart_plan_t plan;
  CHECK_OK(dart_plan_create_halo(DART_TEAM_ALL, ndims, extent, grid, halo,
                                 periodic, DART_TYPE_DOUBLE, &plan));
  int wrong = 0;
  /* the array in private memory (or the device's), then in global memory,
   * where node peers read the roots in place */
  double *start = malloc(total * sizeof *start);
  memcpy(start, a, total * sizeof *a);
  for (int global = 0; global < 2; global++) {
    dart_gptr_t ag;
    memcpy(a, start, total * sizeof *a);
    double *buf = global ? shared_in(a, total * sizeof *a, &ag)
                         : buf_in(a, total * sizeof *a);
    for (int rep = 0; rep < 3; rep++) { /* in place, reused */
      CHECK_OK(dart_plan_bcast_begin(plan, buf, buf, DART_OP_REPLACE));
      CHECK_OK(dart_plan_bcast_end(plan, buf, buf, DART_OP_REPLACE));
    }
    if (global)
      shared_out(a, buf, total * sizeof *a, ag);
    else
      buf_out(a, buf, total * sizeof *a);
    for (size_t at = 0; at < total; at++) {
      double want = src[at] >= 0 ? (double)src[at] : -1.0;
      if (a[at] != want && wrong++ < 3)
        FAILF("halo %dd grid %dx%dx%d halo %zu periodic %d global %d: place "
              "%zu is %g, not %g", ndims, g.units[0], g.units[1], g.units[2],
              halo, periodic, global, at, a[at], want);
    }
  }
  free(start);
  /* reduce: every root counts the faces that show it, over all units */
  long long *count = calloc(total, sizeof *count);
  for (int u = 0; u < units; u++) {
    size_t uf[3], ul[3], ug[3];
    unit_box(&g, u, uf, ul, ug);
    for (size_t at = 0; at < ug[0] * ug[1] * ug[2]; at++) {
      size_t gc[3] = {at / (ug[1] * ug[2]), at / ug[2] % ug[1], at % ug[2]};
      int is_root;
      long long s = ghost_source(&g, u, gc, &is_root);
      if (s < 0 || is_root) continue;
      /* is global element s mine? then at which place */
      long long rest = s;
      size_t x[3] = {0, 0, 0}, place = 0;
      int mine = 1;
      for (int d = ndims - 1; d >= 0; d--) {
        x[d] = (size_t)(rest % (long long)g.extent[d]);
        rest /= (long long)g.extent[d];
      }
      for (int d = 0; d < 3; d++) {
        size_t xd = d < ndims ? x[d] : 0;
        if (xd < first[d] || xd >= first[d] + len[d]) mine = 0;
        place = place * gext[d] + (d < ndims ? xd - first[d] + halo : 0);
      }
      if (mine) count[place]++;
    }
  }
  for (size_t at = 0; at < total; at++) a[at] = root[at] ? 0.0 : 1.0;
  double *buf = buf_in(a, total * sizeof *a);
  CHECK_OK(dart_plan_reduce_begin(plan, buf, buf, DART_OP_SUM));
  CHECK_OK(dart_plan_reduce_end(plan, buf, buf, DART_OP_SUM));
  buf_out(a, buf, total * sizeof *a);
  for (size_t at = 0; at < total; at++) {
    double want = root[at] ? (double)count[at] : 1.0;
    if (a[at] != want && wrong++ < 3)
      FAILF("halo reduce %dd halo %zu periodic %d: place %zu is %g, not %g",
            ndims, halo, periodic, at, a[at], want);
  }
  CHECK_OK(dart_plan_destroy(&plan));
  free(count);
  free(a);
  free(src);
  free(root);
}

static void test_halos(void)
{
  /* unit grids: all units along one dimension, or split over two/three */
  int a = units, b = 1, c = 1;
  for (int f = 2; f * f <= units; f++)
    if (units % f == 0) b = f;
  a = units / b;
  int c3a = a, c3b = b;
  if (b > 1)
    for (int f = 2; f <= a; f++)
      if (a % f == 0) {
        c = f;
        c3a = a / f;
        break;
      }
  for (int periodic = 0; periodic <= 1; periodic++)
    for (size_t halo = 1; halo <= 2; halo++) {
      size_t e1[1] = {13 + (size_t)units};
      test_halo(1, (int[]){units}, e1, halo, periodic);
      size_t e2[2] = {9 + (size_t)a, 7 + (size_t)b};
      test_halo(2, (int[]){a, b}, e2, halo, periodic);
      test_halo(2, (int[]){b, a}, (size_t[]){7 + (size_t)b, 9 + (size_t)a},
                halo, periodic);
      size_t e3[3] = {5 + (size_t)c3a, 6 + (size_t)c3b, 4 + (size_t)c};
      test_halo(3, (int[]){c3a, c3b, c}, e3, halo, periodic);
    }
  /* blocks of one element, a halo of two: the faces reach past them */
  test_halo(1, (int[]){units}, (size_t[]){(size_t)units}, 2, 1);
}

/* ---- bad input ---- */

static void test_bad(void)
{
  size_t il[2] = {0, 0};
  dart_plan_root_t ir[2] = {{{0}, 0}, {{0}, 0}};
  dart_plan_t plan = NULL;
  /* create: every unit fails, nothing is created */
  ir[0].unit.id = units;
  INVAL("dart_plan_create", dart_plan_create(DART_TEAM_ALL, 1, 1, NULL, ir,
                                             DART_TYPE_INT, &plan));
  ir[0].unit.id = -1;
  INVAL("dart_plan_create", dart_plan_create(DART_TEAM_ALL, 1, 1, NULL, ir,
                                             DART_TYPE_INT, &plan));
  ir[0] = (dart_plan_root_t){{0}, 1}; /* unit 0 has one root */
  INVAL("dart_plan_create",
        dart_plan_create(DART_TEAM_ALL, me == 0 ? 1 : 0, 1, NULL, ir,
                         DART_TYPE_INT, &plan));
  INVAL("dart_plan_create", dart_plan_create(DART_TEAM_ALL, 1, 1, NULL, NULL,
                                             DART_TYPE_INT, &plan));
  ir[0].index = 0;
  INVAL("dart_plan_create", dart_plan_create(DART_TEAM_ALL, 1, 1, NULL, ir,
                                             DART_TYPE_UNDEFINED, &plan));
  dart_datatype_t strided;
  CHECK_OK(dart_type_create_strided(DART_TYPE_INT, 2, 1, &strided));
  INVAL("dart_plan_create", dart_plan_create(DART_TEAM_ALL, 1, 1, NULL, ir,
                                             strided, &plan));
  CHECK_OK(dart_type_destroy(&strided));
  INVAL("dart_plan_create", dart_plan_create(DART_TEAM_ALL, 1, 1, NULL, ir,
                                             DART_TYPE_INT, NULL));
  CHECK(plan == NULL);
  INVAL("dart_plan_create_halo",
        dart_plan_create_halo(DART_TEAM_ALL, 4, (size_t[]){8, 8, 8, 8},
                              (int[]){units, 1, 1, 1}, 1, 0, DART_TYPE_INT,
                              &plan));
  INVAL("dart_plan_create_halo",
        dart_plan_create_halo(DART_TEAM_ALL, 1, (size_t[]){8},
                              (int[]){units + 1}, 1, 0, DART_TYPE_INT, &plan));
  INVAL("dart_plan_create_halo",
        dart_plan_create_halo(DART_TEAM_ALL, 1, (size_t[]){(size_t)units - 1},
                              (int[]){units}, 1, 0, DART_TYPE_INT, &plan));
  INVAL("dart_plan_create_halo",
        dart_plan_create_halo(DART_TEAM_ALL, 1, NULL, (int[]){units}, 1, 0,
                              DART_TYPE_INT, &plan));
  CHECK(plan == NULL);

  /* a plan with leaf 0 listed twice: each unit's roots 0 and 1 of unit
   * me + 1 */
  int next = (me + 1) % units;
  ir[0] = (dart_plan_root_t){{next}, 0};
  ir[1] = (dart_plan_root_t){{next}, 1};
  CHECK_OK(dart_plan_create(DART_TEAM_ALL, 2, 2, il, ir, DART_TYPE_INT,
                            &plan));
  int roots[2] = {5, 6}, leaves[2] = {-1, -1}, upd[2] = {-1, -1};
  INVAL("dart_plan_bcast_begin",
        dart_plan_bcast_begin(plan, roots, leaves, DART_OP_REPLACE));
  INVAL("dart_plan_bcast_begin",
        dart_plan_bcast_begin(plan, NULL, leaves, DART_OP_SUM));
  INVAL("dart_plan_bcast_begin",
        dart_plan_bcast_begin(plan, roots, NULL, DART_OP_SUM));
  INVAL("dart_plan_bcast_begin",
        dart_plan_bcast_begin(plan, roots, leaves, DART_OP_MINMAX));
  INVAL("dart_plan_bcast_begin",
        dart_plan_bcast_begin(plan, roots, leaves, DART_OP_NO_OP));
  INVAL("dart_plan_reduce_begin",
        dart_plan_reduce_begin(plan, leaves, roots, (dart_operation_t)999));
  INVAL("dart_plan_reduce_begin",
        dart_plan_reduce_begin(plan, leaves, roots, user_op)); /* long's */
  INVAL("dart_plan_fetch_and_op_begin",
        dart_plan_fetch_and_op_begin(plan, roots, leaves, NULL, DART_OP_SUM));
  /* the _stream forms take device buffers */
  INVAL("dart_plan_bcast_begin_stream",
        dart_plan_bcast_begin_stream(plan, roots, leaves, DART_OP_SUM, NULL));
  INVAL("dart_plan_reduce_begin_stream",
        dart_plan_reduce_begin_stream(plan, leaves, roots, DART_OP_SUM,
                                      NULL));
  if (on_device) {
    /* host and device buffers in one operation are refused */
    void *dev = NULL, *dev2 = NULL;
    CHECK_OK(dart_memkind_alloc(2 * sizeof(int), DART_MEMKIND_CUDA, &dev));
    CHECK_OK(dart_memkind_alloc(2 * sizeof(int), DART_MEMKIND_CUDA, &dev2));
    INVAL("dart_plan_bcast_begin",
          dart_plan_bcast_begin(plan, roots, dev, DART_OP_SUM));
    INVAL("dart_plan_fetch_and_op_begin",
          dart_plan_fetch_and_op_begin(plan, roots, leaves, dev,
                                       DART_OP_SUM));
    INVAL("dart_plan_reduce_begin",
          dart_plan_reduce_begin(plan, dev, roots, DART_OP_SUM));
    INVAL("dart_plan_reduce_begin_stream",
          dart_plan_reduce_begin_stream(plan, dev, roots, DART_OP_SUM,
                                        NULL));
    const char *emu = getenv("DART_GPU_EMULATE");
    if (emu && atoi(emu) > 0) /* emulated devices: NULL only */
      INVAL("dart_plan_bcast_begin_stream",
            dart_plan_bcast_begin_stream(plan, dev, dev2, DART_OP_SUM,
                                         (dart_stream_t)dev));
    /* an end in the other form than its begin */
    CHECK_OK(dart_plan_bcast_begin(plan, dev, dev2, DART_OP_SUM));
    INVAL("dart_plan_bcast_end_stream",
          dart_plan_bcast_end_stream(plan, dev, dev2, DART_OP_SUM, NULL));
    CHECK_OK(dart_plan_bcast_end(plan, dev, dev2, DART_OP_SUM));
    CHECK_OK(dart_plan_bcast_begin_stream(plan, dev, dev2, DART_OP_SUM,
                                          NULL));
    INVAL("dart_plan_bcast_end",
          dart_plan_bcast_end(plan, dev, dev2, DART_OP_SUM));
    CHECK_OK(dart_plan_bcast_end_stream(plan, dev, dev2, DART_OP_SUM, NULL));
    CHECK_OK(dart_memkind_free(dev, DART_MEMKIND_CUDA));
    CHECK_OK(dart_memkind_free(dev2, DART_MEMKIND_CUDA));
  }
  CHECK(roots[0] == 5 && roots[1] == 6 && leaves[0] == -1 &&
        leaves[1] == -1 && upd[0] == -1);
  INVAL("dart_plan_bcast_end",
        dart_plan_bcast_end(plan, roots, leaves, DART_OP_SUM));
  /* begin twice, end that differs from its begin, end of another kind */
  CHECK_OK(dart_plan_bcast_begin(plan, roots, leaves, DART_OP_SUM));
  INVAL("dart_plan_bcast_begin",
        dart_plan_bcast_begin(plan, roots, leaves, DART_OP_SUM));
  INVAL("dart_plan_reduce_begin",
        dart_plan_reduce_begin(plan, leaves, roots, DART_OP_SUM));
  INVAL("dart_plan_bcast_end",
        dart_plan_bcast_end(plan, roots, leaves, DART_OP_MAX));
  INVAL("dart_plan_reduce_end",
        dart_plan_reduce_end(plan, leaves, roots, DART_OP_SUM));
  INVAL("dart_plan_destroy", dart_plan_destroy(&plan));
  CHECK_OK(dart_plan_bcast_end(plan, roots, leaves, DART_OP_SUM));
  /* leaf 0 got both of the next unit's roots */
  CHECK_EQ(leaves[0], -1 + 5 + 6);
  CHECK_EQ(leaves[1], -1);
  dart_plan_t copy = plan;
  CHECK_OK(dart_plan_destroy(&plan));
  CHECK(plan == NULL);
  INVAL("dart_plan_destroy", dart_plan_destroy(&plan));
  INVAL("dart_plan_destroy", dart_plan_destroy(&copy));
  INVAL("dart_plan_bcast_begin",
        dart_plan_bcast_begin(copy, roots, leaves, DART_OP_SUM));
  INVAL("dart_plan_destroy", dart_plan_destroy(NULL));

  /* a plan of a destroyed team */
  dart_group_t group;
  dart_team_t team;
  CHECK_OK(dart_team_get_group(DART_TEAM_ALL, &group));
  CHECK_OK(dart_team_create(DART_TEAM_ALL, group, &team));
  CHECK_OK(dart_group_destroy(&group));
  dart_team_unit_t tme;
  CHECK_OK(dart_team_myid(team, &tme));
  ir[0] = (dart_plan_root_t){{(tme.id + 1) % units}, 0};
  CHECK_OK(dart_plan_create(team, 1, 1, NULL, ir, DART_TYPE_INT, &plan));
  CHECK_OK(dart_plan_bcast_begin(plan, roots, leaves, DART_OP_REPLACE));
  CHECK_OK(dart_plan_bcast_end(plan, roots, leaves, DART_OP_REPLACE));
  CHECK_EQ(leaves[0], 5);
  CHECK_OK(dart_team_destroy(&team));
  leaves[0] = -1;
  INVAL("dart_plan_bcast_begin",
        dart_plan_bcast_begin(plan, roots, leaves, DART_OP_REPLACE));
  CHECK_EQ(leaves[0], -1);
  CHECK_OK(dart_plan_destroy(&plan));
}

int main(int argc, char **argv)
{
  dart_test_init(&argc, &argv);
  me = dart_test_unit;
  units = dart_test_units;
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--device") == 0) on_device = 1;
  int device = -1;
  CHECK_OK(dart_memkind_device(&device));
  if (on_device && device < 0) {
    if (me == 0) printf("SKIPPED: no CUDA device\n");
    dart_exit();
    return DART_TEST_SKIP;
  }
  int rounds = 1000;
  const char *iters = getenv("DART_TEST_ITERS");
  if (iters && atoi(iters) > 0 && atoi(iters) < rounds) rounds = atoi(iters);
  CHECK_OK(dart_op_create(user_fn, NULL, false, DART_TYPE_LONG, false,
                          &user_op));
  capture_init();
  test_random(1);
  if (rounds == 1000) test_random(2024); /* a capped run: one graph */
  test_halos();
  test_boxes();
  test_reuse(rounds);
  test_bad();
  CHECK_OK(dart_op_destroy(&user_op));
  capture_fini();
  return dart_test_finish();
}
