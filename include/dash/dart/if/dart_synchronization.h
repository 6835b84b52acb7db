/**
 * \file dash/dart/if/dart_synchronization.h
 * Where DASH includes the DART interface: libdart's <dart/dart_synchronization.h>.
 */
#ifndef DART__DASH_IF__DART_SYNCHRONIZATION_H_
#define DART__DASH_IF__DART_SYNCHRONIZATION_H_

#include <dart/dart_synchronization.h>

#endif /* DART__DASH_IF__DART_SYNCHRONIZATION_H_ */
