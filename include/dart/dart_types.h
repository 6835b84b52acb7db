/**
 * \file dart_types.h
 * Basic types, constants, datatypes and reduction operations of the DART
 * interface (version 3.2).
 *
 * Thread safety: the type and operation constructors may be called from any
 * thread once the runtime is initialised; a datatype or operation must not be
 * destroyed while another thread uses it.
 */
#ifndef DART__TYPES_H_
#define DART__TYPES_H_

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * \def DART_NOTHROW
 * Ends every DART function declaration: \c noexcept (C++11) or \c throw()
 * (older C++) in C++, empty in C. DART functions report errors by their
 * return value and never throw.
 */
#ifdef __cplusplus
#if __cplusplus >= 201103L
#define DART_NOTHROW noexcept
#else
#define DART_NOTHROW throw()
#endif
#else
#define DART_NOTHROW
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Defined wherever the DART interface headers are included. */
#define DART_INTERFACE_ON

/** Return values of all DART functions. */
typedef enum {
  DART_OK          = 0,   /**< success */
  DART_PENDING     = 1,   /**< operation not yet completed */
  DART_ERR_INVAL   = 2,   /**< invalid argument */
  DART_ERR_NOTFOUND = 3,  /**< object not found */
  DART_ERR_NOTINIT = 4,   /**< runtime not initialised */
  DART_ERR_NOMEM   = 5,   /**< out of memory */
  DART_ERR_OTHER   = 999  /**< any other error */
} dart_ret_t;

/** Exit code of a successful run. */
#define DART_EXIT_SUCCESS  0
/** Exit code for dart_abort after an unrecoverable error. */
#define DART_EXIT_ABORT    1
/** Exit code for dart_abort after a failed assertion. */
#define DART_EXIT_ASSERT  -6

/** Unit id: a rank in DART_TEAM_ALL or in a team. */
typedef int32_t dart_unit_t;

/** The id of no unit. */
#define DART_UNDEFINED_UNIT_ID ((dart_unit_t)(-1))

/**
 * A unit id relative to DART_TEAM_ALL: the unit's rank in MPI_COMM_WORLD.
 * A distinct type so that global and team ids cannot be mixed up. In C++,
 * as in DASH's DART headers, it converts from a dart_unit_t (implicitly,
 * constexpr) and default-constructs to DART_UNDEFINED_UNIT_ID; the layout
 * is the C struct's.
 */
typedef struct dart_global_unit {
#ifdef __cplusplus
  constexpr dart_global_unit() : id(DART_UNDEFINED_UNIT_ID) {}
  constexpr dart_global_unit(dart_unit_t uid) : id(uid) {}
#endif
  dart_unit_t id; /**< rank in DART_TEAM_ALL, 0 .. dart_size - 1 */
} dart_global_unit_t;

/**
 * A unit id relative to a team: the unit's rank in the team, whose members
 * are ordered by global id. C++ constructors as dart_global_unit_t's.
 */
typedef struct dart_local_unit {
#ifdef __cplusplus
  constexpr dart_local_unit() : id(DART_UNDEFINED_UNIT_ID) {}
  constexpr dart_local_unit(dart_unit_t uid) : id(uid) {}
#endif
  dart_unit_t id; /**< rank in the team, 0 .. team size - 1 */
} dart_team_unit_t;

/** A dart_global_unit_t holding \c unit. */
static inline dart_global_unit_t dart_create_global_unit(dart_unit_t unit)
{
  dart_global_unit_t u;
  u.id = unit;
  return u;
}

/** A dart_team_unit_t holding \c unit. */
static inline dart_team_unit_t dart_create_team_unit(dart_unit_t unit)
{
  dart_team_unit_t u;
  u.id = unit;
  return u;
}

/** The global unit id \c u (a dart_global_unit_t). */
#define DART_GLOBAL_UNIT_ID(u) (dart_create_global_unit(u))
/** The team unit id \c u (a dart_team_unit_t). */
#define DART_TEAM_UNIT_ID(u) (dart_create_team_unit(u))
/** The team unit id of no unit. */
#define DART_UNDEFINED_TEAM_UNIT_ID \
  (dart_create_team_unit(DART_UNDEFINED_UNIT_ID))
