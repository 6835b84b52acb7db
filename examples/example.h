/*
 * What the examples share: stop the whole job on the first DART error,
 * naming the call, a clock and a hash.
 */
#ifndef DART_EXAMPLES_EXAMPLE_H_
#define DART_EXAMPLES_EXAMPLE_H_

#include <dart/dart.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

static inline void example_die(const char *what, dart_ret_t ret)
{
  fprintf(stderr, "%s failed (%d)\n", what, (int)ret);
  dart_abort(1);
}

#define TRY(call)                                  \
  do {                                             \
    dart_ret_t ret_ = (call);                      \
    if (ret_ != DART_OK) example_die(#call, ret_); \
  } while (0)

/* Seconds on a monotonic clock (users define _POSIX_C_SOURCE 200809L
 * before any include). */
static inline double example_now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* splitmix64's finalizer: consecutive inputs land far apart. */
static inline uint64_t example_hash(uint64_t key)
{
  key = (key ^ (key >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  key = (key ^ (key >> 27)) * UINT64_C(0x94d049bb133111eb);
  return key ^ (key >> 31);
}

#endif
