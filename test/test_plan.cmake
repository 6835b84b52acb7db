# Communication plans (dart_plan.h): random star forests with every
# operation and type, halos in 1-3 dimensions, a plan reused 1000 times,
# bad input; on every layout (node peers in shared memory, emulated nodes
# and noshm over MPI, UCX over its own transports and TCP).
# Node peers read roots in place from messages of 64 bytes on (most of
# the small graphs' messages; the smallest are packed).
dart_add_test(plan SOURCES test_plan.c LAYOUTS node upn1 upn2 noshm UCX
              ENV DART_PLAN_LEND=64)
# With the progress thread (DART_THREAD_MULTIPLE), also between emulated
# nodes over UCX.
dart_add_test(plan_progress SOURCES test_plan.c UNITS 2 4
              LAYOUTS ${DART_THREAD_LAYOUTS} upn1.ucx upn1.tcp
              ENV DART_PROGRESS_THREAD=1 LABELS threads)
# Device buffers: on a CUDA device (label gpu: skipped without one), and
# on emulated devices (label gpuemu), which run everywhere.
dart_add_test(plan_gpu SOURCES test_plan.c UNITS 1 2 4 LAYOUTS node upn1
              LABELS gpu ENV DART_PLAN_LEND=64 ARGS --device)
dart_add_test(plan_gpu_emu SOURCES test_plan.c UNITS 1 2 3 4
              LAYOUTS node upn1 upn2 LABELS gpuemu
              ENV DART_GPU_EMULATE=1 DART_PLAN_LEND=64 ARGS --device)
# The _stream forms between kernels on a stream (a CUDA device only).
if(DART_HAVE_CUDA_KERNELS)
  dart_add_test(plan_gpu_stream SOURCES test_plan_stream.cu UNITS 1 2 4
                LAYOUTS node upn1 LABELS gpu)
  target_link_libraries(test_plan_gpu_stream PRIVATE CUDA::cudart)
endif()
