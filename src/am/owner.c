/*
 * Atomics their owners apply (dart_am.h, DART_AM_ATOMICS_OWNER): the owner
 * path's table. On such a segment a unit updates the parts it loads and
 * stores with CPU atomics (path_shm.c); for any other part it sends the
 * operation to the part's owner, which applies it with the same CPU
 * atomics, so that every atomic on a word is a CPU atomic of its node and
 * all stay atomic with each other. Accumulates are only started: each
 * goes into a batch per target unit, sent as one message when the batch
 * fills or at a flush, which waits until the owner ran it. Fetching
 * operations and compare-and-swap send the unit's batch first (a pair's
 * messages run in order), then one call each.
 */
#include <stdlib.h>
#include <string.h>

#include "am/am.h"
#include "base/copy.h"
#include "base/log.h"
#include "globmem/globmem.h"
#include "globmem/segment.h"
#include "transport/transport.h"

/* teams with owner-applied atomics at once (a flush of every team's) */
#define MAX_TEAMS 64

/* One accumulate of a batch: element of size bytes at offset of the
 * owner's part of segment segid. */
typedef struct {
  int16_t segid;
  uint8_t type; /* dart_datatype_t, basic */
  uint8_t size;
  int32_t op;   /* dart_operation_t, predefined */
  uint64_t offset;
  uint64_t value;
} record_t;
_Static_assert(sizeof(record_t) == 24, "a batch record's size");

/* A fetching operation or compare-and-swap on one element. */
typedef struct {
  int32_t kind; /* dart__atomic_kind_t */
  int16_t segid;
  uint8_t type;
  uint8_t size;
  int32_t op;
  int32_t pad;
  uint64_t offset;
  uint64_t value[2];
  uint64_t compare[2];
} call_t;

typedef struct {
  atomic_flag lock; /* am->threads */
  uint32_t n;
  record_t *records; /* cap of them, allocated on first use */
} batch_t;

typedef struct {
  dart__am_team_t *am;
  batch_t *batches; /* by team unit */
  uint32_t cap;     /* records per batch: one fragment */
} owner_t;

static _Atomic(owner_t *) owners[MAX_TEAMS];
/* how many are set: a flush of all (every barrier) skips the table when
 * none is */
static atomic_int owners_open;

static owner_t *owner_of(const dart__team_t *team)
{
  return team->am != NULL ? (owner_t *)team->am->owner : NULL;
}

/* ---- at the owner ---- */

/* The target of an operation on this unit's part, or false with a log
 * line where it names no such part. */
static bool my_target(const dart__am_team_t *am, int origin, int16_t segid,
                      uint64_t offset, size_t size, dart__target_t *target)
{
  dart__team_t *team = am->team;
  dart__segment_t *seg = dart__team__segtab_get(&team->segs, segid);
  const dart__route_t *r = seg != NULL ? &seg->routes[team->myid] : NULL;
  if (r == NULL || !seg->owner_atomics || offset + size > r->size) {
    DART_LOG_ERROR_IN("dart_am (owner atomics)", "unit %d's atomic on "
                      "segment %d, offset %llu: no such part here",
                      origin, (int)segid, (unsigned long long)offset);
    return false;
  }
  *target = (dart__target_t){.team = team,
                             .seg = seg,
                             .route = r,
                             .offset = offset,
                             .unit = team->myid};
  return true;
}

/* Records in flight between their prefetch and their update: a locked
 * instruction waits for its line, so that updated one by one every random
 * record would pay a whole miss; this many lines come in meanwhile. */
#define AHEAD 16

typedef struct {
  record_t r;
  dart__target_t target;
} resolved_t;

static void apply_record(const resolved_t *x)
{
  dart__atomic_t a = {.func = "dart_accumulate",
                      .target = &x->target,
                      .kind = DART__ATOMIC_ACCUMULATE,
                      .type = x->r.type,
                      .size = x->r.size,
                      .op = x->r.op,
                      .values = &x->r.value,
                      .nelem = 1};
  dart__transport__paths[DART__PATH_SHM]->atomic(&a);
}

void dart__am__owner_batch(dart__am_team_t *am, int origin,
                           const void *payload, size_t len)
{
  resolved_t ahead[AHEAD]; /* a ring: [tail, head) resolved, prefetched */
  size_t head = 0, tail = 0;
  for (size_t at = 0; at + sizeof(record_t) <= len; at += sizeof(record_t)) {
    resolved_t *x = &ahead[head % AHEAD];
    memcpy(&x->r, (const char *)payload + at, sizeof x->r);
    if (!my_target(am, origin, x->r.segid, x->r.offset, x->r.size,
                   &x->target))
      continue;
    dart__base__prefetch_write(x->target.route->base + x->target.offset);
    if (++head - tail == AHEAD) apply_record(&ahead[tail++ % AHEAD]);
  }
  while (tail < head) apply_record(&ahead[tail++ % AHEAD]);
}

