/*
 * Active messages over a two-sided wire (am.h: MPI's, UCX's): fragments
 * are messages the wire keeps in order per pair. Memory stays bounded by
 * credits: an origin may have DART_AM_QUEUE bytes of fragments at a target
 * that it has not consumed, counted in grains of 64 bytes (a fragment of
 * 8 bytes takes one, so that small messages stream); the target returns
 * credits once it consumed half of them.
 * Credits ride back on the fragments going the other way (a call's reply
 * returns the call's); where none go, control messages (credits, "how
 * many of mine ran?" and its answer) do, in order with the fragments, one
 * in flight per unit, taking no credit: what is owed to a unit is summed
 * until its control message is free. A fragment larger than frag_payload
 * (up to DART__AM_LARGE) goes from a copy of its own, which its send slot
 * holds until sent: the wire moves it in its rendezvous, and the target
 * receives it into memory of its own when it takes it.
 * Fragments to one unit are coalesced: each goes into that unit's open
 * send slot, and one wire message carries the slot once it is full, at
 * this unit's next poll (every libdart call that waits or tests, the
 * progress thread; at its start, and after each wire message it takes, so
 * that the replies its handlers gave leave together), or before this unit
 * asks whether its messages ran. Nagle's rule keeps a slot without
 * replies open while calls of mine to that unit are unanswered on the
 * wire and it answered one in the last HOLD_POLLS polls: each answer
 * frees a caller with calls in flight to add one, so they travel
 * together; a lone call, or one after a pause, leaves at once, and no
 * slot waits longer than HOLD_POLLS polls without an answer. So a stream
 * of small messages, and many calls in flight with their replies, pay
 * one wire message per slot instead of one each.
 */
#include <stdlib.h>
#include <string.h>

#include "am/am.h"
#include "base/log.h"
#include "transport/transport.h"

#define GRAIN 64 /* bytes per credit */
#define HOLD_POLLS 16u /* Nagle's rule: polls after an answer (the top) */
#define SEND_BUFS DART__AM_SEND_BUFS
#define CONTROL 0x101 /* token: credits; seq: CONTROL_* */
enum { CONTROL_ASK = 1, CONTROL_ANSWER = 2 }; /* answer: len = ran */

typedef struct {
  int credits;       /* grains I may still send it */
  int consumed;      /* its grains I consumed and did not credit */
  uint64_t answered; /* my messages it ran, as it last said */
  bool asked;        /* my question is unanswered */
  /* owed to it in my next control message */
  int owe_credits;
  bool owe_ask, owe_answer;
  dart__am_frag_t control;
  bool control_busy; /* its send slot is in flight */
  int open;          /* its send slot being filled, or -1 */
  /* Nagle's rule: my calls to it on the wire, unanswered; the last poll
   * that took an answer from it; the bytes so far of the call I queue and
   * of the answer I take (a message's fragments are consecutive) */
  int calls_out;
  unsigned replied;
  uint64_t call_bytes, reply_bytes;
} unit_t;

struct dart__am_twosided {
  dart__am_team_t *am;
  const dart__am_wire_t *wire;
  void *w; /* the wire's state */
  size_t frag_bytes; /* header and payload */
  int window;        /* grains in flight per (origin, target) */
  atomic_flag lock;  /* all but the receive (am->threads) */
  unit_t *units;     /* by team unit */
  int owing;         /* units owed a control message */
  char *send_bufs;
  bool send_busy[SEND_BUFS];
  char *large[SEND_BUFS]; /* a larger fragment's copy, by send slot */
  /* by send slot: the unit whose fragments it collects (-1: none), and
   * their bytes so far */
  int open_for[SEND_BUFS];
  size_t fill[SEND_BUFS];
  int calls[SEND_BUFS]; /* by send slot: the calls it completes */
  bool replies[SEND_BUFS]; /* by send slot: whether it holds a reply */
  atomic_int nopen; /* slots open (read without the lock) */
  unsigned polls;   /* polls begun (the poller's) */
};
typedef struct dart__am_twosided channel_t;

