/*
 * Active messages (dart_am.h, am.h): registration, sending in fragments
 * over each unit's path, joining and running them at the target, replies
 * and flushes.
 *
 * Each target unit's path (self, shm, mpi) is chosen once per team. A
 * message goes out whole under its peer's channel flag (so fragments of
 * two messages never interleave); a sender that finds no room runs the
 * handlers of what came to it meanwhile, so two units sending to each
 * other both make progress. Handlers never wait: a reply that finds no
 * room (or the channel taken by a message half sent) is copied and sent
 * by a later poll, in order, before anything else of that poll's team
 * goes to that unit.
 */
#include "am/am.h"

#include <dart/dart_team_group.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "base/env.h"
#include "base/log.h"
#include "base/runtime.h"
#include "onesided/onesided.h"
#include "progress/progress.h"
#include "transport/transport.h"

#define MAX_HANDLERS 1024
/* teams with active messages at once, which the progress source polls */
#define MAX_TEAMS 64

typedef struct {
  dart_am_handler_t fn;
  void *context;
  size_t max_reply;
  void *reply; /* max_reply bytes, for the handler's answer */
  _Atomic int state; /* HANDLER_* */
} handler_t;

enum { HANDLER_FREE = 0, HANDLER_LIVE = 1, HANDLER_GONE = 2 };

/* A reply that found no room: sent by a later poll. */
typedef struct deferred {
  struct deferred *next;
  dart__am_frag_t head; /* kind, token, seq, len */
  size_t sent;          /* bytes of it queued */
  char data[];
} deferred_t;

typedef struct {
  /* receiving from this unit (under the poll flag) */
  char *join;      /* a message of several fragments, joined */
  size_t join_cap;
  size_t joined;   /* its bytes so far */
  _Atomic uint64_t ran; /* messages from it whose handlers ran */
  /* sending to this unit */
  atomic_bool channel;        /* taken for a whole message */
  _Atomic uint64_t sent;      /* messages queued to it */
  deferred_t *deferred_head;  /* replies owed, oldest first (poll flag) */
  deferred_t *deferred_tail;
  bool deferred_channel;      /* the head holds the channel, half sent */
} peer_t;

typedef struct {
  dart__am_team_t pub;
  atomic_flag polling; /* one poller at a time: handlers one at a time */
  handler_t handlers[MAX_HANDLERS];
  uint32_t nhandlers; /* indices issued, in registration order */
  peer_t *peers;      /* by team unit */
  unsigned ndeferred; /* replies owed (poll flag) */
  _Atomic uint32_t next_seq;
} am_team_t;

static struct {
  _Atomic(am_team_t *) teams[MAX_TEAMS];
  atomic_int pollers; /* polls under way (a team's end waits for them) */
  atomic_int nteams;
} active;

static am_team_t *of(dart__am_team_t *am) { return (am_team_t *)am; }

uint64_t dart__am__ran(const dart__am_team_t *am, int origin)
{
  return atomic_load_explicit(&((const am_team_t *)am)->peers[origin].ran,
                              memory_order_acquire);
}

/* ---- ids ---- */

/* An id names its team and the handler's index on it. */
static dart_am_id_t make_id(dart_team_t team, uint32_t index)
{
  return (dart_am_id_t)(((uint32_t)team << 16) | (index + 1));
}

/* The live handler of id on team, or NULL with an error line. */
static handler_t *lookup_handler(const char *func, am_team_t *t,
                                 dart_team_t team, dart_am_id_t id,
                                 uint32_t *index)
{
  uint32_t low = (uint32_t)id & 0xffffu;
  dart_team_t id_team = (dart_team_t)((uint32_t)id >> 16);
  if (id <= 0 || low == 0 || low > MAX_HANDLERS) {
    DART_LOG_ERROR_IN(func, "id %d is no active-message id", (int)id);
    return NULL;
  }
  if (id_team != team) {
    DART_LOG_ERROR_IN(func, "id %d was registered on team %d, not on team %d",
                      (int)id, (int)id_team, (int)team);
    return NULL;
  }
  handler_t *h = t != NULL && low - 1 < t->nhandlers ? &t->handlers[low - 1]
                                                     : NULL;
  int state = h != NULL ? atomic_load_explicit(&h->state, memory_order_acquire)
                        : HANDLER_FREE;
  if (state != HANDLER_LIVE) {
    DART_LOG_ERROR_IN(func, "id %d is %s on team %d", (int)id,
                      state == HANDLER_GONE ? "deregistered" : "not registered",
                      (int)team);
    return NULL;
  }
  *index = low - 1;
  return h;
}

