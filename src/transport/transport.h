/*
 * The transport interface: one operation table per path (self, shm, mpi,
 * ucx, cma, ipc, stage), after UCX's uct_iface_ops_t, which the runtime
 * reaches the paths through and nothing else; what the runtime asks of a
 * path by its value; and the state every path shares (operation counts,
 * the fence owed to puts by CPU stores). The paths' own files keep their
 * state private (doc/design.md, "The transport interface").
 */
#ifndef DART__TRANSPORT__TRANSPORT_H_
#define DART__TRANSPORT__TRANSPORT_H_

#include <dart/dart_communication.h>
#include <dart/dart_ext.h>
#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>

#include "base/fence.h"
#include "base/runtime.h"
#include "progress/progress.h"
#include "types/datatype.h"

/* What the paths act on, defined above them (globmem/, team/): by
 * pointer only here. */
typedef struct dart__team dart__team_t;
typedef struct dart__segment dart__segment_t;
typedef struct dart__target dart__target_t;
typedef struct dart__route_cache dart__route_cache_t;
typedef struct dart__am_team dart__am_team_t;
typedef struct dart__am_frag dart__am_frag_t;

/* How a unit's part is reached (dart_path_t values). */
enum {
  DART__PATH_SELF = 0,
  DART__PATH_SHM = 1,
  DART__PATH_MPI = 2,
  DART__PATH_UCX = 3,
  DART__PATH_CMA = 4,
  DART__PATH_IPC = 5,  /* device memory, own or a node peer's */
  DART__PATH_STAGE = 6, /* device memory on another node, host staging */
  DART__PATH_OWNER = 7  /* atomics applied by their owner (am/owner.c) */
};

/* What the runtime asks of a path, by its value (transport.c): code asks
 * these, never the order of the values. */
typedef struct {
  bool load_store; /* this process loads and stores the host memory itself,
                    * and its atomics are CPU atomics (self, shm) */
  bool mapped;     /* in this process's address space, host or device (self,
                    * shm, ipc) */
  bool device;     /* device memory (ipc, stage) */
  bool target_progress; /* its operations advance only while their target
                         * unit drives progress (ucx: RMA it emulates with
                         * messages; stage) */
  bool costly_progress; /* their target serves them in the costly progress
                         * sources, which a wait polls now and then (mpi:
                         * osc/pt2pt's messages) */
  bool atomic_follows_puts; /* a fetch-and-op that changes a word through
                             * its atomic slot lands after the puts this
                             * unit started before on the path to the
                             * word's unit (self, shm: CPU stores released
                             * before a CPU atomic; mpi: the flush of its
                             * read; ipc: the unit's stream) */
} dart__path_props_t;
extern const dart__path_props_t dart__path_props[];

static inline bool dart__path_load_store(int path)
{
  return dart__path_props[path].load_store;
}

/* How a unit's part of memory is reached: what its owner told (size,
 * addr, disp, key), the path chosen for it (dart__transport__route) and
 * what that path filled in (base). */
typedef struct dart__route {
  char *base;    /* load/store address (SELF, SHM) */
  uint64_t addr; /* the part's address in its owner's process (UCX, CMA) */
  MPI_Aint disp; /* displacement in the team's dynamic window (MPI) */
  size_t size;   /* bytes of the unit's part */
  void *key;     /* the remote transport's key of the route's own (grown
                  * pool chunks), or NULL for the segment's */
  int path;
  /* The path of atomics, the same for every unit of a host segment: CPU
   * atomics (DART__PATH_SHM) when every unit loads and stores the memory,
   * else the remote path for all, the owner included (CPU and MPI atomics
   * are not atomic with respect to each other). Device segments: the
   * device's (DART__PATH_IPC) on the node, refused (DART__PATH_STAGE)
   * beyond. */
  int atomics;
} dart__route_t;

/* What a route is asked for: team unit's part of a segment's memory or of
 * a grown pool chunk. */
typedef struct {
  const dart__team_t *team;
  const dart__segment_t *seg; /* NULL: a grown pool chunk */
  int unit;                   /* team unit */
  bool device;                /* device memory */
  bool windowed; /* in seg's shared window, which its node peers map */
  bool keyed;    /* the remote transport has a key of it */
  size_t header; /* bytes before the memory the route reaches */
} dart__reach_t;

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
  /* Not NULL (one element, fetching or CAS, with a handle): the path may
   * leave the operation started, *handle then gets a handle that completes
   * it; else it stays DART_HANDLE_NULL, complete on return. */
  dart_handle_t *handle;
} dart__atomic_t;

/* *out = old op operand for one element of a->type (out of line: the
 * compare-and-swap loops of every path share it). */
void dart__transport__atomic_apply(const dart__atomic_t *a, const void *old,
                                   const void *operand, void *out);

/*
 * A path: how one route class moves data, reached only through this table
 * (after UCX's uct_iface_ops_t). Each path keeps its state private, in its
 * own files. Slots a path has no use for are NULL; the runtime asks the
 * table, never which path it is.
 */
