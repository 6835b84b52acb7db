/*
 * The UCX path's atomics. UCX has 32- and 64-bit add, swap,
 * compare-and-swap and the bitwise operations. The fetching bitwise ones
 * are wrong on UCX 1.13's shared-memory transports (they leave op(old,
 * old)), so those, narrower elements, floating point and the other
 * operations are compare-and-swap loops on the same path, which keeps
 * every atomic on one location atomic with the others. Accumulates that
 * are one non-fetching UCX atomic per element are only started
 * (deferrable): a round trip per update would cost GUPS-style codes half
 * their rate.
 */
#include <string.h>

#include "base/copy.h"
#include "transport/acc_queue.h"
#include "types/datatype.h"
#include "ucx/ucx.h"

/* The options of a non-fetching atomic of 4 and of 8 bytes: counted. */
static const ucp_request_param_t counted_amo[2] = {
    {.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_CALLBACK,
     .datatype = ucp_dt_make_contig(4),
     .cb.send = dart__ucx__op_done},
    {.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_CALLBACK,
     .datatype = ucp_dt_make_contig(8),
     .cb.send = dart__ucx__op_done}};

/* One UCX atomic of size 4 or 8 on addr; reply (when not NULL) gets the old
 * value, and for CSWAP holds the new value on entry. Fetching operations
 * are waited for; the others are counted, and complete with the flush
 * that ends dart__ucx__atomic or, only started there, with the caller's next.
 */
static inline dart_ret_t amo(const char *func, const dart__ucx_remote_t *r,
                             ucp_atomic_op_t op, const void *operand,
                             void *reply, size_t size, uint64_t addr)
{
  if (reply == NULL)
    return dart__ucx__count(func, "ucp_atomic_op_nbx",
                            ucp_atomic_op_nbx(r->ep, op, operand, 1, addr,
                                              r->rkey, &counted_amo[size == 8]),
                            r->unit, false);
  const ucp_request_param_t param = {
      .op_attr_mask =
          UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER,
      .datatype = ucp_dt_make_contig(size),
      .reply_buffer = reply};
  return dart__ucx__wait(
      func, "ucp_atomic_op_nbx",
      ucp_atomic_op_nbx(r->ep, op, operand, 1, addr, r->rkey, &param), r->unit);
}

/* UCX's operation for one that dart__transport__one_instruction takes. */
static ucp_atomic_op_t native_op(dart_operation_t op)
{
  return op == DART_OP_SUM    ? UCP_ATOMIC_OP_ADD
         : op == DART_OP_BAND ? UCP_ATOMIC_OP_AND
         : op == DART_OP_BOR  ? UCP_ATOMIC_OP_OR
                              : UCP_ATOMIC_OP_XOR;
}

/* Orders the operations this unit starts next after those it started
 * before, without waiting for them. */
static dart_ret_t fence(const char *func)
{
  ucs_status_t status = ucp_worker_fence(dart__ucx.worker);
  if (status != UCS_OK)
    return dart__ucx__error(func, "ucp_worker_fence", status, dart__rt.myid);
  return DART_OK;
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
         a->values != NULL && dart__types__basic_types[a->type].integral &&
         dart__transport__one_instruction(a->op) &&
         dart__rt.thread_level != DART_THREAD_MULTIPLE;
}

/* Frees the operand slots of started operations when fewer than n are
 * left, by waiting for their operations. */
static inline dart_ret_t free_slots(const char *func, unsigned n)
{
  if (dart__ucx.acc_slots_used + n <= DART__UCX_ACC_SLOTS) return DART_OK;
  dart_ret_t ret = dart__ucx__wait_counted(func);
  if (ret == DART_OK) dart__ucx.acc_slots_used = 0;
  return ret;
}

/* A copy of a started operation's operand in a free slot (free_slots),
 * which lives until the operation completes: the caller may reuse values
 * on return, UCX reads them until then. */
static inline const void *keep_operand(const void *operand, size_t size)
{
  uint64_t *slot = &dart__ucx.acc_operand[dart__ucx.acc_slots_used++];
  dart__base__copy(slot, operand, size);
  return slot;
}

/* Starts a deferrable accumulate of one element of size bytes at addr,
 * with a slot free for its operand. */
/* An update started that later atomics of this unit must see: they
 * complete it first (acc_started), or fence after it (fence_owed). */
