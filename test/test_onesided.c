/*
 * One-sided transfers: every unit puts to and gets from every unit (itself
 * included) with every completion variant, on a collective allocation whose
 * parts have different sizes. Checks every byte at its place, the guard bytes
 * around each written range, non-contiguous (strided, indexed) layouts on
 * either side element by element with the gaps, 4- and 8-byte element types,
 * the last byte of each unit's part, and the same on a sub-team.
 */
#include "dart_test.h"


#define GUARD 64       /* guard bytes before and after each slot's payload */
#define TARGET_FILL 0xA5 /* untouched bytes of target memory */
#define LOCAL_FILL 0x5A  /* untouched bytes of local get buffers */
#define MAX_TEST_SPINS 200000000L

enum { DIR_PUT = 0, DIR_GET = 1, DIR_NC_PUT = 2, DIR_NC_GET = 3, DIR_TAIL = 4 };

/* completion variants */
enum {
  V_FLUSH,       /* op, then dart_flush per unit */
  V_FLUSH_ALL,   /* op, then one dart_flush_all */
  V_FLUSH_LOCAL, /* op, dart_flush_local, (reuse the buffer), dart_flush */
  V_BLOCKING,    /* *_blocking */
  V_WAIT,        /* *_handle, dart_wait */
  V_WAIT_LOCAL,  /* *_handle, dart_wait_local, (reuse), dart_flush */
  V_TEST,        /* *_handle, dart_test until finished */
  V_WAITALL,     /* *_handle into an array with NULL entries, dart_waitall */
  V_TESTALL,     /* same, dart_testall until finished */
  V_HFREE,       /* *_handle, dart_handle_free, dart_flush */
  NVAR
};
static const char *const var_name[NVAR] = {
    "flush",   "flush_all", "flush_local", "blocking", "wait",
    "wait_local", "test",   "waitall",     "testall",  "handle_free"};

/* ---- patterns and checks ---- */

static uint64_t key_of(int tag, int dir, int src, int dst, int size_idx,
                       int var)
{
  return (((((uint64_t)tag * 8 + (uint64_t)dir) * 256 + (uint64_t)src) * 256 +
           (uint64_t)dst) * 64 + (uint64_t)size_idx) * 64 + (uint64_t)var + 1;
}

/* Random words, made once; the pattern of key is these words XOR dart_test_mix64(key)
 * (cheap for megabytes, different for every key in every word, and never
 * the same after a shift). */
#define PTAB_WORDS (((size_t)4 << 20) / 8 + 1)
static uint64_t *ptab;

static void ptab_init(void)
{
  ptab = malloc(PTAB_WORDS * sizeof *ptab);
  if (!ptab) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  for (size_t w = 0; w < PTAB_WORDS; w++) ptab[w] = dart_test_mix64(0x5EED0000u + w);
}

/* Byte i of the pattern is byte i % 8 of ptab[i / 8] ^ dart_test_mix64(key). */
static void fill_pattern(uint8_t *buf, size_t len, uint64_t key)
{
  const uint64_t k = dart_test_mix64(key);
  const size_t nw = len / 8;
  if (nw >= PTAB_WORDS) {
    fprintf(stderr, "test bug: pattern of %zu bytes\n", len);
    exit(1);
  }
  for (size_t w = 0; w < nw; w++) {
    uint64_t v = ptab[w] ^ k;
    memcpy(buf + 8 * w, &v, 8);
  }
  if (len % 8) {
    uint64_t v = ptab[nw] ^ k;
    memcpy(buf + 8 * nw, &v, len % 8);
  }
}

/* Compares len bytes; one failure line per region with the first mismatch. */
static int check_bytes(int line, const uint8_t *got, const uint8_t *want,
                       size_t len, const char *what)
{
  if (memcmp(got, want, len) == 0) return 1;
  size_t first = 0, bad = 0;
  for (size_t i = len; i-- > 0;) {
    if (got[i] != want[i]) {
      first = i;
      bad++;
    }
  }
  FAIL_AT(line, "%s: %zu of %zu bytes wrong, first at %zu: got 0x%02x want 0x%02x",
        what, bad, len, first, got[first], want[first]);
  return 0;
}

static int check_fill(int line, const uint8_t *got, size_t len, uint8_t value,
                      const char *what)
{
  for (size_t i = 0; i < len; i++) {
    if (got[i] != value) {
      FAIL_AT(line, "%s: byte %zu of %zu is 0x%02x, want untouched 0x%02x",
            what, i, len, got[i], value);
      return 0;
    }
  }
  return 1;
}

/* ---- the allocation under test ---- */

