/* One-sided transfers: what the public functions share, and handles. */
#ifndef DART__ONESIDED__ONESIDED_H_
#define DART__ONESIDED__ONESIDED_H_

#include <dart/dart_communication.h>

#include "globmem/globmem.h"
#include "transport/transport.h"

/* Validates a put (is_put) or get of the public functions and resolves
 * its target into *target and *x (for other modules' transfers). */
dart_ret_t dart__onesided__prepare(const char *func, dart_gptr_t gptr,
                                   void *local, size_t nelem,
                                   dart_datatype_t local_type,
                                   dart_datatype_t remote_type, bool is_put,
                                   dart__target_t *target, dart__xfer_t *x);


/* A put (is_put) or get that dart__onesided__prepare validated and
 * resolved into target and x, done in mode (for other modules:
 * signal.c). */
dart_ret_t dart__onesided__transfer(const dart__target_t *target,
                                    const dart__xfer_t *x, bool is_put,
                                    dart__mode_t mode, dart_handle_t *handle);
/* A fetch-and-op (value NULL for DART_OP_NO_OP) on the uint64_t word at
 * target, which dart__onesided__atomic_target resolved, logged as func:
 * on the segment's atomics path, complete on return. */
dart_ret_t dart__onesided__fetch_op_word(const char *func,
                                         const dart__target_t *target,
                                         const uint64_t *value,
                                         uint64_t *result,
                                         dart_operation_t op);
/* Validates gptr as the target of an atomic operation on one element of
 * type and resolves it, without doing anything there. */
dart_ret_t dart__onesided__atomic_target(const char *func, dart_gptr_t gptr,
                                         dart_datatype_t type,
                                         dart__target_t *target);

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
  /* the mpi path's compare-and-swap operands, which MPI reads until the
   * operation completes */
  uint64_t operands[2];
  /* Completes a handle that is no transfer's (an active message's call,
   * am/am.c; NULL for transfers): waits until it is done, or where !wait
   * says whether it is (*done); logs as func where it fails. */
  dart_ret_t (*complete)(const char *func, struct dart_handle_struct *h,
                         bool wait, bool *done);
  /* Where set, dart_handle_free calls it before the handle goes: the
   * operation then completes without it (a collective's, coll/). */
  void (*drop)(struct dart_handle_struct *h);
  struct dart__coll_op *coll; /* a collective's operation */
  /* an active message's call (am/am.c): where its reply goes */
  struct {
    _Atomic int state; /* am.h's DART__AM_CALL_*; 0: none (a reply that
                        * comes is dropped) */
    uint32_t seq;      /* the call's, which its reply repeats */
    void *reply;
    size_t capacity;
    size_t len;
    size_t *reply_len;
  } am;
  struct dart_handle_struct *next_free;
};

/* The handle output of a public function: false, logged as func, where
 * it is NULL; else set to DART_HANDLE_NULL (what a failed call leaves). */
static inline bool dart__onesided__handle_out(const char *func,
                                              dart_handle_t *handle)
{
  if (handle == NULL) {
    DART_LOG_ERROR_IN(func, "handle is NULL");
    return false;
  }
  *handle = DART_HANDLE_NULL;
  return true;
}

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
/* The same when team goes (dart__team__on_release). */
void dart__onesided__team_release(dart__team_t *team);

#endif
