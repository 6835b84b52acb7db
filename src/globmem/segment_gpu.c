/*
 * Device segments: each unit's part is memory of its device; node peers
 * reach it through CUDA IPC.
 *
 * The exports (handle, allocation id, offset) are allgathered at
 * allocation; a peer's handle is opened on first use and cached for the
 * process, keyed by (owner, allocation id): two registrations of one
 * allocation share a mapping (CUDA maps a handle once per process), and a
 * new allocation at a freed one's address is a new key, never the stale
 * mapping. Mappings close at free, before the owners free their memory
 * (CUDA requires that order).
 */
#include <pthread.h>
#include <stdlib.h>

#include "base/runtime.h"
#include "globmem/globmem.h"
#include "gpu/gpu.h"
#include "progress/progress.h"

typedef struct mapping {
  int64_t owner;
  uint64_t alloc_id;
  void *base;
  int refs;
  struct mapping *next;
} mapping_t;

static struct {
  pthread_mutex_t lock;
  mapping_t *list;
} cache = {PTHREAD_MUTEX_INITIALIZER, NULL};

dart_ret_t dart__globmem__device_init(const char *func, dart__segment_t *seg,
                               void *addr)
{
  dart__team_t *team = seg->team;
  const dart__gpu_ops_t *ops = dart__gpu.ops;
  dart_ret_t ret;
  seg->gpu.exports = calloc((size_t)team->size, sizeof *seg->gpu.exports);
  seg->gpu.parts = calloc((size_t)team->size, sizeof *seg->gpu.parts);
  if (seg->gpu.exports == NULL || seg->gpu.parts == NULL) {
    DART_LOG_ERROR_IN(func, "out of memory for %d units' exports",
                      team->size);
    return DART_ERR_NOMEM;
  }
  /* the staging service polls while such segments live */
  if (seg->remote && !dart__gpu.ucx_direct) {
    atomic_fetch_add(&dart__gpu.staged_segments, 1);
    seg->gpu.staged = true;
  }
  /* a failed export tells the others through owner -1 */
  dart__gpu_export_t mine = {.owner = team->members[team->myid]};
  bool mine_ok = seg->mysize == 0 || ops->is_device(seg->mybase);
  if (mine_ok && seg->mysize > 0 &&
      ops->export_mem(func, seg->mybase, seg->mysize, &mine) != DART_OK)
    mine_ok = false; /* logged */
  if (!mine_ok) mine.owner = -1;
  MPI_Request req;
  if (MPI_Iallgather(&mine, sizeof mine, MPI_BYTE, seg->gpu.exports,
                     sizeof mine, MPI_BYTE, team->comm, &req) !=
          MPI_SUCCESS ||
      (ret = dart__progress__wait(func, 1, &req)) != DART_OK) {
    DART_LOG_ERROR_IN(func, "MPI_Allgather of the device exports failed");
    return DART_ERR_OTHER;
  }
  /* one line: this unit's failure, or the first other unit's */
  int failed = -1;
  for (int u = 0; u < team->size && failed < 0; u++)
    if (seg->gpu.exports[u].owner < 0) failed = u;
  if (failed >= 0) {
    if (!mine_ok)
      DART_LOG_ERROR_IN(func, "%p is not memory of this unit's device",
                        addr ? addr : (void *)seg->mybase);
    else
      DART_LOG_ERROR_IN(func, "unit %d could not share its device memory",
                        failed);
    return DART_ERR_INVAL;
  }
  atomic_store_explicit(&seg->gpu.parts[team->myid], seg->mybase,
                        memory_order_relaxed);
  return DART_OK;
}

dart_ret_t dart__globmem__device_part(const char *func, dart__segment_t *seg,
                                      int unit, char **base)
{
  char *p = atomic_load_explicit(&seg->gpu.parts[unit], memory_order_acquire);
  if (__builtin_expect(p != NULL, 1)) {
    *base = p;
    return DART_OK;
  }
  if (seg->routes[unit].size == 0) { /* nothing to map, nothing to reach */
    *base = NULL;
    return DART_OK;
  }
  const dart__gpu_export_t *e = &seg->gpu.exports[unit];
  dart_ret_t ret = DART_OK;
  pthread_mutex_lock(&cache.lock);
  p = atomic_load_explicit(&seg->gpu.parts[unit], memory_order_relaxed);
  if (p == NULL) {
    mapping_t *m = cache.list;
    while (m && (m->owner != e->owner || m->alloc_id != e->alloc_id))
      m = m->next;
    if (m == NULL) {
      if ((m = calloc(1, sizeof *m)) == NULL) {
        DART_LOG_ERROR_IN(func, "out of memory for an IPC mapping");
        ret = DART_ERR_NOMEM;
      } else if ((ret = dart__gpu.ops->open(func, e, &m->base)) != DART_OK) {
        free(m);
        m = NULL;
      } else {
        m->owner = e->owner;
        m->alloc_id = e->alloc_id;
        m->next = cache.list;
        cache.list = m;
      }
    }
    if (m) {
      m->refs++;
      p = (char *)m->base + e->offset;
      atomic_store_explicit(&seg->gpu.parts[unit], p, memory_order_release);
    }
  }
  pthread_mutex_unlock(&cache.lock);
  if (ret == DART_OK) *base = p;
  return ret;
}

void dart__globmem__device_unmap(dart__segment_t *seg)
{
  dart__team_t *team = seg->team;
  if (seg->gpu.parts == NULL) return;
  pthread_mutex_lock(&cache.lock);
  for (int u = 0; u < team->size; u++) {
    if (u == team->myid ||
        atomic_load_explicit(&seg->gpu.parts[u], memory_order_relaxed) == NULL)
      continue;
    const dart__gpu_export_t *e = &seg->gpu.exports[u];
    mapping_t **at = &cache.list;
    while (*at && ((*at)->owner != e->owner || (*at)->alloc_id != e->alloc_id))
      at = &(*at)->next;
    mapping_t *m = *at;
    if (m && --m->refs == 0) {
      *at = m->next;
      dart__gpu.ops->close(m->base);
      free(m);
    }
    atomic_store_explicit(&seg->gpu.parts[u], NULL, memory_order_relaxed);
  }
  pthread_mutex_unlock(&cache.lock);
}

void dart__globmem__device_release(dart__segment_t *seg)
{
  dart__globmem__device_unmap(seg);
  if (seg->gpu.staged) atomic_fetch_sub(&dart__gpu.staged_segments, 1);
  seg->gpu.staged = false;
  if (seg->gpu.alloc) dart__gpu.ops->free(seg->gpu.alloc);
  free(seg->gpu.exports);
  free((void *)seg->gpu.parts);
  seg->gpu.alloc = NULL;
  seg->gpu.exports = NULL;
  seg->gpu.parts = NULL;
}
