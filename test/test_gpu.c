/*
 * GPU memory (dart_memkind.h), run on a CUDA device or on emulated devices
 * (DART_GPU_EMULATE=1: device memory that faults on any direct CPU access,
 * copies deferred until their stream is synchronised). Without a device it
 * reports skipped.
 *
 * Checks: the kind and paths of device segments (own and node peers: ipc;
 * other nodes: stage, or ucx with "--remote ucx"); puts and gets of 1 B to 1 MiB + 17 between each unit
 * and its next, from host and from device buffers, blocking, non-blocking +
 * flush and handle + wait, every byte and the guards around each slot;
 * 64 MiB between each unit and its next (--big MIB: other sizes); strided layouts on either side,
 * gaps untouched; device buffers on the local side of host segments
 * (allocated: self, shm or the remote path; registered: cma or remote);
 * atomics on device segments (fetch-and-add of long and short, CAS,
 * accumulate of arrays, float sums: exact totals), refused across nodes
 * when staged, through UCX for every unit when UCX moves device memory;
 * the IPC cache after free and a new allocation at the same address, and
 * two registrations of one allocation; a handle's wait completes its own
 * copies, a freed handle's complete at the flush; stream-ordered puts and gets
 * (emulation: the NULL stream); bad input, each with its one log line.
 */
#define _GNU_SOURCE
#include "dart_test_capture.h"

#include <dart/dart_ext.h>
#include <dart/dart_memkind.h>

#define GUARD 61
#define FILL 0xA5
#define SLOT (((size_t)1 << 20) + 17 + 2 * GUARD)

static const size_t sizes[] = {1, 7, 4096 + 3, ((size_t)1 << 20) + 17};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static int me, n, *node_of;
static bool emulated;
/* the large transfer: 64 MiB, or "--big MIB" (the sanitizer builds take
 * less: their copies are checked byte by byte) */
static size_t big = (size_t)64 << 20;
/* how other nodes' device parts are reached: "--remote ucx|stage" */
static dart_path_t remote_path = DART_PATH_STAGE;

static uint8_t pattern(int src, int round, size_t i)
{
  return (uint8_t)dart_test_mix64(((uint64_t)src << 40) ^
                                  ((uint64_t)round << 32) ^ i);
}

static void *dev_alloc(size_t bytes)
{
  void *p = NULL;
  CHECK_OK(dart_memkind_alloc(bytes, DART_MEMKIND_CUDA, &p));
  return p;
}

/* Reads device memory through the one copy every backend offers. */
static void to_host(void *dst, const void *dev, size_t bytes)
{
  CHECK_OK(dart_memkind_copy(dst, dev, bytes));
}

static dart_gptr_t at(dart_gptr_t g, int unit, size_t offset)
{
  g.unitid = unit;
  g.addr_or_offs.offset = offset;
  return g;
}

/* ---- contiguous puts and gets, host and device local buffers ---- */

static void check_slot(const uint8_t *part, int src, int round, size_t size,
                       int line)
{
  const uint8_t *slot = part + (size_t)src * SLOT;
  int bad = 0;
  for (size_t i = 0; i < GUARD && bad < 3; i++)
    if (slot[i] != FILL || slot[GUARD + size + i] != FILL) bad++;
  for (size_t i = 0; i < size && bad < 3; i++)
    if (slot[GUARD + i] != pattern(src, round, i)) {
      FAIL_AT(line, "round %d: byte %zu of %zu from unit %d is %u, not %u",
              round, i, size, src, slot[GUARD + i], pattern(src, round, i));
      bad++;
    }
  if (bad) FAIL_AT(line, "round %d: slot of unit %d (%zu bytes) wrong", round,
                   src, size);
}

