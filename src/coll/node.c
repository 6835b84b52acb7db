/*
 * The collectives of node peers in their shared area (op.h), and the
 * hierarchical ones of teams that span nodes: node peers meet their leader
 * in the area, the leaders meet through MPI, and the leader brings the
 * outcome back through its result cells.
 *
 * Every unit announces each operation in its cell: kind, root, type,
 * reduction and bytes, with the data where it fits. A unit that reads a
 * peer's cell compares the header with its own call, so that mismatched
 * calls between node peers are errors, not garbage. A cell is written
 * for operation s only once every peer has reached s - COLL_DEPTH + 1,
 * that is, finished reading what s - COLL_DEPTH left there.
 *
 * Data beyond a cell (large operations) goes through staging blocks in
 * steps. Every unit first reads every peer's header, so that all agree
 * whether and how many steps follow; the steps are numbered on from the
 * team's earlier large operations. A unit writes its block of step t once
 * every peer has read step t - COLL_BLOCKS, and says how far it got in
 * its posted, reduced and consumed counters; at the end it sets all
 * three to the operation's last step.
 *
 * Reductions combine the contributions in one order on every unit,
 * x0 op (x1 op (... op x(k-1))), so that every unit gets the same bits and
 * user operations that do not commute see the team's order.
 */
#include <stdlib.h>
#include <string.h>

#include "base/runtime.h"
#include "coll/op.h"
#include "transport/transport.h"

enum { POSTED, REDUCED, CONSUMED };

/* cells a reader fetches ahead of the one it waits for */
#define FETCH_AHEAD 3

static inline uint64_t load(_Atomic uint64_t *a)
{
  return atomic_load_explicit(a, memory_order_acquire);
}

static inline void store(_Atomic uint64_t *a, uint64_t v)
{
  atomic_store_explicit(a, v, memory_order_release);
}

static inline coll_cell_t *cell(struct dart__coll_team *ct, int i,
                                uint64_t seq)
{
  return &ct->members[i].cell[seq % COLL_DEPTH];
}

static inline coll_cell_t *result(struct dart__coll_team *ct, uint64_t seq)
{
  return &ct->members[0].out[seq % COLL_DEPTH];
}

/* Where member i's cell of seq holds len bytes of data. */
static inline unsigned char *payload(struct dart__coll_team *ct, int i,
                                     uint64_t seq, size_t len)
{
  return len <= COLL_INLINE ? cell(ct, i, seq)->data
                            : ct->members[i].cell_data[seq % COLL_DEPTH];
}

/* Where the leader's result of seq holds len bytes. */
static inline unsigned char *result_payload(struct dart__coll_team *ct,
                                            uint64_t seq, size_t len)
{
  return len <= COLL_INLINE ? result(ct, seq)->data
                            : ct->members[0].out_data[seq % COLL_DEPTH];
}

static inline _Atomic uint64_t *counter(struct dart__coll_team *ct, int i,
                                        int which)
{
  coll_member_t *m = &ct->members[i];
  return which == POSTED ? &m->posted
                         : which == REDUCED ? &m->reduced : &m->consumed;
}

/* This unit has reached op (it finished every earlier one). */
static void arrive(struct dart__coll_team *ct, uint64_t seq)
{
  if (ct->members != NULL) store(&ct->members[ct->me].arrived, seq);
}

/* Every node peer has posted seq: it has reached it. */
static void learn(struct dart__coll_team *ct, uint64_t seq)
{
  if (seq > ct->min_arrived) ct->min_arrived = seq;
}

/* Whether this unit may write its cells of seq (the leader: its result
 * cells too): no peer still reads what seq - COLL_DEPTH left there. */
static bool cells_free(struct dart__coll_team *ct, uint64_t seq)
{
  if (ct->k == 1 || ct->min_arrived + COLL_DEPTH > seq) return true;
  uint64_t least = UINT64_MAX;
  for (int j = 0; j < ct->k; j++) {
    if (j == ct->me) continue;
    uint64_t v = load(&ct->members[j].arrived);
    if (v < least) least = v;
  }
  ct->min_arrived = least;
  return least + COLL_DEPTH > seq;
}

