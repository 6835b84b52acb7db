/*
 * Active messages (dart_am.h): every unit sends messages of random sizes
 * (1 B .. 1 MiB, most small) to random units, from one or more threads;
 * each target checks every byte and the order per (origin, thread), and
 * the counts against what the origins sent. Calls with replies checked,
 * dart_test on a call, a flush seen through a one-sided get, a thousand
 * calls in flight at once, messages,
 * calls and replies of sizes at the edges of fragments and rendezvous,
 * handlers on a second team, and bad input.
 *
 *   test_am [--messages N] [--threads T]
 */
#define _GNU_SOURCE
#include <dart/dart_am.h>
#include <pthread.h>

#include "dart_test_capture.h"

#define MAX_THREADS 4
#define MAX_REPLY 256
#define OUTSTANDING 8

static int me, units, nthreads = 1;
static long nmessages = 20000;

/* ---- message k of thread s from o to t: its length and bytes ---- */

static uint64_t seed(int o, int t, int s, uint64_t k)
{
  return dart_test_mix64(((uint64_t)o << 44) ^ ((uint64_t)t << 24) ^
                         ((uint64_t)s << 60) ^ (k * 0x9E3779B97F4A7C15ull));
}

static size_t msg_len(uint64_t r)
{
  unsigned c = (unsigned)(r % 1000);
  if (c < 900) return 1 + (r >> 12) % 256;
  if (c < 995) return 1 + (r >> 12) % 65536;
  return 1 + (r >> 12) % (1u << 20);
}

static uint8_t msg_byte(uint64_t r, size_t i)
{
  return (uint8_t)((r >> ((i & 7) * 8)) ^ (i >> 3) ^ (i * 7));
}

/* byte 0: the thread, which orders the messages the target expects */
static void fill(uint8_t *buf, uint64_t r, size_t len, int s)
{
  buf[0] = (uint8_t)s;
  for (size_t i = 1; i < len; i++) buf[i] = msg_byte(r, i);
}

/* ---- at the target ---- */

typedef struct {
  uint64_t next[MAX_THREADS]; /* per (origin, thread): message expected */
  uint64_t got;
} from_t;

static from_t *from; /* by origin */
static long bad_messages;

static void check_handler(dart_team_unit_t origin, const void *payload,
                          size_t len, void *reply, size_t *reply_len,
                          void *context)
{
  (void)reply;
  (void)reply_len;
  CHECK(context == &from);
  const uint8_t *p = payload;
  int s = len > 0 ? p[0] : -1;
  if (origin.id < 0 || origin.id >= units || s < 0 || s >= nthreads) {
    if (bad_messages++ < 5)
      FAILF("message from %d of %zu bytes, thread %d", (int)origin.id, len, s);
    return;
  }
  from_t *f = &from[origin.id];
  uint64_t k = f->next[s]++;
  uint64_t r = seed((int)origin.id, me, s, k);
  size_t want = msg_len(r);
  size_t bad = len == want ? len : 0;
  for (size_t i = 1; i < len && bad == len && len == want; i++)
    if (p[i] != msg_byte(r, i)) bad = i;
  if (len != want || bad != len) {
    if (bad_messages++ < 5)
      FAILF("message %llu of thread %d from unit %d: %zu bytes (want %zu), "
            "first wrong byte %zu", (unsigned long long)k, s, (int)origin.id,
            len, want, bad);
  }
  f->got++;
}

/* replies: 8 bytes of length, then the payload's first bytes reversed */
static size_t echo_len(size_t len)
{
  return 8 + (len < MAX_REPLY - 8 ? len : MAX_REPLY - 8);
}

static void echo_handler(dart_team_unit_t origin, const void *payload,
                         size_t len, void *reply, size_t *reply_len,
                         void *context)
{
  (void)origin;
  (void)context;
  uint64_t l = len;
  size_t n = echo_len(len) - 8;
  memcpy(reply, &l, 8);
  for (size_t i = 0; i < n; i++)
    ((uint8_t *)reply)[8 + i] = ((const uint8_t *)payload)[n - 1 - i];
  *reply_len = 8 + n;
}

