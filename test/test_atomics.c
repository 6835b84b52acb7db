/*
 * Atomics: every type with every operation that applies, all units at once
 * on one element; accumulate over many elements; compare-and-swap; a
 * counter under heavy contention with fetch-and-op, accumulate and CAS
 * mixed; unique tickets; single-element accumulates left pending (queued)
 * until a barrier, fetch or free, and the batches they are applied in
 * (hardware transactions or locked instructions), alone and racing other
 * units' fetch-and-add and compare-and-swap; and the atomics path rule (CPU atomics only where
 * every unit of the team shares the memory, the remote path for all
 * otherwise, the owner included).
 *
 * DART_TEST_ITERS sets the contention rounds per unit (default 1000).
 */
#include <dart/dart_ext.h>

#include <stddef.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "dart_test.h"

static int me, n;

#define NOPS 12
static const dart_operation_t ops[NOPS] = {
    DART_OP_MIN,  DART_OP_MAX, DART_OP_SUM,  DART_OP_PROD,
    DART_OP_BAND, DART_OP_BOR, DART_OP_BXOR, DART_OP_LAND,
    DART_OP_LOR,  DART_OP_LXOR, DART_OP_REPLACE, DART_OP_NO_OP};
#define SLOT_CAS NOPS
#define SLOT_ACC 16
#define NACC 300 /* more than one block of the MPI path */
#define NSLOTS (SLOT_ACC + NACC)
#define CAS_ROUNDS 12 /* 8 units * 12 fits a signed char */

static int is_logical_or_bitwise(dart_operation_t op)
{
  return op >= DART_OP_BAND && op <= DART_OP_LXOR;
}

static dart_gptr_t at(dart_gptr_t g, int unit, size_t index, size_t size)
{
  dart_gptr_setunit(&g, DART_TEAM_UNIT_ID(unit));
  g.addr_or_offs.offset = index * size;
  return g;
}

/*
 * One basic type: operands and expected results in T, computed here with
 * plain C so that the library's arithmetic is checked against it.
 */