/* Whether every peer's counter has reached v (v <= 0: trivially). */
static bool peers_past(struct dart__coll_team *ct, int which, int64_t v)
{
  if (v <= 0) return true;
  for (int j = 0; j < ct->k; j++)
    if (j != ct->me && load(counter(ct, j, which)) < (uint64_t)v)
      return false;
  return true;
}

static void steps_done(struct dart__coll_team *ct, uint64_t last)
{
  for (int which = POSTED; which <= CONSUMED; which++)
    store(counter(ct, ct->me, which), last);
}

static const char *const kind_names[] = {
    "dart_barrier",  "dart_bcast",     "dart_reduce",    "dart_allreduce",
    "dart_gather",   "dart_scatter",   "dart_allgather", "dart_alltoall",
    "dart_allgatherv", "dart_alltoallv"};

static void header(coll_cell_t *c, const dart__coll_op_t *op)
{
  c->kind = op->kind;
  c->root = op->root;
  c->dtype = op->dtype;
  c->op = op->redop;
  c->bytes = op->bytes;
}

/* Whether team unit from called what this unit did (logged where not). */
static bool header_ok(dart__coll_op_t *op, const coll_cell_t *c, int from)
{
  if (c->kind == (uint32_t)op->kind && c->root == op->root &&
      c->dtype == op->dtype && c->op == op->redop && c->bytes == op->bytes)
    return true;
  if (op->status == DART_OK)
    DART_LOG_ERROR_IN(op->func,
                      "team %d: unit %d called %s with %llu bytes of type "
                      "%lld, operation %llu and root %d where this unit "
                      "(%d) has %zu bytes of type %ld, operation %lu and "
                      "root %d",
                      op->team->id, from,
                      c->kind < sizeof kind_names / sizeof *kind_names
                          ? kind_names[c->kind]
                          : "an unknown collective",
                      (unsigned long long)c->bytes, (long long)c->dtype,
                      (unsigned long long)c->op, c->root, op->team->myid,
                      op->bytes, (long)op->dtype, (unsigned long)op->redop,
                      op->root);
  dart__coll__fail(op, DART_ERR_INVAL);
  return false;
}

/* Whether member i has posted seq; then its next cells are fetched
 * ahead: a reader behind a writer finds them written (where they are
 * not, the reader holds them still from COLL_DEPTH operations ago, and
 * fetching costs nothing). */
static inline bool posted_cell(struct dart__coll_team *ct, int i,
                               uint64_t seq)
{
  if (load(&cell(ct, i, seq)->seq) < seq) return false;
  for (int ahead = 1; ahead <= FETCH_AHEAD; ahead++)
    __builtin_prefetch(cell(ct, i, seq + ahead));
  return true;
}

/* Waits (resumably) for every peer's cell of op, checking each header:
 * whether all are there. */
static bool all_cells(dart__coll_op_t *op, struct dart__coll_team *ct)
{
  for (; op->peer < ct->k; op->peer++) {
    int j = op->peer;
    if (j == ct->me) continue;
    if (!posted_cell(ct, j, op->seq)) return false;
    header_ok(op, cell(ct, j, op->seq), ct->node_units[j]);
  }
  op->peer = 0;
  learn(ct, op->seq);
  return true;
}

/* Posts this unit's header (and data, where given) for op. */
static void post(struct dart__coll_team *ct, const dart__coll_op_t *op,
                 const void *data, size_t len)
{
  coll_cell_t *c = cell(ct, ct->me, op->seq);
  header(c, op);
  if (len > 0) memcpy(payload(ct, ct->me, op->seq, len), data, len);
  store(&c->seq, op->seq);
}

/* out = x0 op (x1 op (... op x(k-1))), x(j) = src(j), n elements. */
static void combine(const dart__coll_op_t *op, void *out,
                    const void *(*src)(const dart__coll_op_t *, int, void *),
                    void *ctx, int k, size_t len)
{
  size_t n = len / op->t->elem_size;
  memcpy(out, src(op, k - 1, ctx), len);
  for (int j = k - 2; j >= 0; j--) op->red.fn(src(op, j, ctx), out, n,
                                               op->red.ctx);
}

