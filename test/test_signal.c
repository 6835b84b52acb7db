/*
 * Point-to-point completion (dart_signal.h), on every unit at any count:
 * - the comparisons: dart_signal_test with each operator on operands
 *   below, at and above the word's value (unsigned: 0 and UINT64_MAX
 *   too; ADD wraps), the waits
 *   on words that already compare true, and which of an array of the
 *   caller's own words _some, _any and _all report;
 * - dart_signal_read of every unit's word, and of a word another unit
 *   sets while it is read (never torn);
 * - exact totals of dart_signal ADD: all units on one word of unit 0 and
 *   on every unit's word;
 * - several producers and one consumer: unit 0 waits with _some, _any and
 *   _all on one word per other unit, set all at once or in unit order, for
 *   each comparison; every index reported compares true, ascending, never
 *   twice once reset;
 * - a producer/consumer ring: each unit puts a block into its next
 *   unit's part with a signal there, in two alternating slots that the
 *   consumer hands back with an ADD to an ack word, by dart_put_signal
 *   and dart_put_signal_handle completed by dart_wait, dart_wait_local or
 *   dart_test, and by dart_put and dart_put_handle left incomplete before
 *   a dart_signal, with SET and ADD, as elements and as bytes; the source is
 *   overwritten as soon as it may be reused; the consumer sees the round
 *   it waited for and every element of it (--rounds N; default 10^4);
 *   once more with 1 MiB blocks (DART_TEST_ITERS caps the rounds here at
 *   500, and the rounds of the remote reads, the totals and the fetching
 *   atomics);
 * - data put to one unit with the signal on a third (by dart_put_signal,
 *   its handle form, and dart_put then dart_signal): the unit that sees
 *   the signal gets the data from the second;
 * - fetch-and-op and compare-and-swap with handles (waited on one by one,
 *   all together, tested, or completed by a flush), mixed with blocking
 *   compare-and-swap: every fetched value distinct, exact totals;
 * - device memory (dart_memkind.h; DART_GPU_EMULATE=1 stands in a device):
 *   the ring on a device segment, from host and device sources, with the
 *   signals in device memory too unless atomics on it would be staged
 *   (then in a host segment, and updates and reads of a device word
 *   whose atomics would be staged are refused, the data of a put with
 *   such a signal not written); ADD totals and tests on device words. Left
 *   out without a device; "--gpu" runs this part only (skipped without);
 * - bad input, each with its one log line naming the function and
 *   DART_ERR_INVAL: misaligned, NULL and out-of-team signal words, waits
 *   and tests on another unit's word, unknown operations and comparisons,
 *   empty and NULL arrays, NULL outputs and handle pointers, a put with a
 *   good signal but bad data; nothing written (outputs, data, signal
 *   words), and a failed call's handle DART_HANDLE_NULL.
 */
#define _GNU_SOURCE
#include "dart_test_capture.h"

#include <dart/dart_ext.h>
#include <dart/dart_memkind.h>
#include <dart/dart_signal.h>

static int me, n;

/* What a handle holds before a call that must set it: never dereferenced. */
#define NOT_A_HANDLE ((dart_handle_t)(uintptr_t)0x5eed)

static const dart_cmp_t cmps[] = {DART_CMP_EQ, DART_CMP_NE, DART_CMP_GT,
                                  DART_CMP_GE, DART_CMP_LT, DART_CMP_LE};
#define NCMPS (sizeof cmps / sizeof cmps[0])
static const char *const cmp_names[] = {"EQ", "NE", "GT", "GE", "LT", "LE"};

static int compare(uint64_t word, dart_cmp_t cmp, uint64_t value)
{
  switch (cmp) {
  case DART_CMP_EQ: return word == value;
  case DART_CMP_NE: return word != value;
  case DART_CMP_GT: return word > value;
  case DART_CMP_GE: return word >= value;
  case DART_CMP_LT: return word < value;
  case DART_CMP_LE: return word <= value;
  }
  return -1;
}

/* gptr to byte offset off of unit's part of the allocation g */
static dart_gptr_t at(dart_gptr_t g, int unit, size_t off)
{
  dart_gptr_setunit(&g, DART_TEAM_UNIT_ID(unit));
  g.addr_or_offs.offset += off;
  return g;
}

/* signal word w of unit's part */
static dart_gptr_t word(dart_gptr_t g, int unit, size_t w)
{
  return at(g, unit, w * sizeof(uint64_t));
}

static uint64_t sig_read(dart_gptr_t s)
{
  uint64_t v = 0xBAD0BAD0BAD0BAD0ull;
  CHECK_OK(dart_signal_read(s, &v));
  return v;
}

/* Sets the caller's own word and waits until it holds the value. */
static void set_own(dart_gptr_t s, uint64_t v)
{
  uint64_t seen = ~v;
  CHECK_OK(dart_signal(s, v, DART_SIGNAL_SET));
  CHECK_OK(dart_signal_wait_until(s, DART_CMP_EQ, v, &seen));
  CHECK_EQ(seen, v);
}

/* ---- the comparisons, on the caller's own words ---- */

#define NLOCAL 6
static const uint64_t local_values[NLOCAL] = {3, 7, 3, 9, 0, UINT64_MAX};

/* which of the words compare true, ascending; returns how many */
static size_t expected_some(dart_cmp_t cmp, uint64_t v, size_t *idx)
{
  size_t c = 0;
  for (size_t i = 0; i < NLOCAL; i++)
    if (compare(local_values[i], cmp, v)) idx[c++] = i;
  return c;
}

