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

#define DART_EXIT_SUCCESS  0
#define DART_EXIT_ABORT    1
#define DART_EXIT_ASSERT  -6

/** Unit id: a rank in DART_TEAM_ALL or in a team. */
typedef int32_t dart_unit_t;

#define DART_UNDEFINED_UNIT_ID ((dart_unit_t)(-1))

/** A unit id relative to DART_TEAM_ALL. */
typedef struct {
  dart_unit_t id;
} dart_global_unit_t;

/** A unit id relative to a team. */
typedef struct {
  dart_unit_t id;
} dart_team_unit_t;

static inline dart_global_unit_t dart_create_global_unit(dart_unit_t unit)
{
  dart_global_unit_t u;
  u.id = unit;
  return u;
}

static inline dart_team_unit_t dart_create_team_unit(dart_unit_t unit)
{
  dart_team_unit_t u;
  u.id = unit;
  return u;
}

#define DART_GLOBAL_UNIT_ID(u) (dart_create_global_unit(u))
#define DART_TEAM_UNIT_ID(u) (dart_create_team_unit(u))
#define DART_UNDEFINED_TEAM_UNIT_ID (dart_create_team_unit(DART_UNDEFINED_UNIT_ID))
#define DART_UNDEFINED_GLOBAL_UNIT_ID \
  (dart_create_global_unit(DART_UNDEFINED_UNIT_ID))

/** Team id; unique over the life of the program. */
typedef int16_t dart_team_t;

#define DART_TEAM_ALL ((dart_team_t)0)
#define DART_TEAM_NULL ((dart_team_t)-1)
#define DART_UNDEFINED_TEAM_ID ((dart_team_t)-1)

/**
 * Data types: the basic types below, or opaque derived types (strided,
 * indexed, custom) whose values are greater than DART_TYPE_LAST.
 */
typedef intptr_t dart_datatype_t;

#define DART_TYPE_UNDEFINED   ((dart_datatype_t)0)
#define DART_TYPE_BYTE        ((dart_datatype_t)1)
#define DART_TYPE_SHORT       ((dart_datatype_t)2)
#define DART_TYPE_INT         ((dart_datatype_t)3)
#define DART_TYPE_UINT        ((dart_datatype_t)4)
#define DART_TYPE_LONG        ((dart_datatype_t)5)
#define DART_TYPE_ULONG       ((dart_datatype_t)6)
#define DART_TYPE_LONGLONG    ((dart_datatype_t)7)
#define DART_TYPE_ULONGLONG   ((dart_datatype_t)8)
#define DART_TYPE_FLOAT       ((dart_datatype_t)9)
#define DART_TYPE_DOUBLE      ((dart_datatype_t)10)
#define DART_TYPE_LONG_DOUBLE ((dart_datatype_t)11)
#define DART_TYPE_LAST        ((dart_datatype_t)12)

#if defined(__SIZEOF_SIZE_T__) && defined(__SIZEOF_LONG__) && \
    (__SIZEOF_SIZE_T__ == __SIZEOF_LONG__)
#define DART_TYPE_SIZET DART_TYPE_ULONG
#else
#define DART_TYPE_SIZET DART_TYPE_ULONGLONG
#endif

/** Reduction and accumulation operations. */
typedef uintptr_t dart_operation_t;

#define DART_OP_UNDEFINED ((dart_operation_t)0)
#define DART_OP_MIN       ((dart_operation_t)1)
#define DART_OP_MAX       ((dart_operation_t)2)
#define DART_OP_MINMAX    ((dart_operation_t)3)
#define DART_OP_SUM       ((dart_operation_t)4)
#define DART_OP_PROD      ((dart_operation_t)5)
#define DART_OP_BAND      ((dart_operation_t)6)
#define DART_OP_LAND      ((dart_operation_t)7)
#define DART_OP_BOR       ((dart_operation_t)8)
#define DART_OP_LOR       ((dart_operation_t)9)
#define DART_OP_BXOR      ((dart_operation_t)10)
#define DART_OP_LXOR      ((dart_operation_t)11)
#define DART_OP_REPLACE   ((dart_operation_t)12)
#define DART_OP_NO_OP     ((dart_operation_t)13)
#define DART_OP_LAST      ((dart_operation_t)14)

/** Index of the minimum and maximum in a DART_OP_MINMAX pair. */
#define DART_OP_MINMAX_MIN 0
#define DART_OP_MINMAX_MAX 1

