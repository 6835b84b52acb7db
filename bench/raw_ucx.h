/*
 * Raw UCX beside libdart, for the baselines that measure UCX itself on the
 * memory libdart's UCX transport uses: each unit's own context and worker,
 * bytes of memory that UCX allocates (ucp_mem_map with
 * UCP_MEM_MAP_ALLOCATE, the kind libdart gives a part that no node peer
 * shares, DART_UCX_ALLOC), and endpoints and unpacked keys to every unit's
 * memory, its own included.
 *
 * UCX emulates RMA and atomics with messages where it cannot reach the
 * memory (UCX_TLS=tcp), and the target serves them in ucp_worker_progress:
 * units that wait for others do so in raw_ucx_sync, a barrier that
 * progresses the raw worker.
 */
#ifndef DART_BENCH_RAW_UCX_H_
#define DART_BENCH_RAW_UCX_H_

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucp/api/ucp.h>

typedef struct {
  int on;       /* set up on every unit: the rows run */
  int units;
  ucp_context_h context;
  ucp_worker_h worker;
  ucp_mem_h memh;
  char *mine;        /* this unit's memory */
  ucp_ep_h *ep;      /* per unit */
  ucp_rkey_h *rkey;  /* per unit: its memory's key */
  uint64_t *remote;  /* per unit: its memory's address */
} raw_ucx_t;

/* Completes a request by progressing the worker; 0 or -1 (error). */
static inline int raw_ucx_wait(const raw_ucx_t *x, ucs_status_ptr_t req)
{
  if (req == NULL) return 0;
  if (UCS_PTR_IS_ERR(req)) return -1;
  ucs_status_t status;
  while ((status = ucp_request_check_status(req)) == UCS_INPROGRESS)
    ucp_worker_progress(x->worker);
  ucp_request_free(req);
  return status == UCS_OK ? 0 : -1;
}

/* A barrier of all units that serves the raw worker meanwhile. MPI is
 * asked only every so many idle polls: an MPI_Test costs more than a
 * round trip of UCX here, and a target would answer late. */
static inline void raw_ucx_sync(const raw_ucx_t *x)
{
  MPI_Request req;
  MPI_Ibarrier(MPI_COMM_WORLD, &req);
  int done = 0;
  unsigned idle = 0;
  while (!done) {
    if (x->worker != NULL && ucp_worker_progress(x->worker) > 0) continue;
    if (x->worker == NULL || ++idle % 64 == 0)
      MPI_Test(&req, &done, MPI_STATUS_IGNORE);
  }
}

/* Each unit's bytes of blob, one after the other in *all from off[u]
 * (malloc'd; NULL when out of memory). */
static inline char *raw_ucx_allgather(const void *blob, size_t len,
                                      int units, int *off)
{
  int mine = (int)len, *lens = malloc((size_t)units * sizeof *lens);
  if (lens == NULL) return NULL;
  MPI_Allgather(&mine, 1, MPI_INT, lens, 1, MPI_INT, MPI_COMM_WORLD);
  int total = 0;
  for (int u = 0; u < units; u++) {
    off[u] = total;
    total += lens[u];
  }
  char *all = malloc(total > 0 ? (size_t)total : 1);
  if (all != NULL)
    MPI_Allgatherv(blob, mine, MPI_BYTE, all, lens, off, MPI_BYTE,
                   MPI_COMM_WORLD);
  free(lens);
  return all;
}

/* Collective on MPI_COMM_WORLD. features: UCP_FEATURE_*. x->on says
 * whether every unit got everything; prog names the program in messages. */
