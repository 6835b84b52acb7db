/**
 * \file dart_locality.h
 * Hardware locality: the domain hierarchy of a team's units (hwloc
 * underneath) and operations that remodel a copy of it.
 *
 * A team's hierarchy is a tree of dart_domain_locality_t with five levels,
 * as DART-MPI builds it:
 * - 0, DART_LOCALITY_SCOPE_GLOBAL: the root, tag ".";
 * - 1, DART_LOCALITY_SCOPE_NODE: the team's nodes, in the order of their
 *   first unit (emulated nodes of DART_UNITS_PER_NODE units are nodes);
 * - 2, DART_LOCALITY_SCOPE_MODULE: the host, one per node;
 * - 3, DART_LOCALITY_SCOPE_NUMA: hwloc's NUMA nodes, by logical index;
 * - 4, DART_LOCALITY_SCOPE_CORE: one leaf per unit (the unit's own domain,
 *   its record's domain_tag), by hwloc's logical index of the unit's core,
 *   then unit id; units that share a core have a leaf each.
 *
 * Only domains that hold units of the team exist. A domain's tag is its
 * parent's tag followed by its relative index (".0" is the first node,
 * ".0.0.1" the second NUMA domain of its module); relative indices are
 * consecutive. Every domain lists the global ids of the units below it in
 * ascending order. Its other fields:
 * - \c level: its depth (the root's level plus the distance to the root);
 *   \c relative_index: its position among its parent's subdomains;
 *   \c global_index: its position among the domains of its scope in the
 *   depth-first order of the whole hierarchy.
 * - \c host: the node's host name (for emulated nodes "h#k": host h, k the
 *   node's index in DART_TEAM_ALL), below a node that of the node; above
 *   the nodes the host all subdomains share, else empty.
 * - \c num_nodes: 1 at and below a node, else the nodes below; \c node_id:
 *   the node's index among the team's nodes (the NODE domain's relative
 *   index), or -1 where the domain spans several nodes.
 * - \c num_cores: the cores of the hardware a domain stands for (a module's
 *   and its node's: all cores of the host; a NUMA domain's: all cores of the
 *   NUMA node; a core: 1); the sum over the subdomains for GLOBAL
 *   and GROUP domains.
 * - \c shared_mem_bytes: the memory all units of the domain share: the
 *   host's for nodes and modules, the NUMA node's for NUMA and core
 *   domains, 0 for a domain that spans several nodes, -1 where unknown;
 *   values above INT_MAX are INT_MAX.
 * - \c is_symmetric: 1 if all subdomains have the same scope, cores and
 *   shared memory. \c aliases is NULL and \c num_aliases 0.
 *
 * Each unit's record (dart_unit_locality) describes the core the unit is
 * bound to, or, where its process is not bound to a single core (as with
 * more units than cores, and always with DART_TOPOLOGY), core (node rank
 * modulo the cores of the topology). dart_hwinfo_t as in DART: \c
 * num_cores, \c num_numa and \c num_sockets count the host's cores, NUMA
 * nodes and packages; \c core_id, \c cpu_id (its first PU) and \c numa_id
 * are hwloc logical indices; \c cache_sizes, \c cache_line_sizes and \c
 * cache_ids of level L1 (data or unified) at index 0, L2 at 1 and so on;
 * \c min_threads is 1 and \c max_threads the hardware threads of the core;
 * \c system_memory_bytes and \c numa_memory_bytes are in MiB (as DART fills
 * them); \c scopes lists bottom-up (CORE core_id), (NUMA numa_id),
 * (MODULE 0), (NODE node index in the team). What is not known is -1: the
 * clock rates where cpufreq does not tell them (and for any topology but
 * this machine's), \c max_shmem_mbps always.
 *
 * The topology is this machine's, or the one DART_TOPOLOGY names (an hwloc
 * XML file, a path ending in ".xml", or an hwloc synthetic description) for
 * every node; dart_init fails with DART_ERR_INVAL for one hwloc cannot
 * load.
 *
 * Ownership: the hierarchy returned by dart_domain_team_locality and the
 * records of dart_unit_locality belong to the runtime and stay valid until
 * dart_team_locality_finalize or dart_team_locality_init on the team, team
 * destruction or dart_exit. The editing functions work on it too (later
 * queries see the change; dart_team_locality_init rebuilds it), but it can
 * be neither destroyed nor assigned to. Domains from dart_domain_create and
 * dart_domain_clone belong to the caller, who releases them with
 * dart_domain_destroy before dart_exit. Arrays returned by
 * dart_domain_scope_tags and dart_domain_scope_domains are released with
 * free() (for tags: each string, then the array); the domains in the latter
 * still belong to the hierarchy they were found in. An edit keeps the
 * domains that remain at their addresses; pointers to domains it removes
 * become invalid.
 *
 * Errors: every function needs an initialised runtime (DART_ERR_NOTINIT
 * otherwise). A NULL argument, a malformed tag, a scope that is not one of
 * dart_locality_scope_t's (or is UNDEFINED), a count or index out of range,
 * a tag that names no domain in an edit, an unknown team or a unit outside
 * it is DART_ERR_INVAL; a lookup of a tag that names no domain, and a query
 * on a team without a hierarchy, is DART_ERR_NOTFOUND. Each logs one line
 * and changes nothing.
 *
 * Thread safety: dart_team_locality_init and dart_team_locality_finalize
 * are collective and must not run concurrently with other locality calls on
 * the team. The queries are safe from any thread; the editing functions are
 * safe on distinct domain hierarchies.
 */
