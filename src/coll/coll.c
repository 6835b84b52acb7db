/*
 * The collectives of dart_communication.h and their handle forms
 * (dart_coll.h): each validates its arguments into an operation (op.h),
 * which sched.c runs to its end or queues behind a handle.
 */
#include <dart/dart_coll.h>
#include <dart/dart_communication.h>
#include <limits.h>
#include <string.h>

#include "base/runtime.h"
#include "coll/op.h"
#include "onesided/onesided.h"
#include "transport/acc_queue.h"
#include "transport/transport.h"

static bool null_buffer(const char *func, const void *buf, size_t nelem,
                        const char *name)
{
  if (buf != NULL || nelem == 0) return false;
  DART_LOG_ERROR_IN(func, "%s is NULL for %zu elements", name, nelem);
  return true;
}

/* No root (the operation's -1). */
#define NO_ROOT DART_TEAM_UNIT_ID(-1)

/* The operation's common part: the team, nelem elements of dtype, and
 * the root where the kind has one. */
static dart_ret_t prepare(const char *func, coll_kind_t kind,
                          dart_team_t teamid, size_t nelem,
                          dart_datatype_t dtype, dart_team_unit_t root_unit,
                          dart__coll_op_t *op)
{
  DART__CHECK_INIT_IN(func);
  const bool rooted = kind == COLL_BCAST || kind == COLL_REDUCE ||
                      kind == COLL_GATHER || kind == COLL_SCATTER;
  const int root = rooted ? root_unit.id : -1;
  /* field by field: clearing the whole operation costs as much as a
   * small collective's own work */
  op->kind = kind;
  op->func = func;
  op->root = root;
  op->send = NULL;
  op->recv = NULL;
  op->nelem = op->bytes = op->nsend = 0;
  op->t = NULL;
  op->dtype = DART_TYPE_UNDEFINED;
  op->redop = DART_OP_UNDEFINED;
  op->sendcounts = op->senddispls = op->recvcounts = op->recvdispls = NULL;
  op->in_place = false;
  op->team = dart__team__lookup(func, teamid);
  if (op->team == NULL) return DART_ERR_INVAL;
  if (rooted && (root < 0 || root >= op->team->size)) {
    DART_LOG_ERROR_IN(func, "root %d is not in team %d of %d units", root,
                      teamid, op->team->size);
    return DART_ERR_INVAL;
  }
  if (kind == COLL_BARRIER) return DART_OK;
  const dart__dtype_t *other;
  dart_ret_t ret =
      dart__types__dtype_pair(func, dtype, dtype, nelem, &op->t, &other);
  if (ret != DART_OK) return ret;
  op->dtype = dtype;
  op->nelem = nelem;
  op->bytes = nelem * op->t->elem_size;
  return DART_OK;
}

/* ---- barrier ---- */

static dart_ret_t barrier_prepare(const char *func, dart_team_t teamid,
                                  dart__coll_op_t *op)
{
  dart_ret_t ret = prepare(func, COLL_BARRIER, teamid, 0, DART_TYPE_UNDEFINED,
                           NO_ROOT, op);
  if (ret != DART_OK) return ret;
  /* what this unit wrote, by any path, is visible once all have arrived */
  dart__transport__acc_complete();
  ret = dart__transport__flush_all(func, NULL);
  if (ret == DART_OK) ret = dart__transport__sync(func, true);
  return ret;
}

dart_ret_t dart_barrier(dart_team_t teamid)
{
  dart__coll_op_t op;
  dart_ret_t ret = barrier_prepare(__func__, teamid, &op);
  if (ret != DART_OK) return ret;
  return dart__coll__run(&op);
}

dart_ret_t dart_barrier_handle(dart_team_t teamid, dart_handle_t *handle)
{
  if (!dart__onesided__handle_out(__func__, handle)) return DART_ERR_INVAL;
  dart__coll_op_t op;
  dart_ret_t ret = barrier_prepare(__func__, teamid, &op);
  if (ret != DART_OK) return ret;
  return dart__coll__start_handle(&op, handle);
}

/* ---- bcast ---- */

