# Puts and gets of every size, completion variant and layout, all pairs.
dart_add_test(onesided SOURCES test_onesided.c LAYOUTS node upn1 upn2 noshm UCX
              TCP8)
