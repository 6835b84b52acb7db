/*
 * The collectives' steps across nodes, as MPI point-to-point messages on
 * a communicator (the team's, or its node leaders').
 *
 * Why not MPI's collectives: a unit must wait by polling the progress
 * sources where others may need it (UCX, active messages, queued handle
 * collectives, staging), and may block in MPI where none do; that differs
 * between units and over time. MPI's blocking and nonblocking collectives
 * do not match each other, and its nonblocking ones (libnbc) take 1.5-3x
 * its blocking ones; messages match however each side waits for them. So
 * these are the classic algorithms, each a state machine that goes as far
 * as it can without waiting:
 *   barrier    dissemination (Hensgen, Finkel and Manber)
 *   bcast      binomial tree from the root
 *   reduce     binomial tree to the root; where the operation does not
 *              commute, to rank 0 in rank order, then to the root
 *   allreduce  recursive doubling, odd units of the first 2 * (P - 2^k)
 *              folded in first (Rabenseifner, Thakur: MPICH's); from
 *              64 KiB, where the operation commutes, a ring
 *   others     every message posted at once (linear)
 * The reductions combine blocks of consecutive ranks, lower block first,
 * so operations that do not commute see the team's order, and the two
 * partners of a round compute the same bits.
 *
 * One tag serves all: a team runs one collective at a time on each of
 * its communicators, its messages between two units go in one order, and
 * MPI does not let them overtake each other.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "coll/op.h"

#define P2P_TAG 0

/* Posts a send (send) or receive of len bytes at buf with peer. */
static bool post(dart__coll_op_t *op, MPI_Comm comm, bool send, void *buf,
                 size_t len, int peer)
{
  dart__mpi_buf_t b = {MPI_BYTE, (int)len, false};
  if (len > INT_MAX) {
    dart_ret_t ret = dart__types__mpi_buf(
        op->func, dart__types__dtype(DART_TYPE_BYTE), len, &b);
    if (ret != DART_OK) {
      dart__coll__fail(op, ret);
      return false;
    }
  }
  MPI_Request *req = &op->reqs[op->nreqs];
  int mret = send ? MPI_Isend(buf, b.count, b.type, peer, P2P_TAG, comm, req)
                  : MPI_Irecv(buf, b.count, b.type, peer, P2P_TAG, comm, req);
  dart__types__mpi_buf_free(&b); /* MPI keeps what it needs */
  if (mret != MPI_SUCCESS) {
    DART_LOG_ERROR_IN(op->func, "%s unit %d failed (error %d)",
                      send ? "MPI_Isend to" : "MPI_Irecv from", peer, mret);
    dart__coll__fail(op, DART_ERR_OTHER);
    return false;
  }
  op->nreqs++;
  return true;
}

/* This unit's rank and the size of comm: the team's communicator, or
 * its node leaders' (whose the team keeps). */
static void ranks(const dart__coll_op_t *op, MPI_Comm comm, int *rank,
                  int *size)
{
  const struct dart__coll_team *ct = op->team->coll;
  if (comm == op->team->comm) {
    *rank = op->team->myid;
    *size = op->team->size;
  } else {
    *rank = ct->leader_rank;
    *size = ct->leaders_size;
  }
}

/* Runs the reduction: inout = in op inout over len bytes. */
static void combine(const dart__coll_op_t *op, const void *in, void *inout,
                    size_t len)
{
  op->red.fn(in, inout, len / op->t->elem_size, op->red.ctx);
}

bool dart__coll__p2p_barrier(dart__coll_op_t *op, MPI_Comm comm)
{
  int rank, size;
  ranks(op, comm, &rank, &size);
  dart__coll_p2p_t *s = &op->p2p;
  if (s->mask == 0) s->mask = 1;
  for (; s->mask < size; s->mask <<= 1) {
    if (!s->posted) {
      if (!post(op, comm, false, NULL, 0, (rank - s->mask + size) % size) ||
          !post(op, comm, true, NULL, 0, (rank + s->mask) % size))
        return true;
      s->posted = true;
    }
    if (!dart__coll__mpi_done(op)) return false;
    s->posted = false;
  }
  return true;
}

