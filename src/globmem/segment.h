/*
 * Segments: one per allocation (collective, registered, or the local pool),
 * found in O(1) through the owning team's segment table, with one route per
 * team unit decided when the segment was created.
 */
#ifndef DART__GLOBMEM__SEGMENT_H_
#define DART__GLOBMEM__SEGMENT_H_

#include <dart/dart_globmem.h>
#include <dart/dart_memkind.h>
#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/ralloc.h"
#include "base/slots.h"
#include "transport/transport.h"

struct dart__team;
struct dart__gpu_export;

typedef enum {
  DART__SEG_ALLOC,    /* dart_team_memalloc_aligned, segid > 0 */
  DART__SEG_REGISTER, /* dart_team_memregister*, segid < 0 */
  DART__SEG_POOL      /* dart_memalloc's pool, segid 0 of DART_TEAM_ALL */
} dart__seg_kind_t;

typedef struct dart__segment {
  int16_t id;
  dart__seg_kind_t kind;
  struct dart__team *team;
  dart__route_t *routes; /* one per team unit */
  MPI_Win shm_win;       /* the node's shared window, or MPI_WIN_NULL */
  char *mybase;
  size_t mysize;
  bool remote;   /* some unit is reached through the remote transport */
  bool owner_atomics; /* the owners apply its atomics (dart_am.h) */
  bool attached; /* mybase is attached to the team's dynamic window */
  /* the remote transport's own (its seg_alloc, seg_register), when
   * remote; freed by its seg_release */
  void *transport;
  int memkind; /* dart_memkind_t */
  struct {     /* device segments (segment_gpu.c) */
    void *alloc;                    /* what we allocated for our part */
    struct dart__gpu_export *exports; /* per team unit on our node */
    _Atomic(char *) *parts;         /* per team unit: mapped part, or NULL */
    bool staged; /* counted in dart__gpu.staged_segments */
  } gpu;
} dart__segment_t;

/* Parts in a shared window start DART__SEG_ALIGN-aligned (MPI may start
 * a unit's share anywhere; Open MPI: 264 bytes into a page). Mappings of
 * one window differ by whole pages, so every unit finds the same part. */
#define DART__SEG_ALIGN 64

static inline char *dart__globmem__window_part(char *base)
{
  return (char *)(((uintptr_t)base + DART__SEG_ALIGN - 1) &
                  ~(uintptr_t)(DART__SEG_ALIGN - 1));
}

/* Counts the segments that went, so that dart__globmem__shared_part's
 * answers can be cached until it changes. */
extern _Atomic uint64_t dart__globmem__seg_gone;

/* Whether [ptr, ptr + bytes) lies in this unit's part of a collective
 * allocation of team that its node peers map (a shared window); then *g
 * points to ptr. */
bool dart__globmem__shared_part(struct dart__team *team, const void *ptr,
                                size_t bytes, dart_gptr_t *g);

/* Frees every segment still in team's table (collective over the team):
 * its release (dart__team__on_release). */
void dart__globmem__segtab_fini(struct dart__team *team);

/*
 * Device segments (segment_gpu.c, over the device backend of gpu/). init:
 * collective over seg's team, after the generic fields and routes (this
 * unit's part at mybase: allocated, or the registered memory at addr):
 * the exports. unmap closes the peers' mappings, which must happen on
 * every unit before any owner frees its part; release frees what init and
 * the allocation took.
 */
dart_ret_t dart__globmem__device_init(const char *func, dart__segment_t *seg,
                                      void *addr);
void dart__globmem__device_unmap(dart__segment_t *seg);
void dart__globmem__device_release(dart__segment_t *seg);
/* Where team unit's part of a device segment starts in this process
 * (its IPC mapping, opened on first use). */
dart_ret_t dart__globmem__device_part(const char *func, dart__segment_t *seg,
                                      int unit, char **base);

#endif
