/*
 * Five-point Jacobi stencil (examples/stencil.h), time per iteration with
 * six halo exchanges over the same sweep:
 *   dart          dart_put of the edge rows into the neighbours' halos,
 *                 dart_flush_all, dart_barrier (the stencil example's code)
 *   dart_signal   dart_put_signal of the edge rows, then a wait for this
 *                 unit's own halos' signals (the example's -s)
 *   dart_plan     a bcast of the plan of dart_plan_create_halo into the
 *                 halos of private buffers, overlapped with the interior
 *                 sweep (the example's -p)
 *   mpi_sendrecv  MPI_Sendrecv of the edge rows, malloc'd buffers
 *   mpi_isend     MPI_Irecv of both halos, MPI_Isend of both edge rows,
 *                 MPI_Waitall: the best two-sided exchange, malloc'd
 *   mpi_rma       MPI_Put into an MPI_Win_allocate window, MPI_Win_fence
 * Rows: stencil,jacobi,IMPL,layout,units,N,us-per-iteration,us (median over
 * reps of runs of the same number of iterations, the six interleaved so
 * that outside load hits each alike) and stencil,jacobi,IMPL,...,residual,
 * residual. The residuals must agree (and, with --smoke, match a serial
 * run); otherwise the program exits 1.
 *
 *   dartrun -n 4 bench_stencil [bench options] [--size N] [--iters K]
 */
#define _POSIX_C_SOURCE 200809L
#include <dart/dart.h>
#include <mpi.h>

#include "bench.h"
#include "example.h"
#include "stencil.h"

enum {
  IMPL_DART,
  IMPL_DART_SIGNAL,
  IMPL_DART_PLAN,
  IMPL_SENDRECV,
  IMPL_ISEND,
  IMPL_RMA,
  NIMPL
};
static const char *const impl_name[NIMPL] = {
    "dart", "dart_signal", "dart_plan", "mpi_sendrecv", "mpi_isend",
    "mpi_rma"};

/* The DART versions share stencil_dart_t. */
static int is_dart(int impl)
{
  return impl == IMPL_DART || impl == IMPL_DART_SIGNAL ||
         impl == IMPL_DART_PLAN;
}

/* The two-sided versions: no window, malloc'd buffers. */
static int is_two_sided(int impl)
{
  return impl == IMPL_SENDRECV || impl == IMPL_ISEND;
}

/* One implementation's grid. The MPI ones keep the DART layout: two
 * buffers of buf floats in mem, cur the current one. */
typedef struct {
  int impl, n, me, units, first, rows, up_rows;
  size_t buf;
  float *mem;
  int cur;
  stencil_dart_t dart;
  MPI_Win win;
} grid_t;

static void grid_open(grid_t *g, int impl, int n, int me, int units)
{
  int f, maxrows;
  g->impl = impl;
  g->n = n;
  g->me = me;
  g->units = units;
  stencil_rows(n, me, units, &g->first, &g->rows);
  stencil_rows(n, me > 0 ? me - 1 : 0, units, &f, &g->up_rows);
  stencil_rows(n, 0, units, &f, &maxrows);
  g->buf = (size_t)(maxrows + 2) * stencil_ld(n);
  if (impl == IMPL_DART_PLAN) {
    TRY(stencil_dart_alloc_plan(&g->dart, n, me, units));
  } else if (is_dart(impl)) {
    TRY(stencil_dart_alloc(&g->dart, n, me, units));
  } else if (is_two_sided(impl)) {
    g->mem = malloc(2 * g->buf * sizeof(float));
    if (g->mem == NULL) example_die("malloc", DART_ERR_NOMEM);
  } else {
    MPI_Win_allocate((MPI_Aint)(2 * g->buf * sizeof(float)), sizeof(float),
                     MPI_INFO_NULL, MPI_COMM_WORLD, &g->mem, &g->win);
  }
}

/* Start state; ends synchronised, so that no neighbour's first put
 * lands before this unit has cleared its halos. */
