/**
 * \file dash/dart/if/dart_initialization.h
 * Where DASH includes the DART interface: libdart's <dart/dart_initialization.h>.
 */
#ifndef DART__DASH_IF__DART_INITIALIZATION_H_
#define DART__DASH_IF__DART_INITIALIZATION_H_

#include <dart/dart_initialization.h>

#endif /* DART__DASH_IF__DART_INITIALIZATION_H_ */
