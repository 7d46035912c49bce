// stages/sygst (generalized -> standard form, lower storage) on the backend
// under test, against straightforward host references in double precision,
// and the IC-NMA-like test pairs of keig/generate.hpp.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <random>
#include <type_traits>
#include <utility>
#include <vector>

#include "keig/backends/host.hpp"
#include "keig/backends/lapack.hpp"
#include "keig/stages/sygst.hpp"
#include "keig/verify.hpp"
#include "support.hpp"

namespace keig::test {
namespace {

// The double-precision scalar of the same kind as T (the reference's arithmetic).
template <class T>
using Wide = std::conditional_t<is_complex_v<T>, Kokkos::complex<double>, double>;

// The workspaces of sygst and sygst_backtransform (empty on hosts).
template <class T>
SpaceVector<T> sygst_work(index_t n, index_t nb) {
  return SpaceVector<T>("sygst_work", stages::sygst_workspace_size<T, Space>(n, nb));
}
template <class T>
SpaceVector<T> backtransform_work(GeneralizedType type, index_t n, index_t m, index_t nb = 0) {
  return SpaceVector<T>("bt_work", stages::sygst_backtransform_workspace_size<T, Space>(type, n, m, nb));
}

template <class T>
HostMatrix<Wide<T>> widened(const HostMatrix<T>& m) {
  HostMatrix<Wide<T>> w("wide", m.extent(0), m.extent(1));
  for (size_t j = 0; j < m.extent(1); ++j)
    for (size_t i = 0; i < m.extent(0); ++i) {
      if constexpr (is_complex_v<T>) w(i, j) = Wide<T>(double(m(i, j).real()), double(m(i, j).imag()));
      else w(i, j) = double(m(i, j));
    }
  return w;
}

// L^{-1} M (forward substitution; only the lower triangle of L is read).
template <class W>
HostMatrix<W> lower_solve(const HostMatrix<W>& l, const HostMatrix<W>& m) {
  const index_t n = l.extent(0), k = m.extent(1);
  HostMatrix<W> x("x", n, k);
  Kokkos::deep_copy(x, m);
  for (index_t c = 0; c < k; ++c)
    for (index_t j = 0; j < n; ++j) {
      x(j, c) = x(j, c) / l(j, j);
      for (index_t i = j + 1; i < n; ++i) x(i, c) -= l(i, j) * x(j, c);
    }
  return x;
}

template <class W>
HostMatrix<W> conj_transpose(const HostMatrix<W>& m) {
  HostMatrix<W> t("t", m.extent(1), m.extent(0));
  for (size_t j = 0; j < m.extent(1); ++j)
    for (size_t i = 0; i < m.extent(0); ++i) t(j, i) = conjugate(m(i, j));
  return t;
}

template <class W>
HostMatrix<W> multiply(const HostMatrix<W>& x, const HostMatrix<W>& y) {
  const index_t m = x.extent(0), k = x.extent(1), n = y.extent(1);
  HostMatrix<W> z("z", m, n);
  for (index_t j = 0; j < n; ++j)
    for (index_t p = 0; p < k; ++p) {
      const W b = y(p, j);
      for (index_t i = 0; i < m; ++i) z(i, j) += x(i, p) * b;
    }
  return z;
}

// The lower triangle of L (upper set to zero), from a potrf result.
template <class W>
HostMatrix<W> lower_part(const HostMatrix<W>& m) {
  HostMatrix<W> l("l", m.extent(0), m.extent(1));
  for (size_t j = 0; j < m.extent(1); ++j)
    for (size_t i = j; i < m.extent(0); ++i) l(i, j) = m(i, j);
  return l;
}

template <class W>
double frobenius(const HostMatrix<W>& m) {
  double s = 0;
  for (size_t j = 0; j < m.extent(1); ++j)
    for (size_t i = 0; i < m.extent(0); ++i) s += double(abs_squared(m(i, j)));
  return std::sqrt(s);
}

// The standard-form matrix C (full, Hermitian) of the reference.
template <class W>
HostMatrix<W> reference_c(GeneralizedType type, const HostMatrix<W>& a_full, const HostMatrix<W>& l_lower) {
  if (type == GeneralizedType::AxLBx) return lower_solve(l_lower, conj_transpose(lower_solve(l_lower, a_full)));
  return multiply(conj_transpose(l_lower), multiply(a_full, l_lower));  // L^H A L
}

// B = M M^H + n I: Hermitian positive definite with eigenvalues in [n, ~2.4 n].
template <class T>
HostMatrix<T> random_spd(index_t n, std::mt19937_64& rng) {
  HostMatrix<T> m("m", n, n), b("b", n, n);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < n; ++i) m(i, j) = random_scalar<T>(rng);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = j; i < n; ++i) {
      T s = T(0);
      for (index_t p = 0; p < n; ++p) s += m(i, p) * conjugate(m(j, p));
      if (i == j) s = T(real_part(s) + real_t<T>(n));
      b(i, j) = s;
      b(j, i) = conjugate(s);
    }
  return b;
}

