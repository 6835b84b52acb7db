/* Reduction operations: predefined ones and user ops (dart_op_create). */
#ifndef DART__TYPES__OP_H_
#define DART__TYPES__OP_H_

#include <dart/dart_types.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "types/datatype.h"

#define DART__OP_FIRST_USER ((dart_operation_t)1024)

/*
 * MPI operation and element type for reducing elements of t with op in a
 * collective; *per_mpi_elem is the number of DART elements one MPI element
 * holds (2 for MINMAX pairs). Logs as func and returns DART_ERR_INVAL for
 * combinations that do not apply.
 */
dart_ret_t dart__types__op_mpi(const char *func, dart_operation_t op,
                               const dart__dtype_t *t, MPI_Op *mpi_op,
                               MPI_Datatype *mpi_type, size_t *per_mpi_elem);

/*
 * A combination of elements in this process: fn(in, inout, n, ctx) sets
 * inout[i] to inout[i] op in[i] for n elements of the type (REPLACE copies
 * in, NO_OP leaves inout as it is); at(in, in_idx, inout, idx, n, ctx)
 * sets inout[idx[i]] to inout[idx[i]] op in[in_idx[i]] (in_idx NULL:
 * in[i]), in order of i.
 */
typedef struct {
  void (*fn)(const void *in, void *inout, size_t n, void *ctx);
  void (*at)(const void *in, const uint32_t *in_idx, void *inout,
             const uint32_t *idx, size_t n, void *ctx);
  void *ctx;
  bool copies; /* REPLACE: fn and at copy in (callers may copy instead) */
} dart__op_local_t;

/*
 * The local combination of elements of the basic type t with op: a
 * predefined reduction that applies to t (not MINMAX, which combines
 * pairs), REPLACE, NO_OP or a user operation created for t. Logs as func
 * and returns DART_ERR_INVAL otherwise.
 */
dart_ret_t dart__types__op_local(const char *func, dart_operation_t op,
                                 const dart__dtype_t *t,
                                 dart__op_local_t *local);

/*
 * A reduction of a collective in this process: fn(in, inout, n, ctx) sets
 * inout[i] to in[i] op inout[i] for n elements of the basic type (MPI's
 * order of operands; MINMAX: n / 2 pairs). granule: the elements one MPI
 * element holds (2 for MINMAX). Logs as func and returns DART_ERR_INVAL
 * where op does not reduce t. (MPI's operation: dart__types__op_mpi.)
 */
typedef struct {
  void (*fn)(const void *in, void *inout, size_t n, void *ctx);
  void *ctx;
  size_t granule;
  bool commutes; /* user operations say; the predefined ones do */
} dart__op_reduce_t;

dart_ret_t dart__types__op_reduce(const char *func, dart_operation_t op,
                                  const dart__dtype_t *t,
                                  dart__op_reduce_t *out);

dart_ret_t dart__types__op_init(void);
void dart__types__op_fini(void);

#endif
