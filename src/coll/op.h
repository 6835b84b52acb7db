/*
 * A collective operation and the team state it runs on (inside coll/).
 *
 * Every collective call on a team is one operation, numbered by the
 * team's count of calls (seq, the same on every unit: collectives are
 * called in one order). An operation is a state machine: advancing it
 * does what can be done without waiting and says whether it finished.
 * Blocking calls advance their operation until it finishes; handle calls
 * queue it, and dart_test/dart_wait and the team's later calls advance
 * the queue in order, so that a unit starts operation n + 1 only once it
 * finished n.
 *
 * Node peers meet in a node-shared area (node.c): per member, a line
 * saying which operation it has reached, COLL_DEPTH cells (a header and
 * up to COLL_SMALL bytes, one per operation in turn), and for large
 * operations COLL_BLOCKS staging blocks of COLL_BLOCK bytes with step
 * counters. The node's leader (node rank 0) also keeps COLL_DEPTH result
 * cells for what it brings back from the other nodes' leaders.
 */
#ifndef DART__COLL__OP_H_
#define DART__COLL__OP_H_

#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/log.h"
#include "team/team.h"
#include "types/datatype.h"
#include "types/op.h"

#define COLL_LINE 128  /* a line and its prefetched neighbour */
#define COLL_DEPTH 32  /* operations a unit may post ahead of its peers */
#define COLL_INLINE 80 /* bytes that travel in the cell's own line */
#define COLL_SMALL 4096 /* bytes that travel in the cell's data slot */
#define COLL_BLOCK ((size_t)64 << 10)
#define COLL_BLOCKS 4

typedef enum {
  COLL_BARRIER,
  COLL_BCAST,
  COLL_REDUCE,
  COLL_ALLREDUCE,
  COLL_GATHER,
  COLL_SCATTER,
  COLL_ALLGATHER,
  COLL_ALLTOALL,
  COLL_ALLGATHERV,
  COLL_ALLTOALLV
} coll_kind_t;

/* How an operation runs (sched.c chooses). */
typedef enum {
  COLL_ALGO_SELF,   /* a team of one */
  COLL_ALGO_NATIVE, /* MPI's namesake on the team's communicator */
  COLL_ALGO_P2P,    /* point-to-point messages on it (mpi.c) */
  COLL_ALGO_NODE,   /* every unit on this node: the shared area alone */
  COLL_ALGO_HIER    /* node step, the leaders' step, node step */
} coll_algo_t;

/* One operation's cell: the caller's parameters, and up to COLL_INLINE
 * bytes of data in the same line; more (up to COLL_SMALL) go to the
 * cell's data slot. Cells of consecutive operations are consecutive
 * lines, which the hardware fetches ahead for a reader that is behind. */
typedef struct {
  _Alignas(COLL_LINE) _Atomic uint64_t seq; /* the operation, released */
  uint32_t kind;
  int32_t root;   /* -1: none */
  int64_t dtype;
  uint64_t op;
  uint64_t bytes; /* per unit (per part of all-to-all); result cells:
                   * the status */
  uint64_t pad_;
  _Alignas(16) unsigned char data[COLL_INLINE];
} coll_cell_t;

typedef struct {
  /* the operation this member has reached: it finished all before */
  _Alignas(COLL_LINE) _Atomic uint64_t arrived;
  /* large operations' steps this member has posted, reduced and read
   * (a step's blocks are free again once every member is past it) */
  _Alignas(COLL_LINE) _Atomic uint64_t posted;
  _Alignas(COLL_LINE) _Atomic uint64_t reduced;
  _Alignas(COLL_LINE) _Atomic uint64_t consumed;
  coll_cell_t cell[COLL_DEPTH];
  coll_cell_t out[COLL_DEPTH]; /* the leader's results */
  _Alignas(COLL_LINE) unsigned char cell_data[COLL_DEPTH][COLL_SMALL];
  unsigned char out_data[COLL_DEPTH][COLL_SMALL];
  unsigned char stage[COLL_BLOCKS][COLL_BLOCK];
  unsigned char part[COLL_BLOCKS][COLL_BLOCK]; /* reduced partitions */
} coll_member_t;

typedef struct dart__coll_op dart__coll_op_t;

/* mpi.c's state of a step in point-to-point messages */
typedef struct {
  int step;    /* where the algorithm is */
  int mask;    /* its round: a power of two */
  bool posted; /* the round's messages are out */
  void *acc;   /* reductions: the running result */
  void *tmp;   /* and what comes in */
} dart__coll_p2p_t;

/* requests an operation holds itself (more: allocated) */
#define COLL_INLINE_REQS 32

