/* Groups: sorted arrays of distinct global unit ids. */
#include <dart/dart_team_group.h>
#include <stdlib.h>
#include <string.h>

#include "base/runtime.h"
#include "team/group.h"

static int group_reserve(dart_group_t g, size_t n)
{
  if (n <= g->capacity) return 0;
  size_t cap = g->capacity ? g->capacity : 8;
  while (cap < n) cap *= 2;
  dart_unit_t *grown = realloc(g->units, cap * sizeof *grown);
  if (grown == NULL) return -1;
  g->units = grown;
  g->capacity = cap;
  return 0;
}

static dart_group_t group_new(size_t capacity)
{
  dart_group_t g = calloc(1, sizeof *g);
  if (g == NULL) return NULL;
  if (group_reserve(g, capacity) != 0) {
    free(g);
    return NULL;
  }
  return g;
}

/* index of the first member >= unit */
static size_t group_lower_bound(const struct dart_group_struct *g,
                                dart_unit_t unit)
{
  size_t lo = 0, hi = g->size;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (g->units[mid] < unit) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

bool dart__team__group_contains(const struct dart_group_struct *g,
                                dart_unit_t unit)
{
  size_t i = group_lower_bound(g, unit);
  return i < g->size && g->units[i] == unit;
}

static bool valid_unit(const char *func, dart_global_unit_t unit)
{
  if (unit.id >= 0 && unit.id < dart__rt.size) return true;
  DART_LOG_ERROR_IN(func, "unit %d is not in 0..%d", unit.id,
                    dart__rt.size - 1);
  return false;
}

#define CHECK_ARG(cond)                                         \
  do {                                                          \
    if (!(cond)) {                                              \
      DART_LOG_ERROR("invalid argument: %s is false", #cond);   \
      return DART_ERR_INVAL;                                    \
    }                                                           \
  } while (0)

dart_ret_t dart__team__group_from_units(const dart_unit_t *units, size_t n,
                                        dart_group_t *out)
{
  dart_group_t g = group_new(n);
  if (g == NULL) return DART_ERR_NOMEM;
  if (n) memcpy(g->units, units, n * sizeof *units);
  g->size = n;
  *out = g;
  return DART_OK;
}

dart_ret_t dart_group_create(dart_group_t *group)
{
  DART__CHECK_INIT();
  CHECK_ARG(group != NULL);
  dart_group_t g = group_new(0);
  if (g == NULL) return DART_ERR_NOMEM;
  *group = g;
  return DART_OK;
}

dart_ret_t dart_group_destroy(dart_group_t *group)
{
  DART__CHECK_INIT();
  CHECK_ARG(group != NULL && *group != NULL);
  free((*group)->units);
  free(*group);
  *group = NULL;
  return DART_OK;
}

dart_ret_t dart_group_clone(const dart_group_t gin, dart_group_t *gout)
{
  DART__CHECK_INIT();
  CHECK_ARG(gin != NULL && gout != NULL);
  return dart__team__group_from_units(gin->units, gin->size, gout);
}

dart_ret_t dart_group_union(const dart_group_t g1, const dart_group_t g2,
                            dart_group_t *gout)
{
  DART__CHECK_INIT();
  CHECK_ARG(g1 != NULL && g2 != NULL && gout != NULL);
  dart_group_t g = group_new(g1->size + g2->size);
  if (g == NULL) return DART_ERR_NOMEM;
  size_t i = 0, j = 0, n = 0;
  while (i < g1->size || j < g2->size) {
    dart_unit_t next;
    if (j == g2->size || (i < g1->size && g1->units[i] < g2->units[j])) {
      next = g1->units[i++];
    } else if (i == g1->size || g2->units[j] < g1->units[i]) {
      next = g2->units[j++];
    } else {
      next = g1->units[i++];
      j++;
    }
    g->units[n++] = next;
  }
  g->size = n;
  *gout = g;
  return DART_OK;
}

dart_ret_t dart_group_intersect(const dart_group_t g1, const dart_group_t g2,
                                dart_group_t *gout)
{
  DART__CHECK_INIT();
  CHECK_ARG(g1 != NULL && g2 != NULL && gout != NULL);
  dart_group_t g = group_new(g1->size < g2->size ? g1->size : g2->size);
  if (g == NULL) return DART_ERR_NOMEM;
  size_t i = 0, j = 0, n = 0;
  while (i < g1->size && j < g2->size) {
    if (g1->units[i] < g2->units[j]) {
      i++;
    } else if (g2->units[j] < g1->units[i]) {
      j++;
    } else {
      g->units[n++] = g1->units[i++];
      j++;
    }
  }
  g->size = n;
  *gout = g;
  return DART_OK;
}

dart_ret_t dart_group_addmember(dart_group_t g, dart_global_unit_t unitid)
{
  DART__CHECK_INIT();
  CHECK_ARG(g != NULL);
  if (!valid_unit(__func__, unitid)) return DART_ERR_INVAL;
  size_t i = group_lower_bound(g, unitid.id);
  if (i < g->size && g->units[i] == unitid.id) return DART_OK;
  if (group_reserve(g, g->size + 1) != 0) return DART_ERR_NOMEM;
  memmove(g->units + i + 1, g->units + i, (g->size - i) * sizeof *g->units);
  g->units[i] = unitid.id;
  g->size++;
  return DART_OK;
}

dart_ret_t dart_group_delmember(dart_group_t g, dart_global_unit_t unitid)
{
  DART__CHECK_INIT();
  CHECK_ARG(g != NULL);
  if (!valid_unit(__func__, unitid)) return DART_ERR_INVAL;
  size_t i = group_lower_bound(g, unitid.id);
  if (i == g->size || g->units[i] != unitid.id) {
    DART_LOG_ERROR("unit %d is not a member", unitid.id);
    return DART_ERR_NOTFOUND;
  }
  memmove(g->units + i, g->units + i + 1, (g->size - i - 1) * sizeof *g->units);
  g->size--;
  return DART_OK;
}

dart_ret_t dart_group_ismember(const dart_group_t g, dart_global_unit_t unitid,
                               int32_t *ismember)
{
  DART__CHECK_INIT();
  CHECK_ARG(g != NULL && ismember != NULL);
  if (!valid_unit(__func__, unitid)) return DART_ERR_INVAL;
  *ismember = dart__team__group_contains(g, unitid.id);
  return DART_OK;
}

dart_ret_t dart_group_size(const dart_group_t g, size_t *size)
{
  DART__CHECK_INIT();
  CHECK_ARG(g != NULL && size != NULL);
  *size = g->size;
  return DART_OK;
}

dart_ret_t dart_group_getmembers(const dart_group_t g,
                                 dart_global_unit_t *unitids)
{
  DART__CHECK_INIT();
  CHECK_ARG(g != NULL && (unitids != NULL || g->size == 0));
  for (size_t i = 0; i < g->size; i++) unitids[i].id = g->units[i];
  return DART_OK;
}

dart_ret_t dart_group_split(const dart_group_t g, size_t n, size_t *nout,
                            dart_group_t *gout)
{
  DART__CHECK_INIT();
  CHECK_ARG(g != NULL && n > 0 && nout != NULL && gout != NULL);
  size_t chunk = (g->size + n - 1) / n;
  size_t filled = 0;
  for (size_t i = 0; i < n; i++) {
    size_t start = i * chunk < g->size ? i * chunk : g->size;
    size_t count = g->size - start < chunk ? g->size - start : chunk;
    if (dart__team__group_from_units(g->units + start, count, &gout[i]) !=
        DART_OK) {
      while (i-- > 0) dart_group_destroy(&gout[i]);
      return DART_ERR_NOMEM;
    }
    if (count) filled++;
  }
  *nout = filled;
  return DART_OK;
}