static void test_contiguous(void)
{
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  dart_gptr_t g;
  CHECK_OK(dart_team_memalloc_kind(DART_TEAM_ALL, SLOT * (size_t)n,
                                   DART_TYPE_BYTE, DART_MEMKIND_CUDA, &g));
  dart_memkind_t kind = DART_MEMKIND_HOST;
  CHECK_OK(dart_gptr_memkind(g, &kind));
  CHECK_EQ(kind, DART_MEMKIND_CUDA);
  for (int u = 0; u < n; u++) {
    dart_path_t path = DART_PATH_COUNT;
    CHECK_OK(dart_gptr_path(at(g, u, 0), &path));
    CHECK_EQ(path, node_of[u] == node_of[me] ? DART_PATH_IPC : remote_path);
    void *addr = (void *)1;
    CHECK_OK(dart_gptr_getaddr_shared(at(g, u, 0), &addr));
    CHECK(node_of[u] == node_of[me] ? addr != NULL : addr == NULL);
  }
  CHECK(strcmp(dart_path_name(DART_PATH_IPC), "ipc") == 0);
  CHECK(strcmp(dart_path_name(DART_PATH_STAGE), "stage") == 0);
  CHECK(dart_path_name(DART_PATH_COUNT) == NULL);
  void *mine = NULL;
  CHECK_OK(dart_gptr_getaddr(at(g, me, 0), &mine));
  const size_t part_bytes = SLOT * (size_t)n;
  uint8_t *host = malloc(part_bytes), *src_host = malloc(SLOT);
  uint8_t *src_dev = dev_alloc(SLOT), *back = malloc(SLOT);
  memset(host, FILL, part_bytes);
  CHECK_OK(dart_memkind_copy(mine, host, part_bytes));
  CHECK_OK(dart_barrier(DART_TEAM_ALL));

  int round = 0;
  for (size_t s = 0; s < NSIZES; s++) {
    for (int dev = 0; dev < 2; dev++) {
      /* blocking, flushed, handle, completed by the barrier alone */
      for (int mode = 0; mode < 4; mode++, round++) {
        size_t size = sizes[s];
        for (size_t i = 0; i < size; i++) src_host[i] = pattern(me, round, i);
        const void *src = src_host;
        if (dev) {
          CHECK_OK(dart_memkind_copy(src_dev, src_host, size));
          src = src_dev;
        }
        dart_gptr_t slot = at(g, next, (size_t)me * SLOT + GUARD);
        dart_handle_t h = DART_HANDLE_NULL;
        if (mode == 0) {
          CHECK_OK(dart_put_blocking(slot, src, size, DART_TYPE_BYTE,
                                     DART_TYPE_BYTE));
        } else if (mode == 1) {
          CHECK_OK(dart_put(slot, src, size, DART_TYPE_BYTE, DART_TYPE_BYTE));
          CHECK_OK(dart_flush(slot));
        } else if (mode == 2) {
          CHECK_OK(dart_put_handle(slot, src, size, DART_TYPE_BYTE,
                                   DART_TYPE_BYTE, &h));
          CHECK_OK(dart_wait(&h));
          CHECK(h == DART_HANDLE_NULL);
        } else {
          CHECK_OK(dart_put(slot, src, size, DART_TYPE_BYTE, DART_TYPE_BYTE));
        }
        CHECK_OK(dart_barrier(DART_TEAM_ALL));
        to_host(host, mine, part_bytes);
        check_slot(host, prev, round, size, __LINE__);
        /* and back: get what we put, into host or device memory */
        void *dst = dev ? (void *)src_dev : (void *)back;
        if (mode == 0) {
          CHECK_OK(dart_get_blocking(dst, slot, size, DART_TYPE_BYTE,
                                     DART_TYPE_BYTE));
        } else if (mode == 1) {
          CHECK_OK(dart_get(dst, slot, size, DART_TYPE_BYTE, DART_TYPE_BYTE));
          CHECK_OK(dart_flush_local(slot));
        } else if (mode == 2) {
          CHECK_OK(dart_get_handle(dst, slot, size, DART_TYPE_BYTE,
                                   DART_TYPE_BYTE, &h));
          CHECK_OK(dart_wait_local(&h));
        } else {
          CHECK_OK(dart_get(dst, slot, size, DART_TYPE_BYTE, DART_TYPE_BYTE));
          CHECK_OK(dart_barrier(DART_TEAM_ALL));
        }
        if (dev) to_host(back, src_dev, size);
        int bad = 0;
        for (size_t i = 0; i < size && bad < 3; i++)
          if (back[i] != pattern(me, round, i)) {
            FAILF("round %d: get of %zu bytes: byte %zu is %u, not %u",
                  round, size, i, back[i], pattern(me, round, i));
            bad++;
          }
        CHECK_OK(dart_barrier(DART_TEAM_ALL));
      }
    }
  }
  CHECK_OK(dart_memkind_free(src_dev, DART_MEMKIND_CUDA));
  free(host);
  free(src_host);
  free(back);
  CHECK_OK(dart_team_memfree(g));
}