static dart_ret_t bcast_prepare(const char *func, void *buf, size_t nelem,
                                dart_datatype_t dtype, dart_team_unit_t root,
                                dart_team_t teamid, dart__coll_op_t *op)
{
  dart_ret_t ret = prepare(func, COLL_BCAST, teamid, nelem, dtype, root, op);
  if (ret != DART_OK) return ret;
  if (null_buffer(func, buf, nelem, "buf")) return DART_ERR_INVAL;
  op->recv = buf;
  op->send = buf;
  return DART_OK;
}

dart_ret_t dart_bcast(void *buf, size_t nelem, dart_datatype_t dtype,
                      dart_team_unit_t root, dart_team_t teamid)
{
  dart__coll_op_t op;
  dart_ret_t ret = bcast_prepare(__func__, buf, nelem, dtype, root, teamid,
                                 &op);
  if (ret != DART_OK) return ret;
  return dart__coll__run(&op);
}

dart_ret_t dart_bcast_handle(void *buf, size_t nelem, dart_datatype_t dtype,
                             dart_team_unit_t root, dart_team_t teamid,
                             dart_handle_t *handle)
{
  if (!dart__onesided__handle_out(__func__, handle)) return DART_ERR_INVAL;
  dart__coll_op_t op;
  dart_ret_t ret = bcast_prepare(__func__, buf, nelem, dtype, root, teamid,
                                 &op);
  if (ret != DART_OK) return ret;
  return dart__coll__start_handle(&op, handle);
}

/* ---- scatter, gather, allgather, alltoall: nelem per unit ---- */

static dart_ret_t spread_prepare(const char *func, coll_kind_t kind,
                                 const void *sendbuf, void *recvbuf,
                                 size_t nelem, dart_datatype_t dtype,
                                 dart_team_unit_t root_unit,
                                 dart_team_t teamid, dart__coll_op_t *op)
{
  dart_ret_t ret = prepare(func, kind, teamid, nelem, dtype, root_unit, op);
  if (ret != DART_OK) return ret;
  const int size = op->team->size, me = op->team->myid, root = op->root;
  /* the buffers of every unit's part: their bytes must fit too */
  const bool send_all = kind == COLL_SCATTER || kind == COLL_ALLTOALL;
  if (nelem > op->t->max_nelem / (size_t)size) {
    DART_LOG_ERROR_IN(func, "%zu elements for each of %d units overflow",
                      nelem, size);
    return DART_ERR_INVAL;
  }
  const bool send_used = kind != COLL_SCATTER || me == root;
  const bool recv_used = kind != COLL_GATHER || me == root;
  const size_t send_n = send_all ? nelem * size : nelem;
  const size_t recv_n = kind == COLL_SCATTER ? nelem : nelem * size;
  if ((send_used && null_buffer(func, sendbuf, send_n, "sendbuf")) ||
      (recv_used && null_buffer(func, recvbuf, recv_n, "recvbuf")))
    return DART_ERR_INVAL;
  op->send = send_used ? sendbuf : NULL;
  op->recv = recv_used ? recvbuf : NULL;
  return DART_OK;
}

#define SPREAD(name, kind, root)                                            \
  dart_ret_t name(const void *sendbuf, void *recvbuf, size_t nelem,         \
                  dart_datatype_t dtype, SPREAD_ROOT_PARAM(root)            \
                  dart_team_t teamid)                                        \
  {                                                                         \
    dart__coll_op_t op;                                                    \
    dart_ret_t ret = spread_prepare(__func__, kind, sendbuf, recvbuf,       \
                                    nelem, dtype, SPREAD_ROOT(root), teamid, \
                                    &op);                                    \
    if (ret != DART_OK) return ret;                                         \
    return dart__coll__run(&op);                                            \
  }                                                                         \
  dart_ret_t name##_handle(const void *sendbuf, void *recvbuf, size_t nelem, \
                           dart_datatype_t dtype, SPREAD_ROOT_PARAM(root)   \
                           dart_team_t teamid, dart_handle_t *handle)        \
  {                                                                         \
    if (!dart__onesided__handle_out(__func__, handle))                      \
      return DART_ERR_INVAL;                                                \
    dart__coll_op_t op;                                                    \
    dart_ret_t ret = spread_prepare(__func__, kind, sendbuf, recvbuf,       \
                                    nelem, dtype, SPREAD_ROOT(root), teamid, \
                                    &op);                                    \
    if (ret != DART_OK) return ret;                                         \
    return dart__coll__start_handle(&op, handle);                           \
  }
