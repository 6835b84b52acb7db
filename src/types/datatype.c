#include "types/datatype.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#include "base/log.h"
#include "base/runtime.h"
#include "base/slots.h"

dart__dtype_t dart__types__basic_types[DART_TYPE_LAST];
const uint8_t dart__types__basic_size[DART_TYPE_LAST] = {
    [DART_TYPE_BYTE] = 1,
    [DART_TYPE_SHORT] = sizeof(short),
    [DART_TYPE_INT] = sizeof(int),
    [DART_TYPE_UINT] = sizeof(unsigned),
    [DART_TYPE_LONG] = sizeof(long),
    [DART_TYPE_ULONG] = sizeof(unsigned long),
    [DART_TYPE_LONGLONG] = sizeof(long long),
    [DART_TYPE_ULONGLONG] = sizeof(unsigned long long),
    [DART_TYPE_FLOAT] = sizeof(float),
    [DART_TYPE_DOUBLE] = sizeof(double),
    [DART_TYPE_LONG_DOUBLE] = sizeof(long double)};
static dart__slots_t derived;
static mtx_t derived_lock; /* type creation and destruction only */

typedef struct {
  dart__dtype_t type;
  size_t *blocks; /* blocklen[] then offset[] for indexed types */
} derived_t;

static void set_basic(dart_datatype_t t, MPI_Datatype mpi, bool integral,
                      bool floating)
{
  dart__dtype_t *d = &dart__types__basic_types[t];
  size_t size = dart__types__basic_size[t];
  memset(d, 0, sizeof *d);
  d->kind = DART__DT_BASIC;
  d->base = t;
  d->elem_size = size;
  d->max_nelem = SIZE_MAX / size;
  d->num_elem = d->extent = d->end = d->nblocks = d->strided_block = 1;
  d->blocklen = &d->strided_block;
  d->offset = &d->zero;
  d->contiguous = true;
  d->integral = integral;
  d->floating = floating;
  d->mpi_elem = mpi;
  d->mpi_type = mpi;
}

dart_ret_t dart__types__dtype_init(void)
{
  /* DART_TYPE_BYTE moves as raw bytes; reductions treat it as signed char */
  set_basic(DART_TYPE_BYTE, MPI_SIGNED_CHAR, true, false);
  set_basic(DART_TYPE_SHORT, MPI_SHORT, true, false);
  set_basic(DART_TYPE_INT, MPI_INT, true, false);
  set_basic(DART_TYPE_UINT, MPI_UNSIGNED, true, false);
  set_basic(DART_TYPE_LONG, MPI_LONG, true, false);
  set_basic(DART_TYPE_ULONG, MPI_UNSIGNED_LONG, true, false);
  set_basic(DART_TYPE_LONGLONG, MPI_LONG_LONG, true, false);
  set_basic(DART_TYPE_ULONGLONG, MPI_UNSIGNED_LONG_LONG, true, false);
  set_basic(DART_TYPE_FLOAT, MPI_FLOAT, false, true);
  set_basic(DART_TYPE_DOUBLE, MPI_DOUBLE, false, true);
  set_basic(DART_TYPE_LONG_DOUBLE, MPI_LONG_DOUBLE, false, true);
  dart__base__slots_init(&derived, 1u << 16, DART__SLOTS_REUSE_DELAYED);
  if (mtx_init(&derived_lock, mtx_plain) != thrd_success) {
    DART_LOG_ERROR("cannot create a mutex");
    return DART_ERR_OTHER;
  }
  return DART_OK;
}

static void derived_free(derived_t *d)
{
  if (d->type.mpi_type != MPI_DATATYPE_NULL &&
      d->type.mpi_type != d->type.mpi_elem)
    MPI_Type_free(&d->type.mpi_type);
  if (d->type.kind == DART__DT_CUSTOM) MPI_Type_free(&d->type.mpi_elem);
  free(d->blocks);
  free(d);
}

void dart__types__dtype_fini(void)
{
  for (uint32_t id = 0; id < derived.next_fresh; id++) {
    derived_t *d = dart__base__slots_get(&derived, id);
    if (d) derived_free(d);
  }
  dart__base__slots_destroy(&derived);
  mtx_destroy(&derived_lock);
}