/* ---- the node algorithms: every unit of the team on this node ---- */

/* Whether op's post fits a cell: its bytes, per part where it has one
 * for every peer. */
static bool distinct_parts(coll_kind_t kind)
{
  return kind == COLL_SCATTER || kind == COLL_ALLTOALL;
}

static size_t post_bytes(const dart__coll_op_t *op, int k)
{
  return distinct_parts(op->kind) ? (size_t)k * op->bytes : op->bytes;
}

bool dart__coll__node_takes(const dart__coll_op_t *op)
{
  if (op->kind == COLL_ALLGATHERV || op->kind == COLL_ALLTOALLV) return false;
  /* the post of distinct parts must be countable */
  return op->kind == COLL_BARRIER || op->t->contiguous;
}

/* Large operations: every header read (all agree, or all fail), then the
 * steps: (base, last]. */
static bool large_start(dart__coll_op_t *op, struct dart__coll_team *ct,
                        size_t per_step)
{
  if (!all_cells(op, ct)) return false;
  size_t steps = op->status != DART_OK || op->bytes == 0
                     ? 0
                     : (op->bytes + per_step - 1) / per_step;
  op->step = ct->steps;
  op->last_step = ct->steps + steps;
  ct->steps = op->last_step;
  return true;
}

static const void *cell_data(const dart__coll_op_t *op, int j, void *ctx)
{
  return payload(ctx, j, op->seq, op->bytes);
}

/* Bcast: the root posts, the others copy. */
static bool node_bcast(dart__coll_op_t *op, struct dart__coll_team *ct)
{
  const int root = op->root;
  const bool small = op->bytes <= COLL_SMALL;
  switch (op->phase) {
    case 1:
      post(ct, op, op->recv, small && ct->me == root ? op->bytes : 0);
      if (!small) {
        op->phase = 10;
        return false;
      }
      if (ct->me == root) return true;
      op->phase = 2;
      /* fall through */
    case 2: {
      coll_cell_t *c = cell(ct, root, op->seq);
      if (!posted_cell(ct, root, op->seq)) return false;
      if (header_ok(op, c, root))
        memcpy(op->recv, payload(ct, root, op->seq, op->bytes), op->bytes);
      if (ct->k == 2) learn(ct, op->seq);
      return true;
    }
    case 10:
      if (!large_start(op, ct, COLL_BLOCK)) return false;
      op->phase = 11;
      /* fall through */
    case 11: {
      const uint64_t base = op->last_step -
                            (op->status == DART_OK
                                 ? (op->bytes + COLL_BLOCK - 1) / COLL_BLOCK
                                 : 0);
      for (; op->step < op->last_step; op->step++) {
        const uint64_t t = op->step + 1;
        const size_t at = (size_t)(t - 1 - base) * COLL_BLOCK;
        const size_t len =
            op->bytes - at < COLL_BLOCK ? op->bytes - at : COLL_BLOCK;
        unsigned char *block = ct->members[root].stage[t % COLL_BLOCKS];
        if (ct->me == root) {
          if (!peers_past(ct, CONSUMED, (int64_t)t - COLL_BLOCKS))
            return false;
          memcpy(block, (char *)op->recv + at, len);
          store(counter(ct, ct->me, POSTED), t);
        } else {
          if (load(counter(ct, root, POSTED)) < t) return false;
          memcpy((char *)op->recv + at, block, len);
          store(counter(ct, ct->me, CONSUMED), t);
        }
      }
      steps_done(ct, op->last_step);
      return true;
    }
  }
  return true;
}

/* Reduce and allreduce: small ones combine the cells; large ones reduce
 * a partition of each step per unit, then collect the partitions. */
