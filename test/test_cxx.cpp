// The headers from C++: DART_GPTR_NULL and the gptr helpers, unit id
// constructors, and a round trip through global memory the way a container
// library moves a global pointer between units.
#include <dart/dart.h>
#include <dart/dart_ext.h>

#include <cstdio>
#include <vector>

static int failures = 0;
#define EXPECT(cond)                                                       \
  do {                                                                     \
    if (!(cond)) {                                                         \
      std::fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                          \
    }                                                                      \
  } while (0)

int main(int argc, char **argv)
{
  static_assert(sizeof(dart_gptr_t) == 16, "gptr is 16 bytes");
  dart_gptr_t null = DART_GPTR_NULL;
  EXPECT(DART_GPTR_ISNULL(null));
  EXPECT(null.teamid == DART_TEAM_NULL && null.unitid == DART_UNDEFINED_UNIT_ID);

  EXPECT(dart_init(&argc, &argv) == DART_OK);
  dart_team_unit_t me;
  size_t size;
  EXPECT(dart_team_myid(DART_TEAM_ALL, &me) == DART_OK);
  EXPECT(dart_team_size(DART_TEAM_ALL, &size) == DART_OK);

  dart_gptr_t begin;
  EXPECT(dart_team_memalloc_aligned(DART_TEAM_ALL, 4, DART_TYPE_INT, &begin) ==
         DART_OK);
  EXPECT(!DART_GPTR_ISNULL(begin));
  // element 2 of the next unit: set the unit, step the offset
  dart_gptr_t it = begin;
  dart_gptr_setunit(&it, DART_TEAM_UNIT_ID((me.id + 1) % (int)size));
  dart_gptr_incaddr(&it, 2 * sizeof(int));
  int value = 1000 + me.id;
  EXPECT(dart_put_blocking(it, &value, 1, DART_TYPE_INT, DART_TYPE_INT) ==
         DART_OK);
  EXPECT(dart_barrier(DART_TEAM_ALL) == DART_OK);

  dart_gptr_t mine = begin;
  mine.unitid = me.id;
  void *addr = nullptr;
  EXPECT(dart_gptr_getaddr(mine, &addr) == DART_OK && addr != nullptr);
  int from = (me.id + (int)size - 1) % (int)size;
  EXPECT(static_cast<int *>(addr)[2] == 1000 + from);
  dart_gptr_t copy = it;
  EXPECT(DART_GPTR_EQUAL(copy, it));

  EXPECT(dart_barrier(DART_TEAM_ALL) == DART_OK);
  EXPECT(dart_team_memfree(begin) == DART_OK);
  int total = 0;
  EXPECT(dart_allreduce(&failures, &total, 1, DART_TYPE_INT, DART_OP_SUM,
                        DART_TEAM_ALL) == DART_OK);
  EXPECT(dart_exit() == DART_OK);
  if (me.id == 0) std::printf("%s\n", total ? "FAILED" : "PASSED");
  return total ? 1 : 0;
}
