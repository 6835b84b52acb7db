/*
 * spmv: a sparse matrix-vector product y = A x over all units, whose ghost
 * values come from a communication plan (dart_plan.h).
 *
 * A is n x n. Units own rows in blocks of ceil(n / units) (the last ones
 * shorter or empty), and the same entries of the vectors. Row i holds the
 * diagonal and k entries at columns drawn by a hash of the seed, i and
 * the entry, so that they land on any unit (now and then on the diagonal
 * or twice on one column: such entries add up like any other). Values of
 * A, x and w are small integers from formulas, so that every sum is exact
 * in doubles whatever its order, and each unit can check its part.
 *
 * Each unit keeps its rows with local column numbers: its own columns
 * first, then the other units' columns it reads (its ghosts), ascending.
 * Its x has that layout, and one plan (dart_plan_create) makes each ghost
 * entry a leaf of its owner's entry. Every iteration uses the plan twice:
 *  - bcast (DART_OP_REPLACE) x's own part into its ghosts, then y = A x;
 *  - reduce (DART_OP_SUM) for z = A^T w: each unit adds its rows' terms
 *    into an array of x's layout, whose ghost part the reduce adds to the
 *    owners' entries.
 * The transposed product's local terms are computed during the bcast.
 *
 *   dartrun -n 4 ./spmv [-n rows] [-k entries] [-i iterations] [-s seed]
 *
 * Every iteration has new x and w. Each unit checks its y and z against
 * the product computed serially from the formulas. Prints how many ghosts
 * the units have, the plan's set-up time and the time per iteration;
 * exits 1 on any wrong value.
 */
#define _POSIX_C_SOURCE 200809L
#include <dart/dart.h>
#include <dart/dart_plan.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example.h"

/* The matrix, the same on every unit. */
typedef struct {
  uint64_t n;        /* rows = columns */
  int k;             /* hashed entries per row, besides the diagonal */
  uint64_t seed;
  uint64_t per_unit; /* rows in each unit's block */
} matrix_t;

/* Column of row's entry e (0 .. k): the diagonal, then hashed columns. */
static uint64_t column(const matrix_t *m, uint64_t row, int e)
{
  if (e == 0) return row;
  uint64_t entry = row * (uint64_t)m->k + (uint64_t)e;
  return example_hash(m->seed ^ example_hash(entry)) % m->n;
}

/* Small integers (at most 4, 9 and 6 in magnitude): products and sums
 * stay exact in doubles. */
static double value(uint64_t row, uint64_t col)
{
  return (double)((row * 3 + col * 5) % 9) - 4;
}

static double x_value(uint64_t col, int iter)
{
  return (double)((col * 7 + (uint64_t)iter * 3) % 19) - 9;
}

static double w_value(uint64_t row, int iter)
{
  return (double)((row * 5 + (uint64_t)iter) % 13) - 6;
}

/* This unit's rows. Every row has k + 1 entries: row r's are entries
 * r * (k + 1) on. Local column c < rows is global column first + c, and
 * c >= rows is ghost[c - rows]. */
typedef struct {
  uint64_t first;  /* global number of row 0 */
  size_t rows;     /* own rows = own columns */
  size_t nghost;   /* ghost columns */
  uint64_t *ghost; /* their global numbers, ascending */
  size_t *col;     /* local column of each entry */
  double *val;     /* value of each entry */
} local_t;

/* count zeroed elements of size bytes, at least one, so that an empty
 * block is no NULL; the job stops when there is no memory. */
static void *alloc(size_t count, size_t size)
{
  void *p = calloc(count > 0 ? count : 1, size);
  if (p == NULL) example_die("calloc", DART_ERR_NOMEM);
  return p;
}

