/*
 * The collectives of the DART 3.2 interface against MPI's same call on
 * MPI_COMM_WORLD, in the same run. The same source builds against libdart
 * (bench_coll) and against DASH's own DART-MPI (test/dash:
 * bench_coll_dart_mpi), so that scripts/bench compares all three.
 *
 *   op                DART call                 MPI call
 *   barrier           dart_barrier              MPI_Barrier
 *   bcast             dart_bcast                MPI_Bcast
 *   allreduce         dart_allreduce, SUM       MPI_Allreduce, MPI_SUM
 *   allreduce_minmax  dart_allreduce, MINMAX    MPI_Allreduce, a user op
 *   reduce            dart_reduce, SUM          MPI_Reduce, MPI_SUM
 *   allgather         dart_allgather            MPI_Allgather
 *   gather            dart_gather               MPI_Gather
 *   scatter           dart_scatter              MPI_Scatter
 *   alltoall          dart_alltoall             MPI_Alltoall
 *
 * What the size (8 B, 1 KiB, 64 KiB, 1 MiB) is: bcast, the message; the
 * reductions, each unit's vector of doubles (the result has as many);
 * allgather and gather, each unit's part (the result is units times that);
 * scatter, the part each unit gets; alltoall, the block one unit sends to
 * each unit; barrier, 0. DART_OP_MINMAX combines {min, max} pairs of
 * doubles, so its smallest size is one pair, 16 B, as DASH's sort reduces
 * it. Reductions are on doubles (DART_TYPE_DOUBLE, MPI_DOUBLE), the rest on
 * bytes (DART_TYPE_BYTE, MPI_BYTE); every buffer is malloc'd, as a
 * client's own.
 *
 * MPI has no MINMAX: its baseline is one MPI_Allreduce with an
 * MPI_Op_create'd operation of the same meaning, on a type of one pair
 * (MPI never splits a pair between segments). MPI_MIN and MPI_MAX as two
 * calls would pay two collective latencies, and a copy to separate the
 * pairs, where DASH reduces a single pair.
 *
 * Each measurement runs rounds (--reps, default 11): a batch of N DART
 * calls, then a batch of N MPI calls (N from a warm-up: a batch takes
 * about 4 ms; each batch starts with its implementation's barrier). The
 * root of bcast, reduce, gather and scatter is unit (round mod units), the
 * same for both. Reported: the median over rounds of the slowest unit's
 * time per call, in microseconds:
 *   coll,OP,IMPL,layout,units,SIZE,us
 * IMPL is dart and mpi here; bench_coll_dart_mpi prints dart_mpi and
 * mpi_dart_mpi (MPI's call in its run, apart from this program's mpi).
 *
 * Every batch has inputs of its own; after it each unit checks the result
 * of its last call (a stale one shows). A wrong value or a DART call that
 * does not return DART_OK drops that measurement's rows and the exit
 * status is 1. With --smoke: 8 B and 1 KiB, 3 rounds.
 *
 *   dartrun -n N bench_coll [--smoke] [--layout L] [--max-size B] [--reps R]
 */
#define _POSIX_C_SOURCE 200809L
#include <dash/dart/if/dart.h>
#include <mpi.h>

#include "bench.h"

#ifndef BENCH_IMPL
#define BENCH_IMPL "dart"
#endif
#ifndef BENCH_MPI_IMPL
#define BENCH_MPI_IMPL "mpi"
#endif

static const size_t sizes[] = {8, 1024, 65536, 1048576};
#define NSIZES (sizeof sizes / sizeof sizes[0])

enum { IMPL_DART, IMPL_MPI, NIMPL };
static const char *const impl_name[NIMPL] = {BENCH_IMPL, BENCH_MPI_IMPL};

static int me, units;
static unsigned char *sendb, *recvb; /* units times the largest size each */
static MPI_Datatype pair_type;       /* {min, max} of doubles */
static MPI_Op minmax_op;

/* ---- inputs and their results ---- */

/* Byte i of what unit from sends to unit to in batch tag (to: 0 where
 * every unit gets the same). */
static unsigned char byte_of(long tag, int from, int to, size_t i)
{
  return (unsigned char)(tag * 31 + from * 7 + to * 13 + (long)(i % 251) + 1);
}

