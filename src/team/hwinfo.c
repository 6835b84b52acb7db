/*
 * This unit's hardware information from hwloc. The topology is loaded once
 * per process, read and destroyed: keeping it would cost every unit
 * memory for what one record holds.
 *
 * Clients compute with the record: DASH's LoadBalancePattern multiplies
 * cores, threads and MHz and divides the bandwidth by threads times MHz.
 * So every figure a client may divide by or multiply with is positive:
 * measured where the machine (or the recorded topology) tells it, else
 * the configured fallback (DART_CPU_MHZ, DART_SHMEM_MBPS). Only a cache
 * level the core lacks stays -1 (size, line size and id): it has no size.
 */
#include <errno.h>
#include <hwloc.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/env.h"
#include "base/log.h"
#include "team/locality.h"

/* The line size of nearly all CPUs, where hwloc knows none. */
#define LINE_BYTES 64

/* hwloc's unknown sizes are 0; ours are -1 */
static int64_t known_bytes(hwloc_uint64_t bytes)
{
  return bytes ? (int64_t)bytes : -1;
}

/* Whole MiB, 1 at least for a known size (clients divide by it). */
static int to_mib(int64_t bytes)
{
  if (bytes < 0) return -1;
  int64_t mib = bytes >> 20;
  return mib > INT_MAX ? INT_MAX : mib < 1 ? 1 : (int)mib;
}

static int clamp_int(hwloc_uint64_t value)
{
  return value > INT_MAX ? INT_MAX : (int)value;
}

/* Creates and loads the topology that DART_TOPOLOGY names. */
static dart_ret_t topology_load(const char *source, hwloc_topology_t *out)
{
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) {
    DART_LOG_ERROR_IN("dart_init", "hwloc_topology_init failed");
    return DART_ERR_OTHER;
  }
  /* processors, caches, memory and its bandwidth (memory attributes) are
   * all we read: skipping devices, instruction caches and distances makes
   * loading this machine's topology cheaper, and so does skipping its CPU
   * kinds, whose clocks we read from cpufreq for one CPU rather than all
   * (a recorded topology keeps the kinds it records) */
  size_t len = strlen(source);
  hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
  hwloc_topology_set_type_filter(topo, HWLOC_OBJ_MISC,
                                 HWLOC_TYPE_FILTER_KEEP_NONE);
  hwloc_topology_set_icache_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
#if HWLOC_API_VERSION >= 0x00020800
  unsigned long flags = HWLOC_TOPOLOGY_FLAG_NO_DISTANCES;
  if (len == 0) flags |= HWLOC_TOPOLOGY_FLAG_NO_CPUKINDS;
  hwloc_topology_set_flags(topo, flags);
#endif
  int rc = 0;
  if (len > 4 && strcasecmp(source + len - 4, ".xml") == 0)
    rc = hwloc_topology_set_xml(topo, source);
  else if (len > 0)
    rc = hwloc_topology_set_synthetic(topo, source);
  if (rc == 0) rc = hwloc_topology_load(topo);
  if (rc != 0) {
    int err = errno;
    hwloc_topology_destroy(topo);
    if (len == 0) {
      DART_LOG_ERROR_IN("dart_init", "hwloc cannot load this machine's "
                        "topology: %s", strerror(err));
      return DART_ERR_OTHER;
    }
    DART_LOG_ERROR_IN("dart_init", "DART_TOPOLOGY='%s' is not valid: hwloc "
                      "cannot load it (%s)", source, strerror(err));
    return DART_ERR_INVAL;
  }
  *out = topo;
  return DART_OK;
}

/* The core this process is bound to, if its binding lies within one core
 * of this machine's topology (NULL otherwise); *pu is its first PU. */
static dart_ret_t bound_core(hwloc_topology_t topo, hwloc_obj_type_t core_type,
                             hwloc_obj_t *core_out, hwloc_obj_t *pu_out)
{
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (set == NULL) return DART_ERR_NOMEM;
  hwloc_obj_t core = NULL, pu = NULL;
  if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0 &&
      !hwloc_bitmap_iszero(set)) {
    for (hwloc_obj_t c = hwloc_get_next_obj_by_type(topo, core_type, NULL); c;
         c = hwloc_get_next_obj_by_type(topo, core_type, c)) {
      if (hwloc_bitmap_isincluded(set, c->cpuset)) {
        core = c;
        break;
      }
    }
    if (core != NULL)
      pu = hwloc_get_pu_obj_by_os_index(topo,
                                        (unsigned)hwloc_bitmap_first(set));
  }
  hwloc_bitmap_free(set);
  *core_out = core;
  *pu_out = pu;
  return DART_OK;
}