void dart__am__owner_call(dart__am_team_t *am, int origin,
                          const void *payload, size_t len, void *reply,
                          size_t *reply_len)
{
  call_t c;
  dart__target_t target;
  if (len != sizeof c) return;
  memcpy(&c, payload, sizeof c);
  if (!my_target(am, origin, c.segid, c.offset, c.size, &target)) return;
  dart__atomic_t a = {.func = "dart_fetch_and_op",
                      .target = &target,
                      .kind = (dart__atomic_kind_t)c.kind,
                      .type = c.type,
                      .size = c.size,
                      .op = c.op,
                      .values = c.value,
                      .compare = c.compare,
                      .result = reply,
                      .nelem = 1};
  dart__transport__paths[DART__PATH_SHM]->atomic(&a);
  *reply_len = c.size;
}

/* ---- at the origin ---- */

/* Sends u's batch, if any (its lock held). */
static dart_ret_t send_batch(const char *func, owner_t *o, int u)
{
  batch_t *b = &o->batches[u];
  if (b->n == 0) return DART_OK;
  dart_ret_t ret =
      dart__am__message(func, o->am, u, DART__AM_OWNER_BATCH, b->records,
                        b->n * sizeof(record_t), NULL, 0, NULL);
  b->n = 0;
  return ret;
}

static dart_ret_t ship(const char *func, owner_t *o, int u)
{
  batch_t *b = &o->batches[u];
  dart__am__lock(o->am, &b->lock);
  dart_ret_t ret = send_batch(func, o, u);
  dart__am__unlock(o->am, &b->lock);
  return ret;
}

/* Adds an accumulate to u's batch, sent once full. */
static dart_ret_t add(const char *func, owner_t *o, int u,
                      const record_t *r)
{
  batch_t *b = &o->batches[u];
  dart_ret_t ret = DART_OK;
  dart__am__lock(o->am, &b->lock);
  if (b->records == NULL &&
      (b->records = malloc(o->cap * sizeof(record_t))) == NULL) {
    DART_LOG_ERROR_IN(func, "no memory for a batch of accumulates");
    ret = DART_ERR_NOMEM;
  } else {
    b->records[b->n++] = *r;
    if (b->n == o->cap) ret = send_batch(func, o, u);
  }
  dart__am__unlock(o->am, &b->lock);
  return ret;
}

static dart_ret_t owner_atomic(const dart__atomic_t *a)
{
  const dart__target_t *t = a->target;
  owner_t *o = owner_of(t->team);
  if (a->kind == DART__ATOMIC_ACCUMULATE && a->size <= sizeof(uint64_t)) {
    record_t r = {.segid = t->seg->id,
                  .type = (uint8_t)a->type,
                  .size = (uint8_t)a->size,
                  .op = (int32_t)a->op};
    dart_ret_t ret = DART_OK;
    for (size_t i = 0; i < a->nelem && ret == DART_OK; i++) {
      r.offset = t->offset + i * a->size;
      r.value = 0;
      memcpy(&r.value, (const char *)a->values + i * a->size, a->size);
      ret = add(a->func, o, t->unit, &r);
    }
    return ret;
  }
  if (a->size > sizeof(((call_t *)0)->value) || a->nelem != 1) {
    DART_LOG_ERROR_IN(a->func, "%zu elements of %zu bytes: not an atomic "
                      "the owner applies", a->nelem, a->size);
    return DART_ERR_INVAL;
  }
  call_t c = {.kind = (int32_t)a->kind,
              .segid = t->seg->id,
              .type = (uint8_t)a->type,
              .size = (uint8_t)a->size,
              .op = (int32_t)a->op,
              .offset = t->offset};
  if (a->values != NULL) memcpy(c.value, a->values, a->size);
  if (a->compare != NULL) memcpy(c.compare, a->compare, a->size);
  uint64_t old[2];
  size_t got = 0;
  /* after the accumulates started before it */
  dart_ret_t ret = ship(a->func, o, t->unit);
  if (ret == DART_OK)
    ret = dart__am__message(a->func, o->am, t->unit, DART__AM_OWNER_CALL, &c,
                            sizeof c, old, sizeof old, &got);
  if (ret == DART_OK && got != a->size) {
    DART_LOG_ERROR_IN(a->func, "unit %d could not apply the atomic (its log "
                      "says why)", t->unit);
    ret = DART_ERR_OTHER;
  }
  if (ret == DART_OK && a->result != NULL) memcpy(a->result, old, a->size);
  return ret;
}