#ifndef DART__LOCALITY_H_
#define DART__LOCALITY_H_

#include <dart/dart_types.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Collective on \c team: exchanges the units' hardware information and
 * builds the team's domain hierarchy. dart_init does this for
 * DART_TEAM_ALL and dart_team_create for every new team; calling it again
 * rebuilds the hierarchy (the old one is released).
 */
dart_ret_t dart_team_locality_init(dart_team_t team) DART_NOTHROW;

/**
 * Collective on \c team: releases the team's domain hierarchy and unit
 * records (dart_team_destroy and dart_exit do this too).
 * \return DART_ERR_NOTFOUND when the team has no hierarchy.
 */
dart_ret_t dart_team_locality_finalize(dart_team_t team) DART_NOTHROW;

/**
 * Points *team_domain_out at the domain with tag \c domain_tag ("." for the
 * root) in the team's hierarchy (owned by the runtime).
 * \return DART_ERR_NOTFOUND when no domain has that tag.
 */
dart_ret_t dart_domain_team_locality(
    dart_team_t team, const char *domain_tag,
    dart_domain_locality_t **team_domain_out) DART_NOTHROW;

/**
 * Creates an empty domain: tag ".", scope UNDEFINED, no units, no
 * subdomains, team DART_TEAM_NULL.
 */
dart_ret_t dart_domain_create(dart_domain_locality_t **domain_out)
    DART_NOTHROW;

/**
 * Creates a deep copy of \c domain_in and its subdomains; the copy is a
 * root (no parent) and keeps tags, levels and indices.
 */
dart_ret_t dart_domain_clone(const dart_domain_locality_t *domain_in,
                             dart_domain_locality_t **domain_out)
    DART_NOTHROW;

/**
 * Destroys a domain made by dart_domain_create or dart_domain_clone, with
 * its subdomains. A subdomain or a team's hierarchy is DART_ERR_INVAL.
 */
dart_ret_t dart_domain_destroy(dart_domain_locality_t *domain) DART_NOTHROW;

/**
 * Replaces the contents of \c domain_lhs (a root made by
 * dart_domain_create or dart_domain_clone, or a part of
 * dart_domain_split_scope) with a deep copy of \c domain_rhs, which may
 * lie below it. \c domain_lhs stays a root.
 */
dart_ret_t dart_domain_assign(dart_domain_locality_t *domain_lhs,
                              const dart_domain_locality_t *domain_rhs)
    DART_NOTHROW;

/**
 * Points *subdomain_out at the domain with tag \c domain_tag below (or
 * equal to) \c domain_in.
 * \return DART_ERR_NOTFOUND, with *subdomain_out NULL and nothing logged,
 * when there is none.
 */
dart_ret_t dart_domain_find(const dart_domain_locality_t *domain_in,
                            const char *domain_tag,
                            dart_domain_locality_t **subdomain_out)
    DART_NOTHROW;

/**
 * Keeps, below \c domain_in, only the domains with the given tags (at
 * least one; tagged domains at or below \c domain_in), their subdomains
 * and their ancestors. The unit lists of \c domain_in and all its
 * ancestors lose the units removed; counts follow. Tags of the domains that
 * remain do not change; relative and global indices are renumbered.
 */
dart_ret_t dart_domain_select(dart_domain_locality_t *domain_in,
                              int num_subdomain_tags,
                              const char **subdomain_tags) DART_NOTHROW;

/**
 * Removes the domains with the given tags (at least one; tagged domains
 * below \c domain_in) and their subdomains. The unit lists of their
 * ancestors lose the units removed; counts follow. A domain whose
 * subdomains are all removed stays, without units. Tags of the domains
 * that remain do not change; relative and global indices are renumbered.
 */
