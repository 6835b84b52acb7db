#include "team/team.h"

#include <assert.h>
#include <dart/dart_ext.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/env.h"
#include "base/runtime.h"
#include "progress/progress.h"
#include "team/group.h"
#include "team/locality.h"
#include "transport/transport.h"

dart__team_t *dart__team__table[DART__MAX_TEAMS];
static int next_team_id;

dart__team_t *dart__team__lookup(const char *func, dart_team_t id)
{
  dart__team_t *team = dart__team__get(id);
  if (team == NULL) DART_LOG_ERROR_IN(func, "team %d does not exist", id);
  return team;
}

/* Node index of every global unit: physical nodes, cut into emulated nodes
 * of DART_UNITS_PER_NODE consecutive units when that is set. */
static dart_ret_t compute_nodes(void)
{
  MPI_Comm phys = MPI_COMM_NULL;
  int *world_of = NULL, *leaders = NULL, *index = NULL;
  dart_ret_t ret = DART_ERR_OTHER;
  int prank, psize;
  if (MPI_Comm_split_type(dart__rt.comm, MPI_COMM_TYPE_SHARED, dart__rt.myid,
                          MPI_INFO_NULL, &phys) != MPI_SUCCESS)
    goto out;
  MPI_Comm_rank(phys, &prank);
  MPI_Comm_size(phys, &psize);
  dart__rt.oversubscribed = psize > sysconf(_SC_NPROCESSORS_ONLN);
  world_of = malloc(psize * sizeof *world_of);
  leaders = malloc(dart__rt.size * sizeof *leaders);
  index = calloc(dart__rt.size, sizeof *index);
  dart__rt.node_of = malloc(dart__rt.size * sizeof *dart__rt.node_of);
  if (!world_of || !leaders || !index || !dart__rt.node_of) {
    ret = DART_ERR_NOMEM;
    goto out;
  }
  if (MPI_Allgather(&dart__rt.myid, 1, MPI_INT, world_of, 1, MPI_INT, phys) !=
      MPI_SUCCESS)
    goto out;
  int k = dart__base__config.units_per_node;
  int leader = world_of[k > 0 ? (prank / k) * k : 0];
  if (MPI_Allgather(&leader, 1, MPI_INT, leaders, 1, MPI_INT, dart__rt.comm) !=
      MPI_SUCCESS)
    goto out;
  /* dense node numbers in the order of their first unit */
  for (int u = 0; u < dart__rt.size; u++) index[leaders[u]] = 1;
  int nodes = 0;
  for (int u = 0; u < dart__rt.size; u++)
    if (index[u]) index[u] = ++nodes;
  for (int u = 0; u < dart__rt.size; u++)
    dart__rt.node_of[u] = index[leaders[u]] - 1;
  dart__rt.num_nodes = nodes;
  dart__rt.my_node = dart__rt.node_of[dart__rt.myid];
  ret = DART_OK;
out:
  if (ret == DART_ERR_OTHER) DART_LOG_ERROR("cannot determine the nodes");
  free(index);
  free(leaders);
  free(world_of);
  if (phys != MPI_COMM_NULL) MPI_Comm_free(&phys);
  return ret;
}

#define MAX_PARTS 2
static const dart__team__part_t *parts[MAX_PARTS];
static int nparts;

void dart__team__add_part(const dart__team__part_t *part)
{
  for (int i = 0; i < nparts; i++)
    if (parts[i] == part) return;
  assert(nparts < MAX_PARTS);
  parts[nparts++] = part;
}

/* Builds a team around comm (whose ranks are members[] in order); takes
 * ownership of comm and members on success. */
