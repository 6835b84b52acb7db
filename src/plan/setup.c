/*
 * Setting up and freeing plans (dart_plan.h). Set-up is collective: every
 * step that may fail on one unit ends in an agreement (an allreduce of the
 * results), so that all units fail together and none waits for another
 * that gave up.
 *
 * Handles are slot ids plus one, so that a destroyed plan's handle is
 * recognised (the slots are reused as late as possible) and never
 * dereferenced.
 */
#include <dart/dart_ext.h>
#include <dart/dart_signal.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#include "base/log.h"
#include "base/runtime.h"
#include "base/slots.h"
#include "globmem/segment.h"
#include "gpu/gpu.h"
#include "plan/plan.h"

static dart__slots_t plans;
static mtx_t plans_lock;

/* ---- the table of plans ---- */

static dart__plan_t *plan_at(dart_plan_t handle)
{
  uintptr_t v = (uintptr_t)handle;
  if (v == 0 || v - 1 > UINT32_MAX) return NULL;
  return dart__base__slots_get(&plans, (uint32_t)(v - 1));
}

static dart__plan_t *plan_live(const char *func, dart_plan_t handle)
{
  dart__plan_t *plan = plan_at(handle);
  if (plan == NULL)
    DART_LOG_ERROR_IN(func, "plan %p is not a live plan", (void *)handle);
  return plan;
}

dart__plan_t *dart__plan__get(const char *func, dart_plan_t handle)
{
  dart__plan_t *plan = plan_live(func, handle);
  if (plan != NULL && plan->team == NULL) {
    DART_LOG_ERROR_IN(func, "team %d of plan %p was destroyed",
                      (int)plan->team_id, (void *)handle);
    return NULL;
  }
  return plan;
}

/* ---- device buffers ---- */

/* Frees what device_setup made (any part of it); device memory must go
 * before the backend does, so a team's release frees it too. */
static void device_release(dart__plan_t *plan)
{
  const dart__gpu_ops_t *ops = dart__gpu.ops;
  if (ops == NULL) return;
  ops->pattern_free(plan->dev_self);
  plan->dev_self = NULL;
  for (size_t k = 0; k < plan->npeers; k++) {
    dart__plan_peer_t *p = &plan->peers[k];
    ops->pattern_free(p->dev_roots);
    ops->pattern_free(p->dev_leaves);
    p->dev_roots = p->dev_leaves = NULL;
    p->dev_in = p->dev_out = NULL;
  }
  /* the stream may still signal into the device slots that go next */
  if (plan->words_busy) ops->event_sync(__func__, plan->dev_signalled);
  if (plan->dev_packed) ops->event_destroy(plan->dev_packed);
  if (plan->dev_unslotted) ops->event_destroy(plan->dev_unslotted);
  if (plan->dev_signalled) ops->event_destroy(plan->dev_signalled);
  if (plan->dev_waited) ops->event_destroy(plan->dev_waited);
  if (plan->dev_stream) ops->stream_destroy(plan->dev_stream);
  if (plan->dev_scratch) ops->free(plan->dev_scratch);
  plan->dev_packed = plan->dev_unslotted = NULL;
  plan->dev_signalled = plan->dev_waited = NULL;
  plan->posts_owed = plan->acks_owed = false;
  for (size_t k = 0; k < plan->npeers; k++)
    plan->peers[k].post_owed = plan->peers[k].ack_owed = false;
  plan->words_busy = false;
  plan->words_stream = NULL;
  plan->dev_stream = NULL;
  plan->dev_scratch = NULL;
  plan->dev_ready = false;
}

dart_ret_t dart__plan__device_setup(const char *func, dart__plan_t *plan)
{
  const dart__gpu_ops_t *ops = dart__gpu.ops;
  if (plan->dev_ready) return DART_OK;
  /* the device has a message to and from each peer in flight at once */
  size_t bytes = 0;
  for (size_t k = 0; k < plan->npeers; k++)
    bytes += 2 * plan->peers[k].slot_bytes;
  dart_ret_t ret = ops->pattern_upload(func, &plan->self, &plan->dev_self);
  for (size_t k = 0; k < plan->npeers && ret == DART_OK; k++) {
    dart__plan_peer_t *p = &plan->peers[k];
    ret = ops->pattern_upload(func, &p->roots, &p->dev_roots);
    if (ret == DART_OK)
      ret = ops->pattern_upload(func, &p->leaves, &p->dev_leaves);
  }
  if (ret == DART_OK) ret = ops->stream_create(func, &plan->dev_stream);
  if (ret == DART_OK)
    ret = ops->event_record(func, plan->dev_stream, &plan->dev_packed);
  if (ret == DART_OK)
    ret = ops->event_record(func, plan->dev_stream, &plan->dev_unslotted);
  if (ret == DART_OK)
    ret = ops->event_record(func, plan->dev_stream, &plan->dev_signalled);
  if (ret == DART_OK)
    ret = ops->event_record(func, plan->dev_stream, &plan->dev_waited);
  if (ret == DART_OK && bytes > 0)
    ret = ops->alloc(func, bytes, (void **)&plan->dev_scratch);
  if (ret != DART_OK) goto fail;
  char *at = plan->dev_scratch;
  for (size_t k = 0; k < plan->npeers; k++) {
    dart__plan_peer_t *p = &plan->peers[k];
    p->dev_out = at;
    p->dev_in = at + p->slot_bytes;
    at += 2 * p->slot_bytes;
  }
  plan->dev_ready = true;
  return DART_OK;

fail:
  device_release(plan);
  return ret;
}