bool dart__coll__p2p_bcast(dart__coll_op_t *op, MPI_Comm comm, void *buf,
                           size_t len, int root)
{
  int rank, size;
  ranks(op, comm, &rank, &size);
  dart__coll_p2p_t *s = &op->p2p;
  const int vr = (rank - root + size) % size;
  if (s->step == 0) {
    /* the parent: the rank without the lowest set bit of vr */
    if (vr != 0) {
      const int parent = (vr & (vr - 1));
      if (!post(op, comm, false, buf, len, (parent + root) % size))
        return true;
    }
    s->step = 1;
  }
  if (s->step == 1) {
    if (!dart__coll__mpi_done(op)) return false;
    /* the children: vr plus each power of two below its lowest set bit */
    const int low = vr == 0 ? size : (vr & -vr);
    for (int m = 1; m < low && vr + m < size; m <<= 1)
      if (!post(op, comm, true, buf, len, (vr + m + root) % size))
        return true;
    s->step = 2;
  }
  return dart__coll__mpi_done(op);
}

bool dart__coll__p2p_reduce(dart__coll_op_t *op, MPI_Comm comm, void *acc,
                            void *tmp, size_t len, int root, void *out)
{
  int rank, size;
  ranks(op, comm, &rank, &size);
  dart__coll_p2p_t *s = &op->p2p;
  /* a tree rooted at the root where the operation commutes; else at rank
   * 0, whose ranks go in order, and one more message to the root */
  const int base = op->red.commutes ? root : 0;
  const int vr = (rank - base + size) % size;
  if (s->step == 0) {
    s->acc = acc;
    s->tmp = tmp;
    s->mask = 1;
    s->step = 1;
  }
  /* vr holds the block [vr, vr + mask) once its round mask is over */
  for (; s->step == 1 && s->mask < size; s->mask <<= 1) {
    if (vr & s->mask) {
      if (!s->posted) {
        if (!post(op, comm, true, s->acc, len,
                  (vr - s->mask + base) % size))
          return true;
        s->posted = true;
      }
      if (!dart__coll__mpi_done(op)) return false;
      s->posted = false;
      s->step = 2; /* passed on */
      break;
    }
    if (vr + s->mask >= size) continue;
    if (!s->posted) {
      if (!post(op, comm, false, s->tmp, len, (vr + s->mask + base) % size))
        return true;
      s->posted = true;
    }
    if (!dart__coll__mpi_done(op)) return false;
    s->posted = false;
    if (op->red.commutes) {
      combine(op, s->tmp, s->acc, len); /* theirs op ours: the same */
      continue;
    }
    /* ours is the lower block: ours op theirs, into theirs */
    combine(op, s->acc, s->tmp, len);
    void *t = s->acc;
    s->acc = s->tmp;
    s->tmp = t;
  }
  if (s->step == 1) s->step = 2;
  if (s->step == 2) {
    if (base == root) {
      if (rank == root && s->acc != out) memcpy(out, s->acc, len);
      return true;
    }
    if (rank == 0 && !post(op, comm, true, s->acc, len, root)) return true;
    if (rank == root && !post(op, comm, false, out, len, 0)) return true;
    s->step = 3;
  }
  return dart__coll__mpi_done(op);
}

/* Large allreduces of operations that commute: a ring, as MPI's: the
 * units reduce one P-th each in P - 1 steps (each unit's share combined
 * in one order, so every unit gets the same bits), then pass the shares
 * round in P - 1 more. Every unit sends and receives 2 (P - 1) / P of the
 * data, where recursive doubling moves all of it log2 P times. */
#define RING_FROM ((size_t)64 << 10)

