/*
 * CMA: node peers' private memory (registered with dart_team_memregister,
 * and dart_memalloc blocks in chunks the local pool grew by) is reached
 * through process_vm_readv/writev. Checks the path of every gptr (self, node
 * peer: the peer-private path, other node: the remote path, which reaches
 * grown chunks too), that dart_path_count rises by exactly the number of
 * operations on that path and on no other, every byte of puts and gets of 1 B
 * to 1 MiB + 17 between all pairs and of 64 MiB between the first unit of
 * each node and its next node peer, with every completion variant, the
 * guard bytes around each slot at the target and in the local buffer,
 * strided layouts on either side with their gaps, and that atomics on
 * registered memory take the remote transport's atomics (fetch-and-add
 * results, counters), and on grown chunks MPI's. With DART_CMA=0 or
 * DART_SHM=0 the peer-private path is the remote one. A part its owner
 * made unreadable fails each transfer variant with one line naming it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dart_test_capture.h"

#include <dart/dart_ext.h>
#include <sys/mman.h>

#define GUARD 61           /* fill after each slot (odd: unaligned slots) */
#define TARGET_FILL 0xA5   /* untouched bytes of target memory */
#define LOCAL_FILL 0x5A    /* untouched bytes of local get buffers */
#define BIG ((size_t)64 << 20)
#define GROWN_MIN ((size_t)2 << 20) /* > DART_LOCAL_POOL=1M: a grown chunk */

static const size_t sizes[] = {1, 7, 4096 + 3, 65536, ((size_t)1 << 20) + 17};
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define NPUT_GROWN 4 /* put sizes into grown blocks: up to 64 KiB */

/* the strided layout: STR_N ints in blocks of STR_BL, one every STR_STRIDE */
#define STR_N 1000
#define STR_BL 4
#define STR_STRIDE 7
#define STR_EXTENT ((STR_N / STR_BL - 1) * STR_STRIDE + STR_BL)

enum { K_PUT = 1, K_GET, K_STR, K_BIGPUT, K_BIGGET };
enum { V_BLOCKING, V_NB, V_HANDLE };
static const char *const put_var[] = {"dart_put_blocking",
                                      "dart_put + dart_flush"};
static const char *const get_var[] = {"dart_get_blocking",
                                      "dart_get + dart_flush_local",
                                      "dart_get_handle + dart_wait"};

static int me, n;
static int *node_of;
static dart_path_t remote_path, peer_private_path;
static uint8_t *lbuf; /* local buffer: GUARD + up to BIG + GUARD bytes */

static const char *pname(int p)
{
  const char *s = dart_path_name((dart_path_t)p);
  return s ? s : "?";
}

/* ---- patterns ---- */

static uint64_t key_of(int space, int kind, int src, int dst, int k, int v)
{
  return ((((((uint64_t)space * 8 + (uint64_t)kind) * 256 + (uint64_t)src) *
                256 +
            (uint64_t)dst) *
               8 +
           (uint64_t)k) *
              4 +
          (uint64_t)v) +
         1;
}

/* Word w of the pattern of a key whose hash is kmix: different in every
 * word for different keys, and different after a shift (cheap enough for
 * 64 MiB). */
static uint64_t pat_word_mixed(uint64_t kmix, size_t w)
{
  return ((uint64_t)w + 1) * UINT64_C(0x9E3779B97F4A7C15) ^ kmix;
}

static uint64_t pat_word(uint64_t key, size_t w)
{
  return pat_word_mixed(dart_test_mix64(key), w);
}

/* Byte i of the pattern of key is byte i % 8 of pat_word(key, i / 8). */
static void fill_pattern(uint8_t *p, size_t len, uint64_t key)
{
  const uint64_t kmix = dart_test_mix64(key);
  size_t w;
  for (w = 0; w < len / 8; w++) {
    uint64_t v = pat_word_mixed(kmix, w);
    memcpy(p + 8 * w, &v, 8);
  }
  if (len % 8) {
    uint64_t v = pat_word_mixed(kmix, w);
    memcpy(p + 8 * w, &v, len % 8);
  }
}

