# Start-up and shut-down (dart_init, dart_exit, NOTINIT before/after) and
# dart_init_thread.
dart_add_test(init SOURCES test_init.c)
dart_add_test(init_thread SOURCES test_init_thread.c)