typedef struct {
  dart_team_t team;
  int n, me, tag;
  dart_gptr_t g;        /* team unit 0, offset 0 */
  size_t need;          /* bytes of the slot region at the start of each part */
  uint8_t *mine;        /* own part */
  uint8_t *lbuf;        /* local slots (put sources, get destinations) */
  uint8_t *scratch;     /* expected payloads */
  dart_handle_t *handles;
} ctx_t;

/* Parts differ in size: base + u * 4096 + an odd number. */
#define TAIL_ODD 13
#define TAIL_GET 13 /* bytes read at the end of each part: all of unit 0's tail */
static size_t part_size(const ctx_t *c, int u)
{
  return c->need + (size_t)u * 4096 + TAIL_ODD;
}

static size_t stride_for(size_t bytes)
{
  return (bytes + 2 * GUARD + 63) / 64 * 64;
}

static dart_gptr_t at(const ctx_t *c, int unit, uint64_t off)
{
  dart_gptr_t g = c->g;
  dart_gptr_setunit(&g, DART_TEAM_UNIT_ID(unit));
  g.addr_or_offs.offset = off;
  return g;
}

static int ctx_init(ctx_t *c, dart_team_t team, int tag, size_t need,
                    size_t scratch_size)
{
  dart_team_unit_t myid;
  size_t n;
  memset(c, 0, sizeof *c);
  c->team = team;
  c->tag = tag;
  c->need = (need + 63) / 64 * 64;
  CHECK_OK(dart_team_size(team, &n));
  CHECK_OK(dart_team_myid(team, &myid));
  c->n = (int)n;
  c->me = myid.id;
  c->g = DART_GPTR_NULL;
  CHECK_OK(dart_team_memalloc_aligned(team, part_size(c, c->me),
                                      DART_TYPE_BYTE, &c->g));
  CHECK_EQ(c->g.unitid, 0);
  CHECK_EQ(c->g.teamid, team);
  CHECK_EQ(c->g.addr_or_offs.offset, 0);
  CHECK(c->g.segid > 0);
  void *p = NULL;
  CHECK_OK(dart_gptr_getaddr(at(c, c->me, 0), &p));
  CHECK(p != NULL);
  c->mine = p;
  if (c->n > 1) {
    void *q = (void *)&q;
    CHECK_OK(dart_gptr_getaddr(at(c, (c->me + 1) % c->n, 0), &q));
    CHECK(q == NULL);
  }
  c->lbuf = malloc(c->need);
  c->scratch = malloc(scratch_size);
  c->handles = malloc((2 * (size_t)c->n + 1) * sizeof *c->handles);
  if (!p || !c->lbuf || !c->scratch || !c->handles) {
    fprintf(stderr, "[unit %d] set-up failed\n", dart_test_unit);
    return 0;
  }
  return 1;
}

static void ctx_free(ctx_t *c)
{
  CHECK_OK(dart_team_memfree(c->g));
  free(c->lbuf);
  free(c->scratch);
  free(c->handles);
}

/* ---- contiguous transfers with every completion variant ---- */

typedef struct {
  dart_datatype_t type;
  size_t esize, nelem;
  int idx; /* size index for the pattern key */
} xfer_t;

/* Completes every handle with a dart_test loop. */
static void test_until_done(dart_handle_t *h, int n)
{
  for (int t = 0; t < n; t++) {
    long spins = 0;
    int32_t fin = 0;
    while (!fin && spins++ < MAX_TEST_SPINS) {
      dart_ret_t r = dart_test(&h[t], &fin);
      if (r != DART_OK) {
        FAIL_AT(__LINE__, "dart_test returned %d", (int)r);
        break;
      }
      if (!fin && h[t] == DART_HANDLE_NULL) {
        FAIL_AT(__LINE__, "dart_test: not finished but handle NULL");
        break;
      }
    }
    CHECK(fin == 1);
    CHECK(h[t] == DART_HANDLE_NULL);
  }
}

static void testall_until_done(dart_handle_t *arr, size_t len)
{
  long spins = 0;
  int32_t fin = 0;
  while (!fin && spins++ < MAX_TEST_SPINS) {
    dart_ret_t r = dart_testall(arr, len, &fin);
    if (r != DART_OK) {
      FAIL_AT(__LINE__, "dart_testall returned %d", (int)r);
      break;
    }
  }
  CHECK(fin == 1);
  for (size_t i = 0; i < len; i++) CHECK(arr[i] == DART_HANDLE_NULL);
}

/* Handle array for waitall/testall: NULL at 0 and after every real one. */
static void null_array(dart_handle_t *arr, int n)
{
  for (int i = 0; i < 2 * n + 1; i++) arr[i] = DART_HANDLE_NULL;
}

