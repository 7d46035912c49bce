// The two-stage reduction's stages on the backend under test: sy2sb (dense ->
// band) with bt_sy2sb, sb2st (band -> tridiagonal) with bt_sb2st. Each is
// checked as a similarity transform: with Q = bt(I), ||A Q - Q R||_F is small
// (R the reduced matrix) and Q is unitary.
#include <limits>
#include <random>

#include "keig/stages/bt_sb2st.hpp"
#include "keig/stages/bt_sy2sb.hpp"
#include "keig/stages/sb2st.hpp"
#include "keig/stages/sy2sb.hpp"
#include "support.hpp"

namespace keig::test {
namespace {

// ||A Q - Q R||_F / (||A||_F n eps) for full host matrices.
template <class T>
double similarity_error(const HostMatrix<T>& a, const HostMatrix<T>& q, const HostMatrix<T>& r) {
  const index_t n = a.extent(0);
  double num = 0;
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < n; ++i) {
      T aq = T(0), qr = T(0);
      for (index_t k = 0; k < n; ++k) {
        aq += a(i, k) * q(k, j);
        qr += q(i, k) * r(k, j);
      }
      num += abs_squared(T(aq - qr));
    }
  return std::sqrt(num) / (std::max(frobenius_norm(a), 1e-300) * std::max<index_t>(n, 1) * double(unit_roundoff<T>()));
}

template <class T>
HostMatrix<T> tridiagonal_matrix(const HostVector<real_t<T>>& d, const HostVector<real_t<T>>& e) {
  const index_t n = d.extent(0);
  HostMatrix<T> tri("tri", n, n);
  for (index_t i = 0; i < n; ++i) tri(i, i) = T(d(i));
  for (index_t i = 0; i + 1 < n; ++i) tri(i + 1, i) = tri(i, i + 1) = T(e(i));
  return tri;
}

// A random Hermitian matrix of half-bandwidth b (zero outside the band).
template <class T>
HostMatrix<T> random_band(index_t n, index_t b, std::mt19937_64& rng) {
  HostMatrix<T> a("band", n, n);
  for (index_t j = 0; j < n; ++j) {
    a(j, j) = T(real_part(random_scalar<T>(rng)));
    for (index_t i = j + 1; i < n && i <= j + b; ++i) {
      a(i, j) = random_scalar<T>(rng);
      a(j, i) = conjugate(a(i, j));
    }
  }
  return a;
}

// After sy2sb on a (from `original`): Q1 formed by bt_sy2sb from the stored
// reflectors is orthogonal and Q1^H A Q1 is the band B in a's lower band.
template <class T>
void expect_band_similar(const backends::Context<Space>& ctx, const HostMatrix<T>& original,
                         const SpaceMatrix<T>& a, const SpaceVector<T>& tau, index_t b) {
  const index_t n = original.extent(0);
  auto q = to_space(generate<T>(MatrixKind::Identity, n, 1).a);
  SpaceVector<T> owork("owork", stages::ormtr_workspace_size<T, Space>(n, n, 16));
  stages::bt_sy2sb<T, Space>(ctx, to_matrix<Space>(a), b, to_vector<Space>(tau), to_matrix<Space>(q),
                             to_vector<Space>(owork), 16);
  Kokkos::fence();
  auto ah = to_host(a);
  HostMatrix<T> band("band", n, n);
  for (index_t j = 0; j < n; ++j) {
    band(j, j) = T(real_part(ah(j, j)));
    for (index_t i = j + 1; i <= j + b && i < n; ++i) {
      band(i, j) = ah(i, j);
      band(j, i) = conjugate(ah(i, j));
    }
  }
  const HostMatrix<T> qh = to_host(q);
  EXPECT_LE(similarity_error(original, qh, band), kContract);
  EXPECT_LE(scaled_orthogonality(qh, n), kContract);
}

template <class T>
class Sy2sb : public ::testing::Test {};
TYPED_TEST_SUITE(Sy2sb, Scalars);

// Sizes around the band width, both triangles, narrow and default bands,
// both trailing updates: the result is banded (nothing below the band is
// part of B) and similar to A. The unreferenced triangle holds NaN.
TYPED_TEST(Sy2sb, ReducesToBandWithUnitaryQ) {
  using T = TypeParam;
  backends::Context<Space> ctx{Space()};
  // Panels: the backend's geqrf everywhere, and keig's panel_qr where it runs.
  std::vector<stages::Sy2sbPanel> panels{stages::Sy2sbPanel::Vendor};
  if (stages::panel_qr_available<Space>(stages::Sy2sbTuning<Space>::default_band))
    panels.push_back(stages::Sy2sbPanel::Keig);
  // keig's CholeskyQR2 panel (real scalars, every backend).
  if (stages::panel_cholqr_available<T>(stages::Sy2sbTuning<Space>::default_band))
    panels.push_back(stages::Sy2sbPanel::CholQr);
  for (index_t b : {index_t(1), index_t(3), index_t(8), stages::Sy2sbTuning<Space>::default_band}) {
    for (index_t n : {index_t(1), index_t(2), b - 1, b, b + 1, 2 * b + 3, index_t(97), index_t(150)}) {
      if (n < 1) continue;
      for (Uplo uplo : {Uplo::Lower, Uplo::Upper})
      for (stages::Sy2sbUpdate update :
           {stages::Sy2sbUpdate::Symmetric, stages::Sy2sbUpdate::Full, stages::Sy2sbUpdate::Blocked})
      for (stages::Sy2sbPanel panel : panels)
      for (index_t group : {index_t(1), index_t(2), index_t(3), index_t(4)})
      for (stages::Sy2sbProduct product : {stages::Sy2sbProduct::Skinny, stages::Sy2sbProduct::Gemm}) {
        // Where keig's tensor-core X = A22 V runs (Blocked, real double on
        // GPUs) both products; elsewhere one run with the default (Auto).
        const bool skinny = update == stages::Sy2sbUpdate::Blocked && backends::symm_skinny_available<T>(ctx, b);
        if (!skinny && product == stages::Sy2sbProduct::Gemm) continue;
        if (!skinny) product = stages::Sy2sbProduct::Auto;
        // Blocked: block columns of 2b + 1 (not a multiple of b), so the
        // block boundaries move relative to the panels. Groups of 1 to 4
        // panels per update: whole and part groups at the end of the matrix.
        // Groups of 2 and 4 form the diagonal blocks' lower triangles in
        // sub-columns of 2 (then mirrored), groups of 1 and 3 whole.
        const index_t block = update == stages::Sy2sbUpdate::Blocked ? 2 * b + 1 : 0;
        const index_t diagonal_split = group % 2 == 0 ? 2 : block + 1;
        SCOPED_TRACE(describe("sy2sb", n, uplo) + " b=" + std::to_string(b) +
                     (update == stages::Sy2sbUpdate::Full      ? " full"
                      : update == stages::Sy2sbUpdate::Blocked ? " blocked nb=" + std::to_string(block)
                                                               : " symmetric") +
                     (panel == stages::Sy2sbPanel::Vendor ? " vendor panel"
                      : panel == stages::Sy2sbPanel::Keig ? " keig panel"
                                                          : " cholqr panel") +
                     " group=" + std::to_string(group) + " diagonal split=" + std::to_string(diagonal_split) +
                     (skinny ? (product == stages::Sy2sbProduct::Gemm ? " gemm X" : " skinny X") : ""));
        const auto problem = generate<T>(MatrixKind::Random, n, n + 7);
        HostMatrix<T> input("input", n, n);
        for (index_t j = 0; j < n; ++j)
          for (index_t i = 0; i < n; ++i)
            input(i, j) = (uplo == Uplo::Lower ? i >= j : i <= j) ? problem.a(i, j)
                                                                   : T(std::numeric_limits<real_t<T>>::quiet_NaN());
        auto a = to_space(input);
        SpaceVector<T> tau("tau", n), work("work", stages::sy2sb_workspace_size<T, Space>(n, b, group));
        stages::Sy2sbOptions options{update, block, panel};
        options.group = group;
        options.product = product;
        options.diagonal_split = diagonal_split;
        stages::sy2sb<T, Space>(ctx, uplo, to_matrix<Space>(a), to_vector<Space>(tau), to_vector<Space>(work), b,
                                options);
        expect_band_similar<T>(ctx, problem.a, a, tau, b);
      }
    }
  }
}

// The CholeskyQR2 panel on matrices whose panels it must refuse (zero below
// the band: tridiagonal, diagonal, zero) or accept (dense, graded and
// clustered spectra), mixed within one reduction: B similar to A, Q
// orthogonal. Real scalars.
TYPED_TEST(Sy2sb, CholQrPanelsOnStructuredMatrices) {
  using T = TypeParam;
  if constexpr (!is_complex_v<T>) {
    backends::Context<Space> ctx{Space()};
    for (MatrixKind kind : {MatrixKind::Wilkinson, MatrixKind::Diagonal, MatrixKind::Zero, MatrixKind::Graded,
                            MatrixKind::Clustered, MatrixKind::Uniform})
      for (index_t b : {index_t(8), stages::Sy2sbTuning<Space>::default_band}) {
        const index_t n = 3 * b + 37;
        SCOPED_TRACE(describe("sy2sb cholqr", n, Uplo::Lower) + " " + to_string(kind) + " b=" + std::to_string(b));
        const auto problem = generate<T>(kind, n, 11);
        auto a = to_space(problem.a);
        SpaceVector<T> tau("tau", n), work("work", stages::sy2sb_workspace_size<T, Space>(n, b));
        stages::Sy2sbOptions options;
        options.panel = stages::Sy2sbPanel::CholQr;
        stages::sy2sb<T, Space>(ctx, Uplo::Lower, to_matrix<Space>(a), to_vector<Space>(tau), to_vector<Space>(work), b,
                                options);
        expect_band_similar<T>(ctx, problem.a, a, tau, b);
      }
  }
}

// Bad arguments: each refused with InvalidArgument naming it, A untouched.
TYPED_TEST(Sy2sb, RejectsBadArguments) {
  using T = TypeParam;
  backends::Context<Space> ctx{Space()};
  const index_t n = 12, b = 3;
  SpaceMatrix<T> a("a", n, n);
  Kokkos::deep_copy(a, T(1));
  SpaceVector<T> tau("tau", n), work("work", stages::sy2sb_workspace_size<T, Space>(n, b));
  SpaceVector<T> short_work("short_work", stages::sy2sb_workspace_size<T, Space>(n, b) - 1);
  const auto call = [&](index_t band, const SpaceVector<T>& w, index_t block) {
    stages::sy2sb<T, Space>(ctx, Uplo::Lower, to_matrix<Space>(a), to_vector<Space>(tau), to_vector<Space>(w), band,
                            stages::Sy2sbOptions{stages::Sy2sbUpdate::Blocked, block});
  };
  const auto expect_refused = [&](const std::string& argument, const auto& f) {
    try {
      f();
      ADD_FAILURE() << "no exception for a bad " << argument;
    } catch (const InvalidArgument& error) {
      EXPECT_EQ(error.argument(), argument) << error.what();
    }
  };
  expect_refused("b", [&] { call(0, work, 0); });
  expect_refused("work", [&] { call(b, short_work, 0); });
  expect_refused("block", [&] { call(b, work, -1); });
  const auto call_group = [&](index_t group) {
    stages::Sy2sbOptions options;
    options.group = group;
    stages::sy2sb<T, Space>(ctx, Uplo::Lower, to_matrix<Space>(a), to_vector<Space>(tau), to_vector<Space>(work), b,
                            options);
  };
  expect_refused("group", [&] { call_group(-1); });
  expect_refused("diagonal_split", [&] {
    stages::Sy2sbOptions options;
    options.diagonal_split = -1;
    stages::sy2sb<T, Space>(ctx, Uplo::Lower, to_matrix<Space>(a), to_vector<Space>(tau), to_vector<Space>(work), b,
                            options);
  });
  // The tensor-core product only with the Blocked update, where it runs.
  const auto call_skinny = [&](stages::Sy2sbUpdate update) {
    stages::Sy2sbOptions options{update};
    options.product = stages::Sy2sbProduct::Skinny;
    stages::sy2sb<T, Space>(ctx, Uplo::Lower, to_matrix<Space>(a), to_vector<Space>(tau), to_vector<Space>(work), b,
                            options);
  };
  expect_refused("product", [&] { call_skinny(stages::Sy2sbUpdate::Full); });
  if (!backends::symm_skinny_available<T>(ctx, b))
    expect_refused("product", [&] { call_skinny(stages::Sy2sbUpdate::Blocked); });
  // The workspace was sized for the default group: four times as many
  // panels per update need more of it.
  expect_refused("work", [&] { call_group(4 * stages::sy2sb_group<Space>(0, b)); });
  Kokkos::fence();
  const auto ah = to_host(a);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < n; ++i) EXPECT_EQ(ah(i, j), T(1)) << "A changed by a refused call";
}

