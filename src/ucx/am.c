/*
 * Active messages over UCX (am/am.h), the ucx path's am_* slots: a wire of
 * UCX active messages (ucp_am_send_nbx, eager: fragments are small), which
 * keep each endpoint's order; am/twosided.c adds the credits. One UCX
 * handler serves every team: its header names the team and the origin.
 * The handler runs inside whatever progresses the worker, so it only
 * queues what came (holding UCX's buffer where UCX lets it, else a copy),
 * and the team's poll hands the queue over in order.
 *
 * The messages have a context and worker of their own, made at the first
 * team's open: with UCP_FEATURE_AM (or TAG) in the RMA context, UCX 1.13's
 * TCP transport crashes in its progress under the RMA tests at 8 units
 * (uct_tcp_iface_progress), so that context stays as it was. Each team
 * allgathers the worker's addresses and makes its endpoints on first
 * use; only the teams' polls progress this worker.
 */
#include <stdlib.h>
#include <string.h>

#include "am/am.h"
#include "team/team.h"
#include "ucx/ucx.h"

#define AM_ID 1

typedef struct arrival {
  struct arrival *next;
  int origin;
  size_t len;
  void *held; /* UCX's data, released with ucp_am_data_release; else data */
  char data[];
} arrival_t;

typedef struct {
  int32_t header[2]; /* team id, my team unit: every message's header */
  dart__am_team_t *am;
  ucp_ep_h *eps;          /* by team unit, made on first use */
  char *addrs;            /* the team's worker addresses */
  size_t *addr_off;       /* team unit u's at addrs + addr_off[u] */
  ucs_status_ptr_t *reqs; /* by send slot */
  atomic_flag lock;       /* the queue (am->threads) */
  arrival_t *head, *tail; /* arrived, not yet polled */
  arrival_t *current;     /* handed over by recv, until release */
  arrival_t *spare;       /* copies' buffers, kept for reuse */
} wire_t;

/* by team id: the handler finds a team's wire from its first message on */
static _Atomic(wire_t *) wires[DART__MAX_TEAMS];

static struct {
  ucp_context_h context;
  ucp_worker_h worker;
} msg;

static wire_t *state(dart__am_team_t *am)
{
  return (wire_t *)am->paths[DART__PATH_UCX];
}

static ucs_status_t arrived(void *arg, const void *header, size_t header_len,
                            void *data, size_t len,
                            const ucp_am_recv_param_t *param)
{
  (void)arg;
  int32_t h[2];
  if (header_len != sizeof h) return UCS_OK;
  memcpy(h, header, sizeof h);
  wire_t *w = h[0] >= 0 && h[0] < DART__MAX_TEAMS
                  ? atomic_load_explicit(&wires[h[0]], memory_order_acquire)
                  : NULL;
  if (w == NULL) {
    DART_LOG_ERROR_IN("dart_am (progress)", "an active message for team %d, "
                      "which has none here: dropped", (int)h[0]);
    return UCS_OK;
  }
  bool hold = param->recv_attr & UCP_AM_RECV_ATTR_FLAG_DATA;
  dart__am__lock(w->am, &w->lock);
  arrival_t *a = NULL;
  if (!hold && w->spare != NULL) { /* spares hold a fragment, any */
    a = w->spare;
    w->spare = a->next;
  }
  dart__am__unlock(w->am, &w->lock);
  if (a == NULL) {
    /* credits bound the copies: as many as fragments in flight to us */
    size_t room = sizeof(dart__am_frag_t) + w->am->frag_payload;
    if (len > room) {
      DART_LOG_ERROR_IN("dart_am (progress)", "an active message of %zu "
                        "bytes, more than a fragment: dropped", len);
      return UCS_OK;
    }
    a = malloc(sizeof *a + (hold ? 0 : room));
    if (a == NULL) {
      DART_LOG_ERROR_IN("dart_am (progress)", "no memory for an active "
                        "message of %zu bytes: dropped", len);
      return UCS_OK;
    }
  }
  a->next = NULL;
  a->origin = h[1];
  a->len = len;
  a->held = hold ? data : NULL;
  if (!hold) memcpy(a->data, data, len);
  dart__am__lock(w->am, &w->lock);
  if (w->tail != NULL) w->tail->next = a;
  else w->head = a;
  w->tail = a;
  dart__am__unlock(w->am, &w->lock);
  return hold ? UCS_INPROGRESS : UCS_OK;
}

