/*
 * An application that initialises MPI itself: dart_init uses it, DART works
 * on top of it, and dart_exit leaves MPI running for the application.
 */
#include <dart/dart_ext.h>
#include <mpi.h>

#include "dart_test.h"

int main(int argc, char **argv)
{
  int provided, rank, size;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  dart_test_init(&argc, &argv);
  CHECK_EQ(dart_test_unit, rank);
  CHECK_EQ(dart_test_units, size);

  /* DART works: each unit writes its id into the next unit's part */
  dart_gptr_t g;
  CHECK_OK(dart_team_memalloc_aligned(DART_TEAM_ALL, 1, DART_TYPE_INT, &g));
  dart_gptr_t next = g;
  next.unitid = (rank + 1) % size;
  CHECK_OK(dart_put_blocking(next, &rank, 1, DART_TYPE_INT, DART_TYPE_INT));
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  dart_gptr_t mine = g;
  mine.unitid = rank;
  int got = -1;
  CHECK_OK(dart_get_blocking(&got, mine, 1, DART_TYPE_INT, DART_TYPE_INT));
  CHECK_EQ(got, (rank + size - 1) % size);

  /* atomics work, or, where MPI's one-sided component would crash in them
   * (Open MPI's default osc/rdma), fail cleanly */
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  dart_path_t path;
  CHECK_OK(dart_gptr_atomic_path(next, &path));
  int one = 1, old = -1, now = -1;
  dart_ret_t ret = dart_fetch_and_op(next, &one, &old, DART_TYPE_INT,
                                     DART_OP_SUM);
  bool refused = false;
#ifdef OPEN_MPI
  refused = path == DART_PATH_MPI && getenv("OMPI_MCA_osc") == NULL;
#endif
  if (refused) {
    CHECK_RET(ret, DART_ERR_OTHER);
    CHECK_EQ(old, -1);
  } else {
    CHECK_OK(ret);
    CHECK_EQ(old, rank);
  }
  CHECK_OK(dart_barrier(DART_TEAM_ALL));
  CHECK_OK(dart_get_blocking(&now, mine, 1, DART_TYPE_INT, DART_TYPE_INT));
  CHECK_EQ(now, refused ? got : got + 1);
  CHECK_OK(dart_team_memfree(g));

  int total = dart_test_combine_and_exit();
  CHECK(!dart_initialized());

  /* MPI is still the application's */
  int up = 0, down = 1;
  MPI_Initialized(&up);
  MPI_Finalized(&down);
  int mine_ok = up && !down && dart_test_failures == 0, all_ok = 0;
  if (MPI_Allreduce(&mine_ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD) !=
      MPI_SUCCESS)
    all_ok = 0;
  if (rank == 0)
    printf("%s: %d failed checks, MPI %s after dart_exit\n",
           total || !all_ok ? "FAILED" : "PASSED", total,
           all_ok ? "still running" : "NOT running");
  MPI_Finalize();
  return total || !all_ok ? 1 : 0;
}
