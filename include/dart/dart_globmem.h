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
 * part; clients may change both to move within the allocation. A gptr is a
 * plain value: copying it is free and it owns nothing.
 */
typedef struct {
  dart_unit_t unitid : 24; /**< the target unit: its id in \c teamid (its
                                global id for dart_memalloc memory) */
  unsigned int flags : 8;  /**< 8 bits for the client; libdart ignores
                                them */
  int16_t segid;           /**< the allocation: > 0 from
                                dart_team_memalloc_aligned, < 0 from
                                dart_team_memregister*, DART_SEGMENT_LOCAL
                                from dart_memalloc */
  dart_team_t teamid;      /**< the team of the allocation (DART_TEAM_ALL
                                for dart_memalloc memory) */
  /** where in the target unit's part */
  union {
    uint64_t offset;       /**< bytes from the start of the unit's part
                                (dart_memalloc memory: an opaque value to
                                which clients add within the block) */
    void *addr;            /**< the same bits as a pointer (part of the
                                DART layout; libdart sets \c offset) */
  } addr_or_offs;
} dart_gptr_t;

/** Segment id of memory from dart_memalloc. */
#define DART_SEGMENT_LOCAL ((int16_t)0)

/**
 * \def DART_GPTR_NULL
 * The null global pointer: unit DART_UNDEFINED_UNIT_ID, team
 * DART_UNDEFINED_TEAM_ID, segment 0, offset 0, no flags. It addresses
 * nothing: operations on it return DART_ERR_INVAL.
 */
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

/** True for DART_GPTR_NULL (the flags are not compared). */
#define DART_GPTR_ISNULL(gptr_)                              \
  ((gptr_).unitid < 0 && (gptr_).segid == 0 &&               \
   (gptr_).teamid == DART_UNDEFINED_TEAM_ID &&               \
   (gptr_).addr_or_offs.offset == 0)

/**
 * True when two gptrs name the same unit, segment, team and offset (the
 * flags are not compared).
 */
#define DART_GPTR_EQUAL(gptr1_, gptr2_)                      \
  ((gptr1_).unitid == (gptr2_).unitid &&                     \
   (gptr1_).segid == (gptr2_).segid &&                       \
   (gptr1_).teamid == (gptr2_).teamid &&                     \
   (gptr1_).addr_or_offs.offset == (gptr2_).addr_or_offs.offset)

/**
 * Adds \c offs bytes (negative: subtracts) to the offset of *gptr. Nothing
 * is checked here; an operation on a gptr beyond the unit's part returns
 * DART_ERR_INVAL.
 */
static inline dart_ret_t dart_gptr_incaddr(dart_gptr_t *gptr, int64_t offs)
{
  gptr->addr_or_offs.offset += (uint64_t)offs;
  return DART_OK;
}

/**
 * Points *gptr at the same offset in the part of team unit \c unit (its id
 * in gptr's team). Nothing is checked here.
 */
static inline dart_ret_t dart_gptr_setunit(dart_gptr_t *gptr,
                                           dart_team_unit_t unit)
{
  gptr->unitid = unit.id;
  return DART_OK;
}

/** An allocator: an opaque handle made by dart_allocator_new. */
typedef struct dart_allocator_struct *dart_allocator_t;

/**
 * The local address of the memory \c gptr points to if it lies in the
 * caller's own part, else NULL (with DART_OK). DART_ERR_INVAL for a gptr
 * that does not point into a live allocation.
 */
dart_ret_t dart_gptr_getaddr(const dart_gptr_t gptr, void **addr) DART_NOTHROW;
/**
 * Points *gptr at \c addr, which must lie in the caller's own part of the
 * allocation *gptr refers to (unitid and offset change to address it).
 * DART_ERR_INVAL, with
 * *gptr unchanged, for another address or a gptr to no live allocation.
 */
dart_ret_t dart_gptr_setaddr(dart_gptr_t *gptr, void *addr) DART_NOTHROW;
/** *flags becomes the 8 flag bits of \c gptr. */
dart_ret_t dart_gptr_getflags(dart_gptr_t gptr, uint16_t *flags) DART_NOTHROW;
/** Sets the flag bits; DART_ERR_INVAL for flags above 255 (the field has 8
 * bits). */
dart_ret_t dart_gptr_setflags(dart_gptr_t *gptr, uint16_t flags) DART_NOTHROW;

/**
 * Creates an allocator over a collective allocation of \c pool_size bytes
 * per unit on \c team (collective, like dart_team_memalloc_aligned).
 * Allocations from it are local to the calling unit, come from its part
 * and are reachable by every unit of the team; the pool does not grow.
 */
dart_ret_t dart_allocator_new(size_t pool_size, dart_team_t team,
                              dart_allocator_t *new_allocator) DART_NOTHROW;
