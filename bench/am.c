/*
 * Active-message bandwidth from unit 0 to unit 1, 8 B to 4 MiB, against
 * MPI two-sided in the same run:
 *   dart  unit 0 dart_am_send of K messages, then dart_am_flush (every
 *         handler ran); unit 1's handler reads each payload's marks where
 *         it lies and copies the last one into its receive buffer
 *   mpi   unit 0 MPI_Send of the K messages, unit 1 MPI_Recv into its
 *         receive buffer, then an empty message back
 * Node peers take the shared-memory rings, emulated nodes MPI's or UCX's
 * messages: eager fragments for the small ones, the wire's rendezvous for
 * messages larger than a fragment. MPI's messages take Open MPI's own
 * transport: on one machine its shared memory, also where libdart's
 * emulated nodes go over UCX (upn1.ucx, upn1.tcp); upn1 compares the same
 * wire (libdart's messages over MPI).
 * Rows: am,stream,IMPL,layout,units,SIZE,GB/s: from the median over
 * repetitions of runs of K messages (K from the warm-up: a run takes about
 * 4 ms). Each repetition runs both implementations in turn.
 *
 * Every message's first and last byte carry its number in the run, the
 * rest a pattern of the run; unit 1 checks the marks of every message and,
 * after each run, the whole last one. Wrong data: exit status 1.
 *
 *   dartrun -n 2 bench_am [--smoke] [--layout L] [--max-size B] [--reps R]
 */
#define _POSIX_C_SOURCE 200809L
#include <dart/dart.h>
#include <dart/dart_am.h>
#include <mpi.h>
#include <stdint.h>

#include "dart_bench.h"
#include "example.h"

static const size_t sizes[] = {8,      64,      512,     4096,
                               32768, 262144, 1048576, 4194304};
#define NSIZES (sizeof sizes / sizeof sizes[0])

enum { IMPL_DART, IMPL_MPI, NIMPL };
static const char *const impl_name[NIMPL] = {"dart", "mpi"};

static int me, units, failed;
static unsigned char *out, *in; /* unit 0's message; unit 1's copy */
static long got;                /* messages unit 1 took in this run */
static long expected;           /* messages of this run */
static dart_am_id_t stream_id;

static unsigned char pattern(long run, size_t i)
{
  return (unsigned char)(run * 31 + (long)(i % 251) + 1);
}

static unsigned char mark(long message) { return (unsigned char)message; }

static void check_mark(const char *impl, const unsigned char *m,
                       size_t bytes)
{
  unsigned char want = mark(got);
  if (!failed && (m[0] != want || m[bytes - 1] != want)) {
    fprintf(stderr, "bench_am: %s, %zu B: message %ld is marked %u/%u, "
            "not %u\n", impl, bytes, got, m[0], m[bytes - 1], want);
    failed = 1;
  }
}

static void stream_handler(dart_team_unit_t origin, const void *payload,
                           size_t len, void *reply, size_t *reply_len,
                           void *context)
{
  (void)origin, (void)reply, (void)reply_len, (void)context;
  got++;
  check_mark("dart", payload, len);
  if (got == expected) memcpy(in, payload, len);
}

static void run_dart(size_t bytes, long k)
{
  if (me != 0) return; /* unit 1's handler runs in the barrier */
  dart_team_unit_t peer = {1};
  for (long i = 1; i <= k; i++) {
    out[0] = out[bytes - 1] = mark(i);
    TRY(dart_am_send(DART_TEAM_ALL, peer, stream_id, out, bytes));
  }
  TRY(dart_am_flush(DART_TEAM_ALL));
}

static void run_mpi(size_t bytes, long k)
{
  int n = (int)bytes;
  if (me == 0) {
    for (long i = 1; i <= k; i++) {
      out[0] = out[bytes - 1] = mark(i);
      MPI_Send(out, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
    }
    MPI_Recv(NULL, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else if (me == 1) {
    for (long i = 1; i <= k; i++) {
      MPI_Recv(in, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      got++;
      check_mark("mpi", in, bytes);
    }
    MPI_Send(NULL, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
  }
}

/* One run of k messages of impl, as run number run (its pattern); returns
 * unit 0's seconds per message. The barriers are DART's, so that unit 1
 * runs the handlers while it waits in them. */
static double timed_run(int impl, size_t bytes, long k, long run)
{
  if (me == 0)
    for (size_t i = 0; i < bytes; i++) out[i] = pattern(run, i);
  got = 0;
  expected = k;
  TRY(dart_barrier(DART_TEAM_ALL));
  double t0 = bench_now();
  if (impl == IMPL_DART) run_dart(bytes, k);
  else run_mpi(bytes, k);
  double t = (bench_now() - t0) / (double)k;
  TRY(dart_barrier(DART_TEAM_ALL));
  if (me == 1) {
    if (got != k && !failed) {
      fprintf(stderr, "bench_am: %s, %zu B: %ld messages of %ld came\n",
              impl_name[impl], bytes, got, k);
      failed = 1;
    }
    for (size_t i = 1; i + 1 < bytes && !failed; i++)
      if (in[i] != pattern(run, i)) {
        fprintf(stderr, "bench_am: %s, %zu B: byte %zu is %u, not %u\n",
                impl_name[impl], bytes, i, in[i], pattern(run, i));
        failed = 1;
      }
  }
  return t;
}

int main(int argc, char **argv)
{
  bench_opts_t o;
  int status = bench_dart_pair_start(&argc, &argv, &o, &me, &units,
                                     "bench_am");
  if (status != 0) return status;
  size_t max = o.max_size < sizes[0] ? sizes[0] : o.max_size;
  out = malloc(max);
  in = calloc(1, max);
  if (!out || !in) example_die("malloc", DART_ERR_NOMEM);
  TRY(dart_am_register(DART_TEAM_ALL, stream_handler, NULL, 0, &stream_id));

  long run = 1;
  for (size_t s = 0; s < NSIZES && sizes[s] <= o.max_size; s++) {
    double t[NIMPL];
    bench_pair_measure(&o, NIMPL, timed_run, 1, sizes[s], &run, t);
    if (me == 0)
      for (int i = 0; i < NIMPL; i++)
        bench_row(&o, "am", "stream", impl_name[i], units, sizes[s],
                  (double)sizes[s] / t[i] * 1e-9, "GB/s");
  }

  TRY(dart_am_deregister(DART_TEAM_ALL, stream_id));
  free(in);
  free(out);
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  dart_exit();
  return any ? 1 : 0;
}
