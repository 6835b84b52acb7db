/*
 * The CUDA backend, on the runtime API (which loads the driver itself, so
 * libdart loads and runs on machines without one). Two driver functions
 * come through cudaGetDriverEntryPointByVersion: the allocation that holds
 * a registered pointer (IPC handles name allocations) and its buffer id,
 * which is unique for the process's lifetime and so keys the peers' IPC
 * caches by allocation, not address. Two more, where the driver has them:
 * the stream memory operations that signal between streams.
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"

typedef CUresult (*address_range_fn)(CUdeviceptr *base, size_t *size,
                                     CUdeviceptr ptr);
typedef CUresult (*pointer_attribute_fn)(void *data,
                                         CUpointer_attribute attribute,
                                         CUdeviceptr ptr);

typedef CUresult (*stream_value_fn)(CUstream stream, CUdeviceptr addr,
                                    cuuint32_t value, unsigned int flags);

static struct {
  int device; /* this unit's */
  address_range_fn address_range;
  pointer_attribute_fn pointer_attribute;
  stream_value_fn write_value, wait_value; /* NULL: none */
  unsigned wait_flags; /* and a flush of remote writes where it can */
  pthread_mutex_t lock; /* the atomics' operand buffer */
  char *scratch;        /* pinned, mapped: the device reads and writes it */
  size_t scratch_size;
} cuda = {-1, NULL, NULL, NULL, NULL, CU_STREAM_WAIT_VALUE_GEQ,
        PTHREAD_MUTEX_INITIALIZER, NULL, 0};

/*
 * The current device is per host thread: every entry makes this unit's
 * current (the progress thread and the application's threads call here
 * too) and gives the caller's back on leaving.
 */
static int enter(void)
{
  int prev = -1;
  if (cudaGetDevice(&prev) == cudaSuccess && prev == cuda.device) return -1;
  cudaSetDevice(cuda.device);
  return prev;
}

static void leave(int prev)
{
  if (prev >= 0) cudaSetDevice(prev);
}

static dart_ret_t failed(const char *func, const char *what, cudaError_t err)
{
  DART_LOG_ERROR_IN(func, "%s failed: %s", what, cudaGetErrorString(err));
  return err == cudaErrorMemoryAllocation ? DART_ERR_NOMEM : DART_ERR_OTHER;
}

static bool entry_point(const char *symbol, void **fn)
{
  enum cudaDriverEntryPointQueryResult found;
  return cudaGetDriverEntryPointByVersion(symbol, fn, 12000, cudaEnableDefault,
                                          &found) == cudaSuccess &&
         found == cudaDriverEntryPointSuccess && *fn != NULL;
}

static int cuda_count(void)
{
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) { /* no driver or no device: leaves n alone */
    DART_LOG_INFO("no CUDA device: cudaGetDeviceCount: %s",
                  cudaGetErrorString(err));
    cudaGetLastError();
    return 0;
  }
  if (n > 0 && (!entry_point("cuMemGetAddressRange",
                             (void **)&cuda.address_range) ||
                !entry_point("cuPointerGetAttribute",
                             (void **)&cuda.pointer_attribute))) {
    DART_LOG_WARN("the CUDA driver lacks cuMemGetAddressRange or "
                  "cuPointerGetAttribute: no device memory");
    return 0;
  }
  if (n > 0 && (!entry_point("cuStreamWriteValue32",
                             (void **)&cuda.write_value) ||
                !entry_point("cuStreamWaitValue32",
                             (void **)&cuda.wait_value))) {
    DART_LOG_INFO("the CUDA driver lacks stream memory operations: plans "
                  "on streams synchronise with the host");
    cuda.write_value = cuda.wait_value = NULL;
  }
  return n;
}

static bool cuda_words(void) { return cuda.wait_value != NULL; }