/* Whether send slot slot is free (its send done, or none started). */
static bool sent(channel_t *m, int slot, bool *busy)
{
  if (*busy && m->wire->sent(m->w, slot)) {
    *busy = false;
    if (slot < SEND_BUFS) {
      free(m->large[slot]);
      m->large[slot] = NULL;
    }
  }
  return !*busy;
}

void dart__am__twosided_close(dart__am_team_t *am)
{
  channel_t *m = am->twosided;
  if (m == NULL) return;
  am->twosided = NULL;
  /* sends the wire started complete by themselves: the team's last
   * barrier answered every unit's flush, so none still reads its buffer */
  for (int i = 0; i < SEND_BUFS; i++) {
    if (m->send_busy[i]) m->wire->forget(m->w, i);
    free(m->large[i]);
  }
  for (int u = 0; m->units != NULL && u < m->am->team->size; u++)
    if (m->units[u].control_busy) m->wire->forget(m->w, SEND_BUFS + u);
  free(m->units);
  free(m->send_bufs);
  free(m);
}

dart_ret_t dart__am__twosided_open(const char *func, dart__am_team_t *am,
                                   int path, size_t large_min,
                                   const dart__am_wire_t *wire, void *w)
{
  channel_t *m = calloc(1, sizeof *m);
  if (m == NULL) goto nomem;
  m->am = am;
  m->wire = wire;
  m->w = w;
  atomic_flag_clear(&m->lock);
  m->frag_bytes = sizeof(dart__am_frag_t) + am->frag_payload;
  m->units = calloc((size_t)am->team->size, sizeof *m->units);
  m->send_bufs = malloc(SEND_BUFS * m->frag_bytes);
  if (m->units == NULL || m->send_bufs == NULL) goto nomem;
  m->window = (int)(am->queue / GRAIN);
  for (int u = 0; u < am->team->size; u++) {
    m->units[u].credits = m->window;
    m->units[u].open = -1;
  }
  for (int i = 0; i < SEND_BUFS; i++) m->open_for[i] = -1;
  am->twosided = m;
  am->large_min[path] = large_min > am->frag_payload ? large_min
                                                      : am->frag_payload + 1;
  return DART_OK;
nomem:
  DART_LOG_ERROR_IN(func, "no memory for two-sided active messages");
  if (m != NULL) {
    free(m->units);
    free(m->send_bufs);
  }
  free(m);
  return DART_ERR_NOMEM;
}

/* Sends what u is owed, where its control message is free (lock held). */
static void send_control(channel_t *m, int u)
{
  unit_t *x = &m->units[u];
  if (!(x->owe_credits > 0 || x->owe_ask || x->owe_answer)) return;
  if (!sent(m, SEND_BUFS + u, &x->control_busy)) return;
  x->control = (dart__am_frag_t){
      .kind = CONTROL,
      .token = (uint64_t)x->owe_credits,
      .seq = (x->owe_ask ? CONTROL_ASK : 0u) |
             (x->owe_answer ? CONTROL_ANSWER : 0u),
      .len = x->owe_answer ? dart__am__ran(m->am, u) : 0};
  if (m->wire->send("dart_am (progress)", m->w, u, &x->control,
                    sizeof x->control, SEND_BUFS + u) != DART_OK)
    return; /* logged; tried again at the next poll */
  x->control_busy = true;
  x->owe_credits = 0;
  x->owe_ask = x->owe_answer = false;
  m->owing--;
}

/* The grains a fragment of bytes takes: a larger one than a fragment
 * buffer (its wire's rendezvous) as many as a whole buffer, since the
 * target takes such messages one at a time. */
static int grains(const channel_t *m, uint32_t bytes)
{
  size_t b = sizeof(dart__am_frag_t) + bytes;
  if (b > m->frag_bytes) b = m->frag_bytes;
  return (int)((b + GRAIN - 1) / GRAIN);
}

/* Whether f is (part of) a call, or of an answer to one: Nagle's rule
 * counts them (the top). */
static bool is_call(const dart__am_frag_t *f)
{
  return f->kind == DART__AM_CALL || f->kind == DART__AM_OWNER_CALL;
}

static bool is_answer(const dart__am_frag_t *f)
{
  return f->kind == DART__AM_REPLY || f->kind == DART__AM_FAILED;
}

