/*
 * dart_init and dart_exit: every module started in order, and ended in
 * reverse (the one folder that includes all others).
 */
#include <dart/dart_config.h>
#include <dart/dart.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "am/am.h"
#include "base/env.h"
#include "base/runtime.h"
#include "coll/coll.h"
#include "globmem/globmem.h"
#include "gpu/gpu.h"
#include "onesided/onesided.h"
#include "plan/plan.h"
#include "progress/progress.h"
#include "team/locality.h"
#include "team/team.h"
#include "transport/acc_queue.h"
#include "transport/transport.h"
#include "types/datatype.h"
#include "types/op.h"

dart__runtime_t dart__rt;
static dart_config_t client_config;

void dart_config(dart_config_t **config_out)
{
  if (config_out == NULL) return;
  client_config.log_enabled = dart__base__log_level > DART__LOG_ERROR;
  *config_out = &client_config;
}

bool dart_initialized(void) { return dart__rt.initialized; }

void dart_abort(int errorcode)
{
  dart__base__log(DART__LOG_ERROR, __func__, "unit %d aborts the job with %d",
                  dart__rt.myid, errorcode);
  int mpi_up = 0;
  MPI_Initialized(&mpi_up);
  if (mpi_up) MPI_Abort(MPI_COMM_WORLD, errorcode);
  exit(errorcode);
}

/*
 * Open MPI 4.1 on Debian: the default one-sided component (osc/rdma)
 * crashes in MPI_Compare_and_swap and cannot create dynamic windows on one
 * process; osc/ucx fails to unpack remote keys of attached regions that
 * share a page and crashes freeing dynamic windows; osc/pt2pt works but
 * refuses MPI_THREAD_MULTIPLE. So: pt2pt (dynamic windows) and sm (shared
 * windows), or ucx and sm when threads are asked for. A choice of the user's
 * (OMPI_MCA_osc) is kept; the launcher's default (DART_LAUNCHER_OSC names
 * it) is not. Must happen before MPI_Init.
 */
static void choose_mpi_components(bool thread_multiple)
{
#ifdef OPEN_MPI
  const char *osc = getenv("OMPI_MCA_osc");
  const char *launcher = getenv("DART_LAUNCHER_OSC");
  if (osc == NULL || (launcher != NULL && strcmp(osc, launcher) == 0))
    setenv("OMPI_MCA_osc", thread_multiple ? "ucx,sm" : "pt2pt,sm", 1);
#else
  (void)thread_multiple;
#endif
}

/*
 * Whether MPI_Compare_and_swap works on dynamic windows. Open MPI 4.1
 * serves them with osc/rdma unless pt2pt or ucx is selected, and osc/rdma
 * crashes there. dart_init selects working components before MPI_Init; an
 * application that initialised MPI itself may have left the default. The
 * selection is Open MPI's "osc" parameter: OMPI_MCA_osc where that is set
 * (it overrides every parameter file, and mpirun's --mca sets it too),
 * else its control variable through MPI_T. MPI_T_init_thread loads every
 * component (a fifth of a second), so that is asked once per process: the
 * selection cannot change while MPI runs.
 */
static bool mpi_cas_usable(void)
{
#ifdef OPEN_MPI
  static int known = -1; /* from an earlier dart_init of this process */
  if (known >= 0) return known;
  char *value = NULL;
  const char *env = getenv("OMPI_MCA_osc");
  if (env) {
    value = strdup(env);
  } else {
    int provided, index, count;
    MPI_T_cvar_handle handle;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
      return false;
    if (MPI_T_cvar_get_index("osc", &index) == MPI_SUCCESS &&
        MPI_T_cvar_handle_alloc(index, NULL, &handle, &count) ==
            MPI_SUCCESS) {
      value = calloc((size_t)count + 1, 1);
      if (value && MPI_T_cvar_read(handle, value) != MPI_SUCCESS)
        value[0] = 0;
      MPI_T_cvar_handle_free(&handle);
    }
    MPI_T_finalize();
  }
  bool ok = value && value[0] != '^' &&
            (strstr(value, "pt2pt") || strstr(value, "ucx"));
  if (!ok)
    DART_LOG_WARN("Open MPI's one-sided components \"%s\" (osc/rdma) crash "
                  "in MPI_Compare_and_swap: atomics and locks that need MPI "
                  "will fail; set OMPI_MCA_osc=pt2pt,sm before MPI_Init "
                  "(README)", value ? value : "default");
  if (value) known = ok;
  free(value);
  return ok;
#else
  return true;
#endif
}