/* cpufreq's limit of one CPU in MHz, 0 where the kernel does not say. */
static int cpufreq_limit(unsigned cpu, const char *which)
{
  char path[128];
  snprintf(path, sizeof path,
           "/sys/devices/system/cpu/cpu%u/cpufreq/cpuinfo_%s_freq", cpu,
           which);
  FILE *f = fopen(path, "r");
  if (f == NULL) return 0;
  long khz = 0;
  if (fscanf(f, "%ld", &khz) != 1 || khz < 1000 ||
      khz / 1000 > INT_MAX)
    khz = 0;
  fclose(f);
  return (int)(khz / 1000);
}

/*
 * The highest "cpu MHz" of /proc/cpuinfo, rounded; 0 where it has none
 * (arm64, for one). Without a cpufreq driver (virtual machines) the kernel
 * shows one constant clock for every CPU; where it samples the clocks of
 * the moment, the highest is what a busy core runs at, and it is the same
 * for all units of the node, as their weights should be. Read once per
 * process: the file grows with the CPUs, and a later dart_init (DASH's
 * tests start DART hundreds of times) runs on the same machine.
 */
static int cpuinfo_mhz(void)
{
  static int known = -1;
  if (known >= 0) return known;
  known = 0;
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f == NULL) return known;
  char *line = NULL;
  size_t cap = 0;
  double best = 0;
  while (getline(&line, &cap, f) > 0) {
    double mhz;
    const char *colon = strchr(line, ':');
    if (strncmp(line, "cpu MHz", 7) == 0 && colon != NULL &&
        sscanf(colon + 1, "%lf", &mhz) == 1 && mhz > best)
      best = mhz;
  }
  free(line);
  fclose(f);
  if (best >= 1 && best < INT_MAX) known = (int)(best + 0.5);
  return known;
}

/* The "FrequencyMaxMHz" a recorded topology gives the kind of CPU pu (hwloc
 * takes it from cpufreq where it records a machine), 0 where none. */
static int cpukind_mhz(hwloc_topology_t topo, hwloc_obj_t pu)
{
  int kind = hwloc_cpukinds_get_by_cpuset(topo, pu->cpuset, 0);
  unsigned n = 0;
  struct hwloc_info_s *infos = NULL;
  if (kind < 0 || hwloc_cpukinds_get_info(topo, (unsigned)kind, NULL, NULL,
                                          &n, &infos, 0) != 0)
    return 0;
  for (unsigned i = 0; i < n; i++) {
    if (strcmp(infos[i].name, "FrequencyMaxMHz") != 0) continue;
    char *end;
    long mhz = strtol(infos[i].value, &end, 10);
    return *end == '\0' && mhz > 0 && mhz <= INT_MAX ? (int)mhz : 0;
  }
  return 0;
}

/* hwloc's bandwidth from core to its NUMA node in MB/s (hwloc gives MiB/s:
 * on Linux from the firmware's HMAT table, or as an XML records it), 0
 * where none is known. */
static int numa_mbps(hwloc_topology_t topo, hwloc_obj_t numa, hwloc_obj_t core)
{
  struct hwloc_location from = {.type = HWLOC_LOCATION_TYPE_CPUSET,
                                .location.cpuset = core->cpuset};
  hwloc_uint64_t mib = 0;
  if (hwloc_memattr_get_value(topo, HWLOC_MEMATTR_ID_BANDWIDTH, numa, &from,
                              0, &mib) != 0 || mib == 0)
    return 0;
  if (mib > INT_MAX) return INT_MAX;
  hwloc_uint64_t mb = (mib * 1048576 + 500000) / 1000000;
  return mb > INT_MAX ? INT_MAX : (int)mb;
}

/* This machine's memory in bytes, -1 where sysconf cannot tell. */
static int64_t host_bytes(void)
{
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (int64_t)pages * page : -1;
}