static void test_cmp_local(void)
{
  dart_gptr_t g;
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, NLOCAL,
                                      DART_TYPE_ULONGLONG, &g));
  dart_gptr_t w[NLOCAL];
  for (size_t i = 0; i < NLOCAL; i++) {
    w[i] = word(g, me, i);
    set_own(w[i], local_values[i]);
    CHECK_EQ(sig_read(w[i]), local_values[i]);
  }
  /* dart_signal_test: every operator below, at and above each value */
  for (size_t i = 0; i < NLOCAL; i++) {
    const uint64_t x = local_values[i];
    const uint64_t operands[3] = {x - 1, x, x + 1}; /* wrapping */
    for (size_t c = 0; c < NCMPS; c++)
      for (int k = 0; k < 3; k++) {
        int flag = -1;
        CHECK_OK(dart_signal_test(w[i], cmps[c], operands[k], &flag));
        if (flag != compare(x, cmps[c], operands[k]))
          FAILF("dart_signal_test(%llu %s %llu) gave %d",
                (unsigned long long)x, cmp_names[c],
                (unsigned long long)operands[k], flag);
      }
  }
  /* a wait on a word that compares true returns at once, with the word */
  for (size_t i = 0; i < NLOCAL; i++)
    for (size_t c = 0; c < NCMPS; c++) {
      const uint64_t x = local_values[i];
      const uint64_t operands[3] = {x, x - 1, x + 1};
      int k = 0;
      while (k < 3 && !compare(x, cmps[c], operands[k])) k++;
      if (k == 3) continue; /* 0 > v, UINT64_MAX < v: none */
      const uint64_t v = operands[k];
      uint64_t seen = ~x;
      CHECK_OK(dart_signal_wait_until(w[i], cmps[c], v, &seen));
      CHECK_EQ(seen, x);
      CHECK_OK(dart_signal_wait_until(w[i], cmps[c], v, NULL));
    }
  /* _some: exactly the words that compare true, ascending; _any: one of
   * them; _all: returns where all do */
  static const struct {
    dart_cmp_t cmp;
    uint64_t v;
  } sets[] = {{DART_CMP_EQ, 3},          {DART_CMP_NE, 3},
              {DART_CMP_GT, 8},          {DART_CMP_GE, 9},
              {DART_CMP_LT, 3},          {DART_CMP_LE, 3},
              {DART_CMP_GT, UINT64_MAX - 1}, {DART_CMP_LT, 1},
              {DART_CMP_GE, 0},          {DART_CMP_NE, 1}};
  for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
    size_t want[NLOCAL], got[NLOCAL], count = 99;
    for (size_t i = 0; i < NLOCAL; i++) got[i] = 1000;
    const size_t nwant = expected_some(sets[s].cmp, sets[s].v, want);
    CHECK(nwant > 0);
    CHECK_OK(dart_signal_wait_until_some(w, NLOCAL, sets[s].cmp, sets[s].v,
                                         got, &count));
    if (count != nwant) {
      FAILF("_some %s %llu: %zu indices, not %zu", cmp_names[sets[s].cmp],
            (unsigned long long)sets[s].v, count, nwant);
    } else {
      for (size_t i = 0; i < nwant; i++)
        if (got[i] != want[i])
          FAILF("_some %s %llu: index %zu is %zu, not %zu",
                cmp_names[sets[s].cmp], (unsigned long long)sets[s].v, i,
                got[i], want[i]);
    }
    size_t index = 1000;
    CHECK_OK(dart_signal_wait_until_any(w, NLOCAL, sets[s].cmp, sets[s].v,
                                        &index));
    if (index >= NLOCAL ||
        !compare(local_values[index], sets[s].cmp, sets[s].v))
      FAILF("_any %s %llu gave index %zu", cmp_names[sets[s].cmp],
            (unsigned long long)sets[s].v, index);
    /* _all on the words that compare true */
    dart_gptr_t sub[NLOCAL];
    for (size_t i = 0; i < nwant; i++) sub[i] = w[want[i]];
    CHECK_OK(dart_signal_wait_until_all(sub, nwant, sets[s].cmp, sets[s].v));
  }
  /* one word; the same word twice */
  size_t one_idx[2] = {7, 7}, count = 0;
  CHECK_OK(dart_signal_wait_until_some(&w[1], 1, DART_CMP_EQ, 7, one_idx,
                                       &count));
  CHECK_EQ(count, 1);
  CHECK_EQ(one_idx[0], 0);
  const dart_gptr_t twice[2] = {w[3], w[3]};
  CHECK_OK(dart_signal_wait_until_some(twice, 2, DART_CMP_EQ, 9, one_idx,
                                       &count));
  CHECK_EQ(count, 2);
  CHECK_EQ(one_idx[0], 0);
  CHECK_EQ(one_idx[1], 1);
  CHECK_OK(dart_signal_wait_until_all(twice, 2, DART_CMP_GE, 9));
  /* ADD wraps; SET replaces */
  CHECK_OK(dart_signal(w[5], 2, DART_SIGNAL_ADD)); /* UINT64_MAX + 2 */
  CHECK_OK(dart_signal_wait_until(w[5], DART_CMP_LT, 5, NULL));
  CHECK_EQ(sig_read(w[5]), 1);
  CHECK_OK(dart_signal(w[5], 40, DART_SIGNAL_ADD));
  CHECK_OK(dart_signal(w[5], 1, DART_SIGNAL_ADD));
  CHECK_OK(dart_signal_wait_until(w[5], DART_CMP_EQ, 42, NULL));
  set_own(w[5], 5);
  CHECK_EQ(sig_read(w[5]), 5);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_OK(dart_team_memfree(g));
}

/* ---- reads of other units' words ---- */

#define TORN_K 3000
static int torn_k = TORN_K; /* DART_TEST_ITERS caps it (main) */
/* a value whose halves agree: a torn read would not */
static uint64_t halves(uint64_t k) { return k << 32 | k; }

static void test_remote_read(void)
{
  dart_gptr_t g;
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 2, DART_TYPE_ULONGLONG,
                                      &g));
  set_own(word(g, me, 0), 1000 + (uint64_t)me);
  set_own(word(g, me, 1), 0);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  for (int u = 0; u < n; u++) {
    const uint64_t v = sig_read(word(g, u, 0));
    if (v != 1000 + (uint64_t)u)
      FAILF("unit %d's word read as %llu, not %d", u, (unsigned long long)v,
            1000 + u);
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  /* each unit adds its id + 1 to the next unit's word */
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  CHECK_OK(dart_signal(word(g, next, 0), (uint64_t)me + 1, DART_SIGNAL_ADD));
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  for (int u = 0; u < n; u++) {
    const uint64_t v = sig_read(word(g, u, 0)),
                   want = 1000 + (uint64_t)u + (uint64_t)(u + n - 1) % n + 1;
    if (v != want)
      FAILF("unit %d's word read as %llu after the ADDs, not %llu", u,
            (unsigned long long)v, (unsigned long long)want);
  }
  CHECK_EQ(sig_read(word(g, me, 0)), 1000 + me + prev + 1);
  /* the next unit sets its word while this one reads it: every value read
   * is one that was set */
  int torn = 0;
  for (uint64_t k = 1; k <= (uint64_t)torn_k; k++) {
    CHECK_OK(dart_signal(word(g, me, 1), halves(k), DART_SIGNAL_SET));
    const uint64_t v = sig_read(word(g, next, 1));
    if ((v >> 32) != (v & 0xffffffffu) || (v >> 32) > (uint64_t)torn_k) {
      if (torn++ == 0)
        FAILF("read %#llx from unit %d's word, never set",
              (unsigned long long)v, next);
    }
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_EQ(sig_read(word(g, next, 1)), halves((uint64_t)torn_k));
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_OK(dart_team_memfree(g));
}

/* ---- exact ADD totals ---- */

#define ADD_K 500
static int add_k = ADD_K; /* DART_TEST_ITERS caps it (main) */

static void test_add_totals(dart_gptr_t g)
{
  /* word 0: unit 0's, every unit adds 1 add_k times; word 1: every unit
   * adds its id + 1 to every unit's, add_k times */
  set_own(word(g, me, 0), 0);
  set_own(word(g, me, 1), 0);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  for (int k = 0; k < add_k; k++) {
    CHECK_OK(dart_signal(word(g, 0, 0), 1, DART_SIGNAL_ADD));
    for (int t = 0; t < n; t++)
      CHECK_OK(dart_signal(word(g, (me + k + t) % n, 1), (uint64_t)me + 1,
                           DART_SIGNAL_ADD));
  }
  const uint64_t want0 = (uint64_t)n * add_k,
                 want1 =
                     (uint64_t)add_k * (uint64_t)n * (uint64_t)(n + 1) / 2;
  uint64_t seen = 0;
  /* the ADDs arrive without a barrier: the waits serve them */
  CHECK_OK(dart_signal_wait_until(word(g, me, 1), DART_CMP_GE, want1, &seen));
  CHECK_EQ(seen, want1);
  if (me == 0) {
    CHECK_OK(dart_signal_wait_until(word(g, 0, 0), DART_CMP_GE, want0,
                                    &seen));
    CHECK_EQ(seen, want0);
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  const uint64_t got1 = sig_read(word(g, me, 1)), got0 = sig_read(word(g, 0, 0));
  CHECK_EQ(got1, want1);
  CHECK_EQ(got0, want0);
  if (got1 == want1) {
    seen = 0;
    CHECK_OK(dart_signal_wait_until(word(g, me, 1), DART_CMP_EQ, want1,
                                    &seen));
    CHECK_EQ(seen, want1);
  }
  if (me == 0 && got0 == want0)
    CHECK_OK(dart_signal_wait_until(word(g, 0, 0), DART_CMP_EQ, want0, NULL));
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
}

static void test_add_totals_host(void)
{
  dart_gptr_t g;
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 2, DART_TYPE_ULONGLONG,
                                      &g));
  test_add_totals(g);
  CHECK_OK(dart_team_memfree(g));
}

