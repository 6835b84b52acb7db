/*
 * Paths: every gptr takes the expected route (own part: self; a node peer's
 * part of a collective allocation or of the local pool: shm; other nodes and
 * other units' registered memory: mpi), dart_path_count counts exactly the
 * operations sent along each path (so a silent fall-back to MPI for node
 * peers shows), dart_gptr_getaddr gives only the own part and
 * dart_gptr_getaddr_shared also the node peers' parts, through which stores
 * reach the peer.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dart_test.h"

#include <dart/dart_ext.h>
#include <unistd.h>

#define HOST_LEN 64

static int me, nunits;
static int *node_of;   /* (emulated) node of each global unit */
static int shm_off;    /* DART_SHM=0: node peers go the remote path too */
static dart_path_t remote_path, peer_private_path;

static const char *pname(int p)
{
  static const char *const names[] = {"SELF", "SHM", "MPI", "UCX", "CMA",
                                      "?"};
  return names[p >= 0 && p < DART_PATH_COUNT ? p : DART_PATH_COUNT];
}

/* Expected path to global unit g's part of a collective allocation or of
 * the local pool (registered: 0), or of registered memory (registered: 1). */
static int expected_path(int g, int registered)
{
  if (g == me) return DART_PATH_SELF;
  if (!shm_off && node_of[g] == node_of[me])
    return registered ? peer_private_path : DART_PATH_SHM;
  return remote_path;
}

static void read_counts(uint64_t c[DART_PATH_COUNT])
{
  for (int p = 0; p < DART_PATH_COUNT; p++) {
    c[p] = 0;
    CHECK_OK(dart_path_count((dart_path_t)p, &c[p]));
  }
}

/* Checks that exactly n operations went along path since before. */
static void check_delta(int line, const uint64_t before[DART_PATH_COUNT],
                        int path, uint64_t n, const char *what, int target)
{
  uint64_t now[DART_PATH_COUNT];
  read_counts(now);
  for (int p = 0; p < DART_PATH_COUNT; p++) {
    uint64_t want = p == path ? n : 0;
    if (now[p] - before[p] != want) {
      FAIL_AT(line,
            "%s to unit %d (expected path %s): %s counter rose by %llu, not "
            "%llu",
            what, target, pname(path), pname(p),
            (unsigned long long)(now[p] - before[p]),
            (unsigned long long)want);
    }
  }
}

/* Checks path, getaddr and getaddr_shared for gptr g at global unit gu. */
static void check_route(int line, dart_gptr_t g, int gu, int registered,
                        const char *what)
{
  const int want = expected_path(gu, registered);
  dart_path_t path = DART_PATH_COUNT;
  CHECK_OK(dart_gptr_path(g, &path));
  if ((int)path != want) {
    FAIL_AT(line, "%s: dart_gptr_path to unit %d (my node %d, its node %d) is "
                "%s, expected %s",
          what, gu, node_of[me], node_of[gu], pname((int)path), pname(want));
  }
  void *a = (void *)&a, *s = (void *)&s;
  CHECK_OK(dart_gptr_getaddr(g, &a));
  CHECK_OK(dart_gptr_getaddr_shared(g, &s));
  if (gu == me) {
    if (a == NULL || s != a)
      FAIL_AT(line, "%s: own part: getaddr %p, getaddr_shared %p", what, a, s);
  } else {
    if (a != NULL)
      FAIL_AT(line, "%s: dart_gptr_getaddr of unit %d's part is %p, not NULL",
            what, gu, a);
    if ((want == DART_PATH_SHM) != (s != NULL))
      FAIL_AT(line, "%s: dart_gptr_getaddr_shared of unit %d's part (path %s) "
                  "is %p",
            what, gu, pname(want), s);
  }
  /* the address moves with the offset */
  if (s != NULL && s != (void *)&s) {
    dart_gptr_t g8 = g;
    void *s8 = NULL;
    dart_gptr_incaddr(&g8, 8);
    CHECK_OK(dart_gptr_getaddr_shared(g8, &s8));
    if (s8 != (char *)s + 8)
      FAIL_AT(line, "%s: getaddr_shared(gptr + 8) is %p, not %p + 8", what, s8,
            s);
  }
}

static uint64_t val(int src, int dst, int word, int tag)
{
  return ((uint64_t)tag << 48) | ((uint64_t)src << 32) |
         ((uint64_t)dst << 16) | (uint64_t)word;
}

