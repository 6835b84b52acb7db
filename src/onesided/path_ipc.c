/*
 * The IPC path: device parts this process maps, its own and node peers'
 * (through their IPC handles). Copies run on the stream of the target
 * unit: a blocking transfer synchronises it, a non-blocking one completes
 * at that unit's flush, which synchronises the stream (streams of other
 * units go on), and a handle's at its wait, through an event recorded
 * behind its copies (later copies to the unit go on).
 */
#include "base/runtime.h"
#include "gpu/gpu.h"
#include "onesided/onesided.h"

static dart_ret_t ipc_xfer(const dart__xfer_t *x, bool is_put,
                           dart__mode_t mode, dart_handle_t *handle)
{
  const dart__target_t *t = x->target;
  char *part;
  void *stream;
  dart_ret_t ret = dart__globmem__device_part(x->func, t->seg, t->unit, &part);
  if (ret != DART_OK) return ret;
  if ((ret = dart__gpu__stream(x->func, t->team->members[t->unit],
                               &stream)) != DART_OK ||
      (ret = dart__gpu__copy_runs(x, is_put, part + t->offset, stream)) !=
          DART_OK)
    return ret;
  if (mode == DART__MODE_BLOCKING)
    return dart__gpu.ops->stream_sync(x->func, stream);
  if (mode == DART__MODE_HANDLE) {
    dart_handle_t h =
        dart__onesided__handle_new(t->team, t->unit, DART__PATH_IPC, is_put);
    if (h == NULL) {
      DART_LOG_ERROR_IN(x->func, "out of memory for a handle");
      ret = DART_ERR_NOMEM;
    } else if ((ret = dart__gpu.ops->event_record(x->func, stream,
                                                  &h->event)) != DART_OK) {
      dart__onesided__handle_release(h);
    }
    if (ret != DART_OK) {
      /* nothing half-done: the copies complete before the error returns */
      dart__gpu.ops->stream_sync(x->func, stream);
      return ret;
    }
    *handle = h;
  }
  return DART_OK;
}

static dart_ret_t ipc_put(const dart__xfer_t *x, dart__mode_t mode,
                          dart_handle_t *handle)
{
  return ipc_xfer(x, true, mode, handle);
}

static dart_ret_t ipc_get(const dart__xfer_t *x, dart__mode_t mode,
                          dart_handle_t *handle)
{
  return ipc_xfer(x, false, mode, handle);
}

static dart_ret_t ipc_flush(const char *func, dart__team_t *team,
                            int unit)
{
  void *stream;
  dart_ret_t ret = dart__gpu__stream(func, team->members[unit], &stream);
  return ret == DART_OK ? dart__gpu.ops->stream_sync(func, stream) : ret;
}

/* Behind the unit's earlier copies, as a kernel on its stream. */
static dart_ret_t ipc_atomic(const dart__atomic_t *a)
{
  const dart__target_t *t = a->target;
  char *part;
  void *stream;
  dart_ret_t ret = dart__globmem__device_part(a->func, t->seg, t->unit, &part);
  if (ret == DART_OK)
    ret = dart__gpu__stream(a->func, t->team->members[t->unit], &stream);
  return ret == DART_OK ? dart__gpu.ops->atomic(a, part + t->offset, stream)
                        : ret;
}

/* device memory on the node, the caller's own included: node peers'
 * parts are mapped on first use (dart__globmem__device_part) */
static dart_ret_t ipc_reach(const char *func, const dart__reach_t *q,
                            dart__route_t *r, bool *reached)
{
  (void)func;
  (void)r;
  *reached = q->device && q->team->node_rank[q->unit] >= 0;
  return DART_OK;
}

/* every device stream this unit copies on (one per target unit) */
static dart_ret_t ipc_flush_all(const char *func, dart__team_t *team)
{
  (void)team;
  return dart__gpu__flush_all(func);
}

const dart__path_ops_t dart__path_ipc = {.reach = ipc_reach,
                                         .put = ipc_put,
                                         .get = ipc_get,
                                         .flush = ipc_flush,
                                         .flush_local = ipc_flush,
                                         .flush_all = ipc_flush_all,
                                         .atomic = ipc_atomic};
