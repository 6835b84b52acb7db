/**
 * \file dash/dart/if/dart_globmem.h
 * Where DASH includes the DART interface: libdart's <dart/dart_globmem.h>.
 */
#ifndef DART__DASH_IF__DART_GLOBMEM_H_
#define DART__DASH_IF__DART_GLOBMEM_H_

#include <dart/dart_globmem.h>

#endif /* DART__DASH_IF__DART_GLOBMEM_H_ */
