/*
 * The arithmetic of one atomic element, r = x op y, for the host's
 * compare-and-swap loops (atomic.c) and the device's (src/gpu/kernel.cu):
 * one definition, compiled as C and as CUDA.
 */
#ifndef DART__TYPES__ATOMIC_APPLY_H_
#define DART__TYPES__ATOMIC_APPLY_H_

#include <dart/dart_types.h>
#include <string.h>

#ifdef __CUDACC__
#define DART__HOST_DEVICE __host__ __device__
#else
#define DART__HOST_DEVICE
#endif

/*
 * SUM and PROD go through ARITH: plain for floating point, WRAPPING for
 * integers (unsigned long long arithmetic wraps like the CPU's atomics
 * instead of overflowing a signed type). EXTRA adds the operations of
 * integers only.
 */
#define DART__APPLY(T, ARITH, EXTRA)                                         \
  do {                                                                       \
    T x, y, r;                                                               \
    memcpy(&x, old, sizeof x);                                               \
    memcpy(&y, operand, sizeof y);                                           \
    switch (op) {                                                            \
    case DART_OP_MIN: r = y < x ? y : x; break;                              \
    case DART_OP_MAX: r = y > x ? y : x; break;                              \
    case DART_OP_SUM: r = (T)ARITH(+); break;                                \
    case DART_OP_PROD: r = (T)ARITH(*); break;                               \
    EXTRA                                                                    \
    case DART_OP_REPLACE: r = y; break;                                      \
    default: r = x; break; /* DART_OP_NO_OP */                               \
    }                                                                        \
    memcpy(out, &r, sizeof r);                                               \
  } while (0)
#define DART__PLAIN(o) (x o y)
#define DART__WRAPPING(o) ((unsigned long long)x o (unsigned long long)y)
#define DART__INTEGER_OPS                                                    \
  case DART_OP_BAND: r = x & y; break;                                       \
  case DART_OP_BOR: r = x | y; break;                                        \
  case DART_OP_BXOR: r = x ^ y; break;                                       \
  case DART_OP_LAND: r = x && y; break;                                      \
  case DART_OP_LOR: r = x || y; break;                                       \
  case DART_OP_LXOR: r = !x != !y; break;
#define DART__APPLY_INT(T) DART__APPLY(T, DART__WRAPPING, DART__INTEGER_OPS)
#define DART__APPLY_FLOAT(T) DART__APPLY(T, DART__PLAIN, )

/* *out = *old op *operand for one element of a basic type; operand NULL
 * (NO_OP needs none) reads as old. */
static inline DART__HOST_DEVICE void
dart__types__apply_value(int type, int op, const void *old,
                         const void *operand, void *out)
{
  if (operand == NULL) operand = old;
  switch (type) {
  case DART_TYPE_BYTE: DART__APPLY_INT(signed char); break;
  case DART_TYPE_SHORT: DART__APPLY_INT(short); break;
  case DART_TYPE_INT: DART__APPLY_INT(int); break;
  case DART_TYPE_UINT: DART__APPLY_INT(unsigned); break;
  case DART_TYPE_LONG: DART__APPLY_INT(long); break;
  case DART_TYPE_ULONG: DART__APPLY_INT(unsigned long); break;
  case DART_TYPE_LONGLONG: DART__APPLY_INT(long long); break;
  case DART_TYPE_ULONGLONG: DART__APPLY_INT(unsigned long long); break;
  case DART_TYPE_FLOAT: DART__APPLY_FLOAT(float); break;
  case DART_TYPE_DOUBLE: DART__APPLY_FLOAT(double); break;
#ifndef __CUDA_ARCH__ /* devices have no long double: it never gets there */
  default: DART__APPLY_FLOAT(long double); break; /* DART_TYPE_LONG_DOUBLE */
#else
  default: break;
#endif
  }
}

#endif
