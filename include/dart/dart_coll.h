/**
 * \file dart_coll.h
 * libdart extension: non-blocking collectives and the all-to-all with
 * counts per unit.
 *
 * Each dart_X_handle starts what dart_X of dart_communication.h does and
 * returns a handle at once; dart_wait, dart_waitall, dart_test or
 * dart_testall on it completes it like the handle of a transfer, and
 * dart_handle_free gives it up while the collective still completes
 * (its buffers must stay valid until it has). The buffers may not be
 * touched until then (the send buffers not changed, the receive buffers
 * not read).
 *
 * Order: a team's collectives, blocking or not, run in the order the
 * units call them, which must be the same on every unit, as in MPI. A
 * unit starts a collective once it has finished its previous ones on the
 * team: one started while others are in flight waits in the team's queue
 * and is started by the next dart_test, dart_wait or collective call on
 * the team. Progress: a handle collective advances in those calls, and
 * every blocking collective on its team first completes the team's
 * handle collectives.
 *
 * dart_barrier_handle completes the caller's pending transfers when it is
 * called, as dart_barrier does; the barrier's guarantee (every member's
 * earlier writes visible to every member) holds once the handle is
 * complete.
 *
 * Errors: those of the blocking forms (DART_ERR_INVAL with one log line,
 * nothing started), and DART_ERR_INVAL for a NULL handle. A mismatch
 * between units' calls (kind, counts, type, operation, root) is an error
 * of dart_wait where it is detected: between node peers always, across
 * nodes with DART_COLL_CHECK=1.
 */
#ifndef DART__COLL_H_
#define DART__COLL_H_

#include <dart/dart_communication.h>
#include <dart/dart_types.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** dart_barrier, completed by the handle. */
dart_ret_t dart_barrier_handle(dart_team_t team,
                               dart_handle_t *handle) DART_NOTHROW;

/** dart_bcast, completed by the handle. */
dart_ret_t dart_bcast_handle(void *buf, size_t nelem, dart_datatype_t dtype,
                             dart_team_unit_t root, dart_team_t team,
                             dart_handle_t *handle) DART_NOTHROW;

/** dart_scatter, completed by the handle. */
dart_ret_t dart_scatter_handle(const void *sendbuf, void *recvbuf,
                               size_t nelem, dart_datatype_t dtype,
                               dart_team_unit_t root, dart_team_t team,
                               dart_handle_t *handle) DART_NOTHROW;

/** dart_gather, completed by the handle. */
dart_ret_t dart_gather_handle(const void *sendbuf, void *recvbuf,
                              size_t nelem, dart_datatype_t dtype,
                              dart_team_unit_t root, dart_team_t team,
                              dart_handle_t *handle) DART_NOTHROW;

/** dart_allgather, completed by the handle. */
dart_ret_t dart_allgather_handle(const void *sendbuf, void *recvbuf,
                                 size_t nelem, dart_datatype_t dtype,
                                 dart_team_t team,
                                 dart_handle_t *handle) DART_NOTHROW;

/** dart_allgatherv, completed by the handle. */
dart_ret_t dart_allgatherv_handle(const void *sendbuf, size_t nsendelem,
                                  dart_datatype_t dtype, void *recvbuf,
                                  const size_t *nrecvelem,
                                  const size_t *recvdispls, dart_team_t team,
                                  dart_handle_t *handle) DART_NOTHROW;

/** dart_allreduce, completed by the handle. */
dart_ret_t dart_allreduce_handle(const void *sendbuf, void *recvbuf,
                                 size_t nelem, dart_datatype_t dtype,
                                 dart_operation_t op, dart_team_t team,
                                 dart_handle_t *handle) DART_NOTHROW;

/** dart_reduce, completed by the handle. */
dart_ret_t dart_reduce_handle(const void *sendbuf, void *recvbuf,
                              size_t nelem, dart_datatype_t dtype,
                              dart_operation_t op, dart_team_unit_t root,
                              dart_team_t team,
                              dart_handle_t *handle) DART_NOTHROW;

/** dart_alltoall, completed by the handle. */
dart_ret_t dart_alltoall_handle(const void *sendbuf, void *recvbuf,
                                size_t nelem, dart_datatype_t dtype,
                                dart_team_t team,
                                dart_handle_t *handle) DART_NOTHROW;

/**
 * All-to-all with counts per unit (MPI_Alltoallv), for sorting and
 * transposes: unit j's recvbuf receives nrecvelem[i] elements from unit i
 * at element recvdispls[i]; they are unit i's nsendelem[j] elements at
 * element senddispls[j] of its sendbuf, so that nsendelem[j] on unit i
 * must equal nrecvelem[i] on unit j. dtype must be contiguous; sendbuf
 * and recvbuf are distinct buffers. Counts and displacements are in
 * elements and may exceed INT_MAX.
 */
dart_ret_t dart_alltoallv(const void *sendbuf, const size_t *nsendelem,
                          const size_t *senddispls, dart_datatype_t dtype,
                          void *recvbuf, const size_t *nrecvelem,
                          const size_t *recvdispls,
                          dart_team_t team) DART_NOTHROW;

/** dart_alltoallv, completed by the handle. */
dart_ret_t dart_alltoallv_handle(const void *sendbuf, const size_t *nsendelem,
                                 const size_t *senddispls,
                                 dart_datatype_t dtype, void *recvbuf,
                                 const size_t *nrecvelem,
                                 const size_t *recvdispls, dart_team_t team,
                                 dart_handle_t *handle) DART_NOTHROW;

#ifdef __cplusplus
}
#endif

#endif /* DART__COLL_H_ */
