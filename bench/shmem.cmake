# The OpenSHMEM baseline (shmem.c), built with the platform's OpenSHMEM
# compiler wrapper when there is one (Open MPI's oshcc here) and run by
# run-shmem, which starts it with oshrun and judges it by its "done" line
# (Open MPI's shmem_finalize may crash here after everything has run).
# Without oshcc nothing is built and the runner leaves out the shmem rows.

find_program(DART_OSHCC oshcc DOC "OpenSHMEM C compiler wrapper")
if(NOT DART_OSHCC)
  message(STATUS "bench: no oshcc found: the OpenSHMEM baseline "
                 "(bench_shmem) is not built")
  return()
endif()
message(STATUS "bench: OpenSHMEM baseline with ${DART_OSHCC}")

set(DART_BENCH_SHMEM ${CMAKE_CURRENT_BINARY_DIR}/bench_shmem)
set(shmem_flags -std=c11 -O2 -g -Wall -Wextra)
if(DART_WERROR)
  list(APPEND shmem_flags -Werror)
endif()
add_custom_command(
  OUTPUT ${DART_BENCH_SHMEM}
  COMMAND ${DART_OSHCC} ${shmem_flags} -I${CMAKE_CURRENT_SOURCE_DIR}
          -I${PROJECT_SOURCE_DIR}/examples
          ${CMAKE_CURRENT_SOURCE_DIR}/shmem.c -o ${DART_BENCH_SHMEM}
  DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/shmem.c
          ${CMAKE_CURRENT_SOURCE_DIR}/bench.h
          ${PROJECT_SOURCE_DIR}/examples/hpcc.h
  COMMENT "Building bench_shmem with oshcc"
  VERBATIM)
add_custom_target(bench_shmem ALL DEPENDS ${DART_BENCH_SHMEM})

if(DART_BUILD_TESTS)
  foreach(n 1 2)
    set(test_name bench_shmem.n${n}.node)
    add_test(NAME ${test_name}
             COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/run-shmem
                     ${DART_BENCH_SHMEM} ${n} --smoke --layout node)
    set_tests_properties(${test_name} PROPERTIES TIMEOUT 150
      SKIP_RETURN_CODE 77 LABELS "mpi;bench"
      ENVIRONMENT "RUN_SHMEM_TIMEOUT=120")
  endforeach()
endif()
