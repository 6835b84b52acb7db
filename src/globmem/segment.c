#include <dart/dart_am.h>
#include <dart/dart_globmem.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/env.h"
#include "base/runtime.h"
#include "globmem/globmem.h"
#include "gpu/gpu.h"
#include "progress/progress.h"
#include "transport/acc_queue.h"
#include "transport/transport.h"
#include "types/datatype.h"

/* part sizes from FAILED_PART - DART_ERR_OTHER up say "this unit failed
 * with error FAILED_PART - size" (no part is that large) */
#define FAILED_PART UINT64_MAX
/* What each unit tells the others when a segment is made: its part, the
 * part's displacement in the team's window and address for the remote
 * transport, and what its segment table offers (NO_SLOT: nothing). */
enum { PART_SIZE, PART_DISP, PART_ADDR, PART_NEXT, PART_FRESH, PART_FIELDS };
#define NO_SLOT UINT64_MAX

void dart__globmem__segtab_fini(dart__team_t *team)
{
  dart__slots_t *tables[2] = {&team->segs.alloc, &team->segs.reg};
  for (int t = 0; t < 2; t++) {
    for (uint32_t id = 0; id < tables[t]->next_fresh; id++) {
      dart__segment_t *seg = dart__base__slots_get(tables[t], id);
      if (seg) dart__globmem__seg_destroy(seg);
    }
  }
  if (team->segs.pool) dart__globmem__pool_fini();
}

_Atomic uint64_t dart__globmem__seg_gone;

bool dart__globmem__shared_part(dart__team_t *team, const void *ptr,
                                size_t bytes, dart_gptr_t *g)
{
  const dart__slots_t *alloc = &team->segs.alloc;
  const char *p = ptr;
  for (uint32_t slot = 0; slot < alloc->next_fresh; slot++) {
    const dart__segment_t *seg = dart__base__slots_get(alloc, slot);
    if (seg == NULL || seg->shm_win == MPI_WIN_NULL ||
        seg->memkind != DART_MEMKIND_HOST || p < seg->mybase ||
        bytes > seg->mysize || p - seg->mybase > (ptrdiff_t)(seg->mysize -
                                                              bytes))
      continue;
    *g = (dart_gptr_t){.unitid = team->myid,
                       .segid = seg->id,
                       .teamid = team->id,
                       .addr_or_offs.offset = (uint64_t)(p - seg->mybase)};
    return true;
  }
  return false;
}

static void seg_release(dart__segment_t *seg)
{
  atomic_fetch_add_explicit(&dart__globmem__seg_gone, 1,
                            memory_order_relaxed);
  /* detached before UCX frees a part it allocated */
  if (seg->attached)
    dart__transport__paths[DART__PATH_MPI]->detach(seg->team, seg->mybase);
  if (seg->transport) dart__transport__remote()->seg_release(seg);
  if (seg->memkind == DART_MEMKIND_CUDA) dart__globmem__device_release(seg);
  if (seg->shm_win != MPI_WIN_NULL) MPI_Win_free(&seg->shm_win);
  free(seg->routes);
  free(seg);
}

/* Bytes of free physical memory. UCX fills a shared-memory file page by
 * page for what it allocates: asked for more than is free, it takes the
 * node's memory until the kernel kills processes, where an MPI window of
 * that size fails. */
static size_t free_memory(void)
{
  long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (size_t)pages * (size_t)page : 0;
}

/*
 * The slot of a new segment's id, the same on every unit of the team, from
 * what each unit's table offers (parts, gathered): the slot every unit
 * would take next, where all agree; otherwise one that no unit has issued
 * yet; otherwise, in one more collective round, the lowest slot free
 * everywhere. Tables differ once units deregister memory on their own
 * (dart_team_memderegister is local).
 */
