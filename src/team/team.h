/* Teams: communicators, node split, dynamic window, segment table. */
#ifndef DART__TEAM__TEAM_H_
#define DART__TEAM__TEAM_H_

#include <dart/dart_team_group.h>
#include <mpi.h>
#include <stdbool.h>

#include "globmem/segment.h"

#define DART__MAX_TEAMS 32768

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
  bool win_dirty;       /* MPI operations issued since the last flush */
  dart__segtab_t segs;
  struct dart__team *next_with_win;
} dart__team_t;

extern dart__team_t *dart__team__table[DART__MAX_TEAMS];

static inline dart__team_t *dart__team__get(dart_team_t id)
{
  return id >= 0 ? dart__team__table[id] : NULL;
}

/* The team or NULL with an error line naming func. */
dart__team_t *dart__team__lookup(const char *func, dart_team_t id);

/* Collective: gives the team its dynamic window if it has none yet. */
dart_ret_t dart__team__ensure_window(dart__team_t *team);

/* Completes the MPI operations issued on team's window since its last
 * flush (none: returns at once), and syncs the window with direct access. */
dart_ret_t dart__team__flush_window(dart__team_t *team);

/* Completes everything this unit started on the remote transports:
 * dart__team__flush_window on every team with a window, and UCX. */
dart_ret_t dart__team__flush_dirty(void);

/* Synchronises the public and private copies of every dynamic window
 * (MPI_Win_sync), so that direct loads and stores and RMA see each other
 * across a barrier. */
dart_ret_t dart__team__sync_windows(void);

/* Team DART_TEAM_ALL and the node map; and their teardown at exit. */
dart_ret_t dart__team__init_all(void);
void dart__team__fini_all(void);

#endif
