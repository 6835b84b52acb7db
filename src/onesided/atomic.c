/*
 * Public atomic operations: validate, resolve, dispatch to the segment's
 * atomics path (CPU atomics on shared memory, or the remote path's atomics
 * for every unit when the segment spans nodes). The arithmetic of one
 * element, shared by the paths' compare-and-swap loops, is in
 * atomic_apply.h.
 */
#include <dart/dart_communication.h>
#include <dart/dart_signal.h>
#include <string.h>

#include "base/runtime.h"
#include "onesided/onesided.h"
#include "transport/acc_queue.h"
#include "transport/cpu_atomic.h"
#include "types/atomic_apply.h"

/* The operations that apply atomically to one element, as bit masks:
 * MINMAX works on pairs and user operations on arrays, so neither does. */
#define OP_BIT(op) (UINT32_C(1) << (op))
#define OPS_ANY_TYPE                                                         \
  (OP_BIT(DART_OP_MIN) | OP_BIT(DART_OP_MAX) | OP_BIT(DART_OP_SUM) |         \
   OP_BIT(DART_OP_PROD) | OP_BIT(DART_OP_REPLACE) | OP_BIT(DART_OP_NO_OP))
#define OPS_INTEGRAL                                                         \
  (OPS_ANY_TYPE | OP_BIT(DART_OP_BAND) | OP_BIT(DART_OP_BOR) |               \
   OP_BIT(DART_OP_BXOR) | OP_BIT(DART_OP_LAND) | OP_BIT(DART_OP_LOR) |       \
   OP_BIT(DART_OP_LXOR))

static inline bool op_valid(dart_operation_t op, const dart__dtype_t *t)
{
  return op < 32 && ((t->integral ? OPS_INTEGRAL : OPS_ANY_TYPE) & OP_BIT(op));
}

/* Validates an atomic operation and resolves its target; *type_out gets
 * the element type. */
static inline __attribute__((always_inline)) dart_ret_t
prepare(const char *func, dart_gptr_t gptr, dart__atomic_kind_t kind,
        const void *values, const void *compare, void *result, size_t nelem,
        dart_datatype_t type, dart_operation_t op, dart__target_t *target,
        const dart__dtype_t **type_out)
{
  DART__CHECK_INIT_IN(func);
  if (type <= DART_TYPE_UNDEFINED || type >= DART_TYPE_LAST) {
    DART_LOG_ERROR_IN(func, "datatype %ld is not a basic type", (long)type);
    return DART_ERR_INVAL;
  }
  const dart__dtype_t *t = &dart__types__basic_types[type];
  if (kind == DART__ATOMIC_CAS) {
    if (!t->integral) {
      DART_LOG_ERROR_IN(func, "compare-and-swap needs an integral type, not "
                              "datatype %ld", (long)type);
      return DART_ERR_INVAL;
    }
  } else if (!op_valid(op, t)) {
    DART_LOG_ERROR_IN(func, "operation %lu does not apply atomically to "
                            "datatype %ld", (unsigned long)op, (long)type);
    return DART_ERR_INVAL;
  }
  if ((values == NULL && nelem > 0 && op != DART_OP_NO_OP) ||
      (kind == DART__ATOMIC_CAS && compare == NULL) ||
      (kind != DART__ATOMIC_ACCUMULATE && result == NULL)) {
    DART_LOG_ERROR_IN(func, "value %p, compare %p or result %p is NULL",
                      values, compare, result);
    return DART_ERR_INVAL;
  }
  if (nelem > t->max_nelem) {
    DART_LOG_ERROR_IN(func, "%zu elements of %zu bytes overflow", nelem,
                      t->elem_size);
    return DART_ERR_INVAL;
  }
  dart_ret_t ret =
      dart__globmem__resolve(func, gptr, nelem * t->elem_size, target);
  if (ret != DART_OK) return ret;
  /* a path without atomics (stage) refuses them before anything moves */
  if (dart__transport__paths[target->route->atomics]->atomic == NULL) {
    DART_LOG_ERROR_IN(func, "no atomics on unit %d's memory by path %s: "
                            "device memory on another node needs a remote "
                            "transport that moves it (a CUDA-aware UCX, "
                            "DART_TRANSPORT=ucx, DART_GPU_UCX=1)",
                      target->unit,
                      dart_path_name((dart_path_t)target->route->atomics));
    return DART_ERR_INVAL;
  }
  /* in the owner's process; mappings elsewhere differ by whole pages */
  uint64_t addr = target->route->addr + target->offset;
  if (addr & (t->elem_size - 1)) { /* sizes are powers of two */
    DART_LOG_ERROR_IN(func, "offset %llu is not aligned to the %zu bytes of "
                            "datatype %ld",
                      (unsigned long long)gptr.addr_or_offs.offset,
                      t->elem_size, (long)type);
    return DART_ERR_INVAL;
  }
  *type_out = t;
  return DART_OK;
}

