/*
 * Global memory: collective segments, the local pool, and the resolution of
 * a global pointer to the route that reaches its target.
 */
#ifndef DART__GLOBMEM__GLOBMEM_H_
#define DART__GLOBMEM__GLOBMEM_H_

#include <dart/dart_globmem.h>

#include "base/log.h"
#include "globmem/segment.h"
#include "team/team.h"

/* Where an access lands: the route and the offset within it. */
typedef struct {
  dart__team_t *team;
  dart__segment_t *seg;
  const dart__route_t *route;
  uint64_t offset;     /* bytes from the start of the route's memory */
  int unit;            /* team unit */
  dart__route_t grown; /* storage for a route into a grown pool chunk */
} dart__target_t;

/* Bits of a local-pool offset that name the chunk (0: the initial pool). */
#define DART__POOL_CHUNK_SHIFT 48
#define DART__POOL_MAX_CHUNKS 256
/* Each unit's pool part starts with the directory of its grown chunks,
 * which gptrs cannot reach: routes begin after it. */
#define DART__POOL_HEADER 4096

/* The slow half of dart__globmem__resolve: local pool beyond chunk 0. */
dart_ret_t dart__globmem__pool_resolve(const char *func, dart_gptr_t gptr,
                                       size_t span, dart__target_t *target);

/* This unit's grown pool chunk c (from 1): false beyond the last one. */
bool dart__globmem__pool_own_chunk(uint64_t c, char **base, size_t *size);

/*
 * The target of span bytes at gptr inside a live allocation's part (its
 * first chunk for the local pool), without a log line: the inline half of
 * dart__globmem__resolve, and the fast paths' lookup. False for anything
 * else, bad input included, which dart__globmem__resolve then diagnoses.
 */
static inline __attribute__((always_inline)) bool
dart__globmem__route_at(dart_gptr_t gptr, size_t span, dart__target_t *target)
{
  dart__team_t *team = dart__team__get(gptr.teamid);
  if (team == NULL) return false;
  dart__segment_t *seg = dart__globmem__segtab_get(&team->segs, gptr.segid);
  if (seg == NULL || gptr.unitid < 0 || gptr.unitid >= team->size)
    return false;
  const dart__route_t *route = &seg->routes[gptr.unitid];
  uint64_t offset = gptr.addr_or_offs.offset;
  if (offset > route->size || span > route->size - offset) return false;
  target->team = team;
  target->seg = seg;
  target->route = route;
  target->offset = offset;
  target->unit = gptr.unitid;
  return true;
}

/* The out-of-line half of dart__globmem__resolve: the local pool's grown
 * chunks, and the log line of a bad gptr. */
dart_ret_t dart__globmem__resolve_miss(const char *func, dart_gptr_t gptr,
                                       size_t span, dart__target_t *target);

/*
 * Validates gptr for an access of span bytes and finds its route: O(1), no
 * allocation. Logs as func and returns DART_ERR_INVAL for a gptr that does
 * not address span bytes inside a live allocation's part.
 */
static inline __attribute__((always_inline)) dart_ret_t
dart__globmem__resolve(const char *func, dart_gptr_t gptr, size_t span,
                       dart__target_t *target)
{
  if (__builtin_expect(dart__globmem__route_at(gptr, span, target), 1))
    return DART_OK;
  return dart__globmem__resolve_miss(func, gptr, span, target);
}

/* Collective: a segment on team of bytes per unit in memory of memkind
 * (dart_memkind_t; user memory at addr for registrations), entered in the
 * team's segment table. */
dart_ret_t dart__globmem__seg_create(const char *func, dart__team_t *team,
                                     dart__seg_kind_t kind, int memkind,
                                     size_t bytes, void *addr,
                                     dart__segment_t **out);
/* Collective: completes access to the segment and frees it. */
dart_ret_t dart__globmem__seg_destroy(dart__segment_t *seg);

/*
 * The word in global unit's pool header that serialises atomics on its
 * elements wider than any compare-and-swap (long double). It is reached
 * like the pool, so its own atomics follow the pool's atomics path.
 */
void dart__globmem__wide_lock(int unit, dart__target_t *target);

/* At dart_exit: retires the allocators the program did not destroy, as
 * dart_allocator_destroy does (their pools go with their teams'
 * segments). */
void dart__globmem__allocators_fini(void);

/* The local pool (segment 0 of DART_TEAM_ALL). */
dart_ret_t dart__globmem__pool_init(void);
void dart__globmem__pool_fini(void);

#endif
