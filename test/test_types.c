/*
 * Datatypes and operations: dart_type_create_strided / _indexed / _custom,
 * dart_type_destroy, dart_op_create / dart_op_destroy, their bad input, and
 * derived types in put/get round trips (own part and the next unit's part
 * of a collective allocation; custom records).
 */
#include "dart_test.h"

static int nunits;
static int me;

static void dummy_op(const void *invec, void *inoutvec, size_t len,
                     void *user_data)
{
  (void)user_data;
  const int *x = invec;
  int *y = inoutvec;
  for (size_t i = 0; i < len; i++) y[i] += x[i];
}

typedef struct {
  int key;
  int val;
} keyval;

/* keeps the record with the larger key */
static void maxkey_op(const void *invec, void *inoutvec, size_t len,
                      void *user_data)
{
  (void)user_data;
  const keyval *x = invec;
  keyval *y = inoutvec;
  for (size_t i = 0; i < len; i++) {
    if (x[i].key > y[i].key) y[i] = x[i];
  }
}

/* element j of a transfer through strided(3, 2): its position */
static size_t strided_pos(size_t j) { return (j / 2) * 3 + j % 2; }

/* element j through indexed({3, 1} at {0, 5}): 4 per instance, extent 6 */
static size_t indexed_pos(size_t j)
{
  static const size_t pos[4] = {0, 1, 2, 5};
  return (j / 4) * 6 + pos[j % 4];
}

static void test_create_destroy(void)
{
  dart_datatype_t st = DART_TYPE_UNDEFINED, st2 = DART_TYPE_UNDEFINED;
  dart_datatype_t it = DART_TYPE_UNDEFINED, ct = DART_TYPE_UNDEFINED;
  CHECK_OK(dart_type_create_strided(DART_TYPE_INT, 3, 2, &st));
  CHECK_OK(dart_type_create_strided(DART_TYPE_DOUBLE, 2, 2, &st2));
  const size_t len[3] = {2, 1, 3}, off[3] = {0, 4, 7};
  CHECK_OK(dart_type_create_indexed(DART_TYPE_INT, 3, len, off, &it));
  CHECK_OK(dart_type_create_custom(12, &ct));
  CHECK(st > DART_TYPE_LAST);
  CHECK(st2 > DART_TYPE_LAST);
  CHECK(it > DART_TYPE_LAST);
  CHECK(ct > DART_TYPE_LAST);
  CHECK(st != st2 && st != it && st != ct && st2 != it && st2 != ct &&
        it != ct);

  /* ---- bad input to the constructors ---- */
  dart_datatype_t bad = DART_TYPE_UNDEFINED;
  CHECK_RET(dart_type_create_strided(DART_TYPE_UNDEFINED, 2, 1, &bad),
            DART_ERR_INVAL);
  CHECK_RET(dart_type_create_strided(DART_TYPE_LAST, 2, 1, &bad),
            DART_ERR_INVAL);
  CHECK_RET(dart_type_create_strided(st, 2, 1, &bad), DART_ERR_INVAL);
  CHECK_RET(dart_type_create_strided(ct, 2, 1, &bad), DART_ERR_INVAL);
  CHECK_RET(dart_type_create_strided(DART_TYPE_INT, 2, 0, &bad),
            DART_ERR_INVAL);
  CHECK_RET(dart_type_create_strided(DART_TYPE_INT, 1, 2, &bad),
            DART_ERR_INVAL);
  CHECK_RET(dart_type_create_strided(DART_TYPE_INT, 2, 1, NULL),
            DART_ERR_INVAL);
  CHECK_RET(dart_type_create_indexed(DART_TYPE_UNDEFINED, 3, len, off, &bad),
            DART_ERR_INVAL);
  CHECK_RET(dart_type_create_indexed(it, 3, len, off, &bad), DART_ERR_INVAL);
  CHECK_RET(dart_type_create_indexed(DART_TYPE_INT, 3, NULL, off, &bad),
            DART_ERR_INVAL);
  CHECK_RET(dart_type_create_indexed(DART_TYPE_INT, 3, len, NULL, &bad),
            DART_ERR_INVAL);
  CHECK_RET(dart_type_create_indexed(DART_TYPE_INT, 3, len, off, NULL),
            DART_ERR_INVAL);
  CHECK_RET(dart_type_create_custom(0, &bad), DART_ERR_INVAL);
  CHECK_RET(dart_type_create_custom(8, NULL), DART_ERR_INVAL);

  /* ---- destroy ---- */
  dart_datatype_t basic = DART_TYPE_INT;
  CHECK_RET(dart_type_destroy(&basic), DART_ERR_INVAL);
  CHECK_EQ(basic, DART_TYPE_INT);
  basic = DART_TYPE_DOUBLE;
  CHECK_RET(dart_type_destroy(&basic), DART_ERR_INVAL);
  CHECK_EQ(basic, DART_TYPE_DOUBLE);
  dart_datatype_t undef = DART_TYPE_UNDEFINED;
  CHECK_RET(dart_type_destroy(&undef), DART_ERR_INVAL);
  CHECK_RET(dart_type_destroy(NULL), DART_ERR_INVAL);

  dart_datatype_t st_copy = st, it_copy = it, ct_copy = ct;
  CHECK_OK(dart_type_destroy(&st));
  CHECK_EQ(st, DART_TYPE_UNDEFINED);
  CHECK_OK(dart_type_destroy(&it));
  CHECK_EQ(it, DART_TYPE_UNDEFINED);
  CHECK_OK(dart_type_destroy(&ct));
  CHECK_EQ(ct, DART_TYPE_UNDEFINED);
  /* twice: through the cleared handle and through a copy of the old one */
  CHECK_RET(dart_type_destroy(&st), DART_ERR_INVAL);
  CHECK_RET(dart_type_destroy(&st_copy), DART_ERR_INVAL);
  CHECK_RET(dart_type_destroy(&it_copy), DART_ERR_INVAL);
  CHECK_RET(dart_type_destroy(&ct_copy), DART_ERR_INVAL);
  /* the remaining type is still alive */
  CHECK_OK(dart_type_destroy(&st2));
  CHECK_EQ(st2, DART_TYPE_UNDEFINED);
}