template <class T>
class Sb2st : public ::testing::Test {};
TYPED_TEST_SUITE(Sb2st, Scalars);

// Band -> tridiagonal: Q2^H B Q2 = T with Q2 = bt_sb2st(I) unitary, and the
// eigenvalues-only run (no reflectors kept) gives the same tridiagonal.
TYPED_TEST(Sb2st, ReducesBandToTridiagonalWithUnitaryQ) {
  using T = TypeParam;
  using R = real_t<T>;
  backends::Context<Space> ctx{Space()};
  std::mt19937_64 rng(7);
  for (index_t b : {index_t(1), index_t(2), index_t(3), index_t(8), index_t(32)}) {
    for (index_t n : {index_t(1), index_t(2), index_t(3), b, b + 1, 2 * b + 1, 3 * b + 2, index_t(100), index_t(161)}) {
      if (b == 1 && n > 100) continue;  // b = 1 chases only phases: O(n^2) launches, nothing new at this size
      SCOPED_TRACE("sb2st n=" + std::to_string(n) + " b=" + std::to_string(b));
      const HostMatrix<T> full = random_band<T>(n, b, rng);
      auto a = to_space(full);
      const index_t rows = stages::sb2st_band_rows(b);
      SpaceMatrix<T> ab("ab", rows, n), ab2("ab2", rows, n), store("store", n, n);
      SpaceVector<R> d("d", n), e("e", n), d2("d2", n), e2("e2", n);
      SpaceVector<T> work("work", stages::sb2st_workspace_size(n, b));
      stages::dense_to_band<T, Space>(Space(), to_matrix<Space>(a), b, to_matrix<Space>(ab));
      Kokkos::deep_copy(ab2, ab);
      stages::sb2st<T, Space>(Space(), b, to_matrix<Space>(ab), to_vector<Space>(d), to_vector<Space>(e),
                              to_matrix<Space>(store), to_vector<Space>(work));
      stages::sb2st<T, Space>(Space(), b, to_matrix<Space>(ab2), to_vector<Space>(d2), to_vector<Space>(e2),
                              Matrix<T, Space>(), to_vector<Space>(work));
      // Both back-transformation variants: Q2 = bt(I).
      auto q = to_space(generate<T>(MatrixKind::Identity, n, 1).a);
      auto q1 = to_space(generate<T>(MatrixKind::Identity, n, 1).a);
      SpaceVector<T> bwork("bwork", stages::bt_sb2st_workspace_size<T>(n, b));
      stages::bt_sb2st_blocked<T, Space>(ctx, b, to_matrix<Space>(store), to_matrix<Space>(q),
                                         to_vector<Space>(bwork));
      stages::bt_sb2st_reflectors<T, Space>(Space(), b, to_matrix<Space>(store), to_matrix<Space>(q1));
      Kokkos::fence();
      const auto dh = to_host(d), eh = to_host(e), d2h = to_host(d2), e2h = to_host(e2);
      for (const HostMatrix<T>& qh : {to_host(q), to_host(q1)}) {
        EXPECT_LE(similarity_error(full, qh, tridiagonal_matrix<T>(dh, eh)), kContract);
        EXPECT_LE(scaled_orthogonality(qh, n), kContract);
      }
      for (index_t i = 0; i < n; ++i) {
        EXPECT_EQ(dh(i), d2h(i)) << "d(" << i << ") differs without stored reflectors";
        if (i + 1 < n) EXPECT_EQ(eh(i), e2h(i)) << "e(" << i << ") differs without stored reflectors";
      }
    }
  }
}

