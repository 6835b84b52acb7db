/* The start and the early end every DART benchmark shares. */
#ifndef DART_BENCH_DART_BENCH_H_
#define DART_BENCH_DART_BENCH_H_

#include <dart/dart.h>
#include <mpi.h>
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

/* bench_dart_start for a program that measures units 0 and 1 side by side
 * with MPI between the same processes (name: its name), with its checks:
 * no arguments of its own, unit i is MPI_COMM_WORLD's rank i, 2 units at
 * least. Returns 0 to go on, else the program's exit status (DART ended
 * where it started). */
static inline int bench_dart_pair_start(int *argc, char ***argv,
                                        bench_opts_t *o, int *me,
                                        int *units, const char *name)
{
  int arg = bench_dart_start(argc, argv, o, me, units);
  if (arg < 0) return 1;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (arg != *argc || rank != *me) {
    if (*me == 0)
      fprintf(stderr, "usage: %s [--smoke] [--layout L] [--max-size B] "
                      "[--reps R]%s\n", name,
              rank != *me ? " (units are not MPI_COMM_WORLD's ranks)" : "");
    dart_exit();
    return 2;
  }
  char why[64];
  snprintf(why, sizeof why, "%s needs 2 units", name);
  return *units < 2 ? bench_dart_skip(*me, why) : 0;
}

/* One run of k operations of implementation impl with messages of bytes,
 * as run number run: unit 0's seconds per operation. */
typedef double (*bench_pair_run_t)(int impl, size_t bytes, long k, long run);

/* A pair program's nimpl (8 at most) implementations at one size: two
 * warm-up runs of 10 operations each (connections, caches; the second
 * sets K, from unit 0's clock, where an operation takes per_op times what
 * a run returns), then o->reps repetitions (64 at most) running each in
 * turn, so that outside load hits each alike; median[impl]: the median of
 * what its runs returned. *run counts the runs. */
static inline void bench_pair_measure(const bench_opts_t *o, int nimpl,
                                      bench_pair_run_t timed_run,
                                      double per_op, size_t bytes,
                                      long *run, double *median)
{
  long k[8];
  double t[8][64];
  int reps = o->reps < 64 ? o->reps : 64;
  for (int i = 0; i < nimpl; i++) {
    timed_run(i, bytes, 10, (*run)++);
    k[i] = bench_iters(o, per_op * timed_run(i, bytes, 10, (*run)++), 1);
    MPI_Bcast(&k[i], 1, MPI_LONG, 0, MPI_COMM_WORLD);
  }
  for (int r = 0; r < reps; r++)
    for (int i = 0; i < nimpl; i++)
      t[i][r] = timed_run(i, bytes, k[i], (*run)++);
  for (int i = 0; i < nimpl; i++) median[i] = bench_median(t[i], reps);
}

#endif