/* ---- sending ---- */

/* Queues the fragments of a message to u from byte *done on, as many as
 * there is room for; *done gets how far it got, *whole whether it is all
 * queued (a message of 0 bytes has no byte to count). */
static dart_ret_t queue_fragments(const char *func, am_team_t *t, int u,
                                  const dart__am_frag_t *head,
                                  const char *payload, size_t *done,
                                  bool *whole)
{
  *whole = false;
  const dart__path_ops_t *path = dart__transport__paths[t->pub.path[u]];
  size_t most = head->len >= t->pub.large_min[t->pub.path[u]]
                    ? DART__AM_LARGE
                    : t->pub.frag_payload;
  do {
    dart__am_frag_t f = *head;
    size_t left = head->len - *done;
    f.bytes = (uint32_t)(left < most ? left : most);
    bool queued = false;
    dart_ret_t ret = path->am_send(func, &t->pub, u, &f, payload + *done,
                                   &queued);
    if (ret != DART_OK) return ret;
    if (!queued) return DART_OK;
    *done += f.bytes;
  } while (*done < head->len);
  *whole = true;
  return DART_OK;
}

static unsigned poll_team(am_team_t *t);

/* Sends a whole message to u (a user's send or call), running the
 * handlers of what comes in while it waits for the channel or room. */
static dart_ret_t send_message(const char *func, am_team_t *t, int u,
                               const dart__am_frag_t *head,
                               const void *payload)
{
  peer_t *p = &t->peers[u];
  unsigned spins = 0;
  bool free_channel = false;
  while (!atomic_compare_exchange_weak_explicit(&p->channel, &free_channel,
                                                true, memory_order_acquire,
                                                memory_order_relaxed)) {
    free_channel = false;
    poll_team(t);
    dart__progress__wait_turn(&spins);
  }
  atomic_fetch_add_explicit(&p->sent, 1, memory_order_relaxed);
  size_t done = 0;
  bool whole;
  dart_ret_t ret;
  for (;;) {
    ret = queue_fragments(func, t, u, head, payload, &done, &whole);
    if (ret != DART_OK || whole) break;
    poll_team(t);
    dart__progress__wait_turn(&spins);
  }
  atomic_store_explicit(&p->channel, false, memory_order_release);
  return ret;
}

/* Sends the owed replies to u that fit now, oldest first (poll flag held):
 * whether none is left. */
static bool send_deferred(const char *func, am_team_t *t, int u)
{
  peer_t *p = &t->peers[u];
  while (p->deferred_head != NULL) {
    deferred_t *d = p->deferred_head;
    if (!p->deferred_channel) {
      bool free_channel = false;
      if (!atomic_compare_exchange_strong_explicit(
              &p->channel, &free_channel, true, memory_order_acquire,
              memory_order_relaxed))
        return false;
      p->deferred_channel = true;
      atomic_fetch_add_explicit(&p->sent, 1, memory_order_relaxed);
    }
    bool whole;
    if (queue_fragments(func, t, u, &d->head, d->data, &d->sent, &whole) !=
        DART_OK)
      whole = true; /* logged; the caller's handle never completes */
    if (!whole) return false;
    p->deferred_head = d->next;
    if (p->deferred_head == NULL) p->deferred_tail = NULL;
    free(d);
    t->ndeferred--;
    p->deferred_channel = false;
    atomic_store_explicit(&p->channel, false, memory_order_release);
  }
  return true;
}

/* A reply (or its failure) to origin's call (poll flag held): queued now
 * where it fits, else owed. */
