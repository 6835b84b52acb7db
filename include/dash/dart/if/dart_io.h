/**
 * \file dash/dart/if/dart_io.h
 * Where DASH includes the DART interface: libdart's <dart/dart_io.h>.
 */
#ifndef DART__DASH_IF__DART_IO_H_
#define DART__DASH_IF__DART_IO_H_

#include <dart/dart_io.h>

#endif /* DART__DASH_IF__DART_IO_H_ */