static dart_ret_t stream_value(const char *func, const char *what,
                               stream_value_fn fn, uint32_t *word,
                               uint32_t value, unsigned flags, void *stream)
{
  CUresult res = fn((CUstream)stream, (CUdeviceptr)(uintptr_t)word,
                    (cuuint32_t)value, flags);
  if (res == CUDA_SUCCESS) return DART_OK;
  DART_LOG_ERROR_IN(func, "%s failed: CUresult %d", what, (int)res);
  return DART_ERR_OTHER;
}

static dart_ret_t cuda_word_write_here(const char *func, uint32_t *word,
                                       uint32_t value, void *stream)
{
  return stream_value(func, "cuStreamWriteValue32", cuda.write_value, word,
                      value, CU_STREAM_WRITE_VALUE_DEFAULT, stream);
}

static dart_ret_t cuda_word_wait_here(const char *func, uint32_t *word,
                                      uint32_t value, void *stream)
{
  return stream_value(func, "cuStreamWaitValue32", cuda.wait_value, word,
                      value, cuda.wait_flags, stream);
}

static dart_ret_t cuda_set_device(const char *func, int device)
{
  cuda.device = device;
  cudaError_t err = cudaSetDevice(device);
  if (err == cudaSuccess) err = cudaFree(NULL); /* the context, now */
  /* a peer device's writes (IPC across devices) may reach this one out
   * of order: a wait they satisfy flushes them, where the device can */
  int flush = 0;
  if (err == cudaSuccess &&
      cudaDeviceGetAttribute(&flush, cudaDevAttrCanFlushRemoteWrites,
                             device) == cudaSuccess &&
      flush)
    cuda.wait_flags |= CU_STREAM_WAIT_VALUE_FLUSH;
  cudaGetLastError();
  return err == cudaSuccess ? DART_OK : failed(func, "cudaSetDevice", err);
}

static dart_ret_t cuda_alloc_here(const char *func, size_t bytes, void **ptr)
{
  cudaError_t err = cudaMalloc(ptr, bytes ? bytes : 1);
  return err == cudaSuccess ? DART_OK : failed(func, "cudaMalloc", err);
}

static void cuda_free_here(void *ptr)
{
  cudaError_t err = cudaFree(ptr);
  if (err != cudaSuccess) failed(__func__, "cudaFree", err);
}

static bool cuda_is_device(const void *ptr)
{
  struct cudaPointerAttributes attr;
  if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attr.type == cudaMemoryTypeDevice;
}

/* A CUDA-aware UCX takes device addresses as they are. */
static void *cuda_ucx_addr(void *ptr) { return ptr; }

static dart_ret_t cuda_export_here(const char *func, void *ptr, size_t bytes,
                                   dart__gpu_export_t *out)
{
  CUdeviceptr base;
  size_t size;
  unsigned long long id;
  if (!cuda_is_device(ptr) ||
      cuda.address_range(&base, &size, (CUdeviceptr)(uintptr_t)ptr) !=
          CUDA_SUCCESS ||
      bytes > size - ((CUdeviceptr)(uintptr_t)ptr - base)) {
    DART_LOG_ERROR_IN(func, "%p + %zu bytes is not memory of this unit's "
                            "device", ptr, bytes);
    return DART_ERR_INVAL;
  }
  if (cuda.pointer_attribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, base) !=
      CUDA_SUCCESS) {
    DART_LOG_ERROR_IN(func, "cuPointerGetAttribute(BUFFER_ID) of %p failed",
                      ptr);
    return DART_ERR_OTHER;
  }
  cudaIpcMemHandle_t h;
  cudaError_t err = cudaIpcGetMemHandle(&h, (void *)(uintptr_t)base);
  if (err != cudaSuccess) return failed(func, "cudaIpcGetMemHandle", err);
  memset(out->handle, 0, sizeof out->handle);
  memcpy(out->handle, &h, sizeof h);
  out->alloc_id = id;
  out->offset = (uint64_t)((CUdeviceptr)(uintptr_t)ptr - base);
  return DART_OK;
}

