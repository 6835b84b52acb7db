/*
 * Global memory: collective segments, the local pool, and the resolution of
 * a global pointer to the route that reaches its target.
 */
#ifndef DART__GLOBMEM__GLOBMEM_H_
#define DART__GLOBMEM__GLOBMEM_H_

#include <dart/dart_globmem.h>
#include <string.h>

#include "base/log.h"
#include "base/runtime.h"
#include "globmem/segment.h"
#include "team/team.h"

/* Where an access lands: the route and the offset within it. */
typedef struct dart__target {
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
 * The route cache. Following a gptr to its route is a chain of dependent
 * loads (team table, team, segment table, segment, route); after a
 * blocking put's fence each of them waits for the one before, and between
 * node peers the chain costs more than the put itself. So the routes found
 * last are kept in a small direct-mapped table, where a hit is one load
 * (of the entry's first cache line). dart__globmem__route_at fills it;
 * every entry goes when any segment goes (dart__globmem__route_cache_clear),
 * so a hit is a live segment. Under DART_THREAD_MULTIPLE it stays empty:
 * another thread could free a segment between a hit and its use.
 */
#define DART__ROUTE_CACHE_LEN 64

typedef struct dart__route_cache {
  uint64_t key;  /* dart__globmem__route_key of the gptr; 0: empty */
  char *base;    /* the route's */
  uint64_t size; /* the route's */
  /* operations along the route's path since the fill, which the hot paths
   * count here, in a line they have loaded anyway (dart_path_count adds
   * them up; dart__transport__path_ops takes them when the entry goes) */
  uint64_t ops;
  dart__team_t *team;
  dart__segment_t *seg;
  const dart__route_t *route;
  int8_t path, atomics; /* the route's */
  /* the public functions copy to and from base themselves: SELF or SHM,
   * and no device backend (whose local buffers may be device memory) */
  bool copy;
  int32_t unit; /* the gptr's, in team */
  /* The remote transport's own for the route, which its cached slots
   * enter on their first use there and alone read, in the entry's second
   * line: its connection to the unit (conn NULL: not yet), key, the part's
   * address in its owner's process and the global unit. With these at
   * hand an operation is one call into the transport. */
  struct {
    void *conn;
    void *key;
    uint64_t addr;
    int unit;
  } remote __attribute__((aligned(64)));
} __attribute__((aligned(64))) dart__route_cache_t;
_Static_assert(sizeof(dart__route_cache_t) == 128,
               "two cache lines an entry, the remote transport's second");

/* hidden: addressed relative to the code, not through the GOT */
extern dart__route_cache_t dart__globmem__route_cache[DART__ROUTE_CACHE_LEN]
    __attribute__((visibility("hidden")));

/*
 * The unit, segment and team of gptr in one word, with the flag bits set
 * (they name no memory): never 0, so no gptr matches an empty entry. A
 * copy through a 128-bit integer keeps the gptr in its two registers,
 * where a union or an 8-byte copy sends it to the stack; elsewhere the
 * word is assembled from the fields.
 */
static inline __attribute__((always_inline)) uint64_t
dart__globmem__route_key(dart_gptr_t gptr)
{
#if defined(__SIZEOF_INT128__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  unsigned __int128 words, flag_words;
  const dart_gptr_t flags = {.flags = 0xff};
  memcpy(&words, &gptr, sizeof words);
  memcpy(&flag_words, &flags, sizeof flag_words);
  return (uint64_t)words | (uint64_t)flag_words;
#else
  uint32_t seg_team =
      (uint32_t)(uint16_t)gptr.segid | (uint32_t)(uint16_t)gptr.teamid << 16;
  return (uint64_t)seg_team << 32 | (uint32_t)gptr.unitid << 8 | 1;
#endif
}

/* The entry of a key: unit and segment mixed, so that neighbours in a
 * team and several segments of one unit take different entries. */
static inline __attribute__((always_inline)) dart__route_cache_t *
dart__globmem__route_entry(uint64_t key)
{
  return &dart__globmem__route_cache[(key ^ (key >> 32)) &
                                     (DART__ROUTE_CACHE_LEN - 1)];
}

/* The cached route of span bytes at gptr, or NULL (not cached, or beyond
 * the part: dart__globmem__route_at then decides). */
static inline __attribute__((always_inline)) dart__route_cache_t *
dart__globmem__route_cached(dart_gptr_t gptr, size_t span)
{
  uint64_t key = dart__globmem__route_key(gptr);
  dart__route_cache_t *e = dart__globmem__route_entry(key);
  uint64_t offset = gptr.addr_or_offs.offset;
  if (__builtin_expect(key != e->key, 0) || offset > e->size ||
      span > e->size - offset)
    return NULL;
  return e;
}

/* Enters target's route for gptr (out of line: misses only). */
void dart__globmem__route_fill(dart_gptr_t gptr, const dart__target_t *target);

/* Empties the cache: whenever a segment goes. */
void dart__globmem__route_cache_clear(void);

/* Operations counted in the cache along path (dart_path_count). */
uint64_t dart__globmem__route_cache_ops(int path);

/*
 * The target of span bytes at gptr inside a live allocation's part (its
 * first chunk for the local pool), without a log line: the inline half of
 * dart__globmem__resolve, and the fast paths' lookup. False for anything
 * else, bad input included, which dart__globmem__resolve then diagnoses.
 */
static inline __attribute__((always_inline)) bool
dart__globmem__route_at(dart_gptr_t gptr, size_t span, dart__target_t *target)
{
  const dart__route_cache_t *e = dart__globmem__route_cached(gptr, span);
  if (__builtin_expect(e != NULL, 1)) {
    target->team = e->team;
    target->seg = e->seg;
    target->route = e->route;
    target->offset = gptr.addr_or_offs.offset;
    target->unit = gptr.unitid;
    return true;
  }
  dart__team_t *team = dart__team__get(gptr.teamid);
  if (team == NULL) return false;
  dart__segment_t *seg = dart__team__segtab_get(&team->segs, gptr.segid);
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
  if (dart__rt.thread_level != DART_THREAD_MULTIPLE)
    dart__globmem__route_fill(gptr, target);
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
 * team's segment table; owner_atomics: its owners apply its atomics
 * (dart_am.h), host memory only. */
dart_ret_t dart__globmem__seg_create(const char *func, dart__team_t *team,
                                     dart__seg_kind_t kind, int memkind,
                                     size_t bytes, void *addr,
                                     bool owner_atomics,
                                     dart__segment_t **out);

/* Opens what the owners need to apply atomics on team (am/owner.c sets
 * it at dart_init): collective, at the first such segment of the team. */
extern dart_ret_t (*dart__globmem__owner_open)(const char *func,
                                               dart__team_t *team);
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