static dart_ret_t agree_slot(const char *func, const dart__team_t *team,
                             const dart__slots_t *slots,
                             const uint64_t *parts, uint32_t *slot)
{
  bool same = true;
  uint64_t fresh = 0;
  for (int u = 0; u < team->size; u++) {
    const uint64_t *theirs = &parts[PART_FIELDS * u];
    same = same && theirs[PART_NEXT] == parts[PART_NEXT];
    if (theirs[PART_FRESH] > fresh) fresh = theirs[PART_FRESH];
  }
  if (same && parts[PART_NEXT] != NO_SLOT) {
    *slot = (uint32_t)parts[PART_NEXT];
    return DART_OK;
  }
  if (fresh < slots->capacity) {
    *slot = (uint32_t)fresh;
    return DART_OK;
  }
  uint64_t mask[(INT16_MAX + 63) / 64];
  const int words = (int)((slots->capacity + 63) / 64);
  dart__base__slots_free_mask(slots, mask);
  MPI_Request req;
  if (MPI_Iallreduce(MPI_IN_PLACE, mask, words, MPI_UINT64_T, MPI_BAND,
                     team->comm, &req) != MPI_SUCCESS ||
      dart__progress__wait(func, 1, &req) != DART_OK) {
    DART_LOG_ERROR_IN(func, "MPI_Allreduce of the free segment ids failed");
    return DART_ERR_OTHER;
  }
  for (int w = 0; w < words; w++) {
    if (mask[w]) {
      *slot = (uint32_t)(64 * w + __builtin_ctzll(mask[w]));
      return DART_OK;
    }
  }
  DART_LOG_ERROR_IN(func, "team %d has no segment id free on every unit",
                    team->id);
  return DART_ERR_NOMEM;
}

/*
 * This unit's part of seg: the user's memory (registration), device
 * memory, memory UCX allocates, or its share of a shared window on the
 * node. A failure the other units must learn of goes into *mine (logged);
 * one that ends the call at once is returned.
 */
static dart_ret_t place_part(const char *func, dart__segment_t *seg,
                             size_t part, void *addr, dart_ret_t *mine)
{
  const dart__team_t *team = seg->team;
  const bool device = seg->memkind == DART_MEMKIND_CUDA;
  const bool shm = dart__base__config.shm;
  seg->mysize = part;
  if (seg->kind == DART__SEG_REGISTER) {
    seg->mybase = addr;
    if (!device && part > 0 && dart__gpu__is_device(addr)) {
      DART_LOG_ERROR_IN(func, "%p is device memory: register it as "
                              "DART_MEMKIND_CUDA (dart_memkind.h)", addr);
      *mine = DART_ERR_INVAL;
    }
    return DART_OK;
  }
  if (device) {
    *mine = dart__gpu.ops->alloc(func, part, &seg->gpu.alloc); /* logged */
    seg->mybase = seg->gpu.alloc;
    return DART_OK;
  }
  const dart__path_ops_t *remote = dart__transport__remote();
  if (remote->seg_alloc != NULL && seg->remote &&
      dart__base__config.ucx_alloc && (team->node_size == 1 || !shm) &&
      part < free_memory()) {
    /* no unit loads or stores the part: memory the transport allocates,
     * which UCX's shared-memory transports reach directly; on memory they
     * did not allocate they emulate RMA with messages the owner must
     * serve (whole pages: the 4-byte words of 1- and 2-byte atomics
     * inside) */
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t pages = part > 0 ? (part + page - 1) / page : 1;
    *mine = remote->seg_alloc(func, seg, pages * page);
    return DART_OK;
  }
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  /* room to align the part */
  size_t rounded = (part + DART__SEG_ALIGN - 1) / DART__SEG_ALIGN *
                       DART__SEG_ALIGN + DART__SEG_ALIGN;
  int mret = MPI_Win_allocate_shared((MPI_Aint)rounded, 1, info,
                                     team->node_comm, &seg->mybase,
                                     &seg->shm_win);
  MPI_Info_free(&info);
  if (mret != MPI_SUCCESS) {
    DART_LOG_ERROR_IN(func, "MPI_Win_allocate_shared of %zu bytes failed",
                      rounded);
    return DART_ERR_NOMEM;
  }
  seg->mybase = dart__globmem__window_part(seg->mybase);
  return DART_OK;
}

