/*
 * Every collective, blocking and with a handle (dart_coll.h), on each of
 * its paths: node peers' cells (small), staging steps (large, sizes that
 * end inside a block), the hierarchical steps and MPI's; on DART_TEAM_ALL,
 * on the team of units 1..n-1 (uneven nodes) and on the even units (one
 * per emulated node of 2), each result checked against a serial one.
 * Then handles in flight together and freed before completion, and
 * mismatched calls of node peers, which must fail on the units that see
 * them and leave the team usable.
 *   test_coll_paths [check]   check: DART_COLL_CHECK=1 is set, and
 *                             mismatches across nodes fail on every unit
 */
#include <dart/dart_coll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dart_test.h"

static int nunits, me;

/* The element counts every collective runs at: empty, in a cell, and
 * beyond a cell over one and several staging blocks (64 KiB). */
static const size_t counts[] = {0, 1, 7, 500, 1000, 20000, 45001};
#define NCOUNTS (sizeof counts / sizeof *counts)

/* Unit u's value at element i (exact in a double's mantissa). */
static int64_t val(int u, size_t i)
{
  return (int64_t)(dart_test_mix64((uint64_t)u * 1000003u + i) % 100000) -
         50000;
}

typedef struct {
  dart_team_t team;
  int size, myid;
  dart_unit_t *global; /* team unit -> global unit */
} team_t;

/* ---- blocking or with a handle ---- */

static bool use_handles;

/* Completes a handle collective the way the round asks: by waiting, or by
 * testing until done. */
static dart_ret_t complete(dart_ret_t started, dart_handle_t *h, int round)
{
  if (started != DART_OK) return started;
  if (round % 2 == 0) return dart_wait(h);
  int32_t done = 0;
  dart_ret_t ret = DART_OK;
  while (ret == DART_OK && !done) ret = dart_test(h, &done);
  if (ret == DART_OK) CHECK(*h == DART_HANDLE_NULL);
  return ret;
}

#define RUN(round, blocking, handle_call)                                   \
  (use_handles ? complete(handle_call, &h_, (round)) : (blocking))

/* ---- the collectives, each checked ---- */

static void check_bcast(const team_t *t, size_t n, int round)
{
  dart_handle_t h_;
  for (int root = 0; root < t->size; root += t->size > 2 ? 2 : 1) {
    int64_t *buf = malloc((n + 1) * sizeof *buf);
    for (size_t i = 0; i < n + 1; i++)
      buf[i] = t->myid == root ? val(root, i) : -1;
    dart_team_unit_t r = DART_TEAM_UNIT_ID(root);
    CHECK_OK(RUN(round,
                 dart_bcast(buf, n, DART_TYPE_LONGLONG, r, t->team),
                 dart_bcast_handle(buf, n, DART_TYPE_LONGLONG, r, t->team,
                                   &h_)));
    for (size_t i = 0; i < n; i++)
      if (buf[i] != val(root, i)) {
        FAILF("bcast of %zu from %d: [%zu] = %lld", n, root, i,
              (long long)buf[i]);
        break;
      }
    /* nothing beyond the count */
    if (t->myid != root) CHECK_EQ(buf[n], -1);
    free(buf);
  }
}

static void check_allreduce(const team_t *t, size_t n, int round)
{
  dart_handle_t h_;
  int64_t *send = malloc((n + 1) * sizeof *send);
  int64_t *recv = malloc((n + 1) * sizeof *recv);
  for (size_t i = 0; i < n; i++) send[i] = val(t->global[t->myid], i);
  recv[n] = -7;
  const bool in_place = round % 3 == 2;
  int64_t *out = in_place ? send : recv;
  CHECK_OK(RUN(round,
               dart_allreduce(send, out, n, DART_TYPE_LONGLONG, DART_OP_SUM,
                              t->team),
               dart_allreduce_handle(send, out, n, DART_TYPE_LONGLONG,
                                     DART_OP_SUM, t->team, &h_)));
  for (size_t i = 0; i < n; i++) {
    int64_t want = 0;
    for (int u = 0; u < t->size; u++) want += val(t->global[u], i);
    if (out[i] != want) {
      FAILF("allreduce of %zu%s: [%zu] = %lld, not %lld", n,
            in_place ? " in place" : "", i, (long long)out[i],
            (long long)want);
      break;
    }
  }
  if (!in_place) CHECK_EQ(recv[n], -7);
  free(send);
  free(recv);
}

