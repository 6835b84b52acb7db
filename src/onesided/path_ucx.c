/*
 * The UCX path (DART_TRANSPORT=ucx): RMA and atomics with ucp_put_nbx,
 * ucp_get_nbx and ucp_atomic_op_nbx on memory registered with ucp_mem_map.
 *
 * One context and worker per unit, in the thread mode dart_init_thread
 * gave. Worker addresses are allgathered at dart_init; endpoints are made
 * on first use. Each segment's packed rkeys are allgathered when it is
 * allocated and unpacked on first use per unit, then cached in the segment.
 * A route in the route cache keeps its endpoint, key and address too, so
 * that the public functions' hot paths reach UCX in one call.
 *
 * Progress: UCX's shared-memory transports reach only memory UCX allocated
 * itself; for other memory (MPI's shared windows, user registrations) it
 * emulates RMA and atomics with messages that the target serves in
 * ucp_worker_progress. So every wait here progresses the worker, and waits
 * on MPI go through dart__progress__wait.
 *
 * Atomics: UCX has 32- and 64-bit add, swap, compare-and-swap and the
 * bitwise operations. The fetching bitwise ones are wrong on UCX 1.13's
 * shared-memory transports (they leave op(old, old)), so those, narrower
 * elements, floating point and the other operations are compare-and-swap
 * loops on the same path, which keeps every atomic on one location atomic
 * with the others. Accumulates that are one non-fetching UCX atomic per
 * element are only started (deferrable): a round trip per update would
 * cost GUPS-style codes half their rate.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

#include "base/copy.h"
#include "base/env.h"
#include "base/fence.h"
#include "gpu/gpu.h"
#include "onesided/acc_queue.h"
#include "onesided/onesided.h"
#include "team/runtime.h"

/* Operands of started accumulates (keep_operand): a wait for all of them
 * when full. */
#define ACC_SLOTS 64

static struct {
  ucp_context_h context;
  ucp_worker_h worker;
  _Atomic(ucp_ep_h) *eps; /* per global unit, made on first use */
  char *addrs;            /* every unit's worker address */
  size_t *addr_off;       /* unit u's at addrs + addr_off[u] */
  mtx_t ep_lock;          /* making an endpoint (slow path) */
  /* What a flush must still complete: started since the last flush of
   * everything (dirty), and per global unit since its endpoint's last
   * flush (dirty_epoch[u] == epoch; a flush of everything moves epoch on,
   * which cleans every unit at once). */
  atomic_bool dirty;
  _Atomic uint64_t epoch;
  _Atomic uint64_t *dirty_epoch;
  atomic_ulong outstanding;        /* started, not yet complete */
  _Atomic ucs_status_t failure;    /* of one of those, for the flush */
  atomic_uint since_served;        /* see serve_others */
  /* accumulates left to complete later (deferrable): their operands, and
   * whether any were started since everything last completed */
  uint64_t acc_operand[ACC_SLOTS];
  unsigned acc_slots_used;
  atomic_bool acc_started;
} ucx;

static dart_ret_t ucx_error(const char *func, const char *what,
                            ucs_status_t status, int unit)
{
  DART_LOG_ERROR_IN(func, "%s for unit %d failed: %s", what, unit,
                    ucs_status_string(status));
  return DART_ERR_OTHER;
}

/* A request that did not complete at once: progresses the worker until
 * it does, and frees it. */
static __attribute__((noinline)) dart_ret_t
wait_started(const char *func, const char *what, ucs_status_ptr_t req,
             int unit)
{
  if (UCS_PTR_IS_ERR(req))
    return ucx_error(func, what, UCS_PTR_STATUS(req), unit);
  ucs_status_t status;
  unsigned spins = 0;
  while ((status = ucp_request_check_status(req)) == UCS_INPROGRESS)
    dart__progress__wait_turn(&spins);
  ucp_request_free(req);
  if (status != UCS_OK) return ucx_error(func, what, status, unit);
  return DART_OK;
}

/* Completes a request (NULL: complete at once, as small transfers through
 * shared memory are: no call then). */
static inline dart_ret_t wait_request(const char *func, const char *what,
                                      ucs_status_ptr_t req, int unit)
{
  if (__builtin_expect(req == NULL, 1)) return DART_OK;
  return wait_started(func, what, req, unit);
}

/* Operations that complete in place serve the peers now and then, as
 * those of the other paths do (progress.h). */
static inline void serve_others(void)
{
  unsigned n =
      atomic_load_explicit(&ucx.since_served, memory_order_relaxed) + 1;
  atomic_store_explicit(&ucx.since_served, n, memory_order_relaxed);
  dart__progress__served(n);
}

/* A started operation completes on its own: op_done counts it off. A
 * flush waits for every counted operation first (a large put over UCX's
 * rendezvous is remote-complete only when its request is), then for UCX's
 * flush of what completed in place. */
static void op_done(void *request, ucs_status_t status, void *user_data)
{
  (void)user_data;
  if (status != UCS_OK)
    atomic_store_explicit(&ucx.failure, status, memory_order_relaxed);
  ucp_request_free(request);
  atomic_fetch_sub_explicit(&ucx.outstanding, 1, memory_order_release);
}

static const ucp_request_param_t counted = {
    .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK, .cb.send = op_done};

/* No options (static: a local one is zeroed, all of it, in every call). */
static const ucp_request_param_t plain = {.op_attr_mask = 0};

/* A started operation to global unit: one that did not complete at once
 * is counted until op_done. Whatever a flush must still complete marks the
 * transport and the unit dirty: all but a get that completed at once,
 * whose data is here (a put or atomic that did has only left its
 * source). */
static inline dart_ret_t count_request(const char *func, const char *what,
                                       ucs_status_ptr_t req, int unit,
                                       bool is_get)
{
  if (UCS_PTR_IS_ERR(req))
    return ucx_error(func, what, UCS_PTR_STATUS(req), unit);
  if (req != NULL)
    atomic_fetch_add_explicit(&ucx.outstanding, 1, memory_order_relaxed);
  if (req != NULL || !is_get) {
    atomic_store_explicit(&ucx.dirty, true, memory_order_relaxed);
    atomic_store_explicit(
        &ucx.dirty_epoch[unit],
        atomic_load_explicit(&ucx.epoch, memory_order_relaxed),
        memory_order_relaxed);
  }
  return DART_OK;
}

/* Whether a flush may return at once where the flags say nothing is left
 * to complete: not with several threads in DART, where another one may be
 * completing what this one started, and this one must wait for it. */