/* Fails (once) unless p holds the pattern of key; returns 0 if it does. */
static int check_pattern(int line, const uint8_t *p, size_t len, uint64_t key,
                         const char *what)
{
  const uint64_t kmix = dart_test_mix64(key);
  size_t bad = len, nbad = 0;
  for (size_t w = 0; w * 8 < len; w++) {
    uint64_t v = pat_word_mixed(kmix, w), got = 0;
    size_t b = len - 8 * w < 8 ? len - 8 * w : 8;
    memcpy(&got, p + 8 * w, b);
    if (b < 8) v &= (UINT64_C(1) << (8 * b)) - 1;
    if (got == v) continue;
    for (size_t i = 0; i < b; i++) {
      if (((got >> (8 * i)) & 0xff) != ((v >> (8 * i)) & 0xff)) {
        if (bad == len) bad = 8 * w + i;
        nbad++;
      }
    }
  }
  if (nbad == 0) return 0;
  uint8_t want[8];
  uint64_t v = pat_word(key, bad / 8);
  memcpy(want, &v, 8);
  FAIL_AT(line, "%s: %zu of %zu bytes wrong, the first at %zu: 0x%02x, not "
                "0x%02x",
          what, nbad, len, bad, p[bad], want[bad % 8]);
  return 1;
}

/* Fails (once) unless all len bytes at p are fill. */
static int check_fill(int line, const uint8_t *p, size_t len, uint8_t fill,
                      const char *what)
{
  for (size_t i = 0; i < len; i++) {
    if (p[i] != fill) {
      FAIL_AT(line, "%s: byte %zu of %zu is 0x%02x, not the fill 0x%02x",
              what, i, len, p[i], fill);
      return 1;
    }
  }
  return 0;
}

/* Int i of a strided transfer, and where it lies in the strided layout. */
static int str_val(uint64_t key, int i)
{
  return (int)(uint32_t)pat_word(key, (size_t)i);
}

static size_t str_at(int i)
{
  return (size_t)(i / STR_BL) * STR_STRIDE + (size_t)(i % STR_BL);
}

/* ---- paths and counters ---- */

/* Expected path to unit t's registered memory or grown pool chunk (the
 * remote transport registers both). */
static int expected_path(int t)
{
  if (t == me) return DART_PATH_SELF;
  if (node_of[t] == node_of[me]) return peer_private_path;
  return remote_path;
}

static void read_counts(uint64_t c[DART_PATH_COUNT])
{
  for (int p = 0; p < DART_PATH_COUNT; p++) {
    c[p] = 0;
    CHECK_OK(dart_path_count((dart_path_t)p, &c[p]));
  }
}

/* Checks that exactly ops operations went along path since before, and
 * none along the others. */
static void check_delta(int line, const uint64_t before[DART_PATH_COUNT],
                        int path, uint64_t ops, const char *what)
{
  uint64_t now[DART_PATH_COUNT];
  read_counts(now);
  for (int p = 0; p < DART_PATH_COUNT; p++) {
    uint64_t want = p == path ? ops : 0;
    if (now[p] - before[p] != want) {
      FAIL_AT(line, "%s (expected path %s): the %s counter rose by %llu, not "
                    "%llu",
              what, pname(path), pname(p),
              (unsigned long long)(now[p] - before[p]),
              (unsigned long long)want);
    }
  }
}

/* ---- one memory space: a part per unit, laid out alike ---- */

typedef struct {
  const char *name;
  int id;              /* in the pattern keys */
  int grown;           /* grown pool chunks, not registered memory */
  dart_gptr_t *ptrs;   /* offset 0 of each unit's part */
  uint8_t *mine;       /* my part */
  size_t nput;         /* puts of sizes[0, nput) */
  /* layout (bytes): [0, 8) an atomic word, then the put slots of every
   * source, the owner's get slots, the strided slots of every source */
  size_t put_off, src_block, get_off, str_off, str_block, end;
} space_t;

static size_t round8(size_t x) { return (x + 7) / 8 * 8; }

static void layout(space_t *sp, size_t nput)
{
  sp->nput = nput;
  sp->put_off = 64 + GUARD;
  sp->src_block = 0;
  for (size_t k = 0; k < nput; k++) sp->src_block += 2 * (sizes[k] + GUARD);
  sp->get_off = sp->put_off + (size_t)n * sp->src_block;
  size_t gets = 0;
  for (size_t k = 0; k < NSIZES; k++) gets += sizes[k] + GUARD;
  sp->str_off = round8(sp->get_off + gets);
  sp->str_block = round8(STR_EXTENT * sizeof(int) + GUARD);
  sp->end = sp->str_off + (size_t)n * sp->str_block;
}

static size_t put_slot(const space_t *sp, int src, size_t k, int v)
{
  size_t at = sp->put_off + (size_t)src * sp->src_block;
  for (size_t j = 0; j < k; j++) at += 2 * (sizes[j] + GUARD);
  return at + (size_t)v * (sizes[k] + GUARD);
}

static size_t get_slot(const space_t *sp, size_t k)
{
  size_t at = sp->get_off;
  for (size_t j = 0; j < k; j++) at += sizes[j] + GUARD;
  return at;
}

static size_t str_slot(const space_t *sp, int src)
{
  return sp->str_off + (size_t)src * sp->str_block;
}

