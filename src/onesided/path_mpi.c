/*
 * The MPI path: RMA on the team's dynamic window (units on other nodes, and
 * memory node peers cannot load/store). Transfers are cut into pieces of at
 * most 1 GiB, so counts fit MPI's int at any size.
 *
 * The windows are this file's own: a team gets one on first need (the
 * attach slot, collective), locked for its lifetime, and loses it at its
 * release, after its segments have detached. Nothing else names them.
 *
 * Gets and local flushes complete with MPI_Win_flush: Open MPI 4.1's
 * osc/pt2pt can wait forever in MPI_Win_flush_local while a get is
 * outstanding, and remote completion implies local completion.
 */
#include <stdlib.h>
#include <string.h>

#include "base/runtime.h"
#include "onesided/onesided.h"

#define PIECE_BYTES ((size_t)1 << 30)

/* A team's window: team->paths[DART__PATH_MPI], NULL until first need. */
typedef struct mpi_team {
  MPI_Win win;
  bool separate;         /* MPI_WIN_SEPARATE: direct access needs Win_sync */
  struct mpi_team *next; /* in mpi.teams */
  size_t words;          /* of dirty */
  /* a bit per unit with operations issued since its last flush (atomic:
   * other threads may issue while one flushes) */
  _Atomic uint64_t dirty[];
} mpi_team_t;

static struct {
  mpi_team_t *teams; /* every team's window */
  /* how many: MPI's one-sided operations may need this unit inside MPI
   * while there is one (mpi_poll, on the progress thread too) */
  atomic_int windows;
} mpi;

static inline mpi_team_t *win_of(const dart__team_t *team)
{
  return team->paths[DART__PATH_MPI];
}

/* Marks unit as the target of an operation that waits for a flush;
 * unmark before flushing the unit alone. */
static inline void mark_dirty(mpi_team_t *w, int unit)
{
  _Atomic uint64_t *word = &w->dirty[unit / 64];
  const uint64_t bit = UINT64_C(1) << (unit % 64);
  if (!(atomic_load_explicit(word, memory_order_relaxed) & bit))
    atomic_fetch_or_explicit(word, bit, memory_order_relaxed);
}

static inline void unmark_dirty(mpi_team_t *w, int unit)
{
  _Atomic uint64_t *word = &w->dirty[unit / 64];
  const uint64_t bit = UINT64_C(1) << (unit % 64);
  if (atomic_load_explicit(word, memory_order_relaxed) & bit)
    atomic_fetch_and_explicit(word, ~bit, memory_order_relaxed);
}

/* Orders this unit's direct loads and stores of its part of the window
 * against others' RMA on it. In the separate memory model that takes
 * MPI_Win_sync; in the unified one (Open MPI, MPICH) the copies are one and
 * a memory fence orders them: MPI_Win_sync would also enter MPI's
 * progress, which yields the core when units outnumber cores (3x the cost
 * of a node barrier then). */
static dart_ret_t sync_window(const char *func, const mpi_team_t *w)
{
  if (w->separate) DART__MPI_CHECK_IN(func, MPI_Win_sync(w->win));
  else dart__base__fence();
  return DART_OK;
}

/* Up to this many units with operations outstanding are flushed one by
 * one: Open MPI's osc/pt2pt MPI_Win_flush_all makes a round trip to every
 * unit of the window, dirty or not. More take one MPI_Win_flush_all, which
 * RDMA transports complete at once for all. */
#define FLUSH_EACH_MAX 4

/* Completes the operations issued on the window since their units' last
 * flush (none: returns at once), and syncs it with direct access. */
static dart_ret_t flush_window(const char *func, mpi_team_t *w)
{
  int dirty = 0;
  for (size_t i = 0; i < w->words; i++)
    dirty += __builtin_popcountll(
        atomic_load_explicit(&w->dirty[i], memory_order_relaxed));
  if (dirty == 0) return DART_OK; /* nothing went through MPI */
  /* each bit is cleared before its flush: an operation issued meanwhile
   * marks its unit again */
  for (size_t i = 0; i < w->words; i++) {
    uint64_t bits = atomic_exchange_explicit(&w->dirty[i], 0,
                                             memory_order_relaxed);
    /* a full flush for local completion too: see the top */
    for (; bits != 0 && dirty <= FLUSH_EACH_MAX; bits &= bits - 1)
      DART__MPI_CHECK_IN(func,
                         MPI_Win_flush((int)(i * 64) + __builtin_ctzll(bits),
                                       w->win));
  }
  if (dirty > FLUSH_EACH_MAX)
    DART__MPI_CHECK_IN(func, MPI_Win_flush_all(w->win));
  /* direct loads and stores of our own part against others' RMA */
  return sync_window(func, w);
}

