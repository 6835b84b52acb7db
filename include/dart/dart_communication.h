/**
 * \file dart_communication.h
 * Collectives, two-sided messages and one-sided transfers on global memory.
 *
 * Counts are in elements of the base type of the given datatypes. For a
 * transfer between a source and a destination type, both must have the same
 * base type and nelem must be a multiple of each type's elements per
 * instance (see dart_type_create_strided / _indexed).
 *
 * Completion: local completion means the caller's buffer is done with (a
 * put's source may be reused, a get's destination holds the data); remote
 * completion means a put's data is in the target's memory, visible to its
 * loads and to everyone's later gets.
 *  - dart_put/dart_get: started; complete after dart_flush* (remote and
 *    local) or dart_flush_local* (local only).
 *  - *_blocking: complete at both ends on return.
 *  - *_handle: complete after dart_wait/dart_test (remote) or their _local
 *    forms. An operation that completed at once gives DART_HANDLE_NULL.
 *  - dart_barrier: every write issued before it, by any path, is visible to
 *    every member after it.
 *
 * Transfers to the caller's own part and to node peers' shared memory (and
 * through CMA) are complete on return in every form. Two transfers that are
 * both in flight are not ordered with each other; order them with a flush.
 *
 * Errors: every function here needs an initialised runtime
 * (DART_ERR_NOTINIT). Bad input (unknown team or freed segment, a unit
 * outside the team, an access beyond the target's part, NULL buffers with
 * nonzero counts, counts whose bytes overflow, mismatched or unknown types,
 * a root outside the team, a freed handle) is DART_ERR_INVAL with one log
 * line, and nothing is transferred. A failing transport is DART_ERR_OTHER.
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

/**
 * A handle of one non-blocking transfer (dart_put_handle, dart_get_handle).
 * Owned by the caller until dart_wait*, a successful dart_test* or
 * dart_handle_free releases it and sets it to DART_HANDLE_NULL.
 */
typedef struct dart_handle_struct *dart_handle_t;

/** The handle of a transfer that is already complete; waiting on it or
 * testing it is DART_OK. */
#define DART_HANDLE_NULL ((dart_handle_t)NULL)

/**
 * \name Collectives over a team (MPI's namesakes on the team)
 *
 * Collective over \c team: every member calls, in the same order. Counts
 * are per unit. While a unit waits in a collective it keeps serving the
 * one-sided operations others aim at its memory.
 */
/**@{*/

/**
 * Synchronises the team's units. What each member wrote before the barrier
 * (puts, atomics, direct stores), by any path, is visible to every member
 * after it: the caller's pending transfers are completed first.
 */
dart_ret_t dart_barrier(dart_team_t team) DART_NOTHROW;
/** Copies nelem elements of \c root's buf into every member's buf. */
dart_ret_t dart_bcast(void *buf, size_t nelem, dart_datatype_t dtype,
                      dart_team_unit_t root, dart_team_t team) DART_NOTHROW;
/**
 * Unit i receives elements [i*nelem, (i+1)*nelem) of the root's sendbuf
 * (read at the root only) into its recvbuf.
 */
dart_ret_t dart_scatter(const void *sendbuf, void *recvbuf, size_t nelem,
                        dart_datatype_t dtype, dart_team_unit_t root,
                        dart_team_t team) DART_NOTHROW;
/**
 * The root receives unit i's nelem elements at element i*nelem of recvbuf
 * (written at the root only).
 */
dart_ret_t dart_gather(const void *sendbuf, void *recvbuf, size_t nelem,
                       dart_datatype_t dtype, dart_team_unit_t root,
                       dart_team_t team) DART_NOTHROW;
/** Every unit receives unit i's nelem elements at element i*nelem. */
dart_ret_t dart_allgather(const void *sendbuf, void *recvbuf, size_t nelem,
                          dart_datatype_t dtype,
                          dart_team_t team) DART_NOTHROW;
