/*
 * Hardware locality (dart_locality.h and dart_group_locality_split): the
 * hierarchy of DART_TEAM_ALL and of sub-teams, the units' records, every
 * operation on hierarchies, the locality split of groups, rebuilding, and
 * bad input (error code, one log line naming the function, nothing
 * changed).
 *
 * The expected values follow from the unit count, the layout
 * (DART_UNITS_PER_NODE as dartrun sets it: node u / k, node rank u % k) and
 * the topology:
 *   with DART_TOPOLOGY, the shape on the command line: --shape P,M,C,T
 *   (packages, NUMA nodes per package, cores per NUMA node, PUs per core),
 *   --caches L1,L2,L3 (bytes; L1 and L2 per core, L3 per NUMA node) or
 *   none, --numa-mib X (memory per NUMA node; without it the topology
 *   sizes no memory: this host's, shared evenly by the NUMA nodes),
 *   --mhz A,B,... (the clocks the topology records, cycled over the cores)
 *   and --mbps A,B,... (the bandwidth it records for each NUMA node from
 *   its cores, in MB/s); every unit sits on core (node rank mod cores), as
 *   no unit is bound to a core of such a topology;
 *   without it, this machine as hwloc describes it, each unit on the core
 *   it reports, which it checks against its own binding, with the clock
 *   cpufreq or /proc/cpuinfo shows and hwloc's bandwidth.
 * Clocks and bandwidths the topology does not give are DART_CPU_MHZ and
 * DART_SHMEM_MBPS (or DASH_MAX_SHMEM_MBPS), else 2000 MHz and 1235 MB/s.
 * Every unit also computes DASH's load-balancing weights from all records
 * and splits elements by them, as DASH's LoadBalancePattern does.
 * --bad-env NAME: the variable NAME holds a value dart_init must refuse,
 * with DART_ERR_INVAL and one log line naming NAME and the value.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dart_test_capture.h"

#include <dart/dart_locality.h>
#include <hwloc.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

static int me, nunits;
static int upn; /* DART_UNITS_PER_NODE; 0: all units on this one host */

#define TAG_MAX DART_LOCALITY_DOMAIN_TAG_MAX_SIZE
#define MAX_CORES 512
#define MAX_UNITS 64

/* ---- the expected hardware ---- */

typedef struct {
  bool placed;    /* DART_TOPOLOGY: units sit on core (node rank mod cores) */
  int ncores, nnuma, nsockets;
  int numa_of[MAX_CORES];  /* core -> logical index of its NUMA node */
  int first_pu[MAX_CORES]; /* core -> logical index of its first PU */
  int pus[MAX_CORES];      /* core -> its PUs */
  int numa_cores[MAX_CORES];          /* NUMA node -> its cores */
  long long numa_bytes[MAX_CORES];    /* NUMA node -> memory, -1 unknown */
  long long system_bytes;
  int cache_size[3][MAX_CORES], cache_line[3][MAX_CORES],
      cache_id[3][MAX_CORES];
  int mhz_min[MAX_CORES], mhz_max[MAX_CORES]; /* core -> its clock */
  bool mhz_sampled; /* clocks of the moment (/proc/cpuinfo): near, not equal */
  int mbps[MAX_CORES]; /* core -> bandwidth to its NUMA node, MB/s */
} model_t;

static model_t hw;
static int bound_core = -1, bound_pu = -1; /* this unit's binding (no
                                              DART_TOPOLOGY) */
static int core_of[MAX_UNITS];             /* global unit -> its core */

static int bytes_field(long long b)
{
  return b < 0 ? -1 : b > INT_MAX ? INT_MAX : (int)b;
}

static int mib(long long b)
{
  return b < 0 ? -1 : b < (1 << 20) ? 1 : (int)(b >> 20);
}

/* The configured fallbacks (guide, "Configuration"). */
static int fallback_mhz(void)
{
  const char *v = getenv("DART_CPU_MHZ");
  return v && v[0] ? atoi(v) : 2000;
}

static int fallback_mbps(void)
{
  const char *v = getenv("DART_SHMEM_MBPS");
  if (v == NULL || v[0] == '\0') v = getenv("DASH_MAX_SHMEM_MBPS");
  return v && v[0] ? atoi(v) : 1235;
}

static long long host_bytes(void)
{
  return (long long)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE);
}

/* Up to max comma-separated numbers; returns how many. */
static int number_list(const char *text, int *out, int max)
{
  int n = 0;
  for (const char *p = text; n < max && *p;) {
    char *end;
    long v = strtol(p, &end, 10);
    if (end == p) break;
    out[n++] = (int)v;
    p = *end == ',' ? end + 1 : end;
  }
  return n;
}

/* MiB/s (hwloc's unit) in MB/s, rounded. */
static int mib_to_mb(unsigned long long mib)
{
  return (int)llround((double)mib * 1048576.0 / 1e6);
}

/* The model from --shape/--caches/--numa-mib. */
static bool model_from_args(int argc, char **argv)
{
  int p = 0, m = 0, c = 0, t = 0, caches[3] = {-1, -1, -1};
  int mhz[MAX_CORES], nmhz = 0, mbps[MAX_CORES], nmbps = 0;
  long long numa_mib = -1;
  bool have_shape = false;
  for (int i = 1; i + 1 < argc; i++) {
    if (strcmp(argv[i], "--shape") == 0)
      have_shape = sscanf(argv[i + 1], "%d,%d,%d,%d", &p, &m, &c, &t) == 4;
    else if (strcmp(argv[i], "--caches") == 0 &&
             strcmp(argv[i + 1], "none") != 0)
      sscanf(argv[i + 1], "%d,%d,%d", &caches[0], &caches[1], &caches[2]);
    else if (strcmp(argv[i], "--numa-mib") == 0)
      numa_mib = atoll(argv[i + 1]);
    else if (strcmp(argv[i], "--mhz") == 0)
      nmhz = number_list(argv[i + 1], mhz, MAX_CORES);
    else if (strcmp(argv[i], "--mbps") == 0)
      nmbps = number_list(argv[i + 1], mbps, MAX_CORES);
  }
  if (!have_shape || p * m * c > MAX_CORES || p * m * c <= 0) return false;
  hw.placed = true;
  hw.ncores = p * m * c;
  hw.nnuma = p * m;
  hw.nsockets = p;
  /* a topology without memory figures: this host's, shared evenly */
  hw.system_bytes =
      numa_mib < 0 ? host_bytes() : (numa_mib << 20) * hw.nnuma;
  for (int n = 0; n < hw.nnuma; n++) {
    hw.numa_cores[n] = c;
    hw.numa_bytes[n] =
        numa_mib < 0 ? hw.system_bytes / hw.nnuma : numa_mib << 20;
  }
  for (int k = 0; k < hw.ncores; k++) {
    hw.numa_of[k] = k / c;
    hw.first_pu[k] = k * t;
    hw.pus[k] = t;
    hw.mhz_min[k] = hw.mhz_max[k] = nmhz ? mhz[k % nmhz] : fallback_mhz();
    hw.mbps[k] = hw.numa_of[k] < nmbps ? mbps[hw.numa_of[k]]
                                       : fallback_mbps();
    for (int l = 0; l < 3; l++) {
      hw.cache_size[l][k] = caches[l];
      hw.cache_line[l][k] = caches[l] < 0 ? -1 : 64;
      hw.cache_id[l][k] = caches[l] < 0 ? -1 : l < 2 ? k : k / c;
    }
  }
  return true;
}

/* cpufreq's limit of a CPU in MHz, 0 where the kernel does not say. */
static int cpufreq_mhz(unsigned cpu, const char *which)
{
  char path[128];
  snprintf(path, sizeof path,
           "/sys/devices/system/cpu/cpu%u/cpufreq/cpuinfo_%s_freq", cpu,
           which);
  FILE *f = fopen(path, "r");
  long khz = 0;
  if (f != NULL) {
    if (fscanf(f, "%ld", &khz) != 1) khz = 0;
    fclose(f);
  }
  return (int)(khz / 1000);
}

/* The lowest and highest "cpu MHz" of /proc/cpuinfo, rounded (0: none). */
static void cpuinfo_clocks(int *lo, int *hi)
{
  *lo = *hi = 0;
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f == NULL) return;
  char line[4096];
  double min = 0, max = 0;
  while (fgets(line, sizeof line, f)) {
    double mhz;
    if (sscanf(line, "cpu MHz : %lf", &mhz) == 1) {
      if (min == 0 || mhz < min) min = mhz;
      if (mhz > max) max = mhz;
    }
  }
  fclose(f);
  *lo = (int)lround(min);
  *hi = (int)lround(max);
}

/* The model of this machine, and this unit's binding. */
static bool model_from_machine(void)
{
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0 || hwloc_topology_load(topo) != 0)
    return false;
  hwloc_obj_type_t core_type =
      hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE
                                                         : HWLOC_OBJ_PU;
  hw.ncores = hwloc_get_nbobjs_by_type(topo, core_type);
  hw.nnuma = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  int sockets = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
  hw.nsockets = sockets > 0 ? sockets : 1;
  if (hw.ncores > MAX_CORES || hw.nnuma > MAX_CORES) {
    hwloc_topology_destroy(topo);
    return false;
  }
  hw.system_bytes = host_bytes();
  int lo_mhz, hi_mhz;
  cpuinfo_clocks(&lo_mhz, &hi_mhz);
  for (int n = 0; n < hw.nnuma; n++) {
    hwloc_obj_t numa = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, n);
    hw.numa_cores[n] =
        hwloc_get_nbobjs_inside_cpuset_by_type(topo, numa->cpuset, core_type);
    /* one NUMA node holds all of the memory (hwloc's figure can be off) */
    hw.numa_bytes[n] = hw.nnuma == 1 ? hw.system_bytes
                       : numa->attr->numanode.local_memory
                           ? (long long)numa->attr->numanode.local_memory
                           : -1;
  }
  for (int k = 0; k < hw.ncores; k++) {
    hwloc_obj_t core = hwloc_get_obj_by_type(topo, core_type, k);
    hw.numa_of[k] = -1;
    for (int n = 0; n < hw.nnuma && hw.numa_of[k] < 0; n++) {
      hwloc_obj_t numa = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, n);
      if (hwloc_bitmap_intersects(numa->cpuset, core->cpuset))
        hw.numa_of[k] = n;
    }
    hw.first_pu[k] = (int)hwloc_get_obj_inside_cpuset_by_type(
                         topo, core->cpuset, HWLOC_OBJ_PU, 0)
                         ->logical_index;
    hw.pus[k] =
        hwloc_get_nbobjs_inside_cpuset_by_type(topo, core->cpuset,
                                               HWLOC_OBJ_PU);
    for (int l = 0; l < 3; l++)
      hw.cache_size[l][k] = hw.cache_line[l][k] = hw.cache_id[l][k] = -1;
    for (hwloc_obj_t o = core->parent; o; o = o->parent) {
      if (!hwloc_obj_type_is_dcache(o->type) || o->attr->cache.size == 0)
        continue;
      int l = (int)o->attr->cache.depth - 1;
      if (l < 0 || l > 2) continue;
      hw.cache_size[l][k] = (int)o->attr->cache.size;
      hw.cache_line[l][k] =
          o->attr->cache.linesize ? (int)o->attr->cache.linesize : 64;
      hw.cache_id[l][k] = (int)o->logical_index;
    }
    /* cpufreq's limits of the core's CPU, else /proc/cpuinfo's clock */
    unsigned os = hwloc_get_obj_inside_cpuset_by_type(topo, core->cpuset,
                                                      HWLOC_OBJ_PU, 0)
                      ->os_index;
    hw.mhz_min[k] = cpufreq_mhz(os, "min");
    hw.mhz_max[k] = cpufreq_mhz(os, "max");
    if (hw.mhz_min[k] <= 0 || hw.mhz_max[k] < hw.mhz_min[k]) {
      hw.mhz_min[k] = hw.mhz_max[k] = hi_mhz > 0 ? hi_mhz : fallback_mhz();
      hw.mhz_sampled = hi_mhz > lo_mhz;
    }
    /* hwloc's bandwidth from the core to its NUMA node */
    hwloc_obj_t numa = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE,
                                             (unsigned)hw.numa_of[k]);
    struct hwloc_location from = {.type = HWLOC_LOCATION_TYPE_CPUSET,
                                  .location.cpuset = core->cpuset};
    hwloc_uint64_t bw = 0;
    hw.mbps[k] = numa != NULL &&
                         hwloc_memattr_get_value(topo,
                                                 HWLOC_MEMATTR_ID_BANDWIDTH,
                                                 numa, &from, 0, &bw) == 0 &&
                         bw > 0
                     ? mib_to_mb(bw)
                     : fallback_mbps();
  }
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0) {
    for (int k = 0; k < hw.ncores; k++) {
      hwloc_obj_t core = hwloc_get_obj_by_type(topo, core_type, k);
      if (!hwloc_bitmap_iszero(set) &&
          hwloc_bitmap_isincluded(set, core->cpuset)) {
        bound_core = k;
        bound_pu = (int)hwloc_get_pu_obj_by_os_index(
                       topo, (unsigned)hwloc_bitmap_first(set))
                       ->logical_index;
      }
    }
  }
  hwloc_bitmap_free(set);
  hwloc_topology_destroy(topo);
  return true;
}

