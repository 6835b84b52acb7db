/*
 * Team locks: an MCS queue in a team allocation of three words per unit.
 * Word TAIL of team unit 0 names the last unit in the queue (-1: free);
 * each unit's NEXT names its successor and GRANTED is set by its
 * predecessor on release. A waiting unit polls GRANTED in its own memory,
 * so the wait touches no other unit. All words are accessed with DART
 * atomics, which pick CPU or remote atomics by the allocation's team.
 */
#include <dart/dart_communication.h>
#include <dart/dart_synchronization.h>
#include <stdlib.h>
#include <threads.h>

#include "base/runtime.h"
#include "onesided/onesided.h"
#include "team/team.h"

enum { TAIL = 0, NEXT = 1, GRANTED = 2, WORDS = 3 };
#define NOBODY (-1L)
#define LOCK_LIVE 0x4c4f434bu
#define LOCK_RETIRED 0x52455452u /* its team or DART went before it */

struct dart_lock_struct {
  uint32_t state; /* LOCK_LIVE while initialised, then LOCK_RETIRED or 0 */
  dart_team_t team;
  long me;          /* team unit id */
  dart_gptr_t mem;  /* team unit 0, word 0 */
  bool held;
  struct dart_lock_struct *next_free;
  struct dart_lock_struct *prev_live, *next_live;
};

/* Destroyed locks are kept for reuse, so that a stale copy of a pointer
 * reads a dead lock rather than freed memory; live and retired ones are
 * listed, so that a team's destroy and dart_exit can retire them. */
static struct dart_lock_struct *free_locks, *live_locks;
static mtx_t free_lock;
static once_flag free_lock_once = ONCE_FLAG_INIT;

static void free_lock_init(void) { mtx_init(&free_lock, mtx_plain); }

static dart_gptr_t word(const struct dart_lock_struct *l, long unit, int w)
{
  dart_gptr_t g = l->mem;
  dart_gptr_setunit(&g, DART_TEAM_UNIT_ID((dart_unit_t)unit));
  g.addr_or_offs.offset = (uint64_t)w * sizeof(long);
  return g;
}

static dart_ret_t swap(dart_gptr_t g, long value, long *old)
{
  return dart_fetch_and_op(g, &value, old, DART_TYPE_LONG, DART_OP_REPLACE);
}

static dart_ret_t load(dart_gptr_t g, long *value)
{
  return dart_fetch_and_op(g, NULL, value, DART_TYPE_LONG, DART_OP_NO_OP);
}

static dart_ret_t check_lock(const char *func, dart_lock_t lock)
{
  DART__CHECK_INIT_IN(func);
  if (lock == NULL || lock->state != LOCK_LIVE) {
    DART_LOG_ERROR_IN(func, "lock %p is not initialised", (void *)lock);
    return DART_ERR_INVAL;
  }
  if (dart__team__get(lock->team) == NULL) {
    DART_LOG_ERROR_IN(func, "the team %d of the lock is gone", lock->team);
    return DART_ERR_INVAL;
  }
  return DART_OK;
}

dart_ret_t dart_team_lock_init(dart_team_t teamid, dart_lock_t *lock)
{
  DART__CHECK_INIT();
  dart__team_t *team = dart__team__lookup(__func__, teamid);
  if (team == NULL) return DART_ERR_INVAL;
  if (lock == NULL) {
    DART_LOG_ERROR("lock is NULL");
    return DART_ERR_INVAL;
  }
  call_once(&free_lock_once, free_lock_init);
  mtx_lock(&free_lock);
  struct dart_lock_struct *l = free_locks;
  if (l) free_locks = l->next_free;
  mtx_unlock(&free_lock);
  if (l == NULL && (l = calloc(1, sizeof *l)) == NULL) {
    DART_LOG_ERROR("out of memory");
    return DART_ERR_NOMEM;
  }
  dart_gptr_t mem;
  dart_ret_t ret =
      dart_team_memalloc_aligned(teamid, WORDS, DART_TYPE_LONG, &mem);
  if (ret != DART_OK) goto fail;
  l->team = teamid;
  l->me = team->myid;
  l->mem = mem;
  l->held = false;
  long *mine;
  dart_gptr_setunit(&mem, DART_TEAM_UNIT_ID(team->myid));
  if ((ret = dart_gptr_getaddr(mem, (void **)&mine)) != DART_OK) goto fail_mem;
  mine[TAIL] = mine[NEXT] = NOBODY;
  mine[GRANTED] = 0;
  /* the words are set everywhere before anyone uses the lock */
  if ((ret = dart_barrier(teamid)) != DART_OK) goto fail_mem;
  mtx_lock(&free_lock);
  l->state = LOCK_LIVE;
  l->prev_live = NULL;
  l->next_live = live_locks;
  if (live_locks) live_locks->prev_live = l;
  live_locks = l;
  mtx_unlock(&free_lock);
  *lock = l;
  return DART_OK;

fail_mem:
  dart_team_memfree(l->mem);
fail:
  mtx_lock(&free_lock);
  l->next_free = free_locks;
  free_locks = l;
  mtx_unlock(&free_lock);
  return ret;
}

/* Moves l from the live list to the free ones (under free_lock). */
static void lock_release(struct dart_lock_struct *l)
{
  l->state = 0;
  if (l->prev_live)
    l->prev_live->next_live = l->next_live;
  else
    live_locks = l->next_live;
  if (l->next_live) l->next_live->prev_live = l->prev_live;
  l->next_free = free_locks;
  free_locks = l;
}

