#include "types/op.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#include "base/log.h"
#include "base/runtime.h"
#include "base/slots.h"

/* A user operation's MPI objects are made when an MPI collective first
 * needs them (dart__types__op_mpi): the collectives combine in the
 * process, and making them costs more than a small collective (DASH makes
 * and destroys an operation for every dash::reduce). */
typedef struct {
  dart_operator_t fn;
  void *userdata;
  dart_datatype_t dtype;
  bool commute;
  atomic_bool mpi_made;  /* under user_ops_lock */
  MPI_Op mpi_op;
  MPI_Datatype mpi_type; /* carries this struct as an attribute */
} user_op_t;

static dart__slots_t user_ops;
static mtx_t user_ops_lock;
static int op_keyval = MPI_KEYVAL_INVALID;
static MPI_Op minmax_op = MPI_OP_NULL;
static MPI_Datatype minmax_pair[DART_TYPE_LAST];

/* ---- MINMAX: element-wise over {min, max} pairs ---- */

#define MINMAX_CASE(dart_t, c_type)                                        \
  if (*dt == minmax_pair[dart_t]) {                                         \
    const c_type *a = in;                                                   \
    c_type *b = inout;                                                      \
    for (int i = 0; i < *len; i++) {                                        \
      if (a[2 * i] < b[2 * i]) b[2 * i] = a[2 * i];                         \
      if (a[2 * i + 1] > b[2 * i + 1]) b[2 * i + 1] = a[2 * i + 1];         \
    }                                                                       \
    return;                                                                 \
  }

static void minmax_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
  MINMAX_CASE(DART_TYPE_BYTE, signed char)
  MINMAX_CASE(DART_TYPE_SHORT, short)
  MINMAX_CASE(DART_TYPE_INT, int)
  MINMAX_CASE(DART_TYPE_UINT, unsigned)
  MINMAX_CASE(DART_TYPE_LONG, long)
  MINMAX_CASE(DART_TYPE_ULONG, unsigned long)
  MINMAX_CASE(DART_TYPE_LONGLONG, long long)
  MINMAX_CASE(DART_TYPE_ULONGLONG, unsigned long long)
  MINMAX_CASE(DART_TYPE_FLOAT, float)
  MINMAX_CASE(DART_TYPE_DOUBLE, double)
  MINMAX_CASE(DART_TYPE_LONG_DOUBLE, long double)
}

/* ---- user operations ---- */

static void user_op_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
  user_op_t *op = NULL;
  int found = 0;
  MPI_Type_get_attr(*dt, op_keyval, &op, &found);
  if (found && op) op->fn(in, inout, (size_t)*len, op->userdata);
}

dart_ret_t dart__types__op_init(void)
{
  dart__base__slots_init(&user_ops, 1u << 16, DART__SLOTS_REUSE_DELAYED);
  for (dart_datatype_t t = 0; t < DART_TYPE_LAST; t++)
    minmax_pair[t] = MPI_DATATYPE_NULL;
  if (mtx_init(&user_ops_lock, mtx_plain) != thrd_success) {
    DART_LOG_ERROR("cannot create a mutex");
    return DART_ERR_OTHER;
  }
  DART__MPI_CHECK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN,
                                         MPI_TYPE_NULL_DELETE_FN, &op_keyval,
                                         NULL));
  DART__MPI_CHECK(MPI_Op_create(minmax_fn, 1, &minmax_op));
  for (dart_datatype_t t = DART_TYPE_BYTE; t < DART_TYPE_LAST; t++) {
    DART__MPI_CHECK(MPI_Type_contiguous(2, dart__types__dtype(t)->mpi_elem,
                                        &minmax_pair[t]));
    DART__MPI_CHECK(MPI_Type_commit(&minmax_pair[t]));
  }
  return DART_OK;
}

static void user_op_free(user_op_t *op)
{
  if (atomic_load_explicit(&op->mpi_made, memory_order_acquire)) {
    MPI_Op_free(&op->mpi_op);
    MPI_Type_delete_attr(op->mpi_type, op_keyval);
    MPI_Type_free(&op->mpi_type);
  }
  free(op);
}

