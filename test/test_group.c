/*
 * Groups: create, destroy, clone, union, intersect, addmember, delmember,
 * ismember, size, getmembers (sorted), split (DART semantics) and bad input.
 * Group functions are local; every unit runs the same checks on its own.
 */
#include "dart_test.h"

static int nunits;

/*
 * Checks that g holds exactly the units with want[u] != 0 (u < nunits):
 * size, getmembers (sorted, no write past the end) and ismember.
 */
static void check_group_at(dart_group_t g, const int *want, const char *what,
                           int line)
{
  size_t nwant = 0;
  for (int u = 0; u < nunits; u++) {
    if (want[u]) nwant++;
  }
  size_t size = 9999;
  dart_ret_t ret = dart_group_size(g, &size);
  if (ret != DART_OK) {
    FAIL_AT(line, "%s: dart_group_size returned %d", what, (int)ret);
    return;
  }
  if (size != nwant) {
    FAIL_AT(line, "%s: size %zu, want %zu", what, size, nwant);
    return;
  }
  dart_global_unit_t *mem = malloc((size + 1) * sizeof *mem);
  for (size_t i = 0; i <= size; i++) mem[i].id = -77;
  ret = dart_group_getmembers(g, mem);
  if (ret != DART_OK) {
    FAIL_AT(line, "%s: dart_group_getmembers returned %d", what, (int)ret);
  } else {
    if (mem[size].id != -77) {
      FAIL_AT(line, "%s: getmembers wrote past %zu members", what, size);
    }
    size_t i = 0;
    for (int u = 0; u < nunits; u++) {
      if (!want[u]) continue;
      if (mem[i].id != u) {
        FAIL_AT(line, "%s: member %zu is %d, want %d", what, i, (int)mem[i].id,
              u);
        break;
      }
      i++;
    }
  }
  free(mem);
  for (int u = 0; u < nunits; u++) {
    int32_t is = -1;
    ret = dart_group_ismember(g, DART_GLOBAL_UNIT_ID(u), &is);
    if (ret != DART_OK) {
      FAIL_AT(line, "%s: dart_group_ismember(%d) returned %d", what, u,
            (int)ret);
    } else if ((is != 0) != (want[u] != 0)) {
      FAIL_AT(line, "%s: ismember(%d) = %d, want %d", what, u, (int)is,
            want[u] != 0);
    }
  }
}
#define CHECK_GROUP(g, want, what) check_group_at((g), (want), (what), __LINE__)

/* A group from a membership mask, the members added in the given order. */
static dart_group_t make_group(const int *want, int descending)
{
  dart_group_t g = NULL;
  CHECK_OK(dart_group_create(&g));
  CHECK(g != NULL);
  for (int i = 0; i < nunits; i++) {
    int u = descending ? nunits - 1 - i : i;
    if (want[u]) CHECK_OK(dart_group_addmember(g, DART_GLOBAL_UNIT_ID(u)));
  }
  return g;
}

/*
 * Splits g (members = mask) into n groups and checks the DART layout:
 * chunks of ceil(m / n) consecutive members, all n groups created, empty
 * ones at the end, *nout = number of non-empty groups.
 */
