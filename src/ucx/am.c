/*
 * Active messages over UCX (am/am.h), the ucx path's am_* slots: a wire of
 * UCX active messages (ucp_am_send_nbx), which keep each endpoint's order;
 * am/twosided.c adds the credits. Fragments go eager; a longer message
 * goes in UCX's rendezvous, whose bytes the target's poll receives
 * (ucp_am_recv_data_nbx) into memory of its own once the message is next
 * in line. One UCX handler serves every team: its header names the team
 * and the origin. The handler runs inside whatever progresses the worker,
 * so it only queues what came (holding UCX's buffer where UCX lets it, or
 * the rendezvous' descriptor, else a copy), and the team's poll hands the
 * queue over in order.
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
/* Messages from here on go in UCX's rendezvous (bench/am.c: over TCP it
 * moves 256 KiB 2x faster than eager fragments, 32 KiB slower; between
 * processes of one machine fragments stay faster) */
#define LARGE_MIN (256ul << 10)
/* A rendezvous buffer larger than this is freed after its message */
#define RNDV_KEEP (4ul << 20)

typedef struct arrival {
  struct arrival *next;
  int origin;
  size_t len;
  /* UCX's data, released with ucp_am_data_release; or a rendezvous'
   * descriptor, until its receive starts */
  void *held;
  bool rndv;
  void *large; /* a message larger than a fragment, received here (the
               * wire's rndv_buf, or a copy of its own) */
  ucs_status_ptr_t recv; /* the rendezvous' receive, while in flight */
  int room; /* else the message is in data, of ROOM_SMALL or ROOM_FRAG */
  char data[];
} arrival_t;

/* The copies' sizes: most messages are small, and the credits let many be
 * in flight (am/twosided.c) */
