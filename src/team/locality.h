/* Hardware locality: every team's domain hierarchy and unit records. */
#ifndef DART__TEAM__LOCALITY_H_
#define DART__TEAM__LOCALITY_H_

#include <dart/dart_types.h>
#include <stdint.h>
#include <stdio.h>

#include "team/team.h"

/* Where a record's clock or bandwidth comes from (DART_INFO says it). */
typedef enum {
  DART__TEAM__HW_CONFIG,  /* DART_CPU_MHZ, DART_SHMEM_MBPS: none known */
  DART__TEAM__HW_CPUFREQ, /* the kernel's cpufreq limits */
  DART__TEAM__HW_CPUINFO, /* the clock /proc/cpuinfo shows */
  DART__TEAM__HW_HWLOC    /* hwloc: memory attributes, CPU kinds */
} dart__team__hw_source_t;

/*
 * What one unit tells the others about its hardware (exchanged as bytes:
 * the units of a job share one binary). hw holds dart_hwinfo_t as the
 * records of dart_unit_locality show it, but for the NODE entry of scopes,
 * which depends on the team. status is not DART_OK where the unit could
 * not load its topology.
 */
typedef struct {
  dart_hwinfo_t hw;
  int32_t status;
  int32_t numa_cores;   /* cores of the unit's NUMA node */
  int64_t system_bytes; /* memory of the host, -1 unknown */
  int64_t numa_bytes;   /* memory of the unit's NUMA node, -1 unknown */
  int32_t mhz_source;   /* dart__team__hw_source_t of the clock */
  int32_t mbps_source;  /* and of the bandwidth */
} dart__team__hwrec_t;

/*
 * Loads the topology (this machine, or DART_TOPOLOGY's XML file or
 * synthetic description) and describes this unit in it: the core it is
 * bound to, or core node_rank modulo the topology's cores where it is not
 * bound to one core. host names the unit's (emulated) node. Logs one line
 * and returns DART_ERR_INVAL for a DART_TOPOLOGY that hwloc cannot load.
 */
dart_ret_t dart__team__hwinfo_load(const char *host, int node_rank,
                                   dart__team__hwrec_t *out);

/* Collective over team: exchanges the units' hardware records and builds
 * the team's hierarchy, replacing the one it had (func names the public
 * function for errors). */
dart_ret_t dart__team__locality_build(dart__team_t *team, const char *func);

/* Prints this unit's clock, bandwidth and memory with their sources
 * (DART_INFO). */
void dart__team__locality_print_info(FILE *out);

/* Releases the hierarchy of team (none: nothing to do). */
void dart__team__locality_release(dart_team_t team);

/* Forgets this unit's hardware record at dart_exit (a later dart_init may
 * see another DART_TOPOLOGY). */
void dart__team__locality_fini(void);

#endif