static dart_ret_t team_setup(dart_team_t id, MPI_Comm comm,
                             dart_unit_t *members, dart__team_t **out)
{
  dart__team_t *team = calloc(1, sizeof *team);
  if (team == NULL) return DART_ERR_NOMEM;
  team->id = id;
  team->comm = comm;
  team->members = members;
  team->node_comm = MPI_COMM_NULL;
  MPI_Comm_size(comm, &team->size);
  MPI_Comm_rank(comm, &team->myid);
  team->node_rank = malloc(team->size * sizeof *team->node_rank);
  if (team->node_rank == NULL) {
    free(team);
    return DART_ERR_NOMEM;
  }
  if (MPI_Comm_split(comm, dart__rt.my_node, team->myid, &team->node_comm) !=
      MPI_SUCCESS) {
    DART_LOG_ERROR("MPI_Comm_split by node failed for team %d", id);
    free(team->node_rank);
    free(team);
    return DART_ERR_OTHER;
  }
  MPI_Comm_size(team->node_comm, &team->node_size);
  int next = 0;
  for (int u = 0; u < team->size; u++)
    team->node_rank[u] =
        dart__rt.node_of[members[u]] == dart__rt.my_node ? next++ : -1;
  const dart__slots_reuse_t reuse = dart__base__config.segid_reuse;
  dart__base__slots_init(&team->segs.alloc, INT16_MAX, reuse);
  dart__base__slots_init(&team->segs.reg, INT16_MAX, reuse);
  team->segs.pool = NULL;
  for (int i = 0; i < nparts; i++) {
    dart_ret_t ret = parts[i]->setup(team);
    if (ret == DART_OK) continue;
    while (i-- > 0) parts[i]->undo(team);
    dart__base__slots_destroy(&team->segs.alloc);
    dart__base__slots_destroy(&team->segs.reg);
    MPI_Comm_free(&team->node_comm);
    free(team->node_rank);
    free(team);
    return ret;
  }
  *out = team;
  return DART_OK;
}

/* Frees what team_setup built and what was added since (not what the
 * release functions free: segments, the paths' state). */
static void team_teardown(dart__team_t *team)
{
  for (int i = nparts - 1; i >= 0; i--) parts[i]->undo(team);
  dart__base__slots_destroy(&team->segs.alloc);
  dart__base__slots_destroy(&team->segs.reg);
  MPI_Comm_free(&team->node_comm);
  MPI_Comm_free(&team->comm);
  free(team->node_rank);
  free(team->members);
  free(team);
}

dart_ret_t dart__team__init_all(void)
{
  dart_ret_t ret = compute_nodes();
  if (ret != DART_OK) return ret;
  dart_unit_t *members = malloc(dart__rt.size * sizeof *members);
  MPI_Comm comm;
  if (members == NULL) return DART_ERR_NOMEM;
  for (int u = 0; u < dart__rt.size; u++) members[u] = u;
  if (MPI_Comm_dup(dart__rt.comm, &comm) != MPI_SUCCESS) {
    free(members);
    DART_LOG_ERROR("MPI_Comm_dup failed");
    return DART_ERR_OTHER;
  }
  dart__team_t *all;
  ret = team_setup(DART_TEAM_ALL, comm, members, &all);
  if (ret != DART_OK) {
    MPI_Comm_free(&comm);
    free(members);
    return ret;
  }
  if ((ret = dart__team__locality_build(all, "dart_init")) != DART_OK) {
    team_teardown(all);
    dart__team__locality_fini();
    free(dart__rt.node_of);
    dart__rt.node_of = NULL;
    return ret;
  }
  dart__team__table[DART_TEAM_ALL] = all;
  next_team_id = DART_TEAM_ALL + 1;
  return DART_OK;
}

#define MAX_RELEASES 8
static dart__team__release_t releases[MAX_RELEASES];
static int nreleases;

void dart__team__on_release(dart__team__release_t release)
{
  for (int i = 0; i < nreleases; i++)
    if (releases[i] == release) return;
  assert(nreleases < MAX_RELEASES);
  releases[nreleases++] = release;
}

static void team_destroy(dart__team_t *team)
{
  dart__team__locality_release(team->id);
  for (int i = 0; i < nreleases; i++) releases[i](team);
  dart__team__table[team->id] = NULL;
  team_teardown(team);
}

void dart__team__fini_all(void)
{
  /* children were created after their parents: destroy newest first */
  for (int id = DART__MAX_TEAMS - 1; id >= 0; id--)
    if (dart__team__table[id]) team_destroy(dart__team__table[id]);
  dart__team__locality_fini();
  free(dart__rt.node_of);
  dart__rt.node_of = NULL;
}