static void check_split_at(dart_group_t g, const int *mask, size_t n, int line)
{
  int *sorted = malloc((size_t)(nunits + 1) * sizeof *sorted);
  size_t m = 0;
  for (int u = 0; u < nunits; u++) {
    if (mask[u]) sorted[m++] = u;
  }
  size_t chunk = (m + n - 1) / n;
  size_t want_nout = chunk ? (m + chunk - 1) / chunk : 0;

  dart_group_t *gout = malloc((n + 1) * sizeof *gout);
  for (size_t i = 0; i <= n; i++) gout[i] = NULL;
  gout[n] = (dart_group_t)(uintptr_t)0x1; /* guard: must stay as it is */
  size_t nout = 9999;
  dart_ret_t ret = dart_group_split(g, n, &nout, gout);
  if (ret != DART_OK) {
    FAIL_AT(line, "dart_group_split(m=%zu, n=%zu) returned %d", m, n, (int)ret);
    free(gout);
    free(sorted);
    return;
  }
  if (nout != want_nout) {
    FAIL_AT(line, "dart_group_split(m=%zu, n=%zu): nout %zu, want %zu", m, n,
          nout, want_nout);
  }
  if (gout[n] != (dart_group_t)(uintptr_t)0x1) {
    FAIL_AT(line, "dart_group_split(m=%zu, n=%zu) wrote gout[n]", m, n);
  }
  int *want = malloc((size_t)nunits * sizeof *want);
  for (size_t i = 0; i < n; i++) {
    char what[96];
    snprintf(what, sizeof what, "split(m=%zu, n=%zu) group %zu", m, n, i);
    if (gout[i] == NULL) {
      FAIL_AT(line, "%s was not created", what);
      continue;
    }
    memset(want, 0, (size_t)nunits * sizeof *want);
    for (size_t j = i * chunk; j < (i + 1) * chunk && j < m; j++) {
      want[sorted[j]] = 1;
    }
    check_group_at(gout[i], want, what, line);
    CHECK_OK(dart_group_destroy(&gout[i]));
    CHECK(gout[i] == NULL);
  }
  free(want);
  free(gout);
  free(sorted);
}
#define CHECK_SPLIT(g, mask, n) check_split_at((g), (mask), (n), __LINE__)

