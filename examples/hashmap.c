/*
 * hashmap: a distributed hash map on global pointers and atomics. A table
 * of fixed capacity (open addressing, linear probing) is spread over all
 * units; any unit inserts and finds any key, with no locks and no help from
 * the owner of the slot.
 *
 * A slot is three 64-bit words {state, key, value}. An insert claims an
 * EMPTY slot by compare-and-swap to BUSY, writes key and value with a
 * plain put, and publishes them by setting the state FULL atomically. A
 * find reads the state atomically and reads key and value only when it is
 * FULL. The key is written once, before FULL, so a plain get reads it; the
 * value may be replaced later by another insert of the same key, so it is
 * read and replaced with atomics only (DART's rule: words that change
 * concurrently are accessed with atomics; plain put/get are not atomic with
 * respect to them).
 *
 *   dartrun -n 4 ./hashmap [-n keys_per_unit] [-s slots_per_unit]
 *
 * Every unit inserts its keys (and some of its neighbour's, at the same
 * time as the neighbour) and finds each right after inserting it, replaces
 * some values, then finds every key and some that were never inserted.
 * Exits 1 on any mismatch.
 */
#define _POSIX_C_SOURCE 200809L
#include <dart/dart.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example.h"

#define U64 DART_TYPE_ULONGLONG

enum { EMPTY = 0, BUSY = 1, FULL = 2 };  /* slot states */
enum { STATE, KEY, VALUE, WORDS };       /* the words of a slot */
typedef enum { INSERTED, REPLACED, TABLE_FULL } insert_result_t;

typedef struct {
  dart_gptr_t slots;  /* unit 0, offset 0 */
  uint64_t per_unit;  /* slots on each unit */
  uint64_t total;     /* per_unit * units */
} hashmap_t;

/* Word w of global slot s: unit s / per_unit holds it. */
static dart_gptr_t word(const hashmap_t *m, uint64_t s, int w)
{
  dart_gptr_t g = m->slots;
  g.unitid = (dart_unit_t)(s / m->per_unit);
  g.addr_or_offs.offset = (s % m->per_unit * WORDS + (uint64_t)w) *
                          sizeof(uint64_t);
  return g;
}

/* An atomic read: the word may change while we read it. */
static uint64_t load(dart_gptr_t g)
{
  uint64_t v;
  TRY(dart_fetch_and_op(g, NULL, &v, U64, DART_OP_NO_OP));
  return v;
}

/* An atomic write. DART (as DART-MPI) completes dart_accumulate at the
 * flush; ours on return already, so the flush is cheap but keeps the
 * code portable. */
static void store(dart_gptr_t g, uint64_t v)
{
  TRY(dart_accumulate(g, &v, 1, U64, DART_OP_REPLACE));
  TRY(dart_flush(g));
}

/* Insert key, or replace its value if it is there already. */
static insert_result_t hm_insert(const hashmap_t *m, uint64_t key,
                                 uint64_t value)
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

/* 1 and *value if key is in the map, else 0. Never waits. */
static int hm_find(const hashmap_t *m, uint64_t key, uint64_t *value)
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

/* The test's values: f(k), plus 1 once its owner has replaced it. */
static uint64_t f(uint64_t key) { return key * UINT64_C(0x9e3779b97f4a7c15); }
static int replaced(uint64_t key) { return key % 3 == 0; }