enum { ROOM_SMALL, ROOM_FRAG, ROOMS };
#define SMALL_BYTES 256

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
  arrival_t *spare[ROOMS]; /* copies' buffers, kept for reuse */
  /* where a rendezvous lands, one at a time: kept, so that UCX finds it
   * registered the next time */
  char *rndv_buf;
  size_t rndv_cap;
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
  bool rndv = param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV;
  bool hold = rndv || (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_DATA);
  /* credits bound the copies: the bytes in flight to us */
  size_t frag = sizeof(dart__am_frag_t) + w->am->frag_payload;
  int room = hold || len > frag ? ROOMS
             : len <= SMALL_BYTES ? ROOM_SMALL
                                  : ROOM_FRAG;
  arrival_t *a = NULL;
  if (room < ROOMS) {
    dart__am__lock(w->am, &w->lock);
    if ((a = w->spare[room]) != NULL) w->spare[room] = a->next;
    dart__am__unlock(w->am, &w->lock);
  }
  if (a == NULL) {
    a = malloc(sizeof *a + (room == ROOM_SMALL ? SMALL_BYTES
                            : room == ROOM_FRAG ? frag
                                                : 0));
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
  a->rndv = rndv;
  a->large = NULL;
  a->recv = NULL;
  a->room = room;
  if (!hold && room == ROOMS && (a->large = malloc(len)) == NULL) {
    DART_LOG_ERROR_IN("dart_am (progress)", "no memory for an active "
                      "message of %zu bytes: dropped", len);
    free(a);
    return UCS_OK;
  }
  if (!hold) memcpy(a->large != NULL ? a->large : a->data, data, len);
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
  bool fragment = len <= sizeof(dart__am_frag_t) + w->am->frag_payload;
  ucp_request_param_t param = {
      .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
      .flags = fragment ? UCP_AM_SEND_FLAG_EAGER : UCP_AM_SEND_FLAG_RNDV};
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

static void wire_release(void *p);

/* Starts receiving the bytes of a, which came in a rendezvous and is next
 * in line, into the rendezvous buffer; where there is no memory, the next
 * poll tries again. */
static void rndv_start(wire_t *w, arrival_t *a)
{
  if (w->rndv_cap < a->len) {
    free(w->rndv_buf);
    w->rndv_cap = 0;
    if ((w->rndv_buf = malloc(a->len)) == NULL) {
      DART_LOG_ERROR_IN("dart_am (progress)", "no memory for an active "
                        "message of %zu bytes from unit %d", a->len,
                        a->origin);
      return;
    }
    w->rndv_cap = a->len;
  }
  a->large = w->rndv_buf;
  ucp_request_param_t param = {.op_attr_mask = 0};
  void *desc = a->held;
  a->held = NULL; /* UCX's from here on */
  a->recv = ucp_am_recv_data_nbx(msg.worker, desc, a->large, a->len, &param);
}

/* Whether the bytes of a, which came in a rendezvous, are here (a->len 0:
 * their receive failed). */
static bool rndv_received(wire_t *w, arrival_t *a)
{
  if (a->large == NULL) rndv_start(w, a);
  if (a->large == NULL) return false;
  if (UCS_PTR_IS_PTR(a->recv)) {
    ucs_status_t status = ucp_request_check_status(a->recv);
    if (status == UCS_INPROGRESS) {
      ucp_worker_progress(msg.worker);
      status = ucp_request_check_status(a->recv);
      if (status == UCS_INPROGRESS) return false;
    }
    ucp_request_free(a->recv);
    a->recv = status == UCS_OK ? NULL : UCS_STATUS_PTR(status);
  }
  if (UCS_PTR_IS_ERR(a->recv)) {
    DART_LOG_ERROR_IN("dart_am (progress)", "receiving an active message "
                      "of %zu bytes from unit %d: %s", a->len, a->origin,
                      ucs_status_string(UCS_PTR_STATUS(a->recv)));
    a->len = 0; /* dropped: the target is broken, its handlers miss it */
    a->recv = NULL;
  }
  a->rndv = false;
  return true;
}

static bool wire_recv(void *p, int *origin, const void **buf, size_t *len)
{
  wire_t *w = p;
  if (w->head == NULL) ucp_worker_progress(msg.worker);
  for (;;) {
    /* only the poller takes arrivals: the head stays while it is read */
    dart__am__lock(w->am, &w->lock);
    arrival_t *a = w->head;
    dart__am__unlock(w->am, &w->lock);
    if (a == NULL || (a->rndv && !rndv_received(w, a))) return false;
    dart__am__lock(w->am, &w->lock);
    w->head = a->next;
    if (w->head == NULL) w->tail = NULL;
    dart__am__unlock(w->am, &w->lock);
    w->current = a;
    if (a->len == 0) { /* failed rendezvous */
      wire_release(w);
      continue;
    }
    *origin = a->origin;
    *buf = a->held != NULL ? a->held : a->large != NULL ? a->large : a->data;
    *len = a->len;
    return true;
  }
}

static void wire_release(void *p)
{
  wire_t *w = p;
  arrival_t *a = w->current;
  w->current = NULL;
  if (a->room == ROOMS) {
    if (a->held != NULL) ucp_am_data_release(msg.worker, a->held);
    if (a->large != w->rndv_buf) {
      free(a->large);
    } else if (w->rndv_cap > RNDV_KEEP) {
      free(w->rndv_buf);
      w->rndv_buf = NULL;
      w->rndv_cap = 0;
    }
    free(a);
    return;
  }
  dart__am__lock(w->am, &w->lock);
  a->next = w->spare[a->room];
  w->spare[a->room] = a;
  dart__am__unlock(w->am, &w->lock);
}

static const dart__am_wire_t wire = {.send = wire_send,
                                     .sent = wire_sent,
                                     .forget = wire_forget,
                                     .recv = wire_recv,
                                     .release = wire_release};

static void free_list(const wire_t *w, arrival_t *a)
{
  while (a != NULL) {
    arrival_t *next = a->next;
    if (a->held != NULL) ucp_am_data_release(msg.worker, a->held);
    if (UCS_PTR_IS_PTR(a->recv)) {
      ucp_request_cancel(msg.worker, a->recv);
      while (ucp_request_check_status(a->recv) == UCS_INPROGRESS)
        ucp_worker_progress(msg.worker);
      ucp_request_free(a->recv);
    }
    if (a->large != w->rndv_buf) free(a->large);
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
  free_list(w, w->head);
  for (int room = 0; room < ROOMS; room++) free_list(w, w->spare[room]);
  free(w->rndv_buf);
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
  if (ret == DART_OK)
    ret = dart__am__twosided_open(func, am, DART__PATH_UCX, LARGE_MIN,
                                  &wire, w);
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
