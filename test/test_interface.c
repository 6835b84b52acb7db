/*
 * The whole DART 3.2 interface. A table names every function of the spec
 * (its "Functions, by header", in that order); holding each address makes
 * a missing function fail the link, and the test interface.table
 * (scripts/check_interface_table.cmake) fails when a function of a public
 * header is not in the table. The program calls every function with
 * valid input and checks the result and a value that follows from the call
 * (the team's size after dart_team_create, the value read back after a
 * put, ...); a function of the table that no unit called is a failure too.
 *
 * The application initialises MPI so that dart_init_thread and dart_init
 * can both run (dart_exit then leaves MPI up). With the arguments "abort
 * <code>" the last unit ends the job by dart_abort(code), which
 * test_interface.cmake expects as the job's exit status.
 */
#include <dart/dart.h>
#include <dart/dart_ext.h>
#include <dart/dart_io.h>
#include <dart/dart_locality.h>
#include <mpi.h>

#include "dart_test.h"

#define MAX_UNITS 16

typedef void (*function_t)(void);
#define FN(f) {#f, (function_t)f}

static const struct {
  const char *name;
  function_t address;
} table[] = {
    /* dart_types.h */
    FN(dart_type_create_strided),
    FN(dart_type_create_indexed),
    FN(dart_type_create_custom),
    FN(dart_type_destroy),
    FN(dart_op_create),
    FN(dart_op_destroy),
    /* dart_initialization.h and dart_config.h */
    FN(dart_config),
    FN(dart_init),
    FN(dart_init_thread),
    FN(dart_exit),
    FN(dart_initialized),
    FN(dart_abort),
    /* dart_team_group.h: groups */
    FN(dart_group_create),
    FN(dart_group_destroy),
    FN(dart_group_clone),
    FN(dart_group_union),
    FN(dart_group_intersect),
    FN(dart_group_addmember),
    FN(dart_group_delmember),
    FN(dart_group_ismember),
    FN(dart_group_size),
    FN(dart_group_getmembers),
    FN(dart_group_split),
    FN(dart_group_locality_split),
    /* dart_team_group.h: teams */
    FN(dart_team_get_group),
    FN(dart_team_create),
    FN(dart_team_destroy),
    FN(dart_team_clone),
    FN(dart_team_myid),
    FN(dart_team_size),
    FN(dart_myid),
    FN(dart_size),
    FN(dart_team_unit_l2g),
    FN(dart_team_unit_g2l),
    /* dart_globmem.h */
    FN(dart_gptr_getaddr),
    FN(dart_gptr_setaddr),
    FN(dart_gptr_getflags),
    FN(dart_gptr_setflags),
    FN(dart_allocator_new),
    FN(dart_allocator_alloc),
    FN(dart_allocator_free),
    FN(dart_allocator_destroy),
    FN(dart_memalloc),
    FN(dart_memfree),
    FN(dart_team_memalloc_aligned),
    FN(dart_team_memfree),
    FN(dart_team_memregister_aligned),
    FN(dart_team_memregister),
    FN(dart_team_memderegister),
    /* dart_communication.h: collectives and two-sided */
    FN(dart_barrier),
    FN(dart_bcast),
    FN(dart_scatter),
    FN(dart_gather),
    FN(dart_allgather),
    FN(dart_allgatherv),
    FN(dart_allreduce),
    FN(dart_alltoall),
    FN(dart_reduce),
    FN(dart_send),
    FN(dart_recv),
    FN(dart_sendrecv),
    /* dart_communication.h: one-sided, completion, atomics */
    FN(dart_accumulate),
    FN(dart_accumulate_blocking_local),
    FN(dart_fetch_and_op),
    FN(dart_compare_and_swap),
    FN(dart_get),
    FN(dart_put),
    FN(dart_flush),
    FN(dart_flush_all),
    FN(dart_flush_local),
    FN(dart_flush_local_all),
    FN(dart_get_handle),
    FN(dart_put_handle),
    FN(dart_wait),
    FN(dart_waitall),
    FN(dart_wait_local),
    FN(dart_waitall_local),
    FN(dart_test_local),
    FN(dart_test),
    FN(dart_testall_local),
    FN(dart_testall),
    FN(dart_handle_free),
    FN(dart_get_blocking),
    FN(dart_put_blocking),
    /* dart_synchronization.h */
    FN(dart_team_lock_init),
    FN(dart_team_lock_destroy),
    FN(dart_lock_acquire),
    FN(dart_lock_try_acquire),
    FN(dart_lock_release),
    FN(dart_lock_initialized),
    /* dart_locality.h */
    FN(dart_team_locality_init),
    FN(dart_team_locality_finalize),
    FN(dart_domain_team_locality),
    FN(dart_domain_create),
    FN(dart_domain_clone),
    FN(dart_domain_destroy),
    FN(dart_domain_assign),
    FN(dart_domain_find),
    FN(dart_domain_select),
    FN(dart_domain_exclude),
    FN(dart_domain_add_subdomain),
    FN(dart_domain_move_subdomain),
    FN(dart_domain_split_scope),
    FN(dart_domain_scope_tags),
    FN(dart_domain_scope_domains),
    FN(dart_domain_group),
    FN(dart_unit_locality),
    /* dart_io.h */
    FN(dart__io__hdf5__prep_mpio),
};
#define NUM_FUNCTIONS (sizeof table / sizeof table[0])
static int calls[NUM_FUNCTIONS];

/* Counts a call of the function whose name begins the text of a call. */
static void note(const char *call)
{
  size_t len = strcspn(call, "( \t\n");
  for (size_t i = 0; i < NUM_FUNCTIONS; i++) {
    if (strlen(table[i].name) == len &&
        strncmp(table[i].name, call, len) == 0) {
      calls[i]++;
      return;
    }
  }
  FAILF("%.*s is not in the table", (int)len, call);
}

static void check_ret(int line, const char *call, dart_ret_t got,
                      dart_ret_t want)
{
  if (got != want) FAIL_AT(line, "%s returned %d, not %d", call, got, want);
}

/* A call of a table function; its value. */
#define CALL(call) (note(#call), (call))
/* A call of a table function that must return DART_OK / want. */
#define OK(call) check_ret(__LINE__, #call, (note(#call), (call)), DART_OK)
#define RET(call, want) check_ret(__LINE__, #call, (note(#call), (call)), want)

static int me;     /* global unit id */
static int units;  /* number of units */
static int next_unit, prev_unit;

/* gptr moved to a unit (of its team) and a byte offset in its part */
static dart_gptr_t at(dart_gptr_t g, int unit, size_t offset)
{
  dart_gptr_setunit(&g, DART_TEAM_UNIT_ID(unit));
  dart_gptr_incaddr(&g, (int64_t)offset);
  return g;
}

/* Start-up: dart_config before dart_init, dart_init_thread, dart_exit, and
 * dart_init again (MPI belongs to the application). */
static void test_init(int *argc, char ***argv, int mpi_provided)
{
  dart_config_t *config = NULL;
  CALL(dart_config(&config));
  CHECK(config != NULL);
  if (config != NULL) {
    const char *log_level = getenv("DART_LOG_LEVEL");
    CHECK_EQ(config->log_enabled != 0,
             log_level == NULL || strcmp(log_level, "error") != 0);
  }
  CHECK(!CALL(dart_initialized()));
  RET(dart_barrier(DART_TEAM_ALL), DART_ERR_NOTINIT);

  dart_thread_support_level_t level = DART_THREAD_SINGLE;
  OK(dart_init_thread(argc, argv, &level));
  CHECK_EQ(level, mpi_provided == MPI_THREAD_MULTIPLE ? DART_THREAD_MULTIPLE
                                                      : DART_THREAD_SINGLE);
  CHECK(CALL(dart_initialized()));
  dart_global_unit_t id = DART_UNDEFINED_GLOBAL_UNIT_ID;
  OK(dart_myid(&id));
  CHECK_EQ(id.id, me);
  OK(dart_barrier(DART_TEAM_ALL));
  OK(dart_exit());
  CHECK(!CALL(dart_initialized()));
  RET(dart_barrier(DART_TEAM_ALL), DART_ERR_NOTINIT);

  OK(dart_init(argc, argv));
  CHECK(CALL(dart_initialized()));
  RET(dart_init(argc, argv), DART_ERR_OTHER);
}

