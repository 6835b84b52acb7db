/*
 * Latency of atomics: unit 0 applies fetch-and-add and compare-and-swap to
 * a 64-bit word of unit 1, one complete operation after the other:
 *   dart       dart_fetch_and_op (DART_OP_SUM), dart_compare_and_swap
 *   cpu        __atomic_fetch_add, __atomic_compare_exchange_n on an MPI-3
 *              shared window (the floor; only where unit 1 shares the node)
 *   mpi_dyn    MPI_Fetch_and_op, MPI_Compare_and_swap + MPI_Win_flush on a
 *              dynamic window
 * Each compare-and-swap succeeds (it expects the value the last one
 * left), and every run checks the counter and the results it saw.
 */
#define _POSIX_C_SOURCE 200809L
#include <dart/dart.h>
#include <dart/dart_ext.h>
#include <mpi.h>
#include <stdint.h>

#include "bench.h"

static dart_gptr_t dart_word;
static uint64_t *cpu_word;
static MPI_Win dyn_win;
static MPI_Aint dyn_disp;
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
      ok = (op == FETCH_ADD ? dart_fetch_and_op(dart_word, &one, &old,
                                                DART_TYPE_ULONGLONG,
                                                DART_OP_SUM)
                            : dart_compare_and_swap(dart_word, &next, &expect,
                                                    &old,
                                                    DART_TYPE_ULONGLONG)) ==
           DART_OK;
      break;
    case 1:
      if (op == FETCH_ADD) {
        old = __atomic_fetch_add(cpu_word, one, __ATOMIC_SEQ_CST);
      } else {
        old = expect;
        __atomic_compare_exchange_n(cpu_word, &old, next, 0, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST);
      }
      break;
    default:
      if (op == FETCH_ADD)
        MPI_Fetch_and_op(&one, &old, MPI_UINT64_T, 1, dyn_disp, MPI_SUM,
                         dyn_win);
      else
        MPI_Compare_and_swap(&next, &expect, &old, MPI_UINT64_T, 1, dyn_disp,
                             dyn_win);
      MPI_Win_flush(1, dyn_win);
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

int main(int argc, char **argv)
{
  if (dart_init(&argc, &argv) != DART_OK) return 1;
  bench_opts_t o;
  bench_parse(argc, argv, &o);
  dart_global_unit_t myid;
  size_t units;
  dart_myid(&myid);
  dart_size(&units);
  int me = myid.id;
  if (units < 2) {
    if (me == 0) printf("# bench_atomic needs 2 units\n");
    dart_exit();
    return 77;
  }
  uint64_t *words[3] = {NULL, NULL, NULL}; /* unit 1's word of each impl */
  dart_gptr_t seg;
  dart_team_memalloc_aligned(DART_TEAM_ALL, 1, DART_TYPE_ULONGLONG, &seg);
  dart_word = seg;
  dart_word.unitid = 1;
  dart_gptr_t mine = seg;
  mine.unitid = me;
  dart_gptr_getaddr(mine, (void **)&words[0]);
  *words[0] = 0;
  void *peer = NULL;
  dart_gptr_getaddr_shared(dart_word, &peer);
  int shared = me == 0 && peer != NULL;
  MPI_Bcast(&shared, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Win shm_win = MPI_WIN_NULL;
  if (shared) {
    MPI_Comm_split(MPI_COMM_WORLD, me < 2 ? 0 : MPI_UNDEFINED, me, &node);
    if (node != MPI_COMM_NULL) {
      MPI_Win_allocate_shared(sizeof(uint64_t), 1, MPI_INFO_NULL, node,
                              &words[1], &shm_win);
      *words[1] = 0;
      MPI_Aint size;
      int disp_unit;
      MPI_Win_shared_query(shm_win, 1, &size, &disp_unit, &cpu_word);
    }
  }
  words[2] = calloc(1, sizeof(uint64_t));
  MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn_win);
  MPI_Win_attach(dyn_win, words[2], sizeof(uint64_t));
  MPI_Aint my_disp, *disps = malloc(units * sizeof *disps);
  MPI_Get_address(words[2], &my_disp);
  MPI_Allgather(&my_disp, 1, MPI_AINT, disps, 1, MPI_AINT, MPI_COMM_WORLD);
  dyn_disp = disps[1];
  free(disps);
  MPI_Win_lock_all(0, dyn_win);
  dart_barrier(DART_TEAM_ALL);

  static const char *const names[3] = {"dart", "cpu", "mpi_dyn"};
  static const char *const ops[2] = {"fetch_add", "cas"};
  for (int impl = 0; impl < 3; impl++) {
    if (impl == 1 && !shared) continue;
    uint64_t at = 0; /* the counter (unit 0's view) */
    for (int op = FETCH_ADD; op <= CAS; op++) {
      long iters = 8;
      double times[64];
      int reps = o.reps < 64 ? o.reps : 64;
      for (int r = -1; r < reps; r++) {
        if (me == 0) {
          double t0 = bench_now();
          uint64_t last = run(impl, (op_t)op, at, iters);
          double per = (bench_now() - t0) / (double)iters;
          at = last + 1;
          if (r >= 0) times[r] = per;
          else iters = bench_iters(&o, per, 1);
        }
      }
      if (me == 0)
        bench_row(&o, "atomic", ops[op], names[impl], (int)units, 8,
                  bench_median(times, reps) * 1e6, "us");
    }
    /* the owner checks the counter against what unit 0 did */
    MPI_Bcast(&at, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    dart_barrier(DART_TEAM_ALL);
    if (me == 1 && __atomic_load_n(words[impl], __ATOMIC_SEQ_CST) != at) {
      fprintf(stderr, "bench_atomic: %s counter is %llu, not %llu\n",
              names[impl], (unsigned long long)*words[impl],
              (unsigned long long)at);
      failed = 1;
    }
  }

  MPI_Win_unlock_all(dyn_win);
  MPI_Win_detach(dyn_win, words[2]);
  MPI_Win_free(&dyn_win);
  free(words[2]);
  if (shm_win != MPI_WIN_NULL) MPI_Win_free(&shm_win);
  if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
  dart_team_memfree(seg);
  int any;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  dart_exit();
  return any ? 1 : 0;
}