static dart_ret_t owner_cached_accumulate(const char *func,
                                          dart__route_cache_t *e,
                                          uint64_t offset, const void *value,
                                          size_t size, dart_operation_t op)
{
  /* one-instruction operations on integers: the sign does not matter */
  record_t r = {.segid = e->seg->id,
                .type = size == 4 ? DART_TYPE_UINT : DART_TYPE_ULONGLONG,
                .size = (uint8_t)size,
                .op = (int32_t)op,
                .offset = offset};
  memcpy(&r.value, value, size);
  dart_ret_t ret = add(func, owner_of(e->team), e->unit, &r);
  dart__transport__count_op(DART__PATH_OWNER);
  return ret;
}

static dart_ret_t owner_flush(const char *func, dart__team_t *team, int unit)
{
  owner_t *o = owner_of(team);
  if (o == NULL) return DART_OK;
  dart_ret_t ret = ship(func, o, unit);
  return ret == DART_OK ? dart__am__flush(func, o->am, unit) : ret;
}

/* Accumulates copy their operands: sending the batch is enough. */
static dart_ret_t owner_flush_local(const char *func, dart__team_t *team,
                                    int unit)
{
  owner_t *o = owner_of(team);
  return o != NULL ? ship(func, o, unit) : DART_OK;
}

static dart_ret_t flush_team(const char *func, owner_t *o)
{
  dart_ret_t ret = DART_OK;
  for (int u = 0; u < o->am->team->size && ret == DART_OK; u++)
    ret = ship(func, o, u);
  return ret == DART_OK ? dart__am__flush(func, o->am, -1) : ret;
}

static dart_ret_t owner_flush_all(const char *func, dart__team_t *team)
{
  if (team != NULL) {
    owner_t *o = owner_of(team);
    return o != NULL ? flush_team(func, o) : DART_OK;
  }
  dart_ret_t ret = DART_OK;
  if (atomic_load_explicit(&owners_open, memory_order_acquire) == 0)
    return DART_OK;
  for (int i = 0; i < MAX_TEAMS && ret == DART_OK; i++) {
    owner_t *o = atomic_load_explicit(&owners[i], memory_order_acquire);
    if (o != NULL) ret = flush_team(func, o);
  }
  return ret;
}

const dart__path_ops_t dart__path_owner = {
    .info = "owner (atomics the owner applies, through active messages)",
    .atomic = owner_atomic,
    .cached_accumulate = owner_cached_accumulate,
    .flush = owner_flush,
    .flush_local = owner_flush_local,
    .flush_all = owner_flush_all};

/* ---- life ---- */

static dart_ret_t owner_open(const char *func, dart__team_t *team)
{
  dart__am_team_t *am;
  dart_ret_t ret = dart__am__team(func, team, &am);
  if (ret != DART_OK || am->owner != NULL) return ret;
  owner_t *o = calloc(1, sizeof *o);
  if (o != NULL) o->batches = calloc((size_t)team->size, sizeof *o->batches);
  int slot = -1;
  for (int i = 0; o != NULL && o->batches != NULL && i < MAX_TEAMS; i++) {
    owner_t *none = NULL;
    if (atomic_compare_exchange_strong(&owners[i], &none, o)) {
      slot = i;
      break;
    }
  }
  if (slot < 0) {
    DART_LOG_ERROR_IN(func, "no memory for owner-applied atomics, or more "
                      "than %d teams have them", MAX_TEAMS);
    if (o != NULL) free(o->batches);
    free(o);
    return DART_ERR_NOMEM;
  }
  o->am = am;
  o->cap = (uint32_t)(am->frag_payload / sizeof(record_t));
  for (int u = 0; u < team->size; u++)
    atomic_flag_clear(&o->batches[u].lock);
  am->owner = o;
  atomic_fetch_add_explicit(&owners_open, 1, memory_order_release);
  return DART_OK;
}

void dart__am__owner_close(dart__am_team_t *am)
{
  owner_t *o = am->owner;
  if (o == NULL) return;
  for (int i = 0; i < MAX_TEAMS; i++) {
    owner_t *mine = o;
    if (atomic_compare_exchange_strong(&owners[i], &mine, NULL)) {
      atomic_fetch_sub_explicit(&owners_open, 1, memory_order_relaxed);
      break;
    }
  }
  for (int u = 0; u < am->team->size; u++) free(o->batches[u].records);
  free(o->batches);
  free(o);
  am->owner = NULL;
}

void dart__am__owner_init(void) { dart__globmem__owner_open = owner_open; }