/* ---- public ---- */

dart_ret_t dart_team_create(dart_team_t teamid, const dart_group_t group,
                            dart_team_t *newteam)
{
  DART__CHECK_INIT();
  dart__team_t *parent = dart__team__lookup(__func__, teamid);
  if (parent == NULL) return DART_ERR_INVAL;
  if (group == NULL || newteam == NULL) {
    DART_LOG_ERROR("group %p or newteam %p is NULL", (void *)group,
                   (void *)newteam);
    return DART_ERR_INVAL;
  }
  /* members of the new team must be members of the parent */
  for (size_t i = 0; i < group->size; i++) {
    size_t lo = 0, hi = (size_t)parent->size;
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (parent->members[mid] < group->units[i]) lo = mid + 1;
      else hi = mid;
    }
    if (lo == (size_t)parent->size || parent->members[lo] != group->units[i]) {
      DART_LOG_ERROR("unit %d of the group is not in team %d",
                     group->units[i], teamid);
      return DART_ERR_INVAL;
    }
  }
  /* the entry of the collective: peers may target this unit until then */
  int id;
  MPI_Request req;
  DART__MPI_CHECK(MPI_Iallreduce(&next_team_id, &id, 1, MPI_INT, MPI_MAX,
                                 parent->comm, &req));
  if (dart__progress__wait(__func__, 1, &req) != DART_OK)
    return DART_ERR_OTHER;
  if (id >= DART__MAX_TEAMS) {
    DART_LOG_ERROR("all %d team ids have been used", DART__MAX_TEAMS);
    return DART_ERR_OTHER;
  }
  next_team_id = id + 1;
  MPI_Group world_group, mpi_group;
  MPI_Comm comm;
  DART__MPI_CHECK(MPI_Comm_group(dart__rt.comm, &world_group));
  int ret = MPI_Group_incl(world_group, (int)group->size, group->units,
                           &mpi_group);
  MPI_Group_free(&world_group);
  if (ret != MPI_SUCCESS) {
    DART_LOG_ERROR("MPI_Group_incl failed");
    return DART_ERR_OTHER;
  }
  ret = MPI_Comm_create(parent->comm, mpi_group, &comm);
  MPI_Group_free(&mpi_group);
  if (ret != MPI_SUCCESS) {
    DART_LOG_ERROR("MPI_Comm_create failed");
    return DART_ERR_OTHER;
  }
  if (comm == MPI_COMM_NULL) {
    *newteam = DART_TEAM_NULL;
    return DART_OK;
  }
  dart_unit_t *members = malloc(group->size * sizeof *members);
  if (members == NULL) {
    MPI_Comm_free(&comm);
    return DART_ERR_NOMEM;
  }
  memcpy(members, group->units, group->size * sizeof *members);
  dart__team_t *team;
  dart_ret_t dret = team_setup((dart_team_t)id, comm, members, &team);
  if (dret != DART_OK) {
    free(members);
    MPI_Comm_free(&comm);
    return dret;
  }
  if ((dret = dart__team__locality_build(team, __func__)) != DART_OK) {
    team_teardown(team);
    return dret;
  }
  dart__team__table[id] = team;
  *newteam = (dart_team_t)id;
  return DART_OK;
}

dart_ret_t dart_team_destroy(dart_team_t *teamid)
{
  DART__CHECK_INIT();
  if (teamid == NULL) {
    DART_LOG_ERROR("teamid is NULL");
    return DART_ERR_INVAL;
  }
  if (*teamid == DART_TEAM_ALL) {
    DART_LOG_ERROR("DART_TEAM_ALL cannot be destroyed");
    return DART_ERR_INVAL;
  }
  dart__team_t *team = dart__team__lookup(__func__, *teamid);
  if (team == NULL) return DART_ERR_INVAL;
  team_destroy(team);
  *teamid = DART_TEAM_NULL;
  return DART_OK;
}

dart_ret_t dart_team_get_group(dart_team_t teamid, dart_group_t *group)
{
  DART__CHECK_INIT();
  dart__team_t *team = dart__team__lookup(__func__, teamid);
  if (team == NULL) return DART_ERR_INVAL;
  if (group == NULL) {
    DART_LOG_ERROR("group is NULL");
    return DART_ERR_INVAL;
  }
  return dart__team__group_from_units(team->members, (size_t)team->size,
                                      group);
}

