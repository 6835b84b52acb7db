/*
 * Handles come from per-thread free lists refilled in slabs, so that taking
 * one needs neither malloc nor a lock; slabs are kept until dart_exit.
 */
#include <stdlib.h>
#include <threads.h>

#include "onesided/onesided.h"

#define HANDLE_LIVE 0x68616e64u
#define HANDLE_FREE 0x66726565u
#define SLAB_HANDLES 64

typedef struct slab {
  struct slab *next;
  struct dart_handle_struct handles[SLAB_HANDLES];
} slab_t;

/* initial-exec: one load relative to the thread pointer, where the
 * default model for a shared library calls __tls_get_addr (twice in
 * dart__onesided__handle_new); a pointer fits the static TLS that the
 * C library keeps for libraries opened later too */
static _Thread_local dart_handle_t free_list
    __attribute__((tls_model("initial-exec")));
static slab_t *slabs;
static mtx_t slabs_lock;
static once_flag slabs_once = ONCE_FLAG_INIT;

static void slabs_lock_init(void) { mtx_init(&slabs_lock, mtx_plain); }

static int refill(void)
{
  slab_t *slab = calloc(1, sizeof *slab);
  if (slab == NULL) return -1;
  call_once(&slabs_once, slabs_lock_init);
  mtx_lock(&slabs_lock);
  slab->next = slabs;
  slabs = slab;
  mtx_unlock(&slabs_lock);
  for (int i = 0; i < SLAB_HANDLES; i++) {
    slab->handles[i].state = HANDLE_FREE;
    slab->handles[i].next_free = free_list;
    free_list = &slab->handles[i];
  }
  return 0;
}

dart_handle_t dart__onesided__handle_new(dart__team_t *team, int unit,
                                         int path, bool is_put)
{
  if (free_list == NULL && refill() != 0) return NULL;
  dart_handle_t h = free_list;
  free_list = h->next_free;
  h->state = HANDLE_LIVE;
  h->team = team->id;
  h->path = path;
  h->unit = unit;
  h->is_put = is_put;
  h->event = NULL;
  h->complete = NULL;
  h->drop = NULL;
  h->coll = NULL;
  atomic_store_explicit(&h->am.state, 0, memory_order_relaxed);
  return h;
}

void dart__onesided__handle_release(dart_handle_t h)
{
  h->state = HANDLE_FREE;
  h->next_free = free_list;
  free_list = h;
}

bool dart__onesided__handle_live(dart_handle_t h)
{
  return h->state == HANDLE_LIVE;
}

void dart__onesided__fini(void)
{
  call_once(&slabs_once, slabs_lock_init);
  mtx_lock(&slabs_lock);
  while (slabs) {
    slab_t *next = slabs->next;
    free(slabs);
    slabs = next;
  }
  mtx_unlock(&slabs_lock);
  free_list = NULL;
}