/* Others reach our part through the team's dynamic window: remote units
 * where the remote transport registers nothing of its own (MPI's), and
 * the pool's grown chunks (see pool.c). *disp: its displacement there
 * (0: not attached). */
static dart_ret_t attach_part(const char *func, dart__segment_t *seg,
                              MPI_Aint *disp)
{
  dart__team_t *team = seg->team;
  *disp = 0;
  const bool needs_win =
      team->size > 1 && seg->memkind != DART_MEMKIND_CUDA &&
      ((seg->remote && dart__transport__remote()->seg_register == NULL) ||
       seg->kind == DART__SEG_POOL);
  if (!needs_win) return DART_OK;
  /* on every unit, an empty part too: the window is made collectively */
  dart_ret_t ret = dart__transport__paths[DART__PATH_MPI]->attach(
      func, team, seg->mybase, seg->mysize, disp);
  if (ret == DART_OK) seg->attached = seg->mysize > 0;
  return ret;
}

/*
 * The collective step: every unit's part (or its failure), displacement
 * and address into parts, and the segment id they agree on into *slot.
 * A unit's failure fails the call on every unit.
 */
static dart_ret_t exchange_parts(const char *func, dart__segment_t *seg,
                                 dart_ret_t mine_ret, MPI_Aint disp,
                                 dart__slots_t *slots, uint64_t *parts,
                                 uint32_t *slot)
{
  dart__team_t *team = seg->team;
  /* the address the remote transport reaches the part at */
  void *reached = seg->memkind == DART_MEMKIND_CUDA && mine_ret == DART_OK &&
                          seg->mysize > 0
                      ? dart__gpu.ops->ucx_addr(seg->mybase)
                      : seg->mybase;
  uint64_t mine[PART_FIELDS] = {
      [PART_SIZE] =
          mine_ret == DART_OK ? seg->mysize : FAILED_PART - mine_ret,
      [PART_DISP] = (uint64_t)disp,
      [PART_ADDR] = (uint64_t)(uintptr_t)reached,
      [PART_NEXT] = slots && dart__base__slots_next(slots, slot) == 0
                        ? *slot : NO_SLOT,
      [PART_FRESH] = slots ? slots->next_fresh : 0};
  MPI_Request req;
  if (MPI_Iallgather(mine, PART_FIELDS, MPI_UINT64_T, parts, PART_FIELDS,
                     MPI_UINT64_T, team->comm, &req) != MPI_SUCCESS ||
      dart__progress__wait(func, 1, &req) != DART_OK) {
    DART_LOG_ERROR_IN(func, "MPI_Allgather of the parts failed");
    return DART_ERR_OTHER;
  }
  for (int u = 0; u < team->size; u++) {
    const uint64_t size = parts[PART_FIELDS * u + PART_SIZE];
    if (size >= FAILED_PART - DART_ERR_OTHER) {
      if (mine_ret == DART_OK)
        DART_LOG_ERROR_IN(func, "unit %d could not make its part", u);
      return (dart_ret_t)(FAILED_PART - size);
    }
  }
  return slots ? agree_slot(func, team, slots, parts, slot) : DART_OK;
}

/*
 * How each unit's part is reached (dart__transport__route), and the path
 * of the segment's atomics.
 */