/* Issues and completes this unit's puts (dir DIR_PUT) or gets of one variant
 * to every unit: local slot (t, k), remote slot (me, k). */
static void run_variant(ctx_t *c, int dir, int var, int k, int nv,
                        const xfer_t *x)
{
  const size_t bytes = x->nelem * x->esize, st = stride_for(bytes);
  const int n = c->n;
  const uint64_t roff = ((size_t)c->me * nv + k) * st + GUARD;
  dart_handle_t *h = c->handles;
#define LOCAL(t) (c->lbuf + ((size_t)(t) * nv + k) * st + GUARD)
#define ISSUE(t)                                                              \
  (dir == DIR_PUT ? dart_put(at(c, t, roff), LOCAL(t), x->nelem, x->type,     \
                             x->type)                                        \
                  : dart_get(LOCAL(t), at(c, t, roff), x->nelem, x->type,     \
                             x->type))
#define ISSUE_H(t, hp)                                                        \
  (dir == DIR_PUT ? dart_put_handle(at(c, t, roff), LOCAL(t), x->nelem,       \
                                    x->type, x->type, hp)                     \
                  : dart_get_handle(LOCAL(t), at(c, t, roff), x->nelem,       \
                                    x->type, x->type, hp))
  switch (var) {
  case V_FLUSH:
    for (int t = 0; t < n; t++) CHECK_OK(ISSUE(t));
    for (int t = 0; t < n; t++) CHECK_OK(dart_flush(at(c, t, roff)));
    break;
  case V_FLUSH_ALL:
    for (int t = 0; t < n; t++) CHECK_OK(ISSUE(t));
    CHECK_OK(dart_flush_all(at(c, 0, 0)));
    break;
  case V_FLUSH_LOCAL:
    for (int t = 0; t < n; t++) {
      CHECK_OK(ISSUE(t));
      CHECK_OK(dart_flush_local(at(c, t, roff)));
      if (dir == DIR_PUT) {
        memset(LOCAL(t), 0, bytes); /* the source is reusable now */
      } else {                      /* the destination is filled now */
        fill_pattern(c->scratch, bytes,
                     key_of(c->tag, DIR_GET, c->me, t, x->idx, var));
        check_bytes(__LINE__, LOCAL(t), c->scratch, bytes,
                    "get after dart_flush_local");
      }
      CHECK_OK(dart_flush(at(c, t, roff)));
    }
    break;
  case V_BLOCKING:
    for (int t = 0; t < n; t++) {
      if (dir == DIR_PUT) {
        CHECK_OK(dart_put_blocking(at(c, t, roff), LOCAL(t), x->nelem,
                                   x->type, x->type));
      } else {
        CHECK_OK(dart_get_blocking(LOCAL(t), at(c, t, roff), x->nelem,
                                   x->type, x->type));
      }
    }
    break;
  case V_WAIT:
    for (int t = 0; t < n; t++) CHECK_OK(ISSUE_H(t, &h[t]));
    for (int t = 0; t < n; t++) {
      CHECK_OK(dart_wait(&h[t]));
      CHECK(h[t] == DART_HANDLE_NULL);
    }
    break;
  case V_WAIT_LOCAL:
    for (int t = 0; t < n; t++) CHECK_OK(ISSUE_H(t, &h[t]));
    for (int t = 0; t < n; t++) {
      CHECK_OK(dart_wait_local(&h[t]));
      CHECK(h[t] == DART_HANDLE_NULL);
      if (dir == DIR_PUT) {
        memset(LOCAL(t), 0, bytes);
      } else {
        fill_pattern(c->scratch, bytes,
                     key_of(c->tag, DIR_GET, c->me, t, x->idx, var));
        check_bytes(__LINE__, LOCAL(t), c->scratch, bytes,
                    "get after dart_wait_local");
      }
      CHECK_OK(dart_flush(at(c, t, roff)));
    }
    break;
  case V_TEST:
    for (int t = 0; t < n; t++) CHECK_OK(ISSUE_H(t, &h[t]));
    test_until_done(h, n);
    break;
  case V_WAITALL:
  case V_TESTALL:
    null_array(h, n);
    for (int t = 0; t < n; t++) CHECK_OK(ISSUE_H(t, &h[2 * t + 1]));
    if (var == V_WAITALL) {
      CHECK_OK(dart_waitall(h, 2 * (size_t)n + 1));
      for (int i = 0; i < 2 * n + 1; i++) CHECK(h[i] == DART_HANDLE_NULL);
    } else {
      testall_until_done(h, 2 * (size_t)n + 1);
    }
    break;
  case V_HFREE:
    for (int t = 0; t < n; t++) {
      CHECK_OK(ISSUE_H(t, &h[t]));
      CHECK_OK(dart_handle_free(&h[t]));
      CHECK(h[t] == DART_HANDLE_NULL);
    }
    for (int t = 0; t < n; t++) CHECK_OK(dart_flush(at(c, t, roff)));
    break;
  }
#undef LOCAL
#undef ISSUE
#undef ISSUE_H
}

