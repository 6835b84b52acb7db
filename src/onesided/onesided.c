/*
 * Public one-sided functions: validate, look up the route, dispatch to the
 * route's path. No transport code here.
 */
#include <dart/dart_communication.h>
#include <dart/dart_ext.h>
#include <limits.h>
#include <stdatomic.h>
#include <string.h>

#include "base/copy.h"
#include "base/env.h"
#include "base/fence.h"
#include "base/runtime.h"
#include "gpu/gpu.h"
#include "onesided/onesided.h"
#include "transport/acc_queue.h"

/* Validates a transfer and resolves its target. */
static inline __attribute__((always_inline)) dart_ret_t
prepare(const char *func, dart_gptr_t gptr, void *local, size_t nelem,
        dart_datatype_t local_type, dart_datatype_t remote_type, bool is_put,
        dart__target_t *target, dart__xfer_t *x)
{
  DART__CHECK_INIT_IN(func);
  dart_ret_t ret =
      is_put ? dart__types__dtype_pair(func, local_type, remote_type, nelem,
                                       &x->local_t, &x->remote_t)
             : dart__types__dtype_pair(func, remote_type, local_type, nelem,
                                       &x->remote_t, &x->local_t);
  if (__builtin_expect(ret != DART_OK, 0)) return ret;
  if (__builtin_expect(local == NULL && nelem > 0, 0)) {
    DART_LOG_ERROR_IN(func, "the local buffer is NULL for %zu elements",
                      nelem);
    return DART_ERR_INVAL;
  }
  size_t span = dart__types__dtype_span(x->remote_t, nelem) *
                x->remote_t->elem_size;
  ret = dart__globmem__resolve(func, gptr, span, target);
  if (__builtin_expect(ret != DART_OK, 0)) return ret;
  x->target = target;
  x->local = local;
  x->nelem = nelem;
  x->func = func;
  return DART_OK;
}

dart_ret_t dart__onesided__prepare(const char *func, dart_gptr_t gptr,
                                   void *local, size_t nelem,
                                   dart_datatype_t local_type,
                                   dart_datatype_t remote_type, bool is_put,
                                   dart__target_t *target, dart__xfer_t *x)
{
  return prepare(func, gptr, local, nelem, local_type, remote_type, is_put,
                 target, x);
}

/*
 * A copy between local and remote, memory this process loads and stores,
 * completed as mode asks. An aligned 8-byte blocking put is one exchange:
 * locked, so it is its own fence, and a blocking put's fence waits for
 * every store before it, the spilled registers too.
 */
static inline __attribute__((always_inline)) void
copy_now(char *remote, void *local, size_t bytes, bool is_put,
         dart__mode_t mode, dart_handle_t *handle)
{
  if (is_put && mode != DART__MODE_NB &&
      __builtin_expect(bytes == 8 && ((uintptr_t)remote & 7) == 0, 1)) {
    uint64_t word;
    memcpy(&word, local, 8);
    dart__base__store_fence((uint64_t *)remote, word);
    if (mode == DART__MODE_HANDLE) *handle = DART_HANDLE_NULL;
  } else if (is_put) {
    dart__base__copy(remote, local, bytes);
    dart__transport__stores_done(mode, handle);
  } else {
    atomic_thread_fence(memory_order_acquire);
    dart__base__copy(local, remote, bytes);
    if (mode == DART__MODE_HANDLE) *handle = DART_HANDLE_NULL;
  }
}

/* The bytes of nelem elements of one basic type on both sides, or 0 for
 * anything the fast paths leave to routed_transfer. */
static inline __attribute__((always_inline)) size_t
fast_bytes(void *local, size_t nelem, dart_datatype_t local_type,
           dart_datatype_t remote_type, dart__mode_t mode,
           dart_handle_t *handle)
{
  if (local_type != remote_type || local_type <= DART_TYPE_UNDEFINED ||
      local_type >= DART_TYPE_LAST || local == NULL ||
      (mode == DART__MODE_HANDLE && handle == NULL))
    return 0;
  size_t bytes;
  if (__builtin_mul_overflow(nelem, dart__types__basic_size[local_type],
                             &bytes))
    return 0;
  return bytes;
}

