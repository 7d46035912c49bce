// Test-problem generators (host, LAPACK). See keig/generate.hpp.
#include "keig/generate.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <type_traits>

#include "keig/backends/host.hpp"
#include "keig/errors.hpp"

namespace keig {

namespace {

struct KindName {
  MatrixKind kind;
  const char* name;
};
constexpr KindName kind_names[] = {
    {MatrixKind::Random, "random"},       {MatrixKind::Uniform, "uniform"},   {MatrixKind::Clustered, "clustered"},
    {MatrixKind::Graded, "graded"},       {MatrixKind::Repeated, "repeated"}, {MatrixKind::Wilkinson, "wilkinson"},
    {MatrixKind::Clement, "clement"},     {MatrixKind::Zero, "zero"},         {MatrixKind::Identity, "identity"},
    {MatrixKind::Diagonal, "diagonal"},
};

template <class T>
T gaussian(std::mt19937_64& rng) {
  std::normal_distribution<real_t<T>> normal(0, 1);
  if constexpr (is_complex_v<T>) {
    const real_t<T> s = real_t<T>(1) / std::sqrt(real_t<T>(2));
    const real_t<T> re = normal(rng) * s;
    return T(re, normal(rng) * s);
  } else {
    return normal(rng);
  }
}

template <class T>
HostMatrix<T> zeros(index_t n, const char* label) {
  return HostMatrix<T>(std::string(label), n, n);  // value-initialized
}

// A = Q diag(lambda) Q^H, made exactly Hermitian.
template <class T>
HostMatrix<T> similar_to_diagonal(const std::vector<real_t<T>>& lambda, std::uint64_t seed) {
  const index_t n = lambda.size();
  HostMatrix<T> q = random_unitary<T>(n, seed);
  HostMatrix<T> qd("keig::generate::QD", n, n);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < n; ++i) qd(i, j) = q(i, j) * T(lambda[j]);
  HostMatrix<T> a = zeros<T>(n, "keig::generate::A");
  if (n > 0)
    backends::host::gemm<T>(backends::Op::NoTrans, backends::Op::ConjTrans, n, n, n, T(1), qd.data(), n, q.data(), n,
                            T(0), a.data(), n);
  for (index_t j = 0; j < n; ++j) {
    a(j, j) = T(real_part(a(j, j)));
    for (index_t i = j + 1; i < n; ++i) {
      const T avg = (a(i, j) + conjugate(a(j, i))) * real_t<T>(0.5);
      a(i, j) = avg;
      a(j, i) = conjugate(avg);
    }
  }
  return a;
}

template <class T>
HostMatrix<T> tridiagonal(const std::vector<real_t<T>>& d, const std::vector<real_t<T>>& e) {
  const index_t n = d.size();
  HostMatrix<T> a = zeros<T>(n, "keig::generate::A");
  for (index_t i = 0; i < n; ++i) a(i, i) = T(d[i]);
  for (index_t i = 0; i + 1 < n; ++i) a(i + 1, i) = a(i, i + 1) = T(e[i]);
  return a;
}

}  // namespace

MatrixKind parse_matrix_kind(const std::string& name) {
  for (const auto& k : kind_names)
    if (name == k.name) return k.kind;
  std::string known;
  for (const auto& k : kind_names) known += std::string(known.empty() ? "" : "|") + k.name;
  throw InvalidArgument("matrix", "unknown kind '" + name + "' (known: " + known + ")");
}

const char* to_string(MatrixKind kind) {
  for (const auto& k : kind_names)
    if (kind == k.kind) return k.name;
  return "?";
}

std::vector<MatrixKind> all_matrix_kinds() {
  std::vector<MatrixKind> kinds;
  for (const auto& k : kind_names) kinds.push_back(k.kind);
  return kinds;
}

