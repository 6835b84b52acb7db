/**
 * \file dart_globmem.h
 * Global pointers, collective and local allocation of global memory.
 *
 * Thread safety: gptr functions are safe from any thread. dart_memalloc,
 * dart_memfree and the allocator functions are serialised internally.
 * Collective allocation, registration and their frees must be called by one
 * thread per unit, in the same order on every unit of the team.
 */
#ifndef DART__GLOBMEM_H_
#define DART__GLOBMEM_H_

#include <dart/dart_types.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * A global pointer (16 bytes). For a team allocation \c unitid is the unit's
 * id in \c teamid and \c addr_or_offs.offset a byte offset into that unit's
 * part; clients may change both to move within the allocation.
 */
typedef struct {
  dart_unit_t unitid : 24;
  unsigned int flags : 8;
  int16_t segid;
  dart_team_t teamid;
  union {
    uint64_t offset;
    void *addr;
  } addr_or_offs;
} dart_gptr_t;

/** Segment id of memory from dart_memalloc. */
#define DART_SEGMENT_LOCAL ((int16_t)0)

#ifdef __cplusplus
#define DART_GPTR_NULL                                              \
  (dart_gptr_t{DART_UNDEFINED_UNIT_ID, 0, 0, DART_UNDEFINED_TEAM_ID, \
               {0}})
#else
#define DART_GPTR_NULL                                                 \
  ((dart_gptr_t){.unitid = DART_UNDEFINED_UNIT_ID,                     \
                 .flags = 0,                                           \
                 .segid = 0,                                           \
                 .teamid = DART_UNDEFINED_TEAM_ID,                     \
                 .addr_or_offs = {.offset = 0}})
#endif

#define DART_GPTR_ISNULL(gptr_)                              \
  ((gptr_).unitid < 0 && (gptr_).segid == 0 &&               \
   (gptr_).teamid == DART_UNDEFINED_TEAM_ID &&               \
   (gptr_).addr_or_offs.offset == 0)

#define DART_GPTR_EQUAL(gptr1_, gptr2_)                      \
  ((gptr1_).unitid == (gptr2_).unitid &&                     \
   (gptr1_).segid == (gptr2_).segid &&                       \
   (gptr1_).teamid == (gptr2_).teamid &&                     \
   (gptr1_).addr_or_offs.offset == (gptr2_).addr_or_offs.offset)

/** Adds \c offs bytes to the offset of *gptr. */
static inline dart_ret_t dart_gptr_incaddr(dart_gptr_t *gptr, int64_t offs)
{
  gptr->addr_or_offs.offset += (uint64_t)offs;
  return DART_OK;
}

/** Points *gptr at the same offset in the part of team unit \c unit. */
static inline dart_ret_t dart_gptr_setunit(dart_gptr_t *gptr,
                                           dart_team_unit_t unit)
{
  gptr->unitid = unit.id;
  return DART_OK;
}

typedef struct dart_allocator_struct *dart_allocator_t;

/**
 * The local address of the memory \c gptr points to if it lies in the
 * caller's own part, else NULL (with DART_OK). DART_ERR_INVAL for a gptr
 * that does not point into a live allocation.
 */
dart_ret_t dart_gptr_getaddr(const dart_gptr_t gptr, void **addr) DART_NOTHROW;
/**
 * Points *gptr at \c addr, which must lie in the caller's own part of the
 * allocation *gptr refers to (unitid becomes the caller's id).
 */
dart_ret_t dart_gptr_setaddr(dart_gptr_t *gptr, void *addr) DART_NOTHROW;
dart_ret_t dart_gptr_getflags(dart_gptr_t gptr, uint16_t *flags) DART_NOTHROW;
/** DART_ERR_INVAL for flags above 255 (the field has 8 bits). */
dart_ret_t dart_gptr_setflags(dart_gptr_t *gptr, uint16_t flags) DART_NOTHROW;

/**
 * Creates an allocator over a collective allocation of \c pool_size bytes
 * per unit on \c team (collective). Allocations from it are local to the
 * calling unit and reachable by every unit of the team.
 */
dart_ret_t dart_allocator_new(size_t pool_size, dart_team_t team,
                              dart_allocator_t *new_allocator) DART_NOTHROW;
/** Allocates nelem elements in the caller's part; DART_ERR_NOMEM if full. */
dart_ret_t dart_allocator_alloc(size_t nelem, dart_datatype_t dtype,
                                dart_gptr_t *gptr,
                                dart_allocator_t allocator) DART_NOTHROW;
/** Frees memory from dart_allocator_alloc and sets *gptr to NULL. */
dart_ret_t dart_allocator_free(dart_gptr_t *gptr,
                               dart_allocator_t allocator) DART_NOTHROW;
/** Destroys an allocator and its pool (collective over its team). */
dart_ret_t dart_allocator_destroy(dart_allocator_t *allocator) DART_NOTHROW;

/**
 * Allocates nelem elements in the caller's local pool (not collective). The
 * memory is reachable from every unit; the pool grows when it is full.
 * The gptr has the caller's global id, DART_TEAM_ALL and DART_SEGMENT_LOCAL.
 */
dart_ret_t dart_memalloc(size_t nelem, dart_datatype_t dtype,
                         dart_gptr_t *gptr) DART_NOTHROW;
/** Frees memory from dart_memalloc; gptr must be the allocation's start. */
dart_ret_t dart_memfree(dart_gptr_t gptr) DART_NOTHROW;

/**
 * Collective allocation of nelem elements of dtype on every unit of team
 * (nelem may differ per unit). The gptr points at team unit 0, offset 0.
 */
dart_ret_t dart_team_memalloc_aligned(dart_team_t teamid, size_t nelem,
                                      dart_datatype_t dtype,
                                      dart_gptr_t *gptr) DART_NOTHROW;
/**
 * Frees a collective allocation (collective over its team). gptr must point
 * at the start of a unit's part (offset 0).
 */
dart_ret_t dart_team_memfree(dart_gptr_t gptr) DART_NOTHROW;
/**
 * Makes nelem elements at addr globally accessible on team (collective);
 * every unit must register the same number of elements.
 */
dart_ret_t dart_team_memregister_aligned(dart_team_t teamid, size_t nelem,
                                         dart_datatype_t dtype, void *addr,
                                         dart_gptr_t *gptr) DART_NOTHROW;
/** Like dart_team_memregister_aligned; nlelem may differ per unit. */
dart_ret_t dart_team_memregister(dart_team_t teamid, size_t nlelem,
                                 dart_datatype_t dtype, void *addr,
                                 dart_gptr_t *gptr) DART_NOTHROW;
/** Ends a registration (collective); the user memory stays the user's. */
dart_ret_t dart_team_memderegister(dart_gptr_t gptr) DART_NOTHROW;

#ifdef __cplusplus
}
#endif

#endif /* DART__GLOBMEM_H_ */
