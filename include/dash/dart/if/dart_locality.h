/**
 * \file dash/dart/if/dart_locality.h
 * Where DASH includes the DART interface: libdart's <dart/dart_locality.h>.
 */
#ifndef DART__DASH_IF__DART_LOCALITY_H_
#define DART__DASH_IF__DART_LOCALITY_H_

#include <dart/dart_locality.h>

#endif /* DART__DASH_IF__DART_LOCALITY_H_ */
