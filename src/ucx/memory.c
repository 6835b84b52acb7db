/*
 * The UCX path's memory: segments it allocates or registers, with every
 * unit's packed key allgathered at creation and unpacked on first use, and
 * this unit's memory outside the segments (grown pool chunks), whose keys
 * others fetch themselves.
 */
#include <stdlib.h>
#include <unistd.h>

#include "gpu/gpu.h"
#include "ucx/ucx.h"

ucs_status_t dart__ucx__pack_key(const char *func, ucp_mem_h memh,
                                 void **packed, size_t *packed_len)
{
  ucs_status_t status =
      ucp_rkey_pack(dart__ucx.context, memh, packed, packed_len);
  if (status != UCS_OK)
    DART_LOG_ERROR_IN(func, "packing a UCX key failed: %s",
                      ucs_status_string(status));
  return status;
}

/* Maps len bytes at address with UCX (flags: UCP_MEM_MAP_ALLOCATE to have
 * UCX allocate them; logged on failure). */
static ucs_status_t mem_map(const char *func, void *address, size_t len,
                            unsigned flags, ucp_mem_h *memh)
{
  ucp_mem_map_params_t params = {
      .field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                    UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                    UCP_MEM_MAP_PARAM_FIELD_FLAGS,
      .address = address,
      .length = len,
      .flags = flags};
  ucs_status_t status = ucp_mem_map(dart__ucx.context, &params, memh);
  if (status != UCS_OK)
    DART_LOG_ERROR_IN(func, "%s %zu bytes with UCX failed: %s",
                      flags & UCP_MEM_MAP_ALLOCATE ? "allocating"
                                                   : "registering",
                      len, ucs_status_string(status));
  return status;
}

/* Registers [start, start + len) and packs its key (logged on failure). */
static ucs_status_t mem_register(const char *func, uintptr_t start,
                                 size_t len, ucp_mem_h *memh, void **packed,
                                 size_t *packed_len)
{
  ucs_status_t status = mem_map(func, (void *)start, len, 0, memh);
  if (status != UCS_OK) return status;
  if ((status = dart__ucx__pack_key(func, *memh, packed, packed_len)) !=
      UCS_OK) {
    ucp_mem_unmap(dart__ucx.context, *memh);
    *memh = NULL;
  }
  return status;
}

dart_ret_t dart__ucx__mem_alloc(const char *func, size_t len,
                                ucp_mem_h *memh, char **base)
{
  ucp_mem_h h;
  if (mem_map(func, NULL, len, UCP_MEM_MAP_ALLOCATE, &h) != UCS_OK)
    return DART_ERR_NOMEM;
  ucp_mem_attr_t attr = {.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS};
  ucs_status_t status = ucp_mem_query(h, &attr);
  if (status != UCS_OK) {
    DART_LOG_ERROR_IN(func, "ucp_mem_query failed: %s",
                      ucs_status_string(status));
    ucp_mem_unmap(dart__ucx.context, h);
    return DART_ERR_NOMEM;
  }
  *memh = h;
  *base = attr.address;
  return DART_OK;
}

dart_ret_t dart__ucx__seg_alloc(const char *func, dart__segment_t *seg,
                                size_t len)
{
  dart__ucx_seg_t *s = calloc(1, sizeof *s);
  if (s == NULL) {
    DART_LOG_ERROR_IN(func, "out of memory for a UCX registration");
    return DART_ERR_NOMEM;
  }
  dart_ret_t ret = dart__ucx__mem_alloc(func, len, &s->memh, &seg->mybase);
  if (ret != DART_OK) {
    free(s);
    return ret;
  }
  s->allocated = true;
  seg->transport = s;
  return DART_OK;
}

/* This unit's part of seg registered into s->memh (unless UCX allocated
 * it) and its key packed (logged on failure). */