static void plan_free(dart__plan_t *plan)
{
  device_release(plan);
  dart__types__pattern_free(&plan->self);
  for (size_t k = 0; k < plan->npeers; k++) {
    dart__types__pattern_free(&plan->peers[k].roots);
    dart__types__pattern_free(&plan->peers[k].leaves);
    dart__types__pattern_free(&plan->peers[k].from_roots);
    dart__types__pattern_free(&plan->peers[k].pack_roots);
  }
  free(plan->peers);
  free(plan);
}

/* A team's release: its plans' global memory goes with it. */
static void team_release(dart__team_t *team)
{
  for (uint32_t id = 0; id < plans.next_fresh; id++) {
    dart__plan_t *plan = dart__base__slots_get(&plans, id);
    if (plan != NULL && plan->team == team) {
      device_release(plan);
      plan->team = NULL;
      plan->buf_g = plan->words_g = plan->dev_slots_g = DART_GPTR_NULL;
    }
  }
}

dart_ret_t dart__plan__init(void)
{
  if (mtx_init(&plans_lock, mtx_plain) != thrd_success) {
    DART_LOG_ERROR("cannot create a mutex");
    return DART_ERR_OTHER;
  }
  dart__base__slots_init(&plans, 1u << 20, DART__SLOTS_REUSE_DELAYED);
  dart__team__on_release(team_release);
  return DART_OK;
}

void dart__plan__fini(void)
{
  for (uint32_t id = 0; id < plans.next_fresh; id++) {
    dart__plan_t *plan = dart__base__slots_get(&plans, id);
    if (plan != NULL) plan_free(plan);
  }
  dart__base__slots_destroy(&plans);
  mtx_destroy(&plans_lock);
}

/* ---- agreement ---- */

/* The worst of every unit's ret (DART_OK where all are); a unit whose
 * own ret was fine says why it fails. */
static dart_ret_t agree(const char *func, const dart__team_t *team,
                        dart_ret_t ret)
{
  int mine = (int)ret, worst;
  if (MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, team->comm) !=
      MPI_SUCCESS) {
    DART_LOG_ERROR_IN(func, "MPI_Allreduce failed");
    return DART_ERR_OTHER;
  }
  if (worst != DART_OK && ret == DART_OK)
    DART_LOG_ERROR_IN(func, "another unit of team %d failed (error %d)",
                      (int)team->id, worst);
  return (dart_ret_t)worst;
}

/* ---- the graph ---- */

typedef struct {
  int unit;
  uint64_t root;
  size_t leaf_no;
  int64_t leaf_at;
} edge_t;

static int edge_cmp(const void *x, const void *y)
{
  const edge_t *a = x, *b = y;
  if (a->unit != b->unit) return a->unit < b->unit ? -1 : 1;
  if (a->root != b->root) return a->root < b->root ? -1 : 1;
  return a->leaf_no < b->leaf_no ? -1 : a->leaf_no > b->leaf_no;
}

static int int64_cmp(const void *x, const void *y)
{
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return a < b ? -1 : a > b;
}

/* This unit's edges, sorted by owner, root and leaf, checked. */
static dart_ret_t edges_build(const char *func, const dart__team_t *team,
                              size_t nleaves, const size_t *ilocal,
                              const dart_plan_root_t *iremote,
                              edge_t **out, bool *dup_leaves)
{
  *out = NULL;
  *dup_leaves = false;
  if (nleaves == 0) return DART_OK;
  if (iremote == NULL) {
    DART_LOG_ERROR_IN(func, "iremote is NULL for %zu leaves", nleaves);
    return DART_ERR_INVAL;
  }
  edge_t *edges = malloc(nleaves * sizeof *edges);
  int64_t *at = malloc(nleaves * sizeof *at);
  if (edges == NULL || at == NULL) {
    free(edges);
    free(at);
    return DART_ERR_NOMEM;
  }
  dart_ret_t ret = DART_OK;
  for (size_t i = 0; i < nleaves; i++) {
    size_t place = ilocal ? ilocal[i] : i;
    int unit = iremote[i].unit.id;
    if (unit < 0 || unit >= team->size) {
      DART_LOG_ERROR_IN(func, "leaf %zu: root unit %d is not in team %d "
                              "(%d units)",
                        i, unit, (int)team->id, team->size);
      ret = DART_ERR_INVAL;
      break;
    }
    if (place > INT64_MAX || iremote[i].index > INT64_MAX) {
      DART_LOG_ERROR_IN(func, "leaf %zu: element %zu or root index %zu is "
                              "too large", i, place, iremote[i].index);
      ret = DART_ERR_INVAL;
      break;
    }
    edges[i] = (edge_t){unit, iremote[i].index, i, (int64_t)place};
    at[i] = (int64_t)place;
  }
  if (ret == DART_OK) {
    qsort(edges, nleaves, sizeof *edges, edge_cmp);
    qsort(at, nleaves, sizeof *at, int64_cmp);
    for (size_t i = 1; i < nleaves && !*dup_leaves; i++)
      *dup_leaves = at[i] == at[i - 1];
  }
  free(at);
  if (ret != DART_OK) {
    free(edges);
    return ret;
  }
  *out = edges;
  return DART_OK;
}

/* What the graph exchange gives: per unit, my edges to its roots and its
 * edges to mine (their root indices, in its order). */
typedef struct {
  int *scount, *sdispl, *rcount, *rdispl;
  uint64_t *sroots, *rroots;
} exchange_t;

static void exchange_free(exchange_t *x)
{
  free(x->scount);
  free(x->sdispl);
  free(x->rcount);
  free(x->rdispl);
  free(x->sroots);
  free(x->rroots);
}