/* One exchange on an 8-byte lock word; *seen gets the word before. */
static dart_ret_t lock_word_cas(const dart__atomic_t *a,
                                const dart__target_t *word, uint64_t from,
                                uint64_t to, uint64_t *seen)
{
  dart__atomic_t cas = {.func = a->func,
                        .target = word,
                        .kind = DART__ATOMIC_CAS,
                        .type = DART_TYPE_ULONGLONG,
                        .size = sizeof(uint64_t),
                        .op = DART_OP_REPLACE,
                        .values = &to,
                        .compare = &from,
                        .result = seen,
                        .nelem = 1};
  return dart__transport__paths[word->route->atomics]->atomic(&cas);
}

#define WIDE_BLOCK 64

/*
 * Elements wider than any compare-and-swap (long double) change under a
 * lock word of their owner: take it, read, compute, write back, release.
 * Every atomic on such an element goes this way, on every path, so they
 * exclude each other.
 */
static dart_ret_t wide_atomic(const dart__atomic_t *a)
{
  const dart__target_t *t = a->target;
  dart__target_t word;
  dart__globmem__wide_lock(t->team->members[t->unit], &word);
  const uint64_t me = (uint64_t)dart__rt.myid + 1;
  uint64_t seen;
  unsigned spins = 0;
  dart_ret_t ret;
  while ((ret = lock_word_cas(a, &word, 0, me, &seen)) == DART_OK && seen)
    dart__progress__wait_turn(&spins);
  if (ret != DART_OK) return ret;

  const dart__path_ops_t *path = dart__transport__paths[t->route->path];
  const dart__dtype_t *ld = &dart__types__basic_types[DART_TYPE_LONG_DOUBLE];
  long double old[WIDE_BLOCK], next[WIDE_BLOCK];
  const char *operands = a->values;
  for (size_t first = 0; first < a->nelem && ret == DART_OK;
       first += WIDE_BLOCK) {
    dart__target_t at = *t;
    at.offset += first * a->size;
    size_t n = a->nelem - first < WIDE_BLOCK ? a->nelem - first : WIDE_BLOCK;
    dart__xfer_t x = {&at, old, ld, ld, n, a->func};
    if ((ret = path->get(&x, DART__MODE_BLOCKING, NULL)) != DART_OK) break;
    if (a->op == DART_OP_NO_OP) continue;
    for (size_t i = 0; i < n; i++)
      dart__transport__atomic_apply(
          a, &old[i], operands ? operands + (first + i) * a->size : NULL,
          &next[i]);
    x.local = next;
    ret = path->put(&x, DART__MODE_BLOCKING, NULL);
  }
  if (ret == DART_OK && a->result) memcpy(a->result, &old[0], a->size);

  dart_ret_t unlock = lock_word_cas(a, &word, me, 0, &seen);
  return ret != DART_OK ? ret : unlock;
}

/* Queues an accumulate of one element on target where it can wait
 * (acc_queue.h): true then, and nothing else to do. */
