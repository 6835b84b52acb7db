/*
 * The GPU module: which backend and device this unit uses, the internal
 * streams (one per target unit, so that a flush waits for that unit's
 * copies only), local device buffers on host paths, and the public
 * functions of dart_memkind.h that are not about segments.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/env.h"
#include "base/runtime.h"
#include "gpu/gpu.h"
#include "team/team.h"

dart__gpu_state_t dart__gpu = {.device = -1};

static struct {
  pthread_mutex_t lock;     /* creating streams */
  _Atomic(void *) *streams; /* per global unit */
} gpu = {PTHREAD_MUTEX_INITIALIZER, NULL};

/* Whether the remote transport moves CUDA device memory itself. */
static bool remote_device_memory(void)
{
  const dart__path_ops_t *remote = dart__transport__remote();
  return remote->device_memory != NULL && remote->device_memory();
}

dart_ret_t dart__gpu__init(void)
{
  const dart__gpu_ops_t *ops = NULL;
  if (dart__base__config.gpu_emulate > 0) {
    ops = &dart__gpu_emu;
  } else if (dart__base__config.gpu) {
#ifdef DART_HAVE_CUDA
    ops = &dart__gpu_cuda;
#endif
  }
  int devices = ops ? ops->count() : 0;
  int device = -1;
  dart_ret_t ret = DART_OK;
  if (devices > 0) {
    int local_rank = dart__team__get(DART_TEAM_ALL)->node_rank[dart__rt.myid];
    device = dart__base__config.gpu_device >= 0 ? dart__base__config.gpu_device
                                                : local_rank % devices;
    if (device >= devices) {
      DART_LOG_ERROR_IN("dart_init", "DART_GPU_DEVICE=%d, but this unit "
                        "sees %d device(s)", device, devices);
      ret = DART_ERR_INVAL;
    } else if (ops->set_device("dart_init", device) != DART_OK) {
      ret = DART_ERR_OTHER;
    } else if ((gpu.streams = calloc((size_t)dart__rt.size,
                                     sizeof *gpu.streams)) == NULL) {
      ret = DART_ERR_NOMEM;
    }
  }
  /* a remote transport that registers memory moves device memory where it
   * reports CUDA memory support; to it an emulated device's memory is
   * host memory */
  bool ucx_moves = devices > 0 && dart__base__config.gpu_ucx &&
                   dart__transport__remote()->seg_register != NULL &&
                   (ops == &dart__gpu_emu || remote_device_memory());
  /* device segments need a device on every unit; a unit that failed
   * (-1) makes every unit fail, after this collective */
  int mine[3] = {ret != DART_OK ? -1 : devices > 0, ucx_moves,
                 devices > 0 && ops->words()},
      all[3];
  DART__MPI_CHECK(
      MPI_Allreduce(mine, all, 3, MPI_INT, MPI_MIN, dart__rt.comm));
  if (all[0] < 0) {
    free(gpu.streams);
    gpu.streams = NULL;
    return ret != DART_OK ? ret : DART_ERR_OTHER;
  }
  dart__gpu.any_device = all[0];
  dart__gpu.ucx_direct = all[1] && dart__rt.num_nodes > 1;
  dart__gpu.words = all[2];
  dart__gpu.devices = devices;
  dart__gpu.device = device;
  dart__gpu.ops = devices > 0 ? ops : NULL;
  return DART_OK;
}

void dart__gpu__fini(void)
{
  if (gpu.streams) {
    for (int u = 0; u < dart__rt.size; u++)
      if (gpu.streams[u]) dart__gpu.ops->stream_destroy(gpu.streams[u]);
    free(gpu.streams);
    gpu.streams = NULL;
  }
  if (dart__gpu.ops) dart__gpu.ops->fini();
  dart__gpu.ops = NULL;
  dart__gpu.device = -1;
  dart__gpu.devices = 0;
  dart__gpu.any_device = false;
  dart__gpu.ucx_direct = false;
  dart__gpu.words = false;
}