/* ---- the expected layout ---- */

static int node_of(int u) { return upn > 0 ? u / upn : 0; }
static int node_rank(int u) { return upn > 0 ? u % upn : u; }

static void node_host(int node, char *out)
{
  char name[DART_LOCALITY_HOST_MAX_SIZE];
  if (gethostname(name, sizeof name) != 0) name[0] = '\0';
  name[sizeof name - 1] = '\0';
  if (upn > 0)
    snprintf(out, DART_LOCALITY_HOST_MAX_SIZE, "%.40s#%d", name, node);
  else
    snprintf(out, DART_LOCALITY_HOST_MAX_SIZE, "%s", name);
}

static void child_tag(char *out, const char *parent, int i)
{
  int len = strcmp(parent, ".") == 0 ? snprintf(out, TAG_MAX, ".%d", i)
                                     : snprintf(out, TAG_MAX, "%s.%d", parent,
                                                i);
  if (len >= TAG_MAX) FAILF("tag %s.%d is too long", parent, i);
}

/* ---- fingerprints: a hierarchy as text, to compare before and after ---- */

typedef struct {
  char *s;
  size_t n, cap;
} text_t;

static void text_add(text_t *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void text_add(text_t *t, const char *fmt, ...)
{
  char buf[512];
  va_list args;
  va_start(args, fmt);
  int len = vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  if (len < 0) return;
  if (t->n + (size_t)len + 1 > t->cap) {
    t->cap = (t->n + (size_t)len + 1) * 2;
    t->s = realloc(t->s, t->cap);
  }
  memcpy(t->s + t->n, buf, (size_t)len + 1);
  t->n += (size_t)len;
}

static void print_domain(text_t *t, const dart_domain_locality_t *d,
                         bool with_global)
{
  text_add(t, "{%s s%d l%d g%d r%d t%d n%d id%d c%d m%d y%d h'%s' u",
           d->domain_tag, (int)d->scope, d->level,
           with_global ? d->global_index : 0, d->relative_index, d->team,
           d->num_nodes, d->node_id, d->num_cores, d->shared_mem_bytes,
           d->is_symmetric, d->host);
  for (int i = 0; i < d->num_units; i++) text_add(t, ",%d", d->unit_ids[i].id);
  text_add(t, " [%d]", d->num_domains);
  for (int i = 0; i < d->num_domains; i++)
    print_domain(t, d->children[i], with_global);
  text_add(t, "}");
}

static char *fingerprint(const dart_domain_locality_t *d, bool with_global)
{
  text_t t = {0};
  print_domain(&t, d, with_global);
  return t.s;
}

#define CHECK_SAME_TREE(a, b)                                          \
  do {                                                                 \
    if (strcmp((a), (b)) != 0)                                         \
      FAILF("hierarchies differ:\n  %.250s\n  %.250s", (a), (b));      \
  } while (0)

/* ---- checks of hierarchies ---- */

/* Structure every hierarchy keeps: links, positions, levels, sorted unit
 * lists (a domain's subdomains holding all of its units), node fields
 * within nodes, tags extending their parent's, global indices. */
static void check_shape_rec(int line, const dart_domain_locality_t *d,
                            const dart_domain_locality_t *node, int *next)
{
  static const dart_locality_scope_t scopes[] = {
      DART_LOCALITY_SCOPE_GLOBAL, DART_LOCALITY_SCOPE_GROUP,
      DART_LOCALITY_SCOPE_NETWORK, DART_LOCALITY_SCOPE_NODE,
      DART_LOCALITY_SCOPE_MODULE, DART_LOCALITY_SCOPE_NUMA,
      DART_LOCALITY_SCOPE_UNIT, DART_LOCALITY_SCOPE_PACKAGE,
      DART_LOCALITY_SCOPE_UNCORE, DART_LOCALITY_SCOPE_CACHE,
      DART_LOCALITY_SCOPE_CORE, DART_LOCALITY_SCOPE_CPU};
  if (d->scope == DART_LOCALITY_SCOPE_NODE) node = d;
  int slot = 12; /* UNDEFINED */
  for (int i = 0; i < 12; i++)
    if (d->scope == scopes[i]) slot = i;
  if (d->global_index != next[slot]++)
    FAIL_AT(line, "'%s': global index %d, want %d", d->domain_tag,
            d->global_index, next[slot] - 1);
  for (int i = 1; i < d->num_units; i++)
    if (d->unit_ids[i].id <= d->unit_ids[i - 1].id)
      FAIL_AT(line, "'%s': unit list not sorted", d->domain_tag);
  if (node != NULL && (d->num_nodes != 1 || d->node_id != node->node_id))
    FAIL_AT(line, "'%s': %d nodes, node %d within node %d", d->domain_tag,
            d->num_nodes, d->node_id, node->node_id);
  int below = 0;
  for (int i = 0; i < d->num_domains; i++) {
    const dart_domain_locality_t *c = d->children[i];
    if (c->parent != d || c->relative_index != i ||
        c->level != d->level + 1)
      FAIL_AT(line, "'%s' child %d ('%s'): parent %p, index %d, level %d",
              d->domain_tag, i, c->domain_tag, (void *)c->parent,
              c->relative_index, c->level);
    size_t base = strcmp(d->domain_tag, ".") ? strlen(d->domain_tag) : 0;
    if (strncmp(c->domain_tag, d->domain_tag, base) != 0 ||
        c->domain_tag[base] != '.')
      FAIL_AT(line, "tag '%s' below '%s'", c->domain_tag, d->domain_tag);
    below += c->num_units;
    for (int u = 0; u < c->num_units; u++) {
      bool found = false;
      for (int k = 0; k < d->num_units && !found; k++)
        found = d->unit_ids[k].id == c->unit_ids[u].id;
      if (!found)
        FAIL_AT(line, "unit %d of '%s' is not in '%s'", c->unit_ids[u].id,
                c->domain_tag, d->domain_tag);
    }
    check_shape_rec(line, c, node, next);
  }
  if (d->num_domains > 0 && below != d->num_units)
    FAIL_AT(line, "'%s' has %d units, its subdomains %d", d->domain_tag,
            d->num_units, below);
}

static void check_shape_at(int line, const dart_domain_locality_t *root)
{
  int next[16] = {0};
  if (root->parent != NULL) FAIL_AT(line, "root has a parent");
  check_shape_rec(line, root, NULL, next);
}
#define CHECK_SHAPE(root) check_shape_at(__LINE__, (root))

/* The units u of list[0..n) for which keep(u) holds. */
static int filter_units(const int *list, int n, bool (*keep)(int, int),
                        int arg, int *out)
{
  int k = 0;
  for (int i = 0; i < n; i++)
    if (keep(list[i], arg)) out[k++] = list[i];
  return k;
}

static bool on_node(int u, int node) { return node_of(u) == node; }
static bool on_numa(int u, int numa) { return hw.numa_of[core_of[u]] == numa; }

/* units[0..n) (ascending) in the order of their CORE domains within a NUMA
 * domain: by physical core, units of one core by id. */
static void order_by_core(int *units, int n)
{
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && core_of[units[j - 1]] > core_of[units[j]]; j--) {
      int x = units[j];
      units[j] = units[j - 1];
      units[j - 1] = x;
    }
}

static void expect_units(int line, const dart_domain_locality_t *d,
                         const int *units, int n)
{
  bool same = d->num_units == n;
  for (int i = 0; same && i < n; i++) same = d->unit_ids[i].id == units[i];
  if (!same)
    FAIL_AT(line, "'%s' holds %d units (first %d), want %d (first %d)",
            d->domain_tag, d->num_units,
            d->num_units ? d->unit_ids[0].id : -1, n, n ? units[0] : -1);
}

typedef struct {
  dart_locality_scope_t scope;
  int level, rel, node_id, cores, shared, children, global;
  const char *tag, *host;
  dart_team_t team;
} expect_t;

static void expect_domain(int line, const dart_domain_locality_t *d,
                          const dart_domain_locality_t *parent,
                          const expect_t *e, const int *units, int n)
{
  if (d->scope != e->scope || d->level != e->level ||
      d->relative_index != e->rel || d->parent != parent ||
      strcmp(d->domain_tag, e->tag) != 0 || d->team != e->team ||
      d->global_index != e->global)
    FAIL_AT(line, "domain '%s' (want '%s'): scope %d/%d level %d/%d index "
            "%d/%d global %d/%d team %d/%d parent %s",
            d->domain_tag, e->tag, (int)d->scope, (int)e->scope, d->level,
            e->level, d->relative_index, e->rel, d->global_index, e->global,
            d->team, e->team, d->parent == parent ? "ok" : "wrong");
  if (d->node_id != e->node_id || d->num_cores != e->cores ||
      d->shared_mem_bytes != e->shared || d->num_domains != e->children ||
      strcmp(d->host, e->host) != 0 || d->is_symmetric != 1 ||
      d->num_nodes != (e->node_id >= 0 ? 1 : d->num_nodes))
    FAIL_AT(line, "domain '%s': node %d/%d cores %d/%d shared %d/%d "
            "subdomains %d/%d host '%s'/'%s' symmetric %d",
            d->domain_tag, d->node_id, e->node_id, d->num_cores, e->cores,
            d->shared_mem_bytes, e->shared, d->num_domains, e->children,
            d->host, e->host, d->is_symmetric);
  expect_units(line, d, units, n);
}

/* The distinct values f(u) of units[0..n), ascending (order: by first
 * appearance instead). */
static int distinct(const int *units, int n, int (*f)(int), bool order,
                    int *out)
{
  int k = 0;
  for (int i = 0; i < n; i++) {
    int v = f(units[i]), j = 0;
    while (j < k && out[j] != v) j++;
    if (j == k) out[k++] = v;
  }
  for (int i = 1; i < k && !order; i++)
    for (int j = i; j > 0 && out[j - 1] > out[j]; j--) {
      int x = out[j];
      out[j] = out[j - 1];
      out[j - 1] = x;
    }
  return k;
}

static int f_node(int u) { return node_of(u); }
static int f_numa(int u) { return hw.numa_of[core_of[u]]; }

static char leaf_tag[MAX_UNITS][TAG_MAX]; /* of the last tree checked */

/* The whole hierarchy of team (members: its units' global ids) as the
 * model and the layout say it must be: GLOBAL (level 0) -> NODE -> MODULE
 * -> NUMA -> one CORE leaf per unit (level 4), as DART-MPI builds it. */
