/*
 * Memory ordering, on every path:
 *  1. direct stores into the own part (dart_gptr_getaddr), dart_barrier,
 *     then every unit reads every part with gets and, for node peers, with
 *     direct loads (dart_gptr_getaddr_shared);
 *  2. message passing: a unit writes a buffer of the next unit (dart_put,
 *     or direct stores through dart_gptr_getaddr_shared where it can),
 *     flushes the previous unit, to which it only got and fetched (a
 *     flush with nothing to complete, which must leave the put alone),
 *     completes the put (dart_flush), overwrites its source at once and
 *     raises a flag there with an atomic; the next unit waits for the
 *     flag with atomic reads and then reads the buffer with direct loads,
 *     and acknowledges with an atomic. Any reordering shows as a stale
 *     buffer, and a flush that returned while the transport still read
 *     the source (UCX over TCP sends large puts in fragments as it can)
 *     as the overwritten data: once with small buffers, once with 1 MiB.
 *  3. the same from unit 0 to every other unit at once, completed by one
 *     dart_flush_all (the MPI path flushes a few targets one by one and
 *     more all together: 2-4 and 8 units take both); and before each
 *     round unit 0 gets the previous round's buffers back, completed by
 *     one dart_flush_all, and checks them at once.
 *  4. store buffering: units 2k and 2k+1 each complete a put to the
 *     other (blocking; non-blocking + dart_flush; handle + dart_wait) and
 *     then get the word the other put to them. A completed put is there
 *     before the caller's next access, so at most one of the two may
 *     read the old value; a put whose stores wait in the CPU's store
 *     buffer past the get shows as both reading it.
 */
#include <dart/dart_ext.h>
#include <sched.h>

#include "dart_test.h"

enum {
  WORDS = 64,
  ROUNDS = 300,
  BIG_WORDS = 1 << 17, /* 1 MiB */
  BIG_ROUNDS = 8
};

static int me, n;

static long value(int unit, int round, int i)
{
  return ((long)unit << 40) ^ ((long)round << 16) ^ i;
}

static void barrier_visibility(void)
{
  dart_gptr_t g;
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, WORDS, DART_TYPE_LONG,
                                      &g));
  dart_gptr_t mine_g = g;
  dart_gptr_setunit(&mine_g, DART_TEAM_UNIT_ID(me));
  long *mine;
  CHECK_OK(dart_gptr_getaddr(mine_g, (void **)&mine));
  for (int r = 0; r < 20; r++) {
    for (int i = 0; i < WORDS; i++) mine[i] = value(me, r, i);
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    for (int u = 0; u < n; u++) {
      dart_gptr_t gu = g;
      dart_gptr_setunit(&gu, DART_TEAM_UNIT_ID(u));
      long got[WORDS];
      CHECK_OK(dart_get_blocking(got, gu, WORDS, DART_TYPE_LONG,
                                 DART_TYPE_LONG));
      long *direct = NULL;
      CHECK_OK(dart_gptr_getaddr_shared(gu, (void **)&direct));
      for (int i = 0; i < WORDS; i++) {
        if (got[i] != value(u, r, i) ||
            (direct && direct[i] != value(u, r, i))) {
          FAILF("round %d: unit %d word %d: get %lx, load %lx", r, u, i,
                (unsigned long)got[i],
                direct ? (unsigned long)direct[i] : 0ul);
          break;
        }
      }
    }
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
  }
  CHECK_OK(dart_team_memfree(g));
}

/* Waits until the long at g holds want; false after too long. */
static bool await_value(dart_gptr_t g, long want)
{
  for (long spins = 0; spins <= 100000000L; spins++) {
    long seen = want - 1;
    CHECK_OK(dart_fetch_and_op(g, NULL, &seen, DART_TYPE_LONG,
                               DART_OP_NO_OP));
    if (seen == want) return true;
    sched_yield(); /* units may outnumber cores */
  }
  return false;
}

/* words [0, words): the buffer; words: flag (round written); words + 1:
 * acknowledgement (round read) */
