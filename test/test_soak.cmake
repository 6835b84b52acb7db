# Soak (test_soak.c): allocations and frees, segment ids past their wrap,
# team creation and small one-sided operations in long loops, with the
# units' resident and shared memory measured. The suite runs a reduced
# scale; the full scale (10^5 allocations, 10^3 teams, 10^6 operations)
# runs by hand, one job at a time, and skips without DART_SOAK_SCALE:
#   DART_SOAK_SCALE=1 ctest --test-dir build -L soak [-R soak_full.n2]
# Its time limit covers four phases of 300 s, each phase's budget at full
# scale. A small initial pool makes dart_memalloc grow chunks within a few
# steps.
if(DART_SANITIZE)
  # At the suite's scale RSS cannot show a leak of a few bytes per
  # allocation, LeakSanitizer can: a short run without the ids phase, whose
  # 67534 allocations take minutes when every malloc unwinds its stack.
  dart_add_test(soak SOURCES test_soak.c UNITS 2 LAYOUTS node upn1
                ENV DART_SOAK_SCALE=0.002 DART_LOCAL_POOL=256K
                ARGS alloc teams ops)
else()
  dart_add_test(soak SOURCES test_soak.c UNITS 2 4 LAYOUTS node upn1
                ENV DART_SOAK_SCALE=0.01 DART_LOCAL_POOL=256K)
  dart_add_test(soak_full SOURCES test_soak.c UNITS 2 4 LAYOUTS node upn1
                TIMEOUT 1300 LABELS soak ENV DART_LOCAL_POOL=256K)
endif()