static void check_team_tree(int line, dart_team_t team,
                            const dart_domain_locality_t *root,
                            const int *members, int n)
{
  int nodes[MAX_UNITS], nn = distinct(members, n, f_node, true, nodes);
  char host0[DART_LOCALITY_HOST_MAX_SIZE];
  node_host(nodes[0], host0);
  const long long sys = hw.system_bytes;
  expect_t e = {DART_LOCALITY_SCOPE_GLOBAL, 0, 0, nn == 1 ? 0 : -1,
                nn * hw.ncores, nn == 1 ? bytes_field(sys) : 0, nn, 0,
                ".", nn == 1 ? host0 : "", team};
  expect_domain(line, root, NULL, &e, members, n);
  if (root->num_nodes != nn)
    FAIL_AT(line, "root: %d nodes, want %d", root->num_nodes, nn);
  if (root->num_domains != nn) return;
  int g_numa = 0, g_core = 0;
  for (int i = 0; i < nn; i++) {
    int nu[MAX_UNITS], k = filter_units(members, n, on_node, nodes[i], nu);
    char host[DART_LOCALITY_HOST_MAX_SIZE], tag[TAG_MAX], mtag[TAG_MAX];
    node_host(nodes[i], host);
    const dart_domain_locality_t *node = root->children[i];
    child_tag(tag, ".", i);
    int numas[MAX_UNITS], nnum = distinct(nu, k, f_numa, false, numas);
    e = (expect_t){DART_LOCALITY_SCOPE_NODE, 1, i, i, hw.ncores,
                   bytes_field(sys), 1, i, tag, host, team};
    expect_domain(line, node, root, &e, nu, k);
    if (node->num_domains != 1) continue;
    const dart_domain_locality_t *module = node->children[0];
    child_tag(mtag, tag, 0);
    e = (expect_t){DART_LOCALITY_SCOPE_MODULE, 2, 0, i, hw.ncores,
                   bytes_field(sys), nnum, i, mtag, host, team};
    expect_domain(line, module, node, &e, nu, k);
    if (module->num_domains != nnum) continue;
    for (int j = 0; j < nnum; j++) {
      int mu[MAX_UNITS], km = filter_units(nu, k, on_numa, numas[j], mu);
      char ntag[TAG_MAX];
      child_tag(ntag, mtag, j);
      const dart_domain_locality_t *numa = module->children[j];
      const int shared = bytes_field(hw.numa_bytes[numas[j]]);
      e = (expect_t){DART_LOCALITY_SCOPE_NUMA, 3, j, i,
                     hw.numa_cores[numas[j]], shared, km, g_numa++, ntag,
                     host, team};
      expect_domain(line, numa, module, &e, mu, km);
      if (numa->num_domains != km) continue;
      /* one CORE domain per unit, also where units share a core */
      order_by_core(mu, km);
      for (int c = 0; c < km; c++) {
        char ctag[TAG_MAX];
        child_tag(ctag, ntag, c);
        e = (expect_t){DART_LOCALITY_SCOPE_CORE, 4, c, i, 1, shared, 0,
                       g_core++, ctag, host, team};
        expect_domain(line, numa->children[c], numa, &e, &mu[c], 1);
        snprintf(leaf_tag[mu[c]], TAG_MAX, "%s", ctag);
      }
    }
  }
  check_shape_at(line, root);
}

/* What a client may compute with is positive whatever the topology: the
 * counts, clocks, bandwidth and memory, and the caches the core has (a
 * level it lacks is -1 throughout). */
static void check_usable(int line, int u, const dart_hwinfo_t *h)
{
  if (h->num_cores < 1 || h->num_numa < 1 || h->num_sockets < 1 ||
      h->min_threads < 1 || h->max_threads < h->min_threads ||
      h->min_cpu_mhz < 1 || h->max_cpu_mhz < h->min_cpu_mhz ||
      h->max_shmem_mbps < 1 || h->system_memory_bytes < 1 ||
      h->numa_memory_bytes < 1 ||
      h->numa_memory_bytes > h->system_memory_bytes)
    FAIL_AT(line, "unit %d: a value clients compute with is not usable: "
            "cores %d numa %d sockets %d threads %d..%d MHz %d..%d "
            "shmem %d MB/s memory %d MiB NUMA %d MiB", u, h->num_cores,
            h->num_numa, h->num_sockets, h->min_threads, h->max_threads,
            h->min_cpu_mhz, h->max_cpu_mhz, h->max_shmem_mbps,
            h->system_memory_bytes, h->numa_memory_bytes);
  for (int l = 0; l < DART_LOCALITY_MAX_CACHE_LEVELS; l++) {
    bool absent = h->cache_sizes[l] == -1 && h->cache_line_sizes[l] == -1 &&
                  h->cache_ids[l] == -1;
    if (!absent && (h->cache_sizes[l] < 1 || h->cache_line_sizes[l] < 1 ||
                    h->cache_ids[l] < 0))
      FAIL_AT(line, "unit %d: L%d cache %d bytes, lines of %d, id %d", u,
              l + 1, h->cache_sizes[l], h->cache_line_sizes[l],
              h->cache_ids[l]);
  }
}

/* The records of team's units: hardware of the model, leaf tags of the
 * tree checked last, the node as the team numbers it. */
static void check_records(int line, dart_team_t team, const int *members,
                          int n)
{
  int nodes[MAX_UNITS];
  distinct(members, n, f_node, true, nodes);
  for (int t = 0; t < n; t++) {
    const int u = members[t], c = core_of[u];
    dart_unit_locality_t *rec = NULL;
    dart_ret_t ret = dart_unit_locality(team, DART_TEAM_UNIT_ID(t), &rec);
    if (ret != DART_OK || rec == NULL) {
      FAIL_AT(line, "dart_unit_locality(%d, %d) returned %d", team, t, ret);
      continue;
    }
    const dart_hwinfo_t *h = &rec->hwinfo;
    char host[DART_LOCALITY_HOST_MAX_SIZE];
    node_host(node_of(u), host);
    int tnode = 0;
    while (nodes[tnode] != node_of(u)) tnode++;
    if (rec->unit.id != t || rec->team != team ||
        strcmp(rec->domain_tag, leaf_tag[u]) != 0 ||
        strcmp(h->host, host) != 0)
      FAIL_AT(line, "record of unit %d in team %d: unit %d team %d tag '%s' "
              "(want '%s') host '%s' (want '%s')", u, team, rec->unit.id,
              rec->team, rec->domain_tag, leaf_tag[u], h->host, host);
    const int numa = hw.numa_of[c];
    /* the node's cores shared among the team's units there, as DART-MPI
     * reports them (DASH starts a thread per core of a unit) */
    int peers = 0;
    for (int v = 0; v < n; v++) peers += node_of(members[v]) == node_of(u);
    const int cores = hw.ncores / peers > 0 ? hw.ncores / peers : 1;
    if (h->num_cores != cores || h->num_numa != hw.nnuma ||
        h->numa_id != numa || h->num_sockets != hw.nsockets ||
        h->core_id != c || h->min_threads != 1 || h->max_threads != hw.pus[c])
      FAIL_AT(line, "unit %d: cores %d/%d numa %d/%d id %d/%d sockets %d/%d "
              "core %d/%d threads %d,%d/%d", u, h->num_cores, cores,
              h->num_numa, hw.nnuma, h->numa_id, numa, h->num_sockets,
              hw.nsockets, h->core_id, c, h->min_threads, h->max_threads,
              hw.pus[c]);
    int cpu = u == me && bound_core >= 0 ? bound_pu : hw.first_pu[c];
    if (hw.placed || u == me) {
      if (h->cpu_id != cpu)
        FAIL_AT(line, "unit %d: cpu %d, want %d", u, h->cpu_id, cpu);
    }
    for (int l = 0; l < 3; l++)
      if (h->cache_sizes[l] != hw.cache_size[l][c] ||
          h->cache_line_sizes[l] != hw.cache_line[l][c] ||
          h->cache_ids[l] != hw.cache_id[l][c])
        FAIL_AT(line, "unit %d: L%d cache %d/%d line %d/%d id %d/%d", u,
                l + 1, h->cache_sizes[l], hw.cache_size[l][c],
                h->cache_line_sizes[l], hw.cache_line[l][c], h->cache_ids[l],
                hw.cache_id[l][c]);
    for (int l = 3; l < DART_LOCALITY_MAX_CACHE_LEVELS; l++)
      if (h->cache_sizes[l] != -1)
        FAIL_AT(line, "unit %d: L%d cache %d", u, l + 1, h->cache_sizes[l]);
    if (h->system_memory_bytes != mib(hw.system_bytes) ||
        h->numa_memory_bytes != mib(hw.numa_bytes[numa]) ||
        h->max_shmem_mbps != hw.mbps[c])
      FAIL_AT(line, "unit %d: memory %d/%d MiB, NUMA %d/%d MiB, shmem "
              "%d/%d MB/s", u, h->system_memory_bytes, mib(hw.system_bytes),
              h->numa_memory_bytes, mib(hw.numa_bytes[numa]),
              h->max_shmem_mbps, hw.mbps[c]);
    /* clocks of the moment: the same within a quarter */
    bool mhz_ok = hw.mhz_sampled
                      ? h->min_cpu_mhz == h->max_cpu_mhz &&
                            abs(h->max_cpu_mhz - hw.mhz_max[c]) <=
                                hw.mhz_max[c] / 4.0
                      : h->min_cpu_mhz == hw.mhz_min[c] &&
                            h->max_cpu_mhz == hw.mhz_max[c];
    if (!mhz_ok)
      FAIL_AT(line, "unit %d: MHz %d..%d, want %d..%d", u, h->min_cpu_mhz,
              h->max_cpu_mhz, hw.mhz_min[c], hw.mhz_max[c]);
    check_usable(line, u, h);
    const dart_locality_scope_pos_t want[4] = {
        {DART_LOCALITY_SCOPE_CORE, c},
        {DART_LOCALITY_SCOPE_NUMA, numa},
        {DART_LOCALITY_SCOPE_MODULE, 0},
        {DART_LOCALITY_SCOPE_NODE, tnode}};
    bool scopes_ok = h->num_scopes == 4;
    for (int s = 0; s < 4 && scopes_ok; s++)
      scopes_ok = h->scopes[s].scope == want[s].scope &&
                  h->scopes[s].index == want[s].index;
    for (int s = 4; s < DART_LOCALITY_MAX_DOMAIN_SCOPES && scopes_ok; s++)
      scopes_ok = h->scopes[s].scope == DART_LOCALITY_SCOPE_UNDEFINED;
    if (!scopes_ok)
      FAIL_AT(line, "unit %d: %d scopes, first (%d,%d)", u, h->num_scopes,
              (int)h->scopes[0].scope, h->scopes[0].index);
  }
}

/* ---- load balancing as DASH computes it ---- */

/*
 * The weights of DASH's LoadBalancePattern (dash/pattern/
 * LoadBalancePattern.h) from the records of n units, in DASH's arithmetic
 * (int products, then double): UnitClockFreqMeasure (cores x threads x
 * max MHz over its mean), BytesPerCycleMeasure (max(0, bandwidth) over
 * threads x max MHz, over its mean), their product over its mean. Threads
 * are max_threads with DASH_MAX_SMT, else min_threads.
 */
static void dash_weights(dart_hwinfo_t *const *h, int n, bool smt,
                         double *cpu, double *mem, double *load)
{
  double cpu_sum = 0, mem_sum = 0, load_sum = 0;
  for (int u = 0; u < n; u++) {
    int threads = smt ? h[u]->max_threads : h[u]->min_threads;
    cpu[u] = h[u]->num_cores * threads * h[u]->max_cpu_mhz;
    cpu_sum += cpu[u];
    double bw = h[u]->max_shmem_mbps > 0 ? h[u]->max_shmem_mbps : 0;
    double fq = threads * h[u]->max_cpu_mhz;
    mem[u] = bw / fq;
    mem_sum += mem[u];
  }
  for (int u = 0; u < n; u++) {
    cpu[u] /= cpu_sum / n;
    mem[u] /= mem_sum / n;
    load[u] = cpu[u] * mem[u];
    load_sum += load[u];
  }
  if (load_sum > 0)
    for (int u = 0; u < n; u++) load[u] /= load_sum / n;
}

/* DASH's local sizes of total elements by those weights (finite ones):
 * floor, or ceil above the mean, and the rest to the largest. */
static void dash_split(const double *load, int n, size_t total,
                       size_t *sizes)
{
  if (n == 1) {
    sizes[0] = total;
    return;
  }
  double balanced = (double)total / n;
  size_t assigned = 0, largest = 0;
  int largest_unit = 0;
  for (int u = 0; u < n; u++) {
    size_t size = load[u] > 1 ? (size_t)ceil(load[u] * balanced)
                              : (size_t)floor(load[u] * balanced);
    if (size > largest) {
      largest = size;
      largest_unit = u;
    }
    assigned += size;
    sizes[u] = size;
  }
  sizes[largest_unit] += total - assigned;
}

