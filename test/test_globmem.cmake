# Local pool (with growth), registration, allocators, gptr helpers, flags.
dart_add_test(globmem SOURCES test_globmem.c LAYOUTS node upn1 upn2 noshm UCX)