template <class T>
HostMatrix<T> random_unitary(index_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 17);
  HostMatrix<T> q("keig::generate::Q", n, n);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < n; ++i) q(i, j) = gaussian<T>(rng);
  if (n == 0) return q;
  std::vector<T> tau(n);
  if (backends::host::geqrf<T>(n, n, q.data(), n, tau.data()) != 0 ||
      backends::host::orgqr<T>(n, n, n, q.data(), n, tau.data()) != 0)
    throw Error("keig: random_unitary: QR of a Gaussian matrix failed");
  return q;
}

template <class T>
std::vector<real_t<T>> known_spectrum(MatrixKind kind, index_t n, std::uint64_t seed) {
  using R = real_t<T>;
  std::vector<R> lambda(n);
  const R denom = n > 1 ? R(n - 1) : R(1);
  switch (kind) {
    case MatrixKind::Random:
    case MatrixKind::Wilkinson: return {};
    case MatrixKind::Uniform:
      for (index_t i = 0; i < n; ++i) lambda[i] = n > 1 ? R(-1) + R(2) * R(i) / denom : R(0);
      break;
    case MatrixKind::Clustered: {
      const R centers[3] = {R(-1), R(0.5), R(1)};
      for (index_t i = 0; i < n; ++i) lambda[i] = centers[i % 3] + R(1e-9) * R(i / 3);
      break;
    }
    case MatrixKind::Graded:
      for (index_t i = 0; i < n; ++i) lambda[i] = std::pow(R(10), R(-12) + R(12) * R(i) / denom);
      break;
    case MatrixKind::Repeated: {
      const R values[3] = {R(-1), R(0.5), R(2)};
      for (index_t i = 0; i < n; ++i) lambda[i] = values[i % 3];
      break;
    }
    case MatrixKind::Clement:
      for (index_t k = 0; k < n; ++k) lambda[k] = -R(n - 1) + R(2 * k);
      break;
    case MatrixKind::Zero:
      break;
    case MatrixKind::Identity:
      std::fill(lambda.begin(), lambda.end(), R(1));
      break;
    case MatrixKind::Diagonal: {
      std::mt19937_64 rng(seed);
      std::uniform_real_distribution<R> uniform(-1, 1);
      for (auto& x : lambda) x = uniform(rng);
      break;
    }
  }
  std::sort(lambda.begin(), lambda.end());
  return lambda;
}

template <class T>
TestMatrix<T> generate(MatrixKind kind, index_t n, std::uint64_t seed) {
  using R = real_t<T>;
  if (n < 0) throw InvalidArgument("n", "must be >= 0, got " + std::to_string(n));
  TestMatrix<T> out;
  out.eigenvalues = known_spectrum<T>(kind, n, seed);
  switch (kind) {
    case MatrixKind::Random: {
      std::mt19937_64 rng(seed);
      out.a = zeros<T>(n, "keig::generate::A");
      for (index_t j = 0; j < n; ++j) {
        out.a(j, j) = T(real_part(gaussian<T>(rng)));
        for (index_t i = j + 1; i < n; ++i) {
          const T x = gaussian<T>(rng);
          out.a(i, j) = x;
          out.a(j, i) = conjugate(x);
        }
      }
      break;
    }
    case MatrixKind::Wilkinson: {
      std::vector<R> d(n), e(n > 0 ? n - 1 : 0, R(1));
      for (index_t i = 0; i < n; ++i) d[i] = std::abs(R(n - 1) / R(2) - R(i));
      out.a = tridiagonal<T>(d, e);
      break;
    }
    case MatrixKind::Clement: {
      std::vector<R> d(n, R(0)), e(n > 0 ? n - 1 : 0);
      for (index_t i = 0; i + 1 < n; ++i) e[i] = std::sqrt(R(i + 1) * R(n - 1 - i));
      out.a = tridiagonal<T>(d, e);
      break;
    }
    case MatrixKind::Zero:
    case MatrixKind::Identity:
    case MatrixKind::Diagonal: {
      // Diagonal entries in generation order (not sorted), so solvers must sort.
      std::vector<R> d = out.eigenvalues;
      if (kind == MatrixKind::Diagonal) {
        std::mt19937_64 rng(seed);
        std::uniform_real_distribution<R> uniform(-1, 1);
        for (auto& x : d) x = uniform(rng);
      }
      out.a = tridiagonal<T>(d, std::vector<R>(n > 0 ? n - 1 : 0, R(0)));
      break;
    }
    default:
      out.a = similar_to_diagonal<T>(out.eigenvalues, seed);
      break;
  }
  return out;
}