/* Every unit puts to every unit with each variant in vars; the targets check
 * payloads and guards. */
static void put_phase(ctx_t *c, const xfer_t *x, const int *vars, int nv)
{
  const size_t bytes = x->nelem * x->esize, st = stride_for(bytes);
  const int n = c->n;
  char what[160];
  if ((size_t)n * nv * st > c->need) {
    FAIL_AT(__LINE__, "test bug: phase needs %zu bytes", (size_t)n * nv * st);
    return;
  }
  memset(c->mine, TARGET_FILL, (size_t)n * nv * st);
  memset(c->lbuf, LOCAL_FILL, (size_t)n * nv * st);
  CHECK_OK(dart_barrier(c->team));
  for (int k = 0; k < nv; k++) {
    for (int t = 0; t < n; t++) {
      fill_pattern(c->lbuf + ((size_t)t * nv + k) * st + GUARD, bytes,
                   key_of(c->tag, DIR_PUT, c->me, t, x->idx, vars[k]));
    }
    run_variant(c, DIR_PUT, vars[k], k, nv, x);
  }
  CHECK_OK(dart_barrier(c->team));
  for (int s = 0; s < n; s++) {
    for (int k = 0; k < nv; k++) {
      const uint8_t *slot = c->mine + ((size_t)s * nv + k) * st;
      snprintf(what, sizeof what, "put %zu x %zu B from unit %d to %d, %s",
               x->nelem, x->esize, s, c->me, var_name[vars[k]]);
      fill_pattern(c->scratch, bytes,
                   key_of(c->tag, DIR_PUT, s, c->me, x->idx, vars[k]));
      check_fill(__LINE__, slot, GUARD, TARGET_FILL, what);
      check_bytes(__LINE__, slot + GUARD, c->scratch, bytes, what);
      check_fill(__LINE__, slot + GUARD + bytes, st - GUARD - bytes,
                 TARGET_FILL, what);
    }
  }
  CHECK_OK(dart_barrier(c->team));
}

/* Every unit gets from every unit with each variant; the readers check. */
static void get_phase(ctx_t *c, const xfer_t *x, const int *vars, int nv)
{
  const size_t bytes = x->nelem * x->esize, st = stride_for(bytes);
  const int n = c->n;
  char what[160];
  if ((size_t)n * nv * st > c->need) {
    FAIL_AT(__LINE__, "test bug: phase needs %zu bytes", (size_t)n * nv * st);
    return;
  }
  memset(c->mine, TARGET_FILL, (size_t)n * nv * st);
  for (int s = 0; s < n; s++) {
    for (int k = 0; k < nv; k++) {
      fill_pattern(c->mine + ((size_t)s * nv + k) * st + GUARD, bytes,
                   key_of(c->tag, DIR_GET, s, c->me, x->idx, vars[k]));
    }
  }
  memset(c->lbuf, LOCAL_FILL, (size_t)n * nv * st);
  CHECK_OK(dart_barrier(c->team));
  for (int k = 0; k < nv; k++) run_variant(c, DIR_GET, vars[k], k, nv, x);
  for (int t = 0; t < n; t++) {
    for (int k = 0; k < nv; k++) {
      const uint8_t *slot = c->lbuf + ((size_t)t * nv + k) * st;
      snprintf(what, sizeof what, "get %zu x %zu B by unit %d from %d, %s",
               x->nelem, x->esize, c->me, t, var_name[vars[k]]);
      fill_pattern(c->scratch, bytes,
                   key_of(c->tag, DIR_GET, c->me, t, x->idx, vars[k]));
      check_fill(__LINE__, slot, GUARD, LOCAL_FILL, what);
      check_bytes(__LINE__, slot + GUARD, c->scratch, bytes, what);
      check_fill(__LINE__, slot + GUARD + bytes, st - GUARD - bytes,
                 LOCAL_FILL, what);
    }
  }
  /* the gets left the targets' memory alone */
  for (int s = 0; s < n; s++) {
    for (int k = 0; k < nv; k++) {
      const uint8_t *slot = c->mine + ((size_t)s * nv + k) * st;
      snprintf(what, sizeof what, "source of get by %d from %d, %s", s,
               c->me, var_name[vars[k]]);
      fill_pattern(c->scratch, bytes,
                   key_of(c->tag, DIR_GET, s, c->me, x->idx, vars[k]));
      check_fill(__LINE__, slot, GUARD, TARGET_FILL, what);
      check_bytes(__LINE__, slot + GUARD, c->scratch, bytes, what);
    }
  }
  CHECK_OK(dart_barrier(c->team));
}

