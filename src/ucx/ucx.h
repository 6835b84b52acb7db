/*
 * The UCX path (DART_TRANSPORT=ucx): its state and the helpers its files
 * share. Nothing outside src/ucx/ includes this; the runtime reaches the
 * path through its operation table, dart__path_ucx.
 *
 * One context and worker per unit, in the thread mode dart_init_thread
 * gave. Worker addresses are allgathered at dart_init; endpoints are made
 * on first use. Each segment's packed rkeys are allgathered when it is
 * allocated and unpacked on first use per unit, then cached in the
 * segment's state. A route in the route cache keeps its endpoint, key and
 * address too, so that the public functions' hot paths reach UCX in one
 * call.
 *
 * Progress: UCX's shared-memory transports reach only memory UCX allocated
 * itself; for other memory (MPI's shared windows, user registrations) it
 * emulates RMA and atomics with messages that the target serves in
 * ucp_worker_progress. So every wait here progresses the worker, and waits
 * on MPI go through dart__progress__wait.
 */
#ifndef DART__UCX__UCX_H_
#define DART__UCX__UCX_H_

#include <stdatomic.h>
#include <threads.h>
#include <ucp/api/ucp.h>

#include "base/fence.h"
#include "base/runtime.h"
#include "onesided/onesided.h"
#include "progress/progress.h"

/* Operands of started atomics (atomic.c): a wait for all of them when
 * full. */
#define DART__UCX_ACC_SLOTS 64

typedef struct {
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
  atomic_ulong outstanding;     /* started, not yet complete */
  _Atomic ucs_status_t failure; /* of one of those, for the flush */
  atomic_uint since_served;     /* see dart__ucx__serve_others */
  /* accumulates left to complete later (deferrable): their operands, and
   * whether any were started since everything last completed */
  uint64_t acc_operand[DART__UCX_ACC_SLOTS];
  unsigned acc_slots_used;
  atomic_bool acc_started;
  /* such accumulates, or signals, started since the last fence or since
   * everything completed: a fetch started for a handle fences first */
  atomic_bool fence_owed;
} dart__ucx_t;

/* hidden: addressed relative to the code, not through the GOT */
extern dart__ucx_t dart__ucx __attribute__((visibility("hidden")));

/* A segment's registration (memory.c): this unit's part, and every unit's
 * key, unpacked on first use. */
typedef struct {
  ucp_mem_h memh;         /* of this unit's part */
  bool allocated;         /* UCX allocated the part (dart__ucx__seg_alloc) */
  char *packed;           /* every unit's packed rkey */
  size_t *packed_off;     /* unit u's at packed + packed_off[u] */
  _Atomic(void *) *rkeys; /* ucp_rkey_h per unit, on first use */
} dart__ucx_seg_t;

/* Where an operation goes: endpoint, rkey and remote address. */
typedef struct {
  ucp_ep_h ep;
  ucp_rkey_h rkey;
  uint64_t addr;
  int unit; /* global */
} dart__ucx_remote_t;

/* No options, and a started operation counted until it completes
 * (core.c). */
extern const ucp_request_param_t dart__ucx__plain;
extern const ucp_request_param_t dart__ucx__counted;
void dart__ucx__op_done(void *request, ucs_status_t status, void *user_data);

/* Logs what failed for global unit, as func; DART_ERR_OTHER. */
dart_ret_t dart__ucx__error(const char *func, const char *what,
                            ucs_status_t status, int unit);

/* A request that did not complete at once: progresses the worker until
 * it does, and frees it. */
dart_ret_t dart__ucx__wait_started(const char *func, const char *what,
                                   ucs_status_ptr_t req, int unit);

/* Completes a request (NULL: complete at once, as small transfers through
 * shared memory are: no call then). */
static inline dart_ret_t dart__ucx__wait(const char *func, const char *what,
                                         ucs_status_ptr_t req, int unit)
{
  if (__builtin_expect(req == NULL, 1)) return DART_OK;
  return dart__ucx__wait_started(func, what, req, unit);
}

/* Operations that complete in place serve the peers now and then, as
 * those of the other paths do (progress.h). */
static inline void dart__ucx__serve_others(void)
{
  unsigned n = atomic_load_explicit(&dart__ucx.since_served,
                                    memory_order_relaxed) + 1;
  atomic_store_explicit(&dart__ucx.since_served, n, memory_order_relaxed);
  dart__progress__served(n);
}

/* A started operation to global unit: one that did not complete at once
 * is counted until dart__ucx__op_done. Whatever a flush must still
 * complete marks the transport and the unit dirty: all but a get that
 * completed at once, whose data is here (a put or atomic that did has
 * only left its source). */
