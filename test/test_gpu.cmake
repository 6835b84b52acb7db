# GPU memory: on a CUDA device (label gpu: skipped without one), and the
# same program on emulated devices (label gpuemu), which runs everywhere;
# up to 4 units (each moves 64 MiB through device memory).
# Emulated nodes take the staging path on the MPI transport; on the UCX
# transport (.ucx, .tcp) UCX moves the device memory (to UCX, an emulated
# device's memory is host memory, as a CUDA-aware UCX's device memory is),
# and with DART_GPU_UCX=0 staged transfers are served while units poll UCX.
# The UCX runs take the largest UCX unit count up to 4. Sanitizer builds
# move 8 MiB where the others move 64.
set(gpu_units "")
foreach(n IN LISTS DART_TEST_UNITS)
  if(n LESS_EQUAL 4)
    list(APPEND gpu_units ${n})
  endif()
endforeach()
set(gpu_ucx_units ${DART_UCX_SMALL_UNITS})
if(gpu_ucx_units LESS 2)
  set(gpu_ucx_units 2)
endif()
set(gpu_args "")
if(DART_SANITIZE)
  set(gpu_args --big 8)
endif()
dart_add_test(gpu SOURCES test_gpu.c UNITS ${gpu_units}
              LAYOUTS node upn1 upn2 LABELS gpu ARGS ${gpu_args})
dart_add_test(gpu_emu SOURCES test_gpu.c UNITS ${gpu_units}
              LAYOUTS node upn1 upn2 LABELS gpuemu ENV DART_GPU_EMULATE=1
              ARGS ${gpu_args})
dart_add_test(gpu_emu_ucx SOURCES test_gpu.c UNITS ${gpu_ucx_units}
              LAYOUTS upn2.ucx upn1.tcp LABELS gpuemu ENV DART_GPU_EMULATE=1
              ARGS --remote ucx ${gpu_args})
dart_add_test(gpu_emu_stage_ucx SOURCES test_gpu.c UNITS ${gpu_ucx_units}
              LAYOUTS upn1.tcp LABELS gpuemu
              ENV DART_GPU_EMULATE=1 DART_GPU_UCX=0 ARGS ${gpu_args})
# Stream-ordered puts and gets between kernels (a CUDA device only).
if(DART_HAVE_CUDA_KERNELS)
  dart_add_test(gpu_stream SOURCES test_gpu_stream.cu UNITS 1 2 4
                LAYOUTS node LABELS gpu)
  target_link_libraries(test_gpu_stream PRIVATE CUDA::cudart)
endif()
# DART_INFO=1 names the device backend, the paths of device memory and
# whether UCX reports CUDA memory support: across nodes on the MPI
# transport (staged), and on UCX (the emulated devices' memory through it).
# gpu_info_test(NAME TRANSPORT OTHER_NODES UCX_CUDA): unit 0's DART_INFO
# lines about the device on 2 emulated nodes: how device memory on other
# nodes moves, and what UCX says of CUDA memory (the other unit's log lines
# may come between them).
function(gpu_info_test name transport other_nodes ucx_cuda)
  add_test(NAME ${name}
           COMMAND ${DART_LAUNCHER} -n 2 --timeout ${DART_TEST_TIMEOUT}
                   --units-per-node 1 $<TARGET_FILE:test_init>)
  set(any_lines "([^\n]*\n)*")
  set_tests_properties(${name} PROPERTIES TIMEOUT 90 LABELS "mpi;gpuemu"
    ENVIRONMENT "DART_INFO=1;DART_GPU_EMULATE=1;DART_TRANSPORT=${transport};${DART_SANITIZER_ENV}"
    PASS_REGULAR_EXPRESSION "gpu: emulated, 1 device\\(s\\), unit 0 on device 0\n${any_lines}  device memory: own and node peers' ipc \\(emulated handles\\), other nodes ${other_nodes}\n${any_lines}  UCX reports CUDA memory support: ${ucx_cuda}\n")
endfunction()
gpu_info_test(gpu_info mpi "stage \\(pinned host buffers over MPI\\)" "no")
if(DART_HAVE_UCX)
  gpu_info_test(gpu_info_ucx ucx "ucx \\(registered device memory, atomics too\\)" "no \\(emulated device memory is host memory to UCX\\)")
endif()
