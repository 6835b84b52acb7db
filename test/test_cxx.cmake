# The headers compile as C++11, 14 and 17 with warnings as errors.
# container: a distributed array, teams per node, a lock-protected counter
# and user reductions, as a C++ container library uses the interface.
enable_language(CXX)
foreach(std 11 14 17)
  dart_add_test(cxx${std} SOURCES test_cxx.cpp UNITS 1 2 LAYOUTS node upn1)
  # the full matrix once; the older standards only show that it builds
  # and runs
  if(std EQUAL 17)
    dart_add_test(container_cxx${std} SOURCES test_container.cpp
                  LAYOUTS node upn1 upn2)
  else()
    dart_add_test(container_cxx${std} SOURCES test_container.cpp
                  UNITS 2 LAYOUTS node upn1)
  endif()
  foreach(test cxx${std} container_cxx${std})
    set_target_properties(test_${test} PROPERTIES CXX_STANDARD ${std}
                          CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF)
    target_compile_options(test_${test} PRIVATE -pedantic)
  endforeach()
endforeach()
