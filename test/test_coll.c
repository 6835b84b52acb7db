/*
 * Collectives and two-sided messages on DART_TEAM_ALL: barrier, bcast,
 * scatter, gather (every root), allgather, allgatherv, alltoall, allreduce
 * and reduce (every root) with every predefined operation on the types it
 * applies to, in-place allreduce, user operations (non-commutative on a
 * custom type, commutative with user data), derived (strided, indexed)
 * types in bcast/allgather/send/recv, send/recv/sendrecv, and bad input.
 * The barrier also on a team whose nodes hold unequal numbers of its units.
 */
#include "dart_test.h"

#include <stdalign.h>

static int nunits;
static int me;

/* ---- typed element access through int64_t ---- */

static const char *type_name(dart_datatype_t dt)
{
  switch (dt) {
  case DART_TYPE_BYTE: return "BYTE";
  case DART_TYPE_INT: return "INT";
  case DART_TYPE_UINT: return "UINT";
  case DART_TYPE_LONG: return "LONG";
  case DART_TYPE_ULONGLONG: return "ULONGLONG";
  case DART_TYPE_FLOAT: return "FLOAT";
  case DART_TYPE_DOUBLE: return "DOUBLE";
  default: return "?";
  }
}

static const char *op_name(dart_operation_t op)
{
  static const char *names[] = {"UNDEFINED", "MIN", "MAX",  "MINMAX", "SUM",
                                "PROD",      "BAND", "LAND", "BOR",    "LOR",
                                "BXOR",      "LXOR"};
  return op <= DART_OP_LXOR ? names[op] : "user";
}

static int is_signed_type(dart_datatype_t dt)
{
  return dt == DART_TYPE_INT || dt == DART_TYPE_LONG ||
         dt == DART_TYPE_FLOAT || dt == DART_TYPE_DOUBLE;
}

static int type_bits(dart_datatype_t dt)
{
  switch (dt) {
  case DART_TYPE_BYTE: return 8;
  case DART_TYPE_INT: return (int)(8 * sizeof(int));
  case DART_TYPE_UINT: return (int)(8 * sizeof(unsigned));
  default: return 64;
  }
}

static void set_val(void *buf, dart_datatype_t dt, size_t k, int64_t v)
{
  switch (dt) {
  case DART_TYPE_BYTE: ((unsigned char *)buf)[k] = (unsigned char)v; break;
  case DART_TYPE_INT:
    ((int *)buf)[k] = (int)(int32_t)(uint32_t)(uint64_t)v;
    break;
  case DART_TYPE_UINT: ((unsigned *)buf)[k] = (unsigned)(uint64_t)v; break;
  case DART_TYPE_LONG: ((long *)buf)[k] = (long)v; break;
  case DART_TYPE_ULONGLONG:
    ((unsigned long long *)buf)[k] = (unsigned long long)v;
    break;
  case DART_TYPE_FLOAT: ((float *)buf)[k] = (float)v; break;
  case DART_TYPE_DOUBLE: ((double *)buf)[k] = (double)v; break;
  default: break;
  }
}

/* The element as an integer; a non-integral float reads as INT64_MIN. */
static int64_t get_val(const void *buf, dart_datatype_t dt, size_t k)
{
  double d;
  switch (dt) {
  case DART_TYPE_BYTE: return ((const unsigned char *)buf)[k];
  case DART_TYPE_INT: return ((const int *)buf)[k];
  case DART_TYPE_UINT: return ((const unsigned *)buf)[k];
  case DART_TYPE_LONG: return ((const long *)buf)[k];
  case DART_TYPE_ULONGLONG:
    return (int64_t)((const unsigned long long *)buf)[k];
  case DART_TYPE_FLOAT: d = ((const float *)buf)[k]; break;
  case DART_TYPE_DOUBLE: d = ((const double *)buf)[k]; break;
  default: return INT64_MIN;
  }
  if (d != d || d > 9e18 || d < -9e18 || d != (double)(int64_t)d) {
    return INT64_MIN;
  }
  return (int64_t)d;
}

/* The value unit u contributes at element k for operation op. */
static int64_t contrib(dart_operation_t op, dart_datatype_t dt, int u, int k)
{
  int sgn = is_signed_type(dt);
  int64_t off = 0;
  if (dt == DART_TYPE_LONG && sizeof(long) == 8) off = -((int64_t)1 << 40);
  if (dt == DART_TYPE_ULONGLONG) off = (int64_t)1 << 40;
  int bits = type_bits(dt);
  uint64_t mask = bits == 64 ? ~0ULL : ((1ULL << bits) - 1);
  uint64_t h1 = dart_test_mix64((uint64_t)u * 131 + (uint64_t)k * 7 + 1);
  uint64_t h2 = dart_test_mix64(h1), h3 = dart_test_mix64(h2);
  int truth;
  switch (op) {
  case DART_OP_MIN:
  case DART_OP_MAX: {
    int64_t b = (u * 7 + k * 5 + 3) % 13;
    return (sgn ? b - 6 : b) + off;
  }
  case DART_OP_SUM: return (sgn ? u * 3 - k : u * 3 + k) + off;
  case DART_OP_PROD:
    if (sgn && (u + k) % 4 == 1) return -1;
    return ((u + k) % 3 == 0) ? 2 : 1;
  case DART_OP_BAND: return (int64_t)((h1 | h2 | h3) & mask);
  case DART_OP_BOR: return (int64_t)((h1 & h2 & h3) & mask);
  case DART_OP_BXOR: return (int64_t)(h1 & mask);
  case DART_OP_LAND:
    truth = !((k == 1 && u == nunits - 1) || (k == 3 && u == 0));
    break;
  case DART_OP_LOR:
    truth = (k == 2 && u == nunits - 1) || (k == 4 && u == nunits / 2);
    break;
  case DART_OP_LXOR: truth = (u * 3 + k) % 2 == 0; break;
  default: return 0;
  }
  /* logical operations: different non-zero values, so that a bitwise
   * implementation gives a wrong result */
  return truth ? (int64_t)1 << ((u + k) % 8) : 0;
}

