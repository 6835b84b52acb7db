/* Logging: one line per message on stderr, prefixed with the unit. */
#ifndef DART__BASE__LOG_H_
#define DART__BASE__LOG_H_

typedef enum {
  DART__LOG_ERROR = 0,
  DART__LOG_WARN,
  DART__LOG_INFO,
  DART__LOG_DEBUG,
  DART__LOG_TRACE
} dart__log_level_t;

/* Level and unit id used by the log lines (set at init). */
extern int dart__base__log_level;
void dart__base__log_set_unit(int unit);

void dart__base__log(dart__log_level_t level, const char *func,
                     const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The public function reporting bad input names itself: pass __func__ of the
 * public entry point down, or log where the error is first detected. */
#define DART_LOG_ERROR(...) \
  dart__base__log(DART__LOG_ERROR, __func__, __VA_ARGS__)
#define DART_LOG_ERROR_IN(func, ...) \
  dart__base__log(DART__LOG_ERROR, (func), __VA_ARGS__)
#define DART_LOG_WARN(...)                                     \
  do {                                                         \
    if (dart__base__log_level >= DART__LOG_WARN)               \
      dart__base__log(DART__LOG_WARN, __func__, __VA_ARGS__);  \
  } while (0)
#define DART_LOG_INFO(...)                                     \
  do {                                                         \
    if (dart__base__log_level >= DART__LOG_INFO)               \
      dart__base__log(DART__LOG_INFO, __func__, __VA_ARGS__);  \
  } while (0)
#define DART_LOG_DEBUG(...)                                    \
  do {                                                         \
    if (dart__base__log_level >= DART__LOG_DEBUG)              \
      dart__base__log(DART__LOG_DEBUG, __func__, __VA_ARGS__); \
  } while (0)

#endif
