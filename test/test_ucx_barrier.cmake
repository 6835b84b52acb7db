# The UCX barrier's fallback: one unit cannot set it up while a team is
# made, and every unit keeps MPI's barrier. Only layouts where every unit
# meets across nodes (on upn2 the victim may not be a node leader).
if(DART_HAVE_UCX)
  dart_add_test(ucx_barrier SOURCES test_ucx_barrier.c UNITS 2 4
                LAYOUTS upn1.ucx noshm.ucx upn1.tcp)
  target_link_libraries(test_ucx_barrier PRIVATE PkgConfig::UCX)
endif()
