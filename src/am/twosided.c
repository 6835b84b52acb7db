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
 */
#include <stdlib.h>
#include <string.h>

#include "am/am.h"
#include "base/log.h"
#include "transport/transport.h"

#define GRAIN 64 /* bytes per credit */
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
  for (int u = 0; u < am->team->size; u++) m->units[u].credits = m->window;
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
  *queued = false;
  dart__am__lock(am, &m->lock);
  int buf = -1, cost = grains(m, f->bytes);
  for (int i = 0; i < SEND_BUFS && buf < 0 && x->credits >= cost; i++)
    if (sent(m, i, &m->send_busy[i])) buf = i;
  dart_ret_t ret = DART_OK;
  char *large = NULL;
  if (buf >= 0 && f->bytes > am->frag_payload &&
      (large = malloc(sizeof *f + f->bytes)) == NULL) {
    DART_LOG_ERROR_IN(func, "no memory to send a message of %u bytes",
                      f->bytes);
    ret = DART_ERR_NOMEM;
    buf = -1;
  }
  if (buf >= 0) {
    char *at = large != NULL ? large
                             : m->send_bufs + (size_t)buf * m->frag_bytes;
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
    ret = m->wire->send(func, m->w, u, at, sizeof *f + f->bytes, buf);
    if (ret == DART_OK) {
      m->send_busy[buf] = true;
      m->large[buf] = large;
      x->credits -= cost;
      *queued = true;
    } else {
      free(large);
    }
  }
  dart__am__unlock(am, &m->lock);
  return ret;
}

unsigned dart__am__twosided_poll(dart__am_team_t *am)
{
  channel_t *m = am->twosided;
  unsigned n = 0;
  const void *buf;
  size_t len;
  int u;
  for (int turn = 0; turn < 64 && m->wire->recv(m->w, &u, &buf, &len);
       turn++) {
    unit_t *x = &m->units[u];
    dart__am_frag_t f;
    memcpy(&f, buf, sizeof f);
    if (f.kind == CONTROL) {
      m->wire->release(m->w);
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
    /* consumed once its handler runs: a reply the handler sends returns
     * its credit */
    dart__am__lock(am, &m->lock);
    x->credits += f.pad;
    x->consumed += grains(m, f.bytes);
    dart__am__unlock(am, &m->lock);
    dart__am__deliver(am, u, &f, (const char *)buf + sizeof f);
    m->wire->release(m->w);
    n++;
    dart__am__lock(am, &m->lock);
    if (x->consumed >= m->window / 2) {
      owe(m, x);
      x->owe_credits += x->consumed;
      x->consumed = 0;
    }
    dart__am__unlock(am, &m->lock);
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
  (void)func;
  channel_t *m = am->twosided;
  unit_t *x = &m->units[u];
  dart__am__lock(am, &m->lock);
  *ran = x->answered >= count;
  if (!*ran && !x->asked) {
    owe(m, x);
    x->owe_ask = true;
    x->asked = true;
    send_control(m, u);
  }
  dart__am__unlock(am, &m->lock);
  return DART_OK;
}
