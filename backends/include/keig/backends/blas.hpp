// BLAS-3 on canonical views, dispatched on the execution space: cuBLAS on the
// instance's stream for Kokkos::Cuda, CBLAS (OpenBLAS) for host spaces.
// Shapes are checked here so stages fail with a named argument, not a crash.
#pragma once

#include <string>
#include <type_traits>

#include "keig/backends/context.hpp"
#include "keig/backends/cuda.hpp"
#include "keig/backends/host.hpp"
#include "keig/errors.hpp"
#include "keig/views/matrix.hpp"

namespace keig::backends {

namespace detail {
inline void require(bool ok, const char* routine, const char* argument, const std::string& what) {
  if (!ok) throw InvalidArgument(argument, std::string(routine) + ": " + what);
}
template <class M>
index_t rows_of(const M& a, Op op) { return op == Op::NoTrans ? a.extent(0) : a.extent(1); }
template <class M>
index_t cols_of(const M& a, Op op) { return op == Op::NoTrans ? a.extent(1) : a.extent(0); }
}  // namespace detail

// y = alpha op(A) x + beta y
template <class T, class ExecSpace>
void gemv(const Context<ExecSpace>& ctx, Op ta, nondeduced_t<T> alpha, const Matrix<T, ExecSpace>& a,
          const Vector<T, ExecSpace>& x, nondeduced_t<T> beta, const Vector<T, ExecSpace>& y) {
  const index_t m = a.extent(0), n = a.extent(1);
  detail::require(static_cast<index_t>(x.extent(0)) == (ta == Op::NoTrans ? n : m), "gemv", "x", "length of x");
  detail::require(static_cast<index_t>(y.extent(0)) == (ta == Op::NoTrans ? m : n), "gemv", "y", "length of y");
  if (y.extent(0) == 0) return;
  ctx.before_vendor_call();
  if constexpr (is_cuda_space_v<ExecSpace>)
    cuda::gemv(ctx, ta, m, n, alpha, a.data(), leading_dimension(a), x.data(), beta, y.data());
  else
    host::gemv(ta, m, n, alpha, a.data(), leading_dimension(a), x.data(), beta, y.data());
}

// y = alpha A x + beta y, A Hermitian (vendor symv/hemv: the peer of stages::symv).
template <class T, class ExecSpace>
void symv(const Context<ExecSpace>& ctx, Uplo uplo, nondeduced_t<T> alpha, const Matrix<T, ExecSpace>& a,
          const Vector<T, ExecSpace>& x, nondeduced_t<T> beta, const Vector<T, ExecSpace>& y) {
  const index_t n = a.extent(0);
  detail::require(static_cast<index_t>(a.extent(1)) == n, "symv", "A", "A must be square");
  detail::require(static_cast<index_t>(x.extent(0)) == n && static_cast<index_t>(y.extent(0)) == n, "symv", "x",
                  "x and y need n entries");
  if (n == 0) return;
  ctx.before_vendor_call();
  if constexpr (is_cuda_space_v<ExecSpace>)
    cuda::symv(ctx, uplo, n, alpha, a.data(), leading_dimension(a), x.data(), beta, y.data());
  else
    host::symv(uplo, n, alpha, a.data(), leading_dimension(a), x.data(), beta, y.data());
}

// C = alpha op(A) op(B) + beta C
template <class T, class ExecSpace>
void gemm(const Context<ExecSpace>& ctx, Op ta, Op tb, nondeduced_t<T> alpha, const Matrix<T, ExecSpace>& a,
          const Matrix<T, ExecSpace>& b, nondeduced_t<T> beta, const Matrix<T, ExecSpace>& c) {
  const index_t m = c.extent(0), n = c.extent(1), k = detail::cols_of(a, ta);
  detail::require(detail::rows_of(a, ta) == m, "gemm", "A", "rows of op(A) differ from rows of C");
  detail::require(detail::rows_of(b, tb) == k && detail::cols_of(b, tb) == n, "gemm", "B",
                  "op(B) is not k x n");
  if (m == 0 || n == 0) return;
  ctx.before_vendor_call();
  if constexpr (is_cuda_space_v<ExecSpace>)
    cuda::gemm(ctx, ta, tb, m, n, k, alpha, a.data(), leading_dimension(a), b.data(), leading_dimension(b), beta,
               c.data(), leading_dimension(c));
  else
    host::gemm(ta, tb, m, n, k, alpha, a.data(), leading_dimension(a), b.data(), leading_dimension(b), beta,
               c.data(), leading_dimension(c));
}

// C_i = alpha op(A_i) op(B_i) + beta C_i for i < batch, all m x n with op(A_i) m x k; the pointer arrays live in
// the execution space's memory (device memory on Kokkos::Cuda).
template <class T, class ExecSpace>
void gemm_batched(const Context<ExecSpace>& ctx, Op ta, Op tb, index_t m, index_t n, index_t k, nondeduced_t<T> alpha,
                  const T* const* a, index_t lda, const T* const* b, index_t ldb, nondeduced_t<T> beta, T* const* c,
                  index_t ldc, index_t batch) {
  detail::require(m >= 0 && n >= 0 && k >= 0 && batch >= 0, "gemm_batched", "m", "negative size");
  detail::require(lda >= (ta == Op::NoTrans ? m : k) && lda >= 1, "gemm_batched", "lda", "lda too small");
  detail::require(ldb >= (tb == Op::NoTrans ? k : n) && ldb >= 1, "gemm_batched", "ldb", "ldb too small");
  detail::require(ldc >= m && ldc >= 1, "gemm_batched", "ldc", "ldc too small");
  if (m == 0 || n == 0 || batch == 0) return;
  ctx.before_vendor_call();
  if constexpr (is_cuda_space_v<ExecSpace>)
    cuda::gemm_batched<T>(ctx, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, batch);
  else
    host::gemm_batched<T>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, batch);
}

