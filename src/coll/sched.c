/*
 * Running collective operations (op.h): the choice of algorithm, MPI's
 * namesakes (non-contiguous types, DART_COLL=mpi), the point-to-point
 * steps on the team's communicator (mpi.c), DART_COLL_CHECK, the queues
 * of handle operations, and their handles. A blocking call waits for MPI
 * in MPI where no progress source needs polling, and polls them
 * otherwise (doc/design.md, "Progress").
 */
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#include "base/env.h"
#include "base/runtime.h"
#include "coll/coll.h"
#include "coll/op.h"
#include "onesided/onesided.h"
#include "progress/progress.h"
#include "transport/transport.h"

#define PHASE_CHECK (-2)
#define PHASE_CHECK_WAIT (-1)
/* turns a blocking call looks again before it serves the sources: about
 * a microsecond */
#define COLL_FAST_TURNS 64
/* allreduces across nodes from this size take MPI's nonblocking one */
#define COLL_NATIVE_ALLREDUCE ((size_t)64 << 10)

bool dart__coll__may_block(const dart__coll_op_t *op)
{
  return op->may_block;
}

bool dart__coll__mpi_done(dart__coll_op_t *op)
{
  if (op->nreqs == 0) return true;
  /* one by one: MPICH's headers bound MPI_Waitall's and MPI_Testall's
   * statuses, which MPI_STATUSES_IGNORE cannot meet (compilers warn);
   * a completed request is MPI_REQUEST_NULL, which tests at once */
  const bool block = dart__coll__may_block(op);
  int done = 1, ret = MPI_SUCCESS;
  for (int i = 0; i < op->nreqs && ret == MPI_SUCCESS; i++) {
    int one = 1;
    ret = block ? MPI_Wait(&op->reqs[i], MPI_STATUS_IGNORE)
                : MPI_Test(&op->reqs[i], &one, MPI_STATUS_IGNORE);
    done &= one;
  }
  if (ret != MPI_SUCCESS) {
    DART_LOG_ERROR_IN(op->func, "waiting for MPI failed (error %d)", ret);
    dart__coll__fail(op, DART_ERR_OTHER);
    done = 1;
  }
  if (done) op->nreqs = 0;
  return done;
}

/* The same choice on every unit of the team: it depends on the call's
 * arguments, the team and the configuration only. */
static coll_algo_t choose(const dart__coll_op_t *op)
{
  const struct dart__coll_team *ct = op->team->coll;
  if (op->team->size == 1) return COLL_ALGO_SELF;
  if (dart__base__config.coll == DART__COLL_MPI) return COLL_ALGO_NATIVE;
  if (!ct->spans && dart__coll__node_takes(op)) return COLL_ALGO_NODE;
  if (ct->spans && dart__coll__hier_takes(op)) return COLL_ALGO_HIER;
  /* reductions of non-contiguous types pack for MPI's; from 4 units,
   * MPI's nonblocking allreduce of large data (its segmented, pipelined
   * algorithms) beats mpi.c's ring, measured: 1.0-1.1x MPI's blocking
   * one against 1.1-2.4x at 64 KiB to 1 MiB */
  const bool large_allreduce =
      op->kind == COLL_ALLREDUCE && op->red.commutes &&
      op->bytes >= COLL_NATIVE_ALLREDUCE && op->team->size >= 4;
  return (op->t == NULL || op->t->contiguous) && !large_allreduce
             ? COLL_ALGO_P2P
             : COLL_ALGO_NATIVE;
}

/* ---- DART_COLL_CHECK: the same call on every unit ---- */

static long long fingerprint(const dart__coll_op_t *op)
{
  /* the v collectives' counts differ by design */
  const bool counted =
      op->kind != COLL_ALLGATHERV && op->kind != COLL_ALLTOALLV;
  uint64_t parts[5] = {(uint64_t)op->kind, (uint64_t)(int64_t)op->root,
                       (uint64_t)op->dtype, (uint64_t)op->redop,
                       counted ? (uint64_t)op->bytes : 0};
  uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a over the words */
  for (int i = 0; i < 5; i++) {
    h ^= parts[i];
    h *= 0x100000001b3ull;
  }
  return (long long)(h >> 1);
}