/* ---- several producers, one consumer ---- */

/* a round's comparison: words start at reset, producers set v */
typedef struct {
  dart_cmp_t cmp;
  uint64_t operand, reset;
} round_kind_t;

static round_kind_t round_kind(int q)
{
  const uint64_t v = (uint64_t)q + 1;
  switch (q % 6) {
  case 0: return (round_kind_t){DART_CMP_GE, v, 0};
  case 1: return (round_kind_t){DART_CMP_EQ, v, 0};
  case 2: return (round_kind_t){DART_CMP_GT, v - 1, 0};
  case 3: return (round_kind_t){DART_CMP_NE, 0, 0};
  case 4: return (round_kind_t){DART_CMP_LT, 1000000, UINT64_MAX};
  default: return (round_kind_t){DART_CMP_LE, v, UINT64_MAX};
  }
}
#define MULTI_ROUNDS 36 /* 6 comparisons x 3 waits x 2 orders */

static void test_wait_multi(void)
{
  if (n == 1) return;
  const size_t m = (size_t)n - 1; /* unit 0's words, word i for unit i+1 */
  const size_t token = m;         /* every unit's word for the order */
  dart_gptr_t g;
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, m + 1,
                                      DART_TYPE_ULONGLONG, &g));
  dart_gptr_t *sigs = malloc(m * sizeof *sigs);
  size_t *idx = malloc(m * sizeof *idx);
  char *got = malloc(m);
  for (size_t i = 0; i < m; i++) sigs[i] = word(g, 0, i);
  if (me == 0)
    for (size_t i = 0; i < m; i++) set_own(sigs[i], round_kind(0).reset);
  set_own(word(g, me, token), 0);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  for (int q = 0; q < MULTI_ROUNDS; q++) {
    const uint64_t v = (uint64_t)q + 1;
    const round_kind_t rk = round_kind(q);
    const int wait = (q / 6) % 3;        /* 0: _some, 1: _any, 2: _all */
    const bool in_order = (q / 18) % 2; /* producers one after another */
    const char *cn = cmp_names[rk.cmp];
    if (me > 0) {
      if (in_order && me > 1)
        CHECK_OK(dart_signal_wait_until(word(g, me, token), DART_CMP_GE, v,
                                        NULL));
      CHECK_OK(dart_signal(sigs[me - 1], v, DART_SIGNAL_SET));
      if (in_order && me + 1 < n)
        CHECK_OK(dart_signal(word(g, me + 1, token), v, DART_SIGNAL_SET));
    } else {
      memset(got, 0, m);
      size_t ngot = 0;
      /* an index reported: it compares true, holds v, is new; reset it */
      for (int calls = 0; ngot < m && dart_test_failures < 20; calls++) {
        size_t count = 0;
        for (size_t i = 0; i < m; i++) idx[i] = (size_t)-1;
        if (wait == 0) {
          CHECK_OK(dart_signal_wait_until_some(sigs, m, rk.cmp, rk.operand,
                                               idx, &count));
          if (count < 1 || count > m - ngot) {
            FAILF("round %d (%s): _some reported %zu indices, %zu left", q,
                  cn, count, m - ngot);
            break;
          }
          for (size_t i = 1; i < count; i++)
            if (idx[i] <= idx[i - 1])
              FAILF("round %d (%s): _some indices %zu, %zu not ascending", q,
                    cn, idx[i - 1], idx[i]);
        } else if (wait == 1) {
          CHECK_OK(dart_signal_wait_until_any(sigs, m, rk.cmp, rk.operand,
                                              &idx[0]));
          count = 1;
        } else {
          CHECK_OK(dart_signal_wait_until_all(sigs, m, rk.cmp, rk.operand));
          count = m;
          for (size_t i = 0; i < m; i++) idx[i] = i;
        }
        for (size_t k = 0; k < count; k++) {
          const size_t i = idx[k];
          if (i >= m) {
            FAILF("round %d (%s): index %zu of %zu words", q, cn, i, m);
            continue;
          }
          if (got[i]) {
            FAILF("round %d (%s): index %zu reported again after its reset",
                  q, cn, i);
            continue;
          }
          int flag = -1;
          CHECK_OK(dart_signal_test(sigs[i], rk.cmp, rk.operand, &flag));
          const uint64_t x = sig_read(sigs[i]);
          if (flag != 1 || x != v)
            FAILF("round %d (%s %llu): index %zu holds %llu (test %d), not "
                  "%llu",
                  q, cn, (unsigned long long)rk.operand, i,
                  (unsigned long long)x, flag, (unsigned long long)v);
          got[i] = 1;
          ngot++;
          if (wait != 2) set_own(sigs[i], rk.reset);
        }
      }
      /* the words start the next round at its reset value */
      const round_kind_t nk = round_kind(q + 1);
      for (size_t i = 0; i < m; i++) set_own(sigs[i], nk.reset);
    }
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  free(got);
  free(idx);
  free(sigs);
  CHECK_OK(dart_team_memfree(g));
}

/* ---- the producer/consumer ring ---- */

typedef struct {
  const char *name;
  dart_gptr_t data; /* per unit: 2 slots of elems uint64_t */
  size_t elems;
  bool data_dev;    /* data is device memory (read it by copies) */
  dart_gptr_t sig;  /* per unit: words 0, 1 (the slots), 2 (acks) */
  int rounds;
  uint64_t *src;    /* elems: the producer's buffer, host or device */
  bool src_dev;
} ring_t;

