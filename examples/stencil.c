/*
 * stencil: five-point Jacobi iteration on an n x n float grid (boundary
 * 1.0 above, 0.5 left, 0 elsewhere) split into block rows over the units.
 * Each unit keeps its rows and two halo rows in global memory; after every
 * sweep it puts its edge rows into its neighbours' halos with dart_put,
 * completes them with dart_flush_all and meets everyone in dart_barrier;
 * with -s it puts them with dart_put_signal and waits for its own halos'
 * signals alone (dart_signal.h), with neither flush nor barrier; with -p
 * it keeps its block in private memory and exchanges the halos with a
 * communication plan (dart_plan_create_halo, dart_plan.h), sweeping the
 * interior while the edge rows travel (stencil.h).
 *
 *   dartrun -n 4 ./stencil [-n N] [-i iterations] [-c] [-s | -p]
 *
 * Prints the residual (sum of the squared updates of the last iteration
 * over the whole grid) and the time per iteration. For n <= 256, or with
 * -c, every unit also runs the whole grid serially and compares its own
 * rows bit for bit; exits 1 on any difference.
 */
#define _POSIX_C_SOURCE 200809L
#include <dart/dart.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "example.h"
#include "stencil.h"

/* Cells of this unit's block that differ from the serial run (plus one if
 * the residuals differ by more than rounding of their sums), or -1 when
 * the serial run finds no memory. */
static long check(const stencil_dart_t *s, int iters, double residual)
{
  double d2;
  float *ref = stencil_serial(s->n, iters, &d2);
  if (ref == NULL) return -1;
  double diff = residual > d2 ? residual - d2 : d2 - residual;
  long wrong = diff > 1e-9 * d2;
  size_t ld = stencil_ld(s->n);
  const float *mine = stencil_dart_block(s);
  for (int i = 1; i <= s->rows; i++)
    for (int j = 1; j <= s->n; j++)
      if (mine[(size_t)i * ld + j] != ref[(size_t)(s->first + i) * ld + j])
        wrong++;
  free(ref);
  return wrong;
}

int main(int argc, char **argv)
{
  TRY(dart_init(&argc, &argv));
  dart_global_unit_t me;
  size_t units;
  TRY(dart_myid(&me));
  TRY(dart_size(&units));
  /* the halo exchange: 0 (put, flush, barrier), 's' or 'p' (not both) */
  int n = 512, iters = 100, force_check = 0, exchange = 0, opt;
  while ((opt = getopt(argc, argv, "n:i:csp")) != -1) {
    if (opt == 'n') n = atoi(optarg);
    else if (opt == 'i') iters = atoi(optarg);
    else if (opt == 'c') force_check = 1;
    else if ((opt == 's' || opt == 'p') && (exchange == 0 || exchange == opt))
      exchange = opt;
    else n = -1;
  }
  /* every unit needs a row; 2^15 keeps a one-unit grid within 8 GiB */
  if (n < (int)units || n > 32768 || iters < 1) {
    if (me.id == 0)
      fprintf(stderr, "usage: stencil [-n N] [-i iterations] [-c] [-s | -p]\n"
                      "  N within %zu (the units) .. 32768, iterations >= 1\n",
              units);
    dart_exit();
    return 2;
  }

  stencil_dart_t s;
  TRY(exchange == 'p' ? stencil_dart_alloc_plan(&s, n, me.id, (int)units)
                      : stencil_dart_alloc(&s, n, me.id, (int)units));
  TRY(stencil_dart_reset(&s));
  double t0 = example_now();
  for (int it = 0; it < iters; it++)
    TRY(exchange == 's'   ? stencil_dart_iterate_signal(&s)
        : exchange == 'p' ? stencil_dart_iterate_plan(&s)
                          : stencil_dart_iterate(&s));
  /* the flush version's iterations end in a barrier, the others' do not:
   * the clock stops when the slowest unit is done */
  if (exchange != 0) TRY(dart_barrier(DART_TEAM_ALL));
  double seconds = example_now() - t0;
  double residual;
  TRY(stencil_dart_residual(&s, &residual));

  /* wrong cells over all units; -1 anywhere (no memory) counts as failed */
  long wrong = 0, total = 0;
  int checked = force_check || n <= 256;
  if (checked) wrong = check(&s, iters, residual);
  long failed = wrong != 0, any_failed = 0;
  TRY(dart_allreduce(&wrong, &total, 1, DART_TYPE_LONG, DART_OP_SUM,
                     DART_TEAM_ALL));
  TRY(dart_allreduce(&failed, &any_failed, 1, DART_TYPE_LONG, DART_OP_MAX,
                     DART_TEAM_ALL));
  if (me.id == 0) {
    printf("stencil: %zu units, %dx%d grid, %d iterations%s\n", units, n, n,
           iters,
           exchange == 's'   ? ", dart_put_signal"
           : exchange == 'p' ? ", dart_plan"
                             : "");
    printf("stencil: residual %.9g (sum of squared updates, last iteration)\n",
           residual);
    printf("stencil: %.2f us per iteration\n", seconds / iters * 1e6);
    if (checked)
      printf("stencil: serial check: %ld wrong cells: %s\n", total,
             any_failed ? "FAILED" : "PASSED");
  }
  TRY(stencil_dart_free(&s));
  TRY(dart_exit());
  return any_failed ? 1 : 0;
}