/* Members of a group, ascending; returns how many (at most max). */
static int members_of(dart_group_t g, dart_global_unit_t *ids, int max)
{
  size_t n = 0;
  OK(dart_group_size(g, &n));
  if ((int)n > max) {
    FAILF("group of %zu members, expected at most %d", n, max);
    return 0;
  }
  OK(dart_group_getmembers(g, ids));
  return (int)n;
}

/* A group holds exactly the units u with want[u] set, ascending. */
static void check_group(int line, dart_group_t g, const int *want)
{
  dart_global_unit_t ids[MAX_UNITS];
  int n = members_of(g, ids, MAX_UNITS), k = 0;
  for (int u = 0; u < units; u++) {
    if (!want[u]) continue;
    if (k >= n || ids[k].id != u)
      FAIL_AT(line, "group member %d is %d, not %d", k,
              k < n ? ids[k].id : -1, u);
    k++;
  }
  if (k != n) FAIL_AT(line, "group has %d members, not %d", n, k);
}

static void test_groups(void)
{
  int even[MAX_UNITS] = {0}, odd[MAX_UNITS] = {0}, all[MAX_UNITS] = {0};
  for (int u = 0; u < units; u++) {
    even[u] = u % 2 == 0;
    odd[u] = !even[u];
    all[u] = 1;
  }
  dart_group_t ge = NULL, go = NULL, gall = NULL, gu = NULL, gi = NULL;
  OK(dart_group_create(&ge));
  CHECK(ge != NULL);
  size_t size = 99;
  OK(dart_group_size(ge, &size));
  CHECK_EQ(size, 0);
  for (int u = units - 1; u >= 0; u -= 1)
    if (even[u]) OK(dart_group_addmember(ge, DART_GLOBAL_UNIT_ID(u)));
  OK(dart_group_addmember(ge, DART_GLOBAL_UNIT_ID(0)));
  OK(dart_group_size(ge, &size));
  CHECK_EQ(size, (units + 1) / 2);
  check_group(__LINE__, ge, even);
  for (int u = 0; u < units; u++) {
    int32_t is = -1;
    OK(dart_group_ismember(ge, DART_GLOBAL_UNIT_ID(u), &is));
    CHECK_EQ(is != 0, even[u]);
  }

  OK(dart_team_get_group(DART_TEAM_ALL, &gall));
  check_group(__LINE__, gall, all);
  OK(dart_group_clone(gall, &go));
  for (int u = 0; u < units; u += 2)
    OK(dart_group_delmember(go, DART_GLOBAL_UNIT_ID(u)));
  RET(dart_group_delmember(go, DART_GLOBAL_UNIT_ID(0)), DART_ERR_NOTFOUND);
  check_group(__LINE__, go, odd);
  check_group(__LINE__, gall, all); /* the clone is a copy */

  OK(dart_group_union(ge, go, &gu));
  check_group(__LINE__, gu, all);
  OK(dart_group_intersect(ge, gall, &gi));
  check_group(__LINE__, gi, even);

  /* two groups of consecutive members: ceil(units / 2), then the rest */
  dart_group_t parts[2] = {NULL, NULL};
  size_t nout = 0;
  OK(dart_group_split(gall, 2, &nout, parts));
  CHECK_EQ(nout, units >= 2 ? 2 : 1);
  int first[MAX_UNITS] = {0}, second[MAX_UNITS] = {0};
  for (int u = 0; u < units; u++) {
    first[u] = u < (units + 1) / 2;
    second[u] = !first[u];
  }
  check_group(__LINE__, parts[0], first);
  check_group(__LINE__, parts[1], second);

  dart_group_t *groups[] = {&ge, &go, &gall, &gu, &gi, &parts[0], &parts[1]};
  for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) {
    OK(dart_group_destroy(groups[i]));
    CHECK(*groups[i] == NULL);
  }
}

/* A team of the even units (collective over DART_TEAM_ALL). */
static dart_team_t create_even_team(void)
{
  dart_group_t g = NULL;
  OK(dart_group_create(&g));
  for (int u = 0; u < units; u += 2)
    OK(dart_group_addmember(g, DART_GLOBAL_UNIT_ID(u)));
  dart_team_t t = (dart_team_t)-99;
  OK(dart_team_create(DART_TEAM_ALL, g, &t));
  OK(dart_group_destroy(&g));
  if (me % 2 == 0)
    CHECK(t != DART_TEAM_NULL && t != DART_TEAM_ALL);
  else
    CHECK_EQ(t, DART_TEAM_NULL);
  return t;
}

static void test_teams(void)
{
  size_t size = 0;
  dart_global_unit_t gid = DART_UNDEFINED_GLOBAL_UNIT_ID;
  dart_team_unit_t tid = DART_UNDEFINED_TEAM_UNIT_ID;
  OK(dart_size(&size));
  CHECK_EQ(size, units);
  OK(dart_myid(&gid));
  CHECK_EQ(gid.id, me);
  OK(dart_team_size(DART_TEAM_ALL, &size));
  CHECK_EQ(size, units);
  OK(dart_team_myid(DART_TEAM_ALL, &tid));
  CHECK_EQ(tid.id, me);

  dart_team_t t = create_even_team();
  if (t != DART_TEAM_NULL) {
    OK(dart_team_size(t, &size));
    CHECK_EQ(size, (units + 1) / 2);
    OK(dart_team_myid(t, &tid));
    CHECK_EQ(tid.id, me / 2);
    for (int k = 0; k < (units + 1) / 2; k++) {
      OK(dart_team_unit_l2g(t, DART_TEAM_UNIT_ID(k), &gid));
      CHECK_EQ(gid.id, 2 * k);
      OK(dart_team_unit_g2l(t, DART_GLOBAL_UNIT_ID(2 * k), &tid));
      CHECK_EQ(tid.id, k);
    }
    if (units > 1)
      RET(dart_team_unit_g2l(t, DART_GLOBAL_UNIT_ID(1), &tid),
          DART_ERR_NOTFOUND);
    /* a collective on the new team: the sum of its members' global ids */
    int sum = -1;
    OK(dart_allreduce(&me, &sum, 1, DART_TYPE_INT, DART_OP_SUM, t));
    CHECK_EQ(sum, 2 * ((units + 1) / 2) * ((units + 1) / 2 - 1) / 2);
  }

  dart_team_t c = DART_TEAM_NULL;
  OK(dart_team_clone(DART_TEAM_ALL, &c));
  CHECK(c != DART_TEAM_NULL && c != DART_TEAM_ALL && c != t);
  OK(dart_team_size(c, &size));
  CHECK_EQ(size, units);
  OK(dart_team_myid(c, &tid));
  CHECK_EQ(tid.id, me);
  OK(dart_team_unit_l2g(c, DART_TEAM_UNIT_ID(next_unit), &gid));
  CHECK_EQ(gid.id, next_unit);

  OK(dart_team_destroy(&c));
  CHECK_EQ(c, DART_TEAM_NULL);
  if (t != DART_TEAM_NULL) {
    OK(dart_team_destroy(&t));
    CHECK_EQ(t, DART_TEAM_NULL);
  }
}