/* Advances op's check: whether it is over (op->status says how). */
static bool check_advance(dart__coll_op_t *op)
{
  if (op->phase == PHASE_CHECK) {
    long long mine = fingerprint(op);
    op->check[0] = mine;
    op->check[1] = -mine;
    int ret = MPI_Iallreduce(MPI_IN_PLACE, op->check, 2, MPI_LONG_LONG,
                             MPI_MAX, op->team->comm, &op->reqs[0]);
    if (ret != MPI_SUCCESS) {
      DART_LOG_ERROR_IN(op->func, "MPI_Iallreduce for DART_COLL_CHECK "
                        "failed (error %d)", ret);
      dart__coll__fail(op, DART_ERR_OTHER);
      op->phase = 0;
      return true;
    }
    op->nreqs = 1;
    op->phase = PHASE_CHECK_WAIT;
  }
  if (!dart__coll__mpi_done(op)) return false;
  if (op->status == DART_OK && op->check[0] != -op->check[1]) {
    DART_LOG_ERROR_IN(op->func,
                      "team %d: the units did not all call %s with the "
                      "same counts, type, operation and root "
                      "(DART_COLL_CHECK; this unit: %zu elements of type "
                      "%ld, operation %lu, root %d)",
                      op->team->id, op->func, op->nelem, (long)op->dtype,
                      (unsigned long)op->redop, op->root);
    dart__coll__fail(op, DART_ERR_INVAL);
  }
  op->phase = 0;
  return true;
}

/* ---- a team of one ---- */

static void copy_self(dart__coll_op_t *op)
{
  const dart__dtype_t *t = op->t;
  if (t == NULL || op->send == op->recv) return;
  switch (op->kind) {
    case COLL_REDUCE:
    case COLL_ALLREDUCE:
    case COLL_GATHER:
    case COLL_SCATTER:
    case COLL_ALLGATHER:
    case COLL_ALLTOALL:
      if (op->recv != NULL)
        dart__types__dtype_copy(op->recv, t, op->send, t, op->nelem);
      break;
    case COLL_ALLGATHERV:
      memmove((char *)op->recv + op->recvdispls[0] * t->elem_size, op->send,
              op->nsend * t->elem_size);
      break;
    case COLL_ALLTOALLV:
      memmove((char *)op->recv + op->recvdispls[0] * t->elem_size,
              (const char *)op->send + op->senddispls[0] * t->elem_size,
              op->sendcounts[0] * t->elem_size);
      break;
    default:
      break;
  }
}

/* ---- MPI's namesakes on the team's communicator ----
 * Their blocking and nonblocking forms do not match each other, so the
 * form must not depend on what a unit polls: the nonblocking ones always,
 * but for blocking calls under DART_COLL=mpi (comparisons), where every
 * unit takes MPI's blocking ones. */

static bool native_blocking(const dart__coll_op_t *op)
{
  return op->blocking && dart__base__config.coll == DART__COLL_MPI;
}

#define MPI_START(call)                                                \
  do {                                                                 \
    int mpi_ret_ = (call);                                             \
    if (mpi_ret_ != MPI_SUCCESS) {                                     \
      DART_LOG_ERROR_IN(op->func, "%s failed (error %d)", #call,       \
                        mpi_ret_);                                     \
      dart__coll__fail(op, DART_ERR_OTHER);                            \
      return;                                                          \
    }                                                                  \
  } while (0)