static void message_passing(bool direct_stores, int words, long rounds)
{
  dart_gptr_t g;
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, (size_t)words + 2,
                                      DART_TYPE_LONG, &g));
  int next = (me + 1) % n, prev = (me + n - 1) % n;
  dart_gptr_t buf_next = g, flag_next = g, ack_mine = g, mine_g = g;
  dart_gptr_setunit(&buf_next, DART_TEAM_UNIT_ID(next));
  dart_gptr_setunit(&flag_next, DART_TEAM_UNIT_ID(next));
  flag_next.addr_or_offs.offset = (uint64_t)words * sizeof(long);
  dart_gptr_setunit(&ack_mine, DART_TEAM_UNIT_ID(me));
  ack_mine.addr_or_offs.offset = ((uint64_t)words + 1) * sizeof(long);
  dart_gptr_setunit(&mine_g, DART_TEAM_UNIT_ID(me));
  dart_gptr_t flag_mine = mine_g, ack_prev = g;
  flag_mine.addr_or_offs.offset = (uint64_t)words * sizeof(long);
  dart_gptr_setunit(&ack_prev, DART_TEAM_UNIT_ID(prev));
  ack_prev.addr_or_offs.offset = ((uint64_t)words + 1) * sizeof(long);
  long *mine, *next_direct = NULL, *out = malloc((size_t)words * sizeof *out);
  CHECK(out != NULL);
  CHECK_OK(dart_gptr_getaddr(mine_g, (void **)&mine));
  for (int i = 0; i < words + 2; i++) mine[i] = -1;
  if (direct_stores)
    CHECK_OK(dart_gptr_getaddr_shared(buf_next, (void **)&next_direct));
  CHECK_OK(dart_barrier(DART_TEAM_ALL));

  for (long r = 0; r < rounds && out != NULL; r++) {
    long old;
    for (int i = 0; i < words; i++) out[i] = value(me, (int)r, i);
    if (next_direct)
      memcpy(next_direct, out, (size_t)words * sizeof *out);
    else
      CHECK_OK(dart_put(buf_next, out, (size_t)words, DART_TYPE_LONG,
                        DART_TYPE_LONG));
    long acked;
    CHECK_OK(dart_get(&acked, ack_prev, 1, DART_TYPE_LONG, DART_TYPE_LONG));
    CHECK_OK(dart_flush(ack_prev));
    CHECK_EQ(acked, r - 1);
    CHECK_OK(dart_flush(buf_next));
    for (int i = 0; i < words; i++) out[i] = ~value(me, (int)r, i);
    CHECK_OK(dart_fetch_and_op(flag_next, &r, &old, DART_TYPE_LONG,
                               DART_OP_REPLACE));
    /* receive from prev */
    if (!await_value(flag_mine, r)) {
      FAILF("round %ld: no flag from unit %d", r, prev);
      break;
    }
    for (int i = 0; i < words; i++) {
      if (mine[i] != value(prev, (int)r, i)) {
        FAILF("round %ld (%s, %d words): word %d is %lx, expected %lx", r,
              next_direct ? "stores" : "puts", words, i,
              (unsigned long)mine[i], (unsigned long)value(prev, (int)r, i));
        break;
      }
    }
    CHECK_OK(dart_fetch_and_op(ack_prev, &r, &old, DART_TYPE_LONG,
                               DART_OP_REPLACE));
    /* next may be overwritten once it has read round r */
    if (!await_value(ack_mine, r)) {
      FAILF("round %ld: no acknowledgement from unit %d", r, next);
      break;
    }
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  free(out);
  dart_gptr_setunit(&g, DART_TEAM_UNIT_ID(0));
  CHECK_OK(dart_team_memfree(g));
}

/* words as in message_passing; unit 0 writes every other unit's buffer */
static void scatter_flush_all(void)
{
  dart_gptr_t g;
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, WORDS + 2,
                                      DART_TYPE_LONG, &g));
  dart_gptr_t mine_g = g, flag_mine = g, acks = g;
  dart_gptr_setunit(&mine_g, DART_TEAM_UNIT_ID(me));
  flag_mine = mine_g;
  flag_mine.addr_or_offs.offset = WORDS * sizeof(long);
  dart_gptr_setunit(&acks, DART_TEAM_UNIT_ID(0));
  acks.addr_or_offs.offset = (WORDS + 1) * sizeof(long);
  long *mine;
  CHECK_OK(dart_gptr_getaddr(mine_g, (void **)&mine));
  for (int i = 0; i < WORDS; i++) mine[i] = -1;
  mine[WORDS] = -1;
  mine[WORDS + 1] = 0;
  CHECK_OK(dart_barrier(DART_TEAM_ALL));

  long(*out)[WORDS] = malloc(2 * (size_t)n * sizeof *out);
  long(*in)[WORDS] = out + n;
  CHECK(out != NULL);
  for (long r = 0; r < ROUNDS / 3 && out != NULL; r++) {
    if (me == 0 && r > 0) {
      for (int u = 1; u < n; u++) {
        dart_gptr_t buf = g;
        dart_gptr_setunit(&buf, DART_TEAM_UNIT_ID(u));
        memset(in[u], 0, sizeof in[u]);
        CHECK_OK(dart_get(in[u], buf, WORDS, DART_TYPE_LONG,
                          DART_TYPE_LONG));
      }
      CHECK_OK(dart_flush_all(g));
      for (int u = 1; u < n; u++) {
        if (memcmp(in[u], out[u], sizeof in[u]) != 0) {
          FAILF("round %ld: get from unit %d incomplete after flush_all", r,
                u);
          break;
        }
      }
    }
    if (me == 0) {
      for (int u = 1; u < n; u++) {
        dart_gptr_t buf = g;
        dart_gptr_setunit(&buf, DART_TEAM_UNIT_ID(u));
        for (int i = 0; i < WORDS; i++) out[u][i] = value(u, (int)r, i);
        CHECK_OK(dart_put(buf, out[u], WORDS, DART_TYPE_LONG,
                          DART_TYPE_LONG));
      }
      CHECK_OK(dart_flush_all(g));
      for (int u = 1; u < n; u++) {
        dart_gptr_t flag = g;
        long old;
        dart_gptr_setunit(&flag, DART_TEAM_UNIT_ID(u));
        flag.addr_or_offs.offset = WORDS * sizeof(long);
        CHECK_OK(dart_fetch_and_op(flag, &r, &old, DART_TYPE_LONG,
                                   DART_OP_REPLACE));
      }
      if (!await_value(acks, (n - 1) * (r + 1))) {
        FAILF("round %ld: not every unit acknowledged", r);
        break;
      }
      continue;
    }
    if (!await_value(flag_mine, r)) {
      FAILF("round %ld: no flag from unit 0", r);
      break;
    }
    for (int i = 0; i < WORDS; i++) {
      if (mine[i] != value(me, (int)r, i)) {
        FAILF("round %ld (flush_all): word %d is %lx, expected %lx", r, i,
              (unsigned long)mine[i], (unsigned long)value(me, (int)r, i));
        break;
      }
    }
    const long one = 1;
    long old;
    CHECK_OK(dart_fetch_and_op(acks, &one, &old, DART_TYPE_LONG,
                               DART_OP_SUM));
  }
  free(out);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  dart_gptr_setunit(&g, DART_TEAM_UNIT_ID(0));
  CHECK_OK(dart_team_memfree(g));
}

