#include "env.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"

dart__config_t dart__base__config;

typedef enum {
  ENV_LEVEL,
  ENV_COUNT,
  ENV_BOOL,
  ENV_SIZE,
  ENV_TRANSPORT,
  ENV_REUSE,    /* "latest" or "delayed" */
  ENV_COLL,     /* "auto" or "mpi" */
  ENV_DEVICE,   /* "auto" (-1) or an index */
  ENV_STRING,   /* a char array of DART__ENV_STRING_MAX */
  ENV_POSITIVE, /* 1 to INT_MAX */
  ENV_MHZ       /* 1 to MHZ_MAX */
} env_kind_t;

/* A clock above 100 GHz is a kHz or Hz figure by mistake; below it,
 * DASH's int product cores * threads * MHz stays within an int. */
#define MHZ_MAX 100000

typedef struct {
  const char *name;
  env_kind_t kind;
  const char *default_value;
  const char *description;
  size_t field; /* offset in dart__config_t */
} env_var_t;

#ifdef DART_HAVE_UCX
#define DART__DEFAULT_TRANSPORT "ucx"
#else
#define DART__DEFAULT_TRANSPORT "mpi"
#endif

static const env_var_t env_table[] = {
  {"DART_LOG_LEVEL", ENV_LEVEL, "warn",
   "error, warn, info, debug or trace",
   offsetof(dart__config_t, log_level)},
  {"DART_UNITS_PER_NODE", ENV_COUNT, "0",
   "emulate nodes of k consecutive units (0: physical nodes)",
   offsetof(dart__config_t, units_per_node)},
  {"DART_TRANSPORT", ENV_TRANSPORT, DART__DEFAULT_TRANSPORT,
   "remote path for other nodes: ucx or mpi (ucx falls back to mpi "
   "when it cannot start)",
   offsetof(dart__config_t, transport)},
  {"DART_SEGID_REUSE", ENV_REUSE, "latest",
   "latest: a freed segment id is issued again by the next allocation "
   "(DART-MPI's order, which DASH expects); delayed: fresh ids first, then "
   "the oldest freed, so that a gptr to a freed segment is refused longer",
   offsetof(dart__config_t, segid_reuse)},
  {"DART_LOCAL_POOL", ENV_SIZE, "16M",
   "initial size of each unit's dart_memalloc pool (grows when full)",
   offsetof(dart__config_t, local_pool)},
  {"DART_PROGRESS_THREAD", ENV_BOOL, "0",
   "1: a thread drives MPI and UCX progress while the unit computes "
   "(needs MPI_THREAD_MULTIPLE)",
   offsetof(dart__config_t, progress_thread)},
  {"DART_PROGRESS_INTERVAL", ENV_COUNT, "100",
   "microseconds the progress thread sleeps between polls",
   offsetof(dart__config_t, progress_interval)},
  {"DART_SHM", ENV_BOOL, "1",
   "0: reach node peers through the remote path too (comparisons)",
   offsetof(dart__config_t, shm)},
  {"DART_COLL", ENV_COLL, "auto",
   "collectives: auto (node peers meet in shared memory, node leaders "
   "through MPI; by size and layout) or mpi (MPI's on the team's "
   "communicator, for comparisons)",
   offsetof(dart__config_t, coll)},
  {"DART_COLL_CHECK", ENV_BOOL, "0",
   "1: every collective first checks across all units that they called "
   "the same collective with the same counts, types, operation and root "
   "(without it, only node peers' calls are compared)",
   offsetof(dart__config_t, coll_check)},
  {"DART_CMA", ENV_BOOL, "1",
   "0: node peers' private memory (registered, grown pool) through the "
   "remote path instead of cross-memory attach",
   offsetof(dart__config_t, cma)},
  {"DART_UCX_ALLOC", ENV_BOOL, "1",
   "1: with the UCX transport, parts of global memory that no node peer "
   "loads or stores are memory UCX allocates (its shared-memory transports "
   "reach it directly); 0: MPI shared windows registered with UCX",
   offsetof(dart__config_t, ucx_alloc)},
  {"DART_HTM", ENV_BOOL, "1",
   "1: queued accumulates on a node are applied in hardware transactions "
   "where the CPU has them (x86 RTM); 0: one locked instruction each",
   offsetof(dart__config_t, htm)},
  {"DART_INFO", ENV_BOOL, "0",
   "1: unit 0 prints this table and the paths at init",
   offsetof(dart__config_t, info)},
  {"DART_GPU", ENV_BOOL, "1",
   "0: use no CUDA device (device memory unavailable, no check of local "
   "buffers)",
   offsetof(dart__config_t, gpu)},
  {"DART_GPU_DEVICE", ENV_DEVICE, "auto",
   "this unit's CUDA device: auto (node-local rank modulo devices) or an "
   "index",
   offsetof(dart__config_t, gpu_device)},
  {"DART_GPU_UCX", ENV_BOOL, "1",
   "1: device memory on other nodes moves through UCX where UCX reports "
   "CUDA memory support; 0: staged through pinned host memory",
   offsetof(dart__config_t, gpu_ucx)},
  {"DART_GPU_EMULATE", ENV_COUNT, "0",
   "n > 0: n emulated devices of host memory instead of CUDA (tests)",
   offsetof(dart__config_t, gpu_emulate)},
  {"DART_PLAN_LEND", ENV_SIZE, "4K",
   "a plan's bcast messages of this size and more are read in place by "
   "node peers where the roots lie in global memory (dart_plan.h)",
   offsetof(dart__config_t, plan_lend)},
  {"DART_AM_QUEUE", ENV_SIZE, "64K",
   "bytes of active messages each unit may have queued to another, sent "
   "in fragments of an eighth (dart_am.h; 1K at least)",
   offsetof(dart__config_t, am_queue)},
  {"DART_OWNER_ATOMICS", ENV_BOOL, "0",
   "1: the owners apply the atomics of host memory from "
   "dart_team_memalloc_aligned too, as DART_AM_ATOMICS_OWNER (dart_am.h)",
   offsetof(dart__config_t, owner_atomics)},
  {"DART_TOPOLOGY", ENV_STRING, "",
   "hwloc topology of every node: empty = this machine, *.xml = an XML "
   "file, else a synthetic description",
   offsetof(dart__config_t, topology)},
  {"DART_CPU_MHZ", ENV_MHZ, "2000",
   "CPU clock in MHz that dart_unit_locality reports where neither "
   "cpufreq nor /proc/cpuinfo (this machine) nor DART_TOPOLOGY's XML "
   "(a recorded one) gives it",
   offsetof(dart__config_t, cpu_mhz)},
  {"DART_SHMEM_MBPS", ENV_POSITIVE, "1235",
   "shared-memory bandwidth in MB/s that dart_unit_locality reports where "
   "hwloc gives none (DART-MPI's figure); where unset, DART-MPI's "
   "DASH_MAX_SHMEM_MBPS stands in",
   offsetof(dart__config_t, shmem_mbps)},
};

