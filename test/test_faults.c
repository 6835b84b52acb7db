/*
 * Faults. One unit (the victim) calls dart_abort or dies by a signal while
 * the others wait on it; the driver (scripts/fault_run.sh) checks that the
 * job ends on its own with the right status and a message naming the unit,
 * and leaves no process or shared-memory file behind. And a program that
 * calls dart_exit with everything still allocated: the sanitizer build's
 * leak check and the driver's shared-memory check see that dart_exit
 * releases it all.
 *
 *   test_faults abort|kill|segv barrier|rma|lock VICTIM CODE [TAG]
 *   test_faults exit [TAG]
 *
 * VICTIM is a unit id, or -1 for the last unit; CODE is dart_abort's. TAG
 * is not read: it marks the job's command lines for the driver.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "dart_test.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

enum { ARRIVED = 0, DATA = 8, WORDS = 64 };

static int me, nunits;

static dart_gptr_t word_of(dart_gptr_t g, int unit, int word)
{
  dart_gptr_setunit(&g, DART_TEAM_UNIT_ID(unit));
  g.addr_or_offs.offset = (uint64_t)word * sizeof(long);
  return g;
}

static void sleep_ms(long ms)
{
  struct timespec ts = {ms / 1000, ms % 1000 * 1000000L};
  nanosleep(&ts, NULL);
}

/* The others tell the victim they are about to wait on it; it faults once
 * all have (and a moment later, so that they are inside the wait). */
static void arrive(dart_gptr_t g, int victim)
{
  long one = 1, old;
  if (dart_fetch_and_op(word_of(g, victim, ARRIVED), &one, &old,
                        DART_TYPE_LONG, DART_OP_SUM) != DART_OK) {
    fprintf(stderr, "[unit %d] cannot reach unit %d\n", me, victim);
    exit(3);
  }
}

static void wait_arrivals(dart_gptr_t g)
{
  long count = 0;
  /* an atomic, not a load: it also drives the progress others' atomics
   * on our memory may need */
  while (dart_fetch_and_op(word_of(g, me, ARRIVED), NULL, &count,
                           DART_TYPE_LONG, DART_OP_NO_OP) == DART_OK &&
         count < nunits - 1)
    sleep_ms(1);
  sleep_ms(200);
}

static int fault_case(char **argv)
{
  const char *fault = argv[1], *how = argv[2];
  int victim = atoi(argv[3]), code = atoi(argv[4]);
  if (victim < 0) victim = nunits - 1;
  if (victim >= nunits) {
    fprintf(stderr, "victim %d is not a unit of %d\n", victim, nunits);
    return 2;
  }
  dart_gptr_t g = DART_GPTR_NULL;
  dart_lock_t lock = NULL;
  if (dart_team_memalloc_aligned(DART_TEAM_ALL, WORDS, DART_TYPE_LONG, &g) !=
          DART_OK ||
      dart_team_lock_init(DART_TEAM_ALL, &lock) != DART_OK) {
    fprintf(stderr, "[unit %d] set-up failed\n", me);
    return 1;
  }
  long *mine = NULL;
  if (dart_gptr_getaddr(word_of(g, me, 0), (void **)&mine) != DART_OK ||
      mine == NULL)
    return 1;
  for (int i = 0; i < WORDS; i++) mine[i] = 0;
  if (me == victim && strcmp(how, "lock") == 0 &&
      dart_lock_acquire(lock) != DART_OK)
    return 1;
  dart_barrier(DART_TEAM_ALL);

  if (me == victim) {
    wait_arrivals(g);
    if (strcmp(fault, "abort") == 0) dart_abort(code);
    raise(strcmp(fault, "kill") == 0 ? SIGKILL : SIGSEGV);
    return 1; /* not reached */
  }
  arrive(g, victim);
  if (strcmp(how, "barrier") == 0) {
    dart_barrier(DART_TEAM_ALL);
  } else if (strcmp(how, "lock") == 0) {
    dart_lock_acquire(lock);
  } else {
    long v[4] = {me, me, me, me}, r[4];
    for (;;) {
      dart_put_blocking(word_of(g, victim, DATA + 4 * me % 48), v, 4,
                        DART_TYPE_LONG, DART_TYPE_LONG);
      dart_get_blocking(r, word_of(g, victim, DATA), 4, DART_TYPE_LONG,
                        DART_TYPE_LONG);
    }
  }
  /* the wait ended although the victim never took part */
  fprintf(stderr, "[unit %d] the %s wait returned\n", me, how);
  return 1;
}

static void user_sum(const void *in, void *inout, size_t len, void *data)
{
  (void)data;
  for (size_t i = 0; i < len; i++)
    ((long *)inout)[i] += ((const long *)in)[i];
}

/*
 * Everything a program can hold when it calls dart_exit, the handles kept
 * only in a heap block freed before the call, so that what is left is
 * reachable from libdart alone. DART_LOCAL_POOL is small (test_faults.cmake):
 * the large block takes a grown pool chunk.
 */
