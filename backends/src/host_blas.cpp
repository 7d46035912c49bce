// BLAS-3 on host spaces through CBLAS (OpenBLAS).
#include <cblas.h>

#include "host_common.hpp"

namespace keig::backends::host {
namespace {

CBLAS_TRANSPOSE cblas_op(Op op, bool complex) {
  if (op == Op::NoTrans) return CblasNoTrans;
  return (op == Op::ConjTrans && complex) ? CblasConjTrans : CblasTrans;
}
CBLAS_UPLO cblas_uplo(Uplo u) { return u == Uplo::Lower ? CblasLower : CblasUpper; }
CBLAS_SIDE cblas_side(Side s) { return s == Side::Left ? CblasLeft : CblasRight; }
CBLAS_DIAG cblas_diag(Diag d) { return d == Diag::Unit ? CblasUnit : CblasNonUnit; }

}  // namespace

template <class T>
void gemv(Op ta, index_t m, index_t n, T alpha, const T* a, index_t lda, const T* x, T beta, T* y) {
  const auto A = cblas_op(ta, is_complex_v<T>);
  if constexpr (std::is_same_v<T, float>) cblas_sgemv(CblasColMajor, A, m, n, alpha, a, lda, x, 1, beta, y, 1);
  else if constexpr (std::is_same_v<T, double>) cblas_dgemv(CblasColMajor, A, m, n, alpha, a, lda, x, 1, beta, y, 1);
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>)
    cblas_cgemv(CblasColMajor, A, m, n, &alpha, a, lda, x, 1, &beta, y, 1);
  else
    cblas_zgemv(CblasColMajor, A, m, n, &alpha, a, lda, x, 1, &beta, y, 1);
}

template <class T>
void symv(Uplo uplo, index_t n, T alpha, const T* a, index_t lda, const T* x, T beta, T* y) {
  const auto U = cblas_uplo(uplo);
  if constexpr (std::is_same_v<T, float>) cblas_ssymv(CblasColMajor, U, n, alpha, a, lda, x, 1, beta, y, 1);
  else if constexpr (std::is_same_v<T, double>) cblas_dsymv(CblasColMajor, U, n, alpha, a, lda, x, 1, beta, y, 1);
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>)
    cblas_chemv(CblasColMajor, U, n, &alpha, a, lda, x, 1, &beta, y, 1);
  else
    cblas_zhemv(CblasColMajor, U, n, &alpha, a, lda, x, 1, &beta, y, 1);
}

