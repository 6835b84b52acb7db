/*
 * Collectives and two-sided messages: MPI's nonblocking namesakes on the
 * team's communicator, waited for while serving others' one-sided
 * operations (doc/design.md, "Progress"). Counts may exceed INT_MAX: such
 * buffers travel as one element of a derived type built for the call.
 */
#include <dart/dart_communication.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/fence.h"
#include "base/runtime.h"
#include "progress/progress.h"
#include "team/team.h"
#include "transport/acc_queue.h"
#include "transport/transport.h"
#include "types/datatype.h"
#include "types/op.h"

/* An MPI (type, count) for nelem elements of t; *owned is set when the type
 * was built for this call and must be freed. */
typedef struct {
  MPI_Datatype type;
  int count;
  bool owned;
} mpi_buf_t;

static dart_ret_t describe(const char *func, const dart__dtype_t *t,
                           size_t nelem, mpi_buf_t *out)
{
  MPI_Datatype unit = t->contiguous ? t->mpi_elem : t->mpi_type;
  size_t n = t->contiguous ? nelem : nelem / t->num_elem;
  out->owned = false;
  if (n <= INT_MAX) {
    out->type = unit;
    out->count = (int)n;
    return DART_OK;
  }
  /* n = q * 2^30 + r units as a single struct element */
  const size_t block = (size_t)1 << 30;
  MPI_Datatype blocks = MPI_DATATYPE_NULL, full = MPI_DATATYPE_NULL,
               rest = MPI_DATATYPE_NULL;
  MPI_Aint lb, extent;
  size_t q = n / block, r = n % block;
  if (q > INT_MAX) goto too_large;
  MPI_Type_get_extent(unit, &lb, &extent);
  MPI_Type_contiguous((int)block, unit, &blocks);
  MPI_Type_contiguous((int)q, blocks, &full);
  MPI_Type_contiguous((int)r, unit, &rest);
  int lens[2] = {1, 1};
  MPI_Aint displs[2] = {0, (MPI_Aint)(q * block) * extent};
  MPI_Datatype parts[2] = {full, rest};
  MPI_Datatype whole;
  int ret = MPI_Type_create_struct(2, lens, displs, parts, &whole);
  MPI_Type_free(&blocks);
  MPI_Type_free(&full);
  MPI_Type_free(&rest);
  if (ret != MPI_SUCCESS) goto too_large;
  /* consecutive elements of the big type follow each other exactly */
  MPI_Type_create_resized(whole, 0, (MPI_Aint)n * extent, &out->type);
  MPI_Type_free(&whole);
  MPI_Type_commit(&out->type);
  out->count = 1;
  out->owned = true;
  return DART_OK;
too_large:
  DART_LOG_ERROR_IN(func, "%zu elements are too many", nelem);
  return DART_ERR_INVAL;
}

static void release(mpi_buf_t *b)
{
  if (b->owned) MPI_Type_free(&b->type);
}

/* Type and buffer checks shared by the data-moving collectives. */
static dart_ret_t coll_type(const char *func, dart_datatype_t dtype,
                            size_t nelem, const dart__dtype_t **t)
{
  const dart__dtype_t *s;
  return dart__types__dtype_pair(func, dtype, dtype, nelem, t, &s);
}

static bool null_buffer(const char *func, const void *buf, size_t nelem,
                        const char *name)
{
  if (buf != NULL || nelem == 0) return false;
  DART_LOG_ERROR_IN(func, "%s is NULL for %zu elements", name, nelem);
  return true;
}

static bool valid_root(const char *func, const dart__team_t *team,
                       dart_team_unit_t root)
{
  if (root.id >= 0 && root.id < team->size) return true;
  DART_LOG_ERROR_IN(func, "root %d is not in team %d of %d units", root.id,
                    team->id, team->size);
  return false;
}

#define COLL_PROLOGUE(teamid)                                          \
  DART__CHECK_INIT();                                                  \
  const char *func = __func__;                                         \
  dart__team_t *team = dart__team__lookup(__func__, teamid);           \
  if (team == NULL) return DART_ERR_INVAL