#define TEST_TYPE(T, DT, INTEGRAL, tix, BITS)                                     \
  do {                                                                        \
    dart_gptr_t g;                                                            \
    CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, NSLOTS, DT, &g));      \
    T *mine = NULL;                                                           \
    dart_gptr_t g0 = at(g, me, 0, sizeof(T));                                 \
    CHECK_OK(dart_gptr_getaddr(g0, (void **)&mine));                          \
    CHECK((uintptr_t)mine % 64 == 0); /* parts are cache-line aligned */      \
    T init[NOPS] = {50, 20, 5, 1, (T)~0, 0, 0, 3, 0, 0, 99, 77};              \
    for (int k = 0; k < NOPS; k++) mine[k] = init[k];                         \
    mine[SLOT_CAS] = 0;                                                       \
    for (int i = 0; i < NACC; i++) mine[SLOT_ACC + i] = (T)(i % 3);           \
    CHECK_OK(dart_barrier(DART_TEAM_ALL));                                    \
    T operand[NOPS], expect[NOPS];                                            \
    memcpy(expect, init, sizeof expect);                                      \
    for (int u = 0; u < n; u++) {                                             \
      T v[NOPS] = {(T)(10 + 3 * u), (T)(10 + 3 * u), (T)(u + 1),              \
                   (T)(u % 2 ? 3 : 1), 0, 0, 0, (T)(u == n - 1 ? 0 : 2),      \
                   (T)(u == 0 ? 4 : 0), 1, (T)(100 + u), 0};                  \
      if (INTEGRAL) {                                                         \
        long long bit = 1LL << (u % 7);                                       \
        v[4] = (T)~bit;                                                       \
        v[5] = (T)bit;                                                        \
        v[6] = (T)((u * 5 + 3) & 0x7f);                                       \
      }                                                                       \
      if (u == me) memcpy(operand, v, sizeof v);                              \
      expect[0] = v[0] < expect[0] ? v[0] : expect[0];                        \
      expect[1] = v[1] > expect[1] ? v[1] : expect[1];                        \
      expect[2] = (T)(expect[2] + v[2]);                                      \
      expect[3] = (T)(expect[3] * v[3]);                                      \
      BITS(T);                                                                \
    }                                                                         \
    T fetched[NOPS];                                                          \
    for (int k = 0; k < NOPS; k++) {                                          \
      if (!(INTEGRAL) && is_logical_or_bitwise(ops[k])) continue;             \
      dart_gptr_t gk = at(g, (k + tix) % n, (size_t)k, sizeof(T));            \
      CHECK_OK(dart_fetch_and_op(gk, &operand[k], &fetched[k], DT, ops[k]));  \
    }                                                                         \
    CHECK(fetched[11] == 77); /* NO_OP reads */                               \
    CHECK(fetched[10] == 99 || (fetched[10] >= 100 && fetched[10] < (T)(100 + n))); \
    /* accumulate many elements: every unit adds (i % 5 + me % 3) */          \
    T acc[NACC];                                                              \
    for (int i = 0; i < NACC; i++) acc[i] = (T)(i % 5 + me % 3);              \
    dart_gptr_t ga = at(g, (tix + 1) % n, SLOT_ACC, sizeof(T));               \
    if (me % 2)                                                               \
      CHECK_OK(dart_accumulate(ga, acc, NACC, DT, DART_OP_SUM));              \
    else                                                                      \
      CHECK_OK(dart_accumulate_blocking_local(ga, acc, NACC, DT,              \
                                              DART_OP_SUM));                  \
    CHECK_OK(dart_flush(ga));                                                 \
    /* compare-and-swap increments */                                         \
    dart_gptr_t gc = at(g, (tix + 2) % n, SLOT_CAS, sizeof(T));               \
    for (int r = 0; (INTEGRAL) && r < CAS_ROUNDS; r++) {                      \
      T cur, seen, next;                                                      \
      CHECK_OK(dart_fetch_and_op(gc, NULL, &cur, DT, DART_OP_NO_OP));         \
      for (int tries = 0; tries < 100000; tries++) {                          \
        next = (T)(cur + 1);                                                  \
        CHECK_OK(dart_compare_and_swap(gc, &next, &cur, &seen, DT));          \
        if (seen == cur) break;                                               \
        cur = seen;                                                           \
      }                                                                       \
    }                                                                         \
    CHECK_OK(dart_barrier(DART_TEAM_ALL));                                    \
    int saw_init = fetched[10] == 99, saw_total = 0;                          \
    CHECK_OK(dart_allreduce(&saw_init, &saw_total, 1, DART_TYPE_INT,          \
                            DART_OP_SUM, DART_TEAM_ALL));                     \
    CHECK_EQ(saw_total, 1); /* exactly one REPLACE found the initial value */ \
    for (int k = 0; k < NOPS; k++) {                                          \
      if (!(INTEGRAL) && is_logical_or_bitwise(ops[k])) continue;             \
      if ((k + tix) % n != me) continue;                                      \
      T got;                                                                  \
      CHECK_OK(dart_fetch_and_op(at(g, me, (size_t)k, sizeof(T)), NULL, &got, \
                                 DT, DART_OP_NO_OP));                         \
      if (ops[k] == DART_OP_REPLACE) {                                        \
        if (!(got >= 100 && got < (T)(100 + n)))                                 \
          FAILF("%s REPLACE left %g", #DT, (double)got);                      \
      } else if (got != expect[k]) {                                          \
        FAILF("%s op %d: %g, expected %g", #DT, (int)ops[k], (double)got,     \
              (double)expect[k]);                                             \
      }                                                                       \
    }                                                                         \
    if ((tix + 1) % n == me) {                                                \
      T sum_me = 0;                                                           \
      for (int u = 0; u < n; u++) sum_me = (T)(sum_me + u % 3);               \
      for (int i = 0; i < NACC; i++) {                                        \
        T want = (T)(i % 3 + n * (i % 5) + sum_me);                           \
        if (mine[SLOT_ACC + i] != want) {                                     \
          FAILF("%s accumulate element %d: %g, expected %g", #DT, i,          \
                (double)mine[SLOT_ACC + i], (double)want);                    \
          break;                                                              \
        }                                                                     \
      }                                                                       \
    }                                                                         \
    if ((INTEGRAL) && (tix + 2) % n == me)                                    \
      CHECK_EQ(mine[SLOT_CAS], n * CAS_ROUNDS);                               \
    CHECK_OK(dart_barrier(DART_TEAM_ALL));                                    \
    CHECK_OK(dart_team_memfree(g));                                           \
  } while (0)