/* The user operation of test_types: a + b + *(long *)user_data, which is
 * associative and commutative. */
static void plus_and(const void *in, void *inout, size_t len, void *user_data)
{
  const long *a = in;
  long *b = inout;
  for (size_t i = 0; i < len; i++) b[i] += a[i] + *(const long *)user_data;
}

struct record {
  int32_t id;
  double weight;
};

/* Derived datatypes moved by put/get and a collective; a user operation. */
static void test_types(void)
{
  dart_datatype_t strided = DART_TYPE_UNDEFINED, indexed = DART_TYPE_UNDEFINED;
  dart_datatype_t custom = DART_TYPE_UNDEFINED;
  OK(dart_type_create_strided(DART_TYPE_INT, 3, 1, &strided));
  size_t blocklen[] = {1, 2}, offset[] = {0, 3};
  OK(dart_type_create_indexed(DART_TYPE_INT, 2, blocklen, offset, &indexed));
  OK(dart_type_create_custom(sizeof(struct record), &custom));
  CHECK(strided > DART_TYPE_LAST && indexed > DART_TYPE_LAST &&
        custom > DART_TYPE_LAST);
  CHECK(strided != indexed && indexed != custom && custom != strided);

  dart_gptr_t g;
  OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 8, DART_TYPE_INT, &g));
  int *mine = NULL;
  OK(dart_gptr_getaddr(at(g, me, 0), (void **)&mine));
  for (int i = 0; i < 8; i++) mine[i] = -1;
  OK(dart_barrier(DART_TEAM_ALL));
  /* 2 ints to elements 0 and 3 of the next unit (strided target) */
  int two[2] = {me * 10 + 1, me * 10 + 2};
  OK(dart_put_blocking(at(g, next_unit, 0), two, 2, DART_TYPE_INT, strided));
  /* elements 0, 3 and 4 of a local buffer to elements 5..7 (indexed
   * source) */
  int src[5] = {me * 10 + 3, -2, -2, me * 10 + 4, me * 10 + 5};
  OK(dart_put_blocking(at(g, next_unit, 5 * sizeof(int)), src, 3, indexed,
                       DART_TYPE_INT));
  OK(dart_barrier(DART_TEAM_ALL));
  int want[8] = {prev_unit * 10 + 1, -1, -1, prev_unit * 10 + 2, -1,
                 prev_unit * 10 + 3, prev_unit * 10 + 4, prev_unit * 10 + 5};
  for (int i = 0; i < 8; i++) CHECK_EQ(mine[i], want[i]);
  /* elements 0 and 3 of the next unit to elements 0 and 3 here */
  int back[4] = {-3, -3, -3, -3};
  OK(dart_get_blocking(back, at(g, next_unit, 0), 2, strided, strided));
  CHECK(back[0] == me * 10 + 1 && back[1] == -3 && back[2] == -3 &&
        back[3] == me * 10 + 2);
  OK(dart_barrier(DART_TEAM_ALL));
  OK(dart_team_memfree(g));

  /* records: a broadcast and a put of the custom type */
  struct record r = {me, 0.5 * me}, rs[2];
  if (me == units - 1) r = (struct record){77, 2.25};
  OK(dart_bcast(&r, 1, custom, DART_TEAM_UNIT_ID(units - 1), DART_TEAM_ALL));
  CHECK(r.id == 77 && r.weight == 2.25);
  OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 2, custom, &g));
  rs[0] = (struct record){me, me + 0.25};
  rs[1] = (struct record){-me, me - 0.25};
  OK(dart_put_blocking(at(g, next_unit, 0), rs, 2, custom, custom));
  OK(dart_barrier(DART_TEAM_ALL));
  struct record *got = NULL;
  OK(dart_gptr_getaddr(at(g, me, 0), (void **)&got));
  CHECK(got[0].id == prev_unit && got[0].weight == prev_unit + 0.25 &&
        got[1].id == -prev_unit && got[1].weight == prev_unit - 0.25);
  OK(dart_barrier(DART_TEAM_ALL));
  OK(dart_team_memfree(g));

  /* a user operation with user data: the sum plus units - 1 */
  long one = 1, value = me, sum = -1;
  dart_operation_t op = DART_OP_UNDEFINED;
  OK(dart_op_create(plus_and, &one, true, DART_TYPE_LONG, false, &op));
  CHECK(op > DART_OP_LAST);
  OK(dart_allreduce(&value, &sum, 1, DART_TYPE_LONG, op, DART_TEAM_ALL));
  CHECK_EQ(sum, (long)units * (units - 1) / 2 + units - 1);
  OK(dart_op_destroy(&op));
  CHECK_EQ(op, DART_OP_UNDEFINED);

  dart_datatype_t *types[] = {&strided, &indexed, &custom};
  for (int i = 0; i < 3; i++) {
    OK(dart_type_destroy(types[i]));
    CHECK_EQ(*types[i], DART_TYPE_UNDEFINED);
  }
}

/* Exchanges a gptr of every unit (as bytes, as clients do). */
static void gather_gptrs(dart_gptr_t g, dart_gptr_t *all)
{
  OK(dart_allgather(&g, all, sizeof g, DART_TYPE_BYTE, DART_TEAM_ALL));
}