/*
 * The weights of every unit of DART_TEAM_ALL are finite and positive
 * (equal hardware: 1, but for DASH's rounding of the means), and a split by
 * them gives every unit its weighted share within one element per unit
 * (the rest of the rounding goes to one unit), all adding up to the total;
 * a negative size would wrap to far beyond it.
 * DASH's rule rounds every share above the mean up and gives the excess
 * back from the largest share, which wraps where there are fewer elements
 * than that excess: the totals here are n * n at least. And from 9 units
 * on, equal weights can round to just above 1 (some clocks and
 * bandwidths), which does the same: this check runs up to 8 units.
 */
static void test_load_balance(void)
{
  if (nunits > 8) return;
  dart_hwinfo_t *h[MAX_UNITS];
  for (int u = 0; u < nunits; u++) {
    dart_unit_locality_t *rec = NULL;
    CHECK_OK(dart_unit_locality(DART_TEAM_ALL, DART_TEAM_UNIT_ID(u), &rec));
    if (rec == NULL) return;
    h[u] = &rec->hwinfo;
  }
  bool equal = true;
  for (int u = 1; u < nunits; u++)
    equal = equal && h[u]->num_cores == h[0]->num_cores &&
            h[u]->min_threads == h[0]->min_threads &&
            h[u]->max_threads == h[0]->max_threads &&
            h[u]->max_cpu_mhz == h[0]->max_cpu_mhz &&
            h[u]->max_shmem_mbps == h[0]->max_shmem_mbps;
  const size_t totals[] = {(size_t)nunits * nunits, 2017, 1000003,
                           (size_t)1 << 40};
  for (int smt = 0; smt < 2; smt++) {
    double cpu[MAX_UNITS], mem[MAX_UNITS], load[MAX_UNITS];
    dash_weights(h, nunits, smt, cpu, mem, load);
    bool usable = true;
    for (int u = 0; u < nunits; u++) {
      if (!isfinite(cpu[u]) || !isfinite(mem[u]) || !isfinite(load[u]) ||
          cpu[u] <= 0 || mem[u] <= 0 || load[u] <= 0 ||
          (equal && (fabs(cpu[u] - 1) > 1e-12 || fabs(mem[u] - 1) > 1e-12 ||
                     fabs(load[u] - 1) > 1e-12))) {
        FAILF("DASH's weights of unit %d (smt %d): cpu %g, memory %g, "
              "load %g", u, smt, cpu[u], mem[u], load[u]);
        usable = false;
      }
    }
    if (!usable) continue;
    for (size_t i = 0; i < sizeof totals / sizeof *totals; i++) {
      size_t sizes[MAX_UNITS], sum = 0;
      dash_split(load, nunits, totals[i], sizes);
      for (int u = 0; u < nunits; u++) {
        sum += sizes[u];
        double share = load[u] * (double)totals[i] / nunits;
        if (sizes[u] > totals[i] || fabs((double)sizes[u] - share) > nunits)
          FAILF("%zu elements by DASH's weights: unit %d (weight %g) gets "
                "%zu", totals[i], u, load[u], sizes[u]);
      }
      if (sum != totals[i])
        FAILF("%zu elements by DASH's weights add up to %zu", totals[i], sum);
    }
  }
}

/* ---- queries ---- */

static dart_domain_locality_t *find_at(int line,
                                       const dart_domain_locality_t *in,
                                       const char *tag)
{
  dart_domain_locality_t *d = NULL;
  dart_ret_t ret = dart_domain_find(in, tag, &d);
  if (ret != DART_OK || d == NULL || strcmp(d->domain_tag, tag) != 0) {
    FAIL_AT(line, "dart_domain_find('%s', '%s') returned %d", in->domain_tag,
            tag, (int)ret);
    return NULL;
  }
  return d;
}
#define FIND(in, tag) find_at(__LINE__, (in), (tag))

/* A call that must return want and log nothing (not finding is an answer,
 * not bad input). */
