// stages/tridiagonal_bisection on the backend under test: eigenvalues of real
// symmetric tridiagonals by Sturm-count bisection, checked against host
// LAPACK (stemr, values only, through backends::tridiagonal_eigensolver) and
// against closed forms and extended-precision bisection. The accuracy
// contract is absolute, O(n eps ||T||): every comparison is max |w - w_ref|
// <= c eps max |w_ref| with c at most 4 n, far below what a wrong count, a
// lost or duplicated eigenvalue or an unscaled overflow would give.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "keig/backends/tridiagonal.hpp"
#include "keig/stages/tridiagonal_bisection.hpp"
#include "keig/stages/tridiagonal_inverse_iteration.hpp"
#include "support.hpp"

namespace keig::test {
namespace {

template <class R>
struct Tri {
  std::vector<R> d, e;  // n and n - 1 entries
  index_t n() const { return static_cast<index_t>(d.size()); }
};

template <class R>
Tri<R> random_tri(index_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  Tri<R> t;
  for (index_t i = 0; i < n; ++i) t.d.push_back(R(u(rng)));
  for (index_t i = 0; i + 1 < n; ++i) t.e.push_back(R(u(rng)));
  return t;
}

// Wilkinson's W_{2h+1}^+: d_i = |h - i|, e = 1; its largest eigenvalues come
// in pairs that agree to many digits (W21+: to 7e-14).
template <class R>
Tri<R> wilkinson(index_t h) {
  Tri<R> t;
  for (index_t i = 0; i <= 2 * h; ++i) t.d.push_back(R(std::abs(double(h - i))));
  t.e.assign(2 * h, R(1));
  return t;
}

template <class R>
Tri<R> scaled(const Tri<R>& t, double factor) {
  Tri<R> s = t;
  for (auto& x : s.d) x = R(double(x) * factor);
  for (auto& x : s.e) x = R(double(x) * factor);
  return s;
}

// `copies` copies of `block` glued by off-diagonal `glue`.
template <class R>
Tri<R> glued(const Tri<R>& block, index_t copies, R glue) {
  Tri<R> t;
  for (index_t c = 0; c < copies; ++c) {
    if (c > 0) t.e.push_back(glue);
    t.d.insert(t.d.end(), block.d.begin(), block.d.end());
    t.e.insert(t.e.end(), block.e.begin(), block.e.end());
  }
  return t;
}

// tridiagonal_bisection on the space under test; d and e must come back unchanged.
template <class R>
std::vector<R> bisect(const Tri<R>& t, const Range& range) {
  const index_t n = t.n();
  SpaceVector<R> d("d", n), e("e", n > 0 ? n - 1 : 0), w("w", n),
      work("work", stages::tridiagonal_bisection_workspace_size<R>(n));
  auto dh = Kokkos::create_mirror_view(d);
  auto eh = Kokkos::create_mirror_view(e);
  for (index_t i = 0; i < n; ++i) dh(i) = t.d[i];
  for (index_t i = 0; i + 1 < n; ++i) eh(i) = t.e[i];
  Kokkos::deep_copy(d, dh);
  Kokkos::deep_copy(e, eh);
  const index_t m = stages::tridiagonal_bisection<R, Space>(Space(), range, to_vector<Space>(d), to_vector<Space>(e),
                                                            to_vector<Space>(w), to_vector<Space>(work));
  Kokkos::fence();
  auto wh = to_host(w);
  auto dh2 = to_host(d);
  auto eh2 = to_host(e);
  for (index_t i = 0; i < n; ++i) EXPECT_EQ(dh2(i), t.d[i]) << "d modified";
  for (index_t i = 0; i + 1 < n; ++i) EXPECT_EQ(eh2(i), t.e[i]) << "e modified";
  EXPECT_GE(m, 0);
  EXPECT_LE(m, n);
  EXPECT_TRUE(is_ascending(wh, m));
  return std::vector<R>(wh.data(), wh.data() + m);
}

// Host LAPACK stemr (values only): the reference.
template <class R>
std::vector<R> lapack(const Tri<R>& t, const Range& range) {
  const index_t n = t.n();
  HostVector<R> d("d", n), e("e", n > 0 ? n - 1 : 0), w("w", n);
  HostMatrix<R> z("z", 0, 0);
  for (index_t i = 0; i < n; ++i) d(i) = t.d[i];
  for (index_t i = 0; i + 1 < n; ++i) e(i) = t.e[i];
  const index_t m =
      backends::tridiagonal_eigensolver<R>(backends::Job::ValuesOnly, range, TridiagonalSolver::MRRR, d, e, w, z);
  return std::vector<R>(w.data(), w.data() + m);
}

template <class R>
double max_abs(const std::vector<R>& v) {
  double a = 0;
  for (R x : v) a = std::max(a, std::abs(double(x)));
  return a;
}

// max |w - ref| / (eps scale): the error in units of eps scale.
template <class R>
double error_in_eps(const std::vector<R>& w, const std::vector<R>& ref, double scale) {
  EXPECT_EQ(w.size(), ref.size());
  double err = 0;
  for (size_t i = 0; i < std::min(w.size(), ref.size()); ++i) err = std::max(err, std::abs(double(w[i]) - double(ref[i])));
  const double eps = std::numeric_limits<R>::epsilon();
  return scale > 0 ? err / (eps * scale) : (err == 0 ? 0.0 : std::numeric_limits<double>::infinity());
}

template <class R>
std::vector<R> slice(const std::vector<R>& v, index_t first, index_t last) {
  return std::vector<R>(v.begin() + first, v.begin() + last + 1);
}

template <class R>
class TridiagonalBisection : public ::testing::Test {};
using Reals = ::testing::Types<float, double>;
TYPED_TEST_SUITE(TridiagonalBisection, Reals);

TYPED_TEST(TridiagonalBisection, RandomMatchesLapack) {
  using R = TypeParam;
  for (index_t n : {1, 2, 3, 17, 100, 513}) {
    for (std::uint64_t seed : {1, 2, 3}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " seed=" + std::to_string(seed));
      const auto t = random_tri<R>(n, 100 * n + seed);
      const auto ref = lapack(t, Range::all());
      const auto w = bisect(t, Range::all());
      ASSERT_EQ(w.size(), size_t(n));
      EXPECT_LE(error_in_eps(w, ref, max_abs(ref)), 4.0 * n);
    }
  }
}

// Against bisection in long double (the exact eigenvalues for R's purposes):
// bisection itself is accurate to about eps ||T|| (stemr's dqds is off by up
// to ~100 eps ||T|| on these matrices, hence the 4 n eps above).
index_t extended_count(const std::vector<long double>& d, const std::vector<long double>& e2, long double x) {
  long double q = 1;
  int count = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    q = (d[i] - x) - (i > 0 ? e2[i - 1] / q : 0.0L);
    if (q == 0) q = -std::numeric_limits<long double>::min();
    count += q < 0;
  }
  return count;
}

