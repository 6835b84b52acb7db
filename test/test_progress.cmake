# Progress: a unit waiting in a collective (barrier, allreduce, bcast, recv,
# team creation) serves the atomics, puts and accumulates aimed at it.
dart_add_test(progress SOURCES test_progress.c LAYOUTS node upn1 upn2 noshm UCX)