static int64_t combine(dart_operation_t op, int64_t a, int64_t b)
{
  switch (op) {
  case DART_OP_MIN: return a < b ? a : b;
  case DART_OP_MAX: return a > b ? a : b;
  case DART_OP_SUM: return a + b;
  case DART_OP_PROD: return a * b;
  case DART_OP_BAND: return a & b;
  case DART_OP_BOR: return a | b;
  case DART_OP_BXOR: return a ^ b;
  case DART_OP_LAND: return (a != 0) && (b != 0);
  case DART_OP_LOR: return (a != 0) || (b != 0);
  case DART_OP_LXOR: return (a != 0) != (b != 0);
  default: return 0;
  }
}

static int is_logical(dart_operation_t op)
{
  return op == DART_OP_LAND || op == DART_OP_LOR || op == DART_OP_LXOR;
}

#define NRED 5

static int check_reduced(const void *buf, dart_datatype_t dt,
                         dart_operation_t op, const int64_t *want,
                         const char *coll, int root, int line)
{
  int bits = type_bits(dt);
  uint64_t mask = bits == 64 ? ~0ULL : ((1ULL << bits) - 1);
  for (int k = 0; k < NRED; k++) {
    int64_t got = get_val(buf, dt, (size_t)k);
    int ok;
    if (op == DART_OP_BAND || op == DART_OP_BOR || op == DART_OP_BXOR) {
      ok = ((uint64_t)got & mask) == ((uint64_t)want[k] & mask);
    } else if (is_logical(op) && nunits == 1) {
      /* one unit: no operation is applied; the value passes through */
      ok = (got != 0) == (want[k] != 0);
    } else {
      ok = got == want[k];
    }
    if (!ok) {
      char msg[200];
      snprintf(msg, sizeof msg,
               "%s(%s, %s) root %d element %d: got %" PRId64
               ", want %" PRId64,
               coll, op_name(op), type_name(dt), root, k, got, want[k]);
      dart_test_fail(__FILE__, line, msg);
      return 0;
    }
  }
  return 1;
}

/* allreduce and reduce (every root) of op on dt, checked exactly. */
static void test_op(dart_operation_t op, dart_datatype_t dt)
{
  alignas(16) unsigned char send[NRED * 8], recv[NRED * 8];
  int64_t want[NRED];
  for (int k = 0; k < NRED; k++) {
    set_val(send, dt, (size_t)k, contrib(op, dt, me, k));
    int64_t acc = contrib(op, dt, 0, k);
    for (int u = 1; u < nunits; u++) {
      acc = combine(op, acc, contrib(op, dt, u, k));
    }
    want[k] = acc;
  }
  memset(recv, 0x5a, sizeof recv);
  dart_ret_t ret = dart_allreduce(send, recv, NRED, dt, op, DART_TEAM_ALL);
  if (ret != DART_OK) {
    FAILF("dart_allreduce(%s, %s) returned %d", op_name(op), type_name(dt),
          (int)ret);
  } else {
    check_reduced(recv, dt, op, want, "allreduce", -1, __LINE__);
  }
  for (int r = 0; r < nunits; r++) {
    memset(recv, 0x5a, sizeof recv);
    ret = dart_reduce(send, recv, NRED, dt, op, DART_TEAM_UNIT_ID(r),
                      DART_TEAM_ALL);
    if (ret != DART_OK) {
      FAILF("dart_reduce(%s, %s, root %d) returned %d", op_name(op),
            type_name(dt), r, (int)ret);
    } else if (me == r) {
      check_reduced(recv, dt, op, want, "reduce", r, __LINE__);
    }
  }
}

/* DART_OP_MINMAX on {min, max} pairs. */
static void test_minmax(dart_datatype_t dt)
{
  enum { NP = 3 };
  alignas(16) unsigned char send[2 * NP * 8], recv[2 * NP * 8];
  int64_t want[2 * NP] = {0};
  for (int p = 0; p < NP; p++) {
    for (int u = 0; u < nunits; u++) {
      int64_t lo = (u * 5 + p * 3) % 11 - 5;
      int64_t hi = lo + (u * 2 + p) % 7;
      if (u == me) {
        set_val(send, dt, (size_t)(2 * p), lo);
        set_val(send, dt, (size_t)(2 * p + 1), hi);
      }
      if (u == 0 || lo < want[2 * p]) want[2 * p] = lo;
      if (u == 0 || hi > want[2 * p + 1]) want[2 * p + 1] = hi;
    }
  }
  for (int r = -1; r < nunits; r++) {
    memset(recv, 0x5a, sizeof recv);
    dart_ret_t ret =
        r < 0 ? dart_allreduce(send, recv, 2 * NP, dt, DART_OP_MINMAX,
                               DART_TEAM_ALL)
              : dart_reduce(send, recv, 2 * NP, dt, DART_OP_MINMAX,
                            DART_TEAM_UNIT_ID(r), DART_TEAM_ALL);
    if (ret != DART_OK) {
      FAILF("MINMAX on %s (root %d) returned %d", type_name(dt), r, (int)ret);
      continue;
    }
    if (r >= 0 && r != me) continue;
    for (int i = 0; i < 2 * NP; i++) {
      int64_t got = get_val(recv, dt, (size_t)i);
      if (got != want[i]) {
        FAILF("MINMAX on %s (root %d) element %d: got %" PRId64
              ", want %" PRId64,
              type_name(dt), r, i, got, want[i]);
        break;
      }
    }
  }
}

/* ---- user operations ---- */

typedef struct {
  double a[4]; /* row-major 2x2 */
} mat2;

/* inout = in x inout: in MPI's rank order the result is M0 x M1 x ... */
static void matmul_op(const void *invec, void *inoutvec, size_t len,
                      void *user_data)
{
  (void)user_data;
  const mat2 *x = invec;
  mat2 *y = inoutvec;
  for (size_t i = 0; i < len; i++) {
    mat2 r;
    r.a[0] = x[i].a[0] * y[i].a[0] + x[i].a[1] * y[i].a[2];
    r.a[1] = x[i].a[0] * y[i].a[1] + x[i].a[1] * y[i].a[3];
    r.a[2] = x[i].a[2] * y[i].a[0] + x[i].a[3] * y[i].a[2];
    r.a[3] = x[i].a[2] * y[i].a[1] + x[i].a[3] * y[i].a[3];
    y[i] = r;
  }
}

