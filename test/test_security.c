/*
 * Security of the address space: no gptr, however crafted, lets a unit read
 * or write outside the part of an allocation that the gptr's target unit
 * was given, and dart_gptr_getaddr(_shared) return no address outside it.
 *
 * Allocations of every kind (team allocations on DART_TEAM_ALL and on a
 * sub-team, with sizes that differ per unit and 0 bytes on one; a
 * registration; the local pool's first chunk and a grown chunk that only
 * the even units have; an allocator's pool) are filled with a pattern, and
 * so are guard bytes around them. Crafted gptrs (offsets at and beyond the
 * end, wrapped and negative offsets, pool chunk bits of missing chunks,
 * unit ids outside the team, other teams' and freed segment ids, destroyed
 * and unknown teams) and a seeded random sweep go to every operation that
 * takes a gptr. A model of the allocations says which calls must succeed:
 * those touch only the pattern (puts write what is there, atomics add 0)
 * and must read it back; all others must return DART_ERR_INVAL and log one
 * line naming the function. After each call the target's memory that this
 * unit can load is checked, and at each barrier every unit checks its own.
 *
 * What the model knows of the implementation (src/globmem/pool.c): the
 * local pool's offsets hold the chunk in their bits from 48 up; each unit's
 * pool part starts with a 4096-byte directory of its grown chunks; a grown
 * chunk is twice the size of the one before. The locks take no gptr.
 *
 * DART_TEST_SEED changes the sweep's seed (printed on failure).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dart_test_capture.h"

#include <dart/dart_ext.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK_SHIFT 48
#define OFF_MASK ((UINT64_C(1) << CHUNK_SHIFT) - 1)
#define POOL_HEADER 4096
#define POOL0 1024 /* DART_LOCAL_POOL, set below */
#define POOL1 2048 /* the first grown chunk */
#define NCHUNK 2
#define NO_CHUNK SIZE_MAX
#define GUARD 64
#define MAXLEN 16 /* the longest access */
#define SWEEP_ROUNDS 4
#define SWEEP_CALLS 500

static int me, nunits;

/* ---- stderr capture: each bad call logs one line, a good one none ---- */

static char context[200]; /* the gptr of the current attempt */
static long calls_bad, calls_good;

/* Restores stderr and checks a call that must succeed (good) or fail with
 * DART_ERR_INVAL, logging one line that names func. */
static void check_call(int line, const char *call, const char *func,
                       dart_ret_t got, bool good)
{
  char text[1024];
  int lines = capture_end(text, sizeof text);
  dart_ret_t want = good ? DART_OK : DART_ERR_INVAL;
  if (good)
    calls_good++;
  else
    calls_bad++;
  if (got != want)
    FAIL_AT(line, "%s on %s returned %d, not %d (log: \"%s\")", call,
            context, (int)got, (int)want, text);
  else if (lines != (good ? 0 : 1))
    FAIL_AT(line, "%s on %s logged %d lines: \"%s\"", call, context, lines,
            text);
  else if (!good && strstr(text, func) == NULL)
    FAIL_AT(line, "%s on %s: the log line does not name %s: \"%s\"", call,
            context, func, text);
}

