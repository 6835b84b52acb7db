/* The device's atomics (kernel.cu), callable from C. */
#ifndef DART__GPU__KERNEL_H_
#define DART__GPU__KERNEL_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int kind;    /* dart__atomic_kind_t */
  int type;    /* dart_datatype_t, basic, at most 8 bytes */
  int op;      /* dart_operation_t */
  unsigned size;
  size_t nelem;
  void *target;         /* device memory (own or IPC-mapped) */
  const void *operands; /* nelem operands, device-readable, or NULL */
  unsigned char compare[8];
  void *result;         /* device-writable, or NULL */
} dart__gpu_kernel_args_t;

/* Launches the operation on stream; returns the cudaError_t of the launch. */
int dart__gpu__kernel_atomic(const dart__gpu_kernel_args_t *args,
                             void *stream);

/* A pattern of types/pattern.h in device memory (the same blocks, their
 * first pairs, the index lists), and whether a side lists an element
 * twice (then the pairs that write it run in order, on one thread). */
typedef struct {
  long long a, b;
  size_t len, n1, n2;
  long long a1, b1, a2, b2;
} dart__gpu_kernel_block_t;

typedef struct {
  const dart__gpu_kernel_block_t *blocks;
  const size_t *first; /* nblocks + 1: the first pair of each block */
  size_t nblocks;
  const unsigned *a_at, *b_at; /* index form (a_at != NULL) */
  size_t nelem;
  int a_dups, b_dups;
} dart__gpu_kernel_pattern_t;

typedef struct {
  int kind; /* dart__gpu_pattern_kind_t */
  int type; /* dart_datatype_t, basic */
  int op;   /* dart_operation_t (REPLACE only for long double) */
  size_t es;
  dart__gpu_kernel_pattern_t pattern;
  char *a, *b, *c;
} dart__gpu_kernel_pattern_args_t;

/* Launches a pattern operation on stream; the cudaError_t of the launch. */
int dart__gpu__kernel_pattern(const dart__gpu_kernel_pattern_args_t *args,
                              void *stream);

#ifdef __cplusplus
}
#endif

#endif
