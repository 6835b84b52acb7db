/*
 * Soak: long loops of allocations, team creations and small one-sided
 * operations. Each phase stops at its count or at its time budget,
 * whichever comes first, says how far it got and checks all it did. The
 * resident memory (VmRSS) and the shared memory (files under /dev/shm and
 * System V segments) each unit maps must not grow from the end of a
 * warm-up to the end of the phase by more than the tolerances below. Unit
 * 0 prints one line per phase with the figures.
 *
 *   alloc  collective allocations and frees of varying sizes on
 *          DART_TEAM_ALL and on each unit's half of it, registrations of
 *          user memory (aligned and not), and dart_memalloc blocks beyond
 *          the initial pool; each allocation's content makes a round trip
 *   ids    segment ids on teams of one unit (no peers: cheap) until every
 *          id has been issued once and beyond, allocations and
 *          registrations
 *   teams  teams split by node and by halves, and clones of the halves,
 *          created and destroyed: ids, sizes, members, a collective, an
 *          allocation left to the destroy
 *   ops    puts, gets, fetch-and-add, accumulate and compare-and-swap of
 *          8 bytes on random words of random units; the final values
 *          exactly
 *
 * Segment ids (segment.c, slots.c): each team has the ids 1..32767 for
 * allocations and -1..-32767 for registrations. With DART_SEGID_REUSE=
 * latest (the default) the most recently freed id is issued first, fresh
 * ids when none is freed; with delayed, fresh ids come first and, once
 * every id has been issued, freed ids are issued again, the oldest freed
 * first. A gptr has no room for a generation (the flags belong to the
 * client), so a gptr to a freed segment is rejected (DART_ERR_INVAL)
 * exactly until its id is issued again, and then reaches the new segment.
 * The test predicts every id it is given and checks the rejection at both
 * ends of that window: right after the free and right before the id is
 * issued again. Team ids are never reused: each team creation takes the
 * next one.
 *
 * Arguments: the phases to run (default: all, in the order above).
 * DART_SOAK_SCALE: the fraction of the full counts (1: 10^5 allocations,
 * 10^3 teams, 10^6 operations); unset: the program skips. The ids phase
 * always issues 1000 ids more than a table has. DART_SOAK_SECONDS: each phase's time
 * budget (default 20, and 300 at scale 1 or more).
 */
#define _GNU_SOURCE

#include "dart_test.h"

#include <dart/dart_ext.h>
#include <dart/dart_locality.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define FULL_ALLOCS 100000
#define FULL_TEAMS 1000
#define FULL_OPS 1000000
#define SEG_IDS 32767 /* per table of a team: 1 .. INT16_MAX */
#define PAST_WRAP 1000

/*
 * Growth allowed per unit from the end of the warm-up to the end of a
 * phase. RSS: each id table of a team grows to 384 KiB once all its ids
 * were issued, and malloc and MPI keep some freed memory (up to 1.1 MiB in
 * all measured here); a leak of 64 bytes per allocation exceeds the
 * tolerance at the full count. Shared memory: no window outlives its
 * segment, and the transports have mapped every peer in the warm-up, so
 * nothing may be added.
 */
#define RSS_TOLERANCE_MIB 6.0
#define SHM_TOLERANCE_MIB 0.0

static int me, nunits;
static double scale;
static double budget = 20;
static int null_fd = -1, err_fd = -1;
static dart_team_t last_team; /* the newest team id this unit was given */

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static long scaled(long full)
{
  long n = (long)((double)full * scale + 0.5);
  return n > 0 ? n : 1;
}

/* Calls that must fail log an error line each: thousands of them would
 * bury the output, so stderr goes to /dev/null around them. */
static void quiet(bool on)
{
  fflush(stderr);
  dup2(on ? null_fd : err_fd, 2);
}

/* ---- memory figures (MiB) ---- */

static double rss_mib(void)
{
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  double kib = -1;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "VmRSS: %lf kB", &kib) == 1) break;
  if (f) fclose(f);
  if (kib < 0) FAILF("no VmRSS in /proc/self/status");
  return kib / 1024;
}

/* Shared memory this process maps: files under /dev/shm (MPI's shared
 * windows and transports, unlinked ones too) and System V segments. Other
 * jobs' use of /dev/shm does not count here. */
static double shm_mib(void)
{
  FILE *f = fopen("/proc/self/maps", "r");
  char line[4096], path[4096];
  unsigned long lo, hi;
  double bytes = 0;
  if (f == NULL) FAILF("cannot read /proc/self/maps");
  while (f && fgets(line, sizeof line, f)) {
    if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %4095s", &lo, &hi, path) == 3 &&
        (strncmp(path, "/dev/shm/", 9) == 0 || strncmp(path, "/SYSV", 5) == 0))
      bytes += (double)(hi - lo);
  }
  if (f) fclose(f);
  return bytes / (1024 * 1024);
}

/* /dev/shm in use on the node, by every job there: printed, not checked. */
static double devshm_mib(void)
{
  struct statvfs st;
  if (statvfs("/dev/shm", &st) != 0) return -1;
  return (double)(st.f_blocks - st.f_bfree) * (double)st.f_frsize /
         (1024 * 1024);
}

typedef struct {
  const char *name;
  double t0;
  double rss, shm, dev; /* at the end of the warm-up */
} phase_t;

static void phase_start(phase_t *p, const char *name)
{
  memset(p, 0, sizeof *p);
  p->name = name;
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  p->t0 = now();
}

/* Collective, once per phase before its last barrier: the figures after
 * the warm-up. */