/*
 * The hot path: one basic type on both sides to a cached route of load
 * and store memory, copied right here, or along a path with cached slots
 * (and no device backend, whose local buffers may be device memory),
 * handed to it at once; true then, with the result in *ret. Nothing else
 * is done here, so that the public functions need no registers saved for
 * it; false, with nothing done, for anything else.
 */
static inline __attribute__((always_inline)) bool
cached_transfer(dart_gptr_t gptr, void *local, size_t nelem,
                dart_datatype_t local_type, dart_datatype_t remote_type,
                bool is_put, dart__mode_t mode, dart_handle_t *handle,
                dart_ret_t *ret)
{
  size_t bytes =
      fast_bytes(local, nelem, local_type, remote_type, mode, handle);
  if (bytes == 0) return false;
  dart__route_cache_t *e = dart__globmem__route_cached(gptr, bytes);
  if (__builtin_expect(e == NULL, 0)) return false;
  if (__builtin_expect(!e->copy, 0)) {
    const dart__path_ops_t *path = dart__transport__paths[e->path];
    if (path->cached_start == NULL || dart__gpu.ops != NULL) return false;
    uint64_t offset = gptr.addr_or_offs.offset;
    *ret = mode != DART__MODE_BLOCKING
               ? path->cached_start(e, offset, local, bytes, is_put, handle)
           : is_put ? path->cached_put_blocking(e, offset, local, bytes)
                    : path->cached_get_blocking(e, offset, local, bytes);
    return true;
  }
  const uint64_t n = ++e->ops;
  copy_now(e->base + gptr.addr_or_offs.offset, local, bytes, is_put, mode,
           handle);
  *ret = dart__progress__served(n);
  return true;
}

/*
 * A route cache miss of one basic type on both sides, at most INT_MAX
 * bytes and no device backend: resolved once, then copied right here to
 * memory this process loads and stores, or handed to the path's contig
 * slot, which every host path that does not load and store has (its
 * result in *ret). Building the transfer and its put or get cost more
 * than an 8-byte copy or a put to UCX's shared memory. False, with nothing
 * done, for anything else (routed_transfer validates and resolves it).
 */
static inline __attribute__((always_inline)) bool
fast_transfer(const char *func, dart_gptr_t gptr, void *local, size_t nelem,
              dart_datatype_t local_type, dart_datatype_t remote_type,
              bool is_put, dart__mode_t mode, dart_handle_t *handle,
              dart_ret_t *ret)
{
  size_t bytes =
      fast_bytes(local, nelem, local_type, remote_type, mode, handle);
  /* with a device backend, routed_transfer tells device from host memory
   * (a call here would keep every argument alive across it) */
  if (bytes == 0 || bytes > INT_MAX || dart__gpu.ops != NULL ||
      !dart__rt.initialized)
    return false;
  dart__target_t target;
  if (!dart__globmem__route_at(gptr, bytes, &target)) return false;
  const int path = target.route->path;
  if (!dart__path_load_store(path)) {
    const dart__path_ops_t *ops = dart__transport__paths[path];
    if (__builtin_expect(ops->contig == NULL, 0)) return false; /* none */
    dart__transport__count_op(path);
    *ret = ops->contig(func, &target, local, bytes, is_put, mode, handle);
    return true;
  }
  dart__transport__count_op(path);
  copy_now(target.route->base + target.offset, local, bytes, is_put, mode,
           handle);
  *ret = DART_OK;
  return true;
}

/* Any other transfer: validated, resolved and sent along its route's
 * path. Out of line, so that the public functions around fast_transfer
 * stay small. */
static __attribute__((noinline)) dart_ret_t
routed_transfer(const char *func, dart_gptr_t gptr, void *local,
                size_t nelem, dart_datatype_t local_type,
                dart_datatype_t remote_type, bool is_put, dart__mode_t mode,
                dart_handle_t *handle)
{
  dart__target_t target;
  dart__xfer_t x;
  /* a failed call leaves a handle that waits for nothing, as DART-MPI's:
   * DASH waits on the handles of the gets it started, failed ones too */
  if (mode == DART__MODE_HANDLE && !dart__onesided__handle_out(func, handle))
    return DART_ERR_INVAL;
  dart_ret_t ret = prepare(func, gptr, local, nelem, local_type, remote_type,
                           is_put, &target, &x);
  if (ret != DART_OK || nelem == 0) return ret;
  return dart__onesided__transfer(&target, &x, is_put, mode, handle);
}