/* 64 MiB (big) device to device, to and from the next unit */
static void test_big(void)
{
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  dart_gptr_t g;
  CHECK_OK(dart_team_memalloc_kind(DART_TEAM_ALL, big, DART_TYPE_BYTE,
                                   DART_MEMKIND_CUDA, &g));
  uint8_t *host = malloc(big), *dev = dev_alloc(big);
  for (size_t i = 0; i < big; i++) host[i] = pattern(me, 99, i);
  CHECK_OK(dart_memkind_copy(dev, host, big));
  CHECK_OK(dart_put_blocking(at(g, next, 0), dev, big, DART_TYPE_BYTE,
                             DART_TYPE_BYTE));
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  void *mine;
  CHECK_OK(dart_gptr_getaddr(at(g, me, 0), &mine));
  to_host(host, mine, big);
  size_t bad = 0;
  for (size_t i = 0; i < big; i++) bad += host[i] != pattern(prev, 99, i);
  CHECK_EQ(bad, 0);
  /* get the next unit's part (its predecessor's data, ours) into host */
  memset(host, 0, big);
  CHECK_OK(dart_get_blocking(host, at(g, next, 0), big, DART_TYPE_BYTE,
                             DART_TYPE_BYTE));
  bad = 0;
  for (size_t i = 0; i < big; i++) bad += host[i] != pattern(me, 99, i);
  CHECK_EQ(bad, 0);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_OK(dart_memkind_free(dev, DART_MEMKIND_CUDA));
  free(host);
  CHECK_OK(dart_team_memfree(g));
}

/* ---- strided ---- */

#define STR_N 1000
#define STR_BL 4
#define STR_STRIDE 7
#define STR_EXTENT ((STR_N / STR_BL - 1) * STR_STRIDE + STR_BL)

static bool in_block(size_t i) { return i % STR_STRIDE < STR_BL; }