TYPED_TEST(TridiagonalBisection, MatchesExtendedPrecision) {
  using R = TypeParam;
  for (index_t n : {2, 17, 100, 513}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    const auto t = random_tri<R>(n, 100 * n + 1);
    std::vector<long double> d(t.d.begin(), t.d.end()), e2;
    for (R x : t.e) e2.push_back(static_cast<long double>(x) * x);
    std::vector<R> exact(n);
    for (index_t k = 0; k < n; ++k) {
      long double lo = -3, hi = 3;  // Gershgorin
      for (int step = 0; step < 72; ++step) {
        const long double mid = (lo + hi) / 2;
        (extended_count(d, e2, mid) > k ? hi : lo) = mid;
      }
      exact[k] = R((lo + hi) / 2);
    }
    const auto w = bisect(t, Range::all());
    EXPECT_LE(error_in_eps(w, exact, max_abs(exact)), 4.0);
    EXPECT_LE(error_in_eps(bisect(t, Range::index(n / 3, n / 2)), slice(exact, n / 3, n / 2), max_abs(exact)), 4.0);
  }
}

// (-1, 2, -1) and (1, 2, 1): eigenvalues 2 - 2 cos(k pi / (n + 1)).
TYPED_TEST(TridiagonalBisection, SecondDifferenceClosedForm) {
  using R = TypeParam;
  std::vector<index_t> sizes{1, 2, 5, 64, 300, 1000};
  // GPUs: groups of 8 lanes of one point below 12288 eigenvalues, 2 lanes of
  // two up to 24576, 2 lanes of one from there (with Newton points).
  if (backends::is_cuda_space_v<Space>) sizes.insert(sizes.end(), {index_t(13000), index_t(25000)});
  for (index_t n : sizes) {
    for (R sign : {R(-1), R(1)}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " e=" + std::to_string(sign));
      Tri<R> t;
      t.d.assign(n, R(2));
      t.e.assign(n - 1, sign);
      std::vector<R> exact(n);
      for (index_t k = 0; k < n; ++k)
        exact[k] = R(2 - 2 * std::cos(static_cast<long double>(k + 1) * 3.14159265358979323846264338327950288L /
                                      static_cast<long double>(n + 1)));
      // The closed form is rounded to R once (1/2 eps); bisection adds a few eps ||T||.
      EXPECT_LE(error_in_eps(bisect(t, Range::all()), exact, 4.0), 8.0);
    }
  }
}

