# The whole interface: every function of the spec in a table (a missing one
# fails the link), each called with valid input, results and values
# checked. interface.table: the table names every function the public
# headers declare (our extensions' headers aside), and the check finds a
# function left out (interface.table.selftest: a header with one more).
# interface_abort: dart_abort ends the job with its code.
dart_add_test(interface SOURCES test_interface.c)
target_link_libraries(test_interface PRIVATE MPI::MPI_C)
# its H5Pset_fapl_mpio, which dart__io__hdf5__prep_mpio looks up
set_target_properties(test_interface PROPERTIES ENABLE_EXPORTS ON)
target_compile_options(test_interface PRIVATE -pedantic)

set(DART_EXTENSION_HEADERS dart_ext.h dart_memkind.h dart_signal.h dart_coll.h
                            dart_plan.h dart_am.h)
string(JOIN "," extension_headers ${DART_EXTENSION_HEADERS})
set(table_check ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_interface_table.cmake)
add_test(NAME interface.table
         COMMAND ${CMAKE_COMMAND} -DHEADERS=${PROJECT_SOURCE_DIR}/include/dart
                 -DTABLE=${CMAKE_CURRENT_SOURCE_DIR}/test_interface.c
                 -DEXTENSIONS=${extension_headers} -P ${table_check})
set(selftest_headers ${CMAKE_CURRENT_BINARY_DIR}/interface-selftest)
file(CONFIGURE OUTPUT ${selftest_headers}/dart_selftest.h CONTENT
     "dart_ret_t dart_selftest_missing(int unit) DART_NOTHROW;\n")
add_test(NAME interface.table.selftest
         COMMAND ${CMAKE_COMMAND} -DHEADERS=${selftest_headers}
                 -DTABLE=${CMAKE_CURRENT_SOURCE_DIR}/test_interface.c
                 -DEXTENSIONS=${extension_headers} -P ${table_check})
set_tests_properties(interface.table interface.table.selftest PROPERTIES
                     TIMEOUT 60 LABELS interface)
set_tests_properties(interface.table.selftest PROPERTIES
  PASS_REGULAR_EXPRESSION "dart_selftest_missing: declared in a header")

# The aborting unit leaves everything allocated: no leak report there.
set(abort_env "")
if(DART_SANITIZE)
  set(abort_env "ASAN_OPTIONS=detect_leaks=0"
                "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
endif()
foreach(n 1 3)
  foreach(layout node upn1)
    dart_layout(${layout} ${n} run layout_args layout_env)
    if(NOT run)
      continue()
    endif()
    set(name interface_abort.n${n}.${layout})
    add_test(NAME ${name}
             COMMAND ${CMAKE_COMMAND} -DSTATUS=42
                     -P ${CMAKE_CURRENT_SOURCE_DIR}/scripts/expect_status.cmake
                     -- ${DART_LAUNCHER} -n ${n} --timeout ${DART_TEST_TIMEOUT}
                     ${layout_args} $<TARGET_FILE:test_interface> abort 42)
    math(EXPR abort_timeout "${DART_TEST_TIMEOUT} + 30")
    set_tests_properties(${name} PROPERTIES TIMEOUT ${abort_timeout}
      LABELS "mpi" ENVIRONMENT "${abort_env};${layout_env}")
  endforeach()
endforeach()
