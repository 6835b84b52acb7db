/*
 * Segment ids, as DASH relies on them (DART-MPI's behaviour):
 *   order    with DART_SEGID_REUSE=latest (the default) a freed id is issued
 *            again by the next allocation or registration; with delayed,
 *            fresh ids come first, then the oldest freed
 *   local    dart_team_memderegister is local: a subset of the team
 *            deregisters (the others carry on, nobody waits), the next
 *            registrations still get one id on every unit, and their
 *            memory is reached through it
 *   agree    once every id has been issued on a team of two, units whose
 *            tables differ agree on the lowest id free on both, or all fail
 *            with DART_ERR_NOMEM when none is
 * Every unit checks the others' ids (allgather) and the memory behind them.
 */
#include "dart_test.h"

#define SEG_IDS 32767 /* per table of a team */

static int me, n;
static bool delayed;

/* Every unit of team got the same segid in g. */
static void check_same_id(int line, dart_team_t team, dart_gptr_t g)
{
  size_t size = 0;
  CHECK_OK(dart_team_size(team, &size));
  int16_t *ids = calloc(size, sizeof *ids);
  CHECK_OK(dart_allgather(&g.segid, ids, 1, DART_TYPE_SHORT, team));
  for (size_t u = 0; u < size; u++)
    if (ids[u] != g.segid)
      FAIL_AT(line, "team unit %zu has segid %d, this one %d", u, ids[u],
              g.segid);
  free(ids);
}

static void test_order(void)
{
  dart_gptr_t a, b, c;
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 8, DART_TYPE_LONG, &a));
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 8, DART_TYPE_LONG, &b));
  CHECK(a.segid > 0 && b.segid > 0 && a.segid != b.segid);
  CHECK_OK(dart_team_memfree(a));
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 8, DART_TYPE_LONG, &c));
  if (delayed) CHECK(c.segid != a.segid && c.segid != b.segid);
  else CHECK_EQ(c.segid, a.segid);
  check_same_id(__LINE__, DART_TEAM_ALL, c);
  CHECK_OK(dart_team_memfree(b));
  CHECK_OK(dart_team_memfree(c));

  /* registrations: their own ids, negative, in the same order */
  long buf[3][4];
  dart_gptr_t r[3];
  for (int i = 0; i < 2; i++)
    CHECK_OK(dart_team_memregister(DART_TEAM_ALL, 4, DART_TYPE_LONG, buf[i],
                                   &r[i]));
  CHECK(r[0].segid < 0 && r[1].segid < 0 && r[0].segid != r[1].segid);
  CHECK_OK(dart_team_memderegister(r[0]));
  CHECK_OK(dart_team_memregister(DART_TEAM_ALL, 4, DART_TYPE_LONG, buf[2],
                                 &r[2]));
  if (delayed) CHECK(r[2].segid != r[0].segid && r[2].segid != r[1].segid);
  else CHECK_EQ(r[2].segid, r[0].segid);
  check_same_id(__LINE__, DART_TEAM_ALL, r[2]);
  CHECK_OK(dart_team_memderegister(r[1]));
  CHECK_OK(dart_team_memderegister(r[2]));
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
}

/* A registration of 4 longs per unit, each unit's set to (unit, round). */
static dart_gptr_t register_round(long *buf, int round)
{
  for (int i = 0; i < 4; i++) buf[i] = 1000L * me + 10L * round + i;
  dart_gptr_t g = DART_GPTR_NULL;
  CHECK_OK(dart_team_memregister(DART_TEAM_ALL, 4, DART_TYPE_LONG, buf, &g));
  check_same_id(__LINE__, DART_TEAM_ALL, g);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  return g;
}

/* Reads every unit's part of g (still registered everywhere). */
static void check_round(int line, dart_gptr_t g, int round)
{
  for (int u = 0; u < n; u++) {
    long v[4] = {-1, -1, -1, -1};
    dart_gptr_t at = g;
    CHECK_OK(dart_gptr_setunit(&at, DART_TEAM_UNIT_ID(u)));
    CHECK_OK(dart_get_blocking(v, at, 4, DART_TYPE_LONG, DART_TYPE_LONG));
    for (int i = 0; i < 4; i++)
      if (v[i] != 1000L * u + 10L * round + i)
        FAIL_AT(line, "round %d, unit %d, element %d: %ld", round, u, i,
                v[i]);
  }
}