// Close pairs: W21+ (and larger) against LAPACK; both members of every pair
// are found (nothing lost or duplicated) and ordered.
TYPED_TEST(TridiagonalBisection, WilkinsonClosePairs) {
  using R = TypeParam;
  for (index_t h : {1, 10, 50}) {
    SCOPED_TRACE("W" + std::to_string(2 * h + 1) + "+");
    const auto t = wilkinson<R>(h);
    const auto ref = lapack(t, Range::all());
    const auto w = bisect(t, Range::all());
    ASSERT_EQ(w.size(), ref.size());
    EXPECT_LE(error_in_eps(w, ref, max_abs(ref)), 4.0 * t.n());
    // The top pair, alone: each index finds its own member.
    const index_t n = t.n();
    EXPECT_LE(error_in_eps(bisect(t, Range::index(n - 2, n - 2)), slice(ref, n - 2, n - 2), max_abs(ref)), 4.0 * n);
    EXPECT_LE(error_in_eps(bisect(t, Range::index(n - 1, n - 1)), slice(ref, n - 1, n - 1), max_abs(ref)), 4.0 * n);
  }
  // In double W21+'s top pair (10.7461941829033...) is resolved: 7e-14 apart.
  if constexpr (std::is_same_v<R, double>) {
    const auto w = bisect(wilkinson<R>(10), Range::all());
    EXPECT_GT(w[20] - w[19], 3e-14);
    EXPECT_LT(w[20] - w[19], 1.2e-13);
  }
}

// Off-diagonals far below eps |d|: the eigenvalues are the sorted diagonal.
// 1e-200 (1e-30 in float) underflows when squared: the scaling must not lose it
// and nothing may divide by zero.
TYPED_TEST(TridiagonalBisection, TinyOffDiagonals) {
  using R = TypeParam;
  const double tiny = std::is_same_v<R, float> ? 1e-30 : 1e-200;
  for (index_t n : {2, 50, 301}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto t = random_tri<R>(n, 7 * n);
    for (auto& x : t.e) x = R(double(x) * tiny);
    std::vector<R> sorted = t.d;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_LE(error_in_eps(bisect(t, Range::all()), sorted, max_abs(sorted)), 4.0);
  }
}

// The same matrix scaled by tiny and huge factors: e^2 under- or overflows
// without scaling (1e150 is still safe in double, 1e200 and 1e300 are not).
TYPED_TEST(TridiagonalBisection, ExtremeScaling) {
  using R = TypeParam;
  const bool single = std::is_same_v<R, float>;
  const auto base = random_tri<R>(120, 42);
  const auto base_w = bisect(base, Range::all());
  const std::vector<double> factors =
      single ? std::vector<double>{1e-30, 1e-20, 1e15, 1e30, 1e36} : std::vector<double>{1e-200, 1e-300, 1e150, 1e200, 1e300};
  for (double f : factors) {
    SCOPED_TRACE("factor " + std::to_string(std::log10(f)));
    const auto t = scaled(base, f);
    const auto ref = lapack(t, Range::all());
    const auto w = bisect(t, Range::all());
    ASSERT_EQ(w.size(), ref.size());
    EXPECT_LE(error_in_eps(w, ref, max_abs(ref)), 4.0 * t.n());
    for (double x : w) EXPECT_TRUE(std::isfinite(x));
  }
  // Power-of-two factors: the scaling inside is exact, so the results are the
  // unscaled ones times the factor, bit for bit.
  for (int p : single ? std::vector<int>{-100, 100} : std::vector<int>{-900, 900}) {
    SCOPED_TRACE("2^" + std::to_string(p));
    const auto w = bisect(scaled(base, std::ldexp(1.0, p)), Range::all());
    ASSERT_EQ(w.size(), base_w.size());
    for (size_t i = 0; i < w.size(); ++i) EXPECT_EQ(w[i], std::ldexp(base_w[i], p));
  }
}

