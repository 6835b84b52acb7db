/**
 * \file dart.h
 * The DART interface, version 3.2: include this header to use it.
 * (Hardware locality lives in dart_locality.h; libdart's own extensions in
 * dart_ext.h.)
 */
#ifndef DART__DART_H_
#define DART__DART_H_

/** Major version of the DART interface these headers implement. */
#define DART_VERSION_MAJOR 3
/** Minor version of the DART interface these headers implement. */
#define DART_VERSION_MINOR 2
/** The interface version as a string, "MAJOR.MINOR". */
#define DART_VERSION_STR "3.2"

#include <dart/dart_communication.h>
#include <dart/dart_config.h>
#include <dart/dart_globmem.h>
#include <dart/dart_initialization.h>
#include <dart/dart_synchronization.h>
#include <dart/dart_team_group.h>
#include <dart/dart_types.h>
#include <dart/dart_util.h>

#endif /* DART__DART_H_ */
