/*
 * The local pool behind dart_memalloc: segment 0 of DART_TEAM_ALL gives each
 * unit DART_LOCAL_POOL bytes that node peers reach through shared memory.
 * When it is full the unit adds a chunk of its own (private memory,
 * attached to DART_TEAM_ALL's dynamic window: node peers reach it through
 * CMA where they may, other units through MPI; on the UCX transport it is
 * registered with UCX too, and other nodes reach it through UCX) and lists
 * the chunk in the directory at the head of its pool part; others read a
 * directory entry once, on first access, and cache it. A chunk's packed
 * UCX key follows the chunk; those who need it read it through MPI with
 * the entry (they have no UCX key for it yet). Every unit's atomics on a
 * grown chunk take MPI: the owner's and node peers' would otherwise need
 * UCX endpoints (and their shared-memory mappings) to every peer.
 */
#include <dart/dart_globmem.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <threads.h>

#include "base/env.h"
#include "base/ralloc.h"
#include "base/runtime.h"
#include "globmem/globmem.h"
#include "transport/transport.h"
#include "types/datatype.h"

#define POOL_ALIGN 16
/* room after a chunk for its packed UCX key (a few dozen bytes; a larger
 * key leaves the chunk to MPI) */
#define POOL_KEY_ROOM 1024
#define OFFSET_MASK ((UINT64_C(1) << DART__POOL_CHUNK_SHIFT) - 1)

typedef struct {
  uint64_t disp;    /* in DART_TEAM_ALL's dynamic window */
  uint64_t addr;    /* in the owner's process */
  uint64_t size;
  uint64_t key_len; /* of the UCX key right after the chunk, or 0 */
} dir_entry_t;

/* Grown chunks a directory describes (chunk c at entry c - 1): as many as
 * fit the header. */
#define DIR_ENTRIES \
  ((DART__POOL_HEADER - 2 * sizeof(uint64_t)) / sizeof(dir_entry_t))

/* Directory at the head of each unit's pool part (read by other units). */
typedef struct {
  _Atomic uint64_t nchunks; /* grown chunks published so far */
  uint64_t wide_lock;       /* see dart__globmem__wide_lock */
  dir_entry_t chunk[DIR_ENTRIES];
} pool_dir_t;

_Static_assert(sizeof(pool_dir_t) <= DART__POOL_HEADER,
               "the pool directory must fit its header");

typedef struct {
  char *base;
  size_t size;     /* to allocate from */
  size_t map_size; /* mapped: size and the key room */
  dart__ralloc_t ra;
  void *mem, *packed; /* the remote transport's registration and key, or
                       * NULL */
} chunk_t;

/* Another unit's grown chunk as read from its directory (valid once size
 * is nonzero: entries are written once and never change). */
typedef struct {
  MPI_Aint disp;
  uint64_t addr;
  _Atomic(void *) key; /* the remote transport's, or NULL: MPI's */
  _Atomic uint64_t size;
} remote_chunk_t;

/*
 * Lookups of grown chunks take no lock: our own chunks are published by
 * nchunks (release) after they are filled in, and other units' entries by
 * their size. Allocation and free take the lock.
 */
static struct {
  chunk_t chunk[DART__POOL_MAX_CHUNKS]; /* 0: the pool part itself */
  _Atomic int nchunks;
  pool_dir_t *dir;
  _Atomic(remote_chunk_t *) *remote; /* per unit, on first use */
  mtx_t lock;
} pool;

dart_ret_t dart__globmem__pool_init(void)
{
  dart__team_t *all = dart__team__get(DART_TEAM_ALL);
  dart__segment_t *seg;
  memset(&pool, 0, sizeof pool);
  if (mtx_init(&pool.lock, mtx_plain) != thrd_success) return DART_ERR_OTHER;
  pool.remote = calloc((size_t)all->size, sizeof *pool.remote);
  if (pool.remote == NULL) return DART_ERR_NOMEM;
  dart_ret_t ret = dart__globmem__seg_create(
      "dart_init", all, DART__SEG_POOL, DART_MEMKIND_HOST,
      dart__base__config.local_pool, NULL, false, &seg);
  if (ret != DART_OK) {
    free(pool.remote);
    return ret;
  }
  pool.dir = (pool_dir_t *)seg->mybase;
  atomic_store(&pool.dir->nchunks, 0);
  pool.dir->wide_lock = 0;
  pool.chunk[0].base = seg->mybase + DART__POOL_HEADER;
  pool.chunk[0].size = dart__base__config.local_pool;
  dart__base__ralloc_init(&pool.chunk[0].ra, pool.chunk[0].size);
  pool.nchunks = 1;
  /* nobody reads a directory before its owner has written it */
  DART__MPI_CHECK(MPI_Barrier(all->comm));
  return DART_OK;
}