// Glued copies of a block: every block eigenvalue with multiplicity `copies`
// (glue 0) or in a tight cluster (glue ~ eps).
TYPED_TEST(TridiagonalBisection, GluedRepeatedBlocks) {
  using R = TypeParam;
  const R small_glue = std::is_same_v<R, float> ? R(1e-7) : R(1e-16);
  for (const auto& block : {wilkinson<R>(10), random_tri<R>(7, 5), random_tri<R>(1, 6)}) {
    const auto block_w = lapack(block, Range::all());
    for (index_t copies : {2, 10, 40}) {
      for (R glue : {R(0), small_glue}) {
        SCOPED_TRACE("block " + std::to_string(block.n()) + " x " + std::to_string(copies) +
                     " glue=" + std::to_string(glue));
        const auto t = glued(block, copies, glue);
        const auto w = bisect(t, Range::all());
        ASSERT_EQ(w.size(), size_t(t.n()));
        const auto ref = lapack(t, Range::all());
        EXPECT_LE(error_in_eps(w, ref, max_abs(ref)), 4.0 * t.n());
        if (glue == R(0)) {
          std::vector<R> repeated;
          for (R x : block_w) repeated.insert(repeated.end(), copies, x);
          EXPECT_LE(error_in_eps(w, repeated, max_abs(repeated)), 4.0 * block.n());
        }
      }
    }
  }
  // One eigenvalue of multiplicity n, and the zero matrix.
  Tri<R> ones;
  ones.d.assign(200, R(1));
  ones.e.assign(199, R(0));
  EXPECT_LE(error_in_eps(bisect(ones, Range::all()), std::vector<R>(200, R(1)), 1.0), 2.0);
  Tri<R> zero;
  zero.d.assign(30, R(0));
  zero.e.assign(29, R(0));
  const auto wz = bisect(zero, Range::all());
  ASSERT_EQ(wz.size(), size_t(30));
  for (R x : wz) EXPECT_EQ(x, R(0));
  EXPECT_EQ(bisect(zero, Range::value(-1, 0)).size(), size_t(30));
  EXPECT_EQ(bisect(zero, Range::value(0, 1)).size(), size_t(0));
  EXPECT_EQ(bisect(zero, Range::index(3, 5)), std::vector<R>(3, R(0)));
}

// e = 0: a diagonal matrix, unsorted, with repeated entries.
TYPED_TEST(TridiagonalBisection, DiagonalUnsorted) {
  using R = TypeParam;
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int> u(-20, 20);
  for (index_t n : {2, 9, 257}) {
    Tri<R> t;
    for (index_t i = 0; i < n; ++i) t.d.push_back(R(u(rng)) / R(8) + (i % 3 == 0 ? R(0.1) : R(0)));
    t.e.assign(n - 1, R(0));
    std::vector<R> sorted = t.d;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_LE(error_in_eps(bisect(t, Range::all()), sorted, max_abs(sorted)), 2.0);
    EXPECT_LE(error_in_eps(bisect(t, Range::index(1, n / 2)), slice(sorted, 1, n / 2), max_abs(sorted)), 2.0);
  }
}

// Index ranges: first, middle, last, single eigenvalues and the whole range.
TYPED_TEST(TridiagonalBisection, IndexSubsets) {
  using R = TypeParam;
  for (const auto& t : {random_tri<R>(100, 3), wilkinson<R>(10), random_tri<R>(513, 4)}) {
    const index_t n = t.n();
    const auto ref = lapack(t, Range::all());
    const double norm = max_abs(ref);
    const std::vector<std::pair<index_t, index_t>> ranges = {
        {0, 0}, {0, 9}, {n / 2 - 5, n / 2 + 4}, {n / 2, n / 2}, {n - 10, n - 1}, {n - 1, n - 1}, {0, n - 1}};
    for (const auto& [il, iu] : ranges) {
      SCOPED_TRACE("n=" + std::to_string(n) + " il=" + std::to_string(il) + " iu=" + std::to_string(iu));
      const auto w = bisect(t, Range::index(il, iu));
      ASSERT_EQ(w.size(), size_t(iu - il + 1));
      EXPECT_LE(error_in_eps(w, slice(ref, il, iu), norm), 4.0 * n);
      EXPECT_LE(error_in_eps(w, lapack(t, Range::index(il, iu)), norm), 4.0 * n);
    }
  }
}

