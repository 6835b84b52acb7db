/*
 * Active messages over MPI two-sided (am.h), the mpi path's am_* slots:
 * fragments are MPI messages on a duplicate of the team's communicator,
 * one tag, so MPI keeps each pair's order. Memory stays bounded by
 * credits: an origin may have WINDOW fragments at a target that it has
 * not consumed; the target returns credits once it consumed half of them.
 * Control messages (credits, "how many of mine ran?" and its answer) go
 * on the same tag, in order with the fragments, one in flight per unit,
 * and take no credit: what is owed to a unit is summed until its control
 * message is free.
 */
#include <stdlib.h>
#include <string.h>

#include "am/am.h"
#include "base/log.h"
#include "transport/transport.h"

#define WINDOW 8     /* fragments in flight per (origin, target) */
#define SEND_BUFS 16 /* fragments in flight from this unit on a team */
#define TAG 1
#define CONTROL 0x101 /* token: credits; seq: CONTROL_* */
enum { CONTROL_ASK = 1, CONTROL_ANSWER = 2 }; /* answer: len = ran */

typedef struct {
  int credits;       /* fragments I may still send it */
  int consumed;      /* its fragments I consumed and did not credit */
  uint64_t answered; /* my messages it ran, as it last said */
  bool asked;        /* my question is unanswered */
  /* owed to it in my next control message */
  int owe_credits;
  bool owe_ask, owe_answer;
  dart__am_frag_t control;
  MPI_Request control_req;
} unit_t;

typedef struct {
  MPI_Comm comm;
  size_t frag_bytes; /* header and payload */
  atomic_flag lock;  /* all but the receive (am->threads) */
  unit_t *units;     /* by team unit */
  int owing;         /* units owed a control message */
  char *send_bufs;
  MPI_Request send_reqs[SEND_BUFS];
  char *recv_buf;
} mpi_t;

static mpi_t *state(dart__am_team_t *am)
{
  return (mpi_t *)am->paths[DART__PATH_MPI];
}

void dart__am__mpi_close(dart__am_team_t *am)
{
  mpi_t *m = state(am);
  if (m == NULL) return;
  /* sends complete by themselves; the communicator goes once they have */
  for (int i = 0; i < SEND_BUFS; i++)
    if (m->send_reqs[i] != MPI_REQUEST_NULL) MPI_Request_free(&m->send_reqs[i]);
  for (int u = 0; m->units != NULL && u < am->team->size; u++)
    if (m->units[u].control_req != MPI_REQUEST_NULL)
      MPI_Request_free(&m->units[u].control_req);
  if (m->comm != MPI_COMM_NULL) MPI_Comm_free(&m->comm);
  free(m->units);
  free(m->send_bufs);
  free(m->recv_buf);
  free(m);
  am->paths[DART__PATH_MPI] = NULL;
}

dart_ret_t dart__am__mpi_open(const char *func, dart__am_team_t *am)
{
  mpi_t *m = calloc(1, sizeof *m);
  if (m == NULL) goto nomem;
  am->paths[DART__PATH_MPI] = m;
  m->comm = MPI_COMM_NULL;
  atomic_flag_clear(&m->lock);
  m->frag_bytes = sizeof(dart__am_frag_t) + am->frag_payload;
  m->units = calloc((size_t)am->team->size, sizeof *m->units);
  m->send_bufs = malloc(SEND_BUFS * m->frag_bytes);
  m->recv_buf = malloc(m->frag_bytes);
  if (m->units == NULL || m->send_bufs == NULL || m->recv_buf == NULL)
    goto nomem;
  for (int i = 0; i < SEND_BUFS; i++) m->send_reqs[i] = MPI_REQUEST_NULL;
  for (int u = 0; u < am->team->size; u++) {
    m->units[u].credits = WINDOW;
    m->units[u].control_req = MPI_REQUEST_NULL;
  }
  if (MPI_Comm_dup(am->team->comm, &m->comm) != MPI_SUCCESS) {
    DART_LOG_ERROR_IN(func, "MPI_Comm_dup for active messages failed");
    m->comm = MPI_COMM_NULL;
    dart__am__mpi_close(am);
    return DART_ERR_OTHER;
  }
  return DART_OK;
nomem:
  DART_LOG_ERROR_IN(func, "no memory for MPI's active messages");
  dart__am__mpi_close(am);
  return DART_ERR_NOMEM;
}

