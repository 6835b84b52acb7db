/*
 * A distributed hash map on global memory, in two versions (examples/
 * hashmap.c tests them, bench/hashmap.c measures them):
 *
 * Atomics: a table of fixed capacity (open addressing, linear probing) is
 * spread over all units; any unit inserts and finds any key, with no locks
 * and no help from the owner of the slot. A slot is three 64-bit words
 * {state, key, value}. An insert claims an EMPTY slot by compare-and-swap
 * to BUSY, writes key and value with a plain put, and publishes them by
 * setting the state FULL atomically. A find reads the state atomically
 * and reads key and value only when it is FULL. The key is written once,
 * before FULL, so a plain get reads it; the value may be replaced later by
 * another insert of the same key, so it is read and replaced with atomics
 * only (DART's rule: words that change concurrently are accessed with
 * atomics; plain put/get are not atomic with respect to them). An insert
 * costs three round trips or more, a find two or more.
 *
 * Active messages (dart_am.h): each key lives on the unit its hash names,
 * probing within that unit's part; an insert or a find is one call to
 * that unit, whose handler works on its own memory with plain loads and
 * stores (a team's handlers run one at a time). Many operations at once
 * (hm_insert_all, hm_find_all) go either as that many calls in flight
 * (HM_CALLS) or grouped by owner, HM_BATCH operations in one call
 * (HM_BATCHES), as HPCC's RandomAccess buckets its updates.
 */
#ifndef DART_EXAMPLES_HASHMAP_H_
#define DART_EXAMPLES_HASHMAP_H_

#include <dart/dart.h>
#include <dart/dart_am.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "example.h"

#define U64 DART_TYPE_ULONGLONG

enum { EMPTY = 0, BUSY = 1, FULL = 2 };  /* slot states */
enum { STATE, KEY, VALUE, WORDS };       /* the words of a slot */
typedef enum { INSERTED, REPLACED, TABLE_FULL } insert_result_t;
/* the versions: atomics; active messages, many operations at once as
 * calls in flight or in batches per owner */
typedef enum { HM_ATOMICS, HM_CALLS, HM_BATCHES } hm_version_t;

typedef struct {
  dart_gptr_t slots;  /* unit 0, offset 0 */
  uint64_t per_unit;  /* slots on each unit */
  uint64_t total;     /* per_unit * units */
  uint64_t *local;    /* my part */
  hm_version_t version;
  dart_am_id_t insert_id, find_id; /* one operation a call */
  /* HM_BATCHES: the same handlers, HM_BATCH operations a call */
  dart_am_id_t insert_batch_id, find_batch_id;
} hashmap_t;

/* Word w of global slot s: unit s / per_unit holds it. */
static inline dart_gptr_t word(const hashmap_t *m, uint64_t s, int w)
{
  dart_gptr_t g = m->slots;
  g.unitid = (dart_unit_t)(s / m->per_unit);
  g.addr_or_offs.offset = (s % m->per_unit * WORDS + (uint64_t)w) *
                          sizeof(uint64_t);
  return g;
}

/* An atomic read: the word may change while we read it. */
static inline uint64_t load(dart_gptr_t g)
{
  uint64_t v;
  TRY(dart_fetch_and_op(g, NULL, &v, U64, DART_OP_NO_OP));
  return v;
}

/* An atomic write. DART (as DART-MPI) completes dart_accumulate at the
 * flush; ours on return already, so the flush is cheap but keeps the
 * code portable. */
static inline void store(dart_gptr_t g, uint64_t v)
{
  TRY(dart_accumulate(g, &v, 1, U64, DART_OP_REPLACE));
  TRY(dart_flush(g));
}

