/*
 * The operations of a plan (dart_plan.h): begin packs and sends what this
 * unit sends, end receives, applies and acknowledges (plan.h has the
 * message protocol). Nothing here hashes or locks, and nothing allocates
 * but the set-up of a host-buffer unit's device part, on the first
 * message a device sends it on the device words.
 *
 * bcast:  begin: my roots to each reader; my own leaves.
 *         end:   each owner's roots into my leaves.
 * reduce: begin: my leaves to each owner.
 *         end:   every unit's leaves (mine too) into my roots, by unit.
 * fetch:  begin: my leaves' operands to each owner.
 *         end:   every unit's operands (mine too) applied to my roots by
 *                unit, the old values back to each reader; then each
 *                owner's old values into my leafupdate.
 *
 * On device buffers the protocol is the same: the device packs each
 * message into device memory, which is copied into the slot, and copies
 * each message from its slot into device memory, where the device applies
 * it. All of it runs on the plan's stream (or the caller's) in the order
 * the host version runs, so results are the same; the host waits for the
 * stream before it posts messages and acknowledgements (for the _stream
 * forms: in end, and at the next call). Between node peers whose devices
 * signal each other (plan.h) the device packs straight into the peer's
 * device slot and the streams post, wait and acknowledge: the host only
 * queues the work. Every host wait for a device serves others' operations
 * meanwhile (dev_wait), as the device may wait for other units' streams.
 */
#include <dart/dart_signal.h>
#include <string.h>

#include "base/env.h"
#include "base/log.h"
#include "base/runtime.h"
#include "globmem/segment.h"
#include "gpu/gpu.h"
#include "progress/progress.h"
#include "plan/plan.h"

/* ---- messages ---- */

/* Waits until one of my words reaches value (the acquire load alone
 * where it has: the common case costs no call). */
static dart_ret_t wait_word(_Atomic uint64_t *word, dart_gptr_t g,
                            uint64_t value)
{
  if (atomic_load_explicit(word, memory_order_acquire) >= value)
    return DART_OK;
  return dart_signal_wait_until(g, DART_CMP_GE, value, NULL);
}

/* Where the next message to p is packed. */
static char *out_slot(const dart__plan_peer_t *p)
{
  return p->direct ? p->out[p->sent & 1] : p->staging;
}

/* Whether messages between p and me may go on the device words. */
static bool on_words(const dart__plan_peer_t *p)
{
  return p->dev_in_word != NULL;
}

/* Waits for the device work before event, serving others' operations
 * meanwhile: that work may wait for other units' streams, and so for
 * their hosts. */
static dart_ret_t dev_wait(const char *func, void *event)
{
  bool done = false;
  for (unsigned spins = 0;; dart__progress__wait_turn(&spins)) {
    dart_ret_t ret = dart__gpu.ops->event_query(func, event, &done);
    if (ret != DART_OK || done) return ret;
  }
}

/* dev_wait for the work on one of the plan's streams so far. */
static dart_ret_t dev_stream_wait(const dart__plan_t *plan, void *stream)
{
  dart_ret_t ret = dart__gpu.ops->event_rerecord(plan->func, plan->dev_waited,
                                                 stream);
  return ret == DART_OK ? dev_wait(plan->func, plan->dev_waited) : ret;
}

/* A device word set to value behind stream's work, once that has run
 * (bringing a word up to the count on a switch to the words, plan.h). */
static dart_ret_t word_set(const dart__plan_t *plan, uint32_t *word,
                           uint64_t value, void *stream)
{
  dart_ret_t ret = dart__gpu.ops->word_write(plan->func, word,
                                             (uint32_t)value, stream);
  return ret == DART_OK ? dev_stream_wait(plan, stream) : ret;
}

/* The host waits until my device word reaches value, through the plan's
 * stream (a unit that switched from the device words to the host). */
static dart_ret_t word_host_wait(const dart__plan_t *plan, uint32_t *word,
                                 uint64_t value)
{
  dart_ret_t ret = dart__gpu.ops->word_wait(plan->func, word,
                                            (uint32_t)value, plan->dev_stream);
  return ret == DART_OK ? dev_stream_wait(plan, plan->dev_stream) : ret;
}

/* out_slot, once p has consumed the message that used it before: on the
 * device words that message went on, and for one that goes on them
 * (words) behind plan->stream's work, the host waiting only until p's
 * host has taken the descriptor. */
static dart_ret_t send_slot(const dart__plan_t *plan, dart__plan_peer_t *p,
                            bool words, char **dst)
{
  uint64_t m = p->sent;
  dart_ret_t ret = DART_OK;
  if (m >= 2 && !p->out_words[m & 1]) {
    ret = wait_word(p->ack_word, p->ack_word_g, m - 1);
  } else if (m >= 2 && words) {
    const dart__plan_desc_t *d = &p->out_desc[m & 1];
    for (unsigned spins = 0;
         atomic_load_explicit(&d->taken, memory_order_acquire) < m - 1;)
      dart__progress__wait_turn(&spins);
    ret = dart__gpu.ops->word_wait(plan->func, p->dev_ack_word,
                                   (uint32_t)(m - 1), plan->stream);
  } else if (m >= 2) {
    ret = word_host_wait(plan, p->dev_ack_word, m - 1);
  }
  if (ret != DART_OK) return ret;
  *dst = out_slot(p);
  return DART_OK;
}

/* Hands the message packed at src (send_slot's place, or my global
 * memory) to p. */
static dart_ret_t send_post(dart__plan_peer_t *p, const char *src,
                            size_t bytes)
{
  uint64_t m = p->sent;
  if (p->direct) {
    atomic_store_explicit(p->peer_in_word, m + 1, memory_order_release);
  } else {
    dart_ret_t ret = dart_put_signal(p->out_g[m & 1], src, bytes,
                                     DART_TYPE_BYTE, DART_TYPE_BYTE,
                                     p->peer_in_word_g, m + 1,
                                     DART_SIGNAL_SET);
    if (ret != DART_OK) return ret;
  }
  p->out_words[m & 1] = false;
  p->sent = m + 1;
  return DART_OK;
}