static void send_reply(am_team_t *t, int origin, const dart__am_frag_t *call,
                       const void *reply, size_t len, bool failed)
{
  static const char func[] = "dart_am_call (a reply)";
  peer_t *p = &t->peers[origin];
  dart__am_frag_t head = {.kind = failed ? DART__AM_FAILED : DART__AM_REPLY,
                          .seq = call->seq,
                          .len = len,
                          .token = call->token};
  size_t done = 0;
  bool free_channel = false;
  if (send_deferred(func, t, origin) &&
      atomic_compare_exchange_strong_explicit(&p->channel, &free_channel,
                                              true, memory_order_acquire,
                                              memory_order_relaxed)) {
    atomic_fetch_add_explicit(&p->sent, 1, memory_order_relaxed);
    bool whole;
    if (queue_fragments(func, t, origin, &head, reply, &done, &whole) !=
        DART_OK)
      whole = true; /* logged */
    if (whole) {
      atomic_store_explicit(&p->channel, false, memory_order_release);
      return;
    }
    p->deferred_channel = true; /* the rest goes first, channel held */
  }
  deferred_t *d = malloc(sizeof *d + len);
  if (d == NULL) {
    DART_LOG_ERROR_IN(func, "no memory for a reply of %zu bytes to unit %d",
                      len, origin);
    if (p->deferred_channel && p->deferred_head == NULL) {
      p->deferred_channel = false;
      atomic_store_explicit(&p->channel, false, memory_order_release);
    }
    return;
  }
  /* a reply half sent goes on from where it stopped, channel held */
  d->next = NULL;
  d->head = head;
  d->sent = done;
  if (len > 0) memcpy(d->data, reply, len);
  t->ndeferred++;
  if (p->deferred_tail != NULL) p->deferred_tail->next = d;
  else p->deferred_head = d;
  p->deferred_tail = d;
}

/* ---- receiving ---- */

/* Runs handler index for a message from origin. */
static void run_handler(am_team_t *t, int origin, const dart__am_frag_t *f,
                        const void *payload)
{
  if (f->kind == DART__AM_OWNER_BATCH) {
    dart__am__owner_batch(&t->pub, origin, payload, f->len);
    return;
  }
  if (f->kind == DART__AM_OWNER_CALL) {
    uint64_t reply[2];
    size_t reply_len = 0;
    dart__am__owner_call(&t->pub, origin, payload, f->len, reply, &reply_len);
    send_reply(t, origin, f, reply, reply_len, false);
    return;
  }
  handler_t *h = f->index < MAX_HANDLERS ? &t->handlers[f->index] : NULL;
  if (h == NULL ||
      atomic_load_explicit(&h->state, memory_order_acquire) != HANDLER_LIVE) {
    DART_LOG_ERROR_IN("dart_am_send", "a message from unit %d for handler "
                      "%u, which is not registered here: dropped",
                      origin, f->index);
    if (f->kind == DART__AM_CALL) send_reply(t, origin, f, NULL, 0, true);
    return;
  }
  size_t reply_len = 0;
  h->fn((dart_team_unit_t){origin}, payload, f->len, h->reply, &reply_len,
        h->context);
  if (f->kind != DART__AM_CALL) return;
  if (reply_len > h->max_reply) {
    DART_LOG_ERROR_IN("dart_am_call", "handler %u replied %zu bytes, more "
                      "than its max_reply %zu: the call fails", f->index,
                      reply_len, h->max_reply);
    send_reply(t, origin, f, NULL, 0, true);
    return;
  }
  send_reply(t, origin, f, h->reply, reply_len, false);
}

/* The call a reply answers, where the caller still waits for it. */
static dart_handle_t replied_call(const dart__am_frag_t *f)
{
  dart_handle_t h = (dart_handle_t)(uintptr_t)f->token;
  if (!dart__onesided__handle_live(h) || h->am.seq != f->seq ||
      atomic_load_explicit(&h->am.state, memory_order_acquire) !=
          DART__AM_CALL_WAITING)
    return NULL;
  return h;
}

void dart__am__deliver(dart__am_team_t *am, int origin,
                       const dart__am_frag_t *f, const void *payload)
{
  am_team_t *t = of(am);
  peer_t *p = &t->peers[origin];
  bool reply = f->kind == DART__AM_REPLY || f->kind == DART__AM_FAILED;
  bool whole = p->joined == 0 && f->bytes == f->len;
  if (reply) {
    /* straight into the caller's buffer, which holds max_reply */
    dart_handle_t h = replied_call(f);
    if (h != NULL && f->bytes > 0 &&
        p->joined + f->bytes <= h->am.capacity)
      memcpy((char *)h->am.reply + p->joined, payload, f->bytes);
    p->joined += f->bytes;
    if (p->joined < f->len) return;
    p->joined = 0;
    if (h != NULL) {
      h->am.len = f->len;
      atomic_store_explicit(&h->am.state,
                            f->kind == DART__AM_REPLY ? DART__AM_CALL_DONE
                                                      : DART__AM_CALL_FAILED,
                            memory_order_release);
    }
  } else if (whole) {
    run_handler(t, origin, f, payload);
  } else {
    if (p->joined == 0 && p->join_cap < f->len) {
      char *join = realloc(p->join, f->len);
      if (join == NULL) {
        DART_LOG_ERROR_IN("dart_am_send", "no memory to join a message of "
                          "%zu bytes from unit %d", (size_t)f->len, origin);
        return; /* the target is broken: its handlers miss it */
      }
      p->join = join;
      p->join_cap = f->len;
    }
    memcpy(p->join + p->joined, payload, f->bytes);
    p->joined += f->bytes;
    if (p->joined < f->len) return;
    p->joined = 0;
    run_handler(t, origin, f, p->join);
  }
  atomic_fetch_add_explicit(&p->ran, 1, memory_order_release);
}

