/*
 * Collective allocation: dart_team_memalloc_aligned + dart_team_memfree on
 * DART_TEAM_ALL against MPI_Win_allocate_shared + MPI_Win_free on the
 * node's communicator (what libdart builds on), per size per unit. The
 * median time of one allocate-and-free pair, as unit 0 sees it; every
 * allocation is written and read back by its owner.
 */
#define _POSIX_C_SOURCE 200809L
#include <dart/dart.h>
#include <mpi.h>
#include <stdint.h>

#include "dart_bench.h"

static const size_t sizes[] = {4096, 65536, 1048576, 16777216};

/* Writes the first and last byte and checks them. */
static int touch(char *p, size_t bytes, int me)
{
  p[0] = (char)me;
  p[bytes - 1] = (char)(me + 1);
  return p[0] == (char)me && p[bytes - 1] == (char)(me + 1);
}

int main(int argc, char **argv)
{
  bench_opts_t o;
  int me, units, failed = 0;
  if (bench_dart_start(&argc, &argv, &o, &me, &units) < 0) return 1;
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL,
                      &node);
  int reps = o.reps < 64 ? o.reps : 64;
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
    size_t bytes = sizes[s];
    if (o.smoke && bytes > 65536) break;
    for (int impl = 0; impl < 2; impl++) {
      double times[64];
      for (int r = -1; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = bench_now();
        if (impl == 0) {
          dart_gptr_t g;
          if (dart_team_memalloc_aligned(DART_TEAM_ALL, bytes, DART_TYPE_BYTE,
                                         &g) != DART_OK) {
            failed = 1;
            break;
          }
          dart_gptr_t mine = g;
          mine.unitid = me;
          char *p;
          if (dart_gptr_getaddr(mine, (void **)&p) != DART_OK ||
              !touch(p, bytes, me))
            failed = 1;
          if (dart_team_memfree(g) != DART_OK) failed = 1;
        } else {
          char *p;
          MPI_Win win;
          MPI_Win_allocate_shared((MPI_Aint)bytes, 1, MPI_INFO_NULL, node, &p,
                                  &win);
          if (!touch(p, bytes, me)) failed = 1;
          MPI_Win_free(&win);
        }
        if (r >= 0) times[r] = bench_now() - t0;
      }
      if (me == 0 && !failed)
        bench_row(&o, "alloc", "alloc_free", impl == 0 ? "dart" : "mpi_shared",
                  units, bytes, bench_median(times, reps) * 1e6, "us");
    }
  }
  MPI_Comm_free(&node);
  int any;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any && me == 0) fprintf(stderr, "bench_alloc: an allocation failed\n");
  dart_exit();
  return any ? 1 : 0;
}
