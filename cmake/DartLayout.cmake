# dart_layout(layout n RUN_VAR ARGS_VAR ENV_VAR): how n units run in a
# layout under the launcher (dartrun).
#   node   the physical node
#   noshm  the physical node with DART_SHM=0: node peers through the
#          remote path too
#   upnK   emulated nodes of K units
# RUN_VAR is false where the layout would repeat another at n units (noshm
# on one unit; emulated nodes as large as the job are the physical node).
# ARGS_VAR gets the launcher's layout arguments, ENV_VAR the environment.
function(dart_layout layout n run_var args_var env_var)
  set(run TRUE)
  set(args "")
  set(env "")
  if(layout STREQUAL "node")
  elseif(layout STREQUAL "noshm")
    if(n EQUAL 1)
      set(run FALSE)
    endif()
    set(env "DART_SHM=0")
  elseif(layout MATCHES "^upn([0-9]+)$")
    if(NOT CMAKE_MATCH_1 LESS n)
      set(run FALSE)
    endif()
    set(args --units-per-node ${CMAKE_MATCH_1})
  else()
    message(FATAL_ERROR "unknown layout ${layout}")
  endif()
  set(${run_var} ${run} PARENT_SCOPE)
  set(${args_var} ${args} PARENT_SCOPE)
  set(${env_var} ${env} PARENT_SCOPE)
endfunction()