static inline void raw_ucx_open(raw_ucx_t *x, size_t bytes,
                                uint64_t features, const char *prog)
{
  memset(x, 0, sizeof *x);
  MPI_Comm_size(MPI_COMM_WORLD, &x->units);
  ucp_address_t *addr = NULL;
  size_t addr_len = 0;
  void *packed = NULL;
  size_t packed_len = 0;
  ucp_config_t *config;
  ucs_status_t st = ucp_config_read(NULL, NULL, &config);
  if (st == UCS_OK) {
    ucp_params_t params = {.field_mask = UCP_PARAM_FIELD_FEATURES,
                           .features = features};
    st = ucp_init(&params, config, &x->context);
    ucp_config_release(config);
  }
  if (st == UCS_OK) {
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                              .thread_mode = UCS_THREAD_MODE_SINGLE};
    st = ucp_worker_create(x->context, &wp, &x->worker);
  }
  if (st == UCS_OK) st = ucp_worker_get_address(x->worker, &addr, &addr_len);
  if (st == UCS_OK) {
    ucp_mem_map_params_t mp = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                                             UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                                             UCP_MEM_MAP_PARAM_FIELD_FLAGS,
                               .address = NULL,
                               .length = bytes,
                               .flags = UCP_MEM_MAP_ALLOCATE};
    st = ucp_mem_map(x->context, &mp, &x->memh);
  }
  ucp_mem_attr_t attr = {.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS};
  if (st == UCS_OK && (st = ucp_mem_query(x->memh, &attr)) == UCS_OK)
    x->mine = attr.address;
  if (st == UCS_OK)
    st = ucp_rkey_pack(x->context, x->memh, &packed, &packed_len);
  int ok = st == UCS_OK, all_ok;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (all_ok) {
    int *addr_off = malloc((size_t)x->units * sizeof *addr_off);
    int *key_off = malloc((size_t)x->units * sizeof *key_off);
    uint64_t here = (uint64_t)(uintptr_t)x->mine;
    x->ep = calloc((size_t)x->units, sizeof *x->ep);
    x->rkey = calloc((size_t)x->units, sizeof *x->rkey);
    x->remote = malloc((size_t)x->units * sizeof *x->remote);
    char *addrs = NULL, *keys = NULL;
    if (addr_off && key_off && x->ep && x->rkey && x->remote) {
      addrs = raw_ucx_allgather(addr, addr_len, x->units, addr_off);
      keys = raw_ucx_allgather(packed, packed_len, x->units, key_off);
      MPI_Allgather(&here, 1, MPI_UINT64_T, x->remote, 1, MPI_UINT64_T,
                    MPI_COMM_WORLD);
    }
    ok = addrs != NULL && keys != NULL;
    for (int u = 0; u < x->units && ok; u++) {
      ucp_ep_params_t ep = {
          .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
          .address = (const ucp_address_t *)(addrs + addr_off[u])};
      st = ucp_ep_create(x->worker, &ep, &x->ep[u]);
      if (st == UCS_OK)
        st = ucp_ep_rkey_unpack(x->ep[u], keys + key_off[u], &x->rkey[u]);
      ok = st == UCS_OK;
    }
    free(keys);
    free(addrs);
    free(key_off);
    free(addr_off);
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  }
  if (!ok)
    fprintf(stderr, "%s: raw UCX set-up failed (%s): no ucx rows\n", prog,
            ucs_status_string(st));
  if (addr) ucp_worker_release_address(x->worker, addr);
  if (packed) ucp_rkey_buffer_release(packed);
  x->on = all_ok;
  raw_ucx_sync(x); /* peers serve the wire-up of the endpoints */
}

/* Collective: the endpoints close while the others serve them, then the
 * rest goes. 0, or -1 when an endpoint did not close cleanly. */
static inline int raw_ucx_close(raw_ucx_t *x)
{
  int ret = 0;
  const ucp_request_param_t param = {.op_attr_mask = 0};
  for (int u = 0; x->rkey && u < x->units; u++)
    if (x->rkey[u]) ucp_rkey_destroy(x->rkey[u]);
  for (int u = 0; x->ep && u < x->units; u++)
    if (x->ep[u] && raw_ucx_wait(x, ucp_ep_close_nbx(x->ep[u], &param)) != 0)
      ret = -1;
  raw_ucx_sync(x);
  if (x->memh) ucp_mem_unmap(x->context, x->memh);
  if (x->worker) ucp_worker_destroy(x->worker);
  if (x->context) ucp_cleanup(x->context);
  free(x->remote);
  free(x->rkey);
  free(x->ep);
  memset(x, 0, sizeof *x);
  return ret;
}

#endif
