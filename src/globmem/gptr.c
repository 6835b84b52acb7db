#include <dart/dart_ext.h>
#include <dart/dart_globmem.h>

#include <string.h>

#include "base/runtime.h"
#include "globmem/globmem.h"
#include "gpu/gpu.h"
#include "transport/transport.h"

dart__route_cache_t dart__globmem__route_cache[DART__ROUTE_CACHE_LEN];

/* The entry's operations to the path counters, as it goes. */
static void route_retire(const dart__route_cache_t *e)
{
  if (e->key != 0) dart__transport__count_ops(e->path, e->ops);
}

void dart__globmem__route_fill(dart_gptr_t gptr, const dart__target_t *target)
{
  const dart__route_t *r = target->route;
  uint64_t key = dart__globmem__route_key(gptr);
  dart__route_cache_t *e = dart__globmem__route_entry(key);
  route_retire(e);
  *e = (dart__route_cache_t){.key = key,
                             .base = r->base,
                             .size = r->size,
                             .team = target->team,
                             .seg = target->seg,
                             .route = r,
                             .path = (int8_t)r->path,
                             .atomics = (int8_t)r->atomics,
                             .copy = dart__path_load_store(r->path) &&
                                     dart__gpu.ops == NULL,
                             .unit = gptr.unitid};
}

void dart__globmem__route_cache_clear(void)
{
  for (int i = 0; i < DART__ROUTE_CACHE_LEN; i++)
    route_retire(&dart__globmem__route_cache[i]);
  memset(dart__globmem__route_cache, 0, sizeof dart__globmem__route_cache);
}

uint64_t dart__globmem__route_cache_ops(int path)
{
  uint64_t ops = 0;
  for (int i = 0; i < DART__ROUTE_CACHE_LEN; i++) {
    const dart__route_cache_t *e = &dart__globmem__route_cache[i];
    if (e->key != 0 && e->path == path) ops += e->ops;
  }
  return ops;
}

dart_ret_t dart__globmem__resolve_miss(const char *func, dart_gptr_t gptr,
                                       size_t span, dart__target_t *target)
{
  dart__team_t *team = dart__team__get(gptr.teamid);
  if (team == NULL) {
    DART_LOG_ERROR_IN(func, "team %d of the gptr does not exist", gptr.teamid);
    return DART_ERR_INVAL;
  }
  dart__segment_t *seg = dart__team__segtab_get(&team->segs, gptr.segid);
  if (seg == NULL) {
    DART_LOG_ERROR_IN(func, "segment %d of team %d does not exist (freed?)",
                      gptr.segid, gptr.teamid);
    return DART_ERR_INVAL;
  }
  int unit = gptr.unitid;
  if (unit < 0 || unit >= team->size) {
    DART_LOG_ERROR_IN(func, "unit %d is not in team %d of %d units", unit,
                      gptr.teamid, team->size);
    return DART_ERR_INVAL;
  }
  if (seg->kind == DART__SEG_POOL) {
    target->team = team;
    target->seg = seg;
    target->unit = unit;
    return dart__globmem__pool_resolve(func, gptr, span, target);
  }
  DART_LOG_ERROR_IN(func,
                    "offset %llu + %zu bytes is beyond the %zu bytes of unit "
                    "%d in segment %d",
                    (unsigned long long)gptr.addr_or_offs.offset, span,
                    seg->routes[unit].size, unit, gptr.segid);
  return DART_ERR_INVAL;
}

dart_ret_t dart_gptr_getaddr(const dart_gptr_t gptr, void **addr)
{
  DART__CHECK_INIT();
  if (addr == NULL) {
    DART_LOG_ERROR("addr is NULL");
    return DART_ERR_INVAL;
  }
  dart__target_t target;
  dart_ret_t ret = dart__globmem__resolve(__func__, gptr, 0, &target);
  if (ret != DART_OK) return ret;
  /* the own part of a device segment: its device address */
  bool own = target.route->path == DART__PATH_SELF ||
             (target.route->path == DART__PATH_IPC &&
              target.unit == target.team->myid);
  *addr = own ? target.route->base + target.offset : NULL;
  return DART_OK;
}

