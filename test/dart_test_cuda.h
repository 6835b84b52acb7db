/* For the tests that launch their own CUDA kernels (.cu). */
#ifndef DART_TEST_CUDA_H_
#define DART_TEST_CUDA_H_

#include <cuda_runtime.h>
#include <dart/dart_memkind.h>

#include "dart_cuda_data.cuh"
#include "dart_test.h"

#define CUDA_OK(call)                                                      \
  do {                                                                     \
    cudaError_t err_ = (call);                                             \
    if (err_ != cudaSuccess)                                               \
      FAILF("%s: %s", #call, cudaGetErrorString(err_));                    \
  } while (0)

/* Ends the program as skipped without a CUDA device (emulated devices
 * run no kernels). */
static inline void dart_test_need_cuda(void)
{
  int device = -1;
  CHECK_OK(dart_memkind_device(&device));
  const char *emu = getenv("DART_GPU_EMULATE");
  if (device >= 0 && !(emu && atoi(emu) > 0)) return;
  if (dart_test_unit == 0) printf("SKIPPED: no CUDA device\n");
  dart_exit();
  exit(DART_TEST_SKIP);
}

#endif
