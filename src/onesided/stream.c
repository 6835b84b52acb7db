/*
 * Transfers on the caller's device streams (dart_memkind.h): to the
 * caller's own and node peers' memory, which this process maps.
 */
#include <dart/dart_memkind.h>

#include "gpu/gpu.h"
#include "onesided/onesided.h"

static dart_ret_t stream_xfer(const char *func, dart_gptr_t gptr, void *local,
                              size_t nelem, dart_datatype_t local_type,
                              dart_datatype_t remote_type, bool is_put,
                              dart_stream_t stream)
{
  dart__target_t target;
  dart__xfer_t x;
  dart_ret_t ret = dart__onesided__prepare(func, gptr, local, nelem,
                                           local_type, remote_type, is_put,
                                           &target, &x);
  if (ret != DART_OK) return ret;
  if (dart__gpu.ops == NULL) {
    DART_LOG_ERROR_IN(func, "this unit has no CUDA device for streams");
    return DART_ERR_INVAL;
  }
  if (dart__gpu.ops == &dart__gpu_emu && stream != NULL) {
    DART_LOG_ERROR_IN(func, "emulated devices have no streams: pass NULL");
    return DART_ERR_INVAL;
  }
  const dart__route_t *r = target.route;
  char *remote = r->base;
  if (!dart__path_props[r->path].mapped) {
    DART_LOG_ERROR_IN(func, "unit %d of team %d is reached by path %s: "
                            "streams reach the caller's own and node "
                            "peers' memory only",
                      target.unit, gptr.teamid,
                      dart_path_name((dart_path_t)r->path));
    return DART_ERR_INVAL;
  }
  if (nelem == 0) return DART_OK;
  if (r->path == DART__PATH_IPC &&
      (ret = dart__globmem__device_part(func, target.seg, target.unit,
                                        &remote)) != DART_OK)
    return ret;
  dart__transport__count_op(r->path);
  return dart__gpu__copy_runs(&x, is_put, remote + target.offset, stream);
}

dart_ret_t dart_put_stream(dart_gptr_t gptr, const void *src, size_t nelem,
                           dart_datatype_t src_type, dart_datatype_t dst_type,
                           dart_stream_t stream)
{
  return stream_xfer(__func__, gptr, (void *)src, nelem, src_type, dst_type,
                     true, stream);
}

dart_ret_t dart_get_stream(void *dest, dart_gptr_t gptr, size_t nelem,
                           dart_datatype_t src_type, dart_datatype_t dst_type,
                           dart_stream_t stream)
{
  return stream_xfer(__func__, gptr, dest, nelem, dst_type, src_type, false,
                     stream);
}