/* MINMAX on doubles: pairs {min, max} of every unit's values. */
static void check_minmax(const team_t *t, size_t n, int round)
{
  dart_handle_t h_;
  size_t pairs = n;
  double *send = malloc((2 * pairs + 1) * sizeof *send);
  double *recv = malloc((2 * pairs + 1) * sizeof *recv);
  for (size_t i = 0; i < pairs; i++) {
    send[2 * i] = (double)val(t->global[t->myid], i);
    send[2 * i + 1] = (double)val(t->global[t->myid], i + pairs);
  }
  CHECK_OK(RUN(round,
               dart_allreduce(send, recv, 2 * pairs, DART_TYPE_DOUBLE,
                              DART_OP_MINMAX, t->team),
               dart_allreduce_handle(send, recv, 2 * pairs, DART_TYPE_DOUBLE,
                                     DART_OP_MINMAX, t->team, &h_)));
  for (size_t i = 0; i < pairs; i++) {
    double lo = 1e300, hi = -1e300;
    for (int u = 0; u < t->size; u++) {
      double a = (double)val(t->global[u], i);
      double b = (double)val(t->global[u], i + pairs);
      lo = a < lo ? a : lo;
      hi = b > hi ? b : hi;
    }
    if (recv[2 * i] != lo || recv[2 * i + 1] != hi) {
      FAILF("minmax of %zu pairs: [%zu] = {%g, %g}, not {%g, %g}", pairs, i,
            recv[2 * i], recv[2 * i + 1], lo, hi);
      break;
    }
  }
  free(send);
  free(recv);
}

/* An operation that does not commute: affine maps x -> a x + b modulo a
 * prime, composed as f0 o f1 o ... o f(n-1) in the team's order. */
typedef struct {
  int64_t a, b;
} affine_t;
#define PRIME 1000003

static void affine_op(const void *in, void *inout, size_t len, void *data)
{
  (void)data;
  const affine_t *f = in;
  affine_t *g = inout;
  for (size_t i = 0; i < len; i++) { /* inout = in o inout */
    affine_t r = {f[i].a * g[i].a % PRIME, (f[i].a * g[i].b + f[i].b) % PRIME};
    g[i] = r;
  }
}

static affine_t affine_of(int u, size_t i)
{
  affine_t f = {1 + (int64_t)((uint64_t)val(u, i) % 997),
                (int64_t)((uint64_t)val(u, i + 1) % PRIME)};
  return f;
}

static void check_ordered(const team_t *t, size_t n, int round,
                          dart_datatype_t pair, dart_operation_t op)
{
  dart_handle_t h_;
  affine_t *send = malloc((n + 1) * sizeof *send);
  affine_t *recv = malloc((n + 1) * sizeof *recv);
  for (size_t i = 0; i < n; i++) send[i] = affine_of(t->global[t->myid], i);
  const int root = round % t->size;
  const bool all = round % 2 == 0;
  dart_team_unit_t r = DART_TEAM_UNIT_ID(root);
  if (all)
    CHECK_OK(RUN(round, dart_allreduce(send, recv, n, pair, op, t->team),
                 dart_allreduce_handle(send, recv, n, pair, op, t->team,
                                       &h_)));
  else
    CHECK_OK(RUN(round, dart_reduce(send, recv, n, pair, op, r, t->team),
                 dart_reduce_handle(send, recv, n, pair, op, r, t->team,
                                    &h_)));
  if (!all && t->myid != root) {
    free(send);
    free(recv);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    affine_t acc = affine_of(t->global[t->size - 1], i);
    for (int u = t->size - 2; u >= 0; u--) {
      affine_t f = affine_of(t->global[u], i);
      affine_op(&f, &acc, 1, NULL);
    }
    if (recv[i].a != acc.a || recv[i].b != acc.b) {
      FAILF("%s of %zu affine maps (root %d): [%zu] = %lld x + %lld, not "
            "%lld x + %lld", all ? "allreduce" : "reduce", n, root, i,
            (long long)recv[i].a, (long long)recv[i].b, (long long)acc.a,
            (long long)acc.b);
      break;
    }
  }
  free(send);
  free(recv);
}