static dart_ret_t choose_routes(const char *func, dart__segment_t *seg,
                                size_t header, const uint64_t *parts)
{
  const dart__team_t *team = seg->team;
  const bool device = seg->memkind == DART_MEMKIND_CUDA;
  /* the remote transport reaches every part of a segment */
  dart__reach_t q = {.team = team, .seg = seg, .device = device,
                     .windowed = seg->shm_win != MPI_WIN_NULL,
                     .keyed = true, .header = header};
  for (int u = 0; u < team->size; u++) {
    dart__route_t *r = &seg->routes[u];
    const uint64_t *theirs = &parts[PART_FIELDS * u];
    r->size = theirs[PART_SIZE] - header;
    r->disp = (MPI_Aint)theirs[PART_DISP] + (MPI_Aint)header;
    r->addr = theirs[PART_ADDR] + header;
    r->base = u == team->myid ? seg->mybase + header : NULL;
    q.unit = u;
    dart_ret_t ret = dart__transport__route(func, &q, r);
    if (ret != DART_OK) return ret;
    /* host: CPU atomics where every unit loads and stores the memory,
     * else the remote transport's for all; where the owners apply them,
     * CPU atomics where this unit loads and stores the part, else the
     * owner's. Device: the remote transport's where it moves device
     * memory and some unit is beyond the node (the device's and the
     * network's atomics are not atomic with each other), else the route's
     * own. */
    if (!device && seg->owner_atomics)
      r->atomics = dart__path_load_store(r->path) ? DART__PATH_SHM
                                                  : DART__PATH_OWNER;
    else if (!device)
      r->atomics = seg->remote ? dart__rt.remote_path : DART__PATH_SHM;
    else
      r->atomics = seg->remote && dart__gpu.ucx_direct ? dart__rt.remote_path
                                                       : r->path;
  }
  return DART_OK;
}

/* What the paths of the routes keep of the segment: the remote
 * transport's registration and keys, the device's IPC exports
 * (collective). */
static dart_ret_t register_part(const char *func, dart__segment_t *seg,
                                void *addr)
{
  const bool device = seg->memkind == DART_MEMKIND_CUDA;
  const dart__path_ops_t *remote = dart__transport__remote();
  dart_ret_t ret = DART_OK;
  if (seg->remote && remote->seg_register != NULL &&
      (!device || dart__gpu.ucx_direct))
    ret = remote->seg_register(func, seg);
  if (ret == DART_OK && device)
    ret = dart__globmem__device_init(func, seg, addr);
  return ret;
}

dart_ret_t (*dart__globmem__owner_open)(const char *func, dart__team_t *team);

dart_ret_t dart__globmem__seg_create(const char *func, dart__team_t *team,
                                     dart__seg_kind_t kind, int memkind,
                                     size_t bytes, void *addr,
                                     bool owner_atomics,
                                     dart__segment_t **out)
{
  const size_t header = kind == DART__SEG_POOL ? DART__POOL_HEADER : 0;
  const bool device = memkind == DART_MEMKIND_CUDA;
  uint64_t *parts = NULL;
  dart_ret_t ret;
  /* where the remote transport or staged device transfers need their
   * target's progress, peers may still target us until all have arrived
   * (below, MPI calls block without serving them); the same choice on
   * every unit */
  if ((dart__path_props[dart__rt.remote_path].target_progress ||
       dart__gpu.staging) &&
      team->size > 1 &&
      (ret = dart__progress__barrier(func, team->comm)) != DART_OK)
    return ret;
  ret = DART_ERR_NOMEM;
  dart__segment_t *seg = calloc(1, sizeof *seg);
  if (seg == NULL) return DART_ERR_NOMEM;
  seg->kind = kind;
  seg->memkind = memkind;
  seg->owner_atomics = owner_atomics;
  seg->team = team;
  seg->shm_win = MPI_WIN_NULL;
  seg->routes = calloc((size_t)team->size, sizeof *seg->routes);
  parts = malloc(PART_FIELDS * (size_t)team->size * sizeof *parts);
  if (seg->routes == NULL || parts == NULL) goto fail;
  /* some unit is reached through the remote transport: all atomics take it
   * (the same on every unit) */
  seg->remote = team->size > 1 &&
                (team->node_size < team->size ||
                 (!device &&
                  (!dart__base__config.shm || kind == DART__SEG_REGISTER)));

  /* failures of one unit that the others learn from the exchange (all fail
   * together, none waits in a collective for it) */
  dart_ret_t mine_ret = DART_OK;
  MPI_Aint disp = 0;
  dart__slots_t *slots = kind == DART__SEG_ALLOC ? &team->segs.alloc
                         : kind == DART__SEG_REGISTER ? &team->segs.reg
                                                      : NULL;
  uint32_t slot = 0;
  if ((ret = place_part(func, seg, bytes + header, addr, &mine_ret)) !=
          DART_OK ||
      (mine_ret == DART_OK &&
       (ret = attach_part(func, seg, &disp)) != DART_OK) ||
      (ret = exchange_parts(func, seg, mine_ret, disp, slots, parts,
                            &slot)) != DART_OK ||
      (ret = choose_routes(func, seg, header, parts)) != DART_OK ||
      (ret = register_part(func, seg, addr)) != DART_OK)
    goto fail;

  ret = DART_ERR_NOMEM;
  if (kind == DART__SEG_POOL) {
    seg->id = DART_SEGMENT_LOCAL;
    team->segs.pool = seg;
  } else {
    if (dart__base__slots_insert_at(slots, slot, seg) != 0) {
      DART_LOG_ERROR_IN(func, "out of memory for segment id %u of team %d",
                        slot, team->id);
      goto fail;
    }
    seg->id = kind == DART__SEG_ALLOC ? (int16_t)(slot + 1)
                                      : (int16_t)(-(int32_t)slot - 1);
  }
  free(parts);
  /* staged transfers to this segment, or atomics for its owners to
   * apply, may come as soon as a peer returns: every unit has it in its
   * table first */
  if (((device && seg->remote) || (owner_atomics && team->size > 1)) &&
      (ret = dart__progress__barrier(func, team->comm)) != DART_OK) {
    dart__globmem__seg_destroy(seg);
    return ret;
  }
  *out = seg;
  return DART_OK;

fail:
  free(parts);
  seg_release(seg);
  return ret;
}

