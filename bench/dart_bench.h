/* The start and the early end every DART benchmark shares. */
#ifndef DART_BENCH_DART_BENCH_H_
#define DART_BENCH_DART_BENCH_H_

#include <dart/dart.h>
#include <stdio.h>

#include "bench.h"

/* dart_init, then bench.h's options, this unit's id and the unit count.
 * Returns the index of the program's first own argument (bench_parse), or
 * -1 when dart_init failed. */
static inline int bench_dart_start(int *argc, char ***argv, bench_opts_t *o,
                                   int *me, int *units)
{
  if (dart_init(argc, argv) != DART_OK) return -1;
  int arg = bench_parse(*argc, *argv, o);
  dart_global_unit_t id;
  size_t n;
  dart_myid(&id);
  dart_size(&n);
  *me = id.id;
  *units = (int)n;
  return arg;
}

/* Ends a run that cannot go on with this many units: it counts as
 * skipped (exit status 77). */
static inline int bench_dart_skip(int me, const char *why)
{
  if (me == 0) printf("# %s\n", why);
  dart_exit();
  return 77;
}

#endif