/* The slot of the next message from p. */
static char *in_slot(const dart__plan_peer_t *p)
{
  return p->in[p->received & 1];
}

/* The next message from p, once it is there. */
static dart_ret_t recv_wait(dart__plan_peer_t *p, char **src)
{
  uint64_t m = p->received;
  p->in_words = false;
  dart_ret_t ret = wait_word(p->in_word, p->in_word_g, m + 1);
  if (ret != DART_OK) return ret;
  *src = in_slot(p);
  return DART_OK;
}

/* The next message from p: once it is there, or for one on the device
 * words (p->in_words) once p's host has announced it. */
static dart_ret_t recv_next(dart__plan_peer_t *p, char **src)
{
  bool was_words = p->in_words;
  p->in_words = false;
  if (!on_words(p)) return recv_wait(p, src);
  uint64_t m = p->received;
  const dart__plan_desc_t *d = &p->in_desc[m & 1];
  for (unsigned spins = 0;; dart__progress__wait_turn(&spins)) {
    /* a later message posted on the host makes this one's descriptor
     * visible: read the post first */
    uint64_t posted = atomic_load_explicit(p->in_word, memory_order_acquire);
    if (atomic_load_explicit(&d->seq, memory_order_acquire) == m + 1 &&
        d->kind == DART__PLAN_DEVICE_WORDS) {
      p->in_words = true;
      p->in_switched = m > 0 && !was_words;
      break;
    }
    if (posted >= m + 1) break;
  }
  *src = in_slot(p);
  return DART_OK;
}

/* The device slot holding p's next message, or NULL: the host slot. */
static char *in_device_slot(const dart__plan_peer_t *p)
{
  const dart__plan_desc_t *d = &p->in_desc[p->received & 1];
  if (!p->direct || d->seq != p->received + 1 ||
      d->kind != DART__PLAN_DEVICE_SLOT)
    return NULL;
  return p->dev_slot_in[p->received & 1];
}

/* Takes the descriptor of p's next message, which comes on the device
 * words, for a reader on stream (the sender may then reuse it): on a
 * switch to the words, once the acknowledgement word has been brought up
 * to the count behind stream's reads of earlier messages (plan.h). */
static dart_ret_t words_take(const dart__plan_t *plan, dart__plan_peer_t *p,
                             void *stream)
{
  uint64_t m = p->received;
  if (p->in_switched) {
    dart_ret_t ret = word_set(plan, p->peer_dev_ack_word, m, stream);
    if (ret != DART_OK) return ret;
    p->in_switched = false;
  }
  atomic_store_explicit(&p->in_desc[m & 1].taken, m + 1,
                        memory_order_release);
  return DART_OK;
}

/* recv_next for the host: a message a device put into my device slot is
 * copied into the host slot first (through the plan's stream where it
 * comes on the device words; its device part set up first, so that the
 * message is taken only once it can be read). */
static dart_ret_t recv_host(dart__plan_t *plan, dart__plan_peer_t *p,
                            char **src)
{
  dart_ret_t ret = recv_next(p, src);
  if (ret != DART_OK) return ret;
  if (p->in_words) {
    uint64_t m = p->received;
    ret = dart__plan__device_setup(plan->func, plan);
    if (ret == DART_OK) ret = words_take(plan, p, plan->dev_stream);
    if (ret == DART_OK)
      ret = dart__gpu.ops->word_wait(plan->func, p->dev_in_word,
                                     (uint32_t)(m + 1), plan->dev_stream);
    if (ret == DART_OK)
      ret = dart__gpu.ops->copy(plan->func, *src, p->dev_slot_in[m & 1],
                                p->slot_bytes, plan->dev_stream);
    return ret == DART_OK ? dev_stream_wait(plan, plan->dev_stream) : ret;
  }
  char *dev = in_device_slot(p);
  if (dev == NULL) return ret;
  ret = dart__gpu.ops->copy(plan->func, *src, dev, p->slot_bytes, NULL);
  return ret == DART_OK ? dart__gpu.ops->stream_sync(plan->func, NULL) : ret;
}

/* Tells p that its message on the device words is read, behind stream's
 * work (the reads). */
static dart_ret_t words_done(const dart__plan_t *plan, dart__plan_peer_t *p,
                             void *stream)
{
  uint64_t m = p->received + 1;
  dart_ret_t ret = dart__gpu.ops->word_write(plan->func, p->peer_dev_ack_word,
                                             (uint32_t)m, stream);
  if (ret == DART_OK) p->received = m;
  return ret;
}

/* Tells p that its message's slot is free again. */
static dart_ret_t recv_done(const dart__plan_t *plan, dart__plan_peer_t *p)
{
  if (p->in_words) {
    dart_ret_t ret = words_done(plan, p, plan->dev_stream);
    return ret == DART_OK ? dev_stream_wait(plan, plan->dev_stream) : ret;
  }
  uint64_t m = ++p->received;
  if (p->direct) {
    atomic_store_explicit(p->peer_ack_word, m, memory_order_release);
    return DART_OK;
  }
  return dart_signal(p->peer_ack_word_g, m, DART_SIGNAL_SET);
}

/* Packs array's elements of pattern pat for p and sends them. */
static dart_ret_t send_pattern(const dart__plan_t *plan, dart__plan_peer_t *p,
                               const dart__pattern_t *pat,
                               const char *array)
{
  char *dst;
  dart_ret_t ret = send_slot(plan, p, false, &dst);
  if (ret != DART_OK) return ret;
  size_t es = plan->type->elem_size;
  dart__types__pattern_pack(pat, array, dst, es);
  return send_post(p, dst, pat->nelem * es);
}