static inline bool may_skip(void)
{
  return dart__rt.thread_level != DART_THREAD_MULTIPLE;
}

/* Whether global unit has nothing a flush must complete. */
static inline bool unit_clean(int unit)
{
  return atomic_load_explicit(&ucx.dirty_epoch[unit], memory_order_relaxed) !=
         atomic_load_explicit(&ucx.epoch, memory_order_relaxed);
}

/* Waits for every counted operation; reports one that failed. */
static dart_ret_t wait_counted(const char *func)
{
  unsigned spins = 0;
  while (atomic_load_explicit(&ucx.outstanding, memory_order_acquire) != 0)
    dart__progress__wait_turn(&spins);
  /* read first: an exchange is a locked instruction, a load is not */
  if (__builtin_expect(atomic_load_explicit(&ucx.failure,
                                            memory_order_relaxed) == UCS_OK,
                       1))
    return DART_OK;
  ucs_status_t failure =
      atomic_exchange_explicit(&ucx.failure, UCS_OK, memory_order_relaxed);
  if (failure != UCS_OK) {
    DART_LOG_ERROR_IN(func, "a UCX operation started earlier failed: %s",
                      ucs_status_string(failure));
    return DART_ERR_OTHER;
  }
  return DART_OK;
}

static ucp_ep_h ep_create(const char *func, int unit)
{
  mtx_lock(&ucx.ep_lock);
  ucp_ep_h ep = atomic_load_explicit(&ucx.eps[unit], memory_order_relaxed);
  if (ep == NULL) {
    ucp_ep_params_t params = {
        .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
        .address = (const ucp_address_t *)(ucx.addrs + ucx.addr_off[unit])};
    ucs_status_t status = ucp_ep_create(ucx.worker, &params, &ep);
    if (status != UCS_OK) {
      ucx_error(func, "ucp_ep_create", status, unit);
      ep = NULL;
    } else {
      atomic_store_explicit(&ucx.eps[unit], ep, memory_order_release);
    }
  }
  mtx_unlock(&ucx.ep_lock);
  return ep;
}

/* The endpoint to global unit, made on first use; NULL after an error. */
static inline ucp_ep_h ep_of(const char *func, int unit)
{
  ucp_ep_h ep = atomic_load_explicit(&ucx.eps[unit], memory_order_acquire);
  if (__builtin_expect(ep != NULL, 1)) return ep;
  return ep_create(func, unit);
}

/* Where an operation goes: endpoint, rkey and remote address. */
typedef struct {
  ucp_ep_h ep;
  ucp_rkey_h rkey;
  uint64_t addr;
  int unit; /* global */
} remote_t;

static inline dart_ret_t remote_of(const char *func, const dart__target_t *t,
                                   remote_t *r)
{
  dart__segment_t *seg = t->seg;
  r->unit = t->team->members[t->unit];
  r->ep = ep_of(func, r->unit);
  if (__builtin_expect(r->ep == NULL, 0)) return DART_ERR_OTHER;
  r->rkey = t->route->rkey;
  if (r->rkey == NULL)
    r->rkey =
        atomic_load_explicit(&seg->ucx.rkeys[t->unit], memory_order_acquire);
  if (__builtin_expect(r->rkey == NULL, 0)) {
    void *rkey;
    dart_ret_t ret = dart__ucx__rkey_unpack(
        func, r->unit, seg->ucx.packed + seg->ucx.packed_off[t->unit],
        &seg->ucx.rkeys[t->unit], &rkey);
    if (ret != DART_OK) return ret;
    r->rkey = rkey;
  }
  r->addr = t->route->addr + t->offset;
  return DART_OK;
}

/* ---- put and get ---- */

typedef struct {
  const remote_t *r;
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
  ucs_status_ptr_t req =
      c->is_put
          ? ucp_put_nbx(c->r->ep, local, n * c->es, addr, c->r->rkey, &counted)
          : ucp_get_nbx(c->r->ep, local, n * c->es, addr, c->r->rkey, &counted);
  return count_request(c->func, c->is_put ? "ucp_put_nbx" : "ucp_get_nbx", req,
                       c->r->unit, !c->is_put) != DART_OK;
}

/* Remote completion of what went to ep and has completed locally.
 * UCX's shared-memory transports put with the origin's own stores, which
 * its flush does not order before our later loads: the fence does, as a
 * put to a node peer's memory does (a unit that puts to another and then
 * reads what that one put must not find the old value when the other
 * does too). */
static dart_ret_t flush_ep_only(const char *func, ucp_ep_h ep, int unit)
{
  dart_ret_t ret = wait_request(func, "ucp_ep_flush_nbx",
                                ucp_ep_flush_nbx(ep, &plain), unit);
  dart__base__fence();
  return ret;
}

/* Completes what went to ep: first every counted operation (a large put
 * over UCX's rendezvous is remote-complete only when its request is). */
static dart_ret_t flush_ep(const char *func, ucp_ep_h ep, int unit)
{
  if (may_skip() && unit_clean(unit)) {
    serve_others(); /* as the operations that complete at once do */
    return DART_OK;
  }
  dart_ret_t ret = wait_counted(func);
  if (ret == DART_OK) ret = flush_ep_only(func, ep, unit);
  if (ret == DART_OK)
    atomic_store_explicit(&ucx.dirty_epoch[unit], 0, memory_order_relaxed);
  return ret;
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
                               bool is_put, dart__mode_t mode, remote_t *r,
                               dart_handle_t *h)
{
  dart_ret_t ret = remote_of(func, t, r);
  if (ret != DART_OK) return ret;
  return handle_for(t->team, t->unit, is_put, mode, h);
}

/* The end of a transfer: blocking ones serve peers now and then; the
 * handle goes out only when the transfer started. */
static inline dart_ret_t finish(dart_ret_t ret, dart__mode_t mode,
                                dart_handle_t h, dart_handle_t *handle)
{
  if (mode == DART__MODE_BLOCKING) serve_others();
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
  dart_ret_t ret = wait_request(func, is_put ? "ucp_put_nbx" : "ucp_get_nbx",
                                req, unit);
  if (ret == DART_OK && is_put) ret = flush_ep_only(func, ep, unit);
  serve_others();
  return ret;
}

