/**
 * \file dart_ext.h
 * libdart extensions to the DART 3.2 interface. Nothing here changes a 3.2
 * function; clients that use these include this header explicitly.
 *
 * Thread safety: all functions here may be called from any thread.
 */
#ifndef DART__EXT_H_
#define DART__EXT_H_

#include <dart/dart_globmem.h>
#include <dart/dart_types.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * A load/store address for the memory \c gptr points to, when the caller can
 * reach it directly: its own part, or a node peer's host-memory part of a
 * collective allocation or of the local pool (like OpenSHMEM's shmem_ptr).
 * Otherwise *addr is NULL and the result DART_OK. Stores through the address
 * are ordered with other units by dart_barrier or dart_flush (DESIGN.md).
 */
dart_ret_t dart_gptr_getaddr_shared(dart_gptr_t gptr, void **addr) DART_NOTHROW;

/** The ways a global pointer can be reached (decided at allocation). */
typedef enum {
  DART_PATH_SELF = 0, /**< the caller's own memory: memcpy */
  DART_PATH_SHM  = 1, /**< a node peer's shared window: memcpy */
  DART_PATH_MPI  = 2, /**< MPI RMA on the team's dynamic window */
  DART_PATH_COUNT
} dart_path_t;

/** The path by which operations on \c gptr are carried out. */
dart_ret_t dart_gptr_path(dart_gptr_t gptr, dart_path_t *path) DART_NOTHROW;

/**
 * The path atomics on \c gptr take: DART_PATH_SELF or DART_PATH_SHM (CPU
 * atomics) when every unit of the allocation's team loads and stores its
 * memory, else DART_PATH_MPI for every unit, the owner included.
 */
dart_ret_t dart_gptr_atomic_path(dart_gptr_t gptr,
                                 dart_path_t *path) DART_NOTHROW;
/**
 * The number of one-sided operations (puts, gets and atomics of every form)
 * this unit has sent along \c path since dart_init.
 */
dart_ret_t dart_path_count(dart_path_t path, uint64_t *count) DART_NOTHROW;

/** A short name of a path ("self", "shm", "mpi"), or NULL if unknown. */
const char *dart_path_name(dart_path_t path) DART_NOTHROW;

/** The number of (emulated) nodes and the caller's node index. */
dart_ret_t dart_node_info(int *num_nodes, int *my_node) DART_NOTHROW;

#ifdef __cplusplus
}
#endif

#endif /* DART__EXT_H_ */