/* Receives p's message and applies it to array's elements of pat. */
static dart_ret_t recv_pattern(dart__plan_t *plan, dart__plan_peer_t *p,
                               const dart__pattern_t *pat, char *array,
                               const dart__op_local_t *op)
{
  char *src;
  dart_ret_t ret = recv_host(plan, p, &src);
  if (ret != DART_OK) return ret;
  dart__types__pattern_apply(pat, array, src, plan->type->elem_size, op);
  return recv_done(plan, p);
}

/* A reader's operands applied to my roots; their old values back. */
static dart_ret_t serve_fetch(dart__plan_t *plan, dart__plan_peer_t *p,
                              void *rootdata)
{
  char *src, *dst;
  dart_ret_t ret = recv_host(plan, p, &src);
  if (ret == DART_OK) ret = send_slot(plan, p, false, &dst);
  if (ret != DART_OK) return ret;
  /* across nodes the reply goes out of the inbound slot itself, which is
   * global memory */
  if (!p->direct) dst = src;
  size_t es = plan->type->elem_size;
  dart__types__pattern_fetch(&p->roots, rootdata, src, dst, es, &plan->local);
  ret = send_post(p, dst, p->roots.nelem * es);
  if (ret != DART_OK) return ret;
  return recv_done(plan, p);
}

/* ---- the operations ---- */

/* Whether node peers can read rootdata in place: it lies in my part of
 * shared global memory of the plan's team (*g points to it). */
static bool roots_shared(dart__plan_t *plan, const void *rootdata,
                         dart_gptr_t *g)
{
  uint64_t gone = atomic_load_explicit(&dart__globmem__seg_gone,
                                       memory_order_relaxed);
  if (rootdata != plan->lent.ptr || gone != plan->lent.gone) {
    plan->lent.ptr = rootdata;
    plan->lent.gone = gone;
    plan->lent.shared = dart__globmem__shared_part(
        plan->team, rootdata, plan->nroots * plan->type->elem_size,
        &plan->lent.g);
  }
  *g = plan->lent.g;
  return plan->lent.shared;
}

/* Tells node peer p where my roots are instead of packing them. */
static dart_ret_t send_lent(const dart__plan_t *plan, dart__plan_peer_t *p,
                            dart_gptr_t roots)
{
  char *unused;
  dart_ret_t ret = send_slot(plan, p, false, &unused);
  if (ret != DART_OK) return ret;
  dart__plan_desc_t *d = &p->out_desc[p->sent & 1];
  d->roots = roots;
  d->kind = DART__PLAN_LENT_ROOTS;
  d->seq = p->sent + 1;
  return send_post(p, NULL, 0);
}

/* Tells p that its lent roots of my next message are read. */
static void lent_read(dart__plan_peer_t *p)
{
  atomic_store_explicit(&p->in_desc[p->received & 1].read, p->received + 1,
                        memory_order_release);
}

/* *roots: where p's roots of its next message lie in place, or NULL
 * where the message is packed. */
static dart_ret_t lent_roots(const dart__plan_t *plan, dart__plan_peer_t *p,
                             const char **roots)
{
  const dart__plan_desc_t *d = &p->in_desc[p->received & 1];
  void *at = NULL;
  *roots = NULL;
  if (p->in_words || !p->direct || d->seq != p->received + 1 ||
      d->kind != DART__PLAN_LENT_ROOTS)
    return DART_OK;
  /* the owner found it in its part of a live allocation, which the caller
   * must not free during the bcast */
  dart_ret_t ret = dart_gptr_getaddr_shared(d->roots, &at);
  if (ret == DART_OK && at == NULL) {
    DART_LOG_ERROR_IN(plan->func, "unit %d's roots (segment %d) are not "
                                  "mapped here", p->unit, (int)d->roots.segid);
    ret = DART_ERR_OTHER;
  }
  /* read or not, the owner must not wait for them forever */
  if (ret != DART_OK) lent_read(p);
  *roots = at;
  return ret;
}

static dart_ret_t begin_bcast(dart__plan_t *plan)
{
  dart_gptr_t lent;
  bool shared = plan->nroots > 0 && roots_shared(plan, plan->src, &lent);
  plan->lending = false;
  for (size_t k = 0; k < plan->npeers; k++) {
    dart__plan_peer_t *p = &plan->peers[k];
    if (p->roots.nelem == 0) continue;
    dart_ret_t ret;
    /* the owner's end waits for the readers, which costs more than
     * packing a small message (DART_PLAN_LEND) */
    if (p->direct && shared &&
        p->roots.nelem * plan->type->elem_size >=
            dart__base__config.plan_lend) {
      ret = send_lent(plan, p, lent);
      plan->lending = true;
    } else {
      ret = send_pattern(plan, p, &p->roots, plan->src);
    }
    if (ret != DART_OK) return ret;
  }
  dart__types__pattern_apply_to_b(&plan->self, plan->src, plan->dst,
                                  plan->type->elem_size, &plan->local);
  return DART_OK;
}

static dart_ret_t end_bcast(dart__plan_t *plan)
{
  for (size_t k = 0; k < plan->npeers; k++) {
    dart__plan_peer_t *p = &plan->peers[k];
    char *src;
    if (p->leaves.nelem == 0) continue;
    const char *roots;
    dart_ret_t ret = recv_host(plan, p, &src);
    if (ret == DART_OK) ret = lent_roots(plan, p, &roots);
    if (ret != DART_OK) return ret;
    if (roots) {
      dart__types__pattern_apply(&p->from_roots, plan->dst, roots,
                                 plan->type->elem_size, &plan->local);
      lent_read(p);
    } else
      dart__types__pattern_apply(&p->leaves, plan->dst, src,
                                 plan->type->elem_size, &plan->local);
    if ((ret = recv_done(plan, p)) != DART_OK) return ret;
  }
  /* my roots are mine again once every peer that reads them has */
  for (size_t k = 0; k < plan->npeers && plan->lending; k++) {
    dart__plan_peer_t *p = &plan->peers[k];
    const dart__plan_desc_t *d = &p->out_desc[(p->sent - 1) & 1];
    if (!p->direct || p->roots.nelem == 0 || d->seq != p->sent ||
        d->kind != DART__PLAN_LENT_ROOTS)
      continue; /* this bcast's message to p was packed */
    for (unsigned spins = 0;
         atomic_load_explicit(&d->read, memory_order_acquire) != p->sent;)
      dart__progress__wait_turn(&spins);
  }
  return DART_OK;
}