static void check_reduce(const team_t *t, size_t n, int round)
{
  dart_handle_t h_;
  const int root = (round + 1) % t->size;
  double *send = malloc((n + 1) * sizeof *send);
  double *recv = malloc((n + 1) * sizeof *recv);
  for (size_t i = 0; i < n; i++) {
    send[i] = (double)val(t->global[t->myid], i);
    recv[i] = -1;
  }
  dart_team_unit_t r = DART_TEAM_UNIT_ID(root);
  CHECK_OK(RUN(round,
               dart_reduce(send, recv, n, DART_TYPE_DOUBLE, DART_OP_MAX, r,
                           t->team),
               dart_reduce_handle(send, recv, n, DART_TYPE_DOUBLE,
                                  DART_OP_MAX, r, t->team, &h_)));
  for (size_t i = 0; i < n; i++) {
    double want = -1e300;
    for (int u = 0; u < t->size; u++) {
      double v = (double)val(t->global[u], i);
      want = v > want ? v : want;
    }
    if (t->myid != root) want = -1; /* untouched */
    if (recv[i] != want) {
      FAILF("reduce of %zu to %d: [%zu] = %g, not %g", n, root, i, recv[i],
            want);
      break;
    }
  }
  free(send);
  free(recv);
}

typedef enum { GATHER, SCATTER, ALLGATHER, ALLTOALL } spread_t;
static const char *const spread_names[] = {"gather", "scatter", "allgather",
                                           "alltoall"};

/* The value unit s sends unit d at element i of its part. */
static int32_t part_val(int s, int d, size_t i)
{
  return (int32_t)(dart_test_mix64(((uint64_t)s << 40) ^ ((uint64_t)d << 20) ^
                                   i) &
                   0x7fffffff);
}

static void check_spread(const team_t *t, spread_t kind, size_t n, int round)
{
  dart_handle_t h_;
  const int size = t->size, my = t->myid, root = round % size;
  const int gme = t->global[my];
  const bool distinct = kind == SCATTER || kind == ALLTOALL;
  const size_t nsend = distinct ? n * size : n;
  const size_t nrecv = kind == SCATTER ? n : n * size;
  int32_t *send = malloc((nsend + 1) * sizeof *send);
  int32_t *recv = malloc((nrecv + 1) * sizeof *recv);
  for (size_t i = 0; i < nsend; i++)
    send[i] = distinct ? part_val(gme, t->global[i / (n ? n : 1)], i % n)
                       : part_val(gme, 0, i);
  for (size_t i = 0; i <= nrecv; i++) recv[i] = -3;
  dart_team_unit_t r = DART_TEAM_UNIT_ID(root);
  dart_ret_t ret = DART_OK;
  switch (kind) {
    case GATHER:
      ret = RUN(round,
                dart_gather(send, recv, n, DART_TYPE_INT, r, t->team),
                dart_gather_handle(send, recv, n, DART_TYPE_INT, r, t->team,
                                   &h_));
      break;
    case SCATTER:
      ret = RUN(round,
                dart_scatter(send, recv, n, DART_TYPE_INT, r, t->team),
                dart_scatter_handle(send, recv, n, DART_TYPE_INT, r, t->team,
                                    &h_));
      break;
    case ALLGATHER:
      ret = RUN(round, dart_allgather(send, recv, n, DART_TYPE_INT, t->team),
                dart_allgather_handle(send, recv, n, DART_TYPE_INT, t->team,
                                      &h_));
      break;
    case ALLTOALL:
      ret = RUN(round, dart_alltoall(send, recv, n, DART_TYPE_INT, t->team),
                dart_alltoall_handle(send, recv, n, DART_TYPE_INT, t->team,
                                     &h_));
      break;
  }
  CHECK_OK(ret);
  const bool gets = kind != GATHER || my == root;
  for (size_t i = 0; i < nrecv && gets; i++) {
    const int from = kind == SCATTER ? root : (int)(i / n);
    const size_t k = i % n;
    int32_t want = kind == SCATTER || kind == ALLTOALL
                       ? part_val(t->global[from], gme, k)
                       : part_val(t->global[from], 0, k);
    if (recv[i] != want) {
      FAILF("%s of %zu (root %d): [%zu] = %d, not %d", spread_names[kind], n,
            root, i, recv[i], want);
      break;
    }
  }
  CHECK_EQ(recv[nrecv], -3);
  if (!gets) CHECK_EQ(recv[0], -3);
  free(send);
  free(recv);
}