static mat2 mat_of(int u, int e)
{
  mat2 m = {{1.0, (double)(u + 1 + e), (double)((u + e) % 2), 1.0}};
  return m;
}

struct modsum {
  int mod;
};

/* (a + b) mod user_data->mod; writes -1000 if the user data is missing. */
static void modsum_op(const void *invec, void *inoutvec, size_t len,
                      void *user_data)
{
  const struct modsum *ms = user_data;
  const int *x = invec;
  int *y = inoutvec;
  for (size_t i = 0; i < len; i++) {
    y[i] = (ms && ms->mod == 7) ? (x[i] + y[i]) % ms->mod : -1000;
  }
}

static void test_user_ops(void)
{
  /* non-commutative: 2x2 matrix product on a custom type of 4 doubles */
  enum { NM = 3 };
  dart_datatype_t mat_t = DART_TYPE_UNDEFINED;
  CHECK_OK(dart_type_create_custom(sizeof(mat2), &mat_t));
  CHECK(mat_t > DART_TYPE_LAST);
  dart_operation_t mat_op = DART_OP_UNDEFINED;
  CHECK_OK(dart_op_create(matmul_op, NULL, false, mat_t, false, &mat_op));
  CHECK(mat_op > DART_OP_LAST);

  mat2 send[NM], recv[NM], want[NM];
  for (int e = 0; e < NM; e++) {
    send[e] = mat_of(me, e);
    want[e] = mat_of(0, e);
    for (int u = 1; u < nunits; u++) {
      mat2 next = mat_of(u, e);
      matmul_op(&want[e], &next, 1, NULL); /* next = want x next */
      want[e] = next;
    }
  }
  for (int r = -1; r < nunits; r++) {
    memset(recv, 0, sizeof recv);
    dart_ret_t ret =
        r < 0 ? dart_allreduce(send, recv, NM, mat_t, mat_op, DART_TEAM_ALL)
              : dart_reduce(send, recv, NM, mat_t, mat_op,
                            DART_TEAM_UNIT_ID(r), DART_TEAM_ALL);
    if (ret != DART_OK) {
      FAILF("matrix product (root %d) returned %d", r, (int)ret);
      continue;
    }
    if (r >= 0 && r != me) continue;
    for (int e = 0; e < NM; e++) {
      for (int i = 0; i < 4; i++) {
        if (recv[e].a[i] != want[e].a[i]) {
          FAILF("matrix product (root %d) matrix %d entry %d: got %g, "
                "want %g",
                r, e, i, recv[e].a[i], want[e].a[i]);
          e = NM;
          break;
        }
      }
    }
  }
  CHECK_OK(dart_op_destroy(&mat_op));
  CHECK_EQ(mat_op, DART_OP_UNDEFINED);
  CHECK_OK(dart_type_destroy(&mat_t));
  CHECK_EQ(mat_t, DART_TYPE_UNDEFINED);

  /* commutative, on DART_TYPE_INT, with user data */
  struct modsum ms = {7};
  dart_operation_t mod_op = DART_OP_UNDEFINED;
  CHECK_OK(dart_op_create(modsum_op, &ms, true, DART_TYPE_INT, false,
                          &mod_op));
  CHECK(mod_op > DART_OP_LAST);
  int isend[NRED], irecv[NRED], iwant[NRED];
  for (int k = 0; k < NRED; k++) {
    isend[k] = (me * 3 + k * 5 + 1) % 7;
    int s = 0;
    for (int u = 0; u < nunits; u++) s += (u * 3 + k * 5 + 1) % 7;
    iwant[k] = s % 7;
  }
  for (int r = -1; r < nunits; r++) {
    for (int k = 0; k < NRED; k++) irecv[k] = -1;
    dart_ret_t ret =
        r < 0 ? dart_allreduce(isend, irecv, NRED, DART_TYPE_INT, mod_op,
                               DART_TEAM_ALL)
              : dart_reduce(isend, irecv, NRED, DART_TYPE_INT, mod_op,
                            DART_TEAM_UNIT_ID(r), DART_TEAM_ALL);
    if (ret != DART_OK) {
      FAILF("modular sum (root %d) returned %d", r, (int)ret);
      continue;
    }
    if (r >= 0 && r != me) continue;
    for (int k = 0; k < NRED; k++) {
      if (irecv[k] != iwant[k]) {
        FAILF("modular sum (root %d) element %d: got %d, want %d", r, k,
              irecv[k], iwant[k]);
        break;
      }
    }
  }
  /* in place with the user operation */
  for (int k = 0; k < NRED; k++) irecv[k] = isend[k];
  CHECK_OK(dart_allreduce(irecv, irecv, NRED, DART_TYPE_INT, mod_op,
                          DART_TEAM_ALL));
  for (int k = 0; k < NRED; k++) CHECK_EQ(irecv[k], iwant[k]);
  CHECK_OK(dart_op_destroy(&mod_op));
  CHECK_EQ(mod_op, DART_OP_UNDEFINED);
}

/* ---- plain data movement ---- */

static void test_bcast(void)
{
  static const dart_datatype_t types[] = {DART_TYPE_INT, DART_TYPE_DOUBLE,
                                          DART_TYPE_LONG, DART_TYPE_BYTE,
                                          DART_TYPE_ULONGLONG};
  enum { NB = 7 };
  for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
    dart_datatype_t dt = types[ti];
    for (int r = 0; r < nunits; r++) {
      alignas(16) unsigned char buf[NB * 8];
      memset(buf, 0x5a, sizeof buf);
      if (me == r) {
        for (int k = 0; k < NB; k++) {
          set_val(buf, dt, (size_t)k, (r * 31 + k * 3 + 1) % 251);
        }
      }
      dart_ret_t ret = dart_bcast(buf, NB, dt, DART_TEAM_UNIT_ID(r),
                                  DART_TEAM_ALL);
      if (ret != DART_OK) {
        FAILF("bcast(%s, root %d) returned %d", type_name(dt), r, (int)ret);
        continue;
      }
      for (int k = 0; k < NB; k++) {
        int64_t got = get_val(buf, dt, (size_t)k);
        if (got != (r * 31 + k * 3 + 1) % 251) {
          FAILF("bcast(%s, root %d) element %d: got %" PRId64 ", want %d",
                type_name(dt), r, k, got, (r * 31 + k * 3 + 1) % 251);
          break;
        }
      }
    }
  }
}