#define TRY(line, good, func, call)                 \
  do {                                              \
    capture_begin();                                \
    dart_ret_t try_ret_ = (call);                   \
    check_call(line, #call, func, try_ret_, good);  \
  } while (0)

/* ---- the allocations and their model ---- */

typedef struct {
  const char *name;
  int key;              /* of the pattern */
  dart_team_t team;     /* as every unit names it */
  int16_t segid;
  bool pool;            /* the local pool: chunks in the offset */
  bool registered;      /* a registration: guards are user memory */
  bool alive;           /* not freed, team not destroyed */
  int nteam;            /* units of the team */
  int myid;             /* in the team; -1: not a member */
  size_t (*size)[NCHUNK];   /* bytes of unit u's chunk c, or NO_CHUNK */
  uint8_t *(*peer)[NCHUNK]; /* load/store address of (u, c), or NULL */
  uint8_t *own[NCHUNK];
  uint8_t **dir;        /* pool: unit u's directory as first seen, or NULL */
} area_t;

enum { A_ALL, A_SUB, A_REG, A_POOL, A_ALLOC, A_DEADTEAM, A_FREED, NAREAS };
static area_t areas[NAREAS];
static dart_team_t sub_team = DART_TEAM_NULL; /* even units */
static dart_team_t sub_id;                    /* its id, on every unit */

static uint8_t pat(const area_t *a, int unit, int c, uint64_t o)
{
  uint64_t v = dart_test_mix64(((uint64_t)a->key << 56) ^
                               ((uint64_t)(unsigned)unit << 32) ^
                               ((uint64_t)c << 28) ^ (o >> 3));
  return (uint8_t)(v >> ((o & 7) * 8));
}

static uint8_t guard_pat(const area_t *a, int unit, size_t i)
{
  return (uint8_t)(pat(a, unit, 7, i) ^ 0xA5);
}

/* Guard bytes before and after unit u's part that hold guard_pat: around
 * a registration, user memory; after a team allocation's part, the rest of
 * its 64 bytes (parts start on 64-byte boundaries; the shared window holds
 * the padding). The pool's guard is its directory. */
static size_t guard_head(const area_t *a) { return a->registered ? GUARD : 0; }

static size_t guard_tail(const area_t *a, int u)
{
  if (a->registered) return GUARD;
  if (a->pool) return 0;
  return (a->size[u][0] + 63) / 64 * 64 - a->size[u][0];
}

/* The gptr of offset off in unit's chunk c. */
static dart_gptr_t area_gptr(const area_t *a, int unit, int c, uint64_t off)
{
  dart_gptr_t g = DART_GPTR_NULL;
  g.unitid = unit;
  g.teamid = a->team;
  g.segid = a->segid;
  g.addr_or_offs.offset = ((uint64_t)c << CHUNK_SHIFT) + off;
  return g;
}

/* The allocation g names on this unit, if it is alive here. */
static area_t *area_of(dart_gptr_t g)
{
  for (int i = 0; i < NAREAS; i++) {
    area_t *a = &areas[i];
    if (a->alive && a->myid >= 0 && a->team == g.teamid &&
        a->segid == g.segid)
      return a;
  }
  return NULL;
}

typedef struct {
  area_t *a;
  int unit, chunk;
  uint64_t off;
} loc_t;

/* Where a gptr lands: its allocation, unit, chunk and offset; *good tells
 * whether span bytes from there lie inside that unit's part. False when g
 * names no live allocation and unit at all. */
static bool place(dart_gptr_t g, size_t span, loc_t *at, bool *good)
{
  *good = false;
  area_t *a = area_of(g);
  if (a == NULL || g.unitid < 0 || g.unitid >= a->nteam) return false;
  at->a = a;
  at->unit = g.unitid;
  at->chunk = 0;
  at->off = g.addr_or_offs.offset;
  if (a->pool) {
    uint64_t c = at->off >> CHUNK_SHIFT;
    at->off &= OFF_MASK;
    if (c >= NCHUNK) return true;
    at->chunk = (int)c;
  }
  size_t s = a->size[at->unit][at->chunk];
  *good = s != NO_CHUNK && at->off <= s && span <= s - at->off;
  return true;
}

static bool good_for(dart_gptr_t g, size_t span, loc_t *at)
{
  bool good;
  place(g, span, at, &good);
  return good;
}

/* ---- the pattern and the guards ---- */

static void fill_own(const area_t *a)
{
  const int u = a->myid;
  const size_t head = guard_head(a), tail = guard_tail(a, u);
  for (int c = 0; c < NCHUNK; c++) {
    uint8_t *p = a->own[c];
    size_t s = a->size[u][c];
    if (p == NULL || s == NO_CHUNK) continue;
    for (size_t i = 0; i < s; i++) p[i] = pat(a, u, c, i);
    for (size_t i = 0; i < head; i++) (p - head)[i] = guard_pat(a, u, i);
    for (size_t i = 0; i < tail; i++) p[s + i] = guard_pat(a, u, head + i);
  }
}

/* Checks bytes [from, to) of unit u's chunk c at p, its guards and (pool)
 * its directory; fails once per place. */
static void check_part(int line, const area_t *a, int u, int c,
                       const uint8_t *p, uint64_t from, uint64_t to)
{
  const size_t s = a->size[u][c], head = guard_head(a);
  for (uint64_t i = from; i < to && i < s; i++) {
    if (p[i] != pat(a, u, c, i)) {
      FAIL_AT(line, "%s after %s: byte %llu of unit %d's part (chunk %d) is "
              "0x%02x, not 0x%02x", a->name, context, (unsigned long long)i,
              u, c, p[i], pat(a, u, c, i));
      break;
    }
  }
  for (size_t i = 0; i < head + guard_tail(a, u); i++) {
    const uint8_t *q = i < head ? p - head + i : p + s + (i - head);
    if (*q != guard_pat(a, u, i)) {
      FAIL_AT(line, "%s after %s: guard byte %zu of unit %d's part changed",
              a->name, context, i, u);
      break;
    }
  }
  if (a->pool && c == 0 && a->dir[u] &&
      memcmp(p - POOL_HEADER, a->dir[u], POOL_HEADER) != 0)
    FAIL_AT(line, "%s after %s: unit %d's pool directory changed", a->name,
            context, u);
}

static void check_own_all(int line)
{
  for (int i = 0; i < NAREAS; i++) {
    const area_t *a = &areas[i];
    if (!a->alive || a->myid < 0) continue;
    for (int c = 0; c < NCHUNK; c++)
      if (a->own[c] && a->size[a->myid][c] != NO_CHUNK)
        check_part(line, a, a->myid, c, a->own[c], 0, SIZE_MAX);
  }
}

/* After an attempt on g: what this unit can load of the part g names, near
 * the offset, and its guards. */
static void check_near(int line, dart_gptr_t g)
{
  loc_t at;
  bool good;
  if (!place(g, 0, &at, &good) || at.a->size[at.unit][at.chunk] == NO_CHUNK)
    return;
  const uint8_t *p = at.unit == at.a->myid ? at.a->own[at.chunk]
                                           : at.a->peer[at.unit][at.chunk];
  if (p == NULL) return;
  uint64_t from = at.off > 64 ? at.off - 64 : 0;
  uint64_t to = at.off < UINT64_MAX - 64 - MAXLEN ? at.off + 64 + MAXLEN
                                                  : UINT64_MAX;
  check_part(line, at.a, at.unit, at.chunk, p, from, to);
}

/* ---- one gptr against every operation ---- */

enum {
  OP_PUT, OP_GET, OP_PUT_BLOCKING, OP_GET_BLOCKING, OP_PUT_HANDLE,
  OP_GET_HANDLE, OP_ACC, OP_ACC_LOCAL, OP_FETCH, OP_CAS, OP_FLUSH,
  OP_FLUSH_ALL, OP_FLUSH_LOCAL, OP_FLUSH_LOCAL_ALL, OP_GETADDR,
  OP_GETADDR_SHARED, OP_PATH, OP_ATOMIC_PATH, NOPS
};
#define ALL_OPS ((1u << NOPS) - 1)

static void describe(dart_gptr_t g, size_t len)
{
  snprintf(context, sizeof context,
           "{unit %d, team %d, segment %d, offset 0x%llx} (%zu bytes)",
           (int)g.unitid, (int)g.teamid, (int)g.segid,
           (unsigned long long)g.addr_or_offs.offset, len);
}

static void check_read(int line, const char *what, const uint8_t *got,
                       const uint8_t *want, size_t len, bool good)
{
  for (size_t i = 0; i < len; i++) {
    uint8_t w = good ? want[i] : 0xEE;
    if (got[i] != w) {
      FAIL_AT(line, "%s on %s: byte %zu is 0x%02x, not 0x%02x", what,
              context, i, got[i], w);
      return;
    }
  }
}

/* The address getaddr (shared: getaddr_shared) must give for at. */
static void *expected_addr(const loc_t *at, bool shared)
{
  const area_t *a = at->a;
  const uint8_t *base = at->unit == a->myid ? a->own[at->chunk]
                        : shared ? a->peer[at->unit][at->chunk] : NULL;
  return base ? (void *)(base + at->off) : NULL;
}

static void check_addr(int line, const char *what, void *got, bool good,
                       const loc_t *at, bool shared, void *sentinel)
{
  if (!good) {
    if (got != sentinel && got != NULL)
      FAIL_AT(line, "%s on %s: rejected, but the address became %p", what,
              context, got);
    return;
  }
  void *want = expected_addr(at, shared);
  if (got != want)
    FAIL_AT(line, "%s on %s: %p, not %p (part of %zu bytes)", what, context,
            got, want, at->a->size[at->unit][at->chunk]);
}

/* Runs the operations of mask on g for accesses of len bytes (1, 2, 8 or
 * 16; atomics take min(len, 8)) and checks each against the model. */
static void attempt(int line, dart_gptr_t g, size_t len, unsigned mask)
{
  static const uint8_t zeros[MAXLEN];
  uint8_t want[MAXLEN], src[MAXLEN], dst[MAXLEN];
  loc_t at, at0, ata;
  const bool good = good_for(g, len, &at), good0 = good_for(g, 0, &at0);
  const size_t es = len >= 8 ? 8 : len;
  const dart_datatype_t et = es == 1   ? DART_TYPE_BYTE
                             : es == 2 ? DART_TYPE_SHORT
                                       : DART_TYPE_LONG;
  const bool gooda = good_for(g, es, &ata) && ata.off % es == 0;
  dart_handle_t h = DART_HANDLE_NULL;
  describe(g, len);
  /* what lies there: len bytes for transfers, es for atomics */
  memset(want, 0, sizeof want);
  const size_t known = good ? len : gooda ? es : 0;
  for (size_t i = 0; i < known; i++)
    want[i] = pat(at0.a, at0.unit, at0.chunk, at0.off + i);
  memcpy(src, want, sizeof src);
  const dart_datatype_t byte = DART_TYPE_BYTE;

  if (mask & 1u << OP_PUT) {
    TRY(line, good, "dart_put", dart_put(g, src, len, byte, byte));
    if (good) CHECK_OK(dart_flush(g));
  }
  if (mask & 1u << OP_GET) {
    memset(dst, 0xEE, sizeof dst);
    TRY(line, good, "dart_get", dart_get(dst, g, len, byte, byte));
    if (good) CHECK_OK(dart_flush(g));
    check_read(line, "dart_get", dst, want, len, good);
  }
  if (mask & 1u << OP_PUT_BLOCKING)
    TRY(line, good, "dart_put_blocking",
        dart_put_blocking(g, src, len, byte, byte));
  if (mask & 1u << OP_GET_BLOCKING) {
    memset(dst, 0xEE, sizeof dst);
    TRY(line, good, "dart_get_blocking",
        dart_get_blocking(dst, g, len, byte, byte));
    check_read(line, "dart_get_blocking", dst, want, len, good);
  }
  if (mask & 1u << OP_PUT_HANDLE) {
    TRY(line, good, "dart_put_handle",
        dart_put_handle(g, src, len, byte, byte, &h));
    if (good) CHECK_OK(dart_wait(&h));
    CHECK(h == DART_HANDLE_NULL);
  }
  if (mask & 1u << OP_GET_HANDLE) {
    memset(dst, 0xEE, sizeof dst);
    TRY(line, good, "dart_get_handle",
        dart_get_handle(dst, g, len, byte, byte, &h));
    if (good) CHECK_OK(dart_wait(&h));
    CHECK(h == DART_HANDLE_NULL);
    check_read(line, "dart_get_handle", dst, want, len, good);
  }
  if (mask & 1u << OP_ACC) {
    TRY(line, good, "dart_accumulate",
        dart_accumulate(g, zeros, len, byte, DART_OP_SUM));
    if (good) CHECK_OK(dart_flush(g));
  }
  if (mask & 1u << OP_ACC_LOCAL)
    TRY(line, good, "dart_accumulate_blocking_local",
        dart_accumulate_blocking_local(g, zeros, len, byte, DART_OP_SUM));
  if (mask & 1u << OP_FETCH) {
    uint8_t res[8];
    memset(res, 0xEE, sizeof res);
    TRY(line, gooda, "dart_fetch_and_op",
        dart_fetch_and_op(g, zeros, res, et, DART_OP_SUM));
    check_read(line, "dart_fetch_and_op", res, want, es, gooda);
  }
  if (mask & 1u << OP_CAS) {
    /* compare with something else: nothing is swapped */
    uint8_t res[8], cmp[8];
    memcpy(cmp, want, sizeof cmp);
    cmp[0] ^= 1;
    memset(res, 0xEE, sizeof res);
    TRY(line, gooda, "dart_compare_and_swap",
        dart_compare_and_swap(g, src, cmp, res, et));
    check_read(line, "dart_compare_and_swap", res, want, es, gooda);
  }
  if (mask & 1u << OP_FLUSH) TRY(line, good0, "dart_flush", dart_flush(g));
  if (mask & 1u << OP_FLUSH_ALL)
    TRY(line, good0, "dart_flush_all", dart_flush_all(g));
  if (mask & 1u << OP_FLUSH_LOCAL)
    TRY(line, good0, "dart_flush_local", dart_flush_local(g));
  if (mask & 1u << OP_FLUSH_LOCAL_ALL)
    TRY(line, good0, "dart_flush_local_all", dart_flush_local_all(g));
  if (mask & 1u << OP_GETADDR) {
    void *sentinel = &at0, *p = sentinel;
    TRY(line, good0, "dart_gptr_getaddr", dart_gptr_getaddr(g, &p));
    check_addr(line, "dart_gptr_getaddr", p, good0, &at0, false, sentinel);
  }
  if (mask & 1u << OP_GETADDR_SHARED) {
    void *sentinel = &at0, *p = sentinel;
    TRY(line, good0, "dart_gptr_getaddr_shared",
        dart_gptr_getaddr_shared(g, &p));
    check_addr(line, "dart_gptr_getaddr_shared", p, good0, &at0, true,
               sentinel);
  }
  if (mask & (1u << OP_PATH | 1u << OP_ATOMIC_PATH)) {
    dart_path_t path = DART_PATH_COUNT, apath = DART_PATH_COUNT;
    if (mask & 1u << OP_PATH)
      TRY(line, good0, "dart_gptr_path", dart_gptr_path(g, &path));
    if (mask & 1u << OP_ATOMIC_PATH)
      TRY(line, good0, "dart_gptr_atomic_path",
          dart_gptr_atomic_path(g, &apath));
    if (good0 && (mask & 1u << OP_PATH)) {
      dart_path_t want_path = at0.unit == at0.a->myid ? DART_PATH_SELF
                              : at0.a->peer[at0.unit][at0.chunk]
                                  ? DART_PATH_SHM
                                  : path;
      if (path != want_path || path >= DART_PATH_COUNT)
        FAIL_AT(line, "dart_gptr_path on %s: path %d, not %d", context,
                (int)path, (int)want_path);
    }
  }
  check_near(line, g);
}

/* ---- phases ---- */

static dart_gptr_t moved(dart_gptr_t g, int64_t delta)
{
  dart_gptr_incaddr(&g, delta);
  return g;
}

/* The units crafted offsets aim at: the team's first and last (0 bytes in
 * some allocations), this unit and the next: every path and both kinds of
 * pool, without the cost of every unit. */
static int target_units(const area_t *a, int out[4])
{
  const int self = a->myid >= 0 ? a->myid : me % a->nteam;
  const int cand[4] = {0, a->nteam - 1, self, (self + 1) % a->nteam};
  int n = 0;
  for (int k = 0; k < 4; k++) {
    bool seen = false;
    for (int j = 0; j < n; j++) seen = seen || out[j] == cand[k];
    if (!seen) out[n++] = cand[k];
  }
  return n;
}

/* 1. Offsets at and beyond each part's end, before its start (negative
 * through dart_gptr_incaddr), wrapped, and with chunk bits. */
static void craft_offsets(void)
{
  for (int i = 0; i < NAREAS; i++) {
    area_t *a = &areas[i];
    int units[4];
    const int nu = target_units(a, units);
    for (int k = 0; k < nu; k++) {
      const int u = units[k];
      for (int c = 0; c < (a->pool ? NCHUNK : 1); c++) {
        size_t sz = a->size[u][c];
        /* a chunk only other units have: offsets as if it were there */
        const int64_t s = (int64_t)(sz == NO_CHUNK ? POOL1 : sz);
        const dart_gptr_t base = area_gptr(a, u, c, 0);
        const struct {
          int64_t delta;
          size_t len;
        } cases[] = {
            {0, 1},                       /* good where s > 0 */
            {s - 1, 1},                   /* the last byte */
            {s, 1},           {s + 1, 1},   {s + 7, 8},
            {s + 64, 1},      {s - 1, 2},   {s - 8, 16},
            {s - 15, 16},     {-1, 1},      {-8, 8},
            {-s, 1},          {-s - 1, 1},  {-POOL_HEADER, 8},
            {-POOL_HEADER + 8, 8},          {INT64_MIN, 1},
            {INT64_MAX, 1},   {INT64_MAX - 6, 8},
            {INT64_C(1) << 32, 1},          {INT64_C(1) << 47, 8},
            {INT64_C(1) << 48, 1},          {(INT64_C(2) << 48) + 8, 8},
            {INT64_C(170) << 48, 8},        {INT64_C(171) << 48, 8},
            {INT64_C(255) << 48, 8},        {INT64_C(256) << 48, 1},
            {INT64_C(0x7FFF) << 48, 1},
        };
        for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
          attempt(__LINE__, moved(base, cases[k].delta), cases[k].len,
                  ALL_OPS);
      }
    }
  }
}

/* 2. Unit ids outside the team (and, for the sub-team, ids of units that
 * are only in DART_TEAM_ALL). */
static void craft_units(void)
{
  for (int i = 0; i < NAREAS; i++) {
    const area_t *a = &areas[i];
    const int units[] = {-1, a->nteam, a->nteam + 1, nunits, nunits + 1,
                         (1 << 23) - 1, -(1 << 23), -2};
    for (size_t k = 0; k < sizeof units / sizeof *units; k++)
      attempt(__LINE__, area_gptr(a, units[k], 0, 0), 1, ALL_OPS);
    for (int u = a->nteam; u < nunits; u++)
      attempt(__LINE__, area_gptr(a, u, 0, 8), 8, ALL_OPS);
  }
}

/* 3. Every allocation's gptr with other teams' and other segment ids: an
 * id valid in one team names another segment (or none) in another. */
static void craft_ids(void)
{
  const dart_team_t teams[] = {DART_TEAM_ALL,  sub_id,
                               areas[A_DEADTEAM].team, DART_TEAM_NULL,
                               12345,          INT16_MAX,
                               INT16_MIN};
  int16_t segs[NAREAS + 6];
  int nsegs = 0;
  for (int i = 0; i < NAREAS; i++) segs[nsegs++] = areas[i].segid;
  const int16_t more[] = {0, -2, -3, INT16_MIN, INT16_MAX, 2};
  for (size_t k = 0; k < sizeof more / sizeof *more; k++)
    segs[nsegs++] = more[k];
  for (int i = 0; i < NAREAS; i++) {
    const area_t *a = &areas[i];
    /* the first unit and the last (0 bytes in some allocations) */
    for (int u = 0; u < a->nteam; u += a->nteam > 1 ? a->nteam - 1 : 1) {
      const size_t s = a->size[u][0];
      const uint64_t last = s > 0 && s != NO_CHUNK ? s - 1 : 0;
      for (size_t k = 0; k < sizeof teams / sizeof *teams; k++) {
        dart_gptr_t g = area_gptr(a, u, 0, last);
        g.teamid = teams[k];
        attempt(__LINE__, g, 1, ALL_OPS);
      }
      for (int k = 0; k < nsegs; k++) {
        dart_gptr_t g = area_gptr(a, u, 0, last);
        g.segid = segs[k];
        attempt(__LINE__, g, 1, ALL_OPS);
        g.addr_or_offs.offset = 0;
        attempt(__LINE__, g, 8, ALL_OPS);
      }
    }
  }
}

/* 4. dart_gptr_setaddr: only addresses in the caller's own part of the
 * gptr's allocation (for the pool: any of its own chunks, end included). */
static void craft_setaddr(void)
{
  enum { MAXADDR = 128 };
  uint8_t *addrs[MAXADDR];
  int naddr = 0;
#define ADD_ADDR(p)                             \
  do {                                          \
    if (naddr < MAXADDR) addrs[naddr++] = (p);  \
  } while (0)
  for (int i = 0; i < NAREAS; i++) {
    const area_t *a = &areas[i];
    for (int c = 0; c < NCHUNK; c++) {
      if (a->own[c]) {
        const size_t s = a->size[a->myid][c];
        ADD_ADDR(a->own[c]);
        ADD_ADDR(a->own[c] - 1);
        ADD_ADDR(a->own[c] + s);
        ADD_ADDR(a->own[c] + s + 1);
        ADD_ADDR(a->own[c] + s / 2);
      }
      for (int u = 0; u < a->nteam; u++)
        if (u != a->myid && a->peer[u][c]) ADD_ADDR(a->peer[u][c] + 1);
    }
  }
  if (areas[A_POOL].own[0])
    ADD_ADDR(areas[A_POOL].own[0] - POOL_HEADER + 8);
  ADD_ADDR(NULL);
  ADD_ADDR((uint8_t *)UINTPTR_MAX);
#undef ADD_ADDR

  for (int i = 0; i < NAREAS; i++) {
    const area_t *a = &areas[i];
    for (int k = 0; k < naddr; k++) {
      dart_gptr_t g = area_gptr(a, a->nteam - 1, 0, 12345);
      g.flags = 5;
      const dart_gptr_t before = g;
      int chunk = -1;
      for (int c = 0; a->alive && a->myid >= 0 && c < NCHUNK; c++) {
        const uint8_t *o = a->own[c];
        if (o && addrs[k] >= o && addrs[k] <= o + a->size[a->myid][c])
          chunk = c;
      }
      snprintf(context, sizeof context, "%s with address %p", a->name,
               (void *)addrs[k]);
      TRY(__LINE__, chunk >= 0, "dart_gptr_setaddr",
          dart_gptr_setaddr(&g, addrs[k]));
      dart_gptr_t want = before;
      if (chunk >= 0) {
        want.unitid = a->myid;
        want.addr_or_offs.offset =
            ((uint64_t)chunk << CHUNK_SHIFT) +
            (uint64_t)(addrs[k] - a->own[chunk]);
      }
      if (memcmp(&g, &want, sizeof g) != 0)
        FAIL_AT(__LINE__, "dart_gptr_setaddr on %s: gptr {%d, %d, %d, "
                "0x%llx, flags %u}", context, (int)g.unitid, (int)g.teamid,
                (int)g.segid, (unsigned long long)g.addr_or_offs.offset,
                (unsigned)g.flags);
    }
  }
}

/* 5. The frees with foreign gptrs: those the model accepts (a real free)
 * are left out. */
static dart_gptr_t block_d, block_e, block_f; /* pool, grown, allocator */
static dart_gptr_t *blocks_all;               /* every unit's block_d */
static dart_allocator_t allocator;

/* A gptr no call may return. */
static dart_gptr_t sentinel_block(void)
{
  dart_gptr_t g = DART_GPTR_NULL;
  g.unitid = 77;
  g.addr_or_offs.offset = 0xDEADBEEF;
  return g;
}

/* Whether g is the start of a block this unit may free with dart_memfree. */
static bool own_pool_block(dart_gptr_t g)
{
  return DART_GPTR_EQUAL(g, block_d) ||
         (me % 2 == 0 && DART_GPTR_EQUAL(g, block_e));
}

static void craft_frees(void)
{
  const int max = 3 * 6 + nunits + 3 * NAREAS + 1;
  dart_gptr_t *cand = malloc((size_t)max * sizeof *cand);
  int n = 0;
  if (cand == NULL) exit(1);
  const dart_gptr_t own[] = {block_d, block_e, block_f};
  for (size_t k = 0; k < sizeof own / sizeof *own; k++) {
    if (DART_GPTR_ISNULL(own[k])) continue; /* no grown chunk here */
    cand[n++] = moved(own[k], 16);
    cand[n++] = moved(own[k], -16);
    cand[n++] = moved(own[k], INT64_C(1) << 48);
    cand[n++] = moved(own[k], INT64_C(2) << 48);
    cand[n] = own[k];
    cand[n++].teamid = sub_id;
    cand[n] = own[k];
    cand[n++].unitid = (me + 1) % nunits;
  }
  for (int u = 0; u < nunits; u++)
    if (u != me) cand[n++] = blocks_all[u];
  for (int i = 0; i < NAREAS; i++) {
    cand[n++] = area_gptr(&areas[i], 0, 0, 0);
    cand[n++] = area_gptr(&areas[i], 0, 0, 64);
    cand[n++] = area_gptr(&areas[i], -1, 0, 0);
  }
  cand[n++] = DART_GPTR_NULL;

  /* a destroyed allocator's handle (a stale copy) */
  dart_allocator_t dead = NULL, stale;
  dart_gptr_t from_dead = sentinel_block();
  CHECK_OK(dart_allocator_new(256, DART_TEAM_ALL, &dead));
  stale = dead;
  CHECK_OK(dart_allocator_destroy(&dead));
  snprintf(context, sizeof context, "a destroyed allocator");
  TRY(__LINE__, false, "dart_allocator_alloc",
      dart_allocator_alloc(8, DART_TYPE_BYTE, &from_dead, stale));
  /* a failed allocation leaves no gptr (DART-MPI's contract) */
  CHECK(DART_GPTR_ISNULL(from_dead));
  TRY(__LINE__, false, "dart_allocator_free",
      dart_allocator_free(&block_f, stale));
  TRY(__LINE__, false, "dart_allocator_destroy",
      dart_allocator_destroy(&stale));

  /* a call the model accepts would really free: those are left out (the
   * team frees are collective) */
  for (int k = 0; k < n; k++) {
    const dart_gptr_t g = cand[k];
    loc_t at;
    const bool start = good_for(g, 0, &at) && g.addr_or_offs.offset == 0;
    describe(g, 0);
    if (!own_pool_block(g))
      TRY(__LINE__, false, "dart_memfree", dart_memfree(g));
    if (!DART_GPTR_EQUAL(g, block_f)) {
      dart_gptr_t copy = g;
      TRY(__LINE__, false, "dart_allocator_free",
          dart_allocator_free(&copy, allocator));
      CHECK(memcmp(&copy, &g, sizeof g) == 0);
    }
    if (!(start && !at.a->pool && !at.a->registered))
      TRY(__LINE__, false, "dart_team_memfree", dart_team_memfree(g));
    if (!(start && at.a->registered))
      TRY(__LINE__, false, "dart_team_memderegister",
          dart_team_memderegister(g));
    check_near(__LINE__, g);
  }
  free(cand);
}

/* 6. A seeded random sweep: gptrs mixed from every allocation's ids,
 * other ids, and offsets good and bad, one operation each. */
static uint64_t rng_state;
static uint64_t rnd(void) { return dart_test_mix64(rng_state++); }
static uint64_t rnd_below(uint64_t n) { return rnd() % n; }

static dart_gptr_t random_gptr(size_t *len)
{
  static const size_t lens[] = {1, 2, 8, 16};
  const area_t *a = &areas[rnd_below(NAREAS)];
  int unit = (int)rnd_below((uint64_t)a->nteam);
  const uint64_t r = rnd_below(100);
  if (r < 5) unit = -1;
  else if (r < 10) unit = a->nteam + (int)rnd_below(4);
  else if (r < 13) unit = (int)(rnd() & 0xFFFFFF) - (1 << 23);
  int c = a->pool ? (int)rnd_below(NCHUNK) : 0;
  dart_gptr_t g = area_gptr(a, unit, 0, 0);
  if (rnd_below(100) < 10)
    g.teamid = (dart_team_t)((int)rnd_below(6) - 1);
  if (rnd_below(100) < 10)
    g.segid = areas[rnd_below(NAREAS)].segid;
  else if (rnd_below(100) < 3)
    g.segid = (int16_t)rnd();
  const size_t s = unit >= 0 && unit < a->nteam && a->size[unit][c] != NO_CHUNK
                       ? a->size[unit][c]
                       : POOL1;
  uint64_t off;
  switch (rnd_below(8)) {
  case 0: off = rnd_below(s + 32); break;
  case 1:
  case 2: off = s - rnd_below(17); break;
  case 3: off = s + rnd_below(4096); break;
  case 4: off = UINT64_MAX - rnd_below(32); break;
  case 5: off = rnd(); break;
  case 6: off = (rnd_below(300) << CHUNK_SHIFT) | rnd_below(s + 32); break;
  default: off = (UINT64_C(1) << 63) + rnd_below(64) - 32; break;
  }
  g.addr_or_offs.offset = ((uint64_t)c << CHUNK_SHIFT) + off;
  *len = lens[rnd_below(4)];
  return g;
}

static void sweep(uint64_t seed)
{
  rng_state = seed * 0x9E3779B97F4A7C15ull + (uint64_t)me;
  for (int round = 0; round < SWEEP_ROUNDS; round++) {
    for (int k = 0; k < SWEEP_CALLS; k++) {
      size_t len;
      dart_gptr_t g = random_gptr(&len);
      attempt(__LINE__, g, len, 1u << rnd_below(NOPS));
    }
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    snprintf(context, sizeof context, "sweep round %d (seed %llu)", round,
             (unsigned long long)seed);
    check_own_all(__LINE__);
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
  }
}

/* ---- set-up ---- */

static size_t size_all(int u)
{
  return nunits > 1 && u == nunits - 1 ? 0 : 136 + 40 * (size_t)u;
}
static size_t size_sub(int t) { return 40 + 24 * (size_t)t; }
static size_t size_reg(int u)
{
  return nunits > 1 && u == 0 ? 0 : 96 + 8 * (size_t)u;
}
#define ALLOC_POOL 4000

static _Alignas(64) uint8_t reg_buf[GUARD + 96 + 8 * 1024 + GUARD];

static void area_init(area_t *a, const char *name, int key, dart_team_t team,
                      int nteam, int myid)
{
  a->name = name;
  a->key = key;
  a->team = team;
  a->nteam = nteam;
  a->myid = myid;
  a->alive = true;
  a->size = calloc((size_t)nteam, sizeof *a->size);
  a->peer = calloc((size_t)nteam, sizeof *a->peer);
  a->dir = calloc((size_t)nteam, sizeof *a->dir);
  if (!a->size || !a->peer || !a->dir) {
    fprintf(stderr, "[unit %d] out of memory\n", me);
    exit(1);
  }
  for (int u = 0; u < nteam; u++) a->size[u][0] = a->size[u][1] = NO_CHUNK;
}

/* Own and node peers' load/store addresses of a live area. */
static void area_addresses(area_t *a)
{
  if (a->myid < 0) return;
  for (int u = 0; u < a->nteam; u++) {
    for (int c = 0; c < NCHUNK; c++) {
      if (a->size[u][c] == NO_CHUNK) continue;
      void *p = NULL;
      dart_gptr_t g = area_gptr(a, u, c, 0);
      CHECK_OK(dart_gptr_getaddr_shared(g, &p));
      a->peer[u][c] = p;
      if (u == a->myid) {
        CHECK(p != NULL);
        a->own[c] = p;
      }
    }
  }
}

static void setup(void)
{
  const int n = nunits;
  dart_gptr_t g;
  /* A: DART_TEAM_ALL, the last unit with 0 bytes */
  area_t *a = &areas[A_ALL];
  area_init(a, "team allocation", 1, DART_TEAM_ALL, n, me);
  for (int u = 0; u < n; u++) a->size[u][0] = size_all(u);
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, size_all(me),
                                      DART_TYPE_BYTE, &g));
  a->segid = g.segid;

  /* B: the even units, smaller parts, the same segment id as A's */
  dart_group_t grp;
  CHECK_OK(dart_group_create(&grp));
  for (int u = 0; u < n; u += 2)
    CHECK_OK(dart_group_addmember(grp, DART_GLOBAL_UNIT_ID(u)));
  CHECK_OK(dart_team_create(DART_TEAM_ALL, grp, &sub_team));
  CHECK_OK(dart_group_destroy(&grp));
  sub_id = sub_team;
  CHECK_OK(dart_bcast(&sub_id, sizeof sub_id, DART_TYPE_BYTE,
                      DART_TEAM_UNIT_ID(0), DART_TEAM_ALL));
  a = &areas[A_SUB];
  area_init(a, "sub-team allocation", 2, sub_id, (n + 1) / 2,
            me % 2 == 0 ? me / 2 : -1);
  for (int t = 0; t < a->nteam; t++) a->size[t][0] = size_sub(t);
  a->segid = areas[A_ALL].segid;
  if (a->myid >= 0) {
    CHECK_OK(dart_team_memalloc_aligned(sub_team, size_sub(a->myid),
                                        DART_TYPE_BYTE, &g));
    CHECK_EQ(g.segid, a->segid);
  }

  /* C: a registration with guards of user memory around it, 0 bytes on
   * unit 0 */
  a = &areas[A_REG];
  area_init(a, "registration", 3, DART_TEAM_ALL, n, me);
  for (int u = 0; u < n; u++) a->size[u][0] = size_reg(u);
  a->registered = true;
  CHECK_OK(dart_team_memregister(DART_TEAM_ALL, size_reg(me), DART_TYPE_BYTE,
                                 reg_buf + GUARD, &g));
  a->segid = g.segid;

  /* D: the local pool; the first block fills its first chunk enough that
   * the second takes a grown chunk (even units only) */
  a = &areas[A_POOL];
  area_init(a, "local pool", 4, DART_TEAM_ALL, n, me);
  a->pool = true;
  a->segid = DART_SEGMENT_LOCAL;
  for (int u = 0; u < n; u++) {
    a->size[u][0] = POOL0;
    if (u % 2 == 0) a->size[u][1] = POOL1;
  }
  CHECK_OK(dart_memalloc(100, DART_TYPE_BYTE, &block_d));
  block_e = DART_GPTR_NULL;
  if (me % 2 == 0) {
    CHECK_OK(dart_memalloc(1500, DART_TYPE_BYTE, &block_e));
    CHECK_EQ(block_e.addr_or_offs.offset >> CHUNK_SHIFT, 1);
  }
  blocks_all = malloc((size_t)n * sizeof *blocks_all);
  if (blocks_all == NULL) exit(1);
  CHECK_OK(dart_allgather(&block_d, blocks_all, sizeof block_d,
                          DART_TYPE_BYTE, DART_TEAM_ALL));

  /* F: an allocator's pool */
  a = &areas[A_ALLOC];
  area_init(a, "allocator", 5, DART_TEAM_ALL, n, me);
  for (int u = 0; u < n; u++) a->size[u][0] = ALLOC_POOL;
  CHECK_OK(dart_allocator_new(ALLOC_POOL, DART_TEAM_ALL, &allocator));
  CHECK_OK(dart_allocator_alloc(256, DART_TYPE_BYTE, &block_f, allocator));
  a->segid = block_f.segid;

  /* G: an allocation of a destroyed team; H: a freed one */
  dart_team_t clone = DART_TEAM_NULL;
  CHECK_OK(dart_team_clone(DART_TEAM_ALL, &clone));
  a = &areas[A_DEADTEAM];
  area_init(a, "destroyed team's allocation", 6, clone, n, me);
  for (int u = 0; u < n; u++) a->size[u][0] = 64;
  CHECK_OK(dart_team_memalloc_aligned(clone, 64, DART_TYPE_BYTE, &g));
  a->segid = g.segid;
  CHECK_OK(dart_team_destroy(&clone));
  a->alive = false;
  a = &areas[A_FREED];
  area_init(a, "freed allocation", 7, DART_TEAM_ALL, n, me);
  for (int u = 0; u < n; u++) a->size[u][0] = 64;
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 64, DART_TYPE_BYTE, &g));
  a->segid = g.segid;
  CHECK_OK(dart_team_memfree(g));
  a->alive = false;

  for (int i = 0; i < NAREAS; i++)
    if (areas[i].alive) area_addresses(&areas[i]);
  /* the registration is our memory, but no other unit loads it */
  areas[A_REG].own[0] = reg_buf + GUARD;
  for (int i = 0; i < NAREAS; i++)
    if (areas[i].alive && areas[i].myid >= 0) fill_own(&areas[i]);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  /* the directories as they are now: nobody grows the pool any more */
  a = &areas[A_POOL];
  for (int u = 0; u < n; u++) {
    if (a->peer[u][0] == NULL) continue;
    a->dir[u] = malloc(POOL_HEADER);
    if (a->dir[u] == NULL) exit(1);
    memcpy(a->dir[u], a->peer[u][0] - POOL_HEADER, POOL_HEADER);
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
}

