/*
 * The UCX barrier's fallback. With the UCX transport, the units that meet
 * across nodes meet in a barrier over UCX whose flags are memory UCX
 * allocates. When one unit cannot set it up, every unit of the team must
 * keep MPI's barrier instead: a unit that used the UCX barrier alone
 * would wait forever for flags nobody sets.
 *
 * The last unit's UCX allocations fail while dart_team_create runs (this
 * program defines ucp_mem_map, which libdart's calls reach before UCX's;
 * it forwards everything else to UCX). Then:
 * - the failure was injected (the path ran), the victim logged it, and
 *   unit 0 logged the fallback;
 * - the team's barrier synchronises: in each round every unit writes the
 *   round into its slot on every unit, and after the barrier each finds
 *   every slot of its own part at that round;
 * - a second team, made without a failure, logs no fallback and passes
 *   the same rounds on its UCX barrier.
 *
 * Registered where every unit meets across nodes on UCX (upn1.ucx,
 * noshm.ucx, upn1.tcp); elsewhere (the transport fell back to MPI) it
 * skips.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_NEXT */
#endif
#include <dlfcn.h>
#include <ucp/api/ucp.h>

#include "dart_test_capture.h"

#define ROUNDS 50

static int me, n;
static bool failing;   /* this unit's UCX allocations fail now */
static long injected;  /* allocations failed */

ucs_status_t ucp_mem_map(ucp_context_h context,
                         const ucp_mem_map_params_t *params,
                         ucp_mem_h *memh_p)
{
  static ucs_status_t (*real)(ucp_context_h, const ucp_mem_map_params_t *,
                              ucp_mem_h *);
  if (real == NULL) {
    *(void **)&real = dlsym(RTLD_NEXT, "ucp_mem_map");
    if (real == NULL) {
      fprintf(stderr, "[unit %d] no ucp_mem_map after this program's\n", me);
      exit(1);
    }
  }
  if (failing && (params->field_mask & UCP_MEM_MAP_PARAM_FIELD_FLAGS) &&
      (params->flags & UCP_MEM_MAP_ALLOCATE)) {
    injected++;
    return UCS_ERR_NO_MEMORY;
  }
  return real(context, params, memh_p);
}

/* A team of all units, made while the victim's allocations fail or not;
 * log gets what this unit logged meanwhile. */
static dart_team_t make_team(bool fail, char *log, size_t size)
{
  dart_group_t all;
  CHECK_OK(dart_group_create(&all));
  for (int u = 0; u < n; u++)
    CHECK_OK(dart_group_addmember(all, DART_GLOBAL_UNIT_ID(u)));
  dart_team_t team = DART_TEAM_NULL;
  failing = fail && me == n - 1;
  capture_begin();
  dart_ret_t ret = dart_team_create(DART_TEAM_ALL, all, &team);
  capture_end(log, size);
  failing = false;
  CHECK_OK(ret);
  CHECK_OK(dart_group_destroy(&all));
  return team;
}

/* The barrier of team keeps every unit in step, round after round. */
static void check_barrier(dart_team_t team, const char *what)
{
  dart_gptr_t slots;
  CHECK_OK(dart_team_memalloc_aligned(team, (size_t)n, DART_TYPE_LONG,
                                      &slots));
  dart_gptr_t own = slots; /* team units are the global ones */
  own.unitid = me;
  long *mine = NULL;
  CHECK_OK(dart_gptr_getaddr(own, (void **)&mine));
  if (mine == NULL) {
    FAILF("%s: no address for this unit's part", what);
    return;
  }
  for (int u = 0; u < n; u++) mine[u] = -1;
  CHECK_OK(dart_barrier(team));
  long bad = 0;
  for (long round = 0; round < ROUNDS; round++) {
    for (int u = 0; u < n; u++) {
      dart_gptr_t slot = slots;
      slot.unitid = u;
      slot.addr_or_offs.offset += (uint64_t)me * sizeof(long);
      CHECK_OK(dart_put_blocking(slot, &round, 1, DART_TYPE_LONG,
                                 DART_TYPE_LONG));
    }
    CHECK_OK(dart_barrier(team));
    for (int u = 0; u < n; u++) {
      long seen = __atomic_load_n(&mine[u], __ATOMIC_ACQUIRE);
      if (seen != round && bad++ == 0)
        FAILF("%s: round %ld: unit %d's slot holds %ld after the barrier",
              what, round, u, seen);
    }
    /* nobody writes the next round before all have read this one */
    CHECK_OK(dart_barrier(team));
  }
  CHECK_OK(dart_team_memfree(slots));
}

int main(int argc, char **argv)
{
  dart_test_init(&argc, &argv);
  me = dart_test_unit;
  n = dart_test_units;
  dart_test_need_ucx();
  capture_init();

  char log[4096];
  dart_team_t fallback = make_team(true, log, sizeof log);
  if (me == n - 1) {
    if (injected == 0) FAILF("no UCX allocation was failed");
    if (strstr(log, "dart_team_create") == NULL ||
        strstr(log, "with UCX failed") == NULL)
      FAILF("the failed allocation was not logged: \"%s\"", log);
  }
  if (me == 0 && strstr(log, "MPI's takes over") == NULL)
    FAILF("unit 0 did not log the fallback: \"%s\"", log);
  check_barrier(fallback, "fallback");

  dart_team_t ucx = make_team(false, log, sizeof log);
  if (log[0] != '\0') FAILF("a team without a failure logged \"%s\"", log);
  check_barrier(ucx, "UCX");

  CHECK_OK(dart_team_destroy(&ucx));
  CHECK_OK(dart_team_destroy(&fallback));
  capture_fini();
  return dart_test_finish();
}
