# Memory UCX allocated (DART_UCX_ALLOC): unit 0's puts, gets and atomics on
# other units' parts complete while those wait in MPI_Recv without DART
# progress. Only layouts where no node peer shares a part and UCX runs over
# shared memory (over tcp every part needs its owner's progress).
dart_add_test(ucx_alloc SOURCES test_ucx_alloc.c UNITS 2 4 8
              LAYOUTS upn1.ucx noshm.ucx)
target_link_libraries(test_ucx_alloc PRIVATE MPI::MPI_C)