dart_ret_t dart_team_clone(dart_team_t team, dart_team_t *newteam)
{
  DART__CHECK_INIT();
  dart_group_t group;
  dart_ret_t ret = dart_team_get_group(team, &group);
  if (ret != DART_OK) return ret;
  ret = dart_team_create(team, group, newteam);
  dart_group_destroy(&group);
  return ret;
}

dart_ret_t dart_team_myid(dart_team_t teamid, dart_team_unit_t *myid)
{
  DART__CHECK_INIT();
  dart__team_t *team = dart__team__lookup(__func__, teamid);
  if (team == NULL) return DART_ERR_INVAL;
  if (myid == NULL) {
    DART_LOG_ERROR("myid is NULL");
    return DART_ERR_INVAL;
  }
  myid->id = team->myid;
  return DART_OK;
}

dart_ret_t dart_team_size(dart_team_t teamid, size_t *size)
{
  DART__CHECK_INIT();
  dart__team_t *team = dart__team__lookup(__func__, teamid);
  if (team == NULL) return DART_ERR_INVAL;
  if (size == NULL) {
    DART_LOG_ERROR("size is NULL");
    return DART_ERR_INVAL;
  }
  *size = (size_t)team->size;
  return DART_OK;
}

dart_ret_t dart_myid(dart_global_unit_t *myid)
{
  DART__CHECK_INIT();
  if (myid == NULL) {
    DART_LOG_ERROR("myid is NULL");
    return DART_ERR_INVAL;
  }
  myid->id = dart__rt.myid;
  return DART_OK;
}

dart_ret_t dart_size(size_t *size)
{
  DART__CHECK_INIT();
  if (size == NULL) {
    DART_LOG_ERROR("size is NULL");
    return DART_ERR_INVAL;
  }
  *size = (size_t)dart__rt.size;
  return DART_OK;
}

dart_ret_t dart_team_unit_l2g(dart_team_t teamid, dart_team_unit_t localid,
                              dart_global_unit_t *globalid)
{
  DART__CHECK_INIT();
  dart__team_t *team = dart__team__lookup(__func__, teamid);
  if (team == NULL) return DART_ERR_INVAL;
  if (globalid == NULL || localid.id < 0 || localid.id >= team->size) {
    DART_LOG_ERROR("unit %d is not in team %d of %d units (or globalid is "
                   "NULL)", localid.id, teamid, team->size);
    return DART_ERR_INVAL;
  }
  globalid->id = team->members[localid.id];
  return DART_OK;
}

dart_ret_t dart_team_unit_g2l(dart_team_t teamid, dart_global_unit_t globalid,
                              dart_team_unit_t *localid)
{
  DART__CHECK_INIT();
  dart__team_t *team = dart__team__lookup(__func__, teamid);
  if (team == NULL) return DART_ERR_INVAL;
  if (localid == NULL || globalid.id < 0 || globalid.id >= dart__rt.size) {
    DART_LOG_ERROR("global unit %d is invalid (or localid is NULL)",
                   globalid.id);
    return DART_ERR_INVAL;
  }
  int lo = 0, hi = team->size;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (team->members[mid] < globalid.id) lo = mid + 1;
    else hi = mid;
  }
  if (lo == team->size || team->members[lo] != globalid.id) {
    localid->id = DART_UNDEFINED_UNIT_ID;
    return DART_ERR_NOTFOUND;
  }
  localid->id = lo;
  return DART_OK;
}

dart_ret_t dart_node_info(int *num_nodes, int *my_node)
{
  DART__CHECK_INIT();
  if (num_nodes == NULL || my_node == NULL) {
    DART_LOG_ERROR("num_nodes %p or my_node %p is NULL", (void *)num_nodes,
                   (void *)my_node);
    return DART_ERR_INVAL;
  }
  *num_nodes = dart__rt.num_nodes;
  *my_node = dart__rt.my_node;
  return DART_OK;
}
