/*
 * Fuzzes the argument validation of the one-sided functions: puts and gets
 * (blocking, non-blocking, handles), accumulate, fetch-and-op,
 * compare-and-swap, the gptr functions and the flushes, on 1 or 2 units.
 *
 * Every input is a sequence of calls on gptrs that are built from live
 * allocations and then mutated, or random. A model of the allocations says
 * which calls are valid and which bytes a valid call may change; after each
 * call every byte of every allocation and guard zone that the caller can
 * read is compared with its shadow copy, and the return code and the error
 * log line (doc/design.md, "Bad input and errors") with the model. Any difference aborts,
 * which libFuzzer reports as a crash.
 *
 * With 2 units, unit 0 fuzzes and unit 1 serves the remote paths from a
 * barrier that unit 0 enters at exit. Node peers' parts are read directly
 * (dart_gptr_getaddr_shared), other remote parts with blocking gets.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, sigaction */
#include <dart/dart.h>
#include <dart/dart_ext.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_UNITS 2
#define MAX_CALLS 32
/* The local pool is small so that whole parts are compared after each call,
 * and so small that chunk numbers up to DART__POOL_MAX_CHUNKS name directory
 * entries past the end of a unit's pool part. */
#define POOL_BYTES 1024
#define POOL_HEADER 4096 /* DART__POOL_HEADER: the directory */
#define CHUNK_SHIFT 48   /* DART__POOL_CHUNK_SHIFT */
#define NCHUNKS 2        /* the initial pool and one grown chunk */
#define GROWN_BLOCK (POOL_BYTES + 476) /* a block that needs a new chunk */
#define GUARD 32         /* guard bytes around local buffers */
/* Local buffers of valid calls up to this size; calls that need more are
 * skipped, invalid calls get at most SMALL_BUF bytes. */
#define LOCAL_CAP ((size_t)1 << 20)
#define SMALL_BUF ((size_t)4096)

/* ---- what failed ---- */

typedef struct {
  const char *func; /* the last function called */
  dart_gptr_t g;
  size_t nelem;
  dart_datatype_t t1, t2;
  dart_operation_t op;
  const char *what; /* the first: the one the arguments are for */
} call_t;

static call_t cur; /* the call under test, for the report */
/* error lines the library logged in it: how many, and the first */
static int log_errors;
static const char *log_func;
static char log_line[256];

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
  char msg[512];
  va_list args;
  va_start(args, fmt);
  vsnprintf(msg, sizeof msg, fmt, args);
  va_end(args);
  fprintf(stderr,
          "fuzz_gptr: %s\n  in %s(gptr unit %d segid %d team %d offset "
          "0x%llx flags %u, nelem %zu, types %ld %ld, op %lu), last call "
          "%s\n",
          msg, cur.what ? cur.what : "(init)", (int)cur.g.unitid,
          (int)cur.g.segid, (int)cur.g.teamid,
          (unsigned long long)cur.g.addr_or_offs.offset,
          (unsigned)cur.g.flags, cur.nelem, (long)cur.t1, (long)cur.t2,
          (unsigned long)cur.op, cur.func ? cur.func : "none");
  if (log_errors > 0)
    fprintf(stderr, "  first error line: %s: %s\n", log_func, log_line);
  abort();
}

/* ---- error lines: the library's log calls are wrapped (--wrap) ---- */

void __wrap_dart__base__log(int level, const char *func, const char *fmt,
                            ...) __attribute__((format(printf, 3, 4)));
void __wrap_dart__base__log(int level, const char *func, const char *fmt,
                            ...)
{
  char line[256];
  va_list args;
  va_start(args, fmt);
  vsnprintf(line, sizeof line, fmt, args);
  va_end(args);
  if (level != 0) { /* not an error: the library's own output */
    fprintf(stderr, "[dart] %s: %s\n", func, line);
    return;
  }
  if (log_errors++ == 0) {
    log_func = func;
    memcpy(log_line, line, sizeof line);
  }
}

/* The arguments of the next operation, for the report. */
static void new_call(dart_gptr_t g, size_t nelem, dart_datatype_t t1,
                     dart_datatype_t t2, dart_operation_t op)
{
  cur = (call_t){.g = g, .nelem = nelem, .t1 = t1, .t2 = t2, .op = op};
}

/* Starts a call of func (for the report and the log check). */
static void begin(const char *func)
{
  if (cur.what == NULL) cur.what = func;
  cur.func = func;
  log_errors = 0;
}

/* A bad call logs one error line naming its function, a good one none. */
static void check_log(dart_ret_t ret)
{
  if (ret == DART_OK && log_errors != 0)
    fail("returned DART_OK but logged an error: %s: %s", log_func, log_line);
  if (ret != DART_OK && log_errors != 1)
    fail("returned %d with %d error lines, not 1", (int)ret, log_errors);
  if (ret != DART_OK && strcmp(log_func, cur.func) != 0)
    fail("the error line names %s, not %s: %s", log_func, cur.func, log_line);
}

static void check_ret(dart_ret_t ret, bool valid)
{
  dart_ret_t want = valid ? DART_OK : DART_ERR_INVAL;
  if (ret != want)
    fail("returned %d, not %d (%s)", (int)ret, (int)want,
         log_errors ? log_line : "no error line");
  check_log(ret);
}

/* ---- the input ---- */

typedef struct {
  const uint8_t *p;
  size_t n;
} reader_t;

/* Little-endian; zeros once the input is used up. */
static uint64_t rd(reader_t *r, int bytes)
{
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++) {
    uint64_t b = 0;
    if (r->n > 0) {
      b = *r->p++;
      r->n--;
    }
    v |= b << (8 * i);
  }
  return v;
}

static unsigned rd8(reader_t *r) { return (unsigned)rd(r, 1); }

/* ---- the input of a job ended from outside ----
 * libFuzzer saves the inputs that make unit 0 fail; when unit 1 fails or
 * the job runs out of time, the job ends unit 0 with SIGTERM, and the
 * input under test goes to the file $FUZZ_GPTR_INPUT names. */

static const char *input_path;
static uint8_t input[1 << 16];
static size_t input_size;