#define SPREAD_ROOT_PARAM_1 dart_team_unit_t root,
#define SPREAD_ROOT_PARAM_0
#define SPREAD_ROOT_PARAM(r) SPREAD_ROOT_PARAM_##r
#define SPREAD_ROOT_1 root
#define SPREAD_ROOT_0 NO_ROOT
#define SPREAD_ROOT(r) SPREAD_ROOT_##r

SPREAD(dart_scatter, COLL_SCATTER, 1)
SPREAD(dart_gather, COLL_GATHER, 1)
SPREAD(dart_allgather, COLL_ALLGATHER, 0)
SPREAD(dart_alltoall, COLL_ALLTOALL, 0)

/* ---- the v collectives ---- */

/* counts[u] elements at displs[u] for every unit u: none beyond what
 * size_t holds in bytes (name: for the log). Returns the total. */
static dart_ret_t parts_valid(const char *func, const dart__coll_op_t *op,
                              const size_t *counts, const size_t *displs,
                              const char *name, size_t *total)
{
  if (counts == NULL || displs == NULL) {
    DART_LOG_ERROR_IN(func, "%s counts %p or displacements %p are NULL",
                      name, (const void *)counts, (const void *)displs);
    return DART_ERR_INVAL;
  }
  size_t sum = 0;
  for (int u = 0; u < op->team->size; u++) {
    if (counts[u] > op->t->max_nelem ||
        displs[u] > op->t->max_nelem - counts[u]) {
      DART_LOG_ERROR_IN(func, "%s part of unit %d: %zu elements at %zu "
                        "overflow", name, u, counts[u], displs[u]);
      return DART_ERR_INVAL;
    }
    sum = sum > displs[u] + counts[u] ? sum : displs[u] + counts[u];
  }
  *total = sum;
  return DART_OK;
}

static dart_ret_t allgatherv_prepare(const char *func, const void *sendbuf,
                                     size_t nsendelem, dart_datatype_t dtype,
                                     void *recvbuf, const size_t *nrecvelem,
                                     const size_t *recvdispls,
                                     dart_team_t teamid, dart__coll_op_t *op)
{
  dart_ret_t ret =
      prepare(func, COLL_ALLGATHERV, teamid, nsendelem, dtype, NO_ROOT, op);
  if (ret != DART_OK) return ret;
  if (!op->t->contiguous) {
    DART_LOG_ERROR_IN(func, "datatype %ld is not contiguous", (long)dtype);
    return DART_ERR_INVAL;
  }
  size_t total;
  if ((ret = parts_valid(func, op, nrecvelem, recvdispls, "receive",
                         &total)) != DART_OK)
    return ret;
  const int me = op->team->myid;
  if (nrecvelem[me] != nsendelem) {
    DART_LOG_ERROR_IN(func, "nsendelem %zu differs from nrecvelem[%d] = %zu",
                      nsendelem, me, nrecvelem[me]);
    return DART_ERR_INVAL;
  }
  if (null_buffer(func, sendbuf, nsendelem, "sendbuf") ||
      null_buffer(func, recvbuf, total, "recvbuf"))
    return DART_ERR_INVAL;
  op->send = sendbuf;
  op->recv = recvbuf;
  op->nsend = nsendelem;
  op->recvcounts = nrecvelem;
  op->recvdispls = recvdispls;
  op->in_place = sendbuf == recvbuf;
  return DART_OK;
}

dart_ret_t dart_allgatherv(const void *sendbuf, size_t nsendelem,
                           dart_datatype_t dtype, void *recvbuf,
                           const size_t *nrecvelem, const size_t *recvdispls,
                           dart_team_t teamid)
{
  dart__coll_op_t op;
  dart_ret_t ret = allgatherv_prepare(__func__, sendbuf, nsendelem, dtype,
                                      recvbuf, nrecvelem, recvdispls, teamid,
                                      &op);
  if (ret != DART_OK) return ret;
  return dart__coll__run(&op);
}

