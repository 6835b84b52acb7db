/*
 * What every benchmark program shares: options, the clock, the median, and
 * the CSV rows the comparison runner (scripts/bench) collects. Plain C, no
 * DART or MPI, so that programs built for other runtimes use it too.
 *
 * One CSV row per measurement, printed by the program's first process:
 *   bench,op,impl,layout,units,size,value,unit
 * e.g. latency,put_blocking,dart,node,2,8,0.0071,us
 * Programs define _POSIX_C_SOURCE 200809L before any include (clock_gettime).
 *
 * Rows are flushed one by one, so a program that crashes late (OpenSHMEM's
 * finalize here) still leaves what it measured.
 */
#ifndef DART_BENCH_H_
#define DART_BENCH_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  int smoke;          /* tiny sizes, few repetitions: correctness only */
  const char *layout; /* label of the unit layout: node, upn1, ... */
  size_t max_size;    /* largest transfer in bytes */
  int reps;           /* timed repetitions; the median is reported */
} bench_opts_t;

/* --smoke, --layout NAME, --max-size BYTES, --reps N; anything else is
 * left for the program (returns its index, or argc when all were ours). */
static inline int bench_parse(int argc, char **argv, bench_opts_t *o)
{
  o->smoke = 0;
  o->layout = "node";
  o->max_size = (size_t)4 << 20;
  o->reps = 0;
  int i = 1;
  for (; i < argc; i++) {
    if (strcmp(argv[i], "--smoke") == 0) {
      o->smoke = 1;
    } else if (strcmp(argv[i], "--layout") == 0 && i + 1 < argc) {
      o->layout = argv[++i];
    } else if (strcmp(argv[i], "--max-size") == 0 && i + 1 < argc) {
      o->max_size = strtoull(argv[++i], NULL, 0);
    } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      o->reps = atoi(argv[++i]);
    } else {
      break;
    }
  }
  if (o->smoke) {
    if (o->max_size > 4096) o->max_size = 4096;
    if (o->reps == 0) o->reps = 3;
  }
  if (o->reps <= 0) o->reps = 11;
  return i;
}

static inline double bench_now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of v[0..n) (reorders v). */
static inline double bench_median(double *v, int n)
{
  qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Operations in one timed repetition, from the seconds one operation took
 * in the warm-up: about 4 ms per repetition, so that the clock does not
 * matter and the whole run stays short; a multiple of window. */
static inline long bench_iters(const bench_opts_t *o, double op_seconds,
                               int window)
{
  long iters = o->smoke ? 4 : (long)(0.004 / (op_seconds + 1e-9));
  if (iters < 10) iters = 10;
  if (iters > 100000) iters = 100000;
  return (iters + window - 1) / window * window;
}

static inline void bench_row(const bench_opts_t *o, const char *bench,
                             const char *op, const char *impl, int units,
                             size_t size, double value, const char *unit)
{
  printf("%s,%s,%s,%s,%d,%zu,%.6g,%s\n", bench, op, impl, o->layout, units,
         size, value, unit);
  fflush(stdout);
}

#endif