static void test_strided(void)
{
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  dart_datatype_t strided;
  CHECK_OK(dart_type_create_strided(DART_TYPE_INT, STR_STRIDE, STR_BL,
                                    &strided));
  dart_gptr_t g;
  CHECK_OK(dart_team_memalloc_kind(DART_TEAM_ALL, STR_EXTENT, DART_TYPE_INT,
                                   DART_MEMKIND_CUDA, &g));
  int *host = malloc(STR_EXTENT * sizeof(int));
  int *dev = dev_alloc(STR_EXTENT * sizeof(int));
  void *mine;
  CHECK_OK(dart_gptr_getaddr(at(g, me, 0), &mine));
  for (size_t i = 0; i < STR_EXTENT; i++) host[i] = -1;
  CHECK_OK(dart_memkind_copy(mine, host, STR_EXTENT * sizeof(int)));
  CHECK_OK(dart_barrier(DART_TEAM_ALL));

  /* contiguous device source -> strided remote */
  for (int i = 0; i < STR_N; i++) host[i] = me * 100000 + i;
  CHECK_OK(dart_memkind_copy(dev, host, STR_N * sizeof(int)));
  CHECK_OK(dart_put_blocking(at(g, next, 0), dev, STR_N, DART_TYPE_INT,
                             strided));
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  to_host(host, mine, STR_EXTENT * sizeof(int));
  int k = 0, bad = 0;
  for (size_t i = 0; i < STR_EXTENT; i++) {
    int want = in_block(i) ? prev * 100000 + k++ : -1;
    if (host[i] != want && bad++ < 3)
      FAILF("strided put: element %zu is %d, not %d", i, host[i], want);
  }
  CHECK_EQ(k, STR_N);
  /* strided remote -> strided device local (gaps keep -7) */
  for (size_t i = 0; i < STR_EXTENT; i++) host[i] = -7;
  CHECK_OK(dart_memkind_copy(dev, host, STR_EXTENT * sizeof(int)));
  CHECK_OK(dart_get_blocking(dev, at(g, next, 0), STR_N, strided, strided));
  to_host(host, dev, STR_EXTENT * sizeof(int));
  k = 0;
  bad = 0;
  for (size_t i = 0; i < STR_EXTENT; i++) {
    int want = in_block(i) ? me * 100000 + k++ : -7;
    if (host[i] != want && bad++ < 3)
      FAILF("strided get: element %zu is %d, not %d", i, host[i], want);
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_OK(dart_memkind_free(dev, DART_MEMKIND_CUDA));
  free(host);
  CHECK_OK(dart_team_memfree(g));
  CHECK_OK(dart_type_destroy(&strided));
}

/* ---- device buffers on the local side of host segments ---- */

static void test_host_segments(void)
{
  const size_t count = 3000;
  long *hostbuf = malloc(count * sizeof(long));
  long *reg = calloc(count * (size_t)n, sizeof(long));
  long *dev = dev_alloc(count * sizeof(long));
  dart_gptr_t ga, gr;
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, count * (size_t)n,
                                      DART_TYPE_LONG, &ga));
  CHECK_OK(dart_team_memregister(DART_TEAM_ALL, count * (size_t)n,
                                 DART_TYPE_LONG, reg, &gr));
  dart_gptr_t gs[2] = {ga, gr};
  for (int s = 0; s < 2; s++) {
    for (int u = 0; u < n; u++) {
      for (size_t i = 0; i < count; i++)
        hostbuf[i] = (long)(s * 1000000 + me * 10000) + (long)i;
      CHECK_OK(dart_memkind_copy(dev, hostbuf, count * sizeof(long)));
      CHECK_OK(dart_put_blocking(at(gs[s], u, (size_t)me * count * sizeof(long)),
                                 dev, count, DART_TYPE_LONG, DART_TYPE_LONG));
    }
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    long *part = NULL;
    CHECK_OK(dart_gptr_getaddr(at(gs[s], me, 0), (void **)&part));
    int bad = 0;
    for (int src = 0; src < n; src++)
      for (size_t i = 0; i < count; i++) {
        long want = (long)(s * 1000000 + src * 10000) + (long)i;
        if (part[(size_t)src * count + i] != want && bad++ < 3)
          FAILF("segment %d: element %zu from unit %d is %ld, not %ld", s, i,
                src, part[(size_t)src * count + i], want);
      }
    /* and gets into device memory from every unit */
    for (int u = 0; u < n; u++) {
      CHECK_OK(dart_get_blocking(dev, at(gs[s], u, (size_t)me * count *
                                                       sizeof(long)),
                                 count, DART_TYPE_LONG, DART_TYPE_LONG));
      to_host(hostbuf, dev, count * sizeof(long));
      bad = 0;
      for (size_t i = 0; i < count; i++) {
        long want = (long)(s * 1000000 + me * 10000) + (long)i;
        if (hostbuf[i] != want && bad++ < 3)
          FAILF("segment %d: get from unit %d: element %zu is %ld, not %ld",
                s, u, i, hostbuf[i], want);
      }
    }
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
  }
  CHECK_OK(dart_team_memfree(ga));
  CHECK_OK(dart_team_memderegister(gr));
  CHECK_OK(dart_memkind_free(dev, DART_MEMKIND_CUDA));
  free(hostbuf);
  free(reg);
}

