// BLAS-3 on Kokkos::Cuda through cuBLAS, on the context's stream.
#include "cuda_common.hpp"

namespace keig::backends::cuda {
using detail::check_cublas;
using detail::fill;
using detail::vendor;

namespace {
cublasOperation_t op(Op o, bool complex) {
  if (o == Op::NoTrans) return CUBLAS_OP_N;
  return (o == Op::ConjTrans && complex) ? CUBLAS_OP_C : CUBLAS_OP_T;
}
cublasSideMode_t side_mode(Side s) { return s == Side::Left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT; }
cublasDiagType_t diag_type(Diag d) { return d == Diag::Unit ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT; }
}  // namespace

template <class T>
void gemv(const CudaContext& ctx, Op ta, index_t m, index_t n, T alpha, const T* a, index_t lda, const T* x, T beta,
          T* y) {
  auto h = ctx.blas();
  const auto A = op(ta, is_complex_v<T>);
  if constexpr (std::is_same_v<T, float>)
    check_cublas("cublasSgemv", cublasSgemv_64(h, A, m, n, &alpha, a, lda, x, 1, &beta, y, 1));
  else if constexpr (std::is_same_v<T, double>)
    check_cublas("cublasDgemv", cublasDgemv_64(h, A, m, n, &alpha, a, lda, x, 1, &beta, y, 1));
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>)
    check_cublas("cublasCgemv", cublasCgemv_64(h, A, m, n, vendor(&alpha), vendor(a), lda, vendor(x), 1,
                                               vendor(&beta), vendor(y), 1));
  else
    check_cublas("cublasZgemv", cublasZgemv_64(h, A, m, n, vendor(&alpha), vendor(a), lda, vendor(x), 1,
                                               vendor(&beta), vendor(y), 1));
}

template <class T>
void symv(const CudaContext& ctx, Uplo uplo, index_t n, T alpha, const T* a, index_t lda, const T* x, T beta, T* y) {
  auto h = ctx.blas();
  const auto U = fill(uplo);
  if constexpr (std::is_same_v<T, float>)
    check_cublas("cublasSsymv", cublasSsymv_64(h, U, n, &alpha, a, lda, x, 1, &beta, y, 1));
  else if constexpr (std::is_same_v<T, double>)
    check_cublas("cublasDsymv", cublasDsymv_64(h, U, n, &alpha, a, lda, x, 1, &beta, y, 1));
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>)
    check_cublas("cublasChemv", cublasChemv_64(h, U, n, vendor(&alpha), vendor(a), lda, vendor(x), 1, vendor(&beta),
                                               vendor(y), 1));
  else
    check_cublas("cublasZhemv", cublasZhemv_64(h, U, n, vendor(&alpha), vendor(a), lda, vendor(x), 1, vendor(&beta),
                                               vendor(y), 1));
}

template <class T>
void gemm(const CudaContext& ctx, Op ta, Op tb, index_t m, index_t n, index_t k, T alpha, const T* a, index_t lda,
          const T* b, index_t ldb, T beta, T* c, index_t ldc) {
  constexpr bool cx = is_complex_v<T>;
  auto h = ctx.blas();
  const auto A = op(ta, cx), B = op(tb, cx);
  if constexpr (std::is_same_v<T, float>)
    check_cublas("cublasSgemm", cublasSgemm_64(h, A, B, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc));
  else if constexpr (std::is_same_v<T, double>)
    check_cublas("cublasDgemm", cublasDgemm_64(h, A, B, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc));
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>)
    check_cublas("cublasCgemm", cublasCgemm_64(h, A, B, m, n, k, vendor(&alpha), vendor(a), lda, vendor(b), ldb,
                                               vendor(&beta), vendor(c), ldc));
  else
    check_cublas("cublasZgemm", cublasZgemm_64(h, A, B, m, n, k, vendor(&alpha), vendor(a), lda, vendor(b), ldb,
                                               vendor(&beta), vendor(c), ldc));
}

