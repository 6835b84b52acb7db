/*
 * The device backend of GPU memory (dart_memkind.h): the CUDA and the
 * emulated device, streams, events and copies. Device segments are in
 * globmem/segment_gpu.c, the ipc and stage paths in onesided/.
 */
#ifndef DART__GPU__GPU_H_
#define DART__GPU__GPU_H_

#include <dart/dart_memkind.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gpu/kernel.h"
#include "transport/transport.h"
#include "types/pattern.h"

/* What a node peer needs to map a part of a device allocation. */
#define DART__GPU_HANDLE_BYTES 64 /* a CUDA IPC memory handle's */
typedef struct dart__gpu_export {
  unsigned char handle[DART__GPU_HANDLE_BYTES];
  uint64_t alloc_id; /* the allocation, unique in its owner's lifetime */
  uint64_t offset;   /* of the part from the allocation's start */
  int64_t owner;     /* global unit */
} dart__gpu_export_t;

/* The operations of types/pattern.h, run on this unit's device memory. */
typedef enum {
  DART__GPU_PATTERN_PACK = 0,     /* b[j] = a[i], b packed */
  DART__GPU_PATTERN_APPLY,        /* a[i] = a[i] op b[j] */
  DART__GPU_PATTERN_APPLY_TO_B,   /* b[j] = b[j] op a[i] */
  DART__GPU_PATTERN_FETCH         /* c[j] = a[i], then a[i] = a[i] op b[j] */
} dart__gpu_pattern_kind_t;

typedef struct {
  dart__gpu_pattern_kind_t kind;
  const dart__pattern_t *pattern;
  const void *device_pattern; /* pattern_upload's copy */
  char *a, *b, *c;            /* device memory of this unit (c: FETCH) */
  int type;                   /* dart_datatype_t, basic */
  int op;                     /* dart_operation_t: predefined, or REPLACE;
                                 LONG_DOUBLE takes REPLACE only */
  size_t es;
  dart__op_local_t local;     /* the same operation on the host */
} dart__gpu_pattern_op_t;

/* How a device runs a pattern op's pairs (dart__gpu_schedule_t,
 * kernel.h), by the sides that name an element twice. */
static inline dart__gpu_schedule_t
dart__gpu__schedule(dart__gpu_pattern_kind_t kind, bool a_repeats,
                    bool b_repeats)
{
  switch (kind) {
  case DART__GPU_PATTERN_APPLY:
    return a_repeats ? DART__GPU_PAIRS_BY_A : DART__GPU_PAIRS_APART;
  case DART__GPU_PATTERN_APPLY_TO_B:
    return b_repeats ? DART__GPU_PAIRS_BY_B : DART__GPU_PAIRS_APART;
  case DART__GPU_PATTERN_FETCH:
    return b_repeats   ? DART__GPU_PAIRS_IN_ORDER
           : a_repeats ? DART__GPU_PAIRS_BY_A
                       : DART__GPU_PAIRS_APART;
  default: /* PACK writes a packed buffer: each element once */
    return DART__GPU_PAIRS_APART;
  }
}

/*
 * A device backend: CUDA (device_cuda.c), or emulated devices of host
 * memory that only these operations touch (device_emu.c), so that
 * everything above runs and is tested without a GPU. Streams are the
 * backend's (NULL: its default stream). Each function logs its failures,
 * as func (the public function; a->func for atomics).
 */