static void test_scatter_gather(void)
{
  static const dart_datatype_t types[] = {DART_TYPE_INT, DART_TYPE_DOUBLE};
  enum { NS = 3 };
  size_t n = (size_t)nunits;
  unsigned char *big = malloc(n * NS * 8);
  alignas(16) unsigned char small[NS * 8];
  for (size_t ti = 0; ti < 2; ti++) {
    dart_datatype_t dt = types[ti];
    for (int r = 0; r < nunits; r++) {
      /* scatter: unit i gets the root's elements [i*NS, (i+1)*NS) */
      for (size_t i = 0; i < n * NS; i++) {
        set_val(big, dt, i, me == r ? r * 1000 + (int64_t)i : -1);
      }
      memset(small, 0x5a, sizeof small);
      dart_ret_t ret = dart_scatter(big, small, NS, dt, DART_TEAM_UNIT_ID(r),
                                    DART_TEAM_ALL);
      if (ret != DART_OK) {
        FAILF("scatter(%s, root %d) returned %d", type_name(dt), r, (int)ret);
      } else {
        for (int j = 0; j < NS; j++) {
          int64_t want = r * 1000 + me * NS + j;
          int64_t got = get_val(small, dt, (size_t)j);
          if (got != want) {
            FAILF("scatter(%s, root %d) element %d: got %" PRId64
                  ", want %" PRId64,
                  type_name(dt), r, j, got, want);
            break;
          }
        }
      }
      /* gather: the root gets unit i's elements at [i*NS, (i+1)*NS) */
      for (int j = 0; j < NS; j++) {
        set_val(small, dt, (size_t)j, me * 10 + j + r * 1000);
      }
      for (size_t i = 0; i < n * NS; i++) set_val(big, dt, i, -1);
      ret = dart_gather(small, big, NS, dt, DART_TEAM_UNIT_ID(r),
                        DART_TEAM_ALL);
      if (ret != DART_OK) {
        FAILF("gather(%s, root %d) returned %d", type_name(dt), r, (int)ret);
      } else if (me == r) {
        for (size_t i = 0; i < n; i++) {
          for (int j = 0; j < NS; j++) {
            int64_t want = (int64_t)i * 10 + j + r * 1000;
            int64_t got = get_val(big, dt, i * NS + (size_t)j);
            if (got != want) {
              FAILF("gather(%s, root %d) unit %zu element %d: got %" PRId64
                    ", want %" PRId64,
                    type_name(dt), r, i, j, got, want);
              i = n;
              break;
            }
          }
        }
      }
    }
    /* allgather */
    for (int j = 0; j < NS; j++) set_val(small, dt, (size_t)j, me * 100 + j);
    for (size_t i = 0; i < n * NS; i++) set_val(big, dt, i, -1);
    dart_ret_t ret = dart_allgather(small, big, NS, dt, DART_TEAM_ALL);
    if (ret != DART_OK) {
      FAILF("allgather(%s) returned %d", type_name(dt), (int)ret);
    } else {
      for (size_t i = 0; i < n * NS; i++) {
        int64_t want = (int64_t)(i / NS) * 100 + (int64_t)(i % NS);
        int64_t got = get_val(big, dt, i);
        if (got != want) {
          FAILF("allgather(%s) element %zu: got %" PRId64 ", want %" PRId64,
                type_name(dt), i, got, want);
          break;
        }
      }
    }
  }
  free(big);
}

static void test_allgatherv(void)
{
  size_t n = (size_t)nunits;
  size_t *counts = malloc(n * sizeof *counts);
  size_t *displs = malloc(n * sizeof *displs);
  /* unequal counts, unit 1 (and 5) send nothing; placed in reverse order
   * with a gap of one element and a leading gap of two */
  for (size_t i = 0; i < n; i++) counts[i] = (i % 4 == 1) ? 0 : i + 1;
  displs[n - 1] = 2;
  for (size_t i = n - 1; i-- > 0;) {
    displs[i] = displs[i + 1] + counts[i + 1] + 1;
  }
  size_t total = displs[0] + counts[0] + 2;
  int *recv = malloc(total * sizeof *recv);
  int *send = malloc((counts[me] + 1) * sizeof *send);
  for (size_t j = 0; j < counts[me]; j++) send[j] = me * 100 + (int)j;
  for (size_t i = 0; i < total; i++) recv[i] = -7;
  dart_ret_t ret = dart_allgatherv(send, counts[me], DART_TYPE_INT, recv,
                                   counts, displs, DART_TEAM_ALL);
  if (ret != DART_OK) {
    FAILF("allgatherv returned %d", (int)ret);
  } else {
    int *want = malloc(total * sizeof *want);
    for (size_t i = 0; i < total; i++) want[i] = -7;
    for (size_t i = 0; i < n; i++) {
      for (size_t j = 0; j < counts[i]; j++) {
        want[displs[i] + j] = (int)i * 100 + (int)j;
      }
    }
    for (size_t i = 0; i < total; i++) {
      if (recv[i] != want[i]) {
        FAILF("allgatherv element %zu: got %d, want %d", i, recv[i], want[i]);
        break;
      }
    }
    free(want);
  }
  free(send);
  free(recv);
  free(counts);
  free(displs);
}

