/**
 * \file dash/dart/if/dart_communication.h
 * Where DASH includes the DART interface: libdart's <dart/dart_communication.h>.
 */
#ifndef DART__DASH_IF__DART_COMMUNICATION_H_
#define DART__DASH_IF__DART_COMMUNICATION_H_

#include <dart/dart_communication.h>

#endif /* DART__DASH_IF__DART_COMMUNICATION_H_ */
