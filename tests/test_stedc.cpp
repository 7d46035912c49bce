// stages/stedc on the backend under test: divide and conquer for the
// tridiagonal eigenproblem with device merges. Checked against LAPACK ?stedc
// (eigenvalues) and on its own terms (||T Q - Q diag(w)||, ||Q^T Q - I||),
// on matrices that exercise every deflation path: none, z_j negligible,
// close poles (rotations, Wilkinson), everything (decoupled blocks).
#include <atomic>
#include <cmath>
#include <random>
#include <stdexcept>
#include <thread>

#include "keig/stages/host_workers.hpp"
#include "keig/stages/secular.hpp"
#include "keig/stages/stedc.hpp"
#include "support.hpp"

namespace keig::test {
namespace {

template <class R>
struct Tridiagonal {
  std::vector<R> d, e;
};

template <class R>
Tridiagonal<R> random_tridiagonal(index_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  Tridiagonal<R> t{std::vector<R>(n), std::vector<R>(n > 0 ? n - 1 : 0)};
  for (auto& x : t.d) x = R(u(rng));
  for (auto& x : t.e) x = R(u(rng));
  return t;
}

// Wilkinson's W_n+: d = |i - (n-1)/2|, e = 1; its top eigenvalues come in
// pairs that agree to many digits, so merges deflate them by rotations.
template <class R>
Tridiagonal<R> wilkinson(index_t n) {
  Tridiagonal<R> t{std::vector<R>(n), std::vector<R>(n - 1, R(1))};
  for (index_t i = 0; i < n; ++i) t.d[i] = R(std::abs(double(i) - double(n - 1) / 2));
  return t;
}

struct Errors {
  double eigenvalues, residual, orthogonality;
};

// A secular equation 1/rho + sum z_i^2 / (d_i - x) = 0 (d strictly ascending).
template <class R>
struct Secular {
  std::vector<R> d, z;
  R rho;
};

// The secular function at d_o + tau evaluated in long double from the
// offsets (d_i - d_o) - tau, in units of eps times the size of its terms
// (what a root's rounding error can reach; ?laed4 stops below 8 of these).
template <class R>
double secular_residual(const Secular<R>& c, index_t o, R tau) {
  long double w = 1.0L / c.rho, size = 1.0L / c.rho;
  for (std::size_t i = 0; i < c.d.size(); ++i) {
    const long double term = (long double)c.z[i] * c.z[i] / (((long double)c.d[i] - c.d[o]) - tau);
    w += term;
    size += std::abs(term);
  }
  return double(std::abs(w) / (size * (std::numeric_limits<R>::epsilon() / 2)));
}

// Runs stages::secular_roots on the space under test; checks that each root
// has a neighbouring pole as its origin and lies strictly between its poles,
// and returns the largest secular_residual of its roots over that of LAPACK
// ?laed4's roots, or over 8 where ?laed4's are smaller (both stop below about
// 8 units; ?laed4's reach 100 at k = 1000).
template <class R>
double secular_error(const Secular<R>& c, const std::string& what) {
  const index_t k = static_cast<index_t>(c.d.size());
  SpaceVector<R> d("d", k), z("z", k), tau("tau", k), lambda("lambda", k);
  SpaceVector<index_t> origin("origin", k);
  auto dh = Kokkos::create_mirror_view(d);
  auto zh = Kokkos::create_mirror_view(z);
  for (index_t i = 0; i < k; ++i) {
    dh(i) = c.d[i];
    zh(i) = c.z[i];
  }
  Kokkos::deep_copy(d, dh);
  Kokkos::deep_copy(z, zh);
  stages::secular_roots<R, Space>(Space(), k, d, z, c.rho, origin, tau, lambda);
  const auto oh = to_host(origin);
  const auto th = to_host(tau);
  const auto lh = to_host(lambda);
  double ours = 0, lapack = 0;
  std::vector<R> delta(k);
  for (index_t j = 0; j < k; ++j) {
    R root = 0;
    EXPECT_EQ(backends::host::laed4<R>(k, j, c.d.data(), c.z.data(), delta.data(), c.rho, root), 0) << what;
    const index_t o = oh(j);
    EXPECT_TRUE(o == j || (o == j + 1 && j + 1 < k)) << what << ": root " << j << " has origin " << o;
    if (o != j && o != j + 1) continue;
    // Strictly between the poles in the origin's coordinates (the rounded
    // root itself may equal a pole).
    EXPECT_GT(th(j), c.d[j] - c.d[o]) << what << ": root " << j;
    if (j + 1 < k) EXPECT_LT(th(j), c.d[j + 1] - c.d[o]) << what << ": root " << j;
    EXPECT_EQ(lh(j), c.d[o] + th(j)) << what << ": root " << j;
    const index_t ref_o = (j + 1 < k && std::abs(delta[j + 1]) < std::abs(delta[j])) ? j + 1 : j;
    ours = std::max(ours, secular_residual(c, o, th(j)));
    lapack = std::max(lapack, secular_residual(c, ref_o, R(-delta[ref_o])));
  }
  return ours / std::max(lapack, 8.0);
}

// Runs stages::stedc on the space under test and measures it.
template <class R>
Errors run_stedc(const Tridiagonal<R>& t, index_t leaf, index_t panel, index_t batched_leaves) {
  const index_t n = static_cast<index_t>(t.d.size());
  HostVector<R> d("d", n), e("e", n > 0 ? n - 1 : 0);
  for (index_t i = 0; i < n; ++i) d(i) = t.d[i];
  for (index_t i = 0; i + 1 < n; ++i) e(i) = t.e[i];
  SpaceMatrix<R> q("q", n, n);
  stages::StedcTuning tuning;
  tuning.leaf = leaf;
  tuning.panel = panel;
  tuning.batched_leaves = batched_leaves;
  SpaceVector<R> work("work", stages::stedc_workspace_size<R>(n, tuning));
  backends::Context<Space> ctx{Space()};
  stages::stedc<R, Space>(ctx, d, e, q, work, tuning);
  const auto qh = to_host(q);

  // Reference eigenvalues: LAPACK ?stedc on the host.
  std::vector<R> dr(t.d), er(t.e);
  HostMatrix<R> unused("unused", 1, 1);
  EXPECT_EQ(backends::host::stedc<R>(backends::Job::ValuesOnly, n, dr.data(), er.data(), unused.data(), 1), 0);
  double tnorm = 0;
  for (index_t i = 0; i < n; ++i)
    tnorm = std::max(tnorm, std::abs(double(t.d[i])) + (i > 0 ? std::abs(double(t.e[i - 1])) : 0.0) +
                                (i + 1 < n ? std::abs(double(t.e[i])) : 0.0));
  const double eps = double(std::numeric_limits<R>::epsilon()) / 2, scale = std::max<index_t>(n, 1) * eps;
  Errors err{0, 0, 0};
  for (index_t i = 0; i < n; ++i) {
    err.eigenvalues = std::max(err.eigenvalues, std::abs(double(d(i)) - double(dr[i])) / (scale * std::max(tnorm, 1e-300)));
    if (i > 0) EXPECT_LE(d(i - 1), d(i)) << "eigenvalues not ascending at " << i;
  }
  double res = 0, orth = 0;
  for (index_t j = 0; j < n; ++j) {
    for (index_t i = 0; i < n; ++i) {
      double tq = double(t.d[i]) * qh(i, j);
      if (i > 0) tq += double(t.e[i - 1]) * qh(i - 1, j);
      if (i + 1 < n) tq += double(t.e[i]) * qh(i + 1, j);
      res = std::max(res, std::abs(tq - double(d(j)) * qh(i, j)));
    }
    for (index_t l = 0; l <= j; ++l) {
      double dot = 0;
      for (index_t i = 0; i < n; ++i) dot += double(qh(i, l)) * qh(i, j);
      orth = std::max(orth, std::abs(dot - (l == j ? 1.0 : 0.0)));
    }
  }
  err.residual = res / (scale * std::max(tnorm, 1e-300));
  err.orthogonality = orth / scale;
  return err;
}

template <class R>
void expect_accurate(const Tridiagonal<R>& t, index_t leaf, index_t panel, const std::string& what) {
  // Leaves by steqr on host threads, and on CUDA also on the device by the
  // batched Jacobi (leaves of at most 32; unequal leaves pad the batch).
  const index_t n = static_cast<index_t>(t.d.size());
  for (bool batched : {false, true}) {
    if (batched && (!backends::is_cuda_space_v<Space> || leaf > 32)) continue;
    const std::string how = what + (batched ? " (batched leaves)" : " (host leaves)");
    const Errors err = run_stedc(t, leaf, panel, batched ? 1 : 0);
    // LAPACK's own bounds are O(n eps ||T||); these are a few units of n eps.
    // The batched Jacobi's residuals reach a few times 32 eps ||T|| whatever
    // the leaf's size (cuSOLVER syevjBatched: about 2 x 32 eps at m = 32 and
    // at m = 3), so small n measure them against 32 eps.
    const double jacobi = batched ? std::max(1.0, 32.0 / double(std::max<index_t>(n, 1))) : 1.0;
    EXPECT_LE(err.eigenvalues, 2.0 * jacobi) << how;
    EXPECT_LE(err.residual, 4.0 * jacobi) << how;
    EXPECT_LE(err.orthogonality, 4.0 * jacobi) << how;
  }
}

template <class R>
class Stedc : public ::testing::Test {};
using Reals = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Stedc, Reals);

TYPED_TEST(Stedc, RandomTridiagonalsAcrossLeafAndPanelSizes) {
  using R = TypeParam;
  std::mt19937_64 rng(7);
  for (index_t n : {0, 1, 2, 3, 5, 64, 65, 130, 301})
    for (index_t leaf : {1, 4, 16, 64})
      for (index_t panel : {1, 3, 512}) {
        const auto t = random_tridiagonal<R>(n, rng);
        expect_accurate(t, leaf, panel, "random n=" + std::to_string(n) + " leaf=" + std::to_string(leaf) +
                                            " panel=" + std::to_string(panel));
      }
  // 64 leaves of 17 and 18 rows: a padded batch, past the 32 leaves from
  // which GPUs' default tuning batches them.
  expect_accurate(random_tridiagonal<R>(1100, rng), 32, 512, "random n=1100 leaf=32");
}

TYPED_TEST(Stedc, DeflationPaths) {
  using R = TypeParam;
  // Rotations: Wilkinson's close pairs, alone and glued by tiny couplings.
  expect_accurate(wilkinson<R>(21), 4, 512, "W21+");
  expect_accurate(wilkinson<R>(201), 8, 7, "W201+");
  auto glued = wilkinson<R>(21);
  for (int copy = 0; copy < 5; ++copy) {
    const auto w = wilkinson<R>(21);
    glued.e.push_back(R(1e-7));
    glued.d.insert(glued.d.end(), w.d.begin(), w.d.end());
    glued.e.insert(glued.e.end(), w.e.begin(), w.e.end());
  }
  expect_accurate(glued, 8, 512, "glued W21+ x6");
  // Everything deflates: decoupled blocks (e = 0 at every tear) and a diagonal matrix.
  std::mt19937_64 rng(11);
  auto blocks = random_tridiagonal<R>(96, rng);
  for (index_t i = 7; i < 95; i += 8) blocks.e[i] = 0;
  expect_accurate(blocks, 8, 512, "decoupled blocks");
  Tridiagonal<R> diagonal{std::vector<R>(50), std::vector<R>(49, R(0))};
  for (index_t i = 0; i < 50; ++i) diagonal.d[i] = R((i * 37) % 50) - R(20);
  expect_accurate(diagonal, 4, 512, "diagonal");
  // Many equal eigenvalues: the (1, 2, 1) Toeplitz matrix repeated with tiny glue.
  Tridiagonal<R> repeated{std::vector<R>(120, R(2)), std::vector<R>(119, R(1))};
  for (index_t i = 9; i < 119; i += 10) repeated.e[i] = R(1e-30);
  expect_accurate(repeated, 8, 512, "repeated spectrum");
  // Known spectrum 2 - 2 cos(k pi / (n + 1)) and extreme scaling.
  Tridiagonal<R> laplace{std::vector<R>(150, R(2)), std::vector<R>(149, R(-1))};
  expect_accurate(laplace, 16, 512, "1D Laplacian");
  for (double s : {1e-30, 1e30}) {
    auto scaled = random_tridiagonal<R>(90, rng);
    for (auto& x : scaled.d) x *= R(s);
    for (auto& x : scaled.e) x *= R(s);
    expect_accurate(scaled, 8, 512, "scaled by " + std::to_string(s));
  }
  Tridiagonal<R> zero{std::vector<R>(10, R(0)), std::vector<R>(9, R(0))};
  expect_accurate(zero, 4, 512, "zero matrix");
}

TYPED_TEST(Stedc, SecularRootsMatchLaed4) {
  using R = TypeParam;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  auto random_case = [&](index_t k, double rho, double z_floor) {
    Secular<R> c{std::vector<R>(k), std::vector<R>(k), R(rho)};
    std::vector<double> d(k);
    for (auto& x : d) x = u(rng);
    std::sort(d.begin(), d.end());
    for (index_t i = 0; i < k; ++i) c.d[i] = R(d[i]);
    double norm = 0;
    for (auto& x : c.z) {
      const double v = u(rng);
      x = R(v < 0 ? v - z_floor : v + z_floor);
      norm += double(x) * double(x);
    }
    for (auto& x : c.z) x = R(double(x) / std::sqrt(norm));
    return c;
  };
  for (index_t k : {3, 4, 31, 33, 200, 1000})
    for (double rho : {1e-6, 0.5, 1e3}) {
      const auto c = random_case(k, rho, 0);
      const std::string what = "random k=" + std::to_string(k) + " rho=" + std::to_string(rho);
      EXPECT_LE(secular_error(c, what), 2.0) << what;
    }
  // Poles in tight clusters (gaps near the deflation tolerance) and z
  // entries spread over many magnitudes: roots hug their poles.
  for (index_t k : {40, 300}) {
    Secular<R> c{std::vector<R>(k), std::vector<R>(k), R(1)};
    const double tight = 100 * double(std::numeric_limits<R>::epsilon());
    double x = -1, norm = 0;
    for (index_t i = 0; i < k; ++i) {
      x += (i % 5 == 0) ? 0.1 : tight * (1 + (i % 3));
      c.d[i] = R(x);
      c.z[i] = R(std::pow(10.0, -double(i % 7)) * (i % 2 ? 1 : -1));
      norm += double(c.z[i]) * double(c.z[i]);
    }
    for (auto& v : c.z) v = R(double(v) / std::sqrt(norm));
    for (index_t i = 1; i < k; ++i) ASSERT_LT(c.d[i - 1], c.d[i]);
    const std::string what = "clustered k=" + std::to_string(k);
    EXPECT_LE(secular_error(c, what), 2.0) << what;
  }
}

// secular_roots_batched (stedc's merges of one height): several problems at
// their positions in one launch give each root exactly what secular_roots
// gives on that problem alone; problems below min_count and positions of no
// problem are left untouched.
TYPED_TEST(Stedc, SecularRootsBatchedMatchOneAtATime) {
  using R = TypeParam;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  struct Problem {
    index_t first, span, k;
    R rho;
  };
  // Blocks of `span` positions, k of them holding poles; the block of 4 has
  // 2 poles (below min_count 3), and positions 62, 63 belong to none.
  const std::vector<Problem> problems{{0, 8, 5, R(0.5)}, {8, 50, 40, R(2)}, {58, 4, 2, R(1)}};
  const index_t positions = 64, min_count = 3;
  std::vector<R> d(positions, R(0)), z(positions, R(0));
  std::vector<index_t> problem_of(positions, -1), first, count;
  std::vector<R> rho;
  for (index_t b = 0; b < static_cast<index_t>(problems.size()); ++b) {
    const auto& p = problems[b];
    std::vector<double> poles(p.k);
    for (auto& x : poles) x = u(rng);
    std::sort(poles.begin(), poles.end());
    double norm = 0;
    for (index_t i = 0; i < p.k; ++i) {
      d[p.first + i] = R(poles[i]);
      z[p.first + i] = R(u(rng));
      norm += double(z[p.first + i]) * double(z[p.first + i]);
    }
    for (index_t i = 0; i < p.k; ++i) z[p.first + i] = R(double(z[p.first + i]) / std::sqrt(norm));
    for (index_t i = 0; i < p.span; ++i) problem_of[p.first + i] = b;
    first.push_back(p.first);
    count.push_back(p.k);
    rho.push_back(p.rho);
  }
  const auto upload = [](const auto& host) {
    using V = typename std::decay_t<decltype(host)>::value_type;
    SpaceVector<V> dev("v", static_cast<index_t>(host.size()));
    auto mirror = Kokkos::create_mirror_view(dev);
    for (std::size_t i = 0; i < host.size(); ++i) mirror(i) = host[i];
    Kokkos::deep_copy(dev, mirror);
    return dev;
  };
  const auto dd = upload(d), zd = upload(z), rhod = upload(rho);
  const auto problem_of_d = upload(problem_of), first_d = upload(first), count_d = upload(count);
  const R untouched = R(-7);
  const auto tau = upload(std::vector<R>(positions, untouched)), lambda = upload(std::vector<R>(positions, untouched));
  const auto origin = upload(std::vector<index_t>(positions, -5));
  stages::secular_roots_batched<R, Space>(Space(), positions, problem_of_d, first_d, count_d, rhod, min_count, dd, zd,
                                          origin, tau, lambda);
  const auto oh = to_host(origin);
  const auto th = to_host(tau);
  const auto lh = to_host(lambda);
  std::vector<bool> solved(positions, false);
  for (const auto& p : problems) {
    if (p.k < min_count) continue;
    const std::vector<R> pd(d.begin() + p.first, d.begin() + p.first + p.k),
        pz(z.begin() + p.first, z.begin() + p.first + p.k);
    SpaceVector<R> tau1("tau1", p.k), lambda1("lambda1", p.k);
    SpaceVector<index_t> origin1("origin1", p.k);
    stages::secular_roots<R, Space>(Space(), p.k, upload(pd), upload(pz), p.rho, origin1, tau1, lambda1);
    const auto o1 = to_host(origin1);
    const auto t1 = to_host(tau1);
    const auto l1 = to_host(lambda1);
    for (index_t j = 0; j < p.k; ++j) {
      EXPECT_EQ(oh(p.first + j), o1(j)) << "problem at " << p.first << ", root " << j;
      EXPECT_EQ(th(p.first + j), t1(j)) << "problem at " << p.first << ", root " << j;
      EXPECT_EQ(lh(p.first + j), l1(j)) << "problem at " << p.first << ", root " << j;
      solved[p.first + j] = true;
    }
  }
  for (index_t i = 0; i < positions; ++i)
    if (!solved[i]) {
      EXPECT_EQ(oh(i), -5) << "position " << i;
      EXPECT_EQ(th(i), untouched) << "position " << i;
      EXPECT_EQ(lh(i), untouched) << "position " << i;
    }
}

TYPED_TEST(Stedc, SecularRootsRejectBadArguments) {
  using R = TypeParam;
  SpaceVector<R> v("v", 4), short_v("v", 2);
  SpaceVector<index_t> o("o", 4);
  auto argument = [&](auto&& call) {
    try {
      call();
    } catch (const InvalidArgument& ex) {
      return ex.argument();
    }
    return std::string("no exception");
  };
  EXPECT_EQ(argument([&] { stages::secular_roots<R, Space>(Space(), 4, short_v, v, R(1), o, v, v); }), "d");
  EXPECT_EQ(argument([&] { stages::secular_roots<R, Space>(Space(), 4, v, short_v, R(1), o, v, v); }), "z");
  EXPECT_EQ(argument([&] { stages::secular_roots<R, Space>(Space(), 4, v, v, R(0), o, v, v); }), "rho");
  EXPECT_EQ(argument([&] { stages::secular_roots<R, Space>(Space(), 4, v, v, R(1), o, v, short_v); }),
            "origin/tau/lambda");
  EXPECT_EQ(argument([&] { stages::secular_roots<R, Space>(Space(), -1, v, v, R(1), o, v, v); }), "k");
}

TYPED_TEST(Stedc, BadArgumentsAreNamed) {
  using R = TypeParam;
  backends::Context<Space> ctx{Space()};
  const index_t n = 10;
  HostVector<R> d("d", n), e("e", n - 1);
  SpaceMatrix<R> q("q", n, n), small_q("q", n, n - 1);
  SpaceVector<R> work("work", stages::stedc_workspace_size<R>(n)), short_work("work", 3);
  auto message = [&](auto&& call) {
    try {
      call();
    } catch (const InvalidArgument& ex) {
      return std::string(ex.what());
    }
    return std::string("no exception");
  };
  EXPECT_NE(message([&] { stages::stedc<R, Space>(ctx, d, e, small_q, work); }).find("Z"), std::string::npos);
  EXPECT_NE(message([&] { stages::stedc<R, Space>(ctx, d, e, q, short_work); }).find("work"), std::string::npos);
  // Batched leaves: CUDA spaces only, and leaves of at most 32.
  stages::StedcTuning batched;
  batched.batched_leaves = 1;
  batched.leaf = backends::is_cuda_space_v<Space> ? 33 : 16;
  SpaceVector<R> batched_work("work", stages::stedc_workspace_size<R>(n, batched));
  EXPECT_NE(message([&] { stages::stedc<R, Space>(ctx, d, e, q, batched_work, batched); }).find("batched_leaves"),
            std::string::npos);
  d(3) = std::numeric_limits<R>::quiet_NaN();
  EXPECT_NE(message([&] { stages::stedc<R, Space>(ctx, d, e, q, work); }).find("non-finite"), std::string::npos);
}

// The host threads that plan stedc's merges on GPU backends: every item runs
// exactly once whatever the item count and thread count, jobs follow each
// other on the same helpers, and a body's exception reaches the caller after
// the other items ran.
TEST(StedcHostWorkers, RunsEveryItemOnceAndRethrows) {
  for (const int helpers : {0, 1, 3}) {
    stages::detail::HostWorkers workers(helpers);
    EXPECT_GE(workers.threads(), 1);
    for (const std::int64_t count : {0, 1, 2, 7, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<std::size_t>(count));
      for (auto& h : hits) h = 0;
      workers.run(count, [&](std::int64_t i) {
        if (i % 97 == 3) std::this_thread::yield();  // let helpers take some
        hits[static_cast<std::size_t>(i)].fetch_add(1);
      });
      for (std::int64_t i = 0; i < count; ++i) EXPECT_EQ(hits[static_cast<std::size_t>(i)].load(), 1) << "item " << i;
    }
    std::atomic<int> ran{0};
    EXPECT_THROW(workers.run(50,
                             [&](std::int64_t i) {
                               ran.fetch_add(1);
                               if (i == 17) throw std::runtime_error("item 17");
                             }),
                 std::runtime_error);
    EXPECT_EQ(ran.load(), 50);
    std::atomic<int> after{0};
    workers.run(10, [&](std::int64_t) { after.fetch_add(1); });  // usable after a throw
    EXPECT_EQ(after.load(), 10);
  }
}

}  // namespace
}  // namespace keig::test