static inline void update_started(void)
{
  atomic_store_explicit(&dart__ucx.acc_started, true, memory_order_relaxed);
  atomic_store_explicit(&dart__ucx.fence_owed, true, memory_order_relaxed);
}

static inline dart_ret_t start_accumulate(const char *func,
                                          const dart__ucx_remote_t *r,
                                          dart_operation_t op,
                                          const void *operand, size_t size,
                                          uint64_t addr)
{
  update_started();
  return amo(func, r, native_op(op), keep_operand(operand, size), NULL, size,
             addr);
}

/* A fetching UCX atomic of size bytes at addr, only started: reply gets
 * the old value (for CSWAP it holds the new value on entry) once the
 * operation completes, which *started (may be NULL) says it has not
 * yet. */
static dart_ret_t start_fetch(const char *func, const dart__ucx_remote_t *r,
                              ucp_atomic_op_t op, const void *operand,
                              void *reply, size_t size, uint64_t addr,
                              bool *started)
{
  const ucp_request_param_t param = {
      .op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE |
                      UCP_OP_ATTR_FIELD_CALLBACK |
                      UCP_OP_ATTR_FIELD_REPLY_BUFFER,
      .datatype = ucp_dt_make_contig(size),
      .cb.send = dart__ucx__op_done,
      .reply_buffer = reply};
  ucs_status_ptr_t req = ucp_atomic_op_nbx(
      r->ep, op, keep_operand(operand, size), 1, addr, r->rkey, &param);
  if (started) *started = req != NULL && !UCS_PTR_IS_ERR(req);
  return dart__ucx__count(func, "ucp_atomic_op_nbx", req, r->unit, false);
}

/*
 * A fetch-and-op or compare-and-swap with a handle that one UCX atomic
 * does (the others are compare-and-swap loops, complete on return):
 * started, with the caller's result as its reply buffer. False, with
 * nothing done, where it is not such an operation or several threads are
 * in DART (the operand slots are not shared).
 */
static bool start_with_handle(const dart__atomic_t *a,
                              const dart__ucx_remote_t *r, dart_ret_t *ret)
{
  ucp_atomic_op_t op;
  const void *operand = a->values;
  uint64_t zero = 0;
  if (a->handle == NULL || a->size < 4 ||
      dart__rt.thread_level == DART_THREAD_MULTIPLE)
    return false;
  if (a->kind == DART__ATOMIC_CAS) {
    op = UCP_ATOMIC_OP_CSWAP;
    memcpy(a->result, a->values, a->size); /* the new value goes in */
    operand = a->compare;
  } else if (a->op == DART_OP_SUM &&
             dart__types__basic_types[a->type].integral) {
    op = UCP_ATOMIC_OP_ADD;
  } else if (a->op == DART_OP_REPLACE) {
    op = UCP_ATOMIC_OP_SWAP;
  } else if (a->op == DART_OP_NO_OP) {
    op = UCP_ATOMIC_OP_ADD;
    operand = &zero;
  } else {
    return false;
  }
  bool started = false;
  if ((*ret = free_slots(a->func, 1)) != DART_OK) return true;
  /* after the accumulates and signals started before, without waiting
   * (not after other fetches in flight: a fence would wait for them, on
   * transports without one of their own) */
  if (atomic_load_explicit(&dart__ucx.fence_owed, memory_order_relaxed)) {
    if ((*ret = fence(a->func)) != DART_OK) return true;
    atomic_store_explicit(&dart__ucx.fence_owed, false, memory_order_relaxed);
  }
  *ret = start_fetch(a->func, r, op, operand, a->result, a->size, r->addr,
                     &started);
  if (*ret == DART_OK && started) {
    const dart__target_t *t = a->target;
    *a->handle =
        dart__onesided__handle_new(t->team, t->unit, DART__PATH_UCX, false);
    /* no handle: complete now instead */
    if (*a->handle == NULL) *ret = dart__ucx__wait_counted(a->func);
  }
  return true;
}

/* The element's next value: the operation, or compare-and-swap. */
static void next_value(const dart__atomic_t *a, const void *old,
                       const void *operand, void *out)
{
  if (a->kind == DART__ATOMIC_CAS)
    memcpy(out, memcmp(old, a->compare, a->size) == 0 ? operand : old,
           a->size);
  else
    dart__transport__atomic_apply(a, old, operand, out);
}

/*
 * Any operation on one element at addr as a compare-and-swap loop on the
 * aligned word of 4 or 8 bytes that holds it (for 1- and 2-byte elements:
 * their 4-byte word, whose other bytes are written back as they were).
 */