static dart_ret_t wire_send(const char *func, void *p, int u, const void *buf,
                            size_t len, int slot)
{
  wire_t *w = p;
  int unit = w->am->team->members[u];
  if (w->eps[u] == NULL) { /* under the channel's lock: one maker */
    ucp_ep_params_t params = {
        .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
        .address = (const ucp_address_t *)(w->addrs + w->addr_off[u])};
    ucs_status_t status = ucp_ep_create(msg.worker, &params, &w->eps[u]);
    if (status != UCS_OK) {
      w->eps[u] = NULL;
      return dart__ucx__error(func, "ucp_ep_create", status, unit);
    }
  }
  ucp_ep_h ep = w->eps[u];
  ucp_request_param_t param = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                               .flags = UCP_AM_SEND_FLAG_EAGER};
  ucs_status_ptr_t req = ucp_am_send_nbx(ep, AM_ID, w->header,
                                         sizeof w->header, buf, len, &param);
  if (UCS_PTR_IS_ERR(req))
    return dart__ucx__error(func, "ucp_am_send_nbx", UCS_PTR_STATUS(req),
                            unit);
  w->reqs[slot] = req;
  return DART_OK;
}

static bool wire_sent(void *p, int slot)
{
  wire_t *w = p;
  ucs_status_ptr_t req = w->reqs[slot];
  if (req != NULL) {
    if (ucp_request_check_status(req) == UCS_INPROGRESS) return false;
    ucp_request_free(req);
    w->reqs[slot] = NULL;
  }
  return true;
}

static void wire_forget(void *p, int slot)
{
  wire_t *w = p;
  if (w->reqs[slot] != NULL) ucp_request_free(w->reqs[slot]);
  w->reqs[slot] = NULL;
}

static bool wire_recv(void *p, int *origin, const void **buf, size_t *len)
{
  wire_t *w = p;
  if (w->head == NULL) ucp_worker_progress(msg.worker);
  dart__am__lock(w->am, &w->lock);
  arrival_t *a = w->head;
  if (a != NULL) {
    w->head = a->next;
    if (w->head == NULL) w->tail = NULL;
  }
  dart__am__unlock(w->am, &w->lock);
  if (a == NULL) return false;
  w->current = a;
  *origin = a->origin;
  *buf = a->held != NULL ? a->held : a->data;
  *len = a->len;
  return true;
}

static void wire_release(void *p)
{
  wire_t *w = p;
  arrival_t *a = w->current;
  w->current = NULL;
  if (a->held != NULL) {
    ucp_am_data_release(msg.worker, a->held);
    free(a);
    return;
  }
  dart__am__lock(w->am, &w->lock);
  a->next = w->spare;
  w->spare = a;
  dart__am__unlock(w->am, &w->lock);
}

static const dart__am_wire_t wire = {.send = wire_send,
                                     .sent = wire_sent,
                                     .forget = wire_forget,
                                     .recv = wire_recv,
                                     .release = wire_release};

static void free_list(arrival_t *a)
{
  while (a != NULL) {
    arrival_t *next = a->next;
    if (a->held != NULL) ucp_am_data_release(msg.worker, a->held);
    free(a);
    a = next;
  }
}