/* Sends u's open slot, if it has one (lock held). */
static dart_ret_t send_open(const char *func, channel_t *m, int u)
{
  unit_t *x = &m->units[u];
  int slot = x->open;
  if (slot < 0) return DART_OK;
  dart_ret_t ret = m->wire->send(func, m->w, u,
                                 m->send_bufs + (size_t)slot * m->frag_bytes,
                                 m->fill[slot], slot);
  if (ret != DART_OK) return ret; /* logged; the slot stays open */
  m->send_busy[slot] = true;
  m->open_for[slot] = -1;
  x->open = -1;
  x->calls_out += m->calls[slot];
  atomic_fetch_sub_explicit(&m->nopen, 1, memory_order_relaxed);
  return DART_OK;
}

/* Sends the open slots in a poll, but those that Nagle's rule keeps open
 * (the top). */
static void send_open_slots(const char *func, channel_t *m)
{
  if (atomic_load_explicit(&m->nopen, memory_order_relaxed) == 0) return;
  dart__am__lock(m->am, &m->lock);
  for (int i = 0; i < SEND_BUFS; i++) {
    int u = m->open_for[i];
    const unit_t *x = u >= 0 ? &m->units[u] : NULL;
    if (x != NULL && (m->replies[i] || x->calls_out <= 0 ||
                      m->polls - x->replied >= HOLD_POLLS))
      (void)send_open(func, m, u);
  }
  dart__am__unlock(m->am, &m->lock);
}

/* Marks u as owed something (lock held). */
static void owe(channel_t *m, unit_t *x)
{
  if (!(x->owe_credits > 0 || x->owe_ask || x->owe_answer)) m->owing++;
}

dart_ret_t dart__am__twosided_send(const char *func, dart__am_team_t *am,
                                   int u, const dart__am_frag_t *f,
                                   const void *payload, bool *queued)
{
  channel_t *m = am->twosided;
  unit_t *x = &m->units[u];
  size_t need = sizeof *f + f->bytes;
  bool large = f->bytes > am->frag_payload;
  *queued = false;
  dart__am__lock(am, &m->lock);
  int buf = -1, cost = grains(m, f->bytes);
  dart_ret_t ret = DART_OK;
  if (x->credits < cost) goto out;
  /* what u's open slot holds goes first */
  if (x->open >= 0 && (large || m->fill[x->open] + need > m->frag_bytes) &&
      (ret = send_open(func, m, u)) != DART_OK)
    goto out;
  buf = x->open;
  for (int i = 0; i < SEND_BUFS && buf < 0; i++)
    if (m->open_for[i] < 0 && sent(m, i, &m->send_busy[i])) buf = i;
  if (buf < 0) goto out;
  char *at = NULL;
  if (large && (at = malloc(need)) == NULL) {
    DART_LOG_ERROR_IN(func, "no memory to send a message of %u bytes",
                      f->bytes);
    ret = DART_ERR_NOMEM;
    goto out;
  }
  if (!large) {
    if (x->open < 0) {
      x->open = buf;
      m->open_for[buf] = u;
      atomic_fetch_add_explicit(&m->nopen, 1, memory_order_relaxed);
      m->fill[buf] = 0;
      m->calls[buf] = 0;
      m->replies[buf] = false;
    }
    m->replies[buf] |= is_answer(f);
    at = m->send_bufs + (size_t)buf * m->frag_bytes + m->fill[buf];
  }
  /* the credits u is owed ride along (a call's reply returns its) */
  dart__am_frag_t head = *f;
  bool owed = x->owe_credits > 0 || x->owe_ask || x->owe_answer;
  int give = x->consumed + x->owe_credits;
  head.pad = (uint16_t)(give < 0xffff ? give : 0xffff);
  x->consumed = give - head.pad;
  x->owe_credits = 0;
  if (owed && !x->owe_ask && !x->owe_answer) m->owing--;
  memcpy(at, &head, sizeof head);
  if (f->bytes > 0) memcpy(at + sizeof *f, payload, f->bytes);
  x->credits -= cost;
  *queued = true;
  bool call_ends = is_call(f) && x->call_bytes + f->bytes == f->len;
  if (large) {
    ret = m->wire->send(func, m->w, u, at, need, buf);
    if (ret == DART_OK) {
      m->send_busy[buf] = true;
      m->large[buf] = at;
      x->calls_out += call_ends;
    } else {
      free(at);
      x->credits += cost;
      x->consumed += head.pad; /* still u's, for the next fragment */
      *queued = false;
    }
  } else {
    m->calls[buf] += call_ends;
    m->fill[buf] += need;
    /* a full slot goes at once; where the wire fails (logged), at the
     * next poll */
    if (m->frag_bytes - m->fill[buf] <= sizeof *f) (void)send_open(func, m, u);
  }
  if (*queued && is_call(f))
    x->call_bytes = call_ends ? 0 : x->call_bytes + f->bytes;
out:
  dart__am__unlock(am, &m->lock);
  return ret;
}

