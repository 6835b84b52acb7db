/*
 * A transfer larger than 2 GiB (2 GiB + 4 KiB): dart_put_blocking and
 * dart_get_blocking between unit 0 and unit 1 (unit 0 and itself when alone),
 * with byte and 8-byte element types. Checked by sampling: one byte in every
 * 4 KiB, the first and last 64 KiB and 128 KiB around the 2 GiB mark fully,
 * and the guard pages around the target range. ~4.2 GiB of memory in all.
 */
#include "dart_test.h"


#define BIG (((size_t)2 << 30) + 4096)
#define GOFF ((size_t)4096) /* guard before and after the target range */
#define FULL ((size_t)64 * 1024)
#define MARK ((size_t)1 << 31)

/* Byte i of the pattern: byte i % 8 of dart_test_mix64(key * K + i / 8). */
static uint8_t pat(uint64_t key, size_t i)
{
  uint64_t v = dart_test_mix64(key * 0xD6E8FEB86659FD93ull + i / 8);
  return ((const uint8_t *)&v)[i % 8];
}

static void fill_pattern(uint8_t *buf, size_t len, uint64_t key)
{
  for (size_t w = 0; w < len / 8; w++) {
    uint64_t v = dart_test_mix64(key * 0xD6E8FEB86659FD93ull + w);
    memcpy(buf + 8 * w, &v, 8);
  }
  for (size_t i = len / 8 * 8; i < len; i++) buf[i] = pat(key, i);
}

/* The sampled positions: calls fn(buf, pos, arg) for each. */
typedef int (*sample_fn)(uint8_t *buf, size_t pos, uint64_t key);

static size_t for_samples(uint8_t *buf, size_t len, uint64_t key, sample_fn fn)
{
  size_t bad = 0;
  const size_t ranges[3][2] = {
      {0, FULL}, {len - FULL, len}, {MARK - FULL, MARK + FULL}};
  for (int r = 0; r < 3; r++) {
    for (size_t i = ranges[r][0]; i < ranges[r][1] && i < len; i++)
      bad += (size_t)!fn(buf, i, key);
  }
  for (size_t k = 0; k * 4096 < len; k++) {
    size_t i = k * 4096 + (k * 13) % 4096;
    if (i < len) bad += (size_t)!fn(buf, i, key);
  }
  return bad;
}

static size_t first_bad = (size_t)-1;

static int check_one(uint8_t *buf, size_t pos, uint64_t key)
{
  if (buf[pos] == pat(key, pos)) return 1;
  if (first_bad == (size_t)-1 || pos < first_bad) first_bad = pos;
  return 0;
}

/* Makes every sampled byte wrong, so that a transfer must rewrite it. */
static int spoil_one(uint8_t *buf, size_t pos, uint64_t key)
{
  buf[pos] = (uint8_t)~pat(key, pos);
  return 1;
}

static void check_samples(int line, uint8_t *buf, uint64_t key,
                          const char *what)
{
  first_bad = (size_t)-1;
  size_t bad = for_samples(buf, BIG, key, check_one);
  if (bad) {
    FAIL_AT(line, "%s: %zu sampled bytes wrong, the first at %zu (0x%02x, want "
                "0x%02x)",
          what, bad, first_bad, buf[first_bad], pat(key, first_bad));
  }
}

static void check_guards(int line, const uint8_t *part, const char *what)
{
  for (size_t i = 0; i < GOFF; i++) {
    if (part[i] != 0xA5 || part[GOFF + BIG + i] != 0xA5) {
      FAIL_AT(line, "%s: guard byte %zu %s the target range changed", what, i,
            part[i] != 0xA5 ? "before" : "after");
      return;
    }
  }
}

int main(int argc, char **argv)
{
  dart_test_init(&argc, &argv);
  const int me = dart_test_unit, origin = 0,
            target = dart_test_units >= 2 ? 1 : 0;
  const uint64_t key1 = 0xB16, key2 = 0xB17;

  dart_gptr_t g = DART_GPTR_NULL;
  dart_ret_t ret = dart_team_memalloc_aligned(
      DART_TEAM_ALL, me == target ? BIG + 2 * GOFF : 64, DART_TYPE_BYTE, &g);
  CHECK_OK(ret);
  uint8_t *part = NULL, *buf = NULL;
  int ok = ret == DART_OK;
  if (ok) {
    dart_gptr_t gm = g;
    dart_gptr_setunit(&gm, DART_TEAM_UNIT_ID(me));
    CHECK_OK(dart_gptr_getaddr(gm, (void **)&part));
    CHECK(part != NULL);
    ok = part != NULL;
  }
  if (me == origin) {
    buf = malloc(BIG);
    CHECK(buf != NULL);
    ok = ok && buf != NULL;
  }
  /* everybody goes on only if everybody can */
  {
    int all_ok = 0;
    CHECK_OK(dart_allreduce(&ok, &all_ok, 1, DART_TYPE_INT, DART_OP_MIN,
                            DART_TEAM_ALL));
    ok = all_ok;
  }
  dart_gptr_t gt = g;
  dart_gptr_setunit(&gt, DART_TEAM_UNIT_ID(target));
  dart_gptr_incaddr(&gt, (int64_t)GOFF);

  if (ok) {
    if (me == target) {
      memset(part, 0xA5, GOFF);
      memset(part + GOFF + BIG, 0xA5, GOFF);
    }
    if (me == origin) fill_pattern(buf, BIG, key1);
    CHECK_OK(dart_barrier(DART_TEAM_ALL));

    /* 1. put of 2 GiB + 4 KiB bytes */
    if (me == origin)
      CHECK_OK(dart_put_blocking(gt, buf, BIG, DART_TYPE_BYTE,
                                 DART_TYPE_BYTE));
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    if (me == target) {
      check_samples(__LINE__, part + GOFF, key1, "dart_put_blocking BYTE");
      check_guards(__LINE__, part, "dart_put_blocking BYTE");
      for_samples(part + GOFF, BIG, key1, spoil_one);
    }
    CHECK_OK(dart_barrier(DART_TEAM_ALL));

    /* 2. put of the same as 8-byte elements */
    if (me == origin)
      CHECK_OK(dart_put_blocking(gt, buf, BIG / 8, DART_TYPE_LONG,
                                 DART_TYPE_LONG));
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    if (me == target) {
      check_samples(__LINE__, part + GOFF, key1, "dart_put_blocking LONG");
      check_guards(__LINE__, part, "dart_put_blocking LONG");
      /* new contents for the gets */
      fill_pattern(part + GOFF, BIG, key2);
    }
    CHECK_OK(dart_barrier(DART_TEAM_ALL));

    /* 3. get of 2 GiB + 4 KiB bytes, 4. the same as 8-byte elements */
    if (me == origin) {
      CHECK_OK(dart_get_blocking(buf, gt, BIG, DART_TYPE_BYTE,
                                 DART_TYPE_BYTE));
      check_samples(__LINE__, buf, key2, "dart_get_blocking BYTE");
      for_samples(buf, BIG, key2, spoil_one);
      CHECK_OK(dart_get_blocking(buf, gt, BIG / 8, DART_TYPE_LONG,
                                 DART_TYPE_LONG));
      check_samples(__LINE__, buf, key2, "dart_get_blocking LONG");
    }
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    if (me == target) {
      check_samples(__LINE__, part + GOFF, key2, "source of the gets");
      check_guards(__LINE__, part, "after the gets");
    }
  }
  free(buf);
  if (g.segid != 0) CHECK_OK(dart_team_memfree(g));
  return dart_test_finish();
}