/** The global unit id of no unit. */
#define DART_UNDEFINED_GLOBAL_UNIT_ID \
  (dart_create_global_unit(DART_UNDEFINED_UNIT_ID))

/**
 * Team id. dart_team_create hands out ids in increasing order and never
 * reuses one, so an id names one team over the life of the program. Ids end
 * at 32767; creating a team beyond is DART_ERR_OTHER.
 */
typedef int16_t dart_team_t;

/** The team of all units; it exists from dart_init to dart_exit. */
#define DART_TEAM_ALL ((dart_team_t)0)
/** No team: what a unit outside the new team gets from dart_team_create,
 * and what dart_team_destroy leaves behind. */
#define DART_TEAM_NULL ((dart_team_t)-1)
/** The team id of no team (equal to DART_TEAM_NULL). */
#define DART_UNDEFINED_TEAM_ID ((dart_team_t)-1)

/**
 * Data types: the basic types below, or opaque derived types (strided,
 * indexed, custom) whose values are greater than DART_TYPE_LAST.
 */
typedef intptr_t dart_datatype_t;

#define DART_TYPE_UNDEFINED   ((dart_datatype_t)0)  /**< no type (invalid) */
#define DART_TYPE_BYTE        ((dart_datatype_t)1)  /**< a byte; signed char
                                                         in reductions and
                                                         atomics */
#define DART_TYPE_SHORT       ((dart_datatype_t)2)  /**< short */
#define DART_TYPE_INT         ((dart_datatype_t)3)  /**< int */
#define DART_TYPE_UINT        ((dart_datatype_t)4)  /**< unsigned int */
#define DART_TYPE_LONG        ((dart_datatype_t)5)  /**< long */
#define DART_TYPE_ULONG       ((dart_datatype_t)6)  /**< unsigned long */
#define DART_TYPE_LONGLONG    ((dart_datatype_t)7)  /**< long long */
#define DART_TYPE_ULONGLONG   ((dart_datatype_t)8)  /**< unsigned long long */
#define DART_TYPE_FLOAT       ((dart_datatype_t)9)  /**< float */
#define DART_TYPE_DOUBLE      ((dart_datatype_t)10) /**< double */
#define DART_TYPE_LONG_DOUBLE ((dart_datatype_t)11) /**< long double */
#define DART_TYPE_LAST        ((dart_datatype_t)12) /**< one past the basic
                                                         types */

/**
 * \def DART_TYPE_SIZET
 * The basic type of size_t: DART_TYPE_ULONG where size_t is as wide as
 * unsigned long, else DART_TYPE_ULONGLONG.
 */
#if defined(__SIZEOF_SIZE_T__) && defined(__SIZEOF_LONG__) && \
    (__SIZEOF_SIZE_T__ == __SIZEOF_LONG__)
#define DART_TYPE_SIZET DART_TYPE_ULONG
#else
#define DART_TYPE_SIZET DART_TYPE_ULONGLONG
#endif

/** Reduction and accumulation operations. */
typedef uintptr_t dart_operation_t;

#define DART_OP_UNDEFINED ((dart_operation_t)0)  /**< no operation (invalid) */
#define DART_OP_MIN       ((dart_operation_t)1)  /**< minimum */
#define DART_OP_MAX       ((dart_operation_t)2)  /**< maximum */
#define DART_OP_MINMAX    ((dart_operation_t)3)  /**< minimum and maximum of
                                                      {min, max} pairs
                                                      (reductions only) */
#define DART_OP_SUM       ((dart_operation_t)4)  /**< sum */
#define DART_OP_PROD      ((dart_operation_t)5)  /**< product */
#define DART_OP_BAND      ((dart_operation_t)6)  /**< bitwise and (integers) */
#define DART_OP_LAND      ((dart_operation_t)7)  /**< logical and (integers) */
#define DART_OP_BOR       ((dart_operation_t)8)  /**< bitwise or (integers) */
#define DART_OP_LOR       ((dart_operation_t)9)  /**< logical or (integers) */
#define DART_OP_BXOR      ((dart_operation_t)10) /**< bitwise exclusive or
                                                      (integers) */
