# examples/gups: HPCC RandomAccess with atomics must leave no wrong entry,
# with dart_accumulate and with dart_fetch_and_op, at every layout.
dart_add_test(gups SOURCES ${PROJECT_SOURCE_DIR}/examples/gups.c
              LAYOUTS node upn1 upn2 noshm UCX ARGS -n 12)
# The fetching variant differs in one call, which on the MPI path makes two
# round trips (read, then compare-and-swap): a quarter of the table keeps
# the run within seconds where the units share a core. The sanitizer build
# runs it at 2 units.
set(gups_fetch_units ${DART_TEST_UNITS})
if(DART_SANITIZE)
  set(gups_fetch_units 2)
endif()
dart_add_test(gups_fetch SOURCES ${PROJECT_SOURCE_DIR}/examples/gups.c
              UNITS ${gups_fetch_units} LAYOUTS node upn1 upn2 noshm
              ARGS -n 10 -f)
# Owner-applied atomics (DART_OWNER_ATOMICS): the updates of other nodes
# batched into active messages to the owners, HPCC's check the same.
dart_add_test(gups_owner SOURCES ${PROJECT_SOURCE_DIR}/examples/gups.c
              LAYOUTS upn1 upn2 noshm UCX ENV DART_OWNER_ATOMICS=1
              ARGS -n 12)
dart_add_test(gups_owner_fetch SOURCES ${PROJECT_SOURCE_DIR}/examples/gups.c
              UNITS 2 4 LAYOUTS upn1 noshm ENV DART_OWNER_ATOMICS=1
              ARGS -n 10 -f)