/* bitwise and logical expectations (integral types only) */
#define BITS_INT(T)                                                           \
  do {                                                                        \
    expect[4] = (T)(expect[4] & v[4]);                                        \
    expect[5] = (T)(expect[5] | v[5]);                                        \
    expect[6] = (T)(expect[6] ^ v[6]);                                        \
    expect[7] = (T)(expect[7] && v[7]);                                       \
    expect[8] = (T)(expect[8] || v[8]);                                       \
    expect[9] = (T)(!expect[9] != !v[9]);                                     \
  } while (0)
#define BITS_NONE(T) ((void)0)

static void test_types(void)
{
  TEST_TYPE(signed char, DART_TYPE_BYTE, 1, 0, BITS_INT);
  TEST_TYPE(short, DART_TYPE_SHORT, 1, 1, BITS_INT);
  TEST_TYPE(int, DART_TYPE_INT, 1, 2, BITS_INT);
  TEST_TYPE(unsigned, DART_TYPE_UINT, 1, 3, BITS_INT);
  TEST_TYPE(long, DART_TYPE_LONG, 1, 4, BITS_INT);
  TEST_TYPE(unsigned long, DART_TYPE_ULONG, 1, 5, BITS_INT);
  TEST_TYPE(long long, DART_TYPE_LONGLONG, 1, 6, BITS_INT);
  TEST_TYPE(unsigned long long, DART_TYPE_ULONGLONG, 1, 7, BITS_INT);
  TEST_TYPE(float, DART_TYPE_FLOAT, 0, 8, BITS_NONE);
  TEST_TYPE(double, DART_TYPE_DOUBLE, 0, 9, BITS_NONE);
  TEST_TYPE(long double, DART_TYPE_LONG_DOUBLE, 0, 10, BITS_NONE);
}

static int iters(void)
{
  const char *s = getenv("DART_TEST_ITERS");
  return s ? atoi(s) : 1000;
}