/* reduce and fetch: my leaves' values to their owners */
static dart_ret_t begin_leaves_out(dart__plan_t *plan)
{
  for (size_t k = 0; k < plan->npeers; k++) {
    dart__plan_peer_t *p = &plan->peers[k];
    if (p->leaves.nelem == 0) continue;
    dart_ret_t ret = send_pattern(plan, p, &p->leaves, plan->src);
    if (ret != DART_OK) return ret;
  }
  return DART_OK;
}

/* Every unit's contribution to my roots, by unit (mine at self_pos). */
static dart_ret_t end_roots_in(dart__plan_t *plan)
{
  size_t es = plan->type->elem_size;
  for (size_t k = 0; k <= plan->npeers; k++) {
    if (k == plan->self_pos && plan->active == DART__PLAN_FETCH)
      dart__types__pattern_fetch(&plan->self, plan->dst, plan->src,
                                 plan->update, es, &plan->local);
    else if (k == plan->self_pos)
      dart__types__pattern_apply(&plan->self, plan->dst, plan->src, es,
                                 &plan->local);
    if (k == plan->npeers) break;
    dart__plan_peer_t *p = &plan->peers[k];
    if (p->roots.nelem == 0) continue;
    dart_ret_t ret = plan->active == DART__PLAN_FETCH
                         ? serve_fetch(plan, p, plan->dst)
                         : recv_pattern(plan, p, &p->roots, plan->dst,
                                        &plan->local);
    if (ret != DART_OK) return ret;
  }
  return DART_OK;
}

/* fetch: each owner's old values into my leafupdate */
static dart_ret_t end_fetch_replies(dart__plan_t *plan)
{
  for (size_t k = 0; k < plan->npeers; k++) {
    dart__plan_peer_t *p = &plan->peers[k];
    if (p->leaves.nelem == 0) continue;
    dart_ret_t ret = recv_pattern(plan, p, &p->leaves, plan->update,
                                  &plan->replace);
    if (ret != DART_OK) return ret;
  }
  return DART_OK;
}

/* ---- the operations on device buffers ----
 *
 * Queued on plan->stream (the plan's own, or the caller's for the _stream
 * forms) in the order the host version runs. Begin queues the packs and
 * their copies into the slots; the messages are posted once the device has
 * passed them (dev_packed): at once, or for the _stream forms in end, so
 * that begin does not wait for the caller's earlier work. End posts what
 * begin owes, waits for each message, queues its copy out of the slot and
 * its application; the slots are acknowledged once the device has passed
 * the copies (dev_unslotted): at once, or for the _stream forms at the
 * plan's next call, so that end does not wait for the device either.
 * Messages on the device words (plan.h) owe nothing: the stream posts and
 * acknowledges them itself. */

/* kind on the device with the operation begun, or REPLACE */
static dart_ret_t dev_run(const dart__plan_t *plan,
                          dart__gpu_pattern_kind_t kind,
                          const dart__pattern_t *pat, const void *dev_pat,
                          void *a, void *b, void *c, bool replace)
{
  if (pat->nelem == 0) return DART_OK;
  dart__gpu_pattern_op_t op = {.kind = kind,
                               .pattern = pat,
                               .device_pattern = dev_pat,
                               .a = a,
                               .b = b,
                               .c = c,
                               .type = (int)plan->type->base,
                               .op = replace ? (int)DART_OP_REPLACE
                                             : (int)plan->op,
                               .es = plan->type->elem_size,
                               .local = replace ? plan->replace
                                                : plan->local};
  return dart__gpu.ops->pattern(plan->func, &op, plan->stream);
}

static dart_ret_t dev_copy(const dart__plan_t *plan, void *dst,
                           const void *src, size_t bytes)
{
  return dart__gpu.ops->copy(plan->func, dst, src, bytes, plan->stream);
}

/* Tells p in the descriptor how my next message comes. */
static void desc_publish(dart__plan_peer_t *p, dart__plan_desc_kind_t kind)
{
  dart__plan_desc_t *d = &p->out_desc[p->sent & 1];
  d->kind = kind;
  atomic_store_explicit(&d->seq, p->sent + 1, memory_order_release);
}

/* Where the device packs p's next message (not on the device words): p's
 * device slot for me where it has one (marked so), else device memory to
 * copy into dst. */
static char *dev_out_for(dart__plan_peer_t *p)
{
  if (p->dev_slot_out[0] == NULL) return p->dev_out;
  desc_publish(p, DART__PLAN_DEVICE_SLOT);
  return p->dev_slot_out[p->sent & 1];
}

/* Packs pat's elements of array into p's device slot for my next message
 * and posts it, on the stream: on a switch to the device words, once the
 * plan's stream has brought p's post word up to the count (plan.h);
 * announced once queued. */
static dart_ret_t words_send(dart__plan_t *plan, dart__plan_peer_t *p,
                             const dart__pattern_t *pat, const void *dev_pat,
                             const char *array)
{
  uint64_t m = p->sent;
  dart_ret_t ret = DART_OK;
  if (m > 0 && !p->out_words[(m - 1) & 1])
    ret = word_set(plan, p->peer_dev_in_word, m, plan->dev_stream);
  if (ret == DART_OK)
    ret = dev_run(plan, DART__GPU_PATTERN_PACK, pat, dev_pat, (char *)array,
                  p->dev_slot_out[m & 1], NULL, true);
  if (ret == DART_OK)
    ret = dart__gpu.ops->word_write(plan->func, p->peer_dev_in_word,
                                    (uint32_t)(m + 1), plan->stream);
  if (ret != DART_OK) return ret;
  desc_publish(p, DART__PLAN_DEVICE_WORDS);
  p->out_words[m & 1] = true;
  p->sent = m + 1;
  return DART_OK;
}