/* Takes one fragment that arrived from u (payload after it). */
static void take(channel_t *m, int u, const dart__am_frag_t *f,
                 const void *payload)
{
  dart__am_team_t *am = m->am;
  unit_t *x = &m->units[u];
  if (f->kind == CONTROL) {
    dart__am__lock(am, &m->lock);
    x->credits += (int)f->token;
    if (f->seq & CONTROL_ANSWER) {
      if (f->len > x->answered) x->answered = f->len;
      x->asked = false;
    }
    if (f->seq & CONTROL_ASK) {
      owe(m, x);
      x->owe_answer = true;
    }
    dart__am__unlock(am, &m->lock);
    return;
  }
  /* consumed once its handler runs: a reply the handler sends returns
   * its credit */
  dart__am__lock(am, &m->lock);
  if (is_answer(f)) {
    x->replied = m->polls;
    x->reply_bytes += f->bytes;
    if (x->reply_bytes == f->len) {
      x->reply_bytes = 0;
      x->calls_out--;
    }
  }
  x->credits += f->pad;
  x->consumed += grains(m, f->bytes);
  dart__am__unlock(am, &m->lock);
  dart__am__deliver(am, u, f, payload);
  dart__am__lock(am, &m->lock);
  if (x->consumed >= m->window / 2) {
    owe(m, x);
    x->owe_credits += x->consumed;
    x->consumed = 0;
  }
  dart__am__unlock(am, &m->lock);
}

unsigned dart__am__twosided_poll(dart__am_team_t *am)
{
  static const char func[] = "dart_am (progress)";
  channel_t *m = am->twosided;
  unsigned n = 0;
  const void *buf;
  size_t len;
  int u;
  /* what was queued since the last poll leaves before the wire progresses
   * (but what Nagle's rule keeps) */
  send_open_slots(func, m);
  m->polls++;
  for (int turn = 0; turn < 64 && m->wire->recv(m->w, &u, &buf, &len);
       turn++) {
    /* the fragments one wire message carries, in order */
    for (size_t at = 0; at + sizeof(dart__am_frag_t) <= len;) {
      dart__am_frag_t f;
      memcpy(&f, (const char *)buf + at, sizeof f);
      take(m, u, &f, (const char *)buf + at + sizeof f);
      at += sizeof f + f.bytes;
      n += f.kind != CONTROL;
    }
    m->wire->release(m->w);
    send_open_slots(func, m); /* the replies its handlers gave */
  }
  if (m->owing > 0) {
    dart__am__lock(am, &m->lock);
    for (u = 0; u < am->team->size && m->owing > 0; u++) send_control(m, u);
    dart__am__unlock(am, &m->lock);
  }
  return n;
}

dart_ret_t dart__am__twosided_ran(const char *func, dart__am_team_t *am,
                                  int u, uint64_t count, bool *ran)
{
  channel_t *m = am->twosided;
  unit_t *x = &m->units[u];
  dart__am__lock(am, &m->lock);
  bool done = x->answered >= count;
  /* what it has not got yet goes before the question */
  dart_ret_t ret = done ? DART_OK : send_open(func, m, u);
  if (ret != DART_OK) {
    dart__am__unlock(am, &m->lock);
    return ret;
  }
  *ran = done;
  if (!done && !x->asked) {
    owe(m, x);
    x->owe_ask = true;
    x->asked = true;
    send_control(m, u);
  }
  dart__am__unlock(am, &m->lock);
  return DART_OK;
}