/* Reductions of non-contiguous types: packed into scratch first. */
static void mpi_reduce(dart__coll_op_t *op, bool block)
{
  MPI_Comm comm = op->team->comm;
  const bool all = op->kind == COLL_ALLREDUCE;
  const bool gets = all || op->root == op->team->myid;
  const void *send = op->send;
  void *recv = op->recv;
  if (!op->t->contiguous) {
    const dart__dtype_t *elem = dart__types__dtype(op->t->base);
    const size_t len = op->nelem * op->t->elem_size;
    op->scratch = malloc(len > 0 ? 2 * len : 1);
    if (op->scratch == NULL) {
      DART_LOG_ERROR_IN(op->func, "out of memory for %zu bytes", 2 * len);
      dart__coll__fail(op, DART_ERR_NOMEM);
      return;
    }
    dart__types__dtype_copy(op->scratch, elem, op->send, op->t, op->nelem);
    send = op->scratch;
    recv = (char *)op->scratch + len;
  } else if (op->in_place && gets) {
    send = MPI_IN_PLACE;
  }
  MPI_Op mop;
  MPI_Datatype mtype;
  size_t per;
  const dart_ret_t ret = dart__types__op_mpi(
      op->func, op->redop,
      op->t->contiguous ? op->t : dart__types__dtype(op->t->base), &mop,
      &mtype, &per);
  if (ret != DART_OK) {
    dart__coll__fail(op, ret);
    return;
  }
  const int count = (int)(op->nelem / per);
  MPI_Request *req = &op->reqs[0];
  if (all && block)
    MPI_START(MPI_Allreduce(send, recv, count, mtype, mop, comm));
  else if (all)
    MPI_START(MPI_Iallreduce(send, recv, count, mtype, mop, comm, req));
  else if (block)
    MPI_START(MPI_Reduce(send, recv, count, mtype, mop, op->root, comm));
  else
    MPI_START(MPI_Ireduce(send, recv, count, mtype, mop, op->root, comm,
                          req));
  if (!block) op->nreqs = 1;
}

/* Integer counts and displacements for the v collectives where all fit
 * (*fit false otherwise): n arrays of size in scratch. */
static int *int_counts(dart__coll_op_t *op, const size_t *const *arrays,
                       int n, bool *fit)
{
  const int size = op->team->size;
  *fit = true;
  for (int a = 0; a < n; a++)
    for (int u = 0; u < size; u++)
      if (arrays[a][u] > INT_MAX) *fit = false;
  if (!*fit) return NULL;
  int *ints = malloc((size_t)n * size * sizeof *ints);
  if (ints == NULL) {
    DART_LOG_ERROR_IN(op->func, "out of memory for %d counts", n * size);
    dart__coll__fail(op, DART_ERR_NOMEM);
    return NULL;
  }
  for (int a = 0; a < n; a++)
    for (int u = 0; u < size; u++) ints[a * size + u] = (int)arrays[a][u];
  op->scratch = ints;
  return ints;
}

/* Beyond int counts: one message (allgatherv: one bcast) per peer, each
 * described by dart__types__mpi_buf, all in flight together. */