dart_ret_t dart_team_lock_destroy(dart_lock_t *lock)
{
  if (lock == NULL) {
    DART_LOG_ERROR("lock is NULL");
    return DART_ERR_INVAL;
  }
  struct dart_lock_struct *l = *lock;
  if (l != NULL && l->state == LOCK_RETIRED) {
    call_once(&free_lock_once, free_lock_init);
    mtx_lock(&free_lock);
    lock_release(l);
    mtx_unlock(&free_lock);
    *lock = NULL;
    return DART_OK;
  }
  dart_ret_t ret = check_lock(__func__, l);
  if (ret != DART_OK) return ret;
  if (l->held) {
    DART_LOG_ERROR("lock %p is held by this unit", (void *)l);
    return DART_ERR_INVAL;
  }
  if ((ret = dart_team_memfree(l->mem)) != DART_OK) return ret;
  mtx_lock(&free_lock);
  lock_release(l);
  mtx_unlock(&free_lock);
  *lock = NULL;
  return DART_OK;
}

/* Clears our queue entry before we join the queue. */
static dart_ret_t reset_entry(struct dart_lock_struct *l)
{
  long old;
  dart_ret_t ret = swap(word(l, l->me, NEXT), NOBODY, &old);
  if (ret == DART_OK) ret = swap(word(l, l->me, GRANTED), 0, &old);
  return ret;
}

dart_ret_t dart_lock_acquire(dart_lock_t lock)
{
  dart_ret_t ret = check_lock(__func__, lock);
  if (ret != DART_OK) return ret;
  if (lock->held) {
    DART_LOG_ERROR("lock %p is already held by this unit", (void *)lock);
    return DART_ERR_INVAL;
  }
  long pred, granted = 0, old;
  if ((ret = reset_entry(lock)) != DART_OK) return ret;
  if ((ret = swap(word(lock, 0, TAIL), lock->me, &pred)) != DART_OK)
    return ret;
  if (pred != NOBODY) {
    if ((ret = swap(word(lock, pred, NEXT), lock->me, &old)) != DART_OK)
      return ret;
    unsigned spins = 0;
    while ((ret = load(word(lock, lock->me, GRANTED), &granted)) == DART_OK &&
           !granted)
      dart__progress__wait_turn(&spins);
    if (ret != DART_OK) return ret;
  }
  lock->held = true;
  return DART_OK;
}

dart_ret_t dart_lock_try_acquire(dart_lock_t lock, int32_t *result)
{
  dart_ret_t ret = check_lock(__func__, lock);
  if (ret != DART_OK) return ret;
  if (result == NULL) {
    DART_LOG_ERROR("result is NULL");
    return DART_ERR_INVAL;
  }
  if (lock->held) {
    DART_LOG_ERROR("lock %p is already held by this unit", (void *)lock);
    return DART_ERR_INVAL;
  }
  if ((ret = reset_entry(lock)) != DART_OK) return ret;
  long nobody = NOBODY, pred;
  ret = dart_compare_and_swap(word(lock, 0, TAIL), &lock->me, &nobody, &pred,
                              DART_TYPE_LONG);
  if (ret != DART_OK) return ret;
  lock->held = pred == NOBODY;
  *result = lock->held;
  return DART_OK;
}

dart_ret_t dart_lock_release(dart_lock_t lock)
{
  dart_ret_t ret = check_lock(__func__, lock);
  if (ret != DART_OK) return ret;
  if (!lock->held) {
    DART_LOG_ERROR("lock %p is not held by this unit", (void *)lock);
    return DART_ERR_INVAL;
  }
  long next, tail, nobody = NOBODY, old;
  if ((ret = load(word(lock, lock->me, NEXT), &next)) != DART_OK) return ret;
  if (next == NOBODY) {
    ret = dart_compare_and_swap(word(lock, 0, TAIL), &nobody, &lock->me,
                                &tail, DART_TYPE_LONG);
    if (ret != DART_OK) return ret;
    if (tail == lock->me) { /* nobody waits */
      lock->held = false;
      return DART_OK;
    }
    /* a successor has joined and is about to link itself to us */
    unsigned spins = 0;
    while ((ret = load(word(lock, lock->me, NEXT), &next)) == DART_OK &&
           next == NOBODY)
      dart__progress__wait_turn(&spins);
    if (ret != DART_OK) return ret;
  }
  if ((ret = swap(word(lock, next, GRANTED), 1, &old)) != DART_OK) return ret;
  lock->held = false;
  return DART_OK;
}

void dart__onesided__locks_retire(dart_team_t team)
{
  call_once(&free_lock_once, free_lock_init);
  mtx_lock(&free_lock);
  for (struct dart_lock_struct *l = live_locks; l; l = l->next_live)
    if (l->state == LOCK_LIVE && (team == DART_TEAM_NULL || l->team == team))
      l->state = LOCK_RETIRED;
  mtx_unlock(&free_lock);
}

void dart__onesided__team_release(dart__team_t *team)
{
  dart__onesided__locks_retire(team->id);
}

bool dart_lock_initialized(struct dart_lock_struct const *lock)
{
  return lock != NULL && lock->state == LOCK_LIVE;
}
