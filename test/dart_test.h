/*
 * Checks for the multi-unit test programs. A failed check prints one line
 * with the unit, place and values and counts; dart_test_finish() combines the
 * counts of all units, shuts the runtime down and gives the exit status.
 */
#ifndef DART_TEST_H_
#define DART_TEST_H_

#include <dart/dart.h>
#include <dart/dart_ext.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DART_TEST_SKIP 77

static int dart_test_failures;
static int dart_test_unit = -1;
static int dart_test_units;

static inline void dart_test_fail(const char *file, int line, const char *what)
{
  if (dart_test_failures < 20) {
    fprintf(stderr, "[unit %d] FAIL %s:%d: %s\n", dart_test_unit, file, line,
            what);
  }
  dart_test_failures++;
}

/* Fails at a line of the test with a formatted message. */
static inline void dart_test_failf(const char *file, int line, const char *fmt,
                                   ...) __attribute__((format(printf, 3, 4)));
static inline void dart_test_failf(const char *file, int line, const char *fmt,
                                   ...)
{
  char msg[600];
  va_list args;
  va_start(args, fmt);
  vsnprintf(msg, sizeof msg, fmt, args);
  va_end(args);
  dart_test_fail(file, line, msg);
}
#define FAIL_AT(line, ...) dart_test_failf(__FILE__, (line), __VA_ARGS__)
#define FAILF(...) FAIL_AT(__LINE__, __VA_ARGS__)

/* A well-mixed 64-bit hash (splitmix64's finaliser) for test patterns. */
static inline uint64_t dart_test_mix64(uint64_t x)
{
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

#define CHECK(cond)                                        \
  do {                                                     \
    if (!(cond)) dart_test_fail(__FILE__, __LINE__, #cond); \
  } while (0)

/* An expression that must return DART_OK. */
#define CHECK_OK(expr)                                                   \
  do {                                                                   \
    dart_ret_t check_ret_ = (expr);                                      \
    if (check_ret_ != DART_OK) {                                         \
      char check_msg_[256];                                              \
      snprintf(check_msg_, sizeof check_msg_, "%s returned %d", #expr,   \
               (int)check_ret_);                                         \
      dart_test_fail(__FILE__, __LINE__, check_msg_);                    \
    }                                                                    \
  } while (0)

/* An expression that must return the given error code. */
#define CHECK_RET(expr, want)                                            \
  do {                                                                   \
    dart_ret_t check_ret_ = (expr);                                      \
    if (check_ret_ != (want)) {                                          \
      char check_msg_[256];                                              \
      snprintf(check_msg_, sizeof check_msg_, "%s returned %d, not %d",  \
               #expr, (int)check_ret_, (int)(want));                     \
      dart_test_fail(__FILE__, __LINE__, check_msg_);                    \
    }                                                                    \
  } while (0)

/* Two integers that must be equal; prints both. */
#define CHECK_EQ(a, b)                                                   \
  do {                                                                   \
    long long check_a_ = (long long)(a), check_b_ = (long long)(b);      \
    if (check_a_ != check_b_) {                                          \
      char check_msg_[256];                                              \
      snprintf(check_msg_, sizeof check_msg_, "%s == %s: %lld != %lld",  \
               #a, #b, check_a_, check_b_);                              \
      dart_test_fail(__FILE__, __LINE__, check_msg_);                    \
    }                                                                    \
  } while (0)

/* Initialises DART (aborting the test if that fails) and notes the unit
 * and the number of units. */
static inline void dart_test_init(int *argc, char ***argv)
{
  dart_global_unit_t me;
  size_t units;
  if (dart_init(argc, argv) != DART_OK || dart_myid(&me) != DART_OK ||
      dart_size(&units) != DART_OK) {
    fprintf(stderr, "dart_init failed\n");
    exit(1);
  }
  dart_test_unit = me.id;
  dart_test_units = (int)units;
}

/* Ends the program as skipped unless it runs 2 units or more on the UCX
 * transport (which falls back to MPI where UCX does not start). */
static inline void dart_test_need_ucx(void)
{
  dart_path_t remote, peer_private;
  if (dart_transport_paths(&remote, &peer_private) != DART_OK) {
    fprintf(stderr, "[unit %d] dart_transport_paths failed\n",
            dart_test_unit);
    exit(1);
  }
  if (dart_test_units >= 2 && remote == DART_PATH_UCX) return;
  if (dart_test_unit == 0)
    printf("skipped: needs 2 units and the UCX transport\n");
  dart_exit();
  exit(DART_TEST_SKIP);
}

/* Combines the failure counts of all units and shuts DART down; returns the
 * total number of failures. */
static inline int dart_test_combine_and_exit(void)
{
  int total = 0;
  if (dart_allreduce(&dart_test_failures, &total, 1, DART_TYPE_INT,
                     DART_OP_SUM, DART_TEAM_ALL) != DART_OK) {
    fprintf(stderr, "[unit %d] dart_allreduce of the results failed\n",
            dart_test_unit);
    total = dart_test_failures + 1;
  }
  if (dart_exit() != DART_OK) {
    fprintf(stderr, "[unit %d] dart_exit failed\n", dart_test_unit);
    total++;
  }
  return total;
}

/* Combines the failure counts of all units; returns the exit status. */
static inline int dart_test_finish(void)
{
  int total = dart_test_combine_and_exit();
  if (dart_test_unit == 0) {
    printf("%s: %d failed checks\n", total ? "FAILED" : "PASSED", total);
  }
  return total ? 1 : 0;
}

#endif /* DART_TEST_H_ */
