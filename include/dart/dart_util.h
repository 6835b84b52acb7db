/**
 * \file dart_util.h
 * Helper macros of the DART interface.
 */
#ifndef DART__UTIL_H_
#define DART__UTIL_H_

#include <dart/dart_types.h>

#define DART_MAYBE_UNUSED __attribute__((unused))
#define DART_INLINE static inline DART_MAYBE_UNUSED
#define DART_NORETURN __attribute__((noreturn))

#endif /* DART__UTIL_H_ */
