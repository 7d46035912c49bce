// LAPACK-level building blocks on canonical views, dispatched on the execution
// space (cuSOLVER for Kokkos::Cuda, LAPACKE/OpenBLAS for host spaces). Every
// info is translated: a positive info becomes the typed error it means.
#pragma once

#include <string>

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
template <class T, class ExecSpace>
void larft(const Context<ExecSpace>& ctx, const Matrix<T, ExecSpace>& v, const Vector<T, ExecSpace>& tau,
           const Matrix<T, ExecSpace>& t) {
  const index_t n = v.extent(0), k = v.extent(1);
  detail::require(static_cast<index_t>(tau.extent(0)) >= k, "larft", "tau", "needs k entries");
  detail::require(t.extent(0) >= static_cast<size_t>(k) && t.extent(1) >= static_cast<size_t>(k), "larft", "T",
                  "needs k x k");
  if (k == 0) return;
  ctx.before_vendor_call();
  index_t info;
  if constexpr (is_cuda_space_v<ExecSpace>)
    info = cuda::larft(ctx, n, k, v.data(), leading_dimension(v), tau.data(), t.data(), leading_dimension(t));
  else
    info = host::larft(n, k, v.data(), leading_dimension(v), tau.data(), t.data(), leading_dimension(t));
  (void)info;  // larft has no positive info
}

}  // namespace keig::backends
