/*
 * The MPI path: RMA on the team's dynamic window (units on other nodes, and
 * memory node peers cannot load/store). Transfers are cut into pieces of at
 * most 1 GiB, so counts fit MPI's int at any size.
 *
 * Gets and local flushes complete with MPI_Win_flush: Open MPI 4.1's
 * osc/pt2pt can wait forever in MPI_Win_flush_local while a get is
 * outstanding, and remote completion implies local completion.
 */
#include <string.h>

#include "base/runtime.h"
#include "onesided/onesided.h"

#define PIECE_BYTES ((size_t)1 << 30)

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

/* The end of a started transfer to unit of team: complete for a blocking
 * one, else owed to the unit's next flush (and handed out as h). */
static dart_ret_t finish(const char *func, dart__team_t *team, int unit,
                         dart__mode_t mode, dart_handle_t h,
                         dart_handle_t *handle)
{
  if (mode == DART__MODE_BLOCKING) {
    DART__MPI_CHECK_IN(func, MPI_Win_flush(unit, team->win));
  } else {
    dart__team__mark_dirty(team, unit);
    if (h) *handle = h;
  }
  return DART_OK;
}

static dart_ret_t mpi_contig(const char *func, const dart__target_t *t,
                             void *local, size_t bytes, bool is_put,
                             dart__mode_t mode, dart_handle_t *handle)
{
  dart__team_t *team = t->team;
  dart_handle_t h = NULL;
  if (mode == DART__MODE_HANDLE &&
      (h = dart__onesided__handle_new(team, t->unit, DART__PATH_MPI,
                                      is_put)) == NULL)
    return DART_ERR_NOMEM;
  MPI_Aint at = t->route->disp + (MPI_Aint)t->offset;
  int count = (int)bytes;
  int ret = is_put ? MPI_Put(local, count, MPI_BYTE, t->unit, at, count,
                             MPI_BYTE, team->win)
                   : MPI_Get(local, count, MPI_BYTE, t->unit, at, count,
                             MPI_BYTE, team->win);
  if (ret != MPI_SUCCESS) {
    DART_LOG_ERROR_IN(func, "MPI_%s to unit %d of team %d failed",
                      is_put ? "Put" : "Get", t->unit, team->id);
    if (h) dart__onesided__handle_release(h);
    return DART_ERR_OTHER;
  }
  return finish(func, team, t->unit, mode, h, handle);
}

static dart_ret_t mpi_xfer(const dart__xfer_t *x, bool is_put,
                           dart__mode_t mode, dart_handle_t *handle)
{
  const dart__target_t *t = x->target;
  dart__team_t *team = t->team;
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
                               rtype, team->win)
                     : MPI_Get(local, lcount, ltype, t->unit, at, rcount,
                               rtype, team->win);
    if (ret != MPI_SUCCESS) {
      DART_LOG_ERROR_IN(x->func, "MPI_%s to unit %d of team %d failed",
                        is_put ? "Put" : "Get", t->unit, team->id);
      if (h) dart__onesided__handle_release(h);
      return DART_ERR_OTHER;
    }
  }
  return finish(x->func, team, t->unit, mode, h, handle);
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
  dart__team__unmark_dirty(team, unit);
  DART__MPI_CHECK_IN(func, MPI_Win_flush(unit, team->win));
  /* direct loads and stores of our own part against others' RMA */
  return dart__team__sync_window(team);
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
  MPI_Win win = t->team->win;
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

static dart_ret_t mpi_atomic(const dart__atomic_t *a)
{
  const dart__target_t *t = a->target;
  MPI_Win win = t->team->win;
  if (__builtin_expect(!dart__rt.mpi_cas_ok, 0)) {
    DART_LOG_ERROR_IN(a->func, "no atomics through MPI: its one-sided "
                               "component crashes in MPI_Compare_and_swap "
                               "(set OMPI_MCA_osc=pt2pt,sm)");
    return DART_ERR_OTHER;
  }
  if (a->kind == DART__ATOMIC_CAS) {
    DART__MPI_CHECK_IN(a->func, MPI_Compare_and_swap(
        a->values, a->compare, a->result, cas_type(a->size), t->unit,
        t->route->disp + (MPI_Aint)t->offset, win));
    DART__MPI_CHECK_IN(a->func, MPI_Win_flush(t->unit, win));
  } else if (a->kind == DART__ATOMIC_FETCH_OP ||
             a->op != DART_OP_NO_OP) {
    for (size_t first = 0; first < a->nelem; first += RMW_BLOCK) {
      size_t n = a->nelem - first < RMW_BLOCK ? a->nelem - first : RMW_BLOCK;
      dart_ret_t ret = mpi_rmw_block(a, first, n);
      if (ret != DART_OK) return ret;
    }
  }
  /* an atomic often publishes data (a flag): direct loads of our own part
   * that follow it must see what came before it */
  return dart__team__sync_window(t->team);
}

static dart_ret_t mpi_flush_all(const char *func, dart__team_t *team)
{
  (void)func; /* dart__team__flush_window logs its failures */
  return team ? dart__team__flush_window(team) : dart__team__flush_windows();
}


/* MPI's one-sided operations may wait for their target to enter MPI (Open
 * MPI's osc/pt2pt serves them from its progress engine): where a team has
 * a dynamic window, a probe lets it in. It costs ten small transfers. */
static unsigned mpi_poll(void)
{
  if (atomic_load_explicit(&dart__team__windows, memory_order_relaxed) > 0) {
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
    .atomic = mpi_atomic};