static uint64_t ring_value(int unit, int round, size_t i)
{
  return dart_test_mix64(((uint64_t)unit << 48) ^ ((uint64_t)round << 24) ^
                         i);
}

static void ring_run(const ring_t *c)
{
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  const size_t bytes = c->elems * sizeof(uint64_t);
  uint64_t *host = malloc(bytes), *check = malloc(bytes);
  int bad_rounds = 0;
  for (size_t w = 0; w < 3; w++) set_own(word(c->sig, me, w), 0);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  for (int r = 1; r <= c->rounds && bad_rounds < 5; r++) {
    const int b = r % 2;
    const dart_gptr_t dst = at(c->data, next, (size_t)b * bytes),
                      sig = word(c->sig, next, (size_t)b);
    /* the next unit has checked round r - 2, the last in this slot */
    if (r > 2) {
      uint64_t acks = 0;
      CHECK_OK(dart_signal_wait_until(word(c->sig, me, 2), DART_CMP_GE,
                                      (uint64_t)r - 2, &acks));
      if (acks < (uint64_t)r - 2 || acks > (uint64_t)r - 1)
        FAILF("%s round %d: %llu acks", c->name, r, (unsigned long long)acks);
    }
    for (size_t i = 0; i < c->elems; i++) host[i] = ring_value(me, r, i);
    if (c->src_dev) CHECK_OK(dart_memkind_copy(c->src, host, bytes));
    else memcpy(c->src, host, bytes);
    /* SET r, or ADD 2 to the slot's r - 2 */
    const bool add = r % 8 >= 4;
    const uint64_t value = add && r > 2 ? 2 : (uint64_t)r;
    const dart_signal_op_t op = add ? DART_SIGNAL_ADD : DART_SIGNAL_SET;
    const bool as_bytes = r % 3 == 2;
    const size_t nelem = as_bytes ? bytes : c->elems;
    const dart_datatype_t t = as_bytes ? DART_TYPE_BYTE : DART_TYPE_ULONGLONG;
    dart_handle_t h = NOT_A_HANDLE;
    int32_t done = 0;
    dart_ret_t ret = DART_OK;
    switch (r % 5) {
    case 0:
      CHECK_OK(dart_put_signal(dst, c->src, nelem, t, t, sig, value, op));
      h = DART_HANDLE_NULL;
      break;
    case 1:
      CHECK_OK(dart_put_signal_handle(dst, c->src, nelem, t, t, sig, value,
                                      op, &h));
      CHECK(h != NOT_A_HANDLE);
      CHECK_OK(dart_wait(&h));
      break;
    case 2:
      CHECK_OK(dart_put_signal_handle(dst, c->src, nelem, t, t, sig, value,
                                      op, &h));
      CHECK(h != NOT_A_HANDLE);
      CHECK_OK(dart_wait_local(&h));
      break;
    case 3:
      CHECK_OK(dart_put_signal_handle(dst, c->src, nelem, t, t, sig, value,
                                      op, &h));
      CHECK(h != NOT_A_HANDLE);
      while (h != NOT_A_HANDLE && (ret = dart_test(&h, &done)) == DART_OK &&
             !done) {
      }
      CHECK_OK(ret);
      CHECK_EQ(done, 1);
      break;
    default: {
      /* a plain put and a put with a handle, neither completed, then the
       * signal alone: it comes after them; then the source is done with */
      const size_t half = nelem / 2, esz = as_bytes ? 1 : sizeof(uint64_t);
      dart_handle_t ph = NOT_A_HANDLE;
      CHECK_OK(dart_put(dst, c->src, half, t, t));
      CHECK_OK(dart_put_handle(at(c->data, next, (size_t)b * bytes +
                                                   half * esz),
                               (const char *)c->src + half * esz,
                               nelem - half, t, t, &ph));
      CHECK_OK(dart_signal(sig, value, op));
      CHECK_OK(dart_flush_local(dst));
      CHECK_OK(dart_wait_local(&ph));
      h = DART_HANDLE_NULL;
      break;
    }
    }
    CHECK(h == DART_HANDLE_NULL);
    /* the source may be reused: overwrite it at once */
    memset(host, 0xEE, bytes);
    if (c->src_dev) CHECK_OK(dart_memkind_copy(c->src, host, bytes));
    else memset(c->src, 0xEE, bytes);

    /* the previous unit's round r, in this unit's slot b */
    uint64_t seen = 0;
    CHECK_OK(dart_signal_wait_until(word(c->sig, me, (size_t)b), DART_CMP_GE,
                                    (uint64_t)r, &seen));
    if (seen != (uint64_t)r)
      FAILF("%s round %d: the signal was %llu", c->name, r,
            (unsigned long long)seen);
    void *mine = NULL;
    CHECK_OK(dart_gptr_getaddr(at(c->data, me, (size_t)b * bytes), &mine));
    const uint64_t *data = mine;
    if (c->data_dev) {
      CHECK_OK(dart_memkind_copy(check, mine, bytes));
      data = check;
    }
    size_t wrong = 0, first = 0;
    for (size_t i = 0; i < c->elems; i++)
      if (data[i] != ring_value(prev, r, i) && wrong++ == 0) first = i;
    if (wrong) {
      bad_rounds++;
      FAILF("%s round %d (form %d%s%s): %zu of %zu elements not unit %d's, "
            "first [%zu] = %#llx, not %#llx",
            c->name, r, r % 5, add ? ", ADD" : "", as_bytes ? ", bytes" : "",
            wrong, c->elems, prev, first, (unsigned long long)data[first],
            (unsigned long long)ring_value(prev, r, first));
    }
    /* hand the slot back */
    CHECK_OK(dart_signal(word(c->sig, prev, 2), 1, DART_SIGNAL_ADD));
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  if (bad_rounds == 0) {
    /* every ack arrived once; the slots hold the last two rounds */
    const int last = c->rounds;
    CHECK_EQ(sig_read(word(c->sig, me, 2)), last);
    CHECK_EQ(sig_read(word(c->sig, me, (size_t)(last % 2))), last);
    if (last > 1)
      CHECK_EQ(sig_read(word(c->sig, me, (size_t)(1 - last % 2))), last - 1);
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  free(check);
  free(host);
}

static int ring_rounds = 10000; /* --rounds, DART_TEST_ITERS */

static void test_ring_host(void)
{
  dart_gptr_t data, sig;
  const size_t elems = 64;
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 2 * elems,
                                      DART_TYPE_ULONGLONG, &data));
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 3, DART_TYPE_ULONGLONG,
                                      &sig));
  uint64_t *src = malloc(elems * sizeof *src);
  ring_t c = {"ring", data, elems, false, sig, ring_rounds, src, false};
  ring_run(&c);
  free(src);
  /* 1 MiB + 8 B blocks */
  const size_t big = ((size_t)1 << 17) + 1;
  CHECK_OK(dart_team_memfree(data));
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 2 * big,
                                      DART_TYPE_ULONGLONG, &data));
  src = malloc(big * sizeof *src);
  ring_t cb = {"ring 1 MiB", data, big, false, sig, 12, src, false};
  ring_run(&cb);
  free(src);
  CHECK_OK(dart_team_memfree(data));
  CHECK_OK(dart_team_memfree(sig));
}

