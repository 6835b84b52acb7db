/*
 * DASH's reductions over a dash::Array<double> of one element per unit, on
 * the DART that DASH runs on. test/dash builds it against libdash twice:
 * on libdart (impl dash_libdart) and on DASH's own DART-MPI (impl
 * dash_dart_mpi), both as bench_dash_reduce; scripts/bench runs both.
 *
 *   reduce        dash::reduce over the array: DASH's path for global
 *                 ranges, which creates a type and an operation, runs
 *                 dart_allreduce and destroys both, every call (8 B)
 *   reduce_local  dash::reduce over the local range, non-empty: one
 *                 dart_allreduce with DART_OP_SUM (8 B)
 *   minmax        the global {min, max} of dash::sort
 *                 (dash::detail::find_global_min_max): one dart_allreduce
 *                 with DART_OP_MINMAX on a pair (16 B)
 *   min_element   dash::min_element over the array: a barrier and a
 *                 dart_allgather of each unit's {value, index} (16 B)
 *
 * Rows: dash,OP,IMPL,layout,units,SIZE,us: rounds (--reps) of a batch of
 * N calls of each operation (N from a warm-up: a batch takes about 4 ms),
 * the median over rounds of the slowest unit's time per call. Each round
 * gives the units other values (the minimum moves to unit round mod
 * units) and every call's result is checked; a wrong one: exit status 1.
 *
 *   dartrun -n N bench_dash_reduce [--smoke] [--layout L] [--reps R]
 */
#include <libdash.h>
#include <mpi.h>

#include <cstdio>

#include "bench.h"

#ifndef BENCH_IMPL
#define BENCH_IMPL "dash_libdart"
#endif

namespace {

int me, units;

// The slowest unit's seconds.
double slowest(double mine)
{
  double max = 0;
  MPI_Allreduce(&mine, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return max;
}

// Unit u's element in round r: 1 .. units, the 1 on unit r mod units.
double value_of(int u, long r)
{
  return static_cast<double>(((u - r) % units + units) % units + 1);
}

struct Op {
  const char *name;
  size_t size;
  // one call; false where its result is wrong
  bool (*call)(dash::Array<double> &a, long round);
};

const Op ops[] = {
    {"reduce", sizeof(double),
     [](dash::Array<double> &a, long) {
       return dash::reduce(a.begin(), a.end(), 0.0) ==
              units * (units + 1) / 2.0;
     }},
    {"reduce_local", sizeof(double),
     [](dash::Array<double> &a, long) {
       return dash::reduce(a.lbegin(), a.lend(), 0.0, dash::plus<double>(),
                           true) == units * (units + 1) / 2.0;
     }},
    {"minmax", 2 * sizeof(double),
     [](dash::Array<double> &a, long) {
       auto m = dash::detail::find_global_min_max(
           a.lbegin(), a.lend(), a.team().dart_id(),
           [](double x) { return x; });
       return m.first == 1.0 && m.second == units;
     }},
    {"min_element", sizeof(double) + sizeof(dash::default_index_t),
     [](dash::Array<double> &a, long round) {
       return a.begin() + round % units ==
              dash::min_element(a.begin(), a.end());
     }},
};

// One batch of n calls of op in round: the slowest unit's seconds per
// call; sets *wrong where a result was wrong (a message the first time).
double batch(const Op &op, dash::Array<double> &a, long n, long round,
             int *wrong)
{
  a.local[0] = value_of(me, round);
  a.barrier();
  bool right = true;
  double t0 = bench_now();
  for (long i = 0; i < n; i++) right &= op.call(a, round);
  double t = (bench_now() - t0) / static_cast<double>(n);
  if (!right && !*wrong) {
    std::fprintf(stderr, "bench_dash_reduce: %s, unit %d: a wrong result\n",
                 op.name, me);
    *wrong = 1;
  }
  return slowest(t);
}

}  // namespace

int main(int argc, char **argv)
{
  dash::init(&argc, &argv);
  bench_opts_t o;
  bench_parse(argc, argv, &o);
  me = static_cast<int>(dash::myid().id);
  units = static_cast<int>(dash::size());
  int failed = 0;
  {
    dash::Array<double> a(units);
    int reps = o.reps < 64 ? o.reps : 64;
    long round = 0;
    for (const Op &op : ops) {
      int wrong = 0;
      batch(op, a, 10, round++, &wrong);
      long n = bench_iters(&o, batch(op, a, 10, round++, &wrong), 1);
      double t[64];
      for (int r = 0; r < reps; r++) t[r] = batch(op, a, n, round++, &wrong);
      int any = 0;
      MPI_Allreduce(&wrong, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      if (me == 0 && !any)
        bench_row(&o, "dash", op.name, BENCH_IMPL, units, op.size,
                  bench_median(t, reps) * 1e6, "us");
      failed |= any;
    }
  }
  dash::finalize();
  return failed ? 1 : 0;
}
