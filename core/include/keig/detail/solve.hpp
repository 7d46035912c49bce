// The compiled entry point behind keig::eigh / keig::eigvalsh: one function
// per (scalar, execution space), explicitly instantiated in core/src for the
// spaces this Kokkos build enables, on canonical views only.
#pragma once

#include <cstddef>
#include <type_traits>

#include "keig/options.hpp"
#include "keig/views/matrix.hpp"

namespace keig::detail {

struct Problem {
  bool generalized = false;
  bool vectors = true;
};

template <class T, class ExecSpace>
Result solve(const ExecSpace& space, const Matrix<T, ExecSpace>& a, const Matrix<T, ExecSpace>& b,
             const Vector<real_t<T>, ExecSpace>& w, const Matrix<T, ExecSpace>& z, Problem problem,
             const Options& options);

// Bytes of workspace keig's own pipeline takes for this problem (0 when the
// method that runs is the vendor's or n = 0): keig::workspace_bytes.
template <class T, class ExecSpace>
std::size_t workspace_bytes(const ExecSpace& space, index_t n, Problem problem, const Options& options);

// The execution spaces keig is compiled for (those this Kokkos enables, of
// Serial, OpenMP and Cuda).
template <class ExecSpace>
struct is_supported_space : std::false_type {};
#if defined(KOKKOS_ENABLE_SERIAL)
template <>
struct is_supported_space<Kokkos::Serial> : std::true_type {};
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
template <>
struct is_supported_space<Kokkos::OpenMP> : std::true_type {};
#endif
#if defined(KOKKOS_ENABLE_CUDA)
template <>
struct is_supported_space<Kokkos::Cuda> : std::true_type {};
#endif

#define KEIG_DECLARE_SOLVE(T, SPACE)                                                                        \
  extern template Result solve<T, SPACE>(const SPACE&, const Matrix<T, SPACE>&, const Matrix<T, SPACE>&,   \
                                         const Vector<real_t<T>, SPACE>&, const Matrix<T, SPACE>&, Problem, \
                                         const Options&);                                                  \
  extern template std::size_t workspace_bytes<T, SPACE>(const SPACE&, index_t, Problem, const Options&);
#define KEIG_DECLARE_SOLVE_ALL(SPACE)             \
  KEIG_DECLARE_SOLVE(float, SPACE)                \
  KEIG_DECLARE_SOLVE(double, SPACE)               \
  KEIG_DECLARE_SOLVE(Kokkos::complex<float>, SPACE) \
  KEIG_DECLARE_SOLVE(Kokkos::complex<double>, SPACE)
#if defined(KOKKOS_ENABLE_SERIAL)
KEIG_DECLARE_SOLVE_ALL(Kokkos::Serial)
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
KEIG_DECLARE_SOLVE_ALL(Kokkos::OpenMP)
#endif
#if defined(KOKKOS_ENABLE_CUDA)
KEIG_DECLARE_SOLVE_ALL(Kokkos::Cuda)
#endif
#undef KEIG_DECLARE_SOLVE_ALL
#undef KEIG_DECLARE_SOLVE

}  // namespace keig::detail