/* A contiguous transfer to r, with h its handle or NULL. */
static inline __attribute__((always_inline)) dart_ret_t
contig(const char *func, const remote_t *r, void *local, size_t bytes,
       bool is_put, dart__mode_t mode, dart_handle_t h, dart_handle_t *handle)
{
  const bool blocking = mode == DART__MODE_BLOCKING;
  const ucp_request_param_t *param = blocking ? &plain : &counted;
  ucs_status_ptr_t req =
      is_put ? ucp_put_nbx(r->ep, local, bytes, r->addr, r->rkey, param)
             : ucp_get_nbx(r->ep, local, bytes, r->addr, r->rkey, param);
  if (blocking) return blocking_done(func, r->ep, r->unit, is_put, req);
  dart_ret_t ret = count_request(
      func, is_put ? "ucp_put_nbx" : "ucp_get_nbx", req, r->unit, !is_put);
  if (ret == DART_OK && !is_put && req == NULL) {
    /* complete already, and its flush or wait will have nothing to do:
     * a loop of these must serve peers as a loop of blocking gets does */
    serve_others();
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
  remote_t r;
  dart_handle_t h;
  dart_ret_t ret = begin(func, t, is_put, mode, &r, &h);
  if (ret != DART_OK) return ret;
  return contig(func, &r, local, bytes, is_put, mode, h, handle);
}

/* Enters the UCX endpoint, key, address and global unit of e's route into
 * it, on its first use here. */
static __attribute__((noinline)) dart_ret_t
route_remote_fill(const char *func, dart__route_cache_t *e)
{
  const dart__target_t t = {
      .team = e->team, .seg = e->seg, .route = e->route, .unit = e->unit};
  remote_t r;
  dart_ret_t ret = remote_of(func, &t, &r);
  if (ret != DART_OK) return ret;
  e->remote.ep = r.ep;
  e->remote.rkey = r.rkey;
  e->remote.addr = r.addr;
  e->remote.unit = r.unit;
  return DART_OK;
}

/* Where an operation at offset of e's route goes. */
static inline __attribute__((always_inline)) dart_ret_t
route_remote(const char *func, dart__route_cache_t *e, uint64_t offset,
             remote_t *r)
{
  if (__builtin_expect(e->remote.ep == NULL, 0)) {
    dart_ret_t ret = route_remote_fill(func, e);
    if (ret != DART_OK) return ret;
  }
  r->ep = e->remote.ep;
  r->rkey = e->remote.rkey;
  r->addr = e->remote.addr + offset;
  r->unit = e->remote.unit;
  return DART_OK;
}

/* A blocking transfer along e on its route's first use here. */
static __attribute__((noinline)) dart_ret_t
blocking_first(dart__route_cache_t *e, uint64_t offset, void *local,
               size_t bytes, bool is_put)
{
  dart_ret_t ret = route_remote_fill(
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
  if (__builtin_expect(e->remote.ep == NULL, 0))
    return blocking_first(e, offset, local, bytes, false);
  e->ops++;
  ucs_status_ptr_t req =
      ucp_get_nbx(e->remote.ep, local, bytes, e->remote.addr + offset,
                  e->remote.rkey, &plain);
  if (__builtin_expect(req != NULL, 0))
    return blocking_done("dart_get_blocking", e->remote.ep, e->remote.unit,
                         false, req);
  serve_others();
  return DART_OK;
}

dart_ret_t dart__ucx__put_blocking(dart__route_cache_t *e, uint64_t offset,
                                  const void *local, size_t bytes)
{
  if (__builtin_expect(e->remote.ep == NULL, 0))
    return blocking_first(e, offset, (void *)local, bytes, true);
  e->ops++;
  ucs_status_ptr_t req =
      ucp_put_nbx(e->remote.ep, local, bytes, e->remote.addr + offset,
                  e->remote.rkey, &plain);
  return blocking_done("dart_put_blocking", e->remote.ep, e->remote.unit,
                       true, req);
}

dart_ret_t dart__ucx__cached(dart__route_cache_t *e, uint64_t offset,
                            void *local, size_t bytes, bool is_put,
                            dart_handle_t *handle)
{
  static const char *const func[2][2] = {{"dart_get", "dart_get_handle"},
                                         {"dart_put", "dart_put_handle"}};
  const dart__mode_t mode = handle ? DART__MODE_HANDLE : DART__MODE_NB;
  e->ops++;
  remote_t r;
  dart_handle_t h;
  dart_ret_t ret = route_remote(func[is_put][handle != NULL], e, offset, &r);
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
  remote_t r;
  dart_handle_t h;
  dart_ret_t ret = begin(func, t, is_put, mode, &r, &h);
  if (ret != DART_OK) return ret;
  runs_t c = {&r, x->local, es, is_put, func};
  ret = is_put ? (dart__globmem__dtype_runs(x->remote_t, x->local_t,
                                            x->nelem, start_run, &c)
                      ? DART_ERR_OTHER : DART_OK)
               : (dart__globmem__dtype_runs(x->local_t, x->remote_t,
                                            x->nelem, start_run, &c)
                      ? DART_ERR_OTHER : DART_OK);
  if (ret == DART_OK && mode == DART__MODE_BLOCKING)
    ret = flush_ep(func, r.ep, r.unit);
  return finish(ret, mode, h, handle);
}

static dart_ret_t ucx_put(const dart__xfer_t *x, dart__mode_t mode,
                          dart_handle_t *handle)
{
  return ucx_xfer(x, true, mode, handle);
}

static dart_ret_t ucx_get(const dart__xfer_t *x, dart__mode_t mode,
                          dart_handle_t *handle)
{
  return ucx_xfer(x, false, mode, handle);
}

/* Completes what went to unit of team (logged as func). */
static dart_ret_t flush_unit(const char *func, dart__team_t *team, int unit)
{
  int global = team->members[unit];
  ucp_ep_h ep = atomic_load_explicit(&ucx.eps[global], memory_order_acquire);
  if (ep == NULL) return DART_OK; /* nothing was ever sent there */
  return flush_ep(func, ep, global);
}

static dart_ret_t ucx_flush(const char *func, dart__team_t *team,
                            int unit)
{
  return flush_unit(func, team, unit);
}

dart_ret_t dart__ucx__cached_flush(const char *func, dart__route_cache_t *e)
{
  /* operations that took the path table went without the entry */
  if (e->remote.ep == NULL) return flush_unit(func, e->team, e->unit);
  return flush_ep(func, e->remote.ep, e->remote.unit);
}

/* Completes everything started. */
static dart_ret_t complete_all(const char *func)
{
  dart_ret_t ret = wait_counted(func);
  if (ret != DART_OK) return ret;
  ret = wait_request(func, "ucp_worker_flush_nbx",
                     ucp_worker_flush_nbx(ucx.worker, &plain), dart__rt.myid);
  dart__base__fence(); /* see flush_ep */
  return ret;
}

/* One worker for all teams: everything this unit started. */
static dart_ret_t ucx_flush_all(const char *func, dart__team_t *team)
{
  (void)team;
  if (dart__rt.transport != DART__TRANSPORT_UCX ||
      (may_skip() && !atomic_load_explicit(&ucx.dirty, memory_order_relaxed)))
    return DART_OK;
  atomic_store_explicit(&ucx.dirty, false, memory_order_relaxed);
  atomic_store_explicit(&ucx.epoch,
                        atomic_load_explicit(&ucx.epoch, memory_order_relaxed) +
                            1,
                        memory_order_relaxed);
  atomic_store_explicit(&ucx.acc_started, false, memory_order_relaxed);
  return complete_all(func);
}

/* ---- atomics ---- */

/* The options of a non-fetching atomic of 4 and of 8 bytes: counted. */
static const ucp_request_param_t counted_amo[2] = {
    {.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_CALLBACK,
     .datatype = ucp_dt_make_contig(4),
     .cb.send = op_done},
    {.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_CALLBACK,
     .datatype = ucp_dt_make_contig(8),
     .cb.send = op_done}};

/* One UCX atomic of size 4 or 8 on addr; reply (when not NULL) gets the old
 * value, and for CSWAP holds the new value on entry. Fetching operations
 * are waited for; the others are counted, and complete with the flush
 * that ends ucx_atomic or, only started there, with the caller's next. */
static inline dart_ret_t amo(const char *func, const remote_t *r,
                             ucp_atomic_op_t op, const void *operand,
                             void *reply, size_t size, uint64_t addr)
{
  if (reply == NULL)
    return count_request(func, "ucp_atomic_op_nbx",
                         ucp_atomic_op_nbx(r->ep, op, operand, 1, addr,
                                           r->rkey, &counted_amo[size == 8]),
                         r->unit, false);
  const ucp_request_param_t param = {
      .op_attr_mask =
          UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER,
      .datatype = ucp_dt_make_contig(size),
      .reply_buffer = reply};
  return wait_request(func, "ucp_atomic_op_nbx",
                      ucp_atomic_op_nbx(r->ep, op, operand, 1, addr, r->rkey,
                                        &param),
                      r->unit);
}

/* UCX's operation for one that dart__onesided__one_instruction takes. */
static ucp_atomic_op_t native_op(dart_operation_t op)
{
  return op == DART_OP_SUM    ? UCP_ATOMIC_OP_ADD
         : op == DART_OP_BAND ? UCP_ATOMIC_OP_AND
         : op == DART_OP_BOR  ? UCP_ATOMIC_OP_OR
                              : UCP_ATOMIC_OP_XOR;
}

/*
 * Whether a is an accumulate that may complete later, at the caller's
 * next flush, barrier or other atomic: each element one non-fetching UCX
 * atomic, and one thread in DART (the operand slots are not shared).
 * Completing each one on return would cost a round trip per update.
 */
static bool deferrable(const dart__atomic_t *a)
{
  return a->kind == DART__ATOMIC_ACCUMULATE && a->size >= 4 &&
         a->values != NULL && dart__globmem__basic_types[a->type].integral &&
         dart__onesided__one_instruction(a->op) &&
         dart__rt.thread_level != DART_THREAD_MULTIPLE;
}

/* Frees the operand slots of deferrable accumulates when every one is
 * taken, by waiting for their operations. */
static inline dart_ret_t free_slots(const char *func)
{
  if (ucx.acc_slots_used < ACC_SLOTS) return DART_OK;
  dart_ret_t ret = wait_counted(func);
  if (ret == DART_OK) ucx.acc_slots_used = 0;
  return ret;
}

/* A copy of a deferrable accumulate's operand in a free slot (free_slots),
 * which lives until the operation completes: the caller may reuse values
 * on return, UCX reads them until then. */
static inline const void *keep_operand(const void *operand, size_t size)
{
  uint64_t *slot = &ucx.acc_operand[ucx.acc_slots_used++];
  dart__base__copy(slot, operand, size);
  return slot;
}

/* Starts a deferrable accumulate of one element of size bytes at addr,
 * with a slot free for its operand. */
static inline dart_ret_t start_accumulate(const char *func, const remote_t *r,
                                          dart_operation_t op,
                                          const void *operand, size_t size,
                                          uint64_t addr)
{
  atomic_store_explicit(&ucx.acc_started, true, memory_order_relaxed);
  return amo(func, r, native_op(op), keep_operand(operand, size), NULL, size,
             addr);
}

/* The element's next value: the operation, or compare-and-swap. */
static void next_value(const dart__atomic_t *a, const void *old,
                       const void *operand, void *out)
{
  if (a->kind == DART__ATOMIC_CAS)
    memcpy(out, memcmp(old, a->compare, a->size) == 0 ? operand : old,
           a->size);
  else
    dart__onesided__atomic_apply(a, old, operand, out);
}

/*
 * Any operation on one element at addr as a compare-and-swap loop on the
 * aligned word of 4 or 8 bytes that holds it (for 1- and 2-byte elements:
 * their 4-byte word, whose other bytes are written back as they were).
 */
static dart_ret_t cas_loop(const char *func, const remote_t *r,
                           const dart__atomic_t *a, uint64_t addr,
                           const void *operand, void *old_out)
{
  const size_t wsize = a->size < 4 ? 4 : a->size;
  const uint64_t waddr = addr & ~(uint64_t)(wsize - 1);
  const size_t at = (size_t)(addr - waddr);
  unsigned char seen[8], next[8], elem[8], zero[8] = {0};
  dart_ret_t ret = amo(func, r, UCP_ATOMIC_OP_ADD, zero, seen, wsize, waddr);
  while (ret == DART_OK) {
    next_value(a, seen + at, operand, elem);
    if (memcmp(elem, seen + at, a->size) == 0) break; /* the read was it */
    memcpy(next, seen, wsize);
    memcpy(next + at, elem, a->size);
    unsigned char expected[8];
    memcpy(expected, seen, wsize);
    /* CSWAP: compare with expected; next goes in, the old value comes out */
    ret = amo(func, r, UCP_ATOMIC_OP_CSWAP, expected, next, wsize, waddr);
    if (ret != DART_OK) break;
    if (memcmp(next, expected, wsize) == 0) break; /* swapped */
    memcpy(seen, next, wsize);
  }
  if (ret == DART_OK && old_out != NULL) memcpy(old_out, seen + at, a->size);
  return ret;
}

/* One element; old_out may be NULL (accumulate). */
static dart_ret_t element(const char *func, const remote_t *r,
                          const dart__atomic_t *a, uint64_t addr,
                          const void *operand, void *old_out)
{
  if (a->size < 4) return cas_loop(func, r, a, addr, operand, old_out);
  bool integral = dart__globmem__basic_types[a->type].integral;
  uint64_t scratch, zero = 0;
  if (a->kind == DART__ATOMIC_CAS) {
    memcpy(&scratch, operand, a->size);
    dart_ret_t ret = amo(func, r, UCP_ATOMIC_OP_CSWAP, a->compare, &scratch,
                         a->size, addr);
    if (ret == DART_OK && old_out) memcpy(old_out, &scratch, a->size);
    return ret;
  }
  switch (a->op) {
  case DART_OP_SUM:
    if (!integral) break;
    return amo(func, r, UCP_ATOMIC_OP_ADD, operand, old_out, a->size, addr);
  case DART_OP_REPLACE:
    return amo(func, r, UCP_ATOMIC_OP_SWAP, operand,
               old_out ? old_out : &scratch, a->size, addr);
  case DART_OP_NO_OP:
    return amo(func, r, UCP_ATOMIC_OP_ADD, &zero, old_out ? old_out : &scratch,
               a->size, addr);
  case DART_OP_BAND:
  case DART_OP_BOR:
  case DART_OP_BXOR:
    if (old_out != NULL) break; /* fetching: wrong in UCX 1.13 (see top) */
    return amo(func, r, native_op(a->op), operand, NULL, a->size, addr);
  default:
    break;
  }
  return cas_loop(func, r, a, addr, operand, old_out);
}

static dart_ret_t ucx_atomic(const dart__atomic_t *a)
{
  remote_t r;
  dart_ret_t ret = remote_of(a->func, a->target, &r);
  if (ret != DART_OK) return ret;
  const bool defer = deferrable(a);
  if (!defer && atomic_load_explicit(&ucx.acc_started, memory_order_relaxed)) {
    /* after the accumulates left to complete: this one sees them */
    atomic_store_explicit(&ucx.acc_started, false, memory_order_relaxed);
    if ((ret = complete_all(a->func)) != DART_OK) return ret;
  }
  if (a->kind != DART__ATOMIC_ACCUMULATE) {
    ret = element(a->func, &r, a, r.addr, a->values, a->result);
  } else {
    const char *operands = a->values;
    for (size_t i = 0; i < a->nelem && ret == DART_OK; i++) {
      const void *operand = operands ? operands + i * a->size : NULL;
      uint64_t addr = r.addr + i * a->size;
      if (defer && (ret = free_slots(a->func)) != DART_OK) break;
      ret = defer ? start_accumulate(a->func, &r, a->op, operand, a->size,
                                     addr)
                  : element(a->func, &r, a, addr, operand, NULL);
    }
  }
  /* complete on return, before the caller's next operation, unless only
   * started */
  if (ret == DART_OK && a->kind == DART__ATOMIC_ACCUMULATE && !defer)
    ret = flush_ep(a->func, r.ep, r.unit);
  serve_others();
  return ret;
}

dart_ret_t dart__ucx__cached_accumulate(const char *func,
                                       dart__route_cache_t *e,
                                       uint64_t offset, const void *value,
                                       size_t size, dart_operation_t op)
{
  remote_t r;
  dart_ret_t ret = route_remote(func, e, offset, &r);
  if (ret == DART_OK) ret = free_slots(func);
  if (ret != DART_OK) return ret;
  /* counted along the atomics' path, as the other accumulates are */
  if (e->path == DART__PATH_UCX) e->ops++;
  else dart__onesided__count_op(DART__PATH_UCX);
  ret = start_accumulate(func, &r, op, value, size, r.addr);
  serve_others();
  return ret;
}

/* ---- set-up ---- */

/* Emulated RMA and atomics (shared memory without CMA, TCP) need the
 * target's worker; waiting inside MPI does not drive it. */
static unsigned ucx_poll(void) { return ucp_worker_progress(ucx.worker); }
static bool ucx_outside_mpi(void) { return true; }
static const dart__progress_source_t ucx_progress = {
    .name = "ucx", .poll = ucx_poll, .outside_mpi = ucx_outside_mpi};

/* Allgathers a byte string of each unit's: *all gets them one after the
 * other, unit u's from off[u] to off[u + 1] (both malloc'd). */
static dart_ret_t allgather_bytes(const char *func, MPI_Comm comm, int size,
                                  const void *mine, size_t mylen, char **all,
                                  size_t **off)
{
  uint64_t my64 = mylen, *lens64 = malloc((size_t)size * sizeof *lens64);
  int *counts = malloc(2 * (size_t)size * sizeof *counts);
  size_t *o = malloc(((size_t)size + 1) * sizeof *o);
  char *buf = NULL;
  dart_ret_t ret = DART_ERR_NOMEM;
  if (!lens64 || !counts || !o) goto fail;
  MPI_Request req;
  ret = DART_ERR_OTHER;
  if (MPI_Iallgather(&my64, 1, MPI_UINT64_T, lens64, 1, MPI_UINT64_T, comm,
                     &req) != MPI_SUCCESS) {
    DART_LOG_ERROR_IN(func, "MPI_Iallgather of UCX key sizes failed");
    goto fail;
  }
  if (dart__progress__wait(func, 1, &req) != DART_OK) goto fail;
  o[0] = 0;
  for (int u = 0; u < size; u++) {
    if (lens64[u] > INT32_MAX || o[u] > (size_t)INT32_MAX - lens64[u]) {
      DART_LOG_ERROR_IN(func, "UCX keys of %llu bytes are too large",
                        (unsigned long long)lens64[u]);
      goto fail;
    }
    counts[u] = (int)lens64[u];
    counts[size + u] = (int)o[u];
    o[u + 1] = o[u] + lens64[u];
  }
  ret = DART_ERR_NOMEM;
  if ((buf = malloc(o[size] ? o[size] : 1)) == NULL) goto fail;
  ret = DART_ERR_OTHER;
  if (MPI_Iallgatherv(mine, (int)mylen, MPI_BYTE, buf, counts, counts + size,
                      MPI_BYTE, comm, &req) != MPI_SUCCESS) {
    DART_LOG_ERROR_IN(func, "MPI_Iallgatherv of UCX keys failed");
    goto fail;
  }
  if (dart__progress__wait(func, 1, &req) != DART_OK) goto fail;
  free(counts);
  free(lens64);
  *all = buf;
  *off = o;
  return DART_OK;

fail:
  free(buf);
  free(o);
  free(counts);
  free(lens64);
  return ret;
}

/* Packs the key of memh (logged on failure). */
static ucs_status_t pack_key(const char *func, ucp_mem_h memh, void **packed,
                             size_t *packed_len)
{
  ucs_status_t status = ucp_rkey_pack(ucx.context, memh, packed, packed_len);
  if (status != UCS_OK)
    DART_LOG_ERROR_IN(func, "packing a UCX key failed: %s",
                      ucs_status_string(status));
  return status;
}

/* Maps len bytes at address with UCX (flags: UCP_MEM_MAP_ALLOCATE to have
 * UCX allocate them; logged on failure). */
static ucs_status_t mem_map(const char *func, void *address, size_t len,
                            unsigned flags, ucp_mem_h *memh)
{
  ucp_mem_map_params_t params = {
      .field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                    UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                    UCP_MEM_MAP_PARAM_FIELD_FLAGS,
      .address = address,
      .length = len,
      .flags = flags};
  ucs_status_t status = ucp_mem_map(ucx.context, &params, memh);
  if (status != UCS_OK)
    DART_LOG_ERROR_IN(func, "%s %zu bytes with UCX failed: %s",
                      flags & UCP_MEM_MAP_ALLOCATE ? "allocating"
                                                   : "registering",
                      len, ucs_status_string(status));
  return status;
}

/* Registers [start, start + len) and packs its key (logged on failure). */
static ucs_status_t mem_register(const char *func, uintptr_t start,
                                 size_t len, ucp_mem_h *memh, void **packed,
                                 size_t *packed_len)
{
  ucs_status_t status = mem_map(func, (void *)start, len, 0, memh);
  if (status != UCS_OK) return status;
  if ((status = pack_key(func, *memh, packed, packed_len)) != UCS_OK) {
    ucp_mem_unmap(ucx.context, *memh);
    *memh = NULL;
  }
  return status;
}

dart_ret_t dart__ucx__mem_alloc(const char *func, size_t len, void **memh,
                                char **base)
{
  ucp_mem_h h;
  if (mem_map(func, NULL, len, UCP_MEM_MAP_ALLOCATE, &h) != UCS_OK)
    return DART_ERR_NOMEM;
  ucp_mem_attr_t attr = {.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS};
  ucs_status_t status = ucp_mem_query(h, &attr);
  if (status != UCS_OK) {
    DART_LOG_ERROR_IN(func, "ucp_mem_query failed: %s",
                      ucs_status_string(status));
    ucp_mem_unmap(ucx.context, h);
    return DART_ERR_NOMEM;
  }
  *memh = h;
  *base = attr.address;
  return DART_OK;
}

dart_ret_t dart__ucx__seg_register(const char *func, dart__segment_t *seg)
{
  dart__team_t *team = seg->team;
  ucp_mem_h memh = seg->ucx.memh; /* UCX allocated the part, or NULL */
  const bool allocated = memh != NULL;
  void *packed = NULL;
  size_t packed_len = 0;
  ucs_status_t status = UCS_OK;
  if (allocated) {
    status = pack_key(func, memh, &packed, &packed_len);
  } else if (seg->mysize > 0) {
    /* host memory: whole pages, so that the 4-byte words of 1- and 2-byte
     * atomics stay inside; device memory: no more than the part (its
     * allocation ends there), reached where the backend says */
    const bool device = seg->memkind == DART_MEMKIND_CUDA;
    const uintptr_t page = device ? 1 : (uintptr_t)sysconf(_SC_PAGESIZE);
    const uintptr_t base = (uintptr_t)(
        device ? dart__gpu.ops->ucx_addr(seg->mybase) : seg->mybase);
    uintptr_t start = base & ~(page - 1);
    uintptr_t end = (base + seg->mysize + page - 1) & ~(page - 1);
    status = mem_register(func, start, end - start, &memh, &packed,
                          &packed_len);
  }
  /* everybody's keys, or nobody keeps one */
  int ok = status == UCS_OK, all_ok = 0;
  MPI_Request req;
  dart_ret_t ret = DART_ERR_OTHER;
  if (MPI_Iallreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, team->comm, &req) !=
          MPI_SUCCESS ||
      dart__progress__wait(func, 1, &req) != DART_OK || !all_ok)
    goto fail;
  ret = allgather_bytes(func, team->comm, team->size, packed, packed_len,
                        &seg->ucx.packed, &seg->ucx.packed_off);
  if (ret != DART_OK) goto fail;
  ret = DART_ERR_NOMEM;
  seg->ucx.rkeys = calloc((size_t)team->size, sizeof *seg->ucx.rkeys);
  if (seg->ucx.rkeys == NULL) goto fail_keys;
  if (packed) ucp_rkey_buffer_release(packed);
  seg->ucx.memh = memh;
  return DART_OK;

fail_keys:
  free(seg->ucx.packed);
  free(seg->ucx.packed_off);
  seg->ucx.packed = NULL;
  seg->ucx.packed_off = NULL;
fail:
  dart__ucx__mem_deregister(allocated ? NULL : memh, packed);
  return ret;
}

dart_ret_t dart__ucx__mem_register(const char *func, void *base, size_t len,
                                   void **memh, void **packed,
                                   size_t *packed_len)
{
  ucp_mem_h h;
  if (mem_register(func, (uintptr_t)base, len, &h, packed, packed_len) !=
      UCS_OK)
    return DART_ERR_OTHER;
  *memh = h;
  return DART_OK;
}

void dart__ucx__mem_deregister(void *memh, void *packed)
{
  if (packed) ucp_rkey_buffer_release(packed);
  if (memh) ucp_mem_unmap(ucx.context, memh);
}

dart_ret_t dart__ucx__rkey_unpack(const char *func, int unit,
                                  const void *packed, _Atomic(void *) *slot,
                                  void **rkey)
{
  ucp_ep_h ep = ep_of(func, unit);
  if (ep == NULL) return DART_ERR_OTHER;
  ucp_rkey_h r;
  ucs_status_t status = ucp_ep_rkey_unpack(ep, packed, &r);
  if (status != UCS_OK)
    return ucx_error(func, "ucp_ep_rkey_unpack", status, unit);
  void *first = NULL;
  if (!atomic_compare_exchange_strong(slot, &first, r)) {
    ucp_rkey_destroy(r); /* another thread was first */
    r = first;
  }
  *rkey = r;
  return DART_OK;
}

void dart__ucx__rkey_destroy(void *rkey)
{
  if (rkey) ucp_rkey_destroy(rkey);
}

void dart__ucx__seg_deregister(dart__segment_t *seg)
{
  for (int u = 0; seg->ucx.rkeys && u < seg->team->size; u++)
    dart__ucx__rkey_destroy(seg->ucx.rkeys[u]);
  dart__ucx__mem_deregister(seg->ucx.memh, NULL);
  free(seg->ucx.rkeys);
  free(seg->ucx.packed);
  free(seg->ucx.packed_off);
  memset(&seg->ucx, 0, sizeof seg->ucx);
}

/* ---- barrier ---- */

/*
 * A dissemination barrier over UCX (Hensgen, Finkel and Manber): in round
 * r each unit puts the barrier's number into the flag r of the unit 2^r
 * ranks on and waits for its own flag r. The flags are memory UCX
 * allocated, so its shared-memory transports store them directly, and a
 * wait polls the worker, which serves peers' operations meanwhile. Where
 * waits must poll UCX, MPI's only barrier is its nonblocking one (libnbc),
 * several times the blocking one. Numbers only grow: a flag at or past
 * this barrier's number lets the unit on, as a partner a barrier ahead
 * has seen everyone arrive at this one.
 */
#define BARRIER_ROUNDS_MAX 32
#define BARRIER_FLAG_STRIDE 64 /* one cache line each */

typedef struct {
  void *memh;
  char *flags; /* flag r at r * BARRIER_FLAG_STRIDE */
  int rounds;
  uint64_t passed;
  struct {
    ucp_ep_h ep;
    ucp_rkey_h rkey;
    uint64_t addr; /* of its flag r */
    int unit;      /* global */
    uint64_t sent; /* the put's source */
  } to[BARRIER_ROUNDS_MAX];
} barrier_t;

static inline _Atomic uint64_t *barrier_flag(barrier_t *b, int r)
{
  return (_Atomic uint64_t *)(void *)(b->flags + r * BARRIER_FLAG_STRIDE);
}

static void ucx_barrier_destroy(void *state)
{
  barrier_t *b = state;
  if (b == NULL) return;
  for (int r = 0; r < b->rounds; r++) dart__ucx__rkey_destroy(b->to[r].rkey);
  dart__ucx__mem_deregister(b->memh, NULL);
  free(b);
}

/* What each unit publishes: its global id, its flags' address and key. */
typedef struct {
  uint64_t unit, addr;
} barrier_card_t;

static dart_ret_t ucx_barrier_create(const char *func, MPI_Comm comm,
                                     void **out)
{
  *out = NULL;
  if (dart__rt.transport != DART__TRANSPORT_UCX) return DART_OK;
  int size, rank;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  barrier_t *b = calloc(1, sizeof *b);
  void *packed = NULL;
  size_t packed_len = 0;
  char *card = NULL, *all = NULL;
  size_t *off = NULL;
  const size_t flags_len = BARRIER_ROUNDS_MAX * BARRIER_FLAG_STRIDE;
  /* a unit that cannot set up publishes an empty card: all fall back */
  size_t card_len = 0;
  if (b != NULL &&
      dart__ucx__mem_alloc(func, flags_len, &b->memh, &b->flags) == DART_OK) {
    memset(b->flags, 0, flags_len);
    if (pack_key(func, b->memh, &packed, &packed_len) == UCS_OK &&
        (card = malloc(sizeof(barrier_card_t) + packed_len)) != NULL) {
      barrier_card_t c = {(uint64_t)dart__rt.myid, (uintptr_t)b->flags};
      memcpy(card, &c, sizeof c);
      memcpy(card + sizeof c, packed, packed_len);
      card_len = sizeof c + packed_len;
    }
  }
  dart_ret_t ret = allgather_bytes(func, comm, size, card, card_len, &all,
                                   &off);
  if (ret != DART_OK) goto out;
  int ok = card_len > 0;
  for (int u = 0; u < size; u++) ok &= off[u + 1] > off[u];
  while (ok && b->rounds < BARRIER_ROUNDS_MAX && (1 << b->rounds) < size) {
    const int r = b->rounds, peer = (rank + (1 << r)) % size;
    barrier_card_t c;
    memcpy(&c, all + off[peer], sizeof c);
    b->to[r].unit = (int)c.unit;
    b->to[r].addr = c.addr + (uint64_t)r * BARRIER_FLAG_STRIDE;
    _Atomic(void *) slot = NULL;
    void *rkey;
    ok = dart__ucx__rkey_unpack(func, b->to[r].unit, all + off[peer] + sizeof c,
                                &slot, &rkey) == DART_OK; /* logged */
    if (ok) {
      b->to[r].ep = ep_of(func, b->to[r].unit); /* made by the unpack */
      b->to[r].rkey = rkey;
      b->rounds++;
    }
  }
  /* everybody uses it, or nobody */
  int all_ok = 0;
  MPI_Request req;
  if (MPI_Iallreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm, &req) !=
      MPI_SUCCESS) {
    DART_LOG_ERROR_IN(func, "MPI_Iallreduce for the UCX barrier failed");
    ret = DART_ERR_OTHER;
    goto out;
  }
  if ((ret = dart__progress__wait(func, 1, &req)) != DART_OK)
    goto out;
  if (all_ok) {
    *out = b;
    b = NULL;
  } else if (rank == 0) {
    DART_LOG_WARN("%s: no UCX barrier on a communicator of %d units: MPI's "
                  "takes over", func, size);
  }
out:
  ucx_barrier_destroy(b);
  free(off);
  free(all);
  free(card);
  dart__ucx__mem_deregister(NULL, packed);
  return ret;
}