/**
 * Unit i's nrecvelem[i] elements land at element recvdispls[i] of recvbuf
 * on every unit; nsendelem must equal the caller's nrecvelem entry, and
 * dtype must be contiguous. sendbuf == recvbuf means in place (the
 * caller's elements are already at their place in recvbuf).
 */
dart_ret_t dart_allgatherv(const void *sendbuf, size_t nsendelem,
                           dart_datatype_t dtype, void *recvbuf,
                           const size_t *nrecvelem, const size_t *recvdispls,
                           dart_team_t teamid) DART_NOTHROW;
/**
 * Element-wise reduction of every unit's sendbuf into every unit's recvbuf
 * (sendbuf == recvbuf: in place). \c op is a predefined operation that
 * applies to dtype's base type, or one from dart_op_create for dtype.
 * DART_OP_MINMAX reduces {min, max} pairs: nelem counts elements (2 per
 * pair) and must be even.
 */
dart_ret_t dart_allreduce(const void *sendbuf, void *recvbuf, size_t nelem,
                          dart_datatype_t dtype, dart_operation_t op,
                          dart_team_t team) DART_NOTHROW;
/**
 * Unit j receives elements [i*nelem, (i+1)*nelem) of unit i's sendbuf at
 * element i*nelem of its recvbuf.
 */
dart_ret_t dart_alltoall(const void *sendbuf, void *recvbuf, size_t nelem,
                         dart_datatype_t dtype, dart_team_t team) DART_NOTHROW;
/** Like dart_allreduce, with the result in the root's recvbuf only. */
dart_ret_t dart_reduce(const void *sendbuf, void *recvbuf, size_t nelem,
                       dart_datatype_t dtype, dart_operation_t op,
                       dart_team_unit_t root, dart_team_t team) DART_NOTHROW;

/**@}*/

/**
 * \name Two-sided messages between global units
 *
 * Messages between global unit ids, with tags from 0 to MPI's tag limit,
 * on the runtime's own communicator (they never match the application's
 * MPI messages). Each call returns when its buffers are done with, serving
 * others' one-sided operations while it waits.
 */
/**@{*/

/** Sends nelem elements to \c unit; returns when sendbuf may be reused. */
dart_ret_t dart_send(const void *sendbuf, size_t nelem, dart_datatype_t dtype,
                     int tag, dart_global_unit_t unit) DART_NOTHROW;
/** Receives nelem elements with \c tag from \c unit into recvbuf. */
dart_ret_t dart_recv(void *recvbuf, size_t nelem, dart_datatype_t dtype,
                     int tag, dart_global_unit_t unit) DART_NOTHROW;
/**
 * A send to \c dest and a receive from \c src, posted together (units may
 * exchange with each other without deadlock).
 */
dart_ret_t dart_sendrecv(const void *sendbuf, size_t send_nelem,
                         dart_datatype_t send_dtype, int send_tag,
                         dart_global_unit_t dest, void *recvbuf,
                         size_t recv_nelem, dart_datatype_t recv_dtype,
                         int recv_tag, dart_global_unit_t src) DART_NOTHROW;

/**@}*/

/**
 * \name One-sided transfers and their completion
 *
 * Not collective. \c nelem counts elements of the base type; src_type and
 * dst_type lay them out on the source and destination side (the remote
 * side of a get is its src_type). The whole access must lie in the target
 * unit's part.
 */
/**@{*/

/**
 * Starts copying nelem elements from the memory at gptr into dest. dest
 * holds them after dart_flush_local or dart_flush on gptr (or
 * dart_flush_all/_local_all on a gptr of the same allocation).
 */
dart_ret_t dart_get(void *dest, dart_gptr_t gptr, size_t nelem,
                    dart_datatype_t src_type,
                    dart_datatype_t dst_type) DART_NOTHROW;