/* The stream's work so far signals on the device words: a call on
 * another stream, or on none, waits for it (dart__plan__settle). */
static dart_ret_t words_queued(dart__plan_t *plan)
{
  plan->words_busy = true;
  plan->words_stream = plan->stream;
  return dart__gpu.ops->event_rerecord(plan->func, plan->dev_signalled,
                                       plan->stream);
}

/* Where the device reads p's next message of bytes at src: my device slot
 * where it came there (on the device words: once the stream has seen it
 * posted), else p->dev_in after a copy. */
static dart_ret_t dev_in_for(const dart__plan_t *plan, dart__plan_peer_t *p,
                             const char *src, size_t bytes, char **in)
{
  if (p->in_words) {
    *in = p->dev_slot_in[p->received & 1];
    dart_ret_t ret = words_take(plan, p, plan->stream);
    return ret == DART_OK ? dart__gpu.ops->word_wait(
                                plan->func, p->dev_in_word,
                                (uint32_t)(p->received + 1), plan->stream)
                          : ret;
  }
  *in = in_device_slot(p);
  if (*in != NULL) return DART_OK;
  *in = p->dev_in;
  return dev_copy(plan, p->dev_in, src, bytes);
}

/* After the device's reads of p's message: acknowledged by the stream on
 * the device words, else owed until the device has passed them. */
static dart_ret_t dev_recv_done(dart__plan_t *plan, dart__plan_peer_t *p)
{
  if (p->in_words) return words_done(plan, p, plan->stream);
  p->ack_owed = plan->acks_owed = true;
  return DART_OK;
}

/* My roots (bcast) or leaves (reduce, fetch) of array for each peer that
 * reads or owns them, packed on the device into its device slot or, for
 * a copy, into device memory; posted by the stream on the device words
 * (bcast and reduce, where the peer has them), else posting them is owed. */
static dart_ret_t dev_send_all(dart__plan_t *plan, bool roots,
                               const char *array)
{
  size_t es = plan->type->elem_size;
  dart_ret_t ret = DART_OK;
  bool any_words = false;
  for (size_t k = 0; k < plan->npeers && ret == DART_OK; k++) {
    dart__plan_peer_t *p = &plan->peers[k];
    const dart__pattern_t *pat = roots ? &p->roots : &p->leaves;
    const void *dev_pat = roots ? p->dev_roots : p->dev_leaves;
    bool words = on_words(p) && plan->active != DART__PLAN_FETCH;
    char *dst;
    if (pat->nelem == 0) continue;
    ret = send_slot(plan, p, words, &dst);
    if (ret == DART_OK && words) {
      ret = words_send(plan, p, pat, dev_pat, array);
      any_words = true;
      continue;
    }
    char *packed = ret == DART_OK ? dev_out_for(p) : NULL;
    if (ret == DART_OK)
      ret = dev_run(plan, DART__GPU_PATTERN_PACK, pat, dev_pat,
                    (char *)array, packed, NULL, true);
    if (ret == DART_OK && packed == p->dev_out)
      ret = dev_copy(plan, dst, p->dev_out, pat->nelem * es);
    if (ret == DART_OK) p->post_owed = plan->posts_owed = true;
  }
  if (ret == DART_OK && roots) /* bcast: my own leaves */
    ret = dev_run(plan, DART__GPU_PATTERN_APPLY_TO_B, &plan->self,
                  plan->dev_self, (char *)array, plan->dst, NULL, false);
  if (ret == DART_OK && plan->posts_owed)
    ret = dart__gpu.ops->event_rerecord(plan->func, plan->dev_packed,
                                        plan->stream);
  if (ret == DART_OK && any_words) ret = words_queued(plan);
  return ret;
}

/* Posts what dev_send_all packed, once the device has. */
static dart_ret_t dev_post_all(dart__plan_t *plan)
{
  if (!plan->posts_owed) return DART_OK;
  dart_ret_t ret = dev_wait(plan->func, plan->dev_packed);
  bool roots = plan->active == DART__PLAN_BCAST;
  for (size_t k = 0; k < plan->npeers && ret == DART_OK; k++) {
    dart__plan_peer_t *p = &plan->peers[k];
    const dart__pattern_t *pat = roots ? &p->roots : &p->leaves;
    if (p->post_owed)
      ret = send_post(p, out_slot(p), pat->nelem * plan->type->elem_size);
    p->post_owed = false;
  }
  plan->posts_owed = false;
  return ret;
}

/* The device is to read the slots of the messages just received: where
 * acknowledgements are owed, they wait for it to have passed the reads;
 * those on the device words come from the stream (any_words). */
static dart_ret_t dev_owe_acks(dart__plan_t *plan, bool any_words)
{
  dart_ret_t ret = any_words ? words_queued(plan) : DART_OK;
  if (ret != DART_OK || !plan->acks_owed) return ret;
  return dart__gpu.ops->event_rerecord(plan->func, plan->dev_unslotted,
                                       plan->stream);
}

dart_ret_t dart__plan__settle(const char *func, dart__plan_t *plan, bool ack,
                              bool keep_words)
{
  dart_ret_t ret = DART_OK;
  if (plan->words_busy && !keep_words) {
    ret = dev_wait(func, plan->dev_signalled);
    if (ret != DART_OK) return ret;
    plan->words_busy = false;
  }
  if (!plan->acks_owed) return DART_OK;
  ret = dev_wait(func, plan->dev_unslotted);
  if (ret != DART_OK) return ret; /* still owed */
  for (size_t k = 0; k < plan->npeers && ret == DART_OK; k++) {
    dart__plan_peer_t *p = &plan->peers[k];
    if (p->ack_owed && ack) ret = recv_done(plan, p);
    p->ack_owed = false;
  }
  plan->acks_owed = false;
  return ret;
}

