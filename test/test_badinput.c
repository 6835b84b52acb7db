/*
 * Bad input (doc/design.md): every bad call to the put/get/flush/handle/gptr/
 * memory functions returns the error code (DART_ERR_INVAL), logs exactly one
 * line naming the function, and changes nothing: destination buffers, target
 * memory, gptr outputs, and live allocations. A freed segment's id is
 * issued again by the next allocation (DART_SEGID_REUSE=latest, DART-MPI's
 * order), so that a stale gptr then reaches the new allocation, within its
 * bounds; with DART_SEGID_REUSE=delayed it is refused, and must not reach a
 * new allocation that reuses the freed memory.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dart_test_capture.h"

#include <dart/dart_ext.h>
#include <dart/dart_io.h>
#include <sys/stat.h>
#include <unistd.h>

static int me, nunits;

/* ---- state that must not change ---- */

#define DBUF 1024
static uint8_t src[DBUF], dbuf[DBUF];

static uint8_t part_byte(int unit, size_t i, int gen)
{
  return (uint8_t)(unit * 31 + (int)i * 7 + gen * 101 + 1);
}

static size_t part_size(int u) { return 256 + 64 * (size_t)u; }

static void fill_part(uint8_t *p, size_t len, int gen)
{
  for (size_t i = 0; i < len; i++) p[i] = part_byte(me, i, gen);
}

static void check_part(int line, const uint8_t *p, size_t len, int gen,
                       const char *what)
{
  for (size_t i = 0; i < len; i++) {
    if (p[i] != part_byte(me, i, gen)) {
      FAIL_AT(line, "%s: byte %zu of own part changed: 0x%02x, want 0x%02x",
            what, i, p[i], part_byte(me, i, gen));
      return;
    }
  }
}

static void check_dbuf(int line)
{
  for (size_t i = 0; i < DBUF; i++) {
    if (dbuf[i] != 0xEE) {
      FAIL_AT(line, "get destination changed: byte %zu is 0x%02x", i, dbuf[i]);
      memset(dbuf, 0xEE, DBUF);
      return;
    }
  }
}

static dart_gptr_t sentinel_gptr(void)
{
  dart_gptr_t g;
  memset(&g, 0, sizeof g);
  g.unitid = 77;
  g.flags = 3;
  g.segid = 55;
  g.teamid = 66;
  g.addr_or_offs.offset = 0xDEADBEEF;
  return g;
}

#define CHECK_SAME_GPTR(a, b) CHECK(memcmp(&(a), &(b), sizeof(a)) == 0)

static dart_gptr_t unit_gptr(dart_gptr_t g, int unit, uint64_t off)
{
  dart_gptr_setunit(&g, DART_TEAM_UNIT_ID(unit));
  g.addr_or_offs.offset = off;
  return g;
}

static void user_max(const void *in, void *inout, size_t len, void *data)
{
  (void)data;
  for (size_t i = 0; i < len; i++)
    if (((const uint64_t *)in)[i] > ((uint64_t *)inout)[i])
      ((uint64_t *)inout)[i] = ((const uint64_t *)in)[i];
}

/* The four atomics with a type and count (CAS and fetch-and-op: one
 * element); the result buffers must stay untouched. */
static void bad_atomics(int line, dart_gptr_t gx, dart_datatype_t type,
                        size_t nelem)
{
  uint64_t v[4] = {5, 5, 5, 5}, cmp = 0, res = 0xABCD;
  INVAL("dart_accumulate", dart_accumulate(gx, v, nelem, type, DART_OP_SUM));
  INVAL("dart_accumulate_blocking_local",
        dart_accumulate_blocking_local(gx, v, nelem, type, DART_OP_SUM));
  if (nelem == 1) {
    INVAL("dart_fetch_and_op",
          dart_fetch_and_op(gx, v, &res, type, DART_OP_SUM));
    INVAL("dart_compare_and_swap",
          dart_compare_and_swap(gx, v, &cmp, &res, type));
  }
  if (res != 0xABCD) FAIL_AT(line, "an atomic wrote its result");
}

/* What a handle holds before a failed call, which must leave
 * DART_HANDLE_NULL there (DASH waits on the handles of failed gets too):
 * never dereferenced. */
#define NOT_A_HANDLE ((dart_handle_t)(uintptr_t)0x5eed)

