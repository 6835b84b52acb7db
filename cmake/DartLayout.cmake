# dart_layout(layout n RUN_VAR ARGS_VAR ENV_VAR): how n units run in a
# layout under the launcher (dartrun). A layout is a placement, optionally
# followed by a transport:
#   node   the physical node (the library's default transport)
#   noshm  the physical node with DART_SHM=0: node peers through the
#          remote path too
#   upnK   emulated nodes of K units
#   .mpi   DART_TRANSPORT=mpi (the default for noshm and upnK)
#   .ucx   DART_TRANSPORT=ucx with UCX's own choice of transports
#   .tcp   DART_TRANSPORT=ucx over UCX_TLS=tcp,self: a network transport
#          whose RMA needs the target's progress
# RUN_VAR is false where the layout would repeat another at n units (noshm
# on one unit; emulated nodes as large as the job are the physical node) or
# needs UCX that this build lacks. ARGS_VAR gets the launcher's layout
# arguments, ENV_VAR the environment.
function(dart_layout layout n run_var args_var env_var)
  set(run TRUE)
  set(args "")
  set(env "")
  set(transport "")
  if(layout MATCHES "^([a-z0-9]+)\\.(mpi|ucx|tcp)$")
    set(layout ${CMAKE_MATCH_1})
    set(transport ${CMAKE_MATCH_2})
  endif()
  if(layout STREQUAL "node")
  elseif(layout STREQUAL "noshm")
    if(n EQUAL 1)
      set(run FALSE)
    endif()
    list(APPEND env "DART_SHM=0")
    if(NOT transport)
      set(transport mpi)
    endif()
  elseif(layout MATCHES "^upn([0-9]+)$")
    if(NOT CMAKE_MATCH_1 LESS n)
      set(run FALSE)
    endif()
    set(args --units-per-node ${CMAKE_MATCH_1})
    if(NOT transport)
      set(transport mpi)
    endif()
  else()
    message(FATAL_ERROR "unknown layout ${layout}")
  endif()
  if(transport STREQUAL "mpi")
    list(APPEND env "DART_TRANSPORT=mpi")
  elseif(transport MATCHES "ucx|tcp")
    if(NOT DART_HAVE_UCX)
      set(run FALSE)
    endif()
    list(APPEND env "DART_TRANSPORT=ucx")
    if(transport STREQUAL "tcp")
      list(APPEND env "UCX_TLS=tcp,self")
    endif()
  endif()
  set(${run_var} ${run} PARENT_SCOPE)
  set(${args_var} ${args} PARENT_SCOPE)
  set(${env_var} ${env} PARENT_SCOPE)
endfunction()
