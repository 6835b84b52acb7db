# The path each gptr takes (self/shm/mpi) and the per-path operation counts.
dart_add_test(paths SOURCES test_paths.c LAYOUTS node upn1 upn2 noshm UCX)