static void test_globmem(void)
{
  /* collective allocation: unit u holds u + 1 longs */
  dart_gptr_t g = DART_GPTR_NULL;
  OK(dart_team_memalloc_aligned(DART_TEAM_ALL, (size_t)me + 1, DART_TYPE_LONG,
                                &g));
  CHECK(g.unitid == 0 && g.addr_or_offs.offset == 0 &&
        g.teamid == DART_TEAM_ALL && g.segid > 0);
  long *mine = NULL;
  OK(dart_gptr_getaddr(at(g, me, 0), (void **)&mine));
  CHECK(mine != NULL);
  for (int i = 0; i <= me; i++) mine[i] = me * 100 + i;
  if (units > 1) {
    void *other = &g;
    OK(dart_gptr_getaddr(at(g, next_unit, 0), &other));
    CHECK(other == NULL);
  }
  dart_gptr_t h = g;
  OK(dart_gptr_setaddr(&h, mine + 1));
  CHECK(h.unitid == me && h.addr_or_offs.offset == sizeof(long) &&
        h.segid == g.segid && h.teamid == g.teamid);
  uint16_t flags = 99;
  OK(dart_gptr_getflags(h, &flags));
  CHECK_EQ(flags, h.flags);
  OK(dart_gptr_setflags(&h, 0xA5));
  CHECK_EQ(h.flags, 0xA5);
  OK(dart_gptr_getflags(h, &flags));
  CHECK_EQ(flags, 0xA5);
  OK(dart_barrier(DART_TEAM_ALL));
  for (int u = 0; u < units; u++) {
    long part[MAX_UNITS];
    OK(dart_get_blocking(part, at(g, u, 0), (size_t)u + 1, DART_TYPE_LONG,
                         DART_TYPE_LONG));
    for (int i = 0; i <= u; i++) CHECK_EQ(part[i], u * 100 + i);
  }
  OK(dart_barrier(DART_TEAM_ALL));
  OK(dart_team_memfree(g));

  /* local allocation, reached by the previous unit */
  dart_gptr_t local = DART_GPTR_NULL, all[MAX_UNITS];
  OK(dart_memalloc(3, DART_TYPE_LONG, &local));
  CHECK(local.segid == DART_SEGMENT_LOCAL && local.unitid == me &&
        local.teamid == DART_TEAM_ALL);
  OK(dart_gptr_getaddr(local, (void **)&mine));
  CHECK(mine != NULL);
  mine[0] = mine[1] = mine[2] = me;
  gather_gptrs(local, all);
  OK(dart_barrier(DART_TEAM_ALL));
  long v = 1000 + me;
  dart_gptr_t there = all[next_unit];
  dart_gptr_incaddr(&there, 2 * sizeof(long));
  OK(dart_put_blocking(there, &v, 1, DART_TYPE_LONG, DART_TYPE_LONG));
  OK(dart_barrier(DART_TEAM_ALL));
  CHECK(mine[0] == me && mine[1] == me && mine[2] == 1000 + prev_unit);
  OK(dart_barrier(DART_TEAM_ALL));
  OK(dart_memfree(local));

  /* an allocator: each unit allocates in its part, the previous unit
   * writes there */
  dart_allocator_t a = NULL;
  OK(dart_allocator_new(4096, DART_TEAM_ALL, &a));
  CHECK(a != NULL);
  dart_gptr_t piece = DART_GPTR_NULL;
  OK(dart_allocator_alloc(4, DART_TYPE_INT, &piece, a));
  CHECK(!DART_GPTR_ISNULL(piece));
  int *ints = NULL;
  OK(dart_gptr_getaddr(piece, (void **)&ints));
  CHECK(ints != NULL);
  gather_gptrs(piece, all);
  OK(dart_barrier(DART_TEAM_ALL));
  int four[4] = {me, me + 1, me + 2, me + 3};
  OK(dart_put_blocking(all[next_unit], four, 4, DART_TYPE_INT,
                       DART_TYPE_INT));
  OK(dart_barrier(DART_TEAM_ALL));
  for (int i = 0; i < 4; i++) CHECK_EQ(ints[i], prev_unit + i);
  OK(dart_barrier(DART_TEAM_ALL));
  OK(dart_allocator_free(&piece, a));
  CHECK(DART_GPTR_ISNULL(piece));
  OK(dart_allocator_destroy(&a));

  /* registration of user memory: the same size everywhere, then sizes
   * that differ */
  int buf[4] = {-1, -1, -1, -1};
  OK(dart_team_memregister_aligned(DART_TEAM_ALL, 4, DART_TYPE_INT, buf, &g));
  CHECK(g.segid < 0 && g.unitid == 0 && g.addr_or_offs.offset == 0);
  void *addr = NULL;
  OK(dart_gptr_getaddr(at(g, me, 0), &addr));
  CHECK(addr == buf);
  OK(dart_put_blocking(at(g, next_unit, sizeof(int)), four, 2, DART_TYPE_INT,
                       DART_TYPE_INT));
  OK(dart_barrier(DART_TEAM_ALL));
  CHECK(buf[0] == -1 && buf[1] == prev_unit && buf[2] == prev_unit + 1 &&
        buf[3] == -1);
  OK(dart_team_memderegister(g));
  CHECK(buf[1] == prev_unit); /* the memory stays the user's */

  long lbuf[MAX_UNITS];
  for (int i = 0; i <= me; i++) lbuf[i] = 7 * me + i;
  OK(dart_team_memregister(DART_TEAM_ALL, (size_t)me + 1, DART_TYPE_LONG,
                           lbuf, &g));
  CHECK(g.segid < 0);
  OK(dart_barrier(DART_TEAM_ALL));
  long part[MAX_UNITS];
  OK(dart_get_blocking(part, at(g, prev_unit, 0), (size_t)prev_unit + 1,
                       DART_TYPE_LONG, DART_TYPE_LONG));
  for (int i = 0; i <= prev_unit; i++) CHECK_EQ(part[i], 7 * prev_unit + i);
  OK(dart_barrier(DART_TEAM_ALL));
  OK(dart_team_memderegister(g));
}

static void test_collectives(void)
{
  int root = units - 1;
  long b[3] = {-1, -1, -1};
  for (int i = 0; i < 3 && me == root; i++) b[i] = 5 + i;
  OK(dart_bcast(b, 3, DART_TYPE_LONG, DART_TEAM_UNIT_ID(root),
                DART_TEAM_ALL));
  CHECK(b[0] == 5 && b[1] == 6 && b[2] == 7);

  int send[2 * MAX_UNITS], recv[MAX_UNITS * (MAX_UNITS + 1) / 2];
  int two[2] = {-1, -1};
  for (int u = 0; u < units; u++) {
    send[2 * u] = 100 * u;
    send[2 * u + 1] = 100 * u + 1;
  }
  OK(dart_scatter(send, two, 2, DART_TYPE_INT,
                  DART_TEAM_UNIT_ID(0), DART_TEAM_ALL));
  CHECK(two[0] == 100 * me && two[1] == 100 * me + 1);

  int mine[2] = {3 * me, 3 * me + 1};
  OK(dart_gather(mine, recv, 2, DART_TYPE_INT,
                 DART_TEAM_UNIT_ID(root), DART_TEAM_ALL));
  if (me == root)
    for (int u = 0; u < units; u++)
      CHECK(recv[2 * u] == 3 * u && recv[2 * u + 1] == 3 * u + 1);

  int tag = me + 10;
  OK(dart_allgather(&tag, recv, 1, DART_TYPE_INT, DART_TEAM_ALL));
  for (int u = 0; u < units; u++) CHECK_EQ(recv[u], u + 10);

  /* unit u contributes u + 1 elements */
  size_t counts[MAX_UNITS], displs[MAX_UNITS], total = 0;
  for (int u = 0; u < units; u++) {
    counts[u] = (size_t)u + 1;
    displs[u] = total;
    total += counts[u];
  }
  for (int i = 0; i <= me; i++) send[i] = 1000 * me + i;
  OK(dart_allgatherv(send, (size_t)me + 1, DART_TYPE_INT, recv, counts,
                     displs, DART_TEAM_ALL));
  for (int u = 0; u < units; u++)
    for (int i = 0; i <= u; i++)
      CHECK_EQ(recv[displs[u] + (size_t)i], 1000 * u + i);

  int sum = -1, max = -1;
  OK(dart_allreduce(&me, &sum, 1, DART_TYPE_INT, DART_OP_SUM, DART_TEAM_ALL));
  CHECK_EQ(sum, units * (units - 1) / 2);
  OK(dart_reduce(&me, &max, 1, DART_TYPE_INT, DART_OP_MAX,
                 DART_TEAM_UNIT_ID(0), DART_TEAM_ALL));
  if (me == 0) CHECK_EQ(max, units - 1);

  for (int u = 0; u < units; u++) send[u] = 100 * me + u;
  OK(dart_alltoall(send, recv, 1, DART_TYPE_INT, DART_TEAM_ALL));
  for (int u = 0; u < units; u++) CHECK_EQ(recv[u], 100 * u + me);
}

static void test_two_sided(void)
{
  /* a ring: even units send first, odd ones receive first */
  int out = 500 + me, in = -1;
  if (me % 2 == 0) {
    OK(dart_send(&out, 1, DART_TYPE_INT, 7, DART_GLOBAL_UNIT_ID(next_unit)));
    OK(dart_recv(&in, 1, DART_TYPE_INT, 7, DART_GLOBAL_UNIT_ID(prev_unit)));
  } else {
    OK(dart_recv(&in, 1, DART_TYPE_INT, 7, DART_GLOBAL_UNIT_ID(prev_unit)));
    OK(dart_send(&out, 1, DART_TYPE_INT, 7, DART_GLOBAL_UNIT_ID(next_unit)));
  }
  CHECK_EQ(in, 500 + prev_unit);
  long lout[2] = {me, -me}, lin[2] = {0, 0};
  OK(dart_sendrecv(lout, 2, DART_TYPE_LONG, 9, DART_GLOBAL_UNIT_ID(prev_unit),
                   lin, 2, DART_TYPE_LONG, 9, DART_GLOBAL_UNIT_ID(next_unit)));
  CHECK(lin[0] == next_unit && lin[1] == -next_unit);
}

