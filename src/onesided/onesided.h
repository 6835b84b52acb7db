/* One-sided transfers: the paths' operation table and handles. */
#ifndef DART__ONESIDED__ONESIDED_H_
#define DART__ONESIDED__ONESIDED_H_

#include <dart/dart_communication.h>
#include <dart/dart_ext.h>
#include <stdio.h>
#include <stdatomic.h>

#include "base/fence.h"
#include "globmem/datatype.h"
#include "globmem/globmem.h"
#include "progress/progress.h"
#include "team/runtime.h"

typedef enum {
  DART__MODE_NB,       /* started; completed by a flush */
  DART__MODE_BLOCKING, /* complete on return */
  DART__MODE_HANDLE    /* completed through the returned handle */
} dart__mode_t;

/* One transfer between local memory and the target of a gptr. */
typedef struct {
  const dart__target_t *target;
  void *local;                 /* source of a put, destination of a get */
  const dart__dtype_t *local_t;
  const dart__dtype_t *remote_t;
  size_t nelem;
  const char *func; /* the public function, for errors */
} dart__xfer_t;

/* Validates a put (is_put) or get of the public functions and resolves
 * its target into *target and *x (for other modules' transfers). */
dart_ret_t dart__onesided__prepare(const char *func, dart_gptr_t gptr,
                                   void *local, size_t nelem,
                                   dart_datatype_t local_type,
                                   dart_datatype_t remote_type, bool is_put,
                                   dart__target_t *target, dart__xfer_t *x);

/* An atomic operation on nelem consecutive elements of a basic type. */
typedef enum {
  DART__ATOMIC_ACCUMULATE, /* values[i] op'd into each element */
  DART__ATOMIC_FETCH_OP,   /* one element; result gets the old value */
  DART__ATOMIC_CAS         /* one element; result gets the old value */
} dart__atomic_kind_t;

typedef struct {
  const char *func; /* the public function, for errors */
  const dart__target_t *target;
  dart__atomic_kind_t kind;
  dart_datatype_t type; /* basic */
  size_t size;          /* bytes per element */
  dart_operation_t op;  /* predefined, valid for type */
  const void *values;   /* operands (CAS: the new value) */
  const void *compare;  /* CAS only */
  void *result;
  size_t nelem;
} dart__atomic_t;

/* *out = old op operand for one element of a->type. */
void dart__onesided__atomic_apply(const dart__atomic_t *a, const void *old,
                                  const void *operand, void *out);

/* a on the element(s) at p, which this process loads and stores: CPU
 * atomics (path_shm.c). */
void dart__onesided__cpu_atomic(const dart__atomic_t *a, char *p);

/*
 * A path: how one route class moves data, reached only through this table
 * (after UCX's uct_iface_ops_t). Each path keeps its state private, in its
 * own files. Slots a path has no use for are NULL; the runtime asks the
 * table, never which path it is.
 */