static void check_echo(int line, const uint8_t *payload, size_t len,
                       const uint8_t *reply, size_t reply_len)
{
  uint64_t l;
  size_t n = echo_len(len) - 8;
  memcpy(&l, reply, 8);
  bool ok = reply_len == n + 8 && l == len;
  for (size_t i = 0; i < n && ok; i++) ok = reply[8 + i] == payload[n - 1 - i];
  if (!ok)
    FAIL_AT(line, "reply of %zu bytes to a call of %zu bytes is wrong",
            reply_len, len);
}

static void add_handler(dart_team_unit_t origin, const void *payload,
                        size_t len, void *reply, size_t *reply_len,
                        void *context)
{
  (void)origin;
  (void)reply;
  (void)reply_len;
  uint64_t v;
  CHECK_EQ(len, sizeof v);
  memcpy(&v, payload, sizeof v);
  *(uint64_t *)context += v;
}

/* replies one byte more than it may */
static void greedy_handler(dart_team_unit_t origin, const void *payload,
                           size_t len, void *reply, size_t *reply_len,
                           void *context)
{
  (void)origin;
  (void)payload;
  (void)len;
  (void)context;
  memset(reply, 1, 16);
  *reply_len = 17;
}

static void other_handler(dart_team_unit_t origin, const void *payload,
                          size_t len, void *reply, size_t *reply_len,
                          void *context)
{
  (void)payload;
  (void)len;
  int v = (int)origin.id * 1000 + *(int *)context;
  memcpy(reply, &v, sizeof v);
  *reply_len = sizeof v;
}

static dart_am_id_t check_id, echo_id;

/* ---- the traffic ---- */

typedef struct {
  int s;
  uint64_t *sent; /* to each unit, messages of this thread */
} traffic_t;

static void *traffic(void *arg)
{
  traffic_t *tr = arg;
  int s = tr->s;
  uint8_t *buf = malloc(1u << 20);
  uint8_t *call_payload = malloc(OUTSTANDING * 512);
  uint8_t *replies = malloc(OUTSTANDING * MAX_REPLY);
  size_t lens[OUTSTANDING], reply_lens[OUTSTANDING];
  dart_handle_t handles[OUTSTANDING];
  bool pending[OUTSTANDING] = {false};
  int slot = 0;
  for (long i = 0; i < nmessages; i++) {
    uint64_t pick = dart_test_mix64(((uint64_t)me << 40) ^ ((uint64_t)s << 32) ^
                                    (uint64_t)i);
    dart_team_unit_t t = {(int32_t)(pick % (uint64_t)units)};
    if (i % 16 == 15) { /* a call, waited for OUTSTANDING calls later */
      uint8_t *cp = call_payload + slot * 512, *rp = replies + slot * MAX_REPLY;
      if (pending[slot]) {
        CHECK_OK(dart_wait(&handles[slot]));
        check_echo(__LINE__, cp, lens[slot], rp, reply_lens[slot]);
      }
      lens[slot] = 1 + (pick >> 20) % 500;
      for (size_t b = 0; b < lens[slot]; b++)
        cp[b] = (uint8_t)((pick >> (b % 8)) ^ b);
      reply_lens[slot] = 0;
      CHECK_OK(dart_am_call(DART_TEAM_ALL, t, echo_id, cp, lens[slot], rp,
                            MAX_REPLY, &reply_lens[slot], &handles[slot]));
      pending[slot] = handles[slot] != DART_HANDLE_NULL;
      if (!pending[slot]) /* ran at once (itself) */
        check_echo(__LINE__, cp, lens[slot], rp, reply_lens[slot]);
      slot = (slot + 1) % OUTSTANDING;
      continue;
    }
    uint64_t k = tr->sent[t.id]++;
    uint64_t r = seed(me, (int)t.id, s, k);
    size_t len = msg_len(r);
    fill(buf, r, len, s);
    CHECK_OK(dart_am_send(DART_TEAM_ALL, t, check_id, buf, len));
    memset(buf, 0xEE, len); /* the payload may be reused on return */
  }
  for (int i = 0; i < OUTSTANDING; i++) {
    if (!pending[i]) continue;
    /* dart_test until it says done */
    int32_t done = 0;
    while (!done) CHECK_OK(dart_test(&handles[i], &done));
    CHECK(handles[i] == DART_HANDLE_NULL);
    check_echo(__LINE__, call_payload + i * 512, lens[i],
               replies + i * MAX_REPLY, reply_lens[i]);
  }
  free(buf);
  free(call_payload);
  free(replies);
  return NULL;
}

