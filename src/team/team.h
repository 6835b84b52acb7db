/* Teams: communicators, node split, segment table, the paths' state. */
#ifndef DART__TEAM__TEAM_H_
#define DART__TEAM__TEAM_H_

#include <dart/dart_ext.h>
#include <dart/dart_team_group.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/env.h"
#include "base/slots.h"

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
  dart__segtab_t segs;
  struct dart__coll_team *coll; /* its collectives' state (coll/) */
  /* each path's own state for the team (NULL: none yet), which the path
   * frees at the team's release (MPI's window) */
  void *paths[DART_PATH_COUNT];
  /* its active messages (am/am.h), from the first registration on */
  struct dart__am_team *am;
} dart__team_t;

extern dart__team_t *dart__team__table[DART__MAX_TEAMS];

/* What other modules keep per team (its locks, its segments, a path's
 * state) is released by their functions before the team goes
 * (dart_team_destroy, dart_exit), in the order added; each added once, at
 * dart_init. */
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

/* What a module above the team keeps for every team from its start (the
 * collectives' state): setup, collective over the team once its
 * communicators and node ranks exist, and undo when the team goes, after
 * the release functions. Added once, at dart_init before DART_TEAM_ALL. */
typedef struct {
  dart_ret_t (*setup)(dart__team_t *team);
  void (*undo)(dart__team_t *team);
} dart__team__part_t;
void dart__team__add_part(const dart__team__part_t *part);

/* The team or NULL with an error line naming func. */
dart__team_t *dart__team__lookup(const char *func, dart_team_t id);

/* Team DART_TEAM_ALL and the node map; and their teardown at exit. */
dart_ret_t dart__team__init_all(void);
void dart__team__fini_all(void);

#endif
