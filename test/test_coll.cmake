# Collectives (every root, every predefined and user operation, derived
# types), send/recv/sendrecv, bad input; noshm: the barrier without node
# peers' shared cells.
dart_add_test(coll SOURCES test_coll.c LAYOUTS node upn1 upn2 noshm UCX)
