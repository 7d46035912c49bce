// Scalar vocabulary: the four supported scalars, their real type and helpers
// usable on host and device.
#pragma once

#include <Kokkos_Complex.hpp>
#include <limits>
#include <type_traits>

#include "keig/views/compat.hpp"

namespace keig {

template <class T>
struct scalar_traits {
  static constexpr bool supported = false;
};

template <>
struct scalar_traits<float> {
  static constexpr bool supported = true;
  static constexpr bool is_complex = false;
  using real_type = float;
  static constexpr const char* name = "float";
};
template <>
struct scalar_traits<double> {
  static constexpr bool supported = true;
  static constexpr bool is_complex = false;
  using real_type = double;
  static constexpr const char* name = "double";
};
template <>
struct scalar_traits<Kokkos::complex<float>> {
  static constexpr bool supported = true;
  static constexpr bool is_complex = true;
  using real_type = float;
  static constexpr const char* name = "complex<float>";
};
template <>
struct scalar_traits<Kokkos::complex<double>> {
  static constexpr bool supported = true;
  static constexpr bool is_complex = true;
  using real_type = double;
  static constexpr const char* name = "complex<double>";
};

template <class T>
using real_t = typename scalar_traits<T>::real_type;

template <class T>
inline constexpr bool is_complex_v = scalar_traits<T>::is_complex;

template <class T>
inline constexpr bool is_supported_scalar_v = scalar_traits<std::remove_cv_t<T>>::supported;

// Unit roundoff of the scalar's real type (LAPACK's dlamch('E')).
template <class T>
constexpr real_t<T> unit_roundoff() {
  return std::numeric_limits<real_t<T>>::epsilon() / 2;
}

template <class T>
KOKKOS_INLINE_FUNCTION real_t<T> real_part(const T& x) {
  if constexpr (is_complex_v<T>) return x.real(); else return x;
}

template <class T>
KOKKOS_INLINE_FUNCTION T conjugate(const T& x) {
  if constexpr (is_complex_v<T>) return Kokkos::conj(x); else return x;
}

template <class T>
KOKKOS_INLINE_FUNCTION real_t<T> abs_squared(const T& x) {
  if constexpr (is_complex_v<T>) return x.real() * x.real() + x.imag() * x.imag();
  else return x * x;
}

// *sum += x atomically; complex sums as two real atomics (no 16-byte atomic
// add is needed).
template <class T>
KOKKOS_INLINE_FUNCTION void atomic_accumulate(T* sum, const T& x) {
  if constexpr (is_complex_v<T>) {
    real_t<T>* parts = reinterpret_cast<real_t<T>*>(sum);
    Kokkos::atomic_add(parts, x.real());
    Kokkos::atomic_add(parts + 1, x.imag());
  } else {
    Kokkos::atomic_add(sum, x);
  }
}

template <class T>
KOKKOS_INLINE_FUNCTION bool is_finite(const T& x) {
  if constexpr (is_complex_v<T>) return compat::isfinite(x.real()) && compat::isfinite(x.imag());
  else return compat::isfinite(x);
}

}  // namespace keig