/* Polls a team's paths and sends owed replies; one poller at a time, the
 * others return at once. */
static unsigned poll_team(am_team_t *t)
{
  static const char func[] = "dart_am (progress)";
  if (atomic_flag_test_and_set_explicit(&t->polling, memory_order_acquire))
    return 0;
  unsigned n = 0;
  /* owed replies first: the paths' polls send what they queue */
  for (int u = 0; u < t->pub.team->size && t->ndeferred > 0; u++)
    if (t->peers[u].deferred_head != NULL) send_deferred(func, t, u);
  for (int path = 0; path < DART_PATH_COUNT; path++)
    if (t->pub.paths[path] != NULL)
      n += dart__transport__paths[path]->am_poll(&t->pub);
  atomic_flag_clear_explicit(&t->polling, memory_order_release);
  return n;
}

static unsigned poll_all(void)
{
  if (atomic_load_explicit(&active.nteams, memory_order_relaxed) == 0)
    return 0;
  atomic_fetch_add_explicit(&active.pollers, 1, memory_order_acq_rel);
  unsigned n = 0;
  for (int i = 0; i < MAX_TEAMS; i++) {
    am_team_t *t = atomic_load_explicit(&active.teams[i],
                                        memory_order_acquire);
    if (t != NULL) n += poll_team(t);
  }
  atomic_fetch_sub_explicit(&active.pollers, 1, memory_order_release);
  return n;
}

static bool any_team(void)
{
  return atomic_load_explicit(&active.nteams, memory_order_relaxed) > 0;
}

static const dart__progress_source_t source = {
    .name = "am", .poll = poll_all, .outside_mpi = any_team};

/* ---- a team's messages: opened at its first registration ---- */

static void close_paths(am_team_t *t)
{
  dart__am__owner_close(&t->pub);
  for (int path = DART_PATH_COUNT - 1; path >= 0; path--)
    if (t->pub.paths[path] != NULL)
      dart__transport__paths[path]->am_close(&t->pub);
}

static void team_free(am_team_t *t)
{
  if (t->peers != NULL) {
    for (int u = 0; u < t->pub.team->size; u++) {
      peer_t *p = &t->peers[u];
      free(p->join);
      while (p->deferred_head != NULL) {
        deferred_t *d = p->deferred_head;
        p->deferred_head = d->next;
        free(d);
      }
    }
  }
  for (uint32_t i = 0; i < t->nhandlers; i++) free(t->handlers[i].reply);
  free(t->peers);
  free(t->pub.path);
  free(t);
}

/* The path of messages to team unit u: none for the caller itself, shm
 * for node peers that share memory, else the remote transport's where it
 * carries messages, else MPI's. */
static int message_path(const dart__team_t *team, int u)
{
  if (u == team->myid) return DART__PATH_SELF;
  if (dart__team__shm_peer(team, u)) return DART__PATH_SHM;
  const dart__path_ops_t *remote = dart__transport__remote();
  return remote->am_send != NULL ? dart__rt.remote_path : DART__PATH_MPI;
}

/* Collective over team: its message state and paths, every unit's
 * success in *ok (ANDed by the registration's check). */
