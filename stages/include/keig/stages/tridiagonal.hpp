// stages/tridiagonal: eigenpairs of the real tridiagonal (d, e) produced by a
// reduction. All pairs with vectors, on every space: keig's stedc (merge
// gemms where Q lives, so on a device Q never leaves it). On a device,
// eigenvalues only: keig's bisection; subsets of vectors: keig's bisection
// and inverse iteration. Otherwise the host LAPACK solvers of
// backends/ (stebz+stein, stemr), where only d, e, the eigenvalues and
// the tridiagonal eigenvectors cross between host and device. The
// eigenvectors arrive converted to the scalar type in the first m columns of
// Z (ready for the back-transformations).
#pragma once

#include <Kokkos_Core.hpp>
#include <type_traits>

#include "keig/backends/context.hpp"
#include "keig/backends/tridiagonal.hpp"
#include "keig/stages/stedc.hpp"
#include "keig/stages/tridiagonal_bisection.hpp"
#include "keig/stages/tridiagonal_inverse_iteration.hpp"
#include "keig/views/arena.hpp"

namespace keig::stages {

// Execution spaces whose memory the host cannot read: there the eigenvector
// matrix of all pairs is built in place by keig's stedc.
template <class ExecSpace>
inline constexpr bool is_device_space_v =
    !Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space_of<ExecSpace>>::accessible;

// Converts real columns to the scalar type in place of Z.
template <class T, class ExecSpace>
void real_to_scalar(const ExecSpace& space, const Matrix<real_t<T>, ExecSpace>& zr, const Matrix<T, ExecSpace>& z) {
  using Policy = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2, Kokkos::Iterate::Left, Kokkos::Iterate::Left>>;
  Kokkos::parallel_for(
      "keig::tridiagonal::to_scalar", Policy(space, {0, 0}, {index_t(zr.extent(0)), index_t(zr.extent(1))}),
      KOKKOS_LAMBDA(const index_t i, const index_t j) { z(i, j) = T(zr(i, j)); });
}

// All pairs with vectors by keig's stedc: d, e to the host, Q built on the
// execution space (in Z itself for real scalars), w back. Returns n.
template <class T, class ExecSpace>
index_t keig_divide_and_conquer(const backends::Context<ExecSpace>& ctx, const Vector<real_t<T>, ExecSpace>& d,
                                const Vector<real_t<T>, ExecSpace>& e, const Vector<real_t<T>, ExecSpace>& w,
                                const Matrix<T, ExecSpace>& z, Arena<ExecSpace>& arena) {
  using R = real_t<T>;
  const ExecSpace& space = ctx.space();
  const index_t n = d.extent(0);
  const auto dh = host_vector_for_copy<R>("keig::stedc::d", n),
             eh = host_vector_for_copy<R>("keig::stedc::e", n > 0 ? n - 1 : 0);
  Kokkos::deep_copy(space, dh, Kokkos::subview(d, std::make_pair(index_t(0), n)));
  if (n > 1) Kokkos::deep_copy(space, eh, Kokkos::subview(e, std::make_pair(index_t(0), n - 1)));
  space.fence();
  const StedcTuning tuning = stedc_default_tuning<ExecSpace>();
  const auto frame = arena.frame();
  const auto work = arena.template vector<R>("keig::stedc::work", stages::stedc_workspace_size<R>(n, tuning));
  if constexpr (std::is_same_v<T, R>) {
    stages::stedc<R, ExecSpace>(ctx, dh, eh, columns(z, 0, n), work, tuning);
  } else {
    const auto zr = arena.template matrix<R>("keig::stedc::Q", n, n);
    stages::stedc<R, ExecSpace>(ctx, dh, eh, zr, work, tuning);
    real_to_scalar<T>(space, zr, columns(z, 0, n));
  }
  Kokkos::deep_copy(space, Kokkos::subview(w, std::make_pair(index_t(0), n)), dh);
  space.fence();  // dh must outlive the copy
  return n;
}

// A subset of pairs on the execution space: keig's bisection for the
// eigenvalues, keig's inverse iteration for the vectors. Returns m.
template <class T, class ExecSpace>
index_t device_bisection_inverse_iteration(const backends::Context<ExecSpace>& ctx, const Range& range,
                                           const Vector<real_t<T>, ExecSpace>& d, const Vector<real_t<T>, ExecSpace>& e,
                                           const Vector<real_t<T>, ExecSpace>& w, const Matrix<T, ExecSpace>& z,
                                           Arena<ExecSpace>& arena) {
  using R = real_t<T>;
  const ExecSpace& space = ctx.space();
  const index_t n = d.extent(0);
  index_t m = 0;
  {
    const auto frame = arena.frame();
    const auto work = arena.template vector<R>("keig::bisection::work", tridiagonal_bisection_workspace_size<R>(n));
    m = tridiagonal_bisection<R, ExecSpace>(space, range, d, e, w, work);
  }
  if (m == 0) return 0;
  const auto frame = arena.frame();
  const auto work = arena.template vector<R>("keig::inverse_iteration::work",
                                             tridiagonal_inverse_iteration_workspace_size<R, ExecSpace>(n, m));
  if constexpr (std::is_same_v<T, R>) {
    tridiagonal_inverse_iteration<R, ExecSpace>(ctx, d, e, w, m, columns(z, 0, m), work);
  } else {
    const auto zr = arena.template matrix<R>("keig::inverse_iteration::Z", n, m);
    tridiagonal_inverse_iteration<R, ExecSpace>(ctx, d, e, w, m, zr, work);
    real_to_scalar<T>(space, zr, columns(z, 0, m));
  }
  return m;
}

// Whether tridiagonal_eigenpairs runs keig's stedc for these arguments.
inline bool tridiagonal_divide_and_conquer(backends::Job job, const Range& range, TridiagonalSolver solver) {
  return job == backends::Job::Vectors && range.kind == Range::Kind::All &&
         (solver == TridiagonalSolver::Auto || solver == TridiagonalSolver::DivideAndConquer);
}

// Adds to `size` the workspace tridiagonal_eigenpairs takes from its arena,
// for `known` eigenpairs (-1: a value range, whose count is known only
// after the bisection; then the vectors' workspace is left out and comes
// from the arena if it has room).
template <class T, class ExecSpace>
void tridiagonal_workspace(ArenaSize& size, backends::Job job, const Range& range, TridiagonalSolver solver,
                           index_t n, index_t known) {
  using R = real_t<T>;
  if (n <= 0) return;
  const auto frame = size.frame();
  if (tridiagonal_divide_and_conquer(job, range, solver)) {
    size.add<R>(stages::stedc_workspace_size<R>(n, stedc_default_tuning<ExecSpace>()));
    if (!std::is_same_v<T, R>) size.add_matrix<R>(n, n);
    return;
  }
  if (!is_device_space_v<ExecSpace>) return;
  const bool vectors = job == backends::Job::Vectors;
  if ((solver == TridiagonalSolver::Auto || solver == TridiagonalSolver::BisectionInverseIteration) &&
      (!vectors || range.kind != Range::Kind::All)) {
    {
      const auto bisection = size.frame();
      size.add<R>(tridiagonal_bisection_workspace_size<R>(n));
    }
    if (vectors && known > 0) {
      size.add<R>(tridiagonal_inverse_iteration_workspace_size<R, ExecSpace>(n, known));
      if (!std::is_same_v<T, R>) size.add_matrix<R>(n, known);
    }
    return;
  }
  if (vectors && known > 0) size.add<R>(n * known);  // the host solvers' vectors on the device
}

// Returns m; w(0..m-1) ascending; z(:, 0..m-1) the eigenvectors of T when
// job == Vectors. d, e are not modified. Blocks the host (it runs there).
// Device workspace comes from `arena` (tridiagonal_workspace sizes it).
template <class T, class ExecSpace>
index_t tridiagonal_eigenpairs(const backends::Context<ExecSpace>& ctx, backends::Job job, const Range& range,
                               TridiagonalSolver solver, const Vector<real_t<T>, ExecSpace>& d,
                               const Vector<real_t<T>, ExecSpace>& e, const Vector<real_t<T>, ExecSpace>& w,
                               const Matrix<T, ExecSpace>& z, Arena<ExecSpace>& arena) {
  using R = real_t<T>;
  const ExecSpace& space = ctx.space();
  const index_t n = d.extent(0);
  // All pairs with vectors: keig's stedc on every space. On hosts its
  // secular roots and leaves run on all threads where LAPACK's ?laed4 loop
  // is serial: 2 cores, tridiagonals of random dense matrices, n = 1000 /
  // 2000 / 3000 / 4000: 0.022 / 0.110 / 0.300 / 0.611 s against dstedc's
  // 0.035 / 0.177 / 0.450 / 0.908 s.
  if (tridiagonal_divide_and_conquer(job, range, solver) && n > 0)
    return keig_divide_and_conquer<T>(ctx, d, e, w, z, arena);
  if constexpr (is_device_space_v<ExecSpace>) {
    // Eigenvalues only: Sturm bisection in parallel over the eigenvalues,
    // where the host's dqds would be a serial O(n^2) step; subsets of
    // vectors: the same bisection, then inverse iteration in parallel over
    // the vectors (the host's stein re-orthogonalizes clusters serially).
    if (solver == TridiagonalSolver::Auto || solver == TridiagonalSolver::BisectionInverseIteration) {
      if (job == backends::Job::ValuesOnly) {
        const auto frame = arena.frame();
        const auto work = arena.template vector<R>("keig::bisection::work", tridiagonal_bisection_workspace_size<R>(n));
        return tridiagonal_bisection<R, ExecSpace>(space, range, d, e, w, work);
      }
      if (range.kind != Range::Kind::All) return device_bisection_inverse_iteration<T>(ctx, range, d, e, w, z, arena);
    }
  }
  const bool vectors = job == backends::Job::Vectors;
  const index_t columns = vectors ? (range.kind == Range::Kind::Index ? range.iu - range.il + 1 : n) : 0;
  // Host-readable real Z without padding: the solver writes it in place,
  // with no buffer, copy and conversion (for LAPACK's stedc, before keig's
  // took all pairs, they cost about 0.1 s of its 1 s at n = 4000 on 2 cores).
  constexpr bool host_readable = !is_device_space_v<ExecSpace>;
  constexpr bool in_place_type = host_readable && std::is_same_v<T, R>;
  const bool in_place = in_place_type && vectors && leading_dimension(z) == n;
  const auto dh = host_vector_for_copy<R>("keig::tridiagonal::d", n),
             eh = host_vector_for_copy<R>("keig::tridiagonal::e", n > 0 ? n - 1 : 0);
  // Initialized: LAPACKE's ?stein checks all n entries of w for NaN, not
  // only the eigenvalues ?stebz wrote.
  HostVector<R> wh("keig::tridiagonal::w", n);
  HostMatrix<R> zh;
  if (in_place) {
    if constexpr (in_place_type) zh = HostMatrix<R>(z.data(), n, z.extent(1));
  } else {
    zh = host_matrix_for_copy<R>("keig::tridiagonal::Z", vectors ? n : 0, columns);
  }
  Kokkos::deep_copy(space, dh, Kokkos::subview(d, std::make_pair(index_t(0), n)));
  if (n > 1) Kokkos::deep_copy(space, eh, Kokkos::subview(e, std::make_pair(index_t(0), n - 1)));
  space.fence();
  const index_t m = backends::tridiagonal_eigensolver<R>(job, range, solver, dh, eh, wh, zh);
  Kokkos::deep_copy(space, Kokkos::subview(w, std::make_pair(index_t(0), m)), Kokkos::subview(wh, std::make_pair(index_t(0), m)));
  if (vectors && m > 0 && !in_place) {
    // Real eigenvectors into Z as T: straight from the host buffer where the
    // space reads host memory, through a device copy otherwise.
    if constexpr (host_readable) {
      real_to_scalar<T>(space, Matrix<R, ExecSpace>(zh.data(), n, m), keig::columns(z, 0, m));
    } else {
      // A contiguous piece: the copy from the host needs matching layouts.
      const auto frame = arena.frame();
      const auto zr = make_matrix<R, ExecSpace>(arena.template vector<R>("keig::tridiagonal::Z_device", n * m).data(),
                                                n, m, n);
      Kokkos::deep_copy(space, zr, Kokkos::subview(zh, Kokkos::ALL(), std::make_pair(index_t(0), m)));
      real_to_scalar<T>(space, zr, keig::columns(z, 0, m));
    }
  }
  // The host buffers must outlive the asynchronous copies.
  space.fence();
  return m;
}

}  // namespace keig::stages