static inline dart_ret_t dart__ucx__count(const char *func, const char *what,
                                          ucs_status_ptr_t req, int unit,
                                          bool is_get)
{
  if (UCS_PTR_IS_ERR(req))
    return dart__ucx__error(func, what, UCS_PTR_STATUS(req), unit);
  if (req != NULL)
    atomic_fetch_add_explicit(&dart__ucx.outstanding, 1,
                              memory_order_relaxed);
  if (req != NULL || !is_get) {
    atomic_store_explicit(&dart__ucx.dirty, true, memory_order_relaxed);
    atomic_store_explicit(
        &dart__ucx.dirty_epoch[unit],
        atomic_load_explicit(&dart__ucx.epoch, memory_order_relaxed),
        memory_order_relaxed);
  }
  return DART_OK;
}

/* Whether a flush may return at once where the flags say nothing is left
 * to complete: not with several threads in DART, where another one may be
 * completing what this one started, and this one must wait for it. */
static inline bool dart__ucx__may_skip(void)
{
  return dart__rt.thread_level != DART_THREAD_MULTIPLE;
}

/* Whether global unit has nothing a flush must complete. */
static inline bool dart__ucx__unit_clean(int unit)
{
  return atomic_load_explicit(&dart__ucx.dirty_epoch[unit],
                              memory_order_relaxed) !=
         atomic_load_explicit(&dart__ucx.epoch, memory_order_relaxed);
}

/* Waits for every counted operation; reports one that failed. */
dart_ret_t dart__ucx__wait_counted(const char *func);

/* The endpoint to global unit, made on first use; NULL after an error. */
ucp_ep_h dart__ucx__ep_create(const char *func, int unit);
static inline ucp_ep_h dart__ucx__ep_of(const char *func, int unit)
{
  ucp_ep_h ep =
      atomic_load_explicit(&dart__ucx.eps[unit], memory_order_acquire);
  if (__builtin_expect(ep != NULL, 1)) return ep;
  return dart__ucx__ep_create(func, unit);
}

/* The segment's key of team unit u (global unit), unpacked into its slot
 * on first use. */
dart_ret_t dart__ucx__seg_key(const char *func, const dart__segment_t *seg,
                              int u, int unit, ucp_rkey_h *rkey);

/* Where an operation on t goes: the route's own key (grown pool chunks),
 * else the segment's. */
static inline dart_ret_t dart__ucx__remote_of(const char *func,
                                              const dart__target_t *t,
                                              dart__ucx_remote_t *r)
{
  r->unit = t->team->members[t->unit];
  r->ep = dart__ucx__ep_of(func, r->unit);
  if (__builtin_expect(r->ep == NULL, 0)) return DART_ERR_OTHER;
  r->addr = t->route->addr + t->offset;
  r->rkey = t->route->key;
  if (r->rkey != NULL) return DART_OK;
  const dart__ucx_seg_t *s = t->seg->transport;
  r->rkey = atomic_load_explicit(&s->rkeys[t->unit], memory_order_acquire);
  if (__builtin_expect(r->rkey != NULL, 1)) return DART_OK;
  return dart__ucx__seg_key(func, t->seg, t->unit, r->unit, &r->rkey);
}

/* Remote completion of what went to ep and has completed locally.
 * UCX's shared-memory transports put with the origin's own stores, which
 * its flush does not order before our later loads: the fence does, as a
 * put to a node peer's memory does (a unit that puts to another and then
 * reads what that one put must not find the old value when the other
 * does too). */
static inline dart_ret_t dart__ucx__flush_ep_only(const char *func,
                                                  ucp_ep_h ep, int unit)
{
  dart_ret_t ret = dart__ucx__wait(func, "ucp_ep_flush_nbx",
                                   ucp_ep_flush_nbx(ep, &dart__ucx__plain),
                                   unit);
  dart__base__fence();
  return ret;
}

/* Completes what went to ep: first every counted operation (a large put
 * over UCX's rendezvous is remote-complete only when its request is). */
static inline dart_ret_t dart__ucx__flush_ep(const char *func, ucp_ep_h ep,
                                             int unit)
{
  if (dart__ucx__may_skip() && dart__ucx__unit_clean(unit)) {
    dart__ucx__serve_others(); /* as the operations that complete at once do */
    return DART_OK;
  }
  dart_ret_t ret = dart__ucx__wait_counted(func);
  if (ret == DART_OK) ret = dart__ucx__flush_ep_only(func, ep, unit);
  if (ret == DART_OK)
    atomic_store_explicit(&dart__ucx.dirty_epoch[unit], 0,
                          memory_order_relaxed);
  return ret;
}

/* Completes everything started. */
dart_ret_t dart__ucx__complete_all(const char *func);

/* Allgathers a byte string of each unit's: *all gets them one after the
 * other, unit u's from off[u] to off[u + 1] (both malloc'd). */