static dart_ret_t team_open(const char *func, dart__team_t *team,
                            am_team_t **out)
{
  am_team_t *t = calloc(1, sizeof *t);
  int slot = -1;
  dart_ret_t ret;
  if (t == NULL) goto nomem;
  t->pub.team = team;
  t->pub.queue = dart__base__config.am_queue;
  if (t->pub.queue < 1024 || t->pub.queue > (1ul << 30)) {
    DART_LOG_ERROR_IN(func, "DART_AM_QUEUE %zu is not between 1K and 1G",
                      t->pub.queue);
    ret = DART_ERR_INVAL;
    goto fail;
  }
  t->pub.queue &= ~(size_t)255; /* fragments of whole 32-byte records */
  t->pub.frag_payload = t->pub.queue / 8 - sizeof(dart__am_frag_t);
  for (int path = 0; path < DART_PATH_COUNT; path++)
    t->pub.large_min[path] = SIZE_MAX;
  t->pub.threads = dart__rt.thread_level == DART_THREAD_MULTIPLE;
  atomic_flag_clear(&t->polling);
  t->peers = calloc((size_t)team->size, sizeof *t->peers);
  t->pub.path = calloc((size_t)team->size, sizeof *t->pub.path);
  if (t->peers == NULL || t->pub.path == NULL) goto nomem;
  bool uses[DART_PATH_COUNT] = {false};
  for (int u = 0; u < team->size; u++) {
    t->pub.path[u] = message_path(team, u);
    uses[t->pub.path[u]] = true;
  }
  /* every unit opens the same paths (collective): those any unit uses */
  int mine[DART_PATH_COUNT], all[DART_PATH_COUNT];
  for (int path = 0; path < DART_PATH_COUNT; path++) mine[path] = uses[path];
  ret = DART_OK;
  if (MPI_Allreduce(mine, all, DART_PATH_COUNT, MPI_INT, MPI_MAX,
                    team->comm) != MPI_SUCCESS) {
    DART_LOG_ERROR_IN(func, "MPI_Allreduce failed");
    ret = DART_ERR_OTHER;
    goto fail;
  }
  for (int path = 0; path < DART_PATH_COUNT && ret == DART_OK; path++)
    if (all[path] && path != DART__PATH_SELF)
      ret = dart__transport__paths[path]->am_open(func, &t->pub);
  if (ret != DART_OK) goto fail;
  for (int i = 0; i < MAX_TEAMS && slot < 0; i++) {
    am_team_t *none = NULL;
    if (atomic_compare_exchange_strong(&active.teams[i], &none, t)) slot = i;
  }
  if (slot < 0) {
    DART_LOG_ERROR_IN(func, "active messages on more than %d teams at once",
                      MAX_TEAMS);
    ret = DART_ERR_OTHER;
    goto fail;
  }
  atomic_fetch_add(&active.nteams, 1);
  *out = t;
  return DART_OK;
nomem:
  DART_LOG_ERROR_IN(func, "no memory for the active messages of team %d",
                    (int)team->id);
  ret = DART_ERR_NOMEM;
fail:
  if (t != NULL) {
    close_paths(t);
    team_free(t);
  }
  return ret;
}

/* At the team's end (dart_team_destroy, dart_exit): out of the pollers'
 * sight first, then closed. */
static void team_release(dart__team_t *team)
{
  am_team_t *t = (am_team_t *)team->am;
  if (t == NULL) return;
  /* collective: units still flushing are answered until all are here */
  dart__progress__barrier("dart_team_destroy", team->comm);
  for (int i = 0; i < MAX_TEAMS; i++) {
    am_team_t *mine = t;
    if (atomic_compare_exchange_strong(&active.teams[i], &mine, NULL)) break;
  }
  atomic_fetch_sub(&active.nteams, 1);
  while (atomic_load_explicit(&active.pollers, memory_order_acquire) > 0) {
  }
  close_paths(t);
  team_free(t);
  team->am = NULL;
}

dart_ret_t dart__am__init(void)
{
  dart__team__on_release(team_release);
  dart__am__owner_init();
  return dart__progress__add("dart_init", &source);
}

void dart__am__fini(void) { dart__progress__remove(&source); }

dart_ret_t dart__am__team(const char *func, dart__team_t *team,
                          dart__am_team_t **am)
{
  if (team->am == NULL) {
    am_team_t *t = NULL;
    dart_ret_t ret = team_open(func, team, &t);
    if (ret != DART_OK) return ret;
    team->am = &t->pub;
  }
  *am = team->am;
  return DART_OK;
}

/* ---- the interface ---- */

/* A fingerprint of handler that is the same in every process of one
 * program (its object's name and its offset there), or its address where
 * the dynamic linker does not know it. */
static uint64_t handler_print(dart_am_handler_t handler)
{
  Dl_info info;
  uint64_t print = 1469598103934665603ull; /* FNV-1a */
  void *addr;
  memcpy(&addr, &handler, sizeof addr);
  if (dladdr(addr, &info) == 0 || info.dli_fname == NULL)
    return (uint64_t)(uintptr_t)addr;
  for (const char *c = info.dli_fname; *c != '\0'; c++)
    print = (print ^ (unsigned char)*c) * 1099511628211ull;
  return print ^ (uint64_t)((uintptr_t)addr - (uintptr_t)info.dli_fbase);
}