dart_ret_t dart__onesided__transfer(const dart__target_t *target,
                                    const dart__xfer_t *x, bool is_put,
                                    dart__mode_t mode, dart_handle_t *handle)
{
  int path = target->route->path;
  dart__transport__count_op(path);
  /* device memory on the local side of a host path: through the host,
   * unless the remote transport moves it itself */
  if (!dart__path_props[path].device && dart__gpu__is_device(x->local)) {
    if (path != dart__rt.remote_path || !dart__gpu.ucx_direct)
      return dart__gpu__local_xfer(
          x, is_put, path, target->team->members[target->unit],
          dart__path_load_store(path) ? target->route->base + target->offset
                                      : NULL,
          mode, handle);
    dart__xfer_t direct = *x;
    direct.local = dart__gpu.ops->ucx_addr(x->local);
    return is_put ? dart__transport__paths[path]->put(&direct, mode, handle)
                  : dart__transport__paths[path]->get(&direct, mode, handle);
  }
  return is_put ? dart__transport__paths[path]->put(x, mode, handle)
                : dart__transport__paths[path]->get(x, mode, handle);
}

/* Everything but the hot path. */
static inline __attribute__((always_inline)) dart_ret_t
uncached_transfer(const char *func, dart_gptr_t gptr, void *local,
                  size_t nelem, dart_datatype_t local_type,
                  dart_datatype_t remote_type, bool is_put,
                  dart__mode_t mode, dart_handle_t *handle)
{
  dart_ret_t ret;
  if (fast_transfer(func, gptr, local, nelem, local_type, remote_type, is_put,
                    mode, handle, &ret))
    return ret;
  return routed_transfer(func, gptr, local, nelem, local_type, remote_type,
                         is_put, mode, handle);
}

/*
 * Each public transfer function is the hot path, and for everything else
 * jumps to a twin of the same signature, out of line: with its arguments
 * where they came, it saves and shuffles no registers on the hot path.
 */
static __attribute__((noinline)) dart_ret_t
put_rest(dart_gptr_t gptr, const void *src, size_t nelem,
         dart_datatype_t src_type, dart_datatype_t dst_type)
{
  return uncached_transfer("dart_put", gptr, (void *)src, nelem, src_type,
                           dst_type, true, DART__MODE_NB, NULL);
}

dart_ret_t dart_put(dart_gptr_t gptr, const void *src, size_t nelem,
                    dart_datatype_t src_type, dart_datatype_t dst_type)
{
  dart_ret_t ret;
  if (__builtin_expect(cached_transfer(gptr, (void *)src, nelem, src_type,
                                       dst_type, true, DART__MODE_NB, NULL,
                                       &ret),
                       1))
    return ret;
  return put_rest(gptr, src, nelem, src_type, dst_type);
}

static __attribute__((noinline)) dart_ret_t
get_rest(void *dest, dart_gptr_t gptr, size_t nelem,
         dart_datatype_t src_type, dart_datatype_t dst_type)
{
  return uncached_transfer("dart_get", gptr, dest, nelem, dst_type, src_type,
                           false, DART__MODE_NB, NULL);
}

dart_ret_t dart_get(void *dest, dart_gptr_t gptr, size_t nelem,
                    dart_datatype_t src_type, dart_datatype_t dst_type)
{
  dart_ret_t ret;
  if (__builtin_expect(cached_transfer(gptr, dest, nelem, dst_type, src_type,
                                       false, DART__MODE_NB, NULL, &ret),
                       1))
    return ret;
  return get_rest(dest, gptr, nelem, src_type, dst_type);
}