void dart__globmem__pool_fini(void)
{
  dart__team_t *all = dart__team__get(DART_TEAM_ALL);
  const dart__path_ops_t *remote = dart__transport__remote();
  const dart__path_ops_t *mpi = dart__transport__paths[DART__PATH_MPI];
  for (int c = 0; c < pool.nchunks; c++) {
    chunk_t *chunk = &pool.chunk[c];
    dart__base__ralloc_destroy(&chunk->ra);
    if (c > 0) {
      if (chunk->mem) remote->mem_deregister(chunk->mem, chunk->packed);
      if (all->segs.pool->attached) mpi->detach(all, chunk->base);
      munmap(chunk->base, chunk->map_size);
    }
  }
  for (int u = 0; u < all->size; u++) {
    remote_chunk_t *cache = atomic_load(&pool.remote[u]);
    for (int c = 0; cache && c < DART__POOL_MAX_CHUNKS; c++) {
      void *key = atomic_load(&cache[c].key);
      if (key) remote->key_destroy(key);
    }
    free(cache);
  }
  free(pool.remote);
  mtx_destroy(&pool.lock);
  dart__globmem__seg_destroy(all->segs.pool);
  memset(&pool, 0, sizeof pool);
}

/* Adds a chunk of at least bytes; returns its index or -1. */
static int pool_grow(size_t bytes)
{
  dart__team_t *all = dart__team__get(DART_TEAM_ALL);
  if ((size_t)pool.nchunks > DIR_ENTRIES) {
    DART_LOG_ERROR_IN("dart_memalloc", "the pool has %d chunks already",
                      pool.nchunks);
    return -1;
  }
  const char *func = "dart_memalloc";
  const dart__path_ops_t *remote = dart__transport__remote();
  const bool keyed = remote->mem_register != NULL && all->size > 1;
  size_t size = pool.chunk[pool.nchunks - 1].size * 2;
  /* DART_LOCAL_POOL may be 0: doubling needs a start */
  if (size == 0) size = DART__POOL_HEADER;
  while (size < bytes) size *= 2;
  const size_t map_size = size + (keyed ? POOL_KEY_ROOM : 0);
  chunk_t *chunk = &pool.chunk[pool.nchunks];
  char *base = mmap(NULL, map_size, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) {
    DART_LOG_ERROR_IN(func, "cannot map %zu bytes", map_size);
    return -1;
  }
  /* to DART_TEAM_ALL's window where the pool is attached: the window
   * exists then, and attaching to it is not collective */
  const dart__path_ops_t *mpi = dart__transport__paths[DART__PATH_MPI];
  const bool attach = all->segs.pool->attached;
  MPI_Aint disp = 0;
  if (attach && mpi->attach(func, all, base, map_size, &disp) != DART_OK)
    goto fail_map; /* logged */
  size_t key_len = 0;
  if (keyed) {
    if (remote->mem_register(func, base, map_size, &chunk->mem,
                             &chunk->packed, &key_len) != DART_OK)
      goto fail_attach; /* logged */
    if (key_len > POOL_KEY_ROOM) {
      DART_LOG_INFO("a key of %zu bytes does not fit after chunk %d of "
                    "the local pool: others reach it through MPI",
                    key_len, pool.nchunks);
      remote->mem_deregister(chunk->mem, chunk->packed);
      chunk->mem = chunk->packed = NULL;
      key_len = 0;
    } else {
      memcpy(base + size, chunk->packed, key_len);
    }
  }
  if (dart__base__ralloc_init(&chunk->ra, size) != 0) goto fail_key;
  chunk->base = base;
  chunk->size = size;
  chunk->map_size = map_size;
  /* publish: the entry first, then the count that makes it valid */
  pool.dir->chunk[pool.nchunks - 1].disp = (uint64_t)disp;
  pool.dir->chunk[pool.nchunks - 1].addr = (uint64_t)(uintptr_t)base;
  pool.dir->chunk[pool.nchunks - 1].size = size;
  pool.dir->chunk[pool.nchunks - 1].key_len = key_len;
  int c = pool.nchunks;
  DART_LOG_INFO("the local pool grows by chunk %d of %zu bytes", c, size);
  atomic_store_explicit(&pool.dir->nchunks, (uint64_t)c, memory_order_release);
  atomic_store_explicit(&pool.nchunks, c + 1, memory_order_release);
  return c;

fail_key:
  if (chunk->mem) remote->mem_deregister(chunk->mem, chunk->packed);
  memset(chunk, 0, sizeof *chunk);
fail_attach:
  if (attach) mpi->detach(all, base);
fail_map:
  munmap(base, map_size);
  return -1;
}