/* Whether every unit of team passed the same values (an allreduce that
 * runs handlers while it waits). */
static dart_ret_t same_everywhere(const char *func, dart__team_t *team,
                                  const uint64_t *values, int n, bool *same)
{
  uint64_t in[8], out[8];
  MPI_Request req;
  for (int i = 0; i < n; i++) {
    in[i] = values[i];
    in[n + i] = ~values[i]; /* the maximum as the minimum of complements */
  }
  DART__MPI_CHECK_IN(func, MPI_Iallreduce(in, out, 2 * n, MPI_UINT64_T,
                                          MPI_MIN, team->comm, &req));
  dart_ret_t ret = dart__progress__wait(func, 1, &req);
  if (ret != DART_OK) return ret;
  *same = true;
  for (int i = 0; i < n; i++) *same = *same && out[i] == ~out[n + i];
  return DART_OK;
}

dart_ret_t dart_am_register(dart_team_t team, dart_am_handler_t handler,
                            void *context, size_t max_reply,
                            dart_am_id_t *id)
{
  DART__CHECK_INIT();
  dart__team_t *tm = dart__team__lookup(__func__, team);
  if (tm == NULL) return DART_ERR_INVAL;
  if (handler == NULL || id == NULL) {
    DART_LOG_ERROR("%s is NULL", handler == NULL ? "handler" : "id");
    return DART_ERR_INVAL;
  }
  dart__am_team_t *opened;
  dart_ret_t ret = dart__am__team(__func__, tm, &opened);
  if (ret != DART_OK) return ret;
  am_team_t *t = of(opened);
  uint32_t index = t->nhandlers;
  void *reply = max_reply > 0 ? malloc(max_reply) : NULL;
  bool ok = index < MAX_HANDLERS && (max_reply == 0 || reply != NULL);
  /* live for messages before the check: a unit that passed it first may
   * send at once, while this one still waits for it (and runs handlers) */
  handler_t *h = ok ? &t->handlers[index] : NULL;
  if (ok) {
    h->fn = handler;
    h->context = context;
    h->max_reply = max_reply;
    h->reply = reply;
    atomic_store_explicit(&h->state, HANDLER_LIVE, memory_order_release);
  }
  uint64_t values[4] = {index, handler_print(handler), max_reply, ok};
  bool same = false;
  ret = same_everywhere(__func__, tm, values, 4, &same);
  if (ret == DART_OK && !same) {
    DART_LOG_ERROR("registration %u on team %d differs between units (the "
                   "order, the handler or max_reply %zu) or failed on some",
                   index, (int)team, max_reply);
    ret = DART_ERR_INVAL;
  }
  if (ret == DART_OK && !ok) {
    DART_LOG_ERROR(index >= MAX_HANDLERS ? "more than %d handlers on team %d"
                                         : "no memory for max_reply (%d, %d)",
                   MAX_HANDLERS, (int)team);
    ret = index >= MAX_HANDLERS ? DART_ERR_OTHER : DART_ERR_NOMEM;
  }
  if (ret != DART_OK) {
    if (h != NULL) {
      atomic_store_explicit(&h->state, HANDLER_FREE, memory_order_release);
      h->reply = NULL;
    }
    free(reply);
    return ret;
  }
  t->nhandlers = index + 1;
  *id = make_id(team, index);
  return DART_OK;
}

/* What a send and a call check: team, target, id, payload; the team's
 * messages, the handler and its index on success. */
static dart_ret_t check_send(const char *func, dart_team_t team,
                             dart_team_unit_t target, dart_am_id_t id,
                             const void *payload, size_t len,
                             am_team_t **tout, handler_t **hout,
                             uint32_t *index)
{
  DART__CHECK_INIT_IN(func);
  dart__team_t *tm = dart__team__lookup(func, team);
  if (tm == NULL) return DART_ERR_INVAL;
  if (target.id < 0 || target.id >= tm->size) {
    DART_LOG_ERROR_IN(func, "target unit %d is not in team %d (size %d)",
                      (int)target.id, (int)team, tm->size);
    return DART_ERR_INVAL;
  }
  if (payload == NULL && len > 0) {
    DART_LOG_ERROR_IN(func, "payload is NULL for %zu bytes", len);
    return DART_ERR_INVAL;
  }
  am_team_t *t = tm->am != NULL ? of(tm->am) : NULL;
  handler_t *h = lookup_handler(func, t, team, id, index);
  if (h == NULL) return DART_ERR_INVAL;
  *tout = t;
  *hout = h;
  return DART_OK;
}

