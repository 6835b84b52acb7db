/**
 * \file dart_communication.h
 * Collectives, two-sided messages and one-sided transfers on global memory.
 *
 * Counts are in elements of the base type of the given datatypes. For a
 * transfer between a source and a destination type, both must have the same
 * base type and nelem must be a multiple of each type's elements per
 * instance (see dart_type_create_strided / _indexed).
 *
 * Completion (see also DESIGN.md):
 *  - dart_put/dart_get: started; complete after dart_flush* (remote and
 *    local) or dart_flush_local* (local only).
 *  - *_blocking: complete at both ends on return.
 *  - *_handle: complete after dart_wait/dart_test (remote) or their _local
 *    forms. An operation that completed at once gives DART_HANDLE_NULL.
 *  - dart_barrier: every write issued before it, by any path, is visible to
 *    every member after it.
 *
 * Thread safety: with DART_THREAD_MULTIPLE, one-sided operations and
 * completion calls may be issued from several threads; a handle must be
 * used by one thread at a time. Collectives on one team must be called by
 * one thread per unit, in the same order on every unit.
 */
#ifndef DART__COMMUNICATION_H_
#define DART__COMMUNICATION_H_

#include <dart/dart_globmem.h>
#include <dart/dart_types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dart_handle_struct *dart_handle_t;

#define DART_HANDLE_NULL ((dart_handle_t)NULL)

/* ---- collectives over a team (MPI's namesakes on the team) ---- */

dart_ret_t dart_barrier(dart_team_t team) DART_NOTHROW;
dart_ret_t dart_bcast(void *buf, size_t nelem, dart_datatype_t dtype,
                      dart_team_unit_t root, dart_team_t team) DART_NOTHROW;
/** Unit i receives elements [i*nelem, (i+1)*nelem) of the root's sendbuf. */
dart_ret_t dart_scatter(const void *sendbuf, void *recvbuf, size_t nelem,
                        dart_datatype_t dtype, dart_team_unit_t root,
                        dart_team_t team) DART_NOTHROW;
dart_ret_t dart_gather(const void *sendbuf, void *recvbuf, size_t nelem,
                       dart_datatype_t dtype, dart_team_unit_t root,
                       dart_team_t team) DART_NOTHROW;
dart_ret_t dart_allgather(const void *sendbuf, void *recvbuf, size_t nelem,
                          dart_datatype_t dtype,
                          dart_team_t team) DART_NOTHROW;
/**
 * Unit i's nrecvelem[i] elements land at element recvdispls[i] of recvbuf.
 */
dart_ret_t dart_allgatherv(const void *sendbuf, size_t nsendelem,
                           dart_datatype_t dtype, void *recvbuf,
                           const size_t *nrecvelem, const size_t *recvdispls,
                           dart_team_t teamid) DART_NOTHROW;
/**
 * Element-wise reduction. DART_OP_MINMAX reduces {min, max} pairs: nelem
 * counts elements (2 per pair) and must be even.
 */
dart_ret_t dart_allreduce(const void *sendbuf, void *recvbuf, size_t nelem,
                          dart_datatype_t dtype, dart_operation_t op,
                          dart_team_t team) DART_NOTHROW;
dart_ret_t dart_alltoall(const void *sendbuf, void *recvbuf, size_t nelem,
                         dart_datatype_t dtype, dart_team_t team) DART_NOTHROW;
dart_ret_t dart_reduce(const void *sendbuf, void *recvbuf, size_t nelem,
                       dart_datatype_t dtype, dart_operation_t op,
                       dart_team_unit_t root, dart_team_t team) DART_NOTHROW;

/* ---- two-sided, between global units (tag >= 0) ---- */

dart_ret_t dart_send(const void *sendbuf, size_t nelem, dart_datatype_t dtype,
                     int tag, dart_global_unit_t unit) DART_NOTHROW;
dart_ret_t dart_recv(void *recvbuf, size_t nelem, dart_datatype_t dtype,
                     int tag, dart_global_unit_t unit) DART_NOTHROW;
dart_ret_t dart_sendrecv(const void *sendbuf, size_t send_nelem,
                         dart_datatype_t send_dtype, int send_tag,
                         dart_global_unit_t dest, void *recvbuf,
                         size_t recv_nelem, dart_datatype_t recv_dtype,
                         int recv_tag, dart_global_unit_t src) DART_NOTHROW;

/* ---- one-sided ---- */

dart_ret_t dart_get(void *dest, dart_gptr_t gptr, size_t nelem,
                    dart_datatype_t src_type,
                    dart_datatype_t dst_type) DART_NOTHROW;
dart_ret_t dart_put(dart_gptr_t gptr, const void *src, size_t nelem,
                    dart_datatype_t src_type,
                    dart_datatype_t dst_type) DART_NOTHROW;