#define DART_OP_LXOR      ((dart_operation_t)11) /**< logical exclusive or
                                                      (integers) */
#define DART_OP_REPLACE   ((dart_operation_t)12) /**< the operand replaces the
                                                      value (atomic write) */
#define DART_OP_NO_OP     ((dart_operation_t)13) /**< the value stays (atomic
                                                      read) */
#define DART_OP_LAST      ((dart_operation_t)14) /**< one past the predefined
                                                      operations */

/** Index of the minimum in a DART_OP_MINMAX pair. */
#define DART_OP_MINMAX_MIN 0
/** Index of the maximum in a DART_OP_MINMAX pair. */
#define DART_OP_MINMAX_MAX 1

/**
 * A user reduction: combines \c len elements of \c invec into \c inoutvec
 * (inoutvec[i] = invec[i] op inoutvec[i]).
 */
typedef void (*dart_operator_t)(const void *invec, void *inoutvec, size_t len,
                                void *user_data);

/** Thread support asked for with dart_init_thread, and provided. */
typedef enum {
  DART_THREAD_SINGLE   = 0,  /**< one thread per unit calls DART */
  DART_THREAD_MULTIPLE = 10  /**< several threads of a unit may call DART
                                  (MPI_THREAD_MULTIPLE); each header says
                                  what holds for its functions */
} dart_thread_support_level_t;

/* ---- Hardware locality (functions in dart_locality.h) ---- */

/* HOST_NAME_MAX is 64 on Linux; fixed where the feature macros hide it so
 * that the structs below have one layout in every translation unit. */
/**
 * \def DART_LOCALITY_HOST_MAX_SIZE
 * Room for a host name in the locality records, terminating NUL included:
 * HOST_NAME_MAX where <limits.h> defines it, else 64.
 */
#if defined(HOST_NAME_MAX)
#define DART_LOCALITY_HOST_MAX_SIZE ((int)(HOST_NAME_MAX))
#else
#define DART_LOCALITY_HOST_MAX_SIZE ((int)(64))
#endif
/** Room for a domain tag (".0.1"), terminating NUL included. */
#define DART_LOCALITY_DOMAIN_TAG_MAX_SIZE ((int)(32))
/** Entries of dart_hwinfo_t::scopes: the deepest hierarchy described. */
#define DART_LOCALITY_MAX_DOMAIN_SCOPES ((int)(12))
/** The interface's limit on the CPUs of one unit. */
#define DART_LOCALITY_UNIT_MAX_CPUS ((int)(64))
/** The interface's limit on NUMA domain ids. */
#define DART_LOCALITY_MAX_NUMA_ID ((int)(16))
/** Entries of the per-cache-level arrays of dart_hwinfo_t (L1 first). */
#define DART_LOCALITY_MAX_CACHE_LEVELS ((int)(5))

/**
 * Levels of the locality hierarchy, outermost first; a larger value is a
 * narrower scope. A team's domain tree (dart_locality.h) uses GLOBAL, NODE,
 * MODULE, NUMA, CORE and UNIT; dart_domain_group adds GROUP.
 */
typedef enum {
  DART_LOCALITY_SCOPE_UNDEFINED = -1,  /**< no scope */
  DART_LOCALITY_SCOPE_GLOBAL    = 0,   /**< all units of a team (the root) */
  DART_LOCALITY_SCOPE_GROUP     = 1,   /**< a group of sibling domains made
                                            by dart_domain_group */
  DART_LOCALITY_SCOPE_NETWORK   = 50,  /**< an interconnect */
  DART_LOCALITY_SCOPE_NODE      = 100, /**< a node (or an emulated node of
                                            DART_UNITS_PER_NODE units) */
  DART_LOCALITY_SCOPE_MODULE    = 200, /**< a processing module of a node */
  DART_LOCALITY_SCOPE_NUMA      = 300, /**< a NUMA domain */
  DART_LOCALITY_SCOPE_UNIT      = 400, /**< one unit (a process) */
  DART_LOCALITY_SCOPE_PACKAGE   = 500, /**< a processor package (socket) */
  DART_LOCALITY_SCOPE_UNCORE    = 510, /**< a package's uncore */
  DART_LOCALITY_SCOPE_CACHE     = 530, /**< a CPU cache */
  DART_LOCALITY_SCOPE_CORE      = 550, /**< a physical core */
  DART_LOCALITY_SCOPE_CPU       = 600  /**< a logical CPU (hardware
                                            thread) */
} dart_locality_scope_t;

