/*
 * The transport interface's shared state: the paths' table and
 * properties, the operations counted per path, and the flag of puts by
 * CPU stores that a flush must fence (transport.h).
 */
#include "transport/transport.h"

#include "base/fence.h"
#include "base/log.h"
#include "types/atomic_apply.h"

const dart__path_ops_t *const dart__transport__paths[DART_PATH_COUNT] = {
    [DART__PATH_SELF] = &dart__path_self,
    [DART__PATH_SHM] = &dart__path_shm,
    [DART__PATH_MPI] = &dart__path_mpi,
#ifdef DART_HAVE_UCX
    [DART__PATH_UCX] = &dart__path_ucx,
#endif
    [DART__PATH_CMA] = &dart__path_cma,
    [DART__PATH_IPC] = &dart__path_ipc,
    [DART__PATH_STAGE] = &dart__path_stage,
    [DART__PATH_OWNER] = &dart__path_owner,
};

_Atomic uint64_t dart__transport__path_ops[DART_PATH_COUNT];

dart_ret_t dart__transport__flush_all(const char *func, dart__team_t *team)
{
  dart_ret_t first = DART_OK;
  for (int p = 0; p < DART_PATH_COUNT; p++) {
    const dart__path_ops_t *path = dart__transport__paths[p];
    if (path == NULL || path->flush_all == NULL) continue;
    dart_ret_t ret = path->flush_all(func, team);
    if (first == DART_OK) first = ret;
  }
  return first;
}

/* own memory by load and store, then mapped device memory, then a node
 * peer's private memory, then the remote transport; MPI reaches any host
 * memory attached to a window */
static const int reach_order[] = {DART__PATH_SELF,  DART__PATH_SHM,
                                  DART__PATH_IPC,   DART__PATH_CMA,
                                  DART__PATH_UCX,   DART__PATH_STAGE,
                                  DART__PATH_MPI};

dart_ret_t dart__transport__route(const char *func, const dart__reach_t *q,
                                  dart__route_t *r)
{
  for (size_t i = 0; i < sizeof reach_order / sizeof *reach_order; i++) {
    const int p = reach_order[i];
    const dart__path_ops_t *path = dart__transport__paths[p];
    bool reached = false;
    if (!dart__transport__usable(p) || path->reach == NULL) continue;
    dart_ret_t ret = path->reach(func, q, r, &reached);
    if (ret != DART_OK) return ret;
    if (reached) {
      r->path = p;
      return DART_OK;
    }
  }
  DART_LOG_ERROR_IN(func, "no path reaches the %s memory of unit %d",
                    q->device ? "device" : "host", q->unit);
  return DART_ERR_OTHER;
}

const dart__path_props_t dart__path_props[DART_PATH_COUNT] = {
    [DART__PATH_SELF] = {.load_store = true,
                         .mapped = true,
                         .atomic_follows_puts = true},
    [DART__PATH_SHM] = {.load_store = true,
                        .mapped = true,
                        .atomic_follows_puts = true},
    [DART__PATH_MPI] = {.costly_progress = true, .atomic_follows_puts = true},
    [DART__PATH_UCX] = {.target_progress = true},
    [DART__PATH_CMA] = {0},
    [DART__PATH_IPC] = {.mapped = true,
                        .device = true,
                        .atomic_follows_puts = true},
    [DART__PATH_STAGE] = {.device = true, .target_progress = true},
    [DART__PATH_OWNER] = {.target_progress = true},
};

atomic_bool dart__transport__stores_unfenced;

void dart__transport__atomic_apply(const dart__atomic_t *a, const void *old,
                                   const void *operand, void *out)
{
  dart__types__apply_value((int)a->type, (int)a->op, old, operand, out);
}

dart_ret_t dart__transport__sync(const char *func, bool fence)
{
  dart_ret_t ret = DART_OK;
  for (int p = 0; p < DART_PATH_COUNT && ret == DART_OK; p++) {
    const dart__path_ops_t *path = dart__transport__paths[p];
    if (path != NULL && path->sync != NULL) ret = path->sync(func);
  }
  if (fence) dart__base__fence();
  return ret;
}
