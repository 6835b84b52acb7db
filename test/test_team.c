/*
 * Teams: the group of DART_TEAM_ALL, teams from groups (even, odd, first
 * half, single unit, all in reverse order), nested teams, clones, ids
 * (unique among live teams, never reused, the same on every member),
 * size/myid/l2g/g2l, barrier/bcast/allreduce on each team, destroy (also
 * with a collective allocation left on the team), bad input, and 200 teams
 * created and destroyed in a loop.
 */
#include "dart_test.h"

static int nunits;
static int me;

#define MAX_SEEN 1024
static dart_team_t seen[MAX_SEEN]; /* every id this unit was given */
static int nseen;
static dart_team_t live[64]; /* ids of the teams this unit is in now */
static int nlive;

/* A new team id this unit got as a member: valid, unique, never seen. */
static void note_new_team(dart_team_t t, const char *what, int line)
{
  if (t == DART_TEAM_NULL || t == DART_TEAM_ALL) {
    FAIL_AT(line, "%s: member got team id %d", what, (int)t);
    return;
  }
  for (int i = 0; i < nlive; i++) {
    if (live[i] == t) {
      FAIL_AT(line, "%s: team id %d is already the id of a live team", what,
            (int)t);
    }
  }
  for (int i = 0; i < nseen; i++) {
    if (seen[i] == t) {
      FAIL_AT(line, "%s: team id %d was used before (ids must stay unique)",
            what, (int)t);
      break;
    }
  }
  if (nseen < MAX_SEEN) seen[nseen++] = t;
  if (nlive < (int)(sizeof live / sizeof live[0])) live[nlive++] = t;
}

static void note_destroyed(dart_team_t t)
{
  for (int i = 0; i < nlive; i++) {
    if (live[i] == t) {
      live[i] = live[--nlive];
      return;
    }
  }
}

static dart_group_t make_group(const int *mask, int descending)
{
  dart_group_t g = NULL;
  CHECK_OK(dart_group_create(&g));
  for (int i = 0; i < nunits; i++) {
    int u = descending ? nunits - 1 - i : i;
    if (mask[u]) CHECK_OK(dart_group_addmember(g, DART_GLOBAL_UNIT_ID(u)));
  }
  return g;
}

/*
 * Collective over parent (its members call it): creates a team of the units
 * in mask, checks that members get a fresh id and others DART_TEAM_NULL.
 */
static dart_team_t create_team_at(dart_team_t parent, const int *mask,
                                  int descending, const char *what, int line)
{
  dart_group_t g = make_group(mask, descending);
  dart_team_t t = (dart_team_t)-99;
  dart_ret_t ret = dart_team_create(parent, g, &t);
  if (ret != DART_OK) {
    FAIL_AT(line, "%s: dart_team_create returned %d", what, (int)ret);
    t = DART_TEAM_NULL;
  } else if (mask[me]) {
    note_new_team(t, what, line);
  } else if (t != DART_TEAM_NULL) {
    FAIL_AT(line, "%s: non-member got team id %d, not DART_TEAM_NULL", what,
          (int)t);
  }
  CHECK_OK(dart_group_destroy(&g));
  return t;
}
#define CREATE_TEAM(parent, mask, desc, what) \
  create_team_at((parent), (mask), (desc), (what), __LINE__)

/* Checks a group against a membership mask (size and sorted members). */
static void check_group_at(dart_group_t g, const int *mask, const char *what,
                           int line)
{
  size_t m = 0, s = 9999;
  for (int u = 0; u < nunits; u++) m += mask[u] != 0;
  CHECK_OK(dart_group_size(g, &s));
  if (s != m) {
    FAIL_AT(line, "%s: group size %zu, want %zu", what, s, m);
    return;
  }
  dart_global_unit_t *mem = malloc((m + 1) * sizeof *mem);
  CHECK_OK(dart_group_getmembers(g, mem));
  size_t i = 0;
  for (int u = 0; u < nunits; u++) {
    if (!mask[u]) continue;
    if (mem[i].id != u) {
      FAIL_AT(line, "%s: group member %zu is %d, want %d", what, i,
            (int)mem[i].id, u);
      break;
    }
    i++;
  }
  free(mem);
}