/* One counter, every unit adding to it by every means at once. */
static void test_contention(dart_team_t team, int tn)
{
  int rounds = iters();
  dart_gptr_t g;
  CHECK_OK(dart_team_memalloc_aligned(team, 2, DART_TYPE_LONG, &g));
  dart_gptr_setunit(&g, DART_TEAM_UNIT_ID(tn - 1)); /* owner takes part */
  long *mine;
  CHECK_OK(dart_gptr_getaddr(g, (void **)&mine));
  if (mine) mine[0] = mine[1] = 0;
  CHECK_OK(dart_barrier(team));
  const long one = 1;
  long last = -1;
  for (int i = 0; i < rounds; i++) {
    long old, seen, next;
    switch (i % 4) {
    case 0:
      CHECK_OK(dart_fetch_and_op(g, &one, &old, DART_TYPE_LONG, DART_OP_SUM));
      if (old <= last) FAILF("fetch-add went back from %ld to %ld", last, old);
      last = old;
      break;
    case 1:
      CHECK_OK(dart_accumulate(g, &one, 1, DART_TYPE_LONG, DART_OP_SUM));
      if (i % 64 == 1) CHECK_OK(dart_flush(g));
      break;
    case 2:
      CHECK_OK(dart_accumulate_blocking_local(g, &one, 1, DART_TYPE_LONG,
                                              DART_OP_SUM));
      break;
    default:
      CHECK_OK(dart_fetch_and_op(g, NULL, &old, DART_TYPE_LONG, DART_OP_NO_OP));
      for (;;) {
        next = old + 1;
        CHECK_OK(dart_compare_and_swap(g, &next, &old, &seen, DART_TYPE_LONG));
        if (seen == old) break;
        old = seen;
      }
      break;
    }
  }
  CHECK_OK(dart_flush(g));
  CHECK_OK(dart_barrier(team));
  long total;
  CHECK_OK(dart_fetch_and_op(g, NULL, &total, DART_TYPE_LONG, DART_OP_NO_OP));
  if (total != (long)tn * rounds)
    FAILF("team %d: counter %ld after %d x %d increments", (int)team, total,
          tn, rounds);

  /* tickets: fetch-add and CAS each take one; all differ */
  dart_gptr_t t = g;
  t.addr_or_offs.offset = sizeof(long);
  int nt = rounds / 2;
  long *tickets = malloc((size_t)nt * sizeof *tickets);
  long *all = malloc((size_t)nt * tn * sizeof *all);
  for (int i = 0; i < nt; i++) {
    if (i % 2 == 0) {
      CHECK_OK(dart_fetch_and_op(t, &one, &tickets[i], DART_TYPE_LONG,
                                 DART_OP_SUM));
      continue;
    }
    long old = tickets[i - 1] + 1, seen, next;
    for (;;) {
      next = old + 1;
      CHECK_OK(dart_compare_and_swap(t, &next, &old, &seen, DART_TYPE_LONG));
      if (seen == old) break;
      old = seen;
    }
    tickets[i] = old;
  }
  CHECK_OK(dart_allgather(tickets, all, (size_t)nt, DART_TYPE_LONG, team));
  char *taken = calloc((size_t)nt * tn, 1);
  for (int i = 0; i < nt * tn; i++) {
    if (all[i] < 0 || all[i] >= (long)nt * tn || taken[all[i]]) {
      FAILF("ticket %ld given twice or out of range", all[i]);
      break;
    }
    taken[all[i]] = 1;
  }
  free(taken);
  free(all);
  free(tickets);
  CHECK_OK(dart_team_memfree(g));
}

/*
 * Non-fetching accumulates of one element may wait in a queue on the
 * CPU-atomics path until a flush, barrier, other atomic or free. Here: far
 * more than a queue's worth, of each size and queueable operation, with
 * the operand changed right after each call and no flush, made visible by
 * the barrier alone; a fetch that must see the caller's own earlier
 * accumulates; and a free with accumulates pending.
 */
typedef struct {
  uint64_t sum, xor_, or_, and_;
  uint32_t sum32;
  uint16_t sum16;
  uint8_t sum8;
} queued_t;
#define QROUNDS 300

static uint64_t q_operand(int u, int r) { return (uint64_t)u * 1000003u + (uint64_t)r * 7919u + 1; }

static void test_queued(void)
{
  dart_gptr_t g, own;
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, sizeof(queued_t),
                                      DART_TYPE_BYTE, &g));
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 1, DART_TYPE_LONG, &own));
  dart_gptr_setunit(&g, DART_TEAM_UNIT_ID(me));
  dart_gptr_setunit(&own, DART_TEAM_UNIT_ID(me));
  queued_t *mine;
  long *counter;
  CHECK_OK(dart_gptr_getaddr(g, (void **)&mine));
  CHECK_OK(dart_gptr_getaddr(own, (void **)&counter));
  memset(mine, 0, sizeof *mine);
  mine->and_ = ~UINT64_C(0);
  *counter = 0;
  CHECK_OK(dart_barrier(DART_TEAM_ALL));