/* ---- the signal on a third unit ---- */

#define THIRD_ROUNDS 40
#define THIRD_ELEMS 4096 /* 32 KiB */

static void test_third_unit(void)
{
  /* unit u puts round r's block into slot r of unit u+1 and sets bit r of
   * unit u+2's word; that unit gets the block from unit u+1 */
  const size_t slot = THIRD_ELEMS * sizeof(uint64_t);
  dart_gptr_t data, sig;
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL,
                                      THIRD_ROUNDS * THIRD_ELEMS,
                                      DART_TYPE_ULONGLONG, &data));
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 1, DART_TYPE_ULONGLONG,
                                      &sig));
  set_own(word(sig, me, 0), 0);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  const int next = (me + 1) % n, after = (me + 2) % n,
            prev = (me + n - 1) % n, prev2 = (me + 2 * n - 2) % n;
  uint64_t *src = malloc(slot), *buf = malloc(slot);
  for (int r = 0; r < THIRD_ROUNDS; r++) {
    for (size_t i = 0; i < THIRD_ELEMS; i++)
      src[i] = ring_value(me, 100000 + r, i);
    const dart_gptr_t dst = at(data, next, (size_t)r * slot),
                      s = word(sig, after, 0);
    if (r % 3 == 0) {
      CHECK_OK(dart_put_signal(dst, src, THIRD_ELEMS, DART_TYPE_ULONGLONG,
                               DART_TYPE_ULONGLONG, s, UINT64_C(1) << r,
                               DART_SIGNAL_ADD));
    } else if (r % 3 == 1) {
      dart_handle_t h = NOT_A_HANDLE;
      CHECK_OK(dart_put_signal_handle(dst, src, THIRD_ELEMS,
                                      DART_TYPE_ULONGLONG,
                                      DART_TYPE_ULONGLONG, s,
                                      UINT64_C(1) << r, DART_SIGNAL_ADD, &h));
      if (r % 2) CHECK_OK(dart_wait(&h));
      else CHECK_OK(dart_wait_local(&h));
      CHECK(h == DART_HANDLE_NULL);
    } else {
      /* a put left incomplete, then the signal alone */
      CHECK_OK(dart_put(dst, src, THIRD_ELEMS, DART_TYPE_ULONGLONG,
                        DART_TYPE_ULONGLONG));
      CHECK_OK(dart_signal(s, UINT64_C(1) << r, DART_SIGNAL_ADD));
      CHECK_OK(dart_flush_local(dst));
    }
  }
  const uint64_t full = (UINT64_C(1) << THIRD_ROUNDS) - 1;
  uint64_t mask = 0;
  int wrong_blocks = 0;
  while (mask != full) {
    uint64_t seen = mask;
    CHECK_OK(dart_signal_wait_until(word(sig, me, 0), DART_CMP_NE, mask,
                                    &seen));
    if ((seen & mask) != mask || (seen & ~full) || seen == mask) {
      FAILF("third unit: signal %#llx after %#llx",
            (unsigned long long)seen, (unsigned long long)mask);
      break;
    }
    for (int r = 0; r < THIRD_ROUNDS; r++) {
      if (!((seen & ~mask) >> r & 1)) continue;
      memset(buf, 0, slot);
      CHECK_OK(dart_get_blocking(buf, at(data, prev, (size_t)r * slot),
                                 THIRD_ELEMS, DART_TYPE_ULONGLONG,
                                 DART_TYPE_ULONGLONG));
      for (size_t i = 0; i < THIRD_ELEMS; i++)
        if (buf[i] != ring_value(prev2, 100000 + r, i)) {
          if (wrong_blocks++ < 3)
            FAILF("third unit: round %d's block at unit %d, element %zu: "
                  "%#llx, not unit %d's",
                  r, prev, i, (unsigned long long)buf[i], prev2);
          break;
        }
    }
    mask = seen;
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_EQ(sig_read(word(sig, me, 0)), full);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  free(buf);
  free(src);
  CHECK_OK(dart_team_memfree(sig));
  CHECK_OK(dart_team_memfree(data));
}

/* ---- fetching atomics with handles ---- */

#define FAO_K 400 /* per unit; a multiple of BATCH */
#define BATCH 8
#define CAS_K 150
/* DART_TEST_ITERS caps them (main) */
static int fao_k = FAO_K, cas_k = CAS_K;

/* Completes BATCH handles in the chunk's way; the results are read after. */
static void complete_batch(int chunk, dart_handle_t *hs, dart_gptr_t target)
{
  switch (chunk % 4) {
  case 0: /* each waited for at its call */
    break;
  case 1:
    CHECK_OK(dart_waitall(hs, BATCH));
    break;
  case 2:
    for (int i = 0; i < BATCH; i++) {
      int32_t done = 0;
      dart_ret_t ret;
      while ((ret = dart_test(&hs[i], &done)) == DART_OK && !done) {
      }
      CHECK_OK(ret);
      CHECK_EQ(done, 1);
    }
    break;
  default: /* a flush of the target completes them; then free */
    CHECK_OK(dart_flush(target));
    for (int i = 0; i < BATCH; i++) CHECK_OK(dart_handle_free(&hs[i]));
    break;
  }
  for (int i = 0; i < BATCH; i++) CHECK(hs[i] == DART_HANDLE_NULL);
}