// Cholesky factor of b on the space under test (lower; the upper triangle of
// the result still holds b's upper triangle).
template <class T>
SpaceMatrix<T> cholesky_on_space(const backends::Context<Space>& ctx, const HostMatrix<T>& b) {
  SpaceMatrix<T> l = to_space(b);
  backends::potrf<T, Space>(ctx, Uplo::Lower, to_matrix<Space>(l), "B");
  Kokkos::fence();
  return l;
}

const char* type_name(GeneralizedType type) {
  switch (type) {
    case GeneralizedType::AxLBx: return "type1";
    case GeneralizedType::ABxLx: return "type2";
    case GeneralizedType::BAxLx: return "type3";
  }
  return "?";
}

template <class T>
class Sygst : public ::testing::Test {};
TYPED_TEST_SUITE(Sygst, Scalars);

// All three types, sizes around the block sizes, nb in {8, 32, default}; the
// upper triangles of A and L are poisoned with NaN (they must never be read).
TYPED_TEST(Sygst, MatchesTheHostReferenceWithPoisonedUpperTriangles) {
  using T = TypeParam;
  using R = real_t<T>;
  using W = Wide<T>;
  backends::Context<Space> ctx{Space()};
  std::mt19937_64 rng(2024);
  const R nan = std::numeric_limits<R>::quiet_NaN();
  double worst = 0;
  for (index_t n : {0, 1, 2, 3, 31, 64, 65, 130, 257}) {
    const HostMatrix<T> a = random_hermitian<T>(n, rng);
    const HostMatrix<T> b = random_spd<T>(n, rng);
    SpaceMatrix<T> ld = cholesky_on_space(ctx, b);
    HostMatrix<T> lh = to_host(ld);
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < j; ++i) lh(i, j) = T(nan);
    Kokkos::deep_copy(ld, lh);
    const HostMatrix<W> a_wide = widened(a), l_wide = lower_part(widened(lh));
    HostMatrix<T> a_stored = copy_of(a);
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < j; ++i) a_stored(i, j) = T(nan);
    for (GeneralizedType type : {GeneralizedType::AxLBx, GeneralizedType::ABxLx, GeneralizedType::BAxLx}) {
      const HostMatrix<W> c_ref = reference_c(type, a_wide, l_wide);
      const double c_norm = frobenius(c_ref);
      // Also with her2k blocks over 16 or 40 rows split into gemms (GPUs; hosts run one her2k).
      const std::vector<std::pair<index_t, index_t>> runs{{8, 0}, {32, 0}, {0, 0}, {8, 16}, {32, 16}, {0, 40}};
      for (const auto& [nb, leaf] : runs) {
        SCOPED_TRACE(std::string(type_name(type)) + " n=" + std::to_string(n) + " nb=" + std::to_string(nb) +
                     " her2k_leaf=" + std::to_string(leaf));
        SpaceMatrix<T> ad = to_space(a_stored);
        stages::sygst<T, Space>(ctx, type, to_matrix<Space>(ad), to_matrix<Space>(ld), nb,
                                to_vector<Space>(sygst_work<T>(n, nb)), leaf);
        Kokkos::fence();
        const HostMatrix<T> c = to_host(ad);
        double err2 = 0;
        bool finite = true;
        for (index_t j = 0; j < n; ++j)
          for (index_t i = j; i < n; ++i) {
            finite = finite && is_finite(c(i, j));
            W d = W(0);
            if constexpr (is_complex_v<T>) d = W(double(c(i, j).real()), double(c(i, j).imag())) - c_ref(i, j);
            else d = double(c(i, j)) - c_ref(i, j);
            err2 += double(abs_squared(d));
          }
        ASSERT_TRUE(finite) << "non-finite entry in the lower triangle of C";
        for (index_t i = 0; i < n; ++i)
          if constexpr (is_complex_v<T>) EXPECT_EQ(c(i, i).imag(), R(0)) << "diagonal entry " << i << " not real";
        // B's eigenvalues lie in [n, ~2.4 n]: L is well conditioned, so the
        // relative error of C is a modest multiple of n eps.
        const double rel = std::sqrt(err2) / std::max(c_norm, 1e-300);
        const double scaled = n > 0 ? rel / (double(n) * double(unit_roundoff<T>())) : 0.0;
        EXPECT_LE(scaled, 10.0) << "relative error " << rel << " = " << scaled << " n eps";
        worst = std::max(worst, scaled);
      }
    }
  }
  std::cout << "[ sygst    ] largest relative error of C: " << worst << " n eps\n";
}