template <class T>
void gemm(Op ta, Op tb, index_t m, index_t n, index_t k, T alpha, const T* a, index_t lda, const T* b, index_t ldb,
          T beta, T* c, index_t ldc) {
  constexpr bool cx = is_complex_v<T>;
  const auto A = cblas_op(ta, cx), B = cblas_op(tb, cx);
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasColMajor, A, B, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else if constexpr (std::is_same_v<T, double>)
    cblas_dgemm(CblasColMajor, A, B, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>)
    cblas_cgemm(CblasColMajor, A, B, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
  else
    cblas_zgemm(CblasColMajor, A, B, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
}

template <class T>
void gemm_batched(Op ta, Op tb, index_t m, index_t n, index_t k, T alpha, const T* const* a, index_t lda,
                  const T* const* b, index_t ldb, T beta, T* const* c, index_t ldc, index_t batch) {
  for (index_t i = 0; i < batch; ++i) gemm<T>(ta, tb, m, n, k, alpha, a[i], lda, b[i], ldb, beta, c[i], ldc);
}

template <class T>
void symm(Side side, Uplo uplo, index_t m, index_t n, T alpha, const T* a, index_t lda, const T* b, index_t ldb,
          T beta, T* c, index_t ldc) {
  const auto S = cblas_side(side);
  const auto U = cblas_uplo(uplo);
  if constexpr (std::is_same_v<T, float>)
    cblas_ssymm(CblasColMajor, S, U, m, n, alpha, a, lda, b, ldb, beta, c, ldc);
  else if constexpr (std::is_same_v<T, double>)
    cblas_dsymm(CblasColMajor, S, U, m, n, alpha, a, lda, b, ldb, beta, c, ldc);
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>)
    cblas_chemm(CblasColMajor, S, U, m, n, &alpha, a, lda, b, ldb, &beta, c, ldc);
  else
    cblas_zhemm(CblasColMajor, S, U, m, n, &alpha, a, lda, b, ldb, &beta, c, ldc);
}

template <class T>
void syr2k(Uplo uplo, Op trans, index_t n, index_t k, T alpha, const T* a, index_t lda, const T* b, index_t ldb,
           real_t<T> beta, T* c, index_t ldc) {
  const auto U = cblas_uplo(uplo);
  const auto O = cblas_op(trans, is_complex_v<T>);
  if constexpr (std::is_same_v<T, float>)
    cblas_ssyr2k(CblasColMajor, U, O, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else if constexpr (std::is_same_v<T, double>)
    cblas_dsyr2k(CblasColMajor, U, O, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>)
    cblas_cher2k(CblasColMajor, U, O, n, k, &alpha, a, lda, b, ldb, beta, c, ldc);
  else
    cblas_zher2k(CblasColMajor, U, O, n, k, &alpha, a, lda, b, ldb, beta, c, ldc);
}

template <class T>
void trsm(Side side, Uplo uplo, Op ta, Diag diag, index_t m, index_t n, T alpha, const T* a, index_t lda, T* b,
          index_t ldb) {
  const auto S = cblas_side(side);
  const auto U = cblas_uplo(uplo);
  const auto O = cblas_op(ta, is_complex_v<T>);
  const auto D = cblas_diag(diag);
  if constexpr (std::is_same_v<T, float>)
    cblas_strsm(CblasColMajor, S, U, O, D, m, n, alpha, a, lda, b, ldb);
  else if constexpr (std::is_same_v<T, double>)
    cblas_dtrsm(CblasColMajor, S, U, O, D, m, n, alpha, a, lda, b, ldb);
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>)
    cblas_ctrsm(CblasColMajor, S, U, O, D, m, n, &alpha, a, lda, b, ldb);
  else
    cblas_ztrsm(CblasColMajor, S, U, O, D, m, n, &alpha, a, lda, b, ldb);
}

template <class T>
void trsm_batched(Side side, Uplo uplo, Op ta, Diag diag, index_t m, index_t n, T alpha, const T* const* a,
                  index_t lda, T* const* b, index_t ldb, index_t batch) {
  for (index_t i = 0; i < batch; ++i) trsm<T>(side, uplo, ta, diag, m, n, alpha, a[i], lda, b[i], ldb);
}

template <class T>
void trmm(Side side, Uplo uplo, Op ta, Diag diag, index_t m, index_t n, T alpha, const T* a, index_t lda, T* b,
          index_t ldb) {
  const auto S = cblas_side(side);
  const auto U = cblas_uplo(uplo);
  const auto O = cblas_op(ta, is_complex_v<T>);
  const auto D = cblas_diag(diag);
  if constexpr (std::is_same_v<T, float>)
    cblas_strmm(CblasColMajor, S, U, O, D, m, n, alpha, a, lda, b, ldb);
  else if constexpr (std::is_same_v<T, double>)
    cblas_dtrmm(CblasColMajor, S, U, O, D, m, n, alpha, a, lda, b, ldb);
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>)
    cblas_ctrmm(CblasColMajor, S, U, O, D, m, n, &alpha, a, lda, b, ldb);
  else
    cblas_ztrmm(CblasColMajor, S, U, O, D, m, n, &alpha, a, lda, b, ldb);
}

#define KEIG_INSTANTIATE_HOST_BLAS(T)                                                                            \
  template void gemv<T>(Op, index_t, index_t, T, const T*, index_t, const T*, T, T*);                             \
  template void symv<T>(Uplo, index_t, T, const T*, index_t, const T*, T, T*);                                     \
  template void gemm<T>(Op, Op, index_t, index_t, index_t, T, const T*, index_t, const T*, index_t, T, T*,         \
                        index_t);                                                                                \
  template void gemm_batched<T>(Op, Op, index_t, index_t, index_t, T, const T* const*, index_t, const T* const*,  \
                                index_t, T, T* const*, index_t, index_t);                                        \
  template void symm<T>(Side, Uplo, index_t, index_t, T, const T*, index_t, const T*, index_t, T, T*, index_t);   \
  template void syr2k<T>(Uplo, Op, index_t, index_t, T, const T*, index_t, const T*, index_t, real_t<T>, T*,      \
                         index_t);                                                                               \
  template void trsm<T>(Side, Uplo, Op, Diag, index_t, index_t, T, const T*, index_t, T*, index_t);              \
  template void trsm_batched<T>(Side, Uplo, Op, Diag, index_t, index_t, T, const T* const*, index_t, T* const*,  \
                                index_t, index_t);                                                               \
  template void trmm<T>(Side, Uplo, Op, Diag, index_t, index_t, T, const T*, index_t, T*, index_t);
KEIG_INSTANTIATE_HOST_BLAS(float)
KEIG_INSTANTIATE_HOST_BLAS(double)
KEIG_INSTANTIATE_HOST_BLAS(Kokkos::complex<float>)
KEIG_INSTANTIATE_HOST_BLAS(Kokkos::complex<double>)

}  // namespace keig::backends::host
