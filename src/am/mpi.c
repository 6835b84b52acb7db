/*
 * Active messages over MPI two-sided (am.h), the mpi path's am_* slots: a
 * wire of MPI messages on a duplicate of the team's communicator, one tag,
 * so that MPI keeps each pair's order; twosided.c adds the credits.
 */
#include <stdlib.h>

#include "am/am.h"
#include "base/log.h"
#include "transport/transport.h"

#define TAG 1

typedef struct {
  MPI_Comm comm;
  MPI_Request *reqs; /* by send slot */
  char *recv_buf; /* the last message received, up to a fragment */
  size_t recv_bytes;
  char *large; /* the last message received, where larger */
  /* a message matched but not received (no memory for it yet) */
  MPI_Message pending;
  MPI_Status pending_status;
} wire_t;

static wire_t *state(dart__am_team_t *am)
{
  return (wire_t *)am->paths[DART__PATH_MPI];
}

static dart_ret_t wire_send(const char *func, void *w, int u, const void *buf,
                            size_t len, int slot)
{
  wire_t *m = w;
  if (MPI_Isend(buf, (int)len, MPI_BYTE, u, TAG, m->comm, &m->reqs[slot]) !=
      MPI_SUCCESS) {
    DART_LOG_ERROR_IN(func, "MPI_Isend of %zu bytes to unit %d failed", len,
                      u);
    return DART_ERR_OTHER;
  }
  return DART_OK;
}

static bool wire_sent(void *w, int slot)
{
  int done = 0;
  MPI_Test(&((wire_t *)w)->reqs[slot], &done, MPI_STATUS_IGNORE);
  return done;
}

static void wire_forget(void *w, int slot)
{
  MPI_Request_free(&((wire_t *)w)->reqs[slot]);
}

static bool wire_recv(void *w, int *origin, const void **buf, size_t *len)
{
  wire_t *m = w;
  int found = 0, count = 0;
  MPI_Status status;
  if (m->pending == MPI_MESSAGE_NULL &&
      (MPI_Improbe(MPI_ANY_SOURCE, TAG, m->comm, &found, &m->pending,
                   &m->pending_status) != MPI_SUCCESS ||
       !found)) {
    m->pending = MPI_MESSAGE_NULL;
    return false;
  }
  MPI_Get_count(&m->pending_status, MPI_BYTE, &count);
  char *into = m->recv_buf;
  if ((size_t)count > m->recv_bytes) {
    into = m->large = malloc((size_t)count);
    if (into == NULL) {
      DART_LOG_ERROR_IN("dart_am (progress)", "no memory for a message of "
                        "%d bytes from unit %d", count,
                        m->pending_status.MPI_SOURCE);
      return false; /* received at a later poll */
    }
  }
  if (MPI_Mrecv(into, count, MPI_BYTE, &m->pending, &status) !=
      MPI_SUCCESS) {
    DART_LOG_ERROR_IN("dart_am (progress)", "MPI_Mrecv failed");
    return false;
  }
  *origin = status.MPI_SOURCE;
  *buf = into;
  *len = (size_t)count;
  return true;
}

static void wire_release(void *w)
{
  wire_t *m = w;
  free(m->large);
  m->large = NULL;
}

static const dart__am_wire_t wire = {.send = wire_send,
                                     .sent = wire_sent,
                                     .forget = wire_forget,
                                     .recv = wire_recv,
                                     .release = wire_release};

void dart__am__mpi_close(dart__am_team_t *am)
{
  wire_t *m = state(am);
  if (m == NULL) return;
  dart__am__twosided_close(am);
  if (m->comm != MPI_COMM_NULL) MPI_Comm_free(&m->comm);
  free(m->recv_buf);
  free(m->reqs);
  free(m);
  am->paths[DART__PATH_MPI] = NULL;
}

dart_ret_t dart__am__mpi_open(const char *func, dart__am_team_t *am)
{
  wire_t *m = calloc(1, sizeof *m);
  if (m == NULL) goto nomem;
  am->paths[DART__PATH_MPI] = m;
  m->comm = MPI_COMM_NULL;
  m->pending = MPI_MESSAGE_NULL;
  m->recv_bytes = sizeof(dart__am_frag_t) + am->frag_payload;
  m->recv_buf = malloc(m->recv_bytes);
  m->reqs = calloc(DART__AM_SEND_BUFS + (size_t)am->team->size,
                   sizeof *m->reqs);
  if (m->recv_buf == NULL || m->reqs == NULL) goto nomem;
  if (MPI_Comm_dup(am->team->comm, &m->comm) != MPI_SUCCESS) {
    DART_LOG_ERROR_IN(func, "MPI_Comm_dup for active messages failed");
    m->comm = MPI_COMM_NULL;
    dart__am__mpi_close(am);
    return DART_ERR_OTHER;
  }
  /* MPI's own rendezvous beats fragments from the first byte past one */
  dart_ret_t ret = dart__am__twosided_open(func, am, DART__PATH_MPI, 0,
                                           &wire, m);
  if (ret != DART_OK) dart__am__mpi_close(am);
  return ret;
nomem:
  DART_LOG_ERROR_IN(func, "no memory for MPI's active messages");
  dart__am__mpi_close(am);
  return DART_ERR_NOMEM;
}
