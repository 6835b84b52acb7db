/* Small copies for the hot paths. */
#ifndef DART__BASE__COPY_H_
#define DART__BASE__COPY_H_

#include <stddef.h>
#include <string.h>

/* A copy whose word sizes are single moves, not a call into the C
 * library's size dispatch. */
static inline __attribute__((always_inline)) void
dart__base__copy(void *dst, const void *src, size_t bytes)
{
  if (__builtin_expect(bytes == 8, 1)) memcpy(dst, src, 8);
  else if (bytes == 4) memcpy(dst, src, 4);
  else if (bytes == 2) memcpy(dst, src, 2);
  else if (bytes == 1) memcpy(dst, src, 1);
  else memcpy(dst, src, bytes);
}

/* Asks for the cache line at addr for writing, ahead of an update there
 * (compilers emit a read prefetch unless built for a CPU that has
 * PREFETCHW; older CPUs execute it as a no-op). */
static inline __attribute__((always_inline)) void
dart__base__prefetch_write(const void *addr)
{
#if defined(__x86_64__)
  __asm__("prefetchw %0" : : "m"(*(const char *)addr));
#else
  __builtin_prefetch(addr, 1);
#endif
}

#endif
