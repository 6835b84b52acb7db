/*
 * The team barrier: node peers meet in shared memory, and one leader per
 * node (its lowest team unit) meets the other nodes' leaders through MPI.
 * Where waits must poll UCX, MPI's barrier is libnbc's MPI_Ibarrier, 2-3x
 * MPI_Barrier on a node here; the shared-memory one takes 0.9x MPI_Barrier
 * at 2-4 units and half of it at 8 (2 cores), and a halo exchange pays it
 * every sweep. For the same reason the units that meet across nodes do so
 * over UCX with the UCX transport (its barrier slots). DART_SHM=0 keeps no
 * node-shared cells: the whole team meets that way.
 */
#ifndef DART__TEAM__BARRIER_H_
#define DART__TEAM__BARRIER_H_

#include <dart/dart_types.h>
#include <mpi.h>

struct dart__barrier_cells;

typedef struct {
  struct dart__barrier_cells *cells; /* node-shared; NULL: no node peers */
  MPI_Win win;                       /* the window holding cells */
  MPI_Comm leaders; /* node leaders, on leaders of a team spanning nodes */
  void *remote;     /* the remote transport's, instead of MPI's between
                     * those (its path's barrier_create) */
  unsigned passed;  /* barriers this unit has left */
} dart__barrier_t;

struct dart__team;

/* Collective over the team (in team set-up, after node_comm exists). */
dart_ret_t dart__team__barrier_init(struct dart__team *team);
void dart__team__barrier_fini(struct dart__team *team);
/* Collective over the team once the remote transport is up: the units
 * that meet across nodes (node leaders, or all without DART_SHM) meet
 * through its barrier where it has one. */
dart_ret_t dart__team__barrier_remote_start(const char *func,
                                            struct dart__team *team);
void dart__team__barrier_remote_stop(struct dart__team *team);

/* Returns once every unit of the team has entered; serves others'
 * operations while it waits. Logs as func on failure. */
dart_ret_t dart__team__barrier(const char *func, struct dart__team *team);

#endif