/** Completes all transfers to gptr's unit in gptr's allocation. */
dart_ret_t dart_flush(dart_gptr_t gptr) DART_NOTHROW;
/** Completes all transfers to every unit in gptr's allocation. */
dart_ret_t dart_flush_all(dart_gptr_t gptr) DART_NOTHROW;
dart_ret_t dart_flush_local(dart_gptr_t gptr) DART_NOTHROW;
dart_ret_t dart_flush_local_all(dart_gptr_t gptr) DART_NOTHROW;

dart_ret_t dart_get_handle(void *dest, dart_gptr_t gptr, size_t nelem,
                           dart_datatype_t src_type, dart_datatype_t dst_type,
                           dart_handle_t *handle) DART_NOTHROW;
dart_ret_t dart_put_handle(dart_gptr_t gptr, const void *src, size_t nelem,
                           dart_datatype_t src_type, dart_datatype_t dst_type,
                           dart_handle_t *handle) DART_NOTHROW;
/** Completes the operation at both ends, frees it, sets *handle NULL. */
dart_ret_t dart_wait(dart_handle_t *handle) DART_NOTHROW;
dart_ret_t dart_waitall(dart_handle_t handles[], size_t n) DART_NOTHROW;
/** Local completion only; frees the handle and sets it NULL. */
dart_ret_t dart_wait_local(dart_handle_t *handle) DART_NOTHROW;
dart_ret_t dart_waitall_local(dart_handle_t handles[], size_t n) DART_NOTHROW;
/**
 * *result becomes 1 (and the handle is freed and set NULL) if the
 * operation completed locally, else 0.
 */
dart_ret_t dart_test_local(dart_handle_t *handle, int32_t *result) DART_NOTHROW;
/** Like dart_test_local, for completion at both ends. */
dart_ret_t dart_test(dart_handle_t *handleptr,
                     int32_t *is_finished) DART_NOTHROW;
dart_ret_t dart_testall_local(dart_handle_t handles[], size_t n,
                              int32_t *result) DART_NOTHROW;
dart_ret_t dart_testall(dart_handle_t handles[], size_t n,
                        int32_t *is_finished) DART_NOTHROW;
/** Frees a handle without completing it (complete it by a flush). */
dart_ret_t dart_handle_free(dart_handle_t *handle) DART_NOTHROW;

dart_ret_t dart_get_blocking(void *dest, dart_gptr_t gptr, size_t nelem,
                             dart_datatype_t src_type,
                             dart_datatype_t dst_type) DART_NOTHROW;
dart_ret_t dart_put_blocking(dart_gptr_t gptr, const void *src, size_t nelem,
                             dart_datatype_t src_type,
                             dart_datatype_t dst_type) DART_NOTHROW;

/* ---- atomics ----
 *
 * Types: the basic types. Operations: MIN, MAX, SUM, PROD, REPLACE (atomic
 * write) and NO_OP (atomic read) on every one; BAND, BOR, BXOR, LAND, LOR,
 * LXOR on integral types (DART_TYPE_BYTE is a signed char). Integer
 * arithmetic wraps. The target must be aligned to the element size.
 * Anything else is DART_ERR_INVAL. DART_TYPE_LONG_DOUBLE, wider than any
 * compare-and-swap, is changed under a lock word of its owner.
 *
 * All atomics on one location are atomic with respect to each other,
 * whatever operations are mixed and wherever the callers run: an
 * allocation whose team lies in one node uses CPU atomics on shared memory,
 * one that spans nodes uses the remote path for every unit, the owner
 * included. A plain put, get or direct store to a location is not atomic
 * with respect to atomics on it. Each atomic is complete on return and
 * ordered before the caller's later operations. Thread-safe under
 * DART_THREAD_MULTIPLE.
 */

/**
 * values[i] op= into element i at gptr, for i < nelem, each element
 * atomically. Complete on return (DART only promises that after a flush).
 */
dart_ret_t dart_accumulate(dart_gptr_t gptr, const void *values, size_t nelem,
                           dart_datatype_t dtype,
                           dart_operation_t op) DART_NOTHROW;
/** Like dart_accumulate; values may be reused on return. */
dart_ret_t dart_accumulate_blocking_local(dart_gptr_t gptr, const void *values,
                                          size_t nelem, dart_datatype_t dtype,
                                          dart_operation_t op) DART_NOTHROW;
/**
 * *result = the element at gptr, which becomes *result op *value, in one
 * atomic step. value may be NULL for DART_OP_NO_OP.
 */
dart_ret_t dart_fetch_and_op(dart_gptr_t gptr, const void *value,
                             void *result, dart_datatype_t dtype,
                             dart_operation_t op) DART_NOTHROW;
/**
 * If the element at gptr equals *compare it becomes *value; *result is the
 * element before, either way. Integral types only.
 */
dart_ret_t dart_compare_and_swap(dart_gptr_t gptr, const void *value,
                                 const void *compare, void *result,
                                 dart_datatype_t dtype) DART_NOTHROW;

#ifdef __cplusplus
}
#endif

#endif /* DART__COMMUNICATION_H_ */