static void hwinfo_unknown(dart_hwinfo_t *hw)
{
  memset(hw, 0, sizeof *hw);
  hw->num_cores = hw->num_numa = hw->numa_id = hw->num_sockets = -1;
  hw->core_id = hw->cpu_id = hw->min_cpu_mhz = hw->max_cpu_mhz = -1;
  for (int i = 0; i < DART_LOCALITY_MAX_CACHE_LEVELS; i++)
    hw->cache_sizes[i] = hw->cache_line_sizes[i] = hw->cache_ids[i] = -1;
  hw->min_threads = hw->max_threads = hw->max_shmem_mbps = -1;
  hw->system_memory_bytes = hw->numa_memory_bytes = -1;
  for (int i = 0; i < DART_LOCALITY_MAX_DOMAIN_SCOPES; i++) {
    hw->scopes[i].scope = DART_LOCALITY_SCOPE_UNDEFINED;
    hw->scopes[i].index = -1;
  }
}

/* Fills out from the loaded topology (see dart__team__hwinfo_load). */
static dart_ret_t describe(hwloc_topology_t topo, const char *source,
                           int node_rank, dart__team__hwrec_t *out)
{
  /* some platforms have no core objects: their PUs are the cores */
  hwloc_obj_type_t core_type =
      hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE
                                                         : HWLOC_OBJ_PU;
  int ncores = hwloc_get_nbobjs_by_type(topo, core_type);
  if (ncores <= 0) {
    DART_LOG_ERROR_IN("dart_init", "DART_TOPOLOGY='%s' is not valid: it has "
                      "no processors", source);
    return source[0] ? DART_ERR_INVAL : DART_ERR_OTHER;
  }
  const bool this_machine = hwloc_topology_is_thissystem(topo);
  hwloc_obj_t core = NULL, pu = NULL;
  if (this_machine) {
    dart_ret_t ret = bound_core(topo, core_type, &core, &pu);
    if (ret != DART_OK) return ret;
  }
  if (core == NULL) {
    core = hwloc_get_obj_by_type(topo, core_type, (unsigned)(node_rank %
                                                             ncores));
    DART_LOG_DEBUG("not bound to one core of %s: placed on core %u of %d "
                   "(node rank %d)", this_machine ? "this machine"
                   : "DART_TOPOLOGY", core->logical_index, ncores, node_rank);
  }
  if (pu == NULL || !hwloc_bitmap_isset(core->cpuset, pu->os_index))
    pu = hwloc_get_obj_inside_cpuset_by_type(topo, core->cpuset,
                                             HWLOC_OBJ_PU, 0);
  hwloc_obj_t numa = NULL;
  for (hwloc_obj_t n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE,
                                                  NULL);
       n; n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, n)) {
    if (hwloc_bitmap_intersects(n->cpuset, core->cpuset)) {
      numa = n;
      break;
    }
  }
  if (numa == NULL || pu == NULL) {
    DART_LOG_ERROR_IN("dart_init", "DART_TOPOLOGY='%s' is not valid: core "
                      "%u has no %s", source, core->logical_index,
                      pu ? "NUMA node" : "PU");
    return source[0] ? DART_ERR_INVAL : DART_ERR_OTHER;
  }

  dart_hwinfo_t *hw = &out->hw;
  hw->num_cores = ncores;
  hw->num_numa = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  hw->numa_id = (int)numa->logical_index;
  int sockets = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
  /* a platform (or synthetic description) without package objects still
   * has its processors in one */
  hw->num_sockets = sockets > 0 ? sockets : 1;
  hw->core_id = (int)core->logical_index;
  hw->cpu_id = (int)pu->logical_index;
  /* caches above the core: L1 data (or unified) at index 0, and so on. A
   * cache of unknown size (hwloc: 0) counts as absent, -1 at its level
   * like a cache the core does not have; an unknown line size is that of
   * nearly all CPUs */
  for (hwloc_obj_t obj = core->parent; obj; obj = obj->parent) {
    if (!hwloc_obj_type_is_dcache(obj->type) || obj->attr->cache.size == 0)
      continue;
    int level = (int)obj->attr->cache.depth - 1;
    if (level < 0 || level >= DART_LOCALITY_MAX_CACHE_LEVELS) continue;
    hw->cache_sizes[level] = clamp_int(obj->attr->cache.size);
    hw->cache_line_sizes[level] = obj->attr->cache.linesize > 0
                                      ? (int)obj->attr->cache.linesize
                                      : LINE_BYTES;
    hw->cache_ids[level] = (int)obj->logical_index;
  }
  /* one thread per core at least; the hardware threads of the core at most
   * (clients use SMT only when they ask for the maximum) */
  hw->min_threads = 1;
  hw->max_threads =
      hwloc_get_nbobjs_inside_cpuset_by_type(topo, core->cpuset, HWLOC_OBJ_PU);
  out->numa_cores =
      hwloc_get_nbobjs_inside_cpuset_by_type(topo, numa->cpuset, core_type);
  /* the clock: cpufreq's limits where the kernel has a cpufreq driver,
   * else the one clock /proc/cpuinfo shows; a recorded topology's CPU kind
   * records one clock too */
  out->mhz_source = DART__TEAM__HW_CPUFREQ;
  if (this_machine) {
    hw->min_cpu_mhz = cpufreq_limit(pu->os_index, "min");
    hw->max_cpu_mhz = cpufreq_limit(pu->os_index, "max");
    if (hw->min_cpu_mhz == 0 || hw->max_cpu_mhz < hw->min_cpu_mhz) {
      hw->min_cpu_mhz = hw->max_cpu_mhz = cpuinfo_mhz();
      out->mhz_source = DART__TEAM__HW_CPUINFO;
    }
  } else {
    hw->min_cpu_mhz = hw->max_cpu_mhz = cpukind_mhz(topo, pu);
    out->mhz_source = DART__TEAM__HW_HWLOC;
  }
  if (hw->max_cpu_mhz == 0) {
    hw->min_cpu_mhz = hw->max_cpu_mhz = dart__base__config.cpu_mhz;
    out->mhz_source = DART__TEAM__HW_CONFIG;
  }
  hw->max_shmem_mbps = numa_mbps(topo, numa, core);
  out->mbps_source = DART__TEAM__HW_HWLOC;
  if (hw->max_shmem_mbps == 0) {
    hw->max_shmem_mbps = dart__base__config.shmem_mbps;
    out->mbps_source = DART__TEAM__HW_CONFIG;
  }
  if (this_machine) {
    out->system_bytes = host_bytes();
    /* hwloc's figure for a machine's only NUMA node can be far off (virtual
     * machines): that node holds all the memory */
    out->numa_bytes = hw->num_numa == 1
                          ? out->system_bytes
                          : known_bytes(numa->attr->numanode.local_memory);
  } else {
    out->system_bytes =
        known_bytes(hwloc_get_root_obj(topo)->total_memory);
    out->numa_bytes = known_bytes(numa->attr->numanode.local_memory);
  }
  /* a topology that does not size its memory (a recorded one without
   * figures): the memory of this host, which the unit has, shared evenly
   * by the NUMA nodes */
  if (out->system_bytes < 0) out->system_bytes = host_bytes();
  if (out->numa_bytes < 0 && out->system_bytes > 0)
    out->numa_bytes = out->system_bytes / hw->num_numa;
  hw->system_memory_bytes = to_mib(out->system_bytes);
  hw->numa_memory_bytes = to_mib(out->numa_bytes);
  /* bottom-up, as in DART; locality.c adds the node of each team */
  hw->scopes[0].scope = DART_LOCALITY_SCOPE_CORE;
  hw->scopes[0].index = hw->core_id;
  hw->scopes[1].scope = DART_LOCALITY_SCOPE_NUMA;
  hw->scopes[1].index = hw->numa_id;
  hw->scopes[2].scope = DART_LOCALITY_SCOPE_MODULE;
  hw->scopes[2].index = 0;
  hw->num_scopes = 3;
  return DART_OK;
}

dart_ret_t dart__team__hwinfo_load(const char *host, int node_rank,
                                   dart__team__hwrec_t *out)
{
  dart__team__hwrec_t rec;
  memset(&rec, 0, sizeof rec);
  hwinfo_unknown(&rec.hw);
  rec.system_bytes = rec.numa_bytes = -1;
  snprintf(rec.hw.host, sizeof rec.hw.host, "%s", host);
  const char *source = dart__base__config.topology;
  hwloc_topology_t topo;
  dart_ret_t ret = topology_load(source, &topo);
  if (ret != DART_OK) return ret;
  ret = describe(topo, source, node_rank, &rec);
  hwloc_topology_destroy(topo);
  if (ret != DART_OK) return ret;
  rec.status = DART_OK;
  *out = rec;
  return DART_OK;
}
