/* One-sided transfers: the paths' operation table and handles. */
#ifndef DART__ONESIDED__ONESIDED_H_
#define DART__ONESIDED__ONESIDED_H_

#include <dart/dart_communication.h>
#include <dart/dart_ext.h>
#include <sched.h>
#include <stdatomic.h>

#include "globmem/datatype.h"
#include "globmem/globmem.h"

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
} dart__xfer_t;

/* Waits politely: a few spins, then give the core away (units are often
 * more than cores). */
static inline void dart__onesided__backoff(unsigned *spins)
{
  if (++*spins < 32) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  } else {
    sched_yield();
  }
}

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

/* A path: how one route class moves data (one file per path). */
typedef struct {
  const char *name;
  dart_ret_t (*put)(const dart__xfer_t *x, dart__mode_t mode,
                    dart_handle_t *handle);
  dart_ret_t (*get)(const dart__xfer_t *x, dart__mode_t mode,
                    dart_handle_t *handle);
  /* completion of everything sent to unit of team: remote, local */
  dart_ret_t (*flush)(dart__team_t *team, int unit);
  dart_ret_t (*flush_local)(dart__team_t *team, int unit);
  /* complete on return, ordered (seq_cst) with what the caller does next */
  dart_ret_t (*atomic)(const dart__atomic_t *a);
} dart__path_ops_t;

/* The paths by route (dart_path_t), and operations counted per path
 * (statistics: relaxed, without a locked read-modify-write). */
extern const dart__path_ops_t *const dart__onesided__paths[DART_PATH_COUNT];
extern _Atomic uint64_t dart__onesided__path_ops[DART_PATH_COUNT];

static inline void dart__onesided__count_op(int path)
{
  atomic_store_explicit(
      &dart__onesided__path_ops[path],
      atomic_load_explicit(&dart__onesided__path_ops[path],
                           memory_order_relaxed) + 1,
      memory_order_relaxed);
}

extern const dart__path_ops_t dart__path_self;
extern const dart__path_ops_t dart__path_shm;
extern const dart__path_ops_t dart__path_mpi;

/*
 * ---- handles of the MPI path ----
 * A handle names the window and target of its operation, which completes
 * with a flush to that target. (Request-based RMA, MPI_Rput/MPI_Rget,
 * crashes in Open MPI 4.1's osc/ucx on dynamic windows; a flush completes
 * the same operation everywhere.)
 */
struct dart_handle_struct {
  uint32_t state; /* HANDLE_LIVE while in use */
  bool is_put;
  MPI_Win win;
  int unit;
  struct dart_handle_struct *next_free;
};

/* A handle for an operation on unit of win; NULL when out of memory. */
dart_handle_t dart__onesided__handle_new(MPI_Win win, int unit, bool is_put);
void dart__onesided__handle_release(dart_handle_t handle);
/* False for a handle that was freed (a stale copy). */
bool dart__onesided__handle_live(dart_handle_t handle);

/* The progress thread, when DART_PROGRESS_THREAD asks for one: started at
 * the end of dart_init, stopped first thing in dart_exit. */
dart_ret_t dart__onesided__progress_start(void);
void dart__onesided__progress_stop(void);

/* Frees what the handles took (at dart_exit). */
void dart__onesided__fini(void);

#endif