/* Unit s sends unit d this many elements (some pairs none). */
static size_t vcount(int s, int d, size_t scale)
{
  return (size_t)((s * 3 + d * 5 + 1) % 7) * scale;
}

static void check_alltoallv(const team_t *t, size_t scale, int round)
{
  dart_handle_t h_;
  const int size = t->size, my = t->myid;
  size_t *sc = calloc(4 * (size_t)size, sizeof *sc);
  size_t *sd = sc + size, *rc = sc + 2 * size, *rd = sc + 3 * size;
  size_t stot = 0, rtot = 0;
  /* gaps of one element between parts, received in reverse order */
  for (int u = 0; u < size; u++) {
    sc[u] = vcount(my, u, scale);
    sd[u] = stot;
    stot += sc[u] + 1;
  }
  for (int u = size - 1; u >= 0; u--) {
    rc[u] = vcount(u, my, scale);
    rd[u] = rtot;
    rtot += rc[u] + 1;
  }
  int64_t *send = malloc((stot + 1) * sizeof *send);
  int64_t *recv = malloc((rtot + 1) * sizeof *recv);
  for (int u = 0; u < size; u++)
    for (size_t i = 0; i < sc[u]; i++)
      send[sd[u] + i] = part_val(t->global[my], t->global[u], i);
  for (size_t i = 0; i <= rtot; i++) recv[i] = -9;
  CHECK_OK(RUN(round,
               dart_alltoallv(send, sc, sd, DART_TYPE_LONGLONG, recv, rc, rd,
                              t->team),
               dart_alltoallv_handle(send, sc, sd, DART_TYPE_LONGLONG, recv,
                                     rc, rd, t->team, &h_)));
  for (int u = 0; u < size; u++) {
    for (size_t i = 0; i < rc[u]; i++)
      if (recv[rd[u] + i] != part_val(t->global[u], t->global[my], i)) {
        FAILF("alltoallv (scale %zu): from %d [%zu] = %lld", scale, u, i,
              (long long)recv[rd[u] + i]);
        u = size;
        break;
      }
    if (u < size) CHECK_EQ(recv[rd[u] + rc[u]], -9); /* the gaps */
  }
  free(send);
  free(recv);
  free(sc);
}

static void check_allgatherv(const team_t *t, size_t scale, int round)
{
  dart_handle_t h_;
  const int size = t->size, my = t->myid;
  size_t *rc = calloc(2 * (size_t)size, sizeof *rc), *rd = rc + size;
  size_t tot = 0;
  for (int u = size - 1; u >= 0; u--) {
    rc[u] = vcount(u, 0, scale);
    rd[u] = tot;
    tot += rc[u] + 2;
  }
  int32_t *recv = malloc((tot + 1) * sizeof *recv);
  int32_t *send = malloc((rc[my] + 1) * sizeof *send);
  for (size_t i = 0; i <= tot; i++) recv[i] = -5;
  for (size_t i = 0; i < rc[my]; i++) send[i] = part_val(t->global[my], 1, i);
  const bool in_place = round % 2 == 1;
  if (in_place) memcpy(recv + rd[my], send, rc[my] * sizeof *send);
  const int32_t *from = in_place ? recv : send;
  CHECK_OK(RUN(round,
               dart_allgatherv(from, rc[my], DART_TYPE_INT, recv, rc, rd,
                               t->team),
               dart_allgatherv_handle(from, rc[my], DART_TYPE_INT, recv, rc,
                                      rd, t->team, &h_)));
  for (int u = 0; u < size; u++) {
    for (size_t i = 0; i < rc[u]; i++)
      if (recv[rd[u] + i] != part_val(t->global[u], 1, i)) {
        FAILF("allgatherv (scale %zu): from %d [%zu] = %d", scale, u, i,
              recv[rd[u] + i]);
        u = size;
        break;
      }
    if (u < size) CHECK_EQ(recv[rd[u] + rc[u]], -5);
  }
  free(recv);
  free(send);
  free(rc);
}