enum { SB_BLOCKING, SB_FLUSH, SB_HANDLE, SB_MODES };

static void put_completed(dart_gptr_t g, const long *v, int mode)
{
  if (mode == SB_BLOCKING) {
    CHECK_OK(dart_put_blocking(g, v, 1, DART_TYPE_LONG, DART_TYPE_LONG));
  } else if (mode == SB_FLUSH) {
    CHECK_OK(dart_put(g, v, 1, DART_TYPE_LONG, DART_TYPE_LONG));
    CHECK_OK(dart_flush(g));
  } else {
    dart_handle_t h;
    CHECK_OK(dart_put_handle(g, v, 1, DART_TYPE_LONG, DART_TYPE_LONG, &h));
    CHECK_OK(dart_wait(&h));
  }
}

/* word 0: the round the partner put here; words 1 and 2: what the
 * partner read in odd and even rounds (it may write the next round's
 * before this unit has read this one's) */
static void store_buffering(void)
{
  /* the two of a pair race only while both run: with more units than
   * cores, rounds mostly find them apart (and barriers are slower) */
  const long rounds = n <= 2 ? 2000 : 4000 / n;
  int partner = me ^ 1;
  if (partner >= n) partner = me; /* the odd unit out plays both sides */
  dart_gptr_t g;
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 3, DART_TYPE_LONG, &g));
  dart_gptr_t theirs = g, mine_g = g, their_seen = g;
  dart_gptr_setunit(&theirs, DART_TEAM_UNIT_ID(partner));
  dart_gptr_setunit(&mine_g, DART_TEAM_UNIT_ID(me));
  dart_gptr_setunit(&their_seen, DART_TEAM_UNIT_ID(partner));
  long *mine;
  CHECK_OK(dart_gptr_getaddr(mine_g, (void **)&mine));
  mine[0] = mine[1] = mine[2] = 0;
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  int both_old = 0;
  for (int mode = 0; mode < SB_MODES; mode++) {
    for (long r = 1; r <= rounds; r++) {
      long round = mode * rounds + r, seen = -1;
      int slot = 1 + (int)(round & 1);
      their_seen.addr_or_offs.offset = (uint64_t)slot * sizeof(long);
      put_completed(theirs, &round, mode);
      CHECK_OK(dart_get_blocking(&seen, mine_g, 1, DART_TYPE_LONG,
                                 DART_TYPE_LONG));
      CHECK_OK(dart_put_blocking(their_seen, &seen, 1, DART_TYPE_LONG,
                                 DART_TYPE_LONG));
      CHECK_OK(dart_barrier(DART_TEAM_ALL));
      if (seen < round && mine[slot] < round && partner != me) both_old++;
      /* the partner may already have put the next round */
      if (seen > round || mine[0] < round) {
        FAILF("mode %d round %ld: read %ld, holds %ld", mode, round, seen,
              mine[0]);
        break;
      }
    }
  }
  if (both_old > 0)
    FAILF("units %d and %d both read the old word in %d rounds", me,
          partner, both_old);
  CHECK_OK(dart_team_memfree(g));
}

int main(int argc, char **argv)
{
  dart_test_init(&argc, &argv);
  me = dart_test_unit;
  n = dart_test_units;
  barrier_visibility();
  message_passing(false, WORDS, ROUNDS);
  message_passing(true, WORDS, ROUNDS);
  message_passing(false, BIG_WORDS, BIG_ROUNDS);
  scatter_flush_all();
  store_buffering();
  return dart_test_combine_and_exit();
}