/* ---- non-contiguous layouts ---- */

enum { L_CONTIG, L_STRIDED, L_INDEXED };

typedef struct {
  int kind;
  size_t stride, bl;        /* strided */
  size_t count, bls[3], offs[3]; /* indexed (offsets >= 0, min 0) */
  dart_datatype_t type;
  const char *name;
} layout_t;

static size_t layout_pos(const layout_t *L, size_t j)
{
  switch (L->kind) {
  case L_STRIDED:
    return (j / L->bl) * L->stride + j % L->bl;
  case L_INDEXED: {
    size_t m = 0, ext = 0;
    for (size_t b = 0; b < L->count; b++) {
      m += L->bls[b];
      if (L->offs[b] + L->bls[b] > ext) ext = L->offs[b] + L->bls[b];
    }
    size_t r = j % m, b = 0;
    while (r >= L->bls[b]) r -= L->bls[b++];
    return (j / m) * ext + L->offs[b] + r;
  }
  default:
    return j;
  }
}

static size_t layout_span(const layout_t *L, size_t nelem)
{
  size_t span = 0;
  for (size_t j = 0; j < nelem; j++) {
    size_t p = layout_pos(L, j) + 1;
    if (p > span) span = p;
  }
  return span;
}

static uint64_t elem_value(uint64_t key, size_t pos, size_t esize)
{
  uint64_t v = dart_test_mix64(key * 0xA24BAED4963EE407ull + pos);
  return esize == 8 ? v : (v & 0xffffffffu);
}

static void set_elem(uint8_t *buf, size_t esize, size_t pos, uint64_t v)
{
  if (esize == 8) {
    memcpy(buf + 8 * pos, &v, 8);
  } else {
    uint32_t w = (uint32_t)v;
    memcpy(buf + 4 * pos, &w, 4);
  }
}

#define NC_NELEM 24   /* a multiple of every layout's elements per instance */
#define NC_SLOT 1024  /* bytes per slot: GUARD, up to 64 elements, guard */

typedef struct {
  const layout_t *src, *dst; /* src: the side data comes from */
  size_t esize;
} combo_t;

/* Puts (dir DIR_NC_PUT) or gets of every combination to/from every unit,
 * checked element by element over the whole slot. */