/* Insert key, or replace its value if it is there already (atomics). */
static inline insert_result_t hm_insert_atomics(const hashmap_t *m,
                                                uint64_t key, uint64_t value)
{
  uint64_t h = example_hash(key) % m->total;
  for (uint64_t i = 0; i < m->total; i++) {
    uint64_t s = (h + i) % m->total; /* wraps over units */
    uint64_t empty = EMPTY, busy = BUSY, state;
    TRY(dart_compare_and_swap(word(m, s, STATE), &busy, &empty, &state, U64));
    if (state == EMPTY) {
      /* The slot is ours and nobody reads key or value before FULL: a
       * plain put. It is complete at the target on return (else a
       * dart_flush would be needed here), so FULL cannot overtake it. */
      uint64_t kv[2] = {key, value};
      TRY(dart_put_blocking(word(m, s, KEY), kv, 2, U64, U64));
      store(word(m, s, STATE), FULL);
      return INSERTED;
    }
    /* Another insert is writing this slot, maybe of our key: wait for it,
     * so that a key never ends up in two slots. */
    while (state == BUSY) {
      sched_yield(); /* oversubscribed cores: let the writer run */
      state = load(word(m, s, STATE));
    }
    uint64_t k; /* FULL, read atomically above: the key is complete */
    TRY(dart_get_blocking(&k, word(m, s, KEY), 1, U64, U64));
    if (k == key) {
      store(word(m, s, VALUE), value); /* finds may be reading it */
      return REPLACED;
    }
  }
  return TABLE_FULL;
}

/* 1 and *value if key is in the map, else 0. Never waits (atomics). */
static inline int hm_find_atomics(const hashmap_t *m, uint64_t key,
                                  uint64_t *value)
{
  uint64_t h = example_hash(key) % m->total;
  for (uint64_t i = 0; i < m->total; i++) {
    uint64_t s = (h + i) % m->total;
    uint64_t state = load(word(m, s, STATE));
    /* an insert of key would have taken this slot or an earlier one */
    if (state == EMPTY) return 0;
    /* an insert still writing: not in the map yet, and as a key is in
     * one slot at most, it cannot be in a later one either */
    if (state == BUSY) continue;
    uint64_t k;
    TRY(dart_get_blocking(&k, word(m, s, KEY), 1, U64, U64));
    if (k == key) {
      *value = load(word(m, s, VALUE));
      return 1;
    }
  }
  return 0;
}

/* ---- the active-message version: the owner's handlers ---- */

/* Where key lives: its unit, and the slot its probing starts at there. */
static inline int hm_owner(const hashmap_t *m, uint64_t key, uint64_t *start)
{
  uint64_t h = example_hash(key) % m->total;
  *start = h % m->per_unit;
  return (int)(h / m->per_unit);
}

/* At the owner: key's slot in its part, or the empty slot where it would
 * go; NULL where the part is full. */
static inline uint64_t *hm_probe(const hashmap_t *m, uint64_t key)
{
  uint64_t start;
  hm_owner(m, key, &start);
  for (uint64_t i = 0; i < m->per_unit; i++) {
    uint64_t *slot = m->local + (start + i) % m->per_unit * WORDS;
    if (slot[STATE] == EMPTY || slot[KEY] == key) return slot;
  }
  return NULL;
}

/* At the owner: inserts key with value, or replaces its value. */
static inline insert_result_t hm_insert_here(const hashmap_t *m, uint64_t key,
                                             uint64_t value)
{
  uint64_t *slot = hm_probe(m, key);
  if (slot == NULL) return TABLE_FULL;
  insert_result_t result = slot[STATE] == EMPTY ? INSERTED : REPLACED;
  slot[STATE] = FULL;
  slot[KEY] = key;
  slot[VALUE] = value;
  return result;
}

/* At the owner: found[0] 1 and found[1] key's value if key is there, else
 * found[0] 0. */
static inline void hm_find_here(const hashmap_t *m, uint64_t key,
                                uint64_t found[2])
{
  const uint64_t *slot = hm_probe(m, key);
  found[0] = slot != NULL && slot[STATE] == FULL;
  found[1] = found[0] ? slot[VALUE] : 0;
}

/* At the owner: payload {key, value} each, as many as it holds; replies
 * an insert_result_t each, in order. */