/* Each owner's message into my leaves of array (bcast's leafdata with
 * the operation, fetch's leafupdate replaced). */
static dart_ret_t dev_recv_leaves(dart__plan_t *plan, char *array,
                                  bool replace)
{
  size_t es = plan->type->elem_size;
  dart_ret_t ret = DART_OK;
  bool any_words = false;
  for (size_t k = 0; k < plan->npeers && ret == DART_OK; k++) {
    dart__plan_peer_t *p = &plan->peers[k];
    char *src = NULL, *in = NULL;
    if (p->leaves.nelem == 0) continue;
    const char *roots = NULL;
    ret = recv_next(p, &src);
    if (ret == DART_OK) ret = lent_roots(plan, p, &roots);
    /* roots lent in place: packed into my slot here, for the device */
    if (ret == DART_OK && roots) {
      dart__types__pattern_pack(&p->pack_roots, roots, src, es);
      lent_read(p);
    }
    if (ret == DART_OK)
      ret = dev_in_for(plan, p, src, p->leaves.nelem * es, &in);
    if (ret == DART_OK)
      ret = dev_run(plan, DART__GPU_PATTERN_APPLY, &p->leaves, p->dev_leaves,
                    array, in, NULL, replace);
    any_words = any_words || p->in_words;
    if (ret == DART_OK) ret = dev_recv_done(plan, p);
  }
  return ret == DART_OK ? dev_owe_acks(plan, any_words) : ret;
}

/* reduce: every unit's contribution to my roots, by unit. */
static dart_ret_t dev_reduce_in(dart__plan_t *plan)
{
  size_t es = plan->type->elem_size;
  dart_ret_t ret = DART_OK;
  bool any_words = false;
  for (size_t k = 0; k <= plan->npeers && ret == DART_OK; k++) {
    if (k == plan->self_pos)
      ret = dev_run(plan, DART__GPU_PATTERN_APPLY, &plan->self,
                    plan->dev_self, plan->dst, (void *)plan->src, NULL,
                    false);
    if (k == plan->npeers || ret != DART_OK) break;
    dart__plan_peer_t *p = &plan->peers[k];
    char *src = NULL, *in = NULL;
    if (p->roots.nelem == 0) continue;
    ret = recv_next(p, &src);
    if (ret == DART_OK)
      ret = dev_in_for(plan, p, src, p->roots.nelem * es, &in);
    if (ret == DART_OK)
      ret = dev_run(plan, DART__GPU_PATTERN_APPLY, &p->roots, p->dev_roots,
                    plan->dst, in, NULL, false);
    any_words = any_words || p->in_words;
    if (ret == DART_OK) ret = dev_recv_done(plan, p);
  }
  return ret == DART_OK ? dev_owe_acks(plan, any_words) : ret;
}

/* fetch: every unit's operands applied to my roots by unit, and each
 * reader's old values back out of the slot they came in (across nodes)
 * or into its own (on the node); then each owner's old values into my
 * leafupdate. Replies wait for the device, so all of it does. */
static dart_ret_t dev_fetch_in(dart__plan_t *plan)
{
  size_t es = plan->type->elem_size;
  dart_ret_t ret = DART_OK;
  for (size_t k = 0; k <= plan->npeers && ret == DART_OK; k++) {
    if (k == plan->self_pos)
      ret = dev_run(plan, DART__GPU_PATTERN_FETCH, &plan->self,
                    plan->dev_self, plan->dst, (void *)plan->src,
                    plan->update, false);
    if (k == plan->npeers || ret != DART_OK) break;
    dart__plan_peer_t *p = &plan->peers[k];
    char *src = NULL, *reply = NULL, *in = NULL, *out = NULL;
    size_t bytes = p->roots.nelem * es;
    if (p->roots.nelem == 0) continue;
    ret = recv_wait(p, &src);
    if (ret == DART_OK) ret = dev_in_for(plan, p, src, bytes, &in);
    if (ret == DART_OK) ret = send_slot(plan, p, false, &reply);
    if (ret == DART_OK) out = dev_out_for(p);
    if (ret == DART_OK)
      ret = dev_run(plan, DART__GPU_PATTERN_FETCH, &p->roots, p->dev_roots,
                    plan->dst, in, out, false);
    if (ret == DART_OK && out == p->dev_out)
      ret = dev_copy(plan, p->direct ? reply : src, p->dev_out, bytes);
  }
  if (ret == DART_OK) ret = dev_stream_wait(plan, plan->stream);
  for (size_t k = 0; k < plan->npeers && ret == DART_OK; k++) {
    dart__plan_peer_t *p = &plan->peers[k];
    if (p->roots.nelem == 0) continue;
    ret = send_post(p, p->direct ? out_slot(p) : in_slot(p),
                    p->roots.nelem * es);
    if (ret == DART_OK) ret = recv_done(plan, p);
  }
  if (ret == DART_OK) ret = dev_recv_leaves(plan, plan->update, true);
  return ret == DART_OK ? dart__plan__settle(plan->func, plan, true, false)
                        : ret;
}

/* The device forms of begin and end; the plan's own stream is done with
 * its messages on return. */
static dart_ret_t dev_begin(dart__plan_t *plan)
{
  dart_ret_t ret = dev_send_all(plan, plan->active == DART__PLAN_BCAST,
                                plan->src);
  if (ret == DART_OK && !plan->streamed) ret = dev_post_all(plan);
  return ret;
}

static dart_ret_t dev_end(dart__plan_t *plan)
{
  dart_ret_t ret = dev_post_all(plan);
  if (ret != DART_OK) return ret;
  switch (plan->active) {
  case DART__PLAN_BCAST: ret = dev_recv_leaves(plan, plan->dst, false); break;
  case DART__PLAN_REDUCE: ret = dev_reduce_in(plan); break;
  default: return dev_fetch_in(plan);
  }
  if (ret == DART_OK && !plan->streamed)
    ret = dev_stream_wait(plan, plan->stream);
  if (ret == DART_OK && !plan->streamed)
    ret = dart__plan__settle(plan->func, plan, true, false);
  return ret;
}