dart_ret_t dart_memalloc(size_t nelem, dart_datatype_t dtype,
                         dart_gptr_t *gptr)
{
  DART__CHECK_INIT();
  const dart__dtype_t *t = dart__types__dtype(dtype);
  if (t == NULL || !t->contiguous || gptr == NULL) {
    DART_LOG_ERROR("datatype %ld is not a known contiguous type, or gptr %p "
                   "is NULL", (long)dtype, (void *)gptr);
    return DART_ERR_INVAL;
  }
  if (nelem > (OFFSET_MASK >> 1) / t->elem_size) {
    DART_LOG_ERROR("%zu elements of %zu bytes are too many", nelem,
                   t->elem_size);
    return DART_ERR_INVAL;
  }
  size_t bytes = nelem * t->elem_size;
  if (bytes == 0) bytes = 1; /* every allocation has its own start */
  size_t offset;
  int c;
  mtx_lock(&pool.lock);
  for (c = 0; c < pool.nchunks; c++)
    if (dart__base__ralloc_alloc(&pool.chunk[c].ra, bytes, POOL_ALIGN,
                                 &offset) == 0)
      break;
  if (c == pool.nchunks) {
    c = pool_grow(bytes);
    if (c < 0 || dart__base__ralloc_alloc(&pool.chunk[c].ra, bytes,
                                          POOL_ALIGN, &offset) != 0) {
      mtx_unlock(&pool.lock);
      return DART_ERR_NOMEM;
    }
  }
  mtx_unlock(&pool.lock);
  dart_gptr_t g = DART_GPTR_NULL;
  g.unitid = dart__rt.myid;
  g.teamid = DART_TEAM_ALL;
  g.segid = DART_SEGMENT_LOCAL;
  g.addr_or_offs.offset = ((uint64_t)c << DART__POOL_CHUNK_SHIFT) | offset;
  *gptr = g;
  return DART_OK;
}

dart_ret_t dart_memfree(dart_gptr_t gptr)
{
  DART__CHECK_INIT();
  if (gptr.teamid != DART_TEAM_ALL || gptr.segid != DART_SEGMENT_LOCAL ||
      gptr.unitid != dart__rt.myid) {
    DART_LOG_ERROR("gptr (unit %d, team %d, segment %d) is not from this "
                   "unit's dart_memalloc", gptr.unitid, gptr.teamid,
                   gptr.segid);
    return DART_ERR_INVAL;
  }
  uint64_t c = gptr.addr_or_offs.offset >> DART__POOL_CHUNK_SHIFT;
  uint64_t offset = gptr.addr_or_offs.offset & OFFSET_MASK;
  mtx_lock(&pool.lock);
  int ret = c < (uint64_t)pool.nchunks
                ? dart__base__ralloc_free(&pool.chunk[c].ra, offset) : -1;
  mtx_unlock(&pool.lock);
  if (ret != 0) {
    DART_LOG_ERROR("offset %llu is not the start of a live allocation",
                   (unsigned long long)gptr.addr_or_offs.offset);
    return DART_ERR_INVAL;
  }
  return DART_OK;
}

/* A target for bytes of unit's pool directory at offset at, reached like
 * the pool part that follows it. */
