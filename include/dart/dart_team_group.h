/**
 * \file dart_team_group.h
 * Groups (ordered sets of global unit ids) and teams (groups of units that
 * communicate and allocate memory together).
 *
 * Groups are kept sorted by global unit id. A team's unit ids are the ranks
 * of its members in that order.
 *
 * Every function here needs an initialised runtime (DART_ERR_NOTINIT
 * before dart_init and after dart_exit). A NULL argument, an unknown team or
 * a unit id outside its range is DART_ERR_INVAL, with one log line. Groups
 * that a function creates (\c gout, \c group) belong to the caller, who
 * releases them with dart_group_destroy.
 *
 * Thread safety: group functions are safe on distinct groups from any
 * thread. Team creation and destruction are collective and must not run
 * concurrently with other operations on the same teams; the query functions
 * (size, myid, l2g, g2l) are safe from any thread.
 */
#ifndef DART__TEAM_GROUP_H_
#define DART__TEAM_GROUP_H_

#include <dart/dart_types.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A group: an opaque handle to a sorted set of global unit ids. */
typedef struct dart_group_struct *dart_group_t;

/** The null group handle. */
#define DART_GROUP_NULL ((struct dart_group_struct *)NULL)

/** Creates an empty group. */
dart_ret_t dart_group_create(dart_group_t *group) DART_NOTHROW;
/** Destroys a group and sets *group to NULL. */
dart_ret_t dart_group_destroy(dart_group_t *group) DART_NOTHROW;
/** *gout becomes a new group with the members of gin. */
dart_ret_t dart_group_clone(const dart_group_t gin,
                            dart_group_t *gout) DART_NOTHROW;
/** *gout becomes a new group with the members of g1 and g2. */
dart_ret_t dart_group_union(const dart_group_t g1, const dart_group_t g2,
                            dart_group_t *gout) DART_NOTHROW;
/** *gout becomes a new group with the members in both g1 and g2. */
dart_ret_t dart_group_intersect(const dart_group_t g1, const dart_group_t g2,
                                dart_group_t *gout) DART_NOTHROW;
/**
 * Adds a unit (a global id in 0 .. dart_size - 1); adding a member already
 * there changes nothing.
 */
dart_ret_t dart_group_addmember(dart_group_t g,
                                dart_global_unit_t unitid) DART_NOTHROW;
/** Removes a unit; DART_ERR_NOTFOUND if it is not a member. */
dart_ret_t dart_group_delmember(dart_group_t g,
                                dart_global_unit_t unitid) DART_NOTHROW;
/** *ismember becomes 1 if unitid is a member of g, else 0. */
dart_ret_t dart_group_ismember(const dart_group_t g, dart_global_unit_t unitid,
                               int32_t *ismember) DART_NOTHROW;
/** *size becomes the number of members of g. */
dart_ret_t dart_group_size(const dart_group_t g, size_t *size) DART_NOTHROW;
/** Writes the members, sorted, to unitids (room for dart_group_size). */
dart_ret_t dart_group_getmembers(const dart_group_t g,
                                 dart_global_unit_t *unitids) DART_NOTHROW;
/**
 * Splits g into n groups of consecutive members, ceil(size / n) members each
 * but the last non-empty one (10 members, n = 4: 3, 3, 3, 1). gout must have
 * room for n groups; all n are created (empty ones at the end where n
 * exceeds what the members fill) and *nout is the number of non-empty groups.
 */
dart_ret_t dart_group_split(const dart_group_t g, size_t n, size_t *nout,
                            dart_group_t *gout) DART_NOTHROW;
/**
 * Splits g into at most n groups along the domains at \c scope of \c domain
 * (a team's hierarchy from dart_domain_team_locality, or an edited copy;
 * the domains dart_domain_scope_domains returns, in its order): the members
 * of one domain always land in the same group, and consecutive domains
 * holding members are joined so that the groups' sizes are balanced, as
 * dart_domain_split_scope balances units. gout must have room for n groups;
 * all n are created (empty ones at the end where there are fewer domains
 * holding members than n) and *nout is the number of non-empty groups.
 * Members of g found in no domain at \c scope, n = 0 or a scope that is not
 * one of dart_locality_scope_t's are DART_ERR_INVAL.
 */
dart_ret_t dart_group_locality_split(const dart_group_t g,
                                     dart_domain_locality_t *domain,
                                     dart_locality_scope_t scope, size_t n,
                                     size_t *nout,
                                     dart_group_t *gout) DART_NOTHROW;

/** The group of a team's members (a new group the caller destroys). */
dart_ret_t dart_team_get_group(dart_team_t teamid,
                               dart_group_t *group) DART_NOTHROW;
/**
 * Creates a team of the units in \c group, which must be a subset of team
 * \c teamid. Collective over \c teamid; units outside the group get
 * DART_TEAM_NULL.
 */
dart_ret_t dart_team_create(dart_team_t teamid, const dart_group_t group,
                            dart_team_t *newteam) DART_NOTHROW;
/**
 * Destroys a team (collective over its members), freeing every allocation
 * still alive on it, and sets *teamid to DART_TEAM_NULL. DART_TEAM_ALL
 * cannot be destroyed.
 */
dart_ret_t dart_team_destroy(dart_team_t *teamid) DART_NOTHROW;
/** A new team with the members of \c team (collective over it). */
dart_ret_t dart_team_clone(dart_team_t team, dart_team_t *newteam) DART_NOTHROW;
/** The caller's id in team \c teamid (its rank among the members). */
dart_ret_t dart_team_myid(dart_team_t teamid,
                          dart_team_unit_t *myid) DART_NOTHROW;
/** The number of units in team \c teamid. */
dart_ret_t dart_team_size(dart_team_t teamid, size_t *size) DART_NOTHROW;
/** The caller's global id (its id in DART_TEAM_ALL). */
dart_ret_t dart_myid(dart_global_unit_t *myid) DART_NOTHROW;
/** The number of units in DART_TEAM_ALL. */
dart_ret_t dart_size(size_t *size) DART_NOTHROW;
/**
 * The global id of the unit with id \c localid in \c team. DART_ERR_INVAL
 * for an id outside 0 .. team size - 1.
 */
dart_ret_t dart_team_unit_l2g(dart_team_t team, dart_team_unit_t localid,
                              dart_global_unit_t *globalid) DART_NOTHROW;
/**
 * The id in \c team of the unit with global id \c globalid.
 * DART_ERR_NOTFOUND (and DART_UNDEFINED_UNIT_ID in *localid) if it is not a
 * member (without a log line).
 */
dart_ret_t dart_team_unit_g2l(dart_team_t team, dart_global_unit_t globalid,
                              dart_team_unit_t *localid) DART_NOTHROW;

#ifdef __cplusplus
}
#endif

#endif /* DART__TEAM_GROUP_H_ */
