/*
 * Progress, a runtime service. MPI's one-sided operations may need their
 * target to enter MPI (Open MPI's osc/pt2pt serves them from its progress
 * engine), UCX's emulated RMA needs the target to drive its worker, and
 * staged transfers to device memory need the owner to copy: while a unit
 * computes without calling DART, or blocks in a plain MPI call, its peers'
 * operations on its memory wait.
 *
 * So each transport that needs its target's help adds a source here at
 * dart_init, and every wait of the runtime drives them all: the waits for
 * MPI requests and barriers below, every turn of a spin on another unit
 * (dart__progress__wait_turn), every DART__PROGRESS_SERVE_EVERY-th call
 * that completes in place (dart__progress__served), and the progress
 * thread (DART_PROGRESS_THREAD=1). Nobody else calls a transport's
 * progress, so a new transport is served everywhere by adding its source.
 */
#ifndef DART__PROGRESS__PROGRESS_H_
#define DART__PROGRESS__PROGRESS_H_

#include <dart/dart_types.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct {
  const char *name;
  /* drives the source once; how many operations it served (a count that
   * restarts a waiter's fast spins) */
  unsigned (*poll)(void);
  /* whether a wait inside MPI leaves it unserved now, so that waits must
   * poll instead of blocking in MPI (NULL: MPI's waits drive it) */
  bool (*outside_mpi)(void);
  /* one poll costs as much as a small transfer: polled every
   * DART__PROGRESS_SERVE_EVERY-th serve, and by waits once they are no
   * longer short */
  bool costly;
} dart__progress_source_t;

/* Sources are added during dart_init and removed in dart_exit, while no
 * other thread of the runtime runs; the table is read without a lock.
 * Adding fails (logged as func) when the table is full. */
dart_ret_t dart__progress__add(const char *func,
                               const dart__progress_source_t *source);
void dart__progress__remove(const dart__progress_source_t *source);

/*
 * A unit that polls through DART calls that complete in place (its own
 * memory, node peers', CPU atomics) must still serve the operations its
 * peers aim at it: every DART__PROGRESS_SERVE_EVERY-th such call drives
 * the sources once (one progress call each would cost more than the call
 * itself; counts lost between threads only delay the next one).
 * dart__progress__serve returns DART_OK, so that the hot paths end in it
 * as a tail call (n: the operation's count, taken before its fence) and
 * save no registers for it.
 */
#define DART__PROGRESS_SERVE_EVERY 32
dart_ret_t dart__progress__serve(void) __attribute__((cold, noinline));

static inline __attribute__((always_inline)) dart_ret_t
dart__progress__served(uint64_t n)
{
  return __builtin_expect(n % DART__PROGRESS_SERVE_EVERY != 0, 1)
             ? DART_OK
             : dart__progress__serve();
}

/* One turn of waiting for another unit: serve the operations others aim
 * at us (they may be what we wait for), then back off. */
void dart__progress__wait_turn(unsigned *spins);
/* One turn of waiting for what the others' operations bring into this
 * unit's memory (a signal word): those operations may need this unit's
 * every source (MPI's one-sided ones wait for it inside MPI), so the
 * costly sources come every turn once the wait is no longer short, or
 * from the first turn where costly (what is waited for comes through
 * them: each of its round trips waits for this unit's next poll). */
void dart__progress__wait_turn_served(unsigned *spins, bool costly);

/* Whether a wait must poll the sources instead of blocking in MPI: MPI's
 * own waits serve MPI's one-sided operations, but not the sources outside
 * MPI (UCX, active messages, staging). */
bool dart__progress__must_poll(void);

/* Waits for n MPI requests while driving the sources: a unit blocked in a
 * plain MPI call would starve the operations aimed at it. Logs as func
 * when MPI fails. */
dart_ret_t dart__progress__wait(const char *func, int n, MPI_Request reqs[]);

/* A barrier on comm that serves others' operations while it waits: the
 * entry of every collective call that could otherwise block in MPI while
 * its peers still target this unit. */
dart_ret_t dart__progress__barrier(const char *func, MPI_Comm comm);

/* The progress thread, when DART_PROGRESS_THREAD asks for one: started at
 * the end of dart_init, stopped first thing in dart_exit. */
dart_ret_t dart__progress__start(void);
void dart__progress__stop(void);

#endif