/* Sends what u is owed, where its control message is free (lock held). */
static void send_control(mpi_t *m, dart__am_team_t *am, int u)
{
  unit_t *x = &m->units[u];
  if (!(x->owe_credits > 0 || x->owe_ask || x->owe_answer)) return;
  if (x->control_req != MPI_REQUEST_NULL) {
    int done = 0;
    MPI_Test(&x->control_req, &done, MPI_STATUS_IGNORE);
    if (!done) return;
  }
  x->control = (dart__am_frag_t){
      .kind = CONTROL,
      .token = (uint64_t)x->owe_credits,
      .seq = (x->owe_ask ? CONTROL_ASK : 0u) |
             (x->owe_answer ? CONTROL_ANSWER : 0u),
      .len = x->owe_answer ? dart__am__ran(am, u) : 0};
  if (MPI_Isend(&x->control, sizeof x->control, MPI_BYTE, u, TAG, m->comm,
                &x->control_req) != MPI_SUCCESS) {
    DART_LOG_ERROR_IN("dart_am (progress)", "MPI_Isend of a control message "
                      "to unit %d failed", u);
    return;
  }
  x->owe_credits = 0;
  x->owe_ask = x->owe_answer = false;
  m->owing--;
}

/* Marks u as owed something (lock held). */
static void owe(mpi_t *m, unit_t *x)
{
  if (!(x->owe_credits > 0 || x->owe_ask || x->owe_answer)) m->owing++;
}

dart_ret_t dart__am__mpi_send(const char *func, dart__am_team_t *am, int u,
                              const dart__am_frag_t *f, const void *payload,
                              bool *queued)
{
  mpi_t *m = state(am);
  unit_t *x = &m->units[u];
  *queued = false;
  dart__am__lock(am, &m->lock);
  int buf = -1;
  for (int i = 0; i < SEND_BUFS && buf < 0 && x->credits > 0; i++) {
    int done = m->send_reqs[i] == MPI_REQUEST_NULL;
    if (!done) MPI_Test(&m->send_reqs[i], &done, MPI_STATUS_IGNORE);
    if (done) buf = i;
  }
  dart_ret_t ret = DART_OK;
  if (buf >= 0) {
    char *at = m->send_bufs + (size_t)buf * m->frag_bytes;
    memcpy(at, f, sizeof *f);
    if (f->bytes > 0) memcpy(at + sizeof *f, payload, f->bytes);
    if (MPI_Isend(at, (int)(sizeof *f + f->bytes), MPI_BYTE, u, TAG, m->comm,
                  &m->send_reqs[buf]) != MPI_SUCCESS) {
      DART_LOG_ERROR_IN(func, "MPI_Isend of a message to unit %d failed", u);
      ret = DART_ERR_OTHER;
    } else {
      x->credits--;
      *queued = true;
    }
  }
  dart__am__unlock(am, &m->lock);
  return ret;
}

unsigned dart__am__mpi_poll(dart__am_team_t *am)
{
  mpi_t *m = state(am);
  unsigned n = 0;
  for (int turn = 0; turn < 64; turn++) {
    int found = 0;
    MPI_Message msg;
    MPI_Status status;
    if (MPI_Improbe(MPI_ANY_SOURCE, TAG, m->comm, &found, &msg, &status) !=
            MPI_SUCCESS ||
        !found)
      break;
    if (MPI_Mrecv(m->recv_buf, (int)m->frag_bytes, MPI_BYTE, &msg,
                  &status) != MPI_SUCCESS) {
      DART_LOG_ERROR_IN("dart_am (progress)", "MPI_Mrecv failed");
      break;
    }
    int u = status.MPI_SOURCE;
    unit_t *x = &m->units[u];
    dart__am_frag_t f;
    memcpy(&f, m->recv_buf, sizeof f);
    if (f.kind == CONTROL) {
      dart__am__lock(am, &m->lock);
      x->credits += (int)f.token;
      if (f.seq & CONTROL_ANSWER) {
        if (f.len > x->answered) x->answered = f.len;
        x->asked = false;
      }
      if (f.seq & CONTROL_ASK) {
        owe(m, x);
        x->owe_answer = true;
      }
      dart__am__unlock(am, &m->lock);
      continue;
    }
    dart__am__deliver(am, u, &f, m->recv_buf + sizeof f);
    n++;
    dart__am__lock(am, &m->lock);
    if (++x->consumed >= WINDOW / 2) {
      owe(m, x);
      x->owe_credits += x->consumed;
      x->consumed = 0;
    }
    dart__am__unlock(am, &m->lock);
  }
  if (m->owing > 0) {
    dart__am__lock(am, &m->lock);
    for (int u = 0; u < am->team->size && m->owing > 0; u++)
      send_control(m, am, u);
    dart__am__unlock(am, &m->lock);
  }
  return n;
}

dart_ret_t dart__am__mpi_ran(const char *func, dart__am_team_t *am, int u,
                             uint64_t count, bool *ran)
{
  (void)func;
  mpi_t *m = state(am);
  unit_t *x = &m->units[u];
  dart__am__lock(am, &m->lock);
  *ran = x->answered >= count;
  if (!*ran && !x->asked) {
    owe(m, x);
    x->owe_ask = true;
    x->asked = true;
    send_control(m, am, u);
  }
  dart__am__unlock(am, &m->lock);
  return DART_OK;
}