/* What every member put before a barrier is there after it. */
static void check_barrier(const team_t *t, int round)
{
  dart_handle_t h_;
  dart_gptr_t g;
  CHECK_OK(dart_team_memalloc_aligned(t->team, 1, DART_TYPE_LONGLONG, &g));
  int64_t mine = (int64_t)round * 1000 + t->myid;
  dart_gptr_t right = g;
  right.unitid = (t->myid + 1) % t->size;
  CHECK_OK(dart_put(right, &mine, 1, DART_TYPE_LONGLONG, DART_TYPE_LONGLONG));
  CHECK_OK(RUN(round, dart_barrier(t->team),
               dart_barrier_handle(t->team, &h_)));
  int64_t got = -1;
  dart_gptr_t self = g;
  self.unitid = t->myid;
  CHECK_OK(dart_get_blocking(&got, self, 1, DART_TYPE_LONGLONG,
                             DART_TYPE_LONGLONG));
  CHECK_EQ(got, (int64_t)round * 1000 + (t->myid + t->size - 1) % t->size);
  CHECK_OK(dart_barrier(t->team));
  CHECK_OK(dart_team_memfree(g));
}

static void all_collectives(const team_t *t, dart_datatype_t pair,
                            dart_operation_t affine)
{
  for (size_t c = 0; c < NCOUNTS; c++) {
    const size_t n = counts[c];
    const int round = (int)c;
    check_bcast(t, n, round);
    check_allreduce(t, n, round);
    check_allreduce(t, n, round + 2); /* in place at 2 of 3 rounds */
    check_minmax(t, n / 2 + 1, round);
    check_reduce(t, n, round);
    check_ordered(t, n / 4, round, pair, affine);
    check_ordered(t, n / 4, round + 1, pair, affine);
    /* parts of every unit: keep the all-to-all buffers moderate */
    const size_t part = n / (size_t)t->size + (c & 1);
    for (spread_t k = GATHER; k <= ALLTOALL; k++)
      check_spread(t, k, part, round);
    check_alltoallv(t, n / 8 + (c & 1), round);
    check_allgatherv(t, n / 4, round);
    check_barrier(t, round);
  }
}

/* ---- handles in flight together ---- */

