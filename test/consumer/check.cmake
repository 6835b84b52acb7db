# Installs the build into a fresh prefix, then builds the consumer with
# find_package(dart) (shared and static) and with pkg-config, and runs them.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(header dart.h dart_types.h dart_globmem.h dart_communication.h
        dart_team_group.h dart_initialization.h dart_config.h dart_util.h
        dart_ext.h)
  if(NOT EXISTS ${prefix}/include/dart/${header})
    message(FATAL_ERROR "header ${header} was not installed")
  endif()
endforeach()

run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/cmake-build
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/cmake-build)
foreach(program consumer consumer_static)
  run(${prefix}/bin/dartrun -n 2 --timeout 60
      ${WORK_DIR}/cmake-build/${program})
  if(NOT last_output MATCHES "consumer: 2 units ok")
    message(FATAL_ERROR "${program} printed: ${last_output}")
  endif()
endforeach()

file(GLOB pc_dir ${prefix}/lib*/pkgconfig ${prefix}/lib/*/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "${pc_dir}")
run(pkg-config --cflags --libs dart)
string(STRIP "${last_output}" flags)
separate_arguments(flags UNIX_COMMAND "${flags}")
run(cc ${SOURCE_DIR}/consumer.c ${flags} -Wl,-rpath,${prefix}/lib
    -o ${WORK_DIR}/consumer_pc)
run(${prefix}/bin/dartrun -n 2 --timeout 60 ${WORK_DIR}/consumer_pc)
if(NOT last_output MATCHES "consumer: 2 units ok")
  message(FATAL_ERROR "the pkg-config build printed: ${last_output}")
endif()
message(STATUS "install, find_package and pkg-config work")
