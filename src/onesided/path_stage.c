/*
 * The staging path: device parts on other nodes, where neither MPI nor
 * the UCX here reaches device memory. The target takes part: an origin
 * sends a request per contiguous run and the data in chunks of 1 MiB
 * through host memory (its pinned buffer when the local side is device
 * memory); the target, whenever it waits inside libdart (or in the
 * progress thread), takes the request up, receives the chunks into pinned
 * memory and copies each to its device as it arrives, then answers (a get
 * runs the other way, answer first, each chunk sent while the next one
 * leaves the device). Every transfer is complete when it returns: a
 * put once the target answers, so flushes have nothing to wait for.
 *
 * Serving never waits for the origin: requests are kept with their
 * messages in flight and moved on at each poll, so two units that stage
 * to each other at once both go on. Messages (on a communicator of their
 * own) carry tags that tell a put's data from a get's; an origin sends one
 * transfer at a time (a lock), so chunks of one source and tag match in
 * order.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/runtime.h"
#include "gpu/gpu.h"
#include "onesided/onesided.h"
#include "progress/progress.h"

#define CHUNK ((size_t)1 << 20)

enum { TAG_REQUEST = 1, TAG_PUT_DATA = 2, TAG_GET_DATA = 3, TAG_ACK = 4 };
enum { OP_PUT = 1, OP_GET = 2 };

typedef struct {
  int32_t op;
  int32_t team;
  int32_t segid;
  int32_t unused;
  uint64_t offset;
  uint64_t bytes;
} request_t;

/* A request this unit serves: its chunks in flight, then the answer. */
typedef struct pending {
  request_t r;
  int src;
  int status;  /* the answer: the request is valid (get: sent first) */
  int trailer; /* get: every chunk left the device (sent last) */
  bool answered; /* put: data in the device and the ack sent */
  int copied;    /* put: chunks handed to the device */
  char *dev;     /* where in our part, or NULL (status says why) */
  char *host;    /* the run's bytes (pinned) */
  size_t host_size;
  int nreqs;
  /* a put's receives or a get's sends, then the answer and the trailer */
  MPI_Request *reqs;
  struct pending *next;
} pending_t;

static struct {
  MPI_Comm comm; /* while dart__gpu.staging */
  pthread_mutex_t serve_lock; /* the pending list */
  MPI_Request incoming;
  request_t request;
  pending_t *pending;
  char *spare; /* a pinned buffer kept for the next request */
  size_t spare_size;
  void *stream;                /* the target's copies */
  pthread_mutex_t origin_lock; /* one transfer sent at a time */
  char *buf;                   /* the origin's pinned buffer */
  size_t buf_size;
  void *origin_stream;
} stage = {.serve_lock = PTHREAD_MUTEX_INITIALIZER,
           .origin_lock = PTHREAD_MUTEX_INITIALIZER};

static int chunks(uint64_t bytes) { return (int)((bytes + CHUNK - 1) / CHUNK); }

/* The bytes of chunk k of a run of bytes. */
static size_t chunk_len(uint64_t bytes, int k)
{
  uint64_t at = (uint64_t)k * CHUNK;
  return bytes - at < CHUNK ? (size_t)(bytes - at) : CHUNK;
}

/* Posts one message per chunk of host (receives or sends) into reqs. */
static int post_chunks(bool send, char *host, uint64_t bytes, int peer,
                       int tag, MPI_Request *reqs)
{
  for (int k = 0; k < chunks(bytes); k++) {
    uint64_t at = (uint64_t)k * CHUNK;
    int n = (int)chunk_len(bytes, k);
    int ret = send ? MPI_Isend(host + at, n, MPI_BYTE, peer, tag, stage.comm,
                               &reqs[k])
                   : MPI_Irecv(host + at, n, MPI_BYTE, peer, tag, stage.comm,
                               &reqs[k]);
    if (ret != MPI_SUCCESS) return -1;
  }
  return 0;
}

static void pending_free(pending_t *p);

/* Whether all n requests are complete. (One by one: GCC takes MPICH's
 * MPI_STATUSES_IGNORE for an empty array of statuses.) */
static bool test_all(int n, MPI_Request reqs[])
{
  bool all = true;
  for (int k = 0; k < n; k++) {
    int done = 0;
    MPI_Test(&reqs[k], &done, MPI_STATUS_IGNORE);
    all = all && done;
  }
  return all;
}

