/*
 * A team's collective state: the node-shared area of its node peers (one
 * MPI shared window, allocated by the node's leader), and the node
 * leaders' communicator with its maps.
 */
#include <stdint.h>
#include <stdlib.h>

#include "base/env.h"
#include "base/runtime.h"
#include "coll/coll.h"
#include "coll/op.h"
#include "progress/progress.h"
#include "transport/transport.h"

/* The node-shared area: one window on the team's node communicator. */
static dart_ret_t area_create(dart__team_t *team, struct dart__coll_team *ct)
{
  /* room to align the members: Open MPI starts shared windows anywhere */
  const size_t align = _Alignof(coll_member_t);
  const size_t room = (size_t)ct->k * sizeof(coll_member_t) + align;
  void *mine;
  if (MPI_Win_allocate_shared(ct->me == 0 ? (MPI_Aint)room : 0, 1,
                              MPI_INFO_NULL, team->node_comm, &mine,
                              &ct->win) != MPI_SUCCESS) {
    DART_LOG_ERROR("MPI_Win_allocate_shared of %zu bytes for the "
                   "collectives of team %d failed", room, team->id);
    return DART_ERR_NOMEM;
  }
  MPI_Aint size;
  int disp;
  char *base;
  if (MPI_Win_shared_query(ct->win, 0, &size, &disp, &base) != MPI_SUCCESS ||
      (size_t)size < room) {
    DART_LOG_ERROR("the collective area of team %d is not usable", team->id);
    MPI_Win_free(&ct->win);
    return DART_ERR_OTHER;
  }
  /* mappings start on pages: the same offset in every process */
  coll_member_t *members =
      (void *)(base + (align - (uintptr_t)base % align) % align);
  /* each member clears its own counters (the data need not be) */
  coll_member_t *m = &members[ct->me];
  atomic_init(&m->arrived, 0);
  atomic_init(&m->posted, 0);
  atomic_init(&m->reduced, 0);
  atomic_init(&m->consumed, 0);
  for (int d = 0; d < COLL_DEPTH; d++) {
    atomic_init(&m->cell[d].seq, 0);
    atomic_init(&m->out[d].seq, 0);
  }
  /* nobody looks at a member before it has cleared its counters */
  if (MPI_Barrier(team->node_comm) != MPI_SUCCESS) {
    DART_LOG_ERROR("MPI_Barrier on the node of team %d failed", team->id);
    MPI_Win_free(&ct->win);
    return DART_ERR_OTHER;
  }
  ct->members = members;
  return DART_OK;
}

/* The rank in the leaders' communicator of each team unit's node leader:
 * the leaders are each node's lowest team unit, ranked in team order. */
static dart_ret_t leader_map(dart__team_t *team, struct dart__coll_team *ct)
{
  ct->leader_of = malloc((size_t)team->size * sizeof *ct->leader_of);
  if (ct->leader_of == NULL) return DART_ERR_NOMEM;
  if (!dart__base__config.shm) {
    for (int u = 0; u < team->size; u++) ct->leader_of[u] = u;
    return DART_OK;
  }
  int *index = malloc((size_t)dart__rt.num_nodes * sizeof *index);
  if (index == NULL) return DART_ERR_NOMEM;
  for (int n = 0; n < dart__rt.num_nodes; n++) index[n] = -1;
  int leaders = 0;
  for (int u = 0; u < team->size; u++) {
    int node = dart__rt.node_of[team->members[u]];
    if (index[node] < 0) index[node] = leaders++;
    ct->leader_of[u] = index[node];
  }
  ct->any_peers = leaders < team->size;
  free(index);
  return DART_OK;
}

static void state_free(struct dart__coll_team *ct)
{
  if (ct->win != MPI_WIN_NULL) MPI_Win_free(&ct->win);
  if (ct->leaders != MPI_COMM_NULL && dart__base__config.shm)
    MPI_Comm_free(&ct->leaders);
  free(ct->leader_of);
  free(ct->node_units);
  free(ct->scratch);
  free(ct);
}

dart_ret_t dart__coll__team_setup(dart__team_t *team)
{
  struct dart__coll_team *ct = calloc(1, sizeof *ct);
  if (ct == NULL) return DART_ERR_NOMEM;
  ct->win = MPI_WIN_NULL;
  ct->leaders = MPI_COMM_NULL;
  atomic_flag_clear(&ct->queue_busy);
  atomic_init(&ct->queued, 0);
  ct->k = team->node_size;
  ct->me = team->node_rank[team->myid];
  dart_ret_t ret = DART_ERR_NOMEM;
  ct->node_units = malloc((size_t)ct->k * sizeof *ct->node_units);
  ct->scratch = malloc(2 * COLL_SMALL);
  if (ct->node_units == NULL || ct->scratch == NULL) goto fail;
  for (int u = 0; u < team->size; u++)
    if (team->node_rank[u] >= 0) ct->node_units[team->node_rank[u]] = u;
  const bool shm = dart__base__config.shm;
  /* the same on every unit: a team spans nodes on all its units or none */
  ct->spans = team->size > 1 && (team->node_size < team->size || !shm);
  ct->leader = ct->spans && (!shm || ct->me == 0);
  if (ct->spans) {
    if (!shm) {
      ct->leaders = team->comm; /* every unit meets the others */
    } else if (MPI_Comm_split(team->comm, ct->leader ? 0 : MPI_UNDEFINED,
                              team->myid, &ct->leaders) != MPI_SUCCESS) {
      DART_LOG_ERROR("MPI_Comm_split of the node leaders failed for team "
                     "%d", team->id);
      ret = DART_ERR_OTHER;
      goto fail;
    }
    if ((ret = leader_map(team, ct)) != DART_OK) goto fail;
    if (ct->leader) {
      MPI_Comm_rank(ct->leaders, &ct->leader_rank);
      MPI_Comm_size(ct->leaders, &ct->leaders_size);
    }
  }
  if (shm && ct->k > 1 && (ret = area_create(team, ct)) != DART_OK)
    goto fail;
  team->coll = ct;
  /* DART_TEAM_ALL's comes once dart_init has started the transport */
  if (dart__rt.initialized &&
      (ret = dart__coll__remote_start("dart_team_create", team)) != DART_OK) {
    team->coll = NULL;
    goto fail;
  }
  return DART_OK;

fail:
  state_free(ct);
  return ret;
}

void dart__coll__team_undo(dart__team_t *team)
{
  struct dart__coll_team *ct = team->coll;
  if (ct == NULL) return;
  dart__coll__forget(team);
  dart__coll__remote_stop(team);
  state_free(ct);
  team->coll = NULL;
}

dart_ret_t dart__coll__remote_start(const char *func, dart__team_t *team)
{
  struct dart__coll_team *ct = team->coll;
  const dart__path_ops_t *remote = dart__transport__remote();
  if (!ct->leader || remote->barrier_create == NULL) return DART_OK;
  return remote->barrier_create(func, ct->leaders, &ct->remote);
}

void dart__coll__remote_stop(dart__team_t *team)
{
  struct dart__coll_team *ct = team->coll;
  if (ct->remote == NULL) return;
  dart__transport__remote()->barrier_destroy(ct->remote);
  ct->remote = NULL;
}