static inline __attribute__((always_inline)) bool
queue_accumulate(const dart__target_t *target, const dart__dtype_t *t,
                 const void *value, size_t nelem, dart_operation_t op)
{
  const dart__route_t *r = target->route;
  if (nelem != 1 || !dart__path_load_store(r->atomics) ||
      !dart__transport__acc_queueable(t, op))
    return false;
  dart__transport__count_op(r->path);
  dart__transport__acc_enqueue(r->base + target->offset, value, t->elem_size,
                               op);
  return true;
}

/* An atomic on its resolved target, on the segment's atomics path. */
static inline __attribute__((always_inline)) dart_ret_t
dispatch(const dart__atomic_t *a)
{
  const dart__route_t *r = a->target->route;
  const int path = r->atomics;
  /* sees this unit's queued accumulates, as MPI orders accumulates */
  dart__transport__acc_complete();
  dart__transport__count_op(dart__path_load_store(path) ? r->path : path);
  if (a->type == DART_TYPE_LONG_DOUBLE) return wide_atomic(a);
  return dart__transport__paths[path]->atomic(a);
}

/* inlined: each public function gets the checks of its own kind only;
 * handle (not NULL: a fetching one with a handle, set to DART_HANDLE_NULL
 * by the caller) lets its path only start it */
static inline __attribute__((always_inline)) dart_ret_t
atomic(const char *func, dart_gptr_t gptr, dart__atomic_kind_t kind,
       const void *values, const void *compare, void *result, size_t nelem,
       dart_datatype_t type, dart_operation_t op, dart_handle_t *handle)
{
  dart__target_t target;
  const dart__dtype_t *t;
  dart_ret_t ret = prepare(func, gptr, kind, values, compare, result, nelem,
                           type, op, &target, &t);
  if (ret != DART_OK || nelem == 0) return ret;
  if (kind == DART__ATOMIC_ACCUMULATE &&
      queue_accumulate(&target, t, values, nelem, op))
    return DART_OK;
  const dart__atomic_t a = {.func = func,
                      .target = &target,
                      .kind = kind,
                      .type = type,
                      .size = t->elem_size,
                      .op = kind == DART__ATOMIC_CAS ? DART_OP_REPLACE : op,
                      .values = values,
                      .compare = compare,
                      .result = result,
                      .nelem = nelem,
                      .handle = handle};
  return dispatch(&a);
}

/*
 * The hot path of an accumulate that need not complete on return: one
 * integral element, a one-instruction operation, a cached route. Where its
 * atomics are CPU atomics on memory this process loads and stores, it is
 * queued right here (acc_queue.h; a hit means that the cache, and so the
 * queue, is on): a random update costs little more than its locked
 * instruction, so the call must too. Where their path has a cached
 * accumulate (UCX's, the owner's), a 4- or 8-byte element with no
 * accumulate queued for CPU atomics (they come first; not before the
 * owner's batches, which wait as they do) is only started there. True then, with the
 * result in *ret; false, with nothing done, for anything else.
 */
static inline __attribute__((always_inline)) bool
cached_accumulate(const char *func, dart_gptr_t gptr, const void *value,
                  size_t nelem, dart_datatype_t type, dart_operation_t op,
                  dart_ret_t *ret)
{
  if (nelem != 1 || value == NULL || type <= DART_TYPE_UNDEFINED ||
      type >= DART_TYPE_LAST ||
      !dart__transport__acc_queueable(&dart__types__basic_types[type], op))
    return false;
  size_t size = dart__types__basic_size[type];
  dart__route_cache_t *e = dart__globmem__route_cached(gptr, size);
  if (__builtin_expect(e == NULL, 0)) return false;
  uint64_t offset = gptr.addr_or_offs.offset;
  if (__builtin_expect(dart__path_load_store(e->atomics), 1)) {
    /* aligned as prepare checks it: mappings differ by whole pages */
    char *p = e->base + offset;
    if (((uintptr_t)p & (size - 1)) != 0) return false;
    const uint64_t n = ++e->ops;
    dart__transport__acc_enqueue(p, value, size, op);
    *ret = dart__progress__served(n);
    return true;
  }
  /* aligned in the owner's process, as prepare checks it */
  const dart__path_ops_t *path = dart__transport__paths[e->atomics];
  /* a batch the owner applies waits as the queue does, for other memory:
   * neither needs to come first */
  if (path->cached_accumulate == NULL || size < 4 ||
      (dart__transport__acc_queued != 0 && e->atomics != DART__PATH_OWNER) ||
      ((e->route->addr + offset) & (size - 1)) != 0)
    return false;
  *ret = path->cached_accumulate(func, e, offset, value, size, op);
  return true;
}