/* The slot id of a derived type's value; false for values beyond every
 * slot (checked before the cast, which would wrap them onto live ones). */
static bool derived_id(dart_datatype_t type, uint32_t *id)
{
  if (type < DART__DTYPE_FIRST_DERIVED ||
      type - DART__DTYPE_FIRST_DERIVED > (dart_datatype_t)UINT32_MAX)
    return false;
  *id = (uint32_t)(type - DART__DTYPE_FIRST_DERIVED);
  return true;
}

const dart__dtype_t *dart__types__dtype_derived(dart_datatype_t type)
{
  uint32_t id;
  derived_t *d = derived_id(type, &id) ? dart__base__slots_get(&derived, id)
                                       : NULL;
  return d ? &d->type : NULL;
}

/* Overflow-checked span in bytes of nelem elements of t. */
static int span_bytes(const dart__dtype_t *t, size_t nelem, size_t *bytes)
{
  size_t elems = nelem;
  if (!t->contiguous && nelem > 0) {
    size_t ninst = nelem / t->num_elem;
    if (ninst - 1 > (SIZE_MAX - t->end) / t->extent) return -1;
    elems = (ninst - 1) * t->extent + t->end;
  }
  if (elems > SIZE_MAX / t->elem_size) return -1;
  *bytes = elems * t->elem_size;
  return 0;
}

dart_ret_t dart__types__dtype_pair_checked(const char *func,
                                           dart_datatype_t src,
                                           dart_datatype_t dst, size_t nelem,
                                           const dart__dtype_t **src_t,
                                           const dart__dtype_t **dst_t)
{
  const dart__dtype_t *s = dart__types__dtype(src);
  const dart__dtype_t *d = dart__types__dtype(dst);
  if (s == NULL || d == NULL) {
    DART_LOG_ERROR_IN(func, "unknown datatype %ld", (long)(s ? dst : src));
    return DART_ERR_INVAL;
  }
  /* custom types match custom types of their size */
  bool same_base = s->base == d->base ||
                   (s->kind == DART__DT_CUSTOM && d->kind == DART__DT_CUSTOM &&
                    s->elem_size == d->elem_size);
  if (!same_base) {
    DART_LOG_ERROR_IN(func, "datatypes %ld and %ld have different base types",
                      (long)src, (long)dst);
    return DART_ERR_INVAL;
  }
  if (nelem % s->num_elem != 0 || nelem % d->num_elem != 0) {
    DART_LOG_ERROR_IN(func,
                      "nelem %zu is not a multiple of the elements per "
                      "instance of datatype %ld (%zu) and %ld (%zu)",
                      nelem, (long)src, s->num_elem, (long)dst, d->num_elem);
    return DART_ERR_INVAL;
  }
  size_t bytes;
  if (span_bytes(s, nelem, &bytes) != 0 || span_bytes(d, nelem, &bytes) != 0) {
    DART_LOG_ERROR_IN(func, "nelem %zu overflows the address space", nelem);
    return DART_ERR_INVAL;
  }
  *src_t = s;
  *dst_t = d;
  return DART_OK;
}

/* Walks a layout as runs of consecutive elements. */
typedef struct {
  const dart__dtype_t *t;
  size_t inst;  /* instance */
  size_t block; /* block in the instance */
  size_t done;  /* elements of the block already passed */
} run_iter_t;

/* Element offset of the current position and elements left in its run. */
static inline size_t run_at(const run_iter_t *it, size_t *left)
{
  const dart__dtype_t *t = it->t;
  *left = t->blocklen[it->block] - it->done;
  return it->inst * t->extent + t->offset[it->block] + it->done;
}

static inline void run_advance(run_iter_t *it, size_t n)
{
  it->done += n;
  if (it->done == it->t->blocklen[it->block]) {
    it->done = 0;
    if (++it->block == it->t->nblocks) {
      it->block = 0;
      it->inst++;
    }
  }
}

