/*
 * DART_THREAD_MULTIPLE with two threads per unit: both threads add to one
 * counter with fetch-and-op, accumulate and compare-and-swap at once, and
 * move data to and from the next unit with blocking puts and gets. The
 * counter must be exact, every fetch-add must see a larger value than the
 * thread's previous one, and every transfer must land. Skipped (77) when
 * MPI does not provide MPI_THREAD_MULTIPLE.
 */
#include <pthread.h>

#include "dart_test.h"

enum { NTHREADS = 2, SLOT = 16 };

static int me, n, rounds;
static dart_gptr_t counter, data;

struct worker {
  int index;
  int errors;
};

static void *worker_main(void *arg)
{
  struct worker *w = arg;
  const long one = 1;
  long last = -1;
  int next_unit = (me + 1) % n;
  dart_gptr_t slot = data;
  dart_gptr_setunit(&slot, DART_TEAM_UNIT_ID(next_unit));
  slot.addr_or_offs.offset = ((size_t)me * NTHREADS + w->index) * SLOT *
                             sizeof(long);
  for (int i = 0; i < rounds; i++) {
    long old, seen, next;
    dart_ret_t ret = DART_OK;
    switch (i % 3) {
    case 0:
      ret = dart_fetch_and_op(counter, &one, &old, DART_TYPE_LONG,
                              DART_OP_SUM);
      if (old <= last) w->errors++;
      last = old;
      break;
    case 1:
      ret = dart_accumulate(counter, &one, 1, DART_TYPE_LONG, DART_OP_SUM);
      break;
    default:
      ret = dart_fetch_and_op(counter, NULL, &old, DART_TYPE_LONG,
                              DART_OP_NO_OP);
      while (ret == DART_OK) {
        next = old + 1;
        ret = dart_compare_and_swap(counter, &next, &old, &seen,
                                    DART_TYPE_LONG);
        if (seen == old) break;
        old = seen;
      }
      break;
    }
    if (ret != DART_OK) w->errors++;
    if (i % 16 == 0) {
      long out[SLOT], in[SLOT];
      for (int j = 0; j < SLOT; j++) {
        out[j] = ((long)me << 40) | ((long)w->index << 32) | (i << 8) | j;
        in[j] = -1;
      }
      if (dart_put_blocking(slot, out, SLOT, DART_TYPE_LONG,
                            DART_TYPE_LONG) != DART_OK ||
          dart_get_blocking(in, slot, SLOT, DART_TYPE_LONG, DART_TYPE_LONG) !=
              DART_OK ||
          memcmp(in, out, sizeof in) != 0)
        w->errors++;
    }
  }
  return NULL;
}

int main(int argc, char **argv)
{
  dart_thread_support_level_t level = DART_THREAD_MULTIPLE;
  if (dart_init_thread(&argc, &argv, &level) != DART_OK) {
    fprintf(stderr, "dart_init_thread failed\n");
    return 1;
  }
  dart_global_unit_t gme;
  size_t units;
  CHECK_OK(dart_myid(&gme));
  CHECK_OK(dart_size(&units));
  dart_test_unit = me = gme.id;
  dart_test_units = n = (int)units;
  if (level != DART_THREAD_MULTIPLE) {
    if (me == 0) printf("MPI does not provide MPI_THREAD_MULTIPLE: skipped\n");
    dart_exit();
    return DART_TEST_SKIP;
  }
  const char *s = getenv("DART_TEST_ITERS");
  rounds = s ? atoi(s) : 1000;

  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 1, DART_TYPE_LONG,
                                      &counter));
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL,
                                      (size_t)n * NTHREADS * SLOT,
                                      DART_TYPE_LONG, &data));
  dart_gptr_setunit(&counter, DART_TEAM_UNIT_ID(n - 1));
  long *mine;
  CHECK_OK(dart_gptr_getaddr(counter, (void **)&mine));
  if (mine) *mine = 0;
  CHECK_OK(dart_barrier(DART_TEAM_ALL));

  pthread_t threads[NTHREADS];
  struct worker workers[NTHREADS];
  for (int t = 0; t < NTHREADS; t++) {
    workers[t] = (struct worker){t, 0};
    CHECK(pthread_create(&threads[t], NULL, worker_main, &workers[t]) == 0);
  }
  for (int t = 0; t < NTHREADS; t++) {
    pthread_join(threads[t], NULL);
    if (workers[t].errors) FAILF("thread %d: %d errors", t, workers[t].errors);
  }
  CHECK_OK(dart_flush(counter));
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  long total = -1;
  CHECK_OK(dart_fetch_and_op(counter, NULL, &total, DART_TYPE_LONG,
                             DART_OP_NO_OP));
  CHECK_EQ(total, (long)n * NTHREADS * rounds);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  dart_gptr_setunit(&counter, DART_TEAM_UNIT_ID(0));
  CHECK_OK(dart_team_memfree(counter));
  CHECK_OK(dart_team_memfree(data));
  return dart_test_combine_and_exit();
}
