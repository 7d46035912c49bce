// keig's public solver API.
//
//   keig::eigh(space, A, w, Z, options)        A Z = Z diag(w)
//   keig::eigvalsh(space, A, w, options)       eigenvalues only
//   keig::eigh(space, A, B, w, Z, options)     A Z = B Z diag(w), B Hermitian positive definite
//   keig::eigvalsh(space, A, B, w, options)
// and the same without `space` (the default instance of A's execution space).
//
// A, B, Z: rank-2 LayoutLeft Views (sub-views fine) of float, double,
// Kokkos::complex<float> or Kokkos::complex<double>, in a memory space that
// `space` can access; w: rank-1 contiguous View of the real type. Only the
// options.uplo triangle of A (and B) is read. On return w(0..m-1) holds the m
// wanted eigenvalues in ascending order and Z(:, 0..m-1) their eigenvectors
// (B-orthonormal for generalized problems), m = Result::eigenvalues_found.
// A is used as workspace: its contents on return are unspecified. B is not
// modified. When an argument check fails nothing is modified.
// All work is enqueued on `space`; the call returns when results are ready.
#pragma once

#include <cstddef>
#include <string>
#include <type_traits>

#include "keig/detail/solve.hpp"
#include "keig/errors.hpp"
#include "keig/options.hpp"
#include "keig/views/matrix.hpp"

namespace keig {

namespace detail {

template <class ExecSpace>
constexpr void check_space() {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value, "keig: first argument must be an execution space");
  static_assert(is_supported_space<ExecSpace>::value,
                "keig: this execution space is not compiled into keig (supported: Serial, OpenMP, Cuda when Kokkos "
                "enables them)");
}

template <class ExecSpace, class AView, class WView>
constexpr void check_types() {
  check_space<ExecSpace>();
  check_matrix_view_type<ExecSpace, AView>();
  check_vector_view_type<ExecSpace, WView>();
  using T = typename AView::value_type;
  static_assert(!std::is_const<T>::value, "keig: A is used as workspace and must not be a View of const");
  static_assert(std::is_same<typename WView::value_type, real_t<std::remove_const_t<T>>>::value,
                "keig: w must be a non-const View of the real type of A's scalar");
}

template <class ExecSpace, class AView, class OtherView>
constexpr void check_same_scalar(const char*) {
  check_matrix_view_type<ExecSpace, OtherView>();
  static_assert(std::is_same<std::remove_const_t<typename OtherView::value_type>, typename AView::value_type>::value,
                "keig: B and Z must have the scalar type of A");
}

// Overloads are told apart by these constraints (non-type template
// parameters, so that same-arity overloads are distinct templates).
template <class ExecSpace, class V>
using if_space_t = std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value && Kokkos::is_view<V>::value, int>;
template <bool Condition>
using if_t = std::enable_if_t<Condition, int>;

}  // namespace detail

// ---- standard problem -------------------------------------------------------
template <class ExecSpace, class AView, class WView, class ZView, detail::if_space_t<ExecSpace, AView> = 0>
Result eigh(const ExecSpace& space, const AView& A, const WView& w, const ZView& Z, const Options& options = {}) {
  detail::check_types<ExecSpace, AView, WView>();
  detail::check_same_scalar<ExecSpace, AView, ZView>("Z");
  static_assert(!std::is_const<typename ZView::value_type>::value, "keig: Z is an output and must not be const");
  using T = typename AView::value_type;
  return detail::solve<T, ExecSpace>(space, to_matrix<ExecSpace>(A), Matrix<T, ExecSpace>(), to_vector<ExecSpace>(w),
                                     to_matrix<ExecSpace>(Z), {false, true}, options);
}

template <class ExecSpace, class AView, class WView, detail::if_space_t<ExecSpace, AView> = 0>
Result eigvalsh(const ExecSpace& space, const AView& A, const WView& w, const Options& options = {}) {
  detail::check_types<ExecSpace, AView, WView>();
  using T = typename AView::value_type;
  return detail::solve<T, ExecSpace>(space, to_matrix<ExecSpace>(A), Matrix<T, ExecSpace>(), to_vector<ExecSpace>(w),
                                     Matrix<T, ExecSpace>(), {false, false}, options);
}