static void test_local_deregister(void)
{
  long b0[4], b1[4], b2[4], b3[4];
  dart_gptr_t g0 = register_round(b0, 0);
  dart_gptr_t g1 = register_round(b1, 1);
  check_round(__LINE__, g0, 0);
  check_round(__LINE__, g1, 1);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  /* only the odd units deregister g0: no collective, nobody waits */
  if (me % 2 == 1) CHECK_OK(dart_team_memderegister(g0));
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  dart_gptr_t g2 = register_round(b2, 2);
  check_round(__LINE__, g2, 2);
  check_round(__LINE__, g1, 1);
  /* g0's id is free on the odd units only: not issued while the others
   * hold it */
  if (n > 1) CHECK(g2.segid != g0.segid);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  if (me % 2 == 0) CHECK_OK(dart_team_memderegister(g0));
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  dart_gptr_t g3 = register_round(b3, 3);
  check_round(__LINE__, g3, 3);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_OK(dart_team_memderegister(g1));
  CHECK_OK(dart_team_memderegister(g2));
  CHECK_OK(dart_team_memderegister(g3));
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
}

/* On teams of two: every id registered, then tables that differ. */
static void test_agreement(void)
{
  dart_group_t all, pair;
  dart_team_t team = DART_TEAM_NULL;
  CHECK_OK(dart_group_create(&all));
  CHECK_OK(dart_group_create(&pair));
  for (int u = 0; u < n; u++)
    CHECK_OK(dart_group_addmember(all, DART_GLOBAL_UNIT_ID(u)));
  /* units 2k and 2k+1 (the last one alone when n is odd) */
  for (int u = me - me % 2; u < me - me % 2 + 2 && u < n; u++)
    CHECK_OK(dart_group_addmember(pair, DART_GLOBAL_UNIT_ID(u)));
  CHECK_OK(dart_team_create(DART_TEAM_ALL, pair, &team));
  CHECK_OK(dart_group_destroy(&pair));
  CHECK_OK(dart_group_destroy(&all));
  dart_team_unit_t mine;
  size_t size = 0;
  CHECK_OK(dart_team_myid(team, &mine));
  CHECK_OK(dart_team_size(team, &size));
  if (size != 2) {
    CHECK_OK(dart_team_destroy(&team));
    return;
  }
  dart_gptr_t *g = malloc(SEG_IDS * sizeof *g);
  int made = 0;
  while (made < SEG_IDS) {
    if (dart_team_memregister(team, 0, DART_TYPE_BYTE, NULL, &g[made]) !=
        DART_OK)
      break;
    made++;
  }
  CHECK_EQ(made, SEG_IDS);
  const int A = 10, B = 20, C = 30; /* indices into g */
  if (made == SEG_IDS) {
    /* unit 0 of the pair frees A, then C (its next: C); unit 1 frees C,
     * then B (its next: B); only C is free on both */
    const int first = mine.id == 0 ? A : C, second = mine.id == 0 ? C : B;
    CHECK_OK(dart_team_memderegister(g[first]));
    CHECK_OK(dart_team_memderegister(g[second]));
    dart_gptr_t again = DART_GPTR_NULL;
    CHECK_OK(dart_team_memregister(team, 0, DART_TYPE_BYTE, NULL, &again));
    CHECK_EQ(again.segid, g[C].segid);
    check_same_id(__LINE__, team, again);
    g[C] = again;
    /* now A is free on unit 0 and B on unit 1: nothing on both */
    dart_gptr_t none = DART_GPTR_NULL;
    CHECK_RET(dart_team_memregister(team, 0, DART_TYPE_BYTE, NULL, &none),
              DART_ERR_NOMEM);
    CHECK(DART_GPTR_ISNULL(none));
    for (int i = 0; i < made; i++)
      if (i != first && i != second) CHECK_OK(dart_team_memderegister(g[i]));
    CHECK_OK(dart_team_memderegister(g[C]));
  }
  free(g);
  CHECK_OK(dart_team_destroy(&team));
}

int main(int argc, char **argv)
{
  dart_test_init(&argc, &argv);
  me = dart_test_unit;
  n = dart_test_units;
  const char *reuse = getenv("DART_SEGID_REUSE");
  delayed = reuse && strcmp(reuse, "delayed") == 0;
  test_order();
  test_local_deregister();
  if (n <= 4) test_agreement();
  return dart_test_finish();
}