static void test_ops(void)
{
  dart_operation_t op = DART_OP_UNDEFINED;
  CHECK_RET(dart_op_create(NULL, NULL, true, DART_TYPE_INT, false, &op),
            DART_ERR_INVAL);
  CHECK_RET(dart_op_create(dummy_op, NULL, true, DART_TYPE_INT, false, NULL),
            DART_ERR_INVAL);
  CHECK_RET(dart_op_create(dummy_op, NULL, true, DART_TYPE_UNDEFINED, false,
                           &op),
            DART_ERR_INVAL);
  dart_operation_t sum = DART_OP_SUM;
  CHECK_RET(dart_op_destroy(&sum), DART_ERR_INVAL);
  CHECK_EQ(sum, DART_OP_SUM);
  dart_operation_t minmax = DART_OP_MINMAX;
  CHECK_RET(dart_op_destroy(&minmax), DART_ERR_INVAL);
  dart_operation_t undef = DART_OP_UNDEFINED;
  CHECK_RET(dart_op_destroy(&undef), DART_ERR_INVAL);
  CHECK_RET(dart_op_destroy(NULL), DART_ERR_INVAL);

  op = DART_OP_UNDEFINED;
  CHECK_OK(dart_op_create(dummy_op, NULL, true, DART_TYPE_INT, false, &op));
  CHECK(op > DART_OP_LAST);
  dart_operation_t op_copy = op;
  CHECK_OK(dart_op_destroy(&op));
  CHECK_EQ(op, DART_OP_UNDEFINED);
  CHECK_RET(dart_op_destroy(&op), DART_ERR_INVAL);
  CHECK_RET(dart_op_destroy(&op_copy), DART_ERR_INVAL);

  /* an operation on a temporary (custom) type, used, destroyed, then the
   * type (DASH's reductions: dtype_is_tmp is a hint, the type the caller's) */
  dart_datatype_t kv = DART_TYPE_UNDEFINED;
  CHECK_OK(dart_type_create_custom(sizeof(keyval), &kv));
  dart_datatype_t kv_copy = kv;
  dart_operation_t kvop = DART_OP_UNDEFINED;
  CHECK_OK(dart_op_create(maxkey_op, NULL, true, kv, true, &kvop));
  keyval mine[2] = {{me, me * 10}, {(me * 5 + 3) % nunits, me}};
  keyval res[2] = {{-1, -1}, {-1, -1}};
  CHECK_OK(dart_allreduce(mine, res, 2, kv, kvop, DART_TEAM_ALL));
  CHECK_EQ(res[0].key, nunits - 1);
  CHECK_EQ(res[0].val, (nunits - 1) * 10);
  /* keys (u*5+3) % n: the unit whose key is n-1 (if just one has it) */
  int want_unit = -1, nwith = 0;
  for (int u = 0; u < nunits; u++) {
    if ((u * 5 + 3) % nunits == nunits - 1) {
      want_unit = u;
      nwith++;
    }
  }
  if (nwith == 1) {
    CHECK_EQ(res[1].key, nunits - 1);
    CHECK_EQ(res[1].val, want_unit);
  }
  CHECK_OK(dart_op_destroy(&kvop));
  CHECK_EQ(kvop, DART_OP_UNDEFINED);
  /* the type outlived the operation, and goes once */
  CHECK_OK(dart_type_destroy(&kv));
  CHECK_EQ(kv, DART_TYPE_UNDEFINED);
  CHECK_RET(dart_type_destroy(&kv_copy), DART_ERR_INVAL);
}

