/*
 * GUPS (HPCC RandomAccess) with the same kernel on four implementations,
 * one after the other in one run: a table of 2^n 64-bit words per unit,
 * the units' stretches of HPCC's stream, table[ran % size] ^= ran.
 *   dart        dart_accumulate (DART_OP_BXOR) on global pointers, as
 *               examples/gups does
 *   dart_fetch  dart_fetch_and_op (DART_OP_BXOR), as gups -f does
 *   dart_owner  dart_accumulate on a table whose owners apply its atomics
 *               (dart_am.h, DART_AM_ATOMICS_OWNER): updates of other nodes
 *               batched per target unit into active messages
 *   mpi_alloc   MPI_Accumulate (MPI_BXOR) on an MPI_Win_allocate window,
 *               MPI_Win_flush_all at the end
 *   shm_atomic  __atomic_fetch_xor on an MPI-3 shared window (the node's
 *               limit; only where all units share one node)
 *   ucx         raw UCX (built with UCX, only where the units span nodes):
 *               ucp_atomic_op_nbx (UCP_ATOMIC_OP_XOR) on memory UCX
 *               allocates (raw_ucx.h), to the unit's own memory too as a
 *               portable UCX program must (a network's atomics are not
 *               atomic with the CPU's); a worker flush every CHUNK
 *               updates, after which their operands are reused
 * Five rounds run every implementation in turn; in each, each unit updates
 * for 0.2 s (or its whole stretch of 4 * 2^n updates, whichever ends
 * first). GUP/s = all updates / the slowest unit, the median round's.
 * With --smoke every implementation makes all updates twice and HPCC's
 * check must find the table unchanged.
 *
 *   dartrun -n 4 bench_gups [--log2 n] [bench options]
 */
#define _POSIX_C_SOURCE 200809L
#include <dart/dart.h>
#include <dart/dart_am.h>
#include <dart/dart_ext.h>
#include <mpi.h>
#include <stdint.h>

#include "dart_bench.h"
#include "hpcc.h"
#ifdef BENCH_HAVE_UCX
#include "raw_ucx.h"
#endif

#define CHUNK 1024
#define ROUNDS 5
#define ROUND_SECONDS 0.2

typedef struct {
  int impl;
  uint64_t words, per_unit; /* all, per unit: powers of two */
  int shift;                /* log2(per_unit) */
  dart_gptr_t table;
  MPI_Win win;
  uint64_t **shm; /* each unit's part of the shared window */
#ifdef BENCH_HAVE_UCX
  raw_ucx_t ucx;
  uint64_t operands[CHUNK]; /* until the flush that ends their chunk */
#endif
} gups_t;

enum { DART, DART_FETCH, DART_OWNER, MPI_ALLOC, SHM_ATOMIC, UCX, IMPLS };
static const char *const names[IMPLS] = {"dart",      "dart_fetch",
                                         "dart_owner", "mpi_alloc",
                                         "shm_atomic", "ucx"};

#ifdef BENCH_HAVE_UCX
static const ucp_request_param_t amo_param = {
    .op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE,
    .datatype = ucp_dt_make_contig(sizeof(uint64_t))};

/* Completes every raw update made so far; 1 when they all succeeded. */
static int ucx_complete(const gups_t *g)
{
  const ucp_request_param_t param = {.op_attr_mask = 0};
  return raw_ucx_wait(&g->ucx, ucp_worker_flush_nbx(g->ucx.worker,
                                                    &param)) == 0;
}
#endif