/* Share c of len bytes in grains of g: [*at, *at + returned). */
static size_t share(size_t len, size_t g, int size, int c, size_t *at)
{
  const size_t grains = len / g, per = grains / (size_t)size,
               more = grains % (size_t)size;
  const size_t uc = (size_t)c;
  *at = (uc * per + (uc < more ? uc : more)) * g;
  return (per + (uc < more ? 1 : 0)) * g;
}

static bool ring_allreduce(dart__coll_op_t *op, MPI_Comm comm, int rank,
                           int size, unsigned char *acc, unsigned char *tmp,
                           size_t len)
{
  dart__coll_p2p_t *s = &op->p2p;
  const size_t g = op->red.granule * op->t->elem_size;
  const int right = (rank + 1) % size, left = (rank - 1 + size) % size;
  /* step i sends share rank - i and receives share rank - i - 1: the
   * first P - 1 steps reduce what they receive, after which rank holds
   * share rank + 1 whole; the others pass the whole shares on */
  for (; s->mask < 2 * (size - 1); s->mask++) {
    const int i = s->mask, reducing = i < size - 1;
    const int out_c = ((rank - i) % size + size) % size;
    const int in_c = (out_c - 1 + size) % size;
    size_t out_at, in_at;
    const size_t out_len = share(len, g, size, out_c, &out_at);
    const size_t in_len = share(len, g, size, in_c, &in_at);
    if (!s->posted) {
      if (!post(op, comm, false, reducing ? tmp + in_at : acc + in_at,
                in_len, left) ||
          !post(op, comm, true, acc + out_at, out_len, right))
        return true;
      s->posted = true;
    }
    if (!dart__coll__mpi_done(op)) return false;
    s->posted = false;
    if (reducing) combine(op, tmp + in_at, acc + in_at, in_len);
  }
  return true;
}

bool dart__coll__p2p_allreduce(dart__coll_op_t *op, MPI_Comm comm, void *acc,
                               void *tmp, size_t len)
{
  int rank, size;
  ranks(op, comm, &rank, &size);
  dart__coll_p2p_t *s = &op->p2p;
  if (op->red.commutes && len >= RING_FROM && len / op->t->elem_size >=
                                                  (size_t)size * op->red.granule)
    return ring_allreduce(op, comm, rank, size, acc, tmp, len);
  int pof2 = 1;
  while (pof2 * 2 <= size) pof2 *= 2;
  const int rem = size - pof2;
  const bool folded = rank < 2 * rem;
  const int newrank = folded ? (rank % 2 ? rank / 2 : -1) : rank - rem;
  if (s->step == 0) {
    s->acc = acc;
    s->tmp = tmp;
    s->mask = 1;
    s->step = 1;
  }
  if (s->step == 1) { /* the first 2 * rem fold pairwise into the odd ones */
    if (folded) {
      if (!s->posted) {
        if (!post(op, comm, rank % 2 == 0, rank % 2 ? s->tmp : s->acc, len,
                  rank % 2 ? rank - 1 : rank + 1))
          return true;
        s->posted = true;
      }
      if (!dart__coll__mpi_done(op)) return false;
      s->posted = false;
      if (rank % 2) combine(op, s->tmp, s->acc, len);
    }
    s->step = 2;
  }
  for (; s->step == 2 && newrank >= 0 && s->mask < pof2; s->mask <<= 1) {
    const int newpeer = newrank ^ s->mask;
    const int peer = newpeer < rem ? newpeer * 2 + 1 : newpeer + rem;
    if (!s->posted) {
      if (!post(op, comm, false, s->tmp, len, peer) ||
          !post(op, comm, true, s->acc, len, peer))
        return true;
      s->posted = true;
    }
    if (!dart__coll__mpi_done(op)) return false;
    s->posted = false;
    if (newpeer < newrank) {
      combine(op, s->tmp, s->acc, len); /* theirs op ours */
    } else {
      combine(op, s->acc, s->tmp, len); /* ours op theirs */
      void *t = s->acc;
      s->acc = s->tmp;
      s->tmp = t;
    }
  }
  if (s->step == 2) {
    /* the folded even ones get the result back */
    if (folded && !post(op, comm, rank % 2 == 1, s->acc, len,
                        rank % 2 ? rank - 1 : rank + 1))
      return true;
    s->step = 3;
  }
  if (!dart__coll__mpi_done(op)) return false;
  if (s->acc != acc) memcpy(acc, s->acc, len);
  return true;
}