static void test_alltoall(void)
{
  enum { NA = 2 };
  size_t n = (size_t)nunits;
  long *send = malloc(n * NA * sizeof *send);
  long *recv = malloc(n * NA * sizeof *recv);
  for (size_t v = 0; v < n; v++) {
    for (int j = 0; j < NA; j++) {
      send[v * NA + (size_t)j] = me * 1000 + (long)v * 10 + j;
      recv[v * NA + (size_t)j] = -1;
    }
  }
  dart_ret_t ret = dart_alltoall(send, recv, NA, DART_TYPE_LONG, DART_TEAM_ALL);
  if (ret != DART_OK) {
    FAILF("alltoall returned %d", (int)ret);
  } else {
    for (size_t v = 0; v < n; v++) {
      for (int j = 0; j < NA; j++) {
        long want = (long)v * 1000 + me * 10 + j;
        if (recv[v * NA + (size_t)j] != want) {
          FAILF("alltoall from unit %zu element %d: got %ld, want %ld", v, j,
                recv[v * NA + (size_t)j], want);
          v = n;
          break;
        }
      }
    }
  }
  free(send);
  free(recv);
}

static void test_inplace(void)
{
  int ibuf[NRED];
  double dbuf[NRED];
  for (int k = 0; k < NRED; k++) {
    ibuf[k] = me + k * 10;
    dbuf[k] = me * 0.5 + k;
  }
  CHECK_OK(dart_allreduce(ibuf, ibuf, NRED, DART_TYPE_INT, DART_OP_SUM,
                          DART_TEAM_ALL));
  CHECK_OK(dart_allreduce(dbuf, dbuf, NRED, DART_TYPE_DOUBLE, DART_OP_MAX,
                          DART_TEAM_ALL));
  for (int k = 0; k < NRED; k++) {
    CHECK_EQ(ibuf[k], nunits * (nunits - 1) / 2 + nunits * k * 10);
    CHECK(dbuf[k] == (nunits - 1) * 0.5 + k);
  }
}

/* ---- derived types in collectives ---- */

static void test_derived_coll(void)
{
  size_t n = (size_t)nunits;
  /* strided: blocks of 2 ints every 3 */
  dart_datatype_t st = DART_TYPE_UNDEFINED;
  CHECK_OK(dart_type_create_strided(DART_TYPE_INT, 3, 2, &st));
  /* indexed: blocks {2 at 1, 1 at 4}: 3 elements, extent 4 */
  const size_t ilen[2] = {2, 1}, ioff[2] = {1, 4};
  dart_datatype_t it = DART_TYPE_UNDEFINED;
  CHECK_OK(dart_type_create_indexed(DART_TYPE_INT, 2, ilen, ioff, &it));

  /* bcast, strided: 8 elements = 4 blocks at 0, 3, 6, 9 */
  for (int r = 0; r < nunits; r++) {
    int buf[12];
    for (int i = 0; i < 12; i++) buf[i] = (me == r) ? r * 100 + i : -1;
    dart_ret_t ret =
        dart_bcast(buf, 8, st, DART_TEAM_UNIT_ID(r), DART_TEAM_ALL);
    if (ret != DART_OK) {
      FAILF("bcast(strided, root %d) returned %d", r, (int)ret);
      continue;
    }
    for (int i = 0; i < 12; i++) {
      int want = (me == r || i % 3 < 2) ? r * 100 + i : -1;
      if (buf[i] != want) {
        FAILF("bcast(strided, root %d) element %d: got %d, want %d", r, i,
              buf[i], want);
        break;
      }
    }
  }
  /* bcast, indexed: 6 elements = 2 instances at 1, 2, 4 and 5, 6, 8 */
  for (int r = 0; r < nunits; r++) {
    int buf[10];
    for (int i = 0; i < 10; i++) buf[i] = (me == r) ? r * 100 + i : -1;
    dart_ret_t ret =
        dart_bcast(buf, 6, it, DART_TEAM_UNIT_ID(r), DART_TEAM_ALL);
    if (ret != DART_OK) {
      FAILF("bcast(indexed, root %d) returned %d", r, (int)ret);
      continue;
    }
    for (int i = 0; i < 10; i++) {
      int used = (i == 1 || i == 2 || i == 4 || i == 5 || i == 6 || i == 8);
      int want = (me == r || used) ? r * 100 + i : -1;
      if (buf[i] != want) {
        FAILF("bcast(indexed, root %d) element %d: got %d, want %d", r, i,
              buf[i], want);
        break;
      }
    }
  }
  /* allgather, strided: 4 elements (2 blocks) per unit; unit i's block b
   * is block 2i+b of the receive layout, at element (2i+b)*3 */
  {
    int send[6];
    for (int i = 0; i < 6; i++) send[i] = me * 100 + i;
    int *recv = malloc(6 * n * sizeof *recv);
    for (size_t i = 0; i < 6 * n; i++) recv[i] = -1;
    dart_ret_t ret = dart_allgather(send, recv, 4, st, DART_TEAM_ALL);
    if (ret != DART_OK) {
      FAILF("allgather(strided) returned %d", (int)ret);
    } else {
      for (size_t i = 0; i < 6 * n; i++) {
        size_t blk = i / 3, pos = i % 3;
        int want = pos < 2 ? (int)(blk / 2) * 100 + (int)((blk % 2) * 3 + pos)
                           : -1;
        if (recv[i] != want) {
          FAILF("allgather(strided) element %zu: got %d, want %d", i, recv[i],
                want);
          break;
        }
      }
    }
    free(recv);
  }
  /* allgather, indexed: one instance per unit; unit i's at i*4 + {1,2,4} */
  {
    int send[5];
    for (int i = 0; i < 5; i++) send[i] = me * 100 + i;
    size_t len = 4 * n + 1;
    int *recv = malloc(len * sizeof *recv);
    for (size_t i = 0; i < len; i++) recv[i] = -1;
    dart_ret_t ret = dart_allgather(send, recv, 3, it, DART_TEAM_ALL);
    if (ret != DART_OK) {
      FAILF("allgather(indexed) returned %d", (int)ret);
    } else {
      int *want = malloc(len * sizeof *want);
      for (size_t i = 0; i < len; i++) want[i] = -1;
      for (size_t u = 0; u < n; u++) {
        want[u * 4 + 1] = (int)u * 100 + 1;
        want[u * 4 + 2] = (int)u * 100 + 2;
        want[u * 4 + 4] = (int)u * 100 + 4;
      }
      for (size_t i = 0; i < len; i++) {
        if (recv[i] != want[i]) {
          FAILF("allgather(indexed) element %zu: got %d, want %d", i, recv[i],
                want[i]);
          break;
        }
      }
      free(want);
    }
    free(recv);
  }
  CHECK_OK(dart_type_destroy(&st));
  CHECK_OK(dart_type_destroy(&it));
}