/* Sends every owner the roots my leaves reference (the inversion). */
static dart_ret_t graph_exchange(const char *func, const dart__team_t *team,
                                 const edge_t *edges, size_t nedges,
                                 exchange_t *x)
{
  int n = team->size;
  dart_ret_t ret = DART_OK;
  uint64_t *scount64 = calloc((size_t)n, sizeof *scount64);
  uint64_t *rcount64 = calloc((size_t)n, sizeof *rcount64);
  x->scount = calloc((size_t)n, sizeof(int));
  x->sdispl = calloc((size_t)n, sizeof(int));
  x->rcount = calloc((size_t)n, sizeof(int));
  x->rdispl = calloc((size_t)n, sizeof(int));
  x->sroots = malloc((nedges ? nedges : 1) * sizeof *x->sroots);
  x->rroots = NULL;
  if (!scount64 || !rcount64 || !x->scount || !x->sdispl || !x->rcount ||
      !x->rdispl || !x->sroots)
    ret = DART_ERR_NOMEM;
  if (ret == DART_OK)
    for (size_t i = 0; i < nedges; i++) {
      scount64[edges[i].unit]++;
      x->sroots[i] = edges[i].root;
    }
  if ((ret = agree(func, team, ret)) != DART_OK) goto out;
  if (MPI_Alltoall(scount64, 1, MPI_UINT64_T, rcount64, 1, MPI_UINT64_T,
                   team->comm) != MPI_SUCCESS) {
    DART_LOG_ERROR_IN(func, "MPI_Alltoall failed");
    ret = DART_ERR_OTHER;
    goto out;
  }
  uint64_t stotal = 0, rtotal = 0;
  for (int u = 0; u < n; u++) {
    x->scount[u] = (int)scount64[u]; /* nedges <= total, checked below */
    x->sdispl[u] = (int)stotal;
    stotal += scount64[u];
    x->rdispl[u] = (int)(rtotal <= INT_MAX ? rtotal : 0);
    rtotal += rcount64[u];
    x->rcount[u] = (int)(rcount64[u] <= INT_MAX ? rcount64[u] : 0);
  }
  if (stotal > INT_MAX || rtotal > INT_MAX) {
    DART_LOG_ERROR_IN(func, "%llu leaves reference this unit's roots and it "
                            "has %llu; at most %d are supported",
                      (unsigned long long)rtotal,
                      (unsigned long long)stotal, INT_MAX);
    ret = DART_ERR_INVAL;
  } else if ((x->rroots = malloc((rtotal ? rtotal : 1) *
                                 sizeof *x->rroots)) == NULL) {
    ret = DART_ERR_NOMEM;
  }
  if ((ret = agree(func, team, ret)) != DART_OK) goto out;
  if (MPI_Alltoallv(x->sroots, x->scount, x->sdispl, MPI_UINT64_T,
                    x->rroots, x->rcount, x->rdispl, MPI_UINT64_T,
                    team->comm) != MPI_SUCCESS) {
    DART_LOG_ERROR_IN(func, "MPI_Alltoallv failed");
    ret = DART_ERR_OTHER;
  }
out:
  free(scount64);
  free(rcount64);
  return ret;
}

/* The patterns of my edges to one owner, in message order. */
typedef enum {
  LEAF_PACKED, /* a: my leaf, b: the message */
  LEAF_SELF,   /* my own edges: a: my root, b: my leaf */
  LEAF_DIRECT, /* a node peer's: a: my leaf, b: its root */
  ROOT_PACKED  /* a: its root, b: the message */
} leaf_form_t;

/* An edge and its offset from leaf to root, for ordering local patterns. */
typedef struct {
  int64_t shift;
  size_t rank; /* in the graph's order */
} shifted_t;

