// Version-dependent Kokkos spellings live here and nowhere else, so keig builds
// against Kokkos 3.4 (Debian's trilinos source) and against Kokkos 4.x.
#pragma once

#include <Kokkos_Core.hpp>

#ifndef KOKKOS_VERSION
#error "keig: KOKKOS_VERSION is not defined; is this Kokkos older than 3.0?"
#endif

namespace keig::compat {

// Kokkos 3.4-3.6 keeps the math functions in Kokkos::Experimental; 3.7 moved
// them to namespace Kokkos (4.x removed the Experimental aliases).
#if KOKKOS_VERSION >= 30700
namespace math = ::Kokkos;
#else
namespace math = ::Kokkos::Experimental;
#endif

template <class R>
KOKKOS_INLINE_FUNCTION bool isfinite(R x) {
  return math::isfinite(x);
}

template <class R>
KOKKOS_INLINE_FUNCTION R sqrt(R x) {
  return math::sqrt(x);
}

// Name of an execution space for messages and reports.
template <class ExecSpace>
inline const char* space_name() {
  return ExecSpace::name();
}

}  // namespace keig::compat
