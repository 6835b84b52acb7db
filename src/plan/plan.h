/*
 * Communication plans (dart_plan.h): the plan's state, shared by set-up
 * (setup.c) and the operations (exec.c).
 *
 * Between two units a plan sends messages: the elements of one pattern
 * packed in order. Each unit has, for every peer, two inbound slots for
 * the peer's messages (in its part of the plan's global memory), so that
 * a sender can fill one while the receiver still reads the other, and
 * two signal words per peer: "messages from the peer" (the count so far,
 * set by the sender after the data) and "messages of mine the peer has
 * consumed" (set by the peer). The k-th message (from 0) between two
 * units goes into slot k % 2 once the receiver has consumed message
 * k - 2. Node peers' slots and words are loaded and stored directly;
 * other units' are reached with put-with-signal and signals.
 *
 * Where every unit has a device whose streams signal each other (gpu.h's
 * words), node peers also have two device slots and two such words each,
 * in device memory: a bcast or reduce on device buffers is packed by the
 * device into the peer's device slot, posted by the stream, waited for by
 * the peer's stream and acknowledged by it, with no host in between. Its
 * sender's host announces each such message in the descriptor before its
 * slots (DART__PLAN_DEVICE_WORDS), once the pack and post are queued,
 * which is how the receiver knows on which words it comes; between two
 * such messages the sender's host reuses a descriptor once the receiver's
 * host has taken it (else it waits for the acknowledgement, as always).
 * Counts are the same for both kinds of message, so a unit may switch
 * between them from one operation to the next: each side waits on the
 * words of the message that last used the slot. The device words are 32
 * bits, compared modulo 2^32, and move only with messages on them: on a
 * switch to them each side first brings its peer's word up to the count
 * on a stream it lets pass (the sender the post word before it announces
 * the message, the receiver the acknowledgement word before it takes the
 * descriptor), so that no word left behind by 2^31 host messages
 * reads as ahead.
 */
#ifndef DART__PLAN__PLAN_H_
#define DART__PLAN__PLAN_H_

#include <dart/dart_plan.h>
#include <dart/dart_globmem.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "types/pattern.h"
#include "team/team.h"
#include "types/datatype.h"
#include "types/op.h"

/* How a node peer's message comes when not in the host slot (seq: the
 * message's number + 1): the roots of a bcast to read in place, or the
 * device slot; before each peer's slots. */
typedef enum {
  DART__PLAN_LENT_ROOTS = 1, /* roots: read them there */
  DART__PLAN_DEVICE_SLOT,    /* the message is in the device slot */
  DART__PLAN_DEVICE_WORDS    /* ... and posted on the device words */
} dart__plan_desc_kind_t;

typedef struct {
  _Atomic uint64_t seq; /* stored after the rest */
  uint64_t kind;        /* dart__plan_desc_kind_t */
  dart_gptr_t roots;
  /* set by the reader to seq once it has read the roots: the owner's end
   * waits for this, not for the slot's acknowledgement, which a reader
   * on a stream gives later */
  _Atomic uint64_t read;
  /* DEVICE_WORDS: set by the reader's host to seq once it has taken the
   * descriptor, which the sender then may reuse */
  _Atomic uint64_t taken;
  char pad[64 - 4 * sizeof(uint64_t) - sizeof(dart_gptr_t)];
} dart__plan_desc_t;

typedef struct {
  int unit;                     /* team unit */
  bool direct;                  /* a node peer: its slots are loaded and
                                   stored */
  dart__pattern_t roots;   /* the peer's leaves on my roots: a = my
                                   root, b = place in the message */
  dart__pattern_t leaves;  /* my leaves on its roots: a = my leaf */
  dart__pattern_t from_roots; /* direct: the same, b = its root */
  dart__pattern_t pack_roots; /* direct: its roots, packed (a device
                                 reading them in place) */
  dart__plan_desc_t *in_desc, *out_desc; /* mine, its (direct) */
  /* where every unit has a device: two inbound slots in device memory
   * for each node peer, which it fills through IPC */
  char *dev_slot_in[2], *dev_slot_out[2];
  /* and its device words (where gpu.h's words are): mine, counting its
   * messages and my messages it consumed, and its, which I set */
  uint32_t *dev_in_word, *dev_ack_word;
  uint32_t *peer_dev_in_word, *peer_dev_ack_word;
  bool out_words[2]; /* the last message sent from each slot went on the
                        device words */
  bool in_words;     /* so does the message being received */
  bool in_switched;  /* ... after one that did not */
  bool post_owed, ack_owed; /* its message to post once the device packed
                               it; its message to acknowledge once the
                               device has read it */
  size_t slot_bytes;            /* of each slot, mine and the peer's */
  uint64_t sent, received;      /* messages so far, to and from it */
  char *in[2];                  /* my inbound slots for it */
  char *out[2];                 /* direct: its inbound slots for me */
  dart_gptr_t out_g[2];         /* its inbound slots for me */
  char *staging;                /* not direct: what I put from */
  _Atomic uint64_t *in_word;    /* mine: its messages */
  _Atomic uint64_t *ack_word;   /* mine: my messages it consumed */
  dart_gptr_t in_word_g, ack_word_g;
  _Atomic uint64_t *peer_in_word, *peer_ack_word; /* direct: its words */
  dart_gptr_t peer_in_word_g, peer_ack_word_g;
  /* device buffers (set up on first use): the patterns on the device, and
   * device memory for a message to it and one from it */
  void *dev_roots, *dev_leaves;
  char *dev_out, *dev_in;
} dart__plan_peer_t;