/** A position in the hierarchy: a scope and an index in it. */
typedef struct {
  dart_locality_scope_t scope; /**< the scope */
  int index;                   /**< the domain's index among its siblings
                                    at that scope */
} dart_locality_scope_pos_t;

/**
 * Hardware information of a unit: hwloc's view of its node (or of the
 * topology DART_TOPOLOGY names). Every figure a client may compute with
 * (counts, clocks, bandwidth, memory) is positive: measured where the
 * machine tells it, else the configured fallback (DART_CPU_MHZ,
 * DART_SHMEM_MBPS). A cache level the unit's core does not have is -1 in
 * cache_sizes, cache_line_sizes and cache_ids.
 */
typedef struct {
  char host[DART_LOCALITY_HOST_MAX_SIZE]; /**< host name of the node */
  int num_cores;   /**< cores of the unit: in dart_unit_locality's records
                        its node's cores shared evenly among the team's
                        units there, at least 1 (clients start a thread on
                        each) */
  int num_numa;    /**< number of NUMA domains of the node */
  int numa_id;     /**< the NUMA domain of the unit's core */
  int num_sockets; /**< number of processor packages of the node */
  int core_id;     /**< the unit's core (hwloc's logical index) */
  int cpu_id;      /**< the unit's logical CPU (hwloc's logical index) */
  int min_cpu_mhz; /**< lowest clock frequency of the unit's CPU, in MHz
                        (equal to max_cpu_mhz where one clock is known) */
  int max_cpu_mhz; /**< highest clock frequency of the unit's CPU, in MHz */
  /** cache sizes in bytes by level, L1 first */
  int cache_sizes[DART_LOCALITY_MAX_CACHE_LEVELS];
  /** cache line sizes in bytes by level, L1 first */
  int cache_line_sizes[DART_LOCALITY_MAX_CACHE_LEVELS];
  /** ids of the unit's caches by level, L1 first */
  int cache_ids[DART_LOCALITY_MAX_CACHE_LEVELS];
  int min_threads; /**< fewest hardware threads per core */
  int max_threads; /**< most hardware threads per core */
  int max_shmem_mbps;      /**< bandwidth from the unit's core to its NUMA
                                domain's memory, in MB/s */
  int system_memory_bytes; /**< memory of the node, in MiB (an int holds
                                no more) */
  int numa_memory_bytes;   /**< memory of the unit's NUMA domain, in
                                MiB */
  /** the unit's ancestor domains, innermost first */
  dart_locality_scope_pos_t scopes[DART_LOCALITY_MAX_DOMAIN_SCOPES];
  int num_scopes; /**< valid entries of \c scopes */
} dart_hwinfo_t;

/** Where a module lies: its node, its name and its position. */
typedef struct {
  char host[DART_LOCALITY_HOST_MAX_SIZE];   /**< host name of the node */
  char module[DART_LOCALITY_HOST_MAX_SIZE]; /**< name of the module */
  dart_locality_scope_pos_t pos; /**< scope and index of the module */
} dart_module_location_t;

struct dart_domain_locality_s;
/** A domain of the locality hierarchy (dart_locality.h). */
typedef struct dart_domain_locality_s dart_domain_locality_t;

/**
 * A domain of the locality hierarchy: a node, module, NUMA domain, core or
 * unit with the domains below it. Trees are made and owned as
 * dart_locality.h describes; clients read the fields and change them only
 * through the dart_domain_* functions.
 */