static dart_ret_t cuda_open_here(const char *func,
                                 const dart__gpu_export_t *e, void **base)
{
  cudaIpcMemHandle_t h;
  memcpy(&h, e->handle, sizeof h);
  cudaError_t err =
      cudaIpcOpenMemHandle(base, h, cudaIpcMemLazyEnablePeerAccess);
  return err == cudaSuccess ? DART_OK
                            : failed(func, "cudaIpcOpenMemHandle", err);
}

static void cuda_close_here(void *base)
{
  cudaError_t err = cudaIpcCloseMemHandle(base);
  if (err != cudaSuccess) failed(__func__, "cudaIpcCloseMemHandle", err);
}

static dart_ret_t cuda_copy_here(const char *func, void *dst,
                                 const void *src, size_t bytes,
                                 void *stream)
{
  cudaError_t err = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault,
                                    (cudaStream_t)stream);
  return err == cudaSuccess ? DART_OK : failed(func, "cudaMemcpyAsync", err);
}

static dart_ret_t cuda_stream_create_here(const char *func, void **stream)
{
  cudaError_t err =
      cudaStreamCreateWithFlags((cudaStream_t *)stream, cudaStreamNonBlocking);
  return err == cudaSuccess ? DART_OK : failed(func, "cudaStreamCreate", err);
}

static void cuda_stream_destroy(void *stream)
{
  if (stream) cudaStreamDestroy((cudaStream_t)stream);
}

static dart_ret_t cuda_stream_sync_here(const char *func, void *stream)
{
  cudaError_t err = cudaStreamSynchronize((cudaStream_t)stream);
  return err == cudaSuccess ? DART_OK
                            : failed(func, "cudaStreamSynchronize", err);
}

static dart_ret_t cuda_event_record_here(const char *func, void *stream,
                                         void **event)
{
  cudaEvent_t e;
  cudaError_t err = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  if (err != cudaSuccess) return failed(func, "cudaEventCreateWithFlags", err);
  if ((err = cudaEventRecord(e, (cudaStream_t)stream)) != cudaSuccess) {
    cudaEventDestroy(e);
    return failed(func, "cudaEventRecord", err);
  }
  *event = e;
  return DART_OK;
}

static dart_ret_t cuda_event_rerecord_here(const char *func, void *event,
                                           void *stream)
{
  cudaError_t err = cudaEventRecord((cudaEvent_t)event, (cudaStream_t)stream);
  return err == cudaSuccess ? DART_OK : failed(func, "cudaEventRecord", err);
}

static dart_ret_t cuda_event_sync_here(const char *func, void *event)
{
  cudaError_t err = cudaEventSynchronize((cudaEvent_t)event);
  return err == cudaSuccess ? DART_OK
                            : failed(func, "cudaEventSynchronize", err);
}

static dart_ret_t cuda_event_query_here(const char *func, void *event,
                                        bool *done)
{
  cudaError_t err = cudaEventQuery((cudaEvent_t)event);
  if (err == cudaErrorNotReady) {
    cudaGetLastError(); /* not an error: leave none behind */
    *done = false;
    return DART_OK;
  }
  if (err != cudaSuccess) return failed(func, "cudaEventQuery", err);
  *done = true;
  return DART_OK;
}

static void cuda_event_destroy(void *event)
{
  if (event) cudaEventDestroy((cudaEvent_t)event);
}

static dart_ret_t cuda_host_alloc_here(const char *func, size_t bytes,
                                       void **ptr)
{
  cudaError_t err = cudaMallocHost(ptr, bytes ? bytes : 1);
  return err == cudaSuccess ? DART_OK : failed(func, "cudaMallocHost", err);
}

static void cuda_host_free(void *ptr)
{
  if (ptr) cudaFreeHost(ptr);
}

