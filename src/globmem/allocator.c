/*
 * dart_allocator: a collective allocation of pool_size bytes per unit on a
 * team, handed out locally in pieces that every team unit can reach.
 */
#include <dart/dart_globmem.h>
#include <stdlib.h>
#include <threads.h>

#include "base/ralloc.h"
#include "base/runtime.h"
#include "globmem/globmem.h"
#include "types/datatype.h"

#define ALLOCATOR_MAGIC 0x64617274616c6c63ULL
#define ALLOCATOR_ALIGN 16

struct dart_allocator_struct {
  uint64_t magic;
  dart_gptr_t pool; /* the collective allocation, at unit 0 offset 0 */
  int myid;         /* in the pool's team */
  dart__ralloc_t ra;
  mtx_t lock;
  /* in the list of live or of retired allocators (new and destroy are
   * collective: one thread per unit changes the lists) */
  struct dart_allocator_struct *prev, *next;
};

/* Live allocators, which dart_exit retires, and retired ones, kept for
 * reuse: a stale copy of a handle reads a dead allocator rather than freed
 * memory (until the memory serves a new allocator). */
static dart_allocator_t live, retired;

/* Frees what a live allocator holds and moves it to the retired ones. */
static void retire(dart_allocator_t a)
{
  if (a->prev)
    a->prev->next = a->next;
  else
    live = a->next;
  if (a->next) a->next->prev = a->prev;
  a->magic = 0;
  dart__base__ralloc_destroy(&a->ra);
  mtx_destroy(&a->lock);
  a->prev = NULL;
  a->next = retired;
  retired = a;
}

static bool valid(const char *func, dart_allocator_t a)
{
  if (a != NULL && a->magic == ALLOCATOR_MAGIC) return true;
  DART_LOG_ERROR_IN(func, "%p is not a live allocator", (void *)a);
  return false;
}

dart_ret_t dart_allocator_new(size_t pool_size, dart_team_t team,
                              dart_allocator_t *new_allocator)
{
  DART__CHECK_INIT();
  if (dart__team__lookup(__func__, team) == NULL) return DART_ERR_INVAL;
  if (new_allocator == NULL) {
    DART_LOG_ERROR("new_allocator is NULL");
    return DART_ERR_INVAL;
  }
  dart_allocator_t a = retired;
  if (a != NULL)
    retired = a->next;
  else if ((a = calloc(1, sizeof *a)) == NULL)
    return DART_ERR_NOMEM;
  dart_ret_t ret =
      dart_team_memalloc_aligned(team, pool_size, DART_TYPE_BYTE, &a->pool);
  if (ret != DART_OK) goto fail;
  a->myid = dart__team__get(team)->myid;
  if (dart__base__ralloc_init(&a->ra, pool_size) != 0 ||
      mtx_init(&a->lock, mtx_plain) != thrd_success) {
    dart__base__ralloc_destroy(&a->ra);
    dart_team_memfree(a->pool);
    ret = DART_ERR_NOMEM;
    goto fail;
  }
  a->magic = ALLOCATOR_MAGIC;
  a->prev = NULL;
  a->next = live;
  if (live) live->prev = a;
  live = a;
  *new_allocator = a;
  return DART_OK;

fail:
  a->next = retired; /* never live: back with the retired ones */
  retired = a;
  return ret;
}

dart_ret_t dart_allocator_alloc(size_t nelem, dart_datatype_t dtype,
                                dart_gptr_t *gptr, dart_allocator_t allocator)
{
  /* DART-MPI's contract, which DASH checks: a failure leaves no gptr */
  if (gptr) *gptr = DART_GPTR_NULL;
  DART__CHECK_INIT();
  if (!valid(__func__, allocator)) return DART_ERR_INVAL;
  const dart__dtype_t *t = dart__types__dtype(dtype);
  if (t == NULL || !t->contiguous || gptr == NULL ||
      nelem > SIZE_MAX / t->elem_size) {
    DART_LOG_ERROR("datatype %ld, %zu elements or gptr %p is invalid",
                   (long)dtype, nelem, (void *)gptr);
    return DART_ERR_INVAL;
  }
  size_t bytes = nelem * t->elem_size, offset;
  mtx_lock(&allocator->lock);
  int ret = dart__base__ralloc_alloc(&allocator->ra, bytes ? bytes : 1,
                                     ALLOCATOR_ALIGN, &offset);
  mtx_unlock(&allocator->lock);
  if (ret != 0) {
    DART_LOG_DEBUG("the allocator has no %zu bytes left", bytes);
    return DART_ERR_NOMEM;
  }
  dart_gptr_t g = allocator->pool;
  g.unitid = allocator->myid;
  g.addr_or_offs.offset = offset;
  *gptr = g;
  return DART_OK;
}

dart_ret_t dart_allocator_free(dart_gptr_t *gptr, dart_allocator_t allocator)
{
  DART__CHECK_INIT();
  if (!valid(__func__, allocator)) return DART_ERR_INVAL;
  if (gptr == NULL || gptr->teamid != allocator->pool.teamid ||
      gptr->segid != allocator->pool.segid || gptr->unitid != allocator->myid) {
    DART_LOG_ERROR("gptr %p is not from this unit's part of the allocator",
                   (void *)gptr);
    return DART_ERR_INVAL;
  }
  mtx_lock(&allocator->lock);
  int ret = dart__base__ralloc_free(&allocator->ra, gptr->addr_or_offs.offset);
  mtx_unlock(&allocator->lock);
  if (ret != 0) {
    DART_LOG_ERROR("offset %llu is not the start of a live allocation",
                   (unsigned long long)gptr->addr_or_offs.offset);
    return DART_ERR_INVAL;
  }
  *gptr = DART_GPTR_NULL;
  return DART_OK;
}

dart_ret_t dart_allocator_destroy(dart_allocator_t *allocator)
{
  DART__CHECK_INIT();
  if (allocator == NULL || !valid(__func__, *allocator)) return DART_ERR_INVAL;
  dart_allocator_t a = *allocator;
  dart_ret_t ret = dart_team_memfree(a->pool);
  if (ret != DART_OK) return ret;
  retire(a);
  *allocator = NULL;
  return DART_OK;
}

void dart__globmem__allocators_fini(void)
{
  while (live) retire(live);
}