// Documented scratch use: outside the nb x nb diagonal blocks the strictly
// upper triangle of A is left untouched.
TYPED_TEST(Sygst, LeavesTheUpperTriangleOutsideDiagonalBlocksUntouched) {
  using T = TypeParam;
  backends::Context<Space> ctx{Space()};
  std::mt19937_64 rng(7);
  const index_t n = 45, nb = 16;
  const HostMatrix<T> a = random_hermitian<T>(n, rng);
  SpaceMatrix<T> ld = cholesky_on_space(ctx, random_spd<T>(n, rng));
  for (GeneralizedType type : {GeneralizedType::AxLBx, GeneralizedType::ABxLx, GeneralizedType::BAxLx}) {
    SCOPED_TRACE(type_name(type));
    HostMatrix<T> stored = copy_of(a);
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < j; ++i) stored(i, j) = T(real_t<T>(12345));
    SpaceMatrix<T> ad = to_space(stored);
    stages::sygst<T, Space>(ctx, type, to_matrix<Space>(ad), to_matrix<Space>(ld), nb,
                            to_vector<Space>(sygst_work<T>(n, nb)));
    Kokkos::fence();
    const HostMatrix<T> c = to_host(ad);
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < j; ++i)
        if (i / nb != j / nb) ASSERT_EQ(real_part(c(i, j)), real_t<T>(12345)) << "A(" << i << ", " << j << ") written";
  }
}

