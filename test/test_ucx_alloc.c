/*
 * Memory UCX allocated: with the UCX transport, a part of global memory
 * that no node peer loads or stores is allocated by UCX (DART_UCX_ALLOC),
 * whose shared-memory transports reach it without its owner's progress.
 * (On memory UCX did not allocate they emulate RMA and atomics with
 * messages that only the owner's ucp_worker_progress answers.)
 *
 * Unit 0 works on every other unit's part of a collective allocation and
 * of its dart_memalloc pool: blocking put and get, put + flush,
 * fetch-and-op, compare-and-swap and a fetching XOR (a compare-and-swap
 * loop: UCX 1.13's own is wrong on these transports). Meanwhile the others
 * wait in MPI_Recv, a plain MPI call that drives no DART progress, for
 * unit 0's message that it is done. Were their memory still served by
 * messages, the run would hang and the test's timeout fail it. Each unit
 * then checks the values in its own memory.
 *
 * Registered for the layouts where every part qualifies and the remote
 * transport is UCX over shared memory (upn1.ucx, noshm.ucx); elsewhere
 * (the transport fell back to MPI) it skips.
 */
#include <mpi.h>

#include "dart_test.h"

#define WORD DART_TYPE_ULONGLONG
#define WORDS 4 /* per unit: put, put + flush, fetch-and-op, CAS and XOR */

static int me, n;

static dart_gptr_t word_of(dart_gptr_t g, int unit, int word)
{
  g.unitid = unit;
  g.addr_or_offs.offset += (uint64_t)word * sizeof(uint64_t);
  return g;
}

static uint64_t tag(int unit, int word) { return (uint64_t)unit << 8 | word; }

/* Unit 0's work on unit u's words at g (unit u waits without progress). */
static void work_on(dart_gptr_t g, int u)
{
  uint64_t v = tag(u, 0), back = 0;
  CHECK_OK(dart_put_blocking(word_of(g, u, 0), &v, 1, WORD, WORD));
  CHECK_OK(dart_get_blocking(&back, word_of(g, u, 0), 1, WORD, WORD));
  CHECK_EQ(back, v);
  static uint64_t flushed; /* read until the flush */
  flushed = tag(u, 1);
  CHECK_OK(dart_put(word_of(g, u, 1), &flushed, 1, WORD, WORD));
  CHECK_OK(dart_flush(word_of(g, u, 1)));
  uint64_t add = 5, old = UINT64_MAX;
  CHECK_OK(dart_fetch_and_op(word_of(g, u, 2), &add, &old, WORD, DART_OP_SUM));
  CHECK_EQ(old, 0);
  uint64_t want = 0, swap = 0xC, seen = UINT64_MAX;
  CHECK_OK(dart_compare_and_swap(word_of(g, u, 3), &swap, &want, &seen, WORD));
  CHECK_EQ(seen, 0);
  uint64_t x = 0xA;
  CHECK_OK(dart_fetch_and_op(word_of(g, u, 3), &x, &old, WORD, DART_OP_BXOR));
  CHECK_EQ(old, 0xC);
}

/* Unit u's words after the work: checked in its own memory. */
static void check_mine(dart_gptr_t g)
{
  uint64_t *w;
  CHECK_OK(dart_gptr_getaddr(word_of(g, me, 0), (void **)&w));
  CHECK_EQ(w[0], tag(me, 0));
  CHECK_EQ(w[1], tag(me, 1));
  CHECK_EQ(w[2], 5);
  CHECK_EQ(w[3], 0xC ^ 0xA);
}

int main(int argc, char **argv)
{
  dart_test_init(&argc, &argv);
  dart_global_unit_t id;
  size_t size;
  CHECK_OK(dart_myid(&id));
  CHECK_OK(dart_size(&size));
  me = id.id;
  n = (int)size;
  dart_test_need_ucx();

  /* a collective allocation, and every unit's dart_memalloc block */
  dart_gptr_t segs[2], pool;
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, WORDS, WORD, &segs[0]));
  CHECK_OK(dart_memalloc(WORDS, WORD, &pool));
  uint64_t *mine;
  CHECK_OK(dart_gptr_getaddr(pool, (void **)&mine));
  memset(mine, 0, WORDS * sizeof *mine);
  CHECK_OK(dart_gptr_getaddr(word_of(segs[0], me, 0), (void **)&mine));
  memset(mine, 0, WORDS * sizeof *mine);
  dart_gptr_t *pools = malloc((size_t)n * sizeof *pools);
  CHECK_OK(dart_allgather(&pool, pools, sizeof pool, DART_TYPE_BYTE,
                          DART_TEAM_ALL));
  segs[1] = pools[0];

  /* endpoints and keys made while everybody still serves */
  for (int s = 0; s < 2 && me == 0; s++) {
    for (int u = 1; u < n; u++) {
      dart_gptr_t g = s == 0 ? segs[0] : pools[u];
      uint64_t zero = 0, old;
      CHECK_OK(dart_put_blocking(word_of(g, u, 0), &zero, 1, WORD, WORD));
      CHECK_OK(dart_fetch_and_op(word_of(g, u, 0), &zero, &old, WORD,
                                 DART_OP_SUM));
    }
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  for (int s = 0; s < 2; s++) {
    for (int u = 1; u < n; u++) {
      if (me == 0) {
        work_on(s == 0 ? segs[0] : pools[u], u);
        MPI_Send(&s, 1, MPI_INT, u, 0, MPI_COMM_WORLD);
      } else if (me == u) {
        int from0;
        MPI_Recv(&from0, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK_EQ(from0, s);
        check_mine(s == 0 ? segs[0] : pool);
      }
    }
  }

  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  free(pools);
  CHECK_OK(dart_memfree(pool));
  CHECK_OK(dart_team_memfree(segs[0]));
  return dart_test_finish();
}
