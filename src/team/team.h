/* Teams: communicators, node split, dynamic window, segment table. */
#ifndef DART__TEAM__TEAM_H_
#define DART__TEAM__TEAM_H_

#include <dart/dart_team_group.h>
#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/env.h"
#include "base/slots.h"
#include "team/barrier.h"

#define DART__MAX_TEAMS 32768

/* Per team: positive ids, negative ids, and segment 0. */
typedef struct {
  dart__slots_t alloc; /* segid = slot + 1 */
  dart__slots_t reg;   /* segid = -(slot + 1) */
  struct dart__segment *pool;
} dart__segtab_t;

static inline struct dart__segment *dart__team__segtab_get(
    const dart__segtab_t *tab, int16_t segid)
{
  if (segid > 0) return dart__base__slots_get(&tab->alloc, (uint32_t)segid - 1);
  if (segid < 0)
    return dart__base__slots_get(&tab->reg, (uint32_t)(-(int32_t)segid) - 1);
  return tab->pool;
}


typedef struct dart__team {
  dart_team_t id;
  MPI_Comm comm;      /* ranks = team unit ids */
  MPI_Comm node_comm; /* the team's units on my (emulated) node */
  int size;
  int myid;
  int node_size;
  dart_unit_t *members; /* team unit -> global unit, ascending */
  int *node_rank;       /* team unit -> rank in node_comm, -1 elsewhere */
  MPI_Win win;          /* dynamic window, created on first need */
  /* a bit per unit with MPI operations issued since its last flush
   * (atomic: other threads may issue while one flushes) */
  _Atomic uint64_t *win_dirty;
  bool win_separate;    /* MPI_WIN_SEPARATE: direct access needs Win_sync */
  dart__segtab_t segs;
  dart__barrier_t barrier;
  struct dart__team *next_with_win;
} dart__team_t;

extern dart__team_t *dart__team__table[DART__MAX_TEAMS];

/* What other modules keep per team (its segments, its locks) is released
 * by their functions before the team goes (dart_team_destroy, dart_exit),
 * in the order added; each added once, at dart_init. */
typedef void (*dart__team__release_t)(dart__team_t *team);
void dart__team__on_release(dart__team__release_t release);

static inline dart__team_t *dart__team__get(dart_team_t id)
{
  return id >= 0 ? dart__team__table[id] : NULL;
}

/* Whether this unit loads, stores or copies team unit u's host memory
 * itself: u shares its node, and DART_SHM lets node peers share memory. */
static inline bool dart__team__shm_peer(const dart__team_t *team, int u)
{
  return team->node_rank[u] >= 0 && dart__base__config.shm;
}

/* The team or NULL with an error line naming func. */
dart__team_t *dart__team__lookup(const char *func, dart_team_t id);

/* Collective: gives the team its dynamic window if it has none yet. */
dart_ret_t dart__team__ensure_window(dart__team_t *team);
/* How many teams have a dynamic window (whose MPI one-sided operations may
 * need this unit inside MPI). */
extern atomic_int dart__team__windows;

/* Marks unit as the target of an MPI operation on team's window that
 * waits for a flush; unmark before flushing the unit alone. */
static inline void dart__team__mark_dirty(dart__team_t *team, int unit)
{
  _Atomic uint64_t *word = &team->win_dirty[unit / 64];
  const uint64_t bit = UINT64_C(1) << (unit % 64);
  if (!(atomic_load_explicit(word, memory_order_relaxed) & bit))
    atomic_fetch_or_explicit(word, bit, memory_order_relaxed);
}

static inline void dart__team__unmark_dirty(dart__team_t *team, int unit)
{
  _Atomic uint64_t *word = &team->win_dirty[unit / 64];
  const uint64_t bit = UINT64_C(1) << (unit % 64);
  if (atomic_load_explicit(word, memory_order_relaxed) & bit)
    atomic_fetch_and_explicit(word, ~bit, memory_order_relaxed);
}

/* Completes the MPI operations issued on team's window since their units'
 * last flush (none: returns at once), and syncs the window with direct
 * access. */
dart_ret_t dart__team__flush_window(dart__team_t *team);

/* dart__team__flush_window on every team with a window. */
dart_ret_t dart__team__flush_windows(void);

/* Orders this unit's direct loads and stores of its part of team's window
 * against others' RMA on it. In the separate memory model that takes
 * MPI_Win_sync; in the unified one (Open MPI, MPICH) the copies are one and
 * a memory fence orders them: MPI_Win_sync would also enter MPI's
 * progress, which yields the core when units outnumber cores (3x the cost
 * of a node barrier then). */
dart_ret_t dart__team__sync_window(dart__team_t *team);

/* dart__team__sync_window on every dynamic window, so that direct loads
 * and stores and RMA see each other across a barrier. */
dart_ret_t dart__team__sync_windows(void);

/* Team DART_TEAM_ALL and the node map; and their teardown at exit. */
dart_ret_t dart__team__init_all(void);
void dart__team__fini_all(void);

#endif