template <class T>
void gemm_batched(const CudaContext& ctx, Op ta, Op tb, index_t m, index_t n, index_t k, T alpha, const T* const* a,
                  index_t lda, const T* const* b, index_t ldb, T beta, T* const* c, index_t ldc, index_t batch) {
  constexpr bool cx = is_complex_v<T>;
  using V = detail::vendor_t<T>;
  auto h = ctx.blas();
  const auto A = op(ta, cx), B = op(tb, cx);
  const auto* va = reinterpret_cast<const V* const*>(a);
  const auto* vb = reinterpret_cast<const V* const*>(b);
  auto* vc = reinterpret_cast<V* const*>(c);
  const auto* al = reinterpret_cast<const V*>(&alpha);
  const auto* be = reinterpret_cast<const V*>(&beta);
  if constexpr (std::is_same_v<T, float>)
    check_cublas("cublasSgemmBatched",
                 cublasSgemmBatched_64(h, A, B, m, n, k, al, va, lda, vb, ldb, be, vc, ldc, batch));
  else if constexpr (std::is_same_v<T, double>)
    check_cublas("cublasDgemmBatched",
                 cublasDgemmBatched_64(h, A, B, m, n, k, al, va, lda, vb, ldb, be, vc, ldc, batch));
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>)
    check_cublas("cublasCgemmBatched",
                 cublasCgemmBatched_64(h, A, B, m, n, k, al, va, lda, vb, ldb, be, vc, ldc, batch));
  else
    check_cublas("cublasZgemmBatched",
                 cublasZgemmBatched_64(h, A, B, m, n, k, al, va, lda, vb, ldb, be, vc, ldc, batch));
}

template <class T>
void symm(const CudaContext& ctx, Side side, Uplo uplo, index_t m, index_t n, T alpha, const T* a, index_t lda,
          const T* b, index_t ldb, T beta, T* c, index_t ldc) {
  auto h = ctx.blas();
  const auto S = side_mode(side);
  const auto U = fill(uplo);
  if constexpr (std::is_same_v<T, float>)
    check_cublas("cublasSsymm", cublasSsymm_64(h, S, U, m, n, &alpha, a, lda, b, ldb, &beta, c, ldc));
  else if constexpr (std::is_same_v<T, double>)
    check_cublas("cublasDsymm", cublasDsymm_64(h, S, U, m, n, &alpha, a, lda, b, ldb, &beta, c, ldc));
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>)
    check_cublas("cublasChemm", cublasChemm_64(h, S, U, m, n, vendor(&alpha), vendor(a), lda, vendor(b), ldb,
                                               vendor(&beta), vendor(c), ldc));
  else
    check_cublas("cublasZhemm", cublasZhemm_64(h, S, U, m, n, vendor(&alpha), vendor(a), lda, vendor(b), ldb,
                                               vendor(&beta), vendor(c), ldc));
}

template <class T>
void syr2k(const CudaContext& ctx, Uplo uplo, Op trans, index_t n, index_t k, T alpha, const T* a, index_t lda,
           const T* b, index_t ldb, real_t<T> beta, T* c, index_t ldc) {
  auto h = ctx.blas();
  const auto U = fill(uplo);
  const auto O = op(trans, is_complex_v<T>);
  if constexpr (std::is_same_v<T, float>)
    check_cublas("cublasSsyr2k", cublasSsyr2k_64(h, U, O, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc));
  else if constexpr (std::is_same_v<T, double>)
    check_cublas("cublasDsyr2k", cublasDsyr2k_64(h, U, O, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc));
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>)
    check_cublas("cublasCher2k",
                 cublasCher2k_64(h, U, O, n, k, vendor(&alpha), vendor(a), lda, vendor(b), ldb, &beta, vendor(c), ldc));
  else
    check_cublas("cublasZher2k",
                 cublasZher2k_64(h, U, O, n, k, vendor(&alpha), vendor(a), lda, vendor(b), ldb, &beta, vendor(c), ldc));
}

template <class T>
void trsm(const CudaContext& ctx, Side side, Uplo uplo, Op ta, Diag diag, index_t m, index_t n, T alpha, const T* a,
          index_t lda, T* b, index_t ldb) {
  auto h = ctx.blas();
  const auto S = side_mode(side);
  const auto U = fill(uplo);
  const auto O = op(ta, is_complex_v<T>);
  const auto D = diag_type(diag);
  if constexpr (std::is_same_v<T, float>)
    check_cublas("cublasStrsm", cublasStrsm_64(h, S, U, O, D, m, n, &alpha, a, lda, b, ldb));
  else if constexpr (std::is_same_v<T, double>)
    check_cublas("cublasDtrsm", cublasDtrsm_64(h, S, U, O, D, m, n, &alpha, a, lda, b, ldb));
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>)
    check_cublas("cublasCtrsm", cublasCtrsm_64(h, S, U, O, D, m, n, vendor(&alpha), vendor(a), lda, vendor(b), ldb));
  else
    check_cublas("cublasZtrsm", cublasZtrsm_64(h, S, U, O, D, m, n, vendor(&alpha), vendor(a), lda, vendor(b), ldb));
}