// sb2st's reflector storage (n x n) for a random Hermitian band of half-bandwidth b.
template <class T>
SpaceMatrix<T> bulge_chase_reflectors(index_t n, index_t b, std::mt19937_64& rng) {
  using R = real_t<T>;
  const auto a = to_space(random_band<T>(n, b, rng));
  SpaceMatrix<T> ab("ab", stages::sb2st_band_rows(b), n), store("store", n, n);
  SpaceVector<R> d("d", n), e("e", n);
  SpaceVector<T> work("work", stages::sb2st_workspace_size(n, b));
  stages::dense_to_band<T, Space>(Space(), to_matrix<Space>(a), b, to_matrix<Space>(ab));
  stages::sb2st<T, Space>(Space(), b, to_matrix<Space>(ab), to_vector<Space>(d), to_vector<Space>(e),
                          to_matrix<Space>(store), to_vector<Space>(work));
  return store;
}

// The blocked variant (gemms over column chunks, full-height blocks batched,
// blocks cut by the matrix's bottom alone) against the reflector kernel on a
// random n x m Z: sizes that are multiples of nothing, chunks that split the
// columns unevenly, and a Z that is a column window of a wider matrix.
TYPED_TEST(Sb2st, BlockedMatchesReflectorsOverColumnChunks) {
  using T = TypeParam;
  backends::Context<Space> ctx{Space()};
  std::mt19937_64 rng(11);
  struct Case {
    index_t n, b, m, chunk;
  };
  for (const Case c : {Case{131, 3, 13, 5}, Case{203, 8, 17, 5}, Case{277, 32, 11, 4}, Case{150, 32, 9, 2048},
                       Case{100, 8, 7, 1}, Case{66, 32, 6, 5}, Case{34, 3, 5, 3}}) {
    const index_t n = c.n, b = c.b, m = c.m;
    SCOPED_TRACE("bt_sb2st n=" + std::to_string(n) + " b=" + std::to_string(b) + " m=" + std::to_string(m) +
                 " chunk=" + std::to_string(c.chunk));
    const SpaceMatrix<T> store = bulge_chase_reflectors<T>(n, b, rng);
    // Z in columns [2, 2 + m) of a wider matrix whose other columns must not change.
    HostMatrix<T> zh("z", n, m + 4);
    for (index_t j = 0; j < m + 4; ++j)
      for (index_t i = 0; i < n; ++i) zh(i, j) = random_scalar<T>(rng);
    auto zb = to_space(zh), zr = to_space(zh);
    const auto window = [&](const SpaceMatrix<T>& full_z) { return columns(to_matrix<Space>(full_z), 2, m); };
    SpaceVector<T> bwork("bwork", stages::bt_sb2st_workspace_size<T>(n, b, c.chunk < m ? c.chunk : m));
    stages::bt_sb2st_blocked<T, Space>(ctx, b, to_matrix<Space>(store), window(zb), to_vector<Space>(bwork), c.chunk);
    stages::bt_sb2st_reflectors<T, Space>(Space(), b, to_matrix<Space>(store), window(zr));
    Kokkos::fence();
    const HostMatrix<T> bh = to_host(zb), rh = to_host(zr);
    double diff = 0;
    for (index_t j = 0; j < m + 4; ++j)
      for (index_t i = 0; i < n; ++i) {
        if (j < 2 || j >= m + 2) EXPECT_EQ(bh(i, j), zh(i, j)) << "column " << j << " outside Z changed";
        diff += abs_squared(T(bh(i, j) - rh(i, j)));
      }
    HostMatrix<T> zwin("zwin", n, m);
    for (index_t j = 0; j < m; ++j)
      for (index_t i = 0; i < n; ++i) zwin(i, j) = zh(i, j + 2);
    EXPECT_LE(std::sqrt(diff) / (frobenius_norm(zwin) * n * double(unit_roundoff<T>())), kContract);
  }
}

