# The headers compile as C++11, 14 and 17 with warnings as errors.
enable_language(CXX)
foreach(std 11 14 17)
  dart_add_test(cxx${std} SOURCES test_cxx.cpp UNITS 1 2 LAYOUTS node upn1)
  set_target_properties(test_cxx${std} PROPERTIES CXX_STANDARD ${std}
                        CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF)
endforeach()