static void expect_quiet_at(int line, const char *call, dart_ret_t got,
                            dart_ret_t want)
{
  char text[2048];
  int lines = capture_end(text, sizeof text);
  if (got != want || lines != 0)
    FAIL_AT(line, "%s returned %d (want %d) and logged %d lines: \"%s\"",
            call, (int)got, (int)want, lines, text);
}
#define QUIET(want, call)                                     \
  do {                                                        \
    capture_begin();                                          \
    dart_ret_t quiet_ret_ = (call);                           \
    expect_quiet_at(__LINE__, #call, quiet_ret_, want);       \
  } while (0)

/* dart_domain_find of a well-formed tag of no domain: DART_ERR_NOTFOUND,
 * NULL, no log line. */
static void expect_not_found_at(int line, const dart_domain_locality_t *in,
                                const char *tag)
{
  dart_domain_locality_t *d = (dart_domain_locality_t *)in;
  capture_begin();
  dart_ret_t ret = dart_domain_find(in, tag, &d);
  expect_quiet_at(line, "dart_domain_find", ret, DART_ERR_NOTFOUND);
  if (d != NULL)
    FAIL_AT(line, "dart_domain_find('%s', '%s') found nothing but set %p",
            in->domain_tag, tag, (void *)d);
}
#define EXPECT_NOT_FOUND(in, tag) expect_not_found_at(__LINE__, (in), (tag))

static int all_units[MAX_UNITS];
static int num_nodes_all;

static int node_units(int node, int *out)
{
  return filter_units(all_units, nunits, on_node, node, out);
}

static void test_queries(const dart_domain_locality_t *root)
{
  CHECK(FIND(root, ".") == root);
  dart_domain_locality_t *d = FIND(root, leaf_tag[nunits - 1]);
  CHECK(d && d->scope == DART_LOCALITY_SCOPE_CORE && d->level == 4 &&
        d->num_units == 1 && d->unit_ids[0].id == nunits - 1);
  d = FIND(root, ".0.0");
  CHECK(d && d->scope == DART_LOCALITY_SCOPE_MODULE);
  /* from a subdomain */
  d = FIND(root->children[0], ".0.0");
  CHECK(d && d->scope == DART_LOCALITY_SCOPE_MODULE);
  CHECK_OK(dart_domain_team_locality(DART_TEAM_ALL, leaf_tag[me], &d));
  CHECK(d && d->num_units == 1 && d->unit_ids[0].id == me);
  /* well-formed tags of no domain: not found, NULL, nothing logged */
  EXPECT_NOT_FOUND(root, ".99");
  EXPECT_NOT_FOUND(root, ".0.0.0.0.0");
  char below_leaf[TAG_MAX];
  child_tag(below_leaf, leaf_tag[me], 0);
  EXPECT_NOT_FOUND(root, below_leaf);
  if (num_nodes_all > 1) EXPECT_NOT_FOUND(root->children[0], ".1");

  /* tags and domains by scope, depth-first */
  int n = -1;
  char **tags = NULL;
  CHECK_OK(dart_domain_scope_tags(root, DART_LOCALITY_SCOPE_NODE, &n, &tags));
  CHECK_EQ(n, num_nodes_all);
  for (int i = 0; i < n && tags; i++) {
    char want[TAG_MAX];
    child_tag(want, ".", i);
    if (strcmp(tags[i], want) != 0) FAILF("node tag '%s', want '%s'", tags[i],
                                          want);
    free(tags[i]);
  }
  free(tags);
  /* the leaves: one CORE domain per unit */
  dart_domain_locality_t **doms = NULL;
  CHECK_OK(dart_domain_scope_tags(root, DART_LOCALITY_SCOPE_CORE, &n, &tags));
  CHECK_EQ(n, nunits);
  CHECK_OK(dart_domain_scope_domains(root, DART_LOCALITY_SCOPE_CORE, &n,
                                     &doms));
  CHECK_EQ(n, nunits);
  int seen[MAX_UNITS] = {0};
  for (int i = 0; i < n && tags && doms; i++) {
    if (strcmp(tags[i], doms[i]->domain_tag) != 0 ||
        doms[i]->scope != DART_LOCALITY_SCOPE_CORE ||
        doms[i]->num_units != 1 || doms[i]->num_domains != 0 ||
        strcmp(leaf_tag[doms[i]->unit_ids[0].id], tags[i]) != 0)
      FAILF("leaf %d: tag '%s', domain '%s'", i, tags[i],
            doms[i]->domain_tag);
    if (i > 0 && strcmp(doms[i - 1]->parent->domain_tag,
                        doms[i]->parent->domain_tag) > 0 &&
        doms[i - 1]->parent->parent == doms[i]->parent->parent)
      FAILF("leaves out of depth-first order at %d", i);
    seen[doms[i]->unit_ids[0].id]++;
    free(tags[i]);
  }
  for (int u = 0; u < nunits; u++)
    if (seen[u] != 1) FAILF("unit %d in %d leaves", u, seen[u]);
  free(tags);
  free(doms);
  /* NUMA domains: one per (node, NUMA node) */
  int want_numa = 0;
  for (int node = 0; node < num_nodes_all; node++) {
    int nu[MAX_UNITS], k = node_units(node, nu), v[MAX_UNITS];
    want_numa += distinct(nu, k, f_numa, false, v);
  }
  CHECK_OK(dart_domain_scope_domains(root, DART_LOCALITY_SCOPE_NUMA, &n,
                                     &doms));
  CHECK_EQ(n, want_numa);
  for (int i = 0; i < n; i++) CHECK(doms[i]->scope == DART_LOCALITY_SCOPE_NUMA);
  free(doms);
  /* a domain at the scope is the only one taken from its subtree */
  CHECK_OK(dart_domain_scope_domains(root->children[0],
                                     DART_LOCALITY_SCOPE_NODE, &n, &doms));
  CHECK(n == 1 && doms[0] == root->children[0]);
  free(doms);
  CHECK_OK(dart_domain_scope_domains(root, DART_LOCALITY_SCOPE_GLOBAL, &n,
                                     &doms));
  CHECK(n == 1 && doms[0] == root);
  free(doms);
  /* a scope without domains: none, not an error (UNIT too: a unit's
   * domain is its CORE domain) */
  doms = (dart_domain_locality_t **)&n;
  CHECK_OK(dart_domain_scope_domains(root, DART_LOCALITY_SCOPE_PACKAGE, &n,
                                     &doms));
  CHECK(n == 0 && doms == NULL);
  doms = (dart_domain_locality_t **)&n;
  CHECK_OK(dart_domain_scope_domains(root, DART_LOCALITY_SCOPE_UNIT, &n,
                                     &doms));
  CHECK(n == 0 && doms == NULL);
  tags = (char **)&n;
  CHECK_OK(dart_domain_scope_tags(root, DART_LOCALITY_SCOPE_CACHE, &n,
                                  &tags));
  CHECK(n == 0 && tags == NULL);
}

/* ---- operations on copies ---- */

static dart_domain_locality_t *clone_of(const dart_domain_locality_t *d)
{
  dart_domain_locality_t *c = NULL;
  CHECK_OK(dart_domain_clone(d, &c));
  return c;
}

/* What DASH's DARTLocalityTest checks of a unit's own domain (UnitLocality,
 * ExcludeLocalityDomain): found by the tag of its record, of scope CORE at
 * level > 2, holding the unit alone; gone from a copy that excludes it. */
static void test_unit_domain(const dart_domain_locality_t *root)
{
  dart_unit_locality_t *ul = NULL;
  dart_domain_locality_t *dl = NULL;
  CHECK_OK(dart_unit_locality(DART_TEAM_ALL, DART_TEAM_UNIT_ID(me), &ul));
  if (ul == NULL) return;
  CHECK_EQ(ul->unit.id, me);
  CHECK_OK(dart_domain_team_locality(DART_TEAM_ALL, ul->domain_tag, &dl));
  if (dl == NULL) return;
  if (dl->scope != DART_LOCALITY_SCOPE_CORE || dl->level <= 2 ||
      dl->level != 4 || dl->num_units != 1 || dl->unit_ids[0].id != me ||
      dl->num_domains != 0 || dl->children != NULL ||
      strcmp(dl->domain_tag, ul->domain_tag) != 0 ||
      dl->parent->scope != DART_LOCALITY_SCOPE_NUMA)
    FAILF("unit %d's domain '%s': scope %d level %d units %d (first %d) "
          "subdomains %d", me, dl->domain_tag, (int)dl->scope, dl->level,
          dl->num_units, dl->num_units ? dl->unit_ids[0].id : -1,
          dl->num_domains);
  CHECK(FIND(root, ul->domain_tag) == dl);
  dart_domain_locality_t *c = clone_of(root);
  const char *excluded = ul->domain_tag;
  CHECK_OK(dart_domain_exclude(c, 1, &excluded));
  EXPECT_NOT_FOUND(c, ul->domain_tag);
  CHECK_OK(dart_domain_destroy(c));
}

static void expect_union(int line, const dart_domain_locality_t *d,
                         const int *a, int na, const int *b, int nb)
{
  int all[MAX_UNITS], n = 0;
  for (int u = 0; u < nunits; u++) {
    bool in = false;
    for (int i = 0; i < na && !in; i++) in = a[i] == u;
    for (int i = 0; i < nb && !in; i++) in = b[i] == u;
    if (in) all[n++] = u;
  }
  expect_units(line, d, all, n);
}

static void test_clone_assign(const dart_domain_locality_t *root)
{
  char *want = fingerprint(root, true);
  dart_domain_locality_t *c = clone_of(root);
  char *got = fingerprint(c, true);
  CHECK_SAME_TREE(want, got);
  CHECK(c != root && c->children[0] != root->children[0] &&
        c->unit_ids != root->unit_ids && c->children[0]->parent == c);
  free(got);

  dart_domain_locality_t *a = NULL, *e = NULL;
  CHECK_OK(dart_domain_create(&a));
  CHECK_OK(dart_domain_create(&e));
  CHECK(a->scope == DART_LOCALITY_SCOPE_UNDEFINED && a->num_units == 0 &&
        a->num_domains == 0 && a->parent == NULL &&
        strcmp(a->domain_tag, ".") == 0 && a->unit_ids == NULL &&
        a->children == NULL);
  CHECK_OK(dart_domain_assign(a, root));
  got = fingerprint(a, true);
  CHECK_SAME_TREE(want, got);
  free(got);
  /* a subdomain, then a subdomain of the domain assigned to */
  char *node0 = fingerprint(root->children[0], true);
  CHECK_OK(dart_domain_assign(a, root->children[0]));
  got = fingerprint(a, true);
  CHECK_SAME_TREE(node0, got);
  CHECK(a->parent == NULL && a->children[0]->parent == a);
  free(got);
  char *module0 = fingerprint(root->children[0]->children[0], true);
  CHECK_OK(dart_domain_assign(a, a->children[0]));
  got = fingerprint(a, true);
  CHECK_SAME_TREE(module0, got);
  free(got);
  CHECK_OK(dart_domain_assign(a, a));
  got = fingerprint(a, true);
  CHECK_SAME_TREE(module0, got);
  free(got);
  CHECK_OK(dart_domain_assign(a, e));
  CHECK(a->num_units == 0 && a->num_domains == 0 && a->children == NULL);
  CHECK_OK(dart_domain_destroy(a));
  CHECK_OK(dart_domain_destroy(e));
  CHECK_OK(dart_domain_destroy(c));
  free(module0);
  free(node0);
  free(want);
}

static void test_select_exclude(const dart_domain_locality_t *root)
{
  int n0[MAX_UNITS], k0 = node_units(0, n0);
  const int last = nunits - 1, last_node = node_of(last);
  char host0[DART_LOCALITY_HOST_MAX_SIZE];
  node_host(0, host0);

  /* one node */
  dart_domain_locality_t *c = clone_of(root);
  const char *sel[] = {".0"};
  CHECK_OK(dart_domain_select(c, 1, sel));
  CHECK_SHAPE(c);
  CHECK_EQ(c->num_domains, 1);
  expect_units(__LINE__, c, n0, k0);
  CHECK(c->num_nodes == 1 && c->node_id == 0 && strcmp(c->host, host0) == 0 &&
        c->num_cores == hw.ncores &&
        c->shared_mem_bytes == bytes_field(hw.system_bytes));
  char *want = fingerprint(root->children[0], true);
  char *got = fingerprint(c->children[0], true);
  CHECK_SAME_TREE(want, got);
  free(got);
  free(want);
  CHECK_OK(dart_domain_destroy(c));

  /* a module and one leaf: the leaf's ancestors stay, tags do not change */
  c = clone_of(root);
  const char *sel2[] = {leaf_tag[last], ".0.0"};
  CHECK_OK(dart_domain_select(c, 2, sel2));
  CHECK_SHAPE(c);
  int lastu[1] = {last};
  expect_union(__LINE__, c, n0, k0, lastu, 1);
  CHECK_EQ(c->num_domains, last_node == 0 ? 1 : 2);
  CHECK_EQ(c->num_nodes, last_node == 0 ? 1 : 2);
  dart_domain_locality_t *leaf = FIND(c, leaf_tag[last]);
  CHECK(leaf && leaf->unit_ids[0].id == last);
  if (last_node != 0 && c->num_domains == 2) {
    char tag[TAG_MAX];
    child_tag(tag, ".", last_node);
    CHECK(strcmp(c->children[1]->domain_tag, tag) == 0 &&
          c->children[1]->num_units == 1 &&
          c->children[1]->relative_index == 1);
  }
  CHECK_OK(dart_domain_destroy(c));

  /* exclude a node; put a copy of it back */
  c = clone_of(root);
  const char *ex[] = {".0"};
  CHECK_OK(dart_domain_exclude(c, 1, ex));
  CHECK_SHAPE(c);
  CHECK_EQ(c->num_domains, num_nodes_all - 1);
  CHECK_EQ(c->num_units, nunits - k0);
  CHECK_EQ(c->num_nodes, num_nodes_all - 1);
  if (num_nodes_all > 1) {
    CHECK(strcmp(c->children[0]->domain_tag, ".1") == 0);
    CHECK_EQ(c->num_cores, (num_nodes_all - 1) * hw.ncores);
    CHECK_EQ(c->shared_mem_bytes,
             num_nodes_all == 2 ? bytes_field(hw.system_bytes) : 0);
  } else {
    CHECK(c->node_id == -1 && c->num_cores == 0 && c->shared_mem_bytes == 0 &&
          c->host[0] == '\0' && c->unit_ids == NULL);
  }
  char *excluded = fingerprint(c, true);
  dart_domain_locality_t *c2 = clone_of(root);
  const char *ex2[] = {".0.0", ".0", ".0"}; /* nested and repeated */
  CHECK_OK(dart_domain_exclude(c2, 3, ex2));
  got = fingerprint(c2, true);
  CHECK_SAME_TREE(excluded, got);
  free(got);
  free(excluded);
  CHECK_OK(dart_domain_destroy(c2));
  dart_domain_locality_t *sub = clone_of(root->children[0]);
  CHECK_OK(dart_domain_add_subdomain(c, sub, 0));
  want = fingerprint(root, true);
  got = fingerprint(c, true);
  CHECK_SAME_TREE(want, got);
  free(got);
  free(want);
  CHECK_OK(dart_domain_destroy(c));

  /* exclude this unit's CORE domain: its NUMA domain keeps its place,
   * without units if it held this unit only; the other leaves keep their
   * tags, so that the tag excluded names no domain */
  c = clone_of(root);
  const char *ex3[] = {leaf_tag[me]};
  char numa_tag[TAG_MAX];
  snprintf(numa_tag, sizeof numa_tag, "%s", leaf_tag[me]);
  *strrchr(numa_tag, '.') = '\0';
  int on_my_numa = 0;
  for (int u = 0; u < nunits; u++)
    on_my_numa += node_of(u) == node_of(me) &&
                  hw.numa_of[core_of[u]] == hw.numa_of[core_of[me]];
  CHECK_OK(dart_domain_exclude(c, 1, ex3));
  CHECK_SHAPE(c);
  CHECK_EQ(c->num_units, nunits - 1);
  dart_domain_locality_t *numa = FIND(c, numa_tag);
  CHECK(numa && numa->num_units == on_my_numa - 1 &&
        numa->num_domains == on_my_numa - 1);
  EXPECT_NOT_FOUND(c, leaf_tag[me]);
  for (int u = 0; u < nunits; u++) {
    if (u == me) continue;
    dart_domain_locality_t *leaf = FIND(c, leaf_tag[u]);
    CHECK(leaf && leaf->num_units == 1 && leaf->unit_ids[0].id == u);
  }
  CHECK_OK(dart_domain_destroy(c));
}

static void test_group(const dart_domain_locality_t *root)
{
  int n0[MAX_UNITS], k0 = node_units(0, n0);
  int n1[MAX_UNITS], k1 = num_nodes_all > 1 ? node_units(1, n1) : 0;
  char host0[DART_LOCALITY_HOST_MAX_SIZE], tag[TAG_MAX] = "unset";
  node_host(0, host0);
  dart_domain_locality_t *c = clone_of(root);
  if (num_nodes_all > 1) {
    const char *two[] = {".1", ".0"};
    CHECK_OK(dart_domain_group(c, 2, two, tag));
    CHECK_SHAPE(c);
    CHECK(strcmp(tag, ".0") == 0);
    CHECK_EQ(c->num_domains, num_nodes_all - 1);
    CHECK_EQ(c->num_units, nunits);
    const dart_domain_locality_t *g = c->children[0];
    CHECK(g->scope == DART_LOCALITY_SCOPE_GROUP && g->level == 1 &&
          g->num_domains == 2 && g->num_nodes == 2 && g->node_id == -1 &&
          g->host[0] == '\0' && g->num_cores == 2 * hw.ncores &&
          g->shared_mem_bytes == 0 && g->team == DART_TEAM_ALL);
    expect_union(__LINE__, g, n0, k0, n1, k1);
    expect_units(__LINE__, g->children[0], n0, k0);
    expect_units(__LINE__, g->children[1], n1, k1);
    CHECK(strcmp(g->children[1]->domain_tag, ".0.1") == 0 &&
          strcmp(g->children[1]->children[0]->domain_tag, ".0.1.0") == 0 &&
          g->children[1]->level == 2);
    if (num_nodes_all > 2)
      CHECK(strcmp(c->children[1]->domain_tag, ".1") == 0 &&
            c->children[1]->node_id == 2);
  } else {
    const char *one[] = {".0"};
    CHECK_OK(dart_domain_group(c, 1, one, tag));
    CHECK_SHAPE(c);
    const dart_domain_locality_t *g = c->children[0];
    CHECK(strcmp(tag, ".0") == 0 && g->scope == DART_LOCALITY_SCOPE_GROUP &&
          g->num_domains == 1 && g->num_nodes == 1 && g->node_id == 0 &&
          strcmp(g->host, host0) == 0 && g->num_cores == hw.ncores &&
          g->shared_mem_bytes == bytes_field(hw.system_bytes));
    expect_units(__LINE__, g, n0, k0);
  }
  CHECK_OK(dart_domain_destroy(c));

  /* the CORE domains of the first NUMA domain, within node 0 */
  c = clone_of(root);
  const dart_domain_locality_t *numa = FIND(c, ".0.0.0");
  if (numa != NULL) {
    const int nc = numa->num_domains;
    char ctags[MAX_UNITS][TAG_MAX];
    const char *ptrs[MAX_UNITS];
    for (int i = 0; i < nc; i++) {
      snprintf(ctags[i], TAG_MAX, "%s", numa->children[i]->domain_tag);
      ptrs[i] = ctags[i];
    }
    int nu = numa->num_units;
    CHECK_OK(dart_domain_group(c, nc, ptrs, tag));
    CHECK_SHAPE(c);
    CHECK(strcmp(tag, ".0.0.0.0") == 0 && numa->num_domains == 1);
    const dart_domain_locality_t *g = numa->children[0];
    CHECK(g->scope == DART_LOCALITY_SCOPE_GROUP && g->num_domains == nc &&
          nc == nu && g->num_units == nu && g->num_nodes == 1 &&
          g->node_id == 0 && strcmp(g->host, host0) == 0 &&
          g->num_cores == nc &&
          g->shared_mem_bytes == numa->shared_mem_bytes && g->level == 4 &&
          g->children[0]->level == 5 &&
          g->children[0]->scope == DART_LOCALITY_SCOPE_CORE &&
          strcmp(g->children[0]->domain_tag, ".0.0.0.0.0") == 0 &&
          g->children[0]->num_domains == 0);
  }
  CHECK_OK(dart_domain_destroy(c));
}

static void test_move(const dart_domain_locality_t *root)
{
  const int last = nunits - 1;
  char *want = fingerprint(root, true);
  dart_domain_locality_t *c = clone_of(root);
  /* the last unit's leaf to the front of unit 0's NUMA domain */
  dart_domain_locality_t *leaf = FIND(c, leaf_tag[last]);
  dart_domain_locality_t *numa0 = FIND(c, leaf_tag[0]);
  if (leaf == NULL || numa0 == NULL) {
    free(want);
    return;
  }
  numa0 = numa0->parent;
  dart_domain_locality_t *old_numa = leaf->parent;
  const int old_numa_units = old_numa->num_units;
  const int numa0_units = numa0->num_units;
  CHECK_OK(dart_domain_move_subdomain(leaf, numa0, 0));
  CHECK_SHAPE(c);
  CHECK_EQ(c->num_units, nunits);
  CHECK(leaf->parent == numa0 && numa0->children[0] == leaf &&
        leaf->node_id == 0 && leaf->level == 4);
  if (last == 0) {
    char *got = fingerprint(c, true);
    CHECK_SAME_TREE(want, got);
    free(got);
  } else {
    char tag[TAG_MAX];
    child_tag(tag, numa0->domain_tag, 0);
    CHECK(strcmp(leaf->domain_tag, tag) == 0);
    CHECK_EQ(numa0->num_units, numa0_units + (old_numa == numa0 ? 0 : 1));
    if (old_numa != numa0) CHECK_EQ(old_numa->num_units, old_numa_units - 1);
    int n0[MAX_UNITS], k0 = node_units(0, n0);
    CHECK_EQ(c->children[0]->num_units, k0 + (node_of(last) != 0));
  }
  CHECK_OK(dart_domain_destroy(c));

  if (num_nodes_all > 1) {
    int n1[MAX_UNITS], k1 = node_units(1, n1);
    c = clone_of(root);
    dart_domain_locality_t *node1 = c->children[1];
    CHECK_OK(dart_domain_move_subdomain(node1, c, 0));
    CHECK_SHAPE(c);
    CHECK(c->children[0] == node1 && strcmp(node1->domain_tag, ".0") == 0 &&
          strcmp(c->children[1]->domain_tag, ".1") == 0 &&
          strcmp(node1->children[0]->domain_tag, ".0.0") == 0);
    expect_units(__LINE__, node1, n1, k1);
    CHECK_OK(dart_domain_move_subdomain(node1, c, 1));
    char *got = fingerprint(c, true);
    CHECK_SAME_TREE(want, got);
    free(got);
    CHECK_OK(dart_domain_move_subdomain(c->children[0], c, -1));
    CHECK_SHAPE(c);
    int n0[MAX_UNITS], k0 = node_units(0, n0);
    expect_units(__LINE__, c->children[num_nodes_all - 1], n0, k0);
    /* a node into another node's module: units follow */
    CHECK_OK(dart_domain_move_subdomain(c->children[0],
                                        c->children[1]->children[0], -1));
    CHECK_SHAPE(c);
    CHECK_EQ(c->num_domains, num_nodes_all - 1);
    CHECK_EQ(c->num_units, nunits);
    CHECK_OK(dart_domain_destroy(c));
  }
  free(want);
}

/* Reference of the balanced split: runs of the k weights w into
 * min(parts, k) parts, each ending at the boundary nearest its share of
 * the weight (the later one on a tie), every run non-empty. */
static int ref_runs(const long long *w, int k, int parts, int *ends)
{
  if (parts >= k) {
    for (int p = 0; p < k; p++) ends[p] = p + 1;
    return k;
  }
  long long total = 0;
  for (int i = 0; i < k; i++) total += w[i];
  int b = 0;
  for (int p = 0; p < parts - 1; p++) {
    long long best = -1;
    int at = -1;
    for (int e = b + 1; e <= k - (parts - 1 - p); e++) {
      long long cum = 0;
      for (int i = 0; i < e; i++) cum += total ? w[i] : 1;
      long long dist = llabs(cum * parts - (p + 1) * (total ? total : k));
      if (best < 0 || dist <= best) {
        best = dist;
        at = e;
      }
    }
    ends[p] = b = at;
  }
  ends[parts - 1] = k;
  return parts;
}

static void test_split_scope(const dart_domain_locality_t *root)
{
  dart_domain_locality_t *empty = NULL;
  CHECK_OK(dart_domain_create(&empty));
  /* at NODE scope, into 1 .. nodes + 1 parts */
  for (int parts = 1; parts <= num_nodes_all + 1; parts++) {
    dart_domain_locality_t *out = calloc((size_t)parts, sizeof *out);
    long long w[MAX_UNITS];
    int ends[MAX_UNITS];
    for (int i = 0; i < num_nodes_all; i++) {
      int nu[MAX_UNITS];
      w[i] = node_units(i, nu);
    }
    int runs = ref_runs(w, num_nodes_all, parts, ends);
    CHECK_OK(dart_domain_split_scope(root, DART_LOCALITY_SCOPE_NODE, parts,
                                     out));
    for (int p = 0; p < parts; p++) {
      const dart_domain_locality_t *part = &out[p];
      CHECK_SHAPE(part);
      int first = p == 0 ? 0 : p < runs ? ends[p - 1] : num_nodes_all;
      int end = p < runs ? ends[p] : num_nodes_all;
      int units[MAX_UNITS], n = 0;
      for (int u = 0; u < nunits; u++)
        if (node_of(u) >= first && node_of(u) < end) units[n++] = u;
      expect_units(__LINE__, part, units, n);
      CHECK(part->scope == DART_LOCALITY_SCOPE_GLOBAL &&
            strcmp(part->domain_tag, ".") == 0);
      if (part->num_domains != end - first) {
        FAILF("%d parts: part %d has %d nodes, want %d", parts, p,
              part->num_domains, end - first);
        continue;
      }
      for (int i = first; i < end; i++) {
        char tag[TAG_MAX];
        child_tag(tag, ".", i);
        if (strcmp(part->children[i - first]->domain_tag, tag) != 0)
          FAILF("%d parts: part %d node '%s', want '%s'", parts, p,
                part->children[i - first]->domain_tag, tag);
      }
      CHECK_EQ(part->num_nodes, end - first);
    }
    for (int p = 0; p < parts; p++) CHECK_OK(dart_domain_assign(&out[p],
                                                                empty));
    free(out);
  }
  /* at CORE scope, one part per unit */
  dart_domain_locality_t *out = calloc((size_t)nunits, sizeof *out);
  dart_domain_locality_t **leaves = NULL;
  int n = 0;
  CHECK_OK(dart_domain_scope_domains(root, DART_LOCALITY_SCOPE_CORE, &n,
                                     &leaves));
  CHECK_EQ(n, nunits);
  CHECK_OK(dart_domain_split_scope(root, DART_LOCALITY_SCOPE_CORE, nunits,
                                   out));
  for (int p = 0; p < nunits && p < n; p++) {
    CHECK_SHAPE(&out[p]);
    CHECK(out[p].num_units == 1 &&
          out[p].unit_ids[0].id == leaves[p]->unit_ids[0].id &&
          out[p].num_domains == 1);
    dart_domain_locality_t *leaf = FIND(&out[p], leaves[p]->domain_tag);
    CHECK(leaf && leaf->parent->num_domains == 1 &&
          leaf->scope == DART_LOCALITY_SCOPE_CORE);
    CHECK_OK(dart_domain_assign(&out[p], empty));
  }
  free(leaves);
  free(out);
  CHECK_OK(dart_domain_destroy(empty));
}

/* ---- dart_group_locality_split ---- */

static dart_group_t group_of(bool (*keep)(int, int), int arg)
{
  dart_group_t g = NULL;
  CHECK_OK(dart_group_create(&g));
  for (int u = 0; u < nunits; u++)
    if (keep(u, arg)) CHECK_OK(dart_group_addmember(g, DART_GLOBAL_UNIT_ID(u)));
  return g;
}

static bool any_unit(int u, int arg)
{
  (void)u;
  (void)arg;
  return true;
}
static bool odd_unit(int u, int arg)
{
  (void)arg;
  return u % 2 == 1;
}

static void expect_group_at(int line, dart_group_t g, const int *units, int n)
{
  size_t size = 0;
  dart_global_unit_t mem[MAX_UNITS];
  CHECK_OK(dart_group_size(g, &size));
  CHECK_OK(dart_group_getmembers(g, mem));
  bool same = size == (size_t)n;
  for (int i = 0; same && i < n; i++) same = mem[i].id == units[i];
  if (!same)
    FAIL_AT(line, "group of %zu units (first %d), want %d (first %d)", size,
            size ? mem[0].id : -1, n, n ? units[0] : -1);
}

/* Splits the members (keep) along the nodes of root into 1 .. size + 1
 * parts and checks them against the reference. */
static void check_node_split(const dart_domain_locality_t *root,
                             bool (*keep)(int, int))
{
  dart_group_t g = group_of(keep, 0);
  /* the nodes holding members, their weights */
  long long w[MAX_UNITS];
  int node_at[MAX_UNITS], k = 0;
  for (int node = 0; node < num_nodes_all; node++) {
    int c = 0;
    for (int u = 0; u < nunits; u++) c += keep(u, 0) && node_of(u) == node;
    if (c > 0) {
      node_at[k] = node;
      w[k++] = c;
    }
  }
  for (int n = 1; n <= nunits + 1; n++) {
    dart_group_t out[MAX_UNITS + 1];
    size_t nout = 12345;
    int ends[MAX_UNITS];
    int runs = ref_runs(w, k, n, ends);
    CHECK_OK(dart_group_locality_split(g, (dart_domain_locality_t *)root,
                                       DART_LOCALITY_SCOPE_NODE, (size_t)n,
                                       &nout, out));
    CHECK_EQ(nout, runs);
    for (int p = 0; p < n; p++) {
      int units[MAX_UNITS], m = 0;
      if (p < runs) {
        int first = p == 0 ? 0 : ends[p - 1];
        for (int u = 0; u < nunits; u++)
          for (int i = first; i < ends[p]; i++)
            if (keep(u, 0) && node_of(u) == node_at[i]) units[m++] = u;
      }
      expect_group_at(__LINE__, out[p], units, m);
      CHECK_OK(dart_group_destroy(&out[p]));
    }
  }
  CHECK_OK(dart_group_destroy(&g));
}

/* Balanced splits worked out by hand: units, units per node, parts, and
 * the first unit of each part. */
static const struct {
  int units, upn, parts, first[4];
} hand_splits[] = {
    {8, 3, 2, {0, 3}},       /* nodes 3 3 2 */
    {8, 3, 3, {0, 3, 6}},
    {8, 2, 3, {0, 2, 6}},    /* nodes 2 2 2 2 */
    {8, 1, 3, {0, 3, 5}},    /* shares 2.67 and 5.33 of 8 */
    {4, 1, 3, {0, 1, 3}},
    {3, 2, 2, {0, 2}},
    {4, 3, 2, {0, 3}},
    {3, 1, 2, {0, 2}},       /* a tie: the later boundary */
};

static void test_group_split(const dart_domain_locality_t *root)
{
  check_node_split(root, any_unit);
  check_node_split(root, odd_unit);
  for (size_t i = 0; i < sizeof hand_splits / sizeof *hand_splits; i++) {
    if (hand_splits[i].units != nunits || hand_splits[i].upn != upn)
      continue;
    const int parts = hand_splits[i].parts;
    dart_group_t g = group_of(any_unit, 0), out[4];
    size_t nout = 0;
    CHECK_OK(dart_group_locality_split(g, (dart_domain_locality_t *)root,
                                       DART_LOCALITY_SCOPE_NODE,
                                       (size_t)parts, &nout, out));
    CHECK_EQ(nout, parts);
    for (int p = 0; p < parts; p++) {
      int first = hand_splits[i].first[p];
      int end = p + 1 < parts ? hand_splits[i].first[p + 1] : nunits;
      int units[MAX_UNITS];
      for (int u = first; u < end; u++) units[u - first] = u;
      expect_group_at(__LINE__, out[p], units, end - first);
      CHECK_OK(dart_group_destroy(&out[p]));
    }
    CHECK_OK(dart_group_destroy(&g));
  }
  /* one group per unit at CORE scope (units sharing a physical core
   * apart); one group at GLOBAL scope */
  dart_group_t g = group_of(any_unit, 0), out[MAX_UNITS + 1];
  size_t nout = 0;
  CHECK_OK(dart_group_locality_split(g, (dart_domain_locality_t *)root,
                                     DART_LOCALITY_SCOPE_CORE,
                                     (size_t)nunits, &nout, out));
  CHECK_EQ(nout, nunits);
  dart_domain_locality_t **leaves = NULL;
  int n = 0;
  CHECK_OK(dart_domain_scope_domains(root, DART_LOCALITY_SCOPE_CORE, &n,
                                     &leaves));
  for (int p = 0; p < nunits; p++) {
    int u = p < n ? leaves[p]->unit_ids[0].id : -1;
    expect_group_at(__LINE__, out[p], &u, 1);
    CHECK_OK(dart_group_destroy(&out[p]));
  }
  free(leaves);
  CHECK_OK(dart_group_locality_split(g, (dart_domain_locality_t *)root,
                                     DART_LOCALITY_SCOPE_GLOBAL, 2, &nout,
                                     out));
  CHECK_EQ(nout, 1);
  expect_group_at(__LINE__, out[0], all_units, nunits);
  expect_group_at(__LINE__, out[1], NULL, 0);
  CHECK_OK(dart_group_destroy(&out[0]));
  CHECK_OK(dart_group_destroy(&out[1]));
  CHECK_OK(dart_group_destroy(&g));
  /* an empty group: every part empty */
  CHECK_OK(dart_group_create(&g));
  CHECK_OK(dart_group_locality_split(g, (dart_domain_locality_t *)root,
                                     DART_LOCALITY_SCOPE_NODE, 2, &nout,
                                     out));
  CHECK_EQ(nout, 0);
  for (int p = 0; p < 2; p++) {
    expect_group_at(__LINE__, out[p], NULL, 0);
    CHECK_OK(dart_group_destroy(&out[p]));
  }
  CHECK_OK(dart_group_destroy(&g));
}

/* ---- sub-teams ---- */

static void check_subteam(int line, dart_group_t g, const int *units, int n)
{
  dart_team_t t = DART_TEAM_NULL;
  CHECK_OK(dart_team_create(DART_TEAM_ALL, g, &t));
  bool member = false;
  for (int i = 0; i < n; i++) member |= units[i] == me;
  if (!member) {
    if (t != DART_TEAM_NULL) FAIL_AT(line, "non-member got team %d", t);
    return;
  }
  dart_domain_locality_t *root = NULL;
  dart_ret_t ret = dart_domain_team_locality(t, ".", &root);
  if (ret != DART_OK || root == NULL) {
    FAIL_AT(line, "team %d has no hierarchy (%d)", t, (int)ret);
  } else {
    check_team_tree(line, t, root, units, n);
    check_records(line, t, units, n);
    /* rebuilt on request: the same again */
    char *before = fingerprint(root, true);
    CHECK_OK(dart_team_locality_init(t));
    CHECK_OK(dart_domain_team_locality(t, ".", &root));
    char *after = fingerprint(root, true);
    CHECK_SAME_TREE(before, after);
    free(after);
    free(before);
  }
  CHECK_OK(dart_team_destroy(&t));
}

static void test_subteams(const dart_domain_locality_t *root)
{
  /* one team per node, from the split along the nodes */
  dart_group_t all = group_of(any_unit, 0), parts[MAX_UNITS];
  size_t nout = 0;
  CHECK_OK(dart_group_locality_split(all, (dart_domain_locality_t *)root,
                                     DART_LOCALITY_SCOPE_NODE,
                                     (size_t)num_nodes_all, &nout, parts));
  CHECK_EQ(nout, num_nodes_all);
  for (int node = 0; node < num_nodes_all; node++) {
    int nu[MAX_UNITS], k = node_units(node, nu);
    check_subteam(__LINE__, parts[node], nu, k);
    CHECK_OK(dart_group_destroy(&parts[node]));
  }
  CHECK_OK(dart_group_destroy(&all));
  /* every other unit: nodes numbered by the team */
  int even[MAX_UNITS], ne = 0;
  for (int u = 0; u < nunits; u += 2) even[ne++] = u;
  dart_group_t g = NULL;
  CHECK_OK(dart_group_create(&g));
  for (int i = 0; i < ne; i++)
    CHECK_OK(dart_group_addmember(g, DART_GLOBAL_UNIT_ID(even[i])));
  check_subteam(__LINE__, g, even, ne);
  CHECK_OK(dart_group_destroy(&g));
}

/* ---- bad input ---- */

static void test_bad_input(dart_domain_locality_t *root)
{
  const char *dtl = "dart_domain_team_locality";
  char *before = fingerprint(root, true);
  dart_domain_locality_t *c = clone_of(root), *keep_out = (void *)&before;
  dart_domain_locality_t *out = keep_out;
  char *clone_before = fingerprint(c, true);
  dart_unit_locality_t *loc = (void *)&before;

  /* teams: unknown, destroyed, without a hierarchy; units outside */
  dart_team_t gone = DART_TEAM_NULL;
  CHECK_OK(dart_team_clone(DART_TEAM_ALL, &gone));
  dart_team_t gone_id = gone;
  CHECK_OK(dart_team_destroy(&gone));
  INVAL("dart_team_locality_init", dart_team_locality_init(999));
  INVAL("dart_team_locality_init", dart_team_locality_init(gone_id));
  INVAL("dart_team_locality_finalize", dart_team_locality_finalize(-7));
  INVAL(dtl, dart_domain_team_locality(999, ".", &out));
  INVAL(dtl, dart_domain_team_locality(gone_id, ".", &out));
  INVAL(dtl, dart_domain_team_locality(DART_TEAM_ALL, NULL, &out));
  INVAL(dtl, dart_domain_team_locality(DART_TEAM_ALL, ".", NULL));
  const char *malformed[] = {"", "0", "0.1", ".x", "..", ".0.", ".-1",
                             ". 0", ".0..1",
                             ".0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0"};
  for (size_t i = 0; i < sizeof malformed / sizeof *malformed; i++) {
    INVAL(dtl, dart_domain_team_locality(DART_TEAM_ALL, malformed[i], &out));
    INVAL("dart_domain_find", dart_domain_find(c, malformed[i], &out));
  }
  BAD(DART_ERR_NOTFOUND, dtl,
      dart_domain_team_locality(DART_TEAM_ALL, ".99", &out));
  BAD(DART_ERR_NOTFOUND, dtl,
      dart_domain_team_locality(DART_TEAM_ALL, ".0.0.0.0.0.7", &out));
  INVAL("dart_unit_locality",
        dart_unit_locality(999, DART_TEAM_UNIT_ID(0), &loc));
  INVAL("dart_unit_locality",
        dart_unit_locality(DART_TEAM_ALL, DART_TEAM_UNIT_ID(-1), &loc));
  INVAL("dart_unit_locality",
        dart_unit_locality(DART_TEAM_ALL, DART_TEAM_UNIT_ID(nunits), &loc));
  INVAL("dart_unit_locality",
        dart_unit_locality(DART_TEAM_ALL, DART_TEAM_UNIT_ID(0), NULL));
  CHECK(out == keep_out && loc == (void *)&before);

  /* create, clone, destroy, assign */
  INVAL("dart_domain_create", dart_domain_create(NULL));
  INVAL("dart_domain_clone", dart_domain_clone(NULL, &out));
  INVAL("dart_domain_clone", dart_domain_clone(c, NULL));
  INVAL("dart_domain_destroy", dart_domain_destroy(NULL));
  INVAL("dart_domain_destroy", dart_domain_destroy(root));
  INVAL("dart_domain_destroy", dart_domain_destroy(c->children[0]));
  INVAL("dart_domain_assign", dart_domain_assign(NULL, c));
  INVAL("dart_domain_assign", dart_domain_assign(c, NULL));
  INVAL("dart_domain_assign", dart_domain_assign(root, c));
  INVAL("dart_domain_assign", dart_domain_assign(c->children[0], c));
  CHECK(out == keep_out);

  /* find: NULL arguments and malformed tags are bad input (out untouched);
   * a well-formed tag of no domain is not (out NULL, nothing logged) */
  INVAL("dart_domain_find", dart_domain_find(NULL, ".", &out));
  INVAL("dart_domain_find", dart_domain_find(c, NULL, &out));
  INVAL("dart_domain_find", dart_domain_find(c, ".", NULL));
  INVAL("dart_domain_find", dart_domain_find(c, ".0.x", &out));
  CHECK(out == keep_out);
  QUIET(DART_ERR_NOTFOUND, dart_domain_find(c, ".99", &out));
  CHECK(out == NULL);
  out = keep_out;
  if (num_nodes_all > 1) {
    QUIET(DART_ERR_NOTFOUND, dart_domain_find(c->children[0], ".1", &out));
    CHECK(out == NULL);
    out = keep_out;
  }

  /* select, exclude, group: counts, tags */
  const char *ok[] = {".0"}, *unknown[] = {".0", ".77"}, *nulltag[] = {NULL},
             *bad_tag[] = {".0", "x"}, *self[] = {"."};
  char tag_out[TAG_MAX] = "untouched";
  INVAL("dart_domain_select", dart_domain_select(NULL, 1, ok));
  INVAL("dart_domain_select", dart_domain_select(c, 0, ok));
  INVAL("dart_domain_select", dart_domain_select(c, -1, ok));
  INVAL("dart_domain_select", dart_domain_select(c, 1, NULL));
  INVAL("dart_domain_select", dart_domain_select(c, 1, nulltag));
  INVAL("dart_domain_select", dart_domain_select(c, 2, unknown));
  INVAL("dart_domain_select", dart_domain_select(c, 2, bad_tag));
  INVAL("dart_domain_exclude", dart_domain_exclude(NULL, 1, ok));
  INVAL("dart_domain_exclude", dart_domain_exclude(c, 0, ok));
  INVAL("dart_domain_exclude", dart_domain_exclude(c, 1, NULL));
  INVAL("dart_domain_exclude", dart_domain_exclude(c, 2, unknown));
  INVAL("dart_domain_exclude", dart_domain_exclude(c, 1, self));
  INVAL("dart_domain_exclude", dart_domain_exclude(c->children[0], 1, ok));
  INVAL("dart_domain_group", dart_domain_group(NULL, 1, ok, tag_out));
  INVAL("dart_domain_group", dart_domain_group(c, 1, ok, NULL));
  INVAL("dart_domain_group", dart_domain_group(c, 0, ok, tag_out));
  INVAL("dart_domain_group", dart_domain_group(c, -2, ok, tag_out));
  INVAL("dart_domain_group", dart_domain_group(c, 1, NULL, tag_out));
  INVAL("dart_domain_group", dart_domain_group(c, 2, unknown, tag_out));
  INVAL("dart_domain_group", dart_domain_group(c, 1, self, tag_out));
  const char *twice[] = {".0", ".0"}, *parents[] = {".0", ".0.0"};
  INVAL("dart_domain_group", dart_domain_group(c, 2, twice, tag_out));
  INVAL("dart_domain_group", dart_domain_group(c, 2, parents, tag_out));
  CHECK(strcmp(tag_out, "untouched") == 0);

  /* add and move */
  dart_domain_locality_t *sub = clone_of(root->children[0]);
  char *sub_before = fingerprint(sub, true);
  dart_domain_locality_t *empty = NULL;
  CHECK_OK(dart_domain_create(&empty));
  const char *add = "dart_domain_add_subdomain";
  INVAL(add, dart_domain_add_subdomain(NULL, sub, 0));
  INVAL(add, dart_domain_add_subdomain(c, NULL, 0));
  INVAL(add, dart_domain_add_subdomain(c, c->children[0], 0));
  INVAL(add, dart_domain_add_subdomain(c, root, 0));
  INVAL(add, dart_domain_add_subdomain(sub->children[0], sub, 0));
  INVAL(add, dart_domain_add_subdomain(c, empty, -2));
  INVAL(add, dart_domain_add_subdomain(c, empty, c->num_domains + 1));
  INVAL(add, dart_domain_add_subdomain(c, sub, -1)); /* units twice */
  const char *mv = "dart_domain_move_subdomain";
  dart_domain_locality_t *node0 = c->children[0];
  INVAL(mv, dart_domain_move_subdomain(NULL, c, 0));
  INVAL(mv, dart_domain_move_subdomain(node0, NULL, 0));
  INVAL(mv, dart_domain_move_subdomain(c, node0, 0));
  INVAL(mv, dart_domain_move_subdomain(node0, sub, 0));
  INVAL(mv, dart_domain_move_subdomain(node0, node0, 0));
  INVAL(mv, dart_domain_move_subdomain(node0, node0->children[0], 0));
  INVAL(mv, dart_domain_move_subdomain(node0, c, -2));
  INVAL(mv, dart_domain_move_subdomain(node0, c, c->num_domains));
  char *got = fingerprint(sub, true);
  CHECK_SAME_TREE(sub_before, got);
  free(got);
  free(sub_before);
  CHECK_OK(dart_domain_destroy(sub));
  CHECK_OK(dart_domain_destroy(empty));

  /* split and scope queries */
  dart_domain_locality_t parts[2];
  memset(parts, 0x5A, sizeof parts);
  const char *split = "dart_domain_split_scope";
  INVAL(split, dart_domain_split_scope(NULL, DART_LOCALITY_SCOPE_NODE, 2,
                                       parts));
  INVAL(split, dart_domain_split_scope(c, DART_LOCALITY_SCOPE_NODE, 2, NULL));
  INVAL(split, dart_domain_split_scope(c, DART_LOCALITY_SCOPE_UNDEFINED, 2,
                                       parts));
  INVAL(split, dart_domain_split_scope(c, (dart_locality_scope_t)12345, 2,
                                       parts));
  INVAL(split, dart_domain_split_scope(c, DART_LOCALITY_SCOPE_NODE, 0,
                                       parts));
  INVAL(split, dart_domain_split_scope(c, DART_LOCALITY_SCOPE_NODE, -1,
                                       parts));
  for (size_t i = 0; i < sizeof parts; i++)
    if (((unsigned char *)parts)[i] != 0x5A) {
      FAILF("dart_domain_split_scope wrote its output on bad input");
      break;
    }
  int num = 4321;
  char **tags = (char **)&num;
  dart_domain_locality_t **doms = (dart_domain_locality_t **)&num;
  const char *st = "dart_domain_scope_tags", *sd = "dart_domain_scope_domains";
  INVAL(st, dart_domain_scope_tags(NULL, DART_LOCALITY_SCOPE_NODE, &num,
                                   &tags));
  INVAL(st, dart_domain_scope_tags(c, DART_LOCALITY_SCOPE_NODE, NULL, &tags));
  INVAL(st, dart_domain_scope_tags(c, DART_LOCALITY_SCOPE_NODE, &num, NULL));
  INVAL(st, dart_domain_scope_tags(c, DART_LOCALITY_SCOPE_UNDEFINED, &num,
                                   &tags));
  INVAL(sd, dart_domain_scope_domains(NULL, DART_LOCALITY_SCOPE_NODE, &num,
                                      &doms));
  INVAL(sd, dart_domain_scope_domains(c, (dart_locality_scope_t)7, &num,
                                      &doms));
  INVAL(sd, dart_domain_scope_domains(c, DART_LOCALITY_SCOPE_NODE, &num,
                                      NULL));
  CHECK(num == 4321 && tags == (char **)&num &&
        doms == (dart_domain_locality_t **)&num);

  /* the locality split of groups */
  const char *gls = "dart_group_locality_split";
  dart_group_t g = group_of(any_unit, 0), gout[4] = {NULL, NULL, NULL, NULL};
  size_t nout = 777;
  INVAL(gls, dart_group_locality_split(NULL, c, DART_LOCALITY_SCOPE_NODE, 2,
                                       &nout, gout));
  INVAL(gls, dart_group_locality_split(g, NULL, DART_LOCALITY_SCOPE_NODE, 2,
                                       &nout, gout));
  INVAL(gls, dart_group_locality_split(g, c, DART_LOCALITY_SCOPE_UNDEFINED,
                                       2, &nout, gout));
  INVAL(gls, dart_group_locality_split(g, c, DART_LOCALITY_SCOPE_NODE, 0,
                                       &nout, gout));
  INVAL(gls, dart_group_locality_split(g, c, DART_LOCALITY_SCOPE_NODE, 2,
                                       NULL, gout));
  INVAL(gls, dart_group_locality_split(g, c, DART_LOCALITY_SCOPE_NODE, 2,
                                       &nout, NULL));
  /* a member in no domain at the scope: outside the domain, or no domain
   * of the scope at all (UNIT: units are CORE domains) */
  dart_domain_locality_t *leaf0 = FIND(c, leaf_tag[0]);
  if (nunits > 1 && leaf0 != NULL)
    INVAL(gls, dart_group_locality_split(g, leaf0, DART_LOCALITY_SCOPE_CORE,
                                         2, &nout, gout));
  INVAL(gls, dart_group_locality_split(g, c, DART_LOCALITY_SCOPE_UNIT, 2,
                                       &nout, gout));
  CHECK(nout == 777 && gout[0] == NULL && gout[1] == NULL);
  CHECK_OK(dart_group_destroy(&g));

  /* nothing changed */
  got = fingerprint(c, true);
  CHECK_SAME_TREE(clone_before, got);
  free(got);
  got = fingerprint(root, true);
  CHECK_SAME_TREE(before, got);
  free(got);
  CHECK_OK(dart_domain_destroy(c));
  free(clone_before);
  free(before);
}

/* finalize, queries without a hierarchy, and a rebuild of the same */
static void test_rebuild(void)
{
  dart_domain_locality_t *root = NULL, *out = NULL;
  dart_unit_locality_t *loc = NULL, mine;
  CHECK_OK(dart_domain_team_locality(DART_TEAM_ALL, ".", &root));
  CHECK_OK(dart_unit_locality(DART_TEAM_ALL, DART_TEAM_UNIT_ID(me), &loc));
  if (root == NULL || loc == NULL) return;
  mine = *loc;
  char *before = fingerprint(root, true);
  CHECK_OK(dart_team_locality_finalize(DART_TEAM_ALL));
  BAD(DART_ERR_NOTFOUND, "dart_domain_team_locality",
      dart_domain_team_locality(DART_TEAM_ALL, ".", &out));
  BAD(DART_ERR_NOTFOUND, "dart_unit_locality",
      dart_unit_locality(DART_TEAM_ALL, DART_TEAM_UNIT_ID(0), &loc));
  BAD(DART_ERR_NOTFOUND, "dart_team_locality_finalize",
      dart_team_locality_finalize(DART_TEAM_ALL));
  CHECK(out == NULL);
  CHECK_OK(dart_team_locality_init(DART_TEAM_ALL));
  CHECK_OK(dart_team_locality_init(DART_TEAM_ALL));
  CHECK_OK(dart_domain_team_locality(DART_TEAM_ALL, ".", &root));
  char *after = fingerprint(root, true);
  CHECK_SAME_TREE(before, after);
  CHECK_OK(dart_unit_locality(DART_TEAM_ALL, DART_TEAM_UNIT_ID(me), &loc));
  CHECK(memcmp(&mine, loc, sizeof mine) == 0);
  free(after);
  free(before);
}

/* ---- configuration dart_init refuses: a DART_TOPOLOGY that hwloc
 * cannot load, a clock or bandwidth that is no positive number ---- */

static int bad_env(const char *name, int argc, char **argv)
{
  const char *value = getenv(name);
  char want[512];
  snprintf(want, sizeof want, "%s='%s'", name, value ? value : "");
  capture_init();
  capture_begin();
  dart_ret_t ret = dart_init(&argc, &argv);
  char text[2048];
  int lines = capture_end(text, sizeof text);
  int failures = 0;
  if (ret != DART_ERR_INVAL || dart_initialized()) {
    fprintf(stderr, "FAIL: dart_init returned %d with %s\n", (int)ret, want);
    failures++;
  }
  if (lines != 1 || value == NULL || strstr(text, want) == NULL) {
    fprintf(stderr, "FAIL: dart_init logged %d lines, not one naming %s: "
            "\"%s\"\n", lines, want, text);
    failures++;
  }
  if (ret == DART_OK) dart_exit();
  printf("%s: %d failed checks\n", failures ? "FAILED" : "PASSED", failures);
  return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
  for (int i = 1; i + 1 < argc; i++)
    if (strcmp(argv[i], "--bad-env") == 0)
      return bad_env(argv[i + 1], argc, argv);

  /* not initialised yet: counted with the checks after dart_init */
  capture_init();
  dart_domain_locality_t *d = NULL;
  BAD(DART_ERR_NOTINIT, "dart_domain_create", dart_domain_create(&d));
  BAD(DART_ERR_NOTINIT, "dart_team_locality_init",
      dart_team_locality_init(DART_TEAM_ALL));
  BAD(DART_ERR_NOTINIT, "dart_domain_team_locality",
      dart_domain_team_locality(DART_TEAM_ALL, ".", &d));
  CHECK(d == NULL);

  dart_test_init(&argc, &argv);
  me = dart_test_unit;
  nunits = dart_test_units;
  if (nunits > MAX_UNITS) {
    fprintf(stderr, "at most %d units\n", MAX_UNITS);
    return DART_TEST_SKIP;
  }
  const char *k = getenv("DART_UNITS_PER_NODE");
  upn = k ? atoi(k) : 0;
  const char *topology = getenv("DART_TOPOLOGY");
  bool have_model = topology && topology[0] ? model_from_args(argc, argv)
                                            : model_from_machine();
  if (!have_model) {
    FAILF("no model of the topology (DART_TOPOLOGY needs --shape)");
    return dart_test_finish();
  }
  for (int u = 0; u < nunits; u++) all_units[u] = u;
  num_nodes_all = upn > 0 ? (nunits + upn - 1) / upn : 1;

  /* every unit's core: placed by node rank, or as reported (and checked
   * against the binding for this unit) */
  for (int u = 0; u < nunits; u++) {
    dart_unit_locality_t *rec = NULL;
    CHECK_OK(dart_unit_locality(DART_TEAM_ALL, DART_TEAM_UNIT_ID(u), &rec));
    int c = rec ? rec->hwinfo.core_id : 0;
    if (c < 0 || c >= hw.ncores) {
      FAILF("unit %d reports core %d of %d", u, c, hw.ncores);
      c = 0;
    }
    core_of[u] = hw.placed ? node_rank(u) % hw.ncores : c;
  }
  if (!hw.placed) {
    int want = bound_core >= 0 ? bound_core : node_rank(me) % hw.ncores;
    if (core_of[me] != want)
      FAILF("on core %d, want %d (bound to %d)", core_of[me], want,
            bound_core);
  }

  dart_domain_locality_t *root = NULL;
  CHECK_OK(dart_domain_team_locality(DART_TEAM_ALL, ".", &root));
  if (root == NULL) return dart_test_finish();
  check_team_tree(__LINE__, DART_TEAM_ALL, root, all_units, nunits);
  check_records(__LINE__, DART_TEAM_ALL, all_units, nunits);
  test_load_balance();
  test_queries(root);
  test_unit_domain(root);
  test_clone_assign(root);
  test_select_exclude(root);
  test_group(root);
  test_move(root);
  test_split_scope(root);
  test_group_split(root);
  test_subteams(root);
  test_bad_input(root);
  test_rebuild();
  capture_fini();
  return dart_test_finish();
}