/* Every transfer and gptr function on a gptr that is bad as such. */
static void bad_gptr_all(int line, dart_gptr_t gx)
{
  dart_handle_t h = NOT_A_HANDLE;
  void *addr = (void *)&addr;
  const dart_gptr_t keep = gx;
  INVAL("dart_put", dart_put(gx, src, 8, DART_TYPE_BYTE, DART_TYPE_BYTE));
  INVAL("dart_get", dart_get(dbuf, gx, 8, DART_TYPE_BYTE, DART_TYPE_BYTE));
  INVAL("dart_put_blocking",
        dart_put_blocking(gx, src, 8, DART_TYPE_BYTE, DART_TYPE_BYTE));
  INVAL("dart_get_blocking",
        dart_get_blocking(dbuf, gx, 8, DART_TYPE_BYTE, DART_TYPE_BYTE));
  INVAL("dart_put_handle",
        dart_put_handle(gx, src, 8, DART_TYPE_BYTE, DART_TYPE_BYTE, &h));
  CHECK(h == DART_HANDLE_NULL);
  h = NOT_A_HANDLE;
  INVAL("dart_get_handle",
        dart_get_handle(dbuf, gx, 8, DART_TYPE_BYTE, DART_TYPE_BYTE, &h));
  CHECK(h == DART_HANDLE_NULL);
  INVAL("dart_flush", dart_flush(gx));
  INVAL("dart_flush_all", dart_flush_all(gx));
  INVAL("dart_flush_local", dart_flush_local(gx));
  INVAL("dart_flush_local_all", dart_flush_local_all(gx));
  INVAL("dart_gptr_getaddr", dart_gptr_getaddr(gx, &addr));
  CHECK(addr == (void *)&addr || addr == NULL);
  bad_atomics(line, gx, DART_TYPE_ULONG, 1);
  check_dbuf(line);
  CHECK_SAME_GPTR(gx, keep);
}

/* Just the transfers (for gptrs whose allocation is fine but the range is
 * not). */
static void bad_range(int line, dart_gptr_t gx, size_t nelem)
{
  dart_handle_t h = NOT_A_HANDLE;
  INVAL("dart_put", dart_put(gx, src, nelem, DART_TYPE_BYTE, DART_TYPE_BYTE));
  INVAL("dart_get", dart_get(dbuf, gx, nelem, DART_TYPE_BYTE, DART_TYPE_BYTE));
  INVAL("dart_put_blocking",
        dart_put_blocking(gx, src, nelem, DART_TYPE_BYTE, DART_TYPE_BYTE));
  INVAL("dart_get_blocking",
        dart_get_blocking(dbuf, gx, nelem, DART_TYPE_BYTE, DART_TYPE_BYTE));
  INVAL("dart_put_handle", dart_put_handle(gx, src, nelem, DART_TYPE_BYTE,
                                           DART_TYPE_BYTE, &h));
  CHECK(h == DART_HANDLE_NULL);
  h = NOT_A_HANDLE;
  INVAL("dart_get_handle", dart_get_handle(dbuf, gx, nelem, DART_TYPE_BYTE,
                                           DART_TYPE_BYTE, &h));
  CHECK(h == DART_HANDLE_NULL);
  check_dbuf(line);
}

/* A put and a get with the given types and count. */
static void bad_types(int line, dart_gptr_t gx, size_t nelem,
                      dart_datatype_t st, dart_datatype_t dt)
{
  dart_handle_t h = DART_HANDLE_NULL;
  INVAL("dart_put", dart_put(gx, src, nelem, st, dt));
  INVAL("dart_get_blocking", dart_get_blocking(dbuf, gx, nelem, st, dt));
  INVAL("dart_put_handle", dart_put_handle(gx, src, nelem, st, dt, &h));
  CHECK(h == DART_HANDLE_NULL);
  check_dbuf(line);
}