void dart__gpu__print_info(FILE *out)
{
  if (dart__gpu.ops == NULL) {
    fprintf(out, "gpu: none (DART_GPU=%d, DART_GPU_EMULATE=%d%s)\n",
            dart__base__config.gpu, dart__base__config.gpu_emulate,
#ifdef DART_HAVE_CUDA
            ""
#else
            ", built without CUDA"
#endif
    );
    return;
  }
  fprintf(out, "gpu: %s, %d device(s), unit 0 on device %d%s\n",
          dart__gpu.ops->name, dart__gpu.devices, dart__gpu.device,
          dart__gpu.any_device ? "" : " (some unit has none: no device "
                                      "segments)");
  fprintf(out, "  device memory: own and node peers' ipc (%s), other "
               "nodes %s\n",
          dart__gpu.ops == &dart__gpu_emu ? "emulated handles"
                                          : "CUDA IPC handles",
          dart__gpu.ucx_direct ? "ucx (registered device memory, atomics "
                                 "too)"
                               : "stage (pinned host buffers over MPI)");
  fprintf(out, "  UCX reports CUDA memory support: %s\n",
          remote_device_memory() ? "yes"
          : dart__gpu.ucx_direct
              ? "no (emulated device memory is host memory to UCX)"
              : "no");
}

dart_ret_t dart__gpu__stream(const char *func, int gunit, void **stream)
{
  void *s = atomic_load_explicit(&gpu.streams[gunit], memory_order_acquire);
  if (__builtin_expect(s != NULL, 1)) {
    *stream = s;
    return DART_OK;
  }
  dart_ret_t ret = DART_OK;
  pthread_mutex_lock(&gpu.lock);
  s = atomic_load_explicit(&gpu.streams[gunit], memory_order_relaxed);
  if (s == NULL && (ret = dart__gpu.ops->stream_create(func, &s)) == DART_OK)
    atomic_store_explicit(&gpu.streams[gunit], s, memory_order_release);
  pthread_mutex_unlock(&gpu.lock);
  if (ret == DART_OK) *stream = s;
  return ret;
}

dart_ret_t dart__gpu__flush_all(const char *func)
{
  if (gpu.streams == NULL) return DART_OK;
  dart_ret_t ret = DART_OK;
  for (int u = 0; u < dart__rt.size; u++) {
    void *s = atomic_load_explicit(&gpu.streams[u], memory_order_acquire);
    if (s && dart__gpu.ops->stream_sync(func, s) != DART_OK)
      ret = DART_ERR_OTHER;
  }
  return ret;
}

dart_ret_t dart__gpu__event_wait(const char *func, void *event)
{
  dart_ret_t ret = dart__gpu.ops->event_sync(func, event);
  dart__gpu.ops->event_destroy(event);
  return ret;
}

void dart__gpu__event_drop(void *event) { dart__gpu.ops->event_destroy(event); }

typedef struct {
  char *dst, *src;
  size_t es;
  void *stream;
  const char *func;
} runs_t;

static int copy_run(void *ctx, size_t dst_at, size_t src_at, size_t n)
{
  runs_t *r = ctx;
  return dart__gpu.ops->copy(r->func, r->dst + dst_at * r->es,
                             r->src + src_at * r->es, n * r->es,
                             r->stream) != DART_OK;
}

dart_ret_t dart__gpu__copy_runs(const dart__xfer_t *x, bool is_put,
                                char *remote, void *stream)
{
  runs_t r = {is_put ? remote : x->local, is_put ? x->local : remote,
              x->local_t->elem_size, stream, x->func};
  int failed =
      is_put ? dart__types__dtype_runs(x->remote_t, x->local_t, x->nelem,
                                       copy_run, &r)
             : dart__types__dtype_runs(x->local_t, x->remote_t, x->nelem,
                                       copy_run, &r);
  return failed ? DART_ERR_OTHER : DART_OK;
}