static void test_traffic(void)
{
  from = calloc((size_t)units, sizeof *from);
  CHECK_OK(dart_am_register(DART_TEAM_ALL, check_handler, &from, 0,
                            &check_id));
  CHECK_OK(dart_am_register(DART_TEAM_ALL, echo_handler, NULL, MAX_REPLY,
                            &echo_id));
  CHECK(check_id != echo_id);
  traffic_t tr[MAX_THREADS];
  pthread_t threads[MAX_THREADS];
  for (int s = 0; s < nthreads; s++) {
    tr[s].s = s;
    tr[s].sent = calloc((size_t)units, sizeof(uint64_t));
    if (s > 0) CHECK(pthread_create(&threads[s], NULL, traffic, &tr[s]) == 0);
  }
  traffic(&tr[0]);
  for (int s = 1; s < nthreads; s++) pthread_join(threads[s], NULL);
  CHECK_OK(dart_am_flush(DART_TEAM_ALL));
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  /* what each origin sent me, per thread */
  uint64_t *sent = calloc((size_t)(units * MAX_THREADS), sizeof *sent);
  uint64_t *got = calloc((size_t)(units * MAX_THREADS), sizeof *got);
  for (int u = 0; u < units; u++)
    for (int s = 0; s < nthreads; s++)
      sent[u * MAX_THREADS + s] = tr[s].sent[u];
  CHECK_OK(dart_alltoall(sent, got, MAX_THREADS, DART_TYPE_ULONGLONG,
                         DART_TEAM_ALL));
  uint64_t total = 0;
  for (int o = 0; o < units; o++) {
    uint64_t want = 0;
    for (int s = 0; s < nthreads; s++) {
      CHECK_EQ(from[o].next[s], got[o * MAX_THREADS + s]);
      want += got[o * MAX_THREADS + s];
    }
    CHECK_EQ(from[o].got, want);
    total += from[o].got;
  }
  CHECK_EQ(bad_messages, 0);
  if (me == 0)
    printf("traffic: %d threads, %ld operations each, unit 0 ran %llu "
           "messages\n", nthreads, nmessages, (unsigned long long)total);
  for (int s = 0; s < nthreads; s++) free(tr[s].sent);
  free(sent);
  free(got);
}

/* A flush: messages to the next unit have run once it returns, as a get
 * of what they wrote sees. */
static void test_flush(void)
{
  dart_gptr_t g;
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 1, DART_TYPE_ULONGLONG,
                                      &g));
  uint64_t *mine;
  dart_gptr_t at = g;
  CHECK_OK(dart_gptr_setunit(&at, (dart_team_unit_t){me}));
  CHECK_OK(dart_gptr_getaddr(at, (void **)&mine));
  *mine = 0;
  dart_am_id_t add;
  CHECK_OK(dart_am_register(DART_TEAM_ALL, add_handler, mine, 0, &add));
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  dart_team_unit_t next = {(me + 1) % units};
  for (int round = 1; round <= 3; round++) {
    for (uint64_t i = 1; i <= 100; i++)
      CHECK_OK(dart_am_send(DART_TEAM_ALL, next, add, &i, sizeof i));
    CHECK_OK(dart_am_flush(DART_TEAM_ALL));
    uint64_t seen = 0;
    CHECK_OK(dart_gptr_setunit(&at, next));
    CHECK_OK(dart_get_blocking(&seen, at, 1, DART_TYPE_ULONGLONG,
                               DART_TYPE_ULONGLONG));
    CHECK_EQ(seen, 5050 * (uint64_t)round);
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_OK(dart_am_deregister(DART_TEAM_ALL, add));
  CHECK_OK(dart_team_memfree(g));
}