struct dart_domain_locality_s {
  char host[DART_LOCALITY_HOST_MAX_SIZE]; /**< host name of the domain's
                                               node */
  /** the domain's tag: the relative indices from the root, dot-separated
   * ("." is the root, ".0.1" the second child of the root's first child) */
  char domain_tag[DART_LOCALITY_DOMAIN_TAG_MAX_SIZE];
  struct dart_domain_locality_s **aliases; /**< other domains that stand
                                                for the same hardware */
  int num_aliases;             /**< entries of \c aliases */
  dart_locality_scope_t scope; /**< the domain's scope */
  int level;                   /**< depth in the tree, the root is 0 */
  int global_index;            /**< index among all domains of its scope */
  int relative_index;          /**< index among its parent's children */
  struct dart_domain_locality_s *parent; /**< the parent, NULL at the
                                              root */
  int num_domains;             /**< number of children */
  struct dart_domain_locality_s **children; /**< the \c num_domains
                                                 children */
  int is_symmetric;            /**< nonzero when the children have the same
                                    hardware */
  dart_team_t team;            /**< the team whose hierarchy this is */
  int num_units;               /**< number of units below the domain */
  dart_global_unit_t *unit_ids; /**< their global ids, ascending */
  int num_nodes;               /**< number of nodes the domain spans */
  int node_id;                 /**< index of the domain's node; -1 when it
                                    spans several */
  int num_cores;               /**< number of cores in the domain */
  int shared_mem_bytes;        /**< memory all the domain's units share (0
                                    when they span nodes) */
};

/** A unit's locality: who it is, its hardware and its leaf domain. */
typedef struct {
  dart_team_unit_t unit; /**< the unit's id in \c team */
  dart_team_t team;      /**< the team the record belongs to */
  dart_hwinfo_t hwinfo;  /**< the unit's hardware */
  /** tag of the unit's domain in the team's hierarchy */
  char domain_tag[DART_LOCALITY_DOMAIN_TAG_MAX_SIZE];
} dart_unit_locality_t;

/**
 * A strided type: \c nelem elements of \c basetype in a put, get or
 * collective are \c nelem / \c blocklen blocks of \c blocklen elements, block
 * i starting at element i * \c stride. nelem must be a multiple of blocklen.
 *
 * \return DART_ERR_INVAL for a non-basic base type, blocklen 0 or
 *         stride < blocklen.
 */
dart_ret_t dart_type_create_strided(dart_datatype_t basetype, size_t stride,
                                    size_t blocklen,
                                    dart_datatype_t *newtype) DART_NOTHROW;

/**
 * An indexed type: \c count blocks, block i holding \c blocklen[i] elements
 * of \c basetype starting at element \c offset[i]. One instance holds the sum
 * of the block lengths; nelem in a transfer must be a multiple of it, and
 * instance k is displaced by k times the type's extent,
 * max(offset[i] + blocklen[i]) - min(offset[i]) elements (as in MPI).
 */
dart_ret_t dart_type_create_indexed(dart_datatype_t basetype, size_t count,
                                    const size_t blocklen[],
                                    const size_t offset[],
                                    dart_datatype_t *newtype) DART_NOTHROW;

/**
 * An opaque contiguous type of \c num_bytes bytes (a record); counts of it
 * are in records. It moves only to and from the same custom type (or one of
 * the same size); predefined reductions do not apply to it, user operations
 * do.
 */
dart_ret_t dart_type_create_custom(size_t num_bytes,
                                   dart_datatype_t *newtype) DART_NOTHROW;

/** Destroys a derived type and sets *dart_type to DART_TYPE_UNDEFINED. */
dart_ret_t dart_type_destroy(dart_datatype_t *dart_type) DART_NOTHROW;

/**
 * Creates a reduction operation from \c op on elements of \c dtype.
 * \c dtype_is_tmp says that \c dtype is used only with this operation (a
 * hint, as in DART-MPI): the type stays the caller's, who destroys it after
 * the operation.
 */
dart_ret_t dart_op_create(dart_operator_t op, void *userdata, bool commute,
                          dart_datatype_t dtype, bool dtype_is_tmp,
                          dart_operation_t *new_op) DART_NOTHROW;

/** Destroys a user operation and sets *op to DART_OP_UNDEFINED. */
dart_ret_t dart_op_destroy(dart_operation_t *op) DART_NOTHROW;

#ifdef __cplusplus
}
#endif

#endif /* DART__TYPES_H_ */
