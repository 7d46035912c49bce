// Private helpers of the host vendor layer (not installed).
#pragma once

#include <complex>
#include <limits>
#include <string>
#include <type_traits>

#include "keig/backends/host.hpp"
#include "keig/errors.hpp"

namespace keig::backends::host::detail {

// Kokkos::complex<R> has the layout of std::complex<R> and of Fortran COMPLEX.
template <class T>
struct vendor_type { using type = T; };
template <class R>
struct vendor_type<Kokkos::complex<R>> { using type = std::complex<R>; };
template <class T>
using vendor_t = typename vendor_type<T>::type;

template <class T>
auto* vendor(T* p) { return reinterpret_cast<vendor_t<T>*>(p); }
template <class T>
const auto* vendor(const T* p) { return reinterpret_cast<const vendor_t<T>*>(p); }

inline char uplo_char(Uplo u) { return u == Uplo::Lower ? 'L' : 'U'; }
inline char job_char(Job j) { return j == Job::Vectors ? 'V' : 'N'; }

// LAPACK's (range, vl, vu, il, iu) from keig's 0-based Range.
struct LapackRange {
  char range;
  double vl, vu;
  int il, iu;
};
inline LapackRange lapack_range(const Range& r, index_t n) {
  switch (r.kind) {
    case Range::Kind::Index: return {'I', 0.0, 0.0, static_cast<int>(r.il + 1), static_cast<int>(r.iu + 1)};
    case Range::Kind::Value: return {'V', r.vl, r.vu, 1, static_cast<int>(n)};
    default: return {'A', 0.0, 0.0, 1, static_cast<int>(n)};
  }
}

// Twice the underflow threshold: the most accurate bisection tolerance (LAPACK's advice).
template <class R>
R accurate_abstol() { return 2 * std::numeric_limits<R>::min(); }

// info < 0 means keig passed a bad argument to LAPACK: a bug, never the user's input.
inline index_t checked(const char* routine, index_t info) {
  if (info < 0)
    throw BackendError(routine, info, "LAPACK rejected argument " + std::to_string(-info) + "; this is a keig bug");
  return info;
}

inline void check_int_range(const char* routine, index_t value) {
  if (value > std::numeric_limits<int>::max())
    throw InvalidArgument("n", std::string("size ") + std::to_string(value) + " exceeds the 32-bit LAPACK interface of " +
                                   routine);
}

}  // namespace keig::backends::host::detail