void dart__types__op_fini(void)
{
  for (uint32_t id = 0; id < user_ops.next_fresh; id++) {
    user_op_t *op = dart__base__slots_get(&user_ops, id);
    if (op) user_op_free(op);
  }
  dart__base__slots_destroy(&user_ops);
  mtx_destroy(&user_ops_lock);
  for (dart_datatype_t t = DART_TYPE_BYTE; t < DART_TYPE_LAST; t++)
    if (minmax_pair[t] != MPI_DATATYPE_NULL) MPI_Type_free(&minmax_pair[t]);
  if (minmax_op != MPI_OP_NULL) MPI_Op_free(&minmax_op);
  if (op_keyval != MPI_KEYVAL_INVALID) MPI_Type_free_keyval(&op_keyval);
}

/* The slot id of a user operation's value; false for values beyond every
 * slot (checked before the cast, which would wrap them onto live ones). */
static bool user_id(dart_operation_t op, uint32_t *id)
{
  if (op < DART__OP_FIRST_USER || op - DART__OP_FIRST_USER > UINT32_MAX)
    return false;
  *id = (uint32_t)(op - DART__OP_FIRST_USER);
  return true;
}

/* The user operation op for elements of t, or NULL, logged as func. */
static user_op_t *user_op(const char *func, dart_operation_t op,
                          const dart__dtype_t *t)
{
  uint32_t id;
  user_op_t *u = user_id(op, &id) ? dart__base__slots_get(&user_ops, id)
                                  : NULL;
  if (u == NULL) {
    DART_LOG_ERROR_IN(func, "unknown operation %lu", (unsigned long)op);
    return NULL;
  }
  if (dart__types__dtype(u->dtype) != t) {
    DART_LOG_ERROR_IN(func,
                      "operation %lu was created for datatype %ld, not this "
                      "one", (unsigned long)op, (long)u->dtype);
    return NULL;
  }
  return u;
}

/* Makes u's MPI objects where they are not yet. */
static dart_ret_t user_op_mpi(const char *func, user_op_t *u)
{
  if (atomic_load_explicit(&u->mpi_made, memory_order_acquire))
    return DART_OK;
  dart_ret_t ret = DART_OK;
  mtx_lock(&user_ops_lock);
  if (!atomic_load_explicit(&u->mpi_made, memory_order_relaxed)) {
    u->mpi_op = MPI_OP_NULL;
    u->mpi_type = MPI_DATATYPE_NULL;
    if (MPI_Type_dup(dart__types__dtype(u->dtype)->mpi_elem, &u->mpi_type) !=
            MPI_SUCCESS ||
        MPI_Type_set_attr(u->mpi_type, op_keyval, u) != MPI_SUCCESS ||
        MPI_Op_create(user_op_fn, u->commute, &u->mpi_op) != MPI_SUCCESS) {
      DART_LOG_ERROR_IN(func, "cannot create the MPI operation");
      if (u->mpi_type != MPI_DATATYPE_NULL) MPI_Type_free(&u->mpi_type);
      ret = DART_ERR_OTHER;
    } else {
      atomic_store_explicit(&u->mpi_made, true, memory_order_release);
    }
  }
  mtx_unlock(&user_ops_lock);
  return ret;
}