typedef struct {
  /* what DART_INFO says it moves data with */
  const char *info;

  /* ---- life ---- */
  /* Collective over all units, at dart_init in the order the paths need
   * (runtime/init.c): mpi's progress source; a remote transport where
   * units reach others through the remote path (it falls back to MPI, with
   * a warning, when it cannot start on every unit); cma, which finds out
   * whether node peers may use it; stage, after the device. fini: at
   * dart_exit, after every segment is gone. */
  dart_ret_t (*init)(void);
  void (*fini)(void);
  /* whether it works here, as its init found (NULL: wherever routes take
   * it); cma: node peers reach each other's private memory */
  bool (*usable)(void);
  /* its own report for DART_INFO */
  void (*print_info)(FILE *out);
  /* whether it moves CUDA device memory itself */
  bool (*device_memory)(void);

  /* ---- routes ---- */
  /* Whether it reaches q's part (*reached); if so it fills what it needs
   * of r beyond what the owner told (r->base: the part's address in this
   * process where the caller knows it, its own part, else NULL). Asked in
   * dart__transport__route's order, where the first that reaches takes
   * the route. */
  dart_ret_t (*reach)(const char *func, const dart__reach_t *q,
                      dart__route_t *r, bool *reached);

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
  /* of everything sent to unit of team: remote, local (the local buffers
   * may be reused, a get's data is here; func: the public function, for
   * errors) */
  dart_ret_t (*flush)(const char *func, dart__team_t *team, int unit);
  dart_ret_t (*flush_local)(const char *func, dart__team_t *team, int unit);
  /* dart_flush's and dart_flush_local's along a route cache entry of the
   * path, with no accumulate queued for CPU atomics */
  dart_ret_t (*cached_flush)(const char *func, dart__route_cache_t *e);
  /* of everything this unit started on the path towards the units of
   * team (NULL: of every team); NULL where every operation is complete on
   * return */
  dart_ret_t (*flush_all)(const char *func, dart__team_t *team);

  /* ---- memory others reach through a team's window ---- */
  /* Collective over team on its first use there: gives the team its
   * window (on every unit, len 0 too). Attaches len bytes at base, and
   * *disp gets their displacement (len 0: nothing attached, *disp 0). */
  dart_ret_t (*attach)(const char *func, dart__team_t *team, void *base,
                       size_t len, MPI_Aint *disp);
  void (*detach)(dart__team_t *team, void *base);
  /* Orders this unit's direct loads and stores of its own memory with the
   * path's remote operations on it, on every team (dart_barrier). */
  dart_ret_t (*sync)(const char *func);

  /* ---- atomics ---- */
  /* complete on return, ordered (seq_cst) with what the caller does next;
   * except accumulates the UCX path starts (dart_communication.h) and what
   * a->handle lets it start */
  dart_ret_t (*atomic)(const dart__atomic_t *a);
  /* Starts the update of the signal word at t (a uint64_t; value set, or
   * added where add) on the segment's atomics path, which is this path,
   * after every operation this unit started before on the path towards
   * t's unit: a unit that sees the update sees what they wrote. It stays
   * in flight, with them, until the path's flush of the unit. NULL:
   * signal.c updates through the atomic slot, complete on return (after
   * the put, where atomic_follows_puts, else after completing it). */
  dart_ret_t (*signal)(const char *func, const dart__target_t *t,
                       uint64_t value, bool add);
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
  /* Advances a barrier of b's communicator as far as it goes without
   * waiting (the first call enters it): *done once every unit has entered,
   * and then the next call enters the next barrier. The caller serves the
   * progress sources between calls. */
  dart_ret_t (*barrier)(const char *func, void *b, bool *done);
  void (*barrier_destroy)(void *b);

  /* ---- active messages (am/am.h) ---- */
  /* Collective over am's team: opens the path's queues towards the team
   * units whose am->path it is, and from them; close at the team's end. */
  dart_ret_t (*am_open)(const char *func, dart__am_team_t *am);
  void (*am_close)(dart__am_team_t *am);
  /* Queues one fragment (f, then f->bytes of payload) to team unit u;
   * *queued false, with nothing done, while u's queue has no room. Never
   * waits. */
  dart_ret_t (*am_send)(const char *func, dart__am_team_t *am, int u,
                        const dart__am_frag_t *f, const void *payload,
                        bool *queued);
  /* Hands the fragments that arrived to dart__am__deliver, each origin's
   * in order; how many. Never waits. */
  unsigned (*am_poll)(dart__am_team_t *am);
  /* *ran: whether u has run at least count messages from this unit (it
   * may ask u, and answer later). Never waits. */
  dart_ret_t (*am_ran)(const char *func, dart__am_team_t *am, int u,
                       uint64_t count, bool *ran);
} dart__path_ops_t;

/* The paths by route (dart_path_t), and operations counted per path
 * (statistics: relaxed, without a locked read-modify-write). Hidden:
 * addressed relative to the code, not through the GOT. */
extern const dart__path_ops_t *const dart__transport__paths[DART_PATH_COUNT]
    __attribute__((visibility("hidden")));