static bool node_reduce(dart__coll_op_t *op, struct dart__coll_team *ct)
{
  const bool all = op->kind == COLL_ALLREDUCE;
  const bool gets = all || ct->me == op->root;
  const bool small = op->bytes <= COLL_SMALL;
  const size_t grain = op->red.granule * op->t->elem_size;
  const size_t piece = COLL_BLOCK / grain * grain;
  switch (op->phase) {
    case 1:
      /* our own contribution goes through the cell too: recv may be
       * sendbuf (in place) */
      post(ct, op, op->send, small ? op->bytes : 0);
      if (!small) {
        op->phase = 10;
        return false;
      }
      if (!gets) return true;
      op->phase = 2;
      /* fall through */
    case 2:
      if (!all_cells(op, ct)) return false;
      if (op->status == DART_OK)
        combine(op, op->recv, cell_data, ct, ct->k, op->bytes);
      return true;
    case 10:
      if (!large_start(op, ct, piece)) return false;
      op->phase = 11;
      op->peer = 0; /* the step's stage: 0 post, 1 reduce, 2 collect */
      /* fall through */
    case 11: {
      const uint64_t steps =
          op->status == DART_OK ? (op->bytes + piece - 1) / piece : 0;
      const uint64_t base = op->last_step - steps;
      for (; op->step < op->last_step; op->step++) {
        const uint64_t t = op->step + 1;
        const int b = t % COLL_BLOCKS;
        const size_t at = (size_t)(t - 1 - base) * piece;
        const size_t len = op->bytes - at < piece ? op->bytes - at : piece;
        /* partitions of whole grains, the last ones shorter or empty */
        const size_t part = (len / grain + ct->k - 1) / ct->k * grain;
        coll_member_t *m = ct->members;
        if (op->peer == 0) {
          if (!peers_past(ct, REDUCED, (int64_t)t - COLL_BLOCKS)) return false;
          memcpy(m[ct->me].stage[b], (const char *)op->send + at, len);
          store(counter(ct, ct->me, POSTED), t);
          op->peer = 1;
        }
        if (op->peer == 1) {
          if (!peers_past(ct, POSTED, (int64_t)t) ||
              !peers_past(ct, CONSUMED, (int64_t)t - COLL_BLOCKS))
            return false;
          size_t from = (size_t)ct->me * part;
          size_t n = from < len ? (len - from < part ? len - from : part) : 0;
          if (n > 0) {
            unsigned char *acc = m[ct->me].part[b];
            memcpy(acc, m[ct->k - 1].stage[b] + from, n);
            for (int j = ct->k - 2; j >= 0; j--)
              op->red.fn(m[j].stage[b] + from, acc, n / op->t->elem_size,
                         op->red.ctx);
          }
          store(counter(ct, ct->me, REDUCED), t);
          op->peer = 2;
        }
        if (gets) {
          if (!peers_past(ct, REDUCED, (int64_t)t)) return false;
          for (int j = 0; j < ct->k; j++) {
            size_t from = (size_t)j * part;
            if (from >= len) break;
            size_t n = len - from < part ? len - from : part;
            memcpy((char *)op->recv + at + from, m[j].part[b], n);
          }
        }
        store(counter(ct, ct->me, CONSUMED), t);
        op->peer = 0;
      }
      steps_done(ct, op->last_step);
      return true;
    }
  }
  return true;
}

/* Gather, scatter, allgather, alltoall: posters put their data (for
 * scatter and alltoall one part per peer), readers take their parts. A
 * unit's part for itself goes straight from sendbuf to recvbuf, last:
 * by then nothing of sendbuf is read any more. */
