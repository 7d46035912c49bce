// The vendor dense eigensolvers behind Method::Vendor: LAPACK ?syevd/?syevr/
// ?syevx/?sygvd/?sygvx on host spaces, cuSOLVER Xsyevd/Xsyevdx/?sygvd/?sygvdx
// on Kokkos::Cuda. They are the reference in tests and the peer in benchmarks.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "keig/backends/lapack.hpp"
#include "keig/views/kernels.hpp"
#include "keig/views/workspace.hpp"

namespace keig::backends {

struct VendorCall {
  index_t found = 0;     // eigenpairs computed
  std::string routine;   // which vendor routine ran
};

namespace detail {

// cuSOLVER's eigenvalues of repeated/clustered spectra can come back out of
// order by a rounding error (seen for ?syevd/?sygvd on an H200); keig promises
// ascending order, so sort w(0..m-1) and permute Z's columns to match.
template <class T, class ExecSpace>
void sort_ascending(const ExecSpace& space, const Vector<real_t<T>, ExecSpace>& w, const Matrix<T, ExecSpace>& z,
                    index_t m, bool vectors) {
  using R = real_t<T>;
  if (m < 2) return;
  const auto wm = Kokkos::subview(w, std::make_pair(index_t(0), m));
  HostVector<R> wh("keig::vendor::w_host", m);
  Kokkos::deep_copy(space, wh, wm);
  space.fence();
  if (std::is_sorted(wh.data(), wh.data() + m)) return;
  std::vector<index_t> order(m);
  for (index_t i = 0; i < m; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](index_t a, index_t b) { return wh(a) < wh(b); });
  HostVector<R> sorted("keig::vendor::w_sorted", m);
  HostVector<index_t> perm_h("keig::vendor::perm_host", m);
  for (index_t i = 0; i < m; ++i) {
    sorted(i) = wh(order[i]);
    perm_h(i) = order[i];
  }
  Kokkos::deep_copy(space, wm, sorted);
  if (vectors) {
    const index_t n = z.extent(0);
    auto perm = allocate_vector<index_t>(space, "keig::vendor::perm", m);
    Kokkos::deep_copy(space, perm, perm_h);
    auto copy_owned = allocate_matrix<T>(space, "keig::vendor::z_unsorted", n, m);
    const Matrix<T, ExecSpace> unsorted = copy_owned;
    copy_matrix(space, columns(z, 0, m), unsorted);
    using Policy = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2, Kokkos::Iterate::Left, Kokkos::Iterate::Left>>;
    Kokkos::parallel_for(
        "keig::vendor::permute_columns", Policy(space, {0, 0}, {n, m}),
        KOKKOS_LAMBDA(const index_t i, const index_t j) { z(i, j) = unsorted(i, perm(j)); });
  }
  space.fence();  // the host buffers must outlive the copies
}

inline bool wants_divide_and_conquer(const Range& range, TridiagonalSolver solver) {
  return range.kind == Range::Kind::All &&
         (solver == TridiagonalSolver::Auto || solver == TridiagonalSolver::DivideAndConquer);
}
}  // namespace detail

