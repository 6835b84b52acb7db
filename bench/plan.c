/*
 * Communication plans (dart_plan.h) against PETSc's star forests (PetscSF)
 * on the same graphs of doubles, one after the other in one run:
 *   halo2d  the 5-point halo (width 1, periodic) of a 2-D grid,
 *           block-distributed over a grid of units (MPI_Dims_create),
 *           N x N elements per unit
 *   halo3d  the 7-point halo of a 3-D grid, N x N x N per unit
 *   random  N roots and N leaves per unit, each leaf on a random root of
 *           one of 4 units the unit draws (seeded: every run alike)
 * with two operations on each: bcast with DART_OP_REPLACE (MPI_REPLACE)
 * and reduce with DART_OP_SUM (MPI_SUM). Implementations:
 *   dart        dart_plan_create_halo for the halos (in place: one ghosted
 *               block is root and leaf array), dart_plan_create for the
 *               random graph
 *   dart_graph  the halos as dart_plan_create of the explicit leaf lists
 *               the header describes (what the halo plan must match)
 *   dart_global dart, with the root array (for the halos the one buffer)
 *               in global memory (dart_team_memalloc_aligned, as DASH keeps
 *               its arrays), where node peers read the roots of a bcast in
 *               place
 *   petsc       PetscSFSetGraph of the same lists, the halos in place too
 *               (only where the bench was built with PETSc)
 * Rows: plan,GRAPH_OP,IMPL,layout,units,N, then the time per call in us
 * (the median of reps runs of a number of calls between barriers, the
 * implementations interleaved so that outside load hits each alike), the
 * same as MB/s of leaf data (all units' leaves per call), and for the dart
 * ones the speedup over PetscSF (petsc time / dart time).
 * After the timing every implementation runs one bcast and one reduce from
 * the same start values (small integers, so that sums are exact in any
 * order) and must match, element by element, what the graph implies,
 * worked out with plain MPI; otherwise the program exits 1.
 * Emulated nodes (--units-per-node) are libdart's alone: PetscSF's MPI
 * still exchanges through shared memory there.
 *
 *   dartrun -n 4 bench_plan [bench options] [--graph G] [--size N]
 */
#define _POSIX_C_SOURCE 200809L
#include <dart/dart.h>
#include <dart/dart_plan.h>
#include <mpi.h>
#include <stdint.h>
#ifdef BENCH_HAVE_PETSC
#include <petscsf.h>
#endif

#include "bench.h"
#include "example.h"

#define HALO 1  /* the reach of the 5- and 7-point stencils */
#define PEERS 4 /* units whose roots a random graph's unit references */
#define SEED UINT64_C(0x5eed5eed)
/* calls before the timing: connections, first touch of buffers, anything
 * an implementation sets up on its first use */
#define WARMUP_CALLS 5
#define MAX_REPS 64

enum { DART, DART_GRAPH, DART_GLOBAL, PETSC, NIMPL };
static const char *const impl_name[NIMPL] = {"dart", "dart_graph",
                                             "dart_global", "petsc"};
enum { BCAST, REDUCE, NOPS };
static const char *const op_name[NOPS] = {"bcast", "reduce"};

typedef struct {
  const char *name; /* halo2d, halo3d, random */
  size_t size;      /* per unit: the block's side, or the leaves */
  int halo;         /* the halo of the grid below, exchanged in place */
  int ndims, dims[3];
  size_t extent[3];
  size_t nroots, nleaves, leaf_elems; /* leaf_elems: the leaf array */
  size_t *ilocal;                     /* leaf k at ilocal[k]; NULL: at k */
  dart_plan_root_t *iremote;
} graph_t;

typedef struct {
  int kind;
  dart_plan_t plan;
#ifdef BENCH_HAVE_PETSC
  PetscSF sf;
#endif
  double *root, *leaf; /* leaf == root for the halos */
  dart_gptr_t root_g;  /* dart_global's root array */
} impl_t;

static int me, units;

static void *alloc_or_die(size_t bytes)
{
  void *p = malloc(bytes ? bytes : 1);
  if (p == NULL) example_die("malloc", DART_ERR_NOMEM);
  return p;
}

static size_t leaf_at(const graph_t *g, size_t k)
{
  return g->ilocal ? g->ilocal[k] : k;
}