static const char *kind_name(dart__plan_kind_t kind)
{
  switch (kind) {
  case DART__PLAN_BCAST: return "a bcast";
  case DART__PLAN_REDUCE: return "a reduce";
  case DART__PLAN_FETCH: return "a fetch-and-op";
  default: return "nothing";
  }
}

/* Whether a begin's buffers are device memory: all or none (a NULL one,
 * for no elements, goes with either). */
static dart_ret_t buffers_kind(const char *func, dart__plan_kind_t kind,
                               const void *src, const void *dst,
                               const void *update, bool *on_device)
{
  const char *names[3] = {kind == DART__PLAN_BCAST ? "rootdata" : "leafdata",
                          kind == DART__PLAN_BCAST ? "leafdata" : "rootdata",
                          "leafupdate"};
  const void *bufs[3] = {src, dst, update};
  int first = -1;
  bool device = false;
  for (int i = 0; i < 3; i++) {
    if (bufs[i] == NULL) continue;
    bool d = dart__gpu__is_device(bufs[i]);
    if (first < 0) {
      first = i;
      device = d;
    } else if (d != device) {
      DART_LOG_ERROR_IN(func, "%s is %s memory and %s %s memory: a plan's "
                              "buffers are all of one kind",
                        names[first], device ? "device" : "host", names[i],
                        d ? "device" : "host");
      return DART_ERR_INVAL;
    }
  }
  *on_device = device;
  return DART_OK;
}

/* Checks a begin's arguments (NULL arrays with elements, the operation,
 * the plan idle, a stream for the _stream forms) and records them; *plan_out
 * the plan. */
static dart_ret_t begin_checked(const char *func, dart_plan_t handle,
                                dart__plan_kind_t kind, const void *src,
                                void *dst, void *update, dart_operation_t op,
                                bool streamed, void *stream,
                                dart__plan_t **plan_out)
{
  DART__CHECK_INIT_IN(func);
  dart__plan_t *plan = dart__plan__get(func, handle);
  if (plan == NULL) return DART_ERR_INVAL;
  if (plan->active != DART__PLAN_IDLE) {
    DART_LOG_ERROR_IN(func, "plan %p is in %s already (begun, not ended)",
                      (void *)handle, kind_name(plan->active));
    return DART_ERR_INVAL;
  }
  const void *roots = kind == DART__PLAN_BCAST ? src : dst;
  const void *leaves = kind == DART__PLAN_BCAST ? dst : src;
  if (roots == NULL && plan->nroots > 0) {
    DART_LOG_ERROR_IN(func, "rootdata is NULL for %zu roots", plan->nroots);
    return DART_ERR_INVAL;
  }
  if ((leaves == NULL ||
       (kind == DART__PLAN_FETCH && update == NULL)) &&
      plan->nleaves > 0) {
    DART_LOG_ERROR_IN(func, "%s is NULL for %zu leaves",
                      leaves == NULL ? "leafdata" : "leafupdate",
                      plan->nleaves);
    return DART_ERR_INVAL;
  }
  bool on_device;
  dart_ret_t ret = buffers_kind(func, kind, src, dst, update, &on_device);
  if (ret != DART_OK) return ret;
  if (streamed && !on_device && (src != NULL || dst != NULL)) {
    DART_LOG_ERROR_IN(func, "the buffers are host memory: the _stream "
                            "forms take device memory");
    return DART_ERR_INVAL;
  }
  if (streamed && stream != NULL && dart__gpu.ops == &dart__gpu_emu) {
    DART_LOG_ERROR_IN(func, "emulated devices have no streams: pass NULL");
    return DART_ERR_INVAL;
  }
  if (op == DART_OP_NO_OP && kind != DART__PLAN_FETCH) {
    DART_LOG_ERROR_IN(func, "DART_OP_NO_OP would move nothing");
    return DART_ERR_INVAL;
  }
  dart__op_local_t local;
  ret = dart__types__op_local(func, op, plan->type, &local);
  if (ret != DART_OK) return ret;
  if (kind == DART__PLAN_BCAST && op == DART_OP_REPLACE && plan->dup_leaves) {
    DART_LOG_ERROR_IN(func, "a leaf of plan %p is listed twice: two roots "
                            "would replace it", (void *)handle);
    return DART_ERR_INVAL;
  }
  if (on_device) {
    const dart__dtype_t *t = plan->type;
    if (op != DART_OP_REPLACE &&
        (op >= DART__OP_FIRST_USER || t->base >= DART_TYPE_LAST ||
         t->base == DART_TYPE_LONG_DOUBLE)) {
      DART_LOG_ERROR_IN(func, "operation %lu on device buffers: the device "
                              "applies DART_OP_REPLACE, or a predefined "
                              "operation on a basic type but long double",
                        (unsigned long)op);
      return DART_ERR_INVAL;
    }
    if ((ret = dart__plan__device_setup(func, plan)) != DART_OK) return ret;
  }
  /* what the last operation on a stream left to acknowledge; its words
   * stay queued where this one's go behind them */
  bool keep_words = on_device && streamed && stream == plan->words_stream;
  if ((ret = dart__plan__settle(func, plan, true, keep_words)) != DART_OK)
    return ret;
  plan->active = kind;
  plan->on_device = on_device;
  plan->streamed = streamed;
  plan->stream = streamed ? stream : plan->dev_stream;
  plan->op = op;
  plan->local = local;
  plan->src = src;
  plan->dst = dst;
  plan->update = update;
  plan->func = func;
  *plan_out = plan;
  return DART_OK;
}

