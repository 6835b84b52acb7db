# The user guide's configuration table (doc/guide.md, "Configuration") must
# list every environment variable of libdart's configuration table
# (src/base/env.c), with the default the code has where that is a literal,
# so that the guide cannot drift from the code. The guide may list more.
#
# One file, two roles: test/CMakeLists.txt includes it to register the test
# (label docs), and the test runs it as a script (cmake -P).
if(NOT CMAKE_SCRIPT_MODE_FILE)
  get_filename_component(dart_docs_root ${CMAKE_CURRENT_LIST_DIR} DIRECTORY)
  add_test(NAME docs.config_table
           COMMAND ${CMAKE_COMMAND}
                   -DENV_C=${dart_docs_root}/src/base/env.c
                   -DGUIDE=${dart_docs_root}/doc/guide.md
                   -P ${CMAKE_CURRENT_LIST_FILE})
  set_tests_properties(docs.config_table PROPERTIES LABELS docs TIMEOUT 30)
  return()
endif()

foreach(var ENV_C GUIDE)
  if(NOT EXISTS "${${var}}")
    message(FATAL_ERROR "${var}='${${var}}' does not exist")
  endif()
endforeach()

# The code's table: the entries {"NAME", KIND, "default", ... of env_table[].
file(READ "${ENV_C}" env_c)
string(FIND "${env_c}" "env_table[]" start)
if(start EQUAL -1)
  message(FATAL_ERROR "${ENV_C}: no env_table[] found")
endif()
string(SUBSTRING "${env_c}" ${start} -1 env_c)
string(FIND "${env_c}" "};" end)
string(SUBSTRING "${env_c}" 0 ${end} env_c)
string(REGEX MATCHALL "{\"DART_[A-Z0-9_]+\",[^,]*,[^,]*" entries "${env_c}")
if(NOT entries)
  message(FATAL_ERROR "${ENV_C}: no variables found in env_table[]")
endif()

# The guide's table: rows | `NAME` | default | meaning | of its section
# "## Configuration". Semicolons and brackets would split or join CMake
# list items: they are replaced first.
file(READ "${GUIDE}" guide)
string(REPLACE ";" "," guide "${guide}")
string(REPLACE "[" "(" guide "${guide}")
string(REPLACE "]" ")" guide "${guide}")
string(FIND "${guide}" "\n## Configuration\n" start)
if(start EQUAL -1)
  message(FATAL_ERROR "${GUIDE}: no section \"## Configuration\"")
endif()
math(EXPR start "${start} + 1")
string(SUBSTRING "${guide}" ${start} -1 guide)
string(FIND "${guide}" "\n## " end)
if(NOT end EQUAL -1)
  string(SUBSTRING "${guide}" 0 ${end} guide)
endif()
string(REGEX MATCHALL "\n\\| `DART_[A-Z0-9_]+` \\|[^\n]*" rows "${guide}")
if(NOT rows)
  message(FATAL_ERROR "${GUIDE}: no configuration table under "
                      "\"## Configuration\"")
endif()

set(missing "")
set(checked 0)
foreach(entry IN LISTS entries)
  string(REGEX MATCH "\"(DART_[A-Z0-9_]+)\"" _ "${entry}")
  set(name "${CMAKE_MATCH_1}")
  # the default, where it is a string literal (not a macro)
  set(default "")
  if(entry MATCHES ",[ \t\r\n]*[A-Z_]+,[ \t\r\n]*\"([^\"]*)\"$")
    set(default "${CMAKE_MATCH_1}")
  endif()
  set(row "")
  foreach(r IN LISTS rows)
    if(r MATCHES "^\n\\| `${name}` \\|")
      set(row "${r}")
    endif()
  endforeach()
  if(NOT row)
    list(APPEND missing "${name}: not in the table")
    continue()
  endif()
  math(EXPR checked "${checked} + 1")
  if(NOT default STREQUAL "")
    # second cell: the default column
    string(REGEX MATCH "^\n\\| `${name}` \\|([^|]*)\\|" _ "${row}")
    string(FIND "${CMAKE_MATCH_1}" "`${default}`" at)
    if(at EQUAL -1)
      list(APPEND missing "${name}: default `${default}` not in its row")
    endif()
  endif()
endforeach()

if(missing)
  list(JOIN missing "\n  " text)
  message(FATAL_ERROR "doc/guide.md, \"Configuration\", does not match "
                      "src/base/env.c:\n  ${text}")
endif()
message(STATUS "doc/guide.md lists all ${checked} variables of src/base/env.c")