static bool node_exchange(dart__coll_op_t *op, struct dart__coll_team *ct)
{
  const coll_kind_t kind = op->kind;
  const int me = ct->me, root = op->root;
  const bool poster = kind != COLL_SCATTER || me == root;
  const bool reader = kind == COLL_ALLGATHER || kind == COLL_ALLTOALL ||
                      (kind == COLL_GATHER ? me == root : me != root);
  const bool distinct = distinct_parts(kind);
  const size_t bytes = op->bytes;
  const size_t posted = post_bytes(op, ct->k);
  const bool small = posted <= COLL_SMALL;
  const size_t quota = distinct ? COLL_BLOCK / (size_t)ct->k : COLL_BLOCK;
  switch (op->phase) {
    case 1:
      post(ct, op, op->send, small && poster ? posted : 0);
      if (!small) {
        op->phase = 10;
        return false;
      }
      op->phase = 2;
      /* fall through */
    case 2:
      for (; reader && op->peer < ct->k; op->peer++) {
        const int j = op->peer;
        if (j == me || (kind == COLL_SCATTER && j != root)) continue;
        coll_cell_t *c = cell(ct, j, op->seq);
        if (!posted_cell(ct, j, op->seq)) return false;
        if (!header_ok(op, c, ct->node_units[j])) continue;
        const unsigned char *from = payload(ct, j, op->seq, posted) +
                                    (distinct ? me * bytes : 0);
        char *to = (char *)op->recv + (kind == COLL_SCATTER ? 0 : j * bytes);
        memcpy(to, from, bytes);
      }
      if (reader && kind != COLL_SCATTER) learn(ct, op->seq);
      op->peer = 0;
      break;
    case 10:
      if (!large_start(op, ct, distinct ? quota : COLL_BLOCK)) return false;
      op->phase = 11;
      /* fall through */
    case 11: {
      const uint64_t steps =
          op->status == DART_OK ? (bytes + quota - 1) / quota : 0;
      const uint64_t base = op->last_step - steps;
      coll_member_t *m = ct->members;
      for (; op->step < op->last_step; op->step++) {
        const uint64_t t = op->step + 1;
        const int b = t % COLL_BLOCKS;
        const size_t at = (size_t)(t - 1 - base) * quota;
        const size_t len = bytes - at < quota ? bytes - at : quota;
        if (op->peer == 0 && poster) {
          if (!peers_past(ct, CONSUMED, (int64_t)t - COLL_BLOCKS))
            return false;
          const char *send = op->send;
          if (distinct) {
            for (int j = 0; j < ct->k; j++)
              if (j != me)
                memcpy(m[me].stage[b] + j * quota, send + j * bytes + at,
                       len);
          } else {
            memcpy(m[me].stage[b], send + at, len);
          }
          store(counter(ct, me, POSTED), t);
        }
        if (op->peer == 0) op->peer = 1;
        /* peers' parts, resumed at the one not yet posted (peer - 1) */
        for (; reader && op->peer <= ct->k; op->peer++) {
          const int j = op->peer - 1;
          if (j == me || (kind == COLL_SCATTER && j != root)) continue;
          if (load(counter(ct, j, POSTED)) < t) return false;
          const unsigned char *from = m[j].stage[b] + (distinct ? me * quota
                                                                : 0);
          char *to = (char *)op->recv +
                     (kind == COLL_SCATTER ? 0 : j * bytes) + at;
          memcpy(to, from, len);
        }
        store(counter(ct, me, CONSUMED), t);
        op->peer = 0;
      }
      steps_done(ct, op->last_step);
      break;
    }
  }
  /* this unit's own part */
  if (op->status == DART_OK && bytes > 0) {
    const char *send = op->send;
    char *recv = op->recv;
    switch (kind) {
      case COLL_GATHER:
      case COLL_ALLGATHER:
        if (kind == COLL_ALLGATHER || me == root)
          memcpy(recv + me * bytes, send, bytes);
        break;
      case COLL_SCATTER:
        if (me == root) memcpy(recv, send + me * bytes, bytes);
        break;
      case COLL_ALLTOALL:
        memcpy(recv + me * bytes, send + me * bytes, bytes);
        break;
      default:
        break;
    }
  }
  return true;
}

static bool node_step(dart__coll_op_t *op, struct dart__coll_team *ct)
{
  if (op->phase == 0) {
    arrive(ct, op->seq);
    op->phase = 1;
    op->peer = 0;
  }
  /* every phase 1 writes this unit's cell */
  if (op->phase == 1 && !cells_free(ct, op->seq)) return false;
  switch (op->kind) {
    case COLL_BARRIER:
      if (op->phase == 1) {
        post(ct, op, NULL, 0);
        op->phase = 2;
      }
      return all_cells(op, ct);
    case COLL_BCAST:
      return node_bcast(op, ct);
    case COLL_REDUCE:
    case COLL_ALLREDUCE:
      return node_reduce(op, ct);
    default:
      return node_exchange(op, ct);
  }
}

