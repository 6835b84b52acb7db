# Derived datatypes and user operations; put/get round trips with them.
dart_add_test(types SOURCES test_types.c UNITS 1 2 4)