dart_ret_t dart_allgatherv_handle(const void *sendbuf, size_t nsendelem,
                                  dart_datatype_t dtype, void *recvbuf,
                                  const size_t *nrecvelem,
                                  const size_t *recvdispls,
                                  dart_team_t teamid, dart_handle_t *handle)
{
  if (!dart__onesided__handle_out(__func__, handle)) return DART_ERR_INVAL;
  dart__coll_op_t op;
  dart_ret_t ret = allgatherv_prepare(__func__, sendbuf, nsendelem, dtype,
                                      recvbuf, nrecvelem, recvdispls, teamid,
                                      &op);
  if (ret != DART_OK) return ret;
  return dart__coll__start_handle(&op, handle);
}

static dart_ret_t alltoallv_prepare(const char *func, const void *sendbuf,
                                    const size_t *nsendelem,
                                    const size_t *senddispls,
                                    dart_datatype_t dtype, void *recvbuf,
                                    const size_t *nrecvelem,
                                    const size_t *recvdispls,
                                    dart_team_t teamid, dart__coll_op_t *op)
{
  dart_ret_t ret = prepare(func, COLL_ALLTOALLV, teamid, 0, dtype, NO_ROOT, op);
  if (ret != DART_OK) return ret;
  if (!op->t->contiguous) {
    DART_LOG_ERROR_IN(func, "datatype %ld is not contiguous", (long)dtype);
    return DART_ERR_INVAL;
  }
  size_t send_total, recv_total;
  if ((ret = parts_valid(func, op, nsendelem, senddispls, "send",
                         &send_total)) != DART_OK ||
      (ret = parts_valid(func, op, nrecvelem, recvdispls, "receive",
                         &recv_total)) != DART_OK)
    return ret;
  if (null_buffer(func, sendbuf, send_total, "sendbuf") ||
      null_buffer(func, recvbuf, recv_total, "recvbuf"))
    return DART_ERR_INVAL;
  if (sendbuf != NULL && sendbuf == recvbuf && send_total > 0) {
    DART_LOG_ERROR_IN(func, "sendbuf and recvbuf are the same buffer %p",
                      sendbuf);
    return DART_ERR_INVAL;
  }
  op->send = sendbuf;
  op->recv = recvbuf;
  op->sendcounts = nsendelem;
  op->senddispls = senddispls;
  op->recvcounts = nrecvelem;
  op->recvdispls = recvdispls;
  return DART_OK;
}

dart_ret_t dart_alltoallv(const void *sendbuf, const size_t *nsendelem,
                          const size_t *senddispls, dart_datatype_t dtype,
                          void *recvbuf, const size_t *nrecvelem,
                          const size_t *recvdispls, dart_team_t teamid)
{
  dart__coll_op_t op;
  dart_ret_t ret = alltoallv_prepare(__func__, sendbuf, nsendelem, senddispls,
                                     dtype, recvbuf, nrecvelem, recvdispls,
                                     teamid, &op);
  if (ret != DART_OK) return ret;
  return dart__coll__run(&op);
}

dart_ret_t dart_alltoallv_handle(const void *sendbuf, const size_t *nsendelem,
                                 const size_t *senddispls,
                                 dart_datatype_t dtype, void *recvbuf,
                                 const size_t *nrecvelem,
                                 const size_t *recvdispls, dart_team_t teamid,
                                 dart_handle_t *handle)
{
  if (!dart__onesided__handle_out(__func__, handle)) return DART_ERR_INVAL;
  dart__coll_op_t op;
  dart_ret_t ret = alltoallv_prepare(__func__, sendbuf, nsendelem, senddispls,
                                     dtype, recvbuf, nrecvelem, recvdispls,
                                     teamid, &op);
  if (ret != DART_OK) return ret;
  return dart__coll__start_handle(&op, handle);
}

/* ---- reductions ---- */

