/*
 * Latency of atomics: unit 0 applies fetch-and-add and compare-and-swap to
 * a 64-bit word of unit 1, one complete operation after the other:
 *   dart       dart_fetch_and_op (DART_OP_SUM), dart_compare_and_swap
 *   cpu        __atomic_fetch_add, __atomic_compare_exchange_n on an MPI-3
 *              shared window (the floor; only where unit 1 shares the node)
 *   mpi_dyn    MPI_Fetch_and_op, MPI_Compare_and_swap + MPI_Win_flush on a
 *              dynamic window
 * and fetch-and-add in windows of WINDOW operations in flight at once:
 *   dart_handles  dart_fetch_and_op_handle, then dart_waitall
 *   mpi_dyn_win   MPI_Fetch_and_op, then one MPI_Win_flush
 * Each compare-and-swap succeeds (it expects the value the last one
 * left), and every run checks the counter and the results it saw (a
 * window's, in any order, are the values before it and after).
 */
#define _POSIX_C_SOURCE 200809L
#include <dart/dart.h>
#include <dart/dart_ext.h>
#include <mpi.h>
#include <dart/dart_signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "dart_bench.h"
#include "pair.h"

static bench_pair_t pair; /* unit 1's word: dart, shared, dynamic */
static int failed;

typedef enum { FETCH_ADD, CAS } op_t;

/* n operations starting from the counter value at; returns the value the
 * last one saw, or UINT64_MAX on an error */
static uint64_t run(int impl, op_t op, uint64_t at, long n)
{
  uint64_t one = 1, old = 0;
  for (long i = 0; i < n; i++) {
    uint64_t expect = at + (uint64_t)i, next = expect + 1;
    int ok = 1;
    switch (impl) {
    case 0:
      ok = (op == FETCH_ADD ? dart_fetch_and_op(pair.target, &one, &old,
                                                DART_TYPE_ULONGLONG,
                                                DART_OP_SUM)
                            : dart_compare_and_swap(pair.target, &next, &expect,
                                                    &old,
                                                    DART_TYPE_ULONGLONG)) ==
           DART_OK;
      break;
    case 1:
      if (op == FETCH_ADD) {
        old = __atomic_fetch_add((uint64_t *)pair.shm_peer, one, __ATOMIC_SEQ_CST);
      } else {
        old = expect;
        __atomic_compare_exchange_n((uint64_t *)pair.shm_peer, &old, next, 0, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST);
      }
      break;
    default:
      if (op == FETCH_ADD)
        MPI_Fetch_and_op(&one, &old, MPI_UINT64_T, 1, pair.dyn_peer,
                         MPI_SUM, pair.dyn_win);
      else
        MPI_Compare_and_swap(&next, &expect, &old, MPI_UINT64_T, 1,
                             pair.dyn_peer, pair.dyn_win);
      MPI_Win_flush(1, pair.dyn_win);
      break;
    }
    if (!ok || old != expect) {
      fprintf(stderr, "bench_atomic: impl %d op %d: saw %llu, not %llu\n",
              impl, (int)op, (unsigned long long)old,
              (unsigned long long)expect);
      failed = 1;
      return UINT64_MAX;
    }
  }
  return old;
}

#define WINDOW 16

/* Fetch-and-adds in windows (impl 3: dart handles, 4: MPI) from the
 * counter value at; returns the last value seen, UINT64_MAX on an error. */
static uint64_t run_window(int impl, uint64_t at, long n)
{
  const uint64_t one = 1;
  uint64_t old[WINDOW];
  dart_handle_t h[WINDOW];
  for (long first = 0; first < n; first += WINDOW) {
    int w = n - first < WINDOW ? (int)(n - first) : WINDOW, ok = 1;
    for (int i = 0; i < w && ok; i++)
      ok = impl == 3 ? dart_fetch_and_op_handle(pair.target, &one, &old[i],
                                                DART_TYPE_ULONGLONG,
                                                DART_OP_SUM, &h[i]) == DART_OK
                     : MPI_Fetch_and_op(&one, &old[i], MPI_UINT64_T, 1,
                                        pair.dyn_peer, MPI_SUM,
                                        pair.dyn_win) == MPI_SUCCESS;
    if (ok)
      ok = impl == 3 ? dart_waitall(h, (size_t)w) == DART_OK
                     : MPI_Win_flush(1, pair.dyn_win) == MPI_SUCCESS;
    /* each value from at + first on, once */
    char seen[WINDOW];
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < w && ok; i++) {
      uint64_t k = old[i] - (at + (uint64_t)first);
      ok = k < (uint64_t)w && !seen[k];
      if (ok) seen[k] = 1;
    }
    if (!ok) {
      fprintf(stderr, "bench_atomic: impl %d: a window from %llu failed\n",
              impl, (unsigned long long)(at + (uint64_t)first));
      failed = 1;
      return UINT64_MAX;
    }
  }
  return at + (uint64_t)n - 1;
}

int main(int argc, char **argv)
{
  bench_opts_t o;
  int me, units;
  if (bench_dart_start(&argc, &argv, &o, &me, &units) < 0) return 1;
  if (units < 2) return bench_dart_skip(me, "bench_atomic needs 2 units");
  bench_pair_open(&pair, sizeof(uint64_t), me);
  /* unit 1's word of each implementation, for the checks */
  uint64_t *words[3] = {(uint64_t *)pair.dart_mine, (uint64_t *)pair.shm_mine,
                        (uint64_t *)pair.dyn_mine};

  static const int word_of[5] = {0, 1, 2, 0, 2};
  uint64_t counter[3] = {0, 0, 0};
  static const char *const names[5] = {"dart", "cpu", "mpi_dyn",
                                       "dart_handles", "mpi_dyn_win"};
  static const char *const ops[2] = {"fetch_add", "cas"};
  for (int impl = 0; impl < 5; impl++) {
    if (impl == 1 && !pair.shared) continue;
    const bool windows = impl >= 3;
    /* the counter (unit 0's view), which the windows go on counting */
    uint64_t at = counter[word_of[impl]];
    for (int op = FETCH_ADD; op <= (windows ? FETCH_ADD : CAS); op++) {
      long iters = 8;
      double times[64];
      int reps = o.reps < 64 ? o.reps : 64;
      for (int r = -1; r < reps; r++) {
        if (me == 0) {
          double t0 = bench_now();
          uint64_t last = windows ? run_window(impl, at, iters)
                                  : run(impl, (op_t)op, at, iters);
          double per = (bench_now() - t0) / (double)iters;
          at = last + 1;
          if (r >= 0) times[r] = per;
          else iters = bench_iters(&o, per, 1);
        }
      }
      if (me == 0)
        bench_row(&o, "atomic", ops[op], names[impl], units, 8,
                  bench_median(times, reps) * 1e6, "us");
    }
    /* the owner checks the counter against what unit 0 did; the others
     * wait in dart_barrier, which serves unit 0's atomics (UCX emulates
     * them on memory it did not allocate, with the target's progress) */
    dart_barrier(DART_TEAM_ALL);
    MPI_Bcast(&at, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    counter[word_of[impl]] = at;
    uint64_t *word = words[word_of[impl]];
    if (me == 1 && __atomic_load_n(word, __ATOMIC_SEQ_CST) != at) {
      fprintf(stderr, "bench_atomic: %s counter is %llu, not %llu\n",
              names[impl], (unsigned long long)*word,
              (unsigned long long)at);
      failed = 1;
    }
  }

  bench_pair_close(&pair);
  int any;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  dart_exit();
  return any ? 1 : 0;
}