/* The remote transport's path (DART_TRANSPORT, once started). */
static inline const dart__path_ops_t *dart__transport__remote(void)
{
  return dart__transport__paths[dart__rt.remote_path];
}

/* The one place a route is chosen: r->path gets the first path, in order
 * of preference, that is usable here and reaches q's part (segments and
 * grown pool chunks). */
dart_ret_t dart__transport__route(const char *func, const dart__reach_t *q,
                                  dart__route_t *r);

/* Every path's flush_all: what dart_flush_all, dart_barrier (team NULL)
 * and a segment's end complete. Returns the first failure, after trying
 * every path. */
dart_ret_t dart__transport__flush_all(const char *func, dart__team_t *team);
/* Every path's sync (MPI_Win_sync of MPI's separate windows), then,
 * where fence, a full fence: what this unit stored by any means (streaming
 * stores too) is visible before what it stores next. Before and after
 * dart_barrier meets the others, and before a load of what others' RMA
 * wrote. Stops at the first failure. */
dart_ret_t dart__transport__sync(const char *func, bool fence);
extern _Atomic uint64_t dart__transport__path_ops[DART_PATH_COUNT];

static inline void dart__transport__count_ops(int path, uint64_t n)
{
  atomic_store_explicit(
      &dart__transport__path_ops[path],
      atomic_load_explicit(&dart__transport__path_ops[path],
                           memory_order_relaxed) + n,
      memory_order_relaxed);
}

/* Counts an operation of path that completed in place, which serves the
 * peers now and then (progress.h). */
static inline void dart__transport__count_op(int path)
{
  uint64_t n = atomic_load_explicit(&dart__transport__path_ops[path],
                                    memory_order_relaxed) + 1;
  atomic_store_explicit(&dart__transport__path_ops[path], n,
                        memory_order_relaxed);
  dart__progress__served(n);
}

/* A non-blocking put by CPU stores left stores the next flush must fence
 * against the caller's later loads. After gets alone a flush has nothing
 * to order: their loads are done. One flag for all threads, so under
 * DART_THREAD_MULTIPLE every flush fences (path_shm.c). */
extern atomic_bool dart__transport__stores_unfenced;

/* Completes, in mode, a put done by CPU stores. */
static inline __attribute__((always_inline)) void
dart__transport__stores_done(dart__mode_t mode, dart_handle_t *handle)
{
  /* complete, blocking or as a handle that is DART_HANDLE_NULL: before the
   * caller's later loads too (a release fence would let them pass the
   * stores) */
  if (mode != DART__MODE_NB) {
    dart__base__fence();
  } else {
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&dart__transport__stores_unfenced, true,
                          memory_order_relaxed);
  }
  if (mode == DART__MODE_HANDLE) *handle = DART_HANDLE_NULL;
}

/* The flush of puts by CPU stores: their stores before the caller's later
 * loads. */
static inline __attribute__((always_inline)) void
dart__transport__stores_fence(void)
{
  if (atomic_load_explicit(&dart__transport__stores_unfenced,
                           memory_order_relaxed) ||
      dart__rt.thread_level == DART_THREAD_MULTIPLE) {
    atomic_store_explicit(&dart__transport__stores_unfenced, false,
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
extern const dart__path_ops_t dart__path_ipc;
extern const dart__path_ops_t dart__path_stage;
extern const dart__path_ops_t dart__path_owner;

/* The am_* slots of the shm and mpi paths, which the active messages'
 * module keeps (am/shm.c: node peers' rings, am/mpi.c: MPI's wire). */
dart_ret_t dart__am__shm_open(const char *func, dart__am_team_t *am);
void dart__am__shm_close(dart__am_team_t *am);
dart_ret_t dart__am__shm_send(const char *func, dart__am_team_t *am, int u,
                              const dart__am_frag_t *f, const void *payload,
                              bool *queued);
unsigned dart__am__shm_poll(dart__am_team_t *am);
dart_ret_t dart__am__shm_ran(const char *func, dart__am_team_t *am, int u,
                             uint64_t count, bool *ran);
dart_ret_t dart__am__mpi_open(const char *func, dart__am_team_t *am);
void dart__am__mpi_close(dart__am_team_t *am);
/* The am_send, am_poll and am_ran slots of a path whose messages go over
 * a two-sided wire (mpi, ucx), with its credits (am/twosided.c). */
dart_ret_t dart__am__twosided_send(const char *func, dart__am_team_t *am,
                                   int u, const dart__am_frag_t *f,
                                   const void *payload, bool *queued);
unsigned dart__am__twosided_poll(dart__am_team_t *am);
dart_ret_t dart__am__twosided_ran(const char *func, dart__am_team_t *am,
                                  int u, uint64_t count, bool *ran);

/* Whether path is built and works here (its usable slot). */
static inline bool dart__transport__usable(int path)
{
  const dart__path_ops_t *p = dart__transport__paths[path];
  return p != NULL && (p->usable == NULL || p->usable());
}

#endif