/* Element i of a unit's part of the one-sided test allocation. */
enum {
  OS_PUT = 0,      /* 4: dart_put from the previous unit */
  OS_ALL = 4,      /* units: dart_put from every unit (at OS_ALL + unit) */
  OS_BLOCKING = 12, /* dart_put_blocking from the next unit */
  OS_HANDLE = 13,  /* 8: the handle tests, from the previous unit */
  OS_SIZE = 21
};

static void test_onesided(void)
{
  dart_gptr_t g;
  OK(dart_team_memalloc_aligned(DART_TEAM_ALL, OS_SIZE, DART_TYPE_INT, &g));
  int *mine = NULL;
  OK(dart_gptr_getaddr(at(g, me, 0), (void **)&mine));
  for (int i = 0; i < OS_SIZE; i++) mine[i] = -1;
  OK(dart_barrier(DART_TEAM_ALL));

  dart_gptr_t to_next = at(g, next_unit, OS_PUT * sizeof(int));
  int four[4] = {10 * me, 10 * me + 1, 10 * me + 2, 10 * me + 3};
  OK(dart_put(to_next, four, 4, DART_TYPE_INT, DART_TYPE_INT));
  OK(dart_flush_local(to_next));
  four[0] = four[1] = four[2] = four[3] = -5; /* the source is free again */
  OK(dart_flush(to_next));
  for (int u = 0; u < units; u++)
    OK(dart_put(at(g, u, (size_t)(OS_ALL + me) * sizeof(int)), &me, 1,
                DART_TYPE_INT, DART_TYPE_INT));
  OK(dart_flush_all(g));
  OK(dart_barrier(DART_TEAM_ALL));
  for (int i = 0; i < 4; i++) CHECK_EQ(mine[OS_PUT + i], 10 * prev_unit + i);
  for (int u = 0; u < units; u++) CHECK_EQ(mine[OS_ALL + u], u);

  int got[MAX_UNITS];
  OK(dart_get(got, to_next, 4, DART_TYPE_INT, DART_TYPE_INT));
  OK(dart_flush_local(to_next));
  for (int i = 0; i < 4; i++) CHECK_EQ(got[i], 10 * me + i);
  for (int u = 0; u < units; u++)
    OK(dart_get(&got[u], at(g, u, (size_t)(OS_ALL + me) * sizeof(int)), 1,
                DART_TYPE_INT, DART_TYPE_INT));
  OK(dart_flush_local_all(g));
  for (int u = 0; u < units; u++) CHECK_EQ(got[u], me);

  OK(dart_put_blocking(at(g, prev_unit, OS_BLOCKING * sizeof(int)), &me, 1,
                       DART_TYPE_INT, DART_TYPE_INT));
  OK(dart_barrier(DART_TEAM_ALL));
  CHECK_EQ(mine[OS_BLOCKING], next_unit);
  int v = -1;
  OK(dart_get_blocking(&v, at(g, next_unit, OS_BLOCKING * sizeof(int)), 1,
                       DART_TYPE_INT, DART_TYPE_INT));
  CHECK_EQ(v, (next_unit + 1) % units);

  /* handles: each form writes its own element of the next unit's part,
   * reads it back, and checks the value the previous unit wrote */
  dart_gptr_t h0 = at(g, next_unit, OS_HANDLE * sizeof(int));
  int vals[8], back[8];
  for (int i = 0; i < 8; i++) {
    vals[i] = 1000 * me + i;
    back[i] = -1;
  }
  dart_handle_t h[2] = {DART_HANDLE_NULL, DART_HANDLE_NULL};
  int32_t done = 0;

  OK(dart_put_handle(h0, &vals[0], 1, DART_TYPE_INT, DART_TYPE_INT, &h[0]));
  OK(dart_wait(&h[0]));
  CHECK(h[0] == DART_HANDLE_NULL);
  OK(dart_get_handle(&back[0], h0, 1, DART_TYPE_INT, DART_TYPE_INT, &h[0]));
  OK(dart_wait_local(&h[0]));
  CHECK(h[0] == DART_HANDLE_NULL);
  CHECK_EQ(back[0], vals[0]);

  for (int i = 0; i < 2; i++)
    OK(dart_put_handle(at(g, next_unit, (OS_HANDLE + 1 + i) * sizeof(int)),
                       &vals[1 + i], 1, DART_TYPE_INT, DART_TYPE_INT, &h[i]));
  OK(dart_waitall(h, 2));
  for (int i = 0; i < 2; i++)
    OK(dart_get_handle(&back[1 + i],
                       at(g, next_unit, (OS_HANDLE + 1 + i) * sizeof(int)), 1,
                       DART_TYPE_INT, DART_TYPE_INT, &h[i]));
  OK(dart_waitall_local(h, 2));
  CHECK(back[1] == vals[1] && back[2] == vals[2]);

  dart_gptr_t h3 = at(g, next_unit, (OS_HANDLE + 3) * sizeof(int));
  OK(dart_put_handle(h3, &vals[3], 1, DART_TYPE_INT, DART_TYPE_INT, &h[0]));
  for (done = 0; !done;) OK(dart_test(&h[0], &done));
  CHECK(h[0] == DART_HANDLE_NULL);
  OK(dart_get_handle(&back[3], h3, 1, DART_TYPE_INT, DART_TYPE_INT, &h[0]));
  for (done = 0; !done;) OK(dart_test_local(&h[0], &done));
  CHECK(h[0] == DART_HANDLE_NULL);
  CHECK_EQ(back[3], vals[3]);

  for (int i = 0; i < 2; i++)
    OK(dart_put_handle(at(g, next_unit, (OS_HANDLE + 4 + i) * sizeof(int)),
                       &vals[4 + i], 1, DART_TYPE_INT, DART_TYPE_INT, &h[i]));
  for (done = 0; !done;) OK(dart_testall(h, 2, &done));
  for (int i = 0; i < 2; i++)
    OK(dart_get_handle(&back[4 + i],
                       at(g, next_unit, (OS_HANDLE + 4 + i) * sizeof(int)), 1,
                       DART_TYPE_INT, DART_TYPE_INT, &h[i]));
  for (done = 0; !done;) OK(dart_testall_local(h, 2, &done));
  CHECK(back[4] == vals[4] && back[5] == vals[5]);

  /* a handle freed unfinished; a flush completes the put */
  dart_gptr_t h6 = at(g, next_unit, (OS_HANDLE + 6) * sizeof(int));
  OK(dart_put_handle(h6, &vals[6], 1, DART_TYPE_INT, DART_TYPE_INT, &h[0]));
  OK(dart_handle_free(&h[0]));
  CHECK(h[0] == DART_HANDLE_NULL);
  OK(dart_flush(h6));
  OK(dart_barrier(DART_TEAM_ALL));
  for (int i = 0; i < 7; i++)
    CHECK_EQ(mine[OS_HANDLE + i], 1000 * prev_unit + i);
  OK(dart_barrier(DART_TEAM_ALL));
  OK(dart_team_memfree(g));
}