TYPED_TEST(Sygst, RejectsBadArguments) {
  using T = TypeParam;
  backends::Context<Space> ctx{Space()};
  SpaceMatrix<T> a("a", 10, 10), l("l", 10, 10), l9("l9", 9, 9), rect("rect", 10, 9), z("z", 9, 3);
  const auto argument_of = [](const auto& call) -> std::string {
    try {
      call();
    } catch (const InvalidArgument& e) {
      return e.argument();
    }
    return "(no throw)";
  };
  EXPECT_EQ(argument_of([&] {
              stages::sygst<T, Space>(ctx, static_cast<GeneralizedType>(4), to_matrix<Space>(a), to_matrix<Space>(l), 0);
            }),
            "type");
  EXPECT_EQ(argument_of([&] {
              stages::sygst<T, Space>(ctx, GeneralizedType::AxLBx, to_matrix<Space>(rect), to_matrix<Space>(l), 0);
            }),
            "A");
  EXPECT_EQ(argument_of([&] {
              stages::sygst<T, Space>(ctx, GeneralizedType::AxLBx, to_matrix<Space>(a), to_matrix<Space>(l9), 0);
            }),
            "L");
  EXPECT_EQ(argument_of([&] {
              stages::sygst<T, Space>(ctx, GeneralizedType::AxLBx, to_matrix<Space>(a), to_matrix<Space>(l), -1);
            }),
            "nb");
  EXPECT_EQ(argument_of([&] {
              stages::sygst<T, Space>(ctx, GeneralizedType::AxLBx, to_matrix<Space>(a), to_matrix<Space>(a), 0);
            }),
            "L");
  for (index_t leaf : {index_t(-1), index_t(1), stages::sygst_her2k_leaf_min - 1})
    EXPECT_EQ(argument_of([&] {
                stages::sygst<T, Space>(ctx, GeneralizedType::AxLBx, to_matrix<Space>(a), to_matrix<Space>(l), 4,
                                        to_vector<Space>(sygst_work<T>(10, 4)), leaf);
              }),
              "her2k_leaf");
  // A missing workspace, where the backend needs one (GPUs: the inverted diagonal blocks of L).
  if (stages::sygst_workspace_size<T, Space>(10, 4) > 0) {
    SpaceVector<T> short_work("short", stages::sygst_workspace_size<T, Space>(10, 4) - 1);
    EXPECT_EQ(argument_of([&] {
                stages::sygst<T, Space>(ctx, GeneralizedType::AxLBx, to_matrix<Space>(a), to_matrix<Space>(l), 4,
                                        to_vector<Space>(short_work));
              }),
              "work");
  }
  if (stages::sygst_backtransform_workspace_size<T, Space>(GeneralizedType::AxLBx, 10, 3, 4) > 0) {
    SpaceMatrix<T> z10("z10", 10, 3);
    EXPECT_EQ(argument_of([&] {
                stages::sygst_backtransform<T, Space>(ctx, GeneralizedType::AxLBx, to_matrix<Space>(l),
                                                      to_matrix<Space>(z10), 4);
              }),
              "work");
  }
  EXPECT_EQ(argument_of([&] {
              stages::sygst_backtransform<T, Space>(ctx, GeneralizedType::AxLBx, to_matrix<Space>(l), to_matrix<Space>(z));
            }),
            "Z");
  EXPECT_EQ(argument_of([&] {
              stages::sygst_backtransform<T, Space>(ctx, static_cast<GeneralizedType>(0), to_matrix<Space>(l9),
                                                    to_matrix<Space>(z));
            }),
            "type");
  EXPECT_EQ(argument_of([&] {
              stages::sygst_backtransform<T, Space>(ctx, GeneralizedType::ABxLx, to_matrix<Space>(l9),
                                                    to_matrix<Space>(z), -1);
            }),
            "nb");
}

