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

#ifdef __cplusplus
}
#endif

#endif