/* DART-MPI's names of our variables, which DASH users set: read where
 * ours is unset or empty */
static const struct {
  const char *name, *alias;
} env_aliases[] = {
  {"DART_SHMEM_MBPS", "DASH_MAX_SHMEM_MBPS"},
};

static const char *alias_of(const char *name)
{
  for (size_t i = 0; i < sizeof env_aliases / sizeof *env_aliases; i++)
    if (strcmp(env_aliases[i].name, name) == 0) return env_aliases[i].alias;
  return NULL;
}

static const char *const level_names[] = {"error", "warn", "info", "debug",
                                          "trace"};

static int parse_size(const char *text, size_t *out)
{
  char *end;
  errno = 0;
  unsigned long long value = strtoull(text, &end, 10);
  if (errno || end == text || text[0] == '-') return -1;
  unsigned shift = 0;
  switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
  }
  if (*end == 'B' || *end == 'b') end++;
  if (*end != '\0') return -1;
  if (value > (SIZE_MAX >> shift)) return -1;
  *out = (size_t)value << shift;
  return 0;
}

static int parse_one(const env_var_t *var, const char *text)
{
  void *field = (char *)&dart__base__config + var->field;
  switch (var->kind) {
    case ENV_LEVEL:
      for (int i = 0; i < (int)(sizeof level_names / sizeof *level_names);
           i++) {
        if (strcasecmp(text, level_names[i]) == 0) {
          *(int *)field = i;
          return 0;
        }
      }
      return -1;
    case ENV_COUNT: {
      char *end;
      errno = 0;
      long value = strtol(text, &end, 10);
      if (errno || end == text || *end != '\0' || value < 0 || value > INT_MAX)
        return -1;
      *(int *)field = (int)value;
      return 0;
    }
    case ENV_BOOL:
      if (strcmp(text, "0") == 0 || strcasecmp(text, "no") == 0 ||
          strcasecmp(text, "false") == 0) {
        *(int *)field = 0;
        return 0;
      }
      if (strcmp(text, "1") == 0 || strcasecmp(text, "yes") == 0 ||
          strcasecmp(text, "true") == 0) {
        *(int *)field = 1;
        return 0;
      }
      return -1;
    case ENV_SIZE:
      return parse_size(text, (size_t *)field);
    case ENV_TRANSPORT:
      if (strcasecmp(text, "mpi") == 0) {
        *(int *)field = DART__TRANSPORT_MPI;
        return 0;
      }
#ifdef DART_HAVE_UCX
      if (strcasecmp(text, "ucx") == 0) {
        *(int *)field = DART__TRANSPORT_UCX;
        return 0;
      }
#endif
      return -1;
    case ENV_REUSE:
      if (strcasecmp(text, "latest") == 0 || strcasecmp(text, "delayed") == 0) {
        *(int *)field = strcasecmp(text, "delayed") == 0
                            ? DART__SLOTS_REUSE_DELAYED
                            : DART__SLOTS_REUSE_LATEST;
        return 0;
      }
      return -1;
    case ENV_COLL:
      if (strcasecmp(text, "auto") == 0 || strcasecmp(text, "mpi") == 0) {
        *(int *)field = strcasecmp(text, "mpi") == 0 ? DART__COLL_MPI
                                                     : DART__COLL_AUTO;
        return 0;
      }
      return -1;
    case ENV_DEVICE:
      if (strcasecmp(text, "auto") == 0) {
        *(int *)field = -1;
        return 0;
      }
      return parse_one(&(env_var_t){.kind = ENV_COUNT, .field = var->field},
                       text);
    case ENV_STRING:
      /* what the string means is checked where it is used */
      if (strlen(text) >= DART__ENV_STRING_MAX) return -1;
      strcpy((char *)field, text);
      return 0;
    case ENV_POSITIVE:
    case ENV_MHZ: {
      char *end;
      errno = 0;
      long value = strtol(text, &end, 10);
      long max = var->kind == ENV_MHZ ? MHZ_MAX : INT_MAX;
      if (errno || end == text || *end != '\0' || value < 1 || value > max)
        return -1;
      *(int *)field = (int)value;
      return 0;
    }
  }
  return -1;
}