/* Update i of a chunk of CHUNK. */
static int update(gups_t *g, uint64_t ran, uint64_t i)
{
  uint64_t index = ran & (g->words - 1);
  int unit = (int)(index >> g->shift);
  uint64_t offset = index & (g->per_unit - 1);
  switch (g->impl) {
  case DART:
  case DART_OWNER:
  case DART_FETCH: {
    dart_gptr_t gp = g->table;
    gp.unitid = unit;
    gp.addr_or_offs.offset = offset * sizeof(uint64_t);
    uint64_t old;
    return (g->impl != DART_FETCH ? dart_accumulate(gp, &ran, 1, DART_TYPE_ULONGLONG,
                                              DART_OP_BXOR)
                            : dart_fetch_and_op(gp, &ran, &old,
                                                DART_TYPE_ULONGLONG,
                                                DART_OP_BXOR)) == DART_OK;
  }
  case MPI_ALLOC:
    return MPI_Accumulate(&ran, 1, MPI_UINT64_T, unit, (MPI_Aint)offset, 1,
                          MPI_UINT64_T, MPI_BXOR, g->win) == MPI_SUCCESS;
#ifdef BENCH_HAVE_UCX
  case UCX: {
    g->operands[i] = ran;
    ucs_status_ptr_t req = ucp_atomic_op_nbx(
        g->ucx.ep[unit], UCP_ATOMIC_OP_XOR, &g->operands[i], 1,
        g->ucx.remote[unit] + offset * sizeof(uint64_t), g->ucx.rkey[unit],
        &amo_param);
    if (UCS_PTR_IS_ERR(req)) return 0;
    if (req != NULL) ucp_request_free(req); /* goes when it completes */
    return 1;
  }
#endif
  default:
    (void)i;
    __atomic_fetch_xor(&g->shm[unit][offset], ran, __ATOMIC_SEQ_CST);
    return 1;
  }
}

static int complete(const gups_t *g)
{
  if (g->impl == MPI_ALLOC) return MPI_Win_flush_all(g->win) == MPI_SUCCESS;
  if (g->impl <= DART_OWNER) return dart_flush_all(g->table) == DART_OK;
#ifdef BENCH_HAVE_UCX
  if (g->impl == UCX) return ucx_complete(g);
#endif
  return 1;
}

/* A barrier in which the units serve the operations of impl. */
static void sync_units(const gups_t *g)
{
#ifdef BENCH_HAVE_UCX
  if (g->impl == UCX) {
    raw_ucx_sync(&g->ucx);
    return;
  }
#endif
  dart_barrier(DART_TEAM_ALL);
}

/* g runs impl from now on (dart's each on a table of its own). */
static void use(gups_t *g, const dart_gptr_t tables[3], int impl)
{
  g->impl = impl;
  g->table = tables[impl <= DART_OWNER ? impl : DART];
}

/* This unit's updates: the whole stretch, or until seconds have passed
 * (0: no limit). Returns the number made, or -1 on an error. */
static long run(gups_t *g, int me, int units, double seconds)
{
  uint64_t first, count;
  hpcc_stretch(4 * g->words, me, units, &first, &count);
  uint64_t ran = hpcc_starts((int64_t)first);
  double t0 = bench_now();
  uint64_t done = 0;
  while (done < count) {
    uint64_t n = count - done < CHUNK ? count - done : CHUNK;
    for (uint64_t i = 0; i < n; i++) {
      ran = hpcc_next(ran);
      if (!update(g, ran, i)) return -1;
    }
#ifdef BENCH_HAVE_UCX
    if (g->impl == UCX && !ucx_complete(g)) return -1; /* frees operands */
#endif
    done += n;
    if (seconds > 0 && bench_now() - t0 > seconds) break;
  }
  return complete(g) ? (long)done : -1;
}

