# The installed package works for clients (find_package and pkg-config).
if(DART_SANITIZE)
  return() # the consumer is not built with the sanitizer runtime
endif()
add_test(NAME install.consumer
         COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR}
                 -DSOURCE_DIR=${CMAKE_CURRENT_SOURCE_DIR}/consumer
                 -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/install-test
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/consumer/check.cmake)
set_tests_properties(install.consumer PROPERTIES TIMEOUT 300 LABELS install)