// Value ranges (vl, vu] with ends in the gaps of the spectrum: the count and
// the values; empty ranges return 0, a range holding everything returns n.
TYPED_TEST(TridiagonalBisection, ValueRanges) {
  using R = TypeParam;
  for (const auto& t : {random_tri<R>(100, 8), wilkinson<R>(10), scaled(random_tri<R>(60, 9), 1e20)}) {
    const index_t n = t.n();
    const auto ref = lapack(t, Range::all());
    const double norm = max_abs(ref);
    // Between ref[i - 1] and ref[i] (below all for i = 0, above all for i = n).
    const auto gap = [&](index_t i) {
      if (i == 0) return double(ref[0]) - 0.5 * norm;
      if (i == n) return double(ref[n - 1]) + 0.5 * norm;
      return 0.5 * (double(ref[i - 1]) + double(ref[i]));
    };
    // Eigenvalues first..last (last < first: empty).
    const std::vector<std::pair<index_t, index_t>> wanted = {
        {0, 9}, {n / 2 - 3, n / 2 + 3}, {n - 10, n - 1}, {4, 4}, {0, n - 1}, {n / 2, n / 2 - 1}, {n, n - 1}, {0, -1}};
    for (const auto& [first, last] : wanted) {
      // W21+'s close pairs have no gap to put an end into: skip those.
      if (first > 0 && first < n && ref[first] - ref[first - 1] < 1e-3 * norm) continue;
      if (last >= 0 && last + 1 < n && ref[last + 1] - ref[last] < 1e-3 * norm) continue;
      const double vl = gap(first);
      const double vu = last < first ? vl + 1e-4 * norm : gap(last + 1);
      SCOPED_TRACE("n=" + std::to_string(n) + " wanted " + std::to_string(first) + ".." + std::to_string(last));
      const auto w = bisect(t, Range::value(vl, vu));
      ASSERT_EQ(index_t(w.size()), std::max<index_t>(last - first + 1, 0));
      if (last >= first) EXPECT_LE(error_in_eps(w, slice(ref, first, last), norm), 4.0 * n);
      EXPECT_EQ(w.size(), lapack(t, Range::value(vl, vu)).size());
      for (R x : w) {
        EXPECT_GT(double(x), vl);
        EXPECT_LE(double(x), vu);
      }
    }
    // Everything, with ends far beyond the spectrum (and beyond R's range).
    EXPECT_EQ(bisect(t, Range::value(-1e300, 1e300)).size(), size_t(n));
    EXPECT_LE(error_in_eps(bisect(t, Range::value(-2 * norm, 2 * norm)), ref, norm), 4.0 * n);
    EXPECT_EQ(bisect(t, Range::value(2 * norm, 3 * norm)).size(), size_t(0));
    EXPECT_EQ(bisect(t, Range::value(-1e300, -2 * norm)).size(), size_t(0));
  }
  // n = 1: d_0 exactly, inside or outside (vl, vu].
  Tri<R> one;
  one.d = {R(0.75)};
  EXPECT_EQ(bisect(one, Range::all()), std::vector<R>{R(0.75)});
  EXPECT_EQ(bisect(one, Range::value(0.5, 0.75)), std::vector<R>{R(0.75)});
  EXPECT_EQ(bisect(one, Range::value(0.75, 1)).size(), size_t(0));
}