static __attribute__((noinline)) dart_ret_t
put_blocking_rest(dart_gptr_t gptr, const void *src, size_t nelem,
                  dart_datatype_t src_type, dart_datatype_t dst_type)
{
  return uncached_transfer("dart_put_blocking", gptr, (void *)src, nelem,
                           src_type, dst_type, true, DART__MODE_BLOCKING,
                           NULL);
}

dart_ret_t dart_put_blocking(dart_gptr_t gptr, const void *src, size_t nelem,
                             dart_datatype_t src_type, dart_datatype_t dst_type)
{
  dart_ret_t ret;
  if (__builtin_expect(cached_transfer(gptr, (void *)src, nelem, src_type,
                                       dst_type, true, DART__MODE_BLOCKING,
                                       NULL, &ret),
                       1))
    return ret;
  return put_blocking_rest(gptr, src, nelem, src_type, dst_type);
}

static __attribute__((noinline)) dart_ret_t
get_blocking_rest(void *dest, dart_gptr_t gptr, size_t nelem,
                  dart_datatype_t src_type, dart_datatype_t dst_type)
{
  return uncached_transfer("dart_get_blocking", gptr, dest, nelem, dst_type,
                           src_type, false, DART__MODE_BLOCKING, NULL);
}

dart_ret_t dart_get_blocking(void *dest, dart_gptr_t gptr, size_t nelem,
                             dart_datatype_t src_type, dart_datatype_t dst_type)
{
  dart_ret_t ret;
  if (__builtin_expect(cached_transfer(gptr, dest, nelem, dst_type, src_type,
                                       false, DART__MODE_BLOCKING, NULL, &ret),
                       1))
    return ret;
  return get_blocking_rest(dest, gptr, nelem, src_type, dst_type);
}

static __attribute__((noinline)) dart_ret_t
put_handle_rest(dart_gptr_t gptr, const void *src, size_t nelem,
                dart_datatype_t src_type, dart_datatype_t dst_type,
                dart_handle_t *handle)
{
  return uncached_transfer("dart_put_handle", gptr, (void *)src, nelem,
                           src_type, dst_type, true, DART__MODE_HANDLE,
                           handle);
}

dart_ret_t dart_put_handle(dart_gptr_t gptr, const void *src, size_t nelem,
                           dart_datatype_t src_type, dart_datatype_t dst_type,
                           dart_handle_t *handle)
{
  dart_ret_t ret;
  if (__builtin_expect(cached_transfer(gptr, (void *)src, nelem, src_type,
                                       dst_type, true, DART__MODE_HANDLE,
                                       handle, &ret),
                       1))
    return ret;
  return put_handle_rest(gptr, src, nelem, src_type, dst_type, handle);
}

static __attribute__((noinline)) dart_ret_t
get_handle_rest(void *dest, dart_gptr_t gptr, size_t nelem,
                dart_datatype_t src_type, dart_datatype_t dst_type,
                dart_handle_t *handle)
{
  return uncached_transfer("dart_get_handle", gptr, dest, nelem, dst_type,
                           src_type, false, DART__MODE_HANDLE, handle);
}

dart_ret_t dart_get_handle(void *dest, dart_gptr_t gptr, size_t nelem,
                           dart_datatype_t src_type, dart_datatype_t dst_type,
                           dart_handle_t *handle)
{
  dart_ret_t ret;
  if (__builtin_expect(cached_transfer(gptr, dest, nelem, dst_type, src_type,
                                       false, DART__MODE_HANDLE, handle, &ret),
                       1))
    return ret;
  return get_handle_rest(dest, gptr, nelem, src_type, dst_type, handle);
}

/* ---- flush ---- */

static __attribute__((noinline)) dart_ret_t
routed_flush(const char *func, dart_gptr_t gptr, bool all, bool local)
{
  DART__CHECK_INIT_IN(func);
  dart__target_t target;
  dart_ret_t ret = dart__globmem__resolve(func, gptr, 0, &target);
  if (ret != DART_OK) return ret;
  dart__transport__acc_complete();
  dart__team_t *team = target.team;
  if (all) {
    dart__base__fence();
    return dart__transport__flush_all(func, team);
  }
  const dart__path_ops_t *path = dart__transport__paths[target.route->path];
  ret = local ? path->flush_local(func, team, target.unit)
              : path->flush(func, team, target.unit);
  /* atomics that take a path of their own (the owner's; the remote
   * transport's where the data goes another way) complete too */
  if (ret == DART_OK && target.route->atomics != target.route->path) {
    path = dart__transport__paths[target.route->atomics];
    ret = local ? path->flush_local(func, team, target.unit)
                : path->flush(func, team, target.unit);
  }
  return ret;
}