/* The block distribution of dart_plan_create_halo along one dimension:
 * extent elements over p coordinates, the first extent % p one more. */
static size_t block_start(size_t extent, int p, int c)
{
  size_t r = extent % (size_t)p, cs = (size_t)c;
  return cs * (extent / (size_t)p) + (cs < r ? cs : r);
}

static size_t block_len(size_t extent, int p, int c)
{
  return extent / (size_t)p + ((size_t)c < extent % (size_t)p);
}

static int block_owner(size_t extent, int p, size_t x)
{
  size_t q = extent / (size_t)p, r = extent % (size_t)p;
  if (x < r * (q + 1)) return (int)(x / (q + 1));
  return (int)(r + (x - r * (q + 1)) / q);
}

/* Row-major coordinates of unit u in the unit grid (last one fastest). */
static void unit_coords(const graph_t *g, int u, int c[3])
{
  for (int d = g->ndims - 1; d >= 0; d--) {
    c[d] = u % g->dims[d];
    u /= g->dims[d];
  }
}

/* Extents of the ghosted block of the unit at grid coordinates c. */
static void ghosted(const graph_t *g, const int c[3], size_t ext[3])
{
  for (int d = 0; d < g->ndims; d++)
    ext[d] = block_len(g->extent[d], g->dims[d], c[d]) + 2 * HALO;
}

/* The halo of an ndims grid of n^ndims elements per unit: leaves are the
 * face elements of this unit's ghosted block (outside the owned box along
 * exactly one dimension), each referencing the owned element it mirrors,
 * wrapping around (periodic), at its place in the owner's ghosted block. */
static void graph_halo(graph_t *g, const char *name, int ndims, size_t n)
{
  *g = (graph_t){.name = name, .size = n, .halo = 1, .ndims = ndims};
  MPI_Dims_create(units, ndims, g->dims);
  for (int d = 0; d < ndims; d++) g->extent[d] = n * (size_t)g->dims[d];
  int c[3];
  size_t ext[3], start[3], len[3];
  unit_coords(g, me, c);
  ghosted(g, c, ext);
  g->nroots = 1;
  for (int d = 0; d < ndims; d++) {
    start[d] = block_start(g->extent[d], g->dims[d], c[d]);
    len[d] = ext[d] - 2 * HALO;
    g->nroots *= ext[d];
  }
  g->leaf_elems = g->nroots;
  /* at most every element is a leaf */
  g->ilocal = alloc_or_die(g->nroots * sizeof *g->ilocal);
  g->iremote = alloc_or_die(g->nroots * sizeof *g->iremote);
  for (size_t i = 0; i < g->nroots; i++) {
    size_t x[3], rest = i;
    int outside = 0;
    for (int d = ndims - 1; d >= 0; d--) {
      x[d] = rest % ext[d];
      rest /= ext[d];
      outside += x[d] < HALO || x[d] >= HALO + len[d];
    }
    if (outside != 1) continue;
    int owner_c[3], owner = 0;
    size_t owner_x[3], owner_ext[3];
    for (int d = 0; d < ndims; d++) {
      /* global coordinate, wrapped into [0, extent) */
      size_t e = g->extent[d];
      size_t gx = (start[d] + x[d] + e * HALO - HALO) % e;
      owner_c[d] = block_owner(e, g->dims[d], gx);
      owner_x[d] = gx - block_start(e, g->dims[d], owner_c[d]) + HALO;
      owner = owner * g->dims[d] + owner_c[d];
    }
    ghosted(g, owner_c, owner_ext);
    size_t index = 0;
    for (int d = 0; d < ndims; d++) index = index * owner_ext[d] + owner_x[d];
    g->ilocal[g->nleaves] = i;
    g->iremote[g->nleaves].unit = DART_TEAM_UNIT_ID(owner);
    g->iremote[g->nleaves].index = index;
    g->nleaves++;
  }
}

/* The next number of a splitmix64 stream. */
static uint64_t draw(uint64_t *state)
{
  return example_hash(*state += UINT64_C(0x9e3779b97f4a7c15));
}

/* n roots and n leaves (leaf k at element k), each leaf on a random root
 * of one of PEERS random units (this one among them by chance). */
