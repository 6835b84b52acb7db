// The interface as a C++ container library uses it: a blocked distributed
// array whose global iterator is a dart_gptr_t (pointer arithmetic on the
// offset, moving unitid across the units' blocks as DASH's GlobPtr does),
// elements read and written by blocking get/put, the local range from
// dart_gptr_getaddr; a team per node with per-node reductions and arrays;
// counters guarded by team locks (nested: all units, then the node); user
// reductions on a custom type (also a non-commutative one) and on a basic
// type.
#include <dart/dart.h>
#include <dart/dart_ext.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <numeric>
#include <vector>

namespace {

int failures = 0;
int my_unit = -1;

void fail_at(const char *file, int line, const char *what)
{
  if (failures < 20)
    std::fprintf(stderr, "[unit %d] FAIL %s:%d: %s\n", my_unit, file, line,
                 what);
  failures++;
}

#define EXPECT(cond)                                 \
  do {                                               \
    if (!(cond)) fail_at(__FILE__, __LINE__, #cond); \
  } while (0)
#define EXPECT_OK(expr) EXPECT((expr) == DART_OK)

// Two integers that must be equal; prints both.
#define EXPECT_EQ(a, b)                                                  \
  do {                                                                   \
    long long expect_a_ = static_cast<long long>(a);                     \
    long long expect_b_ = static_cast<long long>(b);                     \
    if (expect_a_ != expect_b_) {                                        \
      char expect_msg_[256];                                             \
      std::snprintf(expect_msg_, sizeof expect_msg_,                     \
                    "%s == %s: %lld != %lld", #a, #b, expect_a_,         \
                    expect_b_);                                          \
      fail_at(__FILE__, __LINE__, expect_msg_);                          \
    }                                                                    \
  } while (0)

// ---- element types and their DART types ----

// A record that moves as one custom type (dart_type_create_custom).
struct Stats {
  int64_t count, sum, min, max;
  bool operator==(const Stats &o) const
  {
    return count == o.count && sum == o.sum && min == o.min && max == o.max;
  }
};

dart_datatype_t stats_type = DART_TYPE_UNDEFINED;

template <class T>
struct dart_type;
template <>
struct dart_type<long> {
  static dart_datatype_t value() { return DART_TYPE_LONG; }
};
template <>
struct dart_type<Stats> {
  static dart_datatype_t value() { return stats_type; }
};

// The value stored at global index i of a test array.
template <class T>
T element(size_t i);
template <>
long element<long>(size_t i)
{
  return static_cast<long>(i) * 1000 + 7;
}
template <>
Stats element<Stats>(size_t i)
{
  int64_t v = static_cast<int64_t>(i);
  return Stats{v, -v, 3 * v, v * v};
}

// ---- the container ----

// Blocked distribution: n elements over the team's units, block =
// ceil(n / units) each; unit u holds global indices [u * block,
// min(n, (u + 1) * block)), units past the end hold none.
struct Blocked {
  size_t n = 0, units = 1, block = 1;
  Blocked() = default;
  Blocked(size_t n_, size_t units_)
      : n(n_), units(units_), block((n_ + units_ - 1) / units_)
  {
  }
  size_t local_size(size_t u) const
  {
    size_t first = u * block;
    return first >= n ? 0 : std::min(block, n - first);
  }
};

// A reference to a global element: reads by dart_get_blocking, writes by
// dart_put_blocking.
template <class T>
class GlobRef {
 public:
  explicit GlobRef(dart_gptr_t gptr) : gptr_(gptr) {}
  GlobRef(const GlobRef &) = default;
  operator T() const
  {
    T value = T();
    EXPECT_OK(dart_get_blocking(&value, gptr_, 1, dart_type<T>::value(),
                                dart_type<T>::value()));
    return value;
  }
  GlobRef &operator=(const T &value)
  {
    EXPECT_OK(dart_put_blocking(gptr_, &value, 1, dart_type<T>::value(),
                                dart_type<T>::value()));
    return *this;
  }
  GlobRef &operator=(const GlobRef &other)
  {
    return *this = static_cast<T>(other);
  }

 private:
  dart_gptr_t gptr_;
};

// A random-access iterator over a blocked array: a global pointer whose
// offset steps by sizeof(T) and whose unitid moves to the next unit at the
// end of a block. The end iterator may name a unit past the team (never
// dereferenced).
template <class T>
class GlobIter {
 public:
  using iterator_category = std::random_access_iterator_tag;
  using value_type = T;
  using difference_type = std::ptrdiff_t;
  using pointer = void;
  using reference = GlobRef<T>;

  GlobIter(dart_gptr_t gptr, const Blocked *pattern)
      : gptr_(gptr), pattern_(pattern)
  {
  }

  dart_gptr_t dart_gptr() const { return gptr_; }
  size_t index() const
  {
    return static_cast<size_t>(gptr_.unitid) * pattern_->block +
           gptr_.addr_or_offs.offset / sizeof(T);
  }

  reference operator*() const { return reference(gptr_); }
  reference operator[](difference_type d) const { return *(*this + d); }

  GlobIter &operator++()
  {
    gptr_.addr_or_offs.offset += sizeof(T);
    if (gptr_.addr_or_offs.offset == pattern_->block * sizeof(T)) {
      gptr_.unitid = gptr_.unitid + 1;
      gptr_.addr_or_offs.offset = 0;
    }
    return *this;
  }
  GlobIter operator++(int)
  {
    GlobIter old = *this;
    ++*this;
    return old;
  }
  GlobIter &operator--()
  {
    if (gptr_.addr_or_offs.offset == 0) {
      gptr_.unitid = gptr_.unitid - 1;
      gptr_.addr_or_offs.offset = pattern_->block * sizeof(T);
    }
    gptr_.addr_or_offs.offset -= sizeof(T);
    return *this;
  }
  GlobIter operator--(int)
  {
    GlobIter old = *this;
    --*this;
    return old;
  }
  GlobIter &operator+=(difference_type d)
  {
    size_t i = static_cast<size_t>(static_cast<difference_type>(index()) + d);
    gptr_.unitid = static_cast<dart_unit_t>(i / pattern_->block);
    gptr_.addr_or_offs.offset = (i % pattern_->block) * sizeof(T);
    return *this;
  }
  GlobIter &operator-=(difference_type d) { return *this += -d; }
  GlobIter operator+(difference_type d) const
  {
    GlobIter it = *this;
    return it += d;
  }
  GlobIter operator-(difference_type d) const
  {
    GlobIter it = *this;
    return it -= d;
  }
  difference_type operator-(const GlobIter &o) const
  {
    return static_cast<difference_type>(index()) -
           static_cast<difference_type>(o.index());
  }
  bool operator==(const GlobIter &o) const
  {
    return DART_GPTR_EQUAL(gptr_, o.gptr_);
  }
  bool operator!=(const GlobIter &o) const { return !(*this == o); }
  bool operator<(const GlobIter &o) const { return index() < o.index(); }

 private:
  dart_gptr_t gptr_;
  const Blocked *pattern_;
};

// A distributed array of n elements on a team (collective construction and
// destruction).
template <class T>
class Array {
 public:
  using iterator = GlobIter<T>;

  Array(dart_team_t team, size_t n) : team_(team)
  {
    size_t units = 0;
    EXPECT_OK(dart_team_size(team, &units));
    EXPECT_OK(dart_team_myid(team, &myid_));
    pattern_ = Blocked(n, units);
    lsize_ = pattern_.local_size(static_cast<size_t>(myid_.id));
    EXPECT_OK(dart_team_memalloc_aligned(team, lsize_, dart_type<T>::value(),
                                         &begin_));
    EXPECT_EQ(begin_.unitid, 0);
    EXPECT_EQ(begin_.addr_or_offs.offset, 0);
    EXPECT_EQ(begin_.teamid, team);
    // every unit got the same global pointer (broadcast as bytes, as DASH
    // does)
    dart_gptr_t root = begin_;
    EXPECT_OK(dart_bcast(&root, sizeof root, DART_TYPE_BYTE,
                         DART_TEAM_UNIT_ID(0), team));
    EXPECT(DART_GPTR_EQUAL(root, begin_));
    dart_gptr_t mine = begin_;
    dart_gptr_setunit(&mine, myid_);
    void *addr = nullptr;
    EXPECT_OK(dart_gptr_getaddr(mine, &addr));
    lbegin_ = static_cast<T *>(addr);
    if (lsize_ > 0) EXPECT(lbegin_ != nullptr);
  }
  ~Array()
  {
    EXPECT_OK(dart_barrier(team_));
    EXPECT_OK(dart_team_memfree(begin_));
  }
  Array(const Array &) = delete;
  Array &operator=(const Array &) = delete;

  iterator begin() const { return iterator(begin_, &pattern_); }
  iterator end() const
  {
    return begin() + static_cast<std::ptrdiff_t>(pattern_.n);
  }
  GlobRef<T> operator[](size_t i) const
  {
    return begin()[static_cast<std::ptrdiff_t>(i)];
  }
  size_t size() const { return pattern_.n; }
  const Blocked &pattern() const { return pattern_; }
  T *lbegin() const { return lbegin_; }
  T *lend() const { return lbegin_ + lsize_; }
  dart_team_unit_t myid() const { return myid_; }
  // global index of local element i
  size_t global_index(size_t i) const
  {
    return static_cast<size_t>(myid_.id) * pattern_.block + i;
  }
  void barrier() const { EXPECT_OK(dart_barrier(team_)); }

 private:
  dart_team_t team_;
  dart_team_unit_t myid_;
  Blocked pattern_;
  size_t lsize_ = 0;
  dart_gptr_t begin_ = DART_GPTR_NULL;
  T *lbegin_ = nullptr;
};

// Fills an array through the local ranges, then reads and writes it
// through global iterators from every unit.
template <class T>
void test_array(dart_team_t team, size_t n)
{
  Array<T> a(team, n);
  const Blocked &p = a.pattern();
  size_t units = p.units;
  size_t me = static_cast<size_t>(a.myid().id);

  // the local sizes add up to n
  size_t lsize = static_cast<size_t>(a.lend() - a.lbegin()), total = 0;
  EXPECT_OK(dart_allreduce(&lsize, &total, 1, DART_TYPE_SIZET, DART_OP_SUM,
                           team));
  EXPECT_EQ(total, n);

  for (size_t i = 0; i < lsize; i++)
    a.lbegin()[i] = element<T>(a.global_index(i));
  a.barrier();

  // forward: the gptr walks the blocks, only the own part has an address
  EXPECT_EQ(std::distance(a.begin(), a.end()), n);
  size_t k = 0;
  for (auto it = a.begin(); it != a.end(); ++it, ++k) {
    dart_gptr_t g = it.dart_gptr();
    EXPECT_EQ(g.unitid, k / p.block);
    EXPECT_EQ(g.addr_or_offs.offset, (k % p.block) * sizeof(T));
    void *addr = nullptr;
    EXPECT_OK(dart_gptr_getaddr(g, &addr));
    EXPECT((addr != nullptr) == (static_cast<size_t>(g.unitid) == me));
    if (!(static_cast<T>(*it) == element<T>(k)))
      fail_at(__FILE__, __LINE__, "forward read");
  }
  EXPECT_EQ(k, n);
  // backward
  k = n;
  for (auto it = a.end(); it != a.begin();) {
    --it;
    --k;
    EXPECT_EQ(it.index(), k);
    if (!(static_cast<T>(*it) == element<T>(k)))
      fail_at(__FILE__, __LINE__, "backward read");
  }
  EXPECT_EQ(k, 0);
  // random access across unit boundaries
  for (size_t i = 0; i < n; i += 1 + n / 5) {
    for (size_t j = 0; j < n; j += 1 + n / 4) {
      auto d = static_cast<std::ptrdiff_t>(j) - static_cast<std::ptrdiff_t>(i);
      auto it = a.begin() + static_cast<std::ptrdiff_t>(i);
      EXPECT_EQ((it + d).index(), j);
      EXPECT_EQ((it + d) - it, d);
      EXPECT((it + d) - d == it);
      if (!(static_cast<T>(it[d]) == element<T>(j)))
        fail_at(__FILE__, __LINE__, "random access read");
    }
  }
  // a standard algorithm on the global range
  std::vector<T> copy(n);
  std::copy(a.begin(), a.end(), copy.begin());
  for (size_t i = 0; i < n; i++)
    if (!(copy[i] == element<T>(i))) fail_at(__FILE__, __LINE__, "std::copy");
  a.barrier();

  // every unit writes the elements i with i % units == me
  for (size_t i = me; i < n; i += units) a[i] = element<T>(n - 1 - i);
  a.barrier();
  for (size_t i = 0; i < lsize; i++) {
    if (!(a.lbegin()[i] == element<T>(n - 1 - a.global_index(i))))
      fail_at(__FILE__, __LINE__, "remote write seen in the local range");
  }
}

// Each unit's block, reached from every unit: l2g/g2l of every team unit
// and the gptr of the block's first element.
void test_units(dart_team_t team)
{
  size_t units = 0;
  dart_team_unit_t me;
  dart_global_unit_t gme;
  EXPECT_OK(dart_team_size(team, &units));
  EXPECT_OK(dart_team_myid(team, &me));
  EXPECT_OK(dart_myid(&gme));
  Array<long> a(team, 2 * units + 1);
  for (size_t u = 0; u < units; u++) {
    dart_team_unit_t tu = DART_TEAM_UNIT_ID(static_cast<dart_unit_t>(u));
    dart_global_unit_t g = DART_UNDEFINED_GLOBAL_UNIT_ID;
    EXPECT_OK(dart_team_unit_l2g(team, tu, &g));
    dart_team_unit_t back = DART_UNDEFINED_TEAM_UNIT_ID;
    EXPECT_OK(dart_team_unit_g2l(team, g, &back));
    EXPECT_EQ(back.id, tu.id);
    if (tu.id == me.id) EXPECT_EQ(g.id, gme.id);
    auto first = a.begin() + static_cast<std::ptrdiff_t>(u * a.pattern().block);
    if (first.index() < a.size()) {
      EXPECT_EQ(first.dart_gptr().unitid, tu.id);
      EXPECT_EQ(first.dart_gptr().addr_or_offs.offset, 0);
      // the owner writes its global id into its block; read back below
      if (tu.id == me.id) *first = g.id;
    }
  }
  a.barrier();
  for (size_t u = 0; u < units; u++) {
    size_t first = u * a.pattern().block;
    if (first >= a.size()) continue;
    dart_global_unit_t g;
    EXPECT_OK(dart_team_unit_l2g(
        team, DART_TEAM_UNIT_ID(static_cast<dart_unit_t>(u)), &g));
    EXPECT_EQ(static_cast<long>(a[first]), g.id);
  }
}

// Counters guarded by locks: read, then write the incremented value; only
// mutual exclusion makes the final count right.
void test_locks(dart_team_t node_team, size_t units, size_t node_units)
{
  const int rounds = 100;
  dart_lock_t all_lock = nullptr, node_lock = nullptr;
  EXPECT_OK(dart_team_lock_init(DART_TEAM_ALL, &all_lock));
  EXPECT_OK(dart_team_lock_init(node_team, &node_lock));
  EXPECT(dart_lock_initialized(all_lock) && dart_lock_initialized(node_lock));
  {
    Array<long> all_count(DART_TEAM_ALL, 1), node_count(node_team, 1);
    if (all_count.lbegin() != all_count.lend()) *all_count.lbegin() = 0;
    if (node_count.lbegin() != node_count.lend()) *node_count.lbegin() = 0;
    EXPECT_OK(dart_barrier(DART_TEAM_ALL));
    for (int r = 0; r < rounds; r++) {
      EXPECT_OK(dart_lock_acquire(all_lock));
      long v = all_count[0];
      all_count[0] = v + 1;
      if (r % 2) {
        EXPECT_OK(dart_lock_acquire(node_lock));
        v = node_count[0];
        node_count[0] = v + 1;
        EXPECT_OK(dart_lock_release(node_lock));
      }
      EXPECT_OK(dart_lock_release(all_lock));
    }
    for (int r = 0; r < rounds; r++) {
      EXPECT_OK(dart_lock_acquire(node_lock));
      long v = node_count[0];
      node_count[0] = v + 1;
      EXPECT_OK(dart_lock_release(node_lock));
    }
    EXPECT_OK(dart_barrier(DART_TEAM_ALL));
    EXPECT_EQ(static_cast<long>(all_count[0]),
              rounds * static_cast<long>(units));
    EXPECT_EQ(static_cast<long>(node_count[0]),
              (rounds + rounds / 2) * static_cast<long>(node_units));
  }
  EXPECT_OK(dart_team_lock_destroy(&node_lock));
  EXPECT_OK(dart_team_lock_destroy(&all_lock));
  EXPECT(node_lock == nullptr && all_lock == nullptr);
}

// A team per node (every unit creates every node's team, as a container
// library splits a team), checked against the node ids of all units.
void test_node_teams()
{
  size_t units = 0;
  dart_global_unit_t me;
  EXPECT_OK(dart_size(&units));
  EXPECT_OK(dart_myid(&me));
  int num_nodes = 0, my_node = -1;
  EXPECT_OK(dart_node_info(&num_nodes, &my_node));
  EXPECT(num_nodes >= 1 && my_node >= 0 && my_node < num_nodes);
  std::vector<int> node_of(units, -1);
  EXPECT_OK(dart_allgather(&my_node, node_of.data(), 1, DART_TYPE_INT,
                           DART_TEAM_ALL));

  dart_group_t all = nullptr;
  EXPECT_OK(dart_team_get_group(DART_TEAM_ALL, &all));
  dart_team_t node_team = DART_TEAM_NULL;
  std::vector<dart_unit_t> members;  // of my node, ascending
  for (int node = 0; node < num_nodes; node++) {
    dart_group_t g = nullptr;
    EXPECT_OK(dart_group_clone(all, &g));
    for (size_t u = 0; u < units; u++) {
      if (node_of[u] != node)
        EXPECT_OK(dart_group_delmember(
            g, DART_GLOBAL_UNIT_ID(static_cast<dart_unit_t>(u))));
      else if (node == my_node)
        members.push_back(static_cast<dart_unit_t>(u));
    }
    dart_team_t t = DART_TEAM_NULL;
    EXPECT_OK(dart_team_create(DART_TEAM_ALL, g, &t));
    if (node == my_node) {
      EXPECT(t != DART_TEAM_NULL && t != DART_TEAM_ALL);
      node_team = t;
    } else {
      EXPECT_EQ(t, DART_TEAM_NULL);
    }
    EXPECT_OK(dart_group_destroy(&g));
  }
  EXPECT_OK(dart_group_destroy(&all));
  if (node_team == DART_TEAM_NULL) return;

  size_t size = 0;
  dart_team_unit_t tme;
  EXPECT_OK(dart_team_size(node_team, &size));
  EXPECT_OK(dart_team_myid(node_team, &tme));
  EXPECT_EQ(size, members.size());
  for (size_t r = 0; r < members.size(); r++) {
    dart_global_unit_t g;
    EXPECT_OK(dart_team_unit_l2g(
        node_team, DART_TEAM_UNIT_ID(static_cast<dart_unit_t>(r)), &g));
    EXPECT_EQ(g.id, members[r]);
    if (members[r] == me.id) EXPECT_EQ(tme.id, static_cast<dart_unit_t>(r));
  }

  // per-node reductions: sum and maximum of the global ids, unit count
  long id = me.id, sum = -1, max = -1;
  int one = 1, count = 0;
  EXPECT_OK(dart_allreduce(&id, &sum, 1, DART_TYPE_LONG, DART_OP_SUM,
                           node_team));
  EXPECT_OK(dart_allreduce(&id, &max, 1, DART_TYPE_LONG, DART_OP_MAX,
                           node_team));
  EXPECT_OK(dart_allreduce(&one, &count, 1, DART_TYPE_INT, DART_OP_SUM,
                           node_team));
  EXPECT_EQ(sum, std::accumulate(members.begin(), members.end(), 0L));
  EXPECT_EQ(max, members.back());
  EXPECT_EQ(count, members.size());

  // arrays on the node team: unitid is the unit's id in that team
  test_units(node_team);
  test_array<long>(node_team, 3 * size + 2);
  test_locks(node_team, units, size);

  EXPECT_OK(dart_team_destroy(&node_team));
  EXPECT_EQ(node_team, DART_TEAM_NULL);
}

// ---- user reductions ----

// Count, sum, minimum and maximum: commutative, on a custom type.
void merge_stats(const void *in, void *inout, size_t len, void *)
{
  const Stats *a = static_cast<const Stats *>(in);
  Stats *b = static_cast<Stats *>(inout);
  for (size_t i = 0; i < len; i++) {
    b[i].count += a[i].count;
    b[i].sum += a[i].sum;
    b[i].min = std::min(b[i].min, a[i].min);
    b[i].max = std::max(b[i].max, a[i].max);
  }
}

// Affine maps x -> a x + b modulo *user_data, composed in unit order (the
// lower unit's map applies first): associative, not commutative.
struct Affine {
  int64_t a, b;
};
int64_t modulus = 1000003;

void compose(const void *in, void *inout, size_t len, void *user_data)
{
  if (user_data != &modulus) fail_at(__FILE__, __LINE__, "user_data");
  int64_t m = *static_cast<int64_t *>(user_data);
  const Affine *f = static_cast<const Affine *>(in);
  Affine *g = static_cast<Affine *>(inout);
  for (size_t i = 0; i < len; i++) {
    int64_t a = g[i].a * f[i].a % m, b = (g[i].a * f[i].b + g[i].b) % m;
    g[i] = Affine{a, b};
  }
}

Affine affine_of(int unit, int i)
{
  return Affine{(3 + 2 * unit + i) % modulus,
                (7 * unit + 11 * i + 1) % modulus};
}

// The int of larger magnitude: commutative, on a basic type.
void max_magnitude(const void *in, void *inout, size_t len, void *)
{
  const int *a = static_cast<const int *>(in);
  int *b = static_cast<int *>(inout);
  for (size_t i = 0; i < len; i++)
    if (std::abs(a[i]) > std::abs(b[i])) b[i] = a[i];
}

void test_user_reductions(int units, int me)
{
  dart_team_unit_t last = DART_TEAM_UNIT_ID(units - 1);

  // statistics of per-unit values, 3 independent elements
  dart_operation_t stats_op = DART_OP_UNDEFINED;
  EXPECT_OK(dart_op_create(merge_stats, nullptr, true, stats_type, false,
                           &stats_op));
  EXPECT(stats_op > DART_OP_LAST);
  Stats mine[3], all[3], at_root[3], want[3];
  for (int i = 0; i < 3; i++) {
    int64_t v = (me * 7 + i * 3) % 5 - 2;
    mine[i] = Stats{1, v, v, v};
    want[i] = Stats{0, 0, INT64_MAX, INT64_MIN};
    for (int u = 0; u < units; u++) {
      int64_t w = (u * 7 + i * 3) % 5 - 2;
      Stats s{1, w, w, w};
      merge_stats(&s, &want[i], 1, nullptr);
    }
  }
  EXPECT_OK(dart_allreduce(mine, all, 3, stats_type, stats_op,
                           DART_TEAM_ALL));
  EXPECT_OK(dart_reduce(mine, at_root, 3, stats_type, stats_op, last,
                        DART_TEAM_ALL));
  for (int i = 0; i < 3; i++) {
    EXPECT(all[i] == want[i]);
    if (me == last.id) EXPECT(at_root[i] == want[i]);
  }
  EXPECT_OK(dart_op_destroy(&stats_op));
  EXPECT_EQ(stats_op, DART_OP_UNDEFINED);

  // composition in unit order; the operation owns its type
  dart_datatype_t affine_type = DART_TYPE_UNDEFINED;
  EXPECT_OK(dart_type_create_custom(sizeof(Affine), &affine_type));
  dart_operation_t compose_op = DART_OP_UNDEFINED;
  EXPECT_OK(dart_op_create(compose, &modulus, false, affine_type, true,
                           &compose_op));
  Affine f[2] = {affine_of(me, 0), affine_of(me, 1)}, g[2], h[2];
  EXPECT_OK(dart_allreduce(f, g, 2, affine_type, compose_op, DART_TEAM_ALL));
  EXPECT_OK(dart_reduce(f, h, 2, affine_type, compose_op,
                        DART_TEAM_UNIT_ID(0), DART_TEAM_ALL));
  for (int i = 0; i < 2; i++) {
    Affine r = affine_of(0, i);
    for (int u = 1; u < units; u++) {
      Affine next = affine_of(u, i);
      compose(&r, &next, 1, &modulus);
      r = next;
    }
    EXPECT_EQ(g[i].a, r.a);
    EXPECT_EQ(g[i].b, r.b);
    if (me == 0) {
      EXPECT_EQ(h[i].a, r.a);
      EXPECT_EQ(h[i].b, r.b);
    }
  }
  EXPECT_OK(dart_op_destroy(&compose_op));

  // the value of largest magnitude, element-wise on ints
  dart_operation_t mag_op = DART_OP_UNDEFINED;
  EXPECT_OK(dart_op_create(max_magnitude, nullptr, true, DART_TYPE_INT, false,
                           &mag_op));
  int v[4], r[4] = {0, 0, 0, 0}, root_r[4] = {0, 0, 0, 0};
  for (int i = 0; i < 4; i++) v[i] = ((me + i) % 2 ? -1 : 1) * (me * 4 + i);
  EXPECT_OK(dart_allreduce(v, r, 4, DART_TYPE_INT, mag_op, DART_TEAM_ALL));
  EXPECT_OK(dart_reduce(v, root_r, 4, DART_TYPE_INT, mag_op, last,
                        DART_TEAM_ALL));
  for (int i = 0; i < 4; i++) {
    int u = units - 1, want_i = ((u + i) % 2 ? -1 : 1) * (u * 4 + i);
    EXPECT_EQ(r[i], want_i);
    if (me == last.id) EXPECT_EQ(root_r[i], want_i);
  }
  EXPECT_OK(dart_op_destroy(&mag_op));
}

}  // namespace

int main(int argc, char **argv)
{
  if (dart_init(&argc, &argv) != DART_OK) {
    std::fprintf(stderr, "dart_init failed\n");
    return 1;
  }
  dart_global_unit_t me;
  size_t units = 0;
  EXPECT_OK(dart_myid(&me));
  EXPECT_OK(dart_size(&units));
  my_unit = me.id;

  EXPECT_OK(dart_type_create_custom(sizeof(Stats), &stats_type));
  // partial last block, units without elements, one element per unit
  for (size_t n : {size_t(1), units / 2 + 1, units, 3 * units + 1,
                   size_t(17)}) {
    test_array<long>(DART_TEAM_ALL, n);
  }
  test_array<Stats>(DART_TEAM_ALL, 2 * units + 1);
  test_units(DART_TEAM_ALL);
  test_node_teams();
  test_user_reductions(static_cast<int>(units), me.id);
  EXPECT_OK(dart_type_destroy(&stats_type));

  int total = 0;
  if (dart_allreduce(&failures, &total, 1, DART_TYPE_INT, DART_OP_SUM,
                     DART_TEAM_ALL) != DART_OK)
    total = failures + 1;
  if (dart_exit() != DART_OK) total++;
  if (me.id == 0)
    std::printf("%s: %d failed checks\n", total ? "FAILED" : "PASSED", total);
  return total ? 1 : 0;
}
