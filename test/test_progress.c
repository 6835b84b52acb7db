/*
 * Progress: a unit that waits in a collective call still serves the
 * one-sided operations its peers aim at it (under UCX, emulated RMA and
 * atomics advance only while the target drives progress; doc/design.md,
 * "Progress"). Unit 0 enters a collective at once while every other unit
 * first does fetch-and-ops, blocking puts and accumulates on unit 0's
 * memory, and joins only when they are complete: if unit 0 served nothing
 * while it waited, the run would hang. In turn: dart_barrier,
 * dart_allreduce, dart_bcast from the last unit, dart_recv from the last
 * unit and dart_team_create. Then unit 0 polls a word of its own memory
 * until every other unit has counted itself done there, as a program
 * waiting for a flag does: through dart_get_blocking, through dart_get and
 * dart_flush, and through dart_fetch_and_op, calls that complete in place
 * and must still serve its peers now and then.
 *
 * DART_TEST_ITERS sets the fetch-and-ops per unit and phase (default 2000,
 * at least 10; a tenth as many puts and accumulates).
 */
#include "dart_test.h"

_Static_assert(sizeof(unsigned long long) == sizeof(uint64_t),
               "DART_TYPE_ULONGLONG holds a uint64_t");
#define WORD DART_TYPE_ULONGLONG

/* On each unit: the fetch-and-op counter, the accumulate counter, then a
 * slot per unit for its puts. */
#define W_FETCH 0
#define W_ACC 1
#define W_DONE 2
#define W_SLOT 3

typedef enum {
  BARRIER,
  ALLREDUCE,
  BCAST,
  RECV,
  TEAM_CREATE,
  POLL_GET,
  POLL_GET_FLUSH,
  POLL_FETCH
} phase_t;
static const char *const phase_name[] = {
    "barrier",     "allreduce",         "bcast",
    "recv",        "team_create",       "polling with dart_get_blocking",
    "polling with dart_get and dart_flush", "polling with dart_fetch_and_op"};

static int me, n, iters, rare; /* rare: puts and accumulates */

static dart_gptr_t word_at(dart_gptr_t g, int unit, int word)
{
  dart_gptr_setunit(&g, DART_TEAM_UNIT_ID(unit));
  g.addr_or_offs.offset = (uint64_t)word * sizeof(uint64_t);
  return g;
}

/* What unit u's i-th put writes into its slot. */
static uint64_t put_value(int u, int i)
{
  return (uint64_t)u << 32 | (uint64_t)i;
}

/* The work of a unit other than 0 on unit 0's words: every fetch-and-op,
 * put and flush waits for unit 0, so each needs unit 0's progress. */
static void work_on_unit0(dart_gptr_t g)
{
  const uint64_t total = (uint64_t)(n - 1) * (uint64_t)iters;
  static const uint64_t one = 1; /* read until the flush */
  dart_gptr_t counter = word_at(g, 0, W_FETCH);
  dart_gptr_t acc = word_at(g, 0, W_ACC);
  dart_gptr_t slot = word_at(g, 0, W_SLOT + me);
  uint64_t last = 0;
  int puts = 0;
  for (int i = 0; i < iters; i++) {
    uint64_t old = UINT64_MAX;
    CHECK_OK(dart_fetch_and_op(counter, &one, &old, WORD, DART_OP_SUM));
    if (old >= total || (i > 0 && old <= last))
      FAILF("fetch %d: old value %" PRIu64 " after %" PRIu64 " (total %" PRIu64
            ")", i, old, last, total);
    last = old;
    if (i % 10 == 0) {
      uint64_t v = put_value(me, puts++);
      CHECK_OK(dart_put_blocking(slot, &v, 1, WORD, WORD));
      CHECK_OK(dart_accumulate(acc, &one, 1, WORD, DART_OP_SUM));
      if (puts % 4 == 0) CHECK_OK(dart_flush(acc));
    }
  }
  CHECK_EQ(puts, rare);
  CHECK_OK(dart_flush(acc));
}

/* Unit 0 reads its done word until every other unit has counted itself. */
static void poll_done(dart_gptr_t g, phase_t phase)
{
  dart_gptr_t done = word_at(g, 0, W_DONE);
  static const uint64_t zero = 0;
  uint64_t seen = 0;
  while (seen != (uint64_t)(n - 1)) {
    if (phase == POLL_GET) {
      CHECK_OK(dart_get_blocking(&seen, done, 1, WORD, WORD));
    } else if (phase == POLL_GET_FLUSH) {
      CHECK_OK(dart_get(&seen, done, 1, WORD, WORD));
      CHECK_OK(dart_flush(done));
    } else {
      CHECK_OK(dart_fetch_and_op(done, &zero, &seen, WORD, DART_OP_SUM));
    }
    if (seen > (uint64_t)(n - 1)) {
      FAILF("done word %" PRIu64 " with %d units", seen, n);
      return;
    }
  }
}