/* ---- two-sided ---- */

static void test_p2p(void)
{
  dart_global_unit_t next = DART_GLOBAL_UNIT_ID((me + 1) % nunits);
  dart_global_unit_t prev = DART_GLOBAL_UNIT_ID((me + nunits - 1) % nunits);
  int pv = prev.id;
  dart_datatype_t st = DART_TYPE_UNDEFINED, dst = DART_TYPE_UNDEFINED;
  CHECK_OK(dart_type_create_strided(DART_TYPE_INT, 3, 2, &st));
  CHECK_OK(dart_type_create_strided(DART_TYPE_DOUBLE, 2, 1, &dst));

  /* ring, basic type, tags from the sender's id */
  {
    int send[4], recv[4];
    for (int j = 0; j < 4; j++) {
      send[j] = me * 100 + j;
      recv[j] = -1;
    }
    CHECK_OK(dart_sendrecv(send, 4, DART_TYPE_INT, 100 + me, next, recv, 4,
                           DART_TYPE_INT, 100 + pv, prev));
    for (int j = 0; j < 4; j++) CHECK_EQ(recv[j], pv * 100 + j);
  }
  /* ring, strided send into a contiguous receive */
  {
    int send[6], recv[4];
    for (int i = 0; i < 6; i++) send[i] = me * 100 + i;
    for (int j = 0; j < 4; j++) recv[j] = -1;
    CHECK_OK(dart_sendrecv(send, 4, st, 7, next, recv, 4, DART_TYPE_INT, 7,
                           prev));
    const int pos[4] = {0, 1, 3, 4};
    for (int j = 0; j < 4; j++) CHECK_EQ(recv[j], pv * 100 + pos[j]);
  }
  /* ring, contiguous send into a strided receive */
  {
    int send[4], recv[6];
    for (int j = 0; j < 4; j++) send[j] = me * 100 + j;
    for (int i = 0; i < 6; i++) recv[i] = -1;
    CHECK_OK(dart_sendrecv(send, 4, DART_TYPE_INT, 8, next, recv, 4, st, 8,
                           prev));
    const int want[6] = {pv * 100, pv * 100 + 1, -1, pv * 100 + 2,
                         pv * 100 + 3, -1};
    for (int i = 0; i < 6; i++) CHECK_EQ(recv[i], want[i]);
  }
  /* pairs (0,1), (2,3), ...: send/recv with tags and strided types */
  int partner = me ^ 1;
  if (partner < nunits) {
    dart_global_unit_t pu = DART_GLOBAL_UNIT_ID(partner);
    if (me % 2 == 0) {
      int a[5];
      for (int j = 0; j < 5; j++) a[j] = me * 10 + j;
      CHECK_OK(dart_send(a, 5, DART_TYPE_INT, 3, pu));
      double d[8];
      for (int i = 0; i < 8; i++) d[i] = me + i * 0.25;
      CHECK_OK(dart_send(d, 4, dst, 4, pu)); /* d[0], d[2], d[4], d[6] */
      int back[6];
      for (int i = 0; i < 6; i++) back[i] = -1;
      CHECK_OK(dart_recv(back, 4, st, 5, pu));
      const int want[6] = {partner * 10, partner * 10 + 1, -1,
                           partner * 10 + 2, partner * 10 + 3, -1};
      for (int i = 0; i < 6; i++) CHECK_EQ(back[i], want[i]);
    } else {
      int a[5];
      for (int j = 0; j < 5; j++) a[j] = -1;
      CHECK_OK(dart_recv(a, 5, DART_TYPE_INT, 3, pu));
      for (int j = 0; j < 5; j++) CHECK_EQ(a[j], partner * 10 + j);
      double d[4] = {-1, -1, -1, -1};
      CHECK_OK(dart_recv(d, 4, DART_TYPE_DOUBLE, 4, pu));
      for (int j = 0; j < 4; j++) CHECK(d[j] == partner + 2 * j * 0.25);
      int b[4];
      for (int j = 0; j < 4; j++) b[j] = me * 10 + j;
      CHECK_OK(dart_send(b, 4, DART_TYPE_INT, 5, pu));
    }
  }
  CHECK_OK(dart_type_destroy(&st));
  CHECK_OK(dart_type_destroy(&dst));
}

/* ---- bad input (every unit makes the same bad calls) ---- */

