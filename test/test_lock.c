/*
 * Mutual exclusion: dart_lock and a spin lock built on compare-and-swap
 * each protect a non-atomic read-modify-write of a shared record (get,
 * change, put); no update may be lost and the record's fields must always
 * agree. Also try_acquire, locks of sub-teams, the lock's bad input, and
 * locks destroyed after their team or DART went (DASH's Mutex may outlive
 * both): that succeeds without a log line.
 *
 * DART_TEST_ITERS scales the rounds per unit (default 1000 -> 200).
 */
#define _GNU_SOURCE
#include <dart/dart_ext.h>

#include "dart_test_capture.h"

static int me, n;

typedef struct {
  long count;
  long mirror;  /* always equal to count between critical sections */
  long last;    /* unit of the last update */
} record_t;

static int rounds(void)
{
  const char *s = getenv("DART_TEST_ITERS");
  return (s ? atoi(s) : 1000) / 5;
}

/* The critical section: read, check, change, write back. */
static void update(dart_gptr_t rec, int unit)
{
  record_t r;
  CHECK_OK(dart_get_blocking(&r, rec, 3, DART_TYPE_LONG, DART_TYPE_LONG));
  if (r.count != r.mirror)
    FAILF("record torn: count %ld, mirror %ld (last writer %ld)", r.count,
          r.mirror, r.last);
  r.count++;
  r.last = unit;
  CHECK_OK(dart_put_blocking(rec, &r.count, 1, DART_TYPE_LONG, DART_TYPE_LONG));
  dart_gptr_t m = rec;
  m.addr_or_offs.offset += sizeof(long);
  r.mirror = r.count;
  CHECK_OK(dart_put_blocking(m, &r.mirror, 2, DART_TYPE_LONG, DART_TYPE_LONG));
}

static dart_gptr_t alloc_record(dart_team_t team, int owner)
{
  dart_gptr_t rec;
  CHECK_OK(dart_team_memalloc_aligned(team, 4, DART_TYPE_LONG, &rec));
  dart_gptr_setunit(&rec, DART_TEAM_UNIT_ID(owner));
  record_t *mine;
  CHECK_OK(dart_gptr_getaddr(rec, (void **)&mine));
  if (mine) memset(mine, 0, sizeof *mine);
  CHECK_OK(dart_barrier(team));
  return rec;
}

static void check_record(dart_team_t team, dart_gptr_t rec, long want)
{
  CHECK_OK(dart_barrier(team));
  record_t r;
  CHECK_OK(dart_get_blocking(&r, rec, 3, DART_TYPE_LONG, DART_TYPE_LONG));
  if (r.count != want || r.mirror != want)
    FAILF("team %d: count %ld mirror %ld, expected %ld", (int)team, r.count,
          r.mirror, want);
  rec.addr_or_offs.offset = 0;
  dart_gptr_setunit(&rec, DART_TEAM_UNIT_ID(0));
  CHECK_OK(dart_barrier(team));
  CHECK_OK(dart_team_memfree(rec));
}

static void test_dart_lock(dart_team_t team, int tme, int tn)
{
  dart_lock_t lock = NULL;
  CHECK(!dart_lock_initialized(lock));
  CHECK_OK(dart_team_lock_init(team, &lock));
  CHECK(dart_lock_initialized(lock));
  dart_gptr_t rec = alloc_record(team, tn - 1);
  int k = rounds();
  for (int i = 0; i < k; i++) {
    if (i % 3 == 2) {
      int32_t got = 0;
      CHECK_OK(dart_lock_try_acquire(lock, &got));
      if (!got) CHECK_OK(dart_lock_acquire(lock));
    } else {
      CHECK_OK(dart_lock_acquire(lock));
    }
    update(rec, tme);
    CHECK_OK(dart_lock_release(lock));
  }
  check_record(team, rec, (long)k * tn);

  /* try_acquire fails while another unit holds the lock */
  if (tme == 0) CHECK_OK(dart_lock_acquire(lock));
  CHECK_OK(dart_barrier(team));
  if (tme != 0) {
    int32_t got = 1;
    CHECK_OK(dart_lock_try_acquire(lock, &got));
    CHECK_EQ(got, 0);
  }
  CHECK_OK(dart_barrier(team));
  if (tme == 0) CHECK_OK(dart_lock_release(lock));
  CHECK_OK(dart_barrier(team));
  if (tme == tn - 1) {
    int32_t got = 0;
    CHECK_OK(dart_lock_try_acquire(lock, &got));
    CHECK_EQ(got, 1);
    if (got) CHECK_OK(dart_lock_release(lock));
  }
  CHECK_OK(dart_barrier(team));
  CHECK_OK(dart_team_lock_destroy(&lock));
  CHECK(lock == NULL);
  CHECK(!dart_lock_initialized(lock));
}

