/*
 * dart_init and dart_exit as DASH's test driver pays them: the program
 * initialises MPI itself, then starts and stops DART once per test case.
 * The same source builds against libdart (bench_init) and against DASH's
 * own DART-MPI (test/dash: bench_init_dart_mpi, from DASH's sources), so
 * that scripts/bench runs both side by side:
 *   init,dart_init_first,IMPL,...  the first dart_init of the process
 *   init,dart_init,IMPL,...        later ones (median)
 *   init,dart_exit,IMPL,...        dart_exit (median)
 * Milliseconds, the slowest unit's time of each call. With --smoke it only
 * checks that every start and stop succeeds and sees every unit.
 */
#define _POSIX_C_SOURCE 200809L
#include <dash/dart/if/dart.h>
#include <mpi.h>

#include "bench.h"

#ifndef BENCH_IMPL
#define BENCH_IMPL "dart"
#endif

/* The slowest unit's seconds. */
static double slowest(double mine)
{
  double max = 0;
  MPI_Allreduce(&mine, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return max;
}

int main(int argc, char **argv)
{
  bench_opts_t o;
  bench_parse(argc, argv, &o);
  MPI_Init(&argc, &argv);
  int me, units;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &units);
  int reps = o.reps < 64 ? o.reps : 64;
  double init[65], exits[65];
  int failed = 0;
  for (int r = 0; r <= reps; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = bench_now();
    failed |= dart_init(&argc, &argv) != DART_OK;
    double t1 = bench_now();
    size_t size = 0;
    failed |= dart_size(&size) != DART_OK || size != (size_t)units;
    failed |= dart_barrier(DART_TEAM_ALL) != DART_OK;
    MPI_Barrier(MPI_COMM_WORLD);
    double t2 = bench_now();
    failed |= dart_exit() != DART_OK;
    double t3 = bench_now();
    init[r] = slowest(t1 - t0);
    exits[r] = slowest(t3 - t2);
  }
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (me == 0 && any_failed) fprintf(stderr, "bench_init: a call failed\n");
  if (me == 0 && !o.smoke && !any_failed) {
    bench_row(&o, "init", "dart_init_first", BENCH_IMPL, units, 0,
              init[0] * 1e3, "ms");
    bench_row(&o, "init", "dart_init", BENCH_IMPL, units, 0,
              bench_median(init + 1, reps) * 1e3, "ms");
    bench_row(&o, "init", "dart_exit", BENCH_IMPL, units, 0,
              bench_median(exits + 1, reps) * 1e3, "ms");
  }
  MPI_Finalize();
  return any_failed ? 1 : 0;
}
