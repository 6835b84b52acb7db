/*
 * gups: HPCC RandomAccess on global pointers. A table of 2^n 64-bit words
 * is spread over all units in blocks; the units together make 4 * 2^n
 * updates table[ran & (2^n - 1)] ^= ran along HPCC's random stream, each
 * unit its own stretch of the stream, each update one DART atomic
 * (dart_accumulate, or dart_fetch_and_op with -f). Then HPCC's check: the
 * same updates again restore table[i] = i wherever none was lost; HPCC
 * accepts up to 1% wrong entries, atomics must leave none.
 *
 *   dartrun -n 4 ./gups [-n log2_table_words] [-f]
 *
 * Prints GUP/s (10^9 updates per second) and exits 1 if any entry is wrong.
 */
#define _POSIX_C_SOURCE 200809L
#include <dart/dart.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "example.h"
#include "hpcc.h"

typedef struct {
  dart_gptr_t table;   /* unit 0, offset 0 */
  uint64_t words;      /* 2^n */
  uint64_t per_unit;   /* words in each unit's block (the last may hold less) */
  int fetch;           /* dart_fetch_and_op instead of dart_accumulate */
} gups_t;

/* This unit's updates: its stretch of the stream of 4 * words. */
static void run_updates(const gups_t *g, int me, int units)
{
  uint64_t first, count;
  hpcc_stretch(4 * g->words, me, units, &first, &count);
  uint64_t ran = hpcc_starts((int64_t)first);
  dart_gptr_t gp = g->table;
  for (uint64_t i = 0; i < count; i++) {
    ran = hpcc_next(ran);
    uint64_t index = ran & (g->words - 1);
    gp.unitid = (dart_unit_t)(index / g->per_unit);
    gp.addr_or_offs.offset = index % g->per_unit * sizeof(uint64_t);
    if (g->fetch) {
      uint64_t old;
      TRY(dart_fetch_and_op(gp, &ran, &old, DART_TYPE_ULONGLONG,
                            DART_OP_BXOR));
    } else {
      TRY(dart_accumulate(gp, &ran, 1, DART_TYPE_ULONGLONG, DART_OP_BXOR));
    }
  }
  TRY(dart_flush_all(g->table));
}

int main(int argc, char **argv)
{
  TRY(dart_init(&argc, &argv));
  dart_global_unit_t me;
  size_t units;
  TRY(dart_myid(&me));
  TRY(dart_size(&units));
  int log2_words = 20, opt;
  gups_t g = {.fetch = 0};
  while ((opt = getopt(argc, argv, "n:f")) != -1) {
    if (opt == 'n') log2_words = atoi(optarg);
    else if (opt == 'f') g.fetch = 1;
    else {
      if (me.id == 0) fprintf(stderr, "usage: gups [-n log2_words] [-f]\n");
      dart_exit();
      return 2;
    }
  }
  if (log2_words < 1 || log2_words > 40) {
    if (me.id == 0) fprintf(stderr, "gups: -n must be within 1..40\n");
    dart_exit();
    return 2;
  }
  g.words = UINT64_C(1) << log2_words;
  g.per_unit = (g.words + units - 1) / units;
  TRY(dart_team_memalloc_aligned(DART_TEAM_ALL, g.per_unit,
                                 DART_TYPE_ULONGLONG, &g.table));

  /* table[i] = i, each unit its own block */
  dart_gptr_t mine = g.table;
  mine.unitid = me.id;
  uint64_t *local;
  TRY(dart_gptr_getaddr(mine, (void **)&local));
  uint64_t base = g.per_unit * (uint64_t)me.id;
  uint64_t nlocal = base >= g.words ? 0
                    : (g.words - base < g.per_unit ? g.words - base
                                                   : g.per_unit);
  for (uint64_t i = 0; i < nlocal; i++) local[i] = base + i;
  TRY(dart_barrier(DART_TEAM_ALL));

  double t0 = example_now();
  run_updates(&g, me.id, (int)units);
  TRY(dart_barrier(DART_TEAM_ALL));
  double seconds = example_now() - t0;

  /* HPCC's verification: the same updates again undo every one */
  run_updates(&g, me.id, (int)units);
  TRY(dart_barrier(DART_TEAM_ALL));
  uint64_t errors = 0, total_errors = 0;
  for (uint64_t i = 0; i < nlocal; i++)
    if (local[i] != base + i) errors++;
  TRY(dart_allreduce(&errors, &total_errors, 1, DART_TYPE_ULONGLONG,
                     DART_OP_SUM, DART_TEAM_ALL));
  if (me.id == 0) {
    double updates = 4.0 * (double)g.words;
    printf("gups: %zu units, table 2^%d words, %.0f updates with %s\n", units,
           log2_words, updates,
           g.fetch ? "dart_fetch_and_op" : "dart_accumulate");
    printf("gups: %.6f GUP/s (%.3f s)\n", updates / seconds * 1e-9, seconds);
    printf("gups: %" PRIu64 " wrong entries (%.4f%%): %s\n", total_errors,
           100.0 * (double)total_errors / (double)g.words,
           total_errors == 0 ? "PASSED" : "FAILED");
  }
  TRY(dart_team_memfree(g.table));
  TRY(dart_exit());
  return total_errors == 0 ? 0 : 1;
}
