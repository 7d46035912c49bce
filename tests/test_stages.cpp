// keig's own stages on the backend under test, against host references.
#include <cstring>
#include <random>

#include "keig/backends/lapack.hpp"
#include "keig/stages/ormtr.hpp"
#include "keig/stages/symv.hpp"
#include "keig/stages/sytrd.hpp"
#include "support.hpp"

namespace keig::test {
namespace {

template <class T>
class Symv : public ::testing::Test {};
TYPED_TEST_SUITE(Symv, Scalars);

// Odd sizes around the block sizes (64 on GPUs, 128 on hosts), both triangles,
// the unreferenced triangle poisoned with NaN (it must never be read), y
// poisoned when beta = 0.
TYPED_TEST(Symv, MatchesTheFullHermitianProduct) {
  using T = TypeParam;
  using R = real_t<T>;
  std::mt19937_64 rng(42);
  struct Case {
    index_t n, segment;  // segment 0: keig's choice; others exercise the device segments' edges
  };
  for (Case cs : {Case{0, 0}, Case{1, 0}, Case{2, 0}, Case{3, 0}, Case{63, 0}, Case{64, 0}, Case{65, 0}, Case{127, 0},
                  Case{128, 0}, Case{129, 0}, Case{200, 0}, Case{513, 0}, Case{513, 1}, Case{513, 3}, Case{1500, 20}}) {
    const index_t n = cs.n;
    for (Uplo uplo : {Uplo::Lower, Uplo::Upper}) {
      for (bool zero_beta : {false, true}) {
        SCOPED_TRACE(describe("symv", n, uplo) + (zero_beta ? " beta=0" : "") + " segment=" + std::to_string(cs.segment));
        HostMatrix<T> full("full", n, n), stored("stored", n, n);
        for (index_t j = 0; j < n; ++j) {
          full(j, j) = T(real_part(random_scalar<T>(rng)));
          for (index_t i = j + 1; i < n; ++i) {
            full(i, j) = random_scalar<T>(rng);
            full(j, i) = conjugate(full(i, j));
          }
        }
        const R nan = std::numeric_limits<R>::quiet_NaN();
        for (index_t j = 0; j < n; ++j)
          for (index_t i = 0; i < n; ++i) {
            const bool referenced = uplo == Uplo::Lower ? i >= j : i <= j;
            stored(i, j) = referenced ? full(i, j) : T(nan);
          }
        HostVector<T> x("x", n), y0("y0", n);
        for (index_t i = 0; i < n; ++i) {
          x(i) = random_scalar<T>(rng);
          y0(i) = zero_beta ? T(nan) : random_scalar<T>(rng);
        }
        const T alpha = T(R(0.75)), beta = zero_beta ? T(0) : T(R(-0.5));
        auto a = to_space(stored);
        SpaceVector<T> xd("x", n), yd("y", n), work("work", stages::symv_workspace_size<T, Space>(n));
        Kokkos::deep_copy(xd, x);
        Kokkos::deep_copy(yd, y0);
        stages::symv<T, Space>(Space(), uplo, alpha, to_matrix<Space>(a), to_vector<Space>(xd), beta,
                               to_vector<Space>(yd), to_vector<Space>(work), cs.segment);
        auto y = to_host(yd);
        double err = 0, scale = 0;
        for (index_t i = 0; i < n; ++i) {
          T expect = zero_beta ? T(0) : beta * y0(i);
          T ax = T(0);
          for (index_t j = 0; j < n; ++j) ax += full(i, j) * x(j);
          expect += alpha * ax;
          err = std::max(err, std::sqrt(double(abs_squared(T(y(i) - expect)))));
          scale = std::max(scale, std::sqrt(double(abs_squared(expect))));
        }
        EXPECT_LE(err, 4.0 * double(n + 1) * double(unit_roundoff<T>()) * std::max(scale, 1.0)) << "max error " << err;
      }
    }
  }
}

// symv_partials, then the partials summed in SymvPartials' order: y = A x.
// Outside the test body: Kokkos lambdas cannot live in one.
template <class T>
void summed_symv_partials(Uplo uplo, const Matrix<T, Space>& a, const Vector<T, Space>& x, const Vector<T, Space>& y,
                          const Vector<T, Space>& work, index_t segment, stages::SymvOrder order) {
  const auto p = stages::symv_partials<T, Space>(Space(), uplo, a, x, work, segment, order);
  Kokkos::parallel_for(
      "sum_partials", Kokkos::RangePolicy<Space>(0, y.extent(0)), KOKKOS_LAMBDA(const index_t r) {
        T sum = T(0);
        for (index_t idx = 0; idx < p.count(r); ++idx) sum += p.partial(r, idx);
        y(r) = sum;
      });
}

TYPED_TEST(Symv, PartialsSumToTheProduct) {
  using T = TypeParam;
  std::mt19937_64 rng(43);
  for (index_t n : {1, 65, 700}) {
    for (index_t segment : {index_t(0), index_t(1), index_t(3)}) {
      for (Uplo uplo : {Uplo::Lower, Uplo::Upper}) {
        // Backward (set segments): the reversed team numbering must still cover every segment once.
        const auto order = segment > 0 ? stages::SymvOrder::Backward : stages::SymvOrder::Forward;
        SCOPED_TRACE(describe("symv_partials", n, uplo) + " segment=" + std::to_string(segment) +
                     (segment > 0 ? " backward" : ""));
        const HostMatrix<T> full = random_hermitian<T>(n, rng);
        HostVector<T> x("x", n);
        for (index_t i = 0; i < n; ++i) x(i) = random_scalar<T>(rng);
        auto a = to_space(full);
        SpaceVector<T> xd("x", n), yd("y", n), work("work", stages::symv_workspace_size<T, Space>(n));
        Kokkos::deep_copy(xd, x);
        summed_symv_partials<T>(uplo, to_matrix<Space>(a), to_vector<Space>(xd), to_vector<Space>(yd),
                                to_vector<Space>(work), segment, order);
        auto y = to_host(yd);
        double err = 0, scale = 0;
        for (index_t i = 0; i < n; ++i) {
          T expect = T(0);
          for (index_t j = 0; j < n; ++j) expect += full(i, j) * x(j);
          err = std::max(err, std::sqrt(double(abs_squared(T(y(i) - expect)))));
          scale = std::max(scale, std::sqrt(double(abs_squared(expect))));
        }
        EXPECT_LE(err, 4.0 * double(n + 1) * double(unit_roundoff<T>()) * std::max(scale, 1.0)) << "max error " << err;
      }
    }
  }
}

// The same product twice gives the same bits: no sum's order depends on
// timing (hosts deal block columns to threads by a fixed rule; devices keep
// a slot per contribution).
TYPED_TEST(Symv, RepeatsBitForBit) {
  using T = TypeParam;
  std::mt19937_64 rng(47);
  const index_t n = 1500;
  for (Uplo uplo : {Uplo::Lower, Uplo::Upper}) {
    SCOPED_TRACE(describe("symv", n, uplo));
    auto a = to_space(random_hermitian<T>(n, rng));
    HostVector<T> x("x", n);
    for (index_t i = 0; i < n; ++i) x(i) = random_scalar<T>(rng);
    SpaceVector<T> xd("x", n), y1("y1", n), y2("y2", n), work("work", stages::symv_workspace_size<T, Space>(n));
    Kokkos::deep_copy(xd, x);
    stages::symv<T, Space>(Space(), uplo, T(1), to_matrix<Space>(a), to_vector<Space>(xd), T(0), to_vector<Space>(y1),
                           to_vector<Space>(work));
    const auto h1 = to_host(y1);
    for (int repeat = 0; repeat < 5; ++repeat) {
      stages::symv<T, Space>(Space(), uplo, T(1), to_matrix<Space>(a), to_vector<Space>(xd), T(0),
                             to_vector<Space>(y2), to_vector<Space>(work));
      const auto h2 = to_host(y2);
      index_t differ = 0;
      for (index_t i = 0; i < n; ++i) differ += std::memcmp(&h1(i), &h2(i), sizeof(T)) != 0;
      EXPECT_EQ(differ, 0) << "repeat " << repeat;
    }
  }
}

// Products queued back to back, each reading the one before (x_{k+1} =
// A x_k / n), give the same bits as the same chain fenced after every
// product: on GPUs symv's sums start as a dependent of its first launch
// (backends::sum_row_partials), and each product's first launch must still
// see the previous product's y and must not overwrite partials the previous
// sums still read.
TYPED_TEST(Symv, QueuedChainMatchesFencedChain) {
  using T = TypeParam;
  using R = real_t<T>;
  std::mt19937_64 rng(53);
  const index_t n = 1500, steps = 12;
  for (Uplo uplo : {Uplo::Lower, Uplo::Upper}) {
    SCOPED_TRACE(describe("symv chain", n, uplo));
    auto a = to_space(random_hermitian<T>(n, rng));
    HostVector<T> x0("x0", n);
    for (index_t i = 0; i < n; ++i) x0(i) = random_scalar<T>(rng);
    SpaceVector<T> work("work", stages::symv_workspace_size<T, Space>(n));
    std::vector<HostVector<T>> ends;
    for (bool fenced : {true, false}) {
      SpaceVector<T> u("u", n), v("v", n);
      Kokkos::deep_copy(u, x0);
      for (index_t k = 0; k < steps; ++k) {
        const SpaceVector<T>& from = k % 2 == 0 ? u : v;
        const SpaceVector<T>& to = k % 2 == 0 ? v : u;
        stages::symv<T, Space>(Space(), uplo, T(R(1) / R(n)), to_matrix<Space>(a), to_vector<Space>(from), T(0),
                               to_vector<Space>(to), to_vector<Space>(work));
        if (fenced) Space().fence();
      }
      ends.push_back(to_host(steps % 2 == 0 ? u : v));
    }
    index_t differ = 0;
    for (index_t i = 0; i < n; ++i) differ += std::memcmp(&ends[0](i), &ends[1](i), sizeof(T)) != 0;
    EXPECT_EQ(differ, 0);
  }
}

TYPED_TEST(Symv, RejectsShortWorkspace) {
  using T = TypeParam;
  SpaceMatrix<T> a("a", 130, 130);
  SpaceVector<T> x("x", 130), y("y", 130), work("work", 10);
  auto call = [&] {
    stages::symv<T, Space>(Space(), Uplo::Lower, T(1), to_matrix<Space>(a), to_vector<Space>(x), T(0),
                           to_vector<Space>(y), to_vector<Space>(work));
  };
  EXPECT_THROW(call(), InvalidArgument);
}

template <class T>
class Sytrd : public ::testing::Test {};
TYPED_TEST_SUITE(Sytrd, Scalars);

// sytrd + ormtr: with Q = ormtr(I), Q^H A Q is the tridiagonal (d, e) and Q is
// unitary, for sizes around the panel width, both triangles, several panel widths.
TYPED_TEST(Sytrd, ReducesToTridiagonalWithUnitaryQ) {
  using T = TypeParam;
  using R = real_t<T>;
  backends::Context<Space> ctx{Space()};
  for (index_t n : {1, 2, 3, 31, 32, 33, 65, 150, 640}) {
    for (Uplo uplo : {Uplo::Lower, Uplo::Upper}) {
      for (index_t nb : {index_t(0), index_t(8)}) {
        // 640: ten symv blocks, so the off-diagonal blocks of a column span
        // two segments on devices (the column steps sum symv's partials).
        if (n > 150 && (uplo == Uplo::Upper || nb != 0)) continue;
        SCOPED_TRACE(describe("sytrd", n, uplo) + " nb=" + std::to_string(nb));
        const auto problem = generate<T>(MatrixKind::Random, n, n + 3);
        const index_t panel = nb > 0 ? nb : stages::SytrdTuning<Space>::default_nb;
        auto a = to_space(problem.a);
        SpaceVector<R> d("d", n), e("e", n);
        SpaceVector<T> tau("tau", n), work("work", stages::sytrd_workspace_size<T, Space>(n, panel));
        stages::sytrd<T, Space>(ctx, uplo, to_matrix<Space>(a), to_vector<Space>(d), to_vector<Space>(e),
                                to_vector<Space>(tau), to_vector<Space>(work), nb);
        auto q = to_space(generate<T>(MatrixKind::Identity, n, 1).a);
        SpaceVector<T> owork("owork", stages::ormtr_workspace_size<T, Space>(n, n, panel));
        stages::ormtr<T, Space>(ctx, to_matrix<Space>(a), to_vector<Space>(tau), to_matrix<Space>(q),
                                to_vector<Space>(owork), panel);
        Kokkos::fence();
        auto qh = to_host(q);
        auto dh = to_host(d);
        auto eh = to_host(e);
        // T = Q^H A Q, computed on the host in double precision via the verify helpers:
        // residual of (A Q - Q T) column by column.
        HostMatrix<T> tri("tri", n, n);
        for (index_t i = 0; i < n; ++i) tri(i, i) = T(dh(i));
        for (index_t i = 0; i + 1 < n; ++i) tri(i + 1, i) = tri(i, i + 1) = T(eh(i));
        double num = 0, den = 0;
        for (index_t j = 0; j < n; ++j)
          for (index_t i = 0; i < n; ++i) {
            T aq = T(0), qt = T(0);
            for (index_t k = 0; k < n; ++k) {
              aq += problem.a(i, k) * qh(k, j);
              qt += qh(i, k) * tri(k, j);
            }
            num += abs_squared(T(aq - qt));
          }
        den = frobenius_norm(problem.a);
        EXPECT_LE(std::sqrt(num) / (std::max(den, 1e-300) * n * double(unit_roundoff<T>())), kContract);
        EXPECT_LE(scaled_orthogonality(qh, n), kContract);
      }
    }
  }
}

template <class T>
class ColumnReflectors : public ::testing::Test {};
TYPED_TEST_SUITE(ColumnReflectors, Scalars);

// Offset 0 applies the reflectors of a QR factorization (?ormqr): with
// G = Q R from the vendor geqrf, Q = apply(I) must be unitary and Q R = G,
// for one and several blocks (the last one partial).
TYPED_TEST(ColumnReflectors, OffsetZeroAppliesTheQrFactor) {
  using T = TypeParam;
  backends::Context<Space> ctx{Space()};
  std::mt19937_64 rng(7);
  for (index_t n : {1, 5, 70, 200}) {
    for (index_t nb : {index_t(8), index_t(128)}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " nb=" + std::to_string(nb));
      HostMatrix<T> g("g", n, n);
      for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < n; ++i) g(i, j) = random_scalar<T>(rng);
      auto f = to_space(g);
      SpaceVector<T> tau("tau", n), work("work", stages::ormtr_workspace_size<T, Space>(n, n, nb));
      backends::geqrf<T>(ctx, to_matrix<Space>(f), to_vector<Space>(tau));
      auto q = to_space(generate<T>(MatrixKind::Identity, n, 1).a);
      stages::apply_column_reflectors<T, Space>(ctx, to_matrix<Space>(f), 0, n, to_vector<Space>(tau),
                                                to_matrix<Space>(q), to_vector<Space>(work), nb);
      Kokkos::fence();
      auto qh = to_host(q);
      auto fh = to_host(f);
      double num = 0;
      for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < n; ++i) {
          T qr = T(0);
          for (index_t k = 0; k <= j; ++k) qr += qh(i, k) * fh(k, j);  // R = the upper triangle of f
          num += abs_squared(T(qr - g(i, j)));
        }
      EXPECT_LE(std::sqrt(num) / (frobenius_norm(g) * n * double(unit_roundoff<T>())), kContract);
      EXPECT_LE(scaled_orthogonality(qh, n), kContract);
    }
  }
  SpaceMatrix<T> a("a", 4, 4), z("z", 4, 4);
  SpaceVector<T> tau("tau", 4), work("work", stages::ormtr_workspace_size<T, Space>(4, 4, 8));
  EXPECT_THROW((stages::apply_column_reflectors<T, Space>(ctx, to_matrix<Space>(a), -1, 2, to_vector<Space>(tau),
                                                          to_matrix<Space>(z), to_vector<Space>(work), 8)),
               InvalidArgument);
}

}  // namespace
}  // namespace keig::test
