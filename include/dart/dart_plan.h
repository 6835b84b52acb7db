/**
 * \file dart_plan.h
 * libdart extension: communication plans (star forests, after PETSc's
 * PetscSF).
 *
 * A plan connects leaves to roots. Every unit of a team has a root array
 * of nroots elements and a leaf array; each of its leaves references one
 * root: element `index` of unit `unit`'s root array. A plan is set up once
 * (collectively) and then used many times:
 *
 * - bcast (root -> leaves): each leaf gets op(leaf, root); with
 *   DART_OP_REPLACE the root's value.
 * - reduce (leaves -> root): each root gets op(root, leaf) for every leaf
 *   that references it, applied in the order of the leaves' units
 *   (ascending), and on one unit in the order of its leaves (ascending
 *   leaf number), so that results do not depend on timing.
 * - fetch-and-op: as reduce, and each leaf's entry of leafupdate gets the
 *   root's value just before that leaf's contribution was applied:
 *   atomic per root, as PetscSF's FetchAndOp.
 *
 * Root and leaf arrays are ordinary local buffers of the caller (host
 * memory, or device memory: see below; they need not be global memory),
 * passed anew to every call, so one plan serves every vector of the same
 * layout. They may be the same buffer where no leaf lies on a root (a
 * halo exchange in place).
 *
 * Device buffers (dart_memkind.h: cudaMalloc'd, or dart_memkind_alloc
 * with DART_MEMKIND_CUDA): all buffers of one call are device memory, or
 * all host memory. On device buffers the device packs and applies the
 * messages (a kernel per pattern, on the plan's own stream, or on the
 * caller's for the _stream forms). Between node peers the device packs
 * straight into the peer's device memory (CUDA IPC, where every unit has
 * a device); elsewhere messages cross through host memory as host
 * buffers' do, on every path. The device
 * applies DART_OP_REPLACE on every type and the predefined reductions on
 * the basic types but long double; user operations take host buffers.
 * The first call on device buffers sets up the device's part of the plan
 * (its patterns and message buffers in device memory).
 *
 * Every unit of the team calls the same operations of a plan in the same
 * order (each begin, then its end), as PetscSF's are collective; between
 * begin and end the caller computes, must not modify rootdata (bcast) or
 * leafdata (reduce, fetch-and-op) and must not read what the operation
 * writes. Begin and end take the same buffers and operation. Progress is
 * made in end (and in every other waiting libdart call).
 *
 * Set-up inverts the graph (each owner learns its readers), merges
 * contiguous runs and strided and box-shaped patterns per peer, and
 * allocates every buffer, so that begin and end walk no index lists and
 * allocate nothing. Per peer the data goes the cheapest way: packed
 * straight into a node peer's shared memory, or packed into registered
 * global memory and pushed with put-with-signal (dart_signal.h) across
 * nodes; the unit's own leaves are copied directly. Where a bcast's
 * rootdata lies in the caller's part of global memory of the plan's team
 * (dart_team_memalloc_aligned), node peers read their roots straight from
 * it, without packing (messages of DART_PLAN_LEND bytes or more, 4 KiB
 * by default); the end of such a bcast also waits until those peers have
 * read them.
 *
 * Element types: the basic types (DART_TYPE_BYTE .. DART_TYPE_LONG_DOUBLE).
 * Operations: DART_OP_REPLACE and every predefined reduction that applies
 * to the type except DART_OP_MINMAX (which combines pairs, not elements),
 * user operations of the plan's type (dart_op_create), and DART_OP_NO_OP
 * for fetch-and-op (a fetch that leaves the root as it is).
 */
#ifndef DART__PLAN_H_
#define DART__PLAN_H_

#include <dart/dart_memkind.h>
#include <dart/dart_team_group.h>
#include <dart/dart_types.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A communication plan (opaque). */
typedef struct dart_plan *dart_plan_t;

/** A root: element `index` of team unit `unit`'s root array. */
typedef struct {
  dart_team_unit_t unit; /**< the unit whose root array holds the root */
  size_t index;          /**< the root's element in that array */
} dart_plan_root_t;

/**
 * Sets up a plan over team (collective). This unit has nroots roots and
 * nleaves leaves; leaf i lies at element ilocal[i] of the leaf array
 * (ilocal == NULL: at element i) and references root iremote[i]. A leaf
 * may be listed twice in ilocal (then it takes part twice); bcast with
 * DART_OP_REPLACE rejects such plans, as two roots would write one leaf.
 * Several leaves may reference one root. type is the element type of
 * both arrays. When any unit's arguments are wrong, every unit returns
 * DART_ERR_INVAL and nothing is set up.
 */
dart_ret_t dart_plan_create(dart_team_t team, size_t nroots, size_t nleaves,
                            const size_t *ilocal,
                            const dart_plan_root_t *iremote,
                            dart_datatype_t type,
                            dart_plan_t *plan) DART_NOTHROW;