/* The DART_INFO report into out. */
static void write_info(FILE *out)
{
  const bool ucx = dart__rt.transport == DART__TRANSPORT_UCX;
  const char *remote = dart_path_name((dart_path_t)dart__rt.remote_path);
  const dart__path_ops_t *const *paths = dart__transport__paths;
  fprintf(out, "libdart %s: %d units on %d node(s)%s\n", DART_VERSION_STR,
          dart__rt.size, dart__rt.num_nodes,
          dart__base__config.units_per_node ? " (emulated)" : "");
  dart__base__env_print(out);
  fprintf(out, "transport: %s%s\n", remote,
          dart__base__config.transport != DART__TRANSPORT_UCX || ucx ? ""
          : dart__rt.num_nodes == 1 && dart__base__config.shm
              ? " (UCX not started: one node, no remote path)"
              : " (UCX did not start)");
  fprintf(out, "paths: own memory %s\n", paths[DART__PATH_SELF]->info);
  if (dart__base__config.shm)
    fprintf(out,
            "  node peers' allocations: %s\n"
            "  node peers' registered memory and grown pools: %s\n",
            paths[DART__PATH_SHM]->info,
            dart__transport__usable(DART__PATH_CMA)
                ? paths[DART__PATH_CMA]->info
                : remote);
  else
    fprintf(out, "  node peers: %s (DART_SHM=0)\n", remote);
  fprintf(out, "  other nodes: %s", dart__transport__remote()->info);
#ifdef OPEN_MPI
  const char *osc = getenv("OMPI_MCA_osc");
  if (!ucx) fprintf(out, ", Open MPI osc=%s", osc ? osc : "default");
#endif
  fprintf(out, "\n");
  fprintf(out, "  atomics: CPU atomics when a team is on one node, else %s\n",
          remote);
  fprintf(out, "  signals (dart_signal.h): the put, then the word's atomic "
               "update, ordered on one path (UCX: fence, both in flight "
               "until a flush), else after the put completed; waits read "
               "their own words (loads, else the atomics path)\n");
  fprintf(out, "  queued accumulates (CPU atomics): %s\n",
          dart__rt.thread_level == DART_THREAD_MULTIPLE
              ? "none (DART_THREAD_MULTIPLE)"
          : dart__transport__acc_htm()
              ? "applied in hardware transactions (RTM)"
          : !dart__base__config.htm
              ? "locked instructions (DART_HTM=0)"
              : "locked instructions (no hardware transactions on this CPU)");
  if (paths[DART__PATH_UCX] != NULL) paths[DART__PATH_UCX]->print_info(out);
  dart__gpu__print_info(out);
  fprintf(out, "collectives: %s; waits %s\n",
          dart__base__config.coll == DART__COLL_MPI
              ? "MPI's on the team's communicator (DART_COLL=mpi)"
          : dart__base__config.shm
              ? "node peers in shared memory, node leaders through MPI"
              : "MPI on the whole team (DART_SHM=0)",
          dart__rt.oversubscribed
              ? "yield at once (more units on this node than CPUs)"
              : "spin briefly, then yield");
  fprintf(out, "thread support: %s; progress thread: %s\n",
          dart__rt.thread_level == DART_THREAD_MULTIPLE ? "multiple" : "single",
          dart__base__config.progress_thread ? "yes" : "no");
  dart__team__locality_print_info(out);
}