int main(int argc, char **argv)
{
  bench_opts_t o;
  int me, units, failed = 0;
  int arg = bench_dart_start(&argc, &argv, &o, &me, &units);
  if (arg < 0) return 1;
  int log2 = o.smoke ? 10 : 20;
  if (arg + 1 < argc && strcmp(argv[arg], "--log2") == 0)
    log2 = atoi(argv[arg + 1]);
  if (units & (units - 1))
    return bench_dart_skip(me, "bench_gups needs a power of two units");
  gups_t g = {.per_unit = UINT64_C(1) << log2, .shift = log2};
  g.words = g.per_unit * (uint64_t)units;

  /* the same table for each: three of dart's, MPI window, shared window */
  dart_gptr_t tables[3];
  uint64_t *parts[IMPLS];
  for (int impl = DART; impl <= DART_OWNER; impl++) {
    dart_team_memalloc_atomics(DART_TEAM_ALL, g.per_unit, DART_TYPE_ULONGLONG,
                               impl == DART_OWNER ? DART_AM_ATOMICS_OWNER
                                                  : DART_AM_ATOMICS_DEFAULT,
                               &tables[impl]);
    dart_gptr_t mine = tables[impl];
    mine.unitid = me;
    dart_gptr_getaddr(mine, (void **)&parts[impl]);
  }
  MPI_Win_allocate((MPI_Aint)(g.per_unit * sizeof(uint64_t)),
                   sizeof(uint64_t), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &parts[MPI_ALLOC], &g.win);
  MPI_Win_lock_all(0, g.win);
  /* one node: every unit of the job shares memory with unit 0 */
  dart_gptr_t last = tables[DART];
  last.unitid = units - 1;
  void *addr = NULL;
  dart_gptr_getaddr_shared(last, &addr);
  int local = addr != NULL, one_node;
  MPI_Allreduce(&local, &one_node, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Win shm_win = MPI_WIN_NULL;
  if (one_node) {
    MPI_Win_allocate_shared((MPI_Aint)(g.per_unit * sizeof(uint64_t)),
                            sizeof(uint64_t), MPI_INFO_NULL, MPI_COMM_WORLD,
                            &parts[SHM_ATOMIC], &shm_win);
    g.shm = malloc((size_t)units * sizeof *g.shm);
    for (int u = 0; u < units; u++) {
      MPI_Aint size;
      int disp_unit;
      MPI_Win_shared_query(shm_win, u, &size, &disp_unit, &g.shm[u]);
    }
  }

  bool ucx_on = false;
#ifdef BENCH_HAVE_UCX
  if (!one_node) {
    raw_ucx_open(&g.ucx, g.per_unit * sizeof(uint64_t), UCP_FEATURE_AMO64,
                 "bench_gups");
    parts[UCX] = (uint64_t *)g.ucx.mine;
    ucx_on = g.ucx.on;
  }
#endif
  /* the shared-window kernel only where all units share one node, raw UCX
   * only where they do not */
  const bool present[IMPLS] = {true, true,          true,
                               true, one_node != 0, ucx_on};
  for (int impl = 0; impl < IMPLS; impl++) {
    if (!present[impl]) continue;
    uint64_t base = g.per_unit * (uint64_t)me;
    for (uint64_t i = 0; i < g.per_unit; i++) parts[impl][i] = base + i;
  }
  MPI_Win_sync(g.win);
  /* rounds of every implementation in turn: a machine that speeds up or
   * slows down during the run moves them alike; the median round counts */
  const int rounds = o.smoke ? 1 : ROUNDS;
  double rates[IMPLS][ROUNDS];
  for (int r = 0; r < rounds; r++)
    for (int impl = 0; impl < IMPLS; impl++) {
      if (!present[impl]) continue;
      use(&g, tables, impl);
      sync_units(&g);
      double t0 = bench_now();
      long done = run(&g, me, units, o.smoke ? 0 : ROUND_SECONDS);
      sync_units(&g);
      double seconds = bench_now() - t0;
      if (done < 0) {
        fprintf(stderr, "bench_gups: %s: an update failed\n", names[impl]);
        failed = 1;
      }
      long all = 0;
      MPI_Allreduce(&done, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
      rates[impl][r] = (double)all / seconds * 1e-9;
    }
  for (int impl = 0; impl < IMPLS; impl++) {
    if (!present[impl]) continue;
    if (me == 0)
      bench_row(&o, "gups", "update", names[impl], units, (size_t)log2,
                bench_median(rates[impl], rounds), "GUP/s");
    if (!o.smoke) continue;
    /* HPCC's check: the same updates again restore table[i] = i */
    use(&g, tables, impl);
    if (run(&g, me, units, 0) < 0) failed = 1;
    if (impl == MPI_ALLOC) MPI_Win_sync(g.win);
    sync_units(&g);
    if (impl == MPI_ALLOC) MPI_Win_sync(g.win);
    uint64_t base = g.per_unit * (uint64_t)me, wrong = 0;
    for (uint64_t i = 0; i < g.per_unit; i++)
      wrong += __atomic_load_n(&parts[impl][i], __ATOMIC_SEQ_CST) != base + i;
    if (wrong) {
      fprintf(stderr, "bench_gups: %s: unit %d has %llu wrong entries\n",
              names[impl], me, (unsigned long long)wrong);
      failed = 1;
    }
  }

#ifdef BENCH_HAVE_UCX
  if (!one_node && raw_ucx_close(&g.ucx) != 0) {
    fprintf(stderr, "bench_gups: closing the raw UCX endpoints failed\n");
    failed = 1;
  }
#endif
  if (shm_win != MPI_WIN_NULL) MPI_Win_free(&shm_win);
  free(g.shm);
  MPI_Win_unlock_all(g.win);
  MPI_Win_free(&g.win);
  for (int impl = DART_OWNER; impl >= DART; impl--)
    dart_team_memfree(tables[impl]);
  int any;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  dart_exit();
  return any ? 1 : 0;
}