/*
 * Called by the members of team t (collective over t): size, myid, l2g,
 * g2l, the team's group, barrier, bcast from every root, allreduce, and
 * that every member has the same team id.
 */
static void check_team_at(dart_team_t t, const int *mask, const char *what,
                          int line)
{
  int m = 0, myrank = -1;
  int *members = malloc((size_t)nunits * sizeof *members);
  for (int u = 0; u < nunits; u++) {
    if (!mask[u]) continue;
    if (u == me) myrank = m;
    members[m++] = u;
  }
  if (myrank < 0) {
    FAIL_AT(line, "%s: test error, check_team called by a non-member", what);
    free(members);
    return;
  }
  size_t size = 0;
  dart_ret_t ret = dart_team_size(t, &size);
  if (ret != DART_OK || size != (size_t)m) {
    FAIL_AT(line, "%s: dart_team_size returned %d, size %zu, want %d", what,
          (int)ret, size, m);
  }
  dart_team_unit_t tu = {-5};
  ret = dart_team_myid(t, &tu);
  if (ret != DART_OK || tu.id != myrank) {
    FAIL_AT(line, "%s: dart_team_myid returned %d, id %d, want %d", what,
          (int)ret, (int)tu.id, myrank);
  }
  for (int i = 0; i < m; i++) {
    dart_global_unit_t gu = {-5};
    ret = dart_team_unit_l2g(t, DART_TEAM_UNIT_ID(i), &gu);
    if (ret != DART_OK || gu.id != members[i]) {
      FAIL_AT(line, "%s: l2g(%d) returned %d, id %d, want %d", what, i,
            (int)ret, (int)gu.id, members[i]);
    }
  }
  for (int u = 0, i = 0; u < nunits; u++) {
    dart_team_unit_t lu = {-5};
    ret = dart_team_unit_g2l(t, DART_GLOBAL_UNIT_ID(u), &lu);
    if (mask[u]) {
      if (ret != DART_OK || lu.id != i) {
        FAIL_AT(line, "%s: g2l(%d) returned %d, id %d, want %d", what, u,
              (int)ret, (int)lu.id, i);
      }
      i++;
    } else if (ret != DART_ERR_NOTFOUND) {
      FAIL_AT(line, "%s: g2l(non-member %d) returned %d, want NOTFOUND", what,
            u, (int)ret);
    }
  }
  {
    dart_global_unit_t gu;
    ret = dart_team_unit_l2g(t, DART_TEAM_UNIT_ID(m), &gu);
    if (ret != DART_ERR_INVAL) {
      FAIL_AT(line, "%s: l2g(size %d) returned %d, want INVAL", what, m,
            (int)ret);
    }
    ret = dart_team_unit_l2g(t, DART_TEAM_UNIT_ID(-1), &gu);
    if (ret != DART_ERR_INVAL) {
      FAIL_AT(line, "%s: l2g(-1) returned %d, want INVAL", what, (int)ret);
    }
  }
  {
    dart_group_t g = NULL;
    ret = dart_team_get_group(t, &g);
    if (ret != DART_OK || g == NULL) {
      FAIL_AT(line, "%s: dart_team_get_group returned %d", what, (int)ret);
    } else {
      check_group_at(g, mask, what, line);
      CHECK_OK(dart_group_destroy(&g));
    }
  }

  ret = dart_barrier(t);
  if (ret != DART_OK) FAIL_AT(line, "%s: barrier returned %d", what, (int)ret);

  for (int r = 0; r < m; r++) {
    int buf[3];
    for (int j = 0; j < 3; j++) {
      buf[j] = (myrank == r) ? members[r] * 100 + 7 * r + j : -1;
    }
    ret = dart_bcast(buf, 3, DART_TYPE_INT, DART_TEAM_UNIT_ID(r), t);
    if (ret != DART_OK) {
      FAIL_AT(line, "%s: bcast(root %d) returned %d", what, r, (int)ret);
      continue;
    }
    for (int j = 0; j < 3; j++) {
      if (buf[j] != members[r] * 100 + 7 * r + j) {
        FAIL_AT(line, "%s: bcast(root %d) element %d is %d, want %d", what, r,
              j, buf[j], members[r] * 100 + 7 * r + j);
        break;
      }
    }
  }

  long sendv[2] = {me, myrank}, sum[2] = {-1, -1};
  ret = dart_allreduce(sendv, sum, 2, DART_TYPE_LONG, DART_OP_SUM, t);
  long want_sum = 0;
  for (int i = 0; i < m; i++) want_sum += members[i];
  if (ret != DART_OK || sum[0] != want_sum ||
      sum[1] != (long)m * (m - 1) / 2) {
    FAIL_AT(line, "%s: allreduce returned %d, sums %ld %ld, want %ld %ld", what,
          (int)ret, sum[0], sum[1], want_sum, (long)m * (m - 1) / 2);
  }
  int tid = t, tmin = -999, tmax = -999;
  CHECK_OK(dart_allreduce(&tid, &tmin, 1, DART_TYPE_INT, DART_OP_MIN, t));
  CHECK_OK(dart_allreduce(&tid, &tmax, 1, DART_TYPE_INT, DART_OP_MAX, t));
  if (tmin != tid || tmax != tid) {
    FAIL_AT(line, "%s: members disagree on the team id (%d..%d, mine %d)", what,
          tmin, tmax, tid);
  }
  free(members);
}
#define CHECK_TEAM(t, mask, what) check_team_at((t), (mask), (what), __LINE__)

