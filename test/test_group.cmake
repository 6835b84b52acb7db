# Groups: set operations, sorted members, DART split, bad input.
dart_add_test(group SOURCES test_group.c)
