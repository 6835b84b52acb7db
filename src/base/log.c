#include "log.h"

#include <stdarg.h>
#include <stdio.h>

int dart__base__log_level = DART__LOG_WARN;
static int log_unit = -1;

void dart__base__log_set_unit(int unit) { log_unit = unit; }

void dart__base__log(dart__log_level_t level, const char *func,
                     const char *fmt, ...)
{
  static const char *const names[] = {"ERROR", "WARN", "INFO", "DEBUG",
                                      "TRACE"};
  char line[1024];
  int len = snprintf(line, sizeof line, "[dart %d] %s %s: ", log_unit,
                     names[level], func);
  if (len < 0) return;
  if ((size_t)len < sizeof line) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(line + len, sizeof line - (size_t)len, fmt, args);
    va_end(args);
  }
  /* one write per line so lines of different units do not interleave */
  fprintf(stderr, "%s\n", line);
  fflush(stderr);
}
