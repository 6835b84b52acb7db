/*
 * The UCX path's life (context, worker, addresses, endpoints) and its
 * operation table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/env.h"
#include "gpu/gpu.h"
#include "ucx/ucx.h"

/* Emulated RMA and atomics (shared memory without CMA, TCP) need the
 * target's worker; waiting inside MPI does not drive it. */
static unsigned ucx_poll(void) { return ucp_worker_progress(dart__ucx.worker); }
static bool ucx_outside_mpi(void) { return true; }
static const dart__progress_source_t ucx_progress = {
    .name = "ucx", .poll = ucx_poll, .outside_mpi = ucx_outside_mpi};

static void release_all(void)
{
  free(dart__ucx.eps);
  free(dart__ucx.dirty_epoch);
  free(dart__ucx.addrs);
  free(dart__ucx.addr_off);
  if (dart__ucx.worker) ucp_worker_destroy(dart__ucx.worker);
  if (dart__ucx.context) ucp_cleanup(dart__ucx.context);
  mtx_destroy(&dart__ucx.ep_lock);
  memset(&dart__ucx, 0, sizeof dart__ucx);
}

ucs_status_t dart__ucx__worker_open(uint64_t features,
                                    ucp_context_h *context,
                                    ucp_worker_h *worker)
{
  ucp_config_t *config = NULL;
  ucs_status_t status = ucp_config_read(NULL, NULL, &config);
  if (status == UCS_OK) {
    ucp_params_t params = {.field_mask = UCP_PARAM_FIELD_FEATURES |
                                         UCP_PARAM_FIELD_MT_WORKERS_SHARED,
                           .features = features,
                           .mt_workers_shared = 0};
    status = ucp_init(&params, config, context);
    ucp_config_release(config);
  }
  if (status == UCS_OK) {
    ucp_worker_params_t params = {
        .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        .thread_mode = dart__rt.thread_level == DART_THREAD_MULTIPLE
                           ? UCS_THREAD_MODE_MULTI
                           : UCS_THREAD_MODE_SINGLE};
    status = ucp_worker_create(*context, &params, worker);
  }
  return status;
}

static dart_ret_t ucx_init(void)
{
  if (dart__base__config.transport != DART__TRANSPORT_UCX) return DART_OK;
  const char *func = "dart_init";
  ucp_address_t *address = NULL;
  size_t address_len = 0;
  memset(&dart__ucx, 0, sizeof dart__ucx);
  mtx_init(&dart__ucx.ep_lock, mtx_plain);
  ucs_status_t status = dart__ucx__worker_open(
      UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64,
      &dart__ucx.context, &dart__ucx.worker);
  if (status == UCS_OK)
    status = ucp_worker_get_address(dart__ucx.worker, &address, &address_len);
  if (status != UCS_OK)
    DART_LOG_WARN("UCX cannot start (%s)", ucs_status_string(status));
  /* all units take the same transport */
  int ok = status == UCS_OK, all_ok = 0;
  DART__MPI_CHECK(
      MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, dart__rt.comm));
  if (!all_ok) {
    if (dart__rt.myid == 0)
      DART_LOG_WARN("UCX did not start on every unit: DART_TRANSPORT=mpi "
                    "takes over");
    goto fallback;
  }
  dart_ret_t ret =
      dart__ucx__allgather(func, dart__rt.comm, dart__rt.size, address,
                           address_len, &dart__ucx.addrs, &dart__ucx.addr_off);
  ucp_worker_release_address(dart__ucx.worker, address);
  address = NULL;
  if (ret != DART_OK) goto fail;
  dart__ucx.eps = calloc((size_t)dart__rt.size, sizeof *dart__ucx.eps);
  dart__ucx.dirty_epoch =
      calloc((size_t)dart__rt.size, sizeof *dart__ucx.dirty_epoch);
  dart__ucx.epoch = 1;
  if (dart__ucx.eps == NULL || dart__ucx.dirty_epoch == NULL) {
    ret = DART_ERR_NOMEM;
    goto fail;
  }
  if ((ret = dart__progress__add(func, &ucx_progress)) != DART_OK) goto fail;
  dart__rt.transport = DART__TRANSPORT_UCX;
  dart__rt.remote_path = DART__PATH_UCX;
  return DART_OK;

fail:
  release_all();
  return ret;
fallback:
  if (address) ucp_worker_release_address(dart__ucx.worker, address);
  release_all();
  return DART_OK;
}

static bool ucx_started(void)
{
  return dart__rt.transport == DART__TRANSPORT_UCX;
}