dart_ret_t dart_domain_exclude(dart_domain_locality_t *domain_in,
                               int num_subdomain_tags,
                               const char **subdomain_tags) DART_NOTHROW;

/**
 * Inserts \c subdomain (a root made by dart_domain_create or
 * dart_domain_clone; \c domain takes ownership) as child
 * \c subdomain_rel_id of \c domain (-1 or the child count: append). Tags
 * below \c domain are renumbered and the subdomain's units are added to
 * \c domain and its ancestors; they must not be in the hierarchy already.
 * DART_ERR_INVAL also where a tag would exceed
 * DART_LOCALITY_DOMAIN_TAG_MAX_SIZE - 1 characters.
 */
dart_ret_t dart_domain_add_subdomain(dart_domain_locality_t *domain,
                                     dart_domain_locality_t *subdomain,
                                     int subdomain_rel_id) DART_NOTHROW;

/**
 * Moves \c domain (not a root), within its hierarchy, to be child
 * \c new_domain_rel_id of \c new_parent_domain (counted without
 * \c domain; -1: append), which must not lie in \c domain's subtree. Tags
 * below the old and the new parent are renumbered; the old parent and its
 * ancestors lose the domain's units, the new ones gain them.
 */
dart_ret_t dart_domain_move_subdomain(dart_domain_locality_t *domain,
                                      dart_domain_locality_t *new_parent_domain,
                                      int new_domain_rel_id) DART_NOTHROW;

/**
 * Splits the hierarchy of \c domain_in into \c num_parts copies, each
 * keeping a contiguous run of the domains at \c scope (those that
 * dart_domain_scope_domains returns) as dart_domain_select would. Runs are
 * balanced by unit count and never divide a domain: run p ends at the
 * domain boundary nearest to (p + 1) / num_parts of the units (the later
 * one on a tie), every run keeping at least one domain. With fewer domains
 * than parts, the parts at the end keep none (no subdomains, no units).
 * \c split_domain_out points at room for \c num_parts domains, which the
 * call initialises (it does not read what was there). Each part owns its
 * subdomains and unit list; assigning an empty domain to a part
 * (dart_domain_assign) releases them.
 */
dart_ret_t dart_domain_split_scope(const dart_domain_locality_t *domain_in,
                                   dart_locality_scope_t scope, int num_parts,
                                   dart_domain_locality_t *split_domain_out)
    DART_NOTHROW;

/**
 * The tags of the domains that dart_domain_scope_domains returns:
 * *domain_tags_out is a malloc'd array of *num_domains_out malloc'd strings
 * (NULL when there are none).
 */
dart_ret_t dart_domain_scope_tags(const dart_domain_locality_t *domain_in,
                                  dart_locality_scope_t scope,
                                  int *num_domains_out,
                                  char ***domain_tags_out) DART_NOTHROW;

/**
 * The domains at \c scope in the subtree of \c domain_in (itself
 * included), in depth-first order; a domain at \c scope hides those at
 * the same scope below it. *domains_out is a malloc'd array of pointers
 * into the hierarchy (NULL when there are none: no error).
 */
dart_ret_t dart_domain_scope_domains(const dart_domain_locality_t *domain_in,
                                     dart_locality_scope_t scope,
                                     int *num_domains_out,
                                     dart_domain_locality_t ***domains_out)
    DART_NOTHROW;

/**
 * Groups the given subdomains (at least one, each named once, below
 * \c domain_in), which must share one parent, under a new domain of scope
 * DART_LOCALITY_SCOPE_GROUP that takes the place of the first of them among
 * the parent's children, keeping their order. Tags below the parent are
 * renumbered; the group's tag is written to \c group_domain_tag_out (room
 * for DART_LOCALITY_DOMAIN_TAG_MAX_SIZE characters). The group holds the
 * units of its subdomains; its cores and shared memory follow from them.
 */
dart_ret_t dart_domain_group(dart_domain_locality_t *domain_in,
                             int num_group_subdomains,
                             const char **group_subdomain_tags,
                             char *group_domain_tag_out) DART_NOTHROW;

/**
 * Points *loc at the locality record of \c unit (a unit id in \c team):
 * its hardware information and the tag of its leaf domain (owned by the
 * runtime).
 */
dart_ret_t dart_unit_locality(dart_team_t team, dart_team_unit_t unit,
                              dart_unit_locality_t **loc) DART_NOTHROW;

#ifdef __cplusplus
}
#endif

#endif /* DART__LOCALITY_H_ */
