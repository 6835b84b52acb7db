# Every public header compiles on its own (self-contained, include guard)
# as ISO C11 and as C++11, 14 and 17 with -Wall -Wextra -Werror -pedantic,
# ours (dart/*.h) and those at DASH's paths (dash/dart/if/*.h),
# without MPI's include paths: a header that warns breaks the build. In
# C++17, where noexcept is part of a function's type, every function the
# header declares is also redeclared with C linkage (an error if the header
# lacks extern "C") and checked to be noexcept (DART_NOTHROW).
include(${PROJECT_SOURCE_DIR}/cmake/DartHeaderFunctions.cmake)
enable_language(CXX)
file(GLOB dart_public_headers CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/include/dart/*.h
     ${PROJECT_SOURCE_DIR}/include/dash/dart/if/*.h)
# the generated checks follow the functions a header declares
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${dart_public_headers})

set(header_check_dir ${CMAKE_CURRENT_BINARY_DIR}/headers)
set(c_sources "")
set(cxx_sources "")
foreach(header IN LISTS dart_public_headers)
  file(RELATIVE_PATH file ${PROJECT_SOURCE_DIR}/include ${header})
  string(REGEX REPLACE "[/.]" "_" name "${file}")
  set(include "#include <${file}>\n#include <${file}>\n")
  file(CONFIGURE OUTPUT ${header_check_dir}/${name}.c
       CONTENT "/* ${file} on its own, twice */\n${include}" @ONLY)
  list(APPEND c_sources ${header_check_dir}/${name}.c)

  dart_header_functions(${header} functions)
  set(checks "")
  foreach(f IN LISTS functions)
    string(APPEND checks "extern \"C\" decltype(${f}) ${f};\n"
           "static_assert(nothrow_function(&${f}) != 0,\n"
           "              \"${f}: DART_NOTHROW\");\n")
  endforeach()
  file(CONFIGURE OUTPUT ${header_check_dir}/${name}.cpp CONTENT
"// ${file} on its own, twice; its functions: C linkage, noexcept
${include}#if __cplusplus >= 201703L
namespace {
// 1: noexcept; 0: not; -1: a type these cannot take apart (clang keeps
// __attribute__((noreturn)) in the function type; GCC does not)
template <class R, class... A>
constexpr int nothrow_function(R (*)(A...) noexcept) { return 1; }
template <class R, class... A>
constexpr int nothrow_function(R (*)(A...)) { return 0; }
template <class T>
constexpr int nothrow_function(T) { return -1; }
}  // namespace
${checks}#endif
" @ONLY)
  list(APPEND cxx_sources ${header_check_dir}/${name}.cpp)
endforeach()

set(header_check_flags -Wall -Wextra -Werror -pedantic)
add_library(dart_headers_c11 OBJECT ${c_sources})
set_target_properties(dart_headers_c11 PROPERTIES
  C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_compile_options(dart_headers_c11 PRIVATE ${header_check_flags}
                       -Wstrict-prototypes)
target_include_directories(dart_headers_c11 PRIVATE
                           ${PROJECT_SOURCE_DIR}/include)
foreach(std 11 14 17)
  add_library(dart_headers_cxx${std} OBJECT ${cxx_sources})
  set_target_properties(dart_headers_cxx${std} PROPERTIES
    CXX_STANDARD ${std} CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF)
  target_compile_options(dart_headers_cxx${std} PRIVATE ${header_check_flags})
  target_include_directories(dart_headers_cxx${std} PRIVATE
                             ${PROJECT_SOURCE_DIR}/include)
endforeach()
