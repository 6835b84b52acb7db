/*
 * Emulated devices (DART_GPU_EMULATE=n): every path above the backend runs
 * and is tested on machines without a GPU.
 *
 * "Device memory" is a memfd mapped twice: the address handed out has no
 * access rights (PROT_NONE), so any load or store that does not go through
 * this backend faults as it would on a GPU, and a second, private mapping
 * is what the copies use. A node peer "opens the IPC handle" by opening
 * the owner's memfd through /proc/<pid>/fd and mapping it the same way.
 * Copies on a stream are deferred until the stream is synchronised, so a
 * missing synchronisation shows up as missing data. Pattern operations
 * ("kernels") run the host's loops on the host mappings, deferred alike.
 * The backend is for
 * tests: a mutex guards its registry, and lookups are linear.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/env.h"
#include "gpu/gpu.h"
#include "progress/progress.h"
#include "transport/cpu_atomic.h"

typedef struct {
  char *dev;  /* the address libdart and the user see */
  char *host; /* where the bytes are reached */
  size_t len;
  int fd;     /* owned allocations keep theirs for peers to open */
  uint64_t id;
} region_t;

/* A copy, or a pattern operation (pattern != NULL) on host mappings. */
typedef struct {
  void *dst;
  const void *src;
  size_t bytes;
  dart__gpu_pattern_op_t pattern;
} pending_t;

typedef struct {
  pending_t *ops; /* not yet run, oldest first */
  size_t n, cap;
  uint64_t done;  /* copies run so far */
} emu_stream_t;

/* Everything a stream held when the event was recorded. */
typedef struct {
  emu_stream_t *stream;
  uint64_t upto; /* done + n then */
} emu_event_t;

static struct {
  pthread_mutex_t lock;
  region_t *regions;
  size_t n, cap;
  uint64_t next_id;
} emu = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0};

/* The region holding p (lock held), or NULL. */
static region_t *find_locked(const void *p)
{
  for (size_t i = 0; i < emu.n; i++)
    if ((const char *)p >= emu.regions[i].dev &&
        (const char *)p < emu.regions[i].dev + emu.regions[i].len)
      return &emu.regions[i];
  return NULL;
}

/* Where the bytes at p are: the host mapping of a device address. */
static char *reach(const void *p)
{
  pthread_mutex_lock(&emu.lock);
  region_t *r = find_locked(p);
  char *at = r ? r->host + ((const char *)p - r->dev) : (char *)p;
  pthread_mutex_unlock(&emu.lock);
  return at;
}

static int emu_count(void) { return dart__base__config.gpu_emulate; }

static dart_ret_t emu_set_device(const char *func, int device)
{
  (void)func;
  (void)device;
  return DART_OK;
}

/* Maps fd twice and enters the region. */
static dart_ret_t map_region(const char *func, int fd, size_t len,
                             uint64_t id, bool keep_fd, void **dev_out)
{
  char *dev = mmap(NULL, len, PROT_NONE, MAP_SHARED, fd, 0);
  char *host = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (dev == MAP_FAILED || host == MAP_FAILED) {
    DART_LOG_ERROR_IN(func, "emulated device: mmap of %zu bytes failed: %s",
                      len, strerror(errno));
    goto fail;
  }
  pthread_mutex_lock(&emu.lock);
  if (emu.n == emu.cap) {
    size_t cap = emu.cap ? 2 * emu.cap : 16;
    region_t *grown = realloc(emu.regions, cap * sizeof *grown);
    if (grown == NULL) {
      pthread_mutex_unlock(&emu.lock);
      DART_LOG_ERROR_IN(func, "emulated device: out of memory");
      goto fail;
    }
    emu.regions = grown;
    emu.cap = cap;
  }
  emu.regions[emu.n++] = (region_t){dev, host, len, keep_fd ? fd : -1, id};
  pthread_mutex_unlock(&emu.lock);
  if (!keep_fd) close(fd);
  *dev_out = dev;
  return DART_OK;

fail:
  if (host != MAP_FAILED) munmap(host, len);
  if (dev != MAP_FAILED) munmap(dev, len);
  close(fd);
  return DART_ERR_NOMEM;
}