static void test_atomics(void)
{
  /* unit 0: [0] sum, [3] fetch-and-add; last unit: [1..2] accumulated
   * pairs, [4] compare-and-swap */
  dart_gptr_t g;
  OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 5, DART_TYPE_LONG, &g));
  long *mine = NULL;
  OK(dart_gptr_getaddr(at(g, me, 0), (void **)&mine));
  mine[0] = mine[1] = mine[2] = mine[3] = 0;
  mine[4] = -1;
  OK(dart_barrier(DART_TEAM_ALL));

  int last = units - 1;
  long inc = me + 1, pair[2] = {1, me};
  OK(dart_accumulate(at(g, 0, 0), &inc, 1, DART_TYPE_LONG, DART_OP_SUM));
  OK(dart_accumulate_blocking_local(at(g, last, sizeof(long)), pair, 2,
                                    DART_TYPE_LONG, DART_OP_SUM));
  pair[0] = pair[1] = -100; /* the values are free again */
  OK(dart_flush_all(g));

  long one = 1, old = -1;
  OK(dart_fetch_and_op(at(g, 0, 3 * sizeof(long)), &one, &old,
                       DART_TYPE_LONG, DART_OP_SUM));
  long olds[MAX_UNITS];
  OK(dart_allgather(&old, olds, 1, DART_TYPE_LONG, DART_TEAM_ALL));
  int seen[MAX_UNITS] = {0};
  for (int u = 0; u < units; u++)
    if (olds[u] >= 0 && olds[u] < units) seen[olds[u]]++;
  for (int u = 0; u < units; u++) CHECK_EQ(seen[u], 1);

  long want = -1, value = me, before = -2;
  OK(dart_compare_and_swap(at(g, last, 4 * sizeof(long)), &value, &want,
                           &before, DART_TYPE_LONG));
  int won = before == -1, winners = 0;
  OK(dart_allreduce(&won, &winners, 1, DART_TYPE_INT, DART_OP_SUM,
                    DART_TEAM_ALL));
  CHECK_EQ(winners, 1);
  OK(dart_barrier(DART_TEAM_ALL));

  long all[5];
  OK(dart_get_blocking(&all[0], at(g, 0, 0), 1, DART_TYPE_LONG,
                       DART_TYPE_LONG));
  CHECK_EQ(all[0], (long)units * (units + 1) / 2);
  OK(dart_get_blocking(&all[0], at(g, 0, 3 * sizeof(long)), 1,
                       DART_TYPE_LONG, DART_TYPE_LONG));
  CHECK_EQ(all[0], units);
  OK(dart_get_blocking(all, at(g, last, 0), 5, DART_TYPE_LONG,
                       DART_TYPE_LONG));
  CHECK_EQ(all[1], units);
  CHECK_EQ(all[2], (long)units * (units - 1) / 2);
  CHECK(all[4] >= 0 && all[4] < units);
  CHECK_EQ(won ? me : before, all[4]);
  OK(dart_barrier(DART_TEAM_ALL));
  OK(dart_team_memfree(g));
}

static void test_locks(void)
{
  dart_lock_t lock = NULL;
  OK(dart_team_lock_init(DART_TEAM_ALL, &lock));
  CHECK(lock != NULL);
  CHECK(CALL(dart_lock_initialized(lock)));
  dart_gptr_t g;
  OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 1, DART_TYPE_LONG, &g));
  long *mine = NULL;
  OK(dart_gptr_getaddr(at(g, me, 0), (void **)&mine));
  *mine = 0;
  OK(dart_barrier(DART_TEAM_ALL));

  /* a read-modify-write of unit 0's counter that only the lock protects */
  const int rounds = 10;
  for (int r = 0; r < 2 * rounds; r++) {
    if (r < rounds) {
      OK(dart_lock_acquire(lock));
    } else {
      int32_t taken = 0;
      while (!taken) OK(dart_lock_try_acquire(lock, &taken));
    }
    long v = -1;
    OK(dart_get_blocking(&v, at(g, 0, 0), 1, DART_TYPE_LONG, DART_TYPE_LONG));
    v++;
    OK(dart_put_blocking(at(g, 0, 0), &v, 1, DART_TYPE_LONG, DART_TYPE_LONG));
    OK(dart_lock_release(lock));
  }
  OK(dart_barrier(DART_TEAM_ALL));
  long count = -1;
  OK(dart_get_blocking(&count, at(g, 0, 0), 1, DART_TYPE_LONG,
                       DART_TYPE_LONG));
  CHECK_EQ(count, 2L * rounds * units);
  OK(dart_barrier(DART_TEAM_ALL));
  OK(dart_team_memfree(g));
  OK(dart_team_lock_destroy(&lock));
  CHECK(lock == NULL);
  CHECK(!CALL(dart_lock_initialized(lock)));
}

/* ---- locality ---- */

static int node_of[MAX_UNITS]; /* node index of every unit (dart_node_info) */
static int num_nodes;

/* A domain's unit list is exactly the units u with want[u], ascending. */
static void check_units(int line, const dart_domain_locality_t *d,
                        const int *want)
{
  int k = 0;
  for (int u = 0; u < units; u++) {
    if (!want[u]) continue;
    if (k >= d->num_units || d->unit_ids[k].id != u)
      FAIL_AT(line, "domain %s: unit %d is %d, not %d", d->domain_tag, k,
              k < d->num_units ? d->unit_ids[k].id : -1, u);
    k++;
  }
  if (k != d->num_units)
    FAIL_AT(line, "domain %s has %d units, not %d", d->domain_tag,
            d->num_units, k);
}

/* want[u] set for the units of domain d */
static void units_in(const dart_domain_locality_t *d, int *want)
{
  for (int u = 0; u < units; u++) want[u] = 0;
  for (int i = 0; i < d->num_units; i++)
    if (d->unit_ids[i].id >= 0 && d->unit_ids[i].id < units)
      want[d->unit_ids[i].id] = 1;
}

/* The tag of child i of a domain tagged parent: ".0" for "." */
static void child_tag(char *out, const char *parent, int i)
{
  snprintf(out, DART_LOCALITY_DOMAIN_TAG_MAX_SIZE, "%s%s%d", parent,
           strcmp(parent, ".") == 0 ? "" : ".", i);
}

/* The team's hierarchy: root, nodes, unit leaves. */
static dart_domain_locality_t *check_team_hierarchy(void)
{
  dart_domain_locality_t *root = NULL;
  OK(dart_domain_team_locality(DART_TEAM_ALL, ".", &root));
  if (root == NULL) return NULL;
  int all[MAX_UNITS];
  for (int u = 0; u < units; u++) all[u] = 1;
  CHECK(strcmp(root->domain_tag, ".") == 0);
  CHECK_EQ(root->scope, DART_LOCALITY_SCOPE_GLOBAL);
  CHECK_EQ(root->team, DART_TEAM_ALL);
  CHECK(root->parent == NULL);
  check_units(__LINE__, root, all);
  CHECK_EQ(root->num_domains, num_nodes);
  CHECK_EQ(root->num_nodes, num_nodes);
  int covered = 0;
  for (int i = 0; i < root->num_domains; i++) {
    dart_domain_locality_t *node = root->children[i];
    char tag[DART_LOCALITY_DOMAIN_TAG_MAX_SIZE];
    child_tag(tag, ".", i);
    CHECK(strcmp(node->domain_tag, tag) == 0);
    CHECK_EQ(node->scope, DART_LOCALITY_SCOPE_NODE);
    CHECK(node->parent == root);
    CHECK_EQ(node->relative_index, i);
    CHECK(node->num_units >= 1);
    /* a node domain holds the units of one node, all of them */
    int on_node[MAX_UNITS];
    for (int u = 0; u < units; u++)
      on_node[u] = node->num_units > 0 &&
                   node_of[u] == node_of[node->unit_ids[0].id];
    check_units(__LINE__, node, on_node);
    covered += node->num_units;
  }
  CHECK_EQ(covered, units);
  return root;
}

/* A stand-in for parallel HDF5's H5Pset_fapl_mpio, which libdart finds in
 * the program (exported: ENABLE_EXPORTS): what it was given. */