static inline void hm_insert_handler(dart_team_unit_t origin,
                                     const void *payload, size_t len,
                                     void *reply, size_t *reply_len,
                                     void *context)
{
  (void)origin;
  size_t count = len / (2 * sizeof(uint64_t));
  for (size_t i = 0; i < count; i++) {
    uint64_t kv[2], result;
    memcpy(kv, (const uint64_t *)payload + 2 * i, sizeof kv);
    result = hm_insert_here(context, kv[0], kv[1]);
    memcpy((uint64_t *)reply + i, &result, sizeof result);
  }
  *reply_len = count * sizeof(uint64_t);
}

/* At the owner: payload keys; replies {found, value} each, in order. */
static inline void hm_find_handler(dart_team_unit_t origin,
                                   const void *payload, size_t len,
                                   void *reply, size_t *reply_len,
                                   void *context)
{
  (void)origin;
  size_t count = len / sizeof(uint64_t);
  for (size_t i = 0; i < count; i++) {
    uint64_t key, found[2];
    memcpy(&key, (const uint64_t *)payload + i, sizeof key);
    hm_find_here(context, key, found);
    memcpy((uint64_t *)reply + 2 * i, found, sizeof found);
  }
  *reply_len = count * 2 * sizeof(uint64_t);
}

/* ---- both versions ---- */

static inline insert_result_t hm_insert(const hashmap_t *m, uint64_t key,
                                 uint64_t value)
{
  if (m->version == HM_ATOMICS) return hm_insert_atomics(m, key, value);
  uint64_t start, kv[2] = {key, value}, result;
  size_t got;
  dart_handle_t h;
  dart_team_unit_t owner = {hm_owner(m, key, &start)};
  TRY(dart_am_call(DART_TEAM_ALL, owner, m->insert_id, kv, sizeof kv,
                   &result, sizeof result, &got, &h));
  TRY(dart_wait(&h));
  return (insert_result_t)result;
}

static inline int hm_find(const hashmap_t *m, uint64_t key, uint64_t *value)
{
  if (m->version == HM_ATOMICS) return hm_find_atomics(m, key, value);
  uint64_t start, found[2];
  size_t got;
  dart_handle_t h;
  dart_team_unit_t owner = {hm_owner(m, key, &start)};
  TRY(dart_am_call(DART_TEAM_ALL, owner, m->find_id, &key, sizeof key, found,
                   sizeof found, &got, &h));
  TRY(dart_wait(&h));
  *value = found[1];
  return (int)found[0];
}

/* ---- many operations at once ---- */

/* HM_CALLS keeps HM_WINDOW calls in flight, so that a unit pays message
 * rate instead of a round trip per operation. HM_BATCHES groups the
 * operations by owner and sends each owner HM_BATCH at a time in one call
 * (HM_FLIGHTS such calls in flight), so that a unit pays a handler's work
 * per operation and a message per HM_BATCH. Either way a key's operations
 * run in the order given (one owner, calls in order per pair). The atomics
 * version has no such form: each insert waits for its claim, each find
 * for its reads. */
enum { HM_WINDOW = 256, HM_BATCH = 256, HM_FLIGHTS = 8 };

/* Calls id at the owner of each of n keys, with payload {key, values[i]}
 * (or key alone where values is NULL), reply i into replies[i * words]. */
static inline void hm_call_all(const hashmap_t *m, dart_am_id_t id, size_t n,
                               const uint64_t *keys, const uint64_t *values,
                               uint64_t *replies, size_t words)
{
  dart_handle_t h[HM_WINDOW];
  size_t got;
  for (size_t i = 0; i < n + HM_WINDOW; i++) {
    if (i >= HM_WINDOW && i - HM_WINDOW < n)
      TRY(dart_wait(&h[i % HM_WINDOW])); /* the oldest call's slot */
    if (i >= n) continue;
    uint64_t start, kv[2] = {keys[i], values != NULL ? values[i] : 0};
    dart_team_unit_t owner = {hm_owner(m, keys[i], &start)};
    TRY(dart_am_call(DART_TEAM_ALL, owner, id, kv,
                     values != NULL ? sizeof kv : sizeof kv[0],
                     &replies[i * words], words * sizeof(uint64_t), &got,
                     &h[i % HM_WINDOW]));
  }
}