static size_t gcd(size_t a, size_t b)
{
  while (b) {
    size_t r = a % b;
    a = b;
    b = r;
  }
  return a;
}

/* Bytes from the start of a layout to its element n (n a multiple of the
 * type's elements per instance). */
static size_t layout_offset(const dart__dtype_t *t, size_t n)
{
  return (t->contiguous ? n : n / t->num_elem * t->extent) * t->elem_size;
}

/* The end of a started transfer to unit of w: complete for a blocking
 * one, else owed to the unit's next flush (and handed out as h). */
static dart_ret_t finish(const char *func, mpi_team_t *w, int unit,
                         dart__mode_t mode, dart_handle_t h,
                         dart_handle_t *handle)
{
  if (mode == DART__MODE_BLOCKING) {
    DART__MPI_CHECK_IN(func, MPI_Win_flush(unit, w->win));
  } else {
    mark_dirty(w, unit);
    if (h) *handle = h;
  }
  return DART_OK;
}

static dart_ret_t mpi_contig(const char *func, const dart__target_t *t,
                             void *local, size_t bytes, bool is_put,
                             dart__mode_t mode, dart_handle_t *handle)
{
  dart__team_t *team = t->team;
  mpi_team_t *w = win_of(team);
  dart_handle_t h = NULL;
  if (mode == DART__MODE_HANDLE &&
      (h = dart__onesided__handle_new(team, t->unit, DART__PATH_MPI,
                                      is_put)) == NULL)
    return DART_ERR_NOMEM;
  MPI_Aint at = t->route->disp + (MPI_Aint)t->offset;
  int count = (int)bytes;
  int ret = is_put ? MPI_Put(local, count, MPI_BYTE, t->unit, at, count,
                             MPI_BYTE, w->win)
                   : MPI_Get(local, count, MPI_BYTE, t->unit, at, count,
                             MPI_BYTE, w->win);
  if (ret != MPI_SUCCESS) {
    DART_LOG_ERROR_IN(func, "MPI_%s to unit %d of team %d failed",
                      is_put ? "Put" : "Get", t->unit, team->id);
    if (h) dart__onesided__handle_release(h);
    return DART_ERR_OTHER;
  }
  return finish(func, w, t->unit, mode, h, handle);
}

static dart_ret_t mpi_xfer(const dart__xfer_t *x, bool is_put,
                           dart__mode_t mode, dart_handle_t *handle)
{
  const dart__target_t *t = x->target;
  dart__team_t *team = t->team;
  mpi_team_t *w = win_of(team);
  const dart__dtype_t *lt = x->local_t, *rt = x->remote_t;
  /* elements per piece: whole instances on both sides, about 1 GiB (the
   * divisions, each tens of cycles, only where there are several pieces;
   * the product fits: prepare checked the span) */
  size_t per = x->nelem, npieces = 1;
  if (x->nelem * lt->elem_size > PIECE_BYTES) {
    size_t unit_elems = lt->num_elem / gcd(lt->num_elem, rt->num_elem) *
                        rt->num_elem;
    per = PIECE_BYTES / lt->elem_size / unit_elems * unit_elems;
    if (per == 0) per = unit_elems;
    npieces = (x->nelem + per - 1) / per;
  }
  dart_handle_t h = NULL;
  if (mode == DART__MODE_HANDLE) {
    h = dart__onesided__handle_new(team, t->unit, DART__PATH_MPI, is_put);
    if (h == NULL) return DART_ERR_NOMEM;
  }
  MPI_Aint disp = t->route->disp + (MPI_Aint)t->offset;
  for (size_t i = 0; i < npieces; i++) {
    size_t first = i * per;
    size_t n = x->nelem - first < per ? x->nelem - first : per;
    int lcount, rcount;
    MPI_Datatype ltype = dart__types__dtype_mpi(lt, n, &lcount);
    MPI_Datatype rtype = dart__types__dtype_mpi(rt, n, &rcount);
    char *local = (char *)x->local + layout_offset(lt, first);
    MPI_Aint at = disp + (MPI_Aint)layout_offset(rt, first);
    int ret = is_put ? MPI_Put(local, lcount, ltype, t->unit, at, rcount,
                               rtype, w->win)
                     : MPI_Get(local, lcount, ltype, t->unit, at, rcount,
                               rtype, w->win);
    if (ret != MPI_SUCCESS) {
      DART_LOG_ERROR_IN(x->func, "MPI_%s to unit %d of team %d failed",
                        is_put ? "Put" : "Get", t->unit, team->id);
      if (h) dart__onesided__handle_release(h);
      return DART_ERR_OTHER;
    }
  }
  return finish(x->func, w, t->unit, mode, h, handle);
}