static dart_gptr_t at(const space_t *sp, int t, size_t off)
{
  dart_gptr_t g = sp->ptrs[t];
  CHECK_OK(dart_gptr_incaddr(&g, (int64_t)off));
  return g;
}

/* Where byte off of a part lies, for messages. */
static void describe(const space_t *sp, size_t off, char *out, size_t len)
{
  for (int s = 0; s < n; s++) {
    for (size_t k = 0; k < sp->nput; k++) {
      for (int v = 0; v < 2; v++) {
        size_t a = put_slot(sp, s, k, v);
        if (off >= a && off < a + sizes[k] + GUARD) {
          snprintf(out, len, "%s of %zu bytes by unit %d, %s", put_var[v],
                   sizes[k], s,
                   off < a + sizes[k] ? "payload" : "guard after it");
          return;
        }
      }
    }
    size_t a = str_slot(sp, s);
    if (off >= a && off < a + sp->str_block) {
      snprintf(out, len, "strided put by unit %d, int %zu", s,
               (off - a) / sizeof(int));
      return;
    }
  }
  for (size_t k = 0; k < NSIZES; k++) {
    size_t a = get_slot(sp, k);
    if (off >= a && off < a + sizes[k] + GUARD) {
      snprintf(out, len, "the owner's get slot of %zu bytes", sizes[k]);
      return;
    }
  }
  snprintf(out, len, "a gap");
}

/* Owner: the part before puts (fill, get patterns, atomic word 0). */
static void prepare_part(const space_t *sp)
{
  memset(sp->mine, TARGET_FILL, sp->end);
  memset(sp->mine, 0, 8);
  for (size_t k = 0; k < NSIZES; k++)
    fill_pattern(sp->mine + get_slot(sp, k), sizes[k],
                 key_of(sp->id, K_GET, me, 0xff, (int)k, 0));
}

/* Owner: every byte of [8, end) of the part after every unit's puts. */
static void check_part(const space_t *sp)
{
  uint8_t *want = malloc(sp->end);
  if (!want) {
    FAILF("malloc of %zu bytes failed", sp->end);
    return;
  }
  memset(want, TARGET_FILL, sp->end);
  for (size_t k = 0; k < NSIZES; k++)
    fill_pattern(want + get_slot(sp, k), sizes[k],
                 key_of(sp->id, K_GET, me, 0xff, (int)k, 0));
  for (int s = 0; s < n; s++) {
    for (size_t k = 0; k < sp->nput; k++)
      for (int v = 0; v < 2; v++)
        fill_pattern(want + put_slot(sp, s, k, v), sizes[k],
                     key_of(sp->id, K_PUT, s, me, (int)k, v));
    const uint64_t key = key_of(sp->id, K_STR, s, me, 0, 0);
    for (int i = 0; i < STR_N; i++) {
      int x = str_val(key, i);
      memcpy(want + str_slot(sp, s) + str_at(i) * sizeof(int), &x, sizeof x);
    }
  }
  size_t nbad = 0, first = 0;
  for (size_t i = 8; i < sp->end; i++) {
    if (sp->mine[i] != want[i]) {
      if (nbad++ == 0) first = i;
    }
  }
  if (nbad) {
    char where[160];
    describe(sp, first, where, sizeof where);
    FAILF("%s: %zu bytes of my part are wrong after the puts, the first at "
          "%zu (%s): 0x%02x, not 0x%02x",
          sp->name, nbad, first, where, sp->mine[first], want[first]);
  }
  free(want);
}

/* Path of every unit's part; node peers' private memory has no shared
 * address. */
static void check_routes(const space_t *sp)
{
  for (int t = 0; t < n; t++) {
    const int want = expected_path(t);
    const size_t offs[3] = {0, get_slot(sp, NSIZES - 1), sp->end - 1};
    for (int i = 0; i < 3; i++) {
      dart_path_t path = DART_PATH_COUNT;
      CHECK_OK(dart_gptr_path(at(sp, t, offs[i]), &path));
      if ((int)path != want)
        FAILF("%s: dart_gptr_path to unit %d (my node %d, its node %d) at "
              "offset %zu is %s, expected %s",
              sp->name, t, node_of[me], node_of[t], offs[i], pname(path),
              pname(want));
    }
    void *s = (void *)&s;
    CHECK_OK(dart_gptr_getaddr_shared(sp->ptrs[t], &s));
    if (t == me ? s != sp->mine : s != NULL)
      FAILF("%s: dart_gptr_getaddr_shared of unit %d's part is %p", sp->name,
            t, s);
  }
}

/* Every unit puts every size with both variants to every unit, and a
 * strided layout. */