static int cmp_u64(const void *a, const void *b)
{
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* all n*k values distinct and exactly first, first+1, ... */
static void check_tickets(const char *what, uint64_t *mine, size_t k,
                          uint64_t first)
{
  uint64_t *all = malloc((size_t)n * k * sizeof *all);
  CHECK_OK(dart_allgather(mine, all, k, DART_TYPE_ULONGLONG, DART_TEAM_ALL));
  qsort(all, (size_t)n * k, sizeof *all, cmp_u64);
  for (size_t i = 0; i < (size_t)n * k; i++)
    if (all[i] != first + i) {
      FAILF("%s: the %zu-th smallest fetched value is %llu, not %llu", what,
            i, (unsigned long long)all[i], (unsigned long long)(first + i));
      break;
    }
  free(all);
}

static void test_atomic_handles(void)
{
  /* unit 0: word 0 counts up (ULONGLONG), word 1 down (LONG); unit n-1:
   * word 2 for compare-and-swap */
  dart_gptr_t g;
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 4, DART_TYPE_ULONGLONG,
                                      &g));
  uint64_t *mine;
  CHECK_OK(dart_gptr_getaddr(word(g, me, 0), (void **)&mine));
  memset(mine, 0, 4 * sizeof *mine);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  const dart_gptr_t up = word(g, 0, 0), down = word(g, 0, 1),
                    cas = word(g, n - 1, 2);
  uint64_t *olds = malloc(fao_k * sizeof *olds);
  long *lolds = malloc(fao_k * sizeof *lolds);
  const uint64_t one = 1;
  const long minus_one = -1;
  for (int chunk = 0; chunk < fao_k / BATCH; chunk++) {
    dart_handle_t hs[BATCH], ls[BATCH];
    for (int i = 0; i < BATCH; i++) {
      const int k = chunk * BATCH + i;
      olds[k] = lolds[k] = 0x7777;
      hs[i] = ls[i] = NOT_A_HANDLE;
      CHECK_OK(dart_fetch_and_op_handle(up, &one, &olds[k],
                                        DART_TYPE_ULONGLONG, DART_OP_SUM,
                                        &hs[i]));
      CHECK_OK(dart_fetch_and_op_handle(down, &minus_one, &lolds[k],
                                        DART_TYPE_LONG, DART_OP_SUM, &ls[i]));
      CHECK(hs[i] != NOT_A_HANDLE && ls[i] != NOT_A_HANDLE);
      /* a handle that came back null: the result is there already */
      if (hs[i] == DART_HANDLE_NULL) CHECK(olds[k] != 0x7777);
      if (ls[i] == DART_HANDLE_NULL) CHECK(lolds[k] != 0x7777);
      if (chunk % 4 == 0) {
        CHECK_OK(dart_wait(&hs[i]));
        CHECK_OK(dart_wait(&ls[i]));
      }
    }
    complete_batch(chunk, hs, up);
    complete_batch(chunk, ls, down);
  }
  for (int k = 0; k < fao_k; k++) {
    if (olds[k] >= (uint64_t)n * fao_k) {
      FAILF("fetch-and-add %d fetched %llu", k, (unsigned long long)olds[k]);
      break;
    }
  }
  /* the fetched values of one unit grow where it waited for each */
  for (int k = 1; k < BATCH; k++) CHECK(olds[k] > olds[k - 1]);
  uint64_t *neg = malloc(fao_k * sizeof *neg);
  for (int k = 0; k < fao_k; k++) neg[k] = (uint64_t)(-lolds[k]);
  check_tickets("fetch-and-add (ULONGLONG)", olds, fao_k, 0);
  check_tickets("fetch-and-add -1 (LONG)", neg, fao_k, 0);

  /* compare-and-swap increments, with and without a handle; each unit's
   * successful swaps take distinct values */
  uint64_t *won = malloc(cas_k * sizeof *won);
  for (int k = 0; k < cas_k; k++) {
    uint64_t cur = 0x7777, seen, next;
    dart_handle_t h = NOT_A_HANDLE;
    CHECK_OK(dart_fetch_and_op_handle(cas, NULL, &cur, DART_TYPE_ULONGLONG,
                                      DART_OP_NO_OP, &h));
    CHECK_OK(dart_wait(&h));
    CHECK(cur != 0x7777);
    for (int tries = 0;; tries++) {
      next = cur + 1;
      seen = 0x7777777;
      if ((k + tries) % 2) {
        CHECK_OK(dart_compare_and_swap(cas, &next, &cur, &seen,
                                       DART_TYPE_ULONGLONG));
      } else {
        h = NOT_A_HANDLE;
        CHECK_OK(dart_compare_and_swap_handle(cas, &next, &cur, &seen,
                                              DART_TYPE_ULONGLONG, &h));
        CHECK(h != NOT_A_HANDLE);
        CHECK_OK(dart_wait(&h));
        CHECK(h == DART_HANDLE_NULL);
      }
      if (seen == cur) break;
      if (seen == 0x7777777 || seen < cur || tries > 1000000) {
        FAILF("compare-and-swap: %llu after %llu", (unsigned long long)seen,
              (unsigned long long)cur);
        break;
      }
      cur = seen;
    }
    won[k] = cur;
  }
  check_tickets("compare-and-swap", won, cas_k, 0);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  uint64_t total = 0;
  long ltotal = 0;
  CHECK_OK(dart_fetch_and_op(up, NULL, &total, DART_TYPE_ULONGLONG,
                             DART_OP_NO_OP));
  CHECK_EQ(total, (uint64_t)n * fao_k);
  CHECK_OK(dart_fetch_and_op(down, NULL, &ltotal, DART_TYPE_LONG,
                             DART_OP_NO_OP));
  CHECK_EQ(ltotal, -(long)n * fao_k);
  CHECK_OK(dart_fetch_and_op(cas, NULL, &total, DART_TYPE_ULONGLONG,
                             DART_OP_NO_OP));
  CHECK_EQ(total, (uint64_t)n * cas_k);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  free(won);
  free(neg);
  free(lolds);
  free(olds);
  CHECK_OK(dart_team_memfree(g));
}

/* ---- device memory ---- */

static int device_rounds(void)
{
  const int r = ring_rounds / 10;
  return r < 100 ? 100 : r;
}