// A random band's bulge-chase reflectors, a random n x m Z and Z through
// the reflector kernel: the reference for the blocked variant's tunings.
template <class T>
struct BlockedReference {
  index_t n, b, m;
  SpaceMatrix<T> store;
  HostMatrix<T> z, expected;
  mutable int calls = 0;  // expect_match alternates the workspace it gives

  BlockedReference(index_t n_, index_t b_, index_t m_, std::mt19937_64& rng)
      : n(n_), b(b_), m(m_), store(bulge_chase_reflectors<T>(n_, b_, rng)), z("z", n_, m_) {
    for (index_t j = 0; j < m; ++j)
      for (index_t i = 0; i < n; ++i) z(i, j) = random_scalar<T>(rng);
    auto zr = to_space(z);
    stages::bt_sb2st_reflectors<T, Space>(Space(), b, to_matrix<Space>(store), to_matrix<Space>(zr));
    expected = to_host(zr);
  }

  // bt_sb2st_blocked with `tuning` on a copy of z, against the reflector
  // kernel. Calls alternate between a workspace with room for the device
  // plan (the solver's: bt_sb2st keeps the plan there) and one without (it
  // allocates the plan itself), so every family of tunings runs both.
  void expect_match(const backends::Context<Space>& ctx, const stages::BtSb2stTuning& tuning) const {
    stages::BtSb2stTuning sized = tuning;
    sized.chunk = std::min(tuning.chunk, m);
    const bool plan_in_work = calls++ % 2 == 0;
    SCOPED_TRACE(plan_in_work ? "plan in the workspace" : "plan allocated");
    auto zb = to_space(z);
    SpaceVector<T> work("bwork", plan_in_work ? stages::bt_sb2st_workspace_size<T>(n, b, tuning, m)
                                              : stages::bt_sb2st_workspace_size<T>(n, b, sized));
    stages::bt_sb2st_blocked<T, Space>(ctx, b, to_matrix<Space>(store), to_matrix<Space>(zb), to_vector<Space>(work),
                                       tuning);
    Kokkos::fence();
    const HostMatrix<T> bh = to_host(zb);
    double diff = 0;
    for (index_t j = 0; j < m; ++j)
      for (index_t i = 0; i < n; ++i) diff += abs_squared(T(bh(i, j) - expected(i, j)));
    EXPECT_LE(std::sqrt(diff) / (frobenius_norm(z) * n * double(unit_roundoff<T>())), kContract);
  }
};