/* A batch in flight: its call, and where its replies go. */
typedef struct {
  dart_handle_t handle;
  size_t count, got;
  size_t at[HM_BATCH]; /* the operations' indices */
  uint64_t reply[2 * HM_BATCH];
} hm_flight_t;

/* hm_batch_all's state. */
typedef struct {
  dart_am_id_t id;
  size_t in, words;     /* words per operation: payload, reply */
  uint64_t *pending;    /* per owner: HM_BATCH operations' payloads */
  size_t *pending_at;   /* per owner: their indices */
  size_t *npending;     /* per owner */
  hm_flight_t *flights; /* HM_FLIGHTS, a ring */
  size_t issued, retired;
} hm_batcher_t;

/* Waits for the oldest batch in flight and puts its replies in place. */
static inline void hm_retire(hm_batcher_t *b, uint64_t *replies)
{
  hm_flight_t *f = &b->flights[b->retired++ % HM_FLIGHTS];
  TRY(dart_wait(&f->handle));
  if (f->got != f->count * b->words * sizeof(uint64_t)) {
    fprintf(stderr, "hashmap: a batch of %zu got %zu bytes of replies\n",
            f->count, f->got);
    dart_abort(1);
  }
  for (size_t j = 0; j < f->count; j++)
    memcpy(&replies[f->at[j] * b->words], &f->reply[j * b->words],
           b->words * sizeof(uint64_t));
}

/* Sends owner's pending operations in one call. */
static inline void hm_send_batch(hm_batcher_t *b, int owner,
                                 uint64_t *replies)
{
  size_t count = b->npending[owner];
  if (count == 0) return;
  if (b->issued - b->retired == HM_FLIGHTS) hm_retire(b, replies);
  hm_flight_t *f = &b->flights[b->issued++ % HM_FLIGHTS];
  f->count = count;
  memcpy(f->at, &b->pending_at[(size_t)owner * HM_BATCH],
         count * sizeof *f->at);
  dart_team_unit_t to = {owner};
  /* the payload is copied out before the call returns */
  TRY(dart_am_call(DART_TEAM_ALL, to, b->id,
                   &b->pending[(size_t)owner * HM_BATCH * b->in],
                   count * b->in * sizeof(uint64_t), f->reply,
                   HM_BATCH * b->words * sizeof(uint64_t), &f->got,
                   &f->handle));
  b->npending[owner] = 0;
}

/* What hm_call_all does, in calls of up to HM_BATCH operations per owner
 * (id: a handler registered for HM_BATCH replies). */
static inline void hm_batch_all(const hashmap_t *m, dart_am_id_t id,
                                size_t n, const uint64_t *keys,
                                const uint64_t *values, uint64_t *replies,
                                size_t words)
{
  size_t units = m->total / m->per_unit;
  hm_batcher_t b = {.id = id, .in = values != NULL ? 2 : 1,
                    .words = words};
  b.pending = malloc(units * HM_BATCH * b.in * sizeof *b.pending);
  b.pending_at = malloc(units * HM_BATCH * sizeof *b.pending_at);
  b.npending = calloc(units, sizeof *b.npending);
  b.flights = malloc(HM_FLIGHTS * sizeof *b.flights);
  if (b.pending == NULL || b.pending_at == NULL || b.npending == NULL ||
      b.flights == NULL) {
    fprintf(stderr, "hashmap: no memory for batches to %zu units\n", units);
    dart_abort(1);
  }
  for (size_t i = 0; i < n; i++) {
    uint64_t start;
    int owner = hm_owner(m, keys[i], &start);
    size_t k = b.npending[owner]++, slot = (size_t)owner * HM_BATCH + k;
    b.pending_at[slot] = i;
    b.pending[slot * b.in] = keys[i];
    if (values != NULL) b.pending[slot * b.in + 1] = values[i];
    if (k + 1 == HM_BATCH) hm_send_batch(&b, owner, replies);
  }
  for (size_t u = 0; u < units; u++) hm_send_batch(&b, (int)u, replies);
  while (b.retired < b.issued) hm_retire(&b, replies);
  free(b.pending);
  free(b.pending_at);
  free(b.npending);
  free(b.flights);
}