static dart_ret_t emu_alloc(const char *func, size_t bytes, void **ptr)
{
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t len = (bytes + page - 1) / page * page;
  if (len == 0) len = page;
  int fd = memfd_create("dart-emulated-device", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, (off_t)len) != 0) {
    DART_LOG_ERROR_IN(func, "emulated device: memfd of %zu bytes failed: %s",
                      len, strerror(errno));
    if (fd >= 0) close(fd);
    return DART_ERR_NOMEM;
  }
  pthread_mutex_lock(&emu.lock);
  uint64_t id = ++emu.next_id;
  pthread_mutex_unlock(&emu.lock);
  return map_region(func, fd, len, id, true, ptr);
}

/* Unmaps the region starting at p (an allocation or an opened mapping). */
static void unmap_region(void *p)
{
  pthread_mutex_lock(&emu.lock);
  region_t *r = find_locked(p);
  if (r == NULL || r->dev != p) {
    pthread_mutex_unlock(&emu.lock);
    DART_LOG_ERROR("emulated device: %p is not the start of a region", p);
    return;
  }
  region_t gone = *r;
  *r = emu.regions[--emu.n];
  pthread_mutex_unlock(&emu.lock);
  munmap(gone.dev, gone.len);
  munmap(gone.host, gone.len);
  if (gone.fd >= 0) close(gone.fd);
}

static void emu_free(void *ptr)
{
  if (ptr) unmap_region(ptr);
}

static bool emu_is_device(const void *ptr)
{
  pthread_mutex_lock(&emu.lock);
  bool found = find_locked(ptr) != NULL;
  pthread_mutex_unlock(&emu.lock);
  return found;
}

/* UCX reaches the bytes through the host mapping, as a CUDA-aware UCX
 * reaches device memory. */
static void *emu_ucx_addr(void *ptr) { return reach(ptr); }

typedef struct {
  int32_t pid;
  int32_t fd;
  uint64_t len;
} emu_handle_t;

static dart_ret_t emu_export(const char *func, void *ptr, size_t bytes,
                             dart__gpu_export_t *out)
{
  pthread_mutex_lock(&emu.lock);
  region_t *r = find_locked(ptr);
  region_t found = r ? *r : (region_t){0};
  pthread_mutex_unlock(&emu.lock);
  if (r == NULL || found.fd < 0 ||
      bytes > found.len - (size_t)((char *)ptr - found.dev)) {
    DART_LOG_ERROR_IN(func, "%p + %zu bytes is not memory of this unit's "
                            "(emulated) device", ptr, bytes);
    return DART_ERR_INVAL;
  }
  emu_handle_t h = {getpid(), found.fd, found.len};
  memset(out->handle, 0, sizeof out->handle);
  memcpy(out->handle, &h, sizeof h);
  out->alloc_id = found.id;
  out->offset = (uint64_t)((char *)ptr - found.dev);
  return DART_OK;
}

static dart_ret_t emu_open(const char *func, const dart__gpu_export_t *e,
                           void **base)
{
  emu_handle_t h;
  memcpy(&h, e->handle, sizeof h);
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)h.pid, (int)h.fd);
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    DART_LOG_ERROR_IN(func, "emulated device: opening unit %lld's memory "
                            "(%s) failed: %s", (long long)e->owner, path,
                      strerror(errno));
    return DART_ERR_OTHER;
  }
  return map_region(func, fd, (size_t)h.len, e->alloc_id, false, base);
}

static void emu_close(void *base) { unmap_region(base); }

