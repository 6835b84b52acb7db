/*
 * Ping-pong between units 0 and 1: the half round-trip time of a message
 * of 8 B to 1 MiB that the receiver can act on, libdart side by side with
 * MPI in the same run (bench/shmem.c has the OpenSHMEM version):
 *   dart  unit 0 dart_put_signal of the message into unit 1's part,
 *         setting unit 1's signal word to the round; unit 1
 *         dart_signal_wait_until (>= round) on its own word, then puts
 *         what it got back the same way; unit 0 waits on its own word
 *   mpi   MPI_Send / MPI_Recv of the same message, malloc'd buffers
 * Rows: pingpong,put_signal,IMPL,layout,units,SIZE,us: the median over
 * repetitions of runs of K round trips (K from the warm-up: a run takes
 * about 4 ms), the time of a run over 2K. Each repetition runs both
 * implementations in turn, so that outside load hits each alike.
 *
 * Every round marks the message's first and last byte with the round; the
 * rest carries a pattern of the run. At the end of each run both units
 * check their whole receive buffer: the pattern, and the marks of the last
 * round (a message or signal that overtook its data shows as a stale mark
 * or pattern). Wrong data: exit status 1. Units past 1 only take part in
 * the barriers.
 *
 *   dartrun -n 2 bench_pingpong [--smoke] [--layout L] [--max-size B]
 *                               [--reps R]
 */
#define _POSIX_C_SOURCE 200809L
#include <dart/dart.h>
#include <dart/dart_signal.h>
#include <mpi.h>
#include <stdint.h>

#include "dart_bench.h"
#include "example.h"

static const size_t sizes[] = {8, 64, 512, 4096, 32768, 262144, 1048576};
#define NSIZES (sizeof sizes / sizeof sizes[0])

enum { IMPL_DART, IMPL_MPI, NIMPL };
static const char *const impl_name[NIMPL] = {"dart", "mpi"};

static int me, units, failed;
static unsigned char *local;   /* unit 0's message, sent in every ping */
static unsigned char *dart_in; /* this unit's part: the dart receive buffer */
static unsigned char *mpi_in;  /* the mpi receive buffer */
static dart_gptr_t data, sig;  /* the allocations (unit 0's parts) */

/* Rounds so far, the same count on every unit: the signal words are never
 * reset, so each wait asks for a round no earlier run has signalled. */
static uint64_t round_no;

static unsigned char pattern(long run, size_t i)
{
  return (unsigned char)(run * 31 + (long)(i % 251) + 1);
}

static unsigned char mark(uint64_t round) { return (unsigned char)round; }

static dart_gptr_t at(dart_gptr_t g, int unit)
{
  g.unitid = unit;
  return g;
}

/* k round trips through DART, each way a put with a signal. */
static void run_dart(size_t bytes, long k)
{
  if (me == 0) {
    for (long i = 0; i < k; i++) {
      uint64_t r = ++round_no;
      local[0] = local[bytes - 1] = mark(r);
      TRY(dart_put_signal(at(data, 1), local, bytes, DART_TYPE_BYTE,
                          DART_TYPE_BYTE, at(sig, 1), r, DART_SIGNAL_SET));
      TRY(dart_signal_wait_until(at(sig, 0), DART_CMP_GE, r, NULL));
    }
  } else if (me == 1) {
    for (long i = 0; i < k; i++) {
      uint64_t r = ++round_no;
      TRY(dart_signal_wait_until(at(sig, 1), DART_CMP_GE, r, NULL));
      /* what came in goes back: unit 0's check covers both ways */
      TRY(dart_put_signal(at(data, 0), dart_in, bytes, DART_TYPE_BYTE,
                          DART_TYPE_BYTE, at(sig, 0), r, DART_SIGNAL_SET));
    }
  } else {
    round_no += (uint64_t)k;
  }
}

/* k round trips of MPI_Send / MPI_Recv. */
static void run_mpi(size_t bytes, long k)
{
  int n = (int)bytes;
  if (me == 0) {
    for (long i = 0; i < k; i++) {
      local[0] = local[bytes - 1] = mark(++round_no);
      MPI_Send(local, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(mpi_in, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  } else if (me == 1) {
    for (long i = 0; i < k; i++) {
      ++round_no;
      MPI_Recv(mpi_in, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(mpi_in, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    }
  } else {
    round_no += (uint64_t)k;
  }
}

/* One run of k round trips of impl, as run number run (its pattern);
 * returns unit 0's seconds per half round trip. The barrier is the
 * implementation's own, so that a waiting unit serves its operations. */
static double timed_run(int impl, size_t bytes, long k, long run)
{
  if (me == 0)
    for (size_t i = 0; i < bytes; i++) local[i] = pattern(run, i);
  if (impl == IMPL_DART) TRY(dart_barrier(DART_TEAM_ALL));
  else MPI_Barrier(MPI_COMM_WORLD);
  double t0 = bench_now();
  if (impl == IMPL_DART) run_dart(bytes, k);
  else run_mpi(bytes, k);
  double half = (bench_now() - t0) / (2.0 * (double)k);
  /* unit 1 got the last ping, unit 0 its echo: no more writes to either
   * buffer before the next run's barrier */
  const unsigned char *in = impl == IMPL_DART ? dart_in : mpi_in;
  if (me <= 1)
    for (size_t i = 0; i < bytes; i++) {
      unsigned char want = i == 0 || i == bytes - 1 ? mark(round_no)
                                                    : pattern(run, i);
      if (in[i] != want) {
        fprintf(stderr, "bench_pingpong: %s, %zu B, unit %d: byte %zu is "
                "%u, not %u\n", impl_name[impl], bytes, me, i, in[i], want);
        failed = 1;
        break;
      }
    }
  return half;
}

int main(int argc, char **argv)
{
  bench_opts_t o;
  int status = bench_dart_pair_start(&argc, &argv, &o, &me, &units,
                                     "bench_pingpong");
  if (status != 0) return status;
  size_t max = o.max_size < sizes[0] ? sizes[0] : o.max_size;

  TRY(dart_team_memalloc_aligned(DART_TEAM_ALL, max, DART_TYPE_BYTE, &data));
  TRY(dart_team_memalloc_aligned(DART_TEAM_ALL, 1, DART_TYPE_ULONGLONG,
                                 &sig));
  TRY(dart_gptr_getaddr(at(data, me), (void **)&dart_in));
  /* a signal word is an atomic: 0 by an update, not a store; the barrier
   * of the first run keeps the peer's first signal after it */
  TRY(dart_signal(at(sig, me), 0, DART_SIGNAL_SET));
  local = malloc(max);
  mpi_in = malloc(max);
  if (!local || !mpi_in) example_die("malloc", DART_ERR_NOMEM);
  memset(dart_in, 0, max);
  memset(mpi_in, 0, max);

  long run = 1;
  for (size_t s = 0; s < NSIZES && sizes[s] <= o.max_size; s++) {
    double half[NIMPL];
    /* K round trips: two halves each */
    bench_pair_measure(&o, NIMPL, timed_run, 2, sizes[s], &run, half);
    if (me == 0)
      for (int i = 0; i < NIMPL; i++)
        bench_row(&o, "pingpong", "put_signal", impl_name[i], units,
                  sizes[s], half[i] * 1e6, "us");
  }

  free(mpi_in);
  free(local);
  TRY(dart_barrier(DART_TEAM_ALL));
  TRY(dart_team_memfree(sig));
  TRY(dart_team_memfree(data));
  int any;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  TRY(dart_exit());
  return any ? 1 : 0;
}
