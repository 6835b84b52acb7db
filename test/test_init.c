/*
 * Start-up and shut-down: dart_initialized before, during and after the
 * runtime's life; every call before dart_init and after dart_exit returns
 * DART_ERR_NOTINIT; dart_config; dart_myid/dart_size against DART_TEAM_ALL;
 * a second dart_init (and dart_init_thread) returns DART_ERR_OTHER.
 *
 * The pre-init checks run before dart_test_init (which calls dart_init);
 * the post-exit checks run in finish() below, after the failure counts of
 * all units were combined, and are reported by each unit on its own.
 */
#include "dart_test.h"

static void dummy_op(const void *invec, void *inoutvec, size_t len,
                     void *user_data)
{
  (void)invec;
  (void)inoutvec;
  (void)len;
  (void)user_data;
}

/* A gptr that looks like a collective allocation on DART_TEAM_ALL. */
static dart_gptr_t some_gptr(void)
{
  dart_gptr_t g = DART_GPTR_NULL;
  g.unitid = 0;
  g.segid = 1;
  g.teamid = DART_TEAM_ALL;
  g.addr_or_offs.offset = 0;
  return g;
}

/* Calls that must all return DART_ERR_NOTINIT (before init, after exit). */
static void check_not_initialised(const char *when)
{
  int before = dart_test_failures;
  dart_global_unit_t gu = {-5};
  dart_team_unit_t tu = {-5};
  size_t size = 12345;
  int ibuf[4] = {1, 2, 3, 4}, ibuf2[4] = {0, 0, 0, 0};
  dart_gptr_t g = some_gptr();
  dart_group_t grp = NULL;
  dart_team_t team = (dart_team_t)1;
  dart_datatype_t dt = DART_TYPE_UNDEFINED;
  dart_operation_t op = DART_OP_UNDEFINED;
  void *addr = NULL;
  dart_handle_t h = DART_HANDLE_NULL;

  CHECK(!dart_initialized());
  CHECK_RET(dart_myid(&gu), DART_ERR_NOTINIT);
  CHECK_RET(dart_size(&size), DART_ERR_NOTINIT);
  CHECK_RET(dart_team_myid(DART_TEAM_ALL, &tu), DART_ERR_NOTINIT);
  CHECK_RET(dart_team_size(DART_TEAM_ALL, &size), DART_ERR_NOTINIT);
  CHECK_RET(dart_team_unit_l2g(DART_TEAM_ALL, DART_TEAM_UNIT_ID(0), &gu),
            DART_ERR_NOTINIT);
  CHECK_RET(dart_team_unit_g2l(DART_TEAM_ALL, DART_GLOBAL_UNIT_ID(0), &tu),
            DART_ERR_NOTINIT);
  CHECK_RET(dart_team_get_group(DART_TEAM_ALL, &grp), DART_ERR_NOTINIT);
  CHECK_RET(dart_team_clone(DART_TEAM_ALL, &team), DART_ERR_NOTINIT);
  CHECK_RET(dart_team_destroy(&team), DART_ERR_NOTINIT);
  CHECK_RET(dart_group_create(&grp), DART_ERR_NOTINIT);
  CHECK_RET(dart_barrier(DART_TEAM_ALL), DART_ERR_NOTINIT);
  CHECK_RET(dart_bcast(ibuf, 4, DART_TYPE_INT, DART_TEAM_UNIT_ID(0),
                       DART_TEAM_ALL),
            DART_ERR_NOTINIT);
  CHECK_RET(dart_allreduce(ibuf, ibuf2, 4, DART_TYPE_INT, DART_OP_SUM,
                           DART_TEAM_ALL),
            DART_ERR_NOTINIT);
  CHECK_RET(dart_allgather(ibuf, ibuf2, 1, DART_TYPE_INT, DART_TEAM_ALL),
            DART_ERR_NOTINIT);
  CHECK_RET(dart_send(ibuf, 1, DART_TYPE_INT, 0, DART_GLOBAL_UNIT_ID(0)),
            DART_ERR_NOTINIT);
  CHECK_RET(dart_recv(ibuf2, 1, DART_TYPE_INT, 0, DART_GLOBAL_UNIT_ID(0)),
            DART_ERR_NOTINIT);
  CHECK_RET(dart_memalloc(4, DART_TYPE_INT, &g), DART_ERR_NOTINIT);
  g = some_gptr();
  CHECK_RET(dart_memfree(g), DART_ERR_NOTINIT);
  CHECK_RET(dart_team_memalloc_aligned(DART_TEAM_ALL, 4, DART_TYPE_INT, &g),
            DART_ERR_NOTINIT);
  g = some_gptr();
  CHECK_RET(dart_team_memfree(g), DART_ERR_NOTINIT);
  CHECK_RET(dart_gptr_getaddr(g, &addr), DART_ERR_NOTINIT);
  CHECK_RET(dart_put_blocking(g, ibuf, 1, DART_TYPE_INT, DART_TYPE_INT),
            DART_ERR_NOTINIT);
  CHECK_RET(dart_get_blocking(ibuf2, g, 1, DART_TYPE_INT, DART_TYPE_INT),
            DART_ERR_NOTINIT);
  CHECK_RET(dart_put(g, ibuf, 1, DART_TYPE_INT, DART_TYPE_INT),
            DART_ERR_NOTINIT);
  CHECK_RET(dart_put_handle(g, ibuf, 1, DART_TYPE_INT, DART_TYPE_INT, &h),
            DART_ERR_NOTINIT);
  CHECK_RET(dart_flush(g), DART_ERR_NOTINIT);
  CHECK_RET(dart_accumulate(g, ibuf, 1, DART_TYPE_INT, DART_OP_SUM),
            DART_ERR_NOTINIT);
  CHECK_RET(dart_accumulate_blocking_local(g, ibuf, 1, DART_TYPE_INT,
                                           DART_OP_SUM),
            DART_ERR_NOTINIT);
  CHECK_RET(dart_fetch_and_op(g, ibuf, ibuf2, DART_TYPE_INT, DART_OP_SUM),
            DART_ERR_NOTINIT);
  CHECK_RET(dart_compare_and_swap(g, ibuf, ibuf, ibuf2, DART_TYPE_INT),
            DART_ERR_NOTINIT);
  CHECK(ibuf2[0] == 0);
  dart_lock_t lock = NULL;
  int32_t got = -1;
  CHECK_RET(dart_team_lock_init(DART_TEAM_ALL, &lock), DART_ERR_NOTINIT);
  CHECK(lock == NULL);
  CHECK_RET(dart_lock_acquire(lock), DART_ERR_NOTINIT);
  CHECK_RET(dart_lock_try_acquire(lock, &got), DART_ERR_NOTINIT);
  CHECK_RET(dart_lock_release(lock), DART_ERR_NOTINIT);
  CHECK_RET(dart_team_lock_destroy(&lock), DART_ERR_NOTINIT);
  CHECK(got == -1 && !dart_lock_initialized(lock));
  uint64_t batches = 12345;
  CHECK_RET(dart_acc_batches(&batches, &batches, &batches), DART_ERR_NOTINIT);
  CHECK(batches == 12345);
  CHECK_RET(dart_type_create_strided(DART_TYPE_INT, 2, 1, &dt),
            DART_ERR_NOTINIT);
  CHECK_RET(dart_type_create_custom(8, &dt), DART_ERR_NOTINIT);
  CHECK_RET(dart_op_create(dummy_op, NULL, true, DART_TYPE_INT, false, &op),
            DART_ERR_NOTINIT);
  CHECK_RET(dart_exit(), DART_ERR_NOTINIT);
  CHECK(!dart_initialized());
  if (dart_test_failures != before) {
    fprintf(stderr, "[unit %d] (the failures above: %s)\n", dart_test_unit,
            when);
  }
}

