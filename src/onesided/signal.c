/*
 * Point-to-point completion (dart_signal.h), over the paths' slots: a put
 * with a signal is the put, then the signal's update, an atomic operation
 * on the signal's segment's atomics path (the atomics rule holds for
 * signal words as for any other), which follows the put without waiting
 * for it where that path orders the two (its signal slot, or
 * atomic_follows_puts). A wait reads the
 * caller's own word: by an acquire load where this process loads and
 * stores the memory (its own part, node peers' shared windows), else
 * through the atomics path (a fetch of nothing), and between reads serves
 * the others' operations.
 */
#include <dart/dart_signal.h>

#include "base/runtime.h"
#include "gpu/gpu.h"
#include "onesided/onesided.h"
#include "transport/acc_queue.h"

static bool op_valid(const char *func, dart_signal_op_t op)
{
  if (op == DART_SIGNAL_SET || op == DART_SIGNAL_ADD) return true;
  DART_LOG_ERROR_IN(func, "signal operation %d is unknown", (int)op);
  return false;
}

static bool cmp_valid(const char *func, dart_cmp_t cmp)
{
  if ((unsigned)cmp <= DART_CMP_LE) return true;
  DART_LOG_ERROR_IN(func, "comparison %d is unknown", (int)cmp);
  return false;
}

static bool compare(uint64_t word, dart_cmp_t cmp, uint64_t value)
{
  switch (cmp) {
  case DART_CMP_EQ: return word == value;
  case DART_CMP_NE: return word != value;
  case DART_CMP_GT: return word > value;
  case DART_CMP_GE: return word >= value;
  case DART_CMP_LT: return word < value;
  default: return word <= value; /* DART_CMP_LE: validated before */
  }
}

/* Validates a signal word and resolves it (any unit's). */
static dart_ret_t signal_target(const char *func, dart_gptr_t signal,
                                dart__target_t *target)
{
  return dart__onesided__atomic_target(func, signal, DART_TYPE_ULONGLONG,
                                       target);
}

/* A signal word, validated and resolved for reads. */
typedef struct {
  dart__target_t target;
  _Atomic uint64_t *load; /* where this process loads it, or NULL */
} word_t;

static dart_ret_t word_resolve(const char *func, dart_gptr_t signal,
                               word_t *w)
{
  dart_ret_t ret = signal_target(func, signal, &w->target);
  if (ret != DART_OK) return ret;
  const dart__route_t *r = w->target.route;
  w->load = dart__path_load_store(r->path)
                ? (_Atomic uint64_t *)(void *)(r->base + w->target.offset)
                : NULL;
  return DART_OK;
}

/* A word of the caller's own part, resolved into *w. */
static dart_ret_t own_word(const char *func, dart_gptr_t signal, word_t *w)
{
  dart_ret_t ret = word_resolve(func, signal, w);
  if (ret != DART_OK) return ret;
  if (w->target.unit != w->target.team->myid) {
    DART_LOG_ERROR_IN(func, "the signal word is unit %d's of team %d, not "
                            "the caller's own",
                      w->target.unit, (int)w->target.team->id);
    return DART_ERR_INVAL;
  }
  return DART_OK;
}

/* Whether others update w by a path other than CPU atomics. */
static bool updated_remotely(const word_t *w)
{
  return !dart__path_load_store(w->target.route->atomics);
}

/* Whether the updates of w need this unit's costly progress sources. */
static bool served_costly(const word_t *w)
{
  return dart__path_props[w->target.route->atomics].costly_progress;
}

/* The word's value now. */
static dart_ret_t word_read(const char *func, const word_t *w,
                            uint64_t *value)
{
  const dart__route_t *r = w->target.route;
  /* host memory this process loads: a word that the network's or MPI's
   * atomics update is loaded too (a read excludes no update), once the
   * path's updates are ordered before the load (MPI_Win_sync in MPI's
   * separate memory model) */
  if (w->load != NULL) {
    dart_ret_t ret;
    if (updated_remotely(w) && (ret = dart__transport__sync(func, true)) != DART_OK)
      return ret;
    /* this unit's own updates queued for CPU atomics come first */
    dart__transport__acc_complete();
    *value = atomic_load_explicit(w->load, memory_order_acquire);
    /* a caller that polls here serves the others now and then */
    dart__transport__count_op(r->path);
    return DART_OK;
  }
  return dart__onesided__fetch_op_word(func, &w->target, NULL, value,
                                       DART_OP_NO_OP);
}

/* The signal's update, after what the caller completed or ordered before
 * it: the atomics path's signal slot, which leaves it in flight, else its
 * atomic slot, complete on return. */