/* Element i of unit's vector in batch tag: small integers, so that every
 * order of summing gives the same double. */
static double num_of(long tag, int unit, size_t i)
{
  return (double)((tag * 7 + unit * 3 + (long)i) % 1021);
}

/* Pair i of unit's MINMAX input in batch tag. */
static double pair_min(long tag, int unit, size_t i)
{
  return num_of(tag, unit, i);
}

static double pair_max(long tag, int unit, size_t i)
{
  return 1021 + num_of(tag + 1, unit, i + 5);
}

/* Nonzero, with a message, where buf[0..bytes) is not what unit from sent
 * to unit to. */
static int check_bytes(const char *op, const unsigned char *buf,
                       size_t bytes, long tag, int from, int to)
{
  for (size_t i = 0; i < bytes; i++)
    if (buf[i] != byte_of(tag, from, to, i)) {
      fprintf(stderr, "bench_coll: %s, %zu B, unit %d: byte %zu from unit "
              "%d is %u, not %u\n", op, bytes, me, i, from, buf[i],
              byte_of(tag, from, to, i));
      return 1;
    }
  return 0;
}

static int check_sum(const char *op, const double *v, size_t n, long tag)
{
  for (size_t i = 0; i < n; i++) {
    double want = 0;
    for (int u = 0; u < units; u++) want += num_of(tag, u, i);
    if (v[i] != want) {
      fprintf(stderr, "bench_coll: %s, %zu B, unit %d: element %zu is %g, "
              "not %g\n", op, n * sizeof *v, me, i, v[i], want);
      return 1;
    }
  }
  return 0;
}

/* ---- the operations: inputs, the two calls, the check ---- */

typedef struct {
  const char *name;
  size_t min_size; /* 0: no data (barrier) */
  void (*fill)(size_t bytes, long tag, int root);
  int (*dart)(size_t bytes, int root); /* DART_OK on success */
  int (*mpi)(size_t bytes, int root);  /* MPI_SUCCESS on success */
  int (*check)(size_t bytes, long tag, int root); /* 0: right */
} coll_t;

static dart_team_unit_t team_unit(int unit)
{
  return DART_TEAM_UNIT_ID(unit);
}

static int dart_barrier_op(size_t bytes, int root)
{
  (void)bytes;
  (void)root;
  return dart_barrier(DART_TEAM_ALL);
}

static int mpi_barrier_op(size_t bytes, int root)
{
  (void)bytes;
  (void)root;
  return MPI_Barrier(MPI_COMM_WORLD);
}

/* bcast: in place in recvb */
static void fill_bcast(size_t bytes, long tag, int root)
{
  for (size_t i = 0; i < bytes; i++)
    recvb[i] = me == root ? byte_of(tag, root, 0, i) : 0;
}

static int dart_bcast_op(size_t bytes, int root)
{
  return dart_bcast(recvb, bytes, DART_TYPE_BYTE, team_unit(root),
                    DART_TEAM_ALL);
}

