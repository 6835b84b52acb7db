/*
 * dart_init_thread asking for DART_THREAD_MULTIPLE: the level provided is
 * SINGLE or MULTIPLE (the same on every unit); the runtime works (barrier,
 * allreduce). With MULTIPLE, two threads per unit also use the query
 * functions, dart_memalloc and blocking put/get on their own memory at the
 * same time.
 */
#include "dart_test.h"

#include <pthread.h>

enum { NTHREADS = 2, NITER = 20, NELEM = 32 };

struct worker {
  int index;
  int me;
  size_t size;
  int errors;
};

static void *worker_main(void *arg)
{
  struct worker *w = arg;
  for (int it = 0; it < NITER; it++) {
    dart_global_unit_t gu = {-1};
    size_t s = 0;
    if (dart_myid(&gu) != DART_OK || gu.id != w->me) w->errors++;
    if (dart_team_size(DART_TEAM_ALL, &s) != DART_OK || s != w->size) {
      w->errors++;
    }
    dart_gptr_t g = DART_GPTR_NULL;
    if (dart_memalloc(NELEM, DART_TYPE_INT, &g) != DART_OK) {
      w->errors++;
      continue;
    }
    int out[NELEM], in[NELEM];
    for (int j = 0; j < NELEM; j++) {
      out[j] = w->me * 100000 + w->index * 10000 + it * 100 + j;
      in[j] = -1;
    }
    if (dart_put_blocking(g, out, NELEM, DART_TYPE_INT, DART_TYPE_INT) !=
        DART_OK) {
      w->errors++;
    }
    if (dart_get_blocking(in, g, NELEM, DART_TYPE_INT, DART_TYPE_INT) !=
        DART_OK) {
      w->errors++;
    }
    if (memcmp(in, out, sizeof out) != 0) w->errors++;
    if (dart_memfree(g) != DART_OK) w->errors++;
  }
  return NULL;
}

int main(int argc, char **argv)
{
  CHECK(!dart_initialized());
  dart_thread_support_level_t level = DART_THREAD_MULTIPLE;
  if (dart_init_thread(&argc, &argv, &level) != DART_OK) {
    fprintf(stderr, "dart_init_thread failed\n");
    return 1;
  }
  dart_global_unit_t me = {-1};
  CHECK_OK(dart_myid(&me));
  dart_test_unit = me.id;
  CHECK(dart_initialized());
  CHECK(level == DART_THREAD_SINGLE || level == DART_THREAD_MULTIPLE);

  size_t size = 0;
  CHECK_OK(dart_size(&size));
  CHECK_OK(dart_barrier(DART_TEAM_ALL));

  /* every unit got the same level; the ids add up */
  int lv = (int)level, lmin = -1, lmax = -1;
  CHECK_OK(dart_allreduce(&lv, &lmin, 1, DART_TYPE_INT, DART_OP_MIN,
                          DART_TEAM_ALL));
  CHECK_OK(dart_allreduce(&lv, &lmax, 1, DART_TYPE_INT, DART_OP_MAX,
                          DART_TEAM_ALL));
  CHECK_EQ(lmin, lv);
  CHECK_EQ(lmax, lv);
  long id = me.id, sum = -1;
  CHECK_OK(dart_allreduce(&id, &sum, 1, DART_TYPE_LONG, DART_OP_SUM,
                          DART_TEAM_ALL));
  CHECK_EQ(sum, (long)size * ((long)size - 1) / 2);

  if (level == DART_THREAD_MULTIPLE) {
    pthread_t th[NTHREADS];
    struct worker w[NTHREADS];
    int started[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
      w[i].index = i;
      w[i].me = me.id;
      w[i].size = size;
      w[i].errors = 0;
      started[i] = pthread_create(&th[i], NULL, worker_main, &w[i]) == 0;
      CHECK(started[i]);
    }
    for (int i = 0; i < NTHREADS; i++) {
      if (started[i]) pthread_join(th[i], NULL);
      CHECK_EQ(w[i].errors, 0);
    }
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  return dart_test_finish();
}
