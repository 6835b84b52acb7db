# Atomics: every type and operation, contention with mixed operations, the
# path rule (CPU atomics only where all units share the memory).
dart_add_test(atomics SOURCES test_atomics.c LAYOUTS node upn1 upn2 noshm UCX)
# The same on memory whose owners apply its atomics (DART_OWNER_ATOMICS:
# CPU atomics on the node, active messages to the owner beyond).
dart_add_test(atomics_owner SOURCES test_atomics.c
              LAYOUTS node upn1 upn2 noshm UCX ENV DART_OWNER_ATOMICS=1)
# Started without dartrun's settings: dart_init picks working one-sided
# components itself before MPI_Init.
dart_add_test(atomics_mpi_defaults SOURCES test_atomics.c UNITS 2 4
              LAYOUTS node upn1 MPI_DEFAULTS)
# Queued accumulates applied with locked instructions where the CPU would
# run them in hardware transactions (the runs above), with the same checks.
dart_add_test(atomics_locked SOURCES test_atomics.c LAYOUTS node
              ENV DART_HTM=0)