/**
 * Allocates nelem elements of a contiguous dtype in the caller's part, on a
 * 16-byte boundary (not collective). DART_ERR_NOMEM when the part has no
 * room (logged at debug level only: the caller decides whether that is an
 * error). On any failure *gptr is DART_GPTR_NULL (where gptr is not NULL).
 */
dart_ret_t dart_allocator_alloc(size_t nelem, dart_datatype_t dtype,
                                dart_gptr_t *gptr,
                                dart_allocator_t allocator) DART_NOTHROW;
/**
 * Frees memory the caller got from dart_allocator_alloc and sets *gptr to
 * DART_GPTR_NULL. DART_ERR_INVAL for another unit's memory or a gptr that
 * is not the start of a live allocation.
 */
dart_ret_t dart_allocator_free(dart_gptr_t *gptr,
                               dart_allocator_t allocator) DART_NOTHROW;
/**
 * Destroys an allocator and its pool (collective over its team, like
 * dart_team_memfree) and sets *allocator to NULL. Allocations not freed go
 * with it.
 */
dart_ret_t dart_allocator_destroy(dart_allocator_t *allocator) DART_NOTHROW;

/**
 * Allocates nelem elements of a contiguous dtype in the caller's local pool
 * (not collective), on a 16-byte boundary. The memory is reachable from
 * every unit; the pool starts with DART_LOCAL_POOL bytes in shared memory
 * and, when full, grows by private chunks of twice the last size (or more).
 * The gptr has the caller's global id, DART_TEAM_ALL and
 * DART_SEGMENT_LOCAL. DART_ERR_NOMEM when no chunk can be added.
 */
dart_ret_t dart_memalloc(size_t nelem, dart_datatype_t dtype,
                         dart_gptr_t *gptr) DART_NOTHROW;
/**
 * Frees memory from the caller's dart_memalloc; gptr must be the
 * allocation's start. Only the allocating unit frees (DART_ERR_INVAL
 * otherwise, and for a double free). Not collective.
 */
dart_ret_t dart_memfree(dart_gptr_t gptr) DART_NOTHROW;

/**
 * Collective allocation of nelem elements of a contiguous dtype on every
 * unit of team (nelem may differ per unit; 0 is fine). Every unit gets the
 * same gptr: team unit 0, offset 0, a new positive segment id. Each part
 * starts on a 64-byte boundary; node peers' parts lie in one shared window.
 * DART_ERR_INVAL for an unknown team or type or a size that overflows,
 * DART_ERR_NOMEM when the shared window cannot be allocated,
 * DART_ERR_OTHER when MPI fails.
 */
dart_ret_t dart_team_memalloc_aligned(dart_team_t teamid, size_t nelem,
                                      dart_datatype_t dtype,
                                      dart_gptr_t *gptr) DART_NOTHROW;
/**
 * Frees a collective allocation (collective over its team). gptr must point
 * at the start of a unit's part (offset 0). The caller's pending operations
 * are completed and the team synchronises before the memory goes; its gptrs
 * then return DART_ERR_INVAL until the segment id is issued again: by the
 * team's next allocation (DART_SEGID_REUSE=latest, the default, DART-MPI's
 * order), or only after every fresh id, oldest freed first (delayed). A
 * gptr never reaches beyond a live part either way.
 */
dart_ret_t dart_team_memfree(dart_gptr_t gptr) DART_NOTHROW;
/**
 * Makes nelem elements at addr globally accessible on team (collective);
 * every unit must register the same number of elements (else every unit
 * gets DART_ERR_INVAL). The memory stays the caller's; the gptr (team unit
 * 0, offset 0) gets a new negative segment id. Node peers reach it through
 * CMA or the remote transport, never shared memory; in a team of more than
 * one unit its atomics take the remote transport.
 */
dart_ret_t dart_team_memregister_aligned(dart_team_t teamid, size_t nelem,
                                         dart_datatype_t dtype, void *addr,
                                         dart_gptr_t *gptr) DART_NOTHROW;
/** Like dart_team_memregister_aligned; nlelem may differ per unit. */
dart_ret_t dart_team_memregister(dart_team_t teamid, size_t nlelem,
                                 dart_datatype_t dtype, void *addr,
                                 dart_gptr_t *gptr) DART_NOTHROW;
/**
 * Ends the caller's part of a registration, on its own: not collective (a
 * subset of the team may deregister, as with DART-MPI's MPI_Win_detach).
 * The caller's pending operations are completed; the other units must be
 * done with its part before (the caller synchronises with them, e.g. in a
 * barrier), and their gptrs to it fail or reach nothing after. The memory
 * stays the user's, unchanged. The next registration on the team takes an
 * id that is free on every unit.
 */
dart_ret_t dart_team_memderegister(dart_gptr_t gptr) DART_NOTHROW;

#ifdef __cplusplus
}
#endif

#endif /* DART__GLOBMEM_H_ */