static ucs_status_t seg_key(const char *func, const dart__segment_t *seg,
                            dart__ucx_seg_t *s, void **packed,
                            size_t *packed_len)
{
  if (s->allocated)
    return dart__ucx__pack_key(func, s->memh, packed, packed_len);
  if (seg->mysize == 0) return UCS_OK;
  /* host memory: whole pages, so that the 4-byte words of 1- and 2-byte
   * atomics stay inside; device memory: no more than the part (its
   * allocation ends there), reached where the backend says */
  const bool device = seg->memkind == DART_MEMKIND_CUDA;
  const uintptr_t page = device ? 1 : (uintptr_t)sysconf(_SC_PAGESIZE);
  const uintptr_t base = (uintptr_t)(
      device ? dart__gpu.ops->ucx_addr(seg->mybase) : seg->mybase);
  uintptr_t start = base & ~(page - 1);
  uintptr_t end = (base + seg->mysize + page - 1) & ~(page - 1);
  return mem_register(func, start, end - start, &s->memh, packed,
                      packed_len);
}

dart_ret_t dart__ucx__seg_register(const char *func, dart__segment_t *seg)
{
  dart__team_t *team = seg->team;
  dart__ucx_seg_t *s = seg->transport; /* dart__ucx__seg_alloc's, or NULL */
  if (s == NULL && (s = calloc(1, sizeof *s)) != NULL) seg->transport = s;
  void *packed = NULL;
  size_t packed_len = 0;
  ucs_status_t status = UCS_ERR_NO_MEMORY;
  if (s == NULL)
    DART_LOG_ERROR_IN(func, "out of memory for a UCX registration");
  else
    status = seg_key(func, seg, s, &packed, &packed_len);
  /* everybody's keys, or nobody keeps one (the rest goes with
   * dart__ucx__seg_release) */
  int ok = status == UCS_OK, all_ok = 0;
  MPI_Request req;
  dart_ret_t ret = DART_ERR_OTHER;
  if (MPI_Iallreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, team->comm, &req) !=
          MPI_SUCCESS ||
      dart__progress__wait(func, 1, &req) != DART_OK || !all_ok)
    goto out;
  ret = dart__ucx__allgather(func, team->comm, team->size, packed,
                             packed_len, &s->packed, &s->packed_off);
  if (ret != DART_OK) goto out;
  s->rkeys = calloc((size_t)team->size, sizeof *s->rkeys);
  if (s->rkeys == NULL) {
    DART_LOG_ERROR_IN(func, "out of memory for %d UCX keys", team->size);
    ret = DART_ERR_NOMEM;
  }
out:
  if (packed) ucp_rkey_buffer_release(packed);
  return ret;
}

void dart__ucx__seg_release(dart__segment_t *seg)
{
  dart__ucx_seg_t *s = seg->transport;
  for (int u = 0; s->rkeys && u < seg->team->size; u++)
    dart__ucx__key_destroy(s->rkeys[u]);
  if (s->memh) ucp_mem_unmap(dart__ucx.context, s->memh);
  free(s->rkeys);
  free(s->packed);
  free(s->packed_off);
  free(s);
  seg->transport = NULL;
}

dart_ret_t dart__ucx__mem_register(const char *func, void *base, size_t len,
                                   void **mem, void **packed,
                                   size_t *packed_len)
{
  ucp_mem_h h;
  if (mem_register(func, (uintptr_t)base, len, &h, packed, packed_len) !=
      UCS_OK)
    return DART_ERR_OTHER;
  *mem = h;
  return DART_OK;
}

void dart__ucx__mem_deregister(void *mem, void *packed)
{
  if (packed) ucp_rkey_buffer_release(packed);
  if (mem) ucp_mem_unmap(dart__ucx.context, mem);
}

dart_ret_t dart__ucx__key_unpack(const char *func, int unit,
                                 const void *packed, _Atomic(void *) *slot,
                                 void **key)
{
  ucp_ep_h ep = dart__ucx__ep_of(func, unit);
  if (ep == NULL) return DART_ERR_OTHER;
  ucp_rkey_h r;
  ucs_status_t status = ucp_ep_rkey_unpack(ep, packed, &r);
  if (status != UCS_OK)
    return dart__ucx__error(func, "ucp_ep_rkey_unpack", status, unit);
  void *first = NULL;
  if (!atomic_compare_exchange_strong(slot, &first, r)) {
    ucp_rkey_destroy(r); /* another thread was first */
    r = first;
  }
  *key = r;
  return DART_OK;
}

void dart__ucx__key_destroy(void *key)
{
  if (key) ucp_rkey_destroy(key);
}