static dart_ret_t mpi_put(const dart__xfer_t *x, dart__mode_t mode,
                          dart_handle_t *handle)
{
  return mpi_xfer(x, true, mode, handle);
}

static dart_ret_t mpi_get(const dart__xfer_t *x, dart__mode_t mode,
                          dart_handle_t *handle)
{
  return mpi_xfer(x, false, mode, handle);
}

static dart_ret_t mpi_flush(const char *func, dart__team_t *team,
                            int unit)
{
  mpi_team_t *w = win_of(team);
  unmark_dirty(w, unit);
  DART__MPI_CHECK_IN(func, MPI_Win_flush(unit, w->win));
  /* direct loads and stores of our own part against others' RMA */
  return sync_window(func, w);
}

/*
 * Atomics use two MPI operations only: MPI_Compare_and_swap and MPI_NO_OP
 * reads. Windows assume accumulate_ops=same_op_no_op, under which mixing,
 * say, a fetch-add with a compare-and-swap on one location is not atomic
 * (Open MPI's osc/ucx serves the two by different mechanisms). So every
 * operation reads, computes and swaps the result in; a swap that finds
 * another value recomputes from that value. Elements are done in blocks,
 * one flush per round; larger bursts (128 operations) stall Open MPI 4.1's
 * osc/pt2pt for minutes.
 */
#define RMW_BLOCK 32

static MPI_Datatype cas_type(size_t size)
{
  switch (size) {
  case 1: return MPI_UINT8_T;
  case 2: return MPI_UINT16_T;
  case 4: return MPI_UINT32_T;
  default: return MPI_UINT64_T;
  }
}

/* Elements [first, first + n) of an accumulate or fetch-and-op. */
static dart_ret_t mpi_rmw_block(const dart__atomic_t *a, size_t first,
                                size_t n)
{
  const dart__target_t *t = a->target;
  MPI_Win win = win_of(t->team)->win;
  MPI_Datatype type = cas_type(a->size);
  MPI_Aint disp = t->route->disp + (MPI_Aint)(t->offset + first * a->size);
  /* one element per 8-byte slot, in its first a->size bytes */
  uint64_t old[RMW_BLOCK], next[RMW_BLOCK], seen[RMW_BLOCK];
  uint16_t pending[RMW_BLOCK];
  const char *operands = a->values;
  for (size_t i = 0; i < n; i++) {
    DART__MPI_CHECK_IN(a->func,
                       MPI_Fetch_and_op(NULL, &old[i], type, t->unit,
                                        disp + (MPI_Aint)(i * a->size),
                                        MPI_NO_OP, win));
    pending[i] = (uint16_t)i;
  }
  DART__MPI_CHECK_IN(a->func, MPI_Win_flush(t->unit, win));
  size_t npending = a->op == DART_OP_NO_OP ? 0 : n;
  while (npending > 0) {
    size_t nswap = 0;
    for (size_t j = 0; j < npending; j++) {
      size_t i = pending[j];
      const char *operand =
          operands ? operands + (first + i) * a->size : NULL;
      dart__transport__atomic_apply(a, &old[i], operand, &next[i]);
      /* no change: the read was the operation */
      if (memcmp(&next[i], &old[i], a->size) == 0) continue;
      DART__MPI_CHECK_IN(
          a->func, MPI_Compare_and_swap(&next[i], &old[i], &seen[i], type,
                                        t->unit,
                                        disp + (MPI_Aint)(i * a->size), win));
      pending[nswap++] = (uint16_t)i;
    }
    if (nswap == 0) break;
    DART__MPI_CHECK_IN(a->func, MPI_Win_flush(t->unit, win));
    npending = 0;
    for (size_t j = 0; j < nswap; j++) {
      size_t i = pending[j];
      if (memcmp(&seen[i], &old[i], a->size) == 0) continue;
      memcpy(&old[i], &seen[i], a->size);
      pending[npending++] = (uint16_t)i;
    }
  }
  if (a->result) memcpy(a->result, &old[0], a->size);
  return DART_OK;
}

/*
 * A compare-and-swap or a read (fetch with DART_OP_NO_OP) for a handle,
 * one MPI operation each: left in flight until the handle's wait flushes
 * the unit, with the operands in the handle. False, with nothing done,
 * for the others (read-compute-swap loops, complete on return).
 */