// Every block shape and T-factor path of the blocked variant against the
// reflector kernel: sigma = 1 (one reflector per block), 3 (n - 1 not a
// multiple of it), 32, 64 (> b) and beyond the n - 1 sweeps (one group);
// chunks that split m unevenly and that exceed it; Dots and Gram T factors
// (cut blocks at the bottom and sweeps without step k give tau = 0 columns);
// three gemms and W = V T folded; T factors formed one wave at a time and
// three waves at a time.
TYPED_TEST(Sb2st, BlockedTuningsMatchReflectors) {
  using T = TypeParam;
  backends::Context<Space> ctx{Space()};
  std::mt19937_64 rng(23);
  struct Case {
    index_t n, b, m;
  };
  for (const Case c : {Case{131, 3, 13}, Case{203, 8, 7}, Case{150, 32, 9}, Case{97, 64, 5}}) {
    const BlockedReference<T> ref(c.n, c.b, c.m, rng);
    for (index_t sigma : {index_t(1), index_t(3), index_t(32), index_t(64), c.n + 5})
      for (index_t chunk : {index_t(4), index_t(2048)})
        for (auto factor : {stages::BtSb2stTFactor::Dots, stages::BtSb2stTFactor::Gram})
          for (bool fold : {false, true}) {
            SCOPED_TRACE("bt_sb2st n=" + std::to_string(c.n) + " b=" + std::to_string(c.b) +
                         " m=" + std::to_string(c.m) + " sigma=" + std::to_string(sigma) +
                         " chunk=" + std::to_string(chunk) +
                         (factor == stages::BtSb2stTFactor::Dots ? " dots" : " gram") + (fold ? " fold" : ""));
            stages::BtSb2stTuning tuning;
            tuning.sweeps_per_block = sigma;
            tuning.chunk = chunk;
            tuning.t_factor = factor;
            tuning.fold_t = fold;
            tuning.waves_per_batch = chunk == 4 ? 1 : 3;  // the default 8 runs in the tests above
            ref.expect_match(ctx, tuning);
          }
  }
}

// Queued sequences (queue_batches, queue_copies) against the reflector
// kernel: every column on 64-column tiles, each batch of a launch in its own
// copy of V and W; launches of one batch, launches cut short by the last
// batch, copies to spare (the factor launches then run beside the launch
// before) and a tiling left over (window_tiles, remainder_columns) that the
// queue ignores.
template <class T>
void expect_queued_matches(const backends::Context<Space>& ctx, const BlockedReference<T>& ref) {
  struct Queue {
    index_t launch, copies;
  };
  for (index_t batch : {index_t(1), index_t(3)})
    for (const Queue q : {Queue{1, 0}, Queue{1, 3}, Queue{2, 0}, Queue{2, 4}, Queue{5, 0}, Queue{5, 7}}) {
      SCOPED_TRACE("queued n=" + std::to_string(ref.n) + " b=" + std::to_string(ref.b) + " m=" +
                   std::to_string(ref.m) + " batch=" + std::to_string(batch) + " queue=" + std::to_string(q.launch) +
                   ":" + std::to_string(q.copies));
      stages::BtSb2stTuning tuning;
      tuning.sweeps_per_block = 64;
      tuning.chunk = ref.m;
      tuning.t_factor = stages::BtSb2stTFactor::Gram;
      tuning.fold_t = true;
      tuning.window_apply = true;
      tuning.queue_batches = q.launch;
      tuning.queue_copies = q.copies;
      tuning.window_tiles = q.launch == 2 ? 1 : 0;
      tuning.remainder_columns = q.launch == 2 ? 32 : 0;
      tuning.waves_per_batch = batch;
      ref.expect_match(ctx, tuning);
    }
}