dart_ret_t dart__globmem__seg_destroy(dart__segment_t *seg)
{
  dart__team_t *team = seg->team;
  dart_ret_t ret = DART_OK;
  /* our own operations on the window are complete */
  dart__transport__acc_complete();
  if (dart__transport__flush_all(seg->kind == DART__SEG_REGISTER
                                     ? "dart_team_memderegister"
                                     : "dart_team_memfree",
                                 team) != DART_OK)
    ret = DART_ERR_OTHER;
  if (seg->kind == DART__SEG_REGISTER) {
    /* a unit deregisters its part on its own, as DART-MPI's
     * MPI_Win_detach: the memory is the caller's, and its peers are done
     * with it when the caller says so */
    if (seg->memkind == DART_MEMKIND_CUDA) dart__globmem__device_unmap(seg);
  } else {
    /* and nobody else's */
    if (dart__progress__barrier("dart_team_memfree", team->comm) !=
        DART_OK)
      ret = DART_ERR_OTHER;
    /* every mapping of a device part is closed before its owner frees it */
    if (seg->memkind == DART_MEMKIND_CUDA) {
      dart__globmem__device_unmap(seg);
      if (dart__progress__barrier("dart_team_memfree", team->comm) !=
          DART_OK)
        ret = DART_ERR_OTHER;
    }
  }
  /* no gptr finds it any more, cached or not */
  dart__globmem__route_cache_clear();
  if (seg->kind == DART__SEG_ALLOC)
    dart__base__slots_remove(&team->segs.alloc, (uint32_t)seg->id - 1);
  else if (seg->kind == DART__SEG_REGISTER)
    dart__base__slots_remove(&team->segs.reg,
                             (uint32_t)(-(int32_t)seg->id) - 1);
  else
    team->segs.pool = NULL;
  seg_release(seg);
  if (ret != DART_OK) DART_LOG_ERROR("MPI failed while freeing a segment");
  return ret;
}

/* ---- public ---- */