static bool start_with_handle(const dart__atomic_t *a, mpi_team_t *w,
                              dart_ret_t *ret)
{
  const dart__target_t *t = a->target;
  if (a->handle == NULL ||
      (a->kind != DART__ATOMIC_CAS && a->op != DART_OP_NO_OP))
    return false;
  dart_handle_t h =
      dart__onesided__handle_new(t->team, t->unit, DART__PATH_MPI, false);
  if (h == NULL) return false; /* complete now instead */
  const MPI_Aint disp = t->route->disp + (MPI_Aint)t->offset;
  int rc;
  if (a->kind == DART__ATOMIC_CAS) {
    memcpy(&h->operands[0], a->values, a->size);
    memcpy(&h->operands[1], a->compare, a->size);
    rc = MPI_Compare_and_swap(&h->operands[0], &h->operands[1], a->result,
                              cas_type(a->size), t->unit, disp, w->win);
  } else {
    rc = MPI_Fetch_and_op(NULL, a->result, cas_type(a->size), t->unit, disp,
                          MPI_NO_OP, w->win);
  }
  if (rc != MPI_SUCCESS) {
    DART_LOG_ERROR_IN(a->func, "MPI_%s on unit %d of team %d failed",
                      a->kind == DART__ATOMIC_CAS ? "Compare_and_swap"
                                                  : "Fetch_and_op",
                      t->unit, (int)t->team->id);
    dart__onesided__handle_release(h);
    *ret = DART_ERR_OTHER;
    return true;
  }
  mark_dirty(w, t->unit);
  *a->handle = h;
  *ret = DART_OK;
  return true;
}

static dart_ret_t mpi_atomic(const dart__atomic_t *a)
{
  const dart__target_t *t = a->target;
  mpi_team_t *w = win_of(t->team);
  MPI_Win win = w->win;
  if (__builtin_expect(!dart__rt.mpi_cas_ok, 0)) {
    DART_LOG_ERROR_IN(a->func, "no atomics through MPI: its one-sided "
                               "component crashes in MPI_Compare_and_swap "
                               "(set OMPI_MCA_osc=pt2pt,sm)");
    return DART_ERR_OTHER;
  }
  dart_ret_t ret;
  if (start_with_handle(a, w, &ret)) return ret;
  /* the flushes below complete what this unit started towards the unit
   * before too (dart_put_signal's put: no flush of its own) */
  if (a->kind != DART__ATOMIC_ACCUMULATE || a->op != DART_OP_NO_OP)
    unmark_dirty(w, t->unit);
  if (a->kind == DART__ATOMIC_CAS) {
    DART__MPI_CHECK_IN(a->func, MPI_Compare_and_swap(
        a->values, a->compare, a->result, cas_type(a->size), t->unit,
        t->route->disp + (MPI_Aint)t->offset, win));
    DART__MPI_CHECK_IN(a->func, MPI_Win_flush(t->unit, win));
  } else if (a->kind == DART__ATOMIC_FETCH_OP ||
             a->op != DART_OP_NO_OP) {
    for (size_t first = 0; first < a->nelem; first += RMW_BLOCK) {
      size_t n = a->nelem - first < RMW_BLOCK ? a->nelem - first : RMW_BLOCK;
      if ((ret = mpi_rmw_block(a, first, n)) != DART_OK) return ret;
    }
  }
  /* an atomic often publishes data (a flag): direct loads of our own part
   * that follow it must see what came before it */
  return sync_window(a->func, w);
}

static dart_ret_t mpi_flush_all(const char *func, dart__team_t *team)
{
  if (team != NULL)
    return win_of(team) ? flush_window(func, win_of(team)) : DART_OK;
  for (mpi_team_t *w = mpi.teams; w; w = w->next) {
    dart_ret_t ret = flush_window(func, w);
    if (ret != DART_OK) return ret;
  }
  return DART_OK;
}

/* Collective: gives team its window if it has none yet. */
static dart_ret_t ensure_window(const char *func, dart__team_t *team)
{
  if (win_of(team) != NULL) return DART_OK;
  const size_t words = ((size_t)team->size + 63) / 64;
  mpi_team_t *w = calloc(1, sizeof *w + words * sizeof w->dirty[0]);
  if (w == NULL) {
    DART_LOG_ERROR_IN(func, "out of memory for the window of team %d",
                      team->id);
    return DART_ERR_NOMEM;
  }
  if (MPI_Win_create_dynamic(MPI_INFO_NULL, team->comm, &w->win) !=
      MPI_SUCCESS) {
    DART_LOG_ERROR_IN(func, "MPI_Win_create_dynamic failed on team %d",
                      team->id);
    free(w);
    return DART_ERR_OTHER;
  }
  if (MPI_Win_lock_all(MPI_MODE_NOCHECK, w->win) != MPI_SUCCESS) {
    DART_LOG_ERROR_IN(func, "MPI_Win_lock_all failed on team %d", team->id);
    MPI_Win_free(&w->win);
    free(w);
    return DART_ERR_OTHER;
  }
  int *model, found;
  MPI_Win_get_attr(w->win, MPI_WIN_MODEL, &model, &found);
  w->separate = !found || *model != MPI_WIN_UNIFIED;
  w->words = words;
  DART_LOG_DEBUG("team %d has a dynamic window now (%s model)", team->id,
                 w->separate ? "separate" : "unified");
  w->next = mpi.teams;
  mpi.teams = w;
  team->paths[DART__PATH_MPI] = w;
  atomic_fetch_add_explicit(&mpi.windows, 1, memory_order_relaxed);
  return DART_OK;
}