static void nc_phase(ctx_t *c, int dir, const combo_t *cb, int ncb)
{
  const int n = c->n;
  const size_t region = (size_t)n * ncb * NC_SLOT;
  char what[200];
  if (region > c->need) {
    FAIL_AT(__LINE__, "test bug: nc phase needs %zu bytes", region);
    return;
  }
  const uint8_t tfill = TARGET_FILL, lfill = LOCAL_FILL;
  memset(c->mine, tfill, region);
  memset(c->lbuf, lfill, region);
  /* the side the data comes from: every position of its span, gaps too */
  for (int u = 0; u < n; u++) {
    for (int k = 0; k < ncb; k++) {
      uint8_t *base = (dir == DIR_NC_PUT ? c->lbuf : c->mine) +
                      ((size_t)u * ncb + k) * NC_SLOT + GUARD;
      size_t span = layout_span(cb[k].src, NC_NELEM);
      uint64_t key = key_of(c->tag, dir, c->me, u, 0, k);
      for (size_t p = 0; p < span; p++)
        set_elem(base, cb[k].esize, p, elem_value(key, p, cb[k].esize));
    }
  }
  CHECK_OK(dart_barrier(c->team));
  for (int k = 0; k < ncb; k++) {
    for (int t = 0; t < n; t++) {
      uint8_t *local = c->lbuf + ((size_t)t * ncb + k) * NC_SLOT + GUARD;
      dart_gptr_t rg = at(c, t, ((size_t)c->me * ncb + k) * NC_SLOT + GUARD);
      dart_handle_t h = DART_HANDLE_NULL;
      if (dir == DIR_NC_PUT) {
        if (k % 2 == 0) {
          CHECK_OK(dart_put_blocking(rg, local, NC_NELEM, cb[k].src->type,
                                     cb[k].dst->type));
        } else {
          CHECK_OK(dart_put_handle(rg, local, NC_NELEM, cb[k].src->type,
                                   cb[k].dst->type, &h));
          CHECK_OK(dart_wait(&h));
        }
      } else {
        if (k % 2 == 0) {
          CHECK_OK(dart_get_blocking(local, rg, NC_NELEM, cb[k].src->type,
                                     cb[k].dst->type));
        } else {
          CHECK_OK(dart_get(local, rg, NC_NELEM, cb[k].src->type,
                            cb[k].dst->type));
          CHECK_OK(dart_flush(rg));
        }
      }
    }
  }
  CHECK_OK(dart_barrier(c->team));
  /* the side the data went to */
  for (int u = 0; u < n; u++) {
    for (int k = 0; k < ncb; k++) {
      const int src_unit = u, dst_unit = c->me;
      const uint8_t *got = (dir == DIR_NC_PUT ? c->mine : c->lbuf) +
                           ((size_t)u * ncb + k) * NC_SLOT;
      uint8_t *want = c->scratch;
      const size_t es = cb[k].esize;
      uint64_t key = key_of(c->tag, dir, src_unit, dst_unit, 0, k);
      memset(want, dir == DIR_NC_PUT ? tfill : lfill, NC_SLOT);
      for (size_t j = 0; j < NC_NELEM; j++) {
        set_elem(want + GUARD, es, layout_pos(cb[k].dst, j),
                 elem_value(key, layout_pos(cb[k].src, j), es));
      }
      if (memcmp(got, want, NC_SLOT) != 0) {
        size_t i = 0;
        while (got[i] == want[i]) i++;
        long elem = ((long)i - GUARD) / (long)es;
        if ((long)i < GUARD) elem = -1;
        snprintf(what, sizeof what,
                 "%s %s -> %s (%zu B elements) unit %d -> %d: first wrong "
                 "byte %zu (element %ld of the destination layout)",
                 dir == DIR_NC_PUT ? "put" : "get", cb[k].src->name,
                 cb[k].dst->name, es, src_unit, dst_unit, i, elem);
        check_bytes(__LINE__, got, want, NC_SLOT, what);
      }
    }
  }
  /* gets leave the source alone */
  if (dir == DIR_NC_GET) {
    for (int s = 0; s < n; s++) {
      for (int k = 0; k < ncb; k++) {
        const uint8_t *got = c->mine + ((size_t)s * ncb + k) * NC_SLOT + GUARD;
        const uint64_t key = key_of(c->tag, dir, c->me, s, 0, k);
        const size_t span = layout_span(cb[k].src, NC_NELEM);
        for (size_t p = 0; p < span; p++)
          set_elem(c->scratch, cb[k].esize, p,
                   elem_value(key, p, cb[k].esize));
        check_bytes(__LINE__, got, c->scratch, span * cb[k].esize,
                    "source of a non-contiguous get changed");
      }
    }
  }
  CHECK_OK(dart_barrier(c->team));
}

/* ---- the last byte of each unit's part ---- */

static void tail_phase(ctx_t *c)
{
  const int n = c->n;
  uint8_t *tail = c->mine + c->need;
  const size_t tail_len = part_size(c, c->me) - c->need;
  const uint64_t key = key_of(c->tag, DIR_TAIL, c->me, 0, 0, 0);
  char what[120];
  fill_pattern(tail, tail_len, key);
  CHECK_OK(dart_barrier(c->team));
  for (int t = 0; t < n; t++) {
    /* every unit writes the same value into t's last byte */
    uint8_t v = (uint8_t)(0xC3 ^ t), got[16];
    size_t last = part_size(c, t) - 1;
    CHECK_OK(dart_put_blocking(at(c, t, last), &v, 1, DART_TYPE_BYTE,
                               DART_TYPE_BYTE));
    /* and a 1-byte get of it returns it */
    got[0] = 0;
    CHECK_OK(dart_get_blocking(got, at(c, t, last), 1, DART_TYPE_BYTE,
                               DART_TYPE_BYTE));
    CHECK_EQ(got[0], v);
    /* one byte further is beyond t's part (bad input: an error line each) */
    uint8_t two[2] = {0x11, 0x22};
    CHECK_RET(dart_put_blocking(at(c, t, last + 1), two, 1, DART_TYPE_BYTE,
                                DART_TYPE_BYTE),
              DART_ERR_INVAL);
    CHECK_RET(dart_put_blocking(at(c, t, last), two, 2, DART_TYPE_BYTE,
                                DART_TYPE_BYTE),
              DART_ERR_INVAL);
  }
  CHECK_OK(dart_barrier(c->team));
  /* the owner sees its last byte written and the rest of its tail intact */
  fill_pattern(c->scratch, tail_len, key);
  c->scratch[tail_len - 1] = (uint8_t)(0xC3 ^ c->me);
  check_bytes(__LINE__, tail, c->scratch, tail_len, "tail of own part");
  /* the last TAIL_GET bytes of every part, read by every unit */
  for (int t = 0; t < n; t++) {
    uint8_t got[TAIL_GET];
    size_t tl = part_size(c, t) - c->need;
    uint8_t *buf = malloc(tl);
    if (!buf) continue;
    fill_pattern(buf, tl, key_of(c->tag, DIR_TAIL, t, 0, 0, 0));
    buf[tl - 1] = (uint8_t)(0xC3 ^ t);
    memset(got, 0, sizeof got);
    CHECK_OK(dart_get_blocking(got, at(c, t, part_size(c, t) - TAIL_GET),
                               TAIL_GET, DART_TYPE_BYTE, DART_TYPE_BYTE));
    snprintf(what, sizeof what, "last %d bytes of unit %d's part", TAIL_GET,
             t);
    check_bytes(__LINE__, got, buf + tl - TAIL_GET, TAIL_GET, what);
    free(buf);
  }
  CHECK_OK(dart_barrier(c->team));
}

