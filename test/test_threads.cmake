# DART_THREAD_MULTIPLE: two threads per unit on atomics and transfers; and
# the atomics and lock tests with the progress thread.
dart_add_test(threads SOURCES test_threads.c LAYOUTS ${DART_THREAD_LAYOUTS} UCX
              LABELS threads)
target_link_libraries(test_threads PRIVATE Threads::Threads)
dart_add_test(atomics_progress SOURCES test_atomics.c
              LAYOUTS ${DART_THREAD_LAYOUTS} ENV DART_PROGRESS_THREAD=1
              LABELS threads UCX)
dart_add_test(lock_progress SOURCES test_lock.c
              LAYOUTS ${DART_THREAD_LAYOUTS} ENV DART_PROGRESS_THREAD=1
              LABELS threads UCX)
