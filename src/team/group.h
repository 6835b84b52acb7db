/* Groups, as the team code sees them. */
#ifndef DART__TEAM__GROUP_H_
#define DART__TEAM__GROUP_H_

#include <dart/dart_team_group.h>
#include <stdbool.h>

struct dart_group_struct {
  dart_unit_t *units; /* sorted, distinct global ids */
  size_t size;
  size_t capacity;
};

bool dart__team__group_contains(const struct dart_group_struct *g,
                                dart_unit_t unit);
dart_ret_t dart__team__group_from_units(const dart_unit_t *units, size_t n,
                                        dart_group_t *out);

#endif