static void mpi_each(dart__coll_op_t *op)
{
  MPI_Comm comm = op->team->comm;
  const int size = op->team->size, me = op->team->myid;
  const size_t es = op->t->elem_size;
  const bool bcasts = op->kind == COLL_ALLGATHERV;
  MPI_Request *reqs = malloc(2 * (size_t)size * sizeof *reqs);
  if (reqs == NULL) {
    DART_LOG_ERROR_IN(op->func, "out of memory for %d requests", 2 * size);
    dart__coll__fail(op, DART_ERR_NOMEM);
    return;
  }
  op->scratch = reqs;
  op->reqs = reqs;
  if (bcasts && !op->in_place)
    memcpy((char *)op->recv + op->recvdispls[me] * es, op->send,
           op->nsend * es);
  for (int u = 0; u < size; u++) {
    const size_t counts[2] = {bcasts ? op->recvcounts[u] : op->sendcounts[u],
                              bcasts ? 0 : op->recvcounts[u]};
    for (int dir = 0; dir < (bcasts ? 1 : 2); dir++) {
      dart__mpi_buf_t b;
      int ret = dart__types__mpi_buf(op->func, op->t, counts[dir], &b);
      if (ret != DART_OK) {
        dart__coll__fail(op, ret);
        return; /* the started ones are waited for */
      }
      int mret;
      MPI_Request *req = &reqs[op->nreqs];
      if (bcasts)
        mret = MPI_Ibcast((char *)op->recv + op->recvdispls[u] * es, b.count,
                          b.type, u, comm, req);
      else if (dir == 0)
        mret = MPI_Isend((const char *)op->send + op->senddispls[u] * es,
                         b.count, b.type, u, 0, comm, req);
      else
        mret = MPI_Irecv((char *)op->recv + op->recvdispls[u] * es, b.count,
                         b.type, u, 0, comm, req);
      dart__types__mpi_buf_free(&b); /* MPI keeps what it needs */
      if (mret != MPI_SUCCESS) {
        DART_LOG_ERROR_IN(op->func, "starting MPI's message %d failed "
                          "(error %d)", op->nreqs, mret);
        dart__coll__fail(op, DART_ERR_OTHER);
        return;
      }
      op->nreqs++;
    }
  }
}

static void native_start(dart__coll_op_t *op)
{
  MPI_Comm comm = op->team->comm;
  const bool block = native_blocking(op);
  MPI_Request *req = &op->reqs[0];
  const int root = op->root;
  if (op->kind == COLL_REDUCE || op->kind == COLL_ALLREDUCE) {
    mpi_reduce(op, block);
    return;
  }
  if (op->kind == COLL_BARRIER) {
    if (block) MPI_START(MPI_Barrier(comm));
    else MPI_START(MPI_Ibarrier(comm, req));
    op->nreqs = !block;
    return;
  }
  if (op->kind == COLL_ALLGATHERV || op->kind == COLL_ALLTOALLV) {
    const bool v2 = op->kind == COLL_ALLTOALLV;
    const size_t *arrays[4] = {op->recvcounts, op->recvdispls,
                               op->sendcounts, op->senddispls};
    bool fit;
    int *c = int_counts(op, arrays, v2 ? 4 : 2, &fit);
    if (op->status != DART_OK) return;
    if (!fit) {
      mpi_each(op);
      return;
    }
    const int size = op->team->size;
    MPI_Datatype type = op->t->mpi_elem;
    if (v2 && block)
      MPI_START(MPI_Alltoallv(op->send, c + 2 * size, c + 3 * size, type,
                              op->recv, c, c + size, type, comm));
    else if (v2)
      MPI_START(MPI_Ialltoallv(op->send, c + 2 * size, c + 3 * size, type,
                               op->recv, c, c + size, type, comm, req));
    else if (block)
      MPI_START(MPI_Allgatherv(op->in_place ? MPI_IN_PLACE : op->send,
                               (int)op->nsend, type, op->recv, c, c + size,
                               type, comm));
    else
      MPI_START(MPI_Iallgatherv(op->in_place ? MPI_IN_PLACE : op->send,
                                (int)op->nsend, type, op->recv, c, c + size,
                                type, comm, req));
    op->nreqs = !block;
    return;
  }
  /* the same type and count on both sides: nelem per unit */
  dart_ret_t ret = dart__types__mpi_buf(op->func, op->t, op->nelem,
                                        &op->mpi[0]);
  if (ret != DART_OK) {
    dart__coll__fail(op, ret);
    return;
  }
  const int n = op->mpi[0].count;
  MPI_Datatype type = op->mpi[0].type;
  void *recv = op->recv;
  const void *send = op->send;
  switch (op->kind) {
    case COLL_BCAST:
      if (block) MPI_START(MPI_Bcast(recv, n, type, root, comm));
      else MPI_START(MPI_Ibcast(recv, n, type, root, comm, req));
      break;
    case COLL_SCATTER:
      if (block)
        MPI_START(MPI_Scatter(send, n, type, recv, n, type, root, comm));
      else
        MPI_START(MPI_Iscatter(send, n, type, recv, n, type, root, comm,
                               req));
      break;
    case COLL_GATHER:
      if (block)
        MPI_START(MPI_Gather(send, n, type, recv, n, type, root, comm));
      else
        MPI_START(MPI_Igather(send, n, type, recv, n, type, root, comm,
                              req));
      break;
    case COLL_ALLGATHER:
      if (block) MPI_START(MPI_Allgather(send, n, type, recv, n, type, comm));
      else
        MPI_START(MPI_Iallgather(send, n, type, recv, n, type, comm, req));
      break;
    case COLL_ALLTOALL:
      if (block) MPI_START(MPI_Alltoall(send, n, type, recv, n, type, comm));
      else
        MPI_START(MPI_Ialltoall(send, n, type, recv, n, type, comm, req));
      break;
    default:
      break;
  }
  op->nreqs = !block;
}

