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
 * For device memory (dart_memkind.h) it is a device address: the own
 * part, or a node peer's part mapped through CUDA IPC.
 * Otherwise *addr is NULL and the result DART_OK. Stores through the address
 * are ordered with other units by dart_barrier or dart_flush (doc/guide.md,
 * "Completion").
 */
dart_ret_t dart_gptr_getaddr_shared(dart_gptr_t gptr, void **addr) DART_NOTHROW;

/** The ways a global pointer can be reached (decided at allocation). */
typedef enum {
  DART_PATH_SELF = 0, /**< the caller's own memory: memcpy */
  DART_PATH_SHM  = 1, /**< a node peer's shared window: memcpy */
  DART_PATH_MPI  = 2, /**< MPI RMA on the team's dynamic window */
  DART_PATH_UCX  = 3, /**< UCX RMA and atomics with the unit's rkey */
  DART_PATH_CMA  = 4, /**< a node peer's private memory through
                           process_vm_readv/writev (registered memory,
                           grown dart_memalloc pool) */
  DART_PATH_IPC  = 5, /**< device memory, the caller's own or a node
                           peer's (CUDA IPC; dart_memkind.h) */
  DART_PATH_STAGE = 6, /**< device memory on another node, through
                            pinned host buffers (dart_memkind.h) */
  DART_PATH_OWNER = 7, /**< atomics only: applied by the owner unit,
                            reached through active messages (dart_am.h,
                            DART_AM_ATOMICS_OWNER) */
  DART_PATH_COUNT     /**< the number of paths */
} dart_path_t;

/** The path by which operations on \c gptr are carried out. */
dart_ret_t dart_gptr_path(dart_gptr_t gptr, dart_path_t *path) DART_NOTHROW;

/**
 * The path atomics on \c gptr take: DART_PATH_SELF or DART_PATH_SHM (CPU
 * atomics) when every unit of the allocation's team loads and stores its
 * memory, else the remote transport's (DART_PATH_UCX or DART_PATH_MPI) for
 * every unit, the owner included. On an allocation whose owners apply its
 * atomics (dart_am.h): CPU atomics where the caller loads and stores the
 * memory, else DART_PATH_OWNER.
 */
dart_ret_t dart_gptr_atomic_path(dart_gptr_t gptr,
                                 dart_path_t *path) DART_NOTHROW;
/**
 * The number of one-sided operations (puts, gets and atomics of every form)
 * this unit has sent along \c path since dart_init.
 */
dart_ret_t dart_path_count(dart_path_t path, uint64_t *count) DART_NOTHROW;

/**
 * The batches in which this unit has applied its queued accumulates since
 * dart_init (single-element SUM, BAND, BOR or BXOR on an integer that the
 * unit reaches with CPU atomics wait in a queue; see the guide):
 * \c in_transaction of them in one hardware transaction each (x86 RTM,
 * DART_HTM=1, where the CPU has it); \c after_abort with one locked
 * instruction per update after their transaction aborted; \c locked that
 * way without a transaction tried.
 */
dart_ret_t dart_acc_batches(uint64_t *in_transaction, uint64_t *after_abort,
                            uint64_t *locked) DART_NOTHROW;

/**
 * The paths of this job: \c remote reaches units on other nodes
 * (DART_PATH_UCX or DART_PATH_MPI: DART_TRANSPORT, where that transport
 * started); \c peer_private reaches node peers' registered memory:
 * DART_PATH_CMA, or the remote path where CMA is not permitted or DART_CMA=0
 * or DART_SHM=0. dart_memalloc blocks beyond the initial pool, which no
 * transport registers, take DART_PATH_CMA from node peers where that is
 * usable and DART_PATH_MPI otherwise.
 */
dart_ret_t dart_transport_paths(dart_path_t *remote,
                                dart_path_t *peer_private) DART_NOTHROW;

/** A short name of a path ("self", "shm", "mpi", "ucx", "cma", "ipc",
 * "stage"), or NULL if unknown. */
const char *dart_path_name(dart_path_t path) DART_NOTHROW;

/** The number of (emulated) nodes and the caller's node index. */
dart_ret_t dart_node_info(int *num_nodes, int *my_node) DART_NOTHROW;

#ifdef __cplusplus
}
#endif

#endif /* DART__EXT_H_ */