// NaN/Inf are rejected up front (naming the argument), never iterated on;
// bad ranges, short workspace; n = 0.
TYPED_TEST(TridiagonalBisection, BadInput) {
  using R = TypeParam;
  const R nan = std::numeric_limits<R>::quiet_NaN(), inf = std::numeric_limits<R>::infinity();
  const auto expect_argument = [](const Tri<R>& t, const Range& range, const std::string& argument) {
    try {
      bisect(t, range);
      ADD_FAILURE() << "no exception, expected InvalidArgument('" << argument << "')";
    } catch (const InvalidArgument& error) {
      EXPECT_EQ(error.argument(), argument) << error.what();
    }
  };
  for (index_t n : {1, 2, 40}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto t = random_tri<R>(n, 13);
    t.d[n / 2] = nan;
    expect_argument(t, Range::all(), "d");
    expect_argument(t, Range::value(-1, 1), "d");
    t.d[n / 2] = -inf;
    expect_argument(t, Range::index(0, 0), "d");
    if (n > 1) {
      t = random_tri<R>(n, 13);
      t.e[n - 2] = nan;
      expect_argument(t, Range::all(), "e");
      t.e[n - 2] = inf;
      expect_argument(t, Range::all(), "e");
    }
  }
  const auto t = random_tri<R>(10, 14);
  expect_argument(t, Range::index(3, 2), "range");
  expect_argument(t, Range::index(0, 10), "range");
  expect_argument(t, Range::index(-1, 3), "range");
  expect_argument(t, Range::value(1, 1), "range");
  expect_argument(t, Range::value(0, std::numeric_limits<double>::infinity()), "range");
  SpaceVector<R> d("d", 10), e("e", 9), w("w", 10), work("work", stages::tridiagonal_bisection_workspace_size<R>(10) - 1);
  EXPECT_THROW((stages::tridiagonal_bisection<R, Space>(Space(), Range::all(), to_vector<Space>(d), to_vector<Space>(e),
                                                        to_vector<Space>(w), to_vector<Space>(work))),
               InvalidArgument);
  EXPECT_EQ(bisect(Tri<R>{}, Range::all()).size(), size_t(0));
  EXPECT_EQ(bisect(Tri<R>{}, Range::index(0, -1)).size(), size_t(0));
}

