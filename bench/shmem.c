/*
 * shmem: the OpenSHMEM baseline. The measurements of the libdart
 * benchmarks, made with the platform's OpenSHMEM (Open MPI's oshmem here)
 * and printed as bench.h rows with impl "shmem":
 *
 *   latency,put_blocking    shmem_putmem to PE 1 + shmem_quiet
 *   latency,get_blocking    shmem_getmem from PE 1
 *   bandwidth,put_nb_flush  windows of 16 shmem_putmem + one shmem_quiet,
 *                           4 KiB and up (MB/s, MB = 1e6 B), as bench_rma
 *   bandwidth,get_nb_flush  the same with shmem_getmem_nbi
 *   atomic,fetch_add        shmem_long_atomic_fetch_add on PE 1
 *   atomic,cas              shmem_long_atomic_compare_swap on PE 1 (each
 *                           one succeeds)
 *   gups,update             HPCC RandomAccess on a table of 2^N words in
 *                           blocks over all PEs (size = N), each update a
 *                           non-fetching shmem_uint64_atomic_xor
 *   pingpong,put_signal     half a round trip between PEs 0 and 1 (8 B
 *                           to 1 MiB, as bench_pingpong): shmem_putmem
 *                           into the peer's buffer, shmem_quiet, then
 *                           shmem_long_atomic_set of the peer's flag to the
 *                           round; the peer waits in shmem_long_wait_until
 *                           (>= round) and puts what it got back the same
 *                           way. The median over repetitions of runs of K
 *                           round trips (K from the warm-up: about 4 ms)
 *
 * Latency: the median over repetitions of the time per operation, each
 * complete before the next. Only PE 0 measures and prints; the others
 * serve as targets and wait asleep, leaving the cores to PE 0 when
 * oversubscribed (in the ping-pong PE 1 works too). The put, get, atomic
 * and ping-pong rows need 2 PEs; with 1 PE only GUPS runs. Every run
 * checks the data: puts arrive, gets read what the target wrote,
 * fetch-adds and compare-swaps return the expected values (also with all
 * PEs adding at once), GUPS leaves no wrong entry, each ping-pong run ends
 * with the last round's message in both PEs' buffers.
 *
 *   oshrun -np N bench_shmem [--smoke] [--layout L] [--max-size B]
 *                            [--reps R] [--log2 N]
 *
 * --log2 N: the GUPS table has 2^N words (default 20, smoke 12).
 *
 * Open MPI's shmem_finalize can crash here after everything has run (see
 * bench/run-shmem), so the last line before it, "# shmem: done, status S"
 * (S = 0: every check passed), says that the program completed; run-shmem
 * starts the program and judges it by that line. Exits S, or 2 on a usage
 * error.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <shmem.h>
#include <stdint.h>

#include "bench.h"
#include "hpcc.h"

#define WINDOW 16

static const size_t sizes[] = {1,     8,      64,      512,    4096,
                               32768, 262144, 1048576, 4194304};
#define NSIZES (sizeof sizes / sizeof sizes[0])
/* the ping-pong's, as bench_pingpong's */
static const size_t pp_sizes[] = {8,     64,     512,    4096,
                                  32768, 262144, 1048576};
#define PP_NSIZES (sizeof pp_sizes / sizeof pp_sizes[0])

static int me, npes;
static long phases; /* phases ended so far */

/* The symmetric variables, in the symmetric heap: UCX reaches that memory
 * (from ucp_mem_map) directly through shared memory, while it reaches the
 * static data segment through messages that the target answers only while
 * it is inside OpenSHMEM (a sleeping target never would). */
typedef struct {
  long phase;   /* the last phase PE 0 has ended */
  long sum;     /* on PE 0: sum_all's accumulator */
  long counter; /* the fetch-add target */
  long cas;     /* the compare-swap target */
  long flag;    /* the ping-pong's: the last round that arrived here */
} sym_vars_t;
static sym_vars_t *sv;

/* Ends a phase in which PE 0 works and the others only serve as targets:
 * they sleep until PE 0 raises the phase flag, then all meet. */