static void check_overlap(const team_t *t)
{
  enum { N = 3000 };
  int64_t *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
  int64_t *c = malloc(N * sizeof *c), *d = malloc(2 * sizeof *d);
  for (size_t i = 0; i < N; i++) {
    a[i] = val(t->global[t->myid], i);
    c[i] = t->myid == 0 ? val(99, i) : 0;
  }
  int64_t one = 1;
  dart_handle_t h[4];
  CHECK_OK(dart_allreduce_handle(a, b, N, DART_TYPE_LONGLONG, DART_OP_SUM,
                                 t->team, &h[0]));
  CHECK_OK(dart_bcast_handle(c, N, DART_TYPE_LONGLONG, DART_TEAM_UNIT_ID(0),
                             t->team, &h[1]));
  CHECK_OK(dart_barrier_handle(t->team, &h[2]));
  CHECK_OK(dart_allreduce_handle(&one, d, 1, DART_TYPE_LONGLONG, DART_OP_SUM,
                                 t->team, &h[3]));
  /* a blocking collective completes those before it */
  int64_t sum = 0;
  CHECK_OK(dart_allreduce(&one, &sum, 1, DART_TYPE_LONGLONG, DART_OP_SUM,
                          t->team));
  CHECK_EQ(sum, t->size);
  /* waited for in reverse order, and all at once */
  CHECK_OK(dart_wait(&h[3]));
  CHECK(h[3] == DART_HANDLE_NULL);
  CHECK_OK(dart_waitall(h, 3));
  CHECK_EQ(d[0], t->size);
  for (size_t i = 0; i < N; i++) {
    int64_t want = 0;
    for (int u = 0; u < t->size; u++) want += val(t->global[u], i);
    if (b[i] != want || c[i] != val(99, i)) {
      FAILF("overlapping handles: [%zu] = %lld, %lld", i, (long long)b[i],
            (long long)c[i]);
      break;
    }
  }
  /* given up before completion: the collective still completes */
  dart_handle_t gone;
  for (size_t i = 0; i < N; i++) c[i] = t->myid == 1 % t->size ? -val(7, i) : 0;
  CHECK_OK(dart_bcast_handle(c, N, DART_TYPE_LONGLONG,
                             DART_TEAM_UNIT_ID(1 % t->size), t->team, &gone));
  CHECK_OK(dart_handle_free(&gone));
  CHECK(gone == DART_HANDLE_NULL);
  CHECK_OK(dart_barrier(t->team));
  for (size_t i = 0; i < N; i++)
    if (c[i] != -val(7, i)) {
      FAILF("a freed bcast handle's collective: [%zu] = %lld", i,
            (long long)c[i]);
      break;
    }
  /* a NULL handle is refused, with nothing started */
  CHECK_RET(dart_barrier_handle(t->team, NULL), DART_ERR_INVAL);
  CHECK_RET(dart_allreduce_handle(a, b, 1, DART_TYPE_LONGLONG, DART_OP_SUM,
                                  t->team, NULL),
            DART_ERR_INVAL);
  free(a);
  free(b);
  free(c);
  free(d);
}

/* A handle collective advances while its unit waits in anything else:
 * unit 0 waits in a barrier of another team while the others wait for a
 * bcast queued behind a large allreduce that needs unit 0 (MPI's rule of
 * progress; without it they would wait for each other for ever). */
static void check_progress_elsewhere(const team_t *t)
{
  enum { BIG = 40000 };
  dart_team_t other;
  CHECK_OK(dart_team_clone(t->team, &other));
  double *a = malloc(BIG * sizeof *a), *b = malloc(BIG * sizeof *b);
  for (int i = 0; i < BIG; i++) a[i] = t->myid + i;
  int64_t c = t->myid == 0 ? 4242 : 0;
  dart_handle_t h[2];
  CHECK_OK(dart_allreduce_handle(a, b, BIG, DART_TYPE_DOUBLE, DART_OP_SUM,
                                 t->team, &h[0]));
  CHECK_OK(dart_bcast_handle(&c, 1, DART_TYPE_LONGLONG, DART_TEAM_UNIT_ID(0),
                             t->team, &h[1]));
  if (t->myid == 0) {
    CHECK_OK(dart_barrier(other));
    CHECK_OK(dart_waitall(h, 2));
  } else {
    CHECK_OK(dart_wait(&h[1]));
    CHECK_OK(dart_barrier(other));
    CHECK_OK(dart_wait(&h[0]));
  }
  CHECK_EQ(c, 4242);
  const double base = t->size * (t->size - 1) / 2.0;
  for (int i = 0; i < BIG; i++)
    if (b[i] != base + (double)t->size * i) {
      FAILF("allreduce advanced elsewhere: [%d] = %g", i, b[i]);
      break;
    }
  CHECK_OK(dart_team_destroy(&other));
  free(a);
  free(b);
}

/* ---- mismatched calls ---- */

/* Node peers in the team: units that share this unit's (emulated) node. */
static int units_per_node(void)
{
  const char *k = getenv("DART_UNITS_PER_NODE");
  const char *shm = getenv("DART_SHM");
  if (shm != NULL && strcmp(shm, "0") == 0) return 1;
  return k != NULL && atoi(k) > 0 ? atoi(k) : nunits;
}