static bool native_advance(dart__coll_op_t *op)
{
  if (op->phase == 0) {
    native_start(op);
    op->phase = 1;
  }
  return dart__coll__mpi_done(op);
}

/* ---- point-to-point messages on the team's communicator (mpi.c) ---- */

/* Room for a reduction's running result and what comes in: the team's
 * scratch, or allocated for this operation. */
static unsigned char *p2p_room(dart__coll_op_t *op)
{
  if (op->bytes <= COLL_SMALL) return op->team->coll->scratch;
  if (op->scratch == NULL) op->scratch = malloc(2 * op->bytes);
  if (op->scratch == NULL) {
    DART_LOG_ERROR_IN(op->func, "out of memory for %zu bytes",
                      2 * op->bytes);
    dart__coll__fail(op, DART_ERR_NOMEM);
  }
  return op->scratch;
}

static bool p2p_advance(dart__coll_op_t *op)
{
  MPI_Comm comm = op->team->comm;
  const size_t len = op->bytes;
  switch (op->kind) {
    case COLL_BARRIER:
      return dart__coll__p2p_barrier(op, comm);
    case COLL_BCAST:
      return dart__coll__p2p_bcast(op, comm, op->recv, len, op->root);
    case COLL_ALLREDUCE:
    case COLL_REDUCE: {
      unsigned char *room = p2p_room(op);
      if (room == NULL) return true;
      const size_t half = len <= COLL_SMALL ? COLL_SMALL : len;
      const bool all = op->kind == COLL_ALLREDUCE;
      /* the running result: recvbuf for allreduce and a reduce's root
       * that combines in place (the operation commutes), sendbuf where
       * the unit only sends it (a leaf of mpi.c's reduce tree), else the
       * room */
      const int size = op->team->size;
      const int base = op->red.commutes ? op->root : 0;
      const int vr = (op->team->myid - base + size) % size;
      void *acc = all || (op->red.commutes && vr == 0) ? op->recv
                  : vr % 2 == 1 || vr + 1 == size     ? (void *)op->send
                                                       : room;
      if (op->phase == 0) {
        if (acc != op->send) memcpy(acc, op->send, len);
        op->phase = 1;
      }
      if (all)
        return dart__coll__p2p_allreduce(op, comm, acc, room + half, len);
      return dart__coll__p2p_reduce(op, comm, acc, room + half, len,
                                    op->root, op->recv);
    }
    default:
      return dart__coll__p2p_exchange(op);
  }
}

/* ---- one operation ---- */

