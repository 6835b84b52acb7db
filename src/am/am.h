/*
 * Active messages (dart_am.h): what the module shares with the paths that
 * carry its messages.
 *
 * A message travels as fragments in order: a 32-byte header each, then
 * up to frag_payload bytes of the message. The paths queue and deliver
 * fragments through their operation table's am_* slots (transport.h):
 * shm through rings in node-shared memory (am/shm.c), mpi through
 * two-sided messages on a communicator of the team's own (am/mpi.c); a
 * path hands each fragment that arrived to dart__am__deliver, in the
 * order its origin queued them. am.c splits and joins messages, runs the
 * handlers, returns replies and completes calls.
 */
#ifndef DART__AM__AM_H_
#define DART__AM__AM_H_

#include <dart/dart_am.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "onesided/onesided.h"
#include "team/team.h"

typedef enum {
  DART__AM_SEND = 1,  /* a message without reply */
  DART__AM_CALL = 2,  /* a message whose handler's reply goes back */
  DART__AM_REPLY = 3, /* a call's reply (token, seq: the call's) */
  DART__AM_FAILED = 4, /* a call's handler broke its max_reply */
  /* atomics the owner applies (owner.c): accumulates, batched; a fetching
   * one or compare-and-swap, a call */
  DART__AM_OWNER_BATCH = 5,
  DART__AM_OWNER_CALL = 6
} dart__am_kind_t;

typedef struct dart__am_frag {
  uint32_t bytes; /* of the message in this fragment */
  uint16_t kind;  /* dart__am_kind_t, or a path's own (below 0x100 are
                   * am.c's) */
  uint16_t pad;
  uint32_t index; /* the handler's */
  uint32_t seq;   /* a call's, which its reply repeats */
  uint64_t len;   /* the whole message's bytes */
  uint64_t token; /* a call's handle, which its reply repeats; a path's
                   * own kinds: theirs */
} dart__am_frag_t;
_Static_assert(sizeof(dart__am_frag_t) == 32, "fragment header size");

typedef struct dart__am_team dart__am_team_t;

/* What the paths see of a team's messages. */
struct dart__am_team {
  dart__team_t *team;
  size_t queue;        /* DART_AM_QUEUE: bytes each pair may have queued */
  size_t frag_payload; /* message bytes per fragment */
  /* by path: messages of this many bytes or more go as fragments of up to
   * DART__AM_LARGE bytes, which the path's wire moves in its rendezvous
   * (twosided.c); SIZE_MAX where a path has none */
  size_t large_min[DART_PATH_COUNT];
  bool threads;        /* several threads may call (DART_THREAD_MULTIPLE) */
  int *path;           /* team unit -> the path of its messages */
  void *paths[DART_PATH_COUNT]; /* each path's own state */
  void *owner; /* owner-applied atomics' state (owner.c), or NULL */
  /* the channel of the remote path's two-sided wire (twosided.c: one per
   * team, MPI's or UCX's), or NULL */
  struct dart__am_twosided *twosided;
};

/* A fragment that came from team unit origin (payload: f->bytes), handed
 * over by its path in order; done once it returns. Runs handlers. */
void dart__am__deliver(dart__am_team_t *am, int origin,
                       const dart__am_frag_t *f, const void *payload);

/* Messages from origin whose handlers have run (for the paths' flush). */
uint64_t dart__am__ran(const dart__am_team_t *am, int origin);

/* A path's spin lock (its state shared between threads, held for a few
 * instructions, never across a wait), taken only where am->threads. */
static inline void dart__am__lock(const dart__am_team_t *am, atomic_flag *l)
{
  if (!am->threads) return;
  while (atomic_flag_test_and_set_explicit(l, memory_order_acquire)) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

static inline void dart__am__unlock(const dart__am_team_t *am,
                                    atomic_flag *l)
{
  if (am->threads) atomic_flag_clear_explicit(l, memory_order_release);
}

/* A call's handle (onesided.h, h->am.state): waiting for the reply, the
 * reply there, or the handler failed. */
enum {
  DART__AM_CALL_NONE = 0, /* not a call */
  DART__AM_CALL_WAITING = 1,
  DART__AM_CALL_DONE = 2,
  DART__AM_CALL_FAILED = 3
};

/*
 * A two-sided wire (MPI's messages, UCX's active messages) that keeps each
 * pair's order, under the credits of twosided.c, which makes the am_*
 * slots of a path from it. None of its functions waits.
 */
/* Sends in flight at once: DART__AM_SEND_BUFS fragments from this unit,
 * and one control message per team unit (slot DART__AM_SEND_BUFS + u). */
#define DART__AM_SEND_BUFS 16

typedef struct {
  /* Starts sending len bytes at buf (kept until it is sent) to team unit
   * u, in send slot slot; more than a fragment's (header and
   * frag_payload) in the wire's rendezvous. */
  dart_ret_t (*send)(const char *func, void *w, int u, const void *buf,
                     size_t len, int slot);
  /* Whether the send in slot is done. */
  bool (*sent)(void *w, int slot);
  /* Lets the send in slot complete by itself (at the team's end). */
  void (*forget)(void *w, int slot);
  /* The next message that arrived, if any: its origin and bytes, valid
   * until release (false too while the first one's rendezvous moves its
   * bytes). */
  bool (*recv)(void *w, int *origin, const void **buf, size_t *len);
  void (*release)(void *w);
} dart__am_wire_t;

/* The most bytes of a message one fragment of a two-sided wire carries:
 * a larger fragment than frag_payload goes out as one wire message, which
 * the wire's own rendezvous moves (MPI's, UCX's), from a copy of the
 * origin's held until sent into a buffer the target allocates when it
 * takes the message (MPI's count is an int). */
#define DART__AM_LARGE (1ul << 30)

/* The team's channel over wire (w: its state), am->twosided, for path,
 * whose wire's rendezvous pays for messages of large_min bytes or more;
 * closed again by dart__am__twosided_close. The path's am_send, am_poll
 * and am_ran slots are twosided.c's (transport.h). */
dart_ret_t dart__am__twosided_open(const char *func, dart__am_team_t *am,
                                   int path, size_t large_min,
                                   const dart__am_wire_t *wire, void *w);
void dart__am__twosided_close(dart__am_team_t *am);

/* Collective over team where its messages are not open yet: opens them;
 * *am: the team's. */
dart_ret_t dart__am__team(const char *func, dart__team_t *team,
                          dart__am_team_t **am);
/* A message of kind (dart__am_kind_t, no handler's) to team unit u, not
 * this unit; where reply is not NULL, a call, waited for, whose reply of
 * up to capacity bytes lands there (*reply_len: its bytes). */
dart_ret_t dart__am__message(const char *func, dart__am_team_t *am, int u,
                             int kind, const void *payload, size_t len,
                             void *reply, size_t capacity,
                             size_t *reply_len);
/* Waits until the messages this unit sent to team unit u (every unit: u
 * < 0) have run. */
dart_ret_t dart__am__flush(const char *func, dart__am_team_t *am, int u);

/* owner.c, at the owner: a batch of accumulates from origin; a call
 * (reply: 16 bytes at most, *reply_len its bytes). */
void dart__am__owner_batch(dart__am_team_t *am, int origin,
                           const void *payload, size_t len);
void dart__am__owner_call(dart__am_team_t *am, int origin,
                          const void *payload, size_t len, void *reply,
                          size_t *reply_len);
void dart__am__owner_init(void);
void dart__am__owner_close(dart__am_team_t *am);

/* At dart_init (the progress source, the team release) and dart_exit. */
dart_ret_t dart__am__init(void);
void dart__am__fini(void);

#endif
