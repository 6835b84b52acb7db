/**
 * \file dart_am.h
 * libdart extension: active messages.
 *
 * A unit sends a message to another unit of a team; a handler that every
 * unit of the team registered runs at the target with the message's
 * payload, once, and may answer with a reply (after UPC++'s RPCs and
 * GASNet's active messages). A data-structure operation (a hash-map
 * insert, a queue push) then costs one message, or one round trip with a
 * reply, instead of several remote atomics and transfers.
 *
 * Where handlers run: at the target, inside the libdart calls that wait
 * (dart_wait, dart_flush, barriers, signal waits, dart_am_flush, a send
 * that waits for room) and in the progress thread (DART_PROGRESS_THREAD);
 * a message to the sender itself runs at once, inside dart_am_send or
 * dart_am_call. A unit that computes without calling libdart runs none,
 * and its senders wait once its queues are full. Handlers of one team run
 * one at a time, and those of one origin in the order it sent them.
 *
 * What handlers may do: read and write the target's own memory (its part
 * of global memory through local pointers, its own variables) and return
 * a reply of at most max_reply bytes. They must not block, call a libdart
 * function that waits, or send messages.
 *
 * Paths: node peers exchange messages through queues in shared memory,
 * other units through MPI two-sided messages on a communicator of the
 * team's own. Memory is bounded: each (origin, target) pair has a queue
 * of DART_AM_QUEUE bytes, and a sender whose queue is full waits for room
 * while it runs the handlers of the messages sent to it. Payloads of any
 * size travel in fragments of an eighth of the queue; the target keeps
 * one buffer per origin as large as that origin's largest message.
 *
 * Under DART_THREAD_MULTIPLE, any thread may send, call, flush and wait.
 */
#ifndef DART__AM_H_
#define DART__AM_H_

#include <dart/dart_communication.h>
#include <dart/dart_globmem.h>
#include <dart/dart_types.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A handler's id on one team (ids of other teams are refused). */
typedef int32_t dart_am_id_t;

/**
 * Runs at the target: origin sent payload (len bytes, valid during the
 * call only). A handler registered with max_reply > 0 may write up to
 * max_reply bytes into reply and their number into *reply_len (0 on
 * entry); a call's reply reaches its caller, a send's is dropped.
 */
typedef void (*dart_am_handler_t)(dart_team_unit_t origin,
                                  const void *payload, size_t len,
                                  void *reply, size_t *reply_len,
                                  void *context);

/**
 * Registers handler with context on team (collective): every unit of the
 * team registers its handlers in the same order, the same functions with
 * the same max_reply; *id gets the same id everywhere. Registrations that
 * differ between units (another order, another function or max_reply)
 * fail on every unit with DART_ERR_INVAL, with nothing registered.
 */
dart_ret_t dart_am_register(dart_team_t team, dart_am_handler_t handler,
                            void *context, size_t max_reply,
                            dart_am_id_t *id) DART_NOTHROW;

/**
 * Sends payload to target's handler id, without a reply. Returns once
 * payload may be reused; the handler runs later (dart_am_flush waits for
 * it). Messages from one unit to one target run in the order sent.
 */
dart_ret_t dart_am_send(dart_team_t team, dart_team_unit_t target,
                        dart_am_id_t id, const void *payload,
                        size_t len) DART_NOTHROW;

/**
 * Sends payload to target's handler id and asks for its reply: once
 * dart_wait or dart_test on *handle says it is complete, reply holds
 * *reply_len bytes. capacity must hold the handler's max_reply. A call to
 * the caller itself runs at once and *handle is DART_HANDLE_NULL.
 */
dart_ret_t dart_am_call(dart_team_t team, dart_team_unit_t target,
                        dart_am_id_t id, const void *payload, size_t len,
                        void *reply, size_t capacity, size_t *reply_len,
                        dart_handle_t *handle) DART_NOTHROW;

/** Returns once every message this unit sent on team has run at its
 * target (running the handlers of messages sent to it meanwhile). */
dart_ret_t dart_am_flush(dart_team_t team) DART_NOTHROW;

/** Removes handler id from team (collective): waits until every unit's
 * messages to it have run; afterwards the id is refused. */
dart_ret_t dart_am_deregister(dart_team_t team,
                              dart_am_id_t id) DART_NOTHROW;

/** Who applies the atomics of a collective allocation. */
typedef enum {
  /** As DART_OWNER_ATOMICS says: DART_AM_ATOMICS_TRANSPORT unless it is
   * 1 (which dart_team_memalloc_aligned follows too). */
  DART_AM_ATOMICS_DEFAULT = 0,
  /** DART 3.2's: CPU atomics where every unit of the team loads and
   * stores the memory, else the remote transport's atomics for every
   * unit, the owner included. */
  DART_AM_ATOMICS_TRANSPORT = 1,
  /** The owner's node, with CPU atomics: units that load and store a
   * part (its owner, node peers) update it directly, the others send the
   * operation to its owner, which applies it. Accumulates are batched per
   * target unit and sent when a batch fills or at a flush (dart_flush,
   * dart_flush_all, dart_barrier), which returns once the owner applied
   * them; fetching operations and compare-and-swap are one round trip
   * each. dart_gptr_atomic_path says DART_PATH_OWNER for the parts
   * reached so. */
  DART_AM_ATOMICS_OWNER = 2
} dart_am_atomics_t;

/** dart_team_memalloc_aligned of host memory whose atomics are applied as
 * \c atomics says (the same on every unit). */
dart_ret_t dart_team_memalloc_atomics(dart_team_t team, size_t nelem,
                                      dart_datatype_t dtype,
                                      dart_am_atomics_t atomics,
                                      dart_gptr_t *gptr) DART_NOTHROW;

#ifdef __cplusplus
}
#endif

#endif /* DART__AM_H_ */
