/*
 * Active messages between node peers (am.h), the shm path's am_* slots:
 * one ring per (origin, target) pair in the target's part of a shared
 * window on the team's node communicator. The origin alone writes a ring
 * and its head, the target alone its tail and ran count, so neither takes
 * a lock: the origin writes a record (header, payload padded to 32 bytes)
 * and publishes it by moving the head (release); the target runs it in
 * place and frees it by moving the tail. A record never wraps: where it
 * would, a pad record fills the ring's end.
 */
#include <stdlib.h>
#include <string.h>

#include "am/am.h"
#include "base/env.h"
#include "base/log.h"
#include "progress/progress.h"
#include "transport/transport.h"

#define PAD 0x100 /* a record that fills the ring's end */

typedef struct {
  _Alignas(64) _Atomic uint64_t head; /* bytes the origin wrote */
  char pad0[56];
  _Atomic uint64_t tail; /* bytes the target consumed */
  _Atomic uint64_t ran;  /* messages from the origin whose handlers ran */
  char pad1[48];
} ring_t;

typedef struct {
  MPI_Win win;
  size_t ring_bytes; /* a ring_t, then the queue */
  char *mine;        /* my part: the rings from each node peer */
  ring_t **out;      /* team unit -> my ring in its part (NULL: none) */
  int *origin;       /* node rank -> team unit */
} shm_t;

static shm_t *state(dart__am_team_t *am)
{
  return (shm_t *)am->paths[DART__PATH_SHM];
}

static char *aligned(char *p)
{
  return (char *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
}

static size_t record(size_t bytes)
{
  return sizeof(dart__am_frag_t) + (bytes + 31) / 32 * 32;
}

void dart__am__shm_close(dart__am_team_t *am)
{
  shm_t *s = state(am);
  if (s == NULL) return;
  if (s->win != MPI_WIN_NULL) MPI_Win_free(&s->win);
  free(s->out);
  free(s->origin);
  free(s);
  am->paths[DART__PATH_SHM] = NULL;
}

dart_ret_t dart__am__shm_open(const char *func, dart__am_team_t *am)
{
  dart__team_t *team = am->team;
  if (team->node_size <= 1 || !dart__base__config.shm) return DART_OK;
  shm_t *s = calloc(1, sizeof *s);
  if (s == NULL) goto nomem;
  s->win = MPI_WIN_NULL;
  am->paths[DART__PATH_SHM] = s;
  s->out = calloc((size_t)team->size, sizeof *s->out);
  s->origin = calloc((size_t)team->node_size, sizeof *s->origin);
  if (s->out == NULL || s->origin == NULL) goto nomem;
  s->ring_bytes = sizeof(ring_t) + am->queue;
  char *base;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  int mret = MPI_Win_allocate_shared(
      (MPI_Aint)(s->ring_bytes * (size_t)team->node_size + 64), 1, info,
      team->node_comm, &base, &s->win);
  MPI_Info_free(&info);
  if (mret != MPI_SUCCESS) {
    DART_LOG_ERROR_IN(func, "MPI_Win_allocate_shared of %zu bytes of "
                      "message rings failed",
                      s->ring_bytes * (size_t)team->node_size);
    s->win = MPI_WIN_NULL;
    dart__am__shm_close(am);
    return DART_ERR_NOMEM;
  }
  s->mine = aligned(base);
  memset(s->mine, 0, s->ring_bytes * (size_t)team->node_size);
  int me = team->node_rank[team->myid];
  for (int u = 0; u < team->size; u++) {
    int rank = team->node_rank[u];
    if (rank < 0) continue;
    s->origin[rank] = u;
    if (am->path[u] != DART__PATH_SHM) continue;
    MPI_Aint size;
    int disp;
    char *part;
    MPI_Win_shared_query(s->win, rank, &size, &disp, &part);
    s->out[u] = (ring_t *)(void *)(aligned(part) +
                                   (size_t)me * s->ring_bytes);
  }
  /* the rings are zero before any peer writes one */
  return dart__progress__barrier(func, team->node_comm);
nomem:
  DART_LOG_ERROR_IN(func, "no memory for message rings");
  dart__am__shm_close(am);
  return DART_ERR_NOMEM;
}

dart_ret_t dart__am__shm_send(const char *func, dart__am_team_t *am, int u,
                           const dart__am_frag_t *f, const void *payload,
                           bool *queued)
{
  (void)func;
  ring_t *ring = state(am)->out[u];
  char *data = (char *)(ring + 1);
  const size_t queue = am->queue;
  size_t rec = record(f->bytes);
  uint64_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
  uint64_t tail = atomic_load_explicit(&ring->tail, memory_order_acquire);
  size_t at = head % queue, to_end = queue - at;
  size_t need = rec <= to_end ? rec : rec + to_end;
  if (head - tail + need > queue) {
    *queued = false;
    return DART_OK;
  }
  if (rec > to_end) {
    dart__am_frag_t pad = {.kind = PAD};
    memcpy(data + at, &pad, sizeof pad);
    head += to_end;
    at = 0;
  }
  memcpy(data + at, f, sizeof *f);
  if (f->bytes > 0) memcpy(data + at + sizeof *f, payload, f->bytes);
  atomic_store_explicit(&ring->head, head + rec, memory_order_release);
  *queued = true;
  return DART_OK;
}

unsigned dart__am__shm_poll(dart__am_team_t *am)
{
  shm_t *s = state(am);
  const dart__team_t *team = am->team;
  const size_t queue = am->queue;
  unsigned n = 0;
  for (int rank = 0; rank < team->node_size; rank++) {
    int origin = s->origin[rank];
    if (origin == team->myid) continue;
    ring_t *ring = (ring_t *)(void *)(s->mine + (size_t)rank * s->ring_bytes);
    char *data = (char *)(ring + 1);
    uint64_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&ring->head, memory_order_acquire);
    if (tail == head) continue;
    while (tail < head) {
      size_t at = tail % queue;
      dart__am_frag_t f;
      memcpy(&f, data + at, sizeof f);
      if (f.kind == PAD) {
        tail += queue - at;
      } else {
        dart__am__deliver(am, origin, &f, data + at + sizeof f);
        tail += record(f.bytes);
        n++;
      }
      atomic_store_explicit(&ring->tail, tail, memory_order_release);
    }
    atomic_store_explicit(&ring->ran, dart__am__ran(am, origin),
                          memory_order_release);
  }
  return n;
}

dart_ret_t dart__am__shm_ran(const char *func, dart__am_team_t *am, int u,
                          uint64_t count, bool *ran)
{
  (void)func;
  *ran = atomic_load_explicit(&state(am)->out[u]->ran,
                              memory_order_acquire) >= count;
  return DART_OK;
}