static void ucx_fini(void)
{
  if (!ucx_started()) return;
  dart__ucx__am_fini();
  /* ours are complete, and nobody still needs us to serve theirs */
  atomic_store(&dart__ucx.dirty, true);
  dart__ucx__flush_all("dart_exit", NULL);
  dart__progress__barrier("dart_exit", dart__rt.comm);
  /* closing flushes and waits for the peer: all at once, and we go on
   * serving our peers' closes until everybody is done */
  ucs_status_ptr_t *closing = calloc((size_t)dart__rt.size, sizeof *closing);
  for (int u = 0; u < dart__rt.size; u++) {
    ucp_ep_h ep = atomic_load(&dart__ucx.eps[u]);
    if (ep == NULL) continue;
    ucs_status_ptr_t req = ucp_ep_close_nbx(ep, &dart__ucx__plain);
    if (closing) closing[u] = req;
    else dart__ucx__wait("dart_exit", "ucp_ep_close_nbx", req, u);
  }
  for (int u = 0; closing && u < dart__rt.size; u++)
    dart__ucx__wait("dart_exit", "ucp_ep_close_nbx", closing[u], u);
  free(closing);
  dart__progress__barrier("dart_exit", dart__rt.comm);
  dart__progress__remove(&ucx_progress);
  release_all();
  dart__rt.transport = DART__TRANSPORT_MPI;
  dart__rt.remote_path = DART__PATH_MPI;
}

/* host memory it has a key of; device memory where it moves that itself
 * on every unit */
static dart_ret_t ucx_reach(const char *func, const dart__reach_t *q,
                            dart__route_t *r, bool *reached)
{
  (void)func;
  (void)r;
  *reached = q->device ? dart__gpu.ucx_direct : q->keyed;
  return DART_OK;
}

static bool ucx_device_memory(void)
{
  if (!ucx_started()) return false;
  ucp_context_attr_t attr = {.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES};
  return ucp_context_query(dart__ucx.context, &attr) == UCS_OK &&
         (attr.memory_types & UCS_BIT(UCS_MEMORY_TYPE_CUDA));
}

static void ucx_print_info(FILE *out)
{
  if (!ucx_started()) return;
  /* the lanes of an endpoint to the first unit on another node (or to
   * ourselves on one node), from UCX's own description */
  int peer = dart__rt.myid;
  for (int u = 0; u < dart__rt.size; u++) {
    if (dart__rt.node_of[u] != dart__rt.my_node) {
      peer = u;
      break;
    }
  }
  ucp_ep_h ep = dart__ucx__ep_of("dart_init", peer);
  char *text = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&text, &len);
  if (ep == NULL || mem == NULL) return;
  ucp_ep_print_info(ep, mem);
  fclose(mem);
  fprintf(out, "ucx transports to unit %d:", peer);
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    char *lane = strstr(line, "lane[");
    if (lane) fprintf(out, "\n  %s", lane);
  }
  fprintf(out, "\n");
  free(text);
}

const dart__path_ops_t dart__path_ucx = {
    .info = "ucx (ucp_put_nbx/get_nbx/atomic_op_nbx)",
    .init = ucx_init,
    .fini = ucx_fini,
    .usable = ucx_started,
    .reach = ucx_reach,
    .print_info = ucx_print_info,
    .device_memory = ucx_device_memory,
    .put = dart__ucx__put,
    .get = dart__ucx__get,
    .contig = dart__ucx__contig,
    .cached_get_blocking = dart__ucx__get_blocking,
    .cached_put_blocking = dart__ucx__put_blocking,
    .cached_start = dart__ucx__start,
    .cached_flush = dart__ucx__cached_flush,
    .cached_accumulate = dart__ucx__cached_accumulate,
    .flush = dart__ucx__flush,
    .flush_local = dart__ucx__flush_local,
    .flush_all = dart__ucx__flush_all,
    .atomic = dart__ucx__atomic,
    .signal = dart__ucx__signal,
    .seg_alloc = dart__ucx__seg_alloc,
    .seg_register = dart__ucx__seg_register,
    .seg_release = dart__ucx__seg_release,
    .mem_register = dart__ucx__mem_register,
    .mem_deregister = dart__ucx__mem_deregister,
    .key_unpack = dart__ucx__key_unpack,
    .key_destroy = dart__ucx__key_destroy,
    .barrier_create = dart__ucx__barrier_create,
    .barrier = dart__ucx__barrier,
    .barrier_destroy = dart__ucx__barrier_destroy,
    .am_open = dart__ucx__am_open,
    .am_close = dart__ucx__am_close,
    .am_send = dart__am__twosided_send,
    .am_poll = dart__am__twosided_poll,
    .am_ran = dart__am__twosided_ran,
};
