/*
 * The UCX path's puts, gets and flushes: ucp_put_nbx and ucp_get_nbx with
 * the unit's remote key, contiguous or one call per run of a typed
 * transfer, and the route cache's hot paths.
 */
#include "base/env.h"
#include "types/datatype.h"
#include "ucx/ucx.h"


typedef struct {
  const dart__ucx_remote_t *r;
  char *local;
  size_t es;
  bool is_put;
  const char *func;
} runs_t;

static int start_run(void *ctx, size_t dst_at, size_t src_at, size_t n)
{
  const runs_t *c = ctx;
  size_t local_at = c->is_put ? src_at : dst_at;
  size_t remote_at = c->is_put ? dst_at : src_at;
  char *local = c->local + local_at * c->es;
  uint64_t addr = c->r->addr + remote_at * c->es;
  ucs_status_ptr_t req = c->is_put
                             ? ucp_put_nbx(c->r->ep, local, n * c->es, addr,
                                           c->r->rkey, &dart__ucx__counted)
                             : ucp_get_nbx(c->r->ep, local, n * c->es, addr,
                                           c->r->rkey, &dart__ucx__counted);
  return dart__ucx__count(c->func, c->is_put ? "ucp_put_nbx" : "ucp_get_nbx",
                          req, c->r->unit, !c->is_put) != DART_OK;
}

/* The handle of a transfer to unit of team, when mode asks for one (*h
 * NULL otherwise). */
static inline dart_ret_t handle_for(dart__team_t *team, int unit, bool is_put,
                                    dart__mode_t mode, dart_handle_t *h)
{
  *h = NULL;
  if (mode == DART__MODE_HANDLE &&
      (*h = dart__onesided__handle_new(team, unit, DART__PATH_UCX,
                                       is_put)) == NULL)
    return DART_ERR_NOMEM;
  return DART_OK;
}

/* The start of a transfer to t: where it goes and, with a handle, the
 * handle. */
static inline dart_ret_t begin(const char *func, const dart__target_t *t,
                               bool is_put, dart__mode_t mode,
                               dart__ucx_remote_t *r, dart_handle_t *h)
{
  dart_ret_t ret = dart__ucx__remote_of(func, t, r);
  if (ret != DART_OK) return ret;
  return handle_for(t->team, t->unit, is_put, mode, h);
}

/* The end of a transfer: blocking ones serve peers now and then; the
 * handle goes out only when the transfer started. */
static inline dart_ret_t finish(dart_ret_t ret, dart__mode_t mode,
                                dart_handle_t h, dart_handle_t *handle)
{
  if (mode == DART__MODE_BLOCKING) dart__ucx__serve_others();
  if (h != NULL) {
    if (ret == DART_OK) *handle = h;
    else dart__onesided__handle_release(h);
  }
  return ret;
}

/* The rest of a blocking transfer to ep whose request is req: its
 * completion, a put's remote completion, and serving peers now and then.
 * Waits only for this transfer, not for what was started before it. */
static inline dart_ret_t blocking_done(const char *func, ucp_ep_h ep,
                                       int unit, bool is_put,
                                       ucs_status_ptr_t req)
{
  dart_ret_t ret = dart__ucx__wait(func, is_put ? "ucp_put_nbx" : "ucp_get_nbx",
                                   req, unit);
  if (ret == DART_OK && is_put) ret = dart__ucx__flush_ep_only(func, ep, unit);
  dart__ucx__serve_others();
  return ret;
}