/* ---- hierarchical: node step, the leaders' MPI step, node step ---- */

bool dart__coll__hier_takes(const dart__coll_op_t *op)
{
  const struct dart__coll_team *ct = op->team->coll;
  if (op->kind == COLL_BARRIER) return true;
  /* without node peers anywhere the leaders' step is all there is: MPI's
   * call on the team is the same */
  if (!ct->any_peers || !op->t->contiguous || op->bytes > COLL_SMALL)
    return false;
  switch (op->kind) {
    case COLL_BCAST:
      return true;
    case COLL_REDUCE:
    case COLL_ALLREDUCE:
      /* the node steps combine node peers first: not the team's order */
      return op->red.commutes;
    default:
      return false;
  }
}

/* The leaders' step of op on buf (as far as it goes without waiting):
 * whether it is over. */
static bool leaders_step(dart__coll_op_t *op, struct dart__coll_team *ct,
                         void *buf)
{
  MPI_Comm comm = ct->leaders;
  unsigned char *tmp = ct->scratch + COLL_SMALL;
  switch (op->kind) {
    case COLL_BARRIER:
      if (ct->remote != NULL) {
        bool done;
        dart_ret_t ret =
            dart__transport__remote()->barrier(op->func, ct->remote, &done);
        if (ret != DART_OK) dart__coll__fail(op, ret);
        return done || ret != DART_OK;
      }
      return dart__coll__p2p_barrier(op, comm);
    case COLL_BCAST:
      return dart__coll__p2p_bcast(op, comm, buf, op->bytes,
                                   ct->leader_of[op->root]);
    case COLL_ALLREDUCE:
      return dart__coll__p2p_allreduce(op, comm, buf, tmp, op->bytes);
    default:
      return dart__coll__p2p_reduce(op, comm, buf, tmp, op->bytes,
                                    ct->leader_of[op->root], buf);
  }
}

static const void *leader_data(const dart__coll_op_t *op, int j, void *ctx)
{
  return j == 0 ? op->send : payload(ctx, j, op->seq, op->bytes);
}

/* Where a node's leader gathers and gets back op's data: its result cell
 * (node peers read it), or where it has no node peers, the team's
 * scratch. */
static void *leader_buffer(dart__coll_op_t *op, struct dart__coll_team *ct)
{
  if (ct->members != NULL) return result_payload(ct, op->seq, op->bytes);
  return ct->scratch;
}

/* The leader tells its node peers the outcome (status in bytes). */
static void publish(dart__coll_op_t *op, struct dart__coll_team *ct)
{
  if (ct->members == NULL) return;
  coll_cell_t *o = result(ct, op->seq);
  o->bytes = (uint64_t)op->status;
  store(&o->seq, op->seq);
}

/* A node peer takes the leader's outcome (and data, len bytes to buf). */
static bool take(dart__coll_op_t *op, struct dart__coll_team *ct, void *buf,
                 size_t len)
{
  coll_cell_t *o = result(ct, op->seq);
  if (load(&o->seq) < op->seq) return false;
  dart_ret_t status = (dart_ret_t)o->bytes;
  if (status != DART_OK) dart__coll__fail(op, status);
  else if (len > 0) memcpy(buf, result_payload(ct, op->seq, len), len);
  return true;
}

static bool hier_barrier(dart__coll_op_t *op, struct dart__coll_team *ct)
{
  switch (op->phase) {
    case 1:
      if (!ct->leader) {
        post(ct, op, NULL, 0);
        op->phase = 5;
        return take(op, ct, NULL, 0);
      }
      op->phase = 2;
      /* fall through */
    case 2:
      if (ct->members != NULL && !all_cells(op, ct)) return false;
      op->phase = 3;
      /* fall through */
    case 3:
      if (!leaders_step(op, ct, NULL)) return false;
      publish(op, ct);
      return true;
    case 5:
      return take(op, ct, NULL, 0);
  }
  return true;
}

