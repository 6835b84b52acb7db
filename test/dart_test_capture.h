/*
 * What the runtime logs to stderr during one call, for the tests of bad
 * input: a rejected call must log exactly one line, naming the public
 * function. POSIX: define _GNU_SOURCE before the first include.
 */
#ifndef DART_TEST_CAPTURE_H_
#define DART_TEST_CAPTURE_H_

#include <sys/stat.h>
#include <unistd.h>

#include "dart_test.h"

static FILE *capture_file;
static int capture_fd = -1, capture_saved_stderr = -1;
static off_t capture_pos; /* what has been read of the file */
static long capture_bad_calls;

static inline void capture_init(void)
{
  capture_file = tmpfile();
  capture_saved_stderr = dup(2);
  if (capture_file == NULL || capture_saved_stderr < 0) {
    fprintf(stderr, "[unit %d] cannot capture stderr\n", dart_test_unit);
    exit(1);
  }
  capture_fd = fileno(capture_file);
}

static inline void capture_begin(void)
{
  fflush(stderr);
  dup2(capture_fd, 2);
}

/*
 * Restores stderr; text gets what was logged since capture_begin, lines
 * joined by '|'. Returns the number of lines.
 */
static inline int capture_end(char *text, size_t size)
{
  struct stat st;
  fflush(stderr);
  dup2(capture_saved_stderr, 2);
  fstat(capture_fd, &st);
  ssize_t r = 0;
  if (st.st_size > capture_pos) {
    size_t len = (size_t)(st.st_size - capture_pos);
    r = pread(capture_fd, text, len < size - 1 ? len : size - 1,
              capture_pos);
    capture_pos = st.st_size;
    /* now and then, empty the file (stderr shares its offset) */
    if (capture_pos > (1 << 20)) {
      if (ftruncate(capture_fd, 0) != 0 ||
          lseek(capture_fd, 0, SEEK_SET) != 0) {
        fprintf(stderr, "[unit %d] cannot reset the log capture\n",
                dart_test_unit);
        exit(1);
      }
      capture_pos = 0;
    }
  }
  text[r > 0 ? r : 0] = '\0';
  int lines = 0;
  for (char *p = text; *p; p++) lines += *p == '\n';
  for (char *p = text; *p; p++)
    if (*p == '\n' && p[1] != '\0') *p = '|';
  if (r > 0 && text[r - 1] == '\n') text[r - 1] = '\0';
  return lines;
}

static inline void capture_fini(void)
{
  fclose(capture_file);
  close(capture_saved_stderr);
}

/* After a bad call: its result must be want, with one line naming func. */
static inline void capture_check_bad(int line, const char *call,
                                     const char *func, dart_ret_t got,
                                     dart_ret_t want)
{
  char text[2048];
  int lines = capture_end(text, sizeof text);
  capture_bad_calls++;
  if (got != want)
    FAIL_AT(line, "%s returned %d, not %d (log: \"%s\")", call, (int)got,
            (int)want, text);
  if (lines != 1)
    FAIL_AT(line, "%s logged %d lines, not 1: \"%s\"", call, lines, text);
  else if (strstr(text, func) == NULL)
    FAIL_AT(line, "%s: the log line does not name %s: \"%s\"", call, func,
            text);
}

/* One bad call: its result must be want, with one log line naming func. */
#define BAD(want, func, call)                                 \
  do {                                                        \
    capture_begin();                                          \
    dart_ret_t bad_ret_ = (call);                             \
    capture_check_bad(__LINE__, #call, func, bad_ret_, want); \
  } while (0)
#define INVAL(func, call) BAD(DART_ERR_INVAL, func, call)

#endif