#define FIELD(f) (g.addr_or_offs.offset = offsetof(queued_t, f), g)
  for (int r = 0; r < QROUNDS; r++) {
    dart_gptr_setunit(&g, DART_TEAM_UNIT_ID((me + 1 + r) % n));
    uint64_t v = q_operand(me, r), bit = UINT64_C(1) << ((me + r) % 64),
             nbit = ~bit;
    uint32_t v32 = (uint32_t)v;
    uint16_t v16 = (uint16_t)v;
    uint8_t v8 = (uint8_t)v;
    CHECK_OK(dart_accumulate(FIELD(sum), &v, 1, DART_TYPE_ULONGLONG,
                             DART_OP_SUM));
    CHECK_OK(dart_accumulate(FIELD(xor_), &v, 1, DART_TYPE_ULONGLONG,
                             DART_OP_BXOR));
    CHECK_OK(dart_accumulate(FIELD(or_), &bit, 1, DART_TYPE_ULONGLONG,
                             DART_OP_BOR));
    CHECK_OK(dart_accumulate_blocking_local(FIELD(and_), &nbit, 1,
                                            DART_TYPE_ULONGLONG, DART_OP_BAND));
    CHECK_OK(dart_accumulate(FIELD(sum32), &v32, 1, DART_TYPE_UINT,
                             DART_OP_SUM));
    CHECK_OK(dart_accumulate(FIELD(sum16), &v16, 1, DART_TYPE_SHORT,
                             DART_OP_SUM));
    CHECK_OK(dart_accumulate(FIELD(sum8), &v8, 1, DART_TYPE_BYTE,
                             DART_OP_SUM));
    /* the operands were taken at the call */
    v = v32 = v16 = v8 = 0;
    bit = nbit = 0;
    /* the caller's own accumulates are seen by its next fetching atomic */
    const long one = 1;
    CHECK_OK(dart_accumulate(own, &one, 1, DART_TYPE_LONG, DART_OP_SUM));
    if (r % 7 == 0) {
      long seen;
      CHECK_OK(dart_fetch_and_op(own, NULL, &seen, DART_TYPE_LONG,
                                 DART_OP_NO_OP));
      if (seen != r + 1) FAILF("fetch after %d accumulates saw %ld", r + 1, seen);
    }
  }
#undef FIELD
  CHECK_OK(dart_barrier(DART_TEAM_ALL)); /* no flush: the barrier publishes */

  queued_t want = {.and_ = ~UINT64_C(0)};
  for (int u = 0; u < n; u++)
    for (int r = 0; r < QROUNDS; r++) {
      if ((u + 1 + r) % n != me) continue;
      uint64_t v = q_operand(u, r), bit = UINT64_C(1) << ((u + r) % 64);
      want.sum += v;
      want.xor_ ^= v;
      want.or_ |= bit;
      want.and_ &= ~bit;
      want.sum32 = (uint32_t)(want.sum32 + (uint32_t)v);
      want.sum16 = (uint16_t)(want.sum16 + (uint16_t)v);
      want.sum8 = (uint8_t)(want.sum8 + (uint8_t)v);
    }
  CHECK_EQ(mine->sum, want.sum);
  CHECK_EQ(mine->xor_, want.xor_);
  CHECK_EQ(mine->or_, want.or_);
  CHECK_EQ(mine->and_, want.and_);
  CHECK_EQ(mine->sum32, want.sum32);
  CHECK_EQ(mine->sum16, want.sum16);
  CHECK_EQ(mine->sum8, want.sum8);
  CHECK_EQ(*counter, QROUNDS);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));

  /* freed with accumulates pending: they are applied before the memory
   * goes, or the next atomic would write into unmapped memory */
  const long one = 1;
  dart_gptr_setunit(&g, DART_TEAM_UNIT_ID((me + 1) % n));
  g.addr_or_offs.offset = 0;
  for (int r = 0; r < 5; r++)
    CHECK_OK(dart_accumulate(g, &one, 1, DART_TYPE_LONG, DART_OP_SUM));
  CHECK_OK(dart_team_memfree(g));
  long seen;
  CHECK_OK(dart_fetch_and_op(own, &one, &seen, DART_TYPE_LONG, DART_OP_SUM));
  CHECK_EQ(seen, QROUNDS);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_OK(dart_team_memfree(own));
}

