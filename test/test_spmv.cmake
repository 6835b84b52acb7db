# examples/spmv: y = A x with ghosts from a plan's bcast and z = A^T w with
# a reduce of the same plan must match the serial product exactly, at
# every layout; 997 rows leave the last unit a shorter block.
dart_add_test(spmv SOURCES ${PROJECT_SOURCE_DIR}/examples/spmv.c
              LAYOUTS node upn1 upn2 noshm UCX ARGS -n 997 -k 5 -i 4)
# 6 rows: at 4 and 8 units some units own none (a plan with no roots and
# no leaves on them), and most entries are ghosts.
dart_add_test(spmv_tiny SOURCES ${PROJECT_SOURCE_DIR}/examples/spmv.c
              LAYOUTS node upn1 ARGS -n 6 -k 3 -i 3)