// ---- generalized problem ----------------------------------------------------
template <class ExecSpace, class AView, class BView, class WView, class ZView,
          detail::if_space_t<ExecSpace, AView> = 0>
Result eigh(const ExecSpace& space, const AView& A, const BView& B, const WView& w, const ZView& Z,
            const Options& options = {}) {
  detail::check_types<ExecSpace, AView, WView>();
  detail::check_same_scalar<ExecSpace, AView, BView>("B");
  detail::check_same_scalar<ExecSpace, AView, ZView>("Z");
  static_assert(!std::is_const<typename ZView::value_type>::value, "keig: Z is an output and must not be const");
  using T = typename AView::value_type;
  // B is only read: the const_cast narrows a View of const to the canonical type.
  auto b = make_matrix<T, ExecSpace>(const_cast<T*>(B.data()), B.extent(0), B.extent(1), leading_dimension(B));
  return detail::solve<T, ExecSpace>(space, to_matrix<ExecSpace>(A), b, to_vector<ExecSpace>(w),
                                     to_matrix<ExecSpace>(Z), {true, true}, options);
}

template <class ExecSpace, class AView, class BView, class WView,
          detail::if_space_t<ExecSpace, AView> = 0,
          detail::if_t<Kokkos::is_view<BView>::value && Kokkos::is_view<WView>::value> = 0>
Result eigvalsh(const ExecSpace& space, const AView& A, const BView& B, const WView& w, const Options& options = {}) {
  detail::check_types<ExecSpace, AView, WView>();
  detail::check_same_scalar<ExecSpace, AView, BView>("B");
  using T = typename AView::value_type;
  auto b = make_matrix<T, ExecSpace>(const_cast<T*>(B.data()), B.extent(0), B.extent(1), leading_dimension(B));
  return detail::solve<T, ExecSpace>(space, to_matrix<ExecSpace>(A), b, to_vector<ExecSpace>(w),
                                     Matrix<T, ExecSpace>(), {true, false}, options);
}

// ---- workspace ---------------------------------------------------------------
// Bytes of device workspace that eigh (vectors) or eigvalsh, on an n x n
// problem of scalar T with these options (generalized: the A, B forms), takes
// in one piece before its first stage: what Options::workspace must hold for
// the call to allocate no workspace of its own. 0 where the method that runs
// is the vendor's (which allocates as the vendor asks) or n = 0. A value
// range's eigenvectors are left out (their count is known only during the
// call); they use the workspace where it has room (Result::workspace_fallbacks).
template <class T, class ExecSpace>
std::size_t workspace_bytes(const ExecSpace& space, index_t n, const Options& options = {}, bool vectors = true,
                            bool generalized = false) {
  detail::check_space<ExecSpace>();
  if (n < 0) throw InvalidArgument("n", "must be non-negative, got " + std::to_string(n));
  return detail::workspace_bytes<T, ExecSpace>(space, n, {generalized, vectors}, options);
}

// ---- overloads on the default instance of A's execution space ---------------
template <class AView, class WView, class ZView, detail::if_t<Kokkos::is_view<AView>::value> = 0>
Result eigh(const AView& A, const WView& w, const ZView& Z, const Options& options = {}) {
  return eigh(typename AView::execution_space(), A, w, Z, options);
}
template <class AView, class WView, detail::if_t<Kokkos::is_view<AView>::value> = 0>
Result eigvalsh(const AView& A, const WView& w, const Options& options = {}) {
  return eigvalsh(typename AView::execution_space(), A, w, options);
}
template <class AView, class BView, class WView, class ZView,
          detail::if_t<Kokkos::is_view<AView>::value && Kokkos::is_view<ZView>::value> = 0>
Result eigh(const AView& A, const BView& B, const WView& w, const ZView& Z, const Options& options = {}) {
  return eigh(typename AView::execution_space(), A, B, w, Z, options);
}
template <class AView, class BView, class WView,
          detail::if_t<Kokkos::is_view<AView>::value && Kokkos::is_view<BView>::value &&
                       Kokkos::is_view<WView>::value> = 0>
Result eigvalsh(const AView& A, const BView& B, const WView& w, const Options& options = {}) {
  return eigvalsh(typename AView::execution_space(), A, B, w, options);
}

}  // namespace keig