/* Memory this process loads and stores is flushed right here, as the
 * transfers to it were done there (copy_now). */
static inline __attribute__((always_inline)) void flush_now(void)
{
  dart__transport__acc_complete();
  dart__transport__stores_fence();
}

/* A flush of one unit without a cached route, or to another path. */
static __attribute__((noinline)) dart_ret_t
flush_rest(const char *func, dart_gptr_t gptr, bool local)
{
  dart__target_t target;
  if (dart__rt.initialized && dart__globmem__route_at(gptr, 0, &target) &&
      dart__path_load_store(target.route->path)) {
    flush_now();
    return DART_OK;
  }
  return routed_flush(func, gptr, false, local);
}

/* A flush to memory this process loads and stores with accumulates
 * queued. */
static __attribute__((noinline)) dart_ret_t flush_queued(void)
{
  flush_now();
  return DART_OK;
}

/*
 * The flushes of one unit: the hot paths are a cached route to memory this
 * process loads and stores, and one along a path with a cached flush. A
 * hit means that one thread runs DART (the cache is empty under
 * DART_THREAD_MULTIPLE), so the flag alone tells whether puts left stores
 * to fence.
 */
static inline __attribute__((always_inline)) dart_ret_t
flush_one(const char *func, dart_gptr_t gptr, bool local)
{
  dart__route_cache_t *e = dart__globmem__route_cached(gptr, 0);
  if (__builtin_expect(e == NULL || !dart__path_load_store(e->path), 0)) {
    if (e != NULL && dart__transport__acc_queued == 0 &&
        e->atomics == e->path) {
      const dart__path_ops_t *path = dart__transport__paths[e->path];
      if (path->cached_flush != NULL) return path->cached_flush(func, e);
    }
    return flush_rest(func, gptr, local);
  }
  if (__builtin_expect(dart__transport__acc_queued != 0, 0))
    return flush_queued();
  if (atomic_load_explicit(&dart__transport__stores_unfenced,
                           memory_order_relaxed)) {
    atomic_store_explicit(&dart__transport__stores_unfenced, false,
                          memory_order_relaxed);
    dart__base__fence();
  }
  return DART_OK;
}

dart_ret_t dart_flush(dart_gptr_t gptr)
{
  return flush_one(__func__, gptr, false);
}

dart_ret_t dart_flush_all(dart_gptr_t gptr)
{
  return routed_flush(__func__, gptr, true, false);
}

dart_ret_t dart_flush_local(dart_gptr_t gptr)
{
  return flush_one(__func__, gptr, true);
}

dart_ret_t dart_flush_local_all(dart_gptr_t gptr)
{
  return routed_flush(__func__, gptr, true, true);
}

/* ---- handles ---- */

static dart_ret_t check_handle(const char *func, dart_handle_t h)
{
  DART__CHECK_INIT_IN(func);
  if (h != DART_HANDLE_NULL && !dart__onesided__handle_live(h)) {
    DART_LOG_ERROR_IN(func, "handle %p has been freed", (void *)h);
    return DART_ERR_INVAL;
  }
  return DART_OK;
}

/* Completes a live handle (remote completion unless local) and frees it. */
static dart_ret_t complete(const char *func, dart_handle_t *handle, bool local)
{
  dart_handle_t h = *handle;
  const dart__path_ops_t *path = dart__transport__paths[h->path];
  dart__team_t *team = dart__team__get(h->team);
  dart_ret_t ret = DART_OK;
  bool done;
  if (h->complete != NULL) {
    ret = h->complete(func, h, true, &done);
  } else if (h->event != NULL) {
    void *event = h->event;
    h->event = NULL; /* waited for, or gone with a failure */
    ret = dart__gpu__event_wait(func, event);
  } else if (team != NULL) {
    /* a get or a fetching atomic is complete once it is locally: its data
     * is here (UCX's local completion waits for requests alone, not for
     * the endpoint's flush) */
    ret = local || !h->is_put ? path->flush_local(func, team, h->unit)
                              : path->flush(func, team, h->unit);
  }
  if (ret != DART_OK) return ret; /* logged where it failed */
  dart__onesided__handle_release(h);
  *handle = DART_HANDLE_NULL;
  return DART_OK;
}

