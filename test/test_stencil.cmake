# examples/stencil: Jacobi with dart_put halo exchange must match a serial
# run of the whole grid bit for bit, at every layout; 61 rows leave units
# with different row counts.
dart_add_test(stencil SOURCES ${PROJECT_SOURCE_DIR}/examples/stencil.c
              LAYOUTS node upn1 upn2 noshm ARGS -n 61 -i 20)
# The same with the dart_put_signal exchange (-s), on the UCX transport
# too: its puts and signal words take other paths than MPI's.
dart_add_test(stencil_signal SOURCES ${PROJECT_SOURCE_DIR}/examples/stencil.c
              LAYOUTS node upn1 upn2 noshm UCX ARGS -s -n 61 -i 20)
# The same with the halo plan (-p): private buffers, a bcast of
# dart_plan_create_halo's plan overlapped with the interior sweep.
dart_add_test(stencil_plan SOURCES ${PROJECT_SOURCE_DIR}/examples/stencil.c
              LAYOUTS node upn1 upn2 noshm UCX ARGS -p -n 61 -i 20)