/* Inserts keys[i] with values[i], i < n; results[i]: an insert_result_t. */
static inline void hm_insert_all(const hashmap_t *m, size_t n,
                                 const uint64_t *keys, const uint64_t *values,
                                 uint64_t *results)
{
  if (m->version == HM_CALLS)
    hm_call_all(m, m->insert_id, n, keys, values, results, 1);
  else if (m->version == HM_BATCHES)
    hm_batch_all(m, m->insert_batch_id, n, keys, values, results, 1);
  else
    for (size_t i = 0; i < n; i++)
      results[i] = hm_insert_atomics(m, keys[i], values[i]);
}

/* Finds keys[i], i < n: found[2 * i] 1 and found[2 * i + 1] its value if
 * it is in the map, else 0. */
static inline void hm_find_all(const hashmap_t *m, size_t n,
                               const uint64_t *keys, uint64_t *found)
{
  if (m->version == HM_CALLS)
    hm_call_all(m, m->find_id, n, keys, NULL, found, 2);
  else if (m->version == HM_BATCHES)
    hm_batch_all(m, m->find_batch_id, n, keys, NULL, found, 2);
  else
    for (size_t i = 0; i < n; i++)
      found[2 * i] =
          (uint64_t)hm_find_atomics(m, keys[i], &found[2 * i + 1]);
}

/* Collective: an empty table of per_unit slots on every unit. */
static inline void hm_create(hashmap_t *m, uint64_t per_unit,
                             hm_version_t version)
{
  dart_global_unit_t me;
  size_t units;
  TRY(dart_myid(&me));
  TRY(dart_size(&units));
  memset(m, 0, sizeof *m);
  m->per_unit = per_unit;
  m->total = per_unit * units;
  m->version = version;
  TRY(dart_team_memalloc_aligned(DART_TEAM_ALL, per_unit * WORDS, U64,
                                 &m->slots));
  dart_gptr_t mine = m->slots;
  mine.unitid = me.id;
  TRY(dart_gptr_getaddr(mine, (void **)&m->local));
  memset(m->local, 0, per_unit * WORDS * sizeof(uint64_t)); /* all EMPTY */
  /* a call's reply capacity covers its handler's max_reply: the single
   * calls' stays one operation's */
  if (version != HM_ATOMICS) {
    TRY(dart_am_register(DART_TEAM_ALL, hm_insert_handler, m,
                         sizeof(uint64_t), &m->insert_id));
    TRY(dart_am_register(DART_TEAM_ALL, hm_find_handler, m,
                         2 * sizeof(uint64_t), &m->find_id));
  }
  if (version == HM_BATCHES) {
    TRY(dart_am_register(DART_TEAM_ALL, hm_insert_handler, m,
                         HM_BATCH * sizeof(uint64_t), &m->insert_batch_id));
    TRY(dart_am_register(DART_TEAM_ALL, hm_find_handler, m,
                         HM_BATCH * 2 * sizeof(uint64_t), &m->find_batch_id));
  }
  TRY(dart_barrier(DART_TEAM_ALL)); /* orders the stores before any atomic */
}

/* Collective: empties the table again. */
static inline void hm_clear(hashmap_t *m)
{
  TRY(dart_barrier(DART_TEAM_ALL));
  memset(m->local, 0, m->per_unit * WORDS * sizeof(uint64_t));
  TRY(dart_barrier(DART_TEAM_ALL));
}

static inline void hm_destroy(hashmap_t *m)
{
  TRY(dart_barrier(DART_TEAM_ALL));
  if (m->version != HM_ATOMICS) {
    TRY(dart_am_deregister(DART_TEAM_ALL, m->insert_id));
    TRY(dart_am_deregister(DART_TEAM_ALL, m->find_id));
  }
  if (m->version == HM_BATCHES) {
    TRY(dart_am_deregister(DART_TEAM_ALL, m->insert_batch_id));
    TRY(dart_am_deregister(DART_TEAM_ALL, m->find_batch_id));
  }
  TRY(dart_team_memfree(m->slots));
}

#endif
