/*
 * The CMA path: node peers' private memory (registered user memory, grown
 * dart_memalloc chunks), which no shared window holds, copied by the kernel
 * with process_vm_readv/process_vm_writev in one call and no copy through
 * a transport's buffers. Complete on return, like the shared-memory paths.
 *
 * A process may be forbidden to use it (ptrace rules, containers):
 * cma_init tries it between node peers and, where any unit fails,
 * leaves that memory to the remote transport, with a log line saying why.
 * DART_CMA=0 does the same on request. CMA carries no atomics: a segment
 * with CMA routes takes the remote transport's atomics (segment.c).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/env.h"
#include "base/fence.h"
#include "base/runtime.h"
#include "onesided/onesided.h"

/* iovecs per system call */
#define CMA_IOVS 64

static struct {
  bool usable;
  pid_t *pids; /* per global unit */
} cma;

static bool cma_usable(void) { return cma.usable; }

/* Moves bytes of n pieces between our iov and unit's rem; a call may move
 * less than asked, so it goes on from where the kernel stopped. */
static dart_ret_t cma_move(const char *func, bool is_put, int unit,
                           struct iovec *iov, struct iovec *rem, size_t n)
{
  size_t first = 0;
  while (first < n) {
    ssize_t moved = is_put ? process_vm_writev(cma.pids[unit], iov + first,
                                               n - first, rem + first,
                                               n - first, 0)
                           : process_vm_readv(cma.pids[unit], iov + first,
                                              n - first, rem + first,
                                              n - first, 0);
    if (moved <= 0) {
      DART_LOG_ERROR_IN(func, "%s of unit %d's memory failed: %s",
                        is_put ? "process_vm_writev" : "process_vm_readv",
                        unit, moved < 0 ? strerror(errno) : "nothing moved");
      return DART_ERR_OTHER;
    }
    /* both sides hold the same pieces: skip what was moved */
    size_t left = (size_t)moved;
    while (left > 0 && left >= iov[first].iov_len) {
      left -= iov[first].iov_len;
      first++;
    }
    if (left > 0) {
      iov[first].iov_base = (char *)iov[first].iov_base + left;
      iov[first].iov_len -= left;
      rem[first].iov_base = (char *)rem[first].iov_base + left;
      rem[first].iov_len -= left;
    }
  }
  return DART_OK;
}

typedef struct {
  const char *func;
  bool is_put;
  int unit;
  char *local;
  uint64_t remote;
  size_t es;
  size_t n;
  struct iovec iov[CMA_IOVS], rem[CMA_IOVS];
} batch_t;

static int add_run(void *ctx, size_t dst_at, size_t src_at, size_t n)
{
  batch_t *b = ctx;
  size_t local_at = b->is_put ? src_at : dst_at;
  size_t remote_at = b->is_put ? dst_at : src_at;
  b->iov[b->n].iov_base = b->local + local_at * b->es;
  b->rem[b->n].iov_base = (void *)(uintptr_t)(b->remote + remote_at * b->es);
  b->iov[b->n].iov_len = b->rem[b->n].iov_len = n * b->es;
  if (++b->n < CMA_IOVS) return 0;
  int ret =
      cma_move(b->func, b->is_put, b->unit, b->iov, b->rem, b->n) != DART_OK;
  b->n = 0;
  return ret;
}

static dart_ret_t cma_xfer(const dart__xfer_t *x, bool is_put,
                           dart__mode_t mode, dart_handle_t *handle)
{
  const dart__target_t *t = x->target;
  batch_t b = {.func = x->func,
               .is_put = is_put,
               .unit = t->team->members[t->unit],
               .local = x->local,
               .remote = t->route->addr + t->offset,
               .es = x->local_t->elem_size,
               .n = 0};
  int failed = is_put ? dart__types__dtype_runs(x->remote_t, x->local_t,
                                                x->nelem, add_run, &b)
                      : dart__types__dtype_runs(x->local_t, x->remote_t,
                                                x->nelem, add_run, &b);
  if (failed || (b.n > 0 && cma_move(x->func, is_put, b.unit, b.iov, b.rem,
                                     b.n) != DART_OK))
    return DART_ERR_OTHER;
  if (mode == DART__MODE_HANDLE) *handle = DART_HANDLE_NULL;
  return DART_OK;
}