static void graph_random(graph_t *g, size_t n)
{
  *g = (graph_t){.name = "random", .size = n, .nroots = n, .nleaves = n,
                 .leaf_elems = n};
  uint64_t state = SEED ^ ((uint64_t)me << 32);
  int peers[PEERS];
  for (int p = 0; p < PEERS; p++)
    peers[p] = (int)(draw(&state) % (uint64_t)units);
  g->iremote = alloc_or_die(n * sizeof *g->iremote);
  for (size_t k = 0; k < n; k++) {
    g->iremote[k].unit = DART_TEAM_UNIT_ID(peers[draw(&state) % PEERS]);
    g->iremote[k].index = (size_t)(draw(&state) % n);
  }
}

static void graph_free(graph_t *g)
{
  free(g->ilocal);
  free(g->iremote);
}

static int impl_present(const graph_t *g, int kind)
{
#ifndef BENCH_HAVE_PETSC
  if (kind == PETSC) return 0;
#endif
  return kind != DART_GRAPH || g->halo;
}

static void impl_open(impl_t *m, int kind, const graph_t *g)
{
  *m = (impl_t){.kind = kind, .root_g = DART_GPTR_NULL};
  if (kind == DART_GLOBAL) {
    TRY(dart_team_memalloc_aligned(DART_TEAM_ALL, g->nroots, DART_TYPE_DOUBLE,
                                   &m->root_g));
    m->root_g.unitid = me;
    TRY(dart_gptr_getaddr(m->root_g, (void **)&m->root));
  } else {
    m->root = alloc_or_die(g->nroots * sizeof(double));
  }
  m->leaf = g->halo ? m->root : alloc_or_die(g->leaf_elems * sizeof(double));
  if ((kind == DART || kind == DART_GLOBAL) && g->halo) {
    int periodic = 1;
    TRY(dart_plan_create_halo(DART_TEAM_ALL, g->ndims, g->extent, g->dims,
                              HALO, periodic, DART_TYPE_DOUBLE, &m->plan));
  } else if (kind != PETSC) {
    TRY(dart_plan_create(DART_TEAM_ALL, g->nroots, g->nleaves, g->ilocal,
                         g->iremote, DART_TYPE_DOUBLE, &m->plan));
  }
#ifdef BENCH_HAVE_PETSC
  if (kind != PETSC) return;
  PetscInt *ilocal = NULL;
  PetscSFNode *iremote = alloc_or_die(g->nleaves * sizeof *iremote);
  if (g->ilocal) ilocal = alloc_or_die(g->nleaves * sizeof *ilocal);
  for (size_t k = 0; k < g->nleaves; k++) {
    if (ilocal) ilocal[k] = (PetscInt)g->ilocal[k];
    iremote[k].rank = g->iremote[k].unit.id;
    iremote[k].index = (PetscInt)g->iremote[k].index;
  }
  PetscCallAbort(PETSC_COMM_WORLD, PetscSFCreate(PETSC_COMM_WORLD, &m->sf));
  /* PETSC_OPTIONS="-sf_type ..." chooses another PetscSF implementation */
  PetscCallAbort(PETSC_COMM_WORLD, PetscSFSetFromOptions(m->sf));
  PetscCallAbort(PETSC_COMM_WORLD,
                 PetscSFSetGraph(m->sf, (PetscInt)g->nroots,
                                 (PetscInt)g->nleaves, ilocal,
                                 PETSC_COPY_VALUES, iremote,
                                 PETSC_COPY_VALUES));
  PetscCallAbort(PETSC_COMM_WORLD, PetscSFSetUp(m->sf));
  free(ilocal);
  free(iremote);
#endif
}

static void impl_close(impl_t *m)
{
  if (m->kind != PETSC) TRY(dart_plan_destroy(&m->plan));
#ifdef BENCH_HAVE_PETSC
  else PetscCallAbort(PETSC_COMM_WORLD, PetscSFDestroy(&m->sf));
#endif
  if (m->leaf != m->root) free(m->leaf);
  if (m->kind == DART_GLOBAL) TRY(dart_team_memfree(m->root_g));
  else free(m->root);
}

