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

struct dart__team;
struct dart__gpu_export;

/* How a unit's part is reached (dart_path_t values). */
enum {
  DART__PATH_SELF = 0,
  DART__PATH_SHM = 1,
  DART__PATH_MPI = 2,
  DART__PATH_UCX = 3,
  DART__PATH_CMA = 4,
  DART__PATH_IPC = 5,  /* device memory, own or a node peer's (src/gpu) */
  DART__PATH_STAGE = 6 /* device memory on another node, host staging */
};

/* What the runtime asks of a path, by its value (segment.c): code asks
 * these, never the order of the values. */
typedef struct {
  bool load_store; /* this process loads and stores the host memory itself,
                    * and its atomics are CPU atomics (self, shm) */
  bool mapped;     /* in this process's address space, host or device (self,
                    * shm, ipc) */
  bool device;     /* device memory (ipc, stage) */
} dart__path_props_t;
extern const dart__path_props_t dart__path_props[];

static inline bool dart__path_load_store(int path)
{
  return dart__path_props[path].load_store;
}

typedef struct {
  char *base;    /* load/store address (SELF, SHM) */
  uint64_t addr; /* the part's address in its owner's process (UCX, CMA) */
  MPI_Aint disp; /* displacement in the team's dynamic window (MPI) */
  size_t size;   /* bytes of the unit's part */
  void *key;     /* the remote transport's key of the route's own (grown
                  * pool chunks), or NULL for the segment's */
  int path;
  /* The path of atomics, the same for every unit of a host segment: CPU
   * atomics (DART__PATH_SHM) when every unit loads and stores the memory,
   * else the remote path for all, the owner included (CPU and MPI atomics
   * are not atomic with respect to each other). Device segments: the
   * device's (DART__PATH_IPC) on the node, refused (DART__PATH_STAGE)
   * beyond. */
  int atomics;
} dart__route_t;

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
  bool attached; /* mybase is attached to the team's dynamic window */
  /* the remote transport's own (its seg_alloc, seg_register), when
   * remote; freed by its seg_release */
  void *transport;
  int memkind; /* dart_memkind_t */
  struct {     /* device segments (src/gpu/segment_gpu.c) */
    void *alloc;                    /* what we allocated for our part */
    struct dart__gpu_export *exports; /* per team unit on our node */
    _Atomic(char *) *parts;         /* per team unit: mapped part, or NULL */
    bool staged; /* counted in dart__gpu.staged_segments */
  } gpu;
} dart__segment_t;

/* Per team: positive ids, negative ids, and segment 0. */
typedef struct {
  dart__slots_t alloc; /* segid = slot + 1 */
  dart__slots_t reg;   /* segid = -(slot + 1) */
  dart__segment_t *pool;
} dart__segtab_t;

static inline dart__segment_t *dart__globmem__segtab_get(
    const dart__segtab_t *tab, int16_t segid)
{
  if (segid > 0) return dart__base__slots_get(&tab->alloc, (uint32_t)segid - 1);
  if (segid < 0)
    return dart__base__slots_get(&tab->reg, (uint32_t)(-(int32_t)segid) - 1);
  return tab->pool;
}

void dart__globmem__segtab_init(dart__segtab_t *tab);
/* Frees every segment still in the table (collective over the team). */
void dart__globmem__segtab_fini(struct dart__team *team);

#endif