/* Whether the CPU runs hardware transactions (x86 RTM: CPUID leaf 7, EBX
 * bit 11, and not EDX bit 11, which makes them all abort). */
static bool cpu_has_rtm(void)
{
#if defined(__x86_64__)
  unsigned a, b, c, d;
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 11)) &&
         !(d & (1u << 11));
#else
  return false;
#endif
}

#define QUEUE_LEN 32 /* the guide's */
#define BATCHES 64

/* Whether queued accumulates to memory with atomics along path go in
 * hardware transactions: queued at all (CPU atomics, and no progress
 * thread, which makes DART_THREAD_MULTIPLE), DART_HTM not 0, RTM. */
static bool queued_on(dart_path_t atomics)
{
  const char *progress = getenv("DART_PROGRESS_THREAD");
  return (atomics == DART_PATH_SELF || atomics == DART_PATH_SHM) &&
         (progress == NULL || strcmp(progress, "1") != 0);
}

static bool transactions_on(dart_path_t atomics)
{
  const char *htm = getenv("DART_HTM");
  return queued_on(atomics) && cpu_has_rtm() &&
         (htm == NULL || strcmp(htm, "0") != 0);
}

typedef struct {
  uint64_t committed, aborted, locked;
} batches_t;

static batches_t batches_now(void)
{
  batches_t b;
  CHECK_OK(dart_acc_batches(&b.committed, &b.aborted, &b.locked));
  return b;
}

/*
 * The batches in which queued accumulates are applied: a full queue is one
 * batch. Where DART_HTM (default 1) asks for hardware transactions and the
 * CPU has them, the first batch after dart_init tries one (it commits, or
 * aborts and the locked instructions apply it; after aborts that are not
 * conflicts the next batches wait, so this runs first); otherwise none
 * tries. No batches where atomics take the remote path or under
 * DART_THREAD_MULTIPLE (nothing is queued). The updates add up either way.
 */
static void test_batches(void)
{
  dart_gptr_t g;
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 1, DART_TYPE_ULONGLONG,
                                      &g));
  dart_gptr_setunit(&g, DART_TEAM_UNIT_ID(me));
  uint64_t *mine;
  CHECK_OK(dart_gptr_getaddr(g, (void **)&mine));
  *mine = 0;
  dart_path_t atomics;
  CHECK_OK(dart_gptr_atomic_path(g, &atomics));
  const bool queued = queued_on(atomics), tried = transactions_on(atomics);
  CHECK_OK(dart_barrier(DART_TEAM_ALL)); /* *mine is 0, the queue empty */
  batches_t b0 = batches_now();
  const uint64_t one = 1;
  for (int i = 0; i < BATCHES * QUEUE_LEN; i++)
    CHECK_OK(dart_accumulate(g, &one, 1, DART_TYPE_ULONGLONG, DART_OP_SUM));
  batches_t b = batches_now();
  const uint64_t committed = b.committed - b0.committed,
                 aborted = b.aborted - b0.aborted,
                 locked = b.locked - b0.locked;
  CHECK_EQ(committed + aborted + locked, queued ? BATCHES : 0);
  if (tried) CHECK(committed + aborted > 0);
  else CHECK_EQ(committed + aborted, 0);
  uint64_t total;
  CHECK_OK(dart_fetch_and_op(g, NULL, &total, DART_TYPE_ULONGLONG,
                             DART_OP_NO_OP));
  CHECK_EQ(total, (uint64_t)BATCHES * QUEUE_LEN);
  if (me == 0)
    printf("queued accumulates, %d full queues: %llu in transactions, %llu "
           "after an abort, %llu locked\n",
           BATCHES, (unsigned long long)committed,
           (unsigned long long)aborted, (unsigned long long)locked);

  /* bad input: nothing written */
  uint64_t untouched = 12345;
  CHECK_RET(dart_acc_batches(NULL, &untouched, &untouched), DART_ERR_INVAL);
  CHECK_RET(dart_acc_batches(&untouched, NULL, &untouched), DART_ERR_INVAL);
  CHECK_RET(dart_acc_batches(&untouched, &untouched, NULL), DART_ERR_INVAL);
  CHECK_EQ(untouched, 12345);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_OK(dart_team_memfree(g));
}

