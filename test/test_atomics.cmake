# Atomics: every type and operation, contention with mixed operations, the
# path rule (CPU atomics only where all units share the memory).
dart_add_test(atomics SOURCES test_atomics.c LAYOUTS node upn1 upn2 noshm)