#define MPI_CALL(call)                                                 \
  do {                                                                 \
    int mpi_ret_ = (call);                                             \
    if (mpi_ret_ != MPI_SUCCESS) {                                     \
      DART_LOG_ERROR_IN(func, "%s failed", #call);                     \
      ret = DART_ERR_OTHER;                                            \
    }                                                                  \
  } while (0)

/* Waits for the n requests that MPI calls just started, unless starting
 * failed (ret, already logged). Peers may still target this unit until
 * they arrive, and under UCX their operations advance only while this
 * unit drives progress: a plain MPI wait could stall them for good. */
static dart_ret_t await(const char *func, dart_ret_t ret, int n,
                        MPI_Request reqs[])
{
  if (ret != DART_OK) return ret;
  return dart__progress__wait(func, n, reqs);
}

dart_ret_t dart_barrier(dart_team_t teamid)
{
  COLL_PROLOGUE(teamid);
  /* what this unit wrote, by any path, is visible once all have arrived */
  dart__transport__acc_complete();
  dart_ret_t ret = dart__transport__flush_all(func, NULL);
  if (ret == DART_OK) ret = dart__transport__sync(func);
  if (ret != DART_OK) return ret;
  dart__base__fence();
  if (team->size == 1) return DART_OK; /* nobody to meet */
  ret = dart__team__barrier(func, team);
  dart__base__fence();
  if (ret != DART_OK) return ret;
  /* what others put here before the barrier, for our direct loads */
  return dart__transport__sync(func);
}

dart_ret_t dart_bcast(void *buf, size_t nelem, dart_datatype_t dtype,
                      dart_team_unit_t root, dart_team_t teamid)
{
  COLL_PROLOGUE(teamid);
  const dart__dtype_t *t;
  dart_ret_t ret = coll_type(__func__, dtype, nelem, &t);
  if (ret != DART_OK) return ret;
  if (!valid_root(__func__, team, root) ||
      null_buffer(__func__, buf, nelem, "buf"))
    return DART_ERR_INVAL;
  mpi_buf_t b;
  if ((ret = describe(__func__, t, nelem, &b)) != DART_OK) return ret;
  MPI_Request req;
  MPI_CALL(MPI_Ibcast(buf, b.count, b.type, root.id, team->comm, &req));
  ret = await(func, ret, 1, &req);
  release(&b);
  return ret;
}

/* scatter, gather, allgather, alltoall: nelem per unit on both sides */
typedef enum { SCATTER, GATHER, ALLGATHER, ALLTOALL } spread_t;

static dart_ret_t spread(const char *func, spread_t kind, const void *sendbuf,
                         void *recvbuf, size_t nelem, dart_datatype_t dtype,
                         dart_team_unit_t root, dart_team_t teamid)
{
  DART__CHECK_INIT_IN(func);
  dart__team_t *team = dart__team__lookup(func, teamid);
  if (team == NULL) return DART_ERR_INVAL;
  const dart__dtype_t *t;
  dart_ret_t ret = coll_type(func, dtype, nelem, &t);
  if (ret != DART_OK) return ret;
  bool rooted = kind == SCATTER || kind == GATHER;
  if (rooted && !valid_root(func, team, root)) return DART_ERR_INVAL;
  bool at_root = rooted && root.id == team->myid;
  /* buffers that MPI reads or writes on this unit */
  bool send_used = kind != SCATTER || at_root;
  bool recv_used = kind != GATHER || at_root;
  if ((send_used && null_buffer(func, sendbuf, nelem, "sendbuf")) ||
      (recv_used && null_buffer(func, recvbuf, nelem, "recvbuf")))
    return DART_ERR_INVAL;
  mpi_buf_t b;
  if ((ret = describe(func, t, nelem, &b)) != DART_OK) return ret;
  MPI_Request req;
  switch (kind) {
    case SCATTER:
      MPI_CALL(MPI_Iscatter(sendbuf, b.count, b.type, recvbuf, b.count,
                            b.type, root.id, team->comm, &req));
      break;
    case GATHER:
      MPI_CALL(MPI_Igather(sendbuf, b.count, b.type, recvbuf, b.count, b.type,
                           root.id, team->comm, &req));
      break;
    case ALLGATHER:
      MPI_CALL(MPI_Iallgather(sendbuf, b.count, b.type, recvbuf, b.count,
                              b.type, team->comm, &req));
      break;
    case ALLTOALL:
      MPI_CALL(MPI_Ialltoall(sendbuf, b.count, b.type, recvbuf, b.count,
                             b.type, team->comm, &req));
      break;
  }
  ret = await(func, ret, 1, &req);
  release(&b);
  return ret;
}

dart_ret_t dart_scatter(const void *sendbuf, void *recvbuf, size_t nelem,
                        dart_datatype_t dtype, dart_team_unit_t root,
                        dart_team_t team)
{
  return spread(__func__, SCATTER, sendbuf, recvbuf, nelem, dtype, root, team);
}

dart_ret_t dart_gather(const void *sendbuf, void *recvbuf, size_t nelem,
                       dart_datatype_t dtype, dart_team_unit_t root,
                       dart_team_t team)
{
  return spread(__func__, GATHER, sendbuf, recvbuf, nelem, dtype, root, team);
}

dart_ret_t dart_allgather(const void *sendbuf, void *recvbuf, size_t nelem,
                          dart_datatype_t dtype, dart_team_t team)
{
  return spread(__func__, ALLGATHER, sendbuf, recvbuf, nelem, dtype,
                DART_TEAM_UNIT_ID(0), team);
}

dart_ret_t dart_alltoall(const void *sendbuf, void *recvbuf, size_t nelem,
                         dart_datatype_t dtype, dart_team_t team)
{
  return spread(__func__, ALLTOALL, sendbuf, recvbuf, nelem, dtype,
                DART_TEAM_UNIT_ID(0), team);
}

dart_ret_t dart_allgatherv(const void *sendbuf, size_t nsendelem,
                           dart_datatype_t dtype, void *recvbuf,
                           const size_t *nrecvelem, const size_t *recvdispls,
                           dart_team_t teamid)
{
  COLL_PROLOGUE(teamid);
  const dart__dtype_t *t;
  dart_ret_t ret = coll_type(__func__, dtype, nsendelem, &t);
  if (ret != DART_OK) return ret;
  if (!t->contiguous) {
    DART_LOG_ERROR("datatype %ld is not contiguous", (long)dtype);
    return DART_ERR_INVAL;
  }
  if (nrecvelem == NULL || recvdispls == NULL) {
    DART_LOG_ERROR("nrecvelem %p or recvdispls %p is NULL",
                   (const void *)nrecvelem, (const void *)recvdispls);
    return DART_ERR_INVAL;
  }
  size_t total = 0;
  bool small = true;
  for (int u = 0; u < team->size; u++) {
    if (nrecvelem[u] > t->max_nelem ||
        recvdispls[u] > t->max_nelem - nrecvelem[u]) {
      DART_LOG_ERROR("unit %d: %zu elements at %zu overflow", u, nrecvelem[u],
                     recvdispls[u]);
      return DART_ERR_INVAL;
    }
    total += nrecvelem[u];
    small = small && nrecvelem[u] <= INT_MAX && recvdispls[u] <= INT_MAX;
  }
  if (nrecvelem[team->myid] != nsendelem) {
    DART_LOG_ERROR("nsendelem %zu differs from nrecvelem[%d] = %zu", nsendelem,
                   team->myid, nrecvelem[team->myid]);
    return DART_ERR_INVAL;
  }
  if (null_buffer(__func__, sendbuf, nsendelem, "sendbuf") ||
      null_buffer(__func__, recvbuf, total, "recvbuf"))
    return DART_ERR_INVAL;
  const void *send = sendbuf == recvbuf ? MPI_IN_PLACE : sendbuf;
  if (team->size == 1) {
    /* a copy; MPICH 4.0's MPI_Allgatherv ignores the displacement here */
    if (send != MPI_IN_PLACE && nsendelem > 0)
      memmove((char *)recvbuf + recvdispls[0] * t->elem_size, sendbuf,
              nsendelem * t->elem_size);
    return DART_OK;
  }
  if (small) {
    int *counts = malloc(2 * (size_t)team->size * sizeof *counts);
    if (counts == NULL) return DART_ERR_NOMEM;
    for (int u = 0; u < team->size; u++) {
      counts[u] = (int)nrecvelem[u];
      counts[team->size + u] = (int)recvdispls[u];
    }
    MPI_Request req;
    MPI_CALL(MPI_Iallgatherv(send, (int)nsendelem, t->mpi_elem, recvbuf,
                             counts, counts + team->size, t->mpi_elem,
                             team->comm, &req));
    ret = await(func, ret, 1, &req);
    free(counts);
    return ret;
  }
  /* beyond int counts: each unit's part is broadcast by its owner */
  if (send != MPI_IN_PLACE)
    memcpy((char *)recvbuf + recvdispls[team->myid] * t->elem_size, sendbuf,
           nsendelem * t->elem_size);
  for (int u = 0; u < team->size && ret == DART_OK; u++) {
    mpi_buf_t b;
    if ((ret = describe(__func__, t, nrecvelem[u], &b)) != DART_OK) break;
    MPI_Request req;
    MPI_CALL(MPI_Ibcast((char *)recvbuf + recvdispls[u] * t->elem_size,
                        b.count, b.type, u, team->comm, &req));
    ret = await(func, ret, 1, &req);
    release(&b);
  }
  return ret;
}

/* Reductions: contiguous elements, packed first when the layout is not. */
static dart_ret_t reduce(const char *func, const void *sendbuf, void *recvbuf,
                         size_t nelem, dart_datatype_t dtype,
                         dart_operation_t op, dart_team_unit_t root,
                         bool all, dart_team_t teamid)
{
  DART__CHECK_INIT_IN(func);
  dart__team_t *team = dart__team__lookup(func, teamid);
  if (team == NULL) return DART_ERR_INVAL;
  const dart__dtype_t *t;
  dart_ret_t ret = coll_type(func, dtype, nelem, &t);
  if (ret != DART_OK) return ret;
  if (!all && !valid_root(func, team, root)) return DART_ERR_INVAL;
  const dart__dtype_t *elem = dart__types__dtype(t->base);
  MPI_Op mpi_op;
  MPI_Datatype mpi_type;
  size_t per;
  if ((ret = dart__types__op_mpi(func, op, t->contiguous ? t : elem, &mpi_op,
                                 &mpi_type, &per)) != DART_OK)
    return ret;
  if (nelem % per != 0) {
    DART_LOG_ERROR_IN(func, "nelem %zu is not a multiple of %zu", nelem, per);
    return DART_ERR_INVAL;
  }
  bool recv_used = all || root.id == team->myid;
  if (null_buffer(func, sendbuf, nelem, "sendbuf") ||
      (recv_used && null_buffer(func, recvbuf, nelem, "recvbuf")))
    return DART_ERR_INVAL;
  if (nelem / per > INT_MAX) {
    DART_LOG_ERROR_IN(func, "%zu elements are too many for one reduction",
                      nelem);
    return DART_ERR_INVAL;
  }
  const void *send = sendbuf;
  void *recv = recvbuf;
  void *packed = NULL;
  if (!t->contiguous) {
    packed = malloc(2 * nelem * t->elem_size);
    if (packed == NULL) return DART_ERR_NOMEM;
    dart__types__dtype_copy(packed, elem, sendbuf, t, nelem);
    send = packed;
    recv = (char *)packed + nelem * t->elem_size;
  } else if (sendbuf == recvbuf && recv_used) {
    send = MPI_IN_PLACE;
  }
  int count = (int)(nelem / per);
  MPI_Request req;
  if (all)
    MPI_CALL(MPI_Iallreduce(send, recv, count, mpi_type, mpi_op, team->comm,
                            &req));
  else
    MPI_CALL(MPI_Ireduce(send, recv, count, mpi_type, mpi_op, root.id,
                         team->comm, &req));
  ret = await(func, ret, 1, &req);
  if (packed) {
    if (ret == DART_OK && recv_used)
      dart__types__dtype_copy(recvbuf, t, recv, elem, nelem);
    free(packed);
  }
  return ret;
}

dart_ret_t dart_allreduce(const void *sendbuf, void *recvbuf, size_t nelem,
                          dart_datatype_t dtype, dart_operation_t op,
                          dart_team_t team)
{
  return reduce(__func__, sendbuf, recvbuf, nelem, dtype, op,
                DART_TEAM_UNIT_ID(0), true, team);
}

dart_ret_t dart_reduce(const void *sendbuf, void *recvbuf, size_t nelem,
                       dart_datatype_t dtype, dart_operation_t op,
                       dart_team_unit_t root, dart_team_t team)
{
  return reduce(__func__, sendbuf, recvbuf, nelem, dtype, op, root, false,
                team);
}

/* ---- two-sided, on our duplicate of MPI_COMM_WORLD ---- */

static bool valid_peer(const char *func, dart_global_unit_t unit, int tag)
{
  static int tag_ub;
  if (tag_ub == 0) {
    int *value, found;
    MPI_Comm_get_attr(dart__rt.comm, MPI_TAG_UB, &value, &found);
    tag_ub = found ? *value : 32767;
  }
  if (unit.id < 0 || unit.id >= dart__rt.size || tag < 0 || tag > tag_ub) {
    DART_LOG_ERROR_IN(func, "unit %d (of %d) or tag %d (0..%d) is invalid",
                      unit.id, dart__rt.size, tag, tag_ub);
    return false;
  }
  return true;
}

dart_ret_t dart_send(const void *sendbuf, size_t nelem, dart_datatype_t dtype,
                     int tag, dart_global_unit_t unit)
{
  DART__CHECK_INIT();
  const char *func = __func__;
  const dart__dtype_t *t;
  dart_ret_t ret = coll_type(__func__, dtype, nelem, &t);
  if (ret != DART_OK) return ret;
  if (!valid_peer(__func__, unit, tag) ||
      null_buffer(__func__, sendbuf, nelem, "sendbuf"))
    return DART_ERR_INVAL;
  mpi_buf_t b;
  if ((ret = describe(__func__, t, nelem, &b)) != DART_OK) return ret;
  MPI_Request req;
  MPI_CALL(MPI_Isend(sendbuf, b.count, b.type, unit.id, tag, dart__rt.comm,
                     &req));
  ret = await(func, ret, 1, &req);
  release(&b);
  return ret;
}

dart_ret_t dart_recv(void *recvbuf, size_t nelem, dart_datatype_t dtype,
                     int tag, dart_global_unit_t unit)
{
  DART__CHECK_INIT();
  const char *func = __func__;
  const dart__dtype_t *t;
  dart_ret_t ret = coll_type(__func__, dtype, nelem, &t);
  if (ret != DART_OK) return ret;
  if (!valid_peer(__func__, unit, tag) ||
      null_buffer(__func__, recvbuf, nelem, "recvbuf"))
    return DART_ERR_INVAL;
  mpi_buf_t b;
  if ((ret = describe(__func__, t, nelem, &b)) != DART_OK) return ret;
  MPI_Request req;
  MPI_CALL(MPI_Irecv(recvbuf, b.count, b.type, unit.id, tag, dart__rt.comm,
                     &req));
  ret = await(func, ret, 1, &req);
  release(&b);
  return ret;
}

dart_ret_t dart_sendrecv(const void *sendbuf, size_t send_nelem,
                         dart_datatype_t send_dtype, int send_tag,
                         dart_global_unit_t dest, void *recvbuf,
                         size_t recv_nelem, dart_datatype_t recv_dtype,
                         int recv_tag, dart_global_unit_t src)
{
  DART__CHECK_INIT();
  const char *func = __func__;
  const dart__dtype_t *st, *rt;
  dart_ret_t ret = coll_type(__func__, send_dtype, send_nelem, &st);
  if (ret == DART_OK) ret = coll_type(__func__, recv_dtype, recv_nelem, &rt);
  if (ret != DART_OK) return ret;
  if (!valid_peer(__func__, dest, send_tag) ||
      !valid_peer(__func__, src, recv_tag) ||
      null_buffer(__func__, sendbuf, send_nelem, "sendbuf") ||
      null_buffer(__func__, recvbuf, recv_nelem, "recvbuf"))
    return DART_ERR_INVAL;
  mpi_buf_t sb, rb;
  if ((ret = describe(__func__, st, send_nelem, &sb)) != DART_OK) return ret;
  if ((ret = describe(__func__, rt, recv_nelem, &rb)) != DART_OK) {
    release(&sb);
    return ret;
  }
  /* the receive first: a send that fails to start can take it back */
  MPI_Request reqs[2];
  MPI_CALL(MPI_Irecv(recvbuf, rb.count, rb.type, src.id, recv_tag,
                     dart__rt.comm, &reqs[0]));
  if (ret == DART_OK) {
    MPI_CALL(MPI_Isend(sendbuf, sb.count, sb.type, dest.id, send_tag,
                       dart__rt.comm, &reqs[1]));
    if (ret != DART_OK) {
      /* a receive must not outlive the call that posted it */
      MPI_Cancel(&reqs[0]);
      dart__progress__wait(func, 1, reqs);
    }
  }
  ret = await(func, ret, 2, reqs);
  release(&rb);
  release(&sb);
  return ret;
}