int dart__types__dtype_runs(const dart__dtype_t *dt, const dart__dtype_t *st,
                            size_t nelem, dart__dtype_run_fn fn, void *ctx)
{
  run_iter_t s = {st, 0, 0, 0}, d = {dt, 0, 0, 0};
  size_t done = 0;
  while (done < nelem) {
    size_t s_left, d_left, s_at, d_at;
    if (st->contiguous) {
      s_at = done;
      s_left = nelem - done;
    } else {
      s_at = run_at(&s, &s_left);
    }
    if (dt->contiguous) {
      d_at = done;
      d_left = nelem - done;
    } else {
      d_at = run_at(&d, &d_left);
    }
    size_t n = s_left < d_left ? s_left : d_left;
    int ret = fn(ctx, d_at, s_at, n);
    if (ret != 0) return ret;
    if (!st->contiguous) run_advance(&s, n);
    if (!dt->contiguous) run_advance(&d, n);
    done += n;
  }
  return 0;
}

typedef struct {
  char *dst;
  const char *src;
  size_t es;
} copy_ctx_t;

static int copy_run(void *ctx, size_t d_at, size_t s_at, size_t n)
{
  const copy_ctx_t *c = ctx;
  memcpy(c->dst + d_at * c->es, c->src + s_at * c->es, n * c->es);
  return 0;
}

void dart__types__dtype_copy_layout(void *dst, const dart__dtype_t *dt,
                                    const void *src,
                                    const dart__dtype_t *st, size_t nelem)
{
  copy_ctx_t c = {dst, src, st->elem_size};
  dart__types__dtype_runs(dt, st, nelem, copy_run, &c);
}

/* ---- public constructors ---- */

static dart_ret_t derived_insert(derived_t *d, dart_datatype_t *newtype)
{
  uint32_t id;
  mtx_lock(&derived_lock);
  int ret = dart__base__slots_insert(&derived, d, &id);
  mtx_unlock(&derived_lock);
  if (ret != 0) return DART_ERR_NOMEM;
  *newtype = DART__DTYPE_FIRST_DERIVED + (dart_datatype_t)id;
  return DART_OK;
}

/* Builds the MPI type of one instance, with the instance's extent. */
static int derived_mpi_type(dart__dtype_t *t)
{
  int nblocks = (int)t->nblocks;
  int *lens = malloc(t->nblocks * sizeof *lens);
  int *offs = malloc(t->nblocks * sizeof *offs);
  MPI_Datatype blocks = MPI_DATATYPE_NULL;
  int ret = -1;
  if (lens == NULL || offs == NULL) goto out;
  for (size_t i = 0; i < t->nblocks; i++) {
    lens[i] = (int)t->blocklen[i];
    offs[i] = (int)t->offset[i];
  }
  if (MPI_Type_indexed(nblocks, lens, offs, t->mpi_elem, &blocks) !=
      MPI_SUCCESS)
    goto out;
  if (MPI_Type_create_resized(blocks, 0,
                              (MPI_Aint)(t->extent * t->elem_size),
                              &t->mpi_type) != MPI_SUCCESS)
    goto out;
  if (MPI_Type_commit(&t->mpi_type) != MPI_SUCCESS) {
    MPI_Type_free(&t->mpi_type);
    goto out;
  }
  ret = 0;
out:
  if (blocks != MPI_DATATYPE_NULL) MPI_Type_free(&blocks);
  free(offs);
  free(lens);
  return ret;
}

/* Builds d's MPI type and enters d under a new id; frees d on failure
 * (logged as func). */
static dart_ret_t derived_finish(const char *func, derived_t *d,
                                 dart_datatype_t *newtype)
{
  d->type.mpi_type = MPI_DATATYPE_NULL;
  if (derived_mpi_type(&d->type) != 0) {
    DART_LOG_ERROR_IN(func, "cannot build the MPI type");
    derived_free(d);
    return DART_ERR_OTHER;
  }
  dart_ret_t ret = derived_insert(d, newtype);
  if (ret != DART_OK) derived_free(d);
  return ret;
}