/* Destroys a team this unit is a member of and checks the id is dead. */
static void destroy_team_at(dart_team_t *t, int check_stale, int line)
{
  dart_team_t old = *t;
  dart_ret_t ret = dart_team_destroy(t);
  if (ret != DART_OK) {
    FAIL_AT(line, "dart_team_destroy(%d) returned %d", (int)old, (int)ret);
  }
  if (*t != DART_TEAM_NULL) {
    FAIL_AT(line, "dart_team_destroy(%d) left the id as %d", (int)old, (int)*t);
  }
  note_destroyed(old);
  if (check_stale) {
    size_t s = 0;
    dart_team_unit_t tu;
    ret = dart_team_size(old, &s);
    if (ret != DART_ERR_INVAL) {
      FAIL_AT(line, "dart_team_size(destroyed team %d) returned %d, want INVAL",
            (int)old, (int)ret);
    }
    ret = dart_team_myid(old, &tu);
    if (ret != DART_ERR_INVAL) {
      FAIL_AT(line, "dart_team_myid(destroyed team %d) returned %d, want INVAL",
            (int)old, (int)ret);
    }
  }
}
#define DESTROY_TEAM(t) destroy_team_at((t), 1, __LINE__)

int main(int argc, char **argv)
{
  dart_test_init(&argc, &argv);
  nunits = dart_test_units;
  me = dart_test_unit;
  live[nlive++] = DART_TEAM_ALL;
  seen[nseen++] = DART_TEAM_ALL;

  int *all = calloc((size_t)nunits, sizeof(int));
  int *even = calloc((size_t)nunits, sizeof(int));
  int *odd = calloc((size_t)nunits, sizeof(int));
  int *half = calloc((size_t)nunits, sizeof(int));
  int *single = calloc((size_t)nunits, sizeof(int));
  int *nested = calloc((size_t)nunits, sizeof(int));
  int *allbut0 = calloc((size_t)nunits, sizeof(int));
  int h = (nunits + 1) / 2;
  for (int u = 0; u < nunits; u++) {
    all[u] = 1;
    even[u] = (u % 2 == 0);
    odd[u] = (u % 2 == 1);
    half[u] = (u < h);
    single[u] = (u == nunits - 1);
    /* a sub-team of the first half: all of it but unit 0 (if possible) */
    nested[u] = (u < h) && (h == 1 || u > 0);
    allbut0[u] = (nunits == 1 || u > 0);
  }

  /* ---- the group of DART_TEAM_ALL ---- */
  {
    dart_group_t g = NULL;
    CHECK_OK(dart_team_get_group(DART_TEAM_ALL, &g));
    CHECK(g != NULL);
    if (g) {
      check_group_at(g, all, "group of DART_TEAM_ALL", __LINE__);
      CHECK_OK(dart_group_destroy(&g));
    }
    CHECK_TEAM(DART_TEAM_ALL, all, "DART_TEAM_ALL");
  }

  /* ---- teams from groups ---- */
  dart_team_t t_even = CREATE_TEAM(DART_TEAM_ALL, even, 0, "even units");
  dart_team_t t_odd = DART_TEAM_NULL;
  if (nunits >= 2) t_odd = CREATE_TEAM(DART_TEAM_ALL, odd, 1, "odd units");
  dart_team_t t_half = CREATE_TEAM(DART_TEAM_ALL, half, 0, "first half");
  dart_team_t t_single = CREATE_TEAM(DART_TEAM_ALL, single, 0, "single unit");
  dart_team_t t_rev = CREATE_TEAM(DART_TEAM_ALL, all, 1, "all, reverse add");

  if (even[me]) CHECK_TEAM(t_even, even, "even units");
  if (nunits >= 2 && odd[me]) CHECK_TEAM(t_odd, odd, "odd units");
  if (half[me]) CHECK_TEAM(t_half, half, "first half");
  if (single[me]) CHECK_TEAM(t_single, single, "single unit");
  CHECK_TEAM(t_rev, all, "all, reverse add");

  /* ---- nested: a sub-team of the first half ---- */
  dart_team_t t_nested = DART_TEAM_NULL;
  if (half[me]) {
    t_nested = CREATE_TEAM(t_half, nested, 0, "sub-team of the first half");
    if (nested[me]) CHECK_TEAM(t_nested, nested, "sub-team of the first half");
  }
  /* and a sub-team of that (its first member alone) */
  dart_team_t t_nested2 = DART_TEAM_NULL;
  int *first_nested = calloc((size_t)nunits, sizeof(int));
  for (int u = 0; u < nunits; u++) {
    if (nested[u]) {
      first_nested[u] = 1;
      break;
    }
  }
  if (nested[me]) {
    t_nested2 = CREATE_TEAM(t_nested, first_nested, 0, "sub-sub-team");
    if (first_nested[me]) CHECK_TEAM(t_nested2, first_nested, "sub-sub-team");
  }

  /* ---- clones ---- */
  dart_team_t t_clone_all = (dart_team_t)-99;
  CHECK_OK(dart_team_clone(DART_TEAM_ALL, &t_clone_all));
  note_new_team(t_clone_all, "clone of ALL", __LINE__);
  CHECK_TEAM(t_clone_all, all, "clone of ALL");
  dart_team_t t_clone_even = DART_TEAM_NULL;
  if (even[me]) {
    t_clone_even = (dart_team_t)-99;
    CHECK_OK(dart_team_clone(t_even, &t_clone_even));
    note_new_team(t_clone_even, "clone of the even team", __LINE__);
    CHECK_TEAM(t_clone_even, even, "clone of the even team");
  }

  /* ---- a collective allocation left on a team is freed by destroy ---- */
  {
    dart_team_t t_alloc = CREATE_TEAM(DART_TEAM_ALL, allbut0, 0, "alloc team");
    if (allbut0[me]) {
      CHECK_TEAM(t_alloc, allbut0, "alloc team");
      size_t m = 0;
      dart_team_unit_t tu = {-1};
      CHECK_OK(dart_team_size(t_alloc, &m));
      CHECK_OK(dart_team_myid(t_alloc, &tu));
      dart_gptr_t g = DART_GPTR_NULL, g2 = DART_GPTR_NULL;
      CHECK_OK(dart_team_memalloc_aligned(t_alloc, 16, DART_TYPE_INT, &g));
      CHECK_OK(dart_team_memalloc_aligned(t_alloc, 8, DART_TYPE_DOUBLE, &g2));
      CHECK_EQ(g.teamid, t_alloc);
      CHECK_EQ(g.unitid, 0);
      dart_gptr_t mine = g;
      CHECK_OK(dart_gptr_setunit(&mine, tu));
      void *vaddr = NULL;
      CHECK_OK(dart_gptr_getaddr(mine, &vaddr));
      CHECK(vaddr != NULL);
      int *addr = vaddr;
      if (addr) {
        for (int j = 0; j < 16; j++) addr[j] = me * 1000 + j;
      }
      CHECK_OK(dart_barrier(t_alloc));
      /* read the next member's part */
      int next = (tu.id + 1) % (int)m;
      dart_global_unit_t gnext = {-1};
      CHECK_OK(dart_team_unit_l2g(t_alloc, DART_TEAM_UNIT_ID(next), &gnext));
      dart_gptr_t there = g;
      CHECK_OK(dart_gptr_setunit(&there, DART_TEAM_UNIT_ID(next)));
      int got[16];
      for (int j = 0; j < 16; j++) got[j] = -1;
      CHECK_OK(dart_get_blocking(got, there, 16, DART_TYPE_INT, DART_TYPE_INT));
      for (int j = 0; j < 16; j++) {
        if (got[j] != gnext.id * 1000 + j) {
          FAIL_AT(__LINE__, "alloc team: element %d of unit %d is %d, want %d",
                j, (int)gnext.id, got[j], gnext.id * 1000 + j);
          break;
        }
      }
      CHECK_OK(dart_barrier(t_alloc));
      /* destroy the team with both allocations alive */
      DESTROY_TEAM(&t_alloc);
      /* the gptr into the freed allocation is stale now */
      void *stale = (void *)&got;
      CHECK_RET(dart_gptr_getaddr(mine, &stale), DART_ERR_INVAL);
    } else {
      CHECK(t_alloc == DART_TEAM_NULL);
    }
    /* collective allocation still works afterwards */
    dart_gptr_t ga = DART_GPTR_NULL;
    CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 8, DART_TYPE_LONG, &ga));
    dart_gptr_t gmine = ga;
    CHECK_OK(dart_gptr_setunit(&gmine, DART_TEAM_UNIT_ID(me)));
    long vals[8], back[8];
    for (int j = 0; j < 8; j++) {
      vals[j] = me * 10 + j;
      back[j] = -1;
    }
    CHECK_OK(dart_put_blocking(gmine, vals, 8, DART_TYPE_LONG, DART_TYPE_LONG));
    CHECK_OK(dart_get_blocking(back, gmine, 8, DART_TYPE_LONG, DART_TYPE_LONG));
    for (int j = 0; j < 8; j++) CHECK_EQ(back[j], me * 10 + j);
    CHECK_OK(dart_team_memfree(ga));
  }

  /* ---- ids are unique among the live teams (checked as created) ---- */
  for (int i = 0; i < nlive; i++) {
    for (int j = i + 1; j < nlive; j++) CHECK(live[i] != live[j]);
  }

  /* ---- destroy (children before parents, same order everywhere) ---- */
  if (even[me]) DESTROY_TEAM(&t_clone_even);
  DESTROY_TEAM(&t_clone_all);
  if (first_nested[me]) DESTROY_TEAM(&t_nested2);
  if (nested[me]) DESTROY_TEAM(&t_nested);
  DESTROY_TEAM(&t_rev);
  if (single[me]) DESTROY_TEAM(&t_single);
  if (half[me]) DESTROY_TEAM(&t_half);
  if (nunits >= 2 && odd[me]) DESTROY_TEAM(&t_odd);
  if (even[me]) DESTROY_TEAM(&t_even);
  CHECK(t_even == DART_TEAM_NULL && t_odd == DART_TEAM_NULL &&
        t_half == DART_TEAM_NULL && t_single == DART_TEAM_NULL &&
        t_nested == DART_TEAM_NULL && t_nested2 == DART_TEAM_NULL);
  CHECK_EQ(nlive, 1);

  /* ---- DART_TEAM_ALL cannot be destroyed; bad input ---- */
  {
    dart_team_t t = DART_TEAM_ALL;
    CHECK_RET(dart_team_destroy(&t), DART_ERR_INVAL);
    CHECK_EQ(t, DART_TEAM_ALL);
    t = DART_TEAM_NULL;
    CHECK_RET(dart_team_destroy(&t), DART_ERR_INVAL);
    CHECK_RET(dart_team_destroy(NULL), DART_ERR_INVAL);

    size_t s = 0;
    dart_team_unit_t tu;
    dart_global_unit_t gu;
    dart_group_t g = NULL;
    const dart_team_t unknown = (dart_team_t)12345;
    CHECK_RET(dart_team_size(DART_TEAM_NULL, &s), DART_ERR_INVAL);
    CHECK_RET(dart_team_size(unknown, &s), DART_ERR_INVAL);
    CHECK_RET(dart_team_size(DART_TEAM_ALL, NULL), DART_ERR_INVAL);
    CHECK_RET(dart_team_myid(unknown, &tu), DART_ERR_INVAL);
    CHECK_RET(dart_team_myid(DART_TEAM_ALL, NULL), DART_ERR_INVAL);
    CHECK_RET(dart_team_unit_l2g(unknown, DART_TEAM_UNIT_ID(0), &gu),
              DART_ERR_INVAL);
    CHECK_RET(dart_team_unit_g2l(unknown, DART_GLOBAL_UNIT_ID(0), &tu),
              DART_ERR_INVAL);
    CHECK_RET(dart_team_get_group(DART_TEAM_ALL, NULL), DART_ERR_INVAL);
    CHECK_RET(dart_team_get_group(unknown, &g), DART_ERR_INVAL);
    CHECK_RET(dart_team_clone(unknown, &t), DART_ERR_INVAL);
    CHECK_RET(dart_barrier(unknown), DART_ERR_INVAL);
    CHECK_RET(dart_team_create(DART_TEAM_ALL, NULL, &t), DART_ERR_INVAL);
    dart_group_t ga = make_group(all, 0);
    CHECK_RET(dart_team_create(DART_TEAM_ALL, ga, NULL), DART_ERR_INVAL);
    CHECK_RET(dart_team_create(unknown, ga, &t), DART_ERR_INVAL);
    CHECK_OK(dart_group_destroy(&ga));

    /* DART_TEAM_ALL still works */
    CHECK_OK(dart_team_size(DART_TEAM_ALL, &s));
    CHECK_EQ(s, nunits);
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
  }

  /* ---- 200 teams created and destroyed, one other team kept alive ---- */
  {
    dart_team_t keep = (dart_team_t)-99;
    CHECK_OK(dart_team_clone(DART_TEAM_ALL, &keep));
    note_new_team(keep, "kept clone", __LINE__);
    for (int i = 0; i < 200; i++) {
      const int *mask = (i % 4 == 0)   ? all
                        : (i % 4 == 1) ? even
                        : (i % 4 == 2) ? half
                                       : single;
      char what[48];
      snprintf(what, sizeof what, "loop team %d", i);
      dart_team_t t = create_team_at(DART_TEAM_ALL, mask, i % 2, what,
                                     __LINE__);
      if (!mask[me]) continue;
      int m = 0, myrank = -1;
      for (int u = 0; u < nunits; u++) {
        if (mask[u]) {
          if (u == me) myrank = m;
          m++;
        }
      }
      size_t s = 0;
      dart_team_unit_t tu = {-1};
      CHECK_OK(dart_team_size(t, &s));
      CHECK_EQ(s, m);
      CHECK_OK(dart_team_myid(t, &tu));
      CHECK_EQ(tu.id, myrank);
      if (i % 20 < 4) {
        int v[2] = {me, t}, mn[2] = {-1, -1}, mx[2] = {-1, -1};
        CHECK_OK(dart_allreduce(v, mn, 2, DART_TYPE_INT, DART_OP_MIN, t));
        CHECK_OK(dart_allreduce(v, mx, 2, DART_TYPE_INT, DART_OP_MAX, t));
        int first = -1, last = -1;
        for (int u = 0; u < nunits; u++) {
          if (mask[u]) {
            if (first < 0) first = u;
            last = u;
          }
        }
        CHECK_EQ(mn[0], first);
        CHECK_EQ(mx[0], last);
        CHECK_EQ(mn[1], t);
        CHECK_EQ(mx[1], t);
      }
      destroy_team_at(&t, i % 20 == 0, __LINE__);
    }
    CHECK_TEAM(keep, all, "kept clone after the loop");
    DESTROY_TEAM(&keep);
    CHECK_EQ(nlive, 1);
  }

  free(all);
  free(even);
  free(odd);
  free(half);
  free(single);
  free(nested);
  free(first_nested);
  free(allbut0);
  return dart_test_finish();
}
