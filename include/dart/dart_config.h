/**
 * \file dart_config.h
 * Run-time configuration visible to clients.
 *
 * Thread safety: dart_config may be called from any thread.
 */
#ifndef DART__CONFIG_H_
#define DART__CONFIG_H_

#include <dart/dart_types.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The part of the runtime's configuration that clients may read. */
typedef struct {
  /** Nonzero when DART_LOG_LEVEL is above "error": warnings (and more) are
   * logged. Errors are logged at every level. */
  int log_enabled;
} dart_config_t;

/**
 * Points *config_out at the runtime's configuration (owned by the runtime,
 * refreshed by each call; valid before dart_init, too). A NULL
 * \c config_out is ignored.
 */
void dart_config(dart_config_t **config_out) DART_NOTHROW;

#ifdef __cplusplus
}
#endif

#endif /* DART__CONFIG_H_ */