static void test_device(void)
{
  const size_t elems = 64, bytes = elems * sizeof(uint64_t);
  dart_gptr_t data, dsig, hsig;
  CHECK_OK(dart_team_memalloc_kind(DART_TEAM_ALL, 2 * elems,
                                   DART_TYPE_ULONGLONG, DART_MEMKIND_CUDA,
                                   &data));
  CHECK_OK(dart_team_memalloc_kind(DART_TEAM_ALL, 3, DART_TYPE_ULONGLONG,
                                   DART_MEMKIND_CUDA, &dsig));
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 3, DART_TYPE_ULONGLONG,
                                      &hsig));
  dart_memkind_t kind = DART_MEMKIND_HOST;
  CHECK_OK(dart_gptr_memkind(dsig, &kind));
  CHECK_EQ(kind, DART_MEMKIND_CUDA);
  /* atomics on device memory staged to another node are refused: then the
   * signals live in host memory, the data in device memory */
  int staged = 0, any_staged = 0;
  for (int u = 0; u < n; u++) {
    dart_path_t p;
    CHECK_OK(dart_gptr_atomic_path(word(dsig, u, 0), &p));
    staged |= p == DART_PATH_STAGE;
  }
  CHECK_OK(dart_allreduce(&staged, &any_staged, 1, DART_TYPE_INT,
                          DART_OP_MAX, DART_TEAM_ALL));
  const dart_gptr_t sig = any_staged ? hsig : dsig;
  if (me == 0)
    printf("device part: signal words in %s memory\n",
           any_staged ? "host" : "device");
  uint64_t *src_host = malloc(bytes), *src_dev = NULL;
  CHECK_OK(dart_memkind_alloc(bytes, DART_MEMKIND_CUDA, (void **)&src_dev));
  ring_t c = {"device ring (host source)", data, elems, true, sig,
              device_rounds(), src_host, false};
  ring_run(&c);
  ring_t cd = {"device ring (device source)", data, elems, true, sig,
               device_rounds(), src_dev, true};
  ring_run(&cd);
  if (any_staged) {
    /* a signal word whose atomics would be staged is refused before the
     * data moves: nothing half done */
    dart_gptr_t hd;
    CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 8, DART_TYPE_ULONGLONG,
                                        &hd));
    uint64_t *hmine;
    CHECK_OK(dart_gptr_getaddr(at(hd, me, 0), (void **)&hmine));
    for (int i = 0; i < 8; i++) hmine[i] = 0x5E5E5E5E5E5E5E5Eull;
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    const int next = (me + 1) % n;
    dart_path_t p;
    CHECK_OK(dart_gptr_atomic_path(word(dsig, next, 0), &p));
    if (p == DART_PATH_STAGE) {
      const uint64_t junk[8] = {1, 2, 3, 4, 5, 6, 7, 8};
      uint64_t v = 0xABCD;
      dart_handle_t h = NOT_A_HANDLE;
      INVAL("dart_put_signal",
            dart_put_signal(at(hd, next, 0), junk, 8, DART_TYPE_ULONGLONG,
                            DART_TYPE_ULONGLONG, word(dsig, next, 0), 1,
                            DART_SIGNAL_ADD));
      INVAL("dart_put_signal_handle",
            dart_put_signal_handle(at(hd, next, 0), junk, 8,
                                   DART_TYPE_ULONGLONG, DART_TYPE_ULONGLONG,
                                   word(dsig, next, 0), 1, DART_SIGNAL_SET,
                                   &h));
      CHECK(h == DART_HANDLE_NULL);
      INVAL("dart_signal",
            dart_signal(word(dsig, next, 0), 1, DART_SIGNAL_ADD));
      INVAL("dart_signal_read", dart_signal_read(word(dsig, next, 0), &v));
      CHECK_EQ(v, 0xABCD);
    }
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    for (int i = 0; i < 8; i++)
      if (hmine[i] != 0x5E5E5E5E5E5E5E5Eull) {
        FAILF("a refused dart_put_signal (staged signal word) wrote "
              "element %d: %#llx",
              i, (unsigned long long)hmine[i]);
        break;
      }
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    CHECK_OK(dart_team_memfree(hd));
  } else {
    test_add_totals(dsig);
    /* tests on a device word */
    set_own(word(dsig, me, 2), 77);
    for (size_t ci = 0; ci < NCMPS; ci++)
      for (uint64_t v = 76; v <= 78; v++) {
        int flag = -1;
        CHECK_OK(dart_signal_test(word(dsig, me, 2), cmps[ci], v, &flag));
        if (flag != compare(77, cmps[ci], v))
          FAILF("device word: test 77 %s %llu gave %d", cmp_names[ci],
                (unsigned long long)v, flag);
      }
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    CHECK_EQ(sig_read(word(dsig, (me + 1) % n, 2)), 77);
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_OK(dart_memkind_free(src_dev, DART_MEMKIND_CUDA));
  free(src_host);
  CHECK_OK(dart_team_memfree(hsig));
  CHECK_OK(dart_team_memfree(dsig));
  CHECK_OK(dart_team_memfree(data));
}

/* ---- bad input ---- */

#define SENT 0x5E5E5E5E5E5E5E5Eull