/*
 * Layout of each unit's part (all in 8-byte words):
 *   [0, 8n)       slot s: 8 words written by unit s with one-sided puts
 *   [8n, 16n)     word n*8 + w: 8 words the owner writes, read by gets
 *   [16n, 17n)    word s: written by unit s through getaddr_shared
 *   [17n, 18n)    word s: the owner's word for unit s to read directly
 */
#define WORDS(n) (18 * (size_t)(n))

typedef struct {
  dart_team_t team;
  int tn, tme;      /* team size, my team id */
  int *glob;        /* global id of each team unit */
  int registered;
  int tag;
  const char *what;
} space_t;

/* ptrs[u]: gptr of team unit u's part, offset 0; mine: own part's words. */
static void exercise(const space_t *sp, const dart_gptr_t *ptrs,
                     uint64_t *mine)
{
  const int n = sp->tn;
  char what[120];
  /* the owner's words */
  for (size_t w = 0; w < WORDS(n); w++) mine[w] = 0;
  for (int w = 0; w < 8; w++) mine[8 * n + w] = val(sp->tme, 0xff, w, sp->tag);
  for (int s = 0; s < n; s++) mine[17 * n + s] = val(sp->tme, s, 77, sp->tag);
  CHECK_OK(dart_barrier(sp->team));

  for (int t = 0; t < n; t++) {
    const int gt = sp->glob[t];
    const int path = expected_path(gt, sp->registered);
    dart_gptr_t slot = ptrs[t], rd = ptrs[t];
    uint64_t before[DART_PATH_COUNT], v, got[8];
    dart_handle_t h;
    snprintf(what, sizeof what, "%s", sp->what);
    check_route(__LINE__, ptrs[t], gt, sp->registered, what);
    dart_gptr_incaddr(&slot, (int64_t)(8 * sizeof(uint64_t)) * sp->tme);
    dart_gptr_incaddr(&rd, (int64_t)(8 * sizeof(uint64_t)) * n);
    check_route(__LINE__, slot, gt, sp->registered, what);

    /* 5 blocking puts */
    read_counts(before);
    for (int w = 0; w < 5; w++) {
      dart_gptr_t gw = slot;
      dart_gptr_incaddr(&gw, 8 * w);
      v = val(sp->tme, t, w, sp->tag);
      CHECK_OK(dart_put_blocking(gw, &v, 1, DART_TYPE_ULONG, DART_TYPE_ULONG));
    }
    snprintf(what, sizeof what, "%s: 5 x dart_put_blocking", sp->what);
    check_delta(__LINE__, before, path, 5, what, gt);

    /* 3 blocking gets */
    read_counts(before);
    for (int w = 0; w < 3; w++) {
      dart_gptr_t gw = rd;
      dart_gptr_incaddr(&gw, 8 * w);
      got[w] = 0;
      CHECK_OK(dart_get_blocking(&got[w], gw, 1, DART_TYPE_ULONG,
                                 DART_TYPE_ULONG));
      CHECK_EQ(got[w], val(t, 0xff, w, sp->tag));
    }
    snprintf(what, sizeof what, "%s: 3 x dart_get_blocking", sp->what);
    check_delta(__LINE__, before, path, 3, what, gt);

    /* 2 puts + flush, 1 put_handle + wait_local + flush */
    read_counts(before);
    uint64_t src[3];
    for (int w = 5; w < 8; w++) src[w - 5] = val(sp->tme, t, w, sp->tag);
    for (int w = 5; w < 7; w++) {
      dart_gptr_t gw = slot;
      dart_gptr_incaddr(&gw, 8 * w);
      CHECK_OK(dart_put(gw, &src[w - 5], 1, DART_TYPE_ULONG, DART_TYPE_ULONG));
    }
    CHECK_OK(dart_flush(slot));
    {
      dart_gptr_t gw = slot;
      dart_gptr_incaddr(&gw, 8 * 7);
      CHECK_OK(dart_put_handle(gw, &src[2], 1, DART_TYPE_ULONG,
                               DART_TYPE_ULONG, &h));
      CHECK_OK(dart_wait_local(&h));
      CHECK_OK(dart_flush(gw));
    }
    snprintf(what, sizeof what, "%s: 2 x dart_put, 1 x dart_put_handle",
             sp->what);
    check_delta(__LINE__, before, path, 3, what, gt);

    /* 2 get_handle + wait, 1 get + flush_local, 2 words in one get */
    read_counts(before);
    memset(got, 0, sizeof got);
    for (int w = 3; w < 5; w++) {
      dart_gptr_t gw = rd;
      dart_gptr_incaddr(&gw, 8 * w);
      CHECK_OK(dart_get_handle(&got[w], gw, 1, DART_TYPE_ULONG,
                               DART_TYPE_ULONG, &h));
      CHECK_OK(dart_wait(&h));
    }
    {
      dart_gptr_t gw = rd;
      dart_gptr_incaddr(&gw, 8 * 5);
      CHECK_OK(dart_get(&got[5], gw, 3, DART_TYPE_ULONG, DART_TYPE_ULONG));
      CHECK_OK(dart_flush_local(gw));
    }
    for (int w = 3; w < 8; w++) CHECK_EQ(got[w], val(t, 0xff, w, sp->tag));
    snprintf(what, sizeof what, "%s: 2 x dart_get_handle, 1 x dart_get",
             sp->what);
    check_delta(__LINE__, before, path, 3, what, gt);
    CHECK_OK(dart_flush(rd));

    /* stores through the shared address */
    void *sa = NULL;
    CHECK_OK(dart_gptr_getaddr_shared(ptrs[t], &sa));
    if (sa != NULL) {
      uint64_t *peer = sa;
      peer[16 * n + sp->tme] = val(sp->tme, t, 99, sp->tag);
    }
  }
  CHECK_OK(dart_barrier(sp->team));

  /* what the others wrote into my part */
  for (int s = 0; s < n; s++) {
    for (int w = 0; w < 8; w++) {
      if (mine[8 * s + w] != val(s, sp->tme, w, sp->tag)) {
        FAIL_AT(__LINE__, "%s: word %d of unit %d's slot in my part is 0x%llx",
              sp->what, w, sp->glob[s], (unsigned long long)mine[8 * s + w]);
      }
    }
    const int p = expected_path(sp->glob[s], sp->registered);
    const int direct = p == DART_PATH_SELF || p == DART_PATH_SHM;
    const uint64_t want = direct ? val(s, sp->tme, 99, sp->tag) : 0;
    if (mine[16 * n + s] != want) {
      FAIL_AT(__LINE__, "%s: word stored by unit %d (path %s) through "
                      "getaddr_shared is 0x%llx, want 0x%llx",
            sp->what, sp->glob[s],
            pname(expected_path(sp->glob[s], sp->registered)),
            (unsigned long long)mine[16 * n + s], (unsigned long long)want);
    }
  }
  /* what the owners wrote, read directly through getaddr_shared */
  for (int t = 0; t < n; t++) {
    void *sa = NULL;
    CHECK_OK(dart_gptr_getaddr_shared(ptrs[t], &sa));
    if (sa != NULL) {
      const uint64_t *peer = sa;
      CHECK_EQ(peer[17 * n + sp->tme], val(t, sp->tme, 77, sp->tag));
      CHECK_EQ(peer[8 * n + 1], val(t, 0xff, 1, sp->tag));
    }
  }
  CHECK_OK(dart_barrier(sp->team));
}