/* replies nothing */
static void empty_handler(dart_team_unit_t origin, const void *payload,
                          size_t len, void *reply, size_t *reply_len,
                          void *context)
{
  (void)origin;
  (void)payload;
  (void)len;
  (void)reply;
  (void)context;
  *reply_len = 0;
}

/* Many calls in flight at once, to random units, with payloads of 0 to
 * 299 bytes (every seventh of 0 bytes, every eleventh with a reply of 0
 * bytes): their requests, and the replies to them, share wire messages
 * (twosided.c coalesces them), and credits run out, so messages of 0
 * bytes wait for room too; every reply checked, in any wait order. */
#define WINDOW 1000
static void test_window(void)
{
  dart_am_id_t empty;
  CHECK_OK(dart_am_register(DART_TEAM_ALL, empty_handler, NULL, 0, &empty));
  dart_handle_t *h = malloc(WINDOW * sizeof *h);
  uint8_t *payloads = malloc(WINDOW * 300);
  uint8_t *replies = malloc(WINDOW * MAX_REPLY);
  size_t *lens = malloc(WINDOW * sizeof *lens);
  size_t *reply_lens = malloc(WINDOW * sizeof *reply_lens);
  CHECK(h != NULL && payloads != NULL && replies != NULL && lens != NULL &&
        reply_lens != NULL);
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < WINDOW; i++) {
      uint64_t pick = dart_test_mix64(((uint64_t)me << 40) ^
                                      ((uint64_t)round << 32) ^ (uint64_t)i);
      dart_team_unit_t t = {(int32_t)(pick % (uint64_t)units)};
      uint8_t *cp = payloads + i * 300;
      lens[i] = i % 7 == 0 ? 0 : (pick >> 16) % 300;
      for (size_t b = 0; b < lens[i]; b++)
        cp[b] = (uint8_t)((pick >> (b % 8)) ^ b);
      reply_lens[i] = 1;
      CHECK_OK(dart_am_call(DART_TEAM_ALL, t, i % 11 ? echo_id : empty,
                            lens[i] ? cp : NULL,
                            lens[i], replies + i * MAX_REPLY, MAX_REPLY,
                            &reply_lens[i], &h[i]));
    }
    /* the last ones first in odd rounds */
    for (int j = 0; j < WINDOW; j++) {
      int i = round % 2 ? WINDOW - 1 - j : j;
      CHECK_OK(dart_wait(&h[i]));
      if (i % 11 == 0) CHECK_EQ(reply_lens[i], 0);
      else check_echo(__LINE__, payloads + i * 300, lens[i],
                      replies + i * MAX_REPLY, reply_lens[i]);
    }
  }
  CHECK_OK(dart_am_deregister(DART_TEAM_ALL, empty));
  free(h);
  free(payloads);
  free(replies);
  free(lens);
  free(reply_lens);
}

/* ---- sizes at the fragments' and rendezvous' edges ---- */

/* a fragment carries 8 KiB less its header with the default DART_AM_QUEUE;
 * UCX's rendezvous starts at 256 KiB, MPI's past one fragment */
static const size_t edge_sizes[] = {8160, 8161, 16320, 262143, 262144,
                                    (4u << 20) + 3};
#define EDGES (sizeof edge_sizes / sizeof edge_sizes[0])
#define LARGE_REPLY (300u << 10)

static uint8_t edge_byte(int origin, size_t len, size_t i)
{
  return (uint8_t)(origin * 31 + len * 7 + i * 13 + (i >> 9));
}

typedef struct {
  long got, bad;
} edges_t;

