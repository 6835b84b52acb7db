/**
 * \file dart_synchronization.h
 * Team locks: mutual exclusion among the units of a team.
 *
 * A lock is a queue (MCS): units acquire it in the order they asked for it
 * (FIFO-fair), and a waiting unit watches a word in its own memory instead
 * of polling the network. The queue lives in memory of the lock's team and
 * follows the atomics rule of its allocations (dart_communication.h).
 *
 * Thread safety: a lock is held by a unit. Under DART_THREAD_MULTIPLE,
 * different locks may be used from different threads; the threads of one
 * unit must not acquire or release the same lock concurrently.
 * dart_team_lock_init and dart_team_lock_destroy are collective (one
 * thread per unit).
 */
#ifndef DART__SYNCHRONIZATION_H_
#define DART__SYNCHRONIZATION_H_

#include <dart/dart_types.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A team lock: an opaque handle made by dart_team_lock_init. */
typedef struct dart_lock_struct *dart_lock_t;

/** The null lock handle. */
#define DART_LOCK_NULL ((dart_lock_t)NULL)

/**
 * Collective over team: a new lock, released, in *lock. It takes a small
 * collective allocation on the team (three words per unit).
 */
dart_ret_t dart_team_lock_init(dart_team_t teamid,
                               dart_lock_t *lock) DART_NOTHROW;
/**
 * Collective over the lock's team: frees the lock and sets *lock NULL. No
 * unit may hold it or wait for it (DART_ERR_INVAL if the caller holds it).
 */
dart_ret_t dart_team_lock_destroy(dart_lock_t *lock) DART_NOTHROW;
/**
 * Waits until this unit holds the lock, serving others' operations on its
 * memory meanwhile. DART_ERR_INVAL if this unit holds it already (locks are
 * not recursive) or the lock is not initialised.
 */
dart_ret_t dart_lock_acquire(dart_lock_t lock) DART_NOTHROW;
/**
 * Takes the lock if it is free now: *result 1 if taken, else 0. Never
 * waits. DART_ERR_INVAL if this unit holds it already.
 */
dart_ret_t dart_lock_try_acquire(dart_lock_t lock,
                                 int32_t *result) DART_NOTHROW;
/**
 * Releases a lock this unit holds, passing it to the next in line.
 * DART_ERR_INVAL if this unit does not hold it.
 */
dart_ret_t dart_lock_release(dart_lock_t lock) DART_NOTHROW;
/**
 * True for a lock from dart_team_lock_init that is not destroyed; false for
 * NULL. Destroyed locks' memory is kept for reuse, so a stale copy reads
 * false rather than freed memory (until the memory serves a new lock).
 */
bool dart_lock_initialized(struct dart_lock_struct const *lock) DART_NOTHROW;

#ifdef __cplusplus
}
#endif

#endif /* DART__SYNCHRONIZATION_H_ */
