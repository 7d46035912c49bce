// stages/tridiagonal: eigenpairs of the real tridiagonal (d, e) produced by a
// reduction, with the host LAPACK solvers of backends/ (stedc, stebz+stein,
// stemr). Only d, e, the eigenvalues and the tridiagonal eigenvectors cross
// between host and device; the eigenvectors arrive converted to the scalar
// type in the first m columns of Z (ready for the back-transformations).
#pragma once

#include <Kokkos_Core.hpp>

#include "keig/backends/tridiagonal.hpp"
#include "keig/views/workspace.hpp"

namespace keig::stages {

// Returns m; w(0..m-1) ascending; z(:, 0..m-1) the eigenvectors of T when
// job == Vectors. d, e are not modified. Blocks the host (it runs there).
template <class T, class ExecSpace>
index_t tridiagonal_eigenpairs(const ExecSpace& space, backends::Job job, const Range& range,
                               TridiagonalSolver solver, const Vector<real_t<T>, ExecSpace>& d,
                               const Vector<real_t<T>, ExecSpace>& e, const Vector<real_t<T>, ExecSpace>& w,
                               const Matrix<T, ExecSpace>& z) {
  using R = real_t<T>;
  const index_t n = d.extent(0);
  const index_t columns = job == backends::Job::Vectors ? (range.kind == Range::Kind::Index ? range.iu - range.il + 1 : n) : 0;
  HostVector<R> dh("keig::tridiagonal::d", n), eh("keig::tridiagonal::e", n > 0 ? n - 1 : 0),
      wh("keig::tridiagonal::w", n);
  HostMatrix<R> zh("keig::tridiagonal::Z", job == backends::Job::Vectors ? n : 0, columns);
  Kokkos::deep_copy(space, dh, Kokkos::subview(d, std::make_pair(index_t(0), n)));
  if (n > 1) Kokkos::deep_copy(space, eh, Kokkos::subview(e, std::make_pair(index_t(0), n - 1)));
  space.fence();
  const index_t m = backends::tridiagonal_eigensolver<R>(job, range, solver, dh, eh, wh, zh);
  Kokkos::deep_copy(space, Kokkos::subview(w, std::make_pair(index_t(0), m)), Kokkos::subview(wh, std::make_pair(index_t(0), m)));
  if (job == backends::Job::Vectors && m > 0) {
    // Real eigenvectors to the execution space, then into Z as T.
    auto zr = allocate_matrix<R>(space, "keig::tridiagonal::Z_device", n, m);
    Kokkos::deep_copy(space, zr, Kokkos::subview(zh, Kokkos::ALL(), std::make_pair(index_t(0), m)));
    using Policy = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2, Kokkos::Iterate::Left, Kokkos::Iterate::Left>>;
    Kokkos::parallel_for(
        "keig::tridiagonal::to_scalar", Policy(space, {0, 0}, {n, m}),
        KOKKOS_LAMBDA(const index_t i, const index_t j) { z(i, j) = T(zr(i, j)); });
  }
  // The host buffers must outlive the asynchronous copies.
  space.fence();
  return m;
}

}  // namespace keig::stages
