# Team locks and a CAS spin lock guarding a non-atomic read-modify-write.
dart_add_test(lock SOURCES test_lock.c LAYOUTS node upn1 upn2 noshm UCX)