/* ---- everything on one allocation ---- */

static const size_t sizes[] = {1, 7, 4096 + 3, 64 * 1024};
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define BIG_SIZE ((size_t)4 << 20)

static void run_all(ctx_t *c, int with_big, const layout_t *L)
{
  static const int all_vars[NVAR] = {V_FLUSH,      V_FLUSH_ALL, V_FLUSH_LOCAL,
                                     V_BLOCKING,   V_WAIT,      V_WAIT_LOCAL,
                                     V_TEST,       V_WAITALL,   V_TESTALL,
                                     V_HFREE};
  for (size_t i = 0; i < NSIZES; i++) {
    xfer_t x = {DART_TYPE_BYTE, 1, sizes[i], (int)i};
    put_phase(c, &x, all_vars, NVAR);
    get_phase(c, &x, all_vars, NVAR);
  }
  if (with_big) {
    static const int big_put[] = {V_BLOCKING, V_WAIT, V_FLUSH_ALL};
    static const int big_get[] = {V_BLOCKING, V_WAIT, V_FLUSH};
    xfer_t x = {DART_TYPE_BYTE, 1, BIG_SIZE, 10};
    for (int k = 0; k < 3; k++) {
      put_phase(c, &x, &big_put[k], 1);
      get_phase(c, &x, &big_get[k], 1);
    }
  }
  /* 8- and 4-byte elements: counts are in elements */
  {
    static const int lvars[] = {V_FLUSH, V_BLOCKING, V_WAIT, V_TESTALL};
    static const int ivars[] = {V_FLUSH_ALL, V_BLOCKING, V_TEST, V_WAITALL};
    xfer_t xl = {DART_TYPE_LONG, sizeof(long), 1000, 20};
    xfer_t xi = {DART_TYPE_INT, sizeof(int), 1001, 21};
    xfer_t xl1 = {DART_TYPE_LONG, sizeof(long), 1, 22};
    put_phase(c, &xl, lvars, 4);
    get_phase(c, &xl, lvars, 4);
    put_phase(c, &xi, ivars, 4);
    get_phase(c, &xi, ivars, 4);
    put_phase(c, &xl1, lvars, 4);
    get_phase(c, &xl1, lvars, 4);
  }
  /* non-contiguous: L = C, S1, S2, IA, IB (INT), CL, SL (LONG) */
  {
    const combo_t cb[] = {
        {&L[1], &L[0], 4}, /* strided -> contiguous */
        {&L[0], &L[1], 4}, /* contiguous -> strided */
        {&L[1], &L[2], 4}, /* strided -> other strided */
        {&L[3], &L[0], 4}, /* indexed -> contiguous */
        {&L[0], &L[3], 4}, /* contiguous -> indexed */
        {&L[3], &L[4], 4}, /* indexed -> other indexed */
        {&L[4], &L[2], 4}, /* indexed -> strided */
        {&L[0], &L[0], 4}, /* contiguous -> contiguous */
        {&L[6], &L[5], 8}, /* strided -> contiguous, LONG */
        {&L[5], &L[6], 8}, /* contiguous -> strided, LONG */
    };
    const int ncb = (int)(sizeof cb / sizeof cb[0]);
    nc_phase(c, DIR_NC_PUT, cb, ncb);
    nc_phase(c, DIR_NC_GET, cb, ncb);
  }
  tail_phase(c);
}

static size_t need_for(int n, int with_big, int ncombos)
{
  size_t need = (size_t)n * NVAR * stride_for(64 * 1024);
  if (with_big && (size_t)n * stride_for(BIG_SIZE) > need)
    need = (size_t)n * stride_for(BIG_SIZE);
  if ((size_t)n * ncombos * NC_SLOT > need) need = (size_t)n * ncombos * NC_SLOT;
  return need;
}

