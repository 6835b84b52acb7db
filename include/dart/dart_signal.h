/**
 * \file dart_signal.h
 * libdart extension: point-to-point completion.
 *
 * DART 3.2 completes one-sided operations only through flushes and
 * barriers. Here a producer puts data and then updates a signal word in
 * the consumer's memory; a consumer that sees the signal also sees the
 * data (after OpenSHMEM 1.5's shmem_put_signal and
 * shmem_signal_wait_until). A halo exchange then needs neither a flush of
 * every unit nor a barrier: each unit puts its boundary with a signal and
 * waits for its own halos' signals.
 *
 * Signal words are uint64_t, 8-byte aligned, in any segment (host or
 * device memory). They are atomics under the atomics rule of
 * dart_communication.h: update them with dart_signal, dart_put_signal or
 * the atomic functions (DART_TYPE_ULONGLONG), never with dart_put or CPU
 * stores, and read them with dart_signal_read or the waits.
 *
 * The waits take signal words in the caller's own part. While they wait
 * they serve the other units' operations on every transport (the progress
 * of dart_communication.h) and yield the core as other waits do.
 *
 * Fetching atomics with a handle: the result is valid after dart_wait or
 * dart_test on the handle says it is complete, or after a flush of the
 * target; the handle is DART_HANDLE_NULL when the operation completed at
 * once. Over UCX, 4- and 8-byte compare-and-swap and fetch-and-op with
 * DART_OP_SUM (integers), DART_OP_REPLACE or DART_OP_NO_OP stay in flight
 * until the handle completes; over MPI, compare-and-swap and fetch-and-op
 * with DART_OP_NO_OP do.
 */
#ifndef DART__SIGNAL_H_
#define DART__SIGNAL_H_

#include <dart/dart_communication.h>
#include <dart/dart_globmem.h>
#include <dart/dart_types.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** How a signal word is updated: set to the value, or the value added. */
typedef enum { DART_SIGNAL_SET = 0, DART_SIGNAL_ADD = 1 } dart_signal_op_t;

/** What a wait compares the signal word with (word cmp value). */
typedef enum {
  DART_CMP_EQ = 0,
  DART_CMP_NE,
  DART_CMP_GT,
  DART_CMP_GE,
  DART_CMP_LT,
  DART_CMP_LE
} dart_cmp_t;

/**
 * Puts nelem elements from src to dst (as dart_put_blocking does with its
 * types), then updates the signal word: a unit that sees the update sees
 * the data. The data and the signal may be in different segments and on
 * different units. Returns once src may be reused. Where the signal's
 * atomics go through UCX, the update may still be in flight then, and so
 * may the data where it went through UCX to the same unit (put, fence,
 * atomic): dart_flush of the signal's unit, dart_flush_all or a barrier
 * completes them, and they move on while the caller waits in libdart.
 */
dart_ret_t dart_put_signal(dart_gptr_t dst, const void *src, size_t nelem,
                           dart_datatype_t src_type,
                           dart_datatype_t dst_type, dart_gptr_t signal,
                           uint64_t value, dart_signal_op_t op) DART_NOTHROW;

/** dart_put_signal with a handle for the local completion of src
 * (dart_wait_local, dart_test_local) or both (dart_wait, dart_test);
 * DART_HANDLE_NULL where the operation completed at once. */
dart_ret_t dart_put_signal_handle(dart_gptr_t dst, const void *src,
                                  size_t nelem, dart_datatype_t src_type,
                                  dart_datatype_t dst_type,
                                  dart_gptr_t signal, uint64_t value,
                                  dart_signal_op_t op,
                                  dart_handle_t *handle) DART_NOTHROW;

/** Updates the signal word alone, after everything this unit put before
 * to the signal's unit. */
dart_ret_t dart_signal(dart_gptr_t signal, uint64_t value,
                       dart_signal_op_t op) DART_NOTHROW;

/** Waits until the caller's own signal word compares true with value;
 * *seen (may be NULL) gets the word that did. */
dart_ret_t dart_signal_wait_until(dart_gptr_t signal, dart_cmp_t cmp,
                                  uint64_t value, uint64_t *seen) DART_NOTHROW;

/** Waits until every one of the n signal words compares true. */
dart_ret_t dart_signal_wait_until_all(const dart_gptr_t *signals, size_t n,
                                      dart_cmp_t cmp,
                                      uint64_t value) DART_NOTHROW;

/** Waits until one of the n signal words compares true; *index gets it. */
dart_ret_t dart_signal_wait_until_any(const dart_gptr_t *signals, size_t n,
                                      dart_cmp_t cmp, uint64_t value,
                                      size_t *index) DART_NOTHROW;

/** Waits until at least one of the n signal words compares true; indices
 * (room for n) gets every one that does, ascending, and *count how many. */
dart_ret_t dart_signal_wait_until_some(const dart_gptr_t *signals,
                                       size_t n, dart_cmp_t cmp,
                                       uint64_t value, size_t *indices,
                                       size_t *count) DART_NOTHROW;

/** *flag: 1 if the caller's own signal word compares true now, else 0. */
dart_ret_t dart_signal_test(dart_gptr_t signal, dart_cmp_t cmp,
                            uint64_t value, int *flag) DART_NOTHROW;

/** The value of a signal word (any unit's), read atomically. */
dart_ret_t dart_signal_read(dart_gptr_t signal, uint64_t *value) DART_NOTHROW;

/** dart_fetch_and_op whose result is valid once the handle completes. */
dart_ret_t dart_fetch_and_op_handle(dart_gptr_t gptr, const void *value,
                                    void *result, dart_datatype_t dtype,
                                    dart_operation_t op,
                                    dart_handle_t *handle) DART_NOTHROW;

/** dart_compare_and_swap whose result is valid once the handle
 * completes. */
dart_ret_t dart_compare_and_swap_handle(dart_gptr_t gptr, const void *value,
                                        const void *compare, void *result,
                                        dart_datatype_t dtype,
                                        dart_handle_t *handle) DART_NOTHROW;

#ifdef __cplusplus
}
#endif

#endif