/* bytes of nelem elements of a contiguous type, or a logged error */
static dart_ret_t alloc_bytes(const char *func, size_t nelem,
                              dart_datatype_t dtype, size_t *bytes)
{
  const dart__dtype_t *t = dart__types__dtype(dtype);
  if (t == NULL || !t->contiguous) {
    DART_LOG_ERROR_IN(func, "datatype %ld is not a known contiguous type",
                      (long)dtype);
    return DART_ERR_INVAL;
  }
  if (nelem > (SIZE_MAX - DART__POOL_HEADER - DART__SEG_ALIGN) / t->elem_size) {
    DART_LOG_ERROR_IN(func, "%zu elements of %zu bytes overflow", nelem,
                      t->elem_size);
    return DART_ERR_INVAL;
  }
  *bytes = nelem * t->elem_size;
  return DART_OK;
}

static dart_ret_t team_alloc(const char *func, dart_team_t teamid,
                             dart__seg_kind_t kind, dart_memkind_t memkind,
                             size_t nelem, dart_datatype_t dtype, void *addr,
                             bool symmetric, bool owner_atomics,
                             dart_gptr_t *gptr)
{
  DART__CHECK_INIT_IN(func);
  dart__team_t *team = dart__team__lookup(func, teamid);
  if (team == NULL) return DART_ERR_INVAL;
  size_t bytes;
  dart_ret_t ret = alloc_bytes(func, nelem, dtype, &bytes);
  if (ret != DART_OK) return ret;
  if (gptr == NULL || (kind == DART__SEG_REGISTER && addr == NULL && bytes)) {
    DART_LOG_ERROR_IN(func, "gptr %p or addr %p is NULL", (void *)gptr, addr);
    return DART_ERR_INVAL;
  }
  if (memkind != DART_MEMKIND_HOST && memkind != DART_MEMKIND_CUDA) {
    DART_LOG_ERROR_IN(func, "memory kind %d is unknown", (int)memkind);
    return DART_ERR_INVAL;
  }
  /* the same answer on every unit: any_device is global */
  if (memkind == DART_MEMKIND_CUDA && !dart__gpu.any_device) {
    DART_LOG_ERROR_IN(func, "DART_MEMKIND_CUDA needs a CUDA device on every "
                            "unit (see dart_memkind_device)");
    return DART_ERR_INVAL;
  }
  if (symmetric) {
    /* every unit must register as much as the others: all learn the same */
    uint64_t range[2] = {bytes, ~(uint64_t)bytes}, out[2];
    MPI_Request req;
    DART__MPI_CHECK(MPI_Iallreduce(range, out, 2, MPI_UINT64_T, MPI_MAX,
                                   team->comm, &req));
    /* peers may still target us (UCX, staged device transfers) */
    if ((ret = dart__progress__wait(func, 1, &req)) != DART_OK)
      return ret;
    if (out[0] != (uint64_t)~out[1]) {
      DART_LOG_ERROR_IN(func,
                        "units registered different sizes (%zu bytes here)",
                        bytes);
      return DART_ERR_INVAL;
    }
  }
  dart__segment_t *seg;
  ret = dart__globmem__seg_create(func, team, kind, (int)memkind, bytes, addr,
                                  owner_atomics, &seg);
  if (ret == DART_OK && owner_atomics &&
      (ret = dart__globmem__owner_open(func, team)) != DART_OK)
    dart__globmem__seg_destroy(seg);
  if (ret != DART_OK) return ret;
  dart_gptr_t g = DART_GPTR_NULL;
  g.unitid = 0;
  g.segid = seg->id;
  g.teamid = teamid;
  g.addr_or_offs.offset = 0;
  *gptr = g;
  return DART_OK;
}

dart_ret_t dart_team_memalloc_aligned(dart_team_t teamid, size_t nelem,
                                      dart_datatype_t dtype, dart_gptr_t *gptr)
{
  return team_alloc(__func__, teamid, DART__SEG_ALLOC, DART_MEMKIND_HOST,
                    nelem, dtype, NULL, false,
                    dart__base__config.owner_atomics, gptr);
}