static dart_ret_t cas_loop(const char *func, const dart__ucx_remote_t *r,
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
static dart_ret_t element(const char *func, const dart__ucx_remote_t *r,
                          const dart__atomic_t *a, uint64_t addr,
                          const void *operand, void *old_out)
{
  if (a->size < 4) return cas_loop(func, r, a, addr, operand, old_out);
  bool integral = dart__types__basic_types[a->type].integral;
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

dart_ret_t dart__ucx__atomic(const dart__atomic_t *a)
{
  dart__ucx_remote_t r;
  dart_ret_t ret = dart__ucx__remote_of(a->func, a->target, &r);
  if (ret != DART_OK) return ret;
  if (start_with_handle(a, &r, &ret)) {
    dart__ucx__serve_others();
    return ret;
  }
  const bool defer = deferrable(a);
  if (!defer &&
      atomic_load_explicit(&dart__ucx.acc_started, memory_order_relaxed)) {
    /* after the accumulates left to complete: this one sees them */
    atomic_store_explicit(&dart__ucx.acc_started, false, memory_order_relaxed);
    atomic_store_explicit(&dart__ucx.fence_owed, false, memory_order_relaxed);
    if ((ret = dart__ucx__complete_all(a->func)) != DART_OK) return ret;
  }
  if (a->kind != DART__ATOMIC_ACCUMULATE) {
    ret = element(a->func, &r, a, r.addr, a->values, a->result);
  } else {
    const char *operands = a->values;
    for (size_t i = 0; i < a->nelem && ret == DART_OK; i++) {
      const void *operand = operands ? operands + i * a->size : NULL;
      uint64_t addr = r.addr + i * a->size;
      if (defer && (ret = free_slots(a->func, 1)) != DART_OK) break;
      ret = defer ? start_accumulate(a->func, &r, a->op, operand, a->size,
                                     addr)
                  : element(a->func, &r, a, addr, operand, NULL);
    }
  }
  /* complete on return, before the caller's next operation, unless only
   * started */
  if (ret == DART_OK && a->kind == DART__ATOMIC_ACCUMULATE && !defer)
    ret = dart__ucx__flush_ep(a->func, r.ep, r.unit);
  dart__ucx__serve_others();
  return ret;
}

dart_ret_t dart__ucx__cached_accumulate(const char *func,
                                        dart__route_cache_t *e,
                                        uint64_t offset, const void *value,
                                        size_t size, dart_operation_t op)
{
  dart__ucx_remote_t r;
  dart_ret_t ret = dart__ucx__route(func, e, offset, &r);
  if (ret == DART_OK) ret = free_slots(func, 1);
  if (ret != DART_OK) return ret;
  /* counted along the atomics' path, as the other accumulates are */
  if (e->path == DART__PATH_UCX) e->ops++;
  else dart__transport__count_op(DART__PATH_UCX);
  ret = start_accumulate(func, &r, op, value, size, r.addr);
  dart__ucx__serve_others();
  return ret;
}

dart_ret_t dart__ucx__signal(const char *func, const dart__target_t *t,
                             uint64_t value, bool add)
{
  dart__ucx_remote_t r;
  dart_ret_t ret = dart__ucx__remote_of(func, t, &r);
  if (ret == DART_OK) ret = fence(func);
  if (ret != DART_OK) return ret;
  if (dart__rt.thread_level == DART_THREAD_MULTIPLE) {
    /* complete on return: the operand slots are not shared */
    uint64_t old;
    ret = amo(func, &r, add ? UCP_ATOMIC_OP_ADD : UCP_ATOMIC_OP_SWAP, &value,
              &old, sizeof value, r.addr);
  } else if (add) {
    if ((ret = free_slots(func, 1)) == DART_OK)
      ret = start_accumulate(func, &r, DART_OP_SUM, &value, sizeof value,
                             r.addr);
  } else if ((ret = free_slots(func, 2)) == DART_OK) {
    /* a swap has a reply: the old value goes to a slot of its own */
    update_started();
    uint64_t *old = &dart__ucx.acc_operand[dart__ucx.acc_slots_used++];
    ret = start_fetch(func, &r, UCP_ATOMIC_OP_SWAP, &value, old,
                      sizeof value, r.addr, NULL);
  }
  dart__ucx__serve_others();
  return ret;
}