typedef enum {
  DART__PLAN_IDLE = 0,
  DART__PLAN_BCAST,
  DART__PLAN_REDUCE,
  DART__PLAN_FETCH
} dart__plan_kind_t;

typedef struct dart__plan {
  uint32_t id;
  dart_team_t team_id;
  dart__team_t *team;   /* NULL once the team is destroyed */
  int me;
  const dart__dtype_t *type;
  size_t nroots, nleaves;
  bool dup_leaves;      /* a leaf listed twice */
  dart__op_local_t replace; /* the type's copy, for fetch's replies */
  dart__pattern_t self; /* a = my root, b = my leaf */
  dart__plan_peer_t *peers;  /* ascending units */
  size_t npeers;
  size_t self_pos;      /* peers below this unit */
  dart_gptr_t buf_g, words_g; /* DART_GPTR_NULL where not allocated */
  dart_gptr_t dev_slots_g;    /* the device slots */
  /* device buffers: messages go through device memory (dev_scratch)
   * between the device's pattern operations and the host slots, on the
   * plan's stream; set up by the first operation on device buffers */
  bool dev_ready;
  void *dev_self;       /* self on the device */
  void *dev_stream;
  char *dev_scratch;
  /* behind the packs of the messages begin queued, and behind the copies
   * out of the slots end queued: the messages are posted, and the slots
   * acknowledged, once the device has passed them */
  void *dev_packed, *dev_unslotted;
  bool posts_owed, acks_owed; /* some peer's post_owed, ack_owed */
  /* the stream whose queued work still signals on the device words, and
   * an event behind that work: the next operation on another stream, or
   * on the host, waits for it, so that no word is set out of order */
  void *words_stream;
  void *dev_signalled;
  bool words_busy;
  void *dev_waited; /* the host's own waits on the plan's stream */
  /* rootdata in my part of shared global memory of the team (node peers
   * read it in place): the last answer, valid while no segment went */
  struct {
    const void *ptr;
    uint64_t gone;
    bool shared;
    dart_gptr_t g;
  } lent;
  bool lending;     /* this bcast lends its rootdata to node peers */
  /* the operation begun */
  dart__plan_kind_t active;
  bool on_device;   /* its buffers are device memory */
  bool streamed;    /* begun on the caller's stream (the _stream forms) */
  void *stream;     /* that stream, or the plan's own */
  const char *func; /* the public function running, for log lines */
  dart_operation_t op;
  dart__op_local_t local;
  const void *src;  /* rootdata (bcast), leafdata (reduce, fetch) */
  void *dst;        /* leafdata (bcast), rootdata (reduce, fetch) */
  void *update;     /* leafupdate (fetch) */
} dart__plan_t;

/* The live plan behind a handle whose team still exists, or NULL with an
 * error line naming func. */
dart__plan_t *dart__plan__get(const char *func, dart_plan_t handle);

/* Sets up what operations on device buffers need (once per plan). */
dart_ret_t dart__plan__device_setup(const char *func, dart__plan_t *plan);

/* Waits for the device work an operation on the caller's stream left
 * behind, and (ack) acknowledges the messages it read; with keep_words,
 * leaves the work that signals on the device words queued (the next
 * operation goes on the same stream). */
dart_ret_t dart__plan__settle(const char *func, dart__plan_t *plan, bool ack,
                              bool keep_words);

/* The plan module at dart_init and dart_exit. */
dart_ret_t dart__plan__init(void);
void dart__plan__fini(void);

#endif
