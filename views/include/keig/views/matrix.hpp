// Canonical matrix and vector views. Every public entry point narrows the
// caller's Views to these unmanaged LayoutLeft types, so each stage is compiled
// once per (scalar, execution space) whatever View types the caller uses.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "keig/views/scalar.hpp"

namespace keig {

using index_t = std::int64_t;

template <class ExecSpace>
using memory_space_of = typename ExecSpace::memory_space;

// Column-major matrix with a leading dimension (LayoutLeft views may be padded
// or be sub-views of a larger matrix: leading_dimension() is their stride).
template <class T, class ExecSpace>
using Matrix = Kokkos::View<T**, Kokkos::LayoutLeft, memory_space_of<ExecSpace>,
                            Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

template <class T, class ExecSpace>
using Vector = Kokkos::View<T*, Kokkos::LayoutLeft, memory_space_of<ExecSpace>,
                            Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

template <class T>
using HostMatrix = Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::HostSpace>;

template <class T>
using HostVector = Kokkos::View<T*, Kokkos::LayoutLeft, Kokkos::HostSpace>;

// Host buffers that a copy or the code fills before any read, allocated
// without Kokkos's initialization: that runs as a parallel region of the
// host space's threads, which on a GPU machine's busy host took 1-15 ms a
// view (H200 machine, 16 host threads: stedc's few small host views cost
// 25-60 ms of the tridiagonal step at n = 16384).
template <class T>
HostVector<T> host_vector_for_copy(const std::string& label, index_t n) {
  return HostVector<T>(Kokkos::view_alloc(label, Kokkos::WithoutInitializing), n);
}
template <class T>
HostMatrix<T> host_matrix_for_copy(const std::string& label, index_t rows, index_t cols) {
  return HostMatrix<T>(Kokkos::view_alloc(label, Kokkos::WithoutInitializing), rows, cols);
}
// The host mirror of a device view, uninitialized (Kokkos::create_mirror_view
// initializes it as above).
template <class View>
auto host_mirror_for_copy(const View& v) {
  return Kokkos::create_mirror_view(Kokkos::HostSpace(), v, Kokkos::WithoutInitializing);
}

template <class View>
index_t leading_dimension(const View& a) {
  static_assert(View::rank == 2, "keig: leading_dimension needs a rank-2 view");
  // BLAS wants ld >= max(1, rows); an empty view may report stride 0.
  const index_t rows = static_cast<index_t>(a.extent(0));
  const index_t stride = static_cast<index_t>(a.stride(1));
  return stride > rows ? stride : (rows > 1 ? rows : 1);
}

// An unmanaged LayoutLeft view of `rows` x `cols` at `data` with leading
// dimension `ld`, in the memory space of ExecSpace. Used to narrow a caller's
// View (possibly in another memory space accessible from ExecSpace, e.g. UVM or
// host-pinned memory) to the canonical type.
template <class T, class ExecSpace>
Matrix<T, ExecSpace> make_matrix(T* data, index_t rows, index_t cols, index_t ld) {
  using Full = Matrix<T, ExecSpace>;
  if (rows == 0 || cols == 0) return Full(data, rows, cols);
  Full full(data, ld, cols);
  return Kokkos::subview(full, std::make_pair(index_t(0), rows), Kokkos::ALL());
}

// Columns [first, first + count) of a matrix (a view of the same type, no copy).
template <class View>
View columns(const View& a, index_t first, index_t count) {
  return Kokkos::subview(a, Kokkos::ALL(), std::make_pair(first, first + count));
}

// Rows [r0, r1) and columns [c0, c1) of a matrix (a view of the same type, no copy).
template <class View>
View block(const View& a, index_t r0, index_t r1, index_t c0, index_t c1) {
  return Kokkos::subview(a, std::make_pair(r0, r1), std::make_pair(c0, c1));
}

// Entry (r, c) of the unit lower trapezoidal reflector matrix V whose strict
// lower part is stored (LAPACK's geqrf/sytrd storage): zero above the
// diagonal, one on it, the stored entry below.
template <class T>
KOKKOS_INLINE_FUNCTION T reflector_entry(index_t r, index_t c, const T& stored) {
  return r < c ? T(0) : (r == c ? T(1) : stored);
}

// Keeps a scalar parameter out of template argument deduction, so that
// gemm(ctx, ..., 1.0, A, ...) works for complex A.
template <class T>
struct nondeduced { using type = T; };
template <class T>
using nondeduced_t = typename nondeduced<T>::type;

// Compile-time checks shared by every public entry point.
template <class ExecSpace, class View>
constexpr void check_matrix_view_type() {
  static_assert(Kokkos::is_view<View>::value, "keig: matrix arguments must be Kokkos::View");
  static_assert(View::rank == 2, "keig: matrix arguments must be rank-2 Views");
  static_assert(std::is_same<typename View::array_layout, Kokkos::LayoutLeft>::value,
                "keig: matrix arguments must be LayoutLeft (column-major) Views");
  static_assert(is_supported_scalar_v<typename View::value_type>,
                "keig: scalar type must be float, double, Kokkos::complex<float> or Kokkos::complex<double>");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename View::memory_space>::accessible,
                "keig: matrix View's memory space is not accessible from the execution space");
}

template <class ExecSpace, class View>
constexpr void check_vector_view_type() {
  static_assert(Kokkos::is_view<View>::value, "keig: eigenvalue argument must be a Kokkos::View");
  static_assert(View::rank == 1, "keig: eigenvalue argument must be a rank-1 View");
  static_assert(std::is_same<typename View::array_layout, Kokkos::LayoutLeft>::value ||
                    std::is_same<typename View::array_layout, Kokkos::LayoutRight>::value,
                "keig: eigenvalue View must be contiguous (LayoutLeft or LayoutRight)");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename View::memory_space>::accessible,
                "keig: eigenvalue View's memory space is not accessible from the execution space");
}

template <class ExecSpace, class View>
Matrix<typename View::value_type, ExecSpace> to_matrix(const View& a) {
  return make_matrix<typename View::value_type, ExecSpace>(a.data(), a.extent(0), a.extent(1),
                                                           leading_dimension(a));
}

template <class ExecSpace, class View>
Vector<typename View::value_type, ExecSpace> to_vector(const View& v) {
  return Vector<typename View::value_type, ExecSpace>(v.data(), v.extent(0));
}

}  // namespace keig
