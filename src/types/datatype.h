/*
 * Datatypes: the basic types, and derived ones (strided, indexed, custom)
 * whose dart_datatype_t values index a slot table, so that a bad value is
 * rejected in O(1) without dereferencing it.
 *
 * Layout: one instance of a type holds num_elem base elements in nblocks
 * blocks (blocklen[i] elements at element offset[i]); instance k starts at
 * k * extent elements. nelem elements span (ninst - 1) * extent + end
 * elements, end being the end of an instance's last element.
 */
#ifndef DART__TYPES__DATATYPE_H_
#define DART__TYPES__DATATYPE_H_

#include <dart/dart_types.h>
#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

typedef enum {
  DART__DT_BASIC,
  DART__DT_CUSTOM,
  DART__DT_STRIDED,
  DART__DT_INDEXED
} dart__dtype_kind_t;

typedef struct {
  dart__dtype_kind_t kind;
  dart_datatype_t base;  /* basic type, or the custom type itself */
  size_t elem_size;      /* bytes of one base element */
  size_t max_nelem;      /* largest element count whose bytes fit size_t */
  size_t num_elem;       /* base elements per instance */
  size_t extent;         /* elements between instances */
  size_t end;            /* elements from instance start to its last end */
  size_t nblocks;
  const size_t *blocklen;
  const size_t *offset;
  size_t strided_block;  /* storage of the one strided block */
  size_t zero;
  bool contiguous;
  bool integral;         /* basic integer type */
  bool floating;         /* basic floating point type */
  MPI_Datatype mpi_elem; /* one base element */
  MPI_Datatype mpi_type; /* one instance with its extent (derived only) */
} dart__dtype_t;

#define DART__DTYPE_FIRST_DERIVED ((dart_datatype_t)1024)

extern dart__dtype_t dart__types__basic_types[DART_TYPE_LAST];
/* Bytes of one element of each basic type (0: DART_TYPE_UNDEFINED): the
 * hot paths' compact view of dart__types__basic_types (hidden: addressed
 * relative to the code). */
extern const uint8_t dart__types__basic_size[DART_TYPE_LAST]
    __attribute__((visibility("hidden")));

/* The derived type behind a value, or NULL. */
const dart__dtype_t *dart__types__dtype_derived(dart_datatype_t type);

/* The type behind a value, or NULL for an unknown or destroyed one. */
static inline const dart__dtype_t *dart__types__dtype(dart_datatype_t type)
{
  if (type > DART_TYPE_UNDEFINED && type < DART_TYPE_LAST)
    return &dart__types__basic_types[type];
  return dart__types__dtype_derived(type);
}

/* Elements spanned by nelem elements (nelem a multiple of num_elem). */
static inline size_t dart__types__dtype_span(const dart__dtype_t *t,
                                             size_t nelem)
{
  if (t->contiguous) return nelem;
  if (nelem == 0) return 0;
  return (nelem / t->num_elem - 1) * t->extent + t->end;
}

dart_ret_t dart__types__dtype_pair_checked(const char *func,
                                           dart_datatype_t src,
                                           dart_datatype_t dst, size_t nelem,
                                           const dart__dtype_t **src_t,
                                           const dart__dtype_t **dst_t);

/*
 * Validates a (source, destination) type pair for nelem elements: known
 * types, same base, nelem a multiple of both, byte counts that fit. Logs as
 * func and returns DART_ERR_INVAL otherwise.
 */
static inline dart_ret_t dart__types__dtype_pair(const char *func,
                                                 dart_datatype_t src,
                                                 dart_datatype_t dst,
                                                 size_t nelem,
                                                 const dart__dtype_t **src_t,
                                                 const dart__dtype_t **dst_t)
{
  /* the common case: one basic type on both sides */
  if (src == dst && src > DART_TYPE_UNDEFINED && src < DART_TYPE_LAST &&
      nelem <= dart__types__basic_types[src].max_nelem) {
    *src_t = *dst_t = &dart__types__basic_types[src];
    return DART_OK;
  }
  return dart__types__dtype_pair_checked(func, src, dst, nelem, src_t,
                                         dst_t);
}

/*
 * Walks nelem elements laid out as st (source) and dt (destination) as
 * runs that are consecutive on both sides: fn(ctx, dst_at, src_at, n) for
 * n elements at element offsets dst_at and src_at. Stops at and returns
 * the first nonzero result of fn.
 */
typedef int (*dart__dtype_run_fn)(void *ctx, size_t dst_at, size_t src_at,
                                  size_t n);
int dart__types__dtype_runs(const dart__dtype_t *dt, const dart__dtype_t *st,
                            size_t nelem, dart__dtype_run_fn fn, void *ctx);

void dart__types__dtype_copy_layout(void *dst, const dart__dtype_t *dt,
                                    const void *src,
                                    const dart__dtype_t *st, size_t nelem);

/* Copies nelem elements from src laid out as st to dst laid out as dt. */
static inline void dart__types__dtype_copy(void *dst,
                                           const dart__dtype_t *dt,
                                           const void *src,
                                           const dart__dtype_t *st,
                                           size_t nelem)
{
  if (st->contiguous && dt->contiguous)
    memcpy(dst, src, nelem * st->elem_size);
  else
    dart__types__dtype_copy_layout(dst, dt, src, st, nelem);
}

/* MPI type and count describing n elements of t (n a multiple of num_elem,
 * n / num_elem <= INT_MAX). */
static inline MPI_Datatype dart__types__dtype_mpi(const dart__dtype_t *t,
                                                  size_t n, int *count)
{
  if (t->contiguous) {
    *count = (int)n;
    return t->mpi_elem;
  }
  *count = (int)(n / t->num_elem);
  return t->mpi_type;
}

/*
 * An MPI (type, count) for nelem elements of t, also beyond INT_MAX
 * elements: those travel as one element of a type built for the call
 * (owned: to be freed with dart__types__mpi_buf_free). Logs as func and
 * returns DART_ERR_INVAL where even that cannot describe them.
 */
typedef struct {
  MPI_Datatype type;
  int count;
  bool owned;
} dart__mpi_buf_t;

dart_ret_t dart__types__mpi_buf(const char *func, const dart__dtype_t *t,
                                size_t nelem, dart__mpi_buf_t *out);
void dart__types__mpi_buf_free(dart__mpi_buf_t *b);

/* Set up and tear down the type tables (needs MPI). */
dart_ret_t dart__types__dtype_init(void);
void dart__types__dtype_fini(void);

#endif