int main(int argc, char **argv)
{
  dart_test_init(&argc, &argv);
  size_t sz = 0;
  CHECK_OK(dart_size(&sz));
  nunits = (int)sz;
  CHECK(nunits >= 1);

  int *none = calloc((size_t)nunits, sizeof(int));
  int *all = calloc((size_t)nunits, sizeof(int));
  int *even = calloc((size_t)nunits, sizeof(int));
  int *half = calloc((size_t)nunits, sizeof(int));
  int *want = calloc((size_t)nunits, sizeof(int));
  int h = (nunits + 1) / 2;
  for (int u = 0; u < nunits; u++) {
    all[u] = 1;
    even[u] = (u % 2 == 0);
    half[u] = (u < h);
  }

  /* ---- create, add (descending order, duplicates), size, members ---- */
  dart_group_t empty = NULL;
  CHECK_OK(dart_group_create(&empty));
  CHECK(empty != NULL);
  CHECK_GROUP(empty, none, "empty group");

  dart_group_t gall = make_group(all, 1);
  CHECK_GROUP(gall, all, "all units added in descending order");
  dart_group_t geven = make_group(even, 1);
  CHECK_GROUP(geven, even, "even units added in descending order");

  /* first half, added in a scrambled order: odd positions, then even */
  dart_group_t ghalf = NULL;
  CHECK_OK(dart_group_create(&ghalf));
  for (int u = h - 1; u >= 0; u--) {
    if (u % 2) CHECK_OK(dart_group_addmember(ghalf, DART_GLOBAL_UNIT_ID(u)));
  }
  for (int u = 0; u < h; u++) {
    if (!(u % 2)) CHECK_OK(dart_group_addmember(ghalf, DART_GLOBAL_UNIT_ID(u)));
  }
  CHECK_GROUP(ghalf, half, "first half, scrambled order");

  /* a duplicate add changes nothing */
  CHECK_OK(dart_group_addmember(geven, DART_GLOBAL_UNIT_ID(0)));
  CHECK_OK(dart_group_addmember(gall, DART_GLOBAL_UNIT_ID(nunits - 1)));
  CHECK_GROUP(geven, even, "even units after a duplicate add");
  CHECK_GROUP(gall, all, "all units after a duplicate add");

  /* ---- union and intersection ---- */
  {
    dart_group_t gu = NULL, gi = NULL;
    CHECK_OK(dart_group_union(geven, ghalf, &gu));
    for (int u = 0; u < nunits; u++) want[u] = even[u] || half[u];
    CHECK_GROUP(gu, want, "union(even, half)");
    CHECK_OK(dart_group_intersect(geven, ghalf, &gi));
    for (int u = 0; u < nunits; u++) want[u] = even[u] && half[u];
    CHECK_GROUP(gi, want, "intersect(even, half)");
    /* inputs unchanged */
    CHECK_GROUP(geven, even, "even after union/intersect");
    CHECK_GROUP(ghalf, half, "half after union/intersect");
    CHECK_OK(dart_group_destroy(&gu));
    CHECK(gu == NULL);
    CHECK_OK(dart_group_destroy(&gi));
    CHECK(gi == NULL);

    CHECK_OK(dart_group_union(geven, empty, &gu));
    CHECK_GROUP(gu, even, "union(even, empty)");
    CHECK_OK(dart_group_intersect(geven, empty, &gi));
    CHECK_GROUP(gi, none, "intersect(even, empty)");
    CHECK_OK(dart_group_destroy(&gu));
    CHECK_OK(dart_group_destroy(&gi));

    CHECK_OK(dart_group_union(geven, geven, &gu));
    CHECK_GROUP(gu, even, "union(even, even)");
    CHECK_OK(dart_group_intersect(gall, geven, &gi));
    CHECK_GROUP(gi, even, "intersect(all, even)");
    CHECK_OK(dart_group_destroy(&gu));
    CHECK_OK(dart_group_destroy(&gi));

    /* odd units: all minus even via delmember; intersect(even, odd) empty */
    dart_group_t godd = NULL;
    CHECK_OK(dart_group_clone(gall, &godd));
    for (int u = 0; u < nunits; u += 2) {
      CHECK_OK(dart_group_delmember(godd, DART_GLOBAL_UNIT_ID(u)));
    }
    for (int u = 0; u < nunits; u++) want[u] = (u % 2 == 1);
    CHECK_GROUP(godd, want, "odd units (all minus even)");
    CHECK_OK(dart_group_intersect(geven, godd, &gi));
    CHECK_GROUP(gi, none, "intersect(even, odd)");
    CHECK_OK(dart_group_union(godd, geven, &gu));
    CHECK_GROUP(gu, all, "union(odd, even)");
    CHECK_OK(dart_group_destroy(&gu));
    CHECK_OK(dart_group_destroy(&gi));
    CHECK_OK(dart_group_destroy(&godd));
  }

  /* ---- clone is independent of the original ---- */
  {
    dart_group_t gc = NULL;
    CHECK_OK(dart_group_clone(geven, &gc));
    CHECK(gc != NULL && gc != geven);
    CHECK_GROUP(gc, even, "clone(even)");
    CHECK_OK(dart_group_delmember(gc, DART_GLOBAL_UNIT_ID(0)));
    CHECK_OK(dart_group_addmember(gc, DART_GLOBAL_UNIT_ID(nunits - 1)));
    for (int u = 0; u < nunits; u++) want[u] = even[u];
    want[0] = 0;
    want[nunits - 1] = 1;
    CHECK_GROUP(gc, want, "clone(even) after edits");
    CHECK_GROUP(geven, even, "even after editing its clone");
    CHECK_OK(dart_group_destroy(&gc));

    CHECK_OK(dart_group_clone(empty, &gc));
    CHECK_GROUP(gc, none, "clone(empty)");
    CHECK_OK(dart_group_destroy(&gc));
  }

  /* ---- delmember ---- */
  {
    dart_group_t gd = NULL;
    CHECK_OK(dart_group_clone(gall, &gd));
    CHECK_OK(dart_group_delmember(gd, DART_GLOBAL_UNIT_ID(nunits - 1)));
    for (int u = 0; u < nunits; u++) want[u] = (u != nunits - 1);
    CHECK_GROUP(gd, want, "all minus last");
    /* removing a non-member: NOTFOUND, nothing changes */
    CHECK_RET(dart_group_delmember(gd, DART_GLOBAL_UNIT_ID(nunits - 1)),
              DART_ERR_NOTFOUND);
    CHECK_GROUP(gd, want, "all minus last after a failed delmember");
    CHECK_RET(dart_group_delmember(empty, DART_GLOBAL_UNIT_ID(0)),
              DART_ERR_NOTFOUND);
    CHECK_GROUP(empty, none, "empty after a failed delmember");
    /* empty it completely, then refill */
    for (int u = 0; u < nunits - 1; u++) {
      CHECK_OK(dart_group_delmember(gd, DART_GLOBAL_UNIT_ID(u)));
    }
    CHECK_GROUP(gd, none, "all members removed");
    CHECK_OK(dart_group_addmember(gd, DART_GLOBAL_UNIT_ID(0)));
    for (int u = 0; u < nunits; u++) want[u] = (u == 0);
    CHECK_GROUP(gd, want, "refilled with unit 0");
    CHECK_OK(dart_group_destroy(&gd));
    CHECK(gd == NULL);
  }

  /* ---- split ---- */
  for (size_t n = 1; n <= (size_t)nunits + 3; n++) {
    CHECK_SPLIT(gall, all, n);
    CHECK_SPLIT(geven, even, n);
    CHECK_SPLIT(ghalf, half, n);
  }
  CHECK_SPLIT(empty, none, 1);
  CHECK_SPLIT(empty, none, 3);
  CHECK_GROUP(gall, all, "all after splits");
  if (nunits >= 10) {
    /* the interface's example: 10 members, n = 4 -> 3, 3, 3, 1, nout 4 */
    for (int u = 0; u < nunits; u++) want[u] = (u < 10);
    dart_group_t g10 = make_group(want, 0);
    CHECK_SPLIT(g10, want, 4);
    CHECK_OK(dart_group_destroy(&g10));
  }
  if (nunits >= 3) {
    /* 3 members, n = 5 -> 1, 1, 1, 0, 0, nout 3 (spelled out) */
    dart_group_t g3 = NULL;
    CHECK_OK(dart_group_create(&g3));
    CHECK_OK(dart_group_addmember(g3, DART_GLOBAL_UNIT_ID(nunits - 1)));
    CHECK_OK(dart_group_addmember(g3, DART_GLOBAL_UNIT_ID(0)));
    CHECK_OK(dart_group_addmember(g3, DART_GLOBAL_UNIT_ID(1)));
    dart_group_t out[5] = {NULL, NULL, NULL, NULL, NULL};
    size_t nout = 0;
    CHECK_OK(dart_group_split(g3, 5, &nout, out));
    CHECK_EQ(nout, 3);
    const int first[3] = {0, 1, nunits - 1};
    for (int i = 0; i < 5; i++) {
      CHECK(out[i] != NULL);
      if (!out[i]) continue;
      size_t s = 99;
      CHECK_OK(dart_group_size(out[i], &s));
      CHECK_EQ(s, i < 3 ? 1 : 0);
      if (i < 3 && s == 1) {
        dart_global_unit_t m = {-1};
        CHECK_OK(dart_group_getmembers(out[i], &m));
        CHECK_EQ(m.id, first[i]);
      }
      CHECK_OK(dart_group_destroy(&out[i]));
    }
    CHECK_OK(dart_group_destroy(&g3));
  }

  /* ---- bad input ---- */
  {
    dart_group_t gnull = NULL, gout = NULL, gsplit[2] = {NULL, NULL};
    size_t s = 0, nout = 0;
    int32_t is = 0;
    dart_global_unit_t mem[1];
    dart_global_unit_t u0 = DART_GLOBAL_UNIT_ID(0);

    CHECK_RET(dart_group_create(NULL), DART_ERR_INVAL);
    CHECK_RET(dart_group_destroy(NULL), DART_ERR_INVAL);
    CHECK_RET(dart_group_destroy(&gnull), DART_ERR_INVAL);
    CHECK_RET(dart_group_clone(NULL, &gout), DART_ERR_INVAL);
    CHECK_RET(dart_group_clone(geven, NULL), DART_ERR_INVAL);
    CHECK_RET(dart_group_union(NULL, geven, &gout), DART_ERR_INVAL);
    CHECK_RET(dart_group_union(geven, NULL, &gout), DART_ERR_INVAL);
    CHECK_RET(dart_group_union(geven, ghalf, NULL), DART_ERR_INVAL);
    CHECK_RET(dart_group_intersect(NULL, geven, &gout), DART_ERR_INVAL);
    CHECK_RET(dart_group_intersect(geven, NULL, &gout), DART_ERR_INVAL);
    CHECK_RET(dart_group_intersect(geven, ghalf, NULL), DART_ERR_INVAL);
    CHECK_RET(dart_group_addmember(NULL, u0), DART_ERR_INVAL);
    CHECK_RET(dart_group_delmember(NULL, u0), DART_ERR_INVAL);
    CHECK_RET(dart_group_ismember(NULL, u0, &is), DART_ERR_INVAL);
    CHECK_RET(dart_group_ismember(geven, u0, NULL), DART_ERR_INVAL);
    CHECK_RET(dart_group_size(NULL, &s), DART_ERR_INVAL);
    CHECK_RET(dart_group_size(geven, NULL), DART_ERR_INVAL);
    CHECK_RET(dart_group_getmembers(NULL, mem), DART_ERR_INVAL);
    CHECK_RET(dart_group_getmembers(geven, NULL), DART_ERR_INVAL);
    CHECK_RET(dart_group_split(NULL, 2, &nout, gsplit), DART_ERR_INVAL);
    CHECK_RET(dart_group_split(geven, 2, NULL, gsplit), DART_ERR_INVAL);
    CHECK_RET(dart_group_split(geven, 2, &nout, NULL), DART_ERR_INVAL);
    CHECK_RET(dart_group_split(geven, 0, &nout, gsplit), DART_ERR_INVAL);
    CHECK(gsplit[0] == NULL && gsplit[1] == NULL);
    CHECK(gout == NULL);

    /* unit ids outside [0, dart_size) */
    dart_global_unit_t neg = DART_GLOBAL_UNIT_ID(-1);
    dart_global_unit_t big = DART_GLOBAL_UNIT_ID(nunits);
    dart_global_unit_t huge = DART_GLOBAL_UNIT_ID(INT32_MAX);
    CHECK_RET(dart_group_addmember(geven, neg), DART_ERR_INVAL);
    CHECK_RET(dart_group_addmember(geven, big), DART_ERR_INVAL);
    CHECK_RET(dart_group_addmember(geven, huge), DART_ERR_INVAL);
    CHECK_RET(dart_group_delmember(geven, neg), DART_ERR_INVAL);
    CHECK_RET(dart_group_delmember(geven, big), DART_ERR_INVAL);
    CHECK_RET(dart_group_ismember(geven, neg, &is), DART_ERR_INVAL);
    CHECK_RET(dart_group_ismember(geven, big, &is), DART_ERR_INVAL);
    CHECK_RET(dart_group_addmember(empty, big), DART_ERR_INVAL);
    /* nothing changed */
    CHECK_GROUP(geven, even, "even after bad input");
    CHECK_GROUP(empty, none, "empty after bad input");
  }

  /* ---- destroy sets NULL ---- */
  CHECK_OK(dart_group_destroy(&gall));
  CHECK(gall == NULL);
  CHECK_OK(dart_group_destroy(&geven));
  CHECK(geven == NULL);
  CHECK_OK(dart_group_destroy(&ghalf));
  CHECK(ghalf == NULL);
  CHECK_OK(dart_group_destroy(&empty));
  CHECK(empty == NULL);

  free(none);
  free(all);
  free(even);
  free(half);
  free(want);
  return dart_test_finish();
}