static void phase_end(void)
{
  phases++;
  if (me == 0) {
    for (int pe = 1; pe < npes; pe++) shmem_long_p(&sv->phase, phases, pe);
    shmem_quiet();
  } else {
    struct timespec nap = {0, 50000};
    while (!shmem_long_test(&sv->phase, SHMEM_CMP_GE, phases))
      nanosleep(&nap, NULL);
  }
  shmem_barrier_all();
}

/* The sum over all PEs of value, returned on every PE. */
static long sum_all(long value)
{
  if (me == 0) sv->sum = 0;
  shmem_barrier_all();
  if (value) shmem_long_atomic_add(&sv->sum, value, 0);
  shmem_quiet();
  shmem_barrier_all();
  long total = shmem_long_g(&sv->sum, 0);
  shmem_barrier_all();
  return total;
}

/* The pattern of round r at byte i. */
static unsigned char pattern(int r, size_t i)
{
  return (unsigned char)(r * 31 + i % 251 + 1);
}

typedef enum { PUT, GET } dir_t;

/* n transfers of bytes between local and PE 1's sym, each completed on its
 * own (window 1) or window at a time. */
static void transfer(dir_t dir, unsigned char *sym, unsigned char *local,
                     size_t bytes, long n, int window)
{
  if (window == 1) {
    if (dir == PUT) {
      for (long i = 0; i < n; i++) {
        shmem_putmem(sym, local, bytes, 1);
        shmem_quiet();
      }
    } else {
      for (long i = 0; i < n; i++) shmem_getmem(local, sym, bytes, 1);
    }
    return;
  }
  for (long i = 0; i < n; i += window) {
    for (int w = 0; w < window; w++) {
      if (dir == PUT) shmem_putmem(sym, local, bytes, 1);
      else shmem_getmem_nbi(local, sym, bytes, 1);
    }
    shmem_quiet();
  }
}

/* Times transfer (PE 0 moves, PE 1 is the target); returns the median
 * seconds per operation on PE 0. Counts wrong data in *errors. */
static double measure(const bench_opts_t *o, dir_t dir, unsigned char *sym,
                      unsigned char *local, size_t bytes, int window,
                      double *times, long *errors)
{
  long iters = 4 * window; /* the warm-up, then calibrated */
  for (int r = -1; r < o->reps; r++) { /* r = -1: the warm-up */
    int round = r + 2 + (window > 1 ? 64 : 0);
    if (me == 1) {
      if (dir == GET)
        for (size_t i = 0; i < bytes; i++) sym[i] = pattern(round, i);
      else
        memset(sym, 0, bytes);
    }
    if (me == 0) {
      if (dir == PUT)
        for (size_t i = 0; i < bytes; i++) local[i] = pattern(round, i);
      else
        memset(local, 0, bytes);
    }
    shmem_barrier_all();
    if (me == 0) {
      double t0 = bench_now();
      transfer(dir, sym, local, bytes, iters, window);
      double op = (bench_now() - t0) / (double)iters;
      if (r >= 0) times[r] = op;
      else iters = bench_iters(o, op, window);
    }
    phase_end();
    unsigned char *check = dir == PUT ? (me == 1 ? sym : NULL)
                                      : (me == 0 ? local : NULL);
    if (check)
      for (size_t i = 0; i < bytes; i++)
        if (check[i] != pattern(round, i)) {
          fprintf(stderr, "bench_shmem: %s of %zu B (window %d): byte %zu "
                  "is %u, not %u\n", dir == PUT ? "put" : "get", bytes,
                  window, i, check[i], pattern(round, i));
          (*errors)++;
          break;
        }
  }
  return me == 0 ? bench_median(times, o->reps) : 0;
}

/* latency,put_blocking / get_blocking and bandwidth,put_nb_flush /
 * get_nb_flush */
static long bench_put_get(const bench_opts_t *o, unsigned char *sym,
                          unsigned char *local, double *times)
{
  long errors = 0;
  for (size_t s = 0; s < NSIZES && sizes[s] <= o->max_size; s++) {
    size_t bytes = sizes[s];
    for (int d = PUT; d <= GET; d++) {
      dir_t dir = (dir_t)d;
      double lat = measure(o, dir, sym, local, bytes, 1, times, &errors);
      if (me == 0)
        bench_row(o, "latency", dir == PUT ? "put_blocking" : "get_blocking",
                  "shmem", npes, bytes, lat * 1e6, "us");
      if (bytes < 4096) continue;
      double per = measure(o, dir, sym, local, bytes, WINDOW, times, &errors);
      if (me == 0)
        bench_row(o, "bandwidth", dir == PUT ? "put_nb_flush" : "get_nb_flush",
                  "shmem", npes, bytes, (double)bytes / per * 1e-6, "MB/s");
    }
  }
  return errors;
}