static dart_ret_t update(const char *func, const dart__target_t *sig,
                         uint64_t value, dart_signal_op_t op)
{
  const int atomics = sig->route->atomics;
  const dart__path_ops_t *ops = dart__transport__paths[atomics];
  if (ops->signal != NULL) {
    dart__transport__count_op(atomics);
    return ops->signal(func, sig, value, op == DART_SIGNAL_ADD);
  }
  uint64_t old;
  return dart__onesided__fetch_op_word(
      func, sig, &value, &old,
      op == DART_SIGNAL_SET ? DART_OP_REPLACE : DART_OP_SUM);
}

/*
 * The put, then the signal; a bad signal or a bad put leaves both undone.
 * Where the signal's atomics path orders its update after the put (the
 * put took that path to the same unit of the same team), the put is only
 * started and the update follows it at once: UCX's signal slot waits for
 * nothing at the target (the flush of the signal's unit, or the handle,
 * completes both); the atomic slots complete both (MPI's first flush,
 * the device stream's synchronisation). Else the put completes at its
 * target first. Without a handle, returns once src may be reused.
 */
static dart_ret_t put_signal(const char *func, dart_gptr_t dst,
                             const void *src, size_t nelem,
                             dart_datatype_t src_type,
                             dart_datatype_t dst_type, dart_gptr_t signal,
                             uint64_t value, dart_signal_op_t op,
                             dart_handle_t *handle)
{
  DART__CHECK_INIT_IN(func);
  dart__target_t sig, put;
  dart__xfer_t x;
  if (!op_valid(func, op)) return DART_ERR_INVAL;
  dart_ret_t ret = signal_target(func, signal, &sig);
  if (ret == DART_OK)
    ret = dart__onesided__prepare(func, dst, (void *)src, nelem, src_type,
                                  dst_type, true, &put, &x);
  if (ret != DART_OK) return ret;
  const int path = put.route->path, atomics = sig.route->atomics;
  const dart__path_ops_t *ops = dart__transport__paths[atomics];
  /* a host path stages device memory through the host, apart */
  const bool staged =
      !dart__path_props[path].device && dart__gpu__is_device(src);
  /* CPU stores and CPU atomics (self and shm) order as one path */
  const bool same_path =
      path == atomics ||
      (dart__path_load_store(path) && dart__path_load_store(atomics));
  const bool ordered =
      (ops->signal != NULL || dart__path_props[atomics].atomic_follows_puts) &&
      same_path && put.team == sig.team && put.unit == sig.unit && !staged;
  if (nelem > 0)
    ret = dart__onesided__transfer(
        &put, &x, true, ordered ? DART__MODE_NB : DART__MODE_BLOCKING, NULL);
  if (ret == DART_OK) ret = update(func, &sig, value, op);
  /* complete, unless the signal slot left it in flight */
  if (ret != DART_OK || ops->signal == NULL) return ret;
  if (handle == NULL)
    return ordered ? ops->flush_local(func, put.team, put.unit) : DART_OK;
  *handle = dart__onesided__handle_new(sig.team, sig.unit, atomics, true);
  /* no handle to be had: complete now instead */
  return *handle != NULL ? DART_OK : ops->flush(func, sig.team, sig.unit);
}

dart_ret_t dart_put_signal(dart_gptr_t dst, const void *src, size_t nelem,
                           dart_datatype_t src_type,
                           dart_datatype_t dst_type, dart_gptr_t signal,
                           uint64_t value, dart_signal_op_t op)
{
  return put_signal(__func__, dst, src, nelem, src_type, dst_type, signal,
                    value, op, NULL);
}

dart_ret_t dart_put_signal_handle(dart_gptr_t dst, const void *src,
                                  size_t nelem, dart_datatype_t src_type,
                                  dart_datatype_t dst_type,
                                  dart_gptr_t signal, uint64_t value,
                                  dart_signal_op_t op,
                                  dart_handle_t *handle)
{
  DART__CHECK_INIT();
  if (!dart__onesided__handle_out(__func__, handle)) return DART_ERR_INVAL;
  return put_signal(__func__, dst, src, nelem, src_type, dst_type, signal,
                    value, op, handle);
}

dart_ret_t dart_signal(dart_gptr_t signal, uint64_t value,
                       dart_signal_op_t op)
{
  DART__CHECK_INIT();
  dart__target_t target;
  if (!op_valid(__func__, op)) return DART_ERR_INVAL;
  dart_ret_t ret = signal_target(__func__, signal, &target);
  if (ret != DART_OK) return ret;
  /* what this unit put before, on any path, is complete first */
  dart__transport__acc_complete();
  if ((ret = dart__transport__flush_all(__func__, NULL)) != DART_OK)
    return ret;
  return update(__func__, &target, value, op);
}

dart_ret_t dart_signal_read(dart_gptr_t signal, uint64_t *value)
{
  DART__CHECK_INIT();
  if (value == NULL) {
    DART_LOG_ERROR("value is NULL");
    return DART_ERR_INVAL;
  }
  word_t w;
  uint64_t word;
  dart_ret_t ret = word_resolve(__func__, signal, &w);
  if (ret == DART_OK) ret = word_read(__func__, &w, &word);
  if (ret == DART_OK) *value = word;
  return ret;
}