/* One whole operation: begin, then end. */
static void run_op(impl_t *m, int op)
{
#ifdef BENCH_HAVE_PETSC
  if (m->kind == PETSC) {
    if (op == BCAST) {
      PetscCallAbort(PETSC_COMM_WORLD,
                     PetscSFBcastBegin(m->sf, MPI_DOUBLE, m->root, m->leaf,
                                       MPI_REPLACE));
      PetscCallAbort(PETSC_COMM_WORLD,
                     PetscSFBcastEnd(m->sf, MPI_DOUBLE, m->root, m->leaf,
                                     MPI_REPLACE));
    } else {
      PetscCallAbort(PETSC_COMM_WORLD,
                     PetscSFReduceBegin(m->sf, MPI_DOUBLE, m->leaf, m->root,
                                        MPI_SUM));
      PetscCallAbort(PETSC_COMM_WORLD,
                     PetscSFReduceEnd(m->sf, MPI_DOUBLE, m->leaf, m->root,
                                      MPI_SUM));
    }
    return;
  }
#endif
  if (op == BCAST) {
    TRY(dart_plan_bcast_begin(m->plan, m->root, m->leaf, DART_OP_REPLACE));
    TRY(dart_plan_bcast_end(m->plan, m->root, m->leaf, DART_OP_REPLACE));
  } else {
    TRY(dart_plan_reduce_begin(m->plan, m->leaf, m->root, DART_OP_SUM));
    TRY(dart_plan_reduce_end(m->plan, m->leaf, m->root, DART_OP_SUM));
  }
}

/* A barrier of the implementation's own runtime. */
static void sync_units(const impl_t *m)
{
  if (m->kind == PETSC) MPI_Barrier(MPI_COMM_WORLD);
  else TRY(dart_barrier(DART_TEAM_ALL));
}

/* Seconds per call over calls calls between barriers (this unit's clock;
 * every unit leaves the closing barrier at about the same time). */
static double seconds_per_call(impl_t *m, int op, long calls)
{
  sync_units(m);
  double t0 = bench_now();
  for (long i = 0; i < calls; i++) run_op(m, op);
  sync_units(m);
  return (bench_now() - t0) / (double)calls;
}

/* Start values: small integers, so that every sum is exact. */
static double root_start(int unit, size_t i)
{
  return (double)(((size_t)unit * 31 + i * 7) % 17);
}

static double leaf_start(int unit, size_t i)
{
  return (double)(((size_t)unit * 13 + i * 3) % 11 + 1);
}

static void fill_start(const graph_t *g, double *root, double *leaf)
{
  for (size_t i = 0; i < g->nroots; i++) root[i] = root_start(me, i);
  if (g->halo) { /* one buffer: the leaves' places get leaf values */
    for (size_t k = 0; k < g->nleaves; k++)
      root[leaf_at(g, k)] = leaf_start(me, leaf_at(g, k));
  } else {
    for (size_t i = 0; i < g->leaf_elems; i++) leaf[i] = leaf_start(me, i);
  }
}

/* What op leaves in root and leaf from the start values: bcast needs no
 * communication (a root's start value is known everywhere); for reduce
 * every unit sends (root index, leaf value) pairs to the roots' units. */
static void expected(const graph_t *g, int op, double *root, double *leaf)
{
  fill_start(g, root, leaf);
  if (op == BCAST) {
    for (size_t k = 0; k < g->nleaves; k++)
      leaf[leaf_at(g, k)] =
          root_start(g->iremote[k].unit.id, g->iremote[k].index);
    return;
  }
  int *count = alloc_or_die((size_t)units * sizeof(int));
  int *rcount = alloc_or_die((size_t)units * sizeof(int));
  int *displ = alloc_or_die((size_t)units * sizeof(int));
  int *rdispl = alloc_or_die((size_t)units * sizeof(int));
  for (int u = 0; u < units; u++) count[u] = 0;
  for (size_t k = 0; k < g->nleaves; k++) count[g->iremote[k].unit.id] += 2;
  MPI_Alltoall(count, 1, MPI_INT, rcount, 1, MPI_INT, MPI_COMM_WORLD);
  int nsend = 0, nrecv = 0;
  for (int u = 0; u < units; u++) {
    displ[u] = nsend;
    rdispl[u] = nrecv;
    nsend += count[u];
    nrecv += rcount[u];
  }
  /* index and value as doubles: indices stay far below 2^53 */
  double *send = alloc_or_die((size_t)nsend * sizeof(double));
  double *recv = alloc_or_die((size_t)nrecv * sizeof(double));
  for (int u = 0; u < units; u++) count[u] = displ[u];
  for (size_t k = 0; k < g->nleaves; k++) {
    int u = g->iremote[k].unit.id;
    send[count[u]++] = (double)g->iremote[k].index;
    send[count[u]++] = leaf_start(me, leaf_at(g, k));
  }
  for (int u = 0; u < units; u++) count[u] -= displ[u];
  MPI_Alltoallv(send, count, displ, MPI_DOUBLE, recv, rcount, rdispl,
                MPI_DOUBLE, MPI_COMM_WORLD);
  for (int i = 0; i < nrecv; i += 2) root[(size_t)recv[i]] += recv[i + 1];
  free(recv);
  free(send);
  free(rdispl);
  free(displ);
  free(rcount);
  free(count);
}

