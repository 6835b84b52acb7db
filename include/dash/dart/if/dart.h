/**
 * \file dash/dart/if/dart.h
 * Where DASH includes the DART interface: libdart's <dart/dart.h>.
 */
#ifndef DART__DASH_IF__DART_H_
#define DART__DASH_IF__DART_H_

#include <dart/dart.h>

#endif /* DART__DASH_IF__DART_H_ */