/* Queues op behind stream's work. */
static dart_ret_t enqueue(const char *func, emu_stream_t *s, pending_t op)
{
  pthread_mutex_lock(&emu.lock); /* streams are shared by threads */
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 64;
    pending_t *grown = realloc(s->ops, cap * sizeof *grown);
    if (grown == NULL) {
      pthread_mutex_unlock(&emu.lock);
      DART_LOG_ERROR_IN(func, "emulated device: out of memory for a stream");
      return DART_ERR_NOMEM;
    }
    s->ops = grown;
    s->cap = cap;
  }
  s->ops[s->n++] = op;
  pthread_mutex_unlock(&emu.lock);
  return DART_OK;
}

/* What the emulated device keeps of a pattern beside the host's: the
 * groups and pairs' elements of each side that names an element twice. */
typedef struct {
  dart__pattern_groups_t groups[2];
  int64_t *elements[2];
} emu_pattern_t;

/* Pair (i, j) of op alone, as a device thread runs it. */
static void run_pair(const dart__gpu_pattern_op_t *op, int64_t i, int64_t j)
{
  const size_t es = op->es;
  char *ai = op->a + (size_t)i * es, *bj = op->b + (size_t)j * es;
  void *ctx = op->local.ctx;
  switch (op->kind) {
  case DART__GPU_PATTERN_PACK: memcpy(bj, ai, es); break;
  case DART__GPU_PATTERN_APPLY: op->local.fn(bj, ai, 1, ctx); break;
  case DART__GPU_PATTERN_APPLY_TO_B: op->local.fn(ai, bj, 1, ctx); break;
  case DART__GPU_PATTERN_FETCH: {
    _Alignas(16) unsigned char operand[16]; /* c may be b's buffer */
    memcpy(operand, bj, es);
    memcpy(op->c + (size_t)j * es, ai, es);
    op->local.fn(operand, ai, 1, ctx);
    break;
  }
  }
}

/* A schedule of the device's (dart__gpu__schedule): by groups of one
 * written element, the last group first, as the device may run them in
 * any order; otherwise the host's walk in pair order, which every order
 * of pairs that write distinct elements matches. */
static void run_pattern(const dart__gpu_pattern_op_t *op)
{
  const emu_pattern_t *d = op->device_pattern;
  const dart__pattern_t *p = op->pattern;
  dart__gpu_schedule_t schedule = dart__gpu__schedule(
      op->kind, d->groups[0].order != NULL, d->groups[1].order != NULL);
  if (schedule == DART__GPU_PAIRS_BY_A || schedule == DART__GPU_PAIRS_BY_B) {
    const dart__pattern_groups_t *g =
        &d->groups[schedule == DART__GPU_PAIRS_BY_B];
    for (size_t n = g->ngroups; n-- > 0;)
      for (size_t t = g->first[n]; t < g->first[n + 1]; t++)
        run_pair(op, d->elements[0][g->order[t]],
                 d->elements[1][g->order[t]]);
    return;
  }
  switch (op->kind) {
  case DART__GPU_PATTERN_PACK:
    dart__types__pattern_pack(p, op->a, op->b, op->es);
    break;
  case DART__GPU_PATTERN_APPLY:
    dart__types__pattern_apply(p, op->a, op->b, op->es, &op->local);
    break;
  case DART__GPU_PATTERN_APPLY_TO_B:
    dart__types__pattern_apply_to_b(p, op->a, op->b, op->es, &op->local);
    break;
  case DART__GPU_PATTERN_FETCH:
    dart__types__pattern_fetch(p, op->a, op->b, op->c, op->es, &op->local);
    break;
  }
}

static void run_op(const pending_t *op)
{
  if (op->pattern.pattern)
    run_pattern(&op->pattern);
  else
    memcpy(op->dst, op->src, op->bytes);
}

static dart_ret_t emu_copy(const char *func, void *dst, const void *src,
                           size_t bytes, void *stream)
{
  pending_t op = {.dst = reach(dst), .src = reach(src), .bytes = bytes};
  if (stream == NULL) {
    run_op(&op);
    return DART_OK;
  }
  return enqueue(func, stream, op);
}

