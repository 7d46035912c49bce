// Shared test vocabulary: the execution space under test (one executable per
// backend: KEIG_TEST_SPACE), host<->space copies, the scalar type list.
#pragma once

#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "keig/generate.hpp"
#include "keig/keig.hpp"
#include "keig/verify.hpp"

namespace keig::test {

using Space = KEIG_TEST_SPACE;
using Memory = Space::memory_space;

template <class T>
using SpaceMatrix = Kokkos::View<T**, Kokkos::LayoutLeft, Memory>;
template <class T>
using SpaceVector = Kokkos::View<T*, Kokkos::LayoutLeft, Memory>;

using Scalars = ::testing::Types<float, double, Kokkos::complex<float>, Kokkos::complex<double>>;

// The accuracy contract of DESIGN.md: scaled residual, orthogonality and
// eigenvalue error at most this.
constexpr double kContract = 10.0;

template <class T>
SpaceMatrix<T> to_space(const HostMatrix<T>& h) {
  SpaceMatrix<T> d("keig::test::matrix", h.extent(0), h.extent(1));
  Kokkos::deep_copy(d, h);
  return d;
}

template <class V>
auto to_host(const V& d) {
  Kokkos::View<typename V::non_const_data_type, Kokkos::LayoutLeft, Kokkos::HostSpace> h("keig::test::host",
                                                                                         d.layout());
  Kokkos::deep_copy(h, d);
  return h;
}

template <class T>
HostMatrix<T> copy_of(const HostMatrix<T>& h) {
  HostMatrix<T> c("keig::test::copy", h.extent(0), h.extent(1));
  Kokkos::deep_copy(c, h);
  return c;
}

// Bitwise equality (NaN entries compare equal to themselves).
template <class T>
bool same_matrix(const HostMatrix<T>& x, const HostMatrix<T>& y) {
  if (x.extent(0) != y.extent(0) || x.extent(1) != y.extent(1)) return false;
  for (size_t j = 0; j < x.extent(1); ++j)
    for (size_t i = 0; i < x.extent(0); ++i)
      if (std::memcmp(&x(i, j), &y(i, j), sizeof(T)) != 0) return false;
  return true;
}

// Uniform in [-1, 1] (both parts for complex scalars).
template <class T>
T random_scalar(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  if constexpr (is_complex_v<T>) {
    const double re = u(rng);
    return T(re, u(rng));
  } else {
    return T(u(rng));
  }
}

// A Hermitian matrix (real diagonal) with entries from random_scalar.
template <class T>
HostMatrix<T> random_hermitian(index_t n, std::mt19937_64& rng) {
  HostMatrix<T> a("a", n, n);
  for (index_t j = 0; j < n; ++j) {
    a(j, j) = T(real_part(random_scalar<T>(rng)));
    for (index_t i = j + 1; i < n; ++i) {
      a(i, j) = random_scalar<T>(rng);
      a(j, i) = conjugate(a(i, j));
    }
  }
  return a;
}

// LAPACK's eigenvalues (host ?syevd / ?sygvd in the same precision): the reference.
template <class T>
std::vector<real_t<T>> reference_eigenvalues(const HostMatrix<T>& a);
template <class T>
std::vector<real_t<T>> reference_eigenvalues(const HostMatrix<T>& a, const HostMatrix<T>& b, GeneralizedType type);

inline std::string describe(const char* kind, index_t n, Uplo uplo) {
  return std::string(kind) + " n=" + std::to_string(n) + " uplo=" + to_string(uplo);
}

}  // namespace keig::test