dart_ret_t dart_signal_test(dart_gptr_t signal, dart_cmp_t cmp,
                            uint64_t value, int *flag)
{
  DART__CHECK_INIT();
  if (flag == NULL) {
    DART_LOG_ERROR("flag is NULL");
    return DART_ERR_INVAL;
  }
  if (!cmp_valid(__func__, cmp)) return DART_ERR_INVAL;
  word_t w;
  uint64_t word;
  dart_ret_t ret = own_word(__func__, signal, &w);
  if (ret == DART_OK) ret = word_read(__func__, &w, &word);
  if (ret != DART_OK) return ret;
  *flag = compare(word, cmp, value);
  return DART_OK;
}

typedef enum { WAIT_ALL, WAIT_ANY, WAIT_SOME } wait_for_t;
#define WAIT_RESOLVED 8

/*
 * Waits until all, one or some of the n own words compare true, serving
 * the others' operations between the rounds of reads. The round that
 * succeeds names the words that did in indices (any: the first; some:
 * every one, room for n), how many in *count, and the last one's word in
 * *seen (each may be NULL).
 */
static dart_ret_t wait_words(const char *func, const dart_gptr_t *signals,
                             size_t n, dart_cmp_t cmp, uint64_t value,
                             wait_for_t wait_for, size_t *indices,
                             size_t *count, uint64_t *seen)
{
  DART__CHECK_INIT_IN(func);
  if (signals == NULL || n == 0) {
    DART_LOG_ERROR_IN(func, "%zu signal words at %p", n, (void *)signals);
    return DART_ERR_INVAL;
  }
  if (!cmp_valid(func, cmp)) return DART_ERR_INVAL;
  dart_ret_t ret;
  bool costly = false;
  /* the first WAIT_RESOLVED words resolved once, the others every round */
  word_t resolved[WAIT_RESOLVED], w;
  for (size_t i = 0; i < n; i++) {
    word_t *wi = i < WAIT_RESOLVED ? &resolved[i] : &w;
    if ((ret = own_word(func, signals[i], wi)) != DART_OK) return ret;
    costly |= served_costly(wi);
  }
  unsigned spins = 0;
  for (;;) {
    size_t hits = 0;
    uint64_t word = 0, last = 0;
    for (size_t i = 0; i < n; i++) {
      if (i >= WAIT_RESOLVED &&
          (ret = word_resolve(func, signals[i], &w)) != DART_OK)
        return ret;
      if ((ret = word_read(func, i < WAIT_RESOLVED ? &resolved[i] : &w,
                           &word)) != DART_OK)
        return ret;
      if (!compare(word, cmp, value)) {
        if (wait_for == WAIT_ALL) break;
        continue;
      }
      if (indices) indices[hits] = i;
      hits++;
      last = word;
      if (wait_for == WAIT_ANY) break;
    }
    if (wait_for == WAIT_ALL ? hits == n : hits > 0) {
      if (count) *count = hits;
      if (seen) *seen = last;
      return DART_OK;
    }
    dart__progress__wait_turn_served(&spins, costly);
  }
}

dart_ret_t dart_signal_wait_until(dart_gptr_t signal, dart_cmp_t cmp,
                                  uint64_t value, uint64_t *seen)
{
  return wait_words(__func__, &signal, 1, cmp, value, WAIT_ALL, NULL, NULL,
                    seen);
}

dart_ret_t dart_signal_wait_until_all(const dart_gptr_t *signals, size_t n,
                                      dart_cmp_t cmp, uint64_t value)
{
  return wait_words(__func__, signals, n, cmp, value, WAIT_ALL, NULL, NULL,
                    NULL);
}

dart_ret_t dart_signal_wait_until_any(const dart_gptr_t *signals, size_t n,
                                      dart_cmp_t cmp, uint64_t value,
                                      size_t *index)
{
  if (index == NULL) {
    DART__CHECK_INIT();
    DART_LOG_ERROR("index is NULL");
    return DART_ERR_INVAL;
  }
  size_t first;
  dart_ret_t ret = wait_words(__func__, signals, n, cmp, value, WAIT_ANY,
                              &first, NULL, NULL);
  if (ret == DART_OK) *index = first;
  return ret;
}

dart_ret_t dart_signal_wait_until_some(const dart_gptr_t *signals,
                                       size_t n, dart_cmp_t cmp,
                                       uint64_t value, size_t *indices,
                                       size_t *count)
{
  if (indices == NULL || count == NULL) {
    DART__CHECK_INIT();
    DART_LOG_ERROR("indices %p or count %p is NULL", (void *)indices,
                   (void *)count);
    return DART_ERR_INVAL;
  }
  return wait_words(__func__, signals, n, cmp, value, WAIT_SOME, indices,
                    count, NULL);
}