static struct {
  int calls;
  int64_t plist;
  int size, rank;
  bool info_null;
} fapl;

int H5Pset_fapl_mpio(int64_t plist, MPI_Comm comm, MPI_Info info);
int H5Pset_fapl_mpio(int64_t plist, MPI_Comm comm, MPI_Info info)
{
  fapl.calls++;
  fapl.plist = plist;
  MPI_Comm_size(comm, &fapl.size);
  MPI_Comm_rank(comm, &fapl.rank);
  fapl.info_null = info == MPI_INFO_NULL;
  return plist < 0 ? -1 : 0; /* HDF5's failure for a bad list */
}

static void test_io(void)
{
  const int64_t plist = 0x0a00000000000007; /* a hid_t of HDF5 1.10 */
  OK(dart__io__hdf5__prep_mpio(plist, DART_TEAM_ALL));
  CHECK_EQ(fapl.calls, 1);
  CHECK(fapl.plist == plist);
  CHECK_EQ(fapl.size, units);
  CHECK_EQ(fapl.rank, me);
  CHECK(fapl.info_null);
  dart_team_t t = create_even_team();
  if (t != DART_TEAM_NULL) {
    OK(dart__io__hdf5__prep_mpio(plist, t));
    CHECK_EQ(fapl.size, (units + 1) / 2);
    CHECK_EQ(fapl.rank, me / 2);
    OK(dart_team_destroy(&t));
  }
  RET(dart__io__hdf5__prep_mpio(-1, DART_TEAM_ALL), DART_ERR_OTHER);
  RET(dart__io__hdf5__prep_mpio(plist, 999), DART_ERR_INVAL);
}

static void test_locality_queries(dart_domain_locality_t *root)
{
  /* one leaf per unit, at core scope */
  int n = -1;
  dart_domain_locality_t **leaves = NULL;
  OK(dart_domain_scope_domains(root, DART_LOCALITY_SCOPE_CORE, &n, &leaves));
  CHECK_EQ(n, units);
  int seen[MAX_UNITS] = {0};
  for (int i = 0; i < n && leaves != NULL; i++) {
    CHECK_EQ(leaves[i]->num_units, 1);
    if (leaves[i]->num_units == 1 && leaves[i]->unit_ids[0].id >= 0 &&
        leaves[i]->unit_ids[0].id < units)
      seen[leaves[i]->unit_ids[0].id]++;
  }
  for (int u = 0; u < units; u++) CHECK_EQ(seen[u], 1);
  free(leaves);

  char **tags = NULL;
  OK(dart_domain_scope_tags(root, DART_LOCALITY_SCOPE_NODE, &n, &tags));
  CHECK_EQ(n, num_nodes);
  for (int i = 0; i < n && tags != NULL; i++) {
    CHECK(i < root->num_domains &&
          strcmp(tags[i], root->children[i]->domain_tag) == 0);
    free(tags[i]);
  }
  free(tags);

  dart_domain_locality_t *d = NULL;
  OK(dart_domain_find(root, ".", &d));
  CHECK(d == root);
  OK(dart_domain_find(root, root->children[num_nodes - 1]->domain_tag, &d));
  CHECK(d == root->children[num_nodes - 1]);
  RET(dart_domain_find(root, ".9999", &d), DART_ERR_NOTFOUND);
  RET(dart_domain_team_locality(DART_TEAM_ALL, ".9999", &d),
      DART_ERR_NOTFOUND);

  /* my record and my leaf; the next unit's record */
  dart_unit_locality_t *loc = NULL;
  OK(dart_unit_locality(DART_TEAM_ALL, DART_TEAM_UNIT_ID(me), &loc));
  if (loc != NULL) {
    CHECK_EQ(loc->unit.id, me);
    CHECK_EQ(loc->team, DART_TEAM_ALL);
    CHECK(loc->hwinfo.host[0] != '\0');
    OK(dart_domain_find(root, loc->domain_tag, &d));
    CHECK(d != NULL && d->scope == DART_LOCALITY_SCOPE_CORE && d->level > 2 &&
          d->num_units == 1 && d->unit_ids[0].id == me);
  }
  OK(dart_unit_locality(DART_TEAM_ALL, DART_TEAM_UNIT_ID(next_unit), &loc));
  if (loc != NULL) {
    CHECK_EQ(loc->unit.id, next_unit);
    OK(dart_domain_find(root, loc->domain_tag, &d));
    CHECK(d != NULL && d->num_units == 1 && d->unit_ids[0].id == next_unit);
  }
}

/* Copies of the hierarchy, edited. */
static void test_locality_edits(const dart_domain_locality_t *root)
{
  int node0[MAX_UNITS], node1[MAX_UNITS], rest[MAX_UNITS];
  units_in(root->children[0], node0);
  for (int u = 0; u < units; u++) rest[u] = !node0[u];
  if (num_nodes > 1) units_in(root->children[1], node1);

  dart_domain_locality_t *empty = NULL, *copy = NULL, *assigned = NULL;
  OK(dart_domain_create(&empty));
  CHECK(empty != NULL && empty->scope == DART_LOCALITY_SCOPE_UNDEFINED &&
        empty->num_units == 0 && empty->num_domains == 0);

  OK(dart_domain_clone(root, &copy));
  CHECK(copy != NULL && copy != root);
  CHECK_EQ(copy->num_domains, num_nodes);
  CHECK(copy->children != root->children &&
        copy->children[0] != root->children[0] &&
        copy->children[0]->parent == copy);
  int all[MAX_UNITS];
  for (int u = 0; u < units; u++) all[u] = 1;
  check_units(__LINE__, copy, all);

  OK(dart_domain_create(&assigned));
  OK(dart_domain_assign(assigned, root));
  CHECK(strcmp(assigned->domain_tag, ".") == 0 &&
        assigned->num_domains == num_nodes &&
        assigned->children[0]->parent == assigned);
  check_units(__LINE__, assigned, all);

  /* only node 0 remains; the copy's units follow */
  const char *first[] = {".0"};
  OK(dart_domain_select(copy, 1, first));
  CHECK_EQ(copy->num_domains, 1);
  CHECK(strcmp(copy->children[0]->domain_tag, ".0") == 0);
  check_units(__LINE__, copy, node0);
  /* node 0 leaves the other copy */
  OK(dart_domain_exclude(assigned, 1, first));
  CHECK_EQ(assigned->num_domains, num_nodes - 1);
  check_units(__LINE__, assigned, rest);

  /* node 1 (or an empty domain on one node) joins the first copy */
  dart_domain_locality_t *sub = NULL;
  if (num_nodes > 1)
    OK(dart_domain_clone(root->children[1], &sub));
  else
    OK(dart_domain_create(&sub));
  int joined[MAX_UNITS];
  for (int u = 0; u < units; u++)
    joined[u] = node0[u] || (num_nodes > 1 && node1[u]);
  OK(dart_domain_add_subdomain(copy, sub, -1));
  CHECK_EQ(copy->num_domains, 2);
  CHECK(copy->children[1]->parent == copy &&
        strcmp(copy->children[1]->domain_tag, ".1") == 0);
  check_units(__LINE__, copy, joined);

  /* ... and moves below node 0 */
  int below = copy->children[0]->num_domains;
  OK(dart_domain_move_subdomain(copy->children[1], copy->children[0], -1));
  CHECK_EQ(copy->num_domains, 1);
  dart_domain_locality_t *n0 = copy->children[0];
  CHECK_EQ(n0->num_domains, below + 1);
  char tag[DART_LOCALITY_DOMAIN_TAG_MAX_SIZE];
  child_tag(tag, ".0", below);
  CHECK(n0->num_domains == below + 1 &&
        strcmp(n0->children[below]->domain_tag, tag) == 0 &&
        n0->children[below]->parent == n0);
  check_units(__LINE__, n0, joined);
  check_units(__LINE__, copy, joined);

  /* all nodes of a third copy in one group */
  dart_domain_locality_t *grouped = NULL;
  OK(dart_domain_clone(root, &grouped));
  const char *node_tags[MAX_UNITS];
  for (int i = 0; i < num_nodes; i++)
    node_tags[i] = root->children[i]->domain_tag;
  char group_tag[DART_LOCALITY_DOMAIN_TAG_MAX_SIZE] = "";
  OK(dart_domain_group(grouped, num_nodes, node_tags, group_tag));
  CHECK(strcmp(group_tag, ".0") == 0);
  CHECK_EQ(grouped->num_domains, 1);
  dart_domain_locality_t *group = NULL;
  OK(dart_domain_find(grouped, group_tag, &group));
  CHECK(group != NULL && group == grouped->children[0] &&
        group->scope == DART_LOCALITY_SCOPE_GROUP &&
        group->num_domains == num_nodes);
  if (group != NULL) check_units(__LINE__, group, all);

  /* two parts along the nodes: whole nodes, a contiguous run each */
  dart_domain_locality_t parts[2];
  OK(dart_domain_split_scope(root, DART_LOCALITY_SCOPE_NODE, 2, parts));
  CHECK_EQ(parts[0].num_units + parts[1].num_units, units);
  int in0[MAX_UNITS];
  units_in(&parts[0], in0);
  int nodes0 = 0; /* nodes in part 0: the first ones */
  while (nodes0 < num_nodes && in0[root->children[nodes0]->unit_ids[0].id])
    nodes0++;
  int want0[MAX_UNITS], want1[MAX_UNITS];
  for (int u = 0; u < units; u++) {
    want0[u] = 0;
    for (int i = 0; i < nodes0; i++)
      want0[u] |= node_of[u] == node_of[root->children[i]->unit_ids[0].id];
    want1[u] = !want0[u];
  }
  check_units(__LINE__, &parts[0], want0);
  check_units(__LINE__, &parts[1], want1);
  if (num_nodes > 1) CHECK(nodes0 > 0 && nodes0 < num_nodes);
  for (int i = 0; i < 2; i++) OK(dart_domain_assign(&parts[i], empty));

  dart_domain_locality_t *mine[] = {empty, copy, assigned, grouped};
  for (int i = 0; i < 4; i++) OK(dart_domain_destroy(mine[i]));
}