dart_ret_t dart__ucx__allgather(const char *func, MPI_Comm comm, int size,
                                const void *mine, size_t mylen, char **all,
                                size_t **off);

/* The route's endpoint, key, address and global unit into e->remote. */
dart_ret_t dart__ucx__route_fill(const char *func, dart__route_cache_t *e);

/* Where an operation at offset of e's route goes (filled on its first
 * use here). */
static inline __attribute__((always_inline)) dart_ret_t
dart__ucx__route(const char *func, dart__route_cache_t *e, uint64_t offset,
                 dart__ucx_remote_t *r)
{
  if (__builtin_expect(e->remote.conn == NULL, 0)) {
    dart_ret_t ret = dart__ucx__route_fill(func, e);
    if (ret != DART_OK) return ret;
  }
  r->ep = e->remote.conn;
  r->rkey = e->remote.key;
  r->addr = e->remote.addr + offset;
  r->unit = e->remote.unit;
  return DART_OK;
}

/* ---- the path's slots, by file ---- */

/* rma.c */
dart_ret_t dart__ucx__put(const dart__xfer_t *x, dart__mode_t mode,
                          dart_handle_t *handle);
dart_ret_t dart__ucx__get(const dart__xfer_t *x, dart__mode_t mode,
                          dart_handle_t *handle);
dart_ret_t dart__ucx__contig(const char *func, const dart__target_t *t,
                             void *local, size_t bytes, bool is_put,
                             dart__mode_t mode, dart_handle_t *handle);
dart_ret_t dart__ucx__get_blocking(dart__route_cache_t *e, uint64_t offset,
                                   void *local, size_t bytes);
dart_ret_t dart__ucx__put_blocking(dart__route_cache_t *e, uint64_t offset,
                                   const void *local, size_t bytes);
dart_ret_t dart__ucx__start(dart__route_cache_t *e, uint64_t offset,
                            void *local, size_t bytes, bool is_put,
                            dart_handle_t *handle);
dart_ret_t dart__ucx__flush(const char *func, dart__team_t *team, int unit);
dart_ret_t dart__ucx__flush_local(const char *func, dart__team_t *team,
                                  int unit);
dart_ret_t dart__ucx__cached_flush(const char *func, dart__route_cache_t *e);
dart_ret_t dart__ucx__flush_all(const char *func, dart__team_t *team);

/* atomic.c */
dart_ret_t dart__ucx__atomic(const dart__atomic_t *a);
dart_ret_t dart__ucx__signal(const char *func, const dart__target_t *t,
                             uint64_t value, bool add);
dart_ret_t dart__ucx__cached_accumulate(const char *func,
                                        dart__route_cache_t *e,
                                        uint64_t offset, const void *value,
                                        size_t size, dart_operation_t op);

/* memory.c; and for the barrier: len bytes UCX allocates, which its
 * shared-memory transports reach without the owner's progress, and the
 * packed key of memh (both logged on failure) */
dart_ret_t dart__ucx__mem_alloc(const char *func, size_t len,
                                ucp_mem_h *memh, char **base);
ucs_status_t dart__ucx__pack_key(const char *func, ucp_mem_h memh,
                                 void **packed, size_t *packed_len);
dart_ret_t dart__ucx__seg_alloc(const char *func, dart__segment_t *seg,
                                size_t len);
dart_ret_t dart__ucx__seg_register(const char *func, dart__segment_t *seg);
void dart__ucx__seg_release(dart__segment_t *seg);
dart_ret_t dart__ucx__mem_register(const char *func, void *base, size_t len,
                                   void **mem, void **packed,
                                   size_t *packed_len);
void dart__ucx__mem_deregister(void *mem, void *packed);
dart_ret_t dart__ucx__key_unpack(const char *func, int unit,
                                 const void *packed, _Atomic(void *) *slot,
                                 void **key);
void dart__ucx__key_destroy(void *key);

/* barrier.c */
dart_ret_t dart__ucx__barrier_create(const char *func, MPI_Comm comm,
                                     void **out);
dart_ret_t dart__ucx__barrier(const char *func, void *b, bool *done);
void dart__ucx__barrier_destroy(void *b);

/* A context with features and its worker, in the thread mode of
 * dart_init_thread (what was made stays set where it fails, for the
 * caller to free). */
ucs_status_t dart__ucx__worker_open(uint64_t features, ucp_context_h *context,
                                    ucp_worker_h *worker);

/* The path's am_* slots (am.c). */
typedef struct dart__am_team dart__am_team_t;
dart_ret_t dart__ucx__am_open(const char *func, dart__am_team_t *am);
void dart__ucx__am_close(dart__am_team_t *am);
/* At dart_exit, after every team's close: the messages' own worker. */
void dart__ucx__am_fini(void);

#endif