static void edge_handler(dart_team_unit_t origin, const void *payload,
                         size_t len, void *reply, size_t *reply_len,
                         void *context)
{
  edges_t *e = context;
  const uint8_t *p = payload;
  size_t bad = len;
  for (size_t i = 0; i < len && bad == len; i++)
    if (p[i] != edge_byte((int)origin.id, len, i)) bad = i;
  if (bad != len && e->bad++ < 5)
    FAILF("a message of %zu bytes from unit %d: byte %zu is wrong", len,
          (int)origin.id, bad);
  e->got++;
  /* the reply (a send's is dropped): the same pattern, from this unit */
  size_t n = len < LARGE_REPLY ? len : LARGE_REPLY;
  for (size_t i = 0; i < n; i++) ((uint8_t *)reply)[i] = edge_byte(me, n, i);
  *reply_len = n;
}

/* Every unit sends every other unit (and itself) a message of each size,
 * then calls it with each size, whose reply (up to 300 KiB) comes back in
 * the same ways; every byte checked, the counts too. */
static void test_edges(void)
{
  edges_t e = {0, 0};
  dart_am_id_t id;
  CHECK_OK(dart_am_register(DART_TEAM_ALL, edge_handler, &e, LARGE_REPLY,
                            &id));
  size_t max = edge_sizes[EDGES - 1];
  uint8_t *buf = malloc(max), *reply = malloc(LARGE_REPLY);
  CHECK(buf != NULL && reply != NULL);
  for (size_t k = 0; k < EDGES; k++) {
    size_t len = edge_sizes[k];
    for (size_t i = 0; i < len; i++) buf[i] = edge_byte(me, len, i);
    for (int u = 0; u < units; u++)
      CHECK_OK(dart_am_send(DART_TEAM_ALL, (dart_team_unit_t){u}, id, buf,
                            len));
  }
  for (size_t k = 0; k < EDGES; k++) {
    size_t len = edge_sizes[k];
    for (size_t i = 0; i < len; i++) buf[i] = edge_byte(me, len, i);
    for (int u = 0; u < units; u++) {
      dart_handle_t h;
      size_t got = 0;
      memset(reply, 0, LARGE_REPLY);
      CHECK_OK(dart_am_call(DART_TEAM_ALL, (dart_team_unit_t){u}, id, buf,
                            len, reply, LARGE_REPLY, &got, &h));
      CHECK_OK(dart_wait(&h));
      size_t n = len < LARGE_REPLY ? len : LARGE_REPLY, bad = n;
      for (size_t i = 0; i < n && bad == n; i++)
        if (reply[i] != edge_byte(u, n, i)) bad = i;
      CHECK_EQ(got, n);
      if (bad != n)
        FAILF("reply of %zu bytes from unit %d: byte %zu is wrong", n, u,
              bad);
    }
  }
  CHECK_OK(dart_am_flush(DART_TEAM_ALL));
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_EQ(e.got, (long)(2 * EDGES) * units);
  CHECK_EQ(e.bad, 0);
  CHECK_OK(dart_am_deregister(DART_TEAM_ALL, id));
  free(buf);
  free(reply);
}

/* Owner-applied atomics chosen per allocation: accumulates from every
 * unit to every word, fetch-and-op and compare-and-swap increments on one
 * word, exact totals; the atomics' paths. */