dart_ret_t dart__types__op_mpi(const char *func, dart_operation_t op,
                               const dart__dtype_t *t, MPI_Op *mpi_op,
                               MPI_Datatype *mpi_type, size_t *per_mpi_elem)
{
  *per_mpi_elem = 1;
  *mpi_type = t->mpi_elem;
  if (op >= DART__OP_FIRST_USER) {
    user_op_t *u = user_op(func, op, t);
    if (u == NULL) return DART_ERR_INVAL;
    dart_ret_t ret = user_op_mpi(func, u);
    if (ret != DART_OK) return ret;
    *mpi_op = u->mpi_op;
    *mpi_type = u->mpi_type;
    return DART_OK;
  }
  bool arithmetic = t->integral || t->floating;
  switch (op) {
    case DART_OP_MIN: *mpi_op = MPI_MIN; break;
    case DART_OP_MAX: *mpi_op = MPI_MAX; break;
    case DART_OP_SUM: *mpi_op = MPI_SUM; break;
    case DART_OP_PROD: *mpi_op = MPI_PROD; break;
    case DART_OP_BAND: *mpi_op = MPI_BAND; arithmetic = t->integral; break;
    case DART_OP_BOR: *mpi_op = MPI_BOR; arithmetic = t->integral; break;
    case DART_OP_BXOR: *mpi_op = MPI_BXOR; arithmetic = t->integral; break;
    case DART_OP_LAND: *mpi_op = MPI_LAND; arithmetic = t->integral; break;
    case DART_OP_LOR: *mpi_op = MPI_LOR; arithmetic = t->integral; break;
    case DART_OP_LXOR: *mpi_op = MPI_LXOR; arithmetic = t->integral; break;
    case DART_OP_MINMAX:
      if (!arithmetic) break;
      *mpi_op = minmax_op;
      *mpi_type = minmax_pair[t->base];
      *per_mpi_elem = 2;
      return DART_OK;
    default:
      DART_LOG_ERROR_IN(func, "operation %lu is not a reduction",
                        (unsigned long)op);
      return DART_ERR_INVAL;
  }
  if (!arithmetic) {
    DART_LOG_ERROR_IN(func, "operation %lu does not apply to datatype %ld",
                      (unsigned long)op, (long)t->base);
    return DART_ERR_INVAL;
  }
  return DART_OK;
}

/* ---- local combinations (dart__types__op_local) ---- */

/* Each (type, operation): a loop over consecutive elements and one over
 * elements at indices (applied in order, so a repeated index sees each
 * operand in turn). */
#define LOCAL_LOOPS(name, c_type, expr)                                    \
  static void name(const void *in_, void *inout_, size_t n, void *ctx)    \
  {                                                                         \
    (void)ctx;                                                              \
    const c_type *in = in_;                                                 \
    c_type *io = inout_;                                                    \
    for (size_t i = 0; i < n; i++) {                                        \
      c_type a = io[i], b = in[i];                                          \
      io[i] = (expr);                                                       \
    }                                                                       \
  }                                                                         \
  static void name##_at(const void *in_, const uint32_t *in_at,            \
                        void *inout_, const uint32_t *at, size_t n,         \
                        void *ctx)                                          \
  {                                                                         \
    (void)ctx;                                                              \
    const c_type *in = in_;                                                 \
    c_type *io = inout_;                                                    \
    if (in_at == NULL)                                                      \
      for (size_t i = 0; i < n; i++) {                                      \
        c_type a = io[at[i]], b = in[i];                                    \
        io[at[i]] = (expr);                                                 \
      }                                                                     \
    else                                                                    \
      for (size_t i = 0; i < n; i++) {                                      \
        c_type a = io[at[i]], b = in[in_at[i]];                             \
        io[at[i]] = (expr);                                                 \
      }                                                                     \
  }

typedef struct {
  void (*fn)(const void *, void *, size_t, void *);
  void (*at)(const void *, const uint32_t *, void *, const uint32_t *,
             size_t, void *);
} local_pair_t;
#define PAIR(name) {name, name##_at}

/* Each type's loops, in the order of the operations' values
 * (DART_OP_MIN .. DART_OP_LXOR; none for MINMAX); floating types have
 * the arithmetic ones only. */