/* Our device parts' staged transfers wait for us to copy them: waiting
 * inside MPI does not, while such parts live. */
static unsigned stage_poll(void);
static bool stage_outside_mpi(void)
{
  return atomic_load_explicit(&dart__gpu.staged_segments,
                              memory_order_relaxed) > 0;
}
static const dart__progress_source_t stage_progress = {
    .name = "stage", .poll = stage_poll, .outside_mpi = stage_outside_mpi};

static dart_ret_t stage_init(void)
{
  if (!dart__gpu.any_device || dart__rt.num_nodes < 2 ||
      dart__gpu.ucx_direct)
    return DART_OK;
  DART__MPI_CHECK(MPI_Comm_dup(dart__rt.comm, &stage.comm));
  if (MPI_Irecv(&stage.request, sizeof stage.request, MPI_BYTE,
                MPI_ANY_SOURCE, TAG_REQUEST, stage.comm, &stage.incoming) !=
      MPI_SUCCESS) {
    DART_LOG_ERROR_IN("dart_init", "MPI_Irecv for staged transfers failed");
    goto fail_comm;
  }
  if (dart__progress__add("dart_init", &stage_progress) != DART_OK)
    goto fail_recv;
  dart__gpu.staging = true;
  return DART_OK;

fail_recv:
  MPI_Cancel(&stage.incoming);
  MPI_Wait(&stage.incoming, MPI_STATUS_IGNORE);
fail_comm:
  MPI_Comm_free(&stage.comm);
  return DART_ERR_OTHER;
}

static void stage_fini(void)
{
  if (!dart__gpu.staging) return;
  /* every origin has its answers (dart_exit comes after a barrier): only
   * our last sends may still be completing */
  while (stage.pending) {
    pending_t *p = stage.pending;
    stage.pending = p->next;
    for (int k = 0; k < p->nreqs + 2; k++)
      MPI_Wait(&p->reqs[k], MPI_STATUS_IGNORE);
    pending_free(p);
  }
  dart__progress__remove(&stage_progress);
  MPI_Cancel(&stage.incoming);
  MPI_Wait(&stage.incoming, MPI_STATUS_IGNORE);
  MPI_Comm_free(&stage.comm);
  if (stage.buf) dart__gpu.ops->host_free(stage.buf);
  if (stage.spare) dart__gpu.ops->host_free(stage.spare);
  stage.spare = NULL;
  stage.spare_size = 0;
  if (stage.stream) dart__gpu.ops->stream_destroy(stage.stream);
  if (stage.origin_stream) dart__gpu.ops->stream_destroy(stage.origin_stream);
  stage.buf = NULL;
  stage.buf_size = 0;
  stage.stream = stage.origin_stream = NULL;
  dart__gpu.staging = false;
}

/* The device memory a request names in our own part, or NULL. */
static char *request_target(const request_t *r)
{
  dart__team_t *team = dart__team__get((dart_team_t)r->team);
  dart__segment_t *seg =
      team ? dart__team__segtab_get(&team->segs, (int16_t)r->segid) : NULL;
  if (seg == NULL || seg->memkind != DART_MEMKIND_CUDA ||
      r->offset > seg->mysize || r->bytes > seg->mysize - r->offset) {
    DART_LOG_ERROR("a staged transfer names segment %d of team %d, offset "
                   "%llu + %llu bytes, which this unit does not have",
                   r->segid, r->team, (unsigned long long)r->offset,
                   (unsigned long long)r->bytes);
    return NULL;
  }
  return seg->mybase + r->offset;
}

/* What the device backend's failures on the target's side are logged as:
 * no call of this unit's asked for them. */
#define SERVING "a staged transfer for another unit"

static dart_ret_t copy_on(const char *func, void *dst, const void *src,
                          size_t bytes, void **stream)
{
  dart_ret_t ret = DART_OK;
  if (*stream == NULL) ret = dart__gpu.ops->stream_create(func, stream);
  return ret == DART_OK ? dart__gpu.ops->copy(func, dst, src, bytes, *stream)
                        : ret;
}

static dart_ret_t copy_sync(const char *func, void *dst, const void *src,
                            size_t bytes, void **stream)
{
  dart_ret_t ret = copy_on(func, dst, src, bytes, stream);
  return ret == DART_OK ? dart__gpu.ops->stream_sync(func, *stream) : ret;
}

