# Bad input: error codes, one log line naming the function, nothing changed.
dart_add_test(badinput SOURCES test_badinput.c)