int main(int argc, char **argv)
{
  dart_test_init(&argc, &argv);
  me = dart_test_unit;
  nunits = dart_test_units;
  const int n = nunits, next = (me + 1) % n;
  capture_init();
  for (int i = 0; i < DBUF; i++) src[i] = (uint8_t)(i * 3 + 1);
  memset(dbuf, 0xEE, DBUF);

  /* the allocation that bad calls aim at: parts of different sizes */
  dart_gptr_t g = DART_GPTR_NULL;
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, part_size(me),
                                      DART_TYPE_BYTE, &g));
  uint8_t *mine = NULL;
  CHECK_OK(dart_gptr_getaddr(unit_gptr(g, me, 0), (void **)&mine));
  if (mine == NULL) {
    FAIL_AT(__LINE__, "no own part");
    return dart_test_finish();
  }
  fill_part(mine, part_size(me), 0);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));

  /* 1. unknown team id, and the null gptr */
  {
    dart_gptr_t gx = unit_gptr(g, next, 0);
    gx.teamid = 12345;
    bad_gptr_all(__LINE__, gx);
    bad_gptr_all(__LINE__, DART_GPTR_NULL);
    dart_gptr_t out = sentinel_gptr(), keep = out;
    INVAL("dart_team_memalloc_aligned",
          dart_team_memalloc_aligned(12345, 8, DART_TYPE_BYTE, &out));
    CHECK_SAME_GPTR(out, keep);
    INVAL("dart_team_memregister",
          dart_team_memregister(12345, 8, DART_TYPE_BYTE, src, &out));
    CHECK_SAME_GPTR(out, keep);
    INVAL("dart_team_memregister_aligned",
          dart_team_memregister_aligned(12345, 8, DART_TYPE_BYTE, src, &out));
    CHECK_SAME_GPTR(out, keep);
  }

  /* 2. a freed team: its allocations went with it */
  {
    dart_team_t t2 = DART_TEAM_NULL;
    dart_gptr_t g2 = DART_GPTR_NULL;
    CHECK_OK(dart_team_clone(DART_TEAM_ALL, &t2));
    CHECK_OK(dart_team_memalloc_aligned(t2, 64, DART_TYPE_BYTE, &g2));
    const dart_team_t old = t2;
    CHECK_OK(dart_team_destroy(&t2));
    bad_gptr_all(__LINE__, unit_gptr(g2, next, 0));
    dart_gptr_t out = sentinel_gptr(), keep = out;
    INVAL("dart_team_memalloc_aligned",
          dart_team_memalloc_aligned(old, 8, DART_TYPE_BYTE, &out));
    CHECK_SAME_GPTR(out, keep);
    INVAL("dart_team_memfree", dart_team_memfree(g2));
  }

  /* 3. unknown segment ids */
  {
    dart_gptr_t gx = unit_gptr(g, next, 0);
    gx.segid = 999;
    bad_gptr_all(__LINE__, gx);
    gx.segid = -999;
    bad_gptr_all(__LINE__, gx);
  }

  /* 4. a freed segment; freeing it twice; a new allocation in its place */
  {
    dart_gptr_t gf = DART_GPTR_NULL, gnew = DART_GPTR_NULL;
    CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, part_size(me),
                                        DART_TYPE_BYTE, &gf));
    CHECK_OK(dart_team_memfree(gf));
    bad_gptr_all(__LINE__, unit_gptr(gf, next, 0));
    bad_gptr_all(__LINE__, unit_gptr(gf, me, 0));
    INVAL("dart_team_memfree", dart_team_memfree(gf));
    /* likely reuses the memory; with delayed reuse the stale gptr must
     * not reach it */
    const char *reuse = getenv("DART_SEGID_REUSE");
    const bool delayed = reuse && strcmp(reuse, "delayed") == 0;
    CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, part_size(me),
                                        DART_TYPE_BYTE, &gnew));
    CHECK(delayed ? gnew.segid != gf.segid : gnew.segid == gf.segid);
    uint8_t *pnew = NULL;
    CHECK_OK(dart_gptr_getaddr(unit_gptr(gnew, me, 0), (void **)&pnew));
    CHECK(pnew != NULL);
    if (pnew) fill_part(pnew, part_size(me), 1);
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    if (delayed) {
      bad_gptr_all(__LINE__, unit_gptr(gf, next, 0));
      bad_gptr_all(__LINE__, unit_gptr(gf, me, 0));
      dart_gptr_t gx = unit_gptr(gf, me, 0);
      const dart_gptr_t keep = gx;
      INVAL("dart_gptr_setaddr", dart_gptr_setaddr(&gx, pnew ? pnew : mine));
      CHECK_SAME_GPTR(gx, keep);
      INVAL("dart_team_memfree", dart_team_memfree(gf));
    } else {
      /* the old gptr is the new allocation's now, within its bounds */
      uint8_t r = 0;
      CHECK_OK(dart_get_blocking(&r, unit_gptr(gf, me, 5), 1, DART_TYPE_BYTE,
                                 DART_TYPE_BYTE));
      CHECK_EQ(r, part_byte(me, 5, 1));
      bad_range(__LINE__, unit_gptr(gf, next, part_size(next)), 1);
    }
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    if (pnew) check_part(__LINE__, pnew, part_size(me), 1, "stale gptr");
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    /* the new allocation is alive and works */
    {
      uint8_t v = 0x42, r = 0;
      CHECK_OK(dart_put_blocking(unit_gptr(gnew, next, 3), &v, 1,
                                 DART_TYPE_BYTE, DART_TYPE_BYTE));
      CHECK_OK(dart_get_blocking(&r, unit_gptr(gnew, next, 3), 1,
                                 DART_TYPE_BYTE, DART_TYPE_BYTE));
      CHECK_EQ(r, 0x42);
    }
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    CHECK_OK(dart_team_memfree(gnew));

    /* a freed registration */
    uint64_t ubuf[8] = {0};
    dart_gptr_t gr = DART_GPTR_NULL;
    CHECK_OK(dart_team_memregister_aligned(DART_TEAM_ALL, 8, DART_TYPE_ULONG,
                                           ubuf, &gr));
    CHECK_OK(dart_team_memderegister(gr));
    bad_gptr_all(__LINE__, unit_gptr(gr, next, 0));
    INVAL("dart_team_memderegister", dart_team_memderegister(gr));
    for (int i = 0; i < 8; i++) CHECK_EQ(ubuf[i], 0);
  }

  /* 5. unit ids outside the team */
  {
    bad_gptr_all(__LINE__, unit_gptr(g, -1, 0));
    bad_gptr_all(__LINE__, unit_gptr(g, n, 0));
    bad_gptr_all(__LINE__, unit_gptr(g, 1 << 22, 0));
    /* a sub-team of the even units: ids up to its size, not the world's */
    dart_group_t grp;
    dart_team_t team = DART_TEAM_NULL;
    CHECK_OK(dart_group_create(&grp));
    for (int u = 0; u < n; u += 2)
      CHECK_OK(dart_group_addmember(grp, DART_GLOBAL_UNIT_ID(u)));
    CHECK_OK(dart_team_create(DART_TEAM_ALL, grp, &team));
    CHECK_OK(dart_group_destroy(&grp));
    if (team != DART_TEAM_NULL) {
      size_t tn = 0;
      dart_gptr_t gs = DART_GPTR_NULL;
      CHECK_OK(dart_team_size(team, &tn));
      CHECK_OK(dart_team_memalloc_aligned(team, 64, DART_TYPE_BYTE, &gs));
      bad_gptr_all(__LINE__, unit_gptr(gs, (int)tn, 0));
      bad_gptr_all(__LINE__, unit_gptr(gs, -1, 0));
      CHECK_OK(dart_team_memfree(gs));
      CHECK_OK(dart_team_destroy(&team));
    }
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
  }

  /* 6. ranges beyond the target unit's part */
  {
    const size_t pn = part_size(next);
    bad_range(__LINE__, unit_gptr(g, next, pn - 4), 8);
    bad_range(__LINE__, unit_gptr(g, next, pn), 1);
    bad_range(__LINE__, unit_gptr(g, next, 0), pn + 1);
    /* inside my (larger) part but beyond unit 0's */
    bad_range(__LINE__, unit_gptr(g, 0, part_size(0) - 8), 16);
    /* offset + bytes wraps around */
    bad_range(__LINE__, unit_gptr(g, next, UINT64_MAX - 2), 8);
    bad_range(__LINE__, unit_gptr(g, next, UINT64_MAX), 1);
    bad_range(__LINE__, unit_gptr(g, next, 8), SIZE_MAX - 4);
    /* a strided destination whose extent ends beyond the part */
    dart_datatype_t sp = DART_TYPE_UNDEFINED;
    CHECK_OK(dart_type_create_strided(DART_TYPE_BYTE, 100, 1, &sp));
    INVAL("dart_put_blocking",
          dart_put_blocking(unit_gptr(g, 0, 0), src, 4, DART_TYPE_BYTE, sp));
    INVAL("dart_get_blocking",
          dart_get_blocking(dbuf, unit_gptr(g, 0, 0), 4, sp, DART_TYPE_BYTE));
    check_dbuf(__LINE__);
    CHECK_OK(dart_type_destroy(&sp));
    /* wrapped offsets into the local pool */
    dart_gptr_t lp = DART_GPTR_NULL;
    CHECK_OK(dart_memalloc(64, DART_TYPE_BYTE, &lp));
    dart_gptr_t lx = lp;
    lx.addr_or_offs.offset = UINT64_MAX - 2;
    bad_range(__LINE__, lx, 8);
    CHECK_OK(dart_memfree(lp));
  }

  /* 7. NULL buffers with nonzero counts, NULL outputs */
  {
    dart_gptr_t gx = unit_gptr(g, next, 0);
    dart_handle_t h = DART_HANDLE_NULL;
    INVAL("dart_put", dart_put(gx, NULL, 8, DART_TYPE_BYTE, DART_TYPE_BYTE));
    INVAL("dart_get", dart_get(NULL, gx, 8, DART_TYPE_BYTE, DART_TYPE_BYTE));
    INVAL("dart_put_blocking",
          dart_put_blocking(gx, NULL, 8, DART_TYPE_BYTE, DART_TYPE_BYTE));
    INVAL("dart_get_blocking",
          dart_get_blocking(NULL, gx, 8, DART_TYPE_BYTE, DART_TYPE_BYTE));
    INVAL("dart_put_handle", dart_put_handle(gx, NULL, 8, DART_TYPE_BYTE,
                                             DART_TYPE_BYTE, &h));
    CHECK(h == DART_HANDLE_NULL);
    INVAL("dart_get_handle", dart_get_handle(NULL, gx, 8, DART_TYPE_BYTE,
                                             DART_TYPE_BYTE, &h));
    CHECK(h == DART_HANDLE_NULL);
    INVAL("dart_put_handle", dart_put_handle(gx, src, 8, DART_TYPE_BYTE,
                                             DART_TYPE_BYTE, NULL));
    INVAL("dart_get_handle", dart_get_handle(dbuf, gx, 8, DART_TYPE_BYTE,
                                             DART_TYPE_BYTE, NULL));
    check_dbuf(__LINE__);
    INVAL("dart_waitall", dart_waitall(NULL, 2));
    int32_t fin = 7;
    INVAL("dart_testall", dart_testall(NULL, 2, &fin));
    CHECK_EQ(fin, 7);
    INVAL("dart_gptr_getaddr", dart_gptr_getaddr(gx, NULL));
    INVAL("dart_gptr_setaddr", dart_gptr_setaddr(NULL, mine));
    INVAL("dart_memalloc", dart_memalloc(8, DART_TYPE_BYTE, NULL));
    dart_gptr_t out = sentinel_gptr(), keep = out;
    INVAL("dart_team_memregister",
          dart_team_memregister(DART_TEAM_ALL, 8, DART_TYPE_BYTE, NULL, &out));
    CHECK_SAME_GPTR(out, keep);
  }

  /* 8. counts whose byte size overflows size_t */
  {
    dart_gptr_t gx = unit_gptr(g, next, 0);
    bad_types(__LINE__, gx, SIZE_MAX / 4 + 2, DART_TYPE_INT, DART_TYPE_INT);
    bad_types(__LINE__, gx, SIZE_MAX / 8 + 1, DART_TYPE_LONG, DART_TYPE_LONG);
    dart_datatype_t sp = DART_TYPE_UNDEFINED;
    CHECK_OK(dart_type_create_strided(DART_TYPE_INT, 1000, 1, &sp));
    bad_types(__LINE__, gx, SIZE_MAX / 1000 + 7, sp, DART_TYPE_INT);
    bad_types(__LINE__, gx, SIZE_MAX / 1000 + 7, DART_TYPE_INT, sp);
    CHECK_OK(dart_type_destroy(&sp));
    dart_gptr_t out = sentinel_gptr(), keep = out;
    INVAL("dart_memalloc",
          dart_memalloc(SIZE_MAX / 8 + 1, DART_TYPE_LONG, &out));
    CHECK_SAME_GPTR(out, keep);
    INVAL("dart_team_memalloc_aligned",
          dart_team_memalloc_aligned(DART_TEAM_ALL, SIZE_MAX / 4 + 2,
                                     DART_TYPE_INT, &out));
    CHECK_SAME_GPTR(out, keep);
  }

  /* 9.-11. mismatched base types, counts not a multiple of the type's
   * elements, undefined and destroyed types */
  {
    dart_gptr_t gx = unit_gptr(g, next, 0);
    dart_datatype_t s43 = DART_TYPE_UNDEFINED, sl = DART_TYPE_UNDEFINED,
                    ix = DART_TYPE_UNDEFINED, dead = DART_TYPE_UNDEFINED;
    const size_t bl[2] = {2, 4}, off[2] = {0, 5};
    CHECK_OK(dart_type_create_strided(DART_TYPE_INT, 4, 3, &s43));
    CHECK_OK(dart_type_create_strided(DART_TYPE_LONG, 4, 3, &sl));
    CHECK_OK(dart_type_create_indexed(DART_TYPE_INT, 2, bl, off, &ix));
    bad_types(__LINE__, gx, 4, DART_TYPE_INT, DART_TYPE_LONG);
    bad_types(__LINE__, gx, 4, DART_TYPE_FLOAT, DART_TYPE_INT);
    bad_types(__LINE__, gx, 6, s43, DART_TYPE_LONG);
    bad_types(__LINE__, gx, 6, sl, s43);
    bad_types(__LINE__, gx, 6, ix, DART_TYPE_LONG);
    bad_types(__LINE__, gx, 7, s43, DART_TYPE_INT);
    bad_types(__LINE__, gx, 7, DART_TYPE_INT, s43);
    bad_types(__LINE__, gx, 5, ix, DART_TYPE_INT);
    bad_types(__LINE__, gx, 9, DART_TYPE_INT, ix);
    bad_types(__LINE__, gx, 8, DART_TYPE_UNDEFINED, DART_TYPE_BYTE);
    bad_types(__LINE__, gx, 8, DART_TYPE_BYTE, DART_TYPE_UNDEFINED);
    bad_types(__LINE__, gx, 8, DART_TYPE_LAST, DART_TYPE_LAST);
    CHECK_OK(dart_type_create_strided(DART_TYPE_INT, 2, 1, &dead));
    const dart_datatype_t stale = dead;
    CHECK_OK(dart_type_destroy(&dead));
    CHECK(dead == DART_TYPE_UNDEFINED);
    bad_types(__LINE__, gx, 4, stale, DART_TYPE_INT);
    bad_types(__LINE__, gx, 4, DART_TYPE_INT, stale);
    dart_gptr_t out = sentinel_gptr(), keep = out;
    INVAL("dart_memalloc", dart_memalloc(8, DART_TYPE_UNDEFINED, &out));
    CHECK_SAME_GPTR(out, keep);
    INVAL("dart_memalloc", dart_memalloc(8, stale, &out));
    CHECK_SAME_GPTR(out, keep);
    CHECK_OK(dart_type_destroy(&s43));
    CHECK_OK(dart_type_destroy(&sl));
    CHECK_OK(dart_type_destroy(&ix));
  }

  /* 12.-13. collective frees: offset != 0 is not a part's start */
  {
    dart_gptr_t g3 = DART_GPTR_NULL;
    CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 64, DART_TYPE_BYTE,
                                        &g3));
    INVAL("dart_team_memfree", dart_team_memfree(unit_gptr(g3, 0, 8)));
    INVAL("dart_team_memfree", dart_team_memfree(unit_gptr(g3, n, 0)));
    /* still alive */
    uint8_t v = (uint8_t)(0x60 + me), r = 0;
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    CHECK_OK(dart_put_blocking(unit_gptr(g3, next, 1), &v, 1, DART_TYPE_BYTE,
                               DART_TYPE_BYTE));
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    CHECK_OK(dart_get_blocking(&r, unit_gptr(g3, me, 1), 1, DART_TYPE_BYTE,
                               DART_TYPE_BYTE));
    CHECK_EQ(r, (uint8_t)(0x60 + (me + n - 1) % n));
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    CHECK_OK(dart_team_memfree(g3));
    INVAL("dart_team_memfree", dart_team_memfree(g3));
  }

  /* 14. dart_memfree: not a start, another unit's, twice */
  {
    dart_gptr_t lp = DART_GPTR_NULL;
    CHECK_OK(dart_memalloc(64, DART_TYPE_BYTE, &lp));
    uint8_t *lpa = NULL;
    CHECK_OK(dart_gptr_getaddr(lp, (void **)&lpa));
    CHECK(lpa != NULL);
    if (lpa) memset(lpa, 0x3C, 64);
    dart_gptr_t *all = malloc((size_t)n * sizeof *all);
    CHECK_OK(dart_allgather(&lp, all, sizeof lp, DART_TYPE_BYTE,
                            DART_TEAM_ALL));
    dart_gptr_t lx = lp;
    dart_gptr_incaddr(&lx, 8);
    INVAL("dart_memfree", dart_memfree(lx));
    if (n > 1) INVAL("dart_memfree", dart_memfree(all[next]));
    /* mine and the others' blocks are alive and unchanged */
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    uint8_t r[64];
    CHECK_OK(dart_get_blocking(r, all[next], 64, DART_TYPE_BYTE,
                               DART_TYPE_BYTE));
    for (int i = 0; i < 64; i++) CHECK_EQ(r[i], 0x3C);
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    CHECK_OK(dart_memfree(lp));
    INVAL("dart_memfree", dart_memfree(lp));
    free(all);
  }

  /* 15. waiting on a freed handle */
  {
    int mpi_unit = -1;
    for (int t = 0; t < n && mpi_unit < 0; t++) {
      dart_path_t path = DART_PATH_COUNT;
      CHECK_OK(dart_gptr_path(unit_gptr(g, t, 0), &path));
      if (path == DART_PATH_MPI || path == DART_PATH_UCX) mpi_unit = t;
    }
    if (mpi_unit >= 0) {
      dart_handle_t h = DART_HANDLE_NULL;
      /* rewrite the target's first 8 bytes with what they hold */
      uint8_t same[8];
      for (int i = 0; i < 8; i++) same[i] = part_byte(mpi_unit, (size_t)i, 0);
      CHECK_OK(dart_put_handle(unit_gptr(g, mpi_unit, 0), same, 8,
                               DART_TYPE_BYTE, DART_TYPE_BYTE, &h));
      if (h != DART_HANDLE_NULL) {
        dart_handle_t copy = h, copy2 = h;
        int32_t fin = 7;
        CHECK_OK(dart_handle_free(&h));
        CHECK(h == DART_HANDLE_NULL);
        INVAL("dart_wait", dart_wait(&copy));
        INVAL("dart_test", dart_test(&copy2, &fin));
        CHECK_EQ(fin, 7);
        copy = copy2;
        INVAL("dart_wait_local", dart_wait_local(&copy));
        copy = copy2;
        INVAL("dart_handle_free", dart_handle_free(&copy));
        dart_handle_t arr[3] = {DART_HANDLE_NULL, copy2, DART_HANDLE_NULL};
        INVAL("dart_waitall", dart_waitall(arr, 3));
      }
      CHECK_OK(dart_flush(unit_gptr(g, mpi_unit, 0)));
    }
  }

  /* 16. getaddr of a freed segment (also in 4.), of a foreign team unit */
  {
    dart_gptr_t gf = DART_GPTR_NULL;
    void *addr = (void *)&addr;
    CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 64, DART_TYPE_BYTE,
                                        &gf));
    CHECK_OK(dart_team_memfree(gf));
    INVAL("dart_gptr_getaddr", dart_gptr_getaddr(unit_gptr(gf, me, 0), &addr));
    CHECK(addr == (void *)&addr || addr == NULL);
    addr = (void *)&addr;
    INVAL("dart_gptr_getaddr", dart_gptr_getaddr(unit_gptr(g, n, 0), &addr));
    CHECK(addr == (void *)&addr || addr == NULL);
  }

  /* 17. setaddr outside the own part; flags above 255 */
  {
    dart_gptr_t gx = g;
    const dart_gptr_t keep = gx;
    int on_stack = 0;
    INVAL("dart_gptr_setaddr", dart_gptr_setaddr(&gx, &on_stack));
    CHECK_SAME_GPTR(gx, keep);
    INVAL("dart_gptr_setaddr", dart_gptr_setaddr(&gx, mine - 1));
    CHECK_SAME_GPTR(gx, keep);
    INVAL("dart_gptr_setaddr",
          dart_gptr_setaddr(&gx, mine + part_size(me) + 1));
    CHECK_SAME_GPTR(gx, keep);
    INVAL("dart_gptr_setaddr", dart_gptr_setaddr(&gx, NULL));
    CHECK_SAME_GPTR(gx, keep);
    INVAL("dart_gptr_setflags", dart_gptr_setflags(&gx, 256));
    CHECK_SAME_GPTR(gx, keep);
    /* still fine inside */
    CHECK_OK(dart_gptr_setaddr(&gx, mine + part_size(me) - 1));
    CHECK_EQ(gx.unitid, me);
    CHECK_EQ(gx.addr_or_offs.offset, part_size(me) - 1);
  }

  /* 18. atomics: types, operations, alignment, bounds, NULL buffers */
  {
    dart_gptr_t ga = unit_gptr(g, next, 8);
    dart_datatype_t strided = DART_TYPE_UNDEFINED;
    CHECK_OK(dart_type_create_strided(DART_TYPE_ULONG, 2, 1, &strided));
    bad_atomics(__LINE__, ga, DART_TYPE_UNDEFINED, 1);
    bad_atomics(__LINE__, ga, DART_TYPE_LAST, 1);
    bad_atomics(__LINE__, ga, (dart_datatype_t)-3, 1);
    bad_atomics(__LINE__, ga, strided, 1);
    /* long double: 16-byte alignment; no compare-and-swap */
    bad_atomics(__LINE__, ga, DART_TYPE_LONG_DOUBLE, 1);
    {
      long double lv = 1.0L, lcmp = 0.0L, lres = -1.0L;
      INVAL("dart_compare_and_swap",
            dart_compare_and_swap(unit_gptr(g, next, 16), &lv, &lcmp, &lres,
                                  DART_TYPE_LONG_DOUBLE));
      CHECK(lres == -1.0L);
    }
    CHECK_OK(dart_type_destroy(&strided));
    /* misaligned for 8, 4 and 2 bytes */
    bad_atomics(__LINE__, unit_gptr(g, next, 9), DART_TYPE_ULONG, 1);
    bad_atomics(__LINE__, unit_gptr(g, next, 4), DART_TYPE_LONGLONG, 1);
    bad_atomics(__LINE__, unit_gptr(g, me, 2), DART_TYPE_INT, 1);
    bad_atomics(__LINE__, unit_gptr(g, next, 1), DART_TYPE_SHORT, 1);
    /* beyond the part: the last element sticks out, or starts at the end */
    bad_atomics(__LINE__, unit_gptr(g, next, part_size(next) - 4),
                DART_TYPE_ULONG, 1);
    bad_atomics(__LINE__, unit_gptr(g, next, part_size(next)), DART_TYPE_INT,
                1);
    bad_atomics(__LINE__, unit_gptr(g, me, part_size(me) - 8),
                DART_TYPE_ULONG, 2);
    bad_atomics(__LINE__, ga, DART_TYPE_ULONG, SIZE_MAX / 4);
    /* operations that do not apply */
    uint64_t v = 1, res = 0xABCD;
    float fv = 1.0f, fres = -1.0f;
    dart_operation_t user = DART_OP_UNDEFINED;
    CHECK_OK(dart_op_create(user_max, NULL, true, DART_TYPE_ULONG, false,
                            &user));
    const dart_operation_t bad_ops[] = {DART_OP_UNDEFINED, DART_OP_MINMAX,
                                        DART_OP_LAST, 777, user};
    for (size_t i = 0; i < sizeof bad_ops / sizeof *bad_ops; i++) {
      INVAL("dart_accumulate",
            dart_accumulate(ga, &v, 1, DART_TYPE_ULONG, bad_ops[i]));
      INVAL("dart_fetch_and_op",
            dart_fetch_and_op(ga, &v, &res, DART_TYPE_ULONG, bad_ops[i]));
    }
    CHECK_OK(dart_op_destroy(&user));
    const dart_operation_t int_only[] = {DART_OP_BAND, DART_OP_BOR,
                                         DART_OP_BXOR, DART_OP_LAND,
                                         DART_OP_LOR, DART_OP_LXOR};
    for (size_t i = 0; i < sizeof int_only / sizeof *int_only; i++) {
      INVAL("dart_accumulate_blocking_local",
            dart_accumulate_blocking_local(ga, &fv, 1, DART_TYPE_FLOAT,
                                           int_only[i]));
      INVAL("dart_fetch_and_op",
            dart_fetch_and_op(ga, &fv, &fres, DART_TYPE_FLOAT, int_only[i]));
    }
    /* compare-and-swap on floating point */
    double dv = 1.0, dcmp = 0.0, dres = -1.0;
    INVAL("dart_compare_and_swap",
          dart_compare_and_swap(ga, &fv, &fv, &fres, DART_TYPE_FLOAT));
    INVAL("dart_compare_and_swap",
          dart_compare_and_swap(ga, &dv, &dcmp, &dres, DART_TYPE_DOUBLE));
    /* NULL buffers */
    INVAL("dart_accumulate",
          dart_accumulate(ga, NULL, 2, DART_TYPE_ULONG, DART_OP_SUM));
    INVAL("dart_fetch_and_op",
          dart_fetch_and_op(ga, NULL, &res, DART_TYPE_ULONG, DART_OP_SUM));
    INVAL("dart_fetch_and_op",
          dart_fetch_and_op(ga, &v, NULL, DART_TYPE_ULONG, DART_OP_NO_OP));
    INVAL("dart_compare_and_swap",
          dart_compare_and_swap(ga, &v, NULL, &res, DART_TYPE_ULONG));
    INVAL("dart_compare_and_swap",
          dart_compare_and_swap(ga, NULL, &v, &res, DART_TYPE_ULONG));
    INVAL("dart_compare_and_swap",
          dart_compare_and_swap(ga, &v, &v, NULL, DART_TYPE_ULONG));
    CHECK(res == 0xABCD && fres == -1.0f && dres == -1.0);
  }

  /* 19. HDF5's MPI-IO for an unknown team; in a program without HDF5 */
  INVAL("dart__io__hdf5__prep_mpio", dart__io__hdf5__prep_mpio(7, 999));
  BAD(DART_ERR_OTHER, "dart__io__hdf5__prep_mpio",
      dart__io__hdf5__prep_mpio(7, DART_TEAM_ALL));

  /* nothing reached the allocation */
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  check_part(__LINE__, mine, part_size(me), 0, "after all bad calls");
  check_dbuf(__LINE__);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_OK(dart_team_memfree(g));
  if (me == 0) printf("%ld bad calls checked on unit 0\n", capture_bad_calls);
  capture_fini();
  return dart_test_finish();
}