static void dir_target(int unit, size_t at, size_t bytes,
                       dart__target_t *target)
{
  dart__team_t *all = dart__team__get(DART_TEAM_ALL);
  const dart__route_t *r0 = &all->segs.pool->routes[unit];
  const size_t back = DART__POOL_HEADER - at;
  dart__route_t *r = &target->grown;
  *r = *r0;
  r->base = r0->base ? r0->base - back : NULL;
  r->addr = r0->addr - back;
  r->disp = r0->disp - (MPI_Aint)back;
  r->size = bytes;
  target->team = all;
  target->seg = all->segs.pool;
  target->unit = unit;
  target->route = r;
  target->offset = 0;
}

/* Reads the remote transport's key after unit's chunk (through MPI: the
 * chunk is attached to the window with its key) and unpacks it into the
 * cache slot *slot. */
static dart_ret_t fetch_key(const char *func, int unit,
                            const dir_entry_t *entry, _Atomic(void *) *slot)
{
  const dart__path_ops_t *remote = dart__transport__remote();
  if (entry->key_len > POOL_KEY_ROOM || remote->key_unpack == NULL) {
    DART_LOG_ERROR_IN(func, "unit %d lists a key of %llu bytes", unit,
                      (unsigned long long)entry->key_len);
    return DART_ERR_OTHER;
  }
  dart__team_t *all = dart__team__get(DART_TEAM_ALL);
  unsigned char key[POOL_KEY_ROOM];
  const dart__dtype_t *byte = &dart__types__basic_types[DART_TYPE_BYTE];
  dart__route_t route = {.disp = (MPI_Aint)(entry->disp + entry->size),
                         .size = entry->key_len,
                         .path = DART__PATH_MPI};
  dart__target_t t = {.team = all, .seg = all->segs.pool, .unit = unit,
                      .route = &route, .offset = 0};
  dart__xfer_t x = {&t, key, byte, byte, entry->key_len, func};
  dart_ret_t ret = dart__path_mpi.get(&x, DART__MODE_BLOCKING, NULL);
  void *unpacked;
  return ret == DART_OK
             ? remote->key_unpack(func, unit, key, slot, &unpacked)
             : ret;
}

/* Reads unit's directory entry for chunk c (1-based) into out, and the
 * chunk's key when the chunk is to be reached through the remote
 * transport (want_key). */
static dart_ret_t fetch_chunk(const char *func, int unit, uint64_t c,
                              bool want_key, remote_chunk_t *out)
{
  dart__team_t *all = dart__team__get(DART_TEAM_ALL);
  const dart__route_t *r0 = &all->segs.pool->routes[unit];
  uint64_t published;
  dir_entry_t entry;
  size_t at = offsetof(pool_dir_t, chunk) + (c - 1) * sizeof entry;
  if (dart__path_load_store(r0->path)) {
    pool_dir_t *dir = (pool_dir_t *)(r0->base - DART__POOL_HEADER);
    published = atomic_load_explicit(&dir->nchunks, memory_order_acquire);
    memcpy(&entry, (const char *)dir + at, sizeof entry);
  } else {
    /* the count first: entries are written before it is raised */
    const dart__dtype_t *u64 = &dart__types__basic_types[DART_TYPE_ULONGLONG];
    const dart__path_ops_t *path = dart__transport__paths[r0->path];
    dart__target_t t;
    dart__xfer_t x = {&t, &published, u64, u64, 1, func};
    dir_target(unit, offsetof(pool_dir_t, nchunks), sizeof published, &t);
    dart_ret_t ret = path->get(&x, DART__MODE_BLOCKING, NULL);
    if (ret != DART_OK) return ret;
    dir_target(unit, at, sizeof entry, &t);
    x.local = &entry;
    x.nelem = sizeof entry / sizeof(uint64_t);
    if ((ret = path->get(&x, DART__MODE_BLOCKING, NULL)) != DART_OK)
      return ret;
  }
  if (c > published) {
    DART_LOG_ERROR_IN(func, "unit %d has no pool chunk %llu", unit,
                      (unsigned long long)c);
    return DART_ERR_INVAL;
  }
  if (entry.key_len > 0 && want_key) {
    dart_ret_t ret = fetch_key(func, unit, &entry, &out->key);
    if (ret != DART_OK) return ret;
  }
  out->disp = (MPI_Aint)entry.disp;
  out->addr = entry.addr;
  atomic_store_explicit(&out->size, entry.size, memory_order_release);
  return DART_OK;
}