/* ---- handles: each completes its own copies ---- */

static void test_handle_events(void)
{
  const size_t len = 4096;
  dart_gptr_t g;
  CHECK_OK(dart_team_memalloc_kind(DART_TEAM_ALL, 3 * len, DART_TYPE_BYTE,
                                   DART_MEMKIND_CUDA, &g));
  void *mine = NULL;
  CHECK_OK(dart_gptr_getaddr(at(g, me, 0), &mine));
  uint8_t *src = malloc(3 * len), *seen = malloc(3 * len);
  for (size_t i = 0; i < 3 * len; i++) src[i] = pattern(me, 99, i);
  dart_handle_t h[3];
  for (int k = 0; k < 3; k++)
    CHECK_OK(dart_put_handle(at(g, me, (size_t)k * len), src + k * len, len,
                             DART_TYPE_BYTE, DART_TYPE_BYTE, &h[k]));
  /* the first wait completes the first copy, whatever was queued after it
   * (emulated devices defer every copy until something waits for it) */
  CHECK_OK(dart_wait(&h[0]));
  CHECK(h[0] == DART_HANDLE_NULL);
  to_host(seen, mine, len);
  CHECK(memcmp(seen, src, len) == 0);
  /* a freed handle's copy completes with the flush */
  CHECK_OK(dart_handle_free(&h[1]));
  CHECK_OK(dart_waitall(&h[2], 1));
  CHECK_OK(dart_flush(at(g, me, 0)));
  to_host(seen, mine, 3 * len);
  CHECK(memcmp(seen, src, 3 * len) == 0);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_OK(dart_team_memfree(g));
  free(src);
  free(seen);
}

/* ---- atomics ---- */

#define ROUNDS 50
#define ACC_N 100