/* A test-and-set lock on one word with compare-and-swap. */
static void test_cas_lock(dart_team_t team, int tme, int tn)
{
  dart_gptr_t word;
  CHECK_OK(dart_team_memalloc_aligned(team, 1, DART_TYPE_INT, &word));
  int *mine;
  CHECK_OK(dart_gptr_getaddr(word, (void **)&mine));
  if (mine) *mine = 0;
  dart_gptr_t rec = alloc_record(team, 0);
  int k = rounds(), free_ = 0, taken = tme + 1, seen;
  for (int i = 0; i < k; i++) {
    for (;;) {
      CHECK_OK(dart_compare_and_swap(word, &taken, &free_, &seen,
                                     DART_TYPE_INT));
      if (seen == free_) break;
    }
    update(rec, tme);
    CHECK_OK(dart_fetch_and_op(word, &free_, &seen, DART_TYPE_INT,
                               DART_OP_REPLACE));
    CHECK_EQ(seen, taken);
  }
  check_record(team, rec, (long)k * tn);
  CHECK_OK(dart_team_memfree(word));
}

static void test_bad_input(void)
{
  dart_lock_t lock = NULL;
  int32_t got;
  CHECK_RET(dart_team_lock_init(DART_TEAM_ALL, NULL), DART_ERR_INVAL);
  CHECK_RET(dart_team_lock_init(1000, &lock), DART_ERR_INVAL);
  CHECK(lock == NULL);
  CHECK_RET(dart_lock_acquire(NULL), DART_ERR_INVAL);
  CHECK_RET(dart_lock_release(NULL), DART_ERR_INVAL);
  CHECK_RET(dart_lock_try_acquire(NULL, &got), DART_ERR_INVAL);
  CHECK_RET(dart_team_lock_destroy(NULL), DART_ERR_INVAL);
  CHECK_RET(dart_team_lock_destroy(&lock), DART_ERR_INVAL);
  CHECK_OK(dart_team_lock_init(DART_TEAM_ALL, &lock));
  dart_lock_t stale = lock;
  CHECK_RET(dart_lock_release(lock), DART_ERR_INVAL); /* not held */
  CHECK_RET(dart_lock_try_acquire(lock, NULL), DART_ERR_INVAL);
  CHECK_OK(dart_lock_acquire(lock));
  CHECK_RET(dart_lock_acquire(lock), DART_ERR_INVAL); /* held already */
  CHECK_RET(dart_lock_try_acquire(lock, &got), DART_ERR_INVAL);
  CHECK_RET(dart_team_lock_destroy(&lock), DART_ERR_INVAL); /* held */
  CHECK(lock == stale);
  CHECK_OK(dart_lock_release(lock));
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_OK(dart_team_lock_destroy(&lock));
  CHECK(lock == NULL);
  /* a stale copy of a destroyed lock */
  CHECK(!dart_lock_initialized(stale));
  CHECK_RET(dart_lock_acquire(stale), DART_ERR_INVAL);
  CHECK_RET(dart_lock_release(stale), DART_ERR_INVAL);
}

int main(int argc, char **argv)
{
  dart_test_init(&argc, &argv);
  me = dart_test_unit;
  n = dart_test_units;
  capture_init();
  test_dart_lock(DART_TEAM_ALL, me, n);
  test_cas_lock(DART_TEAM_ALL, me, n);

  /* two halves, each with its own lock, while ALL's lock is held in turn */
  dart_group_t all, halves[2];
  size_t nout = 0;
  CHECK_OK(dart_group_create(&all));
  for (int u = 0; u < n; u++)
    CHECK_OK(dart_group_addmember(all, DART_GLOBAL_UNIT_ID(u)));
  CHECK_OK(dart_group_split(all, 2, &nout, halves));
  dart_team_t half[2] = {DART_TEAM_NULL, DART_TEAM_NULL};
  for (int h = 0; h < 2; h++)
    CHECK_OK(dart_team_create(DART_TEAM_ALL, halves[h], &half[h]));
  dart_team_t mine = half[0] != DART_TEAM_NULL ? half[0] : half[1];
  size_t tn;
  dart_team_unit_t tme;
  CHECK_OK(dart_team_size(mine, &tn));
  CHECK_OK(dart_team_myid(mine, &tme));
  test_dart_lock(mine, tme.id, (int)tn);
  dart_lock_t of_half = NULL;
  CHECK_OK(dart_team_lock_init(mine, &of_half));
  for (int h = 0; h < 2; h++) {
    if (half[h] != DART_TEAM_NULL) CHECK_OK(dart_team_destroy(&half[h]));
    CHECK_OK(dart_group_destroy(&halves[h]));
  }
  CHECK_OK(dart_group_destroy(&all));
  capture_begin();
  CHECK_OK(dart_team_lock_destroy(&of_half));
  char text[512];
  int lines = capture_end(text, sizeof text);
  CHECK(of_half == NULL);
  if (lines != 0) FAILF("destroying a lock of a destroyed team logged: %s", text);

  test_bad_input();
  dart_lock_t outlives = NULL;
  CHECK_OK(dart_team_lock_init(DART_TEAM_ALL, &outlives));
  int failed = dart_test_combine_and_exit();
  capture_begin();
  dart_ret_t ret = dart_team_lock_destroy(&outlives);
  lines = capture_end(text, sizeof text);
  capture_fini();
  if (ret != DART_OK || outlives != NULL || lines != 0) {
    fprintf(stderr, "[unit %d] FAIL: a lock destroyed after dart_exit: %d, "
            "%p, logged: %s\n", me, (int)ret, (void *)outlives, text);
    failed++;
  }
  return failed;
}