static void emu_pattern_free(void *device_pattern)
{
  emu_pattern_t *d = device_pattern;
  if (d == NULL) return;
  for (int side = 1; side >= 0; side--) {
    free(d->elements[side]);
    dart__types__pattern_groups_free(&d->groups[side]);
  }
  free(d);
}

/* The device reads the host's pattern (the op's), and where a side names
 * an element twice, its groups and every pair's elements. */
static dart_ret_t emu_pattern_upload(const char *func,
                                     const dart__pattern_t *p,
                                     void **device_pattern)
{
  emu_pattern_t *d = calloc(1, sizeof *d);
  if (d == NULL) goto nomem;
  for (int side = 0; side < 2; side++)
    if (dart__types__pattern_groups(p, side, &d->groups[side]) != DART_OK)
      goto nomem;
  if (d->groups[0].order || d->groups[1].order) {
    for (int side = 0; side < 2; side++) {
      d->elements[side] = malloc(p->nelem * sizeof(int64_t));
      if (d->elements[side] == NULL) goto nomem;
      dart__types__pattern_elements(p, side, d->elements[side]);
    }
  }
  *device_pattern = d;
  return DART_OK;

nomem:
  DART_LOG_ERROR_IN(func, "emulated device: out of memory for a pattern of "
                          "%zu pairs", p->nelem);
  emu_pattern_free(d);
  return DART_ERR_NOMEM;
}

static dart_ret_t emu_pattern(const char *func,
                              const dart__gpu_pattern_op_t *op, void *stream)
{
  pending_t q = {.pattern = *op};
  q.pattern.a = reach(op->a);
  q.pattern.b = reach(op->b);
  q.pattern.c = op->c ? reach(op->c) : NULL;
  if (stream == NULL) {
    run_op(&q);
    return DART_OK;
  }
  return enqueue(func, stream, q);
}

static dart_ret_t emu_stream_create(const char *func, void **stream)
{
  emu_stream_t *s = calloc(1, sizeof *s);
  if (s == NULL) {
    DART_LOG_ERROR_IN(func, "emulated device: out of memory for a stream");
    return DART_ERR_NOMEM;
  }
  *stream = s;
  return DART_OK;
}

/* Runs the stream's copies up to number upto (lock held). */
static void run_locked(emu_stream_t *s, uint64_t upto)
{
  size_t k = upto > s->done ? (size_t)(upto - s->done) : 0;
  if (k > s->n) k = s->n;
  if (k == 0) return; /* nothing due (a fresh stream has no ops array) */
  for (size_t i = 0; i < k; i++) run_op(&s->ops[i]);
  memmove(s->ops, s->ops + k, (s->n - k) * sizeof *s->ops);
  s->n -= k;
  s->done += k;
}

static dart_ret_t emu_stream_sync(const char *func, void *stream)
{
  (void)func; /* nothing fails */
  emu_stream_t *s = stream;
  if (s == NULL) return DART_OK;
  pthread_mutex_lock(&emu.lock);
  run_locked(s, s->done + s->n);
  pthread_mutex_unlock(&emu.lock);
  return DART_OK;
}

static dart_ret_t emu_event_record(const char *func, void *stream,
                                   void **event)
{
  emu_event_t *e = malloc(sizeof *e);
  if (e == NULL) {
    DART_LOG_ERROR_IN(func, "emulated device: out of memory for an event");
    return DART_ERR_NOMEM;
  }
  e->stream = stream;
  pthread_mutex_lock(&emu.lock);
  e->upto = e->stream ? e->stream->done + e->stream->n : 0;
  pthread_mutex_unlock(&emu.lock);
  *event = e;
  return DART_OK;
}

static dart_ret_t emu_event_rerecord(const char *func, void *event,
                                     void *stream)
{
  (void)func; /* nothing fails */
  emu_event_t *e = event;
  pthread_mutex_lock(&emu.lock);
  e->stream = stream;
  e->upto = e->stream ? e->stream->done + e->stream->n : 0;
  pthread_mutex_unlock(&emu.lock);
  return DART_OK;
}