static void test_roundtrip(void)
{
  enum { PART = 128 };
  dart_datatype_t st = DART_TYPE_UNDEFINED, it = DART_TYPE_UNDEFINED;
  CHECK_OK(dart_type_create_strided(DART_TYPE_INT, 3, 2, &st));
  const size_t ilen[2] = {3, 1}, ioff[2] = {0, 5};
  CHECK_OK(dart_type_create_indexed(DART_TYPE_INT, 2, ilen, ioff, &it));

  dart_gptr_t g = DART_GPTR_NULL;
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, PART, DART_TYPE_INT, &g));
  dart_gptr_t gown = g;
  CHECK_OK(dart_gptr_setunit(&gown, DART_TEAM_UNIT_ID(me)));
  void *vaddr = NULL;
  CHECK_OK(dart_gptr_getaddr(gown, &vaddr));
  CHECK(vaddr != NULL);
  if (!vaddr) {
    CHECK_OK(dart_team_memfree(g));
    return;
  }
  int *part = vaddr;
  for (int i = 0; i < PART; i++) part[i] = -1;
  CHECK_OK(dart_barrier(DART_TEAM_ALL));

  int src[24], dst[24];
  for (int i = 0; i < 24; i++) src[i] = me * 1000 + i;

  /* A [0,32): strided local -> contiguous remote (own part) */
  CHECK_OK(dart_put_blocking(gown, src, 16, st, DART_TYPE_INT));
  for (size_t j = 0; j < 32; j++) {
    int want = j < 16 ? src[strided_pos(j)] : -1;
    if (part[j] != want) {
      FAILF("put strided->contiguous: part[%zu] = %d, want %d", j, part[j],
            want);
      break;
    }
  }
  /* ... and back, contiguous remote -> indexed local */
  for (int i = 0; i < 24; i++) dst[i] = -2;
  CHECK_OK(dart_get_blocking(dst, gown, 16, DART_TYPE_INT, it));
  {
    int want[24];
    for (int i = 0; i < 24; i++) want[i] = -2;
    for (size_t j = 0; j < 16; j++) want[indexed_pos(j)] = src[strided_pos(j)];
    for (int i = 0; i < 24; i++) {
      if (dst[i] != want[i]) {
        FAILF("get contiguous->indexed: dst[%d] = %d, want %d", i, dst[i],
              want[i]);
        break;
      }
    }
  }

  /* C [32,64): strided local -> indexed remote (dart_put + dart_flush),
   * then indexed remote -> strided local (handle + wait) */
  {
    dart_gptr_t gc = gown;
    CHECK_OK(dart_gptr_incaddr(&gc, 32 * (int64_t)sizeof(int)));
    CHECK_OK(dart_put(gc, src, 16, st, it));
    CHECK_OK(dart_flush(gc));
    for (size_t i = 0; i < 32; i++) {
      int want = -1;
      for (size_t j = 0; j < 16; j++) {
        if (indexed_pos(j) == i) want = src[strided_pos(j)];
      }
      if (part[32 + i] != want) {
        FAILF("put strided->indexed: part[%zu] = %d, want %d", 32 + i,
              part[32 + i], want);
        break;
      }
    }
    for (int i = 0; i < 24; i++) dst[i] = -2;
    dart_handle_t h = DART_HANDLE_NULL;
    CHECK_OK(dart_get_handle(dst, gc, 16, it, st, &h));
    CHECK_OK(dart_wait(&h));
    CHECK(h == DART_HANDLE_NULL);
    for (int i = 0; i < 24; i++) {
      int want = (i % 3 < 2) ? src[i] : -2;
      if (dst[i] != want) {
        FAILF("get indexed->strided: dst[%d] = %d, want %d", i, dst[i], want);
        break;
      }
    }
  }

  /* D [64,96): contiguous local -> strided remote and back */
  {
    dart_gptr_t gd = gown;
    CHECK_OK(dart_gptr_incaddr(&gd, 64 * (int64_t)sizeof(int)));
    int c[8], back[8];
    for (int j = 0; j < 8; j++) {
      c[j] = me * 1000 + 500 + j;
      back[j] = -3;
    }
    CHECK_OK(dart_put_blocking(gd, c, 8, DART_TYPE_INT, st));
    for (size_t i = 0; i < 32; i++) {
      int want = -1;
      if (i < 12 && i % 3 < 2) want = c[(i / 3) * 2 + i % 3];
      if (part[64 + i] != want) {
        FAILF("put contiguous->strided: part[%zu] = %d, want %d", 64 + i,
              part[64 + i], want);
        break;
      }
    }
    CHECK_OK(dart_get_blocking(back, gd, 8, st, DART_TYPE_INT));
    for (int j = 0; j < 8; j++) CHECK_EQ(back[j], c[j]);
  }

  /* bad transfers: mismatched base types, counts not a multiple of the
   * elements per instance; the memory stays as it is */
  CHECK_RET(dart_put_blocking(gown, src, 16, st, DART_TYPE_DOUBLE),
            DART_ERR_INVAL);
  CHECK_RET(dart_put_blocking(gown, src, 3, st, DART_TYPE_INT),
            DART_ERR_INVAL);
  CHECK_RET(dart_get_blocking(dst, gown, 6, DART_TYPE_INT, it),
            DART_ERR_INVAL);
  for (size_t j = 0; j < 16; j++) {
    if (part[j] != src[strided_pos(j)]) {
      FAILF("part[%zu] changed by a failed put: %d", j, part[j]);
      break;
    }
  }

  /* B [96,128) of the next unit: strided -> contiguous, read back by the
   * owner directly and by the writer through an indexed get */
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  {
    int right = (me + 1) % nunits, left = (me + nunits - 1) % nunits;
    dart_gptr_t gb = g;
    CHECK_OK(dart_gptr_setunit(&gb, DART_TEAM_UNIT_ID(right)));
    CHECK_OK(dart_gptr_incaddr(&gb, 96 * (int64_t)sizeof(int)));
    int s2[24];
    for (int i = 0; i < 24; i++) s2[i] = me * 1000 + 700 + i;
    CHECK_OK(dart_put_blocking(gb, s2, 16, st, DART_TYPE_INT));
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    for (size_t j = 0; j < 32; j++) {
      int want = j < 16 ? left * 1000 + 700 + (int)strided_pos(j) : -1;
      if (part[96 + j] != want) {
        FAILF("neighbour put: part[%zu] = %d, want %d (from unit %d)", 96 + j,
              part[96 + j], want, left);
        break;
      }
    }
    for (int i = 0; i < 24; i++) dst[i] = -2;
    CHECK_OK(dart_get_blocking(dst, gb, 16, DART_TYPE_INT, it));
    int want[24];
    for (int i = 0; i < 24; i++) want[i] = -2;
    for (size_t j = 0; j < 16; j++) want[indexed_pos(j)] = s2[strided_pos(j)];
    for (int i = 0; i < 24; i++) {
      if (dst[i] != want[i]) {
        FAILF("neighbour get contiguous->indexed: dst[%d] = %d, want %d", i,
              dst[i], want[i]);
        break;
      }
    }
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_OK(dart_team_memfree(g));

  /* custom records: 12-byte records to and from a byte allocation */
  {
    typedef struct {
      int a, b, c;
    } rec;
    dart_datatype_t ct = DART_TYPE_UNDEFINED, ct2 = DART_TYPE_UNDEFINED;
    dart_datatype_t ct8 = DART_TYPE_UNDEFINED;
    CHECK_OK(dart_type_create_custom(sizeof(rec), &ct));
    CHECK_OK(dart_type_create_custom(sizeof(rec), &ct2));
    CHECK_OK(dart_type_create_custom(8, &ct8));
    dart_gptr_t gbyte = DART_GPTR_NULL;
    CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 64, DART_TYPE_BYTE,
                                        &gbyte));
    dart_gptr_t gbown = gbyte;
    CHECK_OK(dart_gptr_setunit(&gbown, DART_TEAM_UNIT_ID(me)));
    void *bvaddr = NULL;
    CHECK_OK(dart_gptr_getaddr(gbown, &bvaddr));
    CHECK(bvaddr != NULL);
    rec out[4], in[4];
    for (int i = 0; i < 4; i++) {
      out[i].a = me * 100 + i;
      out[i].b = -i;
      out[i].c = 7 * i + 1;
    }
    memset(in, 0, sizeof in);
    if (bvaddr) memset(bvaddr, 0xee, 64);
    CHECK_OK(dart_put_blocking(gbown, out, 4, ct, ct));
    if (bvaddr) {
      CHECK(memcmp(bvaddr, out, sizeof out) == 0);
      unsigned char *tail = (unsigned char *)bvaddr + sizeof out;
      for (size_t i = 0; i < 64 - sizeof out; i++) CHECK_EQ(tail[i], 0xee);
    }
    CHECK_OK(dart_get_blocking(in, gbown, 4, ct, ct2)); /* same size */
    CHECK(memcmp(in, out, sizeof out) == 0);
    CHECK_RET(dart_put_blocking(gbown, out, 4, ct, DART_TYPE_INT),
              DART_ERR_INVAL);
    CHECK_RET(dart_put_blocking(gbown, out, 4, ct, ct8), DART_ERR_INVAL);
    CHECK_RET(dart_get_blocking(in, gbown, 4, DART_TYPE_BYTE, ct),
              DART_ERR_INVAL);
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    CHECK_OK(dart_team_memfree(gbyte));
    CHECK_OK(dart_type_destroy(&ct));
    CHECK_OK(dart_type_destroy(&ct2));
    CHECK_OK(dart_type_destroy(&ct8));
  }

  CHECK_OK(dart_type_destroy(&st));
  CHECK_OK(dart_type_destroy(&it));
}

int main(int argc, char **argv)
{
  dart_test_init(&argc, &argv);
  nunits = dart_test_units;
  me = dart_test_unit;

  test_create_destroy();
  test_ops();
  test_roundtrip();
  return dart_test_finish();
}