// The window apply (BtSb2stTuning::window_apply: on CUDA devices, every
// scalar, sigma = 64, b <= 65, one kernel per batch over tiles of 64 or 128
// window columns, half as many columns of a complex Z) against the
// reflector kernel: several column tiles, a part tile, cut blocks at the
// bottom, batches of 1 and 8 waves; with the first tiles on the window, the
// rest on the gemms or on narrow window tiles of 16 or 32 columns
// (remainder_columns). Real scalars with every column on the window form
// their factors with form_band_block_factors, the others (and the split with
// gemms) with the batched gemms and the pack. Other spaces run the batched
// gemms here (the same contract).
TYPED_TEST(Sb2st, WindowApplyMatchesReflectors) {
  using T = TypeParam;
  backends::Context<Space> ctx{Space()};
  std::mt19937_64 rng(29);
  struct Case {
    index_t n, b, m;
  };
  for (const Case c : {Case{260, 64, 200}, Case{97, 64, 5}, Case{200, 32, 130}, Case{150, 48, 129}}) {
    const BlockedReference<T> ref(c.n, c.b, c.m, rng);
    for (index_t batch : {index_t(1), index_t(8)})
      for (int columns : {64, 128})
      for (index_t tiles : {index_t(0), index_t(1), index_t(2)})
      for (int rest : {0, 16, 32}) {
        // tiles > 0: the window takes the first tiles' columns (all of them
        // where m is smaller), the gemms the rest in chunks of 50 columns
        // (rest = 0) or window tiles of `rest` columns; tiles = 0 ignores rest.
        if (tiles == 0 && rest > 0) continue;
        SCOPED_TRACE("window n=" + std::to_string(c.n) + " b=" + std::to_string(c.b) + " m=" + std::to_string(c.m) +
                     " batch=" + std::to_string(batch) + " columns=" + std::to_string(columns) +
                     " tiles=" + std::to_string(tiles) + " rest=" + std::to_string(rest));
        stages::BtSb2stTuning tuning;
        tuning.sweeps_per_block = 64;
        tuning.chunk = tiles > 0 ? 50 : c.m;
        tuning.window_tiles = tiles;
        tuning.t_factor = stages::BtSb2stTFactor::Gram;
        tuning.fold_t = true;
        tuning.window_apply = true;
        tuning.window_columns = columns;
        tuning.remainder_columns = rest;
        tuning.waves_per_batch = batch;
        ref.expect_match(ctx, tuning);
      }
    expect_queued_matches(ctx, ref);
  }
  // Many tiles (more than a GPU's places) in the queued sequences, where
  // jobs of one batch run beside the next batch's and its factor launches.
  if (backends::is_cuda_space_v<Space>) expect_queued_matches(ctx, BlockedReference<T>(300, 64, 17000, rng));
}

// Bad tunings are refused with InvalidArgument naming the field, before Z is
// touched: sigma = 0, chunk = 0, waves_per_batch = 0, and a sigma whose T-factor scratch would
// exceed Kokkos 3.4's 48 KB per team.
TYPED_TEST(Sb2st, BlockedRejectsBadTuning) {
  using T = TypeParam;
  backends::Context<Space> ctx{Space()};
  const index_t n = 40, b = 4, m = 3;
  SpaceMatrix<T> store("store", n, n), z("z", n, m);
  Kokkos::deep_copy(z, T(1));
  SpaceVector<T> work("work", stages::bt_sb2st_workspace_size<T>(n, b));
  const auto expect_refused = [&](const stages::BtSb2stTuning& tuning, const std::string& argument) {
    try {
      stages::bt_sb2st_blocked<T, Space>(ctx, b, to_matrix<Space>(store), to_matrix<Space>(z), to_vector<Space>(work),
                                         tuning);
      ADD_FAILURE() << "no exception for " << argument;
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(e.argument(), argument);
    }
  };
  stages::BtSb2stTuning tuning;
  tuning.sweeps_per_block = 0;
  expect_refused(tuning, "sweeps_per_block");
  EXPECT_THROW(stages::bt_sb2st_workspace_size<T>(n, b, tuning), InvalidArgument);
  tuning.sweeps_per_block = -3;
  expect_refused(tuning, "sweeps_per_block");
  tuning = stages::BtSb2stTuning{};
  tuning.chunk = 0;
  expect_refused(tuning, "chunk");
  EXPECT_THROW(stages::bt_sb2st_workspace_size<T>(n, b, tuning), InvalidArgument);
  EXPECT_THROW((stages::bt_sb2st_blocked<T, Space>(ctx, b, to_matrix<Space>(store), to_matrix<Space>(z),
                                                   to_vector<Space>(work), index_t(0))),
               InvalidArgument);
  tuning = stages::BtSb2stTuning{};
  tuning.waves_per_batch = 0;
  expect_refused(tuning, "waves_per_batch");
  EXPECT_THROW(stages::bt_sb2st_workspace_size<T>(n, b, tuning), InvalidArgument);
  tuning = stages::BtSb2stTuning{};
  tuning.window_apply = true;
  tuning.window_columns = 96;
  expect_refused(tuning, "window_columns");
  tuning = stages::BtSb2stTuning{};
  tuning.window_apply = true;
  tuning.window_tiles = -1;
  expect_refused(tuning, "window_tiles");
  tuning = stages::BtSb2stTuning{};
  tuning.window_apply = true;
  tuning.window_tiles = 1;
  tuning.remainder_columns = 64;
  expect_refused(tuning, "remainder_columns");
  for (index_t queue : {index_t(-1), index_t(backends::cuda::band_batches_max + 1)}) {
    tuning = stages::BtSb2stTuning{};
    tuning.queue_batches = queue;
    expect_refused(tuning, "queue_batches");
  }
  tuning = stages::BtSb2stTuning{};
  tuning.window_apply = true;
  tuning.window_columns = 128;
  tuning.queue_batches = 2;
  expect_refused(tuning, "queue_batches");
  for (index_t copies : {index_t(-1), index_t(2)}) {
    tuning = stages::BtSb2stTuning{};
    tuning.window_apply = true;
    tuning.queue_batches = 3;
    tuning.queue_copies = copies;  // fewer than a launch's batches
    expect_refused(tuning, "queue_copies");
  }
  for (auto factor : {stages::BtSb2stTFactor::Dots, stages::BtSb2stTFactor::Gram}) {
    tuning = stages::BtSb2stTuning{};
    tuning.t_factor = factor;
    tuning.sweeps_per_block = index_t(1) << 20;
    expect_refused(tuning, "sweeps_per_block");
  }
  const auto zh = to_host(z);
  for (index_t j = 0; j < m; ++j)
    for (index_t i = 0; i < n; ++i) EXPECT_EQ(zh(i, j), T(1)) << "Z changed by a refused call";
}