#define EXIT_BUF 4096
static long reg_buf[EXIT_BUF], handle_src[EXIT_BUF], handle_dst[EXIT_BUF];

static int exit_case(void)
{
  struct held {
    dart_gptr_t seg, seg_sub, reg, small, grown, from_alloc, grown_next;
    dart_team_t sub, clone;
    dart_allocator_t alloc;
    dart_lock_t lock, lock_held, lock_sub;
    dart_datatype_t strided, indexed, custom;
    dart_operation_t op;
    dart_handle_t put, get;
  } *h = calloc(1, sizeof *h);
  if (h == NULL) return 1;
  const int next = (me + 1) % nunits;
  const size_t bl[2] = {2, 3}, off[2] = {0, 5};
  dart_group_t grp = NULL;
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 1000 + 64 * (size_t)me,
                                      DART_TYPE_BYTE, &h->seg));
  CHECK_OK(dart_team_memregister(DART_TEAM_ALL, EXIT_BUF - (size_t)me,
                                 DART_TYPE_LONG, reg_buf, &h->reg));
  CHECK_OK(dart_memalloc(100, DART_TYPE_BYTE, &h->small));
  CHECK_OK(dart_memalloc((size_t)3 << 20, DART_TYPE_BYTE, &h->grown));
  CHECK_OK(dart_group_create(&grp));
  for (int u = 0; u < nunits; u += 2)
    CHECK_OK(dart_group_addmember(grp, DART_GLOBAL_UNIT_ID(u)));
  h->sub = h->clone = DART_TEAM_NULL;
  CHECK_OK(dart_team_create(DART_TEAM_ALL, grp, &h->sub));
  CHECK_OK(dart_group_destroy(&grp));
  CHECK_OK(dart_team_clone(DART_TEAM_ALL, &h->clone));
  if (h->sub != DART_TEAM_NULL) {
    CHECK_OK(dart_team_memalloc_aligned(h->sub, 256, DART_TYPE_BYTE,
                                        &h->seg_sub));
    CHECK_OK(dart_team_lock_init(h->sub, &h->lock_sub));
  }
  CHECK_OK(dart_allocator_new(4096, h->clone, &h->alloc));
  CHECK_OK(dart_allocator_alloc(10, DART_TYPE_LONG, &h->from_alloc,
                                h->alloc));
  CHECK_OK(dart_team_lock_init(DART_TEAM_ALL, &h->lock));
  CHECK_OK(dart_team_lock_init(h->clone, &h->lock_held));
  if (me == 0) CHECK_OK(dart_lock_acquire(h->lock_held));
  CHECK_OK(dart_type_create_strided(DART_TYPE_LONG, 4, 2, &h->strided));
  CHECK_OK(dart_type_create_indexed(DART_TYPE_INT, 2, bl, off, &h->indexed));
  CHECK_OK(dart_type_create_custom(24, &h->custom));
  CHECK_OK(dart_op_create(user_sum, NULL, true, DART_TYPE_LONG, false,
                          &h->op));
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  dart_gptr_t reg_next = h->reg;
  dart_gptr_setunit(&reg_next, DART_TEAM_UNIT_ID(next));
  CHECK_OK(dart_put_handle(reg_next, handle_src, EXIT_BUF / 2, DART_TYPE_LONG,
                           DART_TYPE_LONG, &h->put));
  dart_gptr_t *grown = malloc((size_t)nunits * sizeof *grown);
  if (grown == NULL) return 1;
  CHECK_OK(dart_allgather(&h->grown, grown, sizeof *grown, DART_TYPE_BYTE,
                          DART_TEAM_ALL));
  h->grown_next = grown[next];
  free(grown);
  CHECK_OK(dart_get_handle(handle_dst, h->grown_next, EXIT_BUF,
                           DART_TYPE_LONG, DART_TYPE_LONG, &h->get));
  int failures = dart_test_failures;
  memset(h, 0, sizeof *h);
  free(h);
  if (dart_exit() != DART_OK) {
    fprintf(stderr, "[unit %d] dart_exit failed\n", me);
    failures++;
  }
  return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
  const bool exit_mode = argc >= 2 && strcmp(argv[1], "exit") == 0;
  if (!exit_mode && argc < 5) {
    fprintf(stderr, "usage: test_faults abort|kill|segv barrier|rma|lock "
                    "VICTIM CODE [TAG] | exit [TAG]\n");
    return 2;
  }
  dart_test_init(&argc, &argv);
  me = dart_test_unit;
  nunits = dart_test_units;
  /* the driver's view of the job: its processes and Open MPI's job id */
  const char *job = getenv("OMPI_MCA_ess_base_jobid");
  printf("unit %d pid %ld job %s\n", me, (long)getpid(), job ? job : "-");
  fflush(stdout);
  return exit_mode ? exit_case() : fault_case(argv);
}