static void puts_to_all(const space_t *sp)
{
  char what[200];
  uint8_t *src = lbuf + GUARD;
  for (int i = 0; i < n; i++) {
    const int t = (me + i) % n;
    const int path = expected_path(t);
    for (size_t k = 0; k < sp->nput; k++) {
      for (int v = 0; v < 2; v++) {
        uint64_t before[DART_PATH_COUNT];
        dart_gptr_t g = at(sp, t, put_slot(sp, me, k, v));
        fill_pattern(src, sizes[k], key_of(sp->id, K_PUT, me, t, (int)k, v));
        read_counts(before);
        if (v == V_BLOCKING) {
          CHECK_OK(dart_put_blocking(g, src, sizes[k], DART_TYPE_BYTE,
                                     DART_TYPE_BYTE));
        } else {
          CHECK_OK(dart_put(g, src, sizes[k], DART_TYPE_BYTE,
                            DART_TYPE_BYTE));
          CHECK_OK(dart_flush(g));
        }
        snprintf(what, sizeof what, "%s: %s of %zu bytes to unit %d",
                 sp->name, put_var[v], sizes[k], t);
        check_delta(__LINE__, before, path, 1, what);
      }
    }
  }
  /* STR_N contiguous ints into a strided layout at every unit */
  dart_datatype_t strided = DART_TYPE_UNDEFINED;
  CHECK_OK(dart_type_create_strided(DART_TYPE_INT, STR_STRIDE, STR_BL,
                                    &strided));
  int *ints = (int *)(void *)(lbuf + 64); /* aligned */
  for (int i = 0; i < n; i++) {
    const int t = (me + i) % n;
    uint64_t before[DART_PATH_COUNT];
    const uint64_t key = key_of(sp->id, K_STR, me, t, 0, 0);
    for (int e = 0; e < STR_N; e++) ints[e] = str_val(key, e);
    read_counts(before);
    CHECK_OK(dart_put_blocking(at(sp, t, str_slot(sp, me)), ints, STR_N,
                               DART_TYPE_INT, strided));
    snprintf(what, sizeof what, "%s: strided put to unit %d", sp->name, t);
    check_delta(__LINE__, before, expected_path(t), 1, what);
  }
  CHECK_OK(dart_type_destroy(&strided));
}

/* Every unit gets every size of every unit's pattern with the three
 * variants, and its strided puts back. */
