/*
 * The route cache behind the hot paths (a small direct-mapped table of the
 * routes gptrs resolved to last): every public function that reads it
 * must find what the segment table says.
 *   conflicts  units and segments whose entries collide (unit ^ segment),
 *              used in turn by puts, gets, accumulates, fetch-and-op and
 *              compare-and-swap: every value lands where its gptr says
 *   bounds     on a route just used: the last element is reached, one
 *              past the part and misaligned atomics are refused with one
 *              log line naming the function, and nothing changes
 *   stale      routes of a team allocation and of registered memory used
 *              by every hot path, then freed: each call on the old gptr
 *              is refused with one log line
 *   counts     dart_path_count keeps the operations counted in the cache,
 *              across the frees that empty it
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dart_test_capture.h"

#define SEGS 3   /* team allocations, besides the local pool */
#define ROUNDS 6 /* rounds over every unit and segment */

static int me, nunits;

/* What unit `from` writes into its slot of unit u's part of segment s in
 * round r. */
static int64_t value(int r, int s, int u, int from)
{
  uint64_t id = (((uint64_t)r * 16 + (uint64_t)s) * 4096 + (uint64_t)u) *
                    4096 +
                (uint64_t)from;
  return (int64_t)(dart_test_mix64(id) >> 2);
}

/* Unit u's element i of the allocation at g. */
static dart_gptr_t at(dart_gptr_t g, int u, size_t i)
{
  g.unitid = u;
  g.addr_or_offs.offset += i * sizeof(int64_t);
  return g;
}

/* Calls that must be refused with exactly one log line naming func. */
#define CHECK_REFUSED(call, want, func)                                     \
  do {                                                                      \
    char log_[2048];                                                        \
    capture_begin();                                                        \
    dart_ret_t ret_ = (call);                                               \
    int lines_ = capture_end(log_, sizeof log_);                            \
    if (ret_ != (want) || lines_ != 1 || strstr(log_, func) == NULL)        \
      FAILF("%s returned %d (want %d) with %d log lines: %s", #call,        \
            (int)ret_, (int)(want), lines_, log_);                          \
  } while (0)

/*
 * Each part has one slot per unit (that unit writes it) and a counter per
 * unit (that unit adds to it). Round r: every unit writes its slot of
 * every unit's part of every segment, reads it back, adds 1 to its
 * counter there with an accumulate and with a fetch-and-op, and swaps the
 * slot once more by compare-and-swap: entries that collide are used in
 * turn, many times over.
 */