/* n atomics on PE 1, the first returning *expect; counts wrong results. */
static long atomics(int cas, long n, long *expect)
{
  long wrong = 0;
  if (cas) {
    for (long i = 0; i < n; i++, (*expect)++)
      wrong += shmem_long_atomic_compare_swap(&sv->cas, *expect, *expect + 1,
                                              1) != *expect;
  } else {
    for (long i = 0; i < n; i++, (*expect)++)
      wrong += shmem_long_atomic_fetch_add(&sv->counter, 1, 1) != *expect;
  }
  return wrong;
}

/* atomic,fetch_add and atomic,cas (PE 0 on PE 1), then a check with all
 * PEs adding at once. */
static long bench_atomics(const bench_opts_t *o, double *times)
{
  long errors = 0;
  for (int cas = 0; cas <= 1; cas++) {
    sv->counter = 0;
    sv->cas = 0;
    shmem_barrier_all();
    if (me == 0) {
      long expect = 0, wrong = 0, iters = 100;
      for (int r = -1; r < o->reps; r++) { /* r = -1: the warm-up */
        double t0 = bench_now();
        wrong += atomics(cas, iters, &expect);
        double op = (bench_now() - t0) / (double)iters;
        if (r >= 0) times[r] = op;
        else iters = bench_iters(o, op, 1);
      }
      bench_row(o, "atomic", cas ? "cas" : "fetch_add", "shmem", npes, 8,
                bench_median(times, o->reps) * 1e6, "us");
      if (wrong)
        fprintf(stderr, "bench_shmem: %ld of %ld %s results wrong\n", wrong,
                expect, cas ? "compare-swap" : "fetch-add");
      errors += wrong;
    }
    phase_end();
  }

  /* all PEs fetch-add 1 at once: the results are 0 .. total-1, each once */
  sv->counter = 0;
  shmem_barrier_all();
  const long each = o->smoke ? 100 : 1000;
  long sum = 0;
  for (long i = 0; i < each; i++)
    sum += shmem_long_atomic_fetch_add(&sv->counter, 1, 1);
  shmem_quiet();
  long total = each * npes;
  long all_sum = sum_all(sum);
  if (me == 0) {
    long counter = shmem_long_g(&sv->counter, 1);
    if (counter != total || all_sum != total * (total - 1) / 2) {
      fprintf(stderr,
              "bench_shmem: concurrent fetch-add: counter %ld (want %ld), "
              "results sum %ld (want %ld)\n",
              counter, total, all_sum, total * (total - 1) / 2);
      errors++;
    }
  }
  shmem_barrier_all();
  return errors;
}

/* Ping-pong rounds so far, the same count on PEs 0 and 1: the flags are
 * never reset, so each wait asks for a round no earlier run has set. */
static long pp_round;

static unsigned char pp_mark(long round) { return (unsigned char)round; }

/* One ping-pong run of k round trips between PE 0 (local to PE 1's sym)
 * and PE 1 (sym back to PE 0's sym), as run number run (its pattern);
 * returns PE 0's seconds per half round trip and counts wrong data. */