static const dart__dtype_t *basic_base(const char *func,
                                       dart_datatype_t basetype)
{
  if (basetype > DART_TYPE_UNDEFINED && basetype < DART_TYPE_LAST)
    return &dart__types__basic_types[basetype];
  DART_LOG_ERROR_IN(func, "base type %ld is not a basic type", (long)basetype);
  return NULL;
}

dart_ret_t dart_type_create_strided(dart_datatype_t basetype, size_t stride,
                                    size_t blocklen, dart_datatype_t *newtype)
{
  DART__CHECK_INIT();
  const dart__dtype_t *base = basic_base(__func__, basetype);
  if (base == NULL) return DART_ERR_INVAL;
  if (newtype == NULL || blocklen == 0 || stride < blocklen ||
      stride > INT32_MAX) {
    DART_LOG_ERROR("invalid arguments: stride %zu, blocklen %zu, newtype %p",
                   stride, blocklen, (void *)newtype);
    return DART_ERR_INVAL;
  }
  derived_t *d = calloc(1, sizeof *d);
  if (d == NULL) return DART_ERR_NOMEM;
  d->type = *base;
  d->type.kind = DART__DT_STRIDED;
  d->type.contiguous = false;
  d->type.num_elem = blocklen;
  d->type.extent = stride;
  d->type.end = blocklen;
  d->type.nblocks = 1;
  d->type.strided_block = blocklen;
  d->type.blocklen = &d->type.strided_block;
  d->type.offset = &d->type.zero;
  return derived_finish(__func__, d, newtype);
}

dart_ret_t dart_type_create_indexed(dart_datatype_t basetype, size_t count,
                                    const size_t blocklen[],
                                    const size_t offset[],
                                    dart_datatype_t *newtype)
{
  DART__CHECK_INIT();
  const dart__dtype_t *base = basic_base(__func__, basetype);
  if (base == NULL) return DART_ERR_INVAL;
  if (newtype == NULL || count == 0 || count > INT32_MAX || blocklen == NULL ||
      offset == NULL) {
    DART_LOG_ERROR("invalid arguments: count %zu, blocklen %p, offset %p, "
                   "newtype %p", count, (const void *)blocklen,
                   (const void *)offset, (void *)newtype);
    return DART_ERR_INVAL;
  }
  size_t total = 0, lo = SIZE_MAX, hi = 0;
  for (size_t i = 0; i < count; i++) {
    if (blocklen[i] == 0 || blocklen[i] > INT32_MAX || offset[i] > INT32_MAX) {
      DART_LOG_ERROR("block %zu: length %zu at offset %zu is invalid", i,
                     blocklen[i], offset[i]);
      return DART_ERR_INVAL;
    }
    total += blocklen[i];
    if (offset[i] < lo) lo = offset[i];
    if (offset[i] + blocklen[i] > hi) hi = offset[i] + blocklen[i];
  }
  derived_t *d = calloc(1, sizeof *d);
  if (d == NULL) return DART_ERR_NOMEM;
  d->blocks = malloc(2 * count * sizeof *d->blocks);
  if (d->blocks == NULL) {
    free(d);
    return DART_ERR_NOMEM;
  }
  memcpy(d->blocks, blocklen, count * sizeof *blocklen);
  memcpy(d->blocks + count, offset, count * sizeof *offset);
  d->type = *base;
  d->type.kind = DART__DT_INDEXED;
  d->type.contiguous = false;
  d->type.num_elem = total;
  d->type.extent = hi - lo; /* MPI's extent: lower bound at the first block */
  d->type.end = hi;
  d->type.nblocks = count;
  d->type.blocklen = d->blocks;
  d->type.offset = d->blocks + count;
  return derived_finish(__func__, d, newtype);
}

