/**
 * \file dart_initialization.h
 * Start-up and shut-down of the runtime.
 *
 * Thread safety: dart_init, dart_init_thread and dart_exit must be called
 * once, by one thread of each unit (the thread that initialised MPI, if the
 * application did). dart_initialized and dart_abort may be called from any
 * thread at any time.
 */
#ifndef DART__INITIALIZATION_H_
#define DART__INITIALIZATION_H_

#include <dart/dart_types.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Initialises the runtime (and MPI, unless the application already did;
 * then dart_exit leaves MPI to the application). Collective over all units.
 * Reads the environment once (see DART_INFO=1 for the table).
 *
 * \return DART_ERR_INVAL for an environment variable with an invalid value
 *         (one log line names it); DART_ERR_OTHER if already initialised,
 *         if MPI was finalised already or if start-up failed.
 */
dart_ret_t dart_init(int *argc, char ***argv) DART_NOTHROW;

/**
 * Like dart_init, asking for the thread support level in *thread_safety;
 * on return *thread_safety holds the level provided.
 */
dart_ret_t dart_init_thread(int *argc, char ***argv,
                            dart_thread_support_level_t *thread_safety)
    DART_NOTHROW;

/**
 * Shuts the runtime down: frees every team, segment, datatype and handle
 * still alive. Collective over all units. Later calls return
 * DART_ERR_NOTINIT.
 */
dart_ret_t dart_exit(void) DART_NOTHROW;

/** True between a successful dart_init and dart_exit. */
bool dart_initialized(void) DART_NOTHROW;

/**
 * Ends the whole job with \c errorcode, from any unit, without waiting for
 * the others.
 */
void dart_abort(int errorcode) DART_NOTHROW __attribute__((noreturn));

#ifdef __cplusplus
}
#endif

#endif /* DART__INITIALIZATION_H_ */