static int mpi_bcast_op(size_t bytes, int root)
{
  return MPI_Bcast(recvb, (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD);
}

static int check_bcast(size_t bytes, long tag, int root)
{
  return check_bytes("bcast", recvb, bytes, tag, root, 0);
}

/* allreduce and reduce: doubles */
static void fill_sum(size_t bytes, long tag, int root)
{
  (void)root;
  double *v = (double *)sendb;
  for (size_t i = 0; i < bytes / sizeof *v; i++) v[i] = num_of(tag, me, i);
  memset(recvb, 0, bytes);
}

static int dart_allreduce_op(size_t bytes, int root)
{
  (void)root;
  return dart_allreduce(sendb, recvb, bytes / sizeof(double),
                        DART_TYPE_DOUBLE, DART_OP_SUM, DART_TEAM_ALL);
}

static int mpi_allreduce_op(size_t bytes, int root)
{
  (void)root;
  return MPI_Allreduce(sendb, recvb, (int)(bytes / sizeof(double)),
                       MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

static int check_allreduce(size_t bytes, long tag, int root)
{
  (void)root;
  return check_sum("allreduce", (double *)recvb, bytes / sizeof(double),
                   tag);
}

static int dart_reduce_op(size_t bytes, int root)
{
  return dart_reduce(sendb, recvb, bytes / sizeof(double), DART_TYPE_DOUBLE,
                     DART_OP_SUM, team_unit(root), DART_TEAM_ALL);
}

static int mpi_reduce_op(size_t bytes, int root)
{
  return MPI_Reduce(sendb, recvb, (int)(bytes / sizeof(double)), MPI_DOUBLE,
                    MPI_SUM, root, MPI_COMM_WORLD);
}

static int check_reduce(size_t bytes, long tag, int root)
{
  return me == root
             ? check_sum("reduce", (double *)recvb, bytes / sizeof(double),
                         tag)
             : 0;
}

/* allreduce_minmax: pairs {min, max} of doubles */
static void minmax_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
  (void)type;
  const double *a = in;
  double *b = inout;
  for (int i = 0; i < 2 * *len; i += 2) {
    b[i] = a[i] < b[i] ? a[i] : b[i];
    b[i + 1] = a[i + 1] > b[i + 1] ? a[i + 1] : b[i + 1];
  }
}

static void fill_minmax(size_t bytes, long tag, int root)
{
  (void)root;
  double *v = (double *)sendb;
  for (size_t i = 0; i < bytes / (2 * sizeof *v); i++) {
    v[2 * i] = pair_min(tag, me, i);
    v[2 * i + 1] = pair_max(tag, me, i);
  }
  memset(recvb, 0, bytes);
}

static int dart_minmax_op(size_t bytes, int root)
{
  (void)root;
  /* nelem counts doubles, two per pair, as DASH passes it */
  return dart_allreduce(sendb, recvb, bytes / sizeof(double),
                        DART_TYPE_DOUBLE, DART_OP_MINMAX, DART_TEAM_ALL);
}

static int mpi_minmax_op(size_t bytes, int root)
{
  (void)root;
  return MPI_Allreduce(sendb, recvb, (int)(bytes / (2 * sizeof(double))),
                       pair_type, minmax_op, MPI_COMM_WORLD);
}

static int check_minmax(size_t bytes, long tag, int root)
{
  (void)root;
  const double *v = (const double *)recvb;
  for (size_t i = 0; i < bytes / (2 * sizeof *v); i++) {
    double lo = pair_min(tag, 0, i), hi = pair_max(tag, 0, i);
    for (int u = 1; u < units; u++) {
      double l = pair_min(tag, u, i), h = pair_max(tag, u, i);
      lo = l < lo ? l : lo;
      hi = h > hi ? h : hi;
    }
    if (v[2 * i] != lo || v[2 * i + 1] != hi) {
      fprintf(stderr, "bench_coll: allreduce_minmax, %zu B, unit %d: pair "
              "%zu is {%g, %g}, not {%g, %g}\n", bytes, me, i, v[2 * i],
              v[2 * i + 1], lo, hi);
      return 1;
    }
  }
  return 0;
}

/* allgather and gather: each unit's part of bytes */
static void fill_gather(size_t bytes, long tag, int root)
{
  (void)root;
  for (size_t i = 0; i < bytes; i++) sendb[i] = byte_of(tag, me, 0, i);
  memset(recvb, 0, (size_t)units * bytes);
}

static int check_parts(const char *op, size_t bytes, long tag)
{
  for (int u = 0; u < units; u++)
    if (check_bytes(op, recvb + (size_t)u * bytes, bytes, tag, u, 0))
      return 1;
  return 0;
}

static int dart_allgather_op(size_t bytes, int root)
{
  (void)root;
  return dart_allgather(sendb, recvb, bytes, DART_TYPE_BYTE, DART_TEAM_ALL);
}

static int mpi_allgather_op(size_t bytes, int root)
{
  (void)root;
  return MPI_Allgather(sendb, (int)bytes, MPI_BYTE, recvb, (int)bytes,
                       MPI_BYTE, MPI_COMM_WORLD);
}

static int check_allgather(size_t bytes, long tag, int root)
{
  (void)root;
  return check_parts("allgather", bytes, tag);
}

static int dart_gather_op(size_t bytes, int root)
{
  return dart_gather(sendb, recvb, bytes, DART_TYPE_BYTE, team_unit(root),
                     DART_TEAM_ALL);
}

static int mpi_gather_op(size_t bytes, int root)
{
  return MPI_Gather(sendb, (int)bytes, MPI_BYTE, recvb, (int)bytes,
                    MPI_BYTE, root, MPI_COMM_WORLD);
}

static int check_gather(size_t bytes, long tag, int root)
{
  return me == root ? check_parts("gather", bytes, tag) : 0;
}

/* scatter: the root's part for unit u at u * bytes */
static void fill_scatter(size_t bytes, long tag, int root)
{
  if (me == root)
    for (int u = 0; u < units; u++)
      for (size_t i = 0; i < bytes; i++)
        sendb[(size_t)u * bytes + i] = byte_of(tag, root, u, i);
  memset(recvb, 0, bytes);
}

static int dart_scatter_op(size_t bytes, int root)
{
  return dart_scatter(sendb, recvb, bytes, DART_TYPE_BYTE, team_unit(root),
                      DART_TEAM_ALL);
}

static int mpi_scatter_op(size_t bytes, int root)
{
  return MPI_Scatter(sendb, (int)bytes, MPI_BYTE, recvb, (int)bytes,
                     MPI_BYTE, root, MPI_COMM_WORLD);
}

static int check_scatter(size_t bytes, long tag, int root)
{
  return check_bytes("scatter", recvb, bytes, tag, root, me);
}

/* alltoall: the block for unit u at u * bytes */
static void fill_alltoall(size_t bytes, long tag, int root)
{
  (void)root;
  for (int u = 0; u < units; u++)
    for (size_t i = 0; i < bytes; i++)
      sendb[(size_t)u * bytes + i] = byte_of(tag, me, u, i);
  memset(recvb, 0, (size_t)units * bytes);
}

static int dart_alltoall_op(size_t bytes, int root)
{
  (void)root;
  return dart_alltoall(sendb, recvb, bytes, DART_TYPE_BYTE, DART_TEAM_ALL);
}

static int mpi_alltoall_op(size_t bytes, int root)
{
  (void)root;
  return MPI_Alltoall(sendb, (int)bytes, MPI_BYTE, recvb, (int)bytes,
                      MPI_BYTE, MPI_COMM_WORLD);
}

static int check_alltoall(size_t bytes, long tag, int root)
{
  (void)root;
  for (int u = 0; u < units; u++)
    if (check_bytes("alltoall", recvb + (size_t)u * bytes, bytes, tag, u,
                    me))
      return 1;
  return 0;
}

static const coll_t colls[] = {
    {"barrier", 0, NULL, dart_barrier_op, mpi_barrier_op, NULL},
    {"bcast", 8, fill_bcast, dart_bcast_op, mpi_bcast_op, check_bcast},
    {"allreduce", 8, fill_sum, dart_allreduce_op, mpi_allreduce_op,
     check_allreduce},
    {"allreduce_minmax", 16, fill_minmax, dart_minmax_op, mpi_minmax_op,
     check_minmax},
    {"reduce", 8, fill_sum, dart_reduce_op, mpi_reduce_op, check_reduce},
    {"allgather", 8, fill_gather, dart_allgather_op, mpi_allgather_op,
     check_allgather},
    {"gather", 8, fill_gather, dart_gather_op, mpi_gather_op, check_gather},
    {"scatter", 8, fill_scatter, dart_scatter_op, mpi_scatter_op,
     check_scatter},
    {"alltoall", 8, fill_alltoall, dart_alltoall_op, mpi_alltoall_op,
     check_alltoall},
};
#define NCOLLS (sizeof colls / sizeof colls[0])

/* ---- measuring ---- */

static double slowest(double mine)
{
  double max = 0;
  MPI_Allreduce(&mine, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return max;
}

/* One batch of n calls of c through impl, with the inputs of batch tag:
 * the slowest unit's seconds per call. Sets *failed on an error or a wrong
 * result here (once set, later batches go unchecked). */
static double batch(const coll_t *c, int impl, size_t bytes, long n,
                    long tag, int root, int *failed)
{
  if (c->fill) c->fill(bytes, tag, root);
  /* the implementation's own barrier: a unit waiting in it serves its
   * peers' operations */
  if (impl == IMPL_DART) dart_barrier(DART_TEAM_ALL);
  else MPI_Barrier(MPI_COMM_WORLD);
  int ret = 0;
  double t0 = bench_now();
  if (impl == IMPL_DART)
    for (long i = 0; i < n; i++) ret |= c->dart(bytes, root) != DART_OK;
  else
    for (long i = 0; i < n; i++) ret |= c->mpi(bytes, root) != MPI_SUCCESS;
  double t = (bench_now() - t0) / (double)n;
  if (*failed) return slowest(t);
  if (ret) {
    fprintf(stderr, "bench_coll: %s, %zu B, unit %d: a %s call failed\n",
            c->name, bytes, me, impl_name[impl]);
    *failed = 1;
  } else if (c->check && c->check(bytes, tag, root)) {
    *failed = 1;
  }
  return slowest(t);
}

/* c at bytes: a warm-up per implementation (two batches of 10; the second
 * sets N), then o->reps rounds of both in turn; rows where every unit
 * succeeded. Returns nonzero where one failed. */
static int measure(const bench_opts_t *o, const coll_t *c, size_t bytes,
                   long *tag)
{
  long n[NIMPL];
  double t[NIMPL][64];
  int reps = o->reps < 64 ? o->reps : 64, failed = 0;
  for (int i = 0; i < NIMPL; i++) {
    batch(c, i, bytes, 10, (*tag)++, 0, &failed);
    n[i] = bench_iters(o, batch(c, i, bytes, 10, (*tag)++, 0, &failed), 1);
  }
  for (int r = 0; r < reps; r++)
    for (int i = 0; i < NIMPL; i++)
      t[i][r] = batch(c, i, bytes, n[i], (*tag)++, r % units, &failed);
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (me == 0 && !any)
    for (int i = 0; i < NIMPL; i++)
      bench_row(o, "coll", c->name, impl_name[i], units, bytes,
                bench_median(t[i], reps) * 1e6, "us");
  return any;
}

int main(int argc, char **argv)
{
  if (dart_init(&argc, &argv) != DART_OK) return 1;
  bench_opts_t o;
  int arg = bench_parse(argc, argv, &o);
  dart_global_unit_t id;
  size_t n;
  dart_myid(&id);
  dart_size(&n);
  me = id.id;
  units = (int)n;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  /* the checks and the roots take unit i for MPI's rank i */
  if (arg != argc || rank != me) {
    if (me == 0)
      fprintf(stderr, "usage: bench_coll [--smoke] [--layout L] "
              "[--max-size B] [--reps R]%s\n",
              rank != me ? " (units are not MPI_COMM_WORLD's ranks)" : "");
    dart_exit();
    return 2;
  }
  size_t max = sizes[0];
  for (size_t s = 0; s < NSIZES && sizes[s] <= o.max_size; s++)
    max = sizes[s];
  max = max < 16 ? 16 : max; /* one MINMAX pair */
  sendb = malloc((size_t)units * max);
  recvb = malloc((size_t)units * max);
  if (!sendb || !recvb) {
    fprintf(stderr, "bench_coll: out of memory\n");
    dart_exit();
    return 1;
  }
  MPI_Type_contiguous(2, MPI_DOUBLE, &pair_type);
  MPI_Type_commit(&pair_type);
  MPI_Op_create(minmax_fn, 1, &minmax_op);

  int failed = 0;
  long tag = 1;
  for (size_t c = 0; c < NCOLLS; c++) {
    if (colls[c].min_size == 0) {
      failed |= measure(&o, &colls[c], 0, &tag);
      continue;
    }
    for (size_t s = 0; s < NSIZES && sizes[s] <= o.max_size; s++) {
      size_t bytes = sizes[s] < colls[c].min_size ? colls[c].min_size
                                                  : sizes[s];
      failed |= measure(&o, &colls[c], bytes, &tag);
    }
  }

  MPI_Op_free(&minmax_op);
  MPI_Type_free(&pair_type);
  free(recvb);
  free(sendb);
  dart_exit();
  return failed ? 1 : 0;
}
