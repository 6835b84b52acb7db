/* Process-wide runtime state, set up by dart_init. */
#ifndef DART__BASE__RUNTIME_H_
#define DART__BASE__RUNTIME_H_

#include <mpi.h>
#include <stdbool.h>

#include "base/log.h"

typedef struct {
  bool initialized;
  bool mpi_owned;    /* we called MPI_Init, so we call MPI_Finalize */
  int thread_level;  /* dart_thread_support_level_t provided */
  int myid;          /* global unit id = rank in comm */
  int size;
  MPI_Comm comm;     /* our duplicate of MPI_COMM_WORLD */
  int num_nodes;
  int my_node;
  int *node_of;      /* global unit -> node index (emulated nodes included) */
  bool oversubscribed; /* more units on this physical node than CPUs */
  bool mpi_cas_ok;   /* MPI_Compare_and_swap works on dynamic windows */
  int transport;     /* effective remote transport (dart__transport_t) */
  int remote_path;   /* its path: DART__PATH_UCX or DART__PATH_MPI */
} dart__runtime_t;

extern dart__runtime_t dart__rt;

/* The check every public function starts with (func: its name, for
 * helpers that serve several public functions). */
#define DART__CHECK_INIT_IN(func)                            \
  do {                                                       \
    if (__builtin_expect(!dart__rt.initialized, 0)) {        \
      DART_LOG_ERROR_IN(func, "DART is not initialised");    \
      return DART_ERR_NOTINIT;                               \
    }                                                        \
  } while (0)
#define DART__CHECK_INIT() DART__CHECK_INIT_IN(__func__)

/* Maps an MPI error to DART_ERR_OTHER with one log line, as func. */
#define DART__MPI_CHECK_IN(func, call)                                 \
  do {                                                                 \
    int mpi_ret_ = (call);                                             \
    if (__builtin_expect(mpi_ret_ != MPI_SUCCESS, 0)) {                \
      char mpi_msg_[MPI_MAX_ERROR_STRING];                             \
      int mpi_len_ = 0;                                                \
      MPI_Error_string(mpi_ret_, mpi_msg_, &mpi_len_);                 \
      DART_LOG_ERROR_IN(func, "%s failed: %s", #call, mpi_msg_);       \
      return DART_ERR_OTHER;                                           \
    }                                                                  \
  } while (0)
#define DART__MPI_CHECK(call) DART__MPI_CHECK_IN(__func__, call)

#endif