static dart_ret_t ucx_barrier(const char *func, void *state)
{
  barrier_t *b = state;
  const uint64_t number = ++b->passed;
  for (int r = 0; r < b->rounds; r++) {
    b->to[r].sent = number;
    dart_ret_t ret =
        wait_request(func, "ucp_put_nbx",
                     ucp_put_nbx(b->to[r].ep, &b->to[r].sent, sizeof number,
                                 b->to[r].addr, b->to[r].rkey, &plain),
                     b->to[r].unit);
    if (ret != DART_OK) return ret;
    unsigned spins = 0;
    while (atomic_load_explicit(barrier_flag(b, r), memory_order_acquire) <
           number)
      dart__progress__wait_turn(&spins);
  }
  return DART_OK;
}

static void release_all(void)
{
  free(ucx.eps);
  free(ucx.dirty_epoch);
  free(ucx.addrs);
  free(ucx.addr_off);
  if (ucx.worker) ucp_worker_destroy(ucx.worker);
  if (ucx.context) ucp_cleanup(ucx.context);
  mtx_destroy(&ucx.ep_lock);
  memset(&ucx, 0, sizeof ucx);
}

dart_ret_t dart__ucx__init(void)
{
  if (dart__base__config.transport != DART__TRANSPORT_UCX) return DART_OK;
  const char *func = "dart_init";
  ucp_address_t *address = NULL;
  size_t address_len = 0;
  ucp_config_t *config = NULL;
  memset(&ucx, 0, sizeof ucx);
  mtx_init(&ucx.ep_lock, mtx_plain);
  ucs_status_t status = ucp_config_read(NULL, NULL, &config);
  if (status == UCS_OK) {
    ucp_params_t params = {
        .field_mask = UCP_PARAM_FIELD_FEATURES |
                      UCP_PARAM_FIELD_MT_WORKERS_SHARED,
        .features = UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64,
        .mt_workers_shared = 0};
    status = ucp_init(&params, config, &ucx.context);
    ucp_config_release(config);
  }
  if (status == UCS_OK) {
    ucp_worker_params_t params = {
        .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        .thread_mode = dart__rt.thread_level == DART_THREAD_MULTIPLE
                           ? UCS_THREAD_MODE_MULTI
                           : UCS_THREAD_MODE_SINGLE};
    status = ucp_worker_create(ucx.context, &params, &ucx.worker);
  }
  if (status == UCS_OK)
    status = ucp_worker_get_address(ucx.worker, &address, &address_len);
  if (status != UCS_OK)
    DART_LOG_WARN("UCX cannot start (%s)", ucs_status_string(status));
  /* all units take the same transport */
  int ok = status == UCS_OK, all_ok = 0;
  DART__MPI_CHECK(
      MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, dart__rt.comm));
  if (!all_ok) {
    if (dart__rt.myid == 0)
      DART_LOG_WARN("UCX did not start on every unit: DART_TRANSPORT=mpi "
                    "takes over");
    goto fallback;
  }
  dart_ret_t ret =
      allgather_bytes(func, dart__rt.comm, dart__rt.size, address, address_len,
                      &ucx.addrs, &ucx.addr_off);
  ucp_worker_release_address(ucx.worker, address);
  address = NULL;
  if (ret != DART_OK) goto fail;
  ucx.eps = calloc((size_t)dart__rt.size, sizeof *ucx.eps);
  ucx.dirty_epoch = calloc((size_t)dart__rt.size, sizeof *ucx.dirty_epoch);
  ucx.epoch = 1;
  if (ucx.eps == NULL || ucx.dirty_epoch == NULL) {
    ret = DART_ERR_NOMEM;
    goto fail;
  }
  if ((ret = dart__progress__add(func, &ucx_progress)) != DART_OK) goto fail;
  dart__rt.transport = DART__TRANSPORT_UCX;
  dart__rt.remote_path = DART__PATH_UCX;
  return DART_OK;