struct dart__coll_team {
  coll_member_t *members; /* by node rank; NULL: no node-shared area */
  MPI_Win win;            /* the window holding members */
  int k;                  /* node peers in the team, this unit too */
  int me;                 /* node rank */
  int *node_units;        /* node rank -> team unit */
  bool spans;   /* the team's units meet across nodes (or without shm) */
  bool leader;  /* this unit meets the other nodes' leaders */
  /* two COLL_SMALL buffers for the steps across nodes (one operation of
   * the team runs at a time) */
  unsigned char *scratch;
  bool any_peers; /* some unit of the team has node peers in it */
  MPI_Comm leaders; /* those leaders (team->comm without DART_SHM) */
  int leader_rank, leaders_size; /* on leaders: this unit's rank there */
  int *leader_of;   /* team unit -> its node leader's rank in leaders */
  void *remote;     /* the remote transport's barrier among leaders */
  uint64_t seq;     /* operations started */
  uint64_t min_arrived; /* what every node peer has reached, at least */
  uint64_t steps;       /* large operations' steps taken */
  /* handle operations, in call order (sched.c) */
  atomic_flag queue_busy;
  dart__coll_op_t *head, *tail;
  atomic_int queued;
  bool listed; /* in sched.c's list of teams with queues */
  struct dart__coll_team *next_listed;
};

struct dart__coll_op {
  coll_kind_t kind;
  coll_algo_t algo;
  const char *func;
  dart__team_t *team;
  const void *send;
  void *recv;
  size_t nelem; /* per unit (per part of all-to-all) */
  size_t bytes; /* their bytes (contiguous types) */
  const dart__dtype_t *t;
  dart_datatype_t dtype;
  dart_operation_t redop;
  dart__op_reduce_t red;
  int root; /* team unit, -1: none */
  /* allgatherv: nsend elements from each; the v collectives' counts */
  size_t nsend;
  const size_t *sendcounts, *senddispls, *recvcounts, *recvdispls;
  bool in_place;
  bool blocking;
  bool may_block; /* blocking, and no progress source to poll (begin) */
  /* progress */
  int phase;
  uint64_t seq;
  uint64_t step, last_step; /* large operations: steps (base, last] */
  int peer;                 /* next member to wait for */
  int nreqs;
  MPI_Request *reqs; /* req_inline, or more in scratch */
  MPI_Request req_inline[COLL_INLINE_REQS];
  dart__coll_p2p_t p2p;
  dart__mpi_buf_t mpi[2]; /* types built for this operation */
  void *scratch;          /* packed reductions, the v collectives' ints */
  long long check[2];     /* DART_COLL_CHECK's exchange */
  dart_ret_t status;
  bool done;
  atomic_int handoff; /* a handle operation's: queued, done or dropped */
  struct dart_handle_struct *handle; /* NULL: blocking */
  dart__coll_op_t *next;
};

/* sched.c: runs op (filled in by coll.c) to its end, blocking, or queues
 * it behind a handle (*handle, set only on success). */
dart_ret_t dart__coll__run(dart__coll_op_t *op);
dart_ret_t dart__coll__start_handle(dart__coll_op_t *op,
                                    struct dart_handle_struct **handle);

/* Completes the team's queued handle operations and takes the team off
 * the progress source's list (the team goes). */
void dart__coll__forget(dart__team_t *team);

/* team.c: a team's collective state, set up and undone with it. */
dart_ret_t dart__coll__team_setup(dart__team_t *team);
void dart__coll__team_undo(dart__team_t *team);

/* node.c: the node and hierarchical algorithms; each returns whether op
 * finished (op->status then says how). */
bool dart__coll__node_advance(dart__coll_op_t *op);
bool dart__coll__hier_advance(dart__coll_op_t *op);
/* Whether the node algorithms take op (single-node teams). */
bool dart__coll__node_takes(const dart__coll_op_t *op);
/* Whether the hierarchical ones do (teams that span nodes). */
bool dart__coll__hier_takes(const dart__coll_op_t *op);

/* sched.c: whether op may block in an MPI call (a blocking call, and no
 * progress source needs polling); and whether the MPI requests op
 * started have completed (none: yes), waited for where op may block. A
 * failure is recorded in op and counts as completed. */
bool dart__coll__may_block(const dart__coll_op_t *op);
bool dart__coll__mpi_done(dart__coll_op_t *op);

/* mpi.c: the steps across nodes as MPI point-to-point messages on comm,
 * each advanced as far as it goes without waiting: whether it is over
 * (op->status says how). bcast: len bytes at buf from root. reduce and
 * allreduce: acc holds this unit's len bytes and, for allreduce, gets the
 * result; tmp is len bytes of room; reduce's result goes to out at root.
 * exchange: gather, scatter, allgather(v) and alltoall(v) of op's buffers
 * on the team's communicator (contiguous types). op->p2p starts zeroed. */
bool dart__coll__p2p_barrier(dart__coll_op_t *op, MPI_Comm comm);
bool dart__coll__p2p_bcast(dart__coll_op_t *op, MPI_Comm comm, void *buf,
                           size_t len, int root);
bool dart__coll__p2p_reduce(dart__coll_op_t *op, MPI_Comm comm, void *acc,
                            void *tmp, size_t len, int root, void *out);
bool dart__coll__p2p_allreduce(dart__coll_op_t *op, MPI_Comm comm, void *acc,
                               void *tmp, size_t len);
bool dart__coll__p2p_exchange(dart__coll_op_t *op);
/* Records the first failure of op (already logged). */
static inline void dart__coll__fail(dart__coll_op_t *op, dart_ret_t ret)
{
  if (op->status == DART_OK) op->status = ret;
}

#endif