/* A contiguous transfer to r, with h its handle or NULL. */
static inline __attribute__((always_inline)) dart_ret_t
contig(const char *func, const dart__ucx_remote_t *r, void *local, size_t bytes,
       bool is_put, dart__mode_t mode, dart_handle_t h, dart_handle_t *handle)
{
  const bool blocking = mode == DART__MODE_BLOCKING;
  const ucp_request_param_t *param =
      blocking ? &dart__ucx__plain : &dart__ucx__counted;
  ucs_status_ptr_t req =
      is_put ? ucp_put_nbx(r->ep, local, bytes, r->addr, r->rkey, param)
             : ucp_get_nbx(r->ep, local, bytes, r->addr, r->rkey, param);
  if (blocking) return blocking_done(func, r->ep, r->unit, is_put, req);
  dart_ret_t ret = dart__ucx__count(
      func, is_put ? "ucp_put_nbx" : "ucp_get_nbx", req, r->unit, !is_put);
  if (ret == DART_OK && !is_put && req == NULL) {
    /* complete already, and its flush or wait will have nothing to do:
     * a loop of these must serve peers as a loop of blocking gets does */
    dart__ucx__serve_others();
    if (h != NULL) {
      dart__onesided__handle_release(h);
      *handle = DART_HANDLE_NULL;
      return DART_OK;
    }
  }
  return finish(ret, mode, h, handle);
}

dart_ret_t dart__ucx__contig(const char *func, const dart__target_t *t,
                             void *local, size_t bytes, bool is_put,
                             dart__mode_t mode, dart_handle_t *handle)
{
  dart__ucx_remote_t r;
  dart_handle_t h;
  dart_ret_t ret = begin(func, t, is_put, mode, &r, &h);
  if (ret != DART_OK) return ret;
  return contig(func, &r, local, bytes, is_put, mode, h, handle);
}

__attribute__((noinline)) dart_ret_t
dart__ucx__route_fill(const char *func, dart__route_cache_t *e)
{
  const dart__target_t t = {
      .team = e->team, .seg = e->seg, .route = e->route, .unit = e->unit};
  dart__ucx_remote_t r;
  dart_ret_t ret = dart__ucx__remote_of(func, &t, &r);
  if (ret != DART_OK) return ret;
  e->remote.conn = r.ep;
  e->remote.key = r.rkey;
  e->remote.addr = r.addr;
  e->remote.unit = r.unit;
  return DART_OK;
}

/* A blocking transfer along e on its route's first use here. */
static __attribute__((noinline)) dart_ret_t
blocking_first(dart__route_cache_t *e, uint64_t offset, void *local,
               size_t bytes, bool is_put)
{
  dart_ret_t ret = dart__ucx__route_fill(
      is_put ? "dart_put_blocking" : "dart_get_blocking", e);
  if (ret != DART_OK) return ret;
  return is_put ? dart__ucx__put_blocking(e, offset, local, bytes)
                : dart__ucx__get_blocking(e, offset, local, bytes);
}

/* The blocking hot paths keep nothing but e across their calls into
 * UCX, so that they save few registers. */
dart_ret_t dart__ucx__get_blocking(dart__route_cache_t *e, uint64_t offset,
                                   void *local, size_t bytes)
{
  if (__builtin_expect(e->remote.conn == NULL, 0))
    return blocking_first(e, offset, local, bytes, false);
  e->ops++;
  ucs_status_ptr_t req =
      ucp_get_nbx(e->remote.conn, local, bytes, e->remote.addr + offset,
                  e->remote.key, &dart__ucx__plain);
  if (__builtin_expect(req != NULL, 0))
    return blocking_done("dart_get_blocking", e->remote.conn, e->remote.unit,
                         false, req);
  dart__ucx__serve_others();
  return DART_OK;
}

dart_ret_t dart__ucx__put_blocking(dart__route_cache_t *e, uint64_t offset,
                                   const void *local, size_t bytes)
{
  if (__builtin_expect(e->remote.conn == NULL, 0))
    return blocking_first(e, offset, (void *)local, bytes, true);
  e->ops++;
  ucs_status_ptr_t req =
      ucp_put_nbx(e->remote.conn, local, bytes, e->remote.addr + offset,
                  e->remote.key, &dart__ucx__plain);
  return blocking_done("dart_put_blocking", e->remote.conn, e->remote.unit,
                       true, req);
}

dart_ret_t dart__ucx__start(dart__route_cache_t *e, uint64_t offset,
                            void *local, size_t bytes, bool is_put,
                            dart_handle_t *handle)
{
  static const char *const func[2][2] = {{"dart_get", "dart_get_handle"},
                                         {"dart_put", "dart_put_handle"}};
  const dart__mode_t mode = handle ? DART__MODE_HANDLE : DART__MODE_NB;
  e->ops++;
  dart__ucx_remote_t r;
  dart_handle_t h;
  dart_ret_t ret =
      dart__ucx__route(func[is_put][handle != NULL], e, offset, &r);
  if (ret == DART_OK) ret = handle_for(e->team, e->unit, is_put, mode, &h);
  if (ret != DART_OK) return ret;
  return contig(func[is_put][handle != NULL], &r, local, bytes, is_put, mode,
                h, handle);
}