static void test_owner_atomics(void)
{
  dart_gptr_t g, plain;
  CHECK_OK(dart_team_memalloc_atomics(DART_TEAM_ALL, 2, DART_TYPE_LONG,
                                      DART_AM_ATOMICS_OWNER, &g));
  CHECK_OK(dart_team_memalloc_atomics(DART_TEAM_ALL, 1, DART_TYPE_LONG,
                                      DART_AM_ATOMICS_TRANSPORT, &plain));
  dart_gptr_t at = g;
  long *mine;
  CHECK_OK(dart_gptr_setunit(&at, (dart_team_unit_t){me}));
  CHECK_OK(dart_gptr_getaddr(at, (void **)&mine));
  mine[0] = mine[1] = 0;
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  dart_path_t remote, peer_private;
  CHECK_OK(dart_transport_paths(&remote, &peer_private));
  const long rounds = 200, one = 1;
  for (int u = 0; u < units; u++) {
    dart_gptr_t gu = g, pu = plain;
    CHECK_OK(dart_gptr_setunit(&gu, (dart_team_unit_t){u}));
    CHECK_OK(dart_gptr_setunit(&pu, (dart_team_unit_t){u}));
    dart_path_t data, atomics, plain_atomics;
    CHECK_OK(dart_gptr_path(gu, &data));
    CHECK_OK(dart_gptr_atomic_path(gu, &atomics));
    CHECK_OK(dart_gptr_atomic_path(pu, &plain_atomics));
    bool cpu = data == DART_PATH_SELF || data == DART_PATH_SHM;
    if (cpu)
      CHECK(atomics == DART_PATH_SELF || atomics == DART_PATH_SHM);
    else
      CHECK_EQ(atomics, DART_PATH_OWNER);
    CHECK(plain_atomics != DART_PATH_OWNER);
  }
  dart_gptr_t word0 = g; /* unit 0's first word: every kind of update */
  CHECK_OK(dart_gptr_setunit(&word0, (dart_team_unit_t){0}));
  for (long r = 0; r < rounds; r++) {
    for (int u = 0; u < units; u++) { /* everyone's second word */
      dart_gptr_t gu = g;
      CHECK_OK(dart_gptr_setunit(&gu, (dart_team_unit_t){u}));
      CHECK_OK(dart_gptr_incaddr(&gu, sizeof(long)));
      CHECK_OK(dart_accumulate(gu, &one, 1, DART_TYPE_LONG, DART_OP_SUM));
    }
    CHECK_OK(dart_accumulate(word0, &one, 1, DART_TYPE_LONG, DART_OP_SUM));
    long old, seen, next;
    CHECK_OK(dart_fetch_and_op(word0, &one, &old, DART_TYPE_LONG,
                               DART_OP_SUM));
    for (old++;; old = seen) {
      next = old + 1;
      CHECK_OK(dart_compare_and_swap(word0, &next, &old, &seen,
                                     DART_TYPE_LONG));
      if (seen == old) break;
    }
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL)); /* completes the accumulates */
  CHECK_EQ(mine[1], rounds * units);
  long total;
  CHECK_OK(dart_fetch_and_op(word0, NULL, &total, DART_TYPE_LONG,
                             DART_OP_NO_OP));
  CHECK_EQ(total, 3 * rounds * units);
  /* a flush of one unit completes what went there */
  dart_gptr_t next_word = g;
  CHECK_OK(dart_gptr_setunit(&next_word, (dart_team_unit_t){(me + 1) % units}));
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  for (long r = 0; r < rounds; r++)
    CHECK_OK(dart_accumulate(next_word, &one, 1, DART_TYPE_LONG,
                             DART_OP_SUM));
  CHECK_OK(dart_flush(next_word));
  long seen_now;
  CHECK_OK(dart_fetch_and_op(next_word, NULL, &seen_now, DART_TYPE_LONG,
                             DART_OP_NO_OP));
  CHECK(seen_now >= rounds); /* others may have added theirs already */
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_EQ(mine[0], me == 0 ? 3 * rounds * units + rounds : rounds);
  INVAL("dart_team_memalloc_atomics",
        dart_team_memalloc_atomics(DART_TEAM_ALL, 1, DART_TYPE_LONG,
                                   (dart_am_atomics_t)7, &at));
  CHECK_OK(dart_team_memfree(plain));
  CHECK_OK(dart_team_memfree(g));
}