/**
 * Starts copying nelem elements from src to the memory at gptr. src may be
 * reused after dart_flush_local; the data is at the target after
 * dart_flush (or the _all forms on a gptr of the same allocation).
 */
dart_ret_t dart_put(dart_gptr_t gptr, const void *src, size_t nelem,
                    dart_datatype_t src_type,
                    dart_datatype_t dst_type) DART_NOTHROW;
/**
 * Completes, at both ends, all transfers of the caller to gptr's unit in
 * gptr's allocation (and the caller's queued accumulates).
 */
dart_ret_t dart_flush(dart_gptr_t gptr) DART_NOTHROW;
/**
 * Completes, at both ends, all transfers of the caller to every unit in
 * gptr's allocation (and the caller's queued accumulates).
 */
dart_ret_t dart_flush_all(dart_gptr_t gptr) DART_NOTHROW;
/**
 * Completes locally the caller's transfers to gptr's unit in gptr's
 * allocation: put sources may be reused, get destinations are filled. It
 * may complete them remotely too.
 */
dart_ret_t dart_flush_local(dart_gptr_t gptr) DART_NOTHROW;
/** dart_flush_local for every unit of gptr's allocation. */
dart_ret_t dart_flush_local_all(dart_gptr_t gptr) DART_NOTHROW;

/**
 * Like dart_get, completed through *handle: DART_HANDLE_NULL when the
 * transfer is already complete (own part, shared memory, CMA, nelem 0), and
 * after a failure (as DART-MPI: waiting on it then waits for nothing).
 */
dart_ret_t dart_get_handle(void *dest, dart_gptr_t gptr, size_t nelem,
                           dart_datatype_t src_type, dart_datatype_t dst_type,
                           dart_handle_t *handle) DART_NOTHROW;
/**
 * Like dart_put, completed through *handle: DART_HANDLE_NULL when the
 * transfer is already complete (own part, shared memory, CMA, nelem 0), and
 * after a failure (as DART-MPI: waiting on it then waits for nothing).
 */
dart_ret_t dart_put_handle(dart_gptr_t gptr, const void *src, size_t nelem,
                           dart_datatype_t src_type, dart_datatype_t dst_type,
                           dart_handle_t *handle) DART_NOTHROW;
/**
 * Completes the operation at both ends, frees the handle and sets *handle
 * to DART_HANDLE_NULL. DART_HANDLE_NULL is DART_OK; a handle already freed
 * is DART_ERR_INVAL.
 */
dart_ret_t dart_wait(dart_handle_t *handle) DART_NOTHROW;
/**
 * dart_wait on each of n handles. All are checked before any is completed:
 * one freed handle is DART_ERR_INVAL and changes none of them.
 */
dart_ret_t dart_waitall(dart_handle_t handles[], size_t n) DART_NOTHROW;
/**
 * Completes the operation locally (a put's source may be reused, a get's
 * destination is filled), frees the handle and sets it to
 * DART_HANDLE_NULL.
 */
dart_ret_t dart_wait_local(dart_handle_t *handle) DART_NOTHROW;
/** dart_wait_local on each of n handles, all checked first. */
dart_ret_t dart_waitall_local(dart_handle_t handles[], size_t n) DART_NOTHROW;
/**
 * Tests for local completion. Here a test completes what it tests (as
 * dart_wait_local does, in bounded time): on DART_OK *result is 1 and the
 * handle is freed and set to DART_HANDLE_NULL.
 */
dart_ret_t dart_test_local(dart_handle_t *handle, int32_t *result) DART_NOTHROW;
/** Like dart_test_local, for completion at both ends (as dart_wait). */
dart_ret_t dart_test(dart_handle_t *handleptr,
                     int32_t *is_finished) DART_NOTHROW;
/** dart_test_local on n handles: *result 1 when all are complete. */
dart_ret_t dart_testall_local(dart_handle_t handles[], size_t n,
                              int32_t *result) DART_NOTHROW;
