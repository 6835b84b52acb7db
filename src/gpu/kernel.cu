/*
 * Atomics on device memory: compare-and-swap loops at system scope, so
 * that they are atomic with respect to every process that maps the memory
 * (the owner and its node peers through IPC). Elements narrower than a
 * word change inside their aligned 32-bit word.
 */
#include <stdint.h>

#include "gpu/kernel.h"
#include "types/atomic_apply.h"

enum { KIND_ACCUMULATE = 0, KIND_FETCH_OP = 1, KIND_CAS = 2 };

/* The next value of an element: op applied, or CAS's choice. */
__device__ static bool next_value(const dart__gpu_kernel_args_t &a,
                                  const void *old, const void *operand,
                                  void *next)
{
  if (a.kind == KIND_CAS) {
    for (unsigned i = 0; i < a.size; i++)
      if (((const unsigned char *)old)[i] != a.compare[i]) return false;
    memcpy(next, operand, a.size);
    return true;
  }
  dart__types__apply_value(a.type, a.op, old, operand, next);
  return true;
}

template <typename W>
__device__ static void word_element(const dart__gpu_kernel_args_t &a, W *p,
                                    const void *operand, void *old_out)
{
  W old = *(volatile W *)p, next;
  for (;;) {
    if (!next_value(a, &old, operand, &next)) next = old;
    W seen = atomicCAS_system(p, old, next);
    if (seen == old) break;
    old = seen;
  }
  if (old_out) memcpy(old_out, &old, sizeof old);
}

/* 1 or 2 bytes inside the aligned word that holds them (little endian) */
__device__ static void narrow_element(const dart__gpu_kernel_args_t &a,
                                      char *p, const void *operand,
                                      void *old_out)
{
  unsigned *word = (unsigned *)((uintptr_t)p & ~(uintptr_t)3);
  unsigned shift = (unsigned)((uintptr_t)p & 3) * 8;
  unsigned mask = (a.size == 1 ? 0xffu : 0xffffu) << shift;
  unsigned old = *(volatile unsigned *)word;
  unsigned elem_old;
  for (;;) {
    elem_old = (old & mask) >> shift;
    unsigned elem_next = elem_old;
    unsigned char o[4], n[4];
    memcpy(o, &elem_old, 4);
    if (next_value(a, o, operand, n)) {
      elem_next = 0;
      memcpy(&elem_next, n, a.size);
    }
    unsigned next = (old & ~mask) | ((elem_next << shift) & mask);
    unsigned seen = atomicCAS_system(word, old, next);
    if (seen == old) break;
    old = seen;
  }
  if (old_out) memcpy(old_out, &elem_old, a.size);
}

__global__ static void atomic_kernel(dart__gpu_kernel_args_t a)
{
  const char *operands = (const char *)a.operands;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < a.nelem;
       i += (size_t)gridDim.x * blockDim.x) {
    char *p = (char *)a.target + i * a.size;
    const void *operand = operands ? operands + i * a.size : NULL;
    void *old_out = i == 0 ? a.result : NULL;
    if (a.size == 8)
      word_element(a, (unsigned long long *)p, operand, old_out);
    else if (a.size == 4)
      word_element(a, (unsigned *)p, operand, old_out);
    else
      narrow_element(a, p, operand, old_out);
  }
}

int dart__gpu__kernel_atomic(const dart__gpu_kernel_args_t *args,
                             void *stream)
{
  const unsigned threads = 256;
  size_t blocks = (args->nelem + threads - 1) / threads;
  if (blocks > 1024) blocks = 1024;
  cudaGetLastError(); /* an older error must not be taken for the launch's */
  atomic_kernel<<<(unsigned)blocks, threads, 0, (cudaStream_t)stream>>>(
      *args);
  return (int)cudaGetLastError();
}