static void teardown(void)
{
  CHECK_OK(dart_allocator_destroy(&allocator));
  CHECK_OK(dart_memfree(block_d));
  if (me % 2 == 0) CHECK_OK(dart_memfree(block_e));
  /* deregistration is local: the others are done with our part first */
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_OK(dart_team_memderegister(area_gptr(&areas[A_REG], 0, 0, 0)));
  CHECK_OK(dart_team_memfree(area_gptr(&areas[A_ALL], 0, 0, 0)));
  if (sub_team != DART_TEAM_NULL) {
    CHECK_OK(dart_team_memfree(area_gptr(&areas[A_SUB], 0, 0, 0)));
    CHECK_OK(dart_team_destroy(&sub_team));
  }
  for (int i = 0; i < NAREAS; i++) {
    for (int u = 0; u < areas[i].nteam; u++) free(areas[i].dir[u]);
    free(areas[i].size);
    free(areas[i].peer);
    free(areas[i].dir);
  }
  free(blocks_all);
}

/* A phase ends with every unit checking its own memory. */
static void phase_end(const char *phase)
{
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  snprintf(context, sizeof context, "phase \"%s\"", phase);
  check_own_all(__LINE__);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
}

int main(int argc, char **argv)
{
  /* a small pool, so that a grown chunk is cheap (the model's POOL0) */
  setenv("DART_LOCAL_POOL", "1K", 1);
  dart_test_init(&argc, &argv);
  me = dart_test_unit;
  nunits = dart_test_units;
  const char *seed_env = getenv("DART_TEST_SEED");
  const uint64_t seed = seed_env ? strtoull(seed_env, NULL, 0) : 20261121;
  capture_init();
  setup();
  phase_end("set-up");
  craft_offsets();
  phase_end("offsets");
  craft_units();
  phase_end("unit ids");
  craft_ids();
  phase_end("team and segment ids");
  craft_setaddr();
  phase_end("dart_gptr_setaddr");
  craft_frees();
  phase_end("frees");
  sweep(seed);
  if (dart_test_failures)
    fprintf(stderr, "[unit %d] sweep seed %llu (DART_TEST_SEED)\n", me,
            (unsigned long long)seed);
  if (me == 0)
    printf("unit 0: %ld rejected and %ld accepted calls checked\n", calls_bad,
           calls_good);
  teardown();
  capture_fini();
  return dart_test_finish();
}
