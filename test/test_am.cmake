# Active messages (dart_am.h): random traffic (most messages small, some up
# to 1 MiB) from every unit to random units with every byte and the order
# per pair checked at the target, calls with replies, a flush seen through
# a get, handlers of a second team, bad input; node peers through rings in
# shared memory, emulated nodes and noshm through MPI two-sided.
dart_add_test(am SOURCES test_am.c LAYOUTS node upn1 upn2 noshm UCX TCP8
              ARGS --messages 4000)
target_link_libraries(test_am PRIVATE Threads::Threads)
# 10^5 messages per unit at 2, 4 and 8 units between node peers, between
# emulated nodes and both, over MPI, and at 4 units over UCX (shared memory
# and TCP) (label big: not in the sanitizer build).
dart_add_test(am_soak SOURCES test_am.c UNITS 2 4 LAYOUTS node upn1 upn2
              LABELS big TIMEOUT 300 ARGS --messages 100000)
dart_add_test(am_soak8 SOURCES test_am.c UNITS 8 LAYOUTS node upn2
              LABELS big TIMEOUT 300 ARGS --messages 100000)
dart_add_test(am_soak_ucx SOURCES test_am.c UNITS 4
              LAYOUTS upn1.ucx upn1.tcp upn2.ucx
              LABELS big TIMEOUT 300 ARGS --messages 100000)
# Three threads per unit sending and calling (DART_THREAD_MULTIPLE), and
# the progress thread running handlers beside the application's.
dart_add_test(am_threads SOURCES test_am.c UNITS 2 4
              LAYOUTS ${DART_THREAD_LAYOUTS} LABELS threads
              ARGS --threads 3 --messages 4000)
dart_add_test(am_progress SOURCES test_am.c UNITS 2 4
              LAYOUTS ${DART_THREAD_LAYOUTS} LABELS threads
              ENV DART_PROGRESS_THREAD=1 ARGS --messages 4000)