static __attribute__((noinline)) dart_ret_t
wait_pending(const char *func, dart_handle_t handles[], size_t n, bool local)
{
  DART__CHECK_INIT_IN(func);
  if (handles == NULL && n > 0) {
    DART_LOG_ERROR_IN(func, "handles is NULL for %zu handles", n);
    return DART_ERR_INVAL;
  }
  /* all checked before any is touched: nothing half-done on bad input */
  size_t pending = 0;
  for (size_t i = 0; i < n; i++) {
    if (handles[i] == DART_HANDLE_NULL) continue;
    dart_ret_t ret = check_handle(func, handles[i]);
    if (ret != DART_OK) return ret;
    pending++;
  }
  if (pending == 0) return DART_OK; /* all completed at once */
  for (size_t i = 0; i < n; i++) {
    /* a handle listed twice is complete (and released) after its first
     * entry: releasing it again would hand it out twice */
    if (handles[i] != DART_HANDLE_NULL &&
        !dart__onesided__handle_live(handles[i]))
      handles[i] = DART_HANDLE_NULL;
    if (handles[i] == DART_HANDLE_NULL) continue;
    dart_ret_t ret = complete(func, &handles[i], local);
    if (ret != DART_OK) return ret;
  }
  return DART_OK;
}

/* Handles of transfers that completed at once, as every transfer to
 * memory this process loads and stores does, are DART_HANDLE_NULL:
 * waiting for those alone is the hot path. */
static inline __attribute__((always_inline)) dart_ret_t
wait_all(const char *func, dart_handle_t handles[], size_t n, bool local)
{
  bool pending = !dart__rt.initialized || (handles == NULL && n > 0);
  for (size_t i = 0; i < n && !pending; i++)
    pending = handles[i] != DART_HANDLE_NULL;
  if (__builtin_expect(!pending, 1)) return DART_OK;
  return wait_pending(func, handles, n, local);
}

/*
 * A test completes what it tests: MPI has no test for RMA completion short
 * of a request, and a flush finishes in bounded time.
 */
static inline __attribute__((always_inline)) dart_ret_t
test_all(const char *func, dart_handle_t handles[], size_t n, bool local,
         int32_t *result)
{
  if (result == NULL) {
    DART_LOG_ERROR_IN(func, "result is NULL");
    return DART_ERR_INVAL;
  }
  /* an active message's call completes once its target ran the handler,
   * which may take as long as the target computes: not waited for here */
  for (size_t i = 0; i < n && handles != NULL && dart__rt.initialized; i++) {
    dart_handle_t h = handles[i];
    bool done = true;
    if (h != DART_HANDLE_NULL && dart__onesided__handle_live(h) &&
        h->complete != NULL && h->complete(func, h, false, &done) == DART_OK &&
        !done) {
      *result = 0;
      return DART_OK;
    }
  }
  dart_ret_t ret = wait_all(func, handles, n, local);
  if (ret == DART_OK) *result = 1;
  return ret;
}

dart_ret_t dart_wait(dart_handle_t *handle)
{
  if (handle == NULL) {
    DART_LOG_ERROR("handle is NULL");
    return DART_ERR_INVAL;
  }
  return wait_all(__func__, handle, 1, false);
}

dart_ret_t dart_wait_local(dart_handle_t *handle)
{
  if (handle == NULL) {
    DART_LOG_ERROR("handle is NULL");
    return DART_ERR_INVAL;
  }
  return wait_all(__func__, handle, 1, true);
}

dart_ret_t dart_waitall(dart_handle_t handles[], size_t n)
{
  return wait_all(__func__, handles, n, false);
}