static void test_bad(void)
{
  char text[1024];
  dart_team_unit_t next = {(me + 1) % units};
  uint8_t payload[8] = {0};
  uint8_t reply[MAX_REPLY];
  size_t reply_len = 12345;
  dart_handle_t h;

  INVAL("dart_am_register",
        dart_am_register(DART_TEAM_ALL, NULL, NULL, 0, &check_id));
  INVAL("dart_am_register",
        dart_am_register(DART_TEAM_ALL, echo_handler, NULL, 0, NULL));
  INVAL("dart_am_register",
        dart_am_register(4321, echo_handler, NULL, 0, &check_id));
  /* ids: of no handler, not registered, of another team */
  INVAL("dart_am_send", dart_am_send(DART_TEAM_ALL, next, -5, payload, 1));
  INVAL("dart_am_send", dart_am_send(DART_TEAM_ALL, next, 0x7fff, payload, 1));
  INVAL("dart_am_send",
        dart_am_send(DART_TEAM_ALL, next, echo_id + 40, payload, 1));
  INVAL("dart_am_call",
        dart_am_call(DART_TEAM_ALL, next, echo_id + 40, payload, 1, reply,
                     MAX_REPLY, &reply_len, &h));
  CHECK(h == DART_HANDLE_NULL);
  dart_group_t group;
  dart_team_t team;
  CHECK_OK(dart_team_get_group(DART_TEAM_ALL, &group));
  CHECK_OK(dart_team_create(DART_TEAM_ALL, group, &team));
  CHECK_OK(dart_group_destroy(&group));
  int tag = 7;
  dart_am_id_t other;
  CHECK_OK(dart_am_register(team, other_handler, &tag, sizeof(int), &other));
  INVAL("dart_am_send", dart_am_send(DART_TEAM_ALL, next, other, payload, 1));
  INVAL("dart_am_send", dart_am_send(team, next, echo_id, payload, 1));
  /* the other team's handler works there */
  dart_team_unit_t tme;
  CHECK_OK(dart_team_myid(team, &tme));
  int answer = 0;
  CHECK_OK(dart_am_call(team, (dart_team_unit_t){(tme.id + 1) % units}, other,
                        NULL, 0, &answer, sizeof answer, &reply_len, &h));
  CHECK_OK(dart_wait(&h));
  CHECK_EQ(answer, tme.id * 1000 + 7);
  CHECK_EQ(reply_len, sizeof answer);
  /* payload, target, reply */
  INVAL("dart_am_send", dart_am_send(DART_TEAM_ALL, next, echo_id, NULL, 3));
  INVAL("dart_am_send",
        dart_am_send(DART_TEAM_ALL, (dart_team_unit_t){units}, echo_id,
                     payload, 1));
  INVAL("dart_am_send",
        dart_am_send(DART_TEAM_ALL, (dart_team_unit_t){-1}, echo_id, payload,
                     1));
  INVAL("dart_am_send", dart_am_send(4321, next, echo_id, payload, 1));
  memset(reply, 0x5A, sizeof reply);
  reply_len = 12345;
  INVAL("dart_am_call",
        dart_am_call(DART_TEAM_ALL, next, echo_id, payload, 8, reply,
                     MAX_REPLY - 1, &reply_len, &h));
  bool untouched = reply_len == 12345;
  for (size_t i = 0; i < sizeof reply; i++) untouched &= reply[i] == 0x5A;
  CHECK(untouched);
  INVAL("dart_am_call",
        dart_am_call(DART_TEAM_ALL, next, echo_id, payload, 8, reply,
                     MAX_REPLY, NULL, &h));
  INVAL("dart_am_call",
        dart_am_call(DART_TEAM_ALL, next, echo_id, payload, 8, NULL,
                     MAX_REPLY, &reply_len, &h));
  INVAL("dart_am_call",
        dart_am_call(DART_TEAM_ALL, next, echo_id, payload, 8, reply,
                     MAX_REPLY, &reply_len, NULL));
  INVAL("dart_am_flush", dart_am_flush(4321));
  /* a handler that replies more than its max_reply: the call fails, the
   * reply is not overrun */
  dart_am_id_t greedy;
  CHECK_OK(dart_am_register(DART_TEAM_ALL, greedy_handler, NULL, 16,
                            &greedy));
  memset(reply, 0x5A, sizeof reply);
  capture_begin();
  dart_ret_t ret = dart_am_call(DART_TEAM_ALL, next, greedy, NULL, 0, reply,
                                16, &reply_len, &h);
  if (ret == DART_OK) ret = dart_wait(&h);
  capture_end(text, sizeof text);
  CHECK_EQ(ret, DART_ERR_OTHER);
  CHECK(reply[16] == 0x5A);
  CHECK_OK(dart_am_flush(DART_TEAM_ALL));
  capture_begin();
  CHECK_OK(dart_barrier(DART_TEAM_ALL)); /* the targets' log lines */
  capture_end(text, sizeof text);
  /* deregistered: refused; deregistering again too */
  CHECK_OK(dart_am_deregister(DART_TEAM_ALL, greedy));
  INVAL("dart_am_send", dart_am_send(DART_TEAM_ALL, next, greedy, NULL, 0));
  INVAL("dart_am_deregister", dart_am_deregister(DART_TEAM_ALL, greedy));
  /* registrations in another order on some units: refused everywhere,
   * nothing registered; the next one in step works */
  if (units > 1) {
    dart_am_id_t a;
    capture_begin();
    ret = dart_am_register(DART_TEAM_ALL,
                           me % 2 ? add_handler : greedy_handler, NULL, 16,
                           &a);
    capture_check_bad(__LINE__, "register out of order", "dart_am_register",
                      ret, DART_ERR_INVAL);
    capture_begin();
    ret = dart_am_register(DART_TEAM_ALL, echo_handler, NULL,
                           me == 0 ? MAX_REPLY : 2 * MAX_REPLY, &a);
    capture_check_bad(__LINE__, "register another max_reply",
                      "dart_am_register", ret, DART_ERR_INVAL);
  }
  dart_am_id_t again;
  CHECK_OK(dart_am_register(DART_TEAM_ALL, echo_handler, NULL, MAX_REPLY,
                            &again));
  CHECK_OK(dart_am_call(DART_TEAM_ALL, next, again, payload, 8, reply,
                        MAX_REPLY, &reply_len, &h));
  CHECK_OK(dart_wait(&h));
  check_echo(__LINE__, payload, 8, reply, reply_len);
  CHECK_OK(dart_am_deregister(DART_TEAM_ALL, again));
  /* a team's end takes its handlers */
  CHECK_OK(dart_am_flush(team));
  CHECK_OK(dart_team_destroy(&team));
  INVAL("dart_am_send", dart_am_send(team, next, other, payload, 1));
}