int main(int argc, char **argv)
{
  dart_test_init(&argc, &argv);
  const int me = dart_test_unit, units = dart_test_units;
  ptab_init();

  /* layouts: C, S1, S2, IA, IB on INT; CL, SL on LONG */
  layout_t L[7] = {
      {.kind = L_CONTIG, .name = "contig"},
      {.kind = L_STRIDED, .stride = 5, .bl = 2, .name = "strided(5,2)"},
      {.kind = L_STRIDED, .stride = 3, .bl = 1, .name = "strided(3,1)"},
      {.kind = L_INDEXED, .count = 3, .bls = {2, 1, 3}, .offs = {0, 4, 7},
       .name = "indexed({2,1,3},{0,4,7})"},
      {.kind = L_INDEXED, .count = 2, .bls = {2, 1}, .offs = {4, 0},
       .name = "indexed({2,1},{4,0})"},
      {.kind = L_CONTIG, .name = "contig long"},
      {.kind = L_STRIDED, .stride = 4, .bl = 3, .name = "strided long(4,3)"},
  };
  L[0].type = DART_TYPE_INT;
  L[5].type = DART_TYPE_LONG;
  CHECK_OK(dart_type_create_strided(DART_TYPE_INT, 5, 2, &L[1].type));
  CHECK_OK(dart_type_create_strided(DART_TYPE_INT, 3, 1, &L[2].type));
  CHECK_OK(dart_type_create_indexed(DART_TYPE_INT, 3, L[3].bls, L[3].offs,
                                    &L[3].type));
  CHECK_OK(dart_type_create_indexed(DART_TYPE_INT, 2, L[4].bls, L[4].offs,
                                    &L[4].type));
  CHECK_OK(dart_type_create_strided(DART_TYPE_LONG, 4, 3, &L[6].type));

  /* DART_TEAM_ALL */
  {
    ctx_t c;
    if (ctx_init(&c, DART_TEAM_ALL, 0, need_for(units, 1, 10),
                 BIG_SIZE + NC_SLOT)) {
      run_all(&c, 1, L);
    }
    ctx_free(&c);
  }

  /* a sub-team of the even units: team unit ids differ from global ones */
  {
    dart_group_t grp;
    dart_team_t team = DART_TEAM_NULL;
    CHECK_OK(dart_group_create(&grp));
    for (int u = 0; u < units; u += 2)
      CHECK_OK(dart_group_addmember(grp, DART_GLOBAL_UNIT_ID(u)));
    CHECK_OK(dart_team_create(DART_TEAM_ALL, grp, &team));
    CHECK_OK(dart_group_destroy(&grp));
    if (me % 2 == 1) {
      CHECK(team == DART_TEAM_NULL);
    } else {
      CHECK(team != DART_TEAM_NULL && team != DART_TEAM_ALL);
    }
    if (team != DART_TEAM_NULL) {
      ctx_t c;
      size_t tsize;
      CHECK_OK(dart_team_size(team, &tsize));
      CHECK_EQ(tsize, (units + 1) / 2);
      if (ctx_init(&c, team, 1, need_for((int)tsize, 0, 10),
                   64 * 1024 + NC_SLOT)) {
        CHECK_EQ(c.me, me / 2);
        run_all(&c, 0, L);
      }
      ctx_free(&c);
      CHECK_OK(dart_team_destroy(&team));
      CHECK(team == DART_TEAM_NULL);
    }
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
  }

  /* A handle outlives its team: the destruction completed the put, so the
   * wait succeeds (it once flushed the freed team). */
  {
    dart_team_t team = DART_TEAM_NULL;
    CHECK_OK(dart_team_clone(DART_TEAM_ALL, &team));
    dart_gptr_t g;
    CHECK_OK(dart_team_memalloc_aligned(team, 8, DART_TYPE_BYTE, &g));
    CHECK_OK(dart_gptr_setunit(&g, DART_TEAM_UNIT_ID((me + 1) % units)));
    const char v[8] = "handle";
    dart_handle_t h = DART_HANDLE_NULL;
    CHECK_OK(dart_put_handle(g, v, 8, DART_TYPE_BYTE, DART_TYPE_BYTE, &h));
    CHECK_OK(dart_team_destroy(&team));
    CHECK_OK(dart_wait(&h));
    CHECK(h == DART_HANDLE_NULL);
  }

  for (int i = 1; i < 7; i++) {
    if (i == 5) continue;
    CHECK_OK(dart_type_destroy(&L[i].type));
    CHECK(L[i].type == DART_TYPE_UNDEFINED);
  }
  free(ptab);
  return dart_test_finish();
}