typedef struct {
  /* what DART_INFO says it moves data with */
  const char *info;

  /* ---- life: a remote transport's ---- */
  /* Collective over all units at dart_init, where units reach others
   * through the remote path; falls back to MPI (with a warning) when the
   * transport cannot start on every unit. fini: at dart_exit, after every
   * segment is gone. */
  dart_ret_t (*init)(void);
  void (*fini)(void);
  /* its own report for DART_INFO */
  void (*print_info)(FILE *out);
  /* whether it moves CUDA device memory itself */
  bool (*device_memory)(void);

  /* ---- transfers ---- */
  dart_ret_t (*put)(const dart__xfer_t *x, dart__mode_t mode,
                    dart_handle_t *handle);
  dart_ret_t (*get)(const dart__xfer_t *x, dart__mode_t mode,
                    dart_handle_t *handle);
  /* The public functions' fast path: bytes (at most INT_MAX) of host
   * memory between local and t, one basic type on both sides. */
  dart_ret_t (*contig)(const char *func, const dart__target_t *t,
                       void *local, size_t bytes, bool is_put,
                       dart__mode_t mode, dart_handle_t *handle);
  /* Their hot paths, along a route cache entry of the path (its own state
   * for the route in e->remote), to offset of the part: blocking, and
   * started (handle NULL) or with a handle. */
  dart_ret_t (*cached_get_blocking)(dart__route_cache_t *e, uint64_t offset,
                                    void *local, size_t bytes);
  dart_ret_t (*cached_put_blocking)(dart__route_cache_t *e, uint64_t offset,
                                    const void *local, size_t bytes);
  dart_ret_t (*cached_start)(dart__route_cache_t *e, uint64_t offset,
                             void *local, size_t bytes, bool is_put,
                             dart_handle_t *handle);

  /* ---- completion ---- */
  /* of everything sent to unit of team: remote, local (func: the public
   * function, for errors) */
  dart_ret_t (*flush)(const char *func, dart__team_t *team, int unit);
  dart_ret_t (*flush_local)(const char *func, dart__team_t *team, int unit);
  /* dart_flush's and dart_flush_local's along a route cache entry of the
   * path, with no accumulate queued for CPU atomics */
  dart_ret_t (*cached_flush)(const char *func, dart__route_cache_t *e);
  /* of everything this unit started on the path towards the units of
   * team (NULL: of every team); NULL where every operation is complete on
   * return */
  dart_ret_t (*flush_all)(const char *func, dart__team_t *team);

  /* ---- atomics ---- */
  /* complete on return, ordered (seq_cst) with what the caller does next;
   * except accumulates the UCX path starts (dart_communication.h) */
  dart_ret_t (*atomic)(const dart__atomic_t *a);
  /* dart_accumulate's hot path along a route cache entry whose atomics
   * take the path: one element of size 4 or 8 at offset of the part,
   * aligned, whose operation is one instruction, with no accumulate queued
   * for CPU atomics; only started. */
  dart_ret_t (*cached_accumulate)(const char *func, dart__route_cache_t *e,
                                  uint64_t offset, const void *value,
                                  size_t size, dart_operation_t op);

  /* ---- memory: a remote transport's ---- */
  /* This unit's part of seg, len bytes the transport allocates itself
   * (seg->mybase), which its shared-memory transports reach without the
   * owner's progress. */
  dart_ret_t (*seg_alloc)(const char *func, dart__segment_t *seg,
                          size_t len);
  /* Collective over seg's team: registers this unit's part and exchanges
   * what the units need to reach each other's. Both keep their state in
   * seg->transport, which seg_release frees (also after a failure). */
  dart_ret_t (*seg_register)(const char *func, dart__segment_t *seg);
  void (*seg_release)(dart__segment_t *seg);
  /* Memory of this unit's own outside the segments (grown pool chunks):
   * its registration *mem and the packed key others unpack. */
  dart_ret_t (*mem_register)(const char *func, void *base, size_t len,
                             void **mem, void **packed, size_t *packed_len);
  void (*mem_deregister)(void *mem, void *packed);
  /* A key of global unit's unpacked into *slot, unless another thread was
   * first: *key gets the slot's. */
  dart_ret_t (*key_unpack)(const char *func, int unit, const void *packed,
                           _Atomic(void *) *slot, void **key);
  void (*key_destroy)(void *key);

  /* ---- barrier: a remote transport's own ---- */
  /* Among comm's units, for the units of a team that meet across nodes
   * (collective over comm): *out NULL where it has none here, on every
   * unit (then MPI's serves). */
  dart_ret_t (*barrier_create)(const char *func, MPI_Comm comm, void **out);
  /* Returns once every unit of b's communicator has entered; serves
   * peers' operations while it waits. */
  dart_ret_t (*barrier)(const char *func, void *b);
  void (*barrier_destroy)(void *b);
} dart__path_ops_t;

/* The paths by route (dart_path_t), and operations counted per path
 * (statistics: relaxed, without a locked read-modify-write). Hidden:
 * addressed relative to the code, not through the GOT. */
extern const dart__path_ops_t *const dart__onesided__paths[DART_PATH_COUNT]
    __attribute__((visibility("hidden")));

/* The remote transport's path (DART_TRANSPORT, once started). */
static inline const dart__path_ops_t *dart__onesided__remote(void)
{
  return dart__onesided__paths[dart__rt.remote_path];
}

/* Every path's flush_all: what dart_flush_all, dart_barrier (team NULL)
 * and a segment's end complete. Returns the first failure, after trying
 * every path. */
dart_ret_t dart__onesided__flush_all(const char *func, dart__team_t *team);
extern _Atomic uint64_t dart__onesided__path_ops[DART_PATH_COUNT];