/* Elements of got that differ from want; the first one is reported. */
static size_t differences(const char *what, const double *got,
                          const double *want, size_t n)
{
  size_t wrong = 0;
  for (size_t i = 0; i < n; i++) {
    if (got[i] == want[i]) continue;
    if (wrong++ == 0)
      fprintf(stderr, "bench_plan: unit %d: %s[%zu] = %g, expected %g\n", me,
              what, i, got[i], want[i]);
  }
  return wrong;
}

/* One bcast and one reduce of each implementation from the start values,
 * against expected(); 1 when every element of every unit matches. */
static int check(const graph_t *g, impl_t *impls)
{
  double *want_root = alloc_or_die(g->nroots * sizeof(double));
  double *want_leaf =
      g->halo ? want_root : alloc_or_die(g->leaf_elems * sizeof(double));
  size_t wrong = 0;
  for (int op = 0; op < NOPS; op++) {
    expected(g, op, want_root, want_leaf);
    for (int k = 0; k < NIMPL; k++) {
      impl_t *m = &impls[k];
      if (!impl_present(g, k)) continue;
      fill_start(g, m->root, m->leaf);
      sync_units(m);
      run_op(m, op);
      sync_units(m);
      char what[96];
      snprintf(what, sizeof what, "%s %zu %s %s: root", g->name, g->size,
               op_name[op], impl_name[k]);
      wrong += differences(what, m->root, want_root, g->nroots);
      if (g->halo) continue;
      snprintf(what, sizeof what, "%s %zu %s %s: leaf", g->name, g->size,
               op_name[op], impl_name[k]);
      wrong += differences(what, m->leaf, want_leaf, g->leaf_elems);
    }
  }
  if (want_leaf != want_root) free(want_leaf);
  free(want_root);
  unsigned long long mine = wrong, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM,
                MPI_COMM_WORLD);
  if (all && me == 0)
    fprintf(stderr, "bench_plan: %s %zu on %d units: %llu wrong elements\n",
            g->name, g->size, units, all);
  return all == 0;
}