/* Pinned memory for a request: the spare when it is large enough. */
static char *host_take(size_t bytes, size_t *size)
{
  char *h = NULL;
  if (stage.spare && stage.spare_size >= bytes) {
    h = stage.spare;
    *size = stage.spare_size;
    stage.spare = NULL;
  } else if (dart__gpu.ops->host_alloc(SERVING, bytes, (void **)&h) ==
             DART_OK) {
    *size = bytes;
  }
  return h;
}

/* Keeps the larger of a finished request's buffer and the spare. */
static void host_give(char *h, size_t size)
{
  if (stage.spare && stage.spare_size >= size) {
    dart__gpu.ops->host_free(h);
    return;
  }
  if (stage.spare) dart__gpu.ops->host_free(stage.spare);
  stage.spare = h;
  stage.spare_size = size;
}

static void pending_free(pending_t *p)
{
  if (p->host) host_give(p->host, p->host_size);
  free(p->reqs);
  free(p);
}

/* Takes up a new request: posts its receives (put), or copies its chunks
 * out of the device one by one, each sent while the next one copies (get,
 * after the answer); waits for nothing the origin has to do. */
static pending_t *start(const request_t *r, int src)
{
  pending_t *p = calloc(1, sizeof *p);
  int n = chunks(r->bytes);
  if (p == NULL || (p->reqs = calloc((size_t)n + 2, sizeof *p->reqs)) == NULL ||
      (p->host = host_take(r->bytes ? r->bytes : 1, &p->host_size)) == NULL) {
    DART_LOG_ERROR("out of memory for a staged transfer of %llu bytes",
                   (unsigned long long)r->bytes);
    if (p) free(p->reqs);
    free(p);
    return NULL; /* the origin waits on: MPI-level failure territory */
  }
  p->r = *r;
  p->src = src;
  p->nreqs = n;
  p->dev = request_target(r);
  p->status = p->dev ? DART_OK : DART_ERR_INVAL;
  for (int k = 0; k < n + 2; k++) p->reqs[k] = MPI_REQUEST_NULL;
  if (r->op == OP_PUT) {
    if (post_chunks(false, p->host, r->bytes, src, TAG_PUT_DATA, p->reqs))
      p->status = DART_ERR_OTHER;
    return p;
  }
  MPI_Isend(&p->status, 1, MPI_INT, src, TAG_ACK, stage.comm, &p->reqs[n]);
  p->answered = true;
  if (p->status != DART_OK) return p;
  p->trailer = DART_OK;
  for (int k = 0; k < n; k++) {
    uint64_t at = (uint64_t)k * CHUNK;
    size_t bytes = chunk_len(r->bytes, k);
    if (p->trailer == DART_OK &&
        copy_sync(SERVING, p->host + at, p->dev + at, bytes,
                  &stage.stream) != DART_OK)
      p->trailer = DART_ERR_OTHER; /* logged; the chunks still go */
    MPI_Isend(p->host + at, (int)bytes, MPI_BYTE, src, TAG_GET_DATA,
              stage.comm, &p->reqs[k]);
  }
  MPI_Isend(&p->trailer, 1, MPI_INT, src, TAG_ACK, stage.comm,
            &p->reqs[n + 1]);
  return p;
}

/* Moves a request on; true once it is finished. A put's chunks go to the
 * device as they arrive, in order, while later ones are still coming. */
static bool advance(pending_t *p)
{
  int done = 0;
  if (!p->answered) {
    while (p->copied < p->nreqs &&
           MPI_Test(&p->reqs[p->copied], &done, MPI_STATUS_IGNORE) ==
               MPI_SUCCESS &&
           done) {
      uint64_t at = (uint64_t)p->copied * CHUNK;
      size_t bytes = chunk_len(p->r.bytes, p->copied);
      if (p->status == DART_OK &&
          copy_on(SERVING, p->dev + at, p->host + at, bytes, &stage.stream) !=
              DART_OK)
        p->status = DART_ERR_OTHER;
      p->copied++;
    }
    if (p->copied < p->nreqs) return false;
    if (p->status == DART_OK &&
        dart__gpu.ops->stream_sync(SERVING, stage.stream) != DART_OK)
      p->status = DART_ERR_OTHER;
    MPI_Isend(&p->status, 1, MPI_INT, p->src, TAG_ACK, stage.comm,
              &p->reqs[p->nreqs]);
    p->answered = true;
  }
  return test_all(p->nreqs + 2, p->reqs);
}

