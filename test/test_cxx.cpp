// The headers from C++: DART_GPTR_NULL and the gptr helpers, unit id
// constructors, functions of every header noexcept (DART_NOTHROW), and a
// round trip through global memory the way a container library moves a
// global pointer between units. Unit ids, null handles and unit types as
// DASH uses them, through the headers at DASH's paths.
#include <dart/dart.h>
#include <dart/dart_ext.h>
#include <dart/dart_locality.h>
#include <dash/dart/if/dart.h>
#include <dash/dart/if/dart_io.h>
#include <dash/dart/if/dart_locality.h>

#include <cstdio>
#include <type_traits>
#include <vector>

// DASH's unit id types derive from these and construct them as bases, in
// constant expressions; plain integers convert to them.
namespace dash_units {
struct team_unit : dart_team_unit_t {
  constexpr team_unit() : dart_team_unit_t() {}
  constexpr explicit team_unit(dart_unit_t id) : dart_team_unit_t(id) {}
};
constexpr team_unit undefined{};
static_assert(undefined.id == DART_UNDEFINED_UNIT_ID, "default: undefined");
constexpr team_unit three{3};
static_assert(three.id == 3, "from a dart_unit_t");
constexpr dart_global_unit_t global_undefined{};
static_assert(global_undefined.id == DART_UNDEFINED_UNIT_ID,
              "default: undefined");
static_assert(sizeof(dart_team_unit_t) == sizeof(dart_unit_t) &&
                  sizeof(dart_global_unit_t) == sizeof(dart_unit_t),
              "the C layout");
static_assert(std::is_trivially_copyable<dart_team_unit_t>::value &&
                  std::is_standard_layout<dart_global_unit_t>::value,
              "copied as bytes, as C does");
constexpr dart_team_unit_t root = 0; // as DASH's tests pass a root
static_assert(root.id == 0, "implicit conversion");
}  // namespace dash_units

// Unevaluated calls: a sample of every header (test/headers.cmake checks
// all functions in C++17, where noexcept is part of the type).
namespace nothrow {
int argc;
char **argv;
dart_thread_support_level_t level;
dart_config_t *config;
dart_datatype_t type;
dart_operation_t op;
dart_group_t group;
dart_team_t team;
dart_global_unit_t unit;
dart_team_unit_t team_unit;
size_t size;
dart_gptr_t gptr;
void *addr;
int value;
dart_handle_t handle;
dart_lock_t lock;
dart_domain_locality_t *domain;
dart_unit_locality_t *unit_loc;
dart_path_t path;

static_assert(noexcept(dart_type_create_custom(8, &type)), "dart_types.h");
static_assert(noexcept(dart_op_destroy(&op)), "dart_types.h");
static_assert(noexcept(dart_init(&argc, &argv)), "dart_initialization.h");
static_assert(noexcept(dart_init_thread(&argc, &argv, &level)),
              "dart_initialization.h");
static_assert(noexcept(dart_exit()), "dart_initialization.h");
static_assert(noexcept(dart_initialized()), "dart_initialization.h");
static_assert(noexcept(dart_abort(DART_EXIT_ABORT)), "dart_initialization.h");
static_assert(noexcept(dart_config(&config)), "dart_config.h");
static_assert(noexcept(dart_group_create(&group)), "dart_team_group.h");
static_assert(noexcept(dart_team_create(DART_TEAM_ALL, group, &team)),
              "dart_team_group.h");
static_assert(noexcept(dart_team_unit_l2g(team, team_unit, &unit)),
              "dart_team_group.h");
static_assert(noexcept(dart_group_locality_split(
                  group, domain, DART_LOCALITY_SCOPE_NODE, 1, &size, &group)),
              "dart_team_group.h");
static_assert(noexcept(dart_gptr_getaddr(gptr, &addr)), "dart_globmem.h");
static_assert(noexcept(dart_team_memalloc_aligned(DART_TEAM_ALL, 1,
                                                  DART_TYPE_INT, &gptr)),
              "dart_globmem.h");
static_assert(noexcept(dart_memfree(gptr)), "dart_globmem.h");
static_assert(noexcept(dart_barrier(DART_TEAM_ALL)), "dart_communication.h");
static_assert(noexcept(dart_allreduce(&value, &value, 1, DART_TYPE_INT,
                                      DART_OP_SUM, DART_TEAM_ALL)),
              "dart_communication.h");
static_assert(noexcept(dart_put_blocking(gptr, &value, 1, DART_TYPE_INT,
                                         DART_TYPE_INT)),
              "dart_communication.h");
static_assert(noexcept(dart_wait(&handle)), "dart_communication.h");
static_assert(noexcept(dart_team_lock_init(DART_TEAM_ALL, &lock)),
              "dart_synchronization.h");
static_assert(noexcept(dart_lock_acquire(lock)), "dart_synchronization.h");
static_assert(noexcept(dart_lock_initialized(lock)),
              "dart_synchronization.h");
static_assert(noexcept(dart_domain_team_locality(DART_TEAM_ALL, ".",
                                                 &domain)),
              "dart_locality.h");
static_assert(noexcept(dart_unit_locality(DART_TEAM_ALL, team_unit,
                                          &unit_loc)),
              "dart_locality.h");
static_assert(noexcept(dart_gptr_getaddr_shared(gptr, &addr)), "dart_ext.h");
static_assert(noexcept(dart_gptr_path(gptr, &path)), "dart_ext.h");
}  // namespace nothrow

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
  EXPECT(null.teamid == DART_TEAM_NULL &&
         null.unitid == DART_UNDEFINED_UNIT_ID);

  dart_group_t no_group = DART_GROUP_NULL;
  dart_lock_t no_lock = DART_LOCK_NULL;
  EXPECT(no_group == nullptr && no_lock == nullptr);

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

  // a unit id from an int, as DASH's tests broadcast from root 0
  int from_root = me.id == 0 ? 77 : 0;
  EXPECT(dart_bcast(&from_root, 1, DART_TYPE_INT, 0, DART_TEAM_ALL) ==
         DART_OK);
  EXPECT(from_root == 77);

  EXPECT(dart_barrier(DART_TEAM_ALL) == DART_OK);
  EXPECT(dart_team_memfree(begin) == DART_OK);
  int total = 0;
  EXPECT(dart_allreduce(&failures, &total, 1, DART_TYPE_INT, DART_OP_SUM,
                        DART_TEAM_ALL) == DART_OK);
  EXPECT(dart_exit() == DART_OK);
  if (me.id == 0) std::printf("%s\n", total ? "FAILED" : "PASSED");
  return total ? 1 : 0;
}