int main(int argc, char **argv)
{
  TRY(dart_init(&argc, &argv));
  dart_global_unit_t me;
  size_t units;
  TRY(dart_myid(&me));
  TRY(dart_size(&units));
  long n = 1000, slots = 0;
  int opt;
  while ((opt = getopt(argc, argv, "n:s:")) != -1) {
    if (opt == 'n') n = atol(optarg);
    else if (opt == 's') slots = atol(optarg);
    else n = 0;
  }
  if (n < 1 || slots < 0) {
    if (me.id == 0)
      fprintf(stderr,
              "usage: hashmap [-n keys_per_unit] [-s slots_per_unit]\n");
    dart_exit();
    return 2;
  }
  /* default: load factor 0.7, so that many keys collide and probe on */
  hashmap_t m = {.per_unit = slots ? (uint64_t)slots
                                   : (uint64_t)n * 10 / 7 + 1};
  m.total = m.per_unit * units;
  TRY(dart_team_memalloc_aligned(DART_TEAM_ALL, m.per_unit * WORDS, U64,
                                 &m.slots));
  dart_gptr_t mine = m.slots;
  mine.unitid = me.id;
  uint64_t *local;
  TRY(dart_gptr_getaddr(mine, (void **)&local));
  memset(local, 0, m.per_unit * WORDS * sizeof(uint64_t)); /* all EMPTY */
  TRY(dart_barrier(DART_TEAM_ALL)); /* orders the stores before any atomic */

  /* counts[]: inserted, replaced, table full, wrong or missing */
  uint64_t counts[4] = {0, 0, 0, 0}, sums[4];
  uint64_t u = (uint64_t)me.id, nu = (uint64_t)units, keys = (uint64_t)n * nu;
  /* My keys: u + 1 + units * i, i < n (together: 1 .. keys). Every fourth
   * also comes from the unit before me, about when I insert it: races of
   * two inserts of one key (same value). */
  for (uint64_t i = 0; i < (uint64_t)n; i++) {
    uint64_t k = u + 1 + nu * i;
    counts[hm_insert(&m, k, f(k))]++;
    /* my insert is complete: a find, among the others' inserts, sees it */
    uint64_t v;
    if (!hm_find(&m, k, &v) || v != f(k)) counts[3]++;
    if (i % 4 == 0) {
      uint64_t theirs = (u + 1) % nu + 1 + nu * i; /* the next unit's key */
      counts[hm_insert(&m, theirs, f(theirs))]++;
    }
  }
  TRY(dart_barrier(DART_TEAM_ALL));
  /* replace a third of the values: each owner its own keys */
  for (uint64_t i = 0; i < (uint64_t)n; i++) {
    uint64_t k = u + 1 + nu * i;
    if (replaced(k)) counts[hm_insert(&m, k, f(k) + 1)]++;
  }
  TRY(dart_barrier(DART_TEAM_ALL));

  /* every unit finds every key, and n keys never inserted */
  uint64_t absent = (uint64_t)n;
  for (uint64_t k = 1; k <= keys + absent; k++) {
    uint64_t v;
    int found = hm_find(&m, k, &v);
    if (k <= keys ? !found || v != f(k) + (uint64_t)replaced(k) : found)
      counts[3]++;
  }
  TRY(dart_allreduce(counts, sums, 4, U64, DART_OP_SUM, DART_TEAM_ALL));

  /* Each key was inserted exactly once; the rest of the inserts replaced. */
  uint64_t nreplaced = 0;
  for (uint64_t k = 1; k <= keys; k++) nreplaced += (uint64_t)replaced(k);
  uint64_t twice = nu * (((uint64_t)n + 3) / 4);
  int ok = sums[0] == keys && sums[1] == twice + nreplaced && sums[2] == 0 &&
           sums[3] == 0;
  if (me.id == 0) {
    if (ok)
      printf("hashmap: %" PRIu64 " keys inserted by %zu units, all found, "
             "%" PRIu64 " absent keys absent: PASSED\n", keys, units, absent);
    else
      printf("hashmap: %" PRIu64 " inserted (want %" PRIu64 "), %" PRIu64
             " replaced (want %" PRIu64 "), %" PRIu64 " on a full table, "
             "%" PRIu64 " wrong finds: FAILED\n", sums[0], keys, sums[1],
             twice + nreplaced, sums[2], sums[3]);
  }
  TRY(dart_team_memfree(m.slots));
  TRY(dart_exit());
  return ok ? 0 : 1;
}
