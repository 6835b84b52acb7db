/**
 * \file dash/dart/if/dart_config.h
 * Where DASH includes the DART interface: libdart's <dart/dart_config.h>.
 */
#ifndef DART__DASH_IF__DART_CONFIG_H_
#define DART__DASH_IF__DART_CONFIG_H_

#include <dart/dart_config.h>

#endif /* DART__DASH_IF__DART_CONFIG_H_ */