/* Runs a handler for a message to this unit itself, as a poll would (one
 * handler of the team at a time). */
static void run_self(am_team_t *t, handler_t *h, const void *payload,
                     size_t len, void *reply, size_t *reply_len)
{
  unsigned spins = 0;
  while (atomic_flag_test_and_set_explicit(&t->polling, memory_order_acquire))
    dart__progress__wait_turn(&spins);
  h->fn((dart_team_unit_t){t->pub.team->myid}, payload, len, reply,
        reply_len, h->context);
  atomic_flag_clear_explicit(&t->polling, memory_order_release);
}

dart_ret_t dart_am_send(dart_team_t team, dart_team_unit_t target,
                        dart_am_id_t id, const void *payload, size_t len)
{
  am_team_t *t;
  handler_t *h;
  uint32_t index;
  dart_ret_t ret = check_send(__func__, team, target, id, payload, len, &t,
                              &h, &index);
  if (ret != DART_OK) return ret;
  if (target.id == t->pub.team->myid) {
    size_t reply_len = 0;
    run_self(t, h, payload, len, h->reply, &reply_len);
    return DART_OK;
  }
  dart__am_frag_t head = {.kind = DART__AM_SEND, .index = index, .len = len};
  return send_message(__func__, t, (int)target.id, &head, payload);
}

/* The completer of a call's handle (onesided.h). */
static dart_ret_t call_complete(const char *func, dart_handle_t h, bool wait,
                                bool *done)
{
  unsigned spins = 0;
  int state;
  for (;;) {
    dart__team_t *team = dart__team__get(h->team);
    if (team == NULL || team->am == NULL) {
      DART_LOG_ERROR_IN(func, "the team of the call (team %d) is gone",
                        (int)h->team);
      return DART_ERR_INVAL;
    }
    poll_team(of(team->am));
    state = atomic_load_explicit(&h->am.state, memory_order_acquire);
    if (state != DART__AM_CALL_WAITING) break;
    if (!wait) {
      *done = false;
      return DART_OK;
    }
    dart__progress__wait_turn(&spins);
  }
  *done = true;
  if (!wait) return DART_OK; /* the wait that follows completes it */
  atomic_store_explicit(&h->am.state, DART__AM_CALL_NONE,
                        memory_order_relaxed);
  if (state == DART__AM_CALL_FAILED) {
    DART_LOG_ERROR_IN(func, "the handler of the call failed at unit %d (its "
                      "log says why)", h->unit);
    return DART_ERR_OTHER;
  }
  *h->am.reply_len = h->am.len;
  return DART_OK;
}

/* Sends a call of kind (handler index) to u: *handle completes it. */
static dart_ret_t start_call(const char *func, am_team_t *t, int u, int kind,
                             uint32_t index, const void *payload, size_t len,
                             void *reply, size_t capacity, size_t *reply_len,
                             dart_handle_t *handle)
{
  dart_handle_t call =
      dart__onesided__handle_new(t->pub.team, u, t->pub.path[u], false);
  if (call == NULL) {
    DART_LOG_ERROR_IN(func, "no memory for a handle");
    return DART_ERR_NOMEM;
  }
  call->complete = call_complete;
  call->am.seq = atomic_fetch_add_explicit(&t->next_seq, 1,
                                           memory_order_relaxed);
  call->am.reply = reply;
  call->am.capacity = capacity;
  call->am.len = 0;
  call->am.reply_len = reply_len;
  atomic_store_explicit(&call->am.state, DART__AM_CALL_WAITING,
                        memory_order_release);
  dart__am_frag_t head = {.kind = (uint16_t)kind,
                          .index = index,
                          .seq = call->am.seq,
                          .len = len,
                          .token = (uint64_t)(uintptr_t)call};
  dart_ret_t ret = send_message(func, t, u, &head, payload);
  if (ret != DART_OK) {
    atomic_store_explicit(&call->am.state, DART__AM_CALL_NONE,
                          memory_order_relaxed);
    dart__onesided__handle_release(call);
    return ret;
  }
  *handle = call;
  return DART_OK;
}

