# Local pool (with growth), registration, allocators, gptr helpers, flags.
dart_add_test(globmem SOURCES test_globmem.c LAYOUTS node upn1 upn2 noshm UCX)
# An empty initial pool: every block comes from grown chunks.
dart_add_test(globmem_pool0 SOURCES test_globmem.c UNITS 1 2
              LAYOUTS node upn1 upn1.ucx ENV DART_LOCAL_POOL=0)