// C = alpha A B + beta C (side Left) or alpha B A + beta C (Right), A Hermitian.
template <class T, class ExecSpace>
void symm(const Context<ExecSpace>& ctx, Side side, Uplo uplo, nondeduced_t<T> alpha, const Matrix<T, ExecSpace>& a,
          const Matrix<T, ExecSpace>& b, nondeduced_t<T> beta, const Matrix<T, ExecSpace>& c) {
  const index_t m = c.extent(0), n = c.extent(1);
  const index_t ka = side == Side::Left ? m : n;
  detail::require(a.extent(0) == ka && a.extent(1) == ka, "symm", "A", "A must be square and match C");
  detail::require(b.extent(0) == m && b.extent(1) == n, "symm", "B", "B must have the shape of C");
  if (m == 0 || n == 0) return;
  ctx.before_vendor_call();
  if constexpr (is_cuda_space_v<ExecSpace>)
    cuda::symm(ctx, side, uplo, m, n, alpha, a.data(), leading_dimension(a), b.data(), leading_dimension(b), beta,
               c.data(), leading_dimension(c));
  else
    host::symm(side, uplo, m, n, alpha, a.data(), leading_dimension(a), b.data(), leading_dimension(b), beta,
               c.data(), leading_dimension(c));
}

// Whether symm_lower_skinny runs for scalar T with k columns: real double on
// CUDA devices of compute capability 8.0 or newer, k <= 64.
template <class T, class ExecSpace>
bool symm_skinny_available(const Context<ExecSpace>& ctx, index_t k) {
  if constexpr (is_cuda_space_v<ExecSpace> && std::is_same_v<T, double>)
    return k >= 0 && k <= 64 && cuda::symm_skinny_supported(ctx);
  else
    return false;
}

// Rows up to which symm_lower_skinny's row blocks all run at once (0 where
// it is not available).
template <class T, class ExecSpace>
index_t symm_skinny_resident_rows(const Context<ExecSpace>& ctx, index_t k) {
  if constexpr (is_cuda_space_v<ExecSpace> && std::is_same_v<T, double>)
    return symm_skinny_available<T>(ctx, k) ? cuda::symm_skinny_resident_rows(ctx, k) : 0;
  else
    return 0;
}

// X = A V, A real symmetric (lower triangle referenced), V and X m x k with
// k <= 64: keig's FP64 tensor-core kernel (backends/src/cuda_symm_skinny.cpp),
// one launch where cuBLAS needs a symm or two gemms per block column.
// Elsewhere (symm_skinny_available false) InvalidArgument names `space`.
template <class T, class ExecSpace>
void symm_lower_skinny(const Context<ExecSpace>& ctx, const Matrix<T, ExecSpace>& a, const Matrix<T, ExecSpace>& v,
                       const Matrix<T, ExecSpace>& x) {
  const index_t m = a.extent(0), k = v.extent(1);
  detail::require(static_cast<index_t>(a.extent(1)) == m, "symm_lower_skinny", "A", "A must be square");
  detail::require(static_cast<index_t>(v.extent(0)) == m, "symm_lower_skinny", "V", "V must have the rows of A");
  detail::require(x.extent(0) == v.extent(0) && x.extent(1) == v.extent(1), "symm_lower_skinny", "X",
                  "X must have the shape of V");
  detail::require(symm_skinny_available<T>(ctx, k), "symm_lower_skinny", "space",
                  "runs for real double on CUDA devices of compute capability 8.0 or newer with at most 64 columns, "
                  "got " + std::to_string(k) + " columns");
  if constexpr (is_cuda_space_v<ExecSpace> && std::is_same_v<T, double>) {
    if (m == 0 || k == 0) return;
    ctx.before_vendor_call();
    cuda::symm_lower_skinny(ctx, m, k, a.data(), leading_dimension(a), v.data(), leading_dimension(v), x.data(),
                            leading_dimension(x));
  }
}