fail:
  release_all();
  return ret;
fallback:
  if (address) ucp_worker_release_address(ucx.worker, address);
  release_all();
  return DART_OK;
}

void dart__ucx__fini(void)
{
  if (dart__rt.transport != DART__TRANSPORT_UCX) return;
  /* ours are complete, and nobody still needs us to serve theirs */
  atomic_store(&ucx.dirty, true);
  ucx_flush_all("dart_exit", NULL);
  dart__progress__barrier("dart_exit", dart__rt.comm);
  /* closing flushes and waits for the peer: all at once, and we go on
   * serving our peers' closes until everybody is done */
  ucs_status_ptr_t *closing = calloc((size_t)dart__rt.size, sizeof *closing);
  for (int u = 0; u < dart__rt.size; u++) {
    ucp_ep_h ep = atomic_load(&ucx.eps[u]);
    if (ep == NULL) continue;
    ucs_status_ptr_t req = ucp_ep_close_nbx(ep, &plain);
    if (closing) closing[u] = req;
    else wait_request("dart_exit", "ucp_ep_close_nbx", req, u);
  }
  for (int u = 0; closing && u < dart__rt.size; u++)
    wait_request("dart_exit", "ucp_ep_close_nbx", closing[u], u);
  free(closing);
  dart__progress__barrier("dart_exit", dart__rt.comm);
  dart__progress__remove(&ucx_progress);
  release_all();
  dart__rt.transport = DART__TRANSPORT_MPI;
  dart__rt.remote_path = DART__PATH_MPI;
}