/**
 * The plan of a halo exchange (collective): an ndims-dimensional array
 * (1 <= ndims <= 3) of global_extent[0] x ... elements, row-major
 * (dimension ndims - 1 fastest), block-distributed over a grid of
 * units_per_dim[0] x ... units (their product is the team's size; team
 * unit u sits at the row-major coordinates of u in that grid). Along
 * dimension d, grid coordinate c owns extent / p elements from
 * c * (extent / p) + min(c, extent % p) on, one more where c < extent % p
 * (p = units_per_dim[d]); every unit needs at least one.
 *
 * Each unit's root and leaf array is the same ghosted block: its own
 * elements surrounded by halo elements on every side, row-major, with
 * extents local[d] + 2 * halo. Roots are the owned elements; leaves are
 * the elements of the faces: those outside the owned box along exactly
 * one dimension, within halo of it (the halo of a star stencil, such as
 * the 5-point one in 2-D and the 7-point one in 3-D; corners are not
 * exchanged). Where periodic is nonzero, the array wraps around in every
 * dimension; otherwise faces beyond the array's edge are no leaves and
 * stay as they are. A halo wider than a neighbour's block reaches the
 * units beyond it. The array can be exchanged in place: pass the same
 * buffer as rootdata and leafdata.
 */
dart_ret_t dart_plan_create_halo(dart_team_t team, int ndims,
                                 const size_t *global_extent,
                                 const int *units_per_dim, size_t halo,
                                 int periodic, dart_datatype_t type,
                                 dart_plan_t *plan) DART_NOTHROW;

/** Starts a bcast: every leaf gets op(leaf, its root). */
dart_ret_t dart_plan_bcast_begin(dart_plan_t plan, const void *rootdata,
                                 void *leafdata,
                                 dart_operation_t op) DART_NOTHROW;
/** Completes the bcast started with the same arguments. */
dart_ret_t dart_plan_bcast_end(dart_plan_t plan, const void *rootdata,
                               void *leafdata,
                               dart_operation_t op) DART_NOTHROW;

/** Starts a reduce: every root gets op(root, leaf) for each of its
 * leaves. */
dart_ret_t dart_plan_reduce_begin(dart_plan_t plan, const void *leafdata,
                                  void *rootdata,
                                  dart_operation_t op) DART_NOTHROW;
/** Completes the reduce started with the same arguments. */
dart_ret_t dart_plan_reduce_end(dart_plan_t plan, const void *leafdata,
                                void *rootdata,
                                dart_operation_t op) DART_NOTHROW;

/** Starts a fetch-and-op: a reduce in which each leaf's element of
 * leafupdate (laid out as the leaf array) gets the root's value from just
 * before that leaf's operand was applied. */
dart_ret_t dart_plan_fetch_and_op_begin(dart_plan_t plan, void *rootdata,
                                        const void *leafdata,
                                        void *leafupdate,
                                        dart_operation_t op) DART_NOTHROW;
/** Completes the fetch-and-op started with the same arguments. */
dart_ret_t dart_plan_fetch_and_op_end(dart_plan_t plan, void *rootdata,
                                      const void *leafdata, void *leafupdate,
                                      dart_operation_t op) DART_NOTHROW;

/**
 * Stream-ordered forms of bcast and reduce, for device buffers: begin
 * queues the packing of this unit's messages on \c stream behind the work
 * already there (the kernels that wrote the data) and returns without
 * waiting for the device; end queues the application of the other units'
 * messages on \c stream and returns without waiting for it: the results
 * are there once \c stream reaches them, for the kernels queued after
 * end. Between node peers whose devices signal each other's streams
 * (CUDA's stream memory operations, where every unit has a device) the
 * streams themselves post each message behind its pack, wait for it
 * before its application and acknowledge it after, so neither call waits
 * for the device: end waits only until the senders' begin has run (where
 * a unit switches to this from host buffers or another kind of call, its
 * first such call waits for its stream once). To
 * other units end first waits for the packs and sends the messages, and
 * the plan's next call waits for the device to have read what came, as
 * does the next call on another stream or on none. Begin and end take
 * the same stream; under emulated devices only NULL (which runs at once).
 * A message that crosses through host memory (to a unit on another node,
 * or where some unit has no device) is copied out of the device before
 * begin returns, so there begin does wait for the stream's earlier work.
 */
dart_ret_t dart_plan_bcast_begin_stream(dart_plan_t plan,
                                        const void *rootdata, void *leafdata,
                                        dart_operation_t op,
                                        dart_stream_t stream) DART_NOTHROW;
/** Completes the bcast started with the same arguments on \c stream. */
dart_ret_t dart_plan_bcast_end_stream(dart_plan_t plan, const void *rootdata,
                                      void *leafdata, dart_operation_t op,
                                      dart_stream_t stream) DART_NOTHROW;
/** Starts a reduce on \c stream (see dart_plan_bcast_begin_stream). */
dart_ret_t dart_plan_reduce_begin_stream(dart_plan_t plan,
                                         const void *leafdata,
                                         void *rootdata, dart_operation_t op,
                                         dart_stream_t stream) DART_NOTHROW;
/** Completes the reduce started with the same arguments on \c stream. */
dart_ret_t dart_plan_reduce_end_stream(dart_plan_t plan, const void *leafdata,
                                       void *rootdata, dart_operation_t op,
                                       dart_stream_t stream) DART_NOTHROW;

/** Frees the plan (collective: its buffers are global memory) and sets
 * *plan to NULL. A plan whose team was destroyed is freed too, but every
 * other call on it fails. */
dart_ret_t dart_plan_destroy(dart_plan_t *plan) DART_NOTHROW;

#ifdef __cplusplus
}
#endif

#endif