/* Serves the staged transfers other units aim at our device parts: 1 when
 * it did something. */
static unsigned stage_poll(void)
{
  if (pthread_mutex_trylock(&stage.serve_lock) != 0) return 0;
  bool served = false;
  int done = 0;
  MPI_Status st;
  if (MPI_Test(&stage.incoming, &done, &st) == MPI_SUCCESS && done) {
    request_t r = stage.request;
    MPI_Irecv(&stage.request, sizeof stage.request, MPI_BYTE, MPI_ANY_SOURCE,
              TAG_REQUEST, stage.comm, &stage.incoming);
    pending_t *p = start(&r, st.MPI_SOURCE);
    if (p) {
      p->next = stage.pending;
      stage.pending = p;
    }
    served = true;
  }
  for (pending_t **at = &stage.pending; *at;) {
    pending_t *p = *at;
    if (advance(p)) {
      *at = p->next;
      pending_free(p);
      served = true;
    } else {
      at = &p->next;
    }
  }
  pthread_mutex_unlock(&stage.serve_lock);
  return served;
}

/* ---- the origin ---- */

typedef struct {
  const dart__target_t *t;
  bool is_put;
  bool local_device;
  char *local;
  size_t es;
  int dest; /* global unit */
  dart_ret_t ret;
  const char *func;
} origin_t;

/* The origin's pinned buffer of at least bytes (origin lock held). */
static dart_ret_t origin_buffer(const char *func, size_t bytes)
{
  if (bytes <= stage.buf_size) return DART_OK;
  if (stage.buf) dart__gpu.ops->host_free(stage.buf);
  stage.buf = NULL;
  stage.buf_size = 0;
  dart_ret_t ret = dart__gpu.ops->host_alloc(func, bytes, (void **)&stage.buf);
  if (ret == DART_OK) stage.buf_size = bytes;
  return ret;
}

/* One contiguous run: the request, the chunks, the answer; others'
 * requests are served while it waits. From device memory, each chunk is
 * copied out while the previous one is on its way; into device memory,
 * each is copied in as soon as it arrives. Once the request is out, every
 * message of the exchange completes, failures or not: nothing stays
 * posted to match the next transfer's messages. */
static dart_ret_t run(origin_t *o, char *local, uint64_t offset, size_t bytes)
{
  const char *func = o->func;
  request_t r = {o->is_put ? OP_PUT : OP_GET, o->t->team->id, o->t->seg->id,
                 0, offset, bytes};
  int n = chunks(bytes), status = DART_ERR_OTHER, trailer = DART_ERR_OTHER;
  char *host = local;
  dart_ret_t ret;
  if (o->local_device) {
    if ((ret = origin_buffer(func, bytes)) != DART_OK) return ret;
    host = stage.buf;
  }
  MPI_Request head[2], *reqs = malloc((size_t)n * sizeof *reqs);
  if (reqs == NULL) {
    DART_LOG_ERROR_IN(func, "out of memory for %d requests", n);
    return DART_ERR_NOMEM;
  }
  for (int k = 0; k < n; k++) reqs[k] = MPI_REQUEST_NULL;
  if (MPI_Irecv(&status, 1, MPI_INT, o->dest, TAG_ACK, stage.comm,
                &head[0]) != MPI_SUCCESS) {
    free(reqs);
    return DART_ERR_OTHER;
  }
  if (MPI_Isend(&r, sizeof r, MPI_BYTE, o->dest, TAG_REQUEST, stage.comm,
                &head[1]) != MPI_SUCCESS) {
    MPI_Cancel(&head[0]);
    MPI_Wait(&head[0], MPI_STATUS_IGNORE);
    free(reqs);
    return DART_ERR_OTHER;
  }
  dart_ret_t local_ret = DART_OK; /* the first failure on our side */
  if (o->is_put) {
    for (int k = 0; k < n; k++) {
      size_t at = (size_t)k * CHUNK;
      size_t len = chunk_len(bytes, k);
      if (o->local_device && local_ret == DART_OK)
        local_ret = copy_sync(func, host + at, local + at, len,
                              &stage.origin_stream);
      if (MPI_Isend(host + at, (int)len, MPI_BYTE, o->dest, TAG_PUT_DATA,
                    stage.comm, &reqs[k]) != MPI_SUCCESS)
        local_ret = DART_ERR_OTHER;
    }
    if ((ret = dart__progress__wait(func, n, reqs)) != DART_OK ||
        (ret = dart__progress__wait(func, 2, head)) != DART_OK)
      local_ret = ret;
    ret = local_ret != DART_OK ? local_ret : (dart_ret_t)status;
  } else {
    if ((ret = dart__progress__wait(func, 2, head)) != DART_OK ||
        (ret = (dart_ret_t)status) != DART_OK) {
      free(reqs);
      return ret; /* refused: no chunks follow */
    }
    MPI_Request tail;
    if (post_chunks(false, host, bytes, o->dest, TAG_GET_DATA, reqs) != 0 ||
        MPI_Irecv(&trailer, 1, MPI_INT, o->dest, TAG_ACK, stage.comm,
                  &tail) != MPI_SUCCESS) {
      local_ret = DART_ERR_OTHER;
      tail = MPI_REQUEST_NULL;
    }
    for (int k = 0; k < n; k++) {
      size_t at = (size_t)k * CHUNK;
      size_t len = chunk_len(bytes, k);
      if ((ret = dart__progress__wait(func, 1, &reqs[k])) != DART_OK)
        local_ret = ret;
      if (o->local_device && local_ret == DART_OK)
        local_ret = copy_on(func, local + at, host + at, len,
                            &stage.origin_stream);
    }
    if (o->local_device && local_ret == DART_OK)
      local_ret = dart__gpu.ops->stream_sync(func, stage.origin_stream);
    if ((ret = dart__progress__wait(func, 1, &tail)) != DART_OK)
      local_ret = ret;
    ret = local_ret != DART_OK ? local_ret : (dart_ret_t)trailer;
  }
  free(reqs);
  return ret;
}