static int *team_globals(dart_team_t team, int n)
{
  int *glob = malloc((size_t)n * sizeof *glob);
  for (int u = 0; u < n; u++) {
    dart_global_unit_t g = {-1};
    CHECK_OK(dart_team_unit_l2g(team, DART_TEAM_UNIT_ID(u), &g));
    glob[u] = g.id;
  }
  return glob;
}

/* A collective allocation on team: routes, counts and direct stores. */
static void collective(dart_team_t team, int tag, const char *what)
{
  size_t tsize;
  dart_team_unit_t tme;
  CHECK_OK(dart_team_size(team, &tsize));
  CHECK_OK(dart_team_myid(team, &tme));
  const int n = (int)tsize;
  space_t sp = {team, n, tme.id, team_globals(team, n), 0, tag, what};
  dart_gptr_t g = DART_GPTR_NULL;
  /* parts of different sizes */
  CHECK_OK(dart_team_memalloc_aligned(team, WORDS(n) + (size_t)tme.id * 3,
                                      DART_TYPE_ULONG, &g));
  dart_gptr_t *ptrs = malloc((size_t)n * sizeof *ptrs);
  for (int u = 0; u < n; u++) {
    ptrs[u] = g;
    dart_gptr_setunit(&ptrs[u], DART_TEAM_UNIT_ID(u));
  }
  void *mine = NULL;
  CHECK_OK(dart_gptr_getaddr(ptrs[tme.id], &mine));
  CHECK(mine != NULL);
  if (mine) exercise(&sp, ptrs, mine);
  CHECK_OK(dart_team_memfree(g));
  free(ptrs);
  free(sp.glob);
}