int main(int argc, char **argv)
{
  for (int i = 1; i + 1 < argc; i++) {
    if (strcmp(argv[i], "--messages") == 0) nmessages = atol(argv[i + 1]);
    if (strcmp(argv[i], "--threads") == 0) nthreads = atoi(argv[i + 1]);
  }
  if (nthreads < 1 || nthreads > MAX_THREADS) nthreads = 1;
  if (nthreads > 1) {
    dart_thread_support_level_t level = DART_THREAD_MULTIPLE;
    if (dart_init_thread(&argc, &argv, &level) != DART_OK) return 1;
    dart_global_unit_t id;
    size_t size;
    dart_myid(&id);
    dart_size(&size);
    dart_test_unit = id.id;
    dart_test_units = (int)size;
    if (level != DART_THREAD_MULTIPLE) {
      if (id.id == 0) printf("SKIPPED: no DART_THREAD_MULTIPLE\n");
      dart_exit();
      return DART_TEST_SKIP;
    }
  } else {
    dart_test_init(&argc, &argv);
  }
  me = dart_test_unit;
  units = dart_test_units;
  capture_init();
  test_traffic();
  test_flush();
  test_window();
  test_edges();
  test_owner_atomics();
  test_bad();
  capture_fini();
  free(from);
  return dart_test_finish();
}