// sygst's split her2k (GPUs) against one her2k on the backend under test,
// in both of its forms: C -= X Y^H + Y X^H from P = [X | Y | X] (type 1's
// trailing update) and C += X^H Y + Y^H X from P = [X; Y; X] (types 2 and
// 3's leading one), on the lower triangle, for leaves that split once,
// several times and not at all; the strict upper triangle of C is left as it
// was.
TYPED_TEST(Sygst, Her2kByGemmsMatchesOneHer2k) {
  using T = TypeParam;
  using R = real_t<T>;
  using backends::Op;
  backends::Context<Space> ctx{Space()};
  std::mt19937_64 rng(99);
  for (const Op op : {Op::NoTrans, Op::ConjTrans}) {
    const bool by_rows = op == Op::ConjTrans;
    const R alpha = by_rows ? R(1) : R(-1);
    for (index_t m : {1, 17, 40, 131}) {
      for (index_t kb : {1, 8, 33}) {
        // Operand part q (X, Y, X) as m x kb or, by rows, kb x m.
        HostMatrix<T> p = by_rows ? HostMatrix<T>("p", 3 * kb, m) : HostMatrix<T>("p", m, 3 * kb);
        const auto entry = [&](index_t q, index_t i, index_t j) -> T& {
          return by_rows ? p(q * kb + j, i) : p(i, q * kb + j);
        };
        for (index_t q = 0; q < 2; ++q)
          for (index_t j = 0; j < kb; ++j)
            for (index_t i = 0; i < m; ++i) entry(q, i, j) = random_scalar<T>(rng);
        for (index_t j = 0; j < kb; ++j)
          for (index_t i = 0; i < m; ++i) entry(2, i, j) = entry(0, i, j);
        const HostMatrix<T> c0 = random_hermitian<T>(m, rng);
        SpaceMatrix<T> pd = to_space(p), ref = to_space(c0);
        const Matrix<T, Space> pm = to_matrix<Space>(pd);
        backends::syr2k<T>(ctx, Uplo::Lower, op, T(alpha), by_rows ? block(pm, 0, kb, 0, m) : columns(pm, 0, kb),
                           by_rows ? block(pm, kb, 2 * kb, 0, m) : columns(pm, kb, kb), R(1), to_matrix<Space>(ref));
        const HostMatrix<T> expected = to_host(ref);
        for (index_t leaf : {index_t(16), index_t(64), index_t(1000)}) {
          SCOPED_TRACE(std::string(by_rows ? "by rows" : "by columns") + " m=" + std::to_string(m) +
                       " kb=" + std::to_string(kb) + " leaf=" + std::to_string(leaf));
          SpaceMatrix<T> cd = to_space(c0);
          stages::detail::her2k_lower_by_gemms<T, Space>(ctx, op, alpha, pm, kb, to_matrix<Space>(cd), leaf);
          Kokkos::fence();
          const HostMatrix<T> c = to_host(cd);
          double scale = 0, err = 0;
          for (index_t j = 0; j < m; ++j)
            for (index_t i = 0; i < m; ++i) {
              if (i < j) {
                ASSERT_EQ(c(i, j), c0(i, j)) << "upper entry (" << i << ", " << j << ") written";
                continue;
              }
              scale = std::max(scale, std::sqrt(double(abs_squared(expected(i, j)))));
              err = std::max(err, std::sqrt(double(abs_squared(T(c(i, j) - expected(i, j))))));
            }
          EXPECT_LE(err, 8.0 * double(2 * kb + 1) * double(unit_roundoff<T>()) * std::max(scale, 1.0));
        }
      }
    }
  }
}

// Types 1 and 2 solve L^H X = Z by block rows (GPUs by default): every block
// size gives the solve, with L's upper triangle poisoned (never read) and Z
// square or narrow.
TYPED_TEST(Sygst, BacktransformByBlocksSolvesWithLH) {
  using T = TypeParam;
  using W = Wide<T>;
  backends::Context<Space> ctx{Space()};
  std::mt19937_64 rng(11);
  for (index_t n : {1, 37, 100}) {
    HostMatrix<T> l = to_host(cholesky_on_space(ctx, random_spd<T>(n, rng)));
    const HostMatrix<W> lw = lower_part(widened(l));
    for (index_t j = 1; j < n; ++j)
      for (index_t i = 0; i < j; ++i) l(i, j) = T(std::numeric_limits<real_t<T>>::quiet_NaN());
    const SpaceMatrix<T> ld = to_space(l);
    for (index_t m : {index_t(5), n})
      for (index_t nb : {0, 1, 16, 37, 99, 100, 1000}) {
        SCOPED_TRACE("n=" + std::to_string(n) + " m=" + std::to_string(m) + " nb=" + std::to_string(nb));
        HostMatrix<T> z("z", n, m);
        for (index_t j = 0; j < m; ++j)
          for (index_t i = 0; i < n; ++i) z(i, j) = random_scalar<T>(rng);
        SpaceMatrix<T> zd = to_space(z);
        stages::sygst_backtransform<T, Space>(ctx, GeneralizedType::AxLBx, to_matrix<Space>(ld), to_matrix<Space>(zd),
                                              nb, to_vector<Space>(backtransform_work<T>(GeneralizedType::AxLBx, n, m, nb)));
        Kokkos::fence();
        const HostMatrix<W> x = widened(to_host(zd));
        HostMatrix<W> r = multiply(conj_transpose(lw), x);
        const HostMatrix<W> zw = widened(z);
        for (index_t j = 0; j < m; ++j)
          for (index_t i = 0; i < n; ++i) r(i, j) -= zw(i, j);
        const double res = frobenius(r) / (frobenius(lw) * frobenius(x) * double(n) * double(unit_roundoff<T>()));
        EXPECT_LE(res, 10.0) << "scaled residual " << res;
      }
  }
}