/*
 * The hot path of a fetching atomic or compare-and-swap (kind): one
 * element on a cached route whose atomics are CPU atomics on memory this
 * process loads and stores, with no accumulate queued (they come first):
 * done right here (the result in *ret). False, with nothing done, for
 * anything else, long double included (it changes under a lock word).
 */
static inline __attribute__((always_inline)) bool
cached_atomic(dart_gptr_t gptr, dart__atomic_kind_t kind, const void *value,
              const void *compare, void *result, dart_datatype_t type,
              dart_operation_t op, dart_ret_t *ret)
{
  if (type <= DART_TYPE_UNDEFINED || type >= DART_TYPE_LAST ||
      type == DART_TYPE_LONG_DOUBLE || value == NULL || result == NULL ||
      (kind == DART__ATOMIC_CAS && compare == NULL))
    return false;
  const dart__dtype_t *t = &dart__types__basic_types[type];
  if (kind == DART__ATOMIC_CAS ? !t->integral : !op_valid(op, t)) return false;
  size_t size = dart__types__basic_size[type];
  dart__route_cache_t *e = dart__globmem__route_cached(gptr, size);
  if (__builtin_expect(e == NULL || !dart__path_load_store(e->atomics) ||
                           dart__transport__acc_queued != 0,
                       0))
    return false;
  char *p = e->base + gptr.addr_or_offs.offset;
  if (((uintptr_t)p & (size - 1)) != 0) return false;
  const uint64_t n = ++e->ops;
  const dart__atomic_t a = {.kind = kind,
                            .type = type,
                            .size = size,
                            .op = kind == DART__ATOMIC_CAS ? DART_OP_REPLACE
                                                           : op,
                            .values = value,
                            .compare = compare,
                            .result = result,
                            .nelem = 1};
  cpu_element(&a, p, value, result);
  *ret = dart__progress__served(n);
  return true;
}

/*
 * Each public function is its hot path, and for everything else jumps to
 * a twin of the same signature, out of line: with its arguments where
 * they came, it saves and shuffles no registers on the hot path.
 */
static __attribute__((noinline)) dart_ret_t
accumulate_rest(dart_gptr_t gptr, const void *values, size_t nelem,
                dart_datatype_t dtype, dart_operation_t op)
{
  return atomic("dart_accumulate", gptr, DART__ATOMIC_ACCUMULATE, values,
                NULL, NULL, nelem, dtype, op, NULL);
}

dart_ret_t dart_accumulate(dart_gptr_t gptr, const void *values, size_t nelem,
                           dart_datatype_t dtype, dart_operation_t op)
{
  dart_ret_t ret;
  if (__builtin_expect(cached_accumulate("dart_accumulate", gptr, values,
                                         nelem, dtype, op, &ret),
                       1))
    return ret;
  return accumulate_rest(gptr, values, nelem, dtype, op);
}

static __attribute__((noinline)) dart_ret_t
accumulate_blocking_local_rest(dart_gptr_t gptr, const void *values,
                               size_t nelem, dart_datatype_t dtype,
                               dart_operation_t op)
{
  return atomic("dart_accumulate_blocking_local", gptr,
                DART__ATOMIC_ACCUMULATE, values, NULL, NULL, nelem, dtype,
                op, NULL);
}

dart_ret_t dart_accumulate_blocking_local(dart_gptr_t gptr, const void *values,
                                          size_t nelem, dart_datatype_t dtype,
                                          dart_operation_t op)
{
  dart_ret_t ret;
  if (__builtin_expect(cached_accumulate("dart_accumulate_blocking_local",
                                         gptr, values, nelem, dtype, op,
                                         &ret),
                       1))
    return ret;
  return accumulate_blocking_local_rest(gptr, values, nelem, dtype, op);
}