template <class T>
TestPair<T> generate_pair(MatrixKind kind, index_t n, double b_condition, std::uint64_t seed) {
  using R = real_t<T>;
  if (!(b_condition >= 1)) throw InvalidArgument("b_condition", "must be >= 1, got " + std::to_string(b_condition));
  TestPair<T> out;
  out.eigenvalues = known_spectrum<T>(kind, n, seed);
  if (out.eigenvalues.size() != static_cast<size_t>(n))
    throw InvalidArgument("kind", std::string("generate_pair needs a kind with a known spectrum, got ") + to_string(kind));
  // B = U diag(sigma) U^H with sigma graded from 1/b_condition to 1.
  std::vector<R> sigma(n);
  for (index_t i = 0; i < n; ++i)
    sigma[i] = n > 1 ? R(std::pow(b_condition, -1.0 + double(i) / double(n - 1))) : R(1);
  out.b = similar_to_diagonal<T>(sigma, seed + 1000);
  // L = chol(B); A = L C L^H with C = Q diag(lambda) Q^H, so A x = lambda B x.
  HostMatrix<T> l("keig::generate::L", n, n);
  Kokkos::deep_copy(l, out.b);
  if (n > 0 && backends::host::potrf<T>(Uplo::Lower, n, l.data(), n) != 0)
    throw Error("keig: generate_pair: B is not positive definite (b_condition too large for this precision)");
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < j; ++i) l(i, j) = T(0);
  HostMatrix<T> c = similar_to_diagonal<T>(out.eigenvalues, seed + 2000);
  HostMatrix<T> lc("keig::generate::LC", n, n);
  out.a = HostMatrix<T>("keig::generate::A", n, n);
  if (n > 0) {
    backends::host::gemm<T>(backends::Op::NoTrans, backends::Op::NoTrans, n, n, n, T(1), l.data(), n, c.data(), n, T(0),
                            lc.data(), n);
    backends::host::gemm<T>(backends::Op::NoTrans, backends::Op::ConjTrans, n, n, n, T(1), lc.data(), n, l.data(), n,
                            T(0), out.a.data(), n);
  }
  for (index_t j = 0; j < n; ++j) {
    out.a(j, j) = T(real_part(out.a(j, j)));
    for (index_t i = j + 1; i < n; ++i) {
      const T avg = (out.a(i, j) + conjugate(out.a(j, i))) * R(0.5);
      out.a(i, j) = avg;
      out.a(j, i) = conjugate(avg);
    }
  }
  return out;
}

std::vector<double> icnma_hessian_spectrum(index_t n) {
  if (n < 0) throw InvalidArgument("n", "must be >= 0, got " + std::to_string(n));
  std::vector<double> lambda(n);
  for (index_t i = 0; i < n; ++i) {
    const double t = n > 1 ? double(i) / double(n - 1) : 0.0;
    lambda[i] = 1e-3 * (1.0 + t) * std::pow(10.0, 5.0 * t * t * t);
  }
  return lambda;
}