/* dart_group_locality_split at node scope: one group per node */
static void test_locality_split(dart_domain_locality_t *root)
{
  dart_group_t all = NULL, groups[MAX_UNITS];
  OK(dart_team_get_group(DART_TEAM_ALL, &all));
  size_t nout = 0;
  OK(dart_group_locality_split(all, root, DART_LOCALITY_SCOPE_NODE,
                               (size_t)num_nodes, &nout, groups));
  CHECK_EQ(nout, num_nodes);
  for (size_t i = 0; i < nout && (int)i < root->num_domains; i++) {
    int want[MAX_UNITS];
    units_in(root->children[i], want);
    check_group(__LINE__, groups[i], want);
  }
  for (size_t i = 0; i < (size_t)num_nodes; i++)
    OK(dart_group_destroy(&groups[i]));
  /* one group: everyone */
  OK(dart_group_locality_split(all, root, DART_LOCALITY_SCOPE_NODE, 1, &nout,
                               groups));
  CHECK_EQ(nout, 1);
  int every[MAX_UNITS];
  for (int u = 0; u < units; u++) every[u] = 1;
  check_group(__LINE__, groups[0], every);
  OK(dart_group_destroy(&groups[0]));
  OK(dart_group_destroy(&all));
}

/* The hierarchy of a created team: rebuilt, queried, released. */
static void test_team_locality(void)
{
  dart_team_t t = create_even_team();
  if (t == DART_TEAM_NULL) return;
  OK(dart_team_locality_init(t));
  dart_domain_locality_t *d = NULL;
  OK(dart_domain_team_locality(t, ".", &d));
  if (d != NULL) {
    int even[MAX_UNITS];
    for (int u = 0; u < units; u++) even[u] = u % 2 == 0;
    CHECK_EQ(d->team, t);
    check_units(__LINE__, d, even);
  }
  dart_unit_locality_t *loc = NULL;
  OK(dart_unit_locality(t, DART_TEAM_UNIT_ID(0), &loc));
  CHECK(loc != NULL && loc->unit.id == 0 && loc->team == t);
  OK(dart_team_locality_finalize(t));
  OK(dart_team_destroy(&t));
}

static void test_locality(void)
{
  int my_node = -1;
  CHECK_OK(dart_node_info(&num_nodes, &my_node));
  OK(dart_allgather(&my_node, node_of, 1, DART_TYPE_INT, DART_TEAM_ALL));
  dart_domain_locality_t *root = check_team_hierarchy();
  if (root == NULL || root->num_domains != num_nodes) {
    FAILF("no usable hierarchy of DART_TEAM_ALL: the rest is skipped");
    return;
  }
  test_locality_queries(root);
  test_locality_edits(root);
  test_locality_split(root);
  test_team_locality();
}

/* Every function of the table was called, by some unit. */
static void check_calls(void)
{
  int by_all[NUM_FUNCTIONS];
  CHECK_OK(dart_allreduce(calls, by_all, NUM_FUNCTIONS, DART_TYPE_INT,
                          DART_OP_SUM, DART_TEAM_ALL));
  for (size_t i = 0; i < NUM_FUNCTIONS && me == 0; i++) {
    CHECK(table[i].address != NULL);
    /* dart_abort ends the job: the "abort" runs call it */
    if (by_all[i] == 0 && strcmp(table[i].name, "dart_abort") != 0)
      FAILF("%s was not called", table[i].name);
  }
}

/* The last unit ends the job while the others wait in a barrier. */
static int run_abort(int *argc, char ***argv, int code)
{
  if (dart_init(argc, argv) != DART_OK) return 1;
  dart_global_unit_t id;
  size_t size;
  if (dart_myid(&id) != DART_OK || dart_size(&size) != DART_OK) return 1;
  if ((size_t)id.id == size - 1) CALL(dart_abort(code));
  dart_barrier(DART_TEAM_ALL);
  fprintf(stderr, "[unit %d] the job outlived dart_abort\n", id.id);
  return 1;
}

int main(int argc, char **argv)
{
  if (argc > 2 && strcmp(argv[1], "abort") == 0)
    return run_abort(&argc, &argv, atoi(argv[2]));

  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &units);
  dart_test_unit = me;
  dart_test_units = units;
  if (units > MAX_UNITS) {
    fprintf(stderr, "at most %d units\n", MAX_UNITS);
    MPI_Finalize();
    return DART_TEST_SKIP;
  }
  next_unit = (me + 1) % units;
  prev_unit = (me + units - 1) % units;

  test_init(&argc, &argv, provided);
  test_groups();
  test_teams();
  test_types();
  test_globmem();
  test_collectives();
  test_two_sided();
  test_onesided();
  test_atomics();
  test_locks();
  test_locality();
  test_io();
  check_calls();

  OK(dart_exit());
  CHECK(!CALL(dart_initialized()));
  int total = 0;
  MPI_Allreduce(&dart_test_failures, &total, 1, MPI_INT, MPI_SUM,
                MPI_COMM_WORLD);
  if (me == 0)
    printf("%s: %d failed checks\n", total ? "FAILED" : "PASSED", total);
  MPI_Finalize();
  return total ? 1 : 0;
}