// potrf + sygst + a standard solve (host LAPACK ?syevd on C) + sygst_backtransform
// solve the generalized problem: A Z = B Z Lambda (type 1), A B Z = Z Lambda
// (type 2), B A Z = Z Lambda (type 3); for type 1 the eigenvalues are the
// generator's.
TYPED_TEST(Sygst, WithBacktransformSolvesTheGeneralizedProblem) {
  using T = TypeParam;
  using R = real_t<T>;
  using W = Wide<T>;
  backends::Context<Space> ctx{Space()};
  for (index_t n : {0, 1, 17, 100}) {
    const TestPair<T> pair = generate_pair<T>(MatrixKind::Uniform, n, 10.0, 3);
    SpaceMatrix<T> ld = cholesky_on_space(ctx, pair.b);
    for (GeneralizedType type : {GeneralizedType::AxLBx, GeneralizedType::ABxLx, GeneralizedType::BAxLx}) {
      SCOPED_TRACE(std::string(type_name(type)) + " n=" + std::to_string(n));
      SpaceMatrix<T> ad = to_space(pair.a);
      stages::sygst<T, Space>(ctx, type, to_matrix<Space>(ad), to_matrix<Space>(ld), 8,
                              to_vector<Space>(sygst_work<T>(n, 8)));
      Kokkos::fence();
      HostMatrix<T> z = to_host(ad);
      std::vector<R> w(n);
      if (n > 0) ASSERT_EQ((backends::host::syevd<T>(backends::Job::Vectors, Uplo::Lower, n, z.data(), n, w.data())), 0);
      SpaceMatrix<T> zd = to_space(z);
      stages::sygst_backtransform<T, Space>(ctx, type, to_matrix<Space>(ld), to_matrix<Space>(zd), 0,
                                            to_vector<Space>(backtransform_work<T>(type, n, n)));
      Kokkos::fence();
      const HostMatrix<W> x = widened(to_host(zd)), aw = widened(pair.a), bw = widened(pair.b);
      HostMatrix<W> lhs, rhs;
      if (type == GeneralizedType::AxLBx) {
        lhs = multiply(aw, x);
        rhs = multiply(bw, x);
      } else {
        lhs = type == GeneralizedType::ABxLx ? multiply(aw, multiply(bw, x)) : multiply(bw, multiply(aw, x));
        rhs = x;
      }
      double lmax = 0;
      for (index_t j = 0; j < n; ++j) {
        lmax = std::max(lmax, std::abs(double(w[j])));
        for (index_t i = 0; i < n; ++i) lhs(i, j) -= rhs(i, j) * double(w[j]);
      }
      const double scale = type == GeneralizedType::AxLBx
                               ? frobenius(aw) + frobenius(bw) * lmax
                               : frobenius(aw) * frobenius(bw) + lmax;
      const double denominator = scale * frobenius(x) * double(n) * double(unit_roundoff<T>());
      const double res = n > 0 ? frobenius(lhs) / std::max(denominator, 1e-300) : 0;  // 0 / 0 for A = 0, n = 1
      EXPECT_LE(res, 10.0) << "scaled residual " << res;
      if (type == GeneralizedType::AxLBx)
        for (index_t j = 0; j < n; ++j)
          EXPECT_NEAR(double(w[j]), double(pair.eigenvalues[j]), 200.0 * n * double(unit_roundoff<T>())) << j;
    }
  }
}

