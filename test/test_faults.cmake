# Faults (scripts/fault_run.sh checks each run): a unit calls dart_abort or
# dies by a signal while the others wait on it in a barrier, in blocking
# puts and gets on its memory, or for a lock it holds; the job must end on
# its own with dart_abort's code (any failure for a signal), name the unit,
# and leave no process and no shared memory behind. faults.exit: dart_exit
# with everything still allocated exits 0, leaves no shared memory and
# (sanitizer build) no leak.
#
# Each case: units, layout, fault, wait, victim (-1: the last unit) and
# dart_abort's code. Every fault meets every wait on the physical node and
# on emulated nodes of one unit (the MPI transport), with the first, a
# middle and the last unit as the victim; not every combination (each run
# takes seconds).
set(DART_FAULT_CASES
    2:node:abort:rma:0:43        2:node:segv:barrier:-1:0
    2:upn1:abort:lock:-1:44      2:upn1:kill:barrier:0:0
    4:node:abort:barrier:-1:42   4:node:abort:lock:1:44
    4:node:kill:rma:2:0          4:node:segv:lock:0:0
    4:upn1:abort:rma:-1:43       4:upn1:abort:barrier:1:42
    4:upn1:kill:lock:-1:0        4:upn1:segv:rma:0:0)
set(DART_FAULT_EXIT_RUNS 2:upn1 4:node)
# A job that dies leaves the sanitizers nothing to find that the release
# runs miss; the exit runs are where they matter (leaks).
if(DART_SANITIZE)
  set(DART_FAULT_CASES "")
endif()

dart_test_program(test_faults test_faults.c)

set(fault_driver ${CMAKE_CURRENT_SOURCE_DIR}/scripts/fault_run.sh)
math(EXPR fault_ctest_timeout "${DART_TEST_TIMEOUT} + 30")
# A unit that faults leaves everything allocated: no leak report there.
set(fault_env "")
if(DART_SANITIZE)
  set(fault_env "ASAN_OPTIONS=detect_leaks=0"
                "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
endif()

foreach(fault_case IN LISTS DART_FAULT_CASES)
  string(REPLACE ":" ";" fields "${fault_case}")
  list(GET fields 0 n)
  list(GET fields 1 layout)
  list(GET fields 2 fault)
  list(GET fields 3 wait)
  list(GET fields 4 victim)
  list(GET fields 5 code)
  dart_layout(${layout} ${n} run layout_args layout_env)
  if(NOT n IN_LIST DART_TEST_UNITS OR NOT run)
    continue()
  endif()
  set(unit ${victim})
  set(vname v${victim})
  if(victim EQUAL -1)
    math(EXPR unit "${n} - 1")
    set(vname last)
  endif()
  if(fault STREQUAL "abort")
    set(status ${code})
    set(named abort)
  elseif(DART_MPI_IS_OPEN_MPI)
    set(status nonzero)
    set(named signal)
  else()
    # MPICH's hydra names one process of those that died, not always the
    # unit that died first (fault_run.sh)
    set(status nonzero)
    set(named signal-any)
  endif()
  set(name faults.${fault}.${wait}.${vname}.n${n}.${layout})
  add_test(NAME ${name}
           COMMAND ${fault_driver} ${status} ${named} ${unit}
                   ${DART_TEST_TIMEOUT}
                   ${DART_LAUNCHER} -n ${n} ${layout_args}
                   $<TARGET_FILE:test_faults> ${fault} ${wait} ${victim}
                   ${code})
  set_tests_properties(${name} PROPERTIES TIMEOUT ${fault_ctest_timeout}
    LABELS "mpi;faults" ENVIRONMENT "${fault_env};${layout_env}")
endforeach()

foreach(run_case IN LISTS DART_FAULT_EXIT_RUNS)
  string(REPLACE ":" ";" fields "${run_case}")
  list(GET fields 0 n)
  list(GET fields 1 layout)
  dart_layout(${layout} ${n} run layout_args layout_env)
  if(NOT n IN_LIST DART_TEST_UNITS OR NOT run)
    continue()
  endif()
  set(name faults.exit.n${n}.${layout})
  add_test(NAME ${name}
           COMMAND ${fault_driver} 0 none - ${DART_TEST_TIMEOUT}
                   ${DART_LAUNCHER} -n ${n} ${layout_args}
                   $<TARGET_FILE:test_faults> exit)
  set_tests_properties(${name} PROPERTIES TIMEOUT ${fault_ctest_timeout}
    LABELS "mpi;faults"
    ENVIRONMENT "${DART_SANITIZER_ENV};DART_LOCAL_POOL=1M;${layout_env}")
endforeach()