// Standard problem. a (n x n) is destroyed; w needs n entries; z (n x >= m)
// receives the eigenvectors when job == Vectors.
template <class T, class ExecSpace>
VendorCall vendor_eigh(const Context<ExecSpace>& ctx, Job job, Uplo uplo, const Range& range,
                       TridiagonalSolver solver, const Matrix<T, ExecSpace>& a, const Vector<real_t<T>, ExecSpace>& w,
                       const Matrix<T, ExecSpace>& z) {
  const index_t n = a.extent(0), lda = leading_dimension(a);
  const bool vectors = job == Job::Vectors;
  VendorCall call;
  index_t info = 0;
  ctx.before_vendor_call();
  if constexpr (is_cuda_space_v<ExecSpace>) {
    if (range.kind == Range::Kind::All) {
      call.routine = "cusolverDnXsyevd";
      info = cuda::syevd(ctx, job, uplo, n, a.data(), lda, w.data());
      call.found = n;
    } else {
      call.routine = "cusolverDnXsyevdx";
      info = cuda::syevdx(ctx, job, range, uplo, n, a.data(), lda, call.found, w.data());
    }
    if (info == 0 && vectors) copy_matrix(ctx.space(), columns(a, 0, call.found), columns(z, 0, call.found));
    if (info == 0) detail::sort_ascending(ctx.space(), w, z, call.found, vectors);
  } else {
    T* zp = vectors ? z.data() : nullptr;
    const index_t ldz = vectors ? leading_dimension(z) : 1;
    if (detail::wants_divide_and_conquer(range, solver)) {
      call.routine = "LAPACK ?syevd";
      info = host::syevd(job, uplo, n, a.data(), lda, w.data());
      call.found = n;
      if (info == 0 && vectors) copy_matrix(ctx.space(), a, columns(z, 0, n));
    } else if (solver == TridiagonalSolver::BisectionInverseIteration) {
      call.routine = "LAPACK ?syevx";
      info = host::syevx(job, range, uplo, n, a.data(), lda, call.found, w.data(), zp, ldz);
    } else {
      call.routine = "LAPACK ?syevr";
      info = host::syevr(job, range, uplo, n, a.data(), lda, call.found, w.data(), zp, ldz);
    }
  }
  if (info > 0) throw ConvergenceFailure(call.routine, info);
  return call;
}

// Generalized problem (B Hermitian positive definite). a and b are destroyed
// (b holds its Cholesky factor on return).
template <class T, class ExecSpace>
VendorCall vendor_eigh_generalized(const Context<ExecSpace>& ctx, GeneralizedType type, Job job, Uplo uplo,
                                   const Range& range, TridiagonalSolver solver, const Matrix<T, ExecSpace>& a,
                                   const Matrix<T, ExecSpace>& b, const Vector<real_t<T>, ExecSpace>& w,
                                   const Matrix<T, ExecSpace>& z) {
  const index_t n = a.extent(0), lda = leading_dimension(a), ldb = leading_dimension(b);
  const bool vectors = job == Job::Vectors;
  VendorCall call;
  index_t info = 0;
  ctx.before_vendor_call();
  bool vectors_in_a = true;
  if constexpr (is_cuda_space_v<ExecSpace>) {
    if (range.kind == Range::Kind::All) {
      call.routine = "cusolverDn?sygvd";
      info = cuda::sygvd(ctx, type, job, uplo, n, a.data(), lda, b.data(), ldb, w.data());
      call.found = n;
    } else {
      call.routine = "cusolverDn?sygvdx";
      info = cuda::sygvdx(ctx, type, job, range, uplo, n, a.data(), lda, b.data(), ldb, call.found, w.data());
    }
  } else {
    if (detail::wants_divide_and_conquer(range, solver)) {
      call.routine = "LAPACK ?sygvd";
      info = host::sygvd(type, job, uplo, n, a.data(), lda, b.data(), ldb, w.data());
      call.found = n;
    } else {
      call.routine = "LAPACK ?sygvx";
      vectors_in_a = false;
      info = host::sygvx(type, job, range, uplo, n, a.data(), lda, b.data(), ldb, call.found, w.data(),
                         vectors ? z.data() : nullptr, vectors ? leading_dimension(z) : 1);
    }
  }
  // LAPACK and cuSOLVER: info in (n, 2n] means the leading minor info - n of B is not positive.
  if (info > n) throw NotPositiveDefinite("B", info - n);
  if (info > 0) throw ConvergenceFailure(call.routine, info);
  if (vectors && vectors_in_a) copy_matrix(ctx.space(), columns(a, 0, call.found), columns(z, 0, call.found));
  if constexpr (is_cuda_space_v<ExecSpace>) detail::sort_ascending(ctx.space(), w, z, call.found, vectors);
  return call;
}

}  // namespace keig::backends