/* The cache of unit's grown chunks, made on first use. */
static remote_chunk_t *remote_cache(int unit)
{
  remote_chunk_t *cache =
      atomic_load_explicit(&pool.remote[unit], memory_order_acquire);
  if (cache) return cache;
  remote_chunk_t *fresh = calloc(DART__POOL_MAX_CHUNKS, sizeof *fresh);
  if (fresh == NULL) return NULL;
  if (!atomic_compare_exchange_strong(&pool.remote[unit], &cache, fresh)) {
    free(fresh); /* another thread was first */
    return cache;
  }
  return fresh;
}

void dart__globmem__wide_lock(int unit, dart__target_t *target)
{
  dir_target(unit, offsetof(pool_dir_t, wide_lock), sizeof(uint64_t), target);
}

bool dart__globmem__pool_own_chunk(uint64_t c, char **base, size_t *size)
{
  if (c == 0 || c >= (uint64_t)atomic_load_explicit(&pool.nchunks,
                                                    memory_order_acquire))
    return false;
  *base = pool.chunk[c].base;
  *size = pool.chunk[c].size;
  return true;
}

dart_ret_t dart__globmem__pool_resolve(const char *func, dart_gptr_t gptr,
                                       size_t span, dart__target_t *target)
{
  int unit = target->unit;
  uint64_t c = gptr.addr_or_offs.offset >> DART__POOL_CHUNK_SHIFT;
  uint64_t offset = gptr.addr_or_offs.offset & OFFSET_MASK;
  dart__route_t *route = &target->grown;
  /* a chunk is in no shared window */
  dart__reach_t q = {.team = target->team, .unit = unit};
  dart_ret_t ret;
  /* chunks beyond the directory never exist (and reading their entries
   * would read past the header) */
  if (c == 0 || c > DIR_ENTRIES) goto out_of_bounds;
  if (unit == dart__rt.myid) {
    if (c >= (uint64_t)atomic_load_explicit(&pool.nchunks,
                                            memory_order_acquire))
      goto out_of_bounds;
    route->key = NULL;
    route->base = pool.chunk[c].base;
    route->addr = (uint64_t)(uintptr_t)route->base;
    route->size = pool.chunk[c].size;
    MPI_Get_address(route->base, &route->disp);
  } else {
    remote_chunk_t *cache = remote_cache(unit);
    if (cache == NULL) return DART_ERR_NOMEM;
    *route = (dart__route_t){0};
    if (atomic_load_explicit(&cache[c].size, memory_order_acquire) == 0) {
      /* its key is needed where, without one, only MPI would reach it */
      if ((ret = dart__transport__route(func, &q, route)) != DART_OK ||
          (ret = fetch_chunk(func, unit, c, route->path == DART__PATH_MPI,
                             &cache[c])) != DART_OK)
        return ret;
    }
    route->key = atomic_load_explicit(&cache[c].key, memory_order_relaxed);
    route->base = NULL;
    route->addr = cache[c].addr;
    route->disp = cache[c].disp;
    route->size = atomic_load_explicit(&cache[c].size, memory_order_relaxed);
  }
  q.keyed = route->key != NULL;
  if ((ret = dart__transport__route(func, &q, route)) != DART_OK) return ret;
  /* every unit's atomics on a chunk take MPI (see the top); the owner's
   * CPU atomics would not be atomic with them */
  route->atomics = dart__team__get(DART_TEAM_ALL)->segs.pool->attached
                       ? DART__PATH_MPI
                       : DART__PATH_SHM;
  if (offset > route->size || span > route->size - offset) goto out_of_bounds;
  target->route = route;
  target->offset = offset;
  return DART_OK;

out_of_bounds:
  DART_LOG_ERROR_IN(func,
                    "offset %llu + %zu bytes is outside the local pool of "
                    "unit %d",
                    (unsigned long long)gptr.addr_or_offs.offset, span, unit);
  return DART_ERR_INVAL;
}