#define LOCAL_ARITH(tag, c_type)                                           \
  LOCAL_LOOPS(tag##_min, c_type, b < a ? b : a)                            \
  LOCAL_LOOPS(tag##_max, c_type, b > a ? b : a)                            \
  LOCAL_LOOPS(tag##_sum, c_type, a + b)                                    \
  LOCAL_LOOPS(tag##_prod, c_type, a * b)
#define LOCAL_INTEGRAL(tag, c_type)                                        \
  LOCAL_ARITH(tag, c_type)                                                 \
  LOCAL_LOOPS(tag##_band, c_type, a & b)                                   \
  LOCAL_LOOPS(tag##_land, c_type, a && b)                                  \
  LOCAL_LOOPS(tag##_bor, c_type, a | b)                                    \
  LOCAL_LOOPS(tag##_lor, c_type, a || b)                                   \
  LOCAL_LOOPS(tag##_bxor, c_type, a ^ b)                                   \
  LOCAL_LOOPS(tag##_lxor, c_type, !a != !b)                                \
  static const local_pair_t tag##_loops[] = {                              \
      PAIR(tag##_min),  PAIR(tag##_max),  {NULL, NULL},                    \
      PAIR(tag##_sum),  PAIR(tag##_prod), PAIR(tag##_band),                \
      PAIR(tag##_land), PAIR(tag##_bor),  PAIR(tag##_lor),                 \
      PAIR(tag##_bxor), PAIR(tag##_lxor)};
#define LOCAL_FLOATING(tag, c_type)                                        \
  LOCAL_ARITH(tag, c_type)                                                 \
  static const local_pair_t tag##_loops[] = {                              \
      PAIR(tag##_min), PAIR(tag##_max), {NULL, NULL}, PAIR(tag##_sum),     \
      PAIR(tag##_prod)};

LOCAL_INTEGRAL(byte, signed char)
LOCAL_INTEGRAL(short, short)
LOCAL_INTEGRAL(int, int)
LOCAL_INTEGRAL(uint, unsigned)
LOCAL_INTEGRAL(long, long)
LOCAL_INTEGRAL(ulong, unsigned long)
LOCAL_INTEGRAL(longlong, long long)
LOCAL_INTEGRAL(ulonglong, unsigned long long)
LOCAL_FLOATING(float, float)
LOCAL_FLOATING(double, double)
LOCAL_FLOATING(ldouble, long double)

static const local_pair_t *const local_loops[DART_TYPE_LAST] = {
    [DART_TYPE_BYTE] = byte_loops,         [DART_TYPE_SHORT] = short_loops,
    [DART_TYPE_INT] = int_loops,           [DART_TYPE_UINT] = uint_loops,
    [DART_TYPE_LONG] = long_loops,         [DART_TYPE_ULONG] = ulong_loops,
    [DART_TYPE_LONGLONG] = longlong_loops,
    [DART_TYPE_ULONGLONG] = ulonglong_loops,
    [DART_TYPE_FLOAT] = float_loops,       [DART_TYPE_DOUBLE] = double_loops,
    [DART_TYPE_LONG_DOUBLE] = ldouble_loops,
};

/* REPLACE copies elements of the type's size (ctx: the type). */
static void local_replace(const void *in, void *inout, size_t n, void *ctx)
{
  memcpy(inout, in, n * ((const dart__dtype_t *)ctx)->elem_size);
}

static void local_replace_at(const void *in, const uint32_t *in_at,
                             void *inout, const uint32_t *at, size_t n,
                             void *ctx)
{
  size_t es = ((const dart__dtype_t *)ctx)->elem_size;
#define REPLACE_AT(T)                                                      \
  if (in_at == NULL)                                                       \
    for (size_t i = 0; i < n; i++)                                         \
      ((T *)inout)[at[i]] = ((const T *)in)[i];                            \
  else                                                                     \
    for (size_t i = 0; i < n; i++)                                         \
      ((T *)inout)[at[i]] = ((const T *)in)[in_at[i]];                     \
  return
  switch (es) {
  case 1: REPLACE_AT(uint8_t);
  case 2: REPLACE_AT(uint16_t);
  case 4: REPLACE_AT(uint32_t);
  case 8: REPLACE_AT(uint64_t);
  default:
    for (size_t i = 0; i < n; i++)
      memcpy((char *)inout + (size_t)at[i] * es,
             (const char *)in + (in_at ? in_at[i] : i) * es, es);
  }
#undef REPLACE_AT
}

static void local_keep(const void *in, void *inout, size_t n, void *ctx)
{
  (void)in, (void)inout, (void)n, (void)ctx;
}

static void local_keep_at(const void *in, const uint32_t *in_at,
                          void *inout, const uint32_t *at, size_t n,
                          void *ctx)
{
  (void)in, (void)in_at, (void)inout, (void)at, (void)n, (void)ctx;
}

static void local_user(const void *in, void *inout, size_t n, void *ctx)
{
  const user_op_t *u = ctx;
  u->fn(in, inout, n, u->userdata);
}

static void local_user_at(const void *in, const uint32_t *in_at,
                          void *inout, const uint32_t *at, size_t n,
                          void *ctx)
{
  const user_op_t *u = ctx;
  size_t es = dart__types__dtype(u->dtype)->elem_size;
  for (size_t i = 0; i < n; i++)
    u->fn((const char *)in + (in_at ? in_at[i] : i) * es,
          (char *)inout + (size_t)at[i] * es, 1, u->userdata);
}

/* MINMAX in this process: n elements are n / 2 {min, max} pairs. */
#define LOCAL_MINMAX(tag, c_type)                                          \
  static void tag##_minmax(const void *in_, void *inout_, size_t n,        \
                           void *ctx)                                       \
  {                                                                         \
    (void)ctx;                                                              \
    const c_type *in = in_;                                                 \
    c_type *io = inout_;                                                    \
    for (size_t i = 0; i + 1 < n; i += 2) {                                 \
      if (in[i] < io[i]) io[i] = in[i];                                     \
      if (in[i + 1] > io[i + 1]) io[i + 1] = in[i + 1];                     \
    }                                                                       \
  }
LOCAL_MINMAX(byte, signed char)
LOCAL_MINMAX(short, short)
LOCAL_MINMAX(int, int)
LOCAL_MINMAX(uint, unsigned)
LOCAL_MINMAX(long, long)
LOCAL_MINMAX(ulong, unsigned long)
LOCAL_MINMAX(longlong, long long)
LOCAL_MINMAX(ulonglong, unsigned long long)
LOCAL_MINMAX(float, float)
LOCAL_MINMAX(double, double)
LOCAL_MINMAX(ldouble, long double)

typedef void (*local_fn_t)(const void *, void *, size_t, void *);
static const local_fn_t minmax_loops[DART_TYPE_LAST] = {
    [DART_TYPE_BYTE] = byte_minmax,         [DART_TYPE_SHORT] = short_minmax,
    [DART_TYPE_INT] = int_minmax,           [DART_TYPE_UINT] = uint_minmax,
    [DART_TYPE_LONG] = long_minmax,         [DART_TYPE_ULONG] = ulong_minmax,
    [DART_TYPE_LONGLONG] = longlong_minmax,
    [DART_TYPE_ULONGLONG] = ulonglong_minmax,
    [DART_TYPE_FLOAT] = float_minmax,       [DART_TYPE_DOUBLE] = double_minmax,
    [DART_TYPE_LONG_DOUBLE] = ldouble_minmax,
};

dart_ret_t dart__types__op_local(const char *func, dart_operation_t op,
                                 const dart__dtype_t *t,
                                 dart__op_local_t *local)
{
  if (t->kind != DART__DT_BASIC) {
    DART_LOG_ERROR_IN(func, "datatype %ld is not a basic type",
                      (long)t->base);
    return DART_ERR_INVAL;
  }
  if (op == DART_OP_REPLACE || op == DART_OP_NO_OP) {
    bool replace = op == DART_OP_REPLACE;
    local->fn = replace ? local_replace : local_keep;
    local->at = replace ? local_replace_at : local_keep_at;
    local->ctx = (void *)t;
    local->copies = replace;
    return DART_OK;
  }
  if (op == DART_OP_MINMAX) {
    DART_LOG_ERROR_IN(func, "DART_OP_MINMAX combines pairs, not elements");
    return DART_ERR_INVAL;
  }
  if (op >= DART__OP_FIRST_USER) {
    user_op_t *u = user_op(func, op, t);
    if (u == NULL) return DART_ERR_INVAL;
    local->fn = local_user;
    local->at = local_user_at;
    local->ctx = u;
    local->copies = false;
    return DART_OK;
  }
  MPI_Op mpi_op;
  MPI_Datatype mpi_type;
  size_t per_mpi_elem;
  dart_ret_t ret =
      dart__types__op_mpi(func, op, t, &mpi_op, &mpi_type, &per_mpi_elem);
  if (ret != DART_OK) return ret;
  /* dart__types__op_mpi admitted op for t: its loops exist */
  const local_pair_t *pair = &local_loops[t->base][op - DART_OP_MIN];
  local->fn = pair->fn;
  local->at = pair->at;
  local->ctx = NULL;
  local->copies = false;
  return DART_OK;
}

dart_ret_t dart__types__op_reduce(const char *func, dart_operation_t op,
                                  const dart__dtype_t *t,
                                  dart__op_reduce_t *out)
{
  dart__op_reduce_t r = {.granule = 1, .commutes = true};
  if (op >= DART__OP_FIRST_USER) {
    user_op_t *u = user_op(func, op, t);
    if (u == NULL) return DART_ERR_INVAL;
    r.fn = local_user;
    r.ctx = u;
    r.commutes = u->commute;
    *out = r;
    return DART_OK;
  }
  MPI_Op mpi_op;
  MPI_Datatype mpi_type;
  dart_ret_t ret =
      dart__types__op_mpi(func, op, t, &mpi_op, &mpi_type, &r.granule);
  if (ret != DART_OK) return ret;
  if (op == DART_OP_MINMAX) {
    r.fn = minmax_loops[t->base];
  } else {
    /* dart__types__op_mpi admitted op for t: its loop exists */
    r.fn = local_loops[t->base][op - DART_OP_MIN].fn;
  }
  *out = r;
  return DART_OK;
}

dart_ret_t dart_op_create(dart_operator_t op, void *userdata, bool commute,
                          dart_datatype_t dtype, bool dtype_is_tmp,
                          dart_operation_t *new_op)
{
  DART__CHECK_INIT();
  const dart__dtype_t *t = dart__types__dtype(dtype);
  if (op == NULL || new_op == NULL || t == NULL || !t->contiguous) {
    DART_LOG_ERROR("invalid arguments: op %p, new_op %p, dtype %ld (a known "
                   "contiguous type is needed)",
                   op ? (void *)1 : NULL, (void *)new_op, (long)dtype);
    return DART_ERR_INVAL;
  }
  user_op_t *u = calloc(1, sizeof *u);
  if (u == NULL) return DART_ERR_NOMEM;
  u->fn = op;
  u->userdata = userdata;
  u->dtype = dtype;
  u->commute = commute;
  (void)dtype_is_tmp; /* a hint; the caller keeps and destroys dtype */
  atomic_init(&u->mpi_made, false);
  uint32_t id;
  mtx_lock(&user_ops_lock);
  int ret = dart__base__slots_insert(&user_ops, u, &id);
  mtx_unlock(&user_ops_lock);
  if (ret != 0) {
    user_op_free(u);
    return DART_ERR_NOMEM;
  }
  *new_op = DART__OP_FIRST_USER + id;
  return DART_OK;
}

dart_ret_t dart_op_destroy(dart_operation_t *op)
{
  DART__CHECK_INIT();
  if (op == NULL) {
    DART_LOG_ERROR("op is NULL");
    return DART_ERR_INVAL;
  }
  user_op_t *u = NULL;
  mtx_lock(&user_ops_lock);
  uint32_t id;
  if (user_id(*op, &id)) {
    u = dart__base__slots_get(&user_ops, id);
    if (u) dart__base__slots_remove(&user_ops, id);
  }
  mtx_unlock(&user_ops_lock);
  if (u == NULL) {
    DART_LOG_ERROR("operation %lu is not a live user operation",
                   (unsigned long)*op);
    return DART_ERR_INVAL;
  }
  user_op_free(u);
  *op = DART_OP_UNDEFINED;
  return DART_OK;
}