/* What an operation leaves behind once it finished. */
static void finish(dart__coll_op_t *op)
{
  if ((op->kind == COLL_REDUCE || op->kind == COLL_ALLREDUCE) &&
      op->algo == COLL_ALGO_NATIVE && !op->t->contiguous &&
      op->scratch != NULL && op->status == DART_OK &&
      (op->kind == COLL_ALLREDUCE || op->root == op->team->myid))
    dart__types__dtype_copy(op->recv, op->t,
                            (char *)op->scratch +
                                op->nelem * op->t->elem_size,
                            dart__types__dtype(op->t->base), op->nelem);
  for (int i = 0; i < 2; i++) dart__types__mpi_buf_free(&op->mpi[i]);
  free(op->scratch);
  op->scratch = NULL;
  op->reqs = op->req_inline;
  if (op->kind == COLL_BARRIER) {
    /* what others stored before the barrier, for our direct loads: they
     * fenced it before they arrived, and reading their arrival acquired
     * it; MPI's separate windows also want their sync */
    dart_ret_t ret = dart__transport__sync(op->func, false);
    if (ret != DART_OK) dart__coll__fail(op, ret);
  }
  op->done = true;
}

static void begin(dart__coll_op_t *op)
{
  struct dart__coll_team *ct = op->team->coll;
  op->seq = ++ct->seq;
  op->algo = choose(op);
  /* what a blocking call must serve while it waits does not change
   * before it returns */
  op->may_block = op->blocking && !dart__progress__must_poll();
  op->step = op->last_step = 0;
  op->peer = op->nreqs = 0;
  op->p2p = (dart__coll_p2p_t){0};
  op->reqs = op->req_inline;
  op->mpi[0].owned = op->mpi[1].owned = false;
  op->scratch = NULL;
  op->status = DART_OK;
  op->done = false;
  op->phase = dart__base__config.coll_check && op->algo != COLL_ALGO_SELF
                  ? PHASE_CHECK
                  : 0;
}

/* Does what op can do now: whether it finished. */
static bool advance(dart__coll_op_t *op)
{
  if (op->phase < 0) {
    if (!check_advance(op)) return false;
    if (op->status != DART_OK) {
      finish(op);
      return true;
    }
  }
  /* an algorithm that finds a failure still ends its part: the others
   * depend on it */
  bool finished = false;
  switch (op->algo) {
    case COLL_ALGO_SELF:
      copy_self(op);
      finished = true;
      break;
    case COLL_ALGO_NATIVE:
      finished = native_advance(op);
      break;
    case COLL_ALGO_P2P:
      finished = p2p_advance(op);
      break;
    case COLL_ALGO_NODE:
      finished = dart__coll__node_advance(op);
      break;
    case COLL_ALGO_HIER:
      finished = dart__coll__hier_advance(op);
      break;
  }
  /* a failure with MPI requests in flight waits for them */
  if (finished && op->nreqs > 0) {
    if (!dart__coll__mpi_done(op)) return false;
  }
  if (finished) finish(op);
  return finished;
}

/* ---- the queues of handle operations ----
 *
 * A team's queue is advanced by its own calls (dart_test/dart_wait on its
 * handles, its collectives) and, as a progress source, in every wait of
 * the runtime and by the progress thread: like MPI's, a handle collective
 * progresses while its unit waits for anything. Each queue has a lock,
 * taken where it is not busy elsewhere (the source only tries it); the
 * teams that ever queued one are listed for the source. A finished handle
 * operation goes to whoever comes last of its queue and its handle's
 * dart_handle_free (handoff), so that neither frees it under the other.
 */

enum { HANDOFF_QUEUED, HANDOFF_DONE, HANDOFF_DROPPED };

static atomic_int queued_ops; /* in every team's queue */
static mtx_t registry_lock;
static struct dart__coll_team *registry; /* linked by next_listed */

static void op_free(dart__coll_op_t *op) { free(op); }

static void queue_lock(struct dart__coll_team *ct)
{
  while (atomic_flag_test_and_set_explicit(&ct->queue_busy,
                                           memory_order_acquire))
    sched_yield();
}

