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

template <class T, class ExecSpace>
OwnedVector<T, ExecSpace> allocate_vector(const ExecSpace& space, const std::string& label, index_t n) {
  return detail::allocate<OwnedVector<T, ExecSpace>>(space, label, n);
}

}  // namespace keig
