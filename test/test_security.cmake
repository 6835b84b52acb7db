# Security of the address space: crafted gptrs (offsets beyond and before
# each part, wrapped, with pool chunk bits; unit ids outside the team;
# other teams' and freed segment ids) and a seeded random sweep against
# every operation that takes a gptr, on allocations of every kind; no byte
# outside a part changes and getaddr returns no address outside one.
dart_add_test(security SOURCES test_security.c)

# The UCX transport (node peers too, and over TCP) at one unit count: the
# largest of the UCX runs' counts up to 4.
if(DART_HAVE_UCX AND DART_UCX_SMALL_UNITS GREATER 1)
  dart_add_test(security_ucx SOURCES test_security.c
                UNITS ${DART_UCX_SMALL_UNITS}
                LAYOUTS upn2.ucx upn1.tcp noshm.ucx)
endif()