// cond(B) = 1e8 (double scalars only: beyond single precision), by blocks of
// 16 in both stages, so that on GPUs every solve with a diagonal block of L
// is a product with its inverse: the contract's residual and eigenvalue
// error, as LAPACK's triangular solves give them.
template <class T>
void ill_conditioned_by_blocks() {
  using R = real_t<T>;
  backends::Context<Space> ctx{Space()};
  const index_t n = 150, nb = 16;
  const TestPair<T> pair = generate_pair<T>(MatrixKind::Uniform, n, 1e8, 21);
  SpaceMatrix<T> ld = cholesky_on_space(ctx, pair.b);
  SpaceMatrix<T> ad = to_space(pair.a);
  stages::sygst<T, Space>(ctx, GeneralizedType::AxLBx, to_matrix<Space>(ad), to_matrix<Space>(ld), nb,
                          to_vector<Space>(sygst_work<T>(n, nb)));
  Kokkos::fence();
  HostMatrix<T> z = to_host(ad);
  HostVector<R> w("w", n);
  ASSERT_EQ((backends::host::syevd<T>(backends::Job::Vectors, Uplo::Lower, n, z.data(), n, w.data())), 0);
  SpaceMatrix<T> zd = to_space(z);
  stages::sygst_backtransform<T, Space>(
      ctx, GeneralizedType::AxLBx, to_matrix<Space>(ld), to_matrix<Space>(zd), nb,
      to_vector<Space>(backtransform_work<T>(GeneralizedType::AxLBx, n, n, nb)));
  Kokkos::fence();
  const HostMatrix<T> x = to_host(zd);
  EXPECT_LE(scaled_residual_generalized(pair.a, pair.b, w, x, n), kContract);
  EXPECT_LE(scaled_eigenvalue_error_generalized(pair.a, pair.b, w, pair.eigenvalues, n), kContract);
}
TEST(SygstIllConditioned, Double) { ill_conditioned_by_blocks<double>(); }
TEST(SygstIllConditioned, ComplexDouble) { ill_conditioned_by_blocks<Kokkos::complex<double>>(); }

template <class T>
class SygstIcnma : public ::testing::Test {};
TYPED_TEST_SUITE(SygstIcnma, Scalars);

// The IC-NMA-like pair: A and B Hermitian positive definite, A's spectrum
// clustered at its smallest eigenvalue with a long upper tail.
TYPED_TEST(SygstIcnma, PairIsHermitianPositiveDefiniteAndClustered) {
  using T = TypeParam;
  using R = real_t<T>;
  const index_t n = 200;
  const TestPair<T> pair = generate_icnma_pair<T>(n, 5);
  ASSERT_EQ(static_cast<index_t>(pair.a.extent(0)), n);
  ASSERT_EQ(static_cast<index_t>(pair.b.extent(1)), n);
  EXPECT_TRUE(pair.eigenvalues.empty());
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < n; ++i) {
      ASSERT_TRUE(pair.a(i, j) == conjugate(pair.a(j, i))) << "A not Hermitian at " << i << ", " << j;
      ASSERT_TRUE(pair.b(i, j) == conjugate(pair.b(j, i))) << "B not Hermitian at " << i << ", " << j;
    }
  HostMatrix<T> lb = copy_of(pair.b), la = copy_of(pair.a);
  EXPECT_EQ((backends::host::potrf<T>(Uplo::Lower, n, lb.data(), n)), 0) << "B is not positive definite";
  EXPECT_EQ((backends::host::potrf<T>(Uplo::Lower, n, la.data(), n)), 0) << "A is not positive definite";
  const std::vector<R> lambda = reference_eigenvalues(pair.a);
  ASSERT_GT(lambda.front(), R(0));
  EXPECT_LE(lambda[n / 10 - 1], 2 * lambda.front()) << "lowest 10% not clustered near " << lambda.front();
  EXPECT_GE(double(lambda.back()) / double(lambda.front()), 1e4);
  // The generalized problem is definite with positive eigenvalues, and the
  // space's sygst of the pair agrees with LAPACK's ?sygvd.
  const std::vector<R> mu = reference_eigenvalues(pair.a, pair.b, GeneralizedType::AxLBx);
  EXPECT_GT(mu.front(), R(0));
  backends::Context<Space> ctx{Space()};
  SpaceMatrix<T> ld = cholesky_on_space(ctx, pair.b);
  SpaceMatrix<T> ad = to_space(pair.a);
  stages::sygst<T, Space>(ctx, GeneralizedType::AxLBx, to_matrix<Space>(ad), to_matrix<Space>(ld), 0,
                          to_vector<Space>(sygst_work<T>(n, 0)));
  Kokkos::fence();
  const std::vector<R> nu = reference_eigenvalues(to_host(ad));
  for (index_t i = 0; i < n; ++i)
    EXPECT_NEAR(double(nu[i]), double(mu[i]), 100.0 * n * double(unit_roundoff<T>()) * double(mu.back())) << i;
}

}  // namespace
}  // namespace keig::test
