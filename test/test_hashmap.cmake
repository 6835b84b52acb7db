# examples/hashmap: concurrent inserts (some of one key from two units),
# replacements and finds on a table of global slots must lose nothing, at
# every layout (upnK and noshm: the slots' atomics go through MPI); and the
# same with active messages (-a: each operation one call to the owner; -b:
# many at once in batches per owner).
dart_add_test(hashmap SOURCES ${PROJECT_SOURCE_DIR}/examples/hashmap.c
              LAYOUTS node upn1 upn2 noshm UCX ARGS -n 200)
dart_add_test(hashmap_am SOURCES ${PROJECT_SOURCE_DIR}/examples/hashmap.c
              LAYOUTS node upn1 upn2 noshm UCX ARGS -a -n 200)
dart_add_test(hashmap_batch SOURCES ${PROJECT_SOURCE_DIR}/examples/hashmap.c
              LAYOUTS node upn1 upn2 noshm UCX ARGS -b -n 200)
