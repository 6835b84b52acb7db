/**
 * \file dart_util.h
 * Helper macros of the DART interface.
 */
#ifndef DART__UTIL_H_
#define DART__UTIL_H_

#include <dart/dart_types.h>

/** Marks a function or variable that may be unused (no compiler warning). */
#define DART_MAYBE_UNUSED __attribute__((unused))
/** Declares a static inline helper in a header (unused copies are fine). */
#define DART_INLINE static inline DART_MAYBE_UNUSED
/** Marks a function that does not return. */
#define DART_NORETURN __attribute__((noreturn))

#endif /* DART__UTIL_H_ */