static bool queue_trylock(struct dart__coll_team *ct)
{
  return !atomic_flag_test_and_set_explicit(&ct->queue_busy,
                                            memory_order_acquire);
}

static void queue_unlock(struct dart__coll_team *ct)
{
  atomic_flag_clear_explicit(&ct->queue_busy, memory_order_release);
}

/* Advances the team's queue in order as far as it goes without waiting
 * (its lock held): how many finished. */
static unsigned queue_advance(struct dart__coll_team *ct)
{
  unsigned finished = 0;
  while (ct->head != NULL) {
    dart__coll_op_t *op = ct->head;
    if (op->seq == 0) begin(op);
    if (!advance(op)) break;
    ct->head = op->next;
    if (ct->head == NULL) ct->tail = NULL;
    atomic_fetch_sub_explicit(&ct->queued, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&queued_ops, 1, memory_order_relaxed);
    finished++;
    if (atomic_exchange_explicit(&op->handoff, HANDOFF_DONE,
                                 memory_order_acq_rel) == HANDOFF_DROPPED)
      op_free(op); /* nobody waits for it */
  }
  return finished;
}

static void queue_drain(struct dart__coll_team *ct)
{
  unsigned spins = 0;
  queue_lock(ct);
  while (queue_advance(ct), ct->head != NULL) {
    queue_unlock(ct);
    dart__progress__wait_turn(&spins);
    queue_lock(ct);
  }
  queue_unlock(ct);
}

/* The progress source: every queue that nobody else advances now. */
static unsigned queues_poll(void)
{
  if (atomic_load_explicit(&queued_ops, memory_order_relaxed) == 0)
    return 0;
  if (mtx_trylock(&registry_lock) != thrd_success) return 0;
  unsigned finished = 0;
  for (struct dart__coll_team *ct = registry; ct != NULL;
       ct = ct->next_listed) {
    if (atomic_load_explicit(&ct->queued, memory_order_relaxed) == 0 ||
        !queue_trylock(ct))
      continue;
    finished += queue_advance(ct);
    queue_unlock(ct);
  }
  mtx_unlock(&registry_lock);
  return finished;
}

/* A wait inside MPI leaves queued collectives unserved. */
static bool queues_outside_mpi(void)
{
  return atomic_load_explicit(&queued_ops, memory_order_relaxed) > 0;
}

static const dart__progress_source_t queues_source = {
    .name = "collectives", .poll = queues_poll,
    .outside_mpi = queues_outside_mpi};

dart_ret_t dart__coll__run(dart__coll_op_t *op)
{
  struct dart__coll_team *ct = op->team->coll;
  if (atomic_load_explicit(&ct->queued, memory_order_relaxed) != 0)
    queue_drain(ct);
  op->blocking = true;
  op->handle = NULL;
  begin(op);
  unsigned spins = 0, fast = 0;
  while (!advance(op)) {
    /* a node peer's arrival is one cache line away: look again at once
     * for a while before the waits that poll every progress source (and
     * at once give the core away where units outnumber the CPUs) */
    if (fast < COLL_FAST_TURNS && !dart__rt.oversubscribed) {
      fast++;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
      continue;
    }
    dart__progress__wait_turn(&spins);
  }
  return op->status;
}

static dart_ret_t handle_complete(const char *func, dart_handle_t h,
                                  bool wait, bool *done)
{
  (void)func;
  dart__coll_op_t *op = h->coll;
  if (op == NULL) { /* reported by an earlier wait */
    *done = true;
    return DART_OK;
  }
  if (atomic_load_explicit(&op->handoff, memory_order_acquire) !=
      HANDOFF_DONE) {
    /* still queued: its team is there */
    struct dart__coll_team *ct = op->team->coll;
    unsigned spins = 0;
    queue_lock(ct);
    queue_advance(ct);
    while (wait && atomic_load_explicit(&op->handoff, memory_order_acquire) !=
                       HANDOFF_DONE) {
      queue_unlock(ct);
      dart__progress__wait_turn(&spins);
      queue_lock(ct);
      queue_advance(ct);
    }
    queue_unlock(ct);
  }
  *done = atomic_load_explicit(&op->handoff, memory_order_acquire) ==
          HANDOFF_DONE;
  if (!*done) {
    /* a test serves the others' operations too: a unit that tests in a
     * loop may be what they wait for */
    dart__progress__serve();
    return DART_OK;
  }
  if (!wait) return DART_OK;
  dart_ret_t ret = op->status;
  h->coll = NULL;
  op_free(op);
  return ret;
}