static void grid_reset(grid_t *g)
{
  if (is_dart(g->impl)) {
    TRY(stencil_dart_reset(&g->dart));
    return;
  }
  stencil_init(g->mem, g->n, g->rows, g->first);
  stencil_init(g->mem + g->buf, g->n, g->rows, g->first);
  g->cur = 0;
  if (g->impl == IMPL_RMA) MPI_Win_fence(0, g->win);
  else MPI_Barrier(MPI_COMM_WORLD);
}

static void grid_iterate(grid_t *g)
{
  if (g->impl == IMPL_DART) {
    TRY(stencil_dart_iterate(&g->dart));
    return;
  }
  if (g->impl == IMPL_DART_SIGNAL) {
    TRY(stencil_dart_iterate_signal(&g->dart));
    return;
  }
  if (g->impl == IMPL_DART_PLAN) {
    TRY(stencil_dart_iterate_plan(&g->dart));
    return;
  }
  int n = g->n, rows = g->rows;
  size_t ld = stencil_ld(n);
  float *old = g->mem + (size_t)g->cur * g->buf;
  float *nw = g->mem + (size_t)(1 - g->cur) * g->buf;
  stencil_sweep(old, nw, n, rows);
  int up = g->me > 0 ? g->me - 1 : MPI_PROC_NULL;
  int down = g->me < g->units - 1 ? g->me + 1 : MPI_PROC_NULL;
  if (g->impl == IMPL_SENDRECV) {
    /* first row up, bottom halo from below; last row down, top halo */
    MPI_Sendrecv(nw + ld + 1, n, MPI_FLOAT, up, 0,
                 nw + (size_t)(rows + 1) * ld + 1, n, MPI_FLOAT, down, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(nw + (size_t)rows * ld + 1, n, MPI_FLOAT, down, 1, nw + 1,
                 n, MPI_FLOAT, up, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else if (g->impl == IMPL_ISEND) {
    /* the receives first, so that the rows find them posted; tags
     * as above (0 travels up, 1 down). A neighbour runs at most one
     * iteration ahead and MPI does not reorder messages of one tag from
     * one source, so each receive gets the row of its own iteration. */
    MPI_Request rq[4];
    MPI_Irecv(nw + (size_t)(rows + 1) * ld + 1, n, MPI_FLOAT, down, 0,
              MPI_COMM_WORLD, &rq[0]);
    MPI_Irecv(nw + 1, n, MPI_FLOAT, up, 1, MPI_COMM_WORLD, &rq[1]);
    MPI_Isend(nw + ld + 1, n, MPI_FLOAT, up, 0, MPI_COMM_WORLD, &rq[2]);
    MPI_Isend(nw + (size_t)rows * ld + 1, n, MPI_FLOAT, down, 1,
              MPI_COMM_WORLD, &rq[3]);
    MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
  } else {
    MPI_Aint base = (MPI_Aint)((size_t)(1 - g->cur) * g->buf);
    if (up != MPI_PROC_NULL)
      MPI_Put(nw + ld + 1, n, MPI_FLOAT, up,
              base + (MPI_Aint)((size_t)(g->up_rows + 1) * ld + 1), n,
              MPI_FLOAT, g->win);
    if (down != MPI_PROC_NULL)
      MPI_Put(nw + (size_t)rows * ld + 1, n, MPI_FLOAT, down, base + 1, n,
              MPI_FLOAT, g->win);
    MPI_Win_fence(0, g->win);
  }
  g->cur = 1 - g->cur;
}

/* Sum of the squared updates of the last iteration, over all units. */
static double grid_residual(grid_t *g)
{
  double r;
  if (is_dart(g->impl)) {
    TRY(stencil_dart_residual(&g->dart, &r));
    return r;
  }
  const float *cur = g->mem + (size_t)g->cur * g->buf;
  const float *prev = g->mem + (size_t)(1 - g->cur) * g->buf;
  double mine = stencil_diff2(cur, prev, g->n, g->rows);
  MPI_Allreduce(&mine, &r, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return r;
}

static void grid_close(grid_t *g)
{
  if (is_dart(g->impl)) TRY(stencil_dart_free(&g->dart));
  else if (is_two_sided(g->impl)) free(g->mem);
  else MPI_Win_free(&g->win);
}

/* Seconds for one run of iters iterations from the start state, between
 * barriers (unit 0's clock). */
static double timed_run(grid_t *g, int iters)
{
  grid_reset(g);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = bench_now();
  for (int it = 0; it < iters; it++) grid_iterate(g);
  MPI_Barrier(MPI_COMM_WORLD);
  return bench_now() - t0;
}

static int close_enough(double a, double b, double rel)
{
  double d = a > b ? a - b : b - a, m = a > b ? a : b;
  return d <= rel * m;
}

/* Measures one grid size; 1 if the residuals agree. */
static int bench_size(const bench_opts_t *o, int n, int iters, int me,
                      int units)
{
  grid_t g[NIMPL];
  double t[NIMPL][64], res[NIMPL];
  int reps = o->reps > 64 ? 64 : o->reps;
  for (int k = 0; k < NIMPL; k++) {
    grid_open(&g[k], k, n, me, units);
    timed_run(&g[k], iters); /* warm-up: caches, MPI connections */
  }
  for (int r = 0; r < reps; r++)
    for (int k = 0; k < NIMPL; k++)
      t[k][r] = timed_run(&g[k], iters) / iters * 1e6;
  for (int k = 0; k < NIMPL; k++) {
    res[k] = grid_residual(&g[k]);
    grid_close(&g[k]);
    if (me == 0) {
      bench_row(o, "stencil", "jacobi", impl_name[k], units, (size_t)n,
                bench_median(t[k], reps), "us");
      bench_row(o, "stencil", "jacobi", impl_name[k], units, (size_t)n,
                res[k], "residual");
    }
  }
  int ok = 1;
  for (int k = 1; k < NIMPL; k++) ok &= close_enough(res[k], res[0], 1e-6);
  if (o->smoke) { /* small grids: the serial run too */
    double d2;
    float *ref = stencil_serial(n, iters, &d2);
    ok &= ref != NULL && close_enough(res[0], d2, 1e-6);
    free(ref);
  }
  if (!ok && me == 0) {
    fprintf(stderr, "bench_stencil: N=%d: residuals differ:", n);
    for (int k = 0; k < NIMPL; k++)
      fprintf(stderr, " %s %.9g", impl_name[k], res[k]);
    fprintf(stderr, "\n");
  }
  return ok;
}

int main(int argc, char **argv)
{
  TRY(dart_init(&argc, &argv));
  /* our options out of argv first, so that they mix with bench.h's */
  int size = 0, iters = 0, bad = 0, kept = 1;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) size = atoi(argv[++i]);
    else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
      iters = atoi(argv[++i]);
    else argv[kept++] = argv[i];
  }
  bench_opts_t o;
  if (bench_parse(kept, argv, &o) != kept) bad = 1;
  dart_global_unit_t me;
  size_t units;
  int rank;
  TRY(dart_myid(&me));
  TRY(dart_size(&units));
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (bad || size < 0 || iters < 0 || (size > 0 && size < (int)units) ||
      rank != me.id) {
    if (me.id == 0)
      fprintf(stderr, "usage: bench_stencil [--smoke] [--layout L] "
                      "[--reps R] [--size N >= units] [--iters K]\n");
    dart_exit();
    return 2;
  }
  int sizes[3] = {128, 512, 1024}, nsizes = 3;
  if (size > 0) sizes[0] = size, nsizes = 1;
  else if (o.smoke) sizes[0] = 32, nsizes = 1;
  int ok = 1;
  for (int s = 0; s < nsizes; s++) {
    int n = sizes[s];
    if (n < (int)units) continue; /* a unit without rows */
    /* about 2^24 cell updates per run: long enough to see past barrier
     * noise, short enough for 8 oversubscribed units */
    long k = iters > 0 ? iters : o.smoke ? 10 : (1L << 24) / ((long)n * n);
    if (iters == 0 && !o.smoke) k = k < 20 ? 20 : k > 1000 ? 1000 : k;
    ok &= bench_size(&o, n, (int)k, me.id, (int)units);
  }
  int all_ok;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  TRY(dart_exit());
  return all_ok ? 0 : 1;
}