static bool hier_bcast(dart__coll_op_t *op, struct dart__coll_team *ct)
{
  const int rl = op->team->node_rank[op->root]; /* -1: on another node */
  const bool is_root = op->team->myid == op->root;
  switch (op->phase) {
    case 1:
      if (is_root) {
        if (ct->members != NULL) post(ct, op, op->recv, op->bytes);
        if (!ct->leader) return true;
        op->phase = 3;
        return false;
      }
      op->phase = rl >= 0 ? 2 : ct->leader ? 3 : 6;
      return false;
    case 2: { /* the root is a node peer: its cell */
      coll_cell_t *c = cell(ct, rl, op->seq);
      if (!posted_cell(ct, rl, op->seq)) return false;
      if (header_ok(op, c, op->root))
        memcpy(op->recv, payload(ct, rl, op->seq, op->bytes), op->bytes);
      if (ct->k == 2) learn(ct, op->seq);
      if (!ct->leader) return true;
      op->phase = 3;
    }
      /* fall through */
    case 3:
      /* another node's leader writes its result cell after the step */
      if (rl < 0 && ct->members != NULL && !cells_free(ct, op->seq))
        return false;
      op->phase = 4;
      /* fall through */
    case 4:
      if (!leaders_step(op, ct, op->recv)) return false;
      if (rl < 0 && ct->members != NULL) {
        memcpy(result_payload(ct, op->seq, op->bytes), op->recv, op->bytes);
        publish(op, ct);
      }
      return true;
    case 6:
      return take(op, ct, op->recv, op->bytes);
  }
  return true;
}

static bool hier_reduce(dart__coll_op_t *op, struct dart__coll_team *ct)
{
  const bool all = op->kind == COLL_ALLREDUCE;
  const bool is_root = op->team->myid == op->root;
  switch (op->phase) {
    case 1:
      if (!ct->leader) {
        post(ct, op, op->send, op->bytes);
        if (!all && !is_root) return true;
        op->phase = 6;
        return false;
      }
      op->phase = 2;
      /* fall through */
    case 2: {
      if (ct->members != NULL && !all_cells(op, ct)) return false;
      void *acc = leader_buffer(op, ct);
      /* a mismatch found here still takes part in the leaders' step, so
       * that the other nodes finish */
      if (ct->members != NULL)
        combine(op, acc, leader_data, ct, ct->k, op->bytes);
      else
        memcpy(acc, op->send, op->bytes);
      op->phase = 3;
    }
      /* fall through */
    case 3: {
      void *acc = leader_buffer(op, ct);
      if (!leaders_step(op, ct, acc)) return false;
      if ((all || is_root) && acc != op->recv && op->status == DART_OK)
        memcpy(op->recv, acc, op->bytes);
      publish(op, ct);
      return true;
    }
    case 6:
      return take(op, ct, op->recv, op->bytes);
  }
  return true;
}

static bool hier_step(dart__coll_op_t *op, struct dart__coll_team *ct)
{
  if (op->phase == 0) {
    arrive(ct, op->seq);
    op->phase = 1;
    op->peer = 0;
  }
  /* who posts a cell does so in phase 1: a bcast's root, or else a node
   * peer that is no leader */
  const bool posts = op->kind == COLL_BCAST ? op->team->myid == op->root
                                            : !ct->leader;
  if (op->phase == 1 && posts && !cells_free(ct, op->seq)) return false;
  switch (op->kind) {
    case COLL_BARRIER:
      return hier_barrier(op, ct);
    case COLL_BCAST:
      return hier_bcast(op, ct);
    default:
      return hier_reduce(op, ct);
  }
}

/* An algorithm's step returns false where it waits, or where it moved on
 * to another phase: that one is tried at once, not after a wait. */
static bool advance_with(bool (*step)(dart__coll_op_t *,
                                      struct dart__coll_team *),
                         dart__coll_op_t *op)
{
  struct dart__coll_team *ct = op->team->coll;
  for (;;) {
    const int phase = op->phase;
    if (step(op, ct)) return true;
    if (op->phase == phase) return false;
  }
}

bool dart__coll__node_advance(dart__coll_op_t *op)
{
  return advance_with(node_step, op);
}

bool dart__coll__hier_advance(dart__coll_op_t *op)
{
  return advance_with(hier_step, op);
}