static inline void dart__onesided__count_ops(int path, uint64_t n)
{
  atomic_store_explicit(
      &dart__onesided__path_ops[path],
      atomic_load_explicit(&dart__onesided__path_ops[path],
                           memory_order_relaxed) + n,
      memory_order_relaxed);
}

/* Counts an operation of path that completed in place, which serves the
 * peers now and then (progress.h). */
static inline void dart__onesided__count_op(int path)
{
  uint64_t n = atomic_load_explicit(&dart__onesided__path_ops[path],
                                    memory_order_relaxed) + 1;
  atomic_store_explicit(&dart__onesided__path_ops[path], n,
                        memory_order_relaxed);
  dart__progress__served(n);
}

/* A non-blocking put by CPU stores left stores the next flush must fence
 * against the caller's later loads. After gets alone a flush has nothing
 * to order: their loads are done. One flag for all threads, so under
 * DART_THREAD_MULTIPLE every flush fences (path_shm.c). */
extern atomic_bool dart__onesided__stores_unfenced;

/* Completes, in mode, a put done by CPU stores. */
static inline __attribute__((always_inline)) void
dart__onesided__stores_done(dart__mode_t mode, dart_handle_t *handle)
{
  /* complete, blocking or as a handle that is DART_HANDLE_NULL: before the
   * caller's later loads too (a release fence would let them pass the
   * stores) */
  if (mode != DART__MODE_NB) {
    dart__base__fence();
  } else {
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&dart__onesided__stores_unfenced, true,
                          memory_order_relaxed);
  }
  if (mode == DART__MODE_HANDLE) *handle = DART_HANDLE_NULL;
}

/* The flush of puts by CPU stores: their stores before the caller's later
 * loads. */
static inline __attribute__((always_inline)) void
dart__onesided__stores_fence(void)
{
  if (atomic_load_explicit(&dart__onesided__stores_unfenced,
                           memory_order_relaxed) ||
      dart__rt.thread_level == DART_THREAD_MULTIPLE) {
    atomic_store_explicit(&dart__onesided__stores_unfenced, false,
                          memory_order_relaxed);
    dart__base__fence();
  }
}

extern const dart__path_ops_t dart__path_self;
extern const dart__path_ops_t dart__path_shm;
extern const dart__path_ops_t dart__path_mpi;
extern const dart__path_ops_t dart__path_cma;
#ifdef DART_HAVE_UCX
extern const dart__path_ops_t dart__path_ucx;
#endif

/* The MPI path's progress, from dart_init to dart_exit. */
dart_ret_t dart__mpi__init(void);
void dart__mpi__fini(void);

/*
 * ---- the CMA path (path_cma.c) ----
 * Node peers' memory outside shared windows, by cross-memory attach.
 * dart__cma__init (collective at dart_init) finds out whether this process
 * may use it with its node peers, and logs the fallback when not.
 */
dart_ret_t dart__cma__init(void);
void dart__cma__fini(void);
/* Whether node peers reach each other's private memory through CMA. */
bool dart__cma__usable(void);

/*
 * ---- handles ----
 * A handle names the path, team and unit of its operation, which completes
 * with that path's flush of the unit. (Request-based RMA, MPI_Rput/MPI_Rget,
 * crashes in Open MPI 4.1's osc/ucx on dynamic windows; a flush completes
 * the same operation on every path.)
 */
struct dart_handle_struct {
  uint32_t state; /* HANDLE_LIVE while in use */
  bool is_put;
  int path;
  /* by id: a team destroyed before the wait has completed the operation
   * (and team ids are never reused) */
  dart_team_t team;
  int unit;
  void *event; /* the ipc path's: completes this operation alone */
  struct dart_handle_struct *next_free;
};

/* A handle for an operation on unit of team along path; NULL when out of
 * memory. */
dart_handle_t dart__onesided__handle_new(dart__team_t *team, int unit,
                                         int path, bool is_put);
void dart__onesided__handle_release(dart_handle_t handle);
/* False for a handle that was freed (a stale copy). */
bool dart__onesided__handle_live(dart_handle_t handle);

/* Frees what the handles took (at dart_exit). */
void dart__onesided__fini(void);

/* Retires the locks of team (DART_TEAM_NULL: all, at dart_exit) that the
 * program did not destroy: their words go with the team's allocations, and
 * dart_team_lock_destroy of them later only lets the structure go, without
 * a word (DASH destroys a Mutex that outlived its team or DART). */
void dart__onesided__locks_retire(dart_team_t team);

#endif