/* Node peers call mismatched collectives on their node's team: every
 * unit that reads a mismatching peer's call fails, nothing is written
 * where a call failed, and the team works on. */
static void check_mismatch(const team_t *node)
{
  if (node->size < 2) return;
  const bool odd = node->myid == 1;
  int64_t a[4] = {1, 2, 3, 4}, b[4] = {-1, -1, -1, -1};
  /* counts: all read all cells */
  CHECK_RET(dart_allreduce(a, b, odd ? 2 : 1, DART_TYPE_LONGLONG,
                           DART_OP_SUM, node->team),
            DART_ERR_INVAL);
  CHECK_EQ(b[0], -1);
  /* a large call against small ones */
  enum { BIG = 3000 };
  double *big = calloc(BIG, sizeof *big), *big2 = calloc(BIG, sizeof *big2);
  CHECK_RET(dart_allreduce(big, big2, odd ? BIG : 1, DART_TYPE_DOUBLE,
                           DART_OP_SUM, node->team),
            DART_ERR_INVAL);
  /* operations and types of the same size */
  CHECK_RET(dart_allreduce(a, b, 1, DART_TYPE_LONGLONG,
                           odd ? DART_OP_MAX : DART_OP_SUM, node->team),
            DART_ERR_INVAL);
  CHECK_RET(dart_allreduce(a, b, odd ? 2 : 1,
                           odd ? DART_TYPE_INT : DART_TYPE_LONGLONG,
                           DART_OP_SUM, node->team),
            DART_ERR_INVAL);
  /* kinds: a barrier against an allgather */
  if (odd)
    CHECK_RET(dart_barrier(node->team), DART_ERR_INVAL);
  else
    CHECK_RET(dart_allgather(a, big, 1, DART_TYPE_LONGLONG, node->team),
              DART_ERR_INVAL);
  /* a small bcast: the reader that expects more fails, untouched */
  b[0] = b[1] = -1;
  dart_ret_t ret = dart_bcast(node->myid == 0 ? a : b, odd ? 2 : 1,
                              DART_TYPE_LONGLONG, DART_TEAM_UNIT_ID(0),
                              node->team);
  CHECK_EQ(ret, odd ? DART_ERR_INVAL : DART_OK);
  if (odd) CHECK_EQ(b[0], -1);
  if (!odd && node->myid != 0) CHECK_EQ(b[0], 1);
  /* a large bcast: everyone reads every header, everyone fails */
  CHECK_RET(dart_bcast(big, odd ? BIG - 1 : BIG, DART_TYPE_DOUBLE,
                       DART_TEAM_UNIT_ID(0), node->team),
            DART_ERR_INVAL);
  /* with a handle: the error comes with the wait */
  dart_handle_t h;
  CHECK_OK(dart_allreduce_handle(a, b, odd ? 3 : 1, DART_TYPE_LONGLONG,
                                 DART_OP_SUM, node->team, &h));
  CHECK_RET(dart_wait(&h), DART_ERR_INVAL);
  CHECK_OK(dart_wait(&h)); /* reported once */
  CHECK(h == DART_HANDLE_NULL);
  /* the team works on, large steps included */
  for (int i = 0; i < BIG; i++) big[i] = node->myid + i;
  CHECK_OK(dart_allreduce(big, big2, BIG, DART_TYPE_DOUBLE, DART_OP_SUM,
                          node->team));
  double base = node->size * (node->size - 1) / 2.0;
  for (int i = 0; i < BIG; i++)
    if (big2[i] != base + (double)node->size * i) {
      FAILF("after mismatches: [%d] = %g", i, big2[i]);
      break;
    }
  free(big);
  free(big2);
}

