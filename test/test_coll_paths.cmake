# Every collective on each of its paths (node peers' cells, staging steps,
# hierarchical, MPI's), blocking and with handles (dart_coll.h), on
# DART_TEAM_ALL and on teams whose nodes are uneven, against serial
# results; handles in flight together and freed early; mismatched calls of
# node peers. coll_paths_mpi: the same on MPI's collectives (DART_COLL=mpi);
# coll_paths_check: DART_COLL_CHECK=1 finds mismatches across nodes too;
# coll_paths_progress: with the progress thread.
dart_add_test(coll_paths SOURCES test_coll_paths.c
              LAYOUTS node upn1 upn2 noshm UCX)
dart_add_test(coll_paths_mpi SOURCES test_coll_paths.c UNITS 2 4
              LAYOUTS node upn2 ENV DART_COLL=mpi)
dart_add_test(coll_paths_check SOURCES test_coll_paths.c UNITS 1 2 3 4
              LAYOUTS node upn1 upn2 ENV DART_COLL_CHECK=1 ARGS check)
dart_add_test(coll_paths_progress SOURCES test_coll_paths.c
              LAYOUTS ${DART_THREAD_LAYOUTS} ENV DART_PROGRESS_THREAD=1
              LABELS threads)