int main(int argc, char **argv)
{
  dart_test_init(&argc, &argv);
  me = dart_test_unit;
  nunits = dart_test_units;
  const char *shm_env = getenv("DART_SHM");
  shm_off = shm_env != NULL && strcmp(shm_env, "0") == 0;

  /* path names */
  CHECK(dart_path_name(DART_PATH_SELF) &&
        strcmp(dart_path_name(DART_PATH_SELF), "self") == 0);
  CHECK(dart_path_name(DART_PATH_SHM) &&
        strcmp(dart_path_name(DART_PATH_SHM), "shm") == 0);
  CHECK(dart_path_name(DART_PATH_MPI) &&
        strcmp(dart_path_name(DART_PATH_MPI), "mpi") == 0);
  CHECK(dart_path_name(DART_PATH_UCX) &&
        strcmp(dart_path_name(DART_PATH_UCX), "ucx") == 0);
  CHECK(dart_path_name(DART_PATH_CMA) &&
        strcmp(dart_path_name(DART_PATH_CMA), "cma") == 0);

  /* the transports: as the environment asks, on this machine (which
   * permits CMA) */
  CHECK_OK(dart_transport_paths(&remote_path, &peer_private_path));
  const char *transport = getenv("DART_TRANSPORT");
  const char *cma_env = getenv("DART_CMA");
  if (transport && strcmp(transport, "mpi") == 0)
    CHECK_EQ(remote_path, DART_PATH_MPI);
  if (transport && strcmp(transport, "ucx") == 0)
    CHECK_EQ(remote_path, DART_PATH_UCX);
  CHECK_EQ(peer_private_path,
           shm_off || (cma_env && strcmp(cma_env, "0") == 0) ? remote_path
                                                             : DART_PATH_CMA);
  CHECK_RET(dart_transport_paths(NULL, &peer_private_path), DART_ERR_INVAL);
  CHECK(dart_path_name(DART_PATH_COUNT) == NULL);

  /* nodes: the library's view against host names and DART_UNITS_PER_NODE */
  int num_nodes = -1, my_node = -1;
  CHECK_OK(dart_node_info(&num_nodes, &my_node));
  CHECK(num_nodes >= 1 && num_nodes <= nunits);
  CHECK(my_node >= 0 && my_node < num_nodes);
  node_of = malloc((size_t)nunits * sizeof *node_of);
  int *all_num = malloc((size_t)nunits * sizeof *all_num);
  char host[HOST_LEN] = {0};
  char *hosts = calloc((size_t)nunits, HOST_LEN);
  gethostname(host, HOST_LEN - 1);
  CHECK_OK(dart_allgather(&my_node, node_of, 1, DART_TYPE_INT, DART_TEAM_ALL));
  CHECK_OK(dart_allgather(&num_nodes, all_num, 1, DART_TYPE_INT,
                          DART_TEAM_ALL));
  CHECK_OK(dart_allgather(host, hosts, HOST_LEN, DART_TYPE_BYTE,
                          DART_TEAM_ALL));
  const char *upn_env = getenv("DART_UNITS_PER_NODE");
  const int upn = upn_env ? atoi(upn_env) : 0;
  {
    int distinct = 0;
    for (int u = 0; u < nunits; u++) {
      CHECK_EQ(all_num[u], num_nodes);
      int seen = 0;
      for (int v = 0; v < u; v++) seen |= node_of[v] == node_of[u];
      distinct += !seen;
      for (int v = 0; v < nunits; v++) {
        int same_host = strcmp(hosts + u * HOST_LEN, hosts + v * HOST_LEN) == 0;
        int want_same = same_host && (upn <= 0 || u / upn == v / upn);
        if ((node_of[u] == node_of[v]) != want_same) {
          FAIL_AT(__LINE__, "units %d and %d: nodes %d and %d, but %s "
                          "(DART_UNITS_PER_NODE=%d)",
                u, v, node_of[u], node_of[v],
                want_same ? "should share one" : "should not", upn);
        }
      }
    }
    CHECK_EQ(distinct, num_nodes);
    if (upn > 0) {
      /* emulated nodes: consecutive ids, numbered in order */
      for (int u = 0; u < nunits; u++) CHECK_EQ(node_of[u], u / upn);
      CHECK_EQ(num_nodes, (nunits + upn - 1) / upn);
    }
  }
  free(all_num);
  free(hosts);

  /* bad path: error */
  {
    uint64_t c = 12345;
    CHECK_RET(dart_path_count(DART_PATH_COUNT, &c), DART_ERR_INVAL);
    CHECK_EQ(c, 12345);
  }

  /* 1. a collective allocation on DART_TEAM_ALL */
  collective(DART_TEAM_ALL, 1, "memalloc_aligned(ALL)");

  /* 2. the local pool: every unit's dart_memalloc block */
  {
    const int n = nunits;
    dart_gptr_t g = DART_GPTR_NULL;
    CHECK_OK(dart_memalloc(WORDS(n), DART_TYPE_ULONG, &g));
    CHECK_EQ(g.unitid, me);
    CHECK_EQ(g.teamid, DART_TEAM_ALL);
    CHECK_EQ(g.segid, DART_SEGMENT_LOCAL);
    dart_gptr_t *ptrs = malloc((size_t)nunits * sizeof *ptrs);
    CHECK_OK(dart_allgather(&g, ptrs, sizeof g, DART_TYPE_BYTE,
                            DART_TEAM_ALL));
    int *glob = malloc((size_t)nunits * sizeof *glob);
    for (int u = 0; u < n; u++) glob[u] = u;
    space_t sp = {DART_TEAM_ALL, n, me, glob, 0, 2, "memalloc"};
    void *mine = NULL;
    CHECK_OK(dart_gptr_getaddr(g, &mine));
    CHECK(mine != NULL);
    if (mine) exercise(&sp, ptrs, mine);
    CHECK_OK(dart_memfree(g));
    free(ptrs);
    free(glob);
  }

  /* 3. registered memory: other units are reached through MPI */
  for (int aligned = 0; aligned < 2; aligned++) {
    const int n = nunits;
    /* dart_team_memregister: sizes may differ per unit */
    const size_t words = WORDS(n) + (aligned ? 0 : (size_t)me);
    uint64_t *buf = calloc(words, sizeof *buf);
    dart_gptr_t g = DART_GPTR_NULL;
    if (aligned) {
      CHECK_OK(dart_team_memregister_aligned(DART_TEAM_ALL, words,
                                             DART_TYPE_ULONG, buf, &g));
    } else {
      CHECK_OK(dart_team_memregister(DART_TEAM_ALL, words, DART_TYPE_ULONG,
                                     buf, &g));
    }
    CHECK(g.segid < 0);
    dart_gptr_t *ptrs = malloc((size_t)nunits * sizeof *ptrs);
    for (int u = 0; u < n; u++) {
      ptrs[u] = g;
      dart_gptr_setunit(&ptrs[u], DART_TEAM_UNIT_ID(u));
      ptrs[u].addr_or_offs.offset = 0;
    }
    void *mine = NULL;
    CHECK_OK(dart_gptr_getaddr(ptrs[me], &mine));
    CHECK(mine == buf);
    int *glob = malloc((size_t)nunits * sizeof *glob);
    for (int u = 0; u < n; u++) glob[u] = u;
    space_t sp = {DART_TEAM_ALL, n, me, glob, 1, 3 + aligned,
                  aligned ? "memregister_aligned" : "memregister"};
    exercise(&sp, ptrs, buf);
    /* deregistration is local: the others are done with our part first */
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    CHECK_OK(dart_team_memderegister(g));
    free(ptrs);
    free(glob);
    free(buf);
  }

  /* 4. a sub-team of units 1..n-1: team ids are not global ids */
  if (nunits >= 2) {
    dart_group_t grp;
    dart_team_t team = DART_TEAM_NULL;
    CHECK_OK(dart_group_create(&grp));
    for (int u = 1; u < nunits; u++)
      CHECK_OK(dart_group_addmember(grp, DART_GLOBAL_UNIT_ID(u)));
    CHECK_OK(dart_team_create(DART_TEAM_ALL, grp, &team));
    CHECK_OK(dart_group_destroy(&grp));
    CHECK((team == DART_TEAM_NULL) == (me == 0));
    if (team != DART_TEAM_NULL) {
      collective(team, 5, "memalloc_aligned(units 1..n-1)");
      CHECK_OK(dart_team_destroy(&team));
    }
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
  }

  free(node_of);
  return dart_test_finish();
}
