/**
 * \file dash/dart/if/dart_types.h
 * Where DASH includes the DART interface: libdart's <dart/dart_types.h>.
 */
#ifndef DART__DASH_IF__DART_TYPES_H_
#define DART__DASH_IF__DART_TYPES_H_

#include <dart/dart_types.h>

#endif /* DART__DASH_IF__DART_TYPES_H_ */
