/* A client of the installed library: sums unit ids through global memory. */
#include <dart/dart.h>
#include <stdio.h>

int main(int argc, char **argv)
{
  if (dart_init(&argc, &argv) != DART_OK) return 1;
  dart_global_unit_t me;
  size_t n;
  dart_myid(&me);
  dart_size(&n);
  dart_gptr_t g;
  long value = me.id, sum = 0;
  int ok = dart_team_memalloc_aligned(DART_TEAM_ALL, 1, DART_TYPE_LONG, &g) ==
           DART_OK;
  g.unitid = me.id;
  ok = ok && dart_put_blocking(g, &value, 1, DART_TYPE_LONG, DART_TYPE_LONG) ==
                 DART_OK;
  dart_barrier(DART_TEAM_ALL);
  for (size_t u = 0; u < n && ok; u++) {
    long v;
    g.unitid = (dart_unit_t)u;
    ok = dart_get_blocking(&v, g, 1, DART_TYPE_LONG, DART_TYPE_LONG) == DART_OK;
    sum += v;
  }
  dart_barrier(DART_TEAM_ALL);
  g.unitid = 0;
  ok = ok && dart_team_memfree(g) == DART_OK;
  ok = ok && sum == (long)(n * (n - 1) / 2);
  if (me.id == 0) printf("consumer: %zu units %s\n", n, ok ? "ok" : "FAILED");
  dart_exit();
  return ok ? 0 : 1;
}