bool dart__ucx__cuda_memory(void)
{
  if (dart__rt.transport != DART__TRANSPORT_UCX) return false;
  ucp_context_attr_t attr = {.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES};
  return ucp_context_query(ucx.context, &attr) == UCS_OK &&
         (attr.memory_types & UCS_BIT(UCS_MEMORY_TYPE_CUDA));
}

void dart__ucx__print_info(FILE *out)
{
  if (dart__rt.transport != DART__TRANSPORT_UCX) return;
  /* the lanes of an endpoint to the first unit on another node (or to
   * ourselves on one node), from UCX's own description */
  int peer = dart__rt.myid;
  for (int u = 0; u < dart__rt.size; u++) {
    if (dart__rt.node_of[u] != dart__rt.my_node) {
      peer = u;
      break;
    }
  }
  ucp_ep_h ep = ep_of("dart_init", peer);
  char *text = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&text, &len);
  if (ep == NULL || mem == NULL) return;
  ucp_ep_print_info(ep, mem);
  fclose(mem);
  fprintf(out, "ucx transports to unit %d:", peer);
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    char *lane = strstr(line, "lane[");
    if (lane) fprintf(out, "\n  %s", lane);
  }
  fprintf(out, "\n");
  free(text);
}

const dart__path_ops_t dart__path_ucx = {.put = ucx_put,
                                         .get = ucx_get,
                                         .flush = ucx_flush,
                                         .flush_local = ucx_flush,
                                         .flush_all = ucx_flush_all,
                                         .atomic = ucx_atomic,
                                         .barrier_create = ucx_barrier_create,
                                         .barrier = ucx_barrier,
                                         .barrier_destroy =
                                             ucx_barrier_destroy};