#define QUEUED_PER_ROUND 8

/*
 * Batches against fetch-and-add and compare-and-swap on one word: every
 * unit queues QUEUED_PER_ROUND increments of one counter, which its
 * fetch-and-add then applies in one batch (in a transaction where they are
 * on, racing the others' atomics on that word), then increments it once
 * with compare-and-swap. No increment is lost or doubled.
 */
static void test_contended_batches(void)
{
  const int rounds = iters() / 10 > 0 ? iters() / 10 : 1;
  dart_gptr_t g;
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 1, DART_TYPE_LONG, &g));
  dart_gptr_setunit(&g, DART_TEAM_UNIT_ID(n - 1));
  long *mine;
  CHECK_OK(dart_gptr_getaddr(g, (void **)&mine));
  if (me == n - 1) *mine = 0;
  dart_path_t atomics;
  CHECK_OK(dart_gptr_atomic_path(g, &atomics));
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  batches_t b0 = batches_now();
  const long one = 1;
  for (int r = 0; r < rounds; r++) {
    for (int i = 0; i < QUEUED_PER_ROUND; i++)
      CHECK_OK(dart_accumulate(g, &one, 1, DART_TYPE_LONG, DART_OP_SUM));
    long old, seen, next;
    CHECK_OK(dart_fetch_and_op(g, &one, &old, DART_TYPE_LONG, DART_OP_SUM));
    for (old++;; old = seen) { /* old: a guess of the value now */
      next = old + 1;
      CHECK_OK(dart_compare_and_swap(g, &next, &old, &seen, DART_TYPE_LONG));
      if (seen == old) break;
    }
  }
  batches_t b = batches_now();
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  long total;
  CHECK_OK(dart_fetch_and_op(g, NULL, &total, DART_TYPE_LONG, DART_OP_NO_OP));
  CHECK_EQ(total, (long)n * rounds * (QUEUED_PER_ROUND + 2));
  /* a batch a round from each unit whose atomics on the word are CPU
   * atomics (all or none, but with owner-applied atomics) */
  uint64_t mine_counts[4] = {b.committed - b0.committed,
                             b.aborted - b0.aborted, b.locked - b0.locked,
                             queued_on(atomics) ? (uint64_t)rounds : 0};
  uint64_t all[4];
  CHECK_OK(dart_allreduce(mine_counts, all, 4, DART_TYPE_ULONGLONG,
                          DART_OP_SUM, DART_TEAM_ALL));
  CHECK_EQ(all[0] + all[1] + all[2], all[3]);
  if (!transactions_on(atomics)) CHECK_EQ(mine_counts[0] + mine_counts[1], 0);
  if (me == 0)
    printf("contended batches, %d units: %llu in transactions, %llu after an "
           "abort, %llu locked\n",
           n, (unsigned long long)all[0], (unsigned long long)all[1],
           (unsigned long long)all[2]);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_OK(dart_team_memfree(g));
}

static uint64_t path_count(dart_path_t p)
{
  uint64_t c = 0;
  CHECK_OK(dart_path_count(p, &c));
  return c;
}

/*
 * The rule: count what each atomic sent along which path. On a team whose
 * units all share the memory nothing goes through the remote path (UCX or
 * MPI); otherwise everything does, atomics on the caller's own part
 * included.
 */