dart_ret_t dart_team_memalloc_atomics(dart_team_t teamid, size_t nelem,
                                      dart_datatype_t dtype,
                                      dart_am_atomics_t atomics,
                                      dart_gptr_t *gptr)
{
  if (atomics != DART_AM_ATOMICS_DEFAULT &&
      atomics != DART_AM_ATOMICS_TRANSPORT &&
      atomics != DART_AM_ATOMICS_OWNER) {
    DART_LOG_ERROR("atomics %d is none of dart_am_atomics_t", (int)atomics);
    return DART_ERR_INVAL;
  }
  bool owner = atomics == DART_AM_ATOMICS_DEFAULT
                   ? dart__base__config.owner_atomics
                   : atomics == DART_AM_ATOMICS_OWNER;
  return team_alloc(__func__, teamid, DART__SEG_ALLOC, DART_MEMKIND_HOST,
                    nelem, dtype, NULL, false, owner, gptr);
}

dart_ret_t dart_team_memregister_aligned(dart_team_t teamid, size_t nelem,
                                         dart_datatype_t dtype, void *addr,
                                         dart_gptr_t *gptr)
{
  return team_alloc(__func__, teamid, DART__SEG_REGISTER, DART_MEMKIND_HOST,
                    nelem, dtype, addr, true, false, gptr);
}

dart_ret_t dart_team_memregister(dart_team_t teamid, size_t nlelem,
                                 dart_datatype_t dtype, void *addr,
                                 dart_gptr_t *gptr)
{
  return team_alloc(__func__, teamid, DART__SEG_REGISTER, DART_MEMKIND_HOST,
                    nlelem, dtype, addr, false, false, gptr);
}

dart_ret_t dart_team_memalloc_kind(dart_team_t teamid, size_t nelem,
                                   dart_datatype_t dtype, dart_memkind_t kind,
                                   dart_gptr_t *gptr)
{
  return team_alloc(__func__, teamid, DART__SEG_ALLOC, kind, nelem, dtype,
                    NULL, false,
                    kind == DART_MEMKIND_HOST &&
                        dart__base__config.owner_atomics,
                    gptr);
}

dart_ret_t dart_team_memregister_kind(dart_team_t teamid, size_t nlelem,
                                      dart_datatype_t dtype, void *addr,
                                      dart_memkind_t kind, dart_gptr_t *gptr)
{
  return team_alloc(__func__, teamid, DART__SEG_REGISTER, kind, nlelem, dtype,
                    addr, false, false, gptr);
}

dart_ret_t dart_gptr_memkind(dart_gptr_t gptr, dart_memkind_t *kind)
{
  DART__CHECK_INIT();
  if (kind == NULL) {
    DART_LOG_ERROR("kind is NULL");
    return DART_ERR_INVAL;
  }
  dart__target_t target;
  dart_ret_t ret = dart__globmem__resolve(__func__, gptr, 0, &target);
  if (ret == DART_OK) *kind = (dart_memkind_t)target.seg->memkind;
  return ret;
}

static dart_ret_t team_free(const char *func, dart_gptr_t gptr,
                            dart__seg_kind_t kind)
{
  DART__CHECK_INIT_IN(func);
  dart__target_t target;
  dart_ret_t ret = dart__globmem__resolve(func, gptr, 0, &target);
  if (ret != DART_OK) return ret;
  if (target.seg->kind != kind) {
    DART_LOG_ERROR_IN(func, "segment %d was not made by %s", gptr.segid,
                      kind == DART__SEG_ALLOC ? "dart_team_memalloc_aligned"
                                              : "dart_team_memregister");
    return DART_ERR_INVAL;
  }
  if (gptr.addr_or_offs.offset != 0) {
    DART_LOG_ERROR_IN(func,
                      "gptr offset %llu is not the start of the allocation",
                      (unsigned long long)gptr.addr_or_offs.offset);
    return DART_ERR_INVAL;
  }
  return dart__globmem__seg_destroy(target.seg);
}

dart_ret_t dart_team_memfree(dart_gptr_t gptr)
{
  return team_free(__func__, gptr, DART__SEG_ALLOC);
}

dart_ret_t dart_team_memderegister(dart_gptr_t gptr)
{
  return team_free(__func__, gptr, DART__SEG_REGISTER);
}