int dart__base__env_parse(void)
{
  int status = 0;
  for (size_t i = 0; i < sizeof env_table / sizeof *env_table; i++) {
    const env_var_t *var = &env_table[i];
    int ret = parse_one(var, var->default_value);
    (void)ret; /* defaults parse by construction */
    const char *name = var->name, *text = getenv(name);
    if ((text == NULL || text[0] == '\0') && alias_of(name) != NULL) {
      name = alias_of(name);
      text = getenv(name);
    }
    if (text != NULL && text[0] != '\0' && parse_one(var, text) != 0) {
      DART_LOG_ERROR_IN("dart_init", "%s='%s' is not valid (%s)", name, text,
                        var->description);
      status = -1;
    }
  }
  if (status == 0) dart__base__log_level = dart__base__config.log_level;
  return status;
}

void dart__base__env_print(FILE *out)
{
  fprintf(out, "%-22s %-10s %s\n", "variable", "value", "description");
  for (size_t i = 0; i < sizeof env_table / sizeof *env_table; i++) {
    const env_var_t *var = &env_table[i];
    const void *field = (const char *)&dart__base__config + var->field;
    char value[32];
    const char *shown = value;
    switch (var->kind) {
      case ENV_LEVEL:
        snprintf(value, sizeof value, "%s", level_names[*(const int *)field]);
        break;
      case ENV_DEVICE:
        if (*(const int *)field < 0) {
          shown = "auto";
          break;
        }
        /* fall through */
      case ENV_COUNT:
      case ENV_BOOL:
      case ENV_POSITIVE:
      case ENV_MHZ:
        snprintf(value, sizeof value, "%d", *(const int *)field);
        break;
      case ENV_SIZE:
        snprintf(value, sizeof value, "%zu", *(const size_t *)field);
        break;
      case ENV_TRANSPORT:
        snprintf(value, sizeof value, "%s",
                 *(const int *)field == DART__TRANSPORT_UCX ? "ucx" : "mpi");
        break;
      case ENV_REUSE:
        shown = *(const int *)field == DART__SLOTS_REUSE_DELAYED ? "delayed"
                                                                : "latest";
        break;
      case ENV_COLL:
        shown = *(const int *)field == DART__COLL_MPI ? "mpi" : "auto";
        break;
      case ENV_STRING:
        /* whole: a path does not fit the column */
        shown = *(const char *)field ? (const char *)field : "''";
        break;
    }
    fprintf(out, "%-22s %-10s %s\n", var->name, shown, var->description);
  }
}
