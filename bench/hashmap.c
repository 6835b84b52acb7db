/*
 * Hash-map inserts and finds per second (examples/hashmap.h): the atomics
 * version (compare-and-swap, put, atomic publish: three round trips or
 * more per insert) and the active-message version (one call to the key's
 * owner), side by side in one run; the latter waiting for each call (am),
 * with HM_WINDOW calls in flight (am_window: hm_insert_all, hm_find_all)
 * and in calls of HM_BATCH operations per owner (am_batch: the same in
 * HM_BATCHES). Every unit inserts N random keys, then finds them all; the
 * rate is all units' operations over the slowest unit's time, the median
 * of the repetitions. Finds are checked.
 *
 *   dartrun -n 4 bench_hashmap [--smoke] [--layout L] [--reps R] [N]
 *
 * Rows: hashmap,{insert,find},{atomics,am,am_window,am_batch},<layout>,<units>,N,
 *       <Mops/s>
 */
#define _POSIX_C_SOURCE 200809L
#include <dart/dart.h>
#include <inttypes.h>

#include "bench.h"
#include "hashmap.h"

static uint64_t key_of(int unit, int rep, uint64_t i)
{
  return example_hash(((uint64_t)unit << 48) ^ ((uint64_t)rep << 40) ^ i) |
         1; /* never 0 */
}

/* Seconds the slowest unit took since start. */
static double slowest(double start)
{
  double mine = bench_now() - start, most;
  TRY(dart_allreduce(&mine, &most, 1, DART_TYPE_DOUBLE, DART_OP_MAX,
                     DART_TEAM_ALL));
  return most;
}

int main(int argc, char **argv)
{
  TRY(dart_init(&argc, &argv));
  bench_opts_t o;
  int i = bench_parse(argc, argv, &o);
  dart_global_unit_t me;
  size_t units;
  TRY(dart_myid(&me));
  TRY(dart_size(&units));
  uint64_t n = i < argc ? strtoull(argv[i], NULL, 0) : 20000;
  if (o.smoke) n = 200;
  if (o.reps > 5) o.reps = 5;
  long wrong = 0;
  uint64_t *keys = malloc(n * sizeof *keys);
  uint64_t *replies = malloc(2 * n * sizeof *replies);
  if (keys == NULL || replies == NULL) {
    fprintf(stderr, "bench_hashmap: no memory for %" PRIu64 " keys\n", n);
    dart_abort(1);
  }
  /* atomics, am (one call waited at a time), am_window, am_batch */
  for (int impl = 0; impl < 4; impl++) {
    static const hm_version_t version[] = {HM_ATOMICS, HM_CALLS, HM_CALLS,
                                           HM_BATCHES};
    hashmap_t m;
    hm_create(&m, n * 10 / 7 + 1, version[impl]);
    double insert[16], find[16];
    for (int rep = 0; rep < o.reps; rep++) {
      hm_clear(&m);
      for (uint64_t k = 0; k < n; k++) keys[k] = key_of(me.id, rep, k);
      /* the keys' index as value */
      double start = bench_now();
      if (impl < 2) {
        for (uint64_t k = 0; k < n; k++)
          replies[k] = hm_insert(&m, keys[k], k);
      } else {
        for (uint64_t k = 0; k < n; k++) replies[n + k] = k;
        hm_insert_all(&m, n, keys, replies + n, replies);
      }
      insert[rep] = (double)(n * units) / slowest(start) * 1e-6;
      for (uint64_t k = 0; k < n; k++) wrong += replies[k] == TABLE_FULL;
      start = bench_now();
      if (impl < 2) {
        for (uint64_t k = 0; k < n; k++)
          replies[2 * k] = (uint64_t)hm_find(&m, keys[k], &replies[2 * k + 1]);
      } else {
        hm_find_all(&m, n, keys, replies);
      }
      find[rep] = (double)(n * units) / slowest(start) * 1e-6;
      for (uint64_t k = 0; k < n; k++)
        wrong += !replies[2 * k] || replies[2 * k + 1] != k;
    }
    hm_destroy(&m);
    if (me.id == 0) {
      static const char *const name[] = {"atomics", "am", "am_window",
                                         "am_batch"};
      bench_row(&o, "hashmap", "insert", name[impl], (int)units, n,
                bench_median(insert, o.reps), "Mops/s");
      bench_row(&o, "hashmap", "find", name[impl], (int)units, n,
                bench_median(find, o.reps), "Mops/s");
    }
  }
  free(keys);
  free(replies);
  long all = 0;
  TRY(dart_allreduce(&wrong, &all, 1, DART_TYPE_LONG, DART_OP_SUM,
                     DART_TEAM_ALL));
  if (me.id == 0 && all > 0)
    fprintf(stderr, "bench_hashmap: %ld failed inserts or wrong finds\n",
            all);
  TRY(dart_exit());
  return all == 0 ? 0 : 1;
}
