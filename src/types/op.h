/* Reduction operations: predefined ones and user ops (dart_op_create). */
#ifndef DART__TYPES__OP_H_
#define DART__TYPES__OP_H_

#include <dart/dart_types.h>
#include <mpi.h>

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

dart_ret_t dart__types__op_init(void);
void dart__types__op_fini(void);

#endif