static void handle_drop(dart_handle_t h)
{
  dart__coll_op_t *op = h->coll;
  if (op == NULL) return;
  h->coll = NULL;
  if (atomic_exchange_explicit(&op->handoff, HANDOFF_DROPPED,
                               memory_order_acq_rel) == HANDOFF_DONE)
    op_free(op); /* else its queue frees it when it finishes */
}

dart_ret_t dart__coll__start_handle(dart__coll_op_t *template,
                                    dart_handle_t *handle)
{
  dart__team_t *team = template->team;
  struct dart__coll_team *ct = team->coll;
  dart__coll_op_t *op = malloc(sizeof *op);
  if (op == NULL) {
    DART_LOG_ERROR_IN(template->func, "out of memory for an operation");
    return DART_ERR_NOMEM;
  }
  dart_handle_t h = dart__onesided__handle_new(team, team->myid,
                                               DART__PATH_SELF, false);
  if (h == NULL) {
    free(op);
    DART_LOG_ERROR_IN(template->func, "out of memory for a handle");
    return DART_ERR_NOMEM;
  }
  *op = *template;
  op->blocking = false;
  op->seq = 0; /* begun where it reaches the queue's head */
  op->done = false;
  atomic_init(&op->handoff, HANDOFF_QUEUED);
  op->handle = h;
  op->next = NULL;
  h->complete = handle_complete;
  h->drop = handle_drop;
  h->coll = op;
  queue_lock(ct);
  if (!ct->listed) {
    mtx_lock(&registry_lock);
    ct->next_listed = registry;
    registry = ct;
    ct->listed = true;
    mtx_unlock(&registry_lock);
  }
  if (ct->tail != NULL) ct->tail->next = op;
  else ct->head = op;
  ct->tail = op;
  atomic_fetch_add_explicit(&ct->queued, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&queued_ops, 1, memory_order_relaxed);
  /* start it now where the queue lets it: its data is posted at once */
  queue_advance(ct);
  queue_unlock(ct);
  *handle = h;
  return DART_OK;
}

void dart__coll__forget(dart__team_t *team)
{
  struct dart__coll_team *ct = team->coll;
  queue_drain(ct);
  if (!ct->listed) return;
  mtx_lock(&registry_lock);
  for (struct dart__coll_team **link = &registry; *link != NULL;
       link = &(*link)->next_listed) {
    if (*link == ct) {
      *link = ct->next_listed;
      break;
    }
  }
  mtx_unlock(&registry_lock);
  ct->listed = false;
}

dart_ret_t dart__coll__init(void)
{
  static const dart__team__part_t part = {.setup = dart__coll__team_setup,
                                          .undo = dart__coll__team_undo};
  if (mtx_init(&registry_lock, mtx_plain) != thrd_success) {
    DART_LOG_ERROR_IN("dart_init", "cannot create a mutex");
    return DART_ERR_OTHER;
  }
  dart_ret_t ret = dart__progress__add("dart_init", &queues_source);
  if (ret != DART_OK) {
    mtx_destroy(&registry_lock);
    return ret;
  }
  registry = NULL;
  atomic_store(&queued_ops, 0);
  dart__team__add_part(&part);
  return DART_OK;
}

void dart__coll__fini(void)
{
  dart__progress__remove(&queues_source);
  mtx_destroy(&registry_lock);
}