// Not a test: wall time of tridiagonal_bisection (all eigenvalues) against
// host stemr values-only. Run with --gtest_also_run_disabled_tests.
TEST(TridiagonalBisectionTiming, DISABLED_AgainstStemr) {
  using R = double;
  for (index_t n : {2000, 4000}) {
    const auto t = random_tri<R>(n, 99);
    SpaceVector<R> d("d", n), e("e", n - 1), w("w", n), work("work", stages::tridiagonal_bisection_workspace_size<R>(n));
    Kokkos::deep_copy(d, Kokkos::View<const R*, Kokkos::HostSpace>(t.d.data(), n));
    Kokkos::deep_copy(e, Kokkos::View<const R*, Kokkos::HostSpace>(t.e.data(), n - 1));
    Space space;
    double best_bisection = 1e30, best_stemr = 1e30;
    std::vector<R> ref;
    for (int rep = 0; rep < 3; ++rep) {
      auto start = std::chrono::steady_clock::now();
      stages::tridiagonal_bisection<R, Space>(space, Range::all(), to_vector<Space>(d), to_vector<Space>(e),
                                              to_vector<Space>(w), to_vector<Space>(work));
      space.fence();
      best_bisection = std::min(best_bisection, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      start = std::chrono::steady_clock::now();
      ref = lapack(t, Range::all());
      best_stemr = std::min(best_stemr, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    auto wh = to_host(w);
    EXPECT_LE(error_in_eps(std::vector<R>(wh.data(), wh.data() + n), ref, max_abs(ref)), 4.0 * n);
    std::printf("n = %lld: tridiagonal_bisection %.3f s, host stemr (values) %.3f s on %s\n", (long long)n,
                best_bisection, best_stemr, Space::name());
  }
}

template <class R>
class TridiagonalInverseIteration : public ::testing::Test {};
TYPED_TEST_SUITE(TridiagonalInverseIteration, Reals);

// stages/tridiagonal_inverse_iteration after tridiagonal_bisection, on the
// space under test: ||T Z - Z W||_F / (||T||_F n eps) and ||Z^T Z - I||_F /
// (n eps) within the contract, for random tridiagonals, Wilkinson's W21+
// (pairs of eigenvalues equal to 7e-14), glued Wilkinson blocks (clusters of
// 10 nearly equal eigenvalues) and the 1-2-1 Toeplitz matrix, with index and
// value ranges (batches of more than one launch included).
TYPED_TEST(TridiagonalInverseIteration, VectorsAreAccurateAndOrthonormal) {
  using R = TypeParam;
  struct Case {
    const char* name;
    Tri<R> t;
    Range range;
  };
  Tri<R> toeplitz;
  toeplitz.d.assign(300, R(2));
  toeplitz.e.assign(299, R(1));
  const std::vector<Case> cases = {
      {"random 500, index 0..199", random_tri<R>(500, 3), Range::index(0, 199)},
      {"random 1100, all by index (two batches)", random_tri<R>(1100, 4), Range::index(0, 1099)},
      {"W21+, index 11..20", wilkinson<R>(10), Range::index(11, 20)},
      {"glued W21+ x 10, index 150..209", glued(wilkinson<R>(10), 10, R(1e-8)), Range::index(150, 209)},
      {"1-2-1 Toeplitz 300, value (0.5, 2]", toeplitz, Range::value(0.5, 2.0)},
      {"n = 1", Tri<R>{{R(0.5)}, {}}, Range::index(0, 0)},
      {"T = 0, n = 40 (any orthonormal vectors)", Tri<R>{std::vector<R>(40, R(0)), std::vector<R>(39, R(0))},
       Range::index(5, 24)},
      {"diagonal with a repeated entry", Tri<R>{{R(1), R(-2), R(1), R(3), R(1)}, {R(0), R(0), R(0), R(0)}},
       Range::index(1, 3)},
  };
  backends::Context<Space> ctx{Space()};
  for (const Case& cs : cases) {
    SCOPED_TRACE(cs.name);
    const index_t n = cs.t.n();
    SpaceVector<R> d("d", n), e("e", n - 1), w("w", n), bwork("bwork", stages::tridiagonal_bisection_workspace_size<R>(n));
    auto dh = Kokkos::create_mirror_view(d);
    auto eh = Kokkos::create_mirror_view(e);
    for (index_t i = 0; i < n; ++i) dh(i) = cs.t.d[i];
    for (index_t i = 0; i + 1 < n; ++i) eh(i) = cs.t.e[i];
    Kokkos::deep_copy(d, dh);
    Kokkos::deep_copy(e, eh);
    const index_t m = stages::tridiagonal_bisection<R, Space>(Space(), cs.range, to_vector<Space>(d), to_vector<Space>(e),
                                                              to_vector<Space>(w), to_vector<Space>(bwork));
    ASSERT_GT(m, 0);
    SpaceMatrix<R> z("z", n, m);
    SpaceVector<R> work("work", stages::tridiagonal_inverse_iteration_workspace_size<R, Space>(n, m));
    stages::tridiagonal_inverse_iteration<R, Space>(ctx, to_vector<Space>(d), to_vector<Space>(e), to_vector<Space>(w), m,
                                                    to_matrix<Space>(z), to_vector<Space>(work));
    Kokkos::fence();
    auto zh = to_host(z);
    auto wh = to_host(w);
    double res = 0, orth = 0, tnorm = 0;
    for (index_t i = 0; i < n; ++i) tnorm += double(cs.t.d[i]) * cs.t.d[i] + (i + 1 < n ? 2.0 * cs.t.e[i] * cs.t.e[i] : 0.0);
    tnorm = std::max(tnorm, 1.0);  // T = 0: the residual must be 0 (relative to 1)
    for (index_t j = 0; j < m; ++j) {
      for (index_t i = 0; i < n; ++i) {
        double tz = double(cs.t.d[i]) * zh(i, j);
        if (i > 0) tz += double(cs.t.e[i - 1]) * zh(i - 1, j);
        if (i + 1 < n) tz += double(cs.t.e[i]) * zh(i + 1, j);
        const double r = tz - double(wh(j)) * zh(i, j);
        res += r * r;
      }
      for (index_t k = 0; k < m; ++k) {
        double g = 0;
        for (index_t i = 0; i < n; ++i) g += double(zh(i, j)) * zh(i, k);
        g -= j == k ? 1.0 : 0.0;
        orth += g * g;
      }
    }
    const double unit = double(n) * double(unit_roundoff<R>());
    EXPECT_LE(std::sqrt(res) / (std::sqrt(tnorm) * unit), kContract);
    EXPECT_LE(std::sqrt(orth) / unit, kContract);
  }
}

}  // namespace
}  // namespace keig::test
