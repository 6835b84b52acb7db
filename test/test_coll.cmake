# Collectives (every root, every predefined and user operation, derived
# types), send/recv/sendrecv, bad input.
dart_add_test(coll SOURCES test_coll.c)