/* Times both operations on graph g; 1 when the check passes. */
static int bench_graph(const bench_opts_t *o, const graph_t *g)
{
  impl_t impls[NIMPL];
  for (int k = 0; k < NIMPL; k++)
    if (impl_present(g, k)) impl_open(&impls[k], k, g);
  unsigned long long nleaves = g->nleaves, all_leaves = 0;
  MPI_Allreduce(&nleaves, &all_leaves, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM,
                MPI_COMM_WORLD);
  double bytes = (double)all_leaves * sizeof(double);
  int reps = o->reps > MAX_REPS ? MAX_REPS : o->reps;
  for (int op = 0; op < NOPS; op++) {
    long calls[NIMPL];
    double t[NIMPL][MAX_REPS], median[NIMPL];
    for (int k = 0; k < NIMPL; k++) {
      if (!impl_present(g, k)) continue;
      fill_start(g, impls[k].root, impls[k].leaf);
      for (int i = 0; i < WARMUP_CALLS; i++) run_op(&impls[k], op);
      /* every unit makes the same number of calls: the slowest decides */
      double mine = seconds_per_call(&impls[k], op, WARMUP_CALLS), slowest;
      MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      calls[k] = bench_iters(o, slowest, 1);
    }
    /* each repetition starts with another implementation: none always
     * finds the caches the others left */
    for (int r = 0; r < reps; r++)
      for (int i = 0; i < NIMPL; i++) {
        int k = (r + i) % NIMPL;
        if (impl_present(g, k))
          t[k][r] = seconds_per_call(&impls[k], op, calls[k]);
      }
    if (me != 0) continue;
    char name[64];
    snprintf(name, sizeof name, "%s_%s", g->name, op_name[op]);
    for (int k = 0; k < NIMPL; k++) {
      if (!impl_present(g, k)) continue;
      median[k] = bench_median(t[k], reps);
      bench_row(o, "plan", name, impl_name[k], units, g->size,
                median[k] * 1e6, "us");
      bench_row(o, "plan", name, impl_name[k], units, g->size,
                bytes / median[k] * 1e-6, "MB/s");
    }
    if (!impl_present(g, PETSC)) continue;
    for (int k = 0; k < PETSC; k++)
      if (impl_present(g, k))
        bench_row(o, "plan", name, impl_name[k], units, g->size,
                  median[PETSC] / median[k], "speedup");
  }
  int ok = check(g, impls);
  for (int k = 0; k < NIMPL; k++)
    if (impl_present(g, k)) impl_close(&impls[k]);
  return ok;
}

int main(int argc, char **argv)
{
  TRY(dart_init(&argc, &argv));
  /* our options out of argv first, so that they mix with bench.h's */
  const char *only = NULL;
  long size = 0;
  int bad = 0, kept = 1;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--graph") == 0 && i + 1 < argc) only = argv[++i];
    else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
      size = atol(argv[++i]);
    else argv[kept++] = argv[i];
  }
  bench_opts_t o;
  if (bench_parse(kept, argv, &o) != kept) bad = 1;
  dart_global_unit_t id;
  size_t n;
  int rank;
  TRY(dart_myid(&id));
  TRY(dart_size(&n));
  me = id.id;
  units = (int)n;
  /* PetscSF's ranks are MPI_COMM_WORLD's, the plans' DART_TEAM_ALL's */
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  static const struct {
    const char *name;
    int ndims; /* 0: the random graph */
    size_t sizes[2], smoke;
  } graphs[] = {{"halo2d", 2, {64, 1024}, 8},
                {"halo3d", 3, {16, 96}, 4},
                {"random", 0, {1000, 100000}, 64}};
  const int ngraphs = (int)(sizeof graphs / sizeof graphs[0]);
  int known = only == NULL;
  for (int i = 0; i < ngraphs; i++)
    known |= only != NULL && strcmp(only, graphs[i].name) == 0;
  if (bad || !known || size < 0 || rank != me) {
    if (me == 0)
      fprintf(stderr, "usage: bench_plan [--smoke] [--layout L] [--reps R] "
                      "[--graph halo2d|halo3d|random] [--size N]\n");
    dart_exit();
    return 2;
  }
#ifdef BENCH_HAVE_PETSC
  /* MPI is up (dart_init): PETSc uses it and leaves it up */
  if (PetscInitialize(NULL, NULL, NULL, NULL) != 0) {
    fprintf(stderr, "bench_plan: PetscInitialize failed\n");
    dart_abort(1);
  }
#else
  if (me == 0)
    printf("# PetscSF is not available (bench_plan was built without "
           "PETSc): libdart only\n");
#endif
  int ok = 1;
  for (int i = 0; i < ngraphs; i++) {
    if (only != NULL && strcmp(only, graphs[i].name) != 0) continue;
    for (int s = 0; s < 2; s++) {
      size_t side = size > 0 ? (size_t)size
                    : o.smoke ? graphs[i].smoke : graphs[i].sizes[s];
      graph_t g;
      if (graphs[i].ndims > 0)
        graph_halo(&g, graphs[i].name, graphs[i].ndims, side);
      else graph_random(&g, side);
      ok &= bench_graph(&o, &g);
      graph_free(&g);
      if (size > 0 || o.smoke) break; /* one size */
    }
  }
#ifdef BENCH_HAVE_PETSC
  if (PetscFinalize() != 0) ok = 0;
#endif
  TRY(dart_exit());
  return ok ? 0 : 1;
}