static dart_ret_t ucx_xfer(const dart__xfer_t *x, bool is_put,
                           dart__mode_t mode, dart_handle_t *handle)
{
  const char *func = x->func;
  const dart__target_t *t = x->target;
  const size_t es = x->local_t->elem_size;
  if (x->local_t->contiguous && x->remote_t->contiguous)
    return dart__ucx__contig(func, t, x->local, x->nelem * es, is_put, mode,
                             handle);
  dart__ucx_remote_t r;
  dart_handle_t h;
  dart_ret_t ret = begin(func, t, is_put, mode, &r, &h);
  if (ret != DART_OK) return ret;
  runs_t c = {&r, x->local, es, is_put, func};
  ret = is_put ? (dart__types__dtype_runs(x->remote_t, x->local_t,
                                          x->nelem, start_run, &c)
                      ? DART_ERR_OTHER : DART_OK)
               : (dart__types__dtype_runs(x->local_t, x->remote_t,
                                          x->nelem, start_run, &c)
                      ? DART_ERR_OTHER : DART_OK);
  if (ret == DART_OK && mode == DART__MODE_BLOCKING)
    ret = dart__ucx__flush_ep(func, r.ep, r.unit);
  return finish(ret, mode, h, handle);
}

dart_ret_t dart__ucx__put(const dart__xfer_t *x, dart__mode_t mode,
                          dart_handle_t *handle)
{
  return ucx_xfer(x, true, mode, handle);
}

dart_ret_t dart__ucx__get(const dart__xfer_t *x, dart__mode_t mode,
                          dart_handle_t *handle)
{
  return ucx_xfer(x, false, mode, handle);
}

/* Completes what went to unit of team (logged as func). */
dart_ret_t dart__ucx__flush(const char *func, dart__team_t *team, int unit)
{
  int global = team->members[unit];
  ucp_ep_h ep =
      atomic_load_explicit(&dart__ucx.eps[global], memory_order_acquire);
  if (ep == NULL) return DART_OK; /* nothing was ever sent there */
  return dart__ucx__flush_ep(func, ep, global);
}

/* A request completes once its local buffer may be reused (a get's data
 * is here): local completion waits for the requests, not for the remote
 * completion that a flush adds. */
dart_ret_t dart__ucx__flush_local(const char *func, dart__team_t *team,
                                  int unit)
{
  (void)team;
  (void)unit;
  dart_ret_t ret = dart__ucx__wait_counted(func);
  dart__ucx__serve_others();
  return ret;
}

dart_ret_t dart__ucx__cached_flush(const char *func, dart__route_cache_t *e)
{
  /* operations that took the path table went without the entry */
  if (e->remote.conn == NULL) return dart__ucx__flush(func, e->team, e->unit);
  return dart__ucx__flush_ep(func, e->remote.conn, e->remote.unit);
}

/* One worker for all teams: everything this unit started. */
dart_ret_t dart__ucx__flush_all(const char *func, dart__team_t *team)
{
  (void)team;
  if (dart__rt.transport != DART__TRANSPORT_UCX ||
      (dart__ucx__may_skip() &&
       !atomic_load_explicit(&dart__ucx.dirty, memory_order_relaxed)))
    return DART_OK;
  atomic_store_explicit(&dart__ucx.dirty, false, memory_order_relaxed);
  atomic_store_explicit(
      &dart__ucx.epoch,
      atomic_load_explicit(&dart__ucx.epoch, memory_order_relaxed) + 1,
      memory_order_relaxed);
  atomic_store_explicit(&dart__ucx.acc_started, false, memory_order_relaxed);
  atomic_store_explicit(&dart__ucx.fence_owed, false, memory_order_relaxed);
  return dart__ucx__complete_all(func);
}
