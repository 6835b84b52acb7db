# Start-up and shut-down (dart_init, dart_exit, NOTINIT before/after) and
# dart_init_thread.
dart_add_test(init SOURCES test_init.c)
dart_add_test(init_thread SOURCES test_init_thread.c)
# MPI initialised by the application: dart_exit leaves it running.
dart_add_test(init_mpi SOURCES test_init_mpi.c UNITS 1 2 4)
target_link_libraries(test_init_mpi PRIVATE MPI::MPI_C)
# The same under MPI's own one-sided configuration (Debian's Open MPI:
# osc/rdma, which crashes in MPI_Compare_and_swap): atomics through MPI
# fail cleanly instead.
dart_add_test(init_mpi_defaults SOURCES test_init_mpi.c UNITS 1 2 4
              LAYOUTS node upn1 MPI_DEFAULTS)
target_link_libraries(test_init_mpi_defaults PRIVATE MPI::MPI_C)