/* Checks that an end matches the begin. */
static dart_ret_t end_checked(const char *func, dart_plan_t handle,
                              dart__plan_kind_t kind, const void *src,
                              const void *dst, const void *update,
                              dart_operation_t op, bool streamed,
                              void *stream, dart__plan_t **plan_out)
{
  DART__CHECK_INIT_IN(func);
  dart__plan_t *plan = dart__plan__get(func, handle);
  if (plan == NULL) return DART_ERR_INVAL;
  if (plan->active != kind) {
    DART_LOG_ERROR_IN(func, "plan %p has %s begun, not %s", (void *)handle,
                      kind_name(plan->active), kind_name(kind));
    return DART_ERR_INVAL;
  }
  if (src != plan->src || dst != plan->dst || update != plan->update ||
      op != plan->op) {
    DART_LOG_ERROR_IN(func, "the buffers or operation %lu differ from "
                            "those of the begin",
                      (unsigned long)op);
    return DART_ERR_INVAL;
  }
  if (streamed != plan->streamed ||
      (streamed && stream != plan->stream)) {
    DART_LOG_ERROR_IN(func, "plan %p was begun %s", (void *)handle,
                      plan->streamed ? "on another stream"
                                     : "without a stream");
    return DART_ERR_INVAL;
  }
  plan->func = func;
  *plan_out = plan;
  return DART_OK;
}

static dart_ret_t host_begin(dart__plan_t *plan)
{
  return plan->active == DART__PLAN_BCAST ? begin_bcast(plan)
                                          : begin_leaves_out(plan);
}

static dart_ret_t host_end(dart__plan_t *plan)
{
  switch (plan->active) {
  case DART__PLAN_BCAST: return end_bcast(plan);
  case DART__PLAN_REDUCE: return end_roots_in(plan);
  default: {
    dart_ret_t ret = end_roots_in(plan);
    return ret == DART_OK ? end_fetch_replies(plan) : ret;
  }
  }
}

/* A begin: checked, then on the host or the device. */
static dart_ret_t begin(const char *func, dart_plan_t handle,
                        dart__plan_kind_t kind, const void *src, void *dst,
                        void *update, dart_operation_t op, bool streamed,
                        void *stream)
{
  dart__plan_t *plan;
  dart_ret_t ret = begin_checked(func, handle, kind, src, dst, update, op,
                                 streamed, stream, &plan);
  if (ret != DART_OK) return ret;
  ret = plan->on_device ? dev_begin(plan) : host_begin(plan);
  /* a failed operation leaves the plan idle (the error is logged where it
   * was found) */
  if (ret != DART_OK) plan->active = DART__PLAN_IDLE;
  return ret;
}

static dart_ret_t end(const char *func, dart_plan_t handle,
                      dart__plan_kind_t kind, const void *src,
                      const void *dst, const void *update,
                      dart_operation_t op, bool streamed, void *stream)
{
  dart__plan_t *plan;
  dart_ret_t ret = end_checked(func, handle, kind, src, dst, update, op,
                               streamed, stream, &plan);
  if (ret != DART_OK) return ret;
  ret = plan->on_device ? dev_end(plan) : host_end(plan);
  plan->active = DART__PLAN_IDLE;
  return ret;
}

dart_ret_t dart_plan_bcast_begin(dart_plan_t plan, const void *rootdata,
                                 void *leafdata, dart_operation_t op)
{
  return begin(__func__, plan, DART__PLAN_BCAST, rootdata, leafdata, NULL,
               op, false, NULL);
}

dart_ret_t dart_plan_bcast_end(dart_plan_t plan, const void *rootdata,
                               void *leafdata, dart_operation_t op)
{
  return end(__func__, plan, DART__PLAN_BCAST, rootdata, leafdata, NULL, op,
             false, NULL);
}

dart_ret_t dart_plan_reduce_begin(dart_plan_t plan, const void *leafdata,
                                  void *rootdata, dart_operation_t op)
{
  return begin(__func__, plan, DART__PLAN_REDUCE, leafdata, rootdata, NULL,
               op, false, NULL);
}

dart_ret_t dart_plan_reduce_end(dart_plan_t plan, const void *leafdata,
                                void *rootdata, dart_operation_t op)
{
  return end(__func__, plan, DART__PLAN_REDUCE, leafdata, rootdata, NULL, op,
             false, NULL);
}

dart_ret_t dart_plan_fetch_and_op_begin(dart_plan_t plan, void *rootdata,
                                        const void *leafdata,
                                        void *leafupdate,
                                        dart_operation_t op)
{
  return begin(__func__, plan, DART__PLAN_FETCH, leafdata, rootdata,
               leafupdate, op, false, NULL);
}

dart_ret_t dart_plan_fetch_and_op_end(dart_plan_t plan, void *rootdata,
                                      const void *leafdata, void *leafupdate,
                                      dart_operation_t op)
{
  return end(__func__, plan, DART__PLAN_FETCH, leafdata, rootdata,
             leafupdate, op, false, NULL);
}

dart_ret_t dart_plan_bcast_begin_stream(dart_plan_t plan,
                                        const void *rootdata, void *leafdata,
                                        dart_operation_t op,
                                        dart_stream_t stream)
{
  return begin(__func__, plan, DART__PLAN_BCAST, rootdata, leafdata, NULL,
               op, true, stream);
}

dart_ret_t dart_plan_bcast_end_stream(dart_plan_t plan, const void *rootdata,
                                      void *leafdata, dart_operation_t op,
                                      dart_stream_t stream)
{
  return end(__func__, plan, DART__PLAN_BCAST, rootdata, leafdata, NULL, op,
             true, stream);
}

dart_ret_t dart_plan_reduce_begin_stream(dart_plan_t plan,
                                         const void *leafdata,
                                         void *rootdata, dart_operation_t op,
                                         dart_stream_t stream)
{
  return begin(__func__, plan, DART__PLAN_REDUCE, leafdata, rootdata, NULL,
               op, true, stream);
}

dart_ret_t dart_plan_reduce_end_stream(dart_plan_t plan, const void *leafdata,
                                       void *rootdata, dart_operation_t op,
                                       dart_stream_t stream)
{
  return end(__func__, plan, DART__PLAN_REDUCE, leafdata, rootdata, NULL, op,
             true, stream);
}