static void test_bad_input(void)
{
  const int next = (me + 1) % n;
  dart_gptr_t d, s;
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 8, DART_TYPE_ULONGLONG,
                                      &d));
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 4, DART_TYPE_ULONGLONG,
                                      &s));
  uint64_t *dmine;
  CHECK_OK(dart_gptr_getaddr(at(d, me, 0), (void **)&dmine));
  for (int i = 0; i < 8; i++) dmine[i] = SENT;
  for (size_t w = 0; w < 4; w++) set_own(word(s, me, w), 42);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));

  const uint64_t src[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  const dart_gptr_t dst = at(d, next, 0), good = word(s, next, 0),
                    own = word(s, me, 0);
  const dart_signal_op_t bad_op = (dart_signal_op_t)7;
  const dart_cmp_t bad_cmp = (dart_cmp_t)9;
  const dart_gptr_t bad_sigs[3] = {at(s, next, 4), DART_GPTR_NULL,
                                   word(s, n, 0) /* outside the team */};
  uint64_t value = 0xABCD;
  dart_handle_t h;

  /* the signal word of an update: misaligned, null, outside the team */
  for (int b = 0; b < 3; b++) {
    const dart_gptr_t bs = bad_sigs[b];
    INVAL("dart_signal", dart_signal(bs, 1, DART_SIGNAL_ADD));
    INVAL("dart_put_signal",
          dart_put_signal(dst, src, 8, DART_TYPE_ULONGLONG,
                          DART_TYPE_ULONGLONG, bs, 1, DART_SIGNAL_ADD));
    h = NOT_A_HANDLE;
    INVAL("dart_put_signal_handle",
          dart_put_signal_handle(dst, src, 8, DART_TYPE_ULONGLONG,
                                 DART_TYPE_ULONGLONG, bs, 1, DART_SIGNAL_SET,
                                 &h));
    CHECK(h == DART_HANDLE_NULL);
    INVAL("dart_signal_read", dart_signal_read(bs, &value));
  }
  /* an unknown operation on a good word */
  INVAL("dart_signal", dart_signal(good, 1, bad_op));
  INVAL("dart_put_signal",
        dart_put_signal(dst, src, 8, DART_TYPE_ULONGLONG, DART_TYPE_ULONGLONG,
                        good, 1, bad_op));
  h = NOT_A_HANDLE;
  INVAL("dart_put_signal_handle",
        dart_put_signal_handle(dst, src, 8, DART_TYPE_ULONGLONG,
                               DART_TYPE_ULONGLONG, good, 1, bad_op, &h));
  CHECK(h == DART_HANDLE_NULL);
  /* bad data with a good signal: the signal is not updated */
  INVAL("dart_put_signal",
        dart_put_signal(at(d, next, (size_t)1 << 20), src, 8,
                        DART_TYPE_ULONGLONG, DART_TYPE_ULONGLONG, good, 1,
                        DART_SIGNAL_ADD));
  INVAL("dart_put_signal",
        dart_put_signal(dst, NULL, 8, DART_TYPE_ULONGLONG,
                        DART_TYPE_ULONGLONG, good, 1, DART_SIGNAL_ADD));
  INVAL("dart_put_signal",
        dart_put_signal(dst, src, 8, DART_TYPE_INT, DART_TYPE_ULONGLONG, good,
                        1, DART_SIGNAL_ADD));
  h = NOT_A_HANDLE;
  INVAL("dart_put_signal_handle",
        dart_put_signal_handle(at(d, next, (size_t)1 << 20), src, 8,
                               DART_TYPE_ULONGLONG, DART_TYPE_ULONGLONG, good,
                               1, DART_SIGNAL_ADD, &h));
  CHECK(h == DART_HANDLE_NULL);
  /* no place for the handle */
  INVAL("dart_put_signal_handle",
        dart_put_signal_handle(dst, src, 8, DART_TYPE_ULONGLONG,
                               DART_TYPE_ULONGLONG, good, 1, DART_SIGNAL_ADD,
                               NULL));
  /* NULL outputs */
  INVAL("dart_signal_read", dart_signal_read(own, NULL));
  INVAL("dart_signal_test", dart_signal_test(own, DART_CMP_GE, 0, NULL));

  /* waits and tests: the caller's own aligned words only */
  int flag = -7;
  size_t index = 12345, count = 999, idx[2] = {555, 556};
  const dart_gptr_t wait_bad[4] = {at(s, me, 4), DART_GPTR_NULL,
                                   word(s, n, 0), word(s, next, 0)};
  const int nwait_bad = n > 1 ? 4 : 3; /* another unit's word needs 2 */
  for (int b = 0; b < nwait_bad; b++) {
    const dart_gptr_t bs = wait_bad[b];
    INVAL("dart_signal_wait_until",
          dart_signal_wait_until(bs, DART_CMP_GE, 0, &value));
    INVAL("dart_signal_test", dart_signal_test(bs, DART_CMP_GE, 0, &flag));
    /* a good word that compares true first: the bad one is still refused */
    const dart_gptr_t arr[2] = {own, bs};
    INVAL("dart_signal_wait_until_all",
          dart_signal_wait_until_all(arr, 2, DART_CMP_GE, 0));
    INVAL("dart_signal_wait_until_any",
          dart_signal_wait_until_any(arr, 2, DART_CMP_GE, 0, &index));
    INVAL("dart_signal_wait_until_some",
          dart_signal_wait_until_some(arr, 2, DART_CMP_GE, 0, idx, &count));
  }
  /* an unknown comparison */
  INVAL("dart_signal_wait_until",
        dart_signal_wait_until(own, bad_cmp, 0, &value));
  INVAL("dart_signal_test", dart_signal_test(own, bad_cmp, 0, &flag));
  INVAL("dart_signal_wait_until_all",
        dart_signal_wait_until_all(&own, 1, bad_cmp, 0));
  INVAL("dart_signal_wait_until_any",
        dart_signal_wait_until_any(&own, 1, bad_cmp, 0, &index));
  INVAL("dart_signal_wait_until_some",
        dart_signal_wait_until_some(&own, 1, bad_cmp, 0, idx, &count));
  /* no words, no array */
  INVAL("dart_signal_wait_until_all",
        dart_signal_wait_until_all(&own, 0, DART_CMP_GE, 0));
  INVAL("dart_signal_wait_until_any",
        dart_signal_wait_until_any(&own, 0, DART_CMP_GE, 0, &index));
  INVAL("dart_signal_wait_until_some",
        dart_signal_wait_until_some(&own, 0, DART_CMP_GE, 0, idx, &count));
  INVAL("dart_signal_wait_until_all",
        dart_signal_wait_until_all(NULL, 1, DART_CMP_GE, 0));
  INVAL("dart_signal_wait_until_any",
        dart_signal_wait_until_any(NULL, 1, DART_CMP_GE, 0, &index));
  INVAL("dart_signal_wait_until_some",
        dart_signal_wait_until_some(NULL, 1, DART_CMP_GE, 0, idx, &count));
  /* no place for the results */
  INVAL("dart_signal_wait_until_any",
        dart_signal_wait_until_any(&own, 1, DART_CMP_GE, 0, NULL));
  INVAL("dart_signal_wait_until_some",
        dart_signal_wait_until_some(&own, 1, DART_CMP_GE, 0, NULL, &count));
  INVAL("dart_signal_wait_until_some",
        dart_signal_wait_until_some(&own, 1, DART_CMP_GE, 0, idx, NULL));
  /* nothing written to the outputs */
  CHECK_EQ(value, 0xABCD);
  CHECK_EQ(flag, -7);
  CHECK_EQ(index, 12345);
  CHECK_EQ(count, 999);
  CHECK_EQ(idx[0], 555);
  CHECK_EQ(idx[1], 556);
  /* a NULL seen is no error */
  CHECK_OK(dart_signal_wait_until(own, DART_CMP_EQ, 42, NULL));

  /* fetching atomics with handles: no place for the handle, a misaligned
   * word; the result untouched, the target unchanged */
  const dart_gptr_t target = word(s, next, 1);
  uint64_t one = 1, cmpv = 42, res = 0xABCD;
  INVAL("dart_fetch_and_op_handle",
        dart_fetch_and_op_handle(target, &one, &res, DART_TYPE_ULONGLONG,
                                 DART_OP_SUM, NULL));
  INVAL("dart_compare_and_swap_handle",
        dart_compare_and_swap_handle(target, &one, &cmpv, &res,
                                     DART_TYPE_ULONGLONG, NULL));
  h = NOT_A_HANDLE;
  INVAL("dart_fetch_and_op_handle",
        dart_fetch_and_op_handle(at(s, next, 12), &one, &res,
                                 DART_TYPE_ULONGLONG, DART_OP_SUM, &h));
  CHECK(h == DART_HANDLE_NULL);
  h = NOT_A_HANDLE;
  INVAL("dart_compare_and_swap_handle",
        dart_compare_and_swap_handle(at(s, next, 12), &one, &cmpv, &res,
                                     DART_TYPE_ULONGLONG, &h));
  CHECK(h == DART_HANDLE_NULL);
  CHECK_EQ(res, 0xABCD);

  /* no data written, no signal word changed */
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  for (int i = 0; i < 8; i++)
    if (dmine[i] != SENT) {
      FAILF("a refused dart_put_signal wrote element %d: %#llx", i,
            (unsigned long long)dmine[i]);
      break;
    }
  for (size_t w = 0; w < 4; w++) CHECK_EQ(sig_read(word(s, me, w)), 42);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_OK(dart_team_memfree(s));
  CHECK_OK(dart_team_memfree(d));
}

int main(int argc, char **argv)
{
  dart_test_init(&argc, &argv);
  me = dart_test_unit;
  n = dart_test_units;
  bool gpu_only = false, rounds_given = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--gpu") == 0) gpu_only = true;
    else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      ring_rounds = atoi(argv[++i]);
      rounds_given = true;
    }
  }
  /* fewer rounds where the MPI library's one-sided operations are slow */
  const char *iters = getenv("DART_TEST_ITERS");
  if (iters != NULL && atoi(iters) > 0) {
    const int cap = atoi(iters);
    if (cap < torn_k) torn_k = cap;
    if (cap < add_k) add_k = cap;
    if (cap < cas_k) cas_k = cap;
    if (cap < fao_k) fao_k = cap < BATCH ? BATCH : cap - cap % BATCH;
    if (!rounds_given) ring_rounds = cap < 500 ? cap : 500;
  }
  int device = -1;
  CHECK_OK(dart_memkind_device(&device));
  capture_init();
  if (gpu_only) {
    if (device < 0) {
      if (me == 0) printf("skipped: no device\n");
      dart_exit();
      return DART_TEST_SKIP;
    }
    test_device();
    capture_fini();
    return dart_test_finish();
  }
  test_cmp_local();
  test_remote_read();
  test_add_totals_host();
  test_wait_multi();
  test_ring_host();
  test_third_unit();
  test_atomic_handles();
  if (device >= 0) test_device();
  else if (me == 0) printf("device part left out: no device\n");
  test_bad_input();
  capture_fini();
  return dart_test_finish();
}