static int compare_u64(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static int owns(const local_t *l, uint64_t col)
{
  return col >= l->first && col - l->first < l->rows;
}

/* Unit me's rows in local numbering: the ghosts are the distinct columns
 * it does not own, sorted. */
static void local_build(local_t *l, const matrix_t *m, int me)
{
  size_t width = (size_t)m->k + 1;
  l->first = m->per_unit * (uint64_t)me;
  l->rows = l->first >= m->n ? 0
            : m->n - l->first < m->per_unit ? (size_t)(m->n - l->first)
                                            : (size_t)m->per_unit;
  size_t entries = l->rows * width;
  uint64_t *global = alloc(entries, sizeof *global);
  l->ghost = alloc(entries, sizeof *l->ghost);
  l->col = alloc(entries, sizeof *l->col);
  l->val = alloc(entries, sizeof *l->val);
  size_t far = 0;
  for (size_t r = 0; r < l->rows; r++)
    for (size_t e = 0; e < width; e++) {
      uint64_t row = l->first + r, c = column(m, row, (int)e);
      global[r * width + e] = c;
      l->val[r * width + e] = value(row, c);
      if (!owns(l, c)) l->ghost[far++] = c;
    }
  qsort(l->ghost, far, sizeof *l->ghost, compare_u64);
  l->nghost = 0;
  for (size_t i = 0; i < far; i++)
    if (l->nghost == 0 || l->ghost[l->nghost - 1] != l->ghost[i])
      l->ghost[l->nghost++] = l->ghost[i];
  for (size_t i = 0; i < entries; i++) {
    uint64_t c = global[i];
    if (owns(l, c)) {
      l->col[i] = (size_t)(c - l->first);
    } else {
      const uint64_t *g =
          bsearch(&c, l->ghost, l->nghost, sizeof c, compare_u64);
      l->col[i] = l->rows + (size_t)(g - l->ghost);
    }
  }
  free(global);
}

static void local_free(local_t *l)
{
  free(l->ghost);
  free(l->col);
  free(l->val);
}

/* The plan: ghost g is element rows + g of the local layout and reads
 * the entry of its column on the owner. */
static dart_ret_t plan_create(const local_t *l, const matrix_t *m,
                              dart_plan_t *plan)
{
  size_t *ilocal = alloc(l->nghost, sizeof *ilocal);
  dart_plan_root_t *iremote = alloc(l->nghost, sizeof *iremote);
  for (size_t g = 0; g < l->nghost; g++) {
    ilocal[g] = l->rows + g;
    iremote[g].unit = DART_TEAM_UNIT_ID((dart_unit_t)(l->ghost[g] /
                                                      m->per_unit));
    iremote[g].index = (size_t)(l->ghost[g] % m->per_unit);
  }
  dart_ret_t ret = dart_plan_create(DART_TEAM_ALL, l->rows, l->nghost,
                                    ilocal, iremote, DART_TYPE_DOUBLE, plan);
  free(ilocal);
  free(iremote);
  return ret;
}

/* y = A x for this unit's rows; x in the local layout, ghosts current. */
static void multiply(const local_t *l, int k, const double *x, double *y)
{
  size_t width = (size_t)k + 1;
  for (size_t r = 0; r < l->rows; r++) {
    double sum = 0;
    for (size_t i = r * width; i < (r + 1) * width; i++)
      sum += l->val[i] * x[l->col[i]];
    y[r] = sum;
  }
}

/* This unit's rows' terms of z = A^T w, summed per local column. */
static void multiply_transposed(const local_t *l, int k, const double *w,
                                double *zl)
{
  size_t width = (size_t)k + 1;
  memset(zl, 0, (l->rows + l->nghost) * sizeof *zl);
  for (size_t r = 0; r < l->rows; r++)
    for (size_t i = r * width; i < (r + 1) * width; i++)
      zl[l->col[i]] += l->val[i] * w[r];
}

/* Wrong values of this unit's y and z in iteration iter: the serial
 * product from the formulas, y from this unit's rows, z from every row of
 * A into zref. */
static long check(const matrix_t *m, const local_t *l, int iter,
                  const double *y, const double *z, double *zref)
{
  long wrong = 0;
  for (size_t r = 0; r < l->rows; r++) {
    uint64_t row = l->first + r;
    double sum = 0;
    for (int e = 0; e <= m->k; e++) {
      uint64_t c = column(m, row, e);
      sum += value(row, c) * x_value(c, iter);
    }
    wrong += y[r] != sum;
  }
  memset(zref, 0, l->rows * sizeof *zref);
  for (uint64_t row = 0; row < m->n; row++)
    for (int e = 0; e <= m->k; e++) {
      uint64_t c = column(m, row, e);
      if (owns(l, c))
        zref[c - l->first] += value(row, c) * w_value(row, iter);
    }
  for (size_t r = 0; r < l->rows; r++) wrong += z[r] != zref[r];
  return wrong;
}

int main(int argc, char **argv)
{
  TRY(dart_init(&argc, &argv));
  dart_global_unit_t me;
  size_t units;
  TRY(dart_myid(&me));
  TRY(dart_size(&units));
  long long n = 100000;
  int iters = 10, opt;
  matrix_t m = {.k = 8, .seed = 1};
  while ((opt = getopt(argc, argv, "n:k:i:s:")) != -1) {
    if (opt == 'n') n = atoll(optarg);
    else if (opt == 'k') m.k = atoi(optarg);
    else if (opt == 'i') iters = atoi(optarg);
    else if (opt == 's') m.seed = strtoull(optarg, NULL, 0);
    else n = 0;
  }
  /* 2^32 rows of 1001 entries are far beyond any machine's memory */
  if (n < 1 || n > (1LL << 32) || m.k < 0 || m.k > 1000 || iters < 1) {
    if (me.id == 0)
      fprintf(stderr, "usage: spmv [-n rows] [-k entries] [-i iterations] "
                      "[-s seed]\n"
                      "  rows within 1 .. 2^32, entries per row besides "
                      "the diagonal within 0 .. 1000, iterations >= 1\n");
    dart_exit();
    return 2;
  }
  m.n = (uint64_t)n;
  m.per_unit = (m.n + units - 1) / units;

  local_t l;
  local_build(&l, &m, me.id);
  dart_plan_t plan;
  /* Barriers around what is timed: no unit's earlier work or check runs
   * during another unit's timed part (where units outnumber the cores,
   * they would take its core). */
  TRY(dart_barrier(DART_TEAM_ALL));
  double t0 = example_now();
  TRY(plan_create(&l, &m, &plan));
  double setup = example_now() - t0;

  /* x and zl in the local layout: own entries, then ghosts */
  size_t span = l.rows + l.nghost;
  double *x = alloc(span, sizeof *x), *zl = alloc(span, sizeof *zl);
  double *y = alloc(l.rows, sizeof *y), *w = alloc(l.rows, sizeof *w);
  double *zref = alloc(l.rows, sizeof *zref);
  double seconds = 0;
  long wrong = 0;
  for (int it = 0; it < iters; it++) {
    for (size_t r = 0; r < l.rows; r++) {
      x[r] = x_value(l.first + r, it);
      w[r] = w_value(l.first + r, it);
    }
    TRY(dart_barrier(DART_TEAM_ALL));
    t0 = example_now();
    TRY(dart_plan_bcast_begin(plan, x, x, DART_OP_REPLACE));
    multiply_transposed(&l, m.k, w, zl); /* touches neither x nor ghosts */
    TRY(dart_plan_bcast_end(plan, x, x, DART_OP_REPLACE));
    multiply(&l, m.k, x, y);
    TRY(dart_plan_reduce_begin(plan, zl, zl, DART_OP_SUM));
    TRY(dart_plan_reduce_end(plan, zl, zl, DART_OP_SUM));
    seconds += example_now() - t0;
    TRY(dart_barrier(DART_TEAM_ALL));
    wrong += check(&m, &l, it, y, zl, zref);
  }

  /* the slowest unit's times; the ghosts' spread shows the irregularity */
  double mine[2] = {setup, seconds}, slowest[2];
  unsigned long long ghosts = l.nghost, fewest, most, all;
  long total_wrong;
  TRY(dart_allreduce(mine, slowest, 2, DART_TYPE_DOUBLE, DART_OP_MAX,
                     DART_TEAM_ALL));
  TRY(dart_allreduce(&ghosts, &fewest, 1, DART_TYPE_ULONGLONG, DART_OP_MIN,
                     DART_TEAM_ALL));
  TRY(dart_allreduce(&ghosts, &most, 1, DART_TYPE_ULONGLONG, DART_OP_MAX,
                     DART_TEAM_ALL));
  TRY(dart_allreduce(&ghosts, &all, 1, DART_TYPE_ULONGLONG, DART_OP_SUM,
                     DART_TEAM_ALL));
  TRY(dart_allreduce(&wrong, &total_wrong, 1, DART_TYPE_LONG, DART_OP_SUM,
                     DART_TEAM_ALL));
  if (me.id == 0) {
    printf("spmv: %zu units, %" PRIu64 " rows of %d entries (seed %" PRIu64
           "), %d iterations\n",
           units, m.n, m.k + 1, m.seed, iters);
    printf("spmv: ghosts per unit %llu .. %llu, %llu in all; plan set-up "
           "%.1f us\n",
           fewest, most, all, slowest[0] * 1e6);
    printf("spmv: %.2f us per iteration (bcast of x, y = A x, reduce of "
           "z = A^T w)\n",
           slowest[1] / iters * 1e6);
    printf("spmv: check of y and z: %ld wrong values: %s\n", total_wrong,
           total_wrong == 0 ? "PASSED" : "FAILED");
  }
  free(x);
  free(zl);
  free(y);
  free(w);
  free(zref);
  TRY(dart_plan_destroy(&plan));
  local_free(&l);
  TRY(dart_exit());
  return total_wrong == 0 ? 0 : 1;
}
