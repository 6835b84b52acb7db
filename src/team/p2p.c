/*
 * Two-sided messages between global units: MPI's nonblocking namesakes on
 * the runtime's communicator, waited for while serving others' one-sided
 * operations (doc/design.md, "Progress"). Counts may exceed INT_MAX: such
 * buffers travel as one element of a derived type built for the call.
 */
#include <dart/dart_communication.h>

#include "base/runtime.h"
#include "progress/progress.h"
#include "types/datatype.h"

/* Type and buffer checks shared by the calls. */
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

/* One message to (send) or from unit, waited for; logged as func. */
static dart_ret_t one_message(const char *func, bool send, void *buf,
                              size_t nelem, dart_datatype_t dtype, int tag,
                              dart_global_unit_t unit)
{
  DART__CHECK_INIT_IN(func);
  const dart__dtype_t *t;
  dart_ret_t ret = coll_type(func, dtype, nelem, &t);
  if (ret != DART_OK) return ret;
  if (!valid_peer(func, unit, tag) ||
      null_buffer(func, buf, nelem, send ? "sendbuf" : "recvbuf"))
    return DART_ERR_INVAL;
  dart__mpi_buf_t b;
  if ((ret = dart__types__mpi_buf(func, t, nelem, &b)) != DART_OK) return ret;
  MPI_Request req;
  if (send)
    MPI_CALL(MPI_Isend(buf, b.count, b.type, unit.id, tag, dart__rt.comm,
                       &req));
  else
    MPI_CALL(MPI_Irecv(buf, b.count, b.type, unit.id, tag, dart__rt.comm,
                       &req));
  ret = await(func, ret, 1, &req);
  dart__types__mpi_buf_free(&b);
  return ret;
}

dart_ret_t dart_send(const void *sendbuf, size_t nelem, dart_datatype_t dtype,
                     int tag, dart_global_unit_t unit)
{
  return one_message(__func__, true, (void *)sendbuf, nelem, dtype, tag,
                     unit);
}

dart_ret_t dart_recv(void *recvbuf, size_t nelem, dart_datatype_t dtype,
                     int tag, dart_global_unit_t unit)
{
  return one_message(__func__, false, recvbuf, nelem, dtype, tag, unit);
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
  dart__mpi_buf_t sb, rb;
  if ((ret = dart__types__mpi_buf(__func__, st, send_nelem, &sb)) != DART_OK) return ret;
  if ((ret = dart__types__mpi_buf(__func__, rt, recv_nelem, &rb)) != DART_OK) {
    dart__types__mpi_buf_free(&sb);
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
  dart__types__mpi_buf_free(&rb);
  dart__types__mpi_buf_free(&sb);
  return ret;
}
