/* The device's kernels (kernel.cu), callable from C. */
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

/* How a device runs a pattern op's pairs: each on a thread of its own
 * where they write distinct elements; else a thread per written element
 * of side a (or b), walking its pairs in order; else (FETCH where c's
 * elements repeat) every pair in order on one thread. */
typedef enum {
  DART__GPU_PAIRS_APART = 0,
  DART__GPU_PAIRS_BY_A,
  DART__GPU_PAIRS_BY_B,
  DART__GPU_PAIRS_IN_ORDER
} dart__gpu_schedule_t;

/* A pattern of types/pattern.h in device memory (the same blocks, their
 * first pairs, the index lists), and its groups by side a and b
 * (dart__pattern_groups_t) where that side lists an element twice. */
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
  const size_t *order[2], *group_first[2]; /* by side a, b; NULL: none */
  size_t ngroups[2];
} dart__gpu_kernel_pattern_t;

typedef struct {
  int kind;     /* dart__gpu_pattern_kind_t */
  int schedule; /* dart__gpu_schedule_t */
  int type;     /* dart_datatype_t, basic */
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