static dart_ret_t mpi_attach(const char *func, dart__team_t *team,
                             void *base, size_t len, MPI_Aint *disp)
{
  dart_ret_t ret = ensure_window(func, team);
  if (ret != DART_OK) return ret;
  MPI_Aint at = 0;
  if (len > 0) {
    if (MPI_Win_attach(win_of(team)->win, base, (MPI_Aint)len) !=
        MPI_SUCCESS) {
      DART_LOG_ERROR_IN(func, "MPI_Win_attach of %zu bytes failed", len);
      return DART_ERR_OTHER;
    }
    MPI_Get_address(base, &at);
  }
  *disp = at;
  return DART_OK;
}

static void mpi_detach(dart__team_t *team, void *base)
{
  MPI_Win_detach(win_of(team)->win, base);
}

/* The unified windows' copies are one: the fence after every path's
 * sync (dart__transport__sync) orders them. */
static dart_ret_t mpi_sync(const char *func)
{
  for (mpi_team_t *w = mpi.teams; w; w = w->next)
    if (w->separate) DART__MPI_CHECK_IN(func, MPI_Win_sync(w->win));
  return DART_OK;
}

/* A team's release (dart__team__on_release): its window, after its
 * segments, which detach from it, have gone. */
static void team_release(dart__team_t *team)
{
  mpi_team_t *w = win_of(team);
  if (w == NULL) return;
  MPI_Win_unlock_all(w->win);
  MPI_Win_free(&w->win);
  atomic_fetch_sub_explicit(&mpi.windows, 1, memory_order_relaxed);
  for (mpi_team_t **link = &mpi.teams; *link; link = &(*link)->next) {
    if (*link == w) {
      *link = w->next;
      break;
    }
  }
  free(w);
  team->paths[DART__PATH_MPI] = NULL;
}

/* MPI's one-sided operations may wait for their target to enter MPI (Open
 * MPI's osc/pt2pt serves them from its progress engine): where a team has
 * a dynamic window, a probe lets it in. It costs ten small transfers. */
static unsigned mpi_poll(void)
{
  if (atomic_load_explicit(&mpi.windows, memory_order_relaxed) > 0) {
    int flag;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, dart__rt.comm, &flag,
               MPI_STATUS_IGNORE);
  }
  return 0;
}
static const dart__progress_source_t mpi_progress = {
    .name = "mpi", .poll = mpi_poll, .costly = true};

/* any host memory: the owner attaches every part others may reach this
 * way to its team's window */
static dart_ret_t mpi_reach(const char *func, const dart__reach_t *q,
                            dart__route_t *r, bool *reached)
{
  (void)func;
  (void)r;
  *reached = !q->device;
  return DART_OK;
}

static dart_ret_t mpi_init(void)
{
  /* added after the release functions of globmem (runtime/init.c), so a
   * team's segments detach before its window goes */
  dart__team__on_release(team_release);
  return dart__progress__add("dart_init", &mpi_progress);
}

static void mpi_fini(void) { dart__progress__remove(&mpi_progress); }

const dart__path_ops_t dart__path_mpi = {
    .info = "mpi (MPI RMA on dynamic windows)",
    .init = mpi_init,
    .fini = mpi_fini,
    .reach = mpi_reach,
    .put = mpi_put,
    .get = mpi_get,
    .contig = mpi_contig,
    .flush = mpi_flush,
    .flush_local = mpi_flush,
    .flush_all = mpi_flush_all,
    .attach = mpi_attach,
    .detach = mpi_detach,
    .sync = mpi_sync,
    .atomic = mpi_atomic,
    .am_open = dart__am__mpi_open,
    .am_close = dart__am__mpi_close,
    .am_send = dart__am__twosided_send,
    .am_poll = dart__am__twosided_poll,
    .am_ran = dart__am__twosided_ran};