/** dart_test on n handles: *is_finished 1 when all are complete. */
dart_ret_t dart_testall(dart_handle_t handles[], size_t n,
                        int32_t *is_finished) DART_NOTHROW;
/**
 * Frees a handle without completing it and sets it to DART_HANDLE_NULL; the
 * operation still completes, and a flush of its allocation completes it.
 */
dart_ret_t dart_handle_free(dart_handle_t *handle) DART_NOTHROW;

/** Copies nelem elements from the memory at gptr into dest; complete on
 * return. */
dart_ret_t dart_get_blocking(void *dest, dart_gptr_t gptr, size_t nelem,
                             dart_datatype_t src_type,
                             dart_datatype_t dst_type) DART_NOTHROW;
/**
 * Copies nelem elements from src to the memory at gptr; complete at both
 * ends on return (the data is visible at the target).
 */
dart_ret_t dart_put_blocking(dart_gptr_t gptr, const void *src, size_t nelem,
                             dart_datatype_t src_type,
                             dart_datatype_t dst_type) DART_NOTHROW;

/**@}*/

/**
 * \name Atomics
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
 * included; so do registered memory and every allocation under DART_SHM=0
 * (in teams of more than one unit), and dart_memalloc blocks beyond the
 * initial pool use MPI's. dart_gptr_atomic_path (dart_ext.h) tells which
 * applies. A plain put, get or direct store to a location is not atomic
 * with respect to atomics on it. Each atomic is complete on return and
 * ordered before the caller's later operations, except the queued and the
 * started accumulates below. Thread-safe under DART_THREAD_MULTIPLE.
 *
 * Queued accumulates: a single-element SUM, BAND, BOR or BXOR on an integer
 * that the caller reaches with CPU atomics (dart_accumulate and
 * dart_accumulate_blocking_local) may wait in a queue of 32, its operand
 * copied at the call. The queue is applied when full and at the caller's
 * next flush, barrier, other atomic, segment free or dart_exit, so that the
 * caller's later atomics, flushes and barriers see it. Nothing is queued
 * under DART_THREAD_MULTIPLE.
 *
 * Started accumulates: SUM, BAND, BOR and BXOR on 32- and 64-bit integers
 * along the UCX path are started, their operands copied at the call, and
 * complete by the caller's next flush, barrier, other atomic on the UCX
 * path, segment free or dart_exit, like the queued ones (not under
 * DART_THREAD_MULTIPLE, where each completes on return).
 */
/**@{*/

/**
 * values[i] op= into element i at gptr, for i < nelem, each element
 * atomically. Complete on return, or queued or started (see above) and
 * complete after a flush, as DART promises. values may be reused on
 * return.
 */
dart_ret_t dart_accumulate(dart_gptr_t gptr, const void *values, size_t nelem,
                           dart_datatype_t dtype,
                           dart_operation_t op) DART_NOTHROW;
/** Like dart_accumulate (which also lets values be reused on return). */
dart_ret_t dart_accumulate_blocking_local(dart_gptr_t gptr, const void *values,
                                          size_t nelem, dart_datatype_t dtype,
                                          dart_operation_t op) DART_NOTHROW;
/**
 * *result = the element at gptr, which becomes *result op *value, in one
 * atomic step; complete on return. value may be NULL for DART_OP_NO_OP.
 */
dart_ret_t dart_fetch_and_op(dart_gptr_t gptr, const void *value,
                             void *result, dart_datatype_t dtype,
                             dart_operation_t op) DART_NOTHROW;
/**
 * If the element at gptr equals *compare it becomes *value; *result is the
 * element before, either way; complete on return. Integral types only.
 */
dart_ret_t dart_compare_and_swap(dart_gptr_t gptr, const void *value,
                                 const void *compare, void *result,
                                 dart_datatype_t dtype) DART_NOTHROW;
/**@}*/

#ifdef __cplusplus
}
#endif

#endif /* DART__COMMUNICATION_H_ */