static dart_ret_t reduce_prepare(const char *func, coll_kind_t kind,
                                 const void *sendbuf, void *recvbuf,
                                 size_t nelem, dart_datatype_t dtype,
                                 dart_operation_t redop,
                                 dart_team_unit_t root, dart_team_t teamid,
                                 dart__coll_op_t *op)
{
  dart_ret_t ret = prepare(func, kind, teamid, nelem, dtype, root, op);
  if (ret != DART_OK) return ret;
  /* non-contiguous types reduce their base elements, packed */
  const dart__dtype_t *elem = dart__types__dtype(op->t->base);
  if ((ret = dart__types__op_reduce(func, redop, op->t->contiguous ? op->t
                                                                   : elem,
                                    &op->red)) != DART_OK)
    return ret;
  if (nelem % op->red.granule != 0) {
    if (redop == DART_OP_MINMAX)
      DART_LOG_ERROR_IN(func, "DART_OP_MINMAX reduces {min, max} pairs: "
                        "nelem %zu is odd", nelem);
    else
      DART_LOG_ERROR_IN(func, "nelem %zu is not a multiple of %zu", nelem,
                        op->red.granule);
    return DART_ERR_INVAL;
  }
  if (nelem / op->red.granule > INT_MAX) {
    DART_LOG_ERROR_IN(func, "%zu elements are too many for one reduction",
                      nelem);
    return DART_ERR_INVAL;
  }
  const bool recv_used = kind == COLL_ALLREDUCE || op->root == op->team->myid;
  if (null_buffer(func, sendbuf, nelem, "sendbuf") ||
      (recv_used && null_buffer(func, recvbuf, nelem, "recvbuf")))
    return DART_ERR_INVAL;
  op->redop = redop;
  op->send = sendbuf;
  op->recv = recv_used ? recvbuf : NULL;
  op->in_place = recv_used && sendbuf == recvbuf;
  return DART_OK;
}

dart_ret_t dart_allreduce(const void *sendbuf, void *recvbuf, size_t nelem,
                          dart_datatype_t dtype, dart_operation_t redop,
                          dart_team_t teamid)
{
  dart__coll_op_t op;
  dart_ret_t ret = reduce_prepare(__func__, COLL_ALLREDUCE, sendbuf, recvbuf,
                                  nelem, dtype, redop, NO_ROOT, teamid, &op);
  if (ret != DART_OK) return ret;
  return dart__coll__run(&op);
}

dart_ret_t dart_allreduce_handle(const void *sendbuf, void *recvbuf,
                                 size_t nelem, dart_datatype_t dtype,
                                 dart_operation_t redop, dart_team_t teamid,
                                 dart_handle_t *handle)
{
  if (!dart__onesided__handle_out(__func__, handle)) return DART_ERR_INVAL;
  dart__coll_op_t op;
  dart_ret_t ret = reduce_prepare(__func__, COLL_ALLREDUCE, sendbuf, recvbuf,
                                  nelem, dtype, redop, NO_ROOT, teamid, &op);
  if (ret != DART_OK) return ret;
  return dart__coll__start_handle(&op, handle);
}

dart_ret_t dart_reduce(const void *sendbuf, void *recvbuf, size_t nelem,
                       dart_datatype_t dtype, dart_operation_t redop,
                       dart_team_unit_t root, dart_team_t teamid)
{
  dart__coll_op_t op;
  dart_ret_t ret = reduce_prepare(__func__, COLL_REDUCE, sendbuf, recvbuf,
                                  nelem, dtype, redop, root, teamid, &op);
  if (ret != DART_OK) return ret;
  return dart__coll__run(&op);
}

dart_ret_t dart_reduce_handle(const void *sendbuf, void *recvbuf,
                              size_t nelem, dart_datatype_t dtype,
                              dart_operation_t redop, dart_team_unit_t root,
                              dart_team_t teamid, dart_handle_t *handle)
{
  if (!dart__onesided__handle_out(__func__, handle)) return DART_ERR_INVAL;
  dart__coll_op_t op;
  dart_ret_t ret = reduce_prepare(__func__, COLL_REDUCE, sendbuf, recvbuf,
                                  nelem, dtype, redop, root, teamid, &op);
  if (ret != DART_OK) return ret;
  return dart__coll__start_handle(&op, handle);
}
