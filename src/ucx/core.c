/*
 * The UCX path's requests, endpoints and completion, which its other
 * files share (ucx.h).
 */
#include <stdlib.h>

#include "ucx/ucx.h"

dart__ucx_t dart__ucx;

dart_ret_t dart__ucx__error(const char *func, const char *what,
                            ucs_status_t status, int unit)
{
  DART_LOG_ERROR_IN(func, "%s for unit %d failed: %s", what, unit,
                    ucs_status_string(status));
  return DART_ERR_OTHER;
}

__attribute__((noinline)) dart_ret_t
dart__ucx__wait_started(const char *func, const char *what,
                        ucs_status_ptr_t req, int unit)
{
  if (UCS_PTR_IS_ERR(req))
    return dart__ucx__error(func, what, UCS_PTR_STATUS(req), unit);
  ucs_status_t status;
  unsigned spins = 0;
  while ((status = ucp_request_check_status(req)) == UCS_INPROGRESS)
    dart__progress__wait_turn(&spins);
  ucp_request_free(req);
  if (status != UCS_OK) return dart__ucx__error(func, what, status, unit);
  return DART_OK;
}

/* A started operation completes on its own: dart__ucx__op_done counts it
 * off. A flush waits for every counted operation first (a large put over
 * UCX's rendezvous is remote-complete only when its request is), then for
 * UCX's flush of what completed in place. */
void dart__ucx__op_done(void *request, ucs_status_t status, void *user_data)
{
  (void)user_data;
  if (status != UCS_OK)
    atomic_store_explicit(&dart__ucx.failure, status, memory_order_relaxed);
  ucp_request_free(request);
  atomic_fetch_sub_explicit(&dart__ucx.outstanding, 1, memory_order_release);
}

const ucp_request_param_t dart__ucx__counted = {
    .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK,
    .cb.send = dart__ucx__op_done};

/* (a constant: a local one is zeroed, all of it, in every call) */
const ucp_request_param_t dart__ucx__plain = {.op_attr_mask = 0};

dart_ret_t dart__ucx__wait_counted(const char *func)
{
  unsigned spins = 0;
  while (atomic_load_explicit(&dart__ucx.outstanding, memory_order_acquire) !=
         0)
    dart__progress__wait_turn(&spins);
  /* read first: an exchange is a locked instruction, a load is not */
  if (__builtin_expect(atomic_load_explicit(&dart__ucx.failure,
                                            memory_order_relaxed) == UCS_OK,
                       1))
    return DART_OK;
  ucs_status_t failure = atomic_exchange_explicit(&dart__ucx.failure, UCS_OK,
                                                  memory_order_relaxed);
  if (failure != UCS_OK) {
    DART_LOG_ERROR_IN(func, "a UCX operation started earlier failed: %s",
                      ucs_status_string(failure));
    return DART_ERR_OTHER;
  }
  return DART_OK;
}

ucp_ep_h dart__ucx__ep_create(const char *func, int unit)
{
  mtx_lock(&dart__ucx.ep_lock);
  ucp_ep_h ep =
      atomic_load_explicit(&dart__ucx.eps[unit], memory_order_relaxed);
  if (ep == NULL) {
    ucp_ep_params_t params = {
        .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
        .address = (const ucp_address_t *)(dart__ucx.addrs +
                                           dart__ucx.addr_off[unit])};
    ucs_status_t status = ucp_ep_create(dart__ucx.worker, &params, &ep);
    if (status != UCS_OK) {
      dart__ucx__error(func, "ucp_ep_create", status, unit);
      ep = NULL;
    } else {
      atomic_store_explicit(&dart__ucx.eps[unit], ep, memory_order_release);
    }
  }
  mtx_unlock(&dart__ucx.ep_lock);
  return ep;
}

/* The segment's key of team unit u, unpacked on its first use. */
__attribute__((noinline)) dart_ret_t
dart__ucx__seg_key(const char *func, const dart__segment_t *seg, int u,
                   int unit, ucp_rkey_h *rkey)
{
  dart__ucx_seg_t *s = seg->transport;
  void *key;
  dart_ret_t ret = dart__ucx__key_unpack(
      func, unit, s->packed + s->packed_off[u], &s->rkeys[u], &key);
  if (ret == DART_OK) *rkey = key;
  return ret;
}

dart_ret_t dart__ucx__complete_all(const char *func)
{
  dart_ret_t ret = dart__ucx__wait_counted(func);
  if (ret != DART_OK) return ret;
  ret = dart__ucx__wait(
      func, "ucp_worker_flush_nbx",
      ucp_worker_flush_nbx(dart__ucx.worker, &dart__ucx__plain), dart__rt.myid);
  dart__base__fence(); /* see dart__ucx__flush_ep_only */
  return ret;
}

dart_ret_t dart__ucx__allgather(const char *func, MPI_Comm comm, int size,
                                const void *mine, size_t mylen, char **all,
                                size_t **off)
{
  uint64_t my64 = mylen, *lens64 = malloc((size_t)size * sizeof *lens64);
  int *counts = malloc(2 * (size_t)size * sizeof *counts);
  size_t *o = malloc(((size_t)size + 1) * sizeof *o);
  char *buf = NULL;
  dart_ret_t ret = DART_ERR_NOMEM;
  if (!lens64 || !counts || !o) goto fail;
  MPI_Request req;
  ret = DART_ERR_OTHER;
  if (MPI_Iallgather(&my64, 1, MPI_UINT64_T, lens64, 1, MPI_UINT64_T, comm,
                     &req) != MPI_SUCCESS) {
    DART_LOG_ERROR_IN(func, "MPI_Iallgather of UCX key sizes failed");
    goto fail;
  }
  if (dart__progress__wait(func, 1, &req) != DART_OK) goto fail;
  o[0] = 0;
  for (int u = 0; u < size; u++) {
    if (lens64[u] > INT32_MAX || o[u] > (size_t)INT32_MAX - lens64[u]) {
      DART_LOG_ERROR_IN(func, "UCX keys of %llu bytes are too large",
                        (unsigned long long)lens64[u]);
      goto fail;
    }
    counts[u] = (int)lens64[u];
    counts[size + u] = (int)o[u];
    o[u + 1] = o[u] + lens64[u];
  }
  ret = DART_ERR_NOMEM;
  if ((buf = malloc(o[size] ? o[size] : 1)) == NULL) goto fail;
  ret = DART_ERR_OTHER;
  if (MPI_Iallgatherv(mine, (int)mylen, MPI_BYTE, buf, counts, counts + size,
                      MPI_BYTE, comm, &req) != MPI_SUCCESS) {
    DART_LOG_ERROR_IN(func, "MPI_Iallgatherv of UCX keys failed");
    goto fail;
  }
  if (dart__progress__wait(func, 1, &req) != DART_OK) goto fail;
  free(counts);
  free(lens64);
  *all = buf;
  *off = o;
  return DART_OK;

fail:
  free(buf);
  free(o);
  free(counts);
  free(lens64);
  return ret;
}
