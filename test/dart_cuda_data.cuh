/* The kernels of the programs that launch their own (the tests' .cu
 * files and bench_gpu_plan): data to write and check, and a wait. */
#ifndef DART_CUDA_DATA_CUH_
#define DART_CUDA_DATA_CUH_

#include <stddef.h>

/* The test data: element i of seed's data. */
__global__ void produce(int *p, size_t n, int seed)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    p[i] = seed * 1000003 + (int)i;
}

/* Counts into *bad the elements of p that are not produce(seed)'s. */
__global__ void consume(const int *p, size_t n, int seed,
                        unsigned long long *bad)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    if (p[i] != seed * 1000003 + (int)i) atomicAdd(bad, 1ull);
}

/* Keeps the stream busy for ns nanoseconds of the device's clock. */
__global__ void busy(unsigned long long ns)
{
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  while (now - start < ns);
}

#endif
