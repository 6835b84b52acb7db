/*
 * Atomics on device memory: compare-and-swap loops at system scope, so
 * that they are atomic with respect to every process that maps the memory
 * (the owner and its node peers through IPC). Elements narrower than a
 * word change inside their aligned 32-bit word.
 *
 * Access patterns (types/pattern.h) on device memory, for plans: a thread
 * per pair; where a written element appears twice (several leaves on one
 * root), a thread per written element that walks its pairs in order, so
 * that results do not depend on the schedule (the host's, bit for bit).
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

/* ---- access patterns (types/pattern.h) ---- */

enum { PATTERN_PACK = 0, PATTERN_APPLY, PATTERN_APPLY_TO_B, PATTERN_FETCH };

/* Pair k's elements: i of a, j of b. */
__device__ static void pair_at(const dart__gpu_kernel_pattern_t &p, size_t k,
                               size_t *i, size_t *j)
{
  if (p.a_at) {
    *i = p.a_at[k];
    *j = p.b_at ? p.b_at[k] : k;
    return;
  }
  size_t lo = 0, hi = p.nblocks; /* the block whose pairs hold k */
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (p.first[mid] <= k) lo = mid; else hi = mid;
  }
  const dart__gpu_kernel_block_t &blk = p.blocks[lo];
  size_t e = k - p.first[lo], row = blk.n1 * blk.len;
  size_t i2 = e / row, i1 = e % row / blk.len, off = e % blk.len;
  *i = (size_t)(blk.a + (long long)i2 * blk.a2 + (long long)i1 * blk.a1) +
       off;
  *j = (size_t)(blk.b + (long long)i2 * blk.b2 + (long long)i1 * blk.b1) +
       off;
}

/* dst = dst op src for one element: bytes where the op replaces (any
 * size), else the type's arithmetic */
__device__ static void combine(const dart__gpu_kernel_pattern_args_t &a,
                               char *dst, const char *src)
{
  if (a.op == DART_OP_REPLACE) {
    memcpy(dst, src, a.es);
    return;
  }
  unsigned long long next;
  dart__types__apply_value(a.type, a.op, dst, src, &next);
  memcpy(dst, &next, a.es);
}

__device__ static void pattern_pair(const dart__gpu_kernel_pattern_args_t &a,
                                    size_t k)
{
  size_t i, j;
  pair_at(a.pattern, k, &i, &j);
  char *ai = a.a + i * a.es, *bj = a.b + j * a.es;
  switch (a.kind) {
  case PATTERN_PACK: memcpy(bj, ai, a.es); break;
  case PATTERN_APPLY: combine(a, ai, bj); break;
  case PATTERN_APPLY_TO_B: combine(a, bj, ai); break;
  default: { /* PATTERN_FETCH: the operand first, as the host (c may be
                 b's buffer) */
    unsigned char operand[16];
    memcpy(operand, bj, a.es);
    memcpy(a.c + j * a.es, ai, a.es);
    combine(a, ai, (const char *)operand);
  }
  }
}

__global__ static void pattern_kernel(dart__gpu_kernel_pattern_args_t a)
{
  for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
       k < a.pattern.nelem; k += (size_t)gridDim.x * blockDim.x)
    pattern_pair(a, k);
}

/* A thread per group of pairs that write one element: the group's pairs
 * in order (in_order: one group of every pair). */
__global__ static void pattern_kernel_groups(
    dart__gpu_kernel_pattern_args_t a, const size_t *order,
    const size_t *first, size_t ngroups)
{
  for (size_t g = blockIdx.x * (size_t)blockDim.x + threadIdx.x; g < ngroups;
       g += (size_t)gridDim.x * blockDim.x) {
    size_t end = first ? first[g + 1] : a.pattern.nelem;
    for (size_t t = first ? first[g] : 0; t < end; t++)
      pattern_pair(a, order ? order[t] : t);
  }
}

static unsigned blocks_for(size_t threads_needed, unsigned threads)
{
  size_t blocks = (threads_needed + threads - 1) / threads;
  return (unsigned)(blocks > 4096 ? 4096 : blocks);
}

int dart__gpu__kernel_pattern(const dart__gpu_kernel_pattern_args_t *args,
                              void *stream)
{
  const dart__gpu_kernel_pattern_t &p = args->pattern;
  const unsigned threads = 256;
  cudaStream_t s = (cudaStream_t)stream;
  cudaGetLastError();
  if (p.nelem == 0) return (int)cudaSuccess;
  switch (args->schedule) {
  case DART__GPU_PAIRS_BY_A:
  case DART__GPU_PAIRS_BY_B: {
    int side = args->schedule == DART__GPU_PAIRS_BY_B;
    pattern_kernel_groups<<<blocks_for(p.ngroups[side], threads), threads, 0,
                            s>>>(*args, p.order[side], p.group_first[side],
                                 p.ngroups[side]);
    break;
  }
  case DART__GPU_PAIRS_IN_ORDER:
    pattern_kernel_groups<<<1, 1, 0, s>>>(*args, NULL, NULL, 1);
    break;
  default:
    pattern_kernel<<<blocks_for(p.nelem, threads), threads, 0, s>>>(*args);
  }
  return (int)cudaGetLastError();
}