static double pp_run(unsigned char *sym, unsigned char *local, size_t bytes,
                     long k, long run, long *errors)
{
  if (me == 0)
    for (size_t i = 0; i < bytes; i++) local[i] = pattern((int)run, i);
  shmem_barrier_all();
  double t0 = bench_now();
  if (me == 0) {
    for (long i = 0; i < k; i++) {
      long r = ++pp_round;
      local[0] = local[bytes - 1] = pp_mark(r);
      shmem_putmem(sym, local, bytes, 1);
      shmem_quiet(); /* the data before the flag */
      shmem_long_atomic_set(&sv->flag, r, 1);
      shmem_long_wait_until(&sv->flag, SHMEM_CMP_GE, r);
    }
  } else if (me == 1) {
    for (long i = 0; i < k; i++) {
      long r = ++pp_round;
      shmem_long_wait_until(&sv->flag, SHMEM_CMP_GE, r);
      shmem_putmem(sym, sym, bytes, 0);
      shmem_quiet();
      shmem_long_atomic_set(&sv->flag, r, 0);
    }
  }
  double half = (bench_now() - t0) / (2.0 * (double)k);
  /* PE 1 got the last ping, PE 0 its echo; the others sleep meanwhile */
  phase_end();
  if (me <= 1)
    for (size_t i = 0; i < bytes; i++) {
      unsigned char want = i == 0 || i == bytes - 1 ? pp_mark(pp_round)
                                                    : pattern((int)run, i);
      if (sym[i] != want) {
        fprintf(stderr, "bench_shmem: ping-pong of %zu B: PE %d: byte %zu "
                "is %u, not %u\n", bytes, me, i, sym[i], want);
        (*errors)++;
        break;
      }
    }
  return half;
}

/* pingpong,put_signal: two warm-up runs of 10 round trips (the second sets
 * K on PE 0, which all PEs then take), then the repetitions. */
static long bench_pingpong(const bench_opts_t *o, unsigned char *sym,
                           unsigned char *local, double *times)
{
  long errors = 0, run = 1;
  for (size_t s = 0; s < PP_NSIZES && pp_sizes[s] <= o->max_size; s++) {
    size_t bytes = pp_sizes[s];
    pp_run(sym, local, bytes, 10, run++, &errors);
    double half = pp_run(sym, local, bytes, 10, run++, &errors);
    long k = sum_all(me == 0 ? bench_iters(o, 2 * half, 1) : 0);
    for (int r = 0; r < o->reps; r++)
      times[r] = pp_run(sym, local, bytes, k, run++, &errors);
    if (me == 0)
      bench_row(o, "pingpong", "put_signal", "shmem", npes, bytes,
                bench_median(times, o->reps) * 1e6, "us");
  }
  return errors;
}

/* This PE's stretch of HPCC's stream, each update an atomic xor. */
static void gups_updates(uint64_t *table, uint64_t words, uint64_t per_pe)
{
  uint64_t first, count;
  hpcc_stretch(4 * words, me, npes, &first, &count);
  uint64_t ran = hpcc_starts((int64_t)first);
  for (uint64_t i = 0; i < count; i++) {
    ran = hpcc_next(ran);
    uint64_t index = ran & (words - 1);
    shmem_uint64_atomic_xor(&table[index % per_pe], ran,
                            (int)(index / per_pe));
  }
  shmem_quiet();
}

/* gups,update on a table of 2^log2_words words, per_pe on each PE (the
 * last PEs may hold less); returns the wrong entries (on all PEs). */
static long bench_gups(const bench_opts_t *o, int log2_words)
{
  uint64_t words = UINT64_C(1) << log2_words;
  uint64_t per_pe = (words + (uint64_t)npes - 1) / (uint64_t)npes;
  uint64_t *table = shmem_malloc(per_pe * sizeof *table);
  if (!table) {
    fprintf(stderr, "bench_shmem: PE %d: shmem_malloc of %" PRIu64
            " B failed (SHMEM_SYMMETRIC_SIZE)\n", me, per_pe * 8);
    shmem_global_exit(1);
  }
  uint64_t base = per_pe * (uint64_t)me;
  uint64_t nlocal = base >= words ? 0
                    : (words - base < per_pe ? words - base : per_pe);
  for (uint64_t i = 0; i < nlocal; i++) table[i] = base + i;
  shmem_barrier_all();

  double t0 = bench_now();
  gups_updates(table, words, per_pe);
  shmem_barrier_all();
  double seconds = bench_now() - t0;

  /* HPCC's verification: the same updates again undo every one */
  gups_updates(table, words, per_pe);
  shmem_barrier_all();
  long wrong = 0;
  for (uint64_t i = 0; i < nlocal; i++)
    if (table[i] != base + i) wrong++;
  long total = sum_all(wrong);
  if (me == 0) {
    bench_row(o, "gups", "update", "shmem", npes, (size_t)log2_words,
              4.0 * (double)words / seconds * 1e-9, "GUP/s");
    if (total)
      fprintf(stderr, "bench_shmem: gups: %ld of %" PRIu64
              " entries wrong\n", total, words);
  }
  shmem_free(table);
  return total;
}