dart_ret_t dart_waitall_local(dart_handle_t handles[], size_t n)
{
  return wait_all(__func__, handles, n, true);
}

dart_ret_t dart_test(dart_handle_t *handleptr, int32_t *is_finished)
{
  if (handleptr == NULL) {
    DART_LOG_ERROR("handleptr is NULL");
    return DART_ERR_INVAL;
  }
  return test_all(__func__, handleptr, 1, false, is_finished);
}

dart_ret_t dart_test_local(dart_handle_t *handle, int32_t *result)
{
  if (handle == NULL) {
    DART_LOG_ERROR("handle is NULL");
    return DART_ERR_INVAL;
  }
  return test_all(__func__, handle, 1, true, result);
}

dart_ret_t dart_testall(dart_handle_t handles[], size_t n,
                        int32_t *is_finished)
{
  return test_all(__func__, handles, n, false, is_finished);
}

dart_ret_t dart_testall_local(dart_handle_t handles[], size_t n,
                              int32_t *result)
{
  return test_all(__func__, handles, n, true, result);
}

dart_ret_t dart_handle_free(dart_handle_t *handle)
{
  if (handle == NULL) {
    DART_LOG_ERROR("handle is NULL");
    return DART_ERR_INVAL;
  }
  dart_ret_t ret = check_handle(__func__, *handle);
  if (ret != DART_OK || *handle == DART_HANDLE_NULL) return ret;
  /* the operation still completes; a flush makes it visible */
  if ((*handle)->event != NULL) dart__gpu__event_drop((*handle)->event);
  if ((*handle)->drop != NULL) (*handle)->drop(*handle);
  /* a call's reply, when it comes, is dropped */
  atomic_store_explicit(&(*handle)->am.state, 0, memory_order_release);
  dart__onesided__handle_release(*handle);
  *handle = DART_HANDLE_NULL;
  return DART_OK;
}

/* ---- path statistics (dart_ext.h) ---- */

dart_ret_t dart_path_count(dart_path_t path, uint64_t *count)
{
  DART__CHECK_INIT();
  if ((int)path < 0 || path >= DART_PATH_COUNT || count == NULL) {
    DART_LOG_ERROR("path %d is unknown or count is NULL", (int)path);
    return DART_ERR_INVAL;
  }
  *count = atomic_load_explicit(&dart__transport__path_ops[path],
                                memory_order_relaxed) +
           dart__globmem__route_cache_ops((int)path);
  return DART_OK;
}

dart_ret_t dart_acc_batches(uint64_t *in_transaction, uint64_t *after_abort,
                            uint64_t *locked)
{
  DART__CHECK_INIT();
  if (in_transaction == NULL || after_abort == NULL || locked == NULL) {
    DART_LOG_ERROR("in_transaction %p, after_abort %p or locked %p is NULL",
                   (void *)in_transaction, (void *)after_abort,
                   (void *)locked);
    return DART_ERR_INVAL;
  }
  *in_transaction = dart__transport__acc_batches[DART__ACC_IN_TRANSACTION];
  *after_abort = dart__transport__acc_batches[DART__ACC_AFTER_ABORT];
  *locked = dart__transport__acc_batches[DART__ACC_LOCKED];
  return DART_OK;
}

dart_ret_t dart_transport_paths(dart_path_t *remote, dart_path_t *peer_private)
{
  DART__CHECK_INIT();
  if (remote == NULL || peer_private == NULL) {
    DART_LOG_ERROR("remote %p or peer_private %p is NULL", (void *)remote,
                   (void *)peer_private);
    return DART_ERR_INVAL;
  }
  *remote = (dart_path_t)dart__rt.remote_path;
  *peer_private =
      dart__transport__usable(DART__PATH_CMA) && dart__base__config.shm
          ? DART_PATH_CMA
          : *remote;
  return DART_OK;
}

const char *dart_path_name(dart_path_t path)
{
  static const char *const names[DART_PATH_COUNT] = {
      "self", "shm", "mpi", "ucx", "cma", "ipc", "stage", "owner"};
  if ((int)path < 0 || path >= DART_PATH_COUNT) return NULL;
  return names[path];
}