static void conflicts(void)
{
  const size_t per_unit = 2 * (size_t)nunits;
  dart_gptr_t seg[SEGS + 1];
  int64_t *mine[SEGS + 1];
  CHECK_OK(dart_memalloc(per_unit, DART_TYPE_LONGLONG, &seg[0]));
  for (int s = 1; s <= SEGS; s++)
    CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, per_unit,
                                        DART_TYPE_LONGLONG, &seg[s]));
  /* the pools' gptrs: everyone needs everyone's */
  dart_gptr_t *pools = malloc((size_t)nunits * sizeof *pools);
  CHECK_OK(dart_allgather(&seg[0], pools, sizeof(dart_gptr_t), DART_TYPE_BYTE,
                          DART_TEAM_ALL));
  for (int s = 0; s <= SEGS; s++) {
    dart_gptr_t own = s == 0 ? seg[0] : at(seg[s], me, 0);
    CHECK_OK(dart_gptr_getaddr(own, (void **)&mine[s]));
    for (size_t i = 0; i < per_unit; i++) mine[s][i] = 0;
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));

  for (int r = 0; r < ROUNDS; r++) {
    for (int s = 0; s <= SEGS; s++) {
      for (int u = 0; u < nunits; u++) {
        dart_gptr_t base = s == 0 ? pools[u] : seg[s];
        dart_gptr_t slot = at(base, u, (size_t)me);
        dart_gptr_t counter = at(base, u, (size_t)(nunits + me));
        int64_t v = value(r, s, u, me), got = 0, old = -1, one = 1;
        CHECK_OK(dart_put_blocking(slot, &v, 1, DART_TYPE_LONGLONG,
                                   DART_TYPE_LONGLONG));
        CHECK_OK(dart_get_blocking(&got, slot, 1, DART_TYPE_LONGLONG,
                                   DART_TYPE_LONGLONG));
        if (got != v)
          FAILF("round %d segment %d unit %d: read %lld, wrote %lld", r, s,
                u, (long long)got, (long long)v);
        CHECK_OK(dart_accumulate(counter, &one, 1, DART_TYPE_LONGLONG,
                                 DART_OP_SUM));
        CHECK_OK(dart_fetch_and_op(counter, &one, &old, DART_TYPE_LONGLONG,
                                   DART_OP_SUM));
        CHECK_EQ(old, 2 * r + 1);
        int64_t next = v + 1, seen = 0;
        CHECK_OK(dart_compare_and_swap(slot, &next, &v, &seen,
                                       DART_TYPE_LONGLONG));
        CHECK_EQ(seen, v);
        CHECK_OK(dart_put(slot, &next, 1, DART_TYPE_LONGLONG,
                          DART_TYPE_LONGLONG));
        CHECK_OK(dart_flush(slot));
      }
    }
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  for (int s = 0; s <= SEGS; s++)
    for (int from = 0; from < nunits; from++) {
      CHECK_EQ(__atomic_load_n(&mine[s][from], __ATOMIC_SEQ_CST),
               value(ROUNDS - 1, s, me, from) + 1);
      CHECK_EQ(__atomic_load_n(&mine[s][nunits + from], __ATOMIC_SEQ_CST),
               2 * ROUNDS);
    }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  for (int s = SEGS; s >= 1; s--) CHECK_OK(dart_team_memfree(seg[s]));
  CHECK_OK(dart_memfree(seg[0]));
  free(pools);
}

/* On a route the hot paths have just used, the bounds and alignment of the
 * part still hold, with the usual one log line. */
static void bounds(void)
{
  const size_t n = 4;
  dart_gptr_t g;
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, n, DART_TYPE_LONGLONG,
                                      &g));
  int64_t *own;
  CHECK_OK(dart_gptr_getaddr(at(g, me, 0), (void **)&own));
  for (size_t i = 0; i < n; i++) own[i] = -1;
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  const int u = (me + 1) % nunits;
  int64_t v = 7, pair[2] = {8, 9}, got = 0, one = 1;
  int32_t half = 3;
  dart_handle_t h = DART_HANDLE_NULL;
  /* the last element: reached, and the route is cached */
  CHECK_OK(dart_put_blocking(at(g, u, n - 1), &v, 1, DART_TYPE_LONGLONG,
                             DART_TYPE_LONGLONG));
  CHECK_OK(dart_get_blocking(&got, at(g, u, n - 1), 1, DART_TYPE_LONGLONG,
                             DART_TYPE_LONGLONG));
  CHECK_EQ(got, 7);
  CHECK_OK(dart_flush(at(g, u, n))); /* the end of the part: no bytes */
  /* one element past the end, two from the last, and misaligned */
  dart_gptr_t past = at(g, u, n), last = at(g, u, n - 1);
  dart_gptr_t odd = last;
  odd.addr_or_offs.offset -= 4;
  CHECK_REFUSED(dart_put_blocking(past, &v, 1, DART_TYPE_LONGLONG,
                                  DART_TYPE_LONGLONG),
                DART_ERR_INVAL, "dart_put_blocking");
  CHECK_REFUSED(dart_put_blocking(last, pair, 2, DART_TYPE_LONGLONG,
                                  DART_TYPE_LONGLONG),
                DART_ERR_INVAL, "dart_put_blocking");
  CHECK_REFUSED(dart_get_blocking(pair, last, 2, DART_TYPE_LONGLONG,
                                  DART_TYPE_LONGLONG),
                DART_ERR_INVAL, "dart_get_blocking");
  CHECK_REFUSED(dart_put(past, &v, 1, DART_TYPE_LONGLONG, DART_TYPE_LONGLONG),
                DART_ERR_INVAL, "dart_put");
  CHECK_REFUSED(dart_get_handle(pair, last, 2, DART_TYPE_LONGLONG,
                                DART_TYPE_LONGLONG, &h),
                DART_ERR_INVAL, "dart_get_handle");
  CHECK_REFUSED(dart_put_blocking(at(g, u, n - 1), &half, 2, DART_TYPE_INT,
                                  DART_TYPE_LONGLONG),
                DART_ERR_INVAL, "dart_put_blocking");
  CHECK_REFUSED(dart_accumulate(past, &one, 1, DART_TYPE_LONGLONG,
                                DART_OP_SUM),
                DART_ERR_INVAL, "dart_accumulate");
  CHECK_REFUSED(dart_accumulate(odd, &one, 1, DART_TYPE_LONGLONG,
                                DART_OP_SUM),
                DART_ERR_INVAL, "dart_accumulate");
  CHECK_REFUSED(dart_fetch_and_op(odd, &one, &got, DART_TYPE_LONGLONG,
                                  DART_OP_SUM),
                DART_ERR_INVAL, "dart_fetch_and_op");
  CHECK_REFUSED(dart_compare_and_swap(past, &one, &v, &got,
                                      DART_TYPE_LONGLONG),
                DART_ERR_INVAL, "dart_compare_and_swap");
  dart_gptr_t beyond = past;
  beyond.addr_or_offs.offset += 1;
  CHECK_REFUSED(dart_flush(beyond), DART_ERR_INVAL, "dart_flush");
  CHECK(h == DART_HANDLE_NULL);
  CHECK_EQ(got, 7);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  /* only the last element changed: unit me-1 wrote 7 there */
  for (size_t i = 0; i < n; i++) CHECK_EQ(own[i], i == n - 1 ? 7 : -1);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_OK(dart_team_memfree(g));
}