/* dart_test_finish, followed by the checks after dart_exit. */
static int finish(void)
{
  int total = dart_test_combine_and_exit();
  /* after dart_exit: each unit checks and counts on its own */
  int before = dart_test_failures;
  check_not_initialised("after dart_exit");
  {
    dart_config_t *cfg = NULL;
    dart_config(&cfg);
    CHECK(cfg != NULL);
  }
  int late = dart_test_failures - before;
  total += late;
  if (dart_test_unit == 0) {
    printf("%s: %d failed checks\n", total ? "FAILED" : "PASSED", total);
  } else if (late) {
    printf("FAILED: %d failed checks after dart_exit on unit %d\n", late,
           dart_test_unit);
  }
  return total ? 1 : 0;
}

int main(int argc, char **argv)
{
  /* ---- before dart_init ---- */
  {
    dart_config_t *cfg = NULL;
    dart_config(&cfg);
    CHECK(cfg != NULL);
  }
  check_not_initialised("before dart_init");

  /* ---- dart_init ---- */
  dart_test_init(&argc, &argv);
  CHECK(dart_initialized());
  {
    dart_config_t *cfg = NULL;
    dart_config(&cfg);
    CHECK(cfg != NULL);
  }

  dart_global_unit_t me = {-5};
  size_t size = 0;
  CHECK_OK(dart_myid(&me));
  CHECK_OK(dart_size(&size));
  CHECK(size >= 1);
  CHECK(me.id >= 0 && (size_t)me.id < size);
  CHECK_EQ(me.id, dart_test_unit);

  dart_team_unit_t tme = {-5};
  size_t tsize = 0;
  CHECK_OK(dart_team_myid(DART_TEAM_ALL, &tme));
  CHECK_OK(dart_team_size(DART_TEAM_ALL, &tsize));
  CHECK_EQ(tme.id, me.id);
  CHECK_EQ(tsize, size);
  for (size_t i = 0; i < size; i++) {
    dart_global_unit_t gu = {-5};
    CHECK_OK(dart_team_unit_l2g(DART_TEAM_ALL, DART_TEAM_UNIT_ID((int)i), &gu));
    CHECK_EQ(gu.id, i);
  }

  /* every unit has a different id; all agree on the size */
  {
    int *ids = malloc(size * sizeof *ids);
    int mine = me.id;
    for (size_t i = 0; i < size; i++) ids[i] = -1;
    CHECK_OK(dart_allgather(&mine, ids, 1, DART_TYPE_INT, DART_TEAM_ALL));
    for (size_t i = 0; i < size; i++) CHECK_EQ(ids[i], i);
    free(ids);
    long ls = (long)size, smin = -1, smax = -1;
    CHECK_OK(dart_allreduce(&ls, &smin, 1, DART_TYPE_LONG, DART_OP_MIN,
                            DART_TEAM_ALL));
    CHECK_OK(dart_allreduce(&ls, &smax, 1, DART_TYPE_LONG, DART_OP_MAX,
                            DART_TEAM_ALL));
    CHECK_EQ(smin, size);
    CHECK_EQ(smax, size);
  }

  /* ---- a second dart_init / dart_init_thread ---- */
  CHECK_RET(dart_init(&argc, &argv), DART_ERR_OTHER);
  {
    dart_thread_support_level_t lvl = DART_THREAD_SINGLE;
    CHECK_RET(dart_init_thread(&argc, &argv, &lvl), DART_ERR_OTHER);
  }
  CHECK(dart_initialized());
  {
    dart_global_unit_t me2 = {-5};
    size_t size2 = 0;
    CHECK_OK(dart_myid(&me2));
    CHECK_OK(dart_size(&size2));
    CHECK_EQ(me2.id, me.id);
    CHECK_EQ(size2, size);
    int one = 1, n = 0;
    CHECK_OK(dart_allreduce(&one, &n, 1, DART_TYPE_INT, DART_OP_SUM,
                            DART_TEAM_ALL));
    CHECK_EQ(n, size);
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));

  /* the gptr the checks after dart_exit use, used now: its route is in
   * the hot paths' cache, and dart_exit frees it */
  {
    dart_gptr_t g = DART_GPTR_NULL;
    int v = 1, old = 0;
    CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 4, DART_TYPE_INT, &g));
    CHECK(DART_GPTR_EQUAL(g, some_gptr()));
    g.unitid = 0;
    CHECK_OK(dart_put_blocking(g, &v, 1, DART_TYPE_INT, DART_TYPE_INT));
    CHECK_OK(dart_fetch_and_op(g, &v, &old, DART_TYPE_INT, DART_OP_SUM));
    CHECK_OK(dart_accumulate(g, &v, 1, DART_TYPE_INT, DART_OP_SUM));
    CHECK_OK(dart_flush(g));
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
  }

  /* ---- dart_exit and the checks after it ---- */
  return finish();
}