static __attribute__((noinline)) dart_ret_t
fetch_and_op_rest(dart_gptr_t gptr, const void *value, void *result,
                  dart_datatype_t dtype, dart_operation_t op)
{
  return atomic("dart_fetch_and_op", gptr, DART__ATOMIC_FETCH_OP, value, NULL,
                result, 1, dtype, op, NULL);
}

dart_ret_t dart_fetch_and_op(dart_gptr_t gptr, const void *value,
                             void *result, dart_datatype_t dtype,
                             dart_operation_t op)
{
  dart_ret_t ret;
  if (__builtin_expect(cached_atomic(gptr, DART__ATOMIC_FETCH_OP, value,
                                     NULL, result, dtype, op, &ret),
                       1))
    return ret;
  return fetch_and_op_rest(gptr, value, result, dtype, op);
}

static __attribute__((noinline)) dart_ret_t
compare_and_swap_rest(dart_gptr_t gptr, const void *value,
                      const void *compare, void *result,
                      dart_datatype_t dtype)
{
  return atomic("dart_compare_and_swap", gptr, DART__ATOMIC_CAS, value,
                compare, result, 1, dtype, DART_OP_REPLACE, NULL);
}

dart_ret_t dart_compare_and_swap(dart_gptr_t gptr, const void *value,
                                 const void *compare, void *result,
                                 dart_datatype_t dtype)
{
  dart_ret_t ret;
  if (__builtin_expect(cached_atomic(gptr, DART__ATOMIC_CAS, value, compare,
                                     result, dtype, DART_OP_REPLACE, &ret),
                       1))
    return ret;
  return compare_and_swap_rest(gptr, value, compare, result, dtype);
}

/* ---- for other modules, and the fetching atomics with a handle ---- */

dart_ret_t dart__onesided__fetch_op_word(const char *func,
                                         const dart__target_t *target,
                                         const uint64_t *value,
                                         uint64_t *result,
                                         dart_operation_t op)
{
  const dart__atomic_t a = {.func = func,
                            .target = target,
                            .kind = DART__ATOMIC_FETCH_OP,
                            .type = DART_TYPE_ULONGLONG,
                            .size = sizeof *result,
                            .op = op,
                            .values = value,
                            .result = result,
                            .nelem = 1};
  return dispatch(&a);
}

dart_ret_t dart__onesided__atomic_target(const char *func, dart_gptr_t gptr,
                                         dart_datatype_t type,
                                         dart__target_t *target)
{
  uint64_t unused;
  const dart__dtype_t *t;
  return prepare(func, gptr, DART__ATOMIC_FETCH_OP, NULL, NULL, &unused, 1,
                 type, DART_OP_NO_OP, target, &t);
}

/* Started where the atomics path can leave one atomic in flight (UCX's
 * native operations), else complete at once (DART_HANDLE_NULL); with the
 * atomicity of the blocking forms either way. */
dart_ret_t dart_fetch_and_op_handle(dart_gptr_t gptr, const void *value,
                                    void *result, dart_datatype_t dtype,
                                    dart_operation_t op,
                                    dart_handle_t *handle)
{
  DART__CHECK_INIT();
  if (!dart__onesided__handle_out(__func__, handle)) return DART_ERR_INVAL;
  return atomic(__func__, gptr, DART__ATOMIC_FETCH_OP, value, NULL, result, 1,
                dtype, op, handle);
}

dart_ret_t dart_compare_and_swap_handle(dart_gptr_t gptr, const void *value,
                                        const void *compare, void *result,
                                        dart_datatype_t dtype,
                                        dart_handle_t *handle)
{
  DART__CHECK_INIT();
  if (!dart__onesided__handle_out(__func__, handle)) return DART_ERR_INVAL;
  return atomic(__func__, gptr, DART__ATOMIC_CAS, value, compare, result, 1,
                dtype, DART_OP_REPLACE, handle);
}