static void gets_from_all(const space_t *sp)
{
  char what[200];
  uint8_t *dst = lbuf + GUARD;
  for (int i = 0; i < n; i++) {
    const int t = (me + i) % n;
    const int path = expected_path(t);
    for (size_t k = 0; k < NSIZES; k++) {
      for (int v = 0; v < 3; v++) {
        uint64_t before[DART_PATH_COUNT];
        dart_gptr_t g = at(sp, t, get_slot(sp, k));
        memset(lbuf, LOCAL_FILL, sizes[k] + 2 * GUARD);
        read_counts(before);
        if (v == V_BLOCKING) {
          CHECK_OK(dart_get_blocking(dst, g, sizes[k], DART_TYPE_BYTE,
                                     DART_TYPE_BYTE));
        } else if (v == V_NB) {
          CHECK_OK(dart_get(dst, g, sizes[k], DART_TYPE_BYTE,
                            DART_TYPE_BYTE));
          CHECK_OK(dart_flush_local(g));
        } else {
          dart_handle_t h = DART_HANDLE_NULL;
          CHECK_OK(dart_get_handle(dst, g, sizes[k], DART_TYPE_BYTE,
                                   DART_TYPE_BYTE, &h));
          CHECK_OK(dart_wait(&h));
          CHECK(h == DART_HANDLE_NULL);
        }
        snprintf(what, sizeof what, "%s: %s of %zu bytes from unit %d",
                 sp->name, get_var[v], sizes[k], t);
        check_delta(__LINE__, before, path, 1, what);
        check_pattern(__LINE__, dst, sizes[k],
                      key_of(sp->id, K_GET, t, 0xff, (int)k, 0), what);
        check_fill(__LINE__, lbuf, GUARD, LOCAL_FILL, what);
        check_fill(__LINE__, dst + sizes[k], GUARD, LOCAL_FILL, what);
      }
    }
  }
  /* the strided puts back: into contiguous ints, and into the same strided
   * layout locally (the gaps keep their fill) */
  dart_datatype_t strided = DART_TYPE_UNDEFINED;
  CHECK_OK(dart_type_create_strided(DART_TYPE_INT, STR_STRIDE, STR_BL,
                                    &strided));
  for (int i = 0; i < n; i++) {
    const int t = (me + i) % n;
    const int path = expected_path(t);
    const uint64_t key = key_of(sp->id, K_STR, me, t, 0, 0);
    const dart_gptr_t g = at(sp, t, str_slot(sp, me));
    uint64_t before[DART_PATH_COUNT];
    int x;
    memset(lbuf, LOCAL_FILL, STR_EXTENT * sizeof(int) + 2 * GUARD);
    read_counts(before);
    CHECK_OK(dart_get_blocking(dst, g, STR_N, strided, DART_TYPE_INT));
    snprintf(what, sizeof what, "%s: strided get into contiguous ints from "
                                "unit %d", sp->name, t);
    check_delta(__LINE__, before, path, 1, what);
    for (int e = 0; e < STR_N; e++) {
      memcpy(&x, dst + (size_t)e * sizeof x, sizeof x);
      if (x != str_val(key, e)) {
        FAILF("%s: int %d is %d, not %d", what, e, x, str_val(key, e));
        break;
      }
    }
    check_fill(__LINE__, lbuf, GUARD, LOCAL_FILL, what);
    check_fill(__LINE__, dst + STR_N * sizeof(int), GUARD, LOCAL_FILL, what);

    memset(lbuf, LOCAL_FILL, STR_EXTENT * sizeof(int) + 2 * GUARD);
    read_counts(before);
    CHECK_OK(dart_get(dst, g, STR_N, strided, strided));
    CHECK_OK(dart_flush_local(g));
    snprintf(what, sizeof what, "%s: strided get into a strided layout from "
                                "unit %d", sp->name, t);
    check_delta(__LINE__, before, path, 1, what);
    int e = 0;
    for (size_t j = 0; j < STR_EXTENT; j++) {
      const uint8_t *p = dst + j * sizeof x;
      if (e < STR_N && str_at(e) == j) {
        memcpy(&x, p, sizeof x);
        if (x != str_val(key, e)) {
          FAILF("%s: int %d is %d, not %d", what, e, x, str_val(key, e));
          break;
        }
        e++;
      } else if (check_fill(__LINE__, p, sizeof x, LOCAL_FILL, what)) {
        FAILF("%s: the gap at int %zu was written", what, j);
        break;
      }
    }
    CHECK_EQ(e, STR_N);
    check_fill(__LINE__, lbuf, GUARD, LOCAL_FILL, what);
    check_fill(__LINE__, dst + STR_EXTENT * sizeof(int), GUARD, LOCAL_FILL,
               what);
  }
  CHECK_OK(dart_type_destroy(&strided));
}

static void exercise(const space_t *sp)
{
  prepare_part(sp);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  check_routes(sp);
  puts_to_all(sp);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  check_part(sp);
  gets_from_all(sp);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
}

/* ---- registered memory: atomics ---- */

/* Every unit adds me + 1 to the word at offset 0 of every unit's part; the
 * fetched values, sorted, are the running sums. Atomics never take CMA:
 * registered memory takes the remote transport's, grown chunks MPI's, for
 * the owner too. */
static void atomics(const space_t *sp)
{
  char what[160];
  int64_t *got = malloc((size_t)n * sizeof *got);
  int64_t *all = malloc((size_t)n * (size_t)n * sizeof *all);
  for (int i = 0; i < n; i++) {
    const int t = (me + i) % n;
    dart_path_t path = DART_PATH_COUNT;
    const int want = sp->grown ? DART_PATH_MPI : (int)remote_path;
    CHECK_OK(dart_gptr_atomic_path(sp->ptrs[t], &path));
    if ((int)path != want)
      FAILF("%s: dart_gptr_atomic_path to unit %d is %s, expected %s",
            sp->name, t, pname(path), pname(want));
    uint64_t before[DART_PATH_COUNT];
    const int64_t add = me + 1;
    got[t] = -1;
    read_counts(before);
    CHECK_OK(dart_fetch_and_op(sp->ptrs[t], &add, &got[t], DART_TYPE_LONG,
                               DART_OP_SUM));
    snprintf(what, sizeof what, "%s: dart_fetch_and_op on unit %d", sp->name,
             t);
    check_delta(__LINE__, before, want, 1, what);
  }
  CHECK_OK(dart_allgather(got, all, (size_t)n, DART_TYPE_LONG, DART_TEAM_ALL));
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  /* my word: through the atomics and in memory */
  int64_t now = -1, mem;
  CHECK_OK(dart_fetch_and_op(sp->ptrs[me], NULL, &now, DART_TYPE_LONG,
                             DART_OP_NO_OP));
  memcpy(&mem, sp->mine, sizeof mem);
  const int64_t total = (int64_t)n * (n + 1) / 2;
  CHECK_EQ(now, total);
  CHECK_EQ(mem, total);
  /* the values fetched from my word: each running sum exactly once */
  int64_t sum = 0;
  char *used = calloc((size_t)n, 1);
  for (int step = 0; step < n; step++) {
    int s = 0;
    while (s < n && (used[s] || all[s * n + me] != sum)) s++;
    if (s == n) {
      FAILF("%s: no unit fetched %lld from my word (step %d)", sp->name,
            (long long)sum, step);
      break;
    }
    used[s] = 1;
    sum += s + 1;
  }
  free(used);
  free(got);
  free(all);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
}

