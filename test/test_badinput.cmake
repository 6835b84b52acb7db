# Bad input: error codes, one log line naming the function, nothing changed.
dart_add_test(badinput SOURCES test_badinput.c)
# freed segment ids issued again only after every fresh one
dart_add_test(badinput_delayed SOURCES test_badinput.c
              ENV DART_SEGID_REUSE=delayed)