dart_ret_t dart_gptr_getaddr_shared(dart_gptr_t gptr, void **addr)
{
  DART__CHECK_INIT();
  if (addr == NULL) {
    DART_LOG_ERROR("addr is NULL");
    return DART_ERR_INVAL;
  }
  dart__target_t target;
  dart_ret_t ret = dart__globmem__resolve(__func__, gptr, 0, &target);
  if (ret != DART_OK) return ret;
  int path = target.route->path;
  char *base = NULL;
  if (dart__path_load_store(path))
    base = target.route->base;
  else if (path == DART__PATH_IPC && /* a device address, mapped now */
           (ret = dart__globmem__device_part(__func__, target.seg, target.unit,
                                             &base)) != DART_OK)
    return ret;
  *addr = base ? base + target.offset : NULL;
  return DART_OK;
}

dart_ret_t dart_gptr_setaddr(dart_gptr_t *gptr, void *addr)
{
  DART__CHECK_INIT();
  if (gptr == NULL) {
    DART_LOG_ERROR("gptr is NULL");
    return DART_ERR_INVAL;
  }
  dart__team_t *team = dart__team__get(gptr->teamid);
  dart__segment_t *seg =
      team ? dart__team__segtab_get(&team->segs, gptr->segid) : NULL;
  if (seg == NULL) {
    DART_LOG_ERROR("gptr (team %d, segment %d) is not a live allocation",
                   gptr->teamid, gptr->segid);
    return DART_ERR_INVAL;
  }
  /* our own part; for the local pool, its first chunk or a grown one */
  dart_gptr_t g = *gptr;
  g.unitid = team->myid;
  const dart__route_t *own = &seg->routes[team->myid];
  char *at = addr;
  if (at >= own->base && (size_t)(at - own->base) <= own->size) {
    g.addr_or_offs.offset = (uint64_t)(at - own->base);
    *gptr = g;
    return DART_OK;
  }
  if (seg->kind == DART__SEG_POOL) {
    /* our grown chunks (not through pool_resolve: it logs past the last) */
    char *base;
    size_t size;
    for (uint64_t c = 1; dart__globmem__pool_own_chunk(c, &base, &size);
         c++) {
      if (at >= base && (size_t)(at - base) <= size) {
        g.addr_or_offs.offset =
            c << DART__POOL_CHUNK_SHIFT | (uint64_t)(at - base);
        *gptr = g;
        return DART_OK;
      }
    }
  }
  DART_LOG_ERROR("address %p is not in this unit's part of segment %d", addr,
                 gptr->segid);
  return DART_ERR_INVAL;
}

dart_ret_t dart_gptr_getflags(dart_gptr_t gptr, uint16_t *flags)
{
  DART__CHECK_INIT();
  if (flags == NULL) {
    DART_LOG_ERROR("flags is NULL");
    return DART_ERR_INVAL;
  }
  *flags = (uint16_t)gptr.flags;
  return DART_OK;
}

dart_ret_t dart_gptr_setflags(dart_gptr_t *gptr, uint16_t flags)
{
  DART__CHECK_INIT();
  if (gptr == NULL || flags > 0xFF) {
    DART_LOG_ERROR("gptr %p is NULL or flags %u do not fit 8 bits",
                   (void *)gptr, (unsigned)flags);
    return DART_ERR_INVAL;
  }
  gptr->flags = flags;
  return DART_OK;
}

static dart_ret_t gptr_path(const char *func, dart_gptr_t gptr, bool atomics,
                            dart_path_t *path)
{
  DART__CHECK_INIT_IN(func);
  if (path == NULL) {
    DART_LOG_ERROR_IN(func, "path is NULL");
    return DART_ERR_INVAL;
  }
  dart__target_t target;
  dart_ret_t ret = dart__globmem__resolve(func, gptr, 0, &target);
  if (ret != DART_OK) return ret;
  const dart__route_t *r = target.route;
  bool cpu_atomics =
      dart__path_load_store(r->atomics);
  *path = (dart_path_t)(atomics && !cpu_atomics ? r->atomics : r->path);
  return DART_OK;
}

dart_ret_t dart_gptr_path(dart_gptr_t gptr, dart_path_t *path)
{
  return gptr_path(__func__, gptr, false, path);
}

dart_ret_t dart_gptr_atomic_path(dart_gptr_t gptr, dart_path_t *path)
{
  return gptr_path(__func__, gptr, true, path);
}