/* Only the copies before the event: later ones stay deferred. */
static dart_ret_t emu_event_sync(const char *func, void *event)
{
  (void)func; /* nothing fails */
  emu_event_t *e = event;
  if (e->stream == NULL) return DART_OK;
  pthread_mutex_lock(&emu.lock);
  run_locked(e->stream, e->upto);
  pthread_mutex_unlock(&emu.lock);
  return DART_OK;
}

/* The work is on the host: it runs now. */
static dart_ret_t emu_event_query(const char *func, void *event, bool *done)
{
  *done = true;
  return emu_event_sync(func, event);
}

static void emu_stream_destroy(void *stream)
{
  emu_stream_t *s = stream;
  if (s == NULL) return;
  emu_stream_sync(__func__, s);
  free(s->ops);
  free(s);
}

/* The stream's signals run once its earlier work has (the stream is
 * synchronised first), so a unit's words move when its host reaches them,
 * as a host protocol's would: no unit waits on a deferred write. A wait
 * blocks the host where it is queued (serving others' operations), so
 * emulation cannot show a wait the stream lacks or has out of order. */
static bool emu_words(void) { return true; }

static dart_ret_t emu_word_write(const char *func, uint32_t *word,
                                 uint32_t value, void *stream)
{
  emu_stream_sync(func, stream);
  atomic_store_explicit((_Atomic uint32_t *)(void *)reach(word), value,
                        memory_order_release);
  return DART_OK;
}

static dart_ret_t emu_word_wait(const char *func, uint32_t *word,
                                uint32_t value, void *stream)
{
  emu_stream_sync(func, stream);
  _Atomic uint32_t *at = (_Atomic uint32_t *)(void *)reach(word);
  for (unsigned spins = 0;
       (int32_t)(atomic_load_explicit(at, memory_order_acquire) - value) < 0;)
    dart__progress__wait_turn(&spins);
  return DART_OK;
}

/* The device's atomics are the CPU's on the host mapping, after the
 * stream's earlier copies, as a kernel on that stream would run. */
static dart_ret_t emu_atomic(const dart__atomic_t *a, char *p, void *stream)
{
  emu_stream_sync(a->func, stream);
  dart__transport__cpu_atomic(a, reach(p));
  return DART_OK;
}

static dart_ret_t emu_host_alloc(const char *func, size_t bytes, void **ptr)
{
  *ptr = malloc(bytes ? bytes : 1);
  if (*ptr == NULL) {
    DART_LOG_ERROR_IN(func, "out of memory for %zu bytes of staging", bytes);
    return DART_ERR_NOMEM;
  }
  return DART_OK;
}

/* The registry, once empty (what the program did not free goes with the
 * process). */
static void emu_fini(void)
{
  pthread_mutex_lock(&emu.lock);
  if (emu.n == 0) {
    free(emu.regions);
    emu.regions = NULL;
    emu.cap = 0;
  }
  pthread_mutex_unlock(&emu.lock);
}

const dart__gpu_ops_t dart__gpu_emu = {
    .name = "emulated",
    .count = emu_count,
    .set_device = emu_set_device,
    .alloc = emu_alloc,
    .free = emu_free,
    .is_device = emu_is_device,
    .ucx_addr = emu_ucx_addr,
    .export_mem = emu_export,
    .open = emu_open,
    .close = emu_close,
    .copy = emu_copy,
    .stream_create = emu_stream_create,
    .stream_destroy = emu_stream_destroy,
    .stream_sync = emu_stream_sync,
    .event_record = emu_event_record,
    .event_sync = emu_event_sync,
    .event_query = emu_event_query,
    .event_rerecord = emu_event_rerecord,
    .event_destroy = free,
    .atomic = emu_atomic,
    .pattern_upload = emu_pattern_upload,
    .pattern_free = emu_pattern_free,
    .pattern = emu_pattern,
    .words = emu_words,
    .word_write = emu_word_write,
    .word_wait = emu_word_wait,
    .host_alloc = emu_host_alloc,
    .host_free = free,
    .fini = emu_fini,
};