/* Every hot path on a route, then the segment goes: the old gptr finds
 * nothing, cached or not. */
static void stale(void)
{
  dart_gptr_t g, r;
  int64_t registered[2] = {0, 0};
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 2, DART_TYPE_LONGLONG,
                                      &g));
  CHECK_OK(dart_team_memregister(DART_TEAM_ALL, 2, DART_TYPE_LONGLONG,
                                 registered, &r));
  const int u = (me + 1) % nunits;
  dart_gptr_t targets[2] = {at(g, u, 0), at(r, u, 0)};
  int64_t v = 5, got = 0, one = 1;
  dart_handle_t h = DART_HANDLE_NULL;
  for (int t = 0; t < 2; t++) {
    dart_gptr_t x = targets[t];
    CHECK_OK(dart_put_blocking(x, &v, 1, DART_TYPE_LONGLONG,
                               DART_TYPE_LONGLONG));
    CHECK_OK(dart_get_blocking(&got, x, 1, DART_TYPE_LONGLONG,
                               DART_TYPE_LONGLONG));
    CHECK_OK(dart_put(x, &v, 1, DART_TYPE_LONGLONG, DART_TYPE_LONGLONG));
    CHECK_OK(dart_get(&got, x, 1, DART_TYPE_LONGLONG, DART_TYPE_LONGLONG));
    CHECK_OK(dart_flush(x));
    CHECK_OK(dart_put_handle(x, &v, 1, DART_TYPE_LONGLONG, DART_TYPE_LONGLONG,
                             &h));
    CHECK_OK(dart_wait(&h));
    CHECK_OK(dart_accumulate(x, &one, 1, DART_TYPE_LONGLONG, DART_OP_SUM));
    CHECK_OK(dart_fetch_and_op(x, &one, &got, DART_TYPE_LONGLONG,
                               DART_OP_SUM));
    CHECK_EQ(got, 6);
    CHECK_OK(dart_compare_and_swap(x, &v, &v, &got, DART_TYPE_LONGLONG));
    CHECK_OK(dart_flush_local(x));
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_OK(dart_team_memfree(g));
  CHECK_OK(dart_team_memderegister(r));
  for (int t = 0; t < 2; t++) {
    dart_gptr_t x = targets[t];
    got = -3;
    CHECK_REFUSED(dart_put_blocking(x, &v, 1, DART_TYPE_LONGLONG,
                                    DART_TYPE_LONGLONG),
                  DART_ERR_INVAL, "dart_put_blocking");
    CHECK_REFUSED(dart_get_blocking(&got, x, 1, DART_TYPE_LONGLONG,
                                    DART_TYPE_LONGLONG),
                  DART_ERR_INVAL, "dart_get_blocking");
    CHECK_REFUSED(dart_put(x, &v, 1, DART_TYPE_LONGLONG, DART_TYPE_LONGLONG),
                  DART_ERR_INVAL, "dart_put");
    CHECK_REFUSED(dart_get(&got, x, 1, DART_TYPE_LONGLONG,
                           DART_TYPE_LONGLONG),
                  DART_ERR_INVAL, "dart_get");
    CHECK_REFUSED(dart_put_handle(x, &v, 1, DART_TYPE_LONGLONG,
                                  DART_TYPE_LONGLONG, &h),
                  DART_ERR_INVAL, "dart_put_handle");
    CHECK_REFUSED(dart_get_handle(&got, x, 1, DART_TYPE_LONGLONG,
                                  DART_TYPE_LONGLONG, &h),
                  DART_ERR_INVAL, "dart_get_handle");
    CHECK_REFUSED(dart_flush(x), DART_ERR_INVAL, "dart_flush");
    CHECK_REFUSED(dart_flush_local(x), DART_ERR_INVAL, "dart_flush_local");
    CHECK_REFUSED(dart_accumulate(x, &one, 1, DART_TYPE_LONGLONG,
                                  DART_OP_SUM),
                  DART_ERR_INVAL, "dart_accumulate");
    CHECK_REFUSED(dart_accumulate_blocking_local(x, &one, 1,
                                                 DART_TYPE_LONGLONG,
                                                 DART_OP_SUM),
                  DART_ERR_INVAL, "dart_accumulate_blocking_local");
    CHECK_REFUSED(dart_fetch_and_op(x, &one, &got, DART_TYPE_LONGLONG,
                                    DART_OP_SUM),
                  DART_ERR_INVAL, "dart_fetch_and_op");
    CHECK_REFUSED(dart_compare_and_swap(x, &v, &v, &got, DART_TYPE_LONGLONG),
                  DART_ERR_INVAL, "dart_compare_and_swap");
    CHECK(h == DART_HANDLE_NULL);
    CHECK_EQ(got, -3);
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
}

static uint64_t total_ops(void)
{
  uint64_t sum = 0;
  for (int p = 0; p < DART_PATH_COUNT; p++) {
    uint64_t n = 0;
    CHECK_OK(dart_path_count((dart_path_t)p, &n));
    sum += n;
  }
  return sum;
}

/* The operations counted while a route is cached stay counted when a free
 * empties the cache: n puts and n gets count 2n, before and after. */
static void counts(void)
{
  const int n = 100;
  dart_gptr_t g;
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 1, DART_TYPE_LONGLONG,
                                      &g));
  dart_gptr_t x = at(g, (me + 1) % nunits, 0);
  int64_t v = 1;
  uint64_t before = total_ops();
  for (int i = 0; i < n; i++) {
    CHECK_OK(dart_put_blocking(x, &v, 1, DART_TYPE_LONGLONG,
                               DART_TYPE_LONGLONG));
    CHECK_OK(dart_get_blocking(&v, x, 1, DART_TYPE_LONGLONG,
                               DART_TYPE_LONGLONG));
  }
  CHECK_EQ(total_ops() - before, 2 * n);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_OK(dart_team_memfree(g));
  CHECK_EQ(total_ops() - before, 2 * n);
}

int main(int argc, char **argv)
{
  dart_test_init(&argc, &argv);
  capture_init();
  me = dart_test_unit;
  nunits = dart_test_units;
  conflicts();
  bounds();
  stale();
  counts();
  return dart_test_finish();
}
