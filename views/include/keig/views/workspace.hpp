// Labelled workspace allocation with allocation failures turned into
// keig::OutOfMemory (bytes requested and the memory space in the message).
#pragma once

#include <Kokkos_Core.hpp>
#include <new>
#include <string>

#include "keig/errors.hpp"
#include "keig/views/matrix.hpp"

namespace keig {

template <class T, class ExecSpace>
using OwnedMatrix = Kokkos::View<T**, Kokkos::LayoutLeft, memory_space_of<ExecSpace>>;

template <class T, class ExecSpace>
using OwnedVector = Kokkos::View<T*, Kokkos::LayoutLeft, memory_space_of<ExecSpace>>;

namespace detail {
template <class ViewType, class ExecSpace, class... Extents>
ViewType allocate(const ExecSpace& space, const std::string& label, Extents... extents) {
  std::size_t bytes = sizeof(typename ViewType::value_type);
  ((bytes *= static_cast<std::size_t>(extents)), ...);
  try {
    return ViewType(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label), extents...);
  } catch (const std::bad_alloc&) {
    throw OutOfMemory(label, bytes, memory_space_of<ExecSpace>::name());
  } catch (const std::runtime_error& e) {
    // Some Kokkos versions report device allocation failures as runtime_error.
    const std::string what = e.what();
    if (what.find("alloc") != std::string::npos || what.find("memory") != std::string::npos)
      throw OutOfMemory(label, bytes, memory_space_of<ExecSpace>::name());
    throw;
  }
}
}  // namespace detail

// rows x cols, uninitialized, in ExecSpace's memory space.
template <class T, class ExecSpace>
OwnedMatrix<T, ExecSpace> allocate_matrix(const ExecSpace& space, const std::string& label, index_t rows,
                                          index_t cols) {
  return detail::allocate<OwnedMatrix<T, ExecSpace>>(space, label, rows, cols);
}

// Leading dimension for `rows` rows of T with every column starting on a
// 256-byte boundary (rows itself up to 256 bytes). Vendor BLAS-3 cares: on
// an H200, cuBLAS's dgemm of inner size 512 runs 11 % slower and dsyr2k 17 %
// when the columns sit 16 bytes off a 32-byte sector (ld = 20694 doubles),
// 34 % and 41 % when they sit 8 bytes off (ld odd), and dsyr2k 5 % slower at
// 64-byte than at 256-byte alignment (README "Leading dimensions").
template <class T>
constexpr index_t aligned_leading_dimension(index_t rows) {
  constexpr index_t per = sizeof(T) < 256 ? index_t(256 / sizeof(T)) : 1;
  return rows <= per ? rows : (rows + per - 1) / per * per;
}

// rows x cols, uninitialized, with leading dimension ld >= rows: a view of
// the first `rows` rows of a taller allocation. Its span is not contiguous
// when ld > rows, so copy it to other memory spaces through a contiguous
// view of its own space.
template <class T, class ExecSpace>
OwnedMatrix<T, ExecSpace> allocate_matrix(const ExecSpace& space, const std::string& label, index_t rows, index_t cols,
                                          index_t ld) {
  if (ld < rows)
    throw InvalidArgument("ld", "allocate_matrix: the leading dimension must be >= rows = " + std::to_string(rows) +
                                    ", got " + std::to_string(ld));
  auto full = detail::allocate<OwnedMatrix<T, ExecSpace>>(space, label, ld, cols);
  if (ld == rows) return full;
  return Kokkos::subview(full, std::make_pair(index_t(0), rows), Kokkos::ALL());
}

// rows x cols, uninitialized, with aligned_leading_dimension<T>(rows).
template <class T, class ExecSpace>
OwnedMatrix<T, ExecSpace> allocate_matrix_aligned(const ExecSpace& space, const std::string& label, index_t rows,
                                                  index_t cols) {
  return allocate_matrix<T>(space, label, rows, cols, aligned_leading_dimension<T>(rows));
}

template <class T, class ExecSpace>
OwnedVector<T, ExecSpace> allocate_vector(const ExecSpace& space, const std::string& label, index_t n) {
  return detail::allocate<OwnedVector<T, ExecSpace>>(space, label, n);
}

}  // namespace keig
