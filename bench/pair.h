/*
 * The target memory of the two-unit benchmarks (unit 0 acts on unit 1),
 * reached three ways: a DART collective allocation, an MPI-3 shared window
 * of units 0 and 1 (only where DART says unit 1 shares unit 0's node) and
 * an MPI dynamic window (attached, passive target, lock_all held). All of
 * it starts zeroed. Collective over all units.
 */
#ifndef DART_BENCH_PAIR_H_
#define DART_BENCH_PAIR_H_

#include <dart/dart.h>
#include <dart/dart_ext.h>
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  dart_gptr_t seg, target; /* the allocation; unit 1's part */
  char *dart_mine;         /* this unit's part */
  int shared;              /* unit 1 is a node peer of unit 0 */
  MPI_Comm node;           /* units 0 and 1 where shared */
  MPI_Win shm_win;
  char *shm_mine, *shm_peer; /* this unit's part; unit 1's, mapped */
  MPI_Win dyn_win;
  char *dyn_block, *dyn_mine; /* dyn_mine inside dyn_block */
  MPI_Aint dyn_peer; /* unit 1's memory in dyn_win */
} bench_pair_t;

static inline void bench_pair_open(bench_pair_t *p, size_t bytes, int me)
{
  memset(p, 0, sizeof *p);
  p->node = MPI_COMM_NULL;
  p->shm_win = MPI_WIN_NULL;
  dart_team_memalloc_aligned(DART_TEAM_ALL, bytes, DART_TYPE_BYTE, &p->seg);
  p->target = p->seg;
  p->target.unitid = 1;
  dart_gptr_t mine = p->seg;
  mine.unitid = me;
  dart_gptr_getaddr(mine, (void **)&p->dart_mine);
  memset(p->dart_mine, 0, bytes);
  void *peer = NULL;
  dart_gptr_getaddr_shared(p->target, &peer);
  p->shared = me == 0 && peer != NULL;
  MPI_Bcast(&p->shared, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (p->shared) {
    MPI_Comm_split(MPI_COMM_WORLD, me < 2 ? 0 : MPI_UNDEFINED, me, &p->node);
    if (p->node != MPI_COMM_NULL) {
      MPI_Win_allocate_shared((MPI_Aint)bytes, 1, MPI_INFO_NULL, p->node,
                              &p->shm_mine, &p->shm_win);
      memset(p->shm_mine, 0, bytes);
      MPI_Aint size;
      int disp_unit;
      MPI_Win_shared_query(p->shm_win, 1, &size, &disp_unit, &p->shm_peer);
    }
  }
  int units;
  MPI_Comm_size(MPI_COMM_WORLD, &units);
  /* at the same offset within its page as DART's part: the kernel's copy
   * between processes (CMA, behind MPI's large messages here) runs 5-10 %
   * slower or faster with how source and destination sit in their pages */
  const size_t page = 4096;
  p->dyn_block = aligned_alloc(page, (bytes / page + 2) * page);
  p->dyn_mine = p->dyn_block + (uintptr_t)p->dart_mine % page;
  memset(p->dyn_mine, 0, bytes);
  MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &p->dyn_win);
  MPI_Win_attach(p->dyn_win, p->dyn_mine, (MPI_Aint)bytes);
  MPI_Aint my_disp, *disps = malloc((size_t)units * sizeof *disps);
  MPI_Get_address(p->dyn_mine, &my_disp);
  MPI_Allgather(&my_disp, 1, MPI_AINT, disps, 1, MPI_AINT, MPI_COMM_WORLD);
  p->dyn_peer = disps[1];
  free(disps);
  MPI_Win_lock_all(0, p->dyn_win);
  dart_barrier(DART_TEAM_ALL);
}

static inline void bench_pair_close(bench_pair_t *p)
{
  MPI_Win_unlock_all(p->dyn_win);
  MPI_Win_detach(p->dyn_win, p->dyn_mine);
  MPI_Win_free(&p->dyn_win);
  free(p->dyn_block);
  if (p->shm_win != MPI_WIN_NULL) MPI_Win_free(&p->shm_win);
  if (p->node != MPI_COMM_NULL) MPI_Comm_free(&p->node);
  dart_team_memfree(p->seg);
}

#endif