dart_ret_t dart__am__message(const char *func, dart__am_team_t *am, int u,
                             int kind, const void *payload, size_t len,
                             void *reply, size_t capacity,
                             size_t *reply_len)
{
  am_team_t *t = of(am);
  if (reply == NULL) {
    dart__am_frag_t head = {.kind = (uint16_t)kind, .len = len};
    return send_message(func, t, u, &head, payload);
  }
  dart_handle_t call;
  dart_ret_t ret = start_call(func, t, u, kind, 0, payload, len, reply,
                              capacity, reply_len, &call);
  bool done;
  if (ret == DART_OK) ret = call_complete(func, call, true, &done);
  if (ret == DART_OK) dart__onesided__handle_release(call);
  return ret;
}

dart_ret_t dart_am_call(dart_team_t team, dart_team_unit_t target,
                        dart_am_id_t id, const void *payload, size_t len,
                        void *reply, size_t capacity, size_t *reply_len,
                        dart_handle_t *handle)
{
  if (!dart__onesided__handle_out(__func__, handle)) return DART_ERR_INVAL;
  am_team_t *t;
  handler_t *h;
  uint32_t index;
  dart_ret_t ret = check_send(__func__, team, target, id, payload, len, &t,
                              &h, &index);
  if (ret != DART_OK) return ret;
  if (reply_len == NULL || (reply == NULL && capacity > 0)) {
    DART_LOG_ERROR("%s is NULL", reply_len == NULL ? "reply_len" : "reply");
    return DART_ERR_INVAL;
  }
  if (capacity < h->max_reply) {
    DART_LOG_ERROR("capacity %zu is less than the handler's max_reply %zu",
                   capacity, h->max_reply);
    return DART_ERR_INVAL;
  }
  if (target.id == t->pub.team->myid) {
    size_t got = 0;
    run_self(t, h, payload, len, reply, &got);
    if (got > h->max_reply) {
      DART_LOG_ERROR("handler of id %d replied %zu bytes, more than its "
                     "max_reply %zu", (int)id, got, h->max_reply);
      return DART_ERR_OTHER;
    }
    *reply_len = got;
    return DART_OK;
  }
  return start_call(__func__, t, (int)target.id, DART__AM_CALL, index,
                    payload, len, reply, capacity, reply_len, handle);
}

dart_ret_t dart__am__flush(const char *func, dart__am_team_t *am, int u)
{
  am_team_t *t = of(am);
  const dart__team_t *tm = am->team;
  for (int v = u < 0 ? 0 : u; v < (u < 0 ? tm->size : u + 1); v++) {
    if (v == tm->myid) continue; /* ran at once */
    uint64_t count = atomic_load_explicit(&t->peers[v].sent,
                                          memory_order_relaxed);
    const dart__path_ops_t *path = dart__transport__paths[am->path[v]];
    unsigned spins = 0;
    for (;;) {
      bool ran = false;
      dart_ret_t ret = path->am_ran(func, am, v, count, &ran);
      if (ret != DART_OK) return ret;
      if (ran) break;
      poll_team(t);
      dart__progress__wait_turn(&spins);
    }
  }
  return DART_OK;
}

dart_ret_t dart_am_flush(dart_team_t team)
{
  DART__CHECK_INIT();
  dart__team_t *tm = dart__team__lookup(__func__, team);
  if (tm == NULL) return DART_ERR_INVAL;
  if (tm->am == NULL) return DART_OK; /* nothing was sent */
  return dart__am__flush(__func__, tm->am, -1);
}

dart_ret_t dart_am_deregister(dart_team_t team, dart_am_id_t id)
{
  DART__CHECK_INIT();
  dart__team_t *tm = dart__team__lookup(__func__, team);
  if (tm == NULL) return DART_ERR_INVAL;
  am_team_t *t = tm->am != NULL ? of(tm->am) : NULL;
  uint32_t index;
  handler_t *h = lookup_handler(__func__, t, team, id, &index);
  if (h == NULL) return DART_ERR_INVAL;
  /* every unit's messages to it have run once all have flushed */
  dart_ret_t ret = dart_am_flush(team);
  uint64_t values[1] = {index};
  bool same = false;
  if (ret == DART_OK) ret = same_everywhere(__func__, tm, values, 1, &same);
  if (ret == DART_OK && !same) {
    DART_LOG_ERROR("units deregister different ids on team %d (here %d)",
                   (int)team, (int)id);
    return DART_ERR_INVAL;
  }
  if (ret != DART_OK) return ret;
  atomic_store_explicit(&h->state, HANDLER_GONE, memory_order_release);
  return DART_OK;
}
