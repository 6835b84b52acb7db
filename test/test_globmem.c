/*
 * Global memory: dart_memalloc blocks reached by every unit, pool growth past
 * the default 16 MiB pool, registration of user memory (aligned and not),
 * segment ids, allocators (incl. a full pool), dart_gptr_getaddr/setaddr,
 * flags, and allocation on a sub-team. Every check reads values back.
 */
#include "dart_test.h"

#include <dart/dart_ext.h>

static int me, nunits;
static int *node_of;

/* Bytes [from, from + len) of the pattern of key, whose byte i is byte
 * i % 8 of dart_test_mix64(key * K + i / 8). */
static void fill_range(uint8_t *buf, size_t from, size_t len, uint64_t key)
{
  for (size_t i = 0; i < len;) {
    const size_t pos = from + i, b = pos % 8;
    const uint64_t v = dart_test_mix64(key * 0xD6E8FEB86659FD93ull + pos / 8);
    size_t k = 8 - b;
    if (k > len - i) k = len - i;
    memcpy(buf + i, (const uint8_t *)&v + b, k);
    i += k;
  }
}

static void fill_pattern(uint8_t *buf, size_t len, uint64_t key)
{
  fill_range(buf, 0, len, key);
}

static void check_bytes(int line, const uint8_t *got, const uint8_t *want,
                        size_t len, const char *what)
{
  if (memcmp(got, want, len) == 0) return;
  size_t first = 0, bad = 0;
  for (size_t i = len; i-- > 0;) {
    if (got[i] != want[i]) {
      first = i;
      bad++;
    }
  }
  FAIL_AT(line, "%s: %zu of %zu bytes wrong, first at %zu: 0x%02x, want 0x%02x",
        what, bad, len, first, got[first], want[first]);
}

static int overlap(const void *a, size_t alen, const void *b, size_t blen)
{
  const char *pa = a, *pb = b;
  return pa < pb + blen && pb < pa + alen;
}

/* Expected path to global unit g's pool or collective memory. */
static int expected_path(int g)
{
  const char *shm_env = getenv("DART_SHM");
  dart_path_t remote, peer_private;
  CHECK_OK(dart_transport_paths(&remote, &peer_private));
  if (g == me) return DART_PATH_SELF;
  if (node_of[g] == node_of[me] && !(shm_env && strcmp(shm_env, "0") == 0))
    return DART_PATH_SHM;
  return remote;
}

/* ---- 1. dart_memalloc blocks ---- */