template <class T>
void trsm_batched(const CudaContext& ctx, Side side, Uplo uplo, Op ta, Diag diag, index_t m, index_t n, T alpha,
                  const T* const* a, index_t lda, T* const* b, index_t ldb, index_t batch) {
  using V = detail::vendor_t<T>;
  auto h = ctx.blas();
  const auto S = side_mode(side);
  const auto U = fill(uplo);
  const auto O = op(ta, is_complex_v<T>);
  const auto D = diag_type(diag);
  const auto* va = reinterpret_cast<const V* const*>(a);
  auto* vb = reinterpret_cast<V* const*>(b);
  const auto* al = reinterpret_cast<const V*>(&alpha);
  if constexpr (std::is_same_v<T, float>)
    check_cublas("cublasStrsmBatched", cublasStrsmBatched_64(h, S, U, O, D, m, n, al, va, lda, vb, ldb, batch));
  else if constexpr (std::is_same_v<T, double>)
    check_cublas("cublasDtrsmBatched", cublasDtrsmBatched_64(h, S, U, O, D, m, n, al, va, lda, vb, ldb, batch));
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>)
    check_cublas("cublasCtrsmBatched", cublasCtrsmBatched_64(h, S, U, O, D, m, n, al, va, lda, vb, ldb, batch));
  else
    check_cublas("cublasZtrsmBatched", cublasZtrsmBatched_64(h, S, U, O, D, m, n, al, va, lda, vb, ldb, batch));
}

template <class T>
void trmm(const CudaContext& ctx, Side side, Uplo uplo, Op ta, Diag diag, index_t m, index_t n, T alpha, const T* a,
          index_t lda, T* b, index_t ldb) {
  // cuBLAS trmm is out of place (C = op(A) B); C == B gives the in-place BLAS semantics.
  auto h = ctx.blas();
  const auto S = side_mode(side);
  const auto U = fill(uplo);
  const auto O = op(ta, is_complex_v<T>);
  const auto D = diag_type(diag);
  if constexpr (std::is_same_v<T, float>)
    check_cublas("cublasStrmm", cublasStrmm_64(h, S, U, O, D, m, n, &alpha, a, lda, b, ldb, b, ldb));
  else if constexpr (std::is_same_v<T, double>)
    check_cublas("cublasDtrmm", cublasDtrmm_64(h, S, U, O, D, m, n, &alpha, a, lda, b, ldb, b, ldb));
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>)
    check_cublas("cublasCtrmm", cublasCtrmm_64(h, S, U, O, D, m, n, vendor(&alpha), vendor(a), lda, vendor(b), ldb,
                                               vendor(b), ldb));
  else
    check_cublas("cublasZtrmm", cublasZtrmm_64(h, S, U, O, D, m, n, vendor(&alpha), vendor(a), lda, vendor(b), ldb,
                                               vendor(b), ldb));
}

#define KEIG_INSTANTIATE_CUDA_BLAS(T)                                                                             \
  template void gemv<T>(const CudaContext&, Op, index_t, index_t, T, const T*, index_t, const T*, T, T*);          \
  template void symv<T>(const CudaContext&, Uplo, index_t, T, const T*, index_t, const T*, T, T*);                 \
  template void gemm<T>(const CudaContext&, Op, Op, index_t, index_t, index_t, T, const T*, index_t, const T*,     \
                        index_t, T, T*, index_t);                                                                \
  template void gemm_batched<T>(const CudaContext&, Op, Op, index_t, index_t, index_t, T, const T* const*, index_t, \
                                const T* const*, index_t, T, T* const*, index_t, index_t);                       \
  template void symm<T>(const CudaContext&, Side, Uplo, index_t, index_t, T, const T*, index_t, const T*, index_t, \
                        T, T*, index_t);                                                                         \
  template void syr2k<T>(const CudaContext&, Uplo, Op, index_t, index_t, T, const T*, index_t, const T*, index_t,  \
                         real_t<T>, T*, index_t);                                                                \
  template void trsm<T>(const CudaContext&, Side, Uplo, Op, Diag, index_t, index_t, T, const T*, index_t, T*,      \
                        index_t);                                                                                \
  template void trsm_batched<T>(const CudaContext&, Side, Uplo, Op, Diag, index_t, index_t, T, const T* const*,   \
                                index_t, T* const*, index_t, index_t);                                           \
  template void trmm<T>(const CudaContext&, Side, Uplo, Op, Diag, index_t, index_t, T, const T*, index_t, T*,      \
                        index_t);
KEIG_INSTANTIATE_CUDA_BLAS(float)
KEIG_INSTANTIATE_CUDA_BLAS(double)
KEIG_INSTANTIATE_CUDA_BLAS(Kokkos::complex<float>)
KEIG_INSTANTIATE_CUDA_BLAS(Kokkos::complex<double>)

}  // namespace keig::backends::cuda