/* DART_INFO: the report written at once, so that other units' output
 * lands before or after it, not inside (it is longer than a stdio
 * buffer). */
static void print_info(void)
{
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  if (out == NULL) {
    write_info(stdout);
  } else {
    write_info(out);
    fclose(out);
    fflush(stdout);
    for (size_t at = 0; at < len;) {
      ssize_t n = write(STDOUT_FILENO, text + at, len - at);
      if (n <= 0) break; /* nowhere to report it */
      at += (size_t)n;
    }
    free(text);
  }
  fflush(stdout);
}

static dart_ret_t init(int *argc, char ***argv, int mpi_level, int *provided)
{
  if (dart__rt.initialized) {
    DART_LOG_ERROR_IN("dart_init", "DART is already initialised");
    return DART_ERR_OTHER;
  }
  if (dart__base__env_parse() != 0) return DART_ERR_INVAL;
  /* the progress thread calls MPI beside the application's threads */
  if (dart__base__config.progress_thread) mpi_level = MPI_THREAD_MULTIPLE;
  int mpi_up = 0, mpi_down = 0;
  MPI_Initialized(&mpi_up);
  MPI_Finalized(&mpi_down);
  if (mpi_down) {
    DART_LOG_ERROR_IN("dart_init", "MPI has already been finalised");
    return DART_ERR_OTHER;
  }
  if (mpi_up) {
    MPI_Query_thread(provided);
  } else {
    choose_mpi_components(mpi_level == MPI_THREAD_MULTIPLE);
    if (MPI_Init_thread(argc, argv, mpi_level, provided) != MPI_SUCCESS) {
      DART_LOG_ERROR_IN("dart_init", "MPI_Init_thread failed");
      return DART_ERR_OTHER;
    }
    dart__rt.mpi_owned = true;
  }
  dart_ret_t ret = DART_ERR_OTHER;
  if (MPI_Comm_dup(MPI_COMM_WORLD, &dart__rt.comm) != MPI_SUCCESS) goto fail;
  MPI_Comm_set_errhandler(dart__rt.comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(dart__rt.comm, &dart__rt.myid);
  MPI_Comm_size(dart__rt.comm, &dart__rt.size);
  dart__base__log_set_unit(dart__rt.myid);
  dart__rt.mpi_cas_ok = mpi_cas_usable();
#ifdef OPEN_MPI
  DART_LOG_INFO("Open MPI one-sided components: %s",
                getenv("OMPI_MCA_osc") ? getenv("OMPI_MCA_osc") : "default");
#endif
  dart__rt.thread_level = *provided == MPI_THREAD_MULTIPLE
                              ? DART_THREAD_MULTIPLE : DART_THREAD_SINGLE;
  /* the paths start through their tables, in the order they need; the
   * UCX transport where it was built */
  const dart__path_ops_t *const *paths = dart__transport__paths;
  const dart__path_ops_t *ucx = paths[DART__PATH_UCX];
  dart__transport__acc_init();
  if ((ret = dart__types__dtype_init()) != DART_OK) goto fail_comm;
  if ((ret = dart__types__op_init()) != DART_OK) goto fail_dtype;
  /* a team's locks retire, then its segments go, before the team */
  dart__team__on_release(dart__onesided__team_release);
  dart__team__on_release(dart__globmem__segtab_fini);
  if ((ret = dart__coll__init()) != DART_OK) goto fail_op;
  if ((ret = dart__plan__init()) != DART_OK) goto fail_coll;
  if ((ret = dart__am__init()) != DART_OK) goto fail_plan;
  if ((ret = dart__team__init_all()) != DART_OK) goto fail_am;
  if ((ret = paths[DART__PATH_MPI]->init()) != DART_OK) goto fail_teams;
  dart__rt.transport = DART__TRANSPORT_MPI; /* until UCX starts */
  dart__rt.remote_path = DART__PATH_MPI;
  /* UCX only where units reach others through the remote path: on one node
   * they meet in shared memory and through CMA, and starting UCX would
   * cost more than all the rest of dart_init */
  if (dart__rt.num_nodes > 1 || !dart__base__config.shm) {
    if (ucx != NULL && (ret = ucx->init()) != DART_OK) goto fail_mpi;
    if ((ret = dart__coll__remote_start(
             "dart_init", dart__team__get(DART_TEAM_ALL))) != DART_OK)
      goto fail_ucx;
  }
  if ((ret = paths[DART__PATH_CMA]->init()) != DART_OK) goto fail_barrier;
  if ((ret = dart__gpu__init()) != DART_OK) goto fail_cma;
  if ((ret = paths[DART__PATH_STAGE]->init()) != DART_OK) goto fail_gpu;
  dart__rt.initialized = true;
  if ((ret = dart__globmem__pool_init()) != DART_OK) goto fail_stage;
  if ((ret = dart__progress__start()) != DART_OK) goto fail_pool;
  if (dart__base__config.info && dart__rt.myid == 0) print_info();
  return DART_OK;

fail_pool:
  dart__globmem__pool_fini();
fail_stage:
  dart__rt.initialized = false;
  paths[DART__PATH_STAGE]->fini();
fail_gpu:
  dart__gpu__fini();
fail_cma:
  paths[DART__PATH_CMA]->fini();
fail_barrier:
  dart__coll__remote_stop(dart__team__get(DART_TEAM_ALL));
fail_ucx:
  if (ucx != NULL) ucx->fini();
fail_mpi:
  paths[DART__PATH_MPI]->fini();
fail_teams:
  dart__team__fini_all();
fail_am:
  dart__am__fini();
fail_plan:
  dart__plan__fini();
fail_coll:
  dart__coll__fini();
fail_op:
  dart__types__op_fini();
fail_dtype:
  dart__types__dtype_fini();
fail_comm:
  MPI_Comm_free(&dart__rt.comm);
fail:
  if (dart__rt.mpi_owned) MPI_Finalize();
  dart__rt.mpi_owned = false;
  return ret;
}

dart_ret_t dart_init(int *argc, char ***argv)
{
  int provided;
  return init(argc, argv, MPI_THREAD_SINGLE, &provided);
}

dart_ret_t dart_init_thread(int *argc, char ***argv,
                            dart_thread_support_level_t *thread_safety)
{
  if (thread_safety == NULL) {
    DART_LOG_ERROR("thread_safety is NULL");
    return DART_ERR_INVAL;
  }
  int provided;
  int wanted = *thread_safety == DART_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE
                                                      : MPI_THREAD_SINGLE;
  dart_ret_t ret = init(argc, argv, wanted, &provided);
  if (ret == DART_OK) *thread_safety = dart__rt.thread_level;
  return ret;
}

dart_ret_t dart_exit(void)
{
  DART__CHECK_INIT();
  dart__transport__acc_complete();
  dart__progress__stop();
  dart__onesided__fini();
  dart__onesided__locks_retire(DART_TEAM_NULL);
  dart__globmem__allocators_fini();
  const dart__path_ops_t *const *paths = dart__transport__paths;
  dart__team__fini_all();
  paths[DART__PATH_STAGE]->fini();
  dart__gpu__fini();
  paths[DART__PATH_CMA]->fini();
  if (paths[DART__PATH_UCX] != NULL) paths[DART__PATH_UCX]->fini();
  paths[DART__PATH_MPI]->fini();
  dart__am__fini();
  dart__plan__fini();
  dart__coll__fini();
  dart__types__op_fini();
  dart__types__dtype_fini();
  MPI_Comm_free(&dart__rt.comm);
  dart__rt.initialized = false;
  if (dart__rt.mpi_owned) MPI_Finalize();
  dart__rt.mpi_owned = false;
  return DART_OK;
}