static void test_memalloc(void)
{
  const int n = nunits;
  dart_gptr_t a = DART_GPTR_NULL, b = DART_GPTR_NULL, c = DART_GPTR_NULL;
  const size_t alen = 100 + (size_t)me; /* longs */
  CHECK_OK(dart_memalloc(alen, DART_TYPE_LONG, &a));
  CHECK_OK(dart_memalloc(37, DART_TYPE_BYTE, &b));
  CHECK_OK(dart_memalloc(1, DART_TYPE_INT, &c));
  const dart_gptr_t all[3] = {a, b, c};
  for (int i = 0; i < 3; i++) {
    CHECK_EQ(all[i].unitid, me);
    CHECK_EQ(all[i].teamid, DART_TEAM_ALL);
    CHECK_EQ(all[i].segid, DART_SEGMENT_LOCAL);
  }
  long *pa = NULL;
  uint8_t *pb = NULL;
  int *pc = NULL;
  CHECK_OK(dart_gptr_getaddr(a, (void **)&pa));
  CHECK_OK(dart_gptr_getaddr(b, (void **)&pb));
  CHECK_OK(dart_gptr_getaddr(c, (void **)&pc));
  CHECK(pa && pb && pc);
  if (!pa || !pb || !pc) return;
  CHECK(!overlap(pa, alen * sizeof(long), pb, 37));
  CHECK(!overlap(pa, alen * sizeof(long), pc, sizeof(int)));
  CHECK(!overlap(pb, 37, pc, sizeof(int)));
  CHECK(!DART_GPTR_EQUAL(a, b) && !DART_GPTR_EQUAL(b, c));

  /* the owner's values, read by every unit */
  for (size_t i = 0; i < alen; i++) pa[i] = (long)(me * 100000 + (int)i);
  for (int i = 0; i < 37; i++) pb[i] = (uint8_t)(me * 37 + i);
  *pc = -1 - me;
  dart_gptr_t *ga = malloc((size_t)n * 3 * sizeof *ga);
  CHECK_OK(dart_allgather(all, ga, sizeof all, DART_TYPE_BYTE, DART_TEAM_ALL));
  CHECK(DART_GPTR_EQUAL(ga[3 * me], a));
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  for (int t = 0; t < n; t++) {
    long la[200];
    uint8_t lb[37];
    int lc = 0;
    const size_t tlen = 100 + (size_t)t;
    CHECK_EQ(ga[3 * t].unitid, t);
    CHECK_OK(dart_get_blocking(la, ga[3 * t], tlen, DART_TYPE_LONG,
                               DART_TYPE_LONG));
    CHECK_OK(dart_get_blocking(lb, ga[3 * t + 1], 37, DART_TYPE_BYTE,
                               DART_TYPE_BYTE));
    CHECK_OK(dart_get_blocking(&lc, ga[3 * t + 2], 1, DART_TYPE_INT,
                               DART_TYPE_INT));
    for (size_t i = 0; i < tlen; i++) {
      if (la[i] != (long)(t * 100000 + (int)i)) {
        FAIL_AT(__LINE__, "memalloc block of unit %d: long %zu is %ld", t, i,
              la[i]);
        break;
      }
    }
    for (int i = 0; i < 37; i++) CHECK_EQ(lb[i], (uint8_t)(t * 37 + i));
    CHECK_EQ(lc, -1 - t);
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  /* every unit writes its own long in every block, and the int of the next */
  for (int t = 0; t < n; t++) {
    dart_gptr_t g = ga[3 * t];
    long v = -(long)(me + 1) * 1000 - t;
    dart_gptr_incaddr(&g, (int64_t)sizeof(long) * (me % 100));
    CHECK_OK(dart_put_blocking(g, &v, 1, DART_TYPE_LONG, DART_TYPE_LONG));
  }
  {
    int v = 4242 + me;
    dart_gptr_t g = ga[3 * ((me + 1) % n) + 2];
    dart_handle_t h;
    CHECK_OK(dart_put_handle(g, &v, 1, DART_TYPE_INT, DART_TYPE_INT, &h));
    CHECK_OK(dart_wait(&h));
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  for (size_t i = 0; i < alen; i++) {
    long want = (long)(me * 100000 + (int)i);
    if ((int)i < n && (int)i < 100) want = -(long)(i + 1) * 1000 - me;
    if (pa[i] != want) {
      FAIL_AT(__LINE__, "own memalloc block: long %zu is %ld, want %ld", i,
            pa[i], want);
    }
  }
  for (int i = 0; i < 37; i++) CHECK_EQ(pb[i], (uint8_t)(me * 37 + i));
  CHECK_EQ(*pc, 4242 + (me + n - 1) % n);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_OK(dart_memfree(b));
  CHECK_OK(dart_memfree(a));
  CHECK_OK(dart_memfree(c));
  /* the space is usable again */
  CHECK_OK(dart_memalloc(alen, DART_TYPE_LONG, &a));
  CHECK_OK(dart_gptr_getaddr(a, (void **)&pa));
  CHECK(pa != NULL);
  CHECK_OK(dart_memfree(a));
  free(ga);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
}

/* ---- 2. pool growth: 6 x 4 MiB > the default 16 MiB pool ---- */

#define NBLK 6
#define BLK ((size_t)4 << 20)
#define PIECE 4096

static uint64_t blk_key(int owner, int i) { return 1000 + (uint64_t)owner * 16 + (uint64_t)i; }

static void test_pool_growth(void)
{
  const int n = nunits;
  dart_gptr_t blk[NBLK];
  uint8_t *addr[NBLK];
  uint8_t *tmp = malloc(BLK), *want = malloc(BLK), *got = malloc(BLK);
  char what[160];
  if (!tmp || !want || !got) {
    FAIL_AT(__LINE__, "malloc failed");
    return;
  }
  for (int i = 0; i < NBLK; i++) {
    blk[i] = DART_GPTR_NULL;
    addr[i] = NULL;
    CHECK_OK(dart_memalloc(BLK, DART_TYPE_BYTE, &blk[i]));
    CHECK_EQ(blk[i].unitid, me);
    CHECK_EQ(blk[i].segid, DART_SEGMENT_LOCAL);
    CHECK_EQ(blk[i].teamid, DART_TEAM_ALL);
    CHECK_OK(dart_gptr_getaddr(blk[i], (void **)&addr[i]));
    CHECK(addr[i] != NULL);
    if (addr[i] == NULL) return;
    for (int j = 0; j < i; j++) {
      CHECK(!overlap(addr[i], BLK, addr[j], BLK));
      CHECK(!DART_GPTR_EQUAL(blk[i], blk[j]));
    }
    fill_pattern(addr[i], BLK, blk_key(me, i));
  }
  dart_gptr_t *all = malloc((size_t)n * NBLK * sizeof *all);
  CHECK_OK(dart_allgather(blk, all, sizeof blk, DART_TYPE_BYTE,
                          DART_TEAM_ALL));
  CHECK_OK(dart_barrier(DART_TEAM_ALL));

  /* gets: start, middle and end of every block of every unit, one whole
   * block of the next unit; and the path of every block */
  for (int t = 0; t < n; t++) {
    for (int i = 0; i < NBLK; i++) {
      dart_gptr_t g = all[t * NBLK + i];
      dart_path_t path = DART_PATH_COUNT;
      CHECK_OK(dart_gptr_path(g, &path));
      /* blocks beyond the initial pool are private memory: node peers
       * reach them like registered memory, other units through the remote
       * transport (UCX registers grown chunks too) */
      const int want = expected_path(t);
      dart_path_t remote, peer_private;
      CHECK_OK(dart_transport_paths(&remote, &peer_private));
      const int grown = want == DART_PATH_SHM && peer_private == DART_PATH_CMA
                            ? DART_PATH_CMA : (int)remote;
      if ((int)path != want && !(want != DART_PATH_SELF && (int)path == grown))
        FAIL_AT(__LINE__, "pool block %d of unit %d: path %d, expected %d", i,
              t, (int)path, want);
      const size_t offs[3] = {0, BLK / 2 + 3, BLK - PIECE};
      for (int k = 0; k < 3; k++) {
        dart_gptr_t gk = g;
        dart_gptr_incaddr(&gk, (int64_t)offs[k]);
        memset(got, 0, PIECE);
        CHECK_OK(dart_get_blocking(got, gk, PIECE, DART_TYPE_BYTE,
                                   DART_TYPE_BYTE));
        snprintf(what, sizeof what, "get of block %d of unit %d at %zu", i, t,
                 offs[k]);
        fill_range(tmp, offs[k], PIECE, blk_key(t, i));
        check_bytes(__LINE__, got, tmp, PIECE, what);
      }
      if (t == (me + 1) % n && i == me % NBLK) {
        dart_handle_t h;
        memset(got, 0, BLK);
        CHECK_OK(dart_get_handle(got, g, BLK, DART_TYPE_BYTE, DART_TYPE_BYTE,
                                 &h));
        CHECK_OK(dart_wait(&h));
        snprintf(what, sizeof what, "get of all of block %d of unit %d", i, t);
        fill_pattern(tmp, BLK, blk_key(t, i));
        check_bytes(__LINE__, got, tmp, BLK, what);
      }
    }
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));

  /* puts: 64 bytes by every unit into every block of every unit, at its
   * own place near the start and near the end */
  for (int t = 0; t < n; t++) {
    for (int i = 0; i < NBLK; i++) {
      uint8_t src[64];
      dart_gptr_t g1 = all[t * NBLK + i], g2 = g1;
      fill_pattern(src, 64, blk_key(me, i) * 31 + (uint64_t)t);
      dart_gptr_incaddr(&g1, (int64_t)(PIECE * me + 17));
      dart_gptr_incaddr(&g2, (int64_t)(BLK - (size_t)PIECE * (me + 1)));
      CHECK_OK(dart_put(g1, src, 64, DART_TYPE_BYTE, DART_TYPE_BYTE));
      CHECK_OK(dart_flush(g1));
      CHECK_OK(dart_put_blocking(g2, src, 64, DART_TYPE_BYTE, DART_TYPE_BYTE));
    }
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  for (int i = 0; i < NBLK; i++) {
    fill_pattern(want, BLK, blk_key(me, i));
    for (int s = 0; s < n; s++) {
      uint8_t src[64];
      fill_pattern(src, 64, blk_key(s, i) * 31 + (uint64_t)me);
      memcpy(want + PIECE * s + 17, src, 64);
      memcpy(want + BLK - (size_t)PIECE * (s + 1), src, 64);
    }
    snprintf(what, sizeof what, "own pool block %d after the puts", i);
    check_bytes(__LINE__, addr[i], want, BLK, what);
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));

  /* atomics on grown chunks: one path for every unit (MPI's; CPU atomics
   * alone), exact totals */
  {
    dart_path_t apath = DART_PATH_COUNT;
    const long rounds = 20, one = 1;
    long old, total;
    for (int t = 0; t < n; t++) {
      dart_gptr_t g = all[t * NBLK + NBLK - 1];
      CHECK_OK(dart_gptr_atomic_path(g, &apath));
      CHECK_EQ(apath, (n == 1 ? DART_PATH_SELF : DART_PATH_MPI));
      for (long r = 0; r < rounds; r++)
        CHECK_OK(dart_fetch_and_op(g, &one, &old, DART_TYPE_LONG,
                                   DART_OP_SUM));
    }
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    CHECK_OK(dart_get_blocking(&total, all[me * NBLK + NBLK - 1], 1,
                               DART_TYPE_LONG, DART_TYPE_LONG));
    uint64_t before;
    fill_range((uint8_t *)&before, 0, sizeof before, blk_key(me, NBLK - 1));
    CHECK_EQ((uint64_t)total - before, (uint64_t)n * (uint64_t)rounds);
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
  }
  for (int i = 0; i < NBLK; i++) CHECK_OK(dart_memfree(blk[i]));
  /* and once more after freeing */
  for (int i = 0; i < NBLK; i++) CHECK_OK(dart_memalloc(BLK, DART_TYPE_BYTE, &blk[i]));
  for (int i = 0; i < NBLK; i++) CHECK_OK(dart_memfree(blk[i]));
  free(all);
  free(tmp);
  free(want);
  free(got);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
}

/* ---- 3. registration of user memory ---- */

/* words: [0, n) written by unit s at word s; [n, 2n) the owner's for gets */
static void exercise_registered(dart_gptr_t g, uint64_t *buf, size_t words,
                                int tag)
{
  const int n = nunits;
  CHECK(g.segid < 0);
  CHECK_EQ(g.teamid, DART_TEAM_ALL);
  dart_gptr_t mine = g;
  dart_gptr_setunit(&mine, DART_TEAM_UNIT_ID(me));
  mine.addr_or_offs.offset = 0;
  void *p = NULL;
  CHECK_OK(dart_gptr_getaddr(mine, &p));
  CHECK(p == (void *)buf);
  for (size_t w = 0; w < words; w++) buf[w] = 0;
  for (int s = 0; s < n; s++)
    buf[n + s] = ((uint64_t)tag << 40) | ((uint64_t)me << 20) | (uint64_t)s;
  buf[words - 1] = 0xE0Dull + (uint64_t)me;
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  for (int t = 0; t < n; t++) {
    dart_gptr_t gt = g, gw, gr;
    dart_gptr_setunit(&gt, DART_TEAM_UNIT_ID(t));
    gt.addr_or_offs.offset = 0;
    gw = gt;
    gr = gt;
    dart_gptr_incaddr(&gw, 8 * me);
    dart_gptr_incaddr(&gr, 8 * (n + me));
    uint64_t v = ((uint64_t)tag << 40) | ((uint64_t)t << 20) | 0x80000u |
                 (uint64_t)me, r = 0;
    CHECK_OK(dart_put_blocking(gw, &v, 1, DART_TYPE_ULONG, DART_TYPE_ULONG));
    CHECK_OK(dart_get_blocking(&r, gr, 1, DART_TYPE_ULONG, DART_TYPE_ULONG));
    CHECK_EQ(r, ((uint64_t)tag << 40) | ((uint64_t)t << 20) | (uint64_t)me);
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  for (int s = 0; s < n; s++) {
    uint64_t want = ((uint64_t)tag << 40) | ((uint64_t)me << 20) | 0x80000u |
                    (uint64_t)s;
    if (buf[s] != want)
      FAIL_AT(__LINE__, "registered memory (tag %d): word of unit %d is 0x%llx",
            tag, s, (unsigned long long)buf[s]);
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
}

static void test_register(void)
{
  const int n = nunits;
  /* aligned, on the stack: every unit the same count */
  {
    uint64_t sbuf[1024];
    const size_t words = 2 * (size_t)n + 1;
    if (words > 1024) return;
    dart_gptr_t g = DART_GPTR_NULL;
    CHECK_OK(dart_team_memregister_aligned(DART_TEAM_ALL, words,
                                           DART_TYPE_ULONG, sbuf, &g));
    exercise_registered(g, sbuf, words, 1);
    /* the last word of the next unit's part */
    uint64_t last = 0;
    dart_gptr_t gl = g;
    dart_gptr_setunit(&gl, DART_TEAM_UNIT_ID((me + 1) % n));
    gl.addr_or_offs.offset = 8 * (words - 1);
    CHECK_OK(dart_get_blocking(&last, gl, 1, DART_TYPE_ULONG,
                               DART_TYPE_ULONG));
    CHECK_EQ(last, 0xE0Dull + (uint64_t)((me + 1) % n));
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    CHECK_OK(dart_team_memderegister(g));
    /* the memory stays the user's */
    sbuf[0] = 77;
    CHECK_EQ(sbuf[0], 77);
  }
  /* not aligned, malloc'd: different counts per unit */
  {
    const size_t words = 2 * (size_t)n + 1 + 5 * (size_t)me;
    uint64_t *buf = malloc(words * sizeof *buf);
    dart_gptr_t g = DART_GPTR_NULL, g2 = DART_GPTR_NULL;
    CHECK_OK(dart_team_memregister(DART_TEAM_ALL, words, DART_TYPE_ULONG, buf,
                                   &g));
    exercise_registered(g, buf, words, 2);
    /* the last word of every unit's part */
    for (int t = 0; t < n; t++) {
      uint64_t last = 0;
      dart_gptr_t gl = g;
      dart_gptr_setunit(&gl, DART_TEAM_UNIT_ID(t));
      gl.addr_or_offs.offset = 8 * (2 * (size_t)n + 5 * (size_t)t);
      CHECK_OK(dart_get_blocking(&last, gl, 1, DART_TYPE_ULONG,
                                 DART_TYPE_ULONG));
      CHECK_EQ(last, 0xE0Dull + (uint64_t)t);
    }
    /* a second registration gets another segment id */
    uint64_t other[4];
    CHECK_OK(dart_team_memregister(DART_TEAM_ALL, 4, DART_TYPE_ULONG, other,
                                   &g2));
    CHECK(g2.segid < 0);
    CHECK(g2.segid != g.segid);
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    CHECK_OK(dart_team_memderegister(g2));
    CHECK_OK(dart_team_memderegister(g));
    buf[words - 1] = 5;
    CHECK_EQ(buf[words - 1], 5);
    free(buf);
  }
}

/* ---- 4. allocators ---- */

#define POOL (64 * 1024)

static void test_allocator(void)
{
  const int n = nunits;
  dart_allocator_t al = NULL;
  CHECK_OK(dart_allocator_new(POOL, DART_TEAM_ALL, &al));
  CHECK(al != NULL);
  if (!al) return;
  dart_gptr_t g = DART_GPTR_NULL;
  const size_t nint = 16 + (size_t)n;
  CHECK_OK(dart_allocator_alloc(nint, DART_TYPE_INT, &g, al));
  CHECK_EQ(g.unitid, me);
  CHECK_EQ(g.teamid, DART_TEAM_ALL);
  CHECK(g.segid > 0);
  int *p = NULL;
  CHECK_OK(dart_gptr_getaddr(g, (void **)&p));
  CHECK(p != NULL);
  if (!p) return;
  for (size_t i = 0; i < nint; i++) p[i] = -1;
  dart_gptr_t *all = malloc((size_t)n * sizeof *all);
  CHECK_OK(dart_allgather(&g, all, sizeof g, DART_TYPE_BYTE, DART_TEAM_ALL));
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  for (int t = 0; t < n; t++) {
    int v = 1000 * me + t;
    dart_gptr_t gt = all[t];
    CHECK_EQ(gt.unitid, t);
    dart_gptr_incaddr(&gt, (int64_t)sizeof(int) * me);
    CHECK_OK(dart_put_blocking(gt, &v, 1, DART_TYPE_INT, DART_TYPE_INT));
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  for (int s = 0; s < n; s++) CHECK_EQ(p[s], 1000 * s + me);
  for (size_t i = (size_t)n; i < nint; i++) CHECK_EQ(p[i], -1);
  for (int t = 0; t < n && n <= 64; t++) {
    int got[64] = {0};
    CHECK_OK(dart_get_blocking(got, all[t], (size_t)n, DART_TYPE_INT,
                               DART_TYPE_INT));
    for (int s = 0; s < n; s++) CHECK_EQ(got[s], 1000 * s + t);
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));

  /* fill the pool: 4 KiB pieces until DART_ERR_NOMEM */
  dart_gptr_t piece[32];
  int np = 0;
  dart_ret_t ret = DART_OK;
  while (np < 32) {
    piece[np] = g; /* a failure must leave DART_GPTR_NULL, as DASH expects */
    ret = dart_allocator_alloc(4096, DART_TYPE_BYTE, &piece[np], al);
    if (ret != DART_OK) break;
    np++;
  }
  CHECK_RET(ret, DART_ERR_NOMEM);
  if (np < 32) CHECK(DART_GPTR_ISNULL(piece[np]));
  CHECK(np >= 1 && np <= POOL / 4096);
  for (int i = 0; i < np; i++) {
    char *a = NULL;
    CHECK_OK(dart_gptr_getaddr(piece[i], (void **)&a));
    CHECK(a != NULL && !overlap(a, 4096, p, nint * sizeof(int)));
    for (int j = 0; j < i; j++) {
      char *b = NULL;
      CHECK_OK(dart_gptr_getaddr(piece[j], (void **)&b));
      CHECK(a && b && !overlap(a, 4096, b, 4096));
    }
    if (a) memset(a, i, 4096);
  }
  /* the earlier allocation is untouched */
  for (int s = 0; s < n; s++) CHECK_EQ(p[s], 1000 * s + me);
  {
    dart_gptr_t big = g;
    CHECK_RET(dart_allocator_alloc(2 * POOL, DART_TYPE_BYTE, &big, al),
              DART_ERR_NOMEM);
    CHECK(DART_GPTR_ISNULL(big));
    big = g;
    CHECK_RET(dart_allocator_alloc(1, DART_TYPE_UNDEFINED, &big, al),
              DART_ERR_INVAL);
    CHECK(DART_GPTR_ISNULL(big));
  }
  for (int i = 0; i < np; i++) {
    CHECK_OK(dart_allocator_free(&piece[i], al));
    CHECK(DART_GPTR_ISNULL(piece[i]));
  }
  /* freed space is usable again */
  {
    dart_gptr_t h = DART_GPTR_NULL;
    CHECK_OK(dart_allocator_alloc(POOL / 2, DART_TYPE_BYTE, &h, al));
    CHECK_OK(dart_allocator_free(&h, al));
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_OK(dart_allocator_free(&g, al));
  CHECK(DART_GPTR_ISNULL(g));
  CHECK_OK(dart_allocator_destroy(&al));
  free(all);
}

/* ---- 5. getaddr / setaddr, segment ids, flags ---- */

static void test_gptr_helpers(void)
{
  const int n = nunits;
  const size_t mysize = 1000 + 8 * (size_t)me;
  dart_gptr_t g = DART_GPTR_NULL, g2 = DART_GPTR_NULL;
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, mysize, DART_TYPE_BYTE,
                                      &g));
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 64, DART_TYPE_BYTE, &g2));
  CHECK(g.segid > 0 && g2.segid > 0 && g.segid != g2.segid);
  CHECK_EQ(g.unitid, 0);
  CHECK_EQ(g.addr_or_offs.offset, 0);
  CHECK_EQ(g.teamid, DART_TEAM_ALL);

  /* getaddr over the own part */
  dart_gptr_t gm = g;
  dart_gptr_setunit(&gm, DART_TEAM_UNIT_ID(me));
  char *base = NULL;
  CHECK_OK(dart_gptr_getaddr(gm, (void **)&base));
  CHECK(base != NULL);
  if (!base) return;
  const size_t offs[4] = {0, 1, 17, mysize - 1};
  for (int i = 0; i < 4; i++) {
    dart_gptr_t x = gm;
    char *a = NULL;
    dart_gptr_incaddr(&x, (int64_t)offs[i]);
    CHECK_OK(dart_gptr_getaddr(x, (void **)&a));
    CHECK(a == base + offs[i]);
    /* setaddr, starting from unit 0's part: the inverse */
    dart_gptr_t y = g;
    CHECK_OK(dart_gptr_setaddr(&y, base + offs[i]));
    CHECK_EQ(y.unitid, me);
    CHECK_EQ(y.segid, g.segid);
    CHECK_EQ(y.teamid, g.teamid);
    CHECK_EQ(y.addr_or_offs.offset, offs[i]);
    CHECK(DART_GPTR_EQUAL(x, y));
    a = NULL;
    CHECK_OK(dart_gptr_getaddr(y, (void **)&a));
    CHECK(a == base + offs[i]);
  }
  /* a gptr made by setaddr reaches the same memory through put/get */
  {
    dart_gptr_t y = g;
    long v = 0x5EAD0000L + me, r = 0;
    CHECK_OK(dart_gptr_setaddr(&y, base + 64));
    CHECK_OK(dart_put_blocking(y, &v, 1, DART_TYPE_LONG, DART_TYPE_LONG));
    memcpy(&r, base + 64, sizeof r);
    CHECK_EQ(r, v);
  }
  /* on pool memory */
  {
    dart_gptr_t lp = DART_GPTR_NULL, y, x;
    char *lb = NULL, *a = NULL;
    CHECK_OK(dart_memalloc(256, DART_TYPE_BYTE, &lp));
    CHECK_OK(dart_gptr_getaddr(lp, (void **)&lb));
    CHECK(lb != NULL);
    if (lb) {
      y = lp;
      CHECK_OK(dart_gptr_setaddr(&y, lb + 5));
      x = lp;
      dart_gptr_incaddr(&x, 5);
      CHECK(DART_GPTR_EQUAL(x, y));
      CHECK_OK(dart_gptr_getaddr(y, (void **)&a));
      CHECK(a == lb + 5);
    }
    CHECK_OK(dart_memfree(lp));
  }

  /* flags: 8 bits, not touched by the runtime */
  {
    uint16_t f = 999;
    CHECK_OK(dart_gptr_getflags(g, &f));
    CHECK_EQ(f, 0);
    dart_gptr_t y = gm;
    for (unsigned v = 0; v <= 255; v++) {
      CHECK_OK(dart_gptr_setflags(&y, (uint16_t)v));
      f = 999;
      CHECK_OK(dart_gptr_getflags(y, &f));
      CHECK_EQ(f, v);
      CHECK_EQ(y.flags, v);
      CHECK(DART_GPTR_EQUAL(y, gm));
    }
    CHECK_OK(dart_gptr_setflags(&y, 0xAB));
    const dart_gptr_t before = y;
    CHECK_RET(dart_gptr_setflags(&y, 256), DART_ERR_INVAL);
    CHECK(memcmp(&y, &before, sizeof y) == 0);
    CHECK_RET(dart_gptr_setflags(&y, 0xFFFF), DART_ERR_INVAL);
    CHECK(memcmp(&y, &before, sizeof y) == 0);
    /* transfers ignore the client's flags */
    dart_gptr_t t = y;
    long v = 0x1F1A6L * (me + 1), r = 0;
    dart_gptr_setunit(&t, DART_TEAM_UNIT_ID((me + 1) % n));
    dart_gptr_incaddr(&t, 128);
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    CHECK_OK(dart_put_blocking(t, &v, 1, DART_TYPE_LONG, DART_TYPE_LONG));
    CHECK_OK(dart_get_blocking(&r, t, 1, DART_TYPE_LONG, DART_TYPE_LONG));
    CHECK_EQ(r, v);
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    memcpy(&r, base + 128, sizeof r);
    CHECK_EQ(r, 0x1F1A6L * (((me + n - 1) % n) + 1));
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_OK(dart_team_memfree(g2));
  CHECK_OK(dart_team_memfree(g));
}

/* ---- 6. allocation on a sub-team (the even units) ---- */

static void test_subteam(void)
{
  dart_group_t grp;
  dart_team_t team = DART_TEAM_NULL;
  CHECK_OK(dart_group_create(&grp));
  for (int u = 0; u < nunits; u += 2)
    CHECK_OK(dart_group_addmember(grp, DART_GLOBAL_UNIT_ID(u)));
  CHECK_OK(dart_team_create(DART_TEAM_ALL, grp, &team));
  CHECK_OK(dart_group_destroy(&grp));
  CHECK((team == DART_TEAM_NULL) == (me % 2 == 1));
  if (team != DART_TEAM_NULL) {
    size_t tn = 0;
    dart_team_unit_t tme;
    CHECK_OK(dart_team_size(team, &tn));
    CHECK_OK(dart_team_myid(team, &tme));
    CHECK_EQ(tn, (size_t)(nunits + 1) / 2);
    CHECK_EQ(tme.id, me / 2);
    for (int round = 0; round < 2; round++) {
      dart_gptr_t g = DART_GPTR_NULL;
      const size_t words = tn + 3 + (size_t)tme.id; /* different sizes */
      CHECK_OK(dart_team_memalloc_aligned(team, words, DART_TYPE_ULONG, &g));
      CHECK_EQ(g.teamid, team);
      CHECK(g.segid > 0);
      CHECK_EQ(g.unitid, 0);
      dart_gptr_t gm = g;
      dart_gptr_setunit(&gm, tme);
      uint64_t *mine = NULL;
      CHECK_OK(dart_gptr_getaddr(gm, (void **)&mine));
      CHECK(mine != NULL);
      if (!mine) break;
      for (size_t w = 0; w < words; w++) mine[w] = 0;
      mine[words - 1] = 0x7EA0ull + (uint64_t)tme.id;
      CHECK_OK(dart_barrier(team));
      for (int t = 0; t < (int)tn; t++) {
        dart_gptr_t gt = g;
        uint64_t v = ((uint64_t)round << 32) | ((uint64_t)tme.id << 16) |
                     (uint64_t)t,
                 last = 0;
        dart_gptr_setunit(&gt, DART_TEAM_UNIT_ID(t));
        dart_gptr_incaddr(&gt, 8 * tme.id);
        CHECK_OK(dart_put_blocking(gt, &v, 1, DART_TYPE_ULONG,
                                   DART_TYPE_ULONG));
        gt.addr_or_offs.offset = 8 * (tn + 2 + (size_t)t);
        CHECK_OK(dart_get_blocking(&last, gt, 1, DART_TYPE_ULONG,
                                   DART_TYPE_ULONG));
        CHECK_EQ(last, 0x7EA0ull + (uint64_t)t);
      }
      CHECK_OK(dart_barrier(team));
      for (int s = 0; s < (int)tn; s++) {
        CHECK_EQ(mine[s], ((uint64_t)round << 32) | ((uint64_t)s << 16) |
                              (uint64_t)tme.id);
      }
      CHECK_OK(dart_barrier(team));
      CHECK_OK(dart_team_memfree(g));
    }
    CHECK_OK(dart_team_destroy(&team));
    CHECK(team == DART_TEAM_NULL);
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
}

int main(int argc, char **argv)
{
  dart_test_init(&argc, &argv);
  me = dart_test_unit;
  nunits = dart_test_units;
  int num_nodes = 0, my_node = -1;
  CHECK_OK(dart_node_info(&num_nodes, &my_node));
  node_of = malloc((size_t)nunits * sizeof *node_of);
  CHECK_OK(dart_allgather(&my_node, node_of, 1, DART_TYPE_INT, DART_TEAM_ALL));

  test_memalloc();
  test_pool_growth();
  test_register();
  test_allocator();
  test_gptr_helpers();
  test_subteam();

  free(node_of);
  return dart_test_finish();
}