/**
 * A user reduction: combines \c len elements of \c invec into \c inoutvec
 * (inoutvec[i] = invec[i] op inoutvec[i]).
 */
typedef void (*dart_operator_t)(const void *invec, void *inoutvec, size_t len,
                                void *user_data);

typedef enum {
  DART_THREAD_SINGLE   = 0,
  DART_THREAD_MULTIPLE = 10
} dart_thread_support_level_t;

/* ---- Hardware locality (functions in dart_locality.h) ---- */

/* HOST_NAME_MAX is 64 on Linux; fixed where the feature macros hide it so
 * that the structs below have one layout in every translation unit. */
#if defined(HOST_NAME_MAX)
#define DART_LOCALITY_HOST_MAX_SIZE ((int)(HOST_NAME_MAX))
#else
#define DART_LOCALITY_HOST_MAX_SIZE ((int)(64))
#endif
#define DART_LOCALITY_DOMAIN_TAG_MAX_SIZE ((int)(32))
#define DART_LOCALITY_MAX_DOMAIN_SCOPES ((int)(12))
#define DART_LOCALITY_UNIT_MAX_CPUS ((int)(64))
#define DART_LOCALITY_MAX_NUMA_ID ((int)(16))
#define DART_LOCALITY_MAX_CACHE_LEVELS ((int)(5))

typedef enum {
  DART_LOCALITY_SCOPE_UNDEFINED = -1,
  DART_LOCALITY_SCOPE_GLOBAL    = 0,
  DART_LOCALITY_SCOPE_GROUP     = 1,
  DART_LOCALITY_SCOPE_NETWORK   = 50,
  DART_LOCALITY_SCOPE_NODE      = 100,
  DART_LOCALITY_SCOPE_MODULE    = 200,
  DART_LOCALITY_SCOPE_NUMA      = 300,
  DART_LOCALITY_SCOPE_UNIT      = 400,
  DART_LOCALITY_SCOPE_PACKAGE   = 500,
  DART_LOCALITY_SCOPE_UNCORE    = 510,
  DART_LOCALITY_SCOPE_CACHE     = 530,
  DART_LOCALITY_SCOPE_CORE      = 550,
  DART_LOCALITY_SCOPE_CPU       = 600
} dart_locality_scope_t;

typedef struct {
  dart_locality_scope_t scope;
  int index;
} dart_locality_scope_pos_t;

typedef struct {
  char host[DART_LOCALITY_HOST_MAX_SIZE];
  int num_cores;
  int num_numa;
  int numa_id;
  int num_sockets;
  int core_id;
  int cpu_id;
  int min_cpu_mhz;
  int max_cpu_mhz;
  int cache_sizes[DART_LOCALITY_MAX_CACHE_LEVELS];
  int cache_line_sizes[DART_LOCALITY_MAX_CACHE_LEVELS];
  int cache_ids[DART_LOCALITY_MAX_CACHE_LEVELS];
  int min_threads;
  int max_threads;
  int max_shmem_mbps;
  int system_memory_bytes;
  int numa_memory_bytes;
  dart_locality_scope_pos_t scopes[DART_LOCALITY_MAX_DOMAIN_SCOPES];
  int num_scopes;
} dart_hwinfo_t;

typedef struct {
  char host[DART_LOCALITY_HOST_MAX_SIZE];
  char module[DART_LOCALITY_HOST_MAX_SIZE];
  dart_locality_scope_pos_t pos;
} dart_module_location_t;

struct dart_domain_locality_s;
typedef struct dart_domain_locality_s dart_domain_locality_t;

struct dart_domain_locality_s {
  char host[DART_LOCALITY_HOST_MAX_SIZE];
  char domain_tag[DART_LOCALITY_DOMAIN_TAG_MAX_SIZE];
  struct dart_domain_locality_s **aliases;
  int num_aliases;
  dart_locality_scope_t scope;
  int level;
  int global_index;
  int relative_index;
  struct dart_domain_locality_s *parent;
  int num_domains;
  struct dart_domain_locality_s **children;
  int is_symmetric;
  dart_team_t team;
  int num_units;
  dart_global_unit_t *unit_ids;
  int num_nodes;
  int node_id;
  int num_cores;
  int shared_mem_bytes;
};

typedef struct {
  dart_team_unit_t unit;
  dart_team_t team;
  dart_hwinfo_t hwinfo;
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
 * Creates a reduction operation from \c op on elements of \c dtype. With
 * \c dtype_is_tmp the operation takes ownership of the (derived) \c dtype and
 * destroys it with the operation.
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