static void test_bad_input(void)
{
  const dart_team_t unknown = (dart_team_t)12345;
  const dart_team_unit_t root0 = DART_TEAM_UNIT_ID(0);
  const dart_team_unit_t rootn = DART_TEAM_UNIT_ID(nunits);
  const dart_team_unit_t rootneg = DART_TEAM_UNIT_ID(-1);
  dart_global_unit_t self = DART_GLOBAL_UNIT_ID(me);
  int ib[8] = {0}, ib2[8] = {0};
  double db[8] = {0}, db2[8] = {0};
  float fb[8] = {0}, fb2[8] = {0};
  int *big = calloc((size_t)nunits * 8, sizeof *big);
  size_t *counts = calloc((size_t)nunits, sizeof *counts);
  size_t *displs = calloc((size_t)nunits, sizeof *displs);

  /* root outside the team */
  CHECK_RET(dart_bcast(ib, 1, DART_TYPE_INT, rootn, DART_TEAM_ALL),
            DART_ERR_INVAL);
  CHECK_RET(dart_bcast(ib, 1, DART_TYPE_INT, rootneg, DART_TEAM_ALL),
            DART_ERR_INVAL);
  CHECK_RET(dart_reduce(ib, ib2, 1, DART_TYPE_INT, DART_OP_SUM, rootn,
                        DART_TEAM_ALL),
            DART_ERR_INVAL);
  CHECK_RET(dart_scatter(big, ib, 1, DART_TYPE_INT, rootn, DART_TEAM_ALL),
            DART_ERR_INVAL);
  CHECK_RET(dart_gather(ib, big, 1, DART_TYPE_INT, rootn, DART_TEAM_ALL),
            DART_ERR_INVAL);
  /* unknown team */
  CHECK_RET(dart_barrier(unknown), DART_ERR_INVAL);
  CHECK_RET(dart_barrier(DART_TEAM_NULL), DART_ERR_INVAL);
  CHECK_RET(dart_bcast(ib, 1, DART_TYPE_INT, root0, unknown), DART_ERR_INVAL);
  CHECK_RET(dart_allreduce(ib, ib2, 1, DART_TYPE_INT, DART_OP_SUM, unknown),
            DART_ERR_INVAL);
  CHECK_RET(dart_allgather(ib, big, 1, DART_TYPE_INT, unknown),
            DART_ERR_INVAL);
  CHECK_RET(dart_alltoall(big, big, 1, DART_TYPE_INT, DART_TEAM_NULL),
            DART_ERR_INVAL);
  /* undefined operation, bitwise on floating point, odd MINMAX */
  CHECK_RET(dart_allreduce(ib, ib2, 1, DART_TYPE_INT, DART_OP_UNDEFINED,
                           DART_TEAM_ALL),
            DART_ERR_INVAL);
  CHECK_RET(dart_reduce(ib, ib2, 1, DART_TYPE_INT, DART_OP_UNDEFINED, root0,
                        DART_TEAM_ALL),
            DART_ERR_INVAL);
  CHECK_RET(dart_allreduce(db, db2, 2, DART_TYPE_DOUBLE, DART_OP_BAND,
                           DART_TEAM_ALL),
            DART_ERR_INVAL);
  CHECK_RET(dart_allreduce(db, db2, 2, DART_TYPE_DOUBLE, DART_OP_BOR,
                           DART_TEAM_ALL),
            DART_ERR_INVAL);
  CHECK_RET(dart_allreduce(db, db2, 2, DART_TYPE_DOUBLE, DART_OP_BXOR,
                           DART_TEAM_ALL),
            DART_ERR_INVAL);
  CHECK_RET(dart_allreduce(fb, fb2, 2, DART_TYPE_FLOAT, DART_OP_BXOR,
                           DART_TEAM_ALL),
            DART_ERR_INVAL);
  CHECK_RET(dart_allreduce(ib, ib2, 3, DART_TYPE_INT, DART_OP_MINMAX,
                           DART_TEAM_ALL),
            DART_ERR_INVAL);
  CHECK_RET(dart_reduce(db, db2, 5, DART_TYPE_DOUBLE, DART_OP_MINMAX, root0,
                        DART_TEAM_ALL),
            DART_ERR_INVAL);
  /* a predefined operation on a custom type */
  {
    dart_datatype_t ct = DART_TYPE_UNDEFINED;
    CHECK_OK(dart_type_create_custom(8, &ct));
    CHECK_RET(dart_allreduce(db, db2, 1, ct, DART_OP_SUM, DART_TEAM_ALL),
              DART_ERR_INVAL);
    CHECK_OK(dart_type_destroy(&ct));
  }
  /* NULL buffers with nelem > 0 */
  CHECK_RET(dart_bcast(NULL, 2, DART_TYPE_INT, root0, DART_TEAM_ALL),
            DART_ERR_INVAL);
  CHECK_RET(dart_allreduce(NULL, ib2, 2, DART_TYPE_INT, DART_OP_SUM,
                           DART_TEAM_ALL),
            DART_ERR_INVAL);
  CHECK_RET(dart_allreduce(ib, NULL, 2, DART_TYPE_INT, DART_OP_SUM,
                           DART_TEAM_ALL),
            DART_ERR_INVAL);
  CHECK_RET(dart_allgather(NULL, big, 2, DART_TYPE_INT, DART_TEAM_ALL),
            DART_ERR_INVAL);
  CHECK_RET(dart_allgather(ib, NULL, 2, DART_TYPE_INT, DART_TEAM_ALL),
            DART_ERR_INVAL);
  CHECK_RET(dart_alltoall(NULL, big, 1, DART_TYPE_INT, DART_TEAM_ALL),
            DART_ERR_INVAL);
  CHECK_RET(dart_allgatherv(ib, 1, DART_TYPE_INT, big, NULL, displs,
                            DART_TEAM_ALL),
            DART_ERR_INVAL);
  CHECK_RET(dart_allgatherv(ib, 1, DART_TYPE_INT, big, counts, NULL,
                            DART_TEAM_ALL),
            DART_ERR_INVAL);
  CHECK_RET(dart_send(NULL, 2, DART_TYPE_INT, 0, self), DART_ERR_INVAL);
  CHECK_RET(dart_recv(NULL, 2, DART_TYPE_INT, 0, self), DART_ERR_INVAL);
  /* negative tags */
  CHECK_RET(dart_send(ib, 1, DART_TYPE_INT, -1, self), DART_ERR_INVAL);
  CHECK_RET(dart_recv(ib, 1, DART_TYPE_INT, -3, self), DART_ERR_INVAL);
  CHECK_RET(dart_sendrecv(ib, 1, DART_TYPE_INT, -1, self, ib2, 1,
                          DART_TYPE_INT, 0, self),
            DART_ERR_INVAL);
  CHECK_RET(dart_sendrecv(ib, 1, DART_TYPE_INT, 0, self, ib2, 1,
                          DART_TYPE_INT, -2, self),
            DART_ERR_INVAL);
  /* units outside [0, dart_size) */
  CHECK_RET(dart_send(ib, 1, DART_TYPE_INT, 0, DART_GLOBAL_UNIT_ID(nunits)),
            DART_ERR_INVAL);
  CHECK_RET(dart_send(ib, 1, DART_TYPE_INT, 0, DART_GLOBAL_UNIT_ID(-1)),
            DART_ERR_INVAL);
  CHECK_RET(dart_recv(ib, 1, DART_TYPE_INT, 0, DART_GLOBAL_UNIT_ID(nunits)),
            DART_ERR_INVAL);
  CHECK_RET(dart_sendrecv(ib, 1, DART_TYPE_INT, 0, DART_GLOBAL_UNIT_ID(nunits),
                          ib2, 1, DART_TYPE_INT, 0, self),
            DART_ERR_INVAL);
  /* a derived-type count that is not a multiple of the block length */
  {
    dart_datatype_t st = DART_TYPE_UNDEFINED;
    CHECK_OK(dart_type_create_strided(DART_TYPE_INT, 3, 2, &st));
    CHECK_RET(dart_bcast(ib, 3, st, root0, DART_TEAM_ALL), DART_ERR_INVAL);
    CHECK_OK(dart_type_destroy(&st));
  }

  /* the team still works, and nothing was sent by the failed calls */
  int one = 1, count = 0;
  CHECK_OK(dart_allreduce(&one, &count, 1, DART_TYPE_INT, DART_OP_SUM,
                          DART_TEAM_ALL));
  CHECK_EQ(count, nunits);
  free(big);
  free(counts);
  free(displs);
}