static dart_ret_t cuda_atomic_here(const dart__atomic_t *a, char *p,
                                   void *stream)
{
#ifdef DART_HAVE_CUDA_KERNELS
  /* operands and the result through pinned memory the kernel reaches */
  size_t operand_bytes = a->values ? a->nelem * a->size : 0;
  size_t need = operand_bytes + 8;
  dart_ret_t ret = DART_OK;
  pthread_mutex_lock(&cuda.lock);
  if (need > cuda.scratch_size) {
    cuda_host_free(cuda.scratch);
    cuda.scratch = NULL;
    cuda.scratch_size = 0;
    if ((ret = cuda_host_alloc_here(a->func, need, (void **)&cuda.scratch)) !=
        DART_OK)
      goto out;
    cuda.scratch_size = need;
  }
  if (operand_bytes) memcpy(cuda.scratch + 8, a->values, operand_bytes);
  dart__gpu_kernel_args_t args = {
      .kind = (int)a->kind,
      .type = (int)a->type,
      .op = (int)a->op,
      .size = (unsigned)a->size,
      .nelem = a->nelem,
      .target = p,
      .operands = operand_bytes ? cuda.scratch + 8 : NULL,
      .result = a->result ? cuda.scratch : NULL};
  if (a->compare) memcpy(args.compare, a->compare, a->size);
  cudaError_t err = (cudaError_t)dart__gpu__kernel_atomic(&args, stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize((cudaStream_t)stream);
  if (err != cudaSuccess) {
    ret = failed(a->func, "the atomics kernel", err);
    goto out;
  }
  if (a->result) memcpy(a->result, cuda.scratch, a->size);
out:
  pthread_mutex_unlock(&cuda.lock);
  return ret;
#else
  (void)p;
  (void)stream;
  DART_LOG_ERROR_IN(a->func, "atomics on device memory need libdart built "
                             "with a CUDA compiler (nvcc)");
  return DART_ERR_INVAL;
#endif
}

/* A pattern in device memory: one allocation holds the blocks, their
 * first pairs, the index lists and the groups by each side that names an
 * element twice. */
typedef struct {
  void *mem;
#ifdef DART_HAVE_CUDA_KERNELS
  dart__gpu_kernel_pattern_t kernel;
#endif
} cuda_pattern_t;

static dart_ret_t cuda_pattern_upload_here(const char *func,
                                           const dart__pattern_t *p,
                                           void **device_pattern)
{
#ifdef DART_HAVE_CUDA_KERNELS
  dart__pattern_groups_t groups[2] = {{0}, {0}};
  size_t nb = p->nblocks;
  size_t blocks_bytes = nb * sizeof(dart__gpu_kernel_block_t);
  size_t first_bytes = (nb + 1) * sizeof(size_t);
  size_t at_bytes = p->a_at ? p->nelem * sizeof(unsigned) : 0;
  size_t bat_bytes = p->b_at ? p->nelem * sizeof(unsigned) : 0;
  size_t group_bytes[2] = {0, 0};
  dart_ret_t ret = DART_ERR_NOMEM;
  cuda_pattern_t *d = calloc(1, sizeof *d);
  char *host = NULL;
  if (d == NULL) goto nomem;
  for (int side = 0; side < 2; side++) {
    if (dart__types__pattern_groups(p, side, &groups[side]) != DART_OK)
      goto nomem;
    if (groups[side].order)
      group_bytes[side] = (p->nelem + groups[side].ngroups + 1) *
                          sizeof(size_t);
  }
  /* the groups' size_t after the 32-bit index lists, aligned */
  size_t at = blocks_bytes + first_bytes, group_at[2];
  group_at[0] = (at + at_bytes + bat_bytes + sizeof(size_t) - 1) /
                sizeof(size_t) * sizeof(size_t);
  group_at[1] = group_at[0] + group_bytes[0];
  size_t bytes = group_at[1] + group_bytes[1];
  host = malloc(bytes);
  if (host == NULL) goto nomem;
  dart__gpu_kernel_block_t *blocks = (dart__gpu_kernel_block_t *)host;
  size_t *first = (size_t *)(host + blocks_bytes);
  first[0] = 0;
  for (size_t k = 0; k < nb; k++) {
    const dart__pattern_block_t *b = &p->blocks[k];
    blocks[k] = (dart__gpu_kernel_block_t){b->a,  b->b,  b->len, b->n1, b->n2,
                                           b->a1, b->b1, b->a2,  b->b2};
    first[k + 1] = first[k] + b->len * b->n1 * b->n2;
  }
  if (at_bytes) memcpy(host + at, p->a_at, at_bytes);
  if (bat_bytes) memcpy(host + at + at_bytes, p->b_at, bat_bytes);
  for (int side = 0; side < 2; side++) {
    if (!group_bytes[side]) continue;
    memcpy(host + group_at[side], groups[side].order,
           p->nelem * sizeof(size_t));
    memcpy(host + group_at[side] + p->nelem * sizeof(size_t),
           groups[side].first, (groups[side].ngroups + 1) * sizeof(size_t));
  }
  cudaError_t err = cudaMalloc(&d->mem, bytes);
  if (err == cudaSuccess)
    err = cudaMemcpy(d->mem, host, bytes, cudaMemcpyHostToDevice);
  if (err != cudaSuccess) {
    ret = failed(func, "copying a pattern to the device", err);
    goto fail;
  }
  char *dev = d->mem;
  d->kernel = (dart__gpu_kernel_pattern_t){
      .blocks = (const dart__gpu_kernel_block_t *)dev,
      .first = (const size_t *)(dev + blocks_bytes),
      .nblocks = nb,
      .a_at = at_bytes ? (const unsigned *)(dev + at) : NULL,
      .b_at = bat_bytes ? (const unsigned *)(dev + at + at_bytes) : NULL,
      .nelem = p->nelem};
  for (int side = 0; side < 2; side++) {
    if (!group_bytes[side]) continue;
    d->kernel.order[side] = (const size_t *)(dev + group_at[side]);
    d->kernel.group_first[side] =
        (const size_t *)(dev + group_at[side] + p->nelem * sizeof(size_t));
    d->kernel.ngroups[side] = groups[side].ngroups;
  }
  free(host);
  dart__types__pattern_groups_free(&groups[1]);
  dart__types__pattern_groups_free(&groups[0]);
  *device_pattern = d;
  return DART_OK;

nomem:
  DART_LOG_ERROR_IN(func, "out of memory for a pattern of %zu pairs",
                    p->nelem);
fail:
  if (d && d->mem) cudaFree(d->mem);
  free(host);
  dart__types__pattern_groups_free(&groups[1]);
  dart__types__pattern_groups_free(&groups[0]);
  free(d);
  return ret;
#else
  (void)p;
  (void)device_pattern;
  DART_LOG_ERROR_IN(func, "plans on device buffers need libdart built "
                          "with a CUDA compiler (nvcc)");
  return DART_ERR_INVAL;
#endif
}

static void cuda_pattern_free_here(void *device_pattern)
{
  cuda_pattern_t *d = device_pattern;
  if (d == NULL) return;
  cudaFree(d->mem);
  free(d);
}

static dart_ret_t cuda_pattern_here(const char *func,
                                    const dart__gpu_pattern_op_t *op,
                                    void *stream)
{
#ifdef DART_HAVE_CUDA_KERNELS
  const cuda_pattern_t *d = op->device_pattern;
  dart__gpu_kernel_pattern_args_t args = {
      .kind = (int)op->kind,
      .schedule = (int)dart__gpu__schedule(op->kind,
                                           d->kernel.order[0] != NULL,
                                           d->kernel.order[1] != NULL),
      .type = op->type,
      .op = op->op,
      .es = op->es,
      .pattern = d->kernel,
      .a = op->a,
      .b = op->b,
      .c = op->c};
  cudaError_t err = (cudaError_t)dart__gpu__kernel_pattern(&args, stream);
  return err == cudaSuccess ? DART_OK : failed(func, "a plan's kernel", err);
#else
  (void)op;
  (void)stream;
  DART_LOG_ERROR_IN(func, "plans on device buffers need libdart built "
                          "with a CUDA compiler (nvcc)");
  return DART_ERR_INVAL;
#endif
}

static void cuda_fini(void)
{
  cuda_host_free(cuda.scratch);
  cuda.scratch = NULL;
  cuda.scratch_size = 0;
}

/* ---- the entries: each on this unit's device ---- */

#define ON_DEVICE(name, params, args)                                      \
  static dart_ret_t name params                                            \
  {                                                                        \
    int prev = enter();                                                    \
    dart_ret_t ret = name##_here args;                                     \
    leave(prev);                                                           \
    return ret;                                                            \
  }
#define ON_DEVICE_VOID(name, params, args)                                 \
  static void name params                                                  \
  {                                                                        \
    int prev = enter();                                                    \
    name##_here args;                                                      \
    leave(prev);                                                           \
  }

ON_DEVICE(cuda_alloc, (const char *func, size_t bytes, void **ptr),
          (func, bytes, ptr))
ON_DEVICE_VOID(cuda_free, (void *ptr), (ptr))
ON_DEVICE(cuda_export,
          (const char *func, void *ptr, size_t bytes, dart__gpu_export_t *out),
          (func, ptr, bytes, out))
ON_DEVICE(cuda_open,
          (const char *func, const dart__gpu_export_t *e, void **base),
          (func, e, base))
ON_DEVICE_VOID(cuda_close, (void *base), (base))
ON_DEVICE(cuda_copy,
          (const char *func, void *dst, const void *src, size_t bytes,
           void *stream),
          (func, dst, src, bytes, stream))
ON_DEVICE(cuda_stream_create, (const char *func, void **stream),
          (func, stream))
ON_DEVICE(cuda_stream_sync, (const char *func, void *stream), (func, stream))
ON_DEVICE(cuda_event_record, (const char *func, void *stream, void **event),
          (func, stream, event))
ON_DEVICE(cuda_event_sync, (const char *func, void *event), (func, event))
ON_DEVICE(cuda_event_query, (const char *func, void *event, bool *done),
          (func, event, done))
ON_DEVICE(cuda_event_rerecord, (const char *func, void *event, void *stream),
          (func, event, stream))
ON_DEVICE(cuda_host_alloc, (const char *func, size_t bytes, void **ptr),
          (func, bytes, ptr))
ON_DEVICE(cuda_atomic, (const dart__atomic_t *a, char *p, void *stream),
          (a, p, stream))
ON_DEVICE(cuda_pattern_upload,
          (const char *func, const dart__pattern_t *p, void **device_pattern),
          (func, p, device_pattern))
ON_DEVICE_VOID(cuda_pattern_free, (void *device_pattern), (device_pattern))
ON_DEVICE(cuda_pattern,
          (const char *func, const dart__gpu_pattern_op_t *op, void *stream),
          (func, op, stream))
ON_DEVICE(cuda_word_write,
          (const char *func, uint32_t *word, uint32_t value, void *stream),
          (func, word, value, stream))
ON_DEVICE(cuda_word_wait,
          (const char *func, uint32_t *word, uint32_t value, void *stream),
          (func, word, value, stream))

const dart__gpu_ops_t dart__gpu_cuda = {
    .name = "cuda",
    .count = cuda_count,
    .set_device = cuda_set_device,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .is_device = cuda_is_device,
    .ucx_addr = cuda_ucx_addr,
    .export_mem = cuda_export,
    .open = cuda_open,
    .close = cuda_close,
    .copy = cuda_copy,
    .stream_create = cuda_stream_create,
    .stream_destroy = cuda_stream_destroy,
    .stream_sync = cuda_stream_sync,
    .event_record = cuda_event_record,
    .event_sync = cuda_event_sync,
    .event_query = cuda_event_query,
    .event_rerecord = cuda_event_rerecord,
    .event_destroy = cuda_event_destroy,
    .atomic = cuda_atomic,
    .pattern_upload = cuda_pattern_upload,
    .pattern_free = cuda_pattern_free,
    .pattern = cuda_pattern,
    .words = cuda_words,
    .word_write = cuda_word_write,
    .word_wait = cuda_word_wait,
    .host_alloc = cuda_host_alloc,
    .host_free = cuda_host_free,
    .fini = cuda_fini,
};