/* Unit 0 calls it at once, the others after their work. */
static void enter(dart_gptr_t g, phase_t phase, dart_team_unit_t last)
{
  switch (phase) {
    case POLL_GET:
    case POLL_GET_FLUSH:
    case POLL_FETCH: {
      static const uint64_t one = 1;
      uint64_t old = UINT64_MAX;
      if (me == 0) poll_done(g, phase);
      else
        CHECK_OK(dart_fetch_and_op(word_at(g, 0, W_DONE), &one, &old, WORD,
                                   DART_OP_SUM));
      break;
    }
    case BARRIER:
      CHECK_OK(dart_barrier(DART_TEAM_ALL));
      break;
    case ALLREDUCE: {
      uint64_t mine = me == 0 ? 0 : (uint64_t)iters, sum = 0;
      CHECK_OK(dart_allreduce(&mine, &sum, 1, WORD, DART_OP_SUM,
                              DART_TEAM_ALL));
      CHECK_EQ(sum, (uint64_t)(n - 1) * (uint64_t)iters);
      break;
    }
    case BCAST: {
      uint64_t v = me == last.id ? 0xfeedull : 0;
      CHECK_OK(dart_bcast(&v, 1, WORD, last, DART_TEAM_ALL));
      CHECK_EQ(v, 0xfeedull);
      break;
    }
    case RECV: {
      uint64_t v = 0xbeefull;
      if (me == 0)
        CHECK_OK(dart_recv(&v, 1, WORD, 7, DART_GLOBAL_UNIT_ID(last.id)));
      else if (me == last.id)
        CHECK_OK(dart_send(&v, 1, WORD, 7, DART_GLOBAL_UNIT_ID(0)));
      CHECK_EQ(v, 0xbeefull);
      break;
    }
    case TEAM_CREATE: {
      dart_group_t all;
      dart_team_t team = DART_TEAM_NULL;
      CHECK_OK(dart_group_create(&all));
      for (int u = 0; u < n; u++)
        CHECK_OK(dart_group_addmember(all, DART_GLOBAL_UNIT_ID(u)));
      CHECK_OK(dart_team_create(DART_TEAM_ALL, all, &team));
      CHECK(team != DART_TEAM_NULL);
      CHECK_OK(dart_team_destroy(&team));
      CHECK_OK(dart_group_destroy(&all));
      break;
    }
  }
}

static void run_phase(dart_gptr_t g, phase_t phase)
{
  uint64_t *mine = NULL;
  CHECK_OK(dart_gptr_getaddr(word_at(g, me, 0), (void **)&mine));
  memset(mine, 0, (size_t)(W_SLOT + n) * sizeof *mine);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));

  int failed = dart_test_failures;
  if (me != 0) work_on_unit0(g);
  enter(g, phase, DART_TEAM_UNIT_ID(n - 1));
  /* for unit 0's direct loads; the others' operations completed before
   * they entered */
  CHECK_OK(dart_barrier(DART_TEAM_ALL));

  uint64_t want_fetch = (uint64_t)(n - 1) * (uint64_t)iters;
  uint64_t want_acc = (uint64_t)(n - 1) * (uint64_t)rare;
  if (me == 0) {
    CHECK_EQ(mine[W_FETCH], want_fetch);
    CHECK_EQ(mine[W_ACC], want_acc);
    CHECK_EQ(mine[W_DONE], phase >= POLL_GET ? (uint64_t)(n - 1) : 0);
    CHECK_EQ(mine[W_SLOT], 0);
    for (int u = 1; u < n; u++)
      CHECK_EQ(mine[W_SLOT + u], put_value(u, rare - 1));
  }
  uint64_t *seen = malloc((size_t)(W_SLOT + n) * sizeof *seen);
  CHECK_OK(dart_get_blocking(seen, word_at(g, 0, 0), (size_t)(W_SLOT + n),
                             WORD, WORD));
  CHECK_EQ(seen[W_FETCH], want_fetch);
  CHECK_EQ(seen[W_ACC], want_acc);
  CHECK_EQ(seen[W_DONE], phase >= POLL_GET ? (uint64_t)(n - 1) : 0);
  CHECK_EQ(seen[W_SLOT], 0);
  for (int u = 1; u < n; u++)
    CHECK_EQ(seen[W_SLOT + u], put_value(u, rare - 1));
  free(seen);
  if (dart_test_failures != failed)
    FAILF("the failures above: unit 0 waiting in %s", phase_name[phase]);
  /* nobody clears unit 0's words before everyone has read them */
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
}

int main(int argc, char **argv)
{
  dart_test_init(&argc, &argv);
  me = dart_test_unit;
  n = dart_test_units;
  if (n < 2) {
    if (me == 0) printf("one unit: nobody to serve: skipped\n");
    dart_exit();
    return DART_TEST_SKIP;
  }
  const char *s = getenv("DART_TEST_ITERS");
  iters = s ? atoi(s) : 2000;
  if (iters < 10) iters = 10;
  rare = (iters + 9) / 10; /* i % 10 == 0 for i < iters */

  dart_gptr_t g;
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, (size_t)(W_SLOT + n),
                                      WORD, &g));
  for (phase_t p = BARRIER; p <= POLL_FETCH; p++) run_phase(g, p);
  CHECK_OK(dart_team_memfree(g));
  return dart_test_finish();
}