typedef struct {
  const char *name;
  /* the devices this process sees (0: none, said at info level) */
  int (*count)(void);
  dart_ret_t (*set_device)(const char *func, int device);
  dart_ret_t (*alloc)(const char *func, size_t bytes, void **ptr);
  void (*free)(void *ptr);
  /* memory of a device (ours or mapped from a peer), not the host's */
  bool (*is_device)(const void *ptr);
  /* the address at which UCX reaches this unit's device memory at ptr */
  void *(*ucx_addr)(void *ptr);
  /* for [ptr, ptr + bytes) of this unit's device memory */
  dart_ret_t (*export_mem)(const char *func, void *ptr, size_t bytes,
                           dart__gpu_export_t *out);
  /* maps a node peer's export: *base is its allocation's start here */
  dart_ret_t (*open)(const char *func, const dart__gpu_export_t *e,
                     void **base);
  void (*close)(void *base);
  /* bytes between any memory this process reaches, behind stream's work */
  dart_ret_t (*copy)(const char *func, void *dst, const void *src,
                     size_t bytes, void *stream);
  dart_ret_t (*stream_create)(const char *func, void **stream);
  void (*stream_destroy)(void *stream);
  dart_ret_t (*stream_sync)(const char *func, void *stream);
  /* a new event behind the work on stream so far; waiting for it; and
   * destroying it (waited for or not) */
  dart_ret_t (*event_record)(const char *func, void *stream, void **event);
  dart_ret_t (*event_sync)(const char *func, void *event);
  /* *done: whether the work before event has run (without waiting) */
  dart_ret_t (*event_query)(const char *func, void *event, bool *done);
  /* event again, behind the work on stream so far */
  dart_ret_t (*event_rerecord)(const char *func, void *event, void *stream);
  void (*event_destroy)(void *event);
  /* a on device memory at p, complete on return */
  dart_ret_t (*atomic)(const dart__atomic_t *a, char *p, void *stream);
  /* a pattern's copy that the device reads (pattern must outlive it),
   * for pattern ops; and freeing it */
  dart_ret_t (*pattern_upload)(const char *func, const dart__pattern_t *p,
                               void **device_pattern);
  void (*pattern_free)(void *device_pattern);
  /* op behind stream's work; pairs that write one element run in order
   * (dart__gpu__schedule) */
  dart_ret_t (*pattern)(const char *func, const dart__gpu_pattern_op_t *op,
                        void *stream);
  /* signals between streams, on 32-bit words of device memory (this
   * unit's, or a node peer's mapped): word_write stores value behind
   * stream's work, after a fence; word_wait holds stream's later work
   * until (int32_t)(*word - value) >= 0, a comparison that survives
   * wrapping. words: whether the backend has them. */
  bool (*words)(void);
  dart_ret_t (*word_write)(const char *func, uint32_t *word, uint32_t value,
                           void *stream);
  dart_ret_t (*word_wait)(const char *func, uint32_t *word, uint32_t value,
                          void *stream);
  /* pinned host memory for staging (plain host memory where not pinned) */
  dart_ret_t (*host_alloc)(const char *func, size_t bytes, void **ptr);
  void (*host_free)(void *ptr);
  /* releases what the backend kept (at dart_exit) */
  void (*fini)(void);
} dart__gpu_ops_t;

extern const dart__gpu_ops_t dart__gpu_emu;
#ifdef DART_HAVE_CUDA
extern const dart__gpu_ops_t dart__gpu_cuda;
#endif

typedef struct {
  const dart__gpu_ops_t *ops; /* NULL: no device in this process */
  int device;                 /* this unit's, or -1 */
  int devices;                /* devices seen */
  bool any_device;            /* every unit has one: device segments allowed */
  /* ... and several nodes: UCX moves device memory (a CUDA-aware UCX,
   * DART_GPU_UCX=1), or staged transfers */
  bool ucx_direct;
  bool staging;
  bool words;      /* every unit's backend has word_write and word_wait */
  _Atomic int staged_segments; /* live device segments spanning nodes */
} dart__gpu_state_t;

extern dart__gpu_state_t dart__gpu;

/* Whether local memory at p must be copied by the device backend. */
static inline bool dart__gpu__is_device(const void *p)
{
  return __builtin_expect(dart__gpu.ops != NULL, 0) &&
         dart__gpu.ops->is_device(p);
}

/* Collective at dart_init, after the teams: the backend and device. */
dart_ret_t dart__gpu__init(void);
/* Collective at dart_exit, after every segment is gone. */
void dart__gpu__fini(void);
/* The device and paths, for DART_INFO. */
void dart__gpu__print_info(FILE *out);

/* The internal stream to global unit, created on first use. */
dart_ret_t dart__gpu__stream(const char *func, int gunit, void **stream);
/* Completes every device copy this unit started (dart_flush_all, frees). */
dart_ret_t dart__gpu__flush_all(const char *func);
/* A handle's event (onesided/path_ipc.c): waits for its copies and
 * destroys it; or only destroys it (a handle freed without a wait). */
dart_ret_t dart__gpu__event_wait(const char *func, void *event);
void dart__gpu__event_drop(void *event);

/* A put or get whose local buffer is device memory, along a host path to
 * global unit gunit: the device copies straight to or from mapped (where
 * this process loads and stores the target), else through host memory
 * and the path; complete on return. */
dart_ret_t dart__gpu__local_xfer(const dart__xfer_t *x, bool is_put,
                                 int path, int gunit, char *mapped,
                                 dart__mode_t mode, dart_handle_t *handle);

/* Copies the runs of a transfer between local memory and remote (in this
 * process's address space) with the backend, behind stream. */
dart_ret_t dart__gpu__copy_runs(const dart__xfer_t *x, bool is_put,
                                char *remote, void *stream);

#endif
