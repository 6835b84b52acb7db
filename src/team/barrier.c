#include "team/barrier.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/env.h"
#include "base/runtime.h"
#include "progress/progress.h"
#include "team/team.h"
#include "transport/transport.h"

/* Node peers count themselves in; the leader, once all are in and the
 * other nodes' leaders are too, releases them by publishing the number of
 * barriers passed. Separate lines: arrivals do not disturb the waiters. */
struct dart__barrier_cells {
  _Alignas(128) atomic_uint arrived;
  _Alignas(128) atomic_uint released;
  atomic_int status; /* the leaders' barrier's, set before released */
};

dart_ret_t dart__team__barrier_init(dart__team_t *team)
{
  dart__barrier_t *b = &team->barrier;
  b->cells = NULL;
  b->win = MPI_WIN_NULL;
  b->leaders = MPI_COMM_NULL;
  b->remote = NULL;
  b->passed = 0;
  if (!dart__base__config.shm) return DART_OK;
  /* the same on every unit: a team spans nodes on all its units or none */
  const bool spans_nodes = team->node_size < team->size;
  const bool leader = team->node_rank[team->myid] == 0;
  if (spans_nodes &&
      MPI_Comm_split(team->comm, leader ? 0 : MPI_UNDEFINED, team->myid,
                     &b->leaders) != MPI_SUCCESS) {
    DART_LOG_ERROR("MPI_Comm_split of the node leaders failed for team %d",
                   team->id);
    return DART_ERR_OTHER;
  }
  if (team->node_size == 1) return DART_OK;
  /* room to align the cells: Open MPI starts shared windows anywhere */
  const size_t align = _Alignof(struct dart__barrier_cells);
  const size_t room = sizeof *b->cells + align;
  void *mine;
  if (MPI_Win_allocate_shared(leader ? (MPI_Aint)room : 0, 1, MPI_INFO_NULL,
                              team->node_comm, &mine, &b->win) !=
      MPI_SUCCESS) {
    DART_LOG_ERROR("MPI_Win_allocate_shared for the barrier of team %d "
                   "failed", team->id);
    goto fail_leaders;
  }
  MPI_Aint size;
  int disp;
  char *base;
  if (MPI_Win_shared_query(b->win, 0, &size, &disp, &base) != MPI_SUCCESS ||
      (size_t)size < room) {
    DART_LOG_ERROR("the barrier cells of team %d are not usable", team->id);
    goto fail_win;
  }
  /* mappings start on pages: the same offset in every process */
  void *cells = base + (align - (uintptr_t)base % align) % align;
  if (leader) {
    struct dart__barrier_cells *init = cells;
    atomic_init(&init->arrived, 0);
    atomic_init(&init->released, 0);
    atomic_init(&init->status, DART_OK);
  }
  /* nobody arrives before the leader has set the cells */
  if (MPI_Barrier(team->node_comm) != MPI_SUCCESS) {
    DART_LOG_ERROR("MPI_Barrier on the node of team %d failed", team->id);
    goto fail_win;
  }
  b->cells = cells;
  return DART_OK;

fail_win:
  MPI_Win_free(&b->win);
fail_leaders:
  if (b->leaders != MPI_COMM_NULL) MPI_Comm_free(&b->leaders);
  return DART_ERR_OTHER;
}

/* The units that meet through MPI, this one among them: the node
 * leaders', or the whole team without node-shared cells; or none. */
static MPI_Comm across_nodes(const dart__team_t *team)
{
  return dart__base__config.shm ? team->barrier.leaders : team->comm;
}

dart_ret_t dart__team__barrier_remote_start(const char *func,
                                            dart__team_t *team)
{
  const dart__path_ops_t *remote = dart__transport__remote();
  MPI_Comm comm = across_nodes(team);
  if (comm == MPI_COMM_NULL || remote->barrier_create == NULL) return DART_OK;
  return remote->barrier_create(func, comm, &team->barrier.remote);
}

void dart__team__barrier_remote_stop(dart__team_t *team)
{
  if (team->barrier.remote == NULL) return;
  dart__transport__remote()->barrier_destroy(team->barrier.remote);
  team->barrier.remote = NULL;
}

static dart_ret_t meet_across_nodes(const char *func, dart__team_t *team)
{
  if (team->barrier.remote != NULL)
    return dart__transport__remote()->barrier(func, team->barrier.remote);
  return dart__progress__barrier(func, across_nodes(team));
}

void dart__team__barrier_fini(dart__team_t *team)
{
  dart__team__barrier_remote_stop(team);
  dart__barrier_t *b = &team->barrier;
  if (b->win != MPI_WIN_NULL) MPI_Win_free(&b->win);
  if (b->leaders != MPI_COMM_NULL) MPI_Comm_free(&b->leaders);
  b->cells = NULL;
}

dart_ret_t dart__team__barrier(const char *func, dart__team_t *team)
{
  dart__barrier_t *b = &team->barrier;
  if (!dart__base__config.shm) return meet_across_nodes(func, team);
  struct dart__barrier_cells *cells = b->cells;
  const unsigned next = b->passed + 1;
  unsigned spins = 0;
  dart_ret_t ret = DART_OK;
  if (cells != NULL && team->node_rank[team->myid] != 0) {
    atomic_fetch_add_explicit(&cells->arrived, 1, memory_order_acq_rel);
    while (atomic_load_explicit(&cells->released, memory_order_acquire) !=
           next)
      dart__progress__wait_turn(&spins);
    b->passed = next;
    /* the leader has logged a failure */
    return atomic_load_explicit(&cells->status, memory_order_relaxed);
  }
  if (cells != NULL) {
    const unsigned peers = (unsigned)team->node_size - 1;
    while (atomic_load_explicit(&cells->arrived, memory_order_acquire) !=
           peers)
      dart__progress__wait_turn(&spins);
    /* nobody counts in again before the release below */
    atomic_store_explicit(&cells->arrived, 0, memory_order_relaxed);
  }
  if (b->leaders != MPI_COMM_NULL) ret = meet_across_nodes(func, team);
  /* released after a failure too: the node peers return it */
  if (cells != NULL) {
    atomic_store_explicit(&cells->status, ret, memory_order_relaxed);
    atomic_store_explicit(&cells->released, next, memory_order_release);
  }
  b->passed = next;
  return ret;
}