void dart__ucx__am_close(dart__am_team_t *am)
{
  wire_t *w = state(am);
  if (w == NULL) return;
  atomic_store_explicit(&wires[am->team->id], NULL, memory_order_release);
  dart__am__twosided_close(am);
  free_list(w->head);
  free_list(w->spare);
  for (int u = 0; w->eps != NULL && u < am->team->size; u++) {
    if (w->eps[u] == NULL) continue;
    ucp_request_param_t param = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                                 .flags = UCP_EP_CLOSE_FLAG_FORCE};
    ucs_status_ptr_t req = ucp_ep_close_nbx(w->eps[u], &param);
    if (UCS_PTR_IS_PTR(req)) {
      while (ucp_request_check_status(req) == UCS_INPROGRESS)
        ucp_worker_progress(msg.worker);
      ucp_request_free(req);
    }
  }
  free(w->eps);
  free(w->addrs);
  free(w->addr_off);
  free(w->reqs);
  free(w);
  am->paths[DART__PATH_UCX] = NULL;
}

/* The messages' context and worker, with the handler (first open). */
static dart_ret_t msg_worker(const char *func)
{
  if (msg.worker != NULL) return DART_OK;
  ucs_status_t status =
      dart__ucx__worker_open(UCP_FEATURE_AM, &msg.context, &msg.worker);
  if (status == UCS_OK) {
    ucp_am_handler_param_t param = {
        .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID |
                      UCP_AM_HANDLER_PARAM_FIELD_CB,
        .id = AM_ID,
        .cb = arrived};
    status = ucp_worker_set_am_recv_handler(msg.worker, &param);
  }
  if (status != UCS_OK) {
    dart__ucx__am_fini();
    return dart__ucx__error(func, "the active messages' UCX worker", status,
                            dart__rt.myid);
  }
  return DART_OK;
}

void dart__ucx__am_fini(void)
{
  if (msg.worker != NULL) ucp_worker_destroy(msg.worker);
  if (msg.context != NULL) ucp_cleanup(msg.context);
  msg.worker = NULL;
  msg.context = NULL;
}

dart_ret_t dart__ucx__am_open(const char *func, dart__am_team_t *am)
{
  /* every unit reports whether it has the worker: all fail together */
  int mine = msg_worker(func) == DART_OK, all = 0;
  if (MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, am->team->comm) !=
          MPI_SUCCESS ||
      !all) {
    if (mine) DART_LOG_ERROR_IN(func, "UCX's active messages failed on "
                                "another unit");
    return DART_ERR_OTHER;
  }
  wire_t *w = calloc(1, sizeof *w);
  if (w == NULL) goto nomem;
  am->paths[DART__PATH_UCX] = w;
  w->am = am;
  w->header[0] = (int32_t)am->team->id;
  w->header[1] = am->team->myid;
  atomic_flag_clear(&w->lock);
  w->reqs = calloc(DART__AM_SEND_BUFS + (size_t)am->team->size,
                   sizeof *w->reqs);
  w->eps = calloc((size_t)am->team->size, sizeof *w->eps);
  if (w->reqs == NULL || w->eps == NULL) goto nomem;
  ucp_address_t *address = NULL;
  size_t address_len = 0;
  ucs_status_t status =
      ucp_worker_get_address(msg.worker, &address, &address_len);
  if (status != UCS_OK) {
    dart__ucx__am_close(am);
    return dart__ucx__error(func, "ucp_worker_get_address", status,
                            dart__rt.myid);
  }
  dart_ret_t ret = dart__ucx__allgather(func, am->team->comm, am->team->size,
                                        address, address_len, &w->addrs,
                                        &w->addr_off);
  ucp_worker_release_address(msg.worker, address);
  if (ret == DART_OK) ret = dart__am__twosided_open(func, am, &wire, w);
  if (ret != DART_OK) {
    dart__ucx__am_close(am);
    return ret;
  }
  atomic_store_explicit(&wires[am->team->id], w, memory_order_release);
  /* nobody sends before every unit can take messages */
  return dart__progress__barrier(func, am->team->comm);
nomem:
  DART_LOG_ERROR_IN(func, "no memory for UCX's active messages");
  dart__ucx__am_close(am);
  return DART_ERR_NOMEM;
}
