/**
 * \file dash/dart/if/dart_util.h
 * Where DASH includes the DART interface: libdart's <dart/dart_util.h>.
 */
#ifndef DART__DASH_IF__DART_UTIL_H_
#define DART__DASH_IF__DART_UTIL_H_

#include <dart/dart_util.h>

#endif /* DART__DASH_IF__DART_UTIL_H_ */