dart_ret_t dart_type_create_custom(size_t num_bytes, dart_datatype_t *newtype)
{
  DART__CHECK_INIT();
  if (newtype == NULL || num_bytes == 0 || num_bytes > INT32_MAX) {
    DART_LOG_ERROR("invalid arguments: num_bytes %zu, newtype %p", num_bytes,
                   (void *)newtype);
    return DART_ERR_INVAL;
  }
  derived_t *d = calloc(1, sizeof *d);
  if (d == NULL) return DART_ERR_NOMEM;
  d->type = dart__types__basic_types[DART_TYPE_BYTE];
  d->type.kind = DART__DT_CUSTOM;
  d->type.elem_size = num_bytes;
  d->type.max_nelem = SIZE_MAX / num_bytes;
  d->type.integral = false;
  d->type.blocklen = &d->type.strided_block;
  d->type.offset = &d->type.zero;
  if (MPI_Type_contiguous((int)num_bytes, MPI_BYTE, &d->type.mpi_elem) !=
          MPI_SUCCESS ||
      MPI_Type_commit(&d->type.mpi_elem) != MPI_SUCCESS) {
    DART_LOG_ERROR("cannot build the MPI type");
    free(d);
    return DART_ERR_OTHER;
  }
  d->type.mpi_type = d->type.mpi_elem;
  dart_ret_t ret = derived_insert(d, newtype);
  if (ret != DART_OK) {
    derived_free(d);
    return ret;
  }
  /* a custom type is its own base: only the same type matches it */
  d->type.base = *newtype;
  return DART_OK;
}

dart_ret_t dart_type_destroy(dart_datatype_t *dart_type)
{
  DART__CHECK_INIT();
  if (dart_type == NULL) {
    DART_LOG_ERROR("dart_type is NULL");
    return DART_ERR_INVAL;
  }
  mtx_lock(&derived_lock);
  derived_t *d = NULL;
  uint32_t id;
  if (derived_id(*dart_type, &id)) d = dart__base__slots_get(&derived, id);
  if (d != NULL) dart__base__slots_remove(&derived, id);
  mtx_unlock(&derived_lock);
  if (d == NULL) {
    DART_LOG_ERROR("datatype %ld is not a live derived type", (long)*dart_type);
    return DART_ERR_INVAL;
  }
  derived_free(d);
  *dart_type = DART_TYPE_UNDEFINED;
  return DART_OK;
}

dart_ret_t dart__types__mpi_buf(const char *func, const dart__dtype_t *t,
                                size_t nelem, dart__mpi_buf_t *out)
{
  MPI_Datatype unit = t->contiguous ? t->mpi_elem : t->mpi_type;
  size_t n = t->contiguous ? nelem : nelem / t->num_elem;
  out->owned = false;
  if (n <= INT_MAX) {
    out->type = unit;
    out->count = (int)n;
    return DART_OK;
  }
  /* n = q * 2^30 + r units as a single struct element */
  const size_t block = (size_t)1 << 30;
  MPI_Datatype blocks = MPI_DATATYPE_NULL, full = MPI_DATATYPE_NULL,
               rest = MPI_DATATYPE_NULL;
  MPI_Aint lb, extent;
  size_t q = n / block, r = n % block;
  if (q > INT_MAX) goto too_large;
  MPI_Type_get_extent(unit, &lb, &extent);
  MPI_Type_contiguous((int)block, unit, &blocks);
  MPI_Type_contiguous((int)q, blocks, &full);
  MPI_Type_contiguous((int)r, unit, &rest);
  int lens[2] = {1, 1};
  MPI_Aint displs[2] = {0, (MPI_Aint)(q * block) * extent};
  MPI_Datatype parts[2] = {full, rest};
  MPI_Datatype whole;
  int ret = MPI_Type_create_struct(2, lens, displs, parts, &whole);
  MPI_Type_free(&blocks);
  MPI_Type_free(&full);
  MPI_Type_free(&rest);
  if (ret != MPI_SUCCESS) goto too_large;
  /* consecutive elements of the big type follow each other exactly */
  MPI_Type_create_resized(whole, 0, (MPI_Aint)n * extent, &out->type);
  MPI_Type_free(&whole);
  MPI_Type_commit(&out->type);
  out->count = 1;
  out->owned = true;
  return DART_OK;
too_large:
  DART_LOG_ERROR_IN(func, "%zu elements are too many", nelem);
  return DART_ERR_INVAL;
}

void dart__types__mpi_buf_free(dart__mpi_buf_t *b)
{
  if (b->owned) MPI_Type_free(&b->type);
  b->owned = false;
}
