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
 * Validates gptr for an access of span bytes and finds its route: O(1), no
 * allocation. Logs as func and returns DART_ERR_INVAL for a gptr that does
 * not address span bytes inside a live allocation's part.
 */
static inline __attribute__((always_inline)) dart_ret_t
dart__globmem__resolve(const char *func, dart_gptr_t gptr, size_t span,
                       dart__target_t *target)
{
  dart__team_t *team = dart__team__get(gptr.teamid);
  if (__builtin_expect(team == NULL, 0)) {
    DART_LOG_ERROR_IN(func, "team %d of the gptr does not exist", gptr.teamid);
    return DART_ERR_INVAL;
  }
  dart__segment_t *seg = dart__globmem__segtab_get(&team->segs, gptr.segid);
  if (__builtin_expect(seg == NULL, 0)) {
    DART_LOG_ERROR_IN(func, "segment %d of team %d does not exist (freed?)",
                      gptr.segid, gptr.teamid);
    return DART_ERR_INVAL;
  }
  int unit = gptr.unitid;
  if (__builtin_expect(unit < 0 || unit >= team->size, 0)) {
    DART_LOG_ERROR_IN(func, "unit %d is not in team %d of %d units", unit,
                      gptr.teamid, team->size);
    return DART_ERR_INVAL;
  }
  const dart__route_t *route = &seg->routes[unit];
  uint64_t offset = gptr.addr_or_offs.offset;
  target->team = team;
  target->seg = seg;
  target->unit = unit;
  if (__builtin_expect(offset > route->size || span > route->size - offset,
                       0)) {
    if (seg->kind == DART__SEG_POOL)
      return dart__globmem__pool_resolve(func, gptr, span, target);
    DART_LOG_ERROR_IN(func,
                      "offset %llu + %zu bytes is beyond the %zu bytes of "
                      "unit %d in segment %d",
                      (unsigned long long)offset, span, route->size, unit,
                      gptr.segid);
    return DART_ERR_INVAL;
  }
  target->route = route;
  target->offset = offset;
  return DART_OK;
}

/*
 * The target of span bytes at gptr inside a live allocation's part (its
 * first chunk for the local pool), without a log line: the fast paths' half
 * of dart__globmem__resolve. False for anything else, bad input included,
 * which dart__globmem__resolve then diagnoses.
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