dart_ret_t dart__gpu__local_xfer(const dart__xfer_t *x, bool is_put, int path,
                                 int gunit, char *mapped, dart__mode_t mode,
                                 dart_handle_t *handle)
{
  const dart__gpu_ops_t *ops = dart__gpu.ops;
  void *stream;
  dart_ret_t ret = dart__gpu__stream(x->func, gunit, &stream);
  if (ret != DART_OK) return ret;
  if (mapped != NULL) {
    /* host memory we map: the device copies straight to or from it */
    ret = dart__gpu__copy_runs(x, is_put, mapped, stream);
    if (ret == DART_OK) ret = ops->stream_sync(x->func, stream);
  } else {
    /* the local span through host memory, then the host path, blocking */
    size_t bytes = dart__types__dtype_span(x->local_t, x->nelem) *
                   x->local_t->elem_size;
    /* pageable: pinning per call would cost more than it saves (and
     * synchronises the device) */
    void *host = malloc(bytes);
    if (host == NULL) {
      DART_LOG_ERROR_IN(x->func, "out of memory for %zu bytes of staging",
                        bytes);
      return DART_ERR_NOMEM;
    }
    dart__xfer_t hx = *x;
    hx.local = host;
    const dart__path_ops_t *p = dart__transport__paths[path];
    if (is_put) {
      if ((ret = ops->copy(x->func, host, x->local, bytes, stream)) ==
              DART_OK &&
          (ret = ops->stream_sync(x->func, stream)) == DART_OK)
        ret = p->put(&hx, DART__MODE_BLOCKING, NULL);
    } else if ((ret = p->get(&hx, DART__MODE_BLOCKING, NULL)) == DART_OK) {
      /* back along the local type's runs only: its gaps stay untouched */
      runs_t r = {x->local, host, x->local_t->elem_size, stream, x->func};
      if (dart__types__dtype_runs(x->local_t, x->local_t, x->nelem,
                                  copy_run, &r) != 0)
        ret = DART_ERR_OTHER;
      if (ret == DART_OK) ret = ops->stream_sync(x->func, stream);
    }
    free(host);
  }
  if (ret == DART_OK && mode == DART__MODE_HANDLE) *handle = DART_HANDLE_NULL;
  return ret;
}

/* ---- public ---- */

dart_ret_t dart_memkind_device(int *device)
{
  DART__CHECK_INIT();
  if (device == NULL) {
    DART_LOG_ERROR("device is NULL");
    return DART_ERR_INVAL;
  }
  *device = dart__gpu.ops ? dart__gpu.device : -1;
  return DART_OK;
}

/* Whether kind is one this unit can allocate, or a logged error. */
static dart_ret_t check_kind(const char *func, dart_memkind_t kind)
{
  if (kind == DART_MEMKIND_HOST) return DART_OK;
  if (kind != DART_MEMKIND_CUDA) {
    DART_LOG_ERROR_IN(func, "memory kind %d is unknown", (int)kind);
    return DART_ERR_INVAL;
  }
  if (dart__gpu.ops == NULL) {
    DART_LOG_ERROR_IN(func, "memory kind DART_MEMKIND_CUDA: this unit has "
                            "no CUDA device");
    return DART_ERR_INVAL;
  }
  return DART_OK;
}

dart_ret_t dart_memkind_alloc(size_t bytes, dart_memkind_t kind, void **ptr)
{
  DART__CHECK_INIT();
  if (ptr == NULL) {
    DART_LOG_ERROR("ptr is NULL");
    return DART_ERR_INVAL;
  }
  dart_ret_t ret = check_kind(__func__, kind);
  if (ret != DART_OK) return ret;
  void *p = NULL;
  if (bytes > 0) {
    if (kind == DART_MEMKIND_CUDA) {
      ret = dart__gpu.ops->alloc(__func__, bytes, &p);
    } else if ((p = malloc(bytes)) == NULL) {
      DART_LOG_ERROR("out of memory for %zu bytes", bytes);
      ret = DART_ERR_NOMEM;
    }
  }
  if (ret == DART_OK) *ptr = p;
  return ret;
}

dart_ret_t dart_memkind_free(void *ptr, dart_memkind_t kind)
{
  DART__CHECK_INIT();
  dart_ret_t ret = check_kind(__func__, kind);
  if (ret != DART_OK || ptr == NULL) return ret;
  if (kind == DART_MEMKIND_HOST) {
    free(ptr);
    return DART_OK;
  }
  if (!dart__gpu.ops->is_device(ptr)) {
    DART_LOG_ERROR("%p is not device memory", ptr);
    return DART_ERR_INVAL;
  }
  dart__gpu.ops->free(ptr);
  return DART_OK;
}

dart_ret_t dart_memkind_copy(void *dst, const void *src, size_t bytes)
{
  DART__CHECK_INIT();
  if ((dst == NULL || src == NULL) && bytes > 0) {
    DART_LOG_ERROR("dst %p or src %p is NULL for %zu bytes", dst, src, bytes);
    return DART_ERR_INVAL;
  }
  if (bytes == 0) return DART_OK;
  if (dart__gpu.ops == NULL) {
    memcpy(dst, src, bytes);
    return DART_OK;
  }
  dart_ret_t ret = dart__gpu.ops->copy(__func__, dst, src, bytes, NULL);
  return ret == DART_OK ? dart__gpu.ops->stream_sync(__func__, NULL) : ret;
}
