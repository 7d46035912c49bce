// LAPACK-level building blocks on canonical views, dispatched on the execution
// space (cuSOLVER for Kokkos::Cuda, LAPACKE/OpenBLAS for host spaces). Every
// info is translated: a positive info becomes the typed error it means.
#pragma once

#include <string>
#include <type_traits>

#include "keig/backends/blas.hpp"

namespace keig::backends {

// Cholesky factor in place; `argument` names the matrix in the error raised
// when a leading minor is not positive.
template <class T, class ExecSpace>
void potrf(const Context<ExecSpace>& ctx, Uplo uplo, const Matrix<T, ExecSpace>& a, const char* argument) {
  const index_t n = a.extent(0);
  detail::require(a.extent(1) == n, "potrf", argument, "matrix must be square");
  if (n == 0) return;
  ctx.before_vendor_call();
  index_t info;
  if constexpr (is_cuda_space_v<ExecSpace>) info = cuda::potrf(ctx, uplo, n, a.data(), leading_dimension(a));
  else info = host::potrf(uplo, n, a.data(), leading_dimension(a));
  if (info > 0) throw NotPositiveDefinite(argument, info);
}

// Householder QR of a (m x n): R in the upper triangle, reflectors below, tau (min(m, n)).
template <class T, class ExecSpace>
void geqrf(const Context<ExecSpace>& ctx, const Matrix<T, ExecSpace>& a, const Vector<T, ExecSpace>& tau) {
  const index_t m = a.extent(0), n = a.extent(1), k = m < n ? m : n;
  detail::require(static_cast<index_t>(tau.extent(0)) >= k, "geqrf", "tau", "needs min(m, n) entries");
  if (k == 0) return;
  ctx.before_vendor_call();
  index_t info;
  if constexpr (is_cuda_space_v<ExecSpace>) info = cuda::geqrf(ctx, m, n, a.data(), leading_dimension(a), tau.data());
  else info = host::geqrf(m, n, a.data(), leading_dimension(a), tau.data());
  (void)info;  // geqrf has no positive info
}

// Triangular factor t (k x k, upper) of H = I - V t V^H for the k column
// reflectors stored below the diagonal of v (n x k, unit diagonal implied).
// scratch_rows: callers with a sequence of calls whose v grows up to that
// many rows (within v's leading dimension) pass it to every call, so that
// the vendor's scratch is allocated once, for the largest.
template <class T, class ExecSpace>
void larft(const Context<ExecSpace>& ctx, const Matrix<T, ExecSpace>& v, const Vector<T, ExecSpace>& tau,
           const Matrix<T, ExecSpace>& t, index_t scratch_rows = 0) {
  const index_t n = v.extent(0), k = v.extent(1);
  detail::require(static_cast<index_t>(tau.extent(0)) >= k, "larft", "tau", "needs k entries");
  detail::require(t.extent(0) >= static_cast<size_t>(k) && t.extent(1) >= static_cast<size_t>(k), "larft", "T",
                  "needs k x k");
  if (k == 0) return;
  ctx.before_vendor_call();
  index_t info;
  if constexpr (is_cuda_space_v<ExecSpace>)
    info = cuda::larft(ctx, n, k, v.data(), leading_dimension(v), tau.data(), t.data(), leading_dimension(t),
                       scratch_rows);
  else
    info = host::larft(n, k, v.data(), leading_dimension(v), tau.data(), t.data(), leading_dimension(t));
  (void)info;  // larft has no positive info
}

// Eigenvalues (ascending, m a matrix, in w) and eigenvectors (over a) of
// `batch` real symmetric m x m matrices, m <= 32, stored one after another in
// a (column-major, leading dimension m), in one batched Jacobi call (cuSOLVER
// syevjBatched at its defaults: machine precision, at most 100 sweeps):
// stedc's leaves on GPUs. info (batch entries, device memory) receives each
// matrix's status, > 0 where the sweeps did not converge; it is read after a
// fence. CUDA spaces only: hosts solve such blocks one by one with steqr.
template <class R, class ExecSpace>
void syevj_batched(const Context<ExecSpace>& ctx, index_t m, index_t batch, R* a, R* w, int* info) {
  static_assert(is_cuda_space_v<ExecSpace>, "keig: syevj_batched runs on Kokkos::Cuda");
  static_assert(std::is_same_v<R, float> || std::is_same_v<R, double>, "keig: syevj_batched takes float or double");
  detail::require(m >= 1 && m <= 32, "syevj_batched", "m", "must be 1 to 32");
  detail::require(batch >= 0, "syevj_batched", "batch", "must not be negative");
  if (batch == 0) return;
  ctx.before_vendor_call();
  cuda::syevj_batched<R>(ctx, m, batch, a, w, info);
}

}  // namespace keig::backends
