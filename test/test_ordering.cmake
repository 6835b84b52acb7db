# Memory ordering: barrier visibility of direct stores; put/store + flush +
# atomic flag, read with direct loads.
dart_add_test(ordering SOURCES test_ordering.c LAYOUTS node upn1 upn2 noshm UCX)
dart_add_test(ordering_progress SOURCES test_ordering.c
              LAYOUTS ${DART_THREAD_LAYOUTS} ENV DART_PROGRESS_THREAD=1
              LABELS threads UCX)