static dart_ret_t cma_contig(const char *func, const dart__target_t *t,
                             void *local, size_t bytes, bool is_put,
                             dart__mode_t mode, dart_handle_t *handle)
{
  struct iovec iov = {.iov_base = local, .iov_len = bytes};
  struct iovec rem = {
      .iov_base = (void *)(uintptr_t)(t->route->addr + t->offset),
      .iov_len = bytes};
  /* complete on return, and a failed one leaves a handle that waits for
   * nothing (as routed_transfer's) */
  if (mode == DART__MODE_HANDLE) *handle = DART_HANDLE_NULL;
  return cma_move(func, is_put, t->team->members[t->unit], &iov, &rem, 1);
}

static dart_ret_t cma_put(const dart__xfer_t *x, dart__mode_t mode,
                          dart_handle_t *handle)
{
  return cma_xfer(x, true, mode, handle);
}

static dart_ret_t cma_get(const dart__xfer_t *x, dart__mode_t mode,
                          dart_handle_t *handle)
{
  return cma_xfer(x, false, mode, handle);
}

/* The kernel has copied on return; a flush orders it with what follows. */
static dart_ret_t cma_flush(const char *func, dart__team_t *team,
                            int unit)
{
  (void)func;
  (void)team;
  (void)unit;
  dart__base__fence();
  return DART_OK;
}


/* What a peer reads from us to find out whether CMA works. */
static const uint64_t probe = UINT64_C(0x434d4150524f4245);

static dart_ret_t cma_init(void)
{
  const int size = dart__rt.size;
  struct {
    int64_t pid;
    uint64_t probe;
  } mine = {getpid(), (uint64_t)(uintptr_t)&probe},
    *all = malloc((size_t)size * sizeof *all);
  cma.pids = malloc((size_t)size * sizeof *cma.pids);
  if (all == NULL || cma.pids == NULL) {
    free(all);
    free(cma.pids);
    cma.pids = NULL;
    return DART_ERR_NOMEM;
  }
  if (MPI_Allgather(&mine, 2, MPI_INT64_T, all, 2, MPI_INT64_T,
                    dart__rt.comm) != MPI_SUCCESS) {
    DART_LOG_ERROR_IN("dart_init", "exchanging process ids failed");
    free(all);
    free(cma.pids);
    cma.pids = NULL;
    return DART_ERR_OTHER;
  }
  for (int u = 0; u < size; u++) cma.pids[u] = (pid_t)all[u].pid;
  /* read the probe of the next unit on our node, if there is one */
  int ok = 1, all_ok = 0, peer = -1;
  for (int i = 1; i < size && peer < 0; i++) {
    int u = (dart__rt.myid + i) % size;
    if (dart__rt.node_of[u] == dart__rt.my_node) peer = u;
  }
  if (!dart__base__config.cma) {
    ok = 0;
  } else if (peer >= 0) {
    uint64_t seen = 0;
    struct iovec iov = {&seen, sizeof seen};
    struct iovec rem = {(void *)(uintptr_t)all[peer].probe, sizeof seen};
    if (process_vm_readv(cma.pids[peer], &iov, 1, &rem, 1, 0) !=
            (ssize_t)sizeof seen ||
        seen != probe) {
      DART_LOG_INFO("process_vm_readv of unit %d failed: %s", peer,
                    strerror(errno));
      ok = 0;
    }
  }
  free(all);
  if (MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, dart__rt.comm) !=
      MPI_SUCCESS) {
    DART_LOG_ERROR_IN("dart_init", "MPI_Allreduce failed");
    free(cma.pids);
    cma.pids = NULL;
    return DART_ERR_OTHER;
  }
  cma.usable = all_ok;
  if (!all_ok && dart__base__config.cma && dart__rt.myid == 0)
    DART_LOG_WARN("CMA (process_vm_readv) is not permitted between node "
                  "peers: their private memory goes through %s",
                  dart__rt.remote_path == DART__PATH_UCX ? "UCX" : "MPI");
  return DART_OK;
}

/* a node peer's host memory in no shared window */
static dart_ret_t cma_reach(const char *func, const dart__reach_t *q,
                            dart__route_t *r, bool *reached)
{
  (void)func;
  (void)r;
  *reached = !q->device && q->unit != q->team->myid &&
             dart__team__shm_peer(q->team, q->unit);
  return DART_OK;
}

static void cma_fini(void)
{
  free(cma.pids);
  cma.pids = NULL;
  cma.usable = false;
}

/* complete on return: no flush_all; no atomics (routes of registered
 * memory take the remote transport's) */
const dart__path_ops_t dart__path_cma = {
    .info = "cma (process_vm_readv/writev)",
    .init = cma_init,
    .fini = cma_fini,
    .usable = cma_usable,
    .reach = cma_reach,
    .put = cma_put,
    .get = cma_get,
    .contig = cma_contig,
    .flush = cma_flush,
    .flush_local = cma_flush};