static void save_input(int sig)
{
  int fd = open(input_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    ssize_t written = write(fd, input, input_size);
    (void)written; /* nothing more to do about it here */
    close(fd);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

/* Copies the input under test. The handler goes in at the first input:
 * libFuzzer installs its own after LLVMFuzzerInitialize. */
static void keep_input(const uint8_t *data, size_t size)
{
  static bool installed;
  if (input_path == NULL) return;
  if (!installed) {
    struct sigaction sa = {.sa_handler = save_input};
    sigaction(SIGTERM, &sa, NULL);
    installed = true;
  }
  input_size = size < sizeof input ? size : sizeof input;
  memcpy(input, data, input_size);
}

/* ---- datatypes: the model of each value the harness passes ---- */

enum { K_BASIC, K_DERIVED, K_CUSTOM, K_INVALID };

typedef struct {
  dart_datatype_t id;
  int kind;
  size_t es;       /* bytes per element */
  dart_datatype_t base;
  size_t num_elem; /* elements per instance */
  size_t extent;   /* elements between instances */
  size_t end;      /* elements from an instance's start to its end */
  size_t nblocks;
  size_t blen[3], boff[3];
} type_t;

#define NTYPES 32
static type_t types[NTYPES];
static int ntypes;

static void add_basic(dart_datatype_t id, size_t es)
{
  types[ntypes++] = (type_t){.id = id, .kind = K_BASIC, .es = es,
                             .base = id, .num_elem = 1, .extent = 1,
                             .end = 1, .nblocks = 1, .blen = {1}};
}

static void add_invalid(dart_datatype_t id)
{
  types[ntypes++] = (type_t){.id = id, .kind = K_INVALID};
}

static void add_strided(dart_datatype_t base, size_t stride, size_t blocklen)
{
  type_t t = types[base - 1]; /* the basic types come first, in order */
  if (dart_type_create_strided(base, stride, blocklen, &t.id) != DART_OK)
    fail("dart_type_create_strided failed");
  t.kind = K_DERIVED;
  t.num_elem = blocklen;
  t.extent = stride;
  t.end = blocklen;
  t.nblocks = 1;
  t.blen[0] = blocklen;
  t.boff[0] = 0;
  types[ntypes++] = t;
}

static void add_indexed(dart_datatype_t base, size_t n, const size_t *blen,
                        const size_t *boff)
{
  type_t t = types[base - 1];
  if (dart_type_create_indexed(base, n, blen, boff, &t.id) != DART_OK)
    fail("dart_type_create_indexed failed");
  size_t lo = SIZE_MAX, hi = 0;
  t.kind = K_DERIVED;
  t.num_elem = 0;
  t.nblocks = n;
  for (size_t i = 0; i < n; i++) {
    t.blen[i] = blen[i];
    t.boff[i] = boff[i];
    t.num_elem += blen[i];
    if (boff[i] < lo) lo = boff[i];
    if (boff[i] + blen[i] > hi) hi = boff[i] + blen[i];
  }
  t.extent = hi - lo; /* as MPI: instances follow at the type's extent */
  t.end = hi;
  types[ntypes++] = t;
}

static void add_custom(size_t bytes)
{
  type_t t = {.kind = K_CUSTOM, .es = bytes, .num_elem = 1, .extent = 1,
              .end = 1, .nblocks = 1, .blen = {1}};
  if (dart_type_create_custom(bytes, &t.id) != DART_OK)
    fail("dart_type_create_custom failed");
  t.base = t.id;
  types[ntypes++] = t;
}

static void types_init(void)
{
  static const size_t sizes[] = {
      1, sizeof(short), sizeof(int), sizeof(unsigned), sizeof(long),
      sizeof(unsigned long), sizeof(long long), sizeof(unsigned long long),
      sizeof(float), sizeof(double), sizeof(long double)};
  for (int i = 0; i < 11; i++) add_basic(DART_TYPE_BYTE + i, sizes[i]);
  add_strided(DART_TYPE_BYTE, 3, 2);
  add_strided(DART_TYPE_INT, 4, 1);
  add_strided(DART_TYPE_DOUBLE, 2, 2);
  add_strided(DART_TYPE_BYTE, INT32_MAX, 1); /* spans overflow quickly */
  static const size_t b1[] = {2, 1, 3}, o1[] = {5, 0, 9};
  add_indexed(DART_TYPE_BYTE, 3, b1, o1);
  static const size_t b2[] = {1, 2}, o2[] = {3, 6}; /* starts at 3 */
  add_indexed(DART_TYPE_LONG, 2, b2, o2);
  add_custom(3);
  add_custom(3);
  add_custom(8);
  dart_datatype_t dead;
  if (dart_type_create_custom(4, &dead) != DART_OK) fail("custom type");
  dart_datatype_t stale = dead;
  if (dart_type_destroy(&dead) != DART_OK) fail("dart_type_destroy failed");
  add_invalid(stale);
  add_invalid(DART_TYPE_UNDEFINED);
  add_invalid(DART_TYPE_LAST);
  add_invalid(1023);
  add_invalid(-1);
  add_invalid(stale + 100);
}

static const type_t *find_type(dart_datatype_t id)
{
  for (int i = 0; i < ntypes; i++)
    if (types[i].id == id && types[i].kind != K_INVALID) return &types[i];
  return NULL;
}

/* A type value: mostly one of the table, sometimes any. */
static dart_datatype_t decode_type(reader_t *r)
{
  unsigned b = rd8(r);
  if (b == 255) return (dart_datatype_t)rd(r, 8);
  return types[b % ntypes].id;
}

/* Elements spanned by nelem elements of t, in bytes; false on overflow. */
static bool span_bytes(const type_t *t, size_t nelem, size_t *bytes)
{
  size_t elems = nelem;
  if (t->kind == K_DERIVED && nelem > 0 &&
      (__builtin_mul_overflow(nelem / t->num_elem - 1, t->extent, &elems) ||
       __builtin_add_overflow(elems, t->end, &elems)))
    return false;
  return !__builtin_mul_overflow(elems, t->es, bytes);
}

/* Byte offset of element e in a layout of t. */
static size_t elem_pos(const type_t *t, size_t e)
{
  if (t->kind != K_DERIVED) return e * t->es;
  size_t inst = e / t->num_elem, r = e % t->num_elem, i = 0;
  while (r >= t->blen[i]) r -= t->blen[i++];
  return (inst * t->extent + t->boff[i] + r) * t->es;
}

/* Whether (src, dst) may move nelem elements. */
static bool pair_valid(dart_datatype_t src, dart_datatype_t dst,
                       size_t nelem)
{
  const type_t *s = find_type(src), *d = find_type(dst);
  size_t bytes;
  if (s == NULL || d == NULL) return false;
  bool same = s->base == d->base ||
              (s->kind == K_CUSTOM && d->kind == K_CUSTOM && s->es == d->es);
  return same && nelem % s->num_elem == 0 && nelem % d->num_elem == 0 &&
         span_bytes(s, nelem, &bytes) && span_bytes(d, nelem, &bytes);
}

static dart_operation_t decode_op(reader_t *r)
{
  unsigned b = rd8(r);
  if (b == 255) return (dart_operation_t)rd(r, 8);
  return b % (DART_OP_LAST + 2);
}

static bool integral(dart_datatype_t t)
{
  return t >= DART_TYPE_BYTE && t <= DART_TYPE_ULONGLONG;
}

/* Operations that apply atomically to an element of t. */
static bool atomic_op_valid(dart_operation_t op, dart_datatype_t t)
{
  switch (op) {
  case DART_OP_MIN: case DART_OP_MAX: case DART_OP_SUM: case DART_OP_PROD:
  case DART_OP_REPLACE: case DART_OP_NO_OP:
    return true;
  case DART_OP_BAND: case DART_OP_LAND: case DART_OP_BOR: case DART_OP_LOR:
  case DART_OP_BXOR: case DART_OP_LXOR:
    return integral(t);
  default:
    return false;
  }
}

/* ---- allocations and what the caller can see of them ---- */

/* One unit's part of an allocation (or one chunk of its pool). */
typedef struct {
  int seg, unit, chunk; /* unit: in the allocation's team */
  dart_gptr_t g;        /* the part's first byte */
  unsigned char *mem;   /* load/store address; NULL: read with gets */
  size_t size;          /* bytes a gptr may address */
  size_t lo, hi;        /* guard bytes before and after that nobody may
                           change (pool directory, window padding, ours) */
  bool own;
  unsigned char *shadow, *expect, *scratch; /* lo + size + hi bytes */
} zone_t;

enum { T_ALL, T_SOLO, T_OTHER, NTEAMS };

typedef struct {
  dart_team_t id;
  int size;
  bool member;
} team_t;

typedef struct {
  const char *name;
  int team;
  bool pool, live;
  dart_gptr_t g; /* team unit 0, offset 0 */
  zone_t *zone[MAX_UNITS][NCHUNKS];
} seg_t;

enum { S_A1, S_A2, S_A3, S_REG, S_POOL, S_SOLO, S_FREED, NSEGS };

#define MAX_ZONES 16
static zone_t zones[MAX_ZONES];
static int nzones;
static team_t teams[NTEAMS];
static seg_t segs[NSEGS];
static int me, nunits;
static unsigned char *reg_mem; /* the registered part with its guards */

static size_t round64(size_t n) { return (n + 63) / 64 * 64; }

/* Bytes of unit u's part of a collective allocation. */
static size_t part_bytes(int s, int u)
{
  switch (s) {
  case S_A1: return 200 + 56 * (size_t)u;
  case S_A2: return (17 + 2 * (size_t)u) * sizeof(unsigned long);
  case S_A3: return u == 0 ? 64 : 0;
  case S_REG: return 160 + 16 * (size_t)u;
  default: return 96; /* S_SOLO */
  }
}

/* The grown chunk for a block of bytes after the initial pool (pool.c:
 * twice the last chunk, doubled until the block fits). */
static size_t grown_size(size_t bytes)
{
  size_t size = 2 * POOL_BYTES;
  while (size < bytes) size *= 2;
  return size;
}

static unsigned char *image(zone_t *z);

static void zone_add(int s, int u, int chunk, size_t size)
{
  if (nzones == MAX_ZONES) fail("too many zones");
  zone_t *z = &zones[nzones++];
  seg_t *seg = &segs[s];
  z->seg = s;
  z->unit = u;
  z->chunk = chunk;
  z->g = seg->g;
  z->g.unitid = u;
  z->g.addr_or_offs.offset = (uint64_t)chunk << CHUNK_SHIFT;
  z->size = size;
  z->own = u == (teams[seg->team].id == DART_TEAM_ALL ? me : 0);
  void *addr = NULL;
  cur = (call_t){.g = z->g};
  begin("dart_gptr_getaddr_shared");
  if (dart_gptr_getaddr_shared(z->g, &addr) != DART_OK)
    fail("no address for segment %s", seg->name);
  z->mem = addr;
  if (z->mem && s == S_REG) {
    z->lo = z->hi = 64;
  } else if (z->mem && s == S_POOL && chunk == 0) {
    z->lo = POOL_HEADER;
    z->hi = round64(POOL_HEADER + size) + 1 - POOL_HEADER - size;
  } else if (z->mem && !seg->pool) {
    /* a shared window part: SEG_ALIGN-aligned, padded (segment.c) */
    z->hi = round64(size) + 1 - size;
  }
  size_t len = z->lo + z->size + z->hi + 1; /* not 0 */
  z->shadow = malloc(len);
  z->expect = malloc(len);
  z->scratch = malloc(len);
  if (!z->shadow || !z->expect || !z->scratch) fail("out of memory");
  seg->zone[u][chunk] = z;
}

/* The zone's bytes now (guards included): read directly, or fetched. */
static unsigned char *image(zone_t *z)
{
  if (z->mem) return z->mem - z->lo;
  if (z->size > 0) {
    const char *func = cur.func;
    begin("dart_get_blocking");
    dart_ret_t ret = dart_get_blocking(z->scratch, z->g, z->size,
                                       DART_TYPE_BYTE, DART_TYPE_BYTE);
    if (ret != DART_OK || log_errors)
      fail("reading segment %s of unit %d failed: %d", segs[z->seg].name,
           z->unit, (int)ret);
    cur.func = func;
  }
  return z->scratch;
}

static size_t zone_len(const zone_t *z) { return z->lo + z->size + z->hi; }

/* Compares the zone with want (its shadow unless given) and takes the
 * bytes now there as its new shadow. */
static void zone_verify(zone_t *z, const unsigned char *now,
                        const unsigned char *want)
{
  size_t len = zone_len(z);
  if (want == NULL) want = z->shadow;
  if (memcmp(now, want, len) != 0) {
    size_t i = 0;
    while (now[i] == want[i]) i++;
    fail("byte %lld of unit %d's part of %s (chunk %d, %zu bytes) is "
         "0x%02x, not 0x%02x",
         (long long)i - (long long)z->lo, z->unit, segs[z->seg].name,
         z->chunk, z->size, now[i], want[i]);
  }
  if (want != z->shadow) memcpy(z->shadow, now, len);
}

/* What the model says a gptr addresses: its zone and offset. The zone is
 * set where team, segment, unit and chunk exist even if the range does not
 * fit, for the checks. */
static bool model_resolve(dart_gptr_t g, size_t span, zone_t **zp,
                          uint64_t *offp)
{
  *zp = NULL;
  int t = -1;
  for (int i = 0; i < NTEAMS; i++)
    if (teams[i].member && teams[i].id == g.teamid) t = i;
  if (t < 0) return false;
  seg_t *s = NULL;
  for (int i = 0; i < NSEGS; i++)
    if (segs[i].live && segs[i].team == t && segs[i].g.segid == g.segid)
      s = &segs[i];
  int u = g.unitid;
  if (s == NULL || u < 0 || u >= teams[t].size) return false;
  uint64_t off = g.addr_or_offs.offset;
  zone_t *z = s->zone[u][0];
  *zp = z;
  if (off <= z->size && span <= z->size - off) {
    *offp = off;
    return true;
  }
  if (!s->pool) return false;
  uint64_t c = off >> CHUNK_SHIFT;
  off &= ((uint64_t)1 << CHUNK_SHIFT) - 1;
  if (c == 0 || c >= NCHUNKS) return false;
  z = s->zone[u][c];
  *zp = z;
  if (off > z->size || span > z->size - off) return false;
  *offp = off;
  return true;
}

/* Sanity of the model at start: each part ends where the model says. */
static void model_probe(zone_t *z)
{
  dart_path_t path;
  dart_gptr_t g = z->g;
  g.addr_or_offs.offset += z->size;
  begin("dart_gptr_path");
  if (dart_gptr_path(g, &path) != DART_OK) fail("part shorter than modelled");
  g.addr_or_offs.offset++;
  if (dart_gptr_path(g, &path) != DART_ERR_INVAL)
    fail("part longer than modelled");
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
  for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(seed + i * 7 + i / 251);
}

static void must(dart_ret_t ret, const char *what)
{
  if (ret != DART_OK) fail("%s failed: %d", what, (int)ret);
}

static dart_team_t team_of(dart_unit_t unit)
{
  dart_group_t group;
  dart_team_t team;
  must(dart_group_create(&group), "dart_group_create");
  must(dart_group_addmember(group, DART_GLOBAL_UNIT_ID(unit)),
       "dart_group_addmember");
  must(dart_team_create(DART_TEAM_ALL, group, &team), "dart_team_create");
  must(dart_group_destroy(&group), "dart_group_destroy");
  return team;
}

static void segs_init(void)
{
  dart_gptr_t g, blocks[3];
  teams[T_ALL] = (team_t){DART_TEAM_ALL, nunits, true};
  dart_team_t solo = team_of(0);
  teams[T_SOLO] = (team_t){solo, 1, me == 0};
  /* a team unit 0 is not in (it learns no id: ids go up one by one) */
  teams[T_OTHER] = (team_t){DART_TEAM_NULL, 1, false};
  if (nunits > 1 && team_of(1) == DART_TEAM_NULL)
    teams[T_OTHER].id = (dart_team_t)(solo + 1);

  static const char *const names[NSEGS] = {"A1", "A2", "A3", "registration",
                                           "pool", "solo", "freed"};
  for (int s = 0; s < NSEGS; s++) segs[s].name = names[s];
  must(dart_team_memalloc_aligned(DART_TEAM_ALL, part_bytes(S_A1, me),
                                  DART_TYPE_BYTE, &segs[S_A1].g), "A1");
  must(dart_team_memalloc_aligned(DART_TEAM_ALL,
                                  part_bytes(S_A2, me) / sizeof(long),
                                  DART_TYPE_ULONG, &segs[S_A2].g), "A2");
  must(dart_team_memalloc_aligned(DART_TEAM_ALL, part_bytes(S_A3, me),
                                  DART_TYPE_BYTE, &segs[S_A3].g), "A3");
  size_t reg = part_bytes(S_REG, me);
  reg_mem = aligned_alloc(64, 64 + round64(reg) + 64);
  if (reg_mem == NULL) fail("out of memory");
  must(dart_team_memregister(DART_TEAM_ALL, reg, DART_TYPE_BYTE, reg_mem + 64,
                             &segs[S_REG].g), "registration");
  must(dart_team_memalloc_aligned(DART_TEAM_ALL, 32, DART_TYPE_BYTE, &g),
       "freed");
  segs[S_FREED].g = g;
  must(dart_team_memfree(g), "dart_team_memfree");
  if (me == 0)
    must(dart_team_memalloc_aligned(solo, part_bytes(S_SOLO, 0),
                                    DART_TYPE_BYTE, &segs[S_SOLO].g), "solo");
  /* two blocks in the initial pool, one in a grown chunk */
  must(dart_memalloc(24, DART_TYPE_BYTE, &blocks[0]), "dart_memalloc");
  must(dart_memalloc(12, DART_TYPE_DOUBLE, &blocks[1]), "dart_memalloc");
  must(dart_memalloc(GROWN_BLOCK, DART_TYPE_BYTE, &blocks[2]),
       "dart_memalloc");
  if (blocks[2].addr_or_offs.offset >> CHUNK_SHIFT != 1)
    fail("the last block is not in a grown chunk");
  /* everybody's chunks are published before anybody looks them up */
  must(dart_barrier(DART_TEAM_ALL), "dart_barrier");
  segs[S_POOL].g = blocks[0];
  segs[S_POOL].g.unitid = 0;
  segs[S_POOL].g.addr_or_offs.offset = 0;
  segs[S_POOL].pool = true;

  for (int s = 0; s < NSEGS; s++) {
    segs[s].team = s == S_SOLO ? T_SOLO : T_ALL;
    segs[s].live = s != S_FREED && (s != S_SOLO || me == 0);
  }
  for (int s = 0; s < NSEGS; s++) {
    if (!segs[s].live) continue;
    for (int u = 0; u < teams[segs[s].team].size; u++) {
      if (s == S_POOL) {
        zone_add(s, u, 0, POOL_BYTES);
        zone_add(s, u, 1, grown_size(GROWN_BLOCK));
      } else {
        zone_add(s, u, 0, part_bytes(s, u));
      }
    }
  }
}

/* Patterns in our own memory (guards we own included), then shadows. */
static void zones_init(void)
{
  for (int i = 0; i < nzones; i++) {
    zone_t *z = &zones[i];
    if (!z->own) continue;
    unsigned char *p = z->mem - (z->seg == S_POOL ? 0 : z->lo);
    fill(p, z->size + (z->seg == S_POOL ? 0 : z->lo + z->hi),
         (unsigned)(i * 37 + me * 101));
  }
  must(dart_barrier(DART_TEAM_ALL), "dart_barrier");
  for (int i = 0; i < nzones; i++) {
    zone_t *z = &zones[i];
    memcpy(z->shadow, image(z), zone_len(z));
    model_probe(z);
  }
}

static void finish(void)
{
  cur = (call_t){.what = "(exit)"};
  must(dart_barrier(DART_TEAM_ALL), "dart_barrier at exit");
  must(dart_exit(), "dart_exit");
  free(reg_mem);
  for (int i = 0; i < nzones; i++) {
    free(zones[i].shadow);
    free(zones[i].expect);
    free(zones[i].scratch);
  }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  /* MPI's handlers of these would keep libFuzzer from installing its own
   * (it leaves existing ones alone) and from saving the crashing input */
  static const int crash_signals[] = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE,
                                      SIGILL};
  struct sigaction before[5];
  for (int i = 0; i < 5; i++) sigaction(crash_signals[i], NULL, &before[i]);
  setenv("DART_LOCAL_POOL", "1K", 1);
  input_path = getenv("FUZZ_GPTR_INPUT");
  if (dart_init(argc, argv) != DART_OK) {
    fprintf(stderr, "fuzz_gptr: dart_init failed\n");
    exit(1);
  }
  for (int i = 0; i < 5; i++) sigaction(crash_signals[i], &before[i], NULL);
  dart_global_unit_t id;
  size_t size;
  must(dart_myid(&id), "dart_myid");
  must(dart_size(&size), "dart_size");
  me = id.id;
  nunits = (int)size;
  if (nunits > MAX_UNITS) {
    if (me == 0) fprintf(stderr, "fuzz_gptr: runs on 1 or 2 units\n");
    dart_exit();
    exit(2);
  }
  types_init();
  segs_init();
  zones_init();
  if (me != 0) {
    /* serve unit 0's operations until it is done */
    finish();
    exit(0);
  }
  atexit(finish);
  return 0;
}

/* ---- local buffers: guarded, patterned, checked ---- */

typedef struct {
  unsigned char *raw, *p, *expect; /* p: NULL for a NULL buffer */
  size_t n;
} lbuf_t;

static void lbuf_new(lbuf_t *b, size_t n, bool null, unsigned seed)
{
  b->n = n;
  b->raw = b->p = b->expect = NULL;
  if (null) return;
  b->raw = malloc(n + 2 * GUARD);
  b->expect = malloc(n + 2 * GUARD);
  if (b->raw == NULL || b->expect == NULL) fail("out of memory");
  fill(b->raw, n + 2 * GUARD, seed);
  memcpy(b->expect, b->raw, n + 2 * GUARD);
  b->p = b->raw + GUARD;
}

/* The buffer must hold what expect says; then it is freed. */
static void lbuf_done(lbuf_t *b, const char *what)
{
  if (b->raw && memcmp(b->raw, b->expect, b->n + 2 * GUARD) != 0) {
    size_t i = 0;
    while (b->raw[i] == b->expect[i]) i++;
    fail("byte %lld of the %zu-byte %s buffer is 0x%02x, not 0x%02x",
         (long long)i - GUARD, b->n, what, b->raw[i], b->expect[i]);
  }
  free(b->raw);
  free(b->expect);
}

/* ---- gptrs ---- */

static dart_gptr_t reg; /* the gptr the calls of one input pass along */

static dart_gptr_t decode_gptr(reader_t *r)
{
  unsigned how = rd8(r);
  dart_gptr_t g = reg;
  if ((how & 7) == 7) {
    g.unitid = (int32_t)((uint32_t)rd(r, 3) << 8) >> 8;
    g.flags = rd8(r);
    g.segid = (int16_t)rd(r, 2);
    g.teamid = (int16_t)rd(r, 2);
    g.addr_or_offs.offset = rd(r, 8);
  } else if ((how & 7) != 6) {
    const seg_t *s = &segs[rd8(r) % NSEGS];
    int size = teams[s->team].size;
    g = s->g;
    g.unitid = (int)(rd8(r) % (unsigned)(size + 1));
    int c = s->pool ? (int)(rd8(r) % (NCHUNKS + 1)) : 0;
    const zone_t *z = g.unitid < size && c < NCHUNKS && s->live
                          ? s->zone[g.unitid][c] : NULL;
    uint64_t end = z ? z->size : 64, off;
    switch (rd8(r) % 5) {
    case 0: off = rd8(r) % 64; break;
    case 1: off = 8 * (rd8(r) % 32); break;
    case 2: off = end - rd8(r) % 24; break;
    case 3: off = rd(r, 2); break;
    default: off = rd(r, 8); break;
    }
    g.addr_or_offs.offset = ((uint64_t)c << CHUNK_SHIFT) + off;
  }
  if (how & 0x08) {
    static const int32_t units[] = {-1, 1, 2, 3, (1 << 23) - 1, -(1 << 23)};
    g.unitid = units[rd8(r) % 6];
  }
  if (how & 0x10) {
    int16_t ids[] = {(int16_t)(g.segid + 1), (int16_t)(g.segid - 1),
                     (int16_t)-g.segid, segs[S_FREED].g.segid, INT16_MIN,
                     (int16_t)rd(r, 2)};
    g.segid = ids[rd8(r) % 6];
  }
  if (how & 0x20) {
    dart_team_t ids[] = {DART_TEAM_ALL, teams[T_SOLO].id, teams[T_OTHER].id,
                         DART_TEAM_NULL, INT16_MAX, (dart_team_t)rd(r, 2)};
    g.teamid = ids[rd8(r) % 6];
  }
  if (how & 0x40) g.addr_or_offs.offset ^= (uint64_t)1 << (rd8(r) % 64);
  if (how & 0x80) g.flags = rd8(r);
  reg = g;
  return g;
}

static size_t decode_nelem(reader_t *r)
{
  static const size_t big[] = {SIZE_MAX, SIZE_MAX / 2 + 1, SIZE_MAX / 8 + 1,
                               (size_t)1 << 32, (size_t)INT32_MAX + 1,
                               SIZE_MAX / 3 + 1};
  switch (rd8(r) % 6) {
  case 0: return rd8(r) % 17;
  case 1: return rd8(r);
  case 2: return rd(r, 2);
  case 3: return big[rd8(r) % 6];
  case 4: return rd(r, 8);
  default: return 1;
  }
}

/* ---- checks after a call ---- */

/* The trusted completion of everything before the zones are read. */
static void complete_all(void)
{
  const char *func = cur.func;
  begin("dart_flush_all");
  must(dart_flush_all(segs[S_A1].g), "dart_flush_all");
  if (teams[T_SOLO].member)
    must(dart_flush_all(segs[S_SOLO].g), "dart_flush_all");
  cur.func = func;
}

/* Every zone read directly must be as its shadow says, except z, which
 * must be as z->expect says when expected (after the caller filled it). */
static void verify_zones(zone_t *z, const unsigned char *now, bool expected)
{
  for (int i = 0; i < nzones; i++) {
    zone_t *y = &zones[i];
    if (y == z && expected) {
      zone_verify(y, now, y->expect);
    } else if (y == z || y->mem) {
      zone_verify(y, y == z ? now : image(y), NULL);
    }
  }
}

/* The zone's image now with its expectation prepared from its shadow. */
static unsigned char *expect_begin(zone_t *z)
{
  unsigned char *now = image(z);
  memcpy(z->expect, z->shadow, zone_len(z));
  return now;
}

/* After a call on z (or no zone): all zones as they must be. */
static void verify_untouched(zone_t *z)
{
  verify_zones(z, z ? image(z) : NULL, false);
}

/* ---- the calls ---- */

static dart_handle_t stale; /* a handle completed earlier, or NULL */
static char sentinel_obj;
#define SENTINEL ((dart_handle_t)(void *)&sentinel_obj)

/* A flush of gptr g of kind k (0..3; none for more). */
static void flush_kind(unsigned k, dart_gptr_t g)
{
  static const char *const names[] = {"dart_flush", "dart_flush_all",
                                      "dart_flush_local",
                                      "dart_flush_local_all"};
  if (k > 3) return;
  zone_t *z;
  uint64_t off;
  bool valid = model_resolve(g, 0, &z, &off);
  begin(names[k]);
  dart_ret_t ret = k == 0   ? dart_flush(g)
                   : k == 1 ? dart_flush_all(g)
                   : k == 2 ? dart_flush_local(g)
                            : dart_flush_local_all(g);
  check_ret(ret, valid);
}

/* Completes a live handle in one of several ways (k), some bad: a test
 * without a result, a waitall that also names a completed handle. */
static void complete_handle(dart_handle_t *h, unsigned k, dart_gptr_t g)
{
  static const char *const names[] = {
      "dart_wait", "dart_wait_local", "dart_test", "dart_test_local",
      "dart_waitall", "dart_waitall_local", "dart_testall",
      "dart_testall_local", "dart_handle_free"};
  unsigned which = k % 9, how = (k / 9) % 4;
  bool all = which >= 4 && which <= 7;
  bool test = which == 2 || which == 3 || which == 6 || which == 7;
  bool no_result = how == 0 && test;
  bool with_stale = how == 1 && all && stale != NULL && stale != *h;
  bool twice = how == 2 && all; /* the same handle twice in the list */
  dart_handle_t before = *h;
  dart_handle_t list[2] = {*h, with_stale ? stale : *h};
  dart_handle_t *hs = all ? list : h;
  size_t n = with_stale || twice ? 2 : 1;
  int32_t done = 0;
  int32_t *res = no_result ? NULL : &done;
  begin(names[which]);
  dart_ret_t ret;
  switch (which) {
  case 0: ret = dart_wait(h); break;
  case 1: ret = dart_wait_local(h); break;
  case 2: ret = dart_test(h, res); break;
  case 3: ret = dart_test_local(h, res); break;
  case 4: ret = dart_waitall(hs, n); break;
  case 5: ret = dart_waitall_local(hs, n); break;
  case 6: ret = dart_testall(hs, n, res); break;
  case 7: ret = dart_testall_local(hs, n, res); break;
  default: ret = dart_handle_free(h); break;
  }
  if (all) *h = list[0];
  bool valid = !no_result && !with_stale;
  check_ret(ret, valid);
  if (!valid) {
    if (*h != before || (with_stale && list[1] != stale))
      fail("a handle changed on error");
    begin("dart_wait");
    check_ret(dart_wait(h), true);
  } else if (which == 8) {
    flush_kind(0, g);
  }
  if (*h != DART_HANDLE_NULL || (twice && list[1] != DART_HANDLE_NULL))
    fail("a handle is not DART_HANDLE_NULL after completion");
  if (test && valid && done != 1) fail("a test did not report completion");
  stale = before;
}

/* Puts and gets: blocking, non-blocking with a flush, with a handle. */
static void op_xfer(reader_t *r)
{
  unsigned v = rd8(r);
  bool is_put = v & 1;
  unsigned mode = (v >> 1) % 3, comp = rd8(r);
  dart_gptr_t g = decode_gptr(r);
  size_t nelem = decode_nelem(r);
  dart_datatype_t lt = decode_type(r);
  dart_datatype_t rt = rd8(r) & 1 ? lt : decode_type(r);
  unsigned bufmode = rd8(r);
  bool null_buf = bufmode % 8 == 0;
  bool null_handle = mode == 2 && bufmode % 16 == 1;
  new_call(g, nelem, lt, rt, 0);

  const type_t *ltt = find_type(lt), *rtt = find_type(rt);
  bool types_ok = is_put ? pair_valid(lt, rt, nelem)
                         : pair_valid(rt, lt, nelem);
  size_t need = 0, span = 0;
  if (types_ok) {
    span_bytes(ltt, nelem, &need);
    span_bytes(rtt, nelem, &span);
  }
  zone_t *z;
  uint64_t off = 0;
  bool in_range = types_ok && model_resolve(g, span, &z, &off);
  if (!in_range) model_resolve(g, 0, &z, &off); /* the zone, for checks */
  bool valid = in_range && !(null_buf && nelem > 0) && !null_handle;
  if (valid && need > LOCAL_CAP) return;
  size_t n = valid ? need
                   : bufmode % 8 == 1 ? rd8(r)
                                      : (need < SMALL_BUF ? need : SMALL_BUF);
  lbuf_t b;
  lbuf_new(&b, n, null_buf, rd8(r));

  static const char *const names[2][3] = {
      {"dart_get_blocking", "dart_get", "dart_get_handle"},
      {"dart_put_blocking", "dart_put", "dart_put_handle"}};
  dart_handle_t h = SENTINEL;
  dart_handle_t *hp = null_handle ? NULL : &h;
  begin(names[is_put][mode]);
  dart_ret_t ret;
  if (is_put) {
    ret = mode == 0   ? dart_put_blocking(g, b.p, nelem, lt, rt)
          : mode == 1 ? dart_put(g, b.p, nelem, lt, rt)
                      : dart_put_handle(g, b.p, nelem, lt, rt, hp);
  } else {
    ret = mode == 0   ? dart_get_blocking(b.p, g, nelem, rt, lt)
          : mode == 1 ? dart_get(b.p, g, nelem, rt, lt)
                      : dart_get_handle(b.p, g, nelem, rt, lt, hp);
  }
  check_ret(ret, valid);
  if (mode == 1) {
    flush_kind(comp % 5, g);
  } else if (mode == 2 && !valid) {
    /* a failure leaves a handle that waits for nothing (DART-MPI's) */
    if (h != (null_handle ? SENTINEL : DART_HANDLE_NULL))
      fail("a failed call left a handle other than DART_HANDLE_NULL");
  } else if (mode == 2) {
    if (h == SENTINEL) fail("no handle set");
    if (h != DART_HANDLE_NULL && (comp & 0x80)) {
      /* the same transfer again while h is live: another handle */
      dart_handle_t h2 = SENTINEL;
      check_ret(is_put ? dart_put_handle(g, b.p, nelem, lt, rt, &h2)
                       : dart_get_handle(b.p, g, nelem, rt, lt, &h2), true);
      if (h2 == h) fail("two live operations share a handle");
      begin("dart_wait");
      check_ret(dart_wait(&h2), true);
    }
    if (h != DART_HANDLE_NULL) complete_handle(&h, comp & 0x7F, g);
  }
  complete_all();

  if (!valid || nelem == 0) {
    verify_untouched(z);
    lbuf_done(&b, is_put ? "source" : "destination");
    return;
  }
  unsigned char *now = expect_begin(z);
  size_t es = ltt->es;
  for (size_t e = 0; e < nelem; e++) {
    unsigned char *remote = z->expect + z->lo + off + elem_pos(rtt, e);
    unsigned char *local = b.expect + GUARD + elem_pos(ltt, e);
    if (is_put)
      memcpy(remote, local, es);
    else
      memcpy(local, remote, es);
  }
  verify_zones(z, now, true);
  lbuf_done(&b, is_put ? "source" : "destination");
}

/* The basic type's model, or NULL (atomics take basic types only). */
static const type_t *basic_type(dart_datatype_t t)
{
  return t >= DART_TYPE_BYTE && t < DART_TYPE_LAST ? &types[t - 1] : NULL;
}

/* Bytes of an element's value: long double has padding that is not. */
static size_t value_bytes(dart_datatype_t t, size_t es)
{
  return t == DART_TYPE_LONG_DOUBLE ? 10 : es;
}

/* An atomic's target element at expect, now the bytes there after it: what
 * op with operand makes of it (any value where the model does not say). */
static void expect_element(dart_datatype_t t, dart_operation_t op,
                           const unsigned char *operand, unsigned char *at,
                           const unsigned char *now, size_t es)
{
  if (op == DART_OP_NO_OP) return;
  if (op == DART_OP_REPLACE && t != DART_TYPE_LONG_DOUBLE)
    memcpy(at, operand, es);
  else
    memcpy(at, now, es); /* arithmetic, or x87 loads of long double */
}

static void op_accumulate(reader_t *r)
{
  unsigned v = rd8(r);
  bool blocking_local = v & 1;
  dart_gptr_t g = decode_gptr(r);
  size_t nelem = rd8(r) & 1 ? rd8(r) % 9 : decode_nelem(r);
  dart_datatype_t t = decode_type(r);
  dart_operation_t op = decode_op(r);
  bool null_buf = rd8(r) % 8 == 0;
  new_call(g, nelem, t, t, op);
  const type_t *tt = basic_type(t);
  size_t es = tt ? tt->es : 1, span = 0;
  bool ok = tt && atomic_op_valid(op, t) &&
            !(null_buf && nelem > 0 && op != DART_OP_NO_OP) &&
            !__builtin_mul_overflow(nelem, es, &span);
  zone_t *z;
  uint64_t off = 0;
  bool valid = ok && model_resolve(g, span, &z, &off) && off % es == 0;
  if (!valid) model_resolve(g, 0, &z, &off);
  lbuf_t b;
  lbuf_new(&b, valid ? span : (span < 64 ? span : 64), null_buf, rd8(r));
  begin(blocking_local ? "dart_accumulate_blocking_local" : "dart_accumulate");
  dart_ret_t ret = blocking_local
                       ? dart_accumulate_blocking_local(g, b.p, nelem, t, op)
                       : dart_accumulate(g, b.p, nelem, t, op);
  check_ret(ret, valid);
  flush_kind((v >> 1) % 5, g);
  complete_all();
  if (!valid || nelem == 0) {
    verify_untouched(z);
  } else {
    unsigned char *now = expect_begin(z);
    for (size_t e = 0; e < nelem; e++) {
      size_t at = z->lo + off + e * es;
      expect_element(t, op, b.p ? b.p + e * es : NULL, z->expect + at,
                     now + at, es);
    }
    verify_zones(z, now, true);
  }
  lbuf_done(&b, "values");
}

/* Fetch-and-op (cas false) or compare-and-swap on one element. */
static void op_fetch(reader_t *r, bool cas)
{
  unsigned v = rd8(r);
  dart_gptr_t g = decode_gptr(r);
  dart_datatype_t t = decode_type(r);
  dart_operation_t op = cas ? DART_OP_REPLACE : decode_op(r);
  bool null_value = v % 8 == 0, null_compare = cas && (v >> 3) % 8 == 0;
  bool null_result = v >= 0xF0;
  new_call(g, 1, t, t, op);
  const type_t *tt = basic_type(t);
  size_t es = tt ? tt->es : 16;
  bool ok = tt && (cas ? integral(t) : atomic_op_valid(op, t)) &&
            !(null_value && op != DART_OP_NO_OP) && !null_compare &&
            !null_result;
  zone_t *z;
  uint64_t off = 0;
  bool valid = ok && model_resolve(g, es, &z, &off) && off % es == 0;
  if (!valid) model_resolve(g, 0, &z, &off);
  lbuf_t value, compare, result;
  lbuf_new(&value, es, null_value, rd8(r));
  lbuf_new(&compare, es, !cas || null_compare, rd8(r));
  lbuf_new(&result, es, null_result, rd8(r));
  /* half of the compare-and-swaps find what they compare with */
  if (valid && cas && (v & 4))
    memcpy(compare.p, z->shadow + z->lo + off, es);
  if (compare.raw) memcpy(compare.expect, compare.raw, es + 2 * GUARD);
  begin(cas ? "dart_compare_and_swap" : "dart_fetch_and_op");
  dart_ret_t ret =
      cas ? dart_compare_and_swap(g, value.p, compare.p, result.p, t)
          : dart_fetch_and_op(g, value.p, result.p, t, op);
  check_ret(ret, valid);
  complete_all();
  if (!valid) {
    verify_untouched(z);
  } else {
    unsigned char *now = expect_begin(z);
    unsigned char *old = z->shadow + z->lo + off, *at = z->expect + z->lo + off;
    size_t vb = value_bytes(t, es);
    memcpy(result.expect + GUARD, old, vb);
    memcpy(result.expect + GUARD + vb, result.p + vb, es - vb);
    if (!cas)
      expect_element(t, op, value.p, at, now + z->lo + off, es);
    else if (memcmp(old, compare.p, es) == 0)
      memcpy(at, value.p, es);
    verify_zones(z, now, true);
  }
  lbuf_done(&value, "value");
  lbuf_done(&compare, "compare");
  lbuf_done(&result, "result");
}

/* dart_gptr_getaddr and dart_gptr_getaddr_shared. */
static void op_getaddr(reader_t *r)
{
  unsigned v = rd8(r);
  bool shared = v & 1, null_out = (v >> 1) % 8 == 0;
  dart_gptr_t g = decode_gptr(r);
  new_call(g, 0, 0, 0, 0);
  zone_t *z;
  uint64_t off = 0;
  bool valid = model_resolve(g, 0, &z, &off) && !null_out;
  void *addr = &sentinel_obj;
  begin(shared ? "dart_gptr_getaddr_shared" : "dart_gptr_getaddr");
  dart_ret_t ret = shared ? dart_gptr_getaddr_shared(g, null_out ? NULL : &addr)
                          : dart_gptr_getaddr(g, null_out ? NULL : &addr);
  check_ret(ret, valid);
  void *want = &sentinel_obj;
  if (valid)
    want = z->own || (shared && z->mem) ? z->mem + off : NULL;
  if (addr != want)
    fail("address %p, not %p (%s)", addr, want,
         valid ? "the part's" : "unchanged");
  verify_untouched(NULL);
}

/* dart_gptr_setaddr with addresses in, around and outside our parts. */
static void op_setaddr(reader_t *r)
{
  unsigned v = rd8(r);
  dart_gptr_t g = decode_gptr(r);
  uintptr_t addr = 0;
  zone_t *y = &zones[rd8(r) % nzones];
  switch (v % 4) {
  case 0: addr = (uintptr_t)rd(r, 8); break;
  case 1: addr = (uintptr_t)&sentinel_obj; break;
  default:
    if (y->mem)
      addr = (uintptr_t)y->mem - y->lo - 1 + rd(r, 2) % (zone_len(y) + 2);
    break;
  }
  bool null_gptr = (v >> 2) % 16 == 0;
  new_call(g, 0, 0, 0, 0);

  /* the model: g names a live allocation (unit and offset aside), addr
   * lies in our own part of it (for the pool: in one of our chunks) */
  dart_gptr_t want = g;
  bool valid = false;
  for (int s = 0; s < NSEGS && !null_gptr; s++) {
    const seg_t *seg = &segs[s];
    if (!seg->live || teams[seg->team].id != g.teamid ||
        seg->g.segid != g.segid)
      continue;
    int u = seg->team == T_ALL ? me : 0;
    for (int c = 0; c < (seg->pool ? NCHUNKS : 1) && !valid; c++) {
      const zone_t *z = seg->zone[u][c];
      uintptr_t base = (uintptr_t)z->mem;
      if (addr >= base && addr - base <= z->size) {
        valid = true;
        want.unitid = u;
        want.addr_or_offs.offset = ((uint64_t)c << CHUNK_SHIFT) + addr - base;
      }
    }
  }
  dart_gptr_t out = g;
  begin("dart_gptr_setaddr");
  dart_ret_t ret = dart_gptr_setaddr(null_gptr ? NULL : &out, (void *)addr);
  check_ret(ret, valid);
  if (memcmp(&out, valid ? &want : &g, sizeof out) != 0)
    fail("setaddr made unit %d offset 0x%llx, not unit %d offset 0x%llx",
         (int)out.unitid, (unsigned long long)out.addr_or_offs.offset,
         (int)want.unitid, (unsigned long long)want.addr_or_offs.offset);
  reg = out;
  verify_untouched(NULL);
}

static void op_flags(reader_t *r)
{
  unsigned v = rd8(r);
  bool null_arg = (v >> 2) % 16 == 0;
  dart_gptr_t g = decode_gptr(r), out = g;
  new_call(g, 0, 0, 0, 0);
  if (v & 1) {
    uint16_t flags = (uint16_t)(v & 2 ? rd(r, 2) : rd8(r));
    bool valid = !null_arg && flags <= 0xFF;
    begin("dart_gptr_setflags");
    check_ret(dart_gptr_setflags(null_arg ? NULL : &out, flags), valid);
    if (valid) g.flags = flags;
    if (memcmp(&out, &g, sizeof g) != 0) fail("setflags changed the gptr");
    reg = out;
  } else {
    uint16_t flags = 0xABCD;
    begin("dart_gptr_getflags");
    check_ret(dart_gptr_getflags(g, null_arg ? NULL : &flags), !null_arg);
    if (flags != (null_arg ? 0xABCD : g.flags))
      fail("getflags gave %u", (unsigned)flags);
  }
}

static void op_path(reader_t *r)
{
  unsigned v = rd8(r);
  bool atomics = v & 1, null_out = (v >> 1) % 8 == 0;
  dart_gptr_t g = decode_gptr(r);
  new_call(g, 0, 0, 0, 0);
  zone_t *z;
  uint64_t off;
  bool valid = model_resolve(g, 0, &z, &off) && !null_out;
  dart_path_t path = DART_PATH_COUNT;
  begin(atomics ? "dart_gptr_atomic_path" : "dart_gptr_path");
  dart_ret_t ret = atomics ? dart_gptr_atomic_path(g, null_out ? NULL : &path)
                           : dart_gptr_path(g, null_out ? NULL : &path);
  check_ret(ret, valid);
  bool right = !valid ? path == DART_PATH_COUNT
               : atomics ? (int)path >= 0 && path < DART_PATH_COUNT
               : z->own ? path == DART_PATH_SELF
               : z->mem ? path == DART_PATH_SHM
                        : path == DART_PATH_MPI || path == DART_PATH_UCX ||
                              path == DART_PATH_CMA;
  if (!right) fail("path %d", (int)path);
}

static void op_flush(reader_t *r)
{
  unsigned k = rd8(r) % 4;
  dart_gptr_t g = decode_gptr(r);
  new_call(g, 0, 0, 0, 0);
  flush_kind(k, g);
  verify_untouched(NULL);
}

/* Waiting on, testing and freeing a handle that was completed before. */
static void op_stale(reader_t *r)
{
  unsigned k = rd8(r) % 6;
  if (stale == NULL) return;
  static const char *const names[] = {"dart_wait", "dart_wait_local",
                                      "dart_test", "dart_test_local",
                                      "dart_handle_free", "dart_waitall"};
  dart_handle_t h = stale;
  int32_t done = 7;
  new_call(reg, 0, 0, 0, 0);
  begin(names[k]);
  dart_ret_t ret = k == 0   ? dart_wait(&h)
                   : k == 1 ? dart_wait_local(&h)
                   : k == 2 ? dart_test(&h, &done)
                   : k == 3 ? dart_test_local(&h, &done)
                   : k == 4 ? dart_handle_free(&h)
                            : dart_waitall(&h, 1);
  check_ret(ret, false);
  if (h != stale || done != 7) fail("a call on a stale handle changed it");
}

/* dart_gptr_incaddr and dart_gptr_setunit on the passed-along gptr. */
static void op_move(reader_t *r)
{
  unsigned v = rd8(r);
  dart_ret_t ret;
  cur = (call_t){.what = "dart_gptr_incaddr or setunit", .g = reg};
  if (v & 1) {
    static const int64_t steps[] = {8, -8, 64, -64, (int64_t)1 << 48,
                                    -((int64_t)1 << 48)};
    int64_t by = v & 2 ? (int64_t)rd(r, 8)
                 : v & 4 ? steps[rd8(r) % 6]
                         : (int64_t)(int8_t)rd8(r);
    ret = dart_gptr_incaddr(&reg, by);
  } else {
    ret = dart_gptr_setunit(&reg, DART_TEAM_UNIT_ID((int8_t)rd8(r)));
  }
  if (ret != DART_OK) fail("incaddr or setunit failed");
}

enum {
  OP_XFER, OP_XFER2, OP_XFER3, OP_ACC, OP_FETCH, OP_CAS, OP_GETADDR,
  OP_SETADDR, OP_FLAGS, OP_PATH, OP_FLUSH, OP_STALE, OP_MOVE, NOPS
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  reader_t r = {data, size};
  keep_input(data, size);
  reg = segs[S_A1].g;
  for (int i = 0; i < MAX_CALLS && r.n > 0; i++) {
    switch (rd8(&r) % NOPS) {
    case OP_XFER: case OP_XFER2: case OP_XFER3: op_xfer(&r); break;
    case OP_ACC: op_accumulate(&r); break;
    case OP_FETCH: op_fetch(&r, false); break;
    case OP_CAS: op_fetch(&r, true); break;
    case OP_GETADDR: op_getaddr(&r); break;
    case OP_SETADDR: op_setaddr(&r); break;
    case OP_FLAGS: op_flags(&r); break;
    case OP_PATH: op_path(&r); break;
    case OP_FLUSH: op_flush(&r); break;
    case OP_STALE: op_stale(&r); break;
    default: op_move(&r); break;
    }
  }
  /* parts read with gets: unchanged unless the model said so */
  cur = (call_t){.what = "(end of input)"};
  for (int i = 0; i < nzones; i++)
    if (zones[i].mem == NULL) zone_verify(&zones[i], image(&zones[i]), NULL);
  return 0;
}