// C = alpha A B^H + conj(alpha) B A^H + beta C (trans NoTrans; A, B n x k), C Hermitian.
template <class T, class ExecSpace>
void syr2k(const Context<ExecSpace>& ctx, Uplo uplo, Op trans, nondeduced_t<T> alpha, const Matrix<T, ExecSpace>& a,
           const Matrix<T, ExecSpace>& b, nondeduced_t<real_t<T>> beta, const Matrix<T, ExecSpace>& c) {
  const index_t n = c.extent(0), k = detail::cols_of(a, trans);
  detail::require(c.extent(1) == n, "syr2k", "C", "C must be square");
  detail::require(detail::rows_of(a, trans) == n, "syr2k", "A", "op(A) must have n rows");
  detail::require(detail::rows_of(b, trans) == n && detail::cols_of(b, trans) == k, "syr2k", "B",
                  "B must have the shape of A");
  if (n == 0) return;
  ctx.before_vendor_call();
  if constexpr (is_cuda_space_v<ExecSpace>)
    cuda::syr2k(ctx, uplo, trans, n, k, alpha, a.data(), leading_dimension(a), b.data(), leading_dimension(b), beta,
                c.data(), leading_dimension(c));
  else
    host::syr2k(uplo, trans, n, k, alpha, a.data(), leading_dimension(a), b.data(), leading_dimension(b), beta,
                c.data(), leading_dimension(c));
}

// B = alpha op(A)^{-1} B (Left) or alpha B op(A)^{-1} (Right), A triangular.
template <class T, class ExecSpace>
void trsm(const Context<ExecSpace>& ctx, Side side, Uplo uplo, Op ta, Diag diag, nondeduced_t<T> alpha,
          const Matrix<T, ExecSpace>& a, const Matrix<T, ExecSpace>& b) {
  const index_t m = b.extent(0), n = b.extent(1), ka = side == Side::Left ? m : n;
  detail::require(a.extent(0) == ka && a.extent(1) == ka, "trsm", "A", "A must be square and match B");
  if (m == 0 || n == 0) return;
  ctx.before_vendor_call();
  if constexpr (is_cuda_space_v<ExecSpace>)
    cuda::trsm(ctx, side, uplo, ta, diag, m, n, alpha, a.data(), leading_dimension(a), b.data(), leading_dimension(b));
  else
    host::trsm(side, uplo, ta, diag, m, n, alpha, a.data(), leading_dimension(a), b.data(), leading_dimension(b));
}

// B_i = alpha op(A_i)^{-1} B_i (Left) or alpha B_i op(A_i)^{-1} (Right) for i < batch, each A_i triangular and
// each B_i m x n; the pointer arrays live in the execution space's memory (device memory on Kokkos::Cuda).
template <class T, class ExecSpace>
void trsm_batched(const Context<ExecSpace>& ctx, Side side, Uplo uplo, Op ta, Diag diag, index_t m, index_t n,
                  nondeduced_t<T> alpha, const T* const* a, index_t lda, T* const* b, index_t ldb, index_t batch) {
  const index_t ka = side == Side::Left ? m : n;
  detail::require(m >= 0 && n >= 0 && batch >= 0, "trsm_batched", "m", "negative size");
  detail::require(lda >= ka && lda >= 1, "trsm_batched", "lda", "lda too small");
  detail::require(ldb >= m && ldb >= 1, "trsm_batched", "ldb", "ldb too small");
  if (m == 0 || n == 0 || batch == 0) return;
  ctx.before_vendor_call();
  if constexpr (is_cuda_space_v<ExecSpace>)
    cuda::trsm_batched<T>(ctx, side, uplo, ta, diag, m, n, alpha, a, lda, b, ldb, batch);
  else
    host::trsm_batched<T>(side, uplo, ta, diag, m, n, alpha, a, lda, b, ldb, batch);
}

// B = alpha op(A) B (Left) or alpha B op(A) (Right), A triangular.
template <class T, class ExecSpace>
void trmm(const Context<ExecSpace>& ctx, Side side, Uplo uplo, Op ta, Diag diag, nondeduced_t<T> alpha,
          const Matrix<T, ExecSpace>& a, const Matrix<T, ExecSpace>& b) {
  const index_t m = b.extent(0), n = b.extent(1), ka = side == Side::Left ? m : n;
  detail::require(a.extent(0) == ka && a.extent(1) == ka, "trmm", "A", "A must be square and match B");
  if (m == 0 || n == 0) return;
  ctx.before_vendor_call();
  if constexpr (is_cuda_space_v<ExecSpace>)
    cuda::trmm(ctx, side, uplo, ta, diag, m, n, alpha, a.data(), leading_dimension(a), b.data(), leading_dimension(b));
  else
    host::trmm(side, uplo, ta, diag, m, n, alpha, a.data(), leading_dimension(a), b.data(), leading_dimension(b));
}

}  // namespace keig::backends
