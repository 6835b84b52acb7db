# One transfer above 2 GiB (put and get); needs ~4.5 GiB of memory.
dart_add_test(big SOURCES test_big.c UNITS 1 2 LAYOUTS node upn1 TIMEOUT 300
              LABELS big)