/* ---- registered memory: 64 MiB between one pair per node ---- */

/* The next unit of u's node after u, cyclically, or -1. */
static int next_peer(int u)
{
  for (int i = 1; i < n; i++) {
    int v = (u + i) % n;
    if (node_of[v] == node_of[u]) return v;
  }
  return -1;
}

/* The unit of my node that moves 64 MiB to and from me, or -1: the first
 * unit of each node with a node peer does so with its next peer. */
static int big_partner(int *sender)
{
  int first = 0;
  while (node_of[first] != node_of[me]) first++;
  const int second = next_peer(first);
  *sender = me == first;
  if (second < 0) return -1;
  if (me == first) return second;
  if (me == second) return first;
  return -1;
}

static void big(const space_t *sp, size_t big_off)
{
  char what[200];
  int sender = 0;
  const int partner = big_partner(&sender);
  const int nxt = sender ? partner : -1, prv = sender ? -1 : partner;
  uint8_t *src = lbuf + GUARD;
  uint8_t *slot = sp->mine + big_off;
  for (int v = 0; v < 2; v++) {
    if (nxt >= 0) {
      uint64_t before[DART_PATH_COUNT];
      dart_gptr_t g = at(sp, nxt, big_off);
      fill_pattern(src, BIG, key_of(sp->id, K_BIGPUT, me, nxt, 0, v));
      read_counts(before);
      if (v == V_BLOCKING) {
        CHECK_OK(dart_put_blocking(g, src, BIG, DART_TYPE_BYTE,
                                   DART_TYPE_BYTE));
      } else {
        CHECK_OK(dart_put(g, src, BIG, DART_TYPE_BYTE, DART_TYPE_BYTE));
        CHECK_OK(dart_flush(g));
      }
      snprintf(what, sizeof what, "%s: %s of 64 MiB to unit %d", sp->name,
               put_var[v], nxt);
      check_delta(__LINE__, before, expected_path(nxt), 1, what);
    }
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    if (prv >= 0) {
      snprintf(what, sizeof what, "%s: %s of 64 MiB by unit %d into my part",
               sp->name, put_var[v], prv);
      check_pattern(__LINE__, slot, BIG,
                    key_of(sp->id, K_BIGPUT, prv, me, 0, v), what);
      check_fill(__LINE__, slot - GUARD, GUARD, TARGET_FILL, what);
      check_fill(__LINE__, slot + BIG, GUARD, TARGET_FILL, what);
      if (v == 1)
        fill_pattern(slot, BIG, key_of(sp->id, K_BIGGET, me, 0xff, 0, 0));
    }
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
  }
  if (nxt >= 0) {
    for (int v = 0; v < 3; v++) {
      uint64_t before[DART_PATH_COUNT];
      dart_gptr_t g = at(sp, nxt, big_off);
      memset(lbuf, LOCAL_FILL, BIG + 2 * GUARD);
      read_counts(before);
      if (v == V_BLOCKING) {
        CHECK_OK(dart_get_blocking(src, g, BIG, DART_TYPE_BYTE,
                                   DART_TYPE_BYTE));
      } else if (v == V_NB) {
        CHECK_OK(dart_get(src, g, BIG, DART_TYPE_BYTE, DART_TYPE_BYTE));
        CHECK_OK(dart_flush_local(g));
      } else {
        dart_handle_t h = DART_HANDLE_NULL;
        CHECK_OK(dart_get_handle(src, g, BIG, DART_TYPE_BYTE, DART_TYPE_BYTE,
                                 &h));
        CHECK_OK(dart_wait(&h));
      }
      snprintf(what, sizeof what, "%s: %s of 64 MiB from unit %d", sp->name,
               get_var[v], nxt);
      check_delta(__LINE__, before, expected_path(nxt), 1, what);
      check_pattern(__LINE__, src, BIG,
                    key_of(sp->id, K_BIGGET, nxt, 0xff, 0, 0), what);
      check_fill(__LINE__, lbuf, GUARD, LOCAL_FILL, what);
      check_fill(__LINE__, src + BIG, GUARD, LOCAL_FILL, what);
    }
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
}

static void registered(void)
{
  space_t sp = {.name = "registered", .id = 0, .grown = 0};
  layout(&sp, NSIZES);
  /* the 64 MiB slot: only where a node peer puts into it */
  int sender = 0;
  const size_t big_off = sp.end + GUARD;
  const size_t bytes =
      big_partner(&sender) >= 0 && !sender ? big_off + BIG + GUARD : sp.end;
  uint8_t *buf = malloc(bytes);
  if (!buf) {
    FAILF("malloc of %zu bytes failed", bytes);
    return;
  }
  memset(buf, TARGET_FILL, bytes);
  dart_gptr_t g = DART_GPTR_NULL;
  CHECK_OK(dart_team_memregister(DART_TEAM_ALL, bytes, DART_TYPE_BYTE, buf,
                                 &g));
  CHECK(g.segid < 0);
  dart_gptr_t *ptrs = malloc((size_t)n * sizeof *ptrs);
  for (int u = 0; u < n; u++) {
    ptrs[u] = g;
    CHECK_OK(dart_gptr_setunit(&ptrs[u], DART_TEAM_UNIT_ID(u)));
    ptrs[u].addr_or_offs.offset = 0;
  }
  void *mine = NULL;
  CHECK_OK(dart_gptr_getaddr(ptrs[me], &mine));
  CHECK(mine == buf);
  sp.ptrs = ptrs;
  sp.mine = buf;
  exercise(&sp);
  atomics(&sp);
  big(&sp, big_off);
  /* deregistration is local: the others are done with our part first */
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_OK(dart_team_memderegister(g));
  /* the memory stays the user's */
  buf[bytes - 1] = 3;
  CHECK_EQ(buf[bytes - 1], 3);
  free(ptrs);
  free(buf);
}

/* ---- a part its owner made unreadable ---- */

/* Each variant of a transfer into a node peer's registered page that its
 * owner protected fails on the CMA path, in one line naming the variant. */
static void unreadable(void)
{
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  char *buf = mmap(NULL, page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (buf == MAP_FAILED) {
    FAILF("mmap of a page failed");
    buf = NULL;
  }
  dart_gptr_t g = DART_GPTR_NULL;
  CHECK_OK(dart_team_memregister(DART_TEAM_ALL, buf ? page : 0,
                                 DART_TYPE_BYTE, buf, &g));
  int peer = -1;
  for (int u = 0; u < n && peer < 0; u++)
    if (u != me && node_of[u] == node_of[me]) peer = u;
  if (buf) CHECK_EQ(mprotect(buf, page, PROT_NONE), 0);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  dart_path_t path = DART_PATH_COUNT;
  if (peer >= 0) {
    CHECK_OK(dart_gptr_setunit(&g, DART_TEAM_UNIT_ID(peer)));
    g.addr_or_offs.offset = 0;
    CHECK_OK(dart_gptr_path(g, &path));
  }
  if (path == DART_PATH_CMA) {
    char local[8] = {0};
    dart_handle_t h = DART_HANDLE_NULL;
    capture_init();
    BAD(DART_ERR_OTHER, " dart_put:",
        dart_put(g, local, 8, DART_TYPE_BYTE, DART_TYPE_BYTE));
    BAD(DART_ERR_OTHER, " dart_get:",
        dart_get(local, g, 8, DART_TYPE_BYTE, DART_TYPE_BYTE));
    BAD(DART_ERR_OTHER, " dart_put_blocking:",
        dart_put_blocking(g, local, 8, DART_TYPE_BYTE, DART_TYPE_BYTE));
    BAD(DART_ERR_OTHER, " dart_get_blocking:",
        dart_get_blocking(local, g, 8, DART_TYPE_BYTE, DART_TYPE_BYTE));
    BAD(DART_ERR_OTHER, " dart_put_handle:",
        dart_put_handle(g, local, 8, DART_TYPE_BYTE, DART_TYPE_BYTE, &h));
    CHECK(h == DART_HANDLE_NULL);
    BAD(DART_ERR_OTHER, " dart_get_handle:",
        dart_get_handle(local, g, 8, DART_TYPE_BYTE, DART_TYPE_BYTE, &h));
    CHECK(h == DART_HANDLE_NULL);
    capture_fini();
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  if (buf) CHECK_EQ(mprotect(buf, page, PROT_READ | PROT_WRITE), 0);
  CHECK_OK(dart_team_memderegister(g));
  if (buf) munmap(buf, page);
}

/* ---- dart_memalloc blocks beyond the initial pool ---- */

static void grown(void)
{
  space_t sp = {.name = "grown pool chunk", .id = 1, .grown = 1};
  layout(&sp, NPUT_GROWN);
  const size_t bytes = sp.end > GROWN_MIN ? sp.end : GROWN_MIN;
  dart_gptr_t g = DART_GPTR_NULL, small = DART_GPTR_NULL;
  CHECK_OK(dart_memalloc(bytes, DART_TYPE_BYTE, &g));
  CHECK_EQ(g.unitid, me);
  CHECK_EQ(g.segid, DART_SEGMENT_LOCAL);
  /* a small block: in the initial pool, which node peers share */
  CHECK_OK(dart_memalloc(64, DART_TYPE_BYTE, &small));
  dart_gptr_t *ptrs = malloc((size_t)n * sizeof *ptrs);
  dart_gptr_t *smalls = malloc((size_t)n * sizeof *smalls);
  CHECK_OK(dart_allgather(&g, ptrs, sizeof g, DART_TYPE_BYTE, DART_TEAM_ALL));
  CHECK_OK(dart_allgather(&small, smalls, sizeof small, DART_TYPE_BYTE,
                          DART_TEAM_ALL));
  const char *shm_env = getenv("DART_SHM");
  const int shm = !(shm_env && strcmp(shm_env, "0") == 0);
  for (int t = 0; t < n; t++) {
    dart_path_t path = DART_PATH_COUNT;
    CHECK_OK(dart_gptr_path(smalls[t], &path));
    const int want = t == me ? DART_PATH_SELF
                     : node_of[t] == node_of[me] && shm ? DART_PATH_SHM
                                                        : remote_path;
    if ((int)path != want)
      FAILF("small dart_memalloc block of unit %d: path %s, expected %s", t,
            pname(path), pname(want));
  }
  void *mine = NULL;
  CHECK_OK(dart_gptr_getaddr(g, &mine));
  CHECK(mine != NULL);
  /* that the block lies in a grown chunk shows in its path: node peers
   * reach the initial pool through shm, grown chunks through CMA (or the
   * remote transport) */
  if (mine) {
    sp.ptrs = ptrs;
    sp.mine = mine;
    exercise(&sp);
    atomics(&sp);
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_OK(dart_memfree(small));
  CHECK_OK(dart_memfree(g));
  free(ptrs);
  free(smalls);
}

int main(int argc, char **argv)
{
  dart_test_init(&argc, &argv);
  me = dart_test_unit;
  n = dart_test_units;

  int num_nodes = 0, my_node = -1;
  CHECK_OK(dart_node_info(&num_nodes, &my_node));
  node_of = malloc((size_t)n * sizeof *node_of);
  CHECK_OK(dart_allgather(&my_node, node_of, 1, DART_TYPE_INT, DART_TEAM_ALL));
  int peers = 0;
  for (int u = 0; u < n; u++) peers += u != me && node_of[u] == my_node;
  int any_peers = 0;
  CHECK_OK(dart_allreduce(&peers, &any_peers, 1, DART_TYPE_INT, DART_OP_MAX,
                          DART_TEAM_ALL));
  if (any_peers == 0) {
    if (me == 0) printf("no unit has a node peer: skipped\n");
    free(node_of);
    dart_exit();
    return DART_TEST_SKIP;
  }

  /* the paths this job takes: CMA for node peers' private memory unless
   * switched off (this machine permits it) */
  CHECK_OK(dart_transport_paths(&remote_path, &peer_private_path));
  const char *transport = getenv("DART_TRANSPORT");
  const char *cma_env = getenv("DART_CMA"), *shm_env = getenv("DART_SHM");
  const int cma_off = (cma_env && strcmp(cma_env, "0") == 0) ||
                      (shm_env && strcmp(shm_env, "0") == 0);
  if (transport && strcmp(transport, "mpi") == 0)
    CHECK_EQ(remote_path, DART_PATH_MPI);
  if (transport && strcmp(transport, "ucx") == 0)
    CHECK_EQ(remote_path, DART_PATH_UCX);
  CHECK(remote_path == DART_PATH_MPI || remote_path == DART_PATH_UCX);
  if ((int)peer_private_path != (cma_off ? (int)remote_path : DART_PATH_CMA))
    FAILF("peer-private path %s, expected %s (DART_CMA=%s, DART_SHM=%s)",
          pname(peer_private_path),
          pname(cma_off ? (int)remote_path : DART_PATH_CMA),
          cma_env ? cma_env : "unset", shm_env ? shm_env : "unset");

  int sender = 0;
  const size_t lbytes = big_partner(&sender) >= 0
                            ? BIG + 2 * GUARD
                            : sizes[NSIZES - 1] + 2 * GUARD;
  lbuf = malloc(lbytes);
  if (lbuf) {
    registered();
    grown();
    unreadable();
  } else {
    FAILF("malloc of %zu bytes failed", lbytes);
  }
  free(lbuf);
  free(node_of);
  return dart_test_finish();
}
