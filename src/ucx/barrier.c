/*
 * The UCX path's barrier: a remote transport's own, for the units of a
 * team that meet across nodes (coll/node.c).
 */
#include <stdlib.h>
#include <string.h>

#include "base/env.h"
#include "ucx/ucx.h"

/*
 * A dissemination barrier over UCX (Hensgen, Finkel and Manber): in round
 * r each unit puts the barrier's number into the flag r of the unit 2^r
 * ranks and waits for its own flag r. The flags are memory UCX
 * allocated, so its shared-memory transports store them directly; the
 * caller polls the worker between steps, which serves peers' operations
 * meanwhile. Numbers only grow: a flag at or past
 * this barrier's number lets the unit on, as a partner a barrier ahead
 * has seen everyone arrive at this one.
 */
#define BARRIER_ROUNDS_MAX 32
#define BARRIER_FLAG_STRIDE 64 /* one cache line each */

typedef struct {
  ucp_mem_h memh;
  char *flags; /* flag r at r * BARRIER_FLAG_STRIDE */
  int rounds;
  uint64_t passed;
  /* the barrier in progress: its round, whether that round's put is out,
   * and the put's request until it completes */
  int round;
  bool put;
  ucs_status_ptr_t req;
  struct {
    ucp_ep_h ep;
    ucp_rkey_h rkey;
    uint64_t addr; /* of its flag r */
    int unit;      /* global */
    uint64_t sent; /* the put's source */
  } to[BARRIER_ROUNDS_MAX];
} barrier_t;

static inline _Atomic uint64_t *barrier_flag(barrier_t *b, int r)
{
  return (_Atomic uint64_t *)(void *)(b->flags + r * BARRIER_FLAG_STRIDE);
}

void dart__ucx__barrier_destroy(void *state)
{
  barrier_t *b = state;
  if (b == NULL) return;
  for (int r = 0; r < b->rounds; r++) dart__ucx__key_destroy(b->to[r].rkey);
  dart__ucx__mem_deregister(b->memh, NULL);
  free(b);
}

/* What each unit publishes: its global id, its flags' address and key. */
typedef struct {
  uint64_t unit, addr;
} barrier_card_t;

dart_ret_t dart__ucx__barrier_create(const char *func, MPI_Comm comm,
                                     void **out)
{
  *out = NULL;
  if (dart__rt.transport != DART__TRANSPORT_UCX) return DART_OK;
  int size, rank;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  barrier_t *b = calloc(1, sizeof *b);
  void *packed = NULL;
  size_t packed_len = 0;
  char *card = NULL, *all = NULL;
  size_t *off = NULL;
  const size_t flags_len = BARRIER_ROUNDS_MAX * BARRIER_FLAG_STRIDE;
  /* a unit that cannot set up publishes an empty card: all fall back */
  size_t card_len = 0;
  if (b != NULL &&
      dart__ucx__mem_alloc(func, flags_len, &b->memh, &b->flags) == DART_OK) {
    memset(b->flags, 0, flags_len);
    if (dart__ucx__pack_key(func, b->memh, &packed, &packed_len) == UCS_OK &&
        (card = malloc(sizeof(barrier_card_t) + packed_len)) != NULL) {
      barrier_card_t c = {(uint64_t)dart__rt.myid, (uintptr_t)b->flags};
      memcpy(card, &c, sizeof c);
      memcpy(card + sizeof c, packed, packed_len);
      card_len = sizeof c + packed_len;
    }
  }
  dart_ret_t ret = dart__ucx__allgather(func, comm, size, card, card_len, &all,
                                        &off);
  if (ret != DART_OK) goto out;
  int ok = card_len > 0;
  for (int u = 0; u < size; u++) ok &= off[u + 1] > off[u];
  while (ok && b->rounds < BARRIER_ROUNDS_MAX && (1 << b->rounds) < size) {
    const int r = b->rounds, peer = (rank + (1 << r)) % size;
    barrier_card_t c;
    memcpy(&c, all + off[peer], sizeof c);
    b->to[r].unit = (int)c.unit;
    b->to[r].addr = c.addr + (uint64_t)r * BARRIER_FLAG_STRIDE;
    _Atomic(void *) slot = NULL;
    void *rkey;
    ok = dart__ucx__key_unpack(func, b->to[r].unit, all + off[peer] + sizeof c,
                               &slot, &rkey) == DART_OK; /* logged */
    if (ok) {
      b->to[r].ep =
          dart__ucx__ep_of(func, b->to[r].unit); /* made by the unpack */
      b->to[r].rkey = rkey;
      b->rounds++;
    }
  }
  /* everybody uses it, or nobody */
  int all_ok = 0;
  MPI_Request req;
  if (MPI_Iallreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm, &req) !=
      MPI_SUCCESS) {
    DART_LOG_ERROR_IN(func, "MPI_Iallreduce for the UCX barrier failed");
    ret = DART_ERR_OTHER;
    goto out;
  }
  if ((ret = dart__progress__wait(func, 1, &req)) != DART_OK)
    goto out;
  if (all_ok) {
    *out = b;
    b = NULL;
  } else if (rank == 0) {
    DART_LOG_WARN("%s: no UCX barrier on a communicator of %d units: MPI's "
                  "takes over", func, size);
  }
out:
  dart__ucx__barrier_destroy(b);
  free(off);
  free(all);
  free(card);
  dart__ucx__mem_deregister(NULL, packed);
  return ret;
}

dart_ret_t dart__ucx__barrier(const char *func, void *state, bool *done)
{
  barrier_t *b = state;
  const uint64_t number = b->passed + 1;
  *done = false;
  for (; b->round < b->rounds; b->round++) {
    const int r = b->round;
    if (!b->put) {
      b->to[r].sent = number;
      b->req = ucp_put_nbx(b->to[r].ep, &b->to[r].sent, sizeof number,
                           b->to[r].addr, b->to[r].rkey, &dart__ucx__plain);
      if (UCS_PTR_IS_ERR(b->req))
        return dart__ucx__error(func, "ucp_put_nbx", UCS_PTR_STATUS(b->req),
                                b->to[r].unit);
      b->put = true;
    }
    /* the put's source stays until it has gone */
    if (b->req != NULL) {
      ucs_status_t status = ucp_request_check_status(b->req);
      if (status == UCS_INPROGRESS) return DART_OK;
      ucp_request_free(b->req);
      b->req = NULL;
      if (status != UCS_OK)
        return dart__ucx__error(func, "ucp_put_nbx", status, b->to[r].unit);
    }
    if (atomic_load_explicit(barrier_flag(b, r), memory_order_acquire) <
        number)
      return DART_OK;
    b->put = false;
  }
  b->round = 0;
  b->passed = number;
  *done = true;
  return DART_OK;
}