/* The bytes unit u sends to (send) or receives from peer in a linear
 * exchange, and where: its part of sendbuf or recvbuf. */
static size_t part(const dart__coll_op_t *op, bool send, int peer,
                   size_t *at)
{
  const size_t es = op->t->elem_size;
  switch (op->kind) {
    case COLL_ALLGATHERV:
      *at = send ? 0 : op->recvdispls[peer] * es;
      return (send ? op->nsend : op->recvcounts[peer]) * es;
    case COLL_ALLTOALLV:
      *at = (send ? op->senddispls[peer] : op->recvdispls[peer]) * es;
      return (send ? op->sendcounts[peer] : op->recvcounts[peer]) * es;
    case COLL_SCATTER:
      *at = send ? (size_t)peer * op->bytes : 0;
      return op->bytes;
    case COLL_GATHER:
      *at = send ? 0 : (size_t)peer * op->bytes;
      return op->bytes;
    case COLL_ALLGATHER:
      *at = send ? 0 : (size_t)peer * op->bytes;
      return op->bytes;
    default: /* COLL_ALLTOALL */
      *at = (size_t)peer * op->bytes;
      return op->bytes;
  }
}

bool dart__coll__p2p_exchange(dart__coll_op_t *op)
{
  MPI_Comm comm = op->team->comm;
  const int size = op->team->size, me = op->team->myid;
  const coll_kind_t kind = op->kind;
  if (op->p2p.step == 1) return dart__coll__mpi_done(op);
  const bool sends = kind != COLL_SCATTER || me == op->root;
  const bool receives = kind != COLL_GATHER || me == op->root;
  const int nmsg = (sends ? size - 1 : 0) + (receives ? size - 1 : 0);
  if (nmsg > COLL_INLINE_REQS) {
    op->scratch = malloc((size_t)nmsg * sizeof *op->reqs);
    if (op->scratch == NULL) {
      DART_LOG_ERROR_IN(op->func, "out of memory for %d requests", nmsg);
      dart__coll__fail(op, DART_ERR_NOMEM);
      return true;
    }
    op->reqs = op->scratch;
  }
  const char *send = op->kind == COLL_ALLGATHERV && op->in_place
                         ? (const char *)op->recv +
                               op->recvdispls[me] * op->t->elem_size
                         : op->send;
  char *recv = op->recv;
  /* the others' parts come straight to their place; a rooted kind's
   * root talks to everyone, the others to the root only */
  for (int u = 0; receives && u < size; u++) {
    if (u == me || (kind == COLL_SCATTER && u != op->root)) continue;
    size_t at, len = part(op, false, u, &at);
    if (!post(op, comm, false, recv + at, len, u)) return true;
  }
  for (int u = 0; sends && u < size; u++) {
    if (u == me || (kind == COLL_GATHER && u != op->root)) continue;
    size_t at, len = part(op, true, u, &at);
    if (!post(op, comm, true, (void *)(send + at), len, u)) return true;
  }
  /* and this unit's own (not for a gather's or scatter's other units,
   * which pass no receive or send buffer, nor in place) */
  size_t from, to;
  size_t len = part(op, true, me, &from);
  part(op, false, me, &to);
  if (len > 0 && send != NULL && recv != NULL &&
      !(kind == COLL_ALLGATHERV && op->in_place))
    memmove(recv + to, send + from, len);
  op->p2p.step = 1;
  return dart__coll__mpi_done(op);
}
