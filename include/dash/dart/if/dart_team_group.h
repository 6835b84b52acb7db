/**
 * \file dash/dart/if/dart_team_group.h
 * Where DASH includes the DART interface: libdart's <dart/dart_team_group.h>.
 */
#ifndef DART__DASH_IF__DART_TEAM_GROUP_H_
#define DART__DASH_IF__DART_TEAM_GROUP_H_

#include <dart/dart_team_group.h>

#endif /* DART__DASH_IF__DART_TEAM_GROUP_H_ */
