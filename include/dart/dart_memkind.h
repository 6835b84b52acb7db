/**
 * \file dart_memkind.h
 * libdart extension: global memory in GPU memory (CUDA devices).
 *
 * A collective allocation or registration has a memory kind. Device
 * memory is reached by the usual one-sided functions (dart_put, dart_get
 * and their blocking, non-blocking and handle forms, contiguous or with
 * derived types, and the atomics):
 * - the caller's own part and node peers' parts through CUDA IPC: each
 *   part's IPC handle is exchanged at allocation, opened on first use,
 *   kept in a cache keyed by the allocation (not its address) and closed
 *   at free; copies run on an internal stream per target unit (blocking
 *   forms synchronise it, dart_flush of the unit too, and a handle's wait
 *   waits for an event recorded behind its own copies);
 * - units on other nodes through UCX, when the remote transport is UCX
 *   and it reports CUDA memory support on every unit (a CUDA-aware UCX;
 *   DART_GPU_UCX=0 turns this off): each part is registered with UCX, which
 *   moves device memory directly (path DART_PATH_UCX);
 * - otherwise through host staging: the data crosses in pinned host
 *   buffers, chunk by chunk, over MPI messages that the target serves
 *   whenever it is inside libdart (any blocking call, a barrier, a flush)
 *   or from the progress thread (DART_PROGRESS_THREAD=1). DART_INFO=1 says
 *   which of the two a run uses.
 *
 * The local buffer of a put or get may be host or device memory, for any
 * kind of segment. While a device is in use (DART_GPU=1, the default,
 * with a CUDA device present) every put and get asks the CUDA runtime
 * what its local buffer is: about a few hundred nanoseconds.
 *
 * The copies run on libdart's own streams, which do not wait for work on
 * the caller's streams: synchronise a kernel that writes a buffer before
 * putting from it (as CUDA-aware MPI requires), or use dart_put_stream.
 *
 * Atomics on device segments run as a kernel on the target's memory
 * through its IPC mapping (system-scope atomics), for the caller's own part
 * and node peers; their operands and results are host memory. Node peers
 * on different devices need peer access between them (NVLink or PCIe
 * peer-to-peer, with native peer atomics for the atomics). When UCX moves
 * a segment's device memory across nodes, every unit's atomics on it go
 * through UCX, the owner's and node peers' included (the device's atomics
 * and the network's are not atomic with each other); the transport must
 * support atomics on device memory (GPUDirect RDMA), else they fail with
 * UCX's error. Staged across nodes, atomics return DART_ERR_INVAL with a
 * log line saying so.
 *
 * Each unit uses device (node-local rank modulo visible devices), or
 * DART_GPU_DEVICE. DART_GPU_EMULATE=n stands in n emulated devices (host
 * memory reachable only through libdart's copies) for testing on machines
 * without a GPU.
 *
 * Thread safety: as the one-sided functions of dart_communication.h.
 */
#ifndef DART__MEMKIND_H_
#define DART__MEMKIND_H_

#include <dart/dart_globmem.h>
#include <dart/dart_types.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Where memory lives. */
typedef enum {
  DART_MEMKIND_HOST = 0, /**< host memory */
  DART_MEMKIND_CUDA = 1  /**< memory of this unit's CUDA device */
} dart_memkind_t;

/** A CUDA stream (the same type as cudaStream_t; no CUDA header needed). */
typedef struct CUstream_st *dart_stream_t;

/**
 * This unit's device, or -1 with DART_OK where there is none (no GPU, no
 * driver, DART_GPU=0, or built without CUDA).
 */
dart_ret_t dart_memkind_device(int *device) DART_NOTHROW;

/**
 * Collective on \c team: like dart_team_memalloc_aligned, in memory of
 * \c kind. DART_MEMKIND_CUDA without a device on some unit is
 * DART_ERR_INVAL on every unit. Freed with dart_team_memfree.
 */
dart_ret_t dart_team_memalloc_kind(dart_team_t team, size_t nelem,
                                   dart_datatype_t dtype, dart_memkind_t kind,
                                   dart_gptr_t *gptr) DART_NOTHROW;

/**
 * Collective on \c team: like dart_team_memregister, for memory of
 * \c kind at \c addr (for DART_MEMKIND_CUDA, memory of this unit's device
 * from cudaMalloc, anywhere inside an allocation). Released with
 * dart_team_memderegister; the memory stays the caller's.
 */
dart_ret_t dart_team_memregister_kind(dart_team_t team, size_t nlelem,
                                      dart_datatype_t dtype, void *addr,
                                      dart_memkind_t kind,
                                      dart_gptr_t *gptr) DART_NOTHROW;

/** The memory kind of the allocation \c gptr points into. */
dart_ret_t dart_gptr_memkind(dart_gptr_t gptr,
                             dart_memkind_t *kind) DART_NOTHROW;

/**
 * Local memory of \c kind for buffers of puts and gets (host memory from
 * malloc, device memory from cudaMalloc or its emulation). *ptr is NULL
 * for 0 bytes.
 */
dart_ret_t dart_memkind_alloc(size_t bytes, dart_memkind_t kind,
                              void **ptr) DART_NOTHROW;
/** Frees what dart_memkind_alloc returned (NULL is ignored). */
dart_ret_t dart_memkind_free(void *ptr, dart_memkind_t kind) DART_NOTHROW;

/**
 * Copies \c bytes between local memory of any kinds (host or this unit's
 * device), complete on return: cudaMemcpy with cudaMemcpyDefault, and the
 * same under emulation.
 */
dart_ret_t dart_memkind_copy(void *dst, const void *src,
                             size_t bytes) DART_NOTHROW;

/**
 * Stream-ordered put: enqueues the copy of \c nelem elements from \c src
 * (host or device) to \c gptr behind the work already on \c stream and
 * returns without waiting for the device. The target must be memory the
 * caller maps: its own part or a node peer's part (device memory through
 * IPC, host memory through a shared window); anything else is
 * DART_ERR_INVAL. The data is in place once \c stream reaches the copy:
 * synchronise the stream (or an event behind it) before telling the
 * target (dart_barrier). NULL is CUDA's default stream.
 */
dart_ret_t dart_put_stream(dart_gptr_t gptr, const void *src, size_t nelem,
                           dart_datatype_t src_type, dart_datatype_t dst_type,
                           dart_stream_t stream) DART_NOTHROW;

/** Stream-ordered get, as dart_put_stream. */
dart_ret_t dart_get_stream(void *dest, dart_gptr_t gptr, size_t nelem,
                           dart_datatype_t src_type, dart_datatype_t dst_type,
                           dart_stream_t stream) DART_NOTHROW;

#ifdef __cplusplus
}
#endif

#endif /* DART__MEMKIND_H_ */
