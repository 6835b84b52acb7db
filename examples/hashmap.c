/*
 * hashmap: a distributed hash map (hashmap.h), in its atomics version or
 * its active-message version: many operations at once as calls in flight
 * (-a) or in batches per owner (-b).
 *
 *   dartrun -n 4 ./hashmap [-a | -b] [-n keys_per_unit] [-s slots_per_unit]
 *
 * Every unit inserts its keys (and some of its neighbour's, at the same
 * time as the neighbour) and finds each right after inserting it, replaces
 * some values (all at once: hm_insert_all), then finds every key and some
 * that were never inserted (in chunks: hm_find_all), and prints how many
 * inserts and finds per second all units made.
 * Exits 1 on any mismatch.
 */
#define _POSIX_C_SOURCE 200809L
#include <dart/dart.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"

/* The test's values: f(k), plus 1 once its owner has replaced it. */
static uint64_t f(uint64_t key) { return key * UINT64_C(0x9e3779b97f4a7c15); }
static int replaced(uint64_t key) { return key % 3 == 0; }

/* hm_insert_all of keys[i] with values out[CHUNK + i], i < n, its results
 * in out, counted as counts[] counts them. */
enum { CHUNK = 4096 };
static void insert_counted(const hashmap_t *m, uint64_t n,
                           const uint64_t *keys, uint64_t *out,
                           uint64_t counts[4])
{
  hm_insert_all(m, n, keys, out + CHUNK, out);
  for (uint64_t j = 0; j < n; j++) counts[out[j] < 3 ? out[j] : 3]++;
}

int main(int argc, char **argv)
{
  TRY(dart_init(&argc, &argv));
  dart_global_unit_t me;
  size_t units;
  TRY(dart_myid(&me));
  TRY(dart_size(&units));
  long n = 1000, slots = 0;
  int opt;
  hm_version_t version = HM_ATOMICS;
  while ((opt = getopt(argc, argv, "abn:s:")) != -1) {
    if (opt == 'a') version = HM_CALLS;
    else if (opt == 'b') version = HM_BATCHES;
    else if (opt == 'n') n = atol(optarg);
    else if (opt == 's') slots = atol(optarg);
    else n = 0;
  }
  if (n < 1 || slots < 0) {
    if (me.id == 0)
      fprintf(stderr,
              "usage: hashmap [-a | -b] [-n keys_per_unit] "
              "[-s slots_per_unit]\n");
    dart_exit();
    return 2;
  }
  /* default: load factor 0.7, so that many keys collide and probe on */
  hashmap_t m;
  hm_create(&m, slots ? (uint64_t)slots : (uint64_t)n * 10 / 7 + 1,
            version);

  /* counts[]: inserted, replaced, table full, wrong or missing */
  uint64_t counts[4] = {0, 0, 0, 0}, sums[4];
  uint64_t u = (uint64_t)me.id, nu = (uint64_t)units, all = (uint64_t)n * nu;
  /* My keys: u + 1 + units * i, i < n (together: 1 .. all). Every fourth
   * also comes from the unit before me, about when I insert it: races of
   * two inserts of one key (same value). */
  double start = example_now();
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
  double inserting = example_now() - start;
  /* replace a third of the values: each unit its own keys */
  uint64_t *keys = malloc(CHUNK * sizeof *keys);
  uint64_t *out = malloc(2 * CHUNK * sizeof *out);
  if (keys == NULL || out == NULL) {
    fprintf(stderr, "hashmap: no memory\n");
    dart_abort(1);
  }
  uint64_t nkeys = 0;
  for (uint64_t i = 0; i < (uint64_t)n; i++) {
    uint64_t k = u + 1 + nu * i;
    if (!replaced(k)) continue;
    keys[nkeys] = k;
    out[CHUNK + nkeys++] = f(k) + 1;
    if (nkeys == CHUNK) {
      insert_counted(&m, nkeys, keys, out, counts);
      nkeys = 0;
    }
  }
  insert_counted(&m, nkeys, keys, out, counts);
  TRY(dart_barrier(DART_TEAM_ALL));

  /* every unit finds every key, and n keys never inserted */
  uint64_t absent = (uint64_t)n;
  start = example_now();
  for (uint64_t first = 1; first <= all + absent; first += CHUNK) {
    uint64_t count = all + absent + 1 - first;
    if (count > CHUNK) count = CHUNK;
    for (uint64_t j = 0; j < count; j++) keys[j] = first + j;
    hm_find_all(&m, count, keys, out);
    for (uint64_t j = 0; j < count; j++) {
      uint64_t k = keys[j];
      uint64_t want = f(k) + (uint64_t)replaced(k);
      if (k <= all ? !out[2 * j] || out[2 * j + 1] != want : out[2 * j])
        counts[3]++;
    }
  }
  free(keys);
  free(out);
  TRY(dart_barrier(DART_TEAM_ALL));
  double finding = example_now() - start;
  TRY(dart_allreduce(counts, sums, 4, U64, DART_OP_SUM, DART_TEAM_ALL));

  /* Each key was inserted exactly once; the rest of the inserts replaced. */
  uint64_t nreplaced = 0;
  for (uint64_t k = 1; k <= all; k++) nreplaced += (uint64_t)replaced(k);
  uint64_t twice = nu * (((uint64_t)n + 3) / 4);
  int ok = sums[0] == all && sums[1] == twice + nreplaced && sums[2] == 0 &&
           sums[3] == 0;
  if (me.id == 0) {
    /* the first phase: each unit n inserts, n finds, n/4 inserts more */
    double first = (double)nu * (double)(2 * n + (n + 3) / 4);
    static const char *const name[] = {
        "atomics", "active messages", "active messages in batches"};
    printf("hashmap (%s): %.3g inserts and finds per second while "
           "inserting, %.3g finds per second\n", name[version],
           first / inserting,
           (double)nu * (double)(all + absent) / finding);
    if (ok)
      printf("hashmap: %" PRIu64 " keys inserted by %zu units, all found, "
             "%" PRIu64 " absent keys absent: PASSED\n", all, units, absent);
    else
      printf("hashmap: %" PRIu64 " inserted (want %" PRIu64 "), %" PRIu64
             " replaced (want %" PRIu64 "), %" PRIu64 " on a full table, "
             "%" PRIu64 " wrong finds: FAILED\n", sums[0], all, sums[1],
             twice + nreplaced, sums[2], sums[3]);
  }
  hm_destroy(&m);
  TRY(dart_exit());
  return ok ? 0 : 1;
}