static void test_atomics(void)
{
  /* layout of each part: long counter, int cas word, short counter, float
   * sum, then ACC_N ints */
  dart_gptr_t g;
  CHECK_OK(dart_team_memalloc_kind(DART_TEAM_ALL, 64 + ACC_N * sizeof(int),
                                   DART_TYPE_BYTE, DART_MEMKIND_CUDA, &g));
  void *mine;
  CHECK_OK(dart_gptr_getaddr(at(g, me, 0), &mine));
  char zero[64 + ACC_N * sizeof(int)] = {0};
  CHECK_OK(dart_memkind_copy(mine, zero, sizeof zero));
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  bool spans = false;
  for (int u = 0; u < n; u++) spans |= node_of[u] != node_of[0];
  /* through UCX, every unit's atomics take it, the owner's included */
  const bool by_ucx = spans && remote_path == DART_PATH_UCX;
  dart_path_t apath;
  CHECK_OK(dart_gptr_atomic_path(at(g, 0, 0), &apath));
  CHECK_EQ(apath, by_ucx                        ? DART_PATH_UCX
                  : node_of[0] == node_of[me] ? DART_PATH_IPC
                                              : DART_PATH_STAGE);

  /* every unit aims at unit 0 through UCX, else at the first unit of its
   * own node */
  int target = me;
  while (target > 0 && (by_ucx || node_of[target - 1] == node_of[me]))
    target--;
  int peers = 0;
  for (int u = 0; u < n; u++) peers += by_ucx || node_of[u] == node_of[me];
  long one = 1, old;
  short sone = 1, sold;
  float half = 0.5f, fold;
  int acc[ACC_N];
  for (int i = 0; i < ACC_N; i++) acc[i] = i + 1;
  long maxold = -1;
  for (int r = 0; r < ROUNDS; r++) {
    CHECK_OK(dart_fetch_and_op(at(g, target, 0), &one, &old, DART_TYPE_LONG,
                               DART_OP_SUM));
    if (old > maxold) maxold = old;
    CHECK_OK(dart_fetch_and_op(at(g, target, 12), &sone, &sold,
                               DART_TYPE_SHORT, DART_OP_SUM));
    CHECK_OK(dart_fetch_and_op(at(g, target, 16), &half, &fold,
                               DART_TYPE_FLOAT, DART_OP_SUM));
    CHECK_OK(dart_accumulate(at(g, target, 64), acc, ACC_N, DART_TYPE_INT,
                             DART_OP_SUM));
    /* CAS: take the word from me-1 (or 0) to me, once per unit */
  }
  CHECK(maxold >= ROUNDS - 1);
  /* a ticket lock order through CAS: unit k of the node swaps k -> k+1 */
  int local_rank = me - target, seen = -1, next_v = local_rank + 1;
  do {
    CHECK_OK(dart_compare_and_swap(at(g, target, 8), &next_v, &local_rank,
                                   &seen, DART_TYPE_INT));
  } while (seen != local_rank && dart_test_failures == 0 &&
           seen < local_rank);
  CHECK_EQ(seen, local_rank);
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  if (target == me) {
    char host[sizeof zero];
    to_host(host, mine, sizeof host);
    long total;
    int cas;
    short stotal;
    float ftotal;
    memcpy(&total, host, sizeof total);
    memcpy(&cas, host + 8, sizeof cas);
    memcpy(&stotal, host + 12, sizeof stotal);
    memcpy(&ftotal, host + 16, sizeof ftotal);
    CHECK_EQ(total, (long)peers * ROUNDS);
    CHECK_EQ(cas, peers);
    CHECK_EQ(stotal, peers * ROUNDS);
    CHECK(ftotal == 0.5f * (float)(peers * ROUNDS));
    for (int i = 0; i < ACC_N; i++) {
      int v;
      memcpy(&v, host + 64 + i * sizeof(int), sizeof v);
      if (v != (i + 1) * peers * ROUNDS) {
        FAILF("accumulated element %d is %d, not %d", i, v,
              (i + 1) * peers * ROUNDS);
        break;
      }
    }
  }
  /* across nodes when staged: refused, with one line that says why */
  for (int u = 0; u < n && !by_ucx; u++) {
    if (node_of[u] == node_of[me]) continue;
    INVAL("dart_fetch_and_op", dart_fetch_and_op(at(g, u, 0), &one, &old,
                                                 DART_TYPE_LONG, DART_OP_SUM));
    break;
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_OK(dart_team_memfree(g));
}

/* ---- the IPC cache ---- */

static void test_ipc_cache(void)
{
  const int next = (me + 1) % n;
  void *first = NULL;
  int same_address = 0;
  for (int r = 0; r < 3; r++) {
    dart_gptr_t g;
    CHECK_OK(dart_team_memalloc_kind(DART_TEAM_ALL, 4096, DART_TYPE_BYTE,
                                     DART_MEMKIND_CUDA, &g));
    void *mine;
    CHECK_OK(dart_gptr_getaddr(at(g, me, 0), &mine));
    if (r == 0) first = mine;
    else same_address += mine == first;
    uint8_t buf[4096];
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = pattern(me, 200 + r, i);
    CHECK_OK(dart_memkind_copy(mine, buf, sizeof buf));
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    memset(buf, 0, sizeof buf);
    CHECK_OK(dart_get_blocking(buf, at(g, next, 0), sizeof buf,
                               DART_TYPE_BYTE, DART_TYPE_BYTE));
    int bad = 0;
    for (size_t i = 0; i < sizeof buf && bad < 3; i++)
      if (buf[i] != pattern(next, 200 + r, i)) {
        FAILF("allocation %d: byte %zu of unit %d is %u, not %u (a stale "
              "mapping?)", r, i, next, buf[i], pattern(next, 200 + r, i));
        bad++;
      }
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    CHECK_OK(dart_team_memfree(g));
  }
  if (me == 0)
    printf("ipc cache: %d of 2 new allocations at the freed address\n",
           same_address);

  /* one allocation registered twice: both reach it; either goes alone */
  const size_t bytes = 8192;
  uint8_t *dev = dev_alloc(bytes), buf[4096];
  for (size_t i = 0; i < bytes; i++) {
    uint8_t v = pattern(me, 300, i);
    CHECK_OK(dart_memkind_copy(dev + i, &v, 1));
  }
  dart_gptr_t r1, r2;
  CHECK_OK(dart_team_memregister_kind(DART_TEAM_ALL, bytes, DART_TYPE_BYTE,
                                      dev, DART_MEMKIND_CUDA, &r1));
  CHECK_OK(dart_team_memregister_kind(DART_TEAM_ALL, 4096, DART_TYPE_BYTE,
                                      dev + 4096, DART_MEMKIND_CUDA, &r2));
  for (int pass = 0; pass < 2; pass++) {
    CHECK_OK(dart_get_blocking(buf, at(r2, next, 0), 4096, DART_TYPE_BYTE,
                               DART_TYPE_BYTE));
    for (size_t i = 0; i < 4096; i++)
      if (buf[i] != pattern(next, 300, 4096 + i)) {
        FAILF("second registration, pass %d: byte %zu wrong", pass, i);
        break;
      }
    if (pass == 1) break;
    CHECK_OK(dart_get_blocking(buf, at(r1, next, 0), 4096, DART_TYPE_BYTE,
                               DART_TYPE_BYTE));
    for (size_t i = 0; i < 4096; i++)
      if (buf[i] != pattern(next, 300, i)) {
        FAILF("first registration: byte %zu wrong", i);
        break;
      }
    /* deregistration is local: the others are done with our part first */
    CHECK_OK(dart_barrier(DART_TEAM_ALL));
    CHECK_OK(dart_team_memderegister(r1)); /* r2 keeps the mapping */
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_OK(dart_team_memderegister(r2));
  CHECK_OK(dart_memkind_free(dev, DART_MEMKIND_CUDA));
}

/* ---- stream-ordered transfers (emulation: the NULL stream) ---- */

static void test_streams(void)
{
  const int next = (me + 1) % n;
  dart_gptr_t g;
  CHECK_OK(dart_team_memalloc_kind(DART_TEAM_ALL, (size_t)n * 64,
                                   DART_TYPE_BYTE, DART_MEMKIND_CUDA, &g));
  uint8_t buf[64];
  for (int i = 0; i < 64; i++) buf[i] = pattern(me, 400, (size_t)i);
  bool peer = node_of[next] == node_of[me];
  if (peer) {
    CHECK_OK(dart_put_stream(at(g, next, (size_t)me * 64), buf, 64,
                             DART_TYPE_BYTE, DART_TYPE_BYTE, NULL));
    uint64_t before, after;
    CHECK_OK(dart_path_count(DART_PATH_IPC, &before));
    memset(buf, 0, sizeof buf);
    CHECK_OK(dart_get_stream(buf, at(g, next, (size_t)me * 64), 64,
                             DART_TYPE_BYTE, DART_TYPE_BYTE, NULL));
    CHECK_OK(dart_path_count(DART_PATH_IPC, &after));
    CHECK_EQ(after - before, 1);
    for (int i = 0; i < 64; i++) CHECK_EQ(buf[i], pattern(me, 400, (size_t)i));
  } else {
    INVAL("dart_put_stream",
          dart_put_stream(at(g, next, 0), buf, 64, DART_TYPE_BYTE,
                          DART_TYPE_BYTE, NULL));
  }
  INVAL("dart_put_stream",
        dart_put_stream(at(g, me, 0), buf, 64, DART_TYPE_BYTE, DART_TYPE_BYTE,
                        (dart_stream_t)buf)); /* emulation: NULL only */
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_OK(dart_team_memfree(g));
}

/* ---- bad input ---- */

static void test_bad_input(void)
{
  dart_gptr_t g = DART_GPTR_NULL;
  void *p = NULL;
  long host[4];
  INVAL("dart_team_memalloc_kind",
        dart_team_memalloc_kind(DART_TEAM_ALL, 8, DART_TYPE_BYTE,
                                (dart_memkind_t)7, &g));
  INVAL("dart_team_memregister_kind",
        dart_team_memregister_kind(DART_TEAM_ALL, 4, DART_TYPE_LONG, host,
                                   DART_MEMKIND_CUDA, &g));
  long *dev = dev_alloc(64);
  INVAL("dart_team_memregister",
        dart_team_memregister(DART_TEAM_ALL, 8, DART_TYPE_LONG, dev, &g));
  /* one unit's bad part fails the collective call on every unit, each
   * with its one line, and nobody waits for the others */
  long *reg = me == 0 ? dev : host;
  INVAL("dart_team_memregister",
        dart_team_memregister(DART_TEAM_ALL, me == 0 ? 8 : 4, DART_TYPE_LONG,
                              reg, &g));
  INVAL("dart_team_memregister_kind",
        dart_team_memregister_kind(DART_TEAM_ALL, 4, DART_TYPE_LONG,
                                   me == 0 ? host : dev, DART_MEMKIND_CUDA,
                                   &g));
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  INVAL("dart_memkind_alloc",
        dart_memkind_alloc(8, (dart_memkind_t)-1, &p));
  INVAL("dart_memkind_alloc",
        dart_memkind_alloc(8, DART_MEMKIND_CUDA, NULL));
  /* the device backend's failure names the public function too, and
   * leaves the output alone */
  p = host;
  BAD(DART_ERR_NOMEM, "dart_memkind_alloc",
      dart_memkind_alloc((size_t)1 << 62, DART_MEMKIND_CUDA, &p));
  CHECK(p == host);
  INVAL("dart_memkind_free", dart_memkind_free(host, DART_MEMKIND_CUDA));
  INVAL("dart_memkind_copy", dart_memkind_copy(NULL, host, 8));
  INVAL("dart_memkind_device", dart_memkind_device(NULL));
  INVAL("dart_gptr_memkind", dart_gptr_memkind(DART_GPTR_NULL, NULL));
  CHECK_OK(dart_memkind_free(dev, DART_MEMKIND_CUDA));
  CHECK_OK(dart_memkind_free(NULL, DART_MEMKIND_CUDA));
  CHECK_OK(dart_memkind_alloc(0, DART_MEMKIND_CUDA, &p));
  CHECK(p == NULL);
}

int main(int argc, char **argv)
{
  dart_test_init(&argc, &argv);
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--big") == 0)
      big = (size_t)atoi(argv[i + 1]) << 20;
    else if (strcmp(argv[i], "--remote") == 0)
      remote_path = strcmp(argv[i + 1], "ucx") == 0 ? DART_PATH_UCX
                                                    : DART_PATH_STAGE;
  }
  me = dart_test_unit;
  n = dart_test_units;
  int device = -1;
  CHECK_OK(dart_memkind_device(&device));
  if (device < 0) {
    if (me == 0) printf("SKIPPED: no CUDA device\n");
    dart_exit();
    return DART_TEST_SKIP;
  }
  const char *emu = getenv("DART_GPU_EMULATE");
  emulated = emu && atoi(emu) > 0;
  int nodes, my_node;
  CHECK_OK(dart_node_info(&nodes, &my_node));
  node_of = malloc((size_t)n * sizeof *node_of);
  CHECK_OK(dart_allgather(&my_node, node_of, 1, DART_TYPE_INT,
                          DART_TEAM_ALL));
  capture_init();
  test_contiguous();
  test_big();
  test_strided();
  test_host_segments();
  test_handle_events();
  test_atomics();
  test_ipc_cache();
  if (emulated) test_streams();
  test_bad_input();
  free(node_of);
  return dart_test_finish();
}