/* With DART_COLL_CHECK=1 a mismatch across nodes fails everywhere. */
static void check_checked(void)
{
  int64_t a[2] = {1, 2}, b[2];
  CHECK_RET(dart_allreduce(a, b, me == nunits - 1 ? 2 : 1, DART_TYPE_LONGLONG,
                           DART_OP_SUM, DART_TEAM_ALL),
            nunits > 1 ? DART_ERR_INVAL : DART_OK);
  CHECK_RET(dart_bcast(a, 1, DART_TYPE_LONGLONG,
                       DART_TEAM_UNIT_ID(me == 0 && nunits > 1 ? 1 : 0),
                       DART_TEAM_ALL),
            nunits > 1 ? DART_ERR_INVAL : DART_OK);
  int64_t one = 1, sum = 0;
  CHECK_OK(dart_allreduce(&one, &sum, 1, DART_TYPE_LONGLONG, DART_OP_SUM,
                          DART_TEAM_ALL));
  CHECK_EQ(sum, nunits);
}

/* ---- teams ---- */

/* The team of the global units for which pick(u) holds (DART_TEAM_NULL
 * where this unit is not among them). */
static team_t make_team(bool (*pick)(int u))
{
  team_t t = {DART_TEAM_NULL, 0, -1, NULL};
  dart_group_t g;
  CHECK_OK(dart_group_create(&g));
  for (int u = 0; u < nunits; u++)
    if (pick(u)) CHECK_OK(dart_group_addmember(g, DART_GLOBAL_UNIT_ID(u)));
  CHECK_OK(dart_team_create(DART_TEAM_ALL, g, &t.team));
  CHECK_OK(dart_group_destroy(&g));
  if (t.team == DART_TEAM_NULL) return t;
  size_t size;
  dart_team_unit_t my;
  CHECK_OK(dart_team_size(t.team, &size));
  CHECK_OK(dart_team_myid(t.team, &my));
  t.size = (int)size;
  t.myid = my.id;
  t.global = malloc(size * sizeof *t.global);
  for (int u = 0; u < t.size; u++) {
    dart_global_unit_t gu;
    CHECK_OK(dart_team_unit_l2g(t.team, DART_TEAM_UNIT_ID(u), &gu));
    t.global[u] = gu.id;
  }
  return t;
}

static void drop_team(team_t *t)
{
  if (t->team != DART_TEAM_NULL) CHECK_OK(dart_team_destroy(&t->team));
  free(t->global);
}

static bool all_but_first(int u) { return u > 0; }
static bool even(int u) { return u % 2 == 0; }
static int node_size;
static bool my_node(int u) { return u / node_size == me / node_size; }

int main(int argc, char **argv)
{
  dart_test_init(&argc, &argv);
  me = dart_test_unit;
  nunits = dart_test_units;
  const bool checked = argc > 1 && strcmp(argv[1], "check") == 0;
  if (checked) {
    check_checked();
    return dart_test_finish();
  }
  dart_datatype_t pair;
  dart_operation_t affine;
  CHECK_OK(dart_type_create_custom(sizeof(affine_t), &pair));
  CHECK_OK(dart_op_create(affine_op, NULL, false, pair, false, &affine));

  team_t all = {DART_TEAM_ALL, nunits, me, NULL};
  all.global = malloc((size_t)nunits * sizeof *all.global);
  for (int u = 0; u < nunits; u++) all.global[u] = u;

  for (int handles = 0; handles < 2; handles++) {
    use_handles = handles;
    all_collectives(&all, pair, affine);
    if (nunits >= 3) {
      team_t rest = make_team(all_but_first);
      if (rest.team != DART_TEAM_NULL) all_collectives(&rest, pair, affine);
      drop_team(&rest);
      team_t evens = make_team(even);
      if (evens.team != DART_TEAM_NULL) all_collectives(&evens, pair, affine);
      drop_team(&evens);
    }
  }
  check_overlap(&all);
  /* MPI's blocking collectives (DART_COLL=mpi) serve nothing else */
  const char *coll = getenv("DART_COLL");
  const bool native = coll != NULL && strcmp(coll, "mpi") == 0;
  if (!native) check_progress_elsewhere(&all);

  if (!native) {
    /* only node peers see each other's calls */
    node_size = units_per_node();
    team_t node = make_team(my_node);
    check_mismatch(&node);
    drop_team(&node);
  }
  free(all.global);
  CHECK_OK(dart_op_destroy(&affine));
  CHECK_OK(dart_type_destroy(&pair));
  return dart_test_finish();
}
