# Point-to-point completion (dart_signal.h): put with signal (blocking and
# with handles) in a producer/consumer ring that checks every element of
# every round, the signal on a third unit, exact ADD totals, waits for
# some, any and all of several producers' words with each comparison,
# remote reads, fetching atomics with handles, bad input.
dart_add_test(signal SOURCES test_signal.c LAYOUTS node upn1 upn2 noshm UCX)
# With the progress thread (DART_THREAD_MULTIPLE), at 2 and 4 units, also
# on the UCX transport between emulated nodes.
dart_add_test(signal_progress SOURCES test_signal.c UNITS 2 4
              LAYOUTS ${DART_THREAD_LAYOUTS} upn1.ucx upn1.tcp
              ENV DART_PROGRESS_THREAD=1 LABELS threads ARGS --rounds 2000)
# Device memory ("--gpu": that part only): data and signal words in device
# segments (signals in host memory where atomics on device memory would be
# staged, and a put whose signal word is such device memory refused with
# nothing written), on a CUDA device (label gpu: skipped without one) and on
# emulated devices (label gpuemu), which run everywhere.
dart_add_test(signal_gpu SOURCES test_signal.c UNITS 1 2 4
              LAYOUTS node upn1 LABELS gpu ARGS --gpu)
dart_add_test(signal_gpu_emu SOURCES test_signal.c UNITS 1 2 4
              LAYOUTS node upn1 upn1.ucx LABELS gpuemu
              ENV DART_GPU_EMULATE=1 ARGS --gpu)