int main(int argc, char **argv)
{
  /* --log2 N is ours, the rest bench_parse's */
  int log2_words = 0, usage_error = 0, nargs = 0;
  char **args = malloc(((size_t)argc + 1) * sizeof *args);
  for (int i = 0; i < argc; i++) {
    if (i > 0 && strcmp(argv[i], "--log2") == 0) {
      if (i + 1 >= argc || (log2_words = atoi(argv[++i])) < 1 ||
          log2_words > 40)
        usage_error = 1;
    } else {
      args[nargs++] = argv[i];
    }
  }
  args[nargs] = NULL;
  bench_opts_t o;
  if (bench_parse(nargs, args, &o) != nargs) usage_error = 1;
  free(args);
  if (log2_words == 0) log2_words = o.smoke ? 12 : 20;
  size_t buf_size = o.max_size < sizes[0] ? sizes[0] : o.max_size;

  /* The symmetric heap holds the buffer and this PE's block of the table;
   * Open MPI's default of 256 MiB is too small for large tables. The PE
   * count is not known before shmem_init; Open MPI's launcher tells it.
   * Open MPI's shmem_init reads SMA_SYMMETRIC_SIZE (SHMEM_SYMMETRIC_SIZE
   * only works from oshrun's environment, which translates it). */
  if (!getenv("SHMEM_SYMMETRIC_SIZE") && !getenv("SMA_SYMMETRIC_SIZE") &&
      !getenv("SHMEM_SYMMETRIC_HEAP_SIZE")) {
    const char *np_env = getenv("OMPI_COMM_WORLD_SIZE");
    long np = np_env ? atol(np_env) : 1;
    if (np < 1) np = 1;
    uint64_t block = ((UINT64_C(1) << log2_words) + (uint64_t)np - 1) /
                     (uint64_t)np * sizeof(uint64_t);
    uint64_t need = buf_size + block + (UINT64_C(64) << 20);
    if (need > UINT64_C(256) << 20) {
      char v[32];
      snprintf(v, sizeof v, "%" PRIu64, need);
      setenv("SMA_SYMMETRIC_SIZE", v, 0);
    }
  }

  shmem_init();
  me = shmem_my_pe();
  npes = shmem_n_pes();
  if (usage_error) {
    if (me == 0)
      fprintf(stderr, "usage: bench_shmem [--smoke] [--layout L] "
              "[--max-size B] [--reps R] [--log2 N (1..40)]\n");
    shmem_finalize();
    return 2;
  }

  unsigned char *sym = shmem_malloc(buf_size);
  sv = shmem_calloc(1, sizeof *sv);
  unsigned char *local = malloc(buf_size);
  double *times = malloc((size_t)o.reps * sizeof *times);
  if (!sym || !sv || !local || !times) {
    fprintf(stderr, "bench_shmem: PE %d: out of memory (%zu B)\n", me,
            buf_size);
    shmem_global_exit(1);
  }
  if (me == 0) {
    int major, minor;
    shmem_info_get_version(&major, &minor);
    printf("# shmem: OpenSHMEM %d.%d, %d PEs%s\n", major, minor, npes,
           o.smoke ? ", smoke" : "");
    fflush(stdout);
  }
  shmem_barrier_all();

  long errors = 0;
  if (npes >= 2) {
    errors += bench_put_get(&o, sym, local, times);
    errors += bench_atomics(&o, times);
    errors += bench_pingpong(&o, sym, local, times);
  } else if (me == 0) {
    printf("# shmem: 1 PE, put/get/atomic/pingpong rows need 2\n");
    fflush(stdout);
  }
  long wrong = sum_all(errors) + bench_gups(&o, log2_words);

  int status = wrong == 0 ? 0 : 1;
  fflush(stderr);
  shmem_barrier_all();
  if (me == 0) {
    printf("# shmem: done, status %d\n", status);
    fflush(stdout);
  }
  free(times);
  free(local);
  shmem_free(sv);
  shmem_free(sym);
  shmem_finalize();
  return status;
}