// The tiled sb2st task against the in-place one: the same similarity
// contract, and a tridiagonal that agrees to rounding. The persistent kernel
// (the GPU default) runs the tiled task in another order: any missed
// dependency between its teams would change the result, which must equal the
// wave-by-wave one bit for bit. Host execution spaces have no team of
// G x G threads: there both must refuse with InvalidArgument.
TYPED_TEST(Sb2st, TiledAndGlobalKernelsAgree) {
  using T = TypeParam;
  using R = real_t<T>;
  std::mt19937_64 rng(17);
  // One kernel on the band of `full`: the tridiagonal and the reflectors.
  struct Chased {
    HostVector<R> d, e;
    HostMatrix<T> store;
  };
  const auto chase = [&](const HostMatrix<T>& full, index_t b, stages::Sb2stKernel kernel) {
    const index_t n = full.extent(0);
    const auto a = to_space(full);
    SpaceMatrix<T> ab("ab", stages::sb2st_band_rows(b), n), store("store", n, n);
    SpaceVector<R> d("d", n), e("e", n);
    SpaceVector<T> work("work", stages::sb2st_workspace_size(n, b));
    stages::dense_to_band<T, Space>(Space(), to_matrix<Space>(a), b, to_matrix<Space>(ab));
    stages::sb2st<T, Space>(Space(), b, to_matrix<Space>(ab), to_vector<Space>(d), to_vector<Space>(e),
                            to_matrix<Space>(store), to_vector<Space>(work), kernel);
    Kokkos::fence();
    return Chased{to_host(d), to_host(e), to_host(store)};
  };
  // Entries in which two chases differ (d, e and the stored reflectors).
  const auto differing = [](const Chased& x, const Chased& y) {
    const index_t n = x.d.extent(0);
    index_t differ = 0;
    for (index_t i = 0; i < n; ++i) differ += (x.d(i) != y.d(i)) + (i + 1 < n && x.e(i) != y.e(i));
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < j; ++i) differ += x.store(i, j) != y.store(i, j);
    return differ;
  };
  // Hosts: no tiled task; Persistent and Auto are the pipelined chase (one
  // region, teams claiming sweeps), which runs the wave schedule's tasks in
  // another order and must match it bit for bit.
  if (!backends::is_cuda_space_v<Space>) {
    {
      const index_t n = 20, b = 4;
      SpaceMatrix<T> ab("ab", stages::sb2st_band_rows(b), n);
      SpaceVector<R> d("d", n), e("e", n);
      SpaceVector<T> work("work", stages::sb2st_workspace_size(n, b));
      EXPECT_THROW((stages::sb2st<T, Space>(Space(), b, to_matrix<Space>(ab), to_vector<Space>(d), to_vector<Space>(e),
                                            Matrix<T, Space>(), to_vector<Space>(work), stages::Sb2stKernel::Tiled)),
                   InvalidArgument);
    }
    for (index_t b : {index_t(1), index_t(3), index_t(8), index_t(32)})
      for (index_t n : {index_t(2), b + 1, 2 * b + 1, 3 * b + 2, index_t(100), index_t(301), index_t(500)}) {
        SCOPED_TRACE("sb2st host pipeline n=" + std::to_string(n) + " b=" + std::to_string(b));
        const HostMatrix<T> full = random_band<T>(n, b, rng);
        const Chased global = chase(full, b, stages::Sb2stKernel::Global);
        EXPECT_EQ(differing(global, chase(full, b, stages::Sb2stKernel::Persistent)), 0);
        EXPECT_EQ(differing(global, chase(full, b, stages::Sb2stKernel::Auto)), 0);
      }
    return;
  }
  // Persistent against Tiled, bit for bit: also with more sweeps in flight
  // than multiprocessors (b = 1, n = 500: each team chases several sweeps).
  const auto persistent_matches = [&](const Chased& tiled, const HostMatrix<T>& full, index_t b) {
    EXPECT_EQ(differing(tiled, chase(full, b, stages::Sb2stKernel::Persistent)), 0)
        << "persistent and wave-by-wave tiled kernels differ";
  };
  for (index_t b : {index_t(1), index_t(3), index_t(8), index_t(32), index_t(63), index_t(64)}) {
    for (index_t n : {index_t(2), b + 1, 2 * b + 1, 3 * b + 2, index_t(100), index_t(161), index_t(300)}) {
      SCOPED_TRACE("sb2st kernels n=" + std::to_string(n) + " b=" + std::to_string(b));
      const HostMatrix<T> full = random_band<T>(n, b, rng);
      const Chased tiled = chase(full, b, stages::Sb2stKernel::Tiled);
      const Chased global = chase(full, b, stages::Sb2stKernel::Global);
      persistent_matches(tiled, full, b);
      auto q = to_space(generate<T>(MatrixKind::Identity, n, 1).a);
      const auto store = to_space(tiled.store);
      stages::bt_sb2st_reflectors<T, Space>(Space(), b, to_matrix<Space>(store), to_matrix<Space>(q));
      Kokkos::fence();
      const auto &dh = tiled.d, &eh = tiled.e, &d2h = global.d, &e2h = global.e;
      const auto qh = to_host(q);
      EXPECT_LE(similarity_error(full, qh, tridiagonal_matrix<T>(dh, eh)), kContract);
      EXPECT_LE(scaled_orthogonality(qh, n), kContract);
      // The two kernels' tridiagonals need not agree entry by entry (the
      // reduction's entries can be sensitive), but their eigenvalues must.
      const auto w = reference_eigenvalues<T>(tridiagonal_matrix<T>(dh, eh));
      const auto w2 = reference_eigenvalues<T>(tridiagonal_matrix<T>(d2h, e2h));
      const double tol = 64 * double(n) * double(unit_roundoff<T>()) * std::max(frobenius_norm(full), 1e-300);
      for (index_t i = 0; i < n; ++i) EXPECT_LE(std::abs(double(w[i]) - double(w2[i])), tol) << "eigenvalue " << i;
    }
  }
  for (index_t b : {index_t(1), index_t(8), index_t(64)}) {
    const index_t n = b == 1 ? 500 : 24 * b + 5;
    SCOPED_TRACE("sb2st persistent n=" + std::to_string(n) + " b=" + std::to_string(b));
    const HostMatrix<T> full = random_band<T>(n, b, rng);
    persistent_matches(chase(full, b, stages::Sb2stKernel::Tiled), full, b);
  }
}