static void phase_warm(phase_t *p)
{
  /* every pair of units exchanges a message, so that MPI's transports have
   * mapped each other's memory before the first figures */
  for (int k = 1; k < nunits; k++) {
    const int to = (me + k) % nunits, from = (me + nunits - k) % nunits;
    int in = -1;
    CHECK_OK(dart_sendrecv(&me, 1, DART_TYPE_INT, 0x50A,
                           DART_GLOBAL_UNIT_ID(to), &in, 1, DART_TYPE_INT,
                           0x50A, DART_GLOBAL_UNIT_ID(from)));
    CHECK_EQ(in, from);
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  p->rss = rss_mib();
  p->shm = shm_mib();
  p->dev = devshm_mib();
}

/* Collective: checks the growth and prints what was done (done). */
static void phase_end(phase_t *p, const char *done)
{
  const double secs = now() - p->t0;
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  const double rss = rss_mib(), shm = shm_mib(), dev = devshm_mib();
  double grow[2] = {rss - p->rss, shm - p->shm}, max[2] = {0, 0};
  CHECK_OK(dart_allreduce(grow, max, 2, DART_TYPE_DOUBLE, DART_OP_MAX,
                          DART_TEAM_ALL));
  /* AddressSanitizer keeps freed memory in quarantine: RSS says nothing */
#if !defined(__SANITIZE_ADDRESS__)
  if (grow[0] > RSS_TOLERANCE_MIB)
    FAILF("%s: RSS grew by %.2f MiB (%.1f -> %.1f), more than %.1f",
          p->name, grow[0], p->rss, rss, RSS_TOLERANCE_MIB);
#endif
  if (grow[1] > SHM_TOLERANCE_MIB)
    FAILF("%s: mapped shared memory grew by %.2f MiB (%.1f -> %.1f)",
          p->name, grow[1], p->shm, shm);
  if (me == 0) {
    printf("soak %s: %s in %.2f s; RSS %.1f -> %.1f MiB (max growth of %d "
           "units %+.2f); shm mapped %.1f -> %.1f MiB (max growth %+.2f); "
           "/dev/shm used %.1f -> %.1f MiB\n",
           p->name, done, secs, p->rss, rss, nunits, max[0], p->shm, shm,
           max[1], p->dev, dev);
    fflush(stdout);
  }
}

/* Collective: whether the phase is out of time, as unit 0 sees it, so that
 * every unit stops after the same collective step. */
static bool out_of_time(const phase_t *p)
{
  int over = now() - p->t0 > budget;
  CHECK_OK(dart_bcast(&over, 1, DART_TYPE_INT, DART_TEAM_UNIT_ID(0),
                      DART_TEAM_ALL));
  return over != 0;
}

/* ---- segment ids: the model of one table (slots.c) ---- */

typedef struct {
  bool latest;     /* DART_SEGID_REUSE=latest: the newest freed id first */
  int fresh;       /* ids 1 .. fresh were issued */
  int head, count; /* freed ids in fifo, oldest first */
  int16_t fifo[SEG_IDS];
  uint8_t freed[SEG_IDS + 1]; /* freed and not issued again */
  long issued, reissued;
} ids_t;

/* Where the next id comes from: the newest freed, fresh, the oldest
 * freed, or nothing (-1). */
enum { FROM_NEWEST, FROM_FRESH, FROM_OLDEST, FROM_NONE };
static int ids_source(const ids_t *m)
{
  if (m->latest && m->count) return FROM_NEWEST;
  if (m->fresh < SEG_IDS) return FROM_FRESH;
  return m->count ? FROM_OLDEST : FROM_NONE;
}

static int ids_next(const ids_t *m)
{
  switch (ids_source(m)) {
    case FROM_NEWEST: return m->fifo[(m->head + m->count - 1) % SEG_IDS];
    case FROM_FRESH: return m->fresh + 1;
    case FROM_OLDEST: return m->fifo[m->head];
    default: return 0;
  }
}

static void ids_issue(ids_t *m)
{
  const int from = ids_source(m);
  m->issued++;
  if (from == FROM_FRESH) {
    m->fresh++;
    return;
  }
  m->freed[ids_next(m)] = 0;
  if (from == FROM_OLDEST) m->head = (m->head + 1) % SEG_IDS;
  m->count--;
  m->reissued++;
}

static void ids_release(ids_t *m, int id)
{
  m->fifo[(m->head + m->count) % SEG_IDS] = (int16_t)id;
  m->count++;
  m->freed[id] = 1;
}

/* A team with the models of its two tables. */
typedef struct {
  dart_team_t team;
  int size, myid;
  ids_t *alloc, *reg;
} team_ctx_t;

static void ctx_init(team_ctx_t *t, dart_team_t team)
{
  size_t size = 0;
  dart_team_unit_t id = {-1};
  CHECK_OK(dart_team_size(team, &size));
  CHECK_OK(dart_team_myid(team, &id));
  t->team = team;
  t->size = (int)size;
  t->myid = id.id;
  t->alloc = calloc(1, sizeof *t->alloc);
  t->reg = calloc(1, sizeof *t->reg);
  if (t->alloc == NULL || t->reg == NULL) {
    fprintf(stderr, "[unit %d] out of memory\n", me);
    exit(1);
  }
  const char *reuse = getenv("DART_SEGID_REUSE");
  t->alloc->latest = t->reg->latest = !reuse || strcmp(reuse, "delayed") != 0;
}

static void ctx_fini(team_ctx_t *t)
{
  free(t->alloc);
  free(t->reg);
  t->alloc = t->reg = NULL;
}

static dart_gptr_t seg_gptr(dart_team_t team, int16_t segid, int unit,
                            uint64_t offset)
{
  dart_gptr_t g = DART_GPTR_NULL;
  g.teamid = team;
  g.segid = segid;
  g.unitid = unit;
  g.addr_or_offs.offset = offset;
  return g;
}

/* A gptr to freed segment segid of team: a get, getaddr and a free of it
 * are rejected. */
static void check_rejected(int line, dart_team_t team, int16_t segid,
                           int unit)
{
  dart_gptr_t g = seg_gptr(team, segid, unit, 0);
  uint64_t v = 0;
  void *addr = &v;
  quiet(true);
  dart_ret_t get = dart_get_blocking(&v, g, 1, DART_TYPE_ULONGLONG,
                                     DART_TYPE_ULONGLONG);
  dart_ret_t at = dart_gptr_getaddr(g, &addr);
  /* a free of a live segment would be a collective of one unit */
  dart_ret_t fr = DART_ERR_INVAL;
  if (at == DART_ERR_INVAL) {
    g.unitid = 0;
    fr = segid > 0 ? dart_team_memfree(g) : dart_team_memderegister(g);
  }
  quiet(false);
  if (get != DART_ERR_INVAL || at != DART_ERR_INVAL || fr != DART_ERR_INVAL)
    FAIL_AT(line,
            "gptr to freed segment %d of team %d: get %d, getaddr %d, "
            "free %d, not %d", segid, team, get, at, fr, DART_ERR_INVAL);
}

enum { ALLOC, REGISTER, REGISTER_ALIGNED };

/*
 * Collective on t: allocates bytes per unit (or registers buf), checks
 * that the id is the one the model predicts and that a gptr with that id,
 * if it was freed before, was rejected until this moment.
 */
static dart_gptr_t seg_alloc(int line, team_ctx_t *t, int how, size_t bytes,
                             void *buf)
{
  ids_t *m = how == ALLOC ? t->alloc : t->reg;
  const int sign = how == ALLOC ? 1 : -1;
  const int want = ids_next(m);
  const int peer = (t->myid + 1) % t->size;
  if (want > 0 && m->freed[want])
    check_rejected(line, t->team, (int16_t)(sign * want), peer);
  dart_gptr_t g = DART_GPTR_NULL;
  dart_ret_t ret;
  if (how == ALLOC)
    ret = dart_team_memalloc_aligned(t->team, bytes, DART_TYPE_BYTE, &g);
  else if (how == REGISTER)
    ret = dart_team_memregister(t->team, bytes, DART_TYPE_BYTE, buf, &g);
  else
    ret = dart_team_memregister_aligned(t->team, bytes, DART_TYPE_BYTE, buf,
                                        &g);
  if (ret != DART_OK) {
    FAIL_AT(line, "allocation %s of %zu bytes on team %d returned %d",
            how == ALLOC ? "alloc" : "register", bytes, t->team, ret);
    return DART_GPTR_NULL;
  }
  if (g.segid != sign * want)
    FAIL_AT(line, "allocation %ld on team %d got segment id %d, not %d",
            m->issued, t->team, g.segid, sign * want);
  ids_issue(m);
  return g;
}

/* Collective on t: frees g; its gptr is rejected now, and so is the one of
 * the id in the middle of the queue of freed ids. */
static void seg_free(int line, team_ctx_t *t, dart_gptr_t g)
{
  const bool reg = g.segid < 0;
  ids_t *m = reg ? t->reg : t->alloc;
  const int peer = (t->myid + 1) % t->size;
  dart_ret_t ret = reg ? dart_team_memderegister(g) : dart_team_memfree(g);
  if (ret != DART_OK) {
    FAIL_AT(line, "free of segment %d of team %d returned %d", g.segid,
            t->team, ret);
    return;
  }
  ids_release(m, reg ? -g.segid : g.segid);
  check_rejected(line, t->team, g.segid, peer);
  const int mid = m->fifo[(m->head + m->count / 2) % SEG_IDS];
  check_rejected(line, t->team, (int16_t)(reg ? -mid : mid), peer);
}

static uint64_t pattern(uint64_t key, int writer, int j)
{
  return dart_test_mix64(key * 0x9E3779B97F4A7C15ull ^
                         ((uint64_t)writer << 32) ^ (uint64_t)j);
}

/*
 * Collective on t: a content round trip through segment g. This unit puts
 * a pattern at both ends of the next unit's part (dst_bytes) and reads it
 * back; after a barrier it finds the previous unit's pattern at both ends
 * of its own part, own (my_bytes).
 */
static void round_trip(int line, const team_ctx_t *t, dart_gptr_t g,
                       size_t my_bytes, size_t dst_bytes, const uint8_t *own,
                       uint64_t key)
{
  const int dst = (t->myid + 1) % t->size;
  const int src = (t->myid + t->size - 1) % t->size;
  uint64_t out[5], in[5];
  size_t k = dst_bytes / 8 < 4 ? dst_bytes / 8 : 4;
  for (size_t j = 0; j < k + 1; j++) out[j] = pattern(key, t->myid, (int)j);
  dart_gptr_t end = seg_gptr(t->team, g.segid, dst, dst_bytes - 8 * k);
  dart_gptr_t first = seg_gptr(t->team, g.segid, dst, 0);
  CHECK_OK(dart_put_blocking(end, out, k, DART_TYPE_ULONGLONG,
                             DART_TYPE_ULONGLONG));
  if (dst_bytes / 8 > k) {
    CHECK_OK(dart_put(first, &out[k], 1, DART_TYPE_ULONGLONG,
                      DART_TYPE_ULONGLONG));
    CHECK_OK(dart_flush(first));
    CHECK_OK(dart_get_blocking(&in[k], first, 1, DART_TYPE_ULONGLONG,
                               DART_TYPE_ULONGLONG));
    if (in[k] != out[k])
      FAIL_AT(line, "segment %d: first word read back %#llx, not %#llx",
              g.segid, (unsigned long long)in[k], (unsigned long long)out[k]);
  }
  CHECK_OK(dart_get_blocking(in, end, k, DART_TYPE_ULONGLONG,
                             DART_TYPE_ULONGLONG));
  if (memcmp(in, out, k * 8) != 0)
    FAIL_AT(line, "segment %d of team %d: the end of unit %d's part read "
            "back wrong", g.segid, t->team, dst);
  CHECK_OK(dart_barrier(t->team));
  k = my_bytes / 8 < 4 ? my_bytes / 8 : 4;
  bool ok = true;
  for (size_t j = 0; j < k; j++) {
    uint64_t v;
    memcpy(&v, own + my_bytes - 8 * (k - j), 8);
    ok &= v == pattern(key, src, (int)j);
  }
  if (my_bytes / 8 > k) {
    uint64_t v;
    memcpy(&v, own, 8);
    ok &= v == pattern(key, src, (int)k);
  }
  if (!ok)
    FAIL_AT(line, "segment %d of team %d: unit %d's pattern is not in my "
            "part", g.segid, t->team, src);
}

static void *own_addr(int line, dart_gptr_t g, int myid)
{
  void *p = NULL;
  g.unitid = myid;
  if (dart_gptr_getaddr(g, &p) != DART_OK || p == NULL)
    FAIL_AT(line, "no address for my part of segment %d", g.segid);
  return p;
}

/* Creates the team of group over parent; checks that it takes the next
 * team id (members) or gives DART_TEAM_NULL (others). */
static dart_team_t new_team(int line, dart_team_t parent, dart_group_t group)
{
  dart_team_t t = DART_TEAM_NULL;
  int32_t member = 0;
  CHECK_OK(dart_group_ismember(group, DART_GLOBAL_UNIT_ID(me), &member));
  dart_ret_t ret = dart_team_create(parent, group, &t);
  if (ret != DART_OK) {
    FAIL_AT(line, "dart_team_create returned %d", ret);
    return DART_TEAM_NULL;
  }
  last_team++;
  if (member ? t != last_team : t != DART_TEAM_NULL)
    FAIL_AT(line, "dart_team_create gave team id %d, not %d", t,
            member ? last_team : DART_TEAM_NULL);
  return member ? t : DART_TEAM_NULL;
}

/* Collective on ALL: the halves of DART_TEAM_ALL (my half in *mine). */
static void make_halves(dart_team_t *mine)
{
  dart_group_t all, halves[2];
  size_t nout = 0;
  *mine = DART_TEAM_NULL;
  CHECK_OK(dart_team_get_group(DART_TEAM_ALL, &all));
  CHECK_OK(dart_group_split(all, 2, &nout, halves));
  for (size_t h = 0; h < 2; h++) {
    if (h < nout) {
      dart_team_t t = new_team(__LINE__, DART_TEAM_ALL, halves[h]);
      if (t != DART_TEAM_NULL) *mine = t;
    }
    CHECK_OK(dart_group_destroy(&halves[h]));
  }
  CHECK_OK(dart_group_destroy(&all));
}

/* ---- phase alloc ---- */

typedef struct {
  dart_gptr_t g;
  size_t bytes;
} block_t;

#define SEG_LIVE 3   /* collective segments kept alive per team */
#define POOL_LIVE 8  /* dart_memalloc blocks kept alive per unit */

typedef struct {
  long pool_blocks, grown; /* blocks, and those beyond the initial pool */
  block_t live[POOL_LIVE];
  int nlive;
} pool_state_t;

/* Collective on ALL: a dart_memalloc block of random size written here
 * and read by the previous unit; frees a random one when POOL_LIVE are
 * alive. */
static void pool_step(int line, pool_state_t *ps, uint64_t key)
{
  const uint64_t r = dart_test_mix64(key ^ ((uint64_t)me << 48));
  const size_t bytes = (size_t)16 << (r % 15); /* 16 B .. 256 KiB */
  block_t mine = {DART_GPTR_NULL, bytes};
  CHECK_OK(dart_memalloc(bytes, DART_TYPE_BYTE, &mine.g));
  uint8_t *p = own_addr(line, mine.g, me);
  if (p == NULL) return;
  ps->pool_blocks++;
  ps->grown += (mine.g.addr_or_offs.offset >> 48) > 0;
  const uint64_t w0 = pattern(key, me, 0), w1 = pattern(key, me, 1);
  memcpy(p, &w0, 8);
  memcpy(p + bytes - 8, &w1, 8);
  block_t *all = malloc((size_t)nunits * sizeof *all);
  CHECK_OK(dart_allgather(&mine, all, sizeof mine, DART_TYPE_BYTE,
                          DART_TEAM_ALL));
  const int next = (me + 1) % nunits;
  dart_gptr_t g = all[next].g;
  uint64_t v[2] = {0, 0};
  CHECK_OK(dart_get_blocking(&v[0], g, 1, DART_TYPE_ULONGLONG,
                             DART_TYPE_ULONGLONG));
  g.addr_or_offs.offset += all[next].bytes - 8;
  CHECK_OK(dart_get_blocking(&v[1], g, 1, DART_TYPE_ULONGLONG,
                             DART_TYPE_ULONGLONG));
  if (v[0] != pattern(key, next, 0) || v[1] != pattern(key, next, 1))
    FAIL_AT(line, "unit %d's pool block (offset %#llx) read wrong", next,
            (unsigned long long)all[next].g.addr_or_offs.offset);
  free(all);
  /* the next unit has read this unit's blocks before any is freed */
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  if (ps->nlive == POOL_LIVE) {
    const int k = (int)((r >> 8) % POOL_LIVE);
    dart_gptr_t old = ps->live[k].g;
    CHECK_OK(dart_memfree(old));
    quiet(true);
    dart_ret_t twice = dart_memfree(old);
    quiet(false);
    if (twice != DART_ERR_INVAL)
      FAIL_AT(line, "dart_memfree of a freed block returned %d", twice);
    ps->live[k] = ps->live[--ps->nlive];
  }
  ps->live[ps->nlive++] = mine;
}

typedef struct {
  team_ctx_t ctx;
  dart_gptr_t live[SEG_LIVE];
  int nlive;
  long allocs, regs;
} seg_state_t;

/* Collective on the team: an allocation of random size with a round
 * trip, kept alive, and frees down to a random count; every eighth step
 * a registration too. */
static void seg_step(int line, seg_state_t *s, uint64_t key)
{
  team_ctx_t *t = &s->ctx;
  uint64_t r = dart_test_mix64(key);
  /* 8 B .. 16 KiB, and one in 32 of 1 MiB */
  size_t bytes = (size_t)8 << (r % 12);
  if ((r >> 40) % 32 == 0) bytes = (size_t)1 << 20;
  dart_gptr_t g = seg_alloc(line, t, ALLOC, bytes, NULL);
  if (g.segid == 0) return;
  s->allocs++;
  uint8_t *own = own_addr(line, g, t->myid);
  if (own) round_trip(line, t, g, bytes, bytes, own, key);
  s->live[s->nlive++] = g;
  const int keep = (int)((r >> 8) % SEG_LIVE);
  while (s->nlive > keep) {
    const int k = (int)((r >> 16) % (uint64_t)s->nlive);
    seg_free(line, t, s->live[k]);
    s->live[k] = s->live[--s->nlive];
    r = dart_test_mix64(r);
  }
  if ((key & 7) != 0) return;
  /* registration: sizes of their own per unit, or the same (aligned) */
  const bool aligned = (key >> 3) & 1;
  const int dst = (t->myid + 1) % t->size;
  const size_t mine = 8 * (1 + (aligned ? r : r ^ (uint64_t)t->myid) % 512);
  const size_t theirs = 8 * (1 + (aligned ? r : r ^ (uint64_t)dst) % 512);
  uint8_t *buf = calloc(mine, 1);
  g = seg_alloc(line, t, aligned ? REGISTER_ALIGNED : REGISTER, mine, buf);
  if (g.segid != 0) {
    s->regs++;
    round_trip(line, t, g, mine, theirs, buf, ~key);
    seg_free(line, t, g);
  }
  free(buf);
}

static void seg_drain(int line, seg_state_t *s)
{
  while (s->nlive > 0) seg_free(line, &s->ctx, s->live[--s->nlive]);
}

static team_ctx_t all_ctx; /* DART_TEAM_ALL's tables, for every phase */

static void phase_alloc(void)
{
  phase_t p;
  phase_start(&p, "alloc");
  const long count = scaled(FULL_ALLOCS), warm = count / 10;
  seg_state_t all = {.ctx = all_ctx}, half = {0};
  dart_team_t half_team;
  make_halves(&half_team);
  ctx_init(&half.ctx, half_team);
  pool_state_t pool = {0};
  long i;
  for (i = 0; i < count; i++) {
    if (i == warm) phase_warm(&p);
    if (i % 16 == 0 && out_of_time(&p)) break;
    const uint64_t key = dart_test_mix64(0xA110C000 + (uint64_t)i);
    /* three of four on DART_TEAM_ALL, one on this unit's half */
    seg_step(__LINE__, (key >> 60) % 4 == 3 ? &half : &all, key);
    pool_step(__LINE__, &pool, key);
  }
  if (i < warm) phase_warm(&p);
  seg_drain(__LINE__, &all);
  seg_drain(__LINE__, &half);
  for (int k = 0; k < pool.nlive; k++) CHECK_OK(dart_memfree(pool.live[k].g));
  CHECK_OK(dart_team_destroy(&half_team));
  /* the small initial pool (DART_LOCAL_POOL) is outgrown within steps */
  if (i >= 100 && pool.grown == 0)
    FAILF("no dart_memalloc block beyond the initial pool in %ld", i);
  long sums[4] = {all.allocs, half.allocs, all.regs + half.regs,
                  all.ctx.alloc->reissued},
       min[4];
  CHECK_OK(dart_allreduce(sums, min, 4, DART_TYPE_LONG, DART_OP_MIN,
                          DART_TEAM_ALL));
  char done[400];
  snprintf(done, sizeof done,
           "%ld of %ld steps%s (allocations: %ld on ALL, %ld on halves, ids "
           "issued again on ALL %ld; registrations %ld; pool blocks %ld, "
           "%ld beyond the initial pool on unit 0)",
           i, count, i < count ? " (time budget)" : "", min[0], min[1],
           min[3], min[2], pool.pool_blocks, pool.grown);
  ctx_fini(&half.ctx);
  phase_end(&p, done);
}

/* ---- phase ids ---- */

#define IDS_LIVE 8

/* Issues ids on the one-unit team t (from the table of how) until its
 * model has issued target, with up to IDS_LIVE segments alive; not
 * collective. */
static void ids_run(team_ctx_t *t, int how, long target, const phase_t *p)
{
  static uint64_t words[IDS_LIVE]; /* what registrations register */
  dart_gptr_t live[IDS_LIVE];
  uint64_t *mem[IDS_LIVE], *spare[IDS_LIVE];
  int nlive = 0;
  for (int k = 0; k < IDS_LIVE; k++) spare[k] = &words[k];
  ids_t *m = how == ALLOC ? t->alloc : t->reg;
  uint64_t r = 0x1D5 + (uint64_t)how;
  while (m->issued < target && now() - p->t0 <= budget) {
    r = dart_test_mix64(r);
    if (nlive < IDS_LIVE && (nlive == 0 || r % 3 != 0)) {
      uint64_t *word = spare[IDS_LIVE - 1 - nlive];
      dart_gptr_t g = seg_alloc(__LINE__, t, how, 8, word);
      if (g.segid == 0) break;
      uint64_t v = r, back = 0;
      CHECK_OK(dart_put_blocking(g, &v, 1, DART_TYPE_ULONGLONG,
                                 DART_TYPE_ULONGLONG));
      CHECK_OK(dart_get_blocking(&back, g, 1, DART_TYPE_ULONGLONG,
                                 DART_TYPE_ULONGLONG));
      if (back != v || (how != ALLOC && *word != v))
        FAILF("segment %d read back wrong", g.segid);
      mem[nlive] = word;
      live[nlive++] = g;
    } else {
      const int k = (int)((r >> 8) % (uint64_t)nlive);
      seg_free(__LINE__, t, live[k]);
      spare[IDS_LIVE - nlive] = mem[k];
      mem[k] = mem[nlive - 1];
      live[k] = live[--nlive];
    }
  }
  while (nlive > 0) seg_free(__LINE__, t, live[--nlive]);
}

static void phase_ids(void)
{
  phase_t p;
  phase_start(&p, "ids");
  /* a team of one unit for each unit */
  dart_group_t all, *ones = malloc((size_t)nunits * sizeof *ones);
  size_t nout = 0;
  dart_team_t mine = DART_TEAM_NULL;
  CHECK_OK(dart_team_get_group(DART_TEAM_ALL, &all));
  CHECK_OK(dart_group_split(all, (size_t)nunits, &nout, ones));
  CHECK_EQ(nout, nunits);
  for (int u = 0; u < nunits; u++) {
    dart_team_t t = new_team(__LINE__, DART_TEAM_ALL, ones[u]);
    if (t != DART_TEAM_NULL) mine = t;
    CHECK_OK(dart_group_destroy(&ones[u]));
  }
  free(ones);
  CHECK_OK(dart_group_destroy(&all));
  team_ctx_t t;
  ctx_init(&t, mine);
  const long target = SEG_IDS + PAST_WRAP;
  ids_run(&t, ALLOC, PAST_WRAP, &p);
  phase_warm(&p);
  ids_run(&t, ALLOC, target, &p);
  ids_run(&t, REGISTER, target, &p);
  long got[4] = {t.alloc->issued, t.reg->issued, t.alloc->reissued,
                 t.reg->reissued},
       min[4];
  CHECK_OK(dart_allreduce(got, min, 4, DART_TYPE_LONG, DART_OP_MIN,
                          DART_TEAM_ALL));
  /* the segments went with the team; its id stays dead */
  const dart_team_t old = mine;
  CHECK_OK(dart_team_destroy(&mine));
  check_rejected(__LINE__, old, 1, 0);
  ctx_fini(&t);
  char done[300];
  snprintf(done, sizeof done,
           "ids issued on a team of one unit: %ld of %ld allocations (%ld "
           "of them freed ones again), %ld of %ld registrations (%ld)%s",
           min[0], target, min[2], min[1], target, min[3],
           min[0] < target || min[1] < target ? " (time budget)" : "");
  phase_end(&p, done);
}

/* ---- phase teams ---- */

static int *node_of; /* global unit -> node */

/* Called by the members of team t: its size, ids, members (the units with
 * in[u] set, ascending) and a collective. */
static void check_team(int line, dart_team_t t, const bool *in)
{
  int m = 0, myid = -1;
  long want_sum = 0;
  for (int u = 0; u < nunits; u++) {
    if (!in[u]) continue;
    if (u == me) myid = m;
    dart_global_unit_t g = {-1};
    CHECK_OK(dart_team_unit_l2g(t, DART_TEAM_UNIT_ID(m), &g));
    if (g.id != u)
      FAIL_AT(line, "team %d: unit %d is global unit %d, not %d", t, m, g.id,
              u);
    want_sum += u;
    m++;
  }
  size_t size = 0;
  dart_team_unit_t id = {-1};
  CHECK_OK(dart_team_size(t, &size));
  CHECK_OK(dart_team_myid(t, &id));
  if ((int)size != m || id.id != myid)
    FAIL_AT(line, "team %d: size %zu and my id %d, not %d and %d", t, size,
            id.id, m, myid);
  long mine = me, sum = -1;
  CHECK_OK(dart_allreduce(&mine, &sum, 1, DART_TYPE_LONG, DART_OP_SUM, t));
  if (sum != want_sum)
    FAIL_AT(line, "team %d: the sum of the members is %ld, not %ld", t, sum,
            want_sum);
}

#define STALE 8 /* gptrs into destroyed teams checked in every round */

static void phase_teams(void)
{
  phase_t p;
  phase_start(&p, "teams");
  const long count = scaled(FULL_TEAMS), warm = count / 10;
  node_of = malloc((size_t)nunits * sizeof *node_of);
  bool *in = malloc((size_t)nunits * sizeof *in);
  int nodes = 0, my_node = -1;
  CHECK_OK(dart_node_info(&nodes, &my_node));
  CHECK_OK(dart_allgather(&my_node, node_of, 1, DART_TYPE_INT,
                          DART_TEAM_ALL));
  dart_group_t all;
  dart_domain_locality_t *root = NULL;
  CHECK_OK(dart_team_get_group(DART_TEAM_ALL, &all));
  CHECK_OK(dart_domain_team_locality(DART_TEAM_ALL, ".", &root));
  dart_group_t *groups = malloc((size_t)(nodes + 2) * sizeof *groups);
  dart_gptr_t stale[STALE];
  int nstale = 0;
  long made = 0, rounds = 0;
  bool warmed = false;
  while (made < count) {
    if (!warmed && made >= warm) {
      phase_warm(&p);
      warmed = true;
    }
    if (out_of_time(&p)) break;
    /* by node: the units of this unit's node */
    size_t nout = 0;
    dart_team_t node = DART_TEAM_NULL, half = DART_TEAM_NULL;
    CHECK_OK(dart_group_locality_split(all, root, DART_LOCALITY_SCOPE_NODE,
                                       (size_t)nodes, &nout, groups));
    CHECK_EQ(nout, nodes);
    for (int k = 0; k < nodes; k++) {
      dart_team_t t = new_team(__LINE__, DART_TEAM_ALL, groups[k]);
      if (t != DART_TEAM_NULL) node = t;
      CHECK_OK(dart_group_destroy(&groups[k]));
      made++;
    }
    for (int u = 0; u < nunits; u++) in[u] = node_of[u] == my_node;
    if (node != DART_TEAM_NULL) check_team(__LINE__, node, in);
    else FAILF("no team for node %d", my_node);
    /* by halves */
    make_halves(&half);
    made += nunits > 1 ? 2 : 1;
    const int h = (nunits + 1) / 2;
    for (int u = 0; u < nunits; u++) in[u] = (u < h) == (me < h);
    check_team(__LINE__, half, in);
    /* a clone of the half, with an allocation left to its destroy */
    dart_team_t clone = DART_TEAM_NULL;
    CHECK_OK(dart_team_clone(half, &clone));
    last_team++;
    made++;
    if (clone != last_team)
      FAILF("the clone got team id %d, not %d", clone, last_team);
    check_team(__LINE__, clone, in);
    dart_gptr_t g = DART_GPTR_NULL;
    CHECK_OK(dart_team_memalloc_aligned(clone, 1, DART_TYPE_ULONGLONG, &g));
    size_t csize = 0;
    dart_team_unit_t cme = {0};
    CHECK_OK(dart_team_size(clone, &csize));
    CHECK_OK(dart_team_myid(clone, &cme));
    dart_gptr_setunit(&g, DART_TEAM_UNIT_ID((cme.id + 1) % (int)csize));
    uint64_t v = pattern((uint64_t)rounds, me, 0), back = 0;
    CHECK_OK(dart_put_blocking(g, &v, 1, DART_TYPE_ULONGLONG,
                               DART_TYPE_ULONGLONG));
    CHECK_OK(dart_get_blocking(&back, g, 1, DART_TYPE_ULONGLONG,
                               DART_TYPE_ULONGLONG));
    CHECK_EQ(back, v);
    CHECK_OK(dart_barrier(clone));
    stale[nstale < STALE ? nstale++ : rounds % STALE] = g;
    /* destroyed newest first; their ids stay dead */
    dart_team_t dead[3] = {clone, half, node};
    CHECK_OK(dart_team_destroy(&clone));
    CHECK_OK(dart_team_destroy(&half));
    CHECK_OK(dart_team_destroy(&node));
    for (int k = 0; k < 3; k++) {
      size_t s = 0;
      quiet(true);
      dart_ret_t ret = dart_team_size(dead[k], &s);
      quiet(false);
      if (ret != DART_ERR_INVAL)
        FAILF("dart_team_size of destroyed team %d returned %d", dead[k],
              ret);
    }
    for (int k = 0; k < nstale; k++)
      check_rejected(__LINE__, stale[k].teamid, stale[k].segid,
                     stale[k].unitid);
    rounds++;
  }
  if (!warmed) phase_warm(&p);
  free(groups);
  CHECK_OK(dart_group_destroy(&all));
  free(in);
  free(node_of);
  char done[300];
  snprintf(done, sizeof done,
           "%ld teams created and destroyed (count %ld) in %ld rounds%s "
           "(last team id %d of 32767)",
           made, count, rounds, made < count ? " (time budget)" : "",
           last_team);
  phase_end(&p, done);
}

/* ---- phase ops ---- */

#define WORDS 64 /* counters per unit */
#define SLOTS 16 /* mailbox words per pair of units */

static void phase_ops(void)
{
  phase_t p;
  phase_start(&p, "ops");
  const long count = (scaled(FULL_OPS) + nunits - 1) / nunits;
  const long warm = count / 10;
  const size_t part = WORDS + (size_t)nunits * SLOTS; /* words */
  dart_gptr_t seg = seg_alloc(__LINE__, &all_ctx, ALLOC, part * 8, NULL);
  if (seg.segid == 0) return;
  uint64_t *own = own_addr(__LINE__, seg, me);
  uint64_t *added = calloc((size_t)nunits * WORDS, sizeof *added);
  uint64_t *seen = calloc((size_t)nunits * WORDS, sizeof *seen);
  uint64_t *mail = calloc((size_t)nunits * SLOTS, sizeof *mail);
  uint64_t *total = calloc((size_t)nunits * WORDS, sizeof *total);
  if (own) memset(own, 0, part * 8);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  const dart_datatype_t u64 = DART_TYPE_ULONGLONG;
  uint64_t r = dart_test_mix64(0x0B5 + (uint64_t)me);
  long done = 0, i;
  bool warmed = false;
  for (i = 0; i < count; i++) {
    if (i == warm) {
      phase_warm(&p);
      warmed = true;
    }
    if (i % 1024 == 0 && now() - p.t0 > budget) break;
    r = dart_test_mix64(r);
    const int t = (int)(r % (uint64_t)nunits);
    const int w = (int)((r >> 16) % WORDS);
    const int j = (int)((r >> 24) % SLOTS);
    const uint64_t v = 1 + ((r >> 32) & 7);
    dart_gptr_t g = seg;
    dart_gptr_setunit(&g, DART_TEAM_UNIT_ID(t));
    g.addr_or_offs.offset = 8 * (uint64_t)w;
    uint64_t *add = &added[t * WORDS + w], *last = &seen[t * WORDS + w];
    uint64_t old = 0;
    switch ((r >> 40) % 8) {
      case 0:
      case 1:
        /* what one unit sees of a growing counter never goes back */
        CHECK_OK(dart_fetch_and_op(g, &v, &old, u64, DART_OP_SUM));
        if (old < *last)
          FAILF("fetch-and-add on unit %d word %d: %llu after %llu", t, w,
                (unsigned long long)old, (unsigned long long)*last);
        *last = old + v;
        *add += v;
        done++;
        break;
      case 2:
        CHECK_OK(dart_accumulate(g, &v, 1, u64, DART_OP_SUM));
        *add += v;
        done++;
        break;
      case 3: {
        CHECK_OK(dart_fetch_and_op(g, NULL, &old, u64, DART_OP_NO_OP));
        done++;
        for (int tries = 0;; tries++) {
          uint64_t want = old + 1, got = 0;
          CHECK_OK(dart_compare_and_swap(g, &want, &old, &got, u64));
          done++;
          if (got == old) break;
          if (got < old || tries > 1000000) {
            FAILF("compare-and-swap on unit %d word %d: %llu after %llu", t,
                  w, (unsigned long long)got, (unsigned long long)old);
            break;
          }
          old = got;
        }
        *add += 1;
        break;
      }
      case 4:
      case 5: {
        /* this unit's mailbox words at unit t: only it writes them */
        g.addr_or_offs.offset = 8 * (WORDS + (uint64_t)me * SLOTS + j);
        mail[t * SLOTS + j] = r;
        if (r & 1) {
          CHECK_OK(dart_put_blocking(g, &mail[t * SLOTS + j], 1, u64, u64));
        } else {
          CHECK_OK(dart_put(g, &mail[t * SLOTS + j], 1, u64, u64));
          CHECK_OK(dart_flush(g));
        }
        done++;
        break;
      }
      default: {
        g.addr_or_offs.offset = 8 * (WORDS + (uint64_t)me * SLOTS + j);
        uint64_t got = ~0ull;
        CHECK_OK(dart_get_blocking(&got, g, 1, u64, u64));
        if (got != mail[t * SLOTS + j])
          FAILF("mailbox word %d at unit %d: %#llx, not %#llx", j, t,
                (unsigned long long)got,
                (unsigned long long)mail[t * SLOTS + j]);
        done++;
        break;
      }
    }
  }
  if (!warmed) phase_warm(&p);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  /* every counter is the sum of what every unit added to it */
  CHECK_OK(dart_allreduce(added, total, (size_t)nunits * WORDS, u64,
                          DART_OP_SUM, DART_TEAM_ALL));
  for (int w = 0; own && w < WORDS; w++)
    if (own[w] != total[me * WORDS + w])
      FAILF("counter %d is %llu, not %llu", w, (unsigned long long)own[w],
            (unsigned long long)total[me * WORDS + w]);
  for (int t = 0; t < nunits; t++) {
    uint64_t got[SLOTS];
    dart_gptr_t g = seg;
    dart_gptr_setunit(&g, DART_TEAM_UNIT_ID(t));
    g.addr_or_offs.offset = 8 * (WORDS + (uint64_t)me * SLOTS);
    CHECK_OK(dart_get_blocking(got, g, SLOTS, u64, u64));
    if (memcmp(got, &mail[t * SLOTS], sizeof got) != 0)
      FAILF("my mailbox at unit %d differs at the end", t);
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  seg_free(__LINE__, &all_ctx, seg);
  long sums[2] = {done, i < count}, sum[2];
  CHECK_OK(dart_allreduce(sums, sum, 2, DART_TYPE_LONG, DART_OP_SUM,
                          DART_TEAM_ALL));
  free(added);
  free(seen);
  free(mail);
  free(total);
  char text[300];
  snprintf(text, sizeof text,
           "%ld operations of 8 bytes by %d units (%ld loop steps each)%s",
           sum[0], nunits, count, sum[1] ? " (time budget)" : "");
  phase_end(&p, text);
}

/* ---- main ---- */

static const struct {
  const char *name;
  void (*run)(void);
} phases[] = {{"alloc", phase_alloc},
              {"ids", phase_ids},
              {"teams", phase_teams},
              {"ops", phase_ops}};
#define NPHASES (sizeof phases / sizeof phases[0])

int main(int argc, char **argv)
{
  dart_test_init(&argc, &argv);
  me = dart_test_unit;
  nunits = dart_test_units;
  null_fd = open("/dev/null", O_WRONLY);
  err_fd = dup(2);
  if (null_fd < 0 || err_fd < 0) {
    fprintf(stderr, "[unit %d] cannot open /dev/null\n", me);
    return 1;
  }
  const char *env = getenv("DART_SOAK_SCALE");
  if (env == NULL) {
    if (me == 0) printf("DART_SOAK_SCALE is not set: skipped\n");
    dart_exit();
    return DART_TEST_SKIP;
  }
  scale = atof(env);
  if (scale >= 1) budget = 300;
  env = getenv("DART_SOAK_SECONDS");
  if (env) budget = atof(env);
  if (!(scale > 0) || !(budget > 0)) {
    if (me == 0)
      fprintf(stderr, "DART_SOAK_SCALE and DART_SOAK_SECONDS must be "
              "positive\n");
    dart_exit();
    return 1;
  }
  bool run[NPHASES] = {false};
  for (int a = 1; a < argc; a++) {
    size_t k = 0;
    while (k < NPHASES && strcmp(argv[a], phases[k].name) != 0) k++;
    if (k == NPHASES) {
      if (me == 0)
        fprintf(stderr, "unknown phase '%s' (alloc, ids, teams, ops)\n",
                argv[a]);
      dart_exit();
      return 1;
    }
    run[k] = true;
  }
  ctx_init(&all_ctx, DART_TEAM_ALL);
  for (size_t k = 0; k < NPHASES; k++)
    if (run[k] || argc < 2) phases[k].run();
  ctx_fini(&all_ctx);
  return dart_test_finish();
}