namespace {

// Makes a exactly Hermitian from its lower triangle (real diagonal).
template <class T>
void hermitian_from_lower(const HostMatrix<T>& a) {
  const index_t n = a.extent(0);
  for (index_t j = 0; j < n; ++j) {
    a(j, j) = T(real_part(a(j, j)));
    for (index_t i = j + 1; i < n; ++i) a(j, i) = conjugate(a(i, j));
  }
}

// The IC-NMA-like pair in a double-precision scalar W.
template <class W>
TestPair<W> icnma_pair_wide(index_t n, std::uint64_t seed) {
  using R = real_t<W>;
  TestPair<W> out;
  out.a = similar_to_diagonal<W>(icnma_hessian_spectrum(n), seed);
  // B = S^H S + delta I with S = M^{1/2} J, J Gaussian / sqrt(n), M uniform in [1, 16].
  std::mt19937_64 rng(seed * 0xD1B54A32D192ED03ull + 29);
  std::uniform_real_distribution<R> mass(1, 16);
  std::vector<R> sqrt_mass(n);
  for (auto& m : sqrt_mass) m = std::sqrt(mass(rng));
  const R scale = n > 0 ? R(1) / std::sqrt(R(n)) : R(1);
  HostMatrix<W> s("keig::generate::S", n, n);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < n; ++i) s(i, j) = gaussian<W>(rng) * (scale * sqrt_mass[i]);
  out.b = zeros<W>(n, "keig::generate::B");
  if (n > 0)
    backends::host::gemm<W>(backends::Op::ConjTrans, backends::Op::NoTrans, n, n, n, W(1), s.data(), n, s.data(), n,
                            W(0), out.b.data(), n);
  s = HostMatrix<W>();
  hermitian_from_lower(out.b);
  // ||S^H S||_2 by a few power iterations (a lower estimate; only sets delta).
  R norm = 0;
  if (n > 0) {
    std::vector<W> x(n, W(R(1) / std::sqrt(R(n)))), y(n);
    for (int it = 0; it < 12; ++it) {
      backends::host::symv<W>(Uplo::Lower, n, W(1), out.b.data(), n, x.data(), W(0), y.data());
      R y2 = 0;
      for (const W& v : y) y2 += abs_squared(v);
      norm = std::sqrt(y2);  // ||B x|| with ||x|| = 1
      if (!(norm > 0)) break;
      for (index_t i = 0; i < n; ++i) x[i] = y[i] * (R(1) / norm);
    }
  }
  const R delta = R(1e-3) * (norm > 0 ? norm : R(1));
  for (index_t i = 0; i < n; ++i) out.b(i, i) = W(real_part(out.b(i, i)) + delta);
  return out;
}

template <class T, class W>
HostMatrix<T> narrowed(const HostMatrix<W>& w, const char* label) {
  const index_t n = w.extent(0);
  HostMatrix<T> t(std::string(label), n, n);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < n; ++i) {
      if constexpr (is_complex_v<T>) t(i, j) = T(real_t<T>(w(i, j).real()), real_t<T>(w(i, j).imag()));
      else t(i, j) = T(w(i, j));
    }
  return t;
}

}  // namespace

template <class T>
TestPair<T> generate_icnma_pair(index_t n, std::uint64_t seed) {
  if (n < 0) throw InvalidArgument("n", "must be >= 0, got " + std::to_string(n));
  using W = std::conditional_t<is_complex_v<T>, Kokkos::complex<double>, double>;
  if constexpr (std::is_same_v<T, W>) {
    return icnma_pair_wide<W>(n, seed);
  } else {
    TestPair<T> out;
    {
      TestPair<W> wide = icnma_pair_wide<W>(n, seed);
      out.a = narrowed<T>(wide.a, "keig::generate::A");
      wide.a = HostMatrix<W>();
      out.b = narrowed<T>(wide.b, "keig::generate::B");
    }
    return out;
  }
}

#define KEIG_INSTANTIATE_GENERATE(T)                                                           \
  template TestMatrix<T> generate<T>(MatrixKind, index_t, std::uint64_t);                      \
  template HostMatrix<T> random_unitary<T>(index_t, std::uint64_t);                            \
  template TestPair<T> generate_pair<T>(MatrixKind, index_t, double, std::uint64_t);           \
  template std::vector<real_t<T>> known_spectrum<T>(MatrixKind, index_t, std::uint64_t);       \
  template TestPair<T> generate_icnma_pair<T>(index_t, std::uint64_t);
KEIG_INSTANTIATE_GENERATE(float)
KEIG_INSTANTIATE_GENERATE(double)
KEIG_INSTANTIATE_GENERATE(Kokkos::complex<float>)
KEIG_INSTANTIATE_GENERATE(Kokkos::complex<double>)

}  // namespace keig