// Bands wider than 64: the tiled task has no team for them (G = 32 would be
// 1024 threads, more than fit the kernel's registers). The default kernel
// must still reduce the band (falling back to the global one), and an
// explicit tiled or persistent request either runs correctly or is refused
// with InvalidArgument naming the kernel, never a launch error.
TYPED_TEST(Sb2st, WideBandsReduceOrRefuseTiles) {
  using T = TypeParam;
  using R = real_t<T>;
  std::mt19937_64 rng(29);
  for (index_t b : {index_t(65), index_t(100)}) {
    const index_t n = 2 * b + 37;
    const HostMatrix<T> full = random_band<T>(n, b, rng);
    const auto a = to_space(full);
    for (auto kernel : {stages::Sb2stKernel::Auto, stages::Sb2stKernel::Tiled, stages::Sb2stKernel::Persistent}) {
      SCOPED_TRACE("sb2st wide band n=" + std::to_string(n) + " b=" + std::to_string(b) +
                   " kernel=" + std::to_string(static_cast<int>(kernel)));
      SpaceMatrix<T> ab("ab", stages::sb2st_band_rows(b), n), store("store", n, n);
      SpaceVector<R> d("d", n), e("e", n);
      SpaceVector<T> work("work", stages::sb2st_workspace_size(n, b));
      stages::dense_to_band<T, Space>(Space(), to_matrix<Space>(a), b, to_matrix<Space>(ab));
      try {
        stages::sb2st<T, Space>(Space(), b, to_matrix<Space>(ab), to_vector<Space>(d), to_vector<Space>(e),
                                to_matrix<Space>(store), to_vector<Space>(work), kernel);
      } catch (const InvalidArgument& error) {
        EXPECT_NE(kernel, stages::Sb2stKernel::Auto) << error.what();
        EXPECT_EQ(error.argument(), "kernel") << error.what();
        continue;
      }
      auto q = to_space(generate<T>(MatrixKind::Identity, n, 1).a);
      stages::bt_sb2st_reflectors<T, Space>(Space(), b, to_matrix<Space>(store), to_matrix<Space>(q));
      Kokkos::fence();
      const auto qh = to_host(q);
      EXPECT_LE(similarity_error(full, qh, tridiagonal_matrix<T>(to_host(d), to_host(e))), kContract);
      EXPECT_LE(scaled_orthogonality(qh, n), kContract);
    }
  }
}

TYPED_TEST(Sb2st, RejectsShortBandStorage) {
  using T = TypeParam;
  using R = real_t<T>;
  SpaceMatrix<T> ab("ab", 5, 10);
  SpaceVector<R> d("d", 10), e("e", 10);
  SpaceVector<T> work("work", 100);
  EXPECT_THROW((stages::sb2st<T, Space>(Space(), 3, to_matrix<Space>(ab), to_vector<Space>(d), to_vector<Space>(e),
                                        Matrix<T, Space>(), to_vector<Space>(work))),
               InvalidArgument);
}

}  // namespace
}  // namespace keig::test