static int shifted_cmp(const void *x, const void *y)
{
  const shifted_t *a = x, *b = y;
  if (a->shift != b->shift) return a->shift < b->shift ? -1 : 1;
  return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/*
 * The order of edges within one array (my own, or read where a node
 * peer's roots lie): grouped by the offset from leaf to root, each group
 * in the graph's order. A halo's faces are such groups, and each turns
 * into one box of the pattern, where the graph's order (by root)
 * interleaves the faces that meet at an edge of the block. Only where
 * every root still sees its leaves in ascending leaf number (the order
 * reductions promise); order[k]: the k-th edge's rank. NULL where that
 * fails or without memory: the graph's order then.
 */
static size_t *local_order(const edge_t *edges, size_t count)
{
  shifted_t *s = malloc((count ? count : 1) * sizeof *s);
  size_t *order = malloc((count ? count : 1) * sizeof *order);
  size_t *pos = malloc((count ? count : 1) * sizeof *pos);
  if (s == NULL || order == NULL || pos == NULL) goto fail;
  for (size_t i = 0; i < count; i++)
    s[i] = (shifted_t){.shift = edges[i].leaf_at - (int64_t)edges[i].root,
                       .rank = i};
  qsort(s, count, sizeof *s, shifted_cmp);
  for (size_t k = 0; k < count; k++) {
    order[k] = s[k].rank;
    pos[s[k].rank] = k;
  }
  /* edges of one root are adjacent in the graph's order, by leaf number */
  for (size_t i = 1; i < count; i++)
    if (edges[i].root == edges[i - 1].root && pos[i] < pos[i - 1]) goto fail;
  free(pos);
  free(s);
  return order;
fail:
  free(pos);
  free(order);
  free(s);
  return NULL;
}

/* The pattern of edges in the order given (NULL: the graph's). */
static dart_ret_t ordered_pattern(const edge_t *edges, size_t count,
                                  leaf_form_t form, const size_t *order,
                                  dart__pattern_t *pat)
{
  bool packed = form == LEAF_PACKED || form == ROOT_PACKED;
  bool root_a = form == LEAF_SELF || form == ROOT_PACKED;
  /* zeroed: GCC cannot see that a count of 0 reads nothing */
  int64_t *a = calloc(count ? count : 1, sizeof *a);
  int64_t *b = packed ? NULL : calloc(count ? count : 1, sizeof *b);
  dart_ret_t ret = DART_ERR_NOMEM;
  if (a != NULL && (packed || b != NULL)) {
    for (size_t k = 0; k < count; k++) {
      const edge_t *e = &edges[order ? order[k] : k];
      a[k] = root_a ? (int64_t)e->root : e->leaf_at;
      if (!packed) b[k] = root_a ? e->leaf_at : (int64_t)e->root;
    }
    ret = dart__types__pattern_build(a, b, count, pat);
  }
  free(a);
  free(b);
  return ret;
}

/* Pieces the hot path walks: blocks, or elements of an index list. */
static size_t pattern_pieces(const dart__pattern_t *p)
{
  return p->blocks ? p->nblocks : p->nelem;
}

static dart_ret_t leaf_pattern(const edge_t *edges, size_t count,
                               leaf_form_t form, dart__pattern_t *pat)
{
  dart_ret_t ret = ordered_pattern(edges, count, form, NULL, pat);
  /* messages keep the graph's order, which both ends know; within one
   * array, grouping by offset may find fewer, larger blocks (a halo's
   * faces), or only scatter what the graph's order reads in sequence */
  if (ret != DART_OK || form == LEAF_PACKED || form == ROOT_PACKED)
    return ret;
  size_t *order = local_order(edges, count);
  if (order == NULL) return DART_OK;
  dart__pattern_t grouped;
  if (ordered_pattern(edges, count, form, order, &grouped) == DART_OK) {
    if (pattern_pieces(&grouped) < pattern_pieces(pat)) {
      dart__types__pattern_free(pat);
      *pat = grouped;
    } else {
      dart__types__pattern_free(&grouped);
    }
  }
  free(order);
  return DART_OK;
}

/* The peers and their patterns: every unit that reads my roots or whose
 * roots I read, ascending; and my own edges. */
static dart_ret_t patterns_build(const char *func, dart__plan_t *plan,
                                 const edge_t *edges, const exchange_t *x)
{
  const dart__team_t *team = plan->team;
  size_t npeers = 0;
  for (int u = 0; u < team->size; u++)
    if (u != plan->me && (x->scount[u] > 0 || x->rcount[u] > 0)) npeers++;
  plan->peers = calloc(npeers ? npeers : 1, sizeof *plan->peers);
  if (plan->peers == NULL) return DART_ERR_NOMEM;
  for (int u = 0; u < team->size; u++) {
    const uint64_t *roots = x->rroots + x->rdispl[u];
    for (int k = 0; k < x->rcount[u]; k++)
      if (roots[k] >= plan->nroots) {
        DART_LOG_ERROR_IN(func, "unit %d's leaf references root %llu of "
                                "this unit, which has %zu roots",
                          u, (unsigned long long)roots[k], plan->nroots);
        return DART_ERR_INVAL;
      }
    const edge_t *mine = edges + x->sdispl[u];
    if (u == plan->me) {
      plan->self_pos = plan->npeers;
      dart_ret_t ret =
          leaf_pattern(mine, (size_t)x->scount[u], LEAF_SELF, &plan->self);
      if (ret != DART_OK) return ret;
      continue;
    }
    if (x->scount[u] == 0 && x->rcount[u] == 0) continue;
    dart__plan_peer_t *p = &plan->peers[plan->npeers++];
    p->unit = u;
    p->direct = dart__team__shm_peer(team, u);
    dart_ret_t ret = leaf_pattern(mine, (size_t)x->scount[u], LEAF_PACKED,
                                  &p->leaves);
    /* a node peer's roots may be read where they are */
    if (ret == DART_OK && p->direct)
      ret = leaf_pattern(mine, (size_t)x->scount[u], LEAF_DIRECT,
                         &p->from_roots);
    if (ret == DART_OK && p->direct)
      ret = leaf_pattern(mine, (size_t)x->scount[u], ROOT_PACKED,
                         &p->pack_roots);
    if (ret != DART_OK) return ret;
    int64_t *a = malloc((x->rcount[u] ? (size_t)x->rcount[u] : 1) *
                        sizeof *a);
    if (a == NULL) return DART_ERR_NOMEM;
    for (int k = 0; k < x->rcount[u]; k++) a[k] = (int64_t)roots[k];
    ret = dart__types__pattern_build(a, NULL, (size_t)x->rcount[u], &p->roots);
    free(a);
    if (ret != DART_OK) return ret;
  }
  return DART_OK;
}

/* ---- global memory ---- */

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

static dart_gptr_t at_unit(dart_gptr_t g, int unit, uint64_t offset)
{
  g.unitid = unit;
  g.addr_or_offs.offset += offset;
  return g;
}

/* After every unit's ret agreed: the largest unit's part of an allocation
 * (*most, from mine) and, from where I keep what each unit u sends me
 * (offset[u]), where u keeps what I send it (peer_offset[u]). */
static dart_ret_t parts_exchange(const char *func, const dart__team_t *team,
                                 dart_ret_t ret, uint64_t mine,
                                 const uint64_t *offset,
                                 uint64_t *peer_offset, uint64_t *most)
{
  if ((ret = agree(func, team, ret)) != DART_OK) return ret;
  if (MPI_Allreduce(&mine, most, 1, MPI_UINT64_T, MPI_MAX, team->comm) !=
          MPI_SUCCESS ||
      MPI_Alltoall(offset, 1, MPI_UINT64_T, peer_offset, 1, MPI_UINT64_T,
                   team->comm) != MPI_SUCCESS) {
    DART_LOG_ERROR_IN(func, "MPI_Allreduce or MPI_Alltoall failed");
    return DART_ERR_OTHER;
  }
  return DART_OK;
}

/*
 * Each unit's part of the plan's memory: two inbound slots per peer, then
 * a staging slot per peer across nodes; and 2 * size signal words: word u
 * counts unit u's messages to me, word size + u my messages unit u
 * consumed. Every unit learns where its slots lie at each peer.
 */
static dart_ret_t memory_build(const char *func, dart__plan_t *plan)
{
  dart__team_t *team = plan->team;
  int n = team->size, me = plan->me;
  size_t elem = plan->type->elem_size, mine = 0;
  uint64_t *offset = calloc((size_t)n, sizeof *offset);
  uint64_t *peer_offset = calloc((size_t)n, sizeof *peer_offset);
  dart_ret_t ret = offset && peer_offset ? DART_OK : DART_ERR_NOMEM;
  for (size_t k = 0; ret == DART_OK && k < plan->npeers; k++) {
    dart__plan_peer_t *p = &plan->peers[k];
    size_t most = p->roots.nelem > p->leaves.nelem ? p->roots.nelem
                                                   : p->leaves.nelem;
    p->slot_bytes = round_up(most * elem, 64);
    offset[p->unit] = mine;
    mine += 2 * sizeof(dart__plan_desc_t) + 2 * p->slot_bytes;
  }
  size_t staging = mine;
  for (size_t k = 0; ret == DART_OK && k < plan->npeers; k++)
    if (!plan->peers[k].direct) mine += plan->peers[k].slot_bytes;
  uint64_t most = 0;
  ret = parts_exchange(func, team, ret, mine, offset, peer_offset, &most);
  if (ret != DART_OK || most == 0) goto out; /* 0: no unit sends anything */
  ret = dart_team_memalloc_aligned(plan->team_id, most, DART_TYPE_BYTE,
                                   &plan->buf_g);
  if (ret != DART_OK) goto out;
  ret = dart_team_memalloc_aligned(plan->team_id, 2 * (size_t)n,
                                   DART_TYPE_ULONGLONG, &plan->words_g);
  if (ret != DART_OK) goto out;
  char *base;
  _Atomic uint64_t *words;
  ret = dart_gptr_getaddr(at_unit(plan->buf_g, me, 0), (void **)&base);
  if (ret == DART_OK)
    ret = dart_gptr_getaddr(at_unit(plan->words_g, me, 0), (void **)&words);
  for (size_t k = 0; ret == DART_OK && k < plan->npeers; k++) {
    dart__plan_peer_t *p = &plan->peers[k];
    int u = p->unit;
    size_t descs = 2 * sizeof(dart__plan_desc_t);
    p->in_desc = (dart__plan_desc_t *)(void *)(base + offset[u]);
    memset(p->in_desc, 0, descs); /* no message read in place yet */
    for (int i = 0; i < 2; i++) {
      p->in[i] = base + offset[u] + descs + (size_t)i * p->slot_bytes;
      p->out_g[i] = at_unit(plan->buf_g, u,
                            peer_offset[u] + descs +
                                (size_t)i * p->slot_bytes);
    }
    p->in_word = &words[u];
    p->ack_word = &words[n + u];
    p->in_word_g = at_unit(plan->words_g, me, 8 * (uint64_t)u);
    p->ack_word_g = at_unit(plan->words_g, me, 8 * (uint64_t)(n + u));
    p->peer_in_word_g = at_unit(plan->words_g, u, 8 * (uint64_t)me);
    p->peer_ack_word_g = at_unit(plan->words_g, u, 8 * (uint64_t)(n + me));
    /* signal words are atomics: zeroed by atomic updates */
    ret = dart_signal(p->in_word_g, 0, DART_SIGNAL_SET);
    if (ret == DART_OK) ret = dart_signal(p->ack_word_g, 0, DART_SIGNAL_SET);
    if (ret != DART_OK) break;
    if (!p->direct) {
      p->staging = base + staging;
      staging += p->slot_bytes;
      continue;
    }
    void *addr[5] = {NULL, NULL, NULL, NULL, NULL};
    dart_gptr_t g[5] = {p->out_g[0], p->out_g[1], p->peer_in_word_g,
                        p->peer_ack_word_g,
                        at_unit(plan->buf_g, u, peer_offset[u])};
    for (int i = 0; i < 5 && ret == DART_OK; i++)
      ret = dart_gptr_getaddr_shared(g[i], &addr[i]);
    if (ret == DART_OK &&
        (!addr[0] || !addr[1] || !addr[2] || !addr[3] || !addr[4])) {
      DART_LOG_ERROR_IN(func, "node peer %d's plan memory is not shared", u);
      ret = DART_ERR_OTHER;
    }
    if (ret != DART_OK) break;
    p->out[0] = addr[0];
    p->out[1] = addr[1];
    p->peer_in_word = addr[2];
    p->peer_ack_word = addr[3];
    p->out_desc = addr[4];
  }
  /* no unit's first message may land before the zeroing above */
  ret = agree(func, team, ret);
  if (ret == DART_OK) ret = dart_barrier(plan->team_id);
out:
  free(offset);
  free(peer_offset);
  return ret;
}

/*
 * Where every unit has a device: each unit's two inbound device slots per
 * node peer, in device memory that node peers map (IPC), so that device
 * buffers' messages go from device to device; before them the peer's two
 * device words (plan.h), used where the streams signal each other.
 */
#define DEVICE_WORDS_BYTES 16 /* two words, keeping the slots aligned */
static dart_ret_t device_slots_build(const char *func, dart__plan_t *plan)
{
  dart__team_t *team = plan->team;
  int n = team->size;
  uint64_t mine = 0, most = 0;
  uint64_t *offset = calloc((size_t)n, sizeof *offset);
  uint64_t *peer_offset = calloc((size_t)n, sizeof *peer_offset);
  dart_ret_t ret = offset && peer_offset ? DART_OK : DART_ERR_NOMEM;
  for (size_t k = 0; ret == DART_OK && k < plan->npeers; k++) {
    const dart__plan_peer_t *p = &plan->peers[k];
    if (!p->direct) continue;
    offset[p->unit] = mine;
    mine += DEVICE_WORDS_BYTES +
            (2 * p->slot_bytes + DEVICE_WORDS_BYTES - 1) /
                DEVICE_WORDS_BYTES * DEVICE_WORDS_BYTES;
  }
  ret = parts_exchange(func, team, ret, mine, offset, peer_offset, &most);
  if (ret != DART_OK || most == 0) goto out; /* 0: no node peers */
  ret = dart_team_memalloc_kind(plan->team_id, most, DART_TYPE_BYTE,
                                DART_MEMKIND_CUDA, &plan->dev_slots_g);
  char *base = NULL;
  if (ret == DART_OK)
    ret = dart_gptr_getaddr(at_unit(plan->dev_slots_g, plan->me, 0),
                            (void **)&base);
  static const uint32_t zero[2];
  for (size_t k = 0; ret == DART_OK && k < plan->npeers; k++) {
    dart__plan_peer_t *p = &plan->peers[k];
    if (!p->direct) continue;
    char *in = base + offset[p->unit];
    void *out = NULL;
    ret = dart_gptr_getaddr_shared(
        at_unit(plan->dev_slots_g, p->unit, peer_offset[p->unit]), &out);
    if (ret == DART_OK && out == NULL) {
      DART_LOG_ERROR_IN(func, "node peer %d's device slots are not mapped",
                        p->unit);
      ret = DART_ERR_OTHER;
    }
    if (ret != DART_OK) break;
    for (int i = 0; i < 2; i++) {
      size_t at = DEVICE_WORDS_BYTES + (size_t)i * p->slot_bytes;
      p->dev_slot_in[i] = in + at;
      p->dev_slot_out[i] = (char *)out + at;
    }
    if (!dart__gpu.words) continue;
    p->dev_in_word = (uint32_t *)(void *)in;
    p->dev_ack_word = p->dev_in_word + 1;
    p->peer_dev_in_word = (uint32_t *)out;
    p->peer_dev_ack_word = p->peer_dev_in_word + 1;
    ret = dart__gpu.ops->copy(func, in, zero, sizeof zero, NULL);
  }
  /* my words are zero before any peer may set them */
  if (ret == DART_OK && dart__gpu.words)
    ret = dart__gpu.ops->stream_sync(func, NULL);
  ret = agree(func, team, ret);
out:
  free(offset);
  free(peer_offset);
  return ret;
}

/* Frees the device slots (collective) and forgets them. */
static void device_slots_drop(dart__plan_t *plan)
{
  if (!DART_GPTR_ISNULL(plan->dev_slots_g))
    dart_team_memfree(plan->dev_slots_g);
  plan->dev_slots_g = DART_GPTR_NULL;
  for (size_t k = 0; k < plan->npeers; k++) {
    dart__plan_peer_t *p = &plan->peers[k];
    for (int i = 0; i < 2; i++) p->dev_slot_in[i] = p->dev_slot_out[i] = NULL;
    p->dev_in_word = p->dev_ack_word = NULL;
    p->peer_dev_in_word = p->peer_dev_ack_word = NULL;
  }
}

static void memory_free(dart__plan_t *plan)
{
  device_slots_drop(plan);
  if (!DART_GPTR_ISNULL(plan->words_g)) dart_team_memfree(plan->words_g);
  if (!DART_GPTR_ISNULL(plan->buf_g)) dart_team_memfree(plan->buf_g);
  plan->buf_g = plan->words_g = DART_GPTR_NULL;
}

/* ---- creating and destroying ---- */

/* dart_plan_create for func; pre: the caller's own checks, agreed on with
 * the others first. */
static dart_ret_t plan_create(const char *func, dart_team_t team_id,
                              size_t nroots, size_t nleaves,
                              const size_t *ilocal,
                              const dart_plan_root_t *iremote,
                              dart_datatype_t type, dart_plan_t *out,
                              dart_ret_t pre)
{
  dart__team_t *team = dart__team__lookup(func, team_id);
  if (team == NULL) return DART_ERR_INVAL;
  const dart__dtype_t *t = dart__types__dtype(type);
  dart_ret_t ret = pre;
  edge_t *edges = NULL;
  bool dup_leaves = false;
  if (ret == DART_OK && out == NULL) {
    DART_LOG_ERROR_IN(func, "plan is NULL");
    ret = DART_ERR_INVAL;
  } else if (ret == DART_OK && (t == NULL || t->kind != DART__DT_BASIC)) {
    DART_LOG_ERROR_IN(func, "datatype %ld is not a basic type", (long)type);
    ret = DART_ERR_INVAL;
  } else if (ret == DART_OK) {
    ret = edges_build(func, team, nleaves, ilocal, iremote, &edges,
                      &dup_leaves);
  }
  dart__plan_t *plan = ret == DART_OK ? calloc(1, sizeof *plan) : NULL;
  if (ret == DART_OK && plan == NULL) ret = DART_ERR_NOMEM;
  if ((ret = agree(func, team, ret)) != DART_OK) {
    free(plan);
    free(edges);
    return ret;
  }
  plan->team_id = team_id;
  plan->team = team;
  plan->me = team->myid;
  plan->type = t;
  plan->nroots = nroots;
  plan->nleaves = nleaves;
  plan->dup_leaves = dup_leaves;
  plan->buf_g = plan->words_g = plan->dev_slots_g = DART_GPTR_NULL;
  dart__types__op_local(func, DART_OP_REPLACE, t, &plan->replace);
  exchange_t x;
  ret = graph_exchange(func, team, edges, nleaves, &x);
  if (ret == DART_OK)
    ret = agree(func, team, patterns_build(func, plan, edges, &x));
  exchange_free(&x);
  free(edges);
  if (ret == DART_OK) ret = memory_build(func, plan);
  /* device slots only speed device buffers up: a plan goes without them
   * (on every unit: the failure is agreed on) rather than fail */
  if (ret == DART_OK && dart__gpu.any_device &&
      device_slots_build(func, plan) != DART_OK) {
    DART_LOG_WARN("a plan without device slots: device buffers' "
                  "messages between node peers go through host "
                  "memory");
    device_slots_drop(plan);
  }
  if (ret == DART_OK) {
    mtx_lock(&plans_lock);
    bool inserted = dart__base__slots_insert(&plans, plan, &plan->id) == 0;
    mtx_unlock(&plans_lock);
    ret = agree(func, team, inserted ? DART_OK : DART_ERR_NOMEM);
    if (ret != DART_OK && inserted) {
      mtx_lock(&plans_lock);
      dart__base__slots_remove(&plans, plan->id);
      mtx_unlock(&plans_lock);
    }
  }
  if (ret != DART_OK) {
    memory_free(plan);
    plan_free(plan);
    return ret;
  }
  *out = (dart_plan_t)(uintptr_t)(plan->id + 1ull);
  return DART_OK;
}

dart_ret_t dart_plan_create(dart_team_t team, size_t nroots, size_t nleaves,
                            const size_t *ilocal,
                            const dart_plan_root_t *iremote,
                            dart_datatype_t type, dart_plan_t *plan)
{
  DART__CHECK_INIT();
  return plan_create(__func__, team, nroots, nleaves, ilocal, iremote, type,
                     plan, DART_OK);
}

dart_ret_t dart_plan_destroy(dart_plan_t *handle)
{
  DART__CHECK_INIT();
  if (handle == NULL) {
    DART_LOG_ERROR("plan is NULL");
    return DART_ERR_INVAL;
  }
  dart__plan_t *plan = plan_live(__func__, *handle);
  if (plan == NULL) return DART_ERR_INVAL;
  if (plan->active != DART__PLAN_IDLE) {
    DART_LOG_ERROR("plan %p has an operation begun and not ended",
                   (void *)*handle);
    return DART_ERR_INVAL;
  }
  /* the device must be done with the slots before they go (every unit
   * frees its own, so no acknowledgement is owed any more) */
  dart_ret_t ret = dart__plan__settle(__func__, plan, false, false);
  if (ret != DART_OK) return ret;
  mtx_lock(&plans_lock);
  dart__base__slots_remove(&plans, plan->id);
  mtx_unlock(&plans_lock);
  memory_free(plan);
  plan_free(plan);
  *handle = NULL;
  return DART_OK;
}

/* ---- halos ---- */

/* The block of grid coordinate c along an extent over p units. */
static void halo_block(size_t extent, int p, int c, size_t *first,
                       size_t *len)
{
  size_t q = extent / (size_t)p, r = extent % (size_t)p, cc = (size_t)c;
  *first = cc * q + (cc < r ? cc : r);
  *len = q + (cc < r ? 1 : 0);
}

/* The grid coordinate that owns element x along an extent over p units. */
static int halo_owner(size_t extent, int p, size_t x)
{
  size_t q = extent / (size_t)p, r = extent % (size_t)p, big = r * (q + 1);
  return (int)(x < big ? x / (q + 1) : r + (x - big) / q);
}

typedef struct {
  int ndims;
  size_t extent[3], halo;
  int units[3];
  int periodic;
} halo_geom_t;

/* Unit u's block: first element and length per dimension, and its
 * ghosted block's strides. */
static void halo_unit(const halo_geom_t *g, int u, size_t *first,
                      size_t *len, size_t *stride)
{
  int coord[3];
  for (int d = g->ndims - 1; d >= 0; d--) {
    coord[d] = u % g->units[d];
    u /= g->units[d];
  }
  for (int d = 0; d < g->ndims; d++)
    halo_block(g->extent[d], g->units[d], coord[d], &first[d], &len[d]);
  size_t s = 1;
  for (int d = g->ndims - 1; d >= 0; d--) {
    stride[d] = s;
    s *= len[d] + 2 * g->halo;
  }
}

/* Visits the leaves of unit me's ghosted block in row-major order: sets
 * ilocal and iremote where non-NULL; returns the count. */
static size_t halo_leaves(const halo_geom_t *g, int me, size_t *ilocal,
                          dart_plan_root_t *iremote)
{
  size_t first[3], len[3], stride[3], total = 1, count = 0, h = g->halo;
  halo_unit(g, me, first, len, stride);
  for (int d = 0; d < g->ndims; d++) total *= len[d] + 2 * h;
  for (size_t at = 0; at < total; at++) {
    size_t rest = at, gc[3];
    for (int d = 0; d < g->ndims; d++) {
      gc[d] = rest / stride[d];
      rest %= stride[d];
    }
    /* a face element: outside the owned box along exactly one dimension */
    int outside = -1, n_out = 0;
    for (int d = 0; d < g->ndims; d++)
      if (gc[d] < h || gc[d] >= h + len[d]) {
        outside = d;
        n_out++;
      }
    if (n_out != 1) continue;
    size_t x[3];
    bool beyond = false;
    for (int d = 0; d < g->ndims; d++) {
      /* global position, which may lie before 0 or past the extent */
      int64_t pos = (int64_t)first[d] + (int64_t)gc[d] - (int64_t)h;
      int64_t e = (int64_t)g->extent[d];
      if (d == outside && (pos < 0 || pos >= e)) {
        if (!g->periodic) beyond = true;
        pos = ((pos % e) + e) % e;
      }
      x[d] = (size_t)pos;
    }
    if (beyond) continue;
    int owner = 0;
    int ocoord[3];
    for (int d = 0; d < g->ndims; d++) {
      ocoord[d] = halo_owner(g->extent[d], g->units[d], x[d]);
      owner = owner * g->units[d] + ocoord[d];
    }
    if (ilocal != NULL) {
      size_t ofirst[3], olen[3], ostride[3], index = 0;
      halo_unit(g, owner, ofirst, olen, ostride);
      for (int d = 0; d < g->ndims; d++)
        index += (x[d] - ofirst[d] + h) * ostride[d];
      ilocal[count] = at;
      iremote[count] = (dart_plan_root_t){{owner}, index};
    }
    count++;
  }
  return count;
}

/* The geometry's own checks (this unit's arguments). */
static dart_ret_t halo_check(const char *func, const dart__team_t *team,
                             int ndims, const size_t *global_extent,
                             const int *units_per_dim, size_t halo,
                             int periodic, halo_geom_t *g)
{
  if (ndims < 1 || ndims > 3) {
    DART_LOG_ERROR_IN(func, "ndims %d is not 1, 2 or 3", ndims);
    return DART_ERR_INVAL;
  }
  if (global_extent == NULL || units_per_dim == NULL) {
    DART_LOG_ERROR_IN(func, "global_extent %p or units_per_dim %p is NULL",
                      (const void *)global_extent,
                      (const void *)units_per_dim);
    return DART_ERR_INVAL;
  }
  long long units = 1;
  size_t elems = 1; /* of the largest ghosted block, which must fit */
  g->ndims = ndims;
  g->halo = halo;
  g->periodic = periodic;
  for (int d = 0; d < ndims; d++) {
    if (units_per_dim[d] < 1 || global_extent[d] < (size_t)units_per_dim[d] ||
        global_extent[d] > (size_t)INT32_MAX || halo > (size_t)INT32_MAX) {
      DART_LOG_ERROR_IN(func, "dimension %d: %zu elements over %d units "
                              "with halo %zu (every unit needs one "
                              "element; at most 2^31 - 1 each)",
                        d, global_extent[d], units_per_dim[d], halo);
      return DART_ERR_INVAL;
    }
    units *= units_per_dim[d];
    if (__builtin_mul_overflow(
            elems, global_extent[d] / (size_t)units_per_dim[d] + 1 + 2 * halo,
            &elems)) {
      DART_LOG_ERROR_IN(func, "a unit's block with halo %zu has more than "
                              "SIZE_MAX elements", halo);
      return DART_ERR_INVAL;
    }
    g->extent[d] = global_extent[d];
    g->units[d] = units_per_dim[d];
    if (units > team->size) break;
  }
  if (units != team->size) {
    DART_LOG_ERROR_IN(func, "the unit grid has %lld units, team %d has %d",
                      units, (int)team->id, team->size);
    return DART_ERR_INVAL;
  }
  return DART_OK;
}

dart_ret_t dart_plan_create_halo(dart_team_t team, int ndims,
                                 const size_t *global_extent,
                                 const int *units_per_dim, size_t halo,
                                 int periodic, dart_datatype_t type,
                                 dart_plan_t *plan)
{
  DART__CHECK_INIT();
  dart__team_t *t = dart__team__lookup(__func__, team);
  if (t == NULL) return DART_ERR_INVAL;
  halo_geom_t g;
  dart_ret_t ret = halo_check(__func__, t, ndims, global_extent,
                              units_per_dim, halo, periodic, &g);
  size_t nleaves = 0, nroots = 0, *ilocal = NULL;
  dart_plan_root_t *iremote = NULL;
  if (ret == DART_OK) {
    size_t first[3], len[3], stride[3];
    halo_unit(&g, t->myid, first, len, stride);
    nroots = stride[0] * (len[0] + 2 * halo);
    nleaves = halo_leaves(&g, t->myid, NULL, NULL);
    ilocal = malloc((nleaves ? nleaves : 1) * sizeof *ilocal);
    iremote = malloc((nleaves ? nleaves : 1) * sizeof *iremote);
    if (ilocal == NULL || iremote == NULL)
      ret = DART_ERR_NOMEM;
    else
      halo_leaves(&g, t->myid, ilocal, iremote);
  }
  ret = plan_create(__func__, team, nroots, nleaves, ilocal, iremote, type,
                    plan, ret);
  free(ilocal);
  free(iremote);
  return ret;
}