/* Rounds of: an accumulate on a count at unit 0 and a put (neither
 * flushed) into the right neighbour, then the barrier. After it the count
 * must hold every unit's increment (nobody left early) and the put must be
 * visible to the neighbour's direct loads. */
static void barrier_rounds(dart_team_t team)
{
  dart_team_unit_t tme;
  size_t tsize;
  CHECK_OK(dart_team_myid(team, &tme));
  CHECK_OK(dart_team_size(team, &tsize));
  const long n = (long)tsize;
  dart_gptr_t mem, own, count, right;
  CHECK_OK(dart_team_memalloc_aligned(team, 2, DART_TYPE_LONG, &mem));
  own = count = right = mem;
  CHECK_OK(dart_gptr_setunit(&own, tme));
  CHECK_OK(dart_gptr_setunit(&count, DART_TEAM_UNIT_ID(0)));
  CHECK_OK(dart_gptr_setunit(&right, DART_TEAM_UNIT_ID((tme.id + 1) % n)));
  CHECK_OK(dart_gptr_incaddr(&right, sizeof(long)));
  long *mine = NULL;
  CHECK_OK(dart_gptr_getaddr(own, (void **)&mine));
  CHECK(mine != NULL);
  mine[0] = mine[1] = 0;
  CHECK_OK(dart_barrier(team));
  const long one = 1;
  long sent = 0, counted = 0;
  for (long r = 1; r <= 300; r++) {
    sent = r; /* the put's source: untouched until the barrier */
    CHECK_OK(dart_accumulate(count, &one, 1, DART_TYPE_LONG, DART_OP_SUM));
    CHECK_OK(dart_put(right, &sent, 1, DART_TYPE_LONG, DART_TYPE_LONG));
    CHECK_OK(dart_barrier(team));
    CHECK_OK(dart_get_blocking(&counted, count, 1, DART_TYPE_LONG,
                               DART_TYPE_LONG));
    if (counted != r * n || mine[1] != r) {
      FAILF("team %d round %ld: count %ld (want %ld), put %ld", (int)team, r,
            counted, r * n, mine[1]);
      break;
    }
    /* nobody adds to the count before all have read it */
    CHECK_OK(dart_barrier(team));
  }
  CHECK_OK(dart_team_memfree(mem));
}

static void test_barrier(void)
{
  barrier_rounds(DART_TEAM_ALL);
  /* unit 0 and the odd units: on emulated nodes of two, one node holds
   * both of its units and the others one */
  dart_group_t g;
  CHECK_OK(dart_group_create(&g));
  for (int u = 0; u < nunits; u++)
    if (u == 0 || u % 2 == 1)
      CHECK_OK(dart_group_addmember(g, DART_GLOBAL_UNIT_ID(u)));
  dart_team_t t = DART_TEAM_NULL;
  CHECK_OK(dart_team_create(DART_TEAM_ALL, g, &t));
  CHECK_OK(dart_group_destroy(&g));
  if (t != DART_TEAM_NULL) {
    barrier_rounds(t);
    CHECK_OK(dart_team_destroy(&t));
  }
}

int main(int argc, char **argv)
{
  dart_test_init(&argc, &argv);
  nunits = dart_test_units;
  me = dart_test_unit;

  for (int i = 0; i < 3; i++) CHECK_OK(dart_barrier(DART_TEAM_ALL));
  test_barrier();

  test_bcast();
  test_scatter_gather();
  test_allgatherv();
  test_alltoall();

  static const dart_datatype_t arith_types[] = {
      DART_TYPE_INT, DART_TYPE_LONG, DART_TYPE_ULONGLONG, DART_TYPE_FLOAT,
      DART_TYPE_DOUBLE};
  static const dart_operation_t arith_ops[] = {DART_OP_MIN, DART_OP_MAX,
                                               DART_OP_SUM, DART_OP_PROD};
  for (size_t t = 0; t < 5; t++) {
    for (size_t o = 0; o < 4; o++) test_op(arith_ops[o], arith_types[t]);
  }
  static const dart_datatype_t bit_types[] = {DART_TYPE_INT, DART_TYPE_UINT,
                                              DART_TYPE_BYTE};
  static const dart_operation_t bit_ops[] = {DART_OP_BAND, DART_OP_BOR,
                                             DART_OP_BXOR, DART_OP_LAND,
                                             DART_OP_LOR,  DART_OP_LXOR};
  for (size_t t = 0; t < 3; t++) {
    for (size_t o = 0; o < 6; o++) test_op(bit_ops[o], bit_types[t]);
  }
  test_minmax(DART_TYPE_INT);
  test_minmax(DART_TYPE_DOUBLE);
  test_inplace();
  test_user_ops();
  test_derived_coll();
  test_p2p();
  test_bad_input();
  return dart_test_finish();
}