static int stage_run(void *ctx, size_t dst_at, size_t src_at, size_t n)
{
  origin_t *o = ctx;
  size_t local_at = o->is_put ? src_at : dst_at;
  size_t remote_at = o->is_put ? dst_at : src_at;
  char *local = o->local + local_at * o->es;
  uint64_t offset = o->t->offset + remote_at * o->es;
  o->ret = run(o, local, offset, n * o->es);
  return o->ret != DART_OK;
}

static dart_ret_t stage_xfer(const dart__xfer_t *x, bool is_put,
                             dart__mode_t mode, dart_handle_t *handle)
{
  const dart__target_t *t = x->target;
  origin_t o = {t,
                is_put,
                dart__gpu.ops->is_device(x->local),
                x->local,
                x->local_t->elem_size,
                t->team->members[t->unit],
                DART_OK,
                x->func};
  pthread_mutex_lock(&stage.origin_lock);
  if (is_put)
    dart__types__dtype_runs(x->remote_t, x->local_t, x->nelem, stage_run,
                            &o);
  else
    dart__types__dtype_runs(x->local_t, x->remote_t, x->nelem, stage_run,
                            &o);
  pthread_mutex_unlock(&stage.origin_lock);
  if (o.ret != DART_OK) {
    DART_LOG_ERROR_IN(x->func, "the staged transfer with unit %d failed",
                      o.dest);
    return o.ret;
  }
  if (mode == DART__MODE_HANDLE) *handle = DART_HANDLE_NULL;
  return DART_OK;
}

static dart_ret_t stage_put(const dart__xfer_t *x, dart__mode_t mode,
                            dart_handle_t *handle)
{
  return stage_xfer(x, true, mode, handle);
}

static dart_ret_t stage_get(const dart__xfer_t *x, dart__mode_t mode,
                            dart_handle_t *handle)
{
  return stage_xfer(x, false, mode, handle);
}

static dart_ret_t stage_flush(const char *func, dart__team_t *team,
                              int unit)
{
  (void)func;
  (void)team;
  (void)unit;
  return DART_OK;
}

/* device memory on another node, where the remote transport does not
 * move it itself */
static dart_ret_t stage_reach(const char *func, const dart__reach_t *q,
                              dart__route_t *r, bool *reached)
{
  (void)func;
  (void)r;
  *reached = q->device && q->team->node_rank[q->unit] < 0;
  return DART_OK;
}

/* complete on return: no flush_all */
const dart__path_ops_t dart__path_stage = {.init = stage_init,
                                           .fini = stage_fini,
                                           .reach = stage_reach,
                                           .put = stage_put,
                                           .get = stage_get,
                                           .flush = stage_flush,
                                           .flush_local = stage_flush};
