# The structure of src/ (doc/design.md, "Modules"), checked so that it stays
# as designed:
#  - structure.layers: the folders include each other without a cycle
#    (each only folders below it), and the order they fall into is printed;
#  - structure.paths: outside a path's own files (and dart_init's probe of
#    MPI), no code names a transport's library: UCX (ucp_, ucs_,
#    dart__ucx__), CUDA's runtime (cuda*), MPI's one-sided transfers and
#    atomics, or cross-memory attach. Comments may.
#
# One file, two roles: test/CMakeLists.txt includes it to register the
# tests (label docs), and the tests run it as a script (cmake -P).
if(NOT CMAKE_SCRIPT_MODE_FILE)
  get_filename_component(dart_structure_root ${CMAKE_CURRENT_LIST_DIR}
                         DIRECTORY)
  foreach(check layers paths)
    add_test(NAME structure.${check}
             COMMAND ${CMAKE_COMMAND} -DSRC=${dart_structure_root}/src
                     -DCHECK=${check} -P ${CMAKE_CURRENT_LIST_FILE})
    set_tests_properties(structure.${check} PROPERTIES LABELS docs
                         TIMEOUT 60)
  endforeach()
  return()
endif()

cmake_minimum_required(VERSION 3.13) # IN_LIST
if(NOT IS_DIRECTORY "${SRC}")
  message(FATAL_ERROR "SRC='${SRC}' is not a folder")
endif()
file(GLOB_RECURSE sources RELATIVE "${SRC}" "${SRC}/*.c" "${SRC}/*.h"
     "${SRC}/*.cu")
if(NOT sources)
  message(FATAL_ERROR "${SRC}: no sources")
endif()

if(CHECK STREQUAL "layers")
  # folder -> the other folders it includes from
  set(folders "")
  foreach(f IN LISTS sources)
    string(REGEX MATCH "^[^/]+" from "${f}")
    if(from STREQUAL f)
      continue() # a file at the top of src/
    endif()
    list(APPEND folders ${from})
    file(STRINGS "${SRC}/${f}" includes REGEX "^#include \"[a-z_]+/")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^#include \"([a-z_]+)/.*" "\\1" to "${line}")
      if(NOT to STREQUAL from)
        list(APPEND deps_${from} ${to})
        list(APPEND users_${to} "${from} (${f})")
      endif()
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES folders)
  foreach(d IN LISTS folders)
    if(deps_${d})
      list(REMOVE_DUPLICATES deps_${d})
    endif()
  endforeach()
  # peel off, layer by layer, the folders that include only peeled ones
  set(left ${folders})
  set(order "")
  while(left)
    set(layer "")
    foreach(d IN LISTS left)
      set(ready TRUE)
      foreach(t IN LISTS deps_${d})
        if(NOT t IN_LIST order)
          set(ready FALSE)
        endif()
      endforeach()
      if(ready)
        list(APPEND layer ${d})
      endif()
    endforeach()
    if(NOT layer)
      set(report "")
      foreach(d IN LISTS left)
        set(in "")
        foreach(t IN LISTS deps_${d})
          if(t IN_LIST left)
            list(APPEND in ${t})
          endif()
        endforeach()
        string(REPLACE ";" " " in "${in}")
        string(APPEND report "\n  ${d} includes ${in}")
      endforeach()
      message(FATAL_ERROR "the folders of src/ include each other in a "
                          "cycle, among:${report}")
    endif()
    list(SORT layer)
    list(APPEND order ${layer})
    list(REMOVE_ITEM left ${layer})
    string(REPLACE ";" " " layer "${layer}")
    message(STATUS "layer: ${layer}")
  endwhile()
  return()
endif()

if(CHECK STREQUAL "paths")
  # the files that may name them: each path's own, the CUDA backend's, and
  # dart_init's (which picks MPI's one-sided components and probes them)
  set(own "^(ucx/|onesided/path_mpi\\.c$|onesided/path_cma\\.c$|gpu/device_cuda\\.c$|gpu/kernel\\.|runtime/init\\.c$)")
  set(names "ucp_|ucs_|dart__ucx__|cuda[A-Z]|process_vm_|MPI_(R?put|R?get|Put|Get|R?accumulate|Accumulate|Get_accumulate|Fetch_and_op|Compare_and_swap)[^a-zA-Z_]")
  set(found "")
  foreach(f IN LISTS sources)
    if(f MATCHES "${own}")
      continue()
    endif()
    file(READ "${SRC}/${f}" text)
    # comments say what a path does; code must not do it
    string(REGEX REPLACE "/\\*([^*]|\\*+[^*/])*\\*+/" "" text "${text}")
    string(REGEX REPLACE "//[^\n]*" "" text "${text}")
    if(text MATCHES "(${names})")
      string(REGEX REPLACE "[^a-zA-Z0-9_]$" "" name "${CMAKE_MATCH_1}")
      string(APPEND found "\n  ${f}: ${name}")
    endif()
  endforeach()
  if(found)
    message(FATAL_ERROR "a transport's library is named outside its "
                        "path's own files:${found}")
  endif()
  return()
endif()

message(FATAL_ERROR "CHECK='${CHECK}' is neither layers nor paths")