static void check_rule(dart_team_t team, int tn, bool shared)
{
  dart_gptr_t g;
  dart_path_t remote, peer_private;
  CHECK_OK(dart_transport_paths(&remote, &peer_private));
  CHECK_OK(dart_team_memalloc_aligned(team, 4, DART_TYPE_ULONG, &g));
  /* DART_OWNER_ATOMICS=1: CPU atomics on the parts this unit loads and
   * stores, the owner's path (active messages) on the others */
  const char *owner_env = getenv("DART_OWNER_ATOMICS");
  const bool owner = owner_env != NULL && strcmp(owner_env, "1") == 0;
  uint64_t before = path_count(remote), before_owner = path_count(
                                           DART_PATH_OWNER);
  unsigned long v = 1, r, c = 0;
  int count = 0, owned = 0;
  for (int u = 0; u < tn; u++) {
    dart_gptr_t gu = g;
    dart_gptr_setunit(&gu, DART_TEAM_UNIT_ID(u));
    dart_path_t p, data;
    CHECK_OK(dart_gptr_atomic_path(gu, &p));
    CHECK_OK(dart_gptr_path(gu, &data));
    const bool cpu = data == DART_PATH_SELF || data == DART_PATH_SHM;
    if (owner) {
      CHECK_EQ(p == DART_PATH_OWNER, !cpu);
      owned += cpu ? 0 : 3;
    } else {
      CHECK_EQ(p == remote, !shared);
    }
    CHECK_OK(dart_fetch_and_op(gu, &v, &r, DART_TYPE_ULONG, DART_OP_SUM));
    CHECK_OK(dart_accumulate(gu, &v, 1, DART_TYPE_ULONG, DART_OP_BXOR));
    CHECK_OK(dart_compare_and_swap(gu, &v, &c, &r, DART_TYPE_ULONG));
    count += 3;
  }
  uint64_t sent = path_count(remote) - before;
  CHECK_EQ(sent, shared || owner ? 0 : count);
  CHECK_EQ(path_count(DART_PATH_OWNER) - before_owner, owned);
  CHECK_OK(dart_barrier(team));
  CHECK_OK(dart_team_memfree(g));
}

int main(int argc, char **argv)
{
  dart_test_init(&argc, &argv);
  me = dart_test_unit;
  n = dart_test_units;
  int nodes, my_node;
  CHECK_OK(dart_node_info(&nodes, &my_node));
  const char *shm = getenv("DART_SHM");
  bool shm_on = shm == NULL || strcmp(shm, "0") != 0;

  test_batches(); /* first: no aborts before */
  test_contended_batches();
  test_types();
  test_queued();
  test_contention(DART_TEAM_ALL, n);
  check_rule(DART_TEAM_ALL, n, n == 1 || (nodes == 1 && shm_on));

  /* a team of this node's units shares its memory even if ALL does not */
  int *node_of = malloc((size_t)n * sizeof *node_of);
  CHECK_OK(dart_allgather(&my_node, node_of, 1, DART_TYPE_INT, DART_TEAM_ALL));
  /* one team per node, created in turn over DART_TEAM_ALL */
  dart_team_t node_team = DART_TEAM_NULL;
  for (int node = 0; node < nodes; node++) {
    dart_team_t t = DART_TEAM_NULL;
    dart_group_t gr;
    CHECK_OK(dart_group_create(&gr));
    for (int u = 0; u < n; u++)
      if (node_of[u] == node)
        CHECK_OK(dart_group_addmember(gr, DART_GLOBAL_UNIT_ID(u)));
    CHECK_OK(dart_team_create(DART_TEAM_ALL, gr, &t));
    if (node == my_node) node_team = t;
    CHECK_OK(dart_group_destroy(&gr));
  }
  size_t tn;
  CHECK_OK(dart_team_size(node_team, &tn));
  check_rule(node_team, (int)tn, tn == 1 || shm_on);
  test_contention(node_team, (int)tn);
  CHECK_OK(dart_team_destroy(&node_team));
  free(node_of);
  return dart_test_combine_and_exit();
}
