// Host vendor layer: typed wrappers over CBLAS and LAPACKE (OpenBLAS), one
// template per routine, explicitly instantiated for float, double,
// Kokkos::complex<float> and Kokkos::complex<double> in backends/src/.
//
// Conventions: column-major, 0-based indices in keig's API (converted to
// LAPACK's 1-based ones inside), `info < 0` is a keig bug and throws
// BackendError, `info > 0` is returned to the caller, which must translate it
// ([[nodiscard]]). For complex scalars symm/syr2k/syevd/... are the Hermitian
// routines (hemm, her2k, heevd, ...).
#pragma once

#include <cstdint>

#include "keig/backends/types.hpp"
#include "keig/options.hpp"
#include "keig/views/scalar.hpp"

namespace keig::backends::host {

using index_t = std::int64_t;

// ---- BLAS-2
// y = alpha op(A) x + beta y (A m x n).
template <class T>
void gemv(Op ta, index_t m, index_t n, T alpha, const T* a, index_t lda, const T* x, T beta, T* y);

// y = alpha A x + beta y, A Hermitian (symv / hemv): the peer of keig's symv.
template <class T>
void symv(Uplo uplo, index_t n, T alpha, const T* a, index_t lda, const T* x, T beta, T* y);

// ---- BLAS-3
template <class T>
void gemm(Op ta, Op tb, index_t m, index_t n, index_t k, T alpha, const T* a, index_t lda, const T* b,
          index_t ldb, T beta, T* c, index_t ldc);
// C_i = alpha op(A_i) op(B_i) + beta C_i for i < batch (host pointer arrays; a loop over gemm).
template <class T>
void gemm_batched(Op ta, Op tb, index_t m, index_t n, index_t k, T alpha, const T* const* a, index_t lda,
                  const T* const* b, index_t ldb, T beta, T* const* c, index_t ldc, index_t batch);
template <class T>
void symm(Side side, Uplo uplo, index_t m, index_t n, T alpha, const T* a, index_t lda, const T* b, index_t ldb,
          T beta, T* c, index_t ldc);
// C = alpha A B^H + conj(alpha) B A^H + beta C (trans = NoTrans), or with A^H B (trans = ConjTrans).
template <class T>
void syr2k(Uplo uplo, Op trans, index_t n, index_t k, T alpha, const T* a, index_t lda, const T* b, index_t ldb,
           real_t<T> beta, T* c, index_t ldc);
template <class T>
void trsm(Side side, Uplo uplo, Op ta, Diag diag, index_t m, index_t n, T alpha, const T* a, index_t lda, T* b,
          index_t ldb);
// B_i = alpha op(A_i)^{-1} B_i or alpha B_i op(A_i)^{-1} for i < batch (host pointer arrays; a loop over trsm).
template <class T>
void trsm_batched(Side side, Uplo uplo, Op ta, Diag diag, index_t m, index_t n, T alpha, const T* const* a,
                  index_t lda, T* const* b, index_t ldb, index_t batch);
template <class T>
void trmm(Side side, Uplo uplo, Op ta, Diag diag, index_t m, index_t n, T alpha, const T* a, index_t lda, T* b,
          index_t ldb);

// ---- LAPACK: factorizations
template <class T>
[[nodiscard]] index_t potrf(Uplo uplo, index_t n, T* a, index_t lda);
template <class T>
[[nodiscard]] index_t geqrf(index_t m, index_t n, T* a, index_t lda, T* tau);
// Upper-triangular factor T of the forward, column-wise block reflector
// H = I - V T V^H of k reflectors of length n (LAPACK larft 'F', 'C').
template <class T>
[[nodiscard]] index_t larft(index_t n, index_t k, const T* v, index_t ldv, const T* tau, T* t, index_t ldt);
// Q (m x n) from geqrf's reflectors (orgqr / ungqr).
template <class T>
[[nodiscard]] index_t orgqr(index_t m, index_t n, index_t k, T* a, index_t lda, const T* tau);

// ---- LAPACK: dense eigensolvers (the Vendor method and the test reference)
// syevd: all pairs, in place (eigenvectors overwrite a when job == Vectors).
template <class T>
[[nodiscard]] index_t syevd(Job job, Uplo uplo, index_t n, T* a, index_t lda, real_t<T>* w);
// syevd_2stage: LAPACK's own two-stage reduction (sytrd_2stage) before the
// tridiagonal solver: the CPU peer of keig's two-stage values-only path.
// LAPACK provides eigenvalues only: job == Job::Vectors throws NotImplemented.
// a is overwritten.
template <class T>
[[nodiscard]] index_t syevd_2stage(Job job, Uplo uplo, index_t n, T* a, index_t lda, real_t<T>* w);
// syevr (MRRR) and syevx (bisection + inverse iteration): range-aware;
// m receives the number found; eigenvectors go to z (n x m).
template <class T>
[[nodiscard]] index_t syevr(Job job, const Range& range, Uplo uplo, index_t n, T* a, index_t lda, index_t& m,
                            real_t<T>* w, T* z, index_t ldz);
template <class T>
[[nodiscard]] index_t syevx(Job job, const Range& range, Uplo uplo, index_t n, T* a, index_t lda, index_t& m,
                            real_t<T>* w, T* z, index_t ldz);
// Generalized, B SPD: info in (n, 2n] means B's leading minor info - n is not positive.
template <class T>
[[nodiscard]] index_t sygvd(GeneralizedType type, Job job, Uplo uplo, index_t n, T* a, index_t lda, T* b,
                            index_t ldb, real_t<T>* w);
template <class T>
[[nodiscard]] index_t sygvx(GeneralizedType type, Job job, const Range& range, Uplo uplo, index_t n, T* a,
                            index_t lda, T* b, index_t ldb, index_t& m, real_t<T>* w, T* z, index_t ldz);

// ---- LAPACK: symmetric tridiagonal eigensolvers (real d, e; real Z)
// stedc: all pairs by divide and conquer; z receives the tridiagonal's eigenvectors.
template <class R>
[[nodiscard]] index_t stedc(Job job, index_t n, R* d, R* e, R* z, index_t ldz);
// stebz + stein: bisection for the wanted eigenvalues, inverse iteration for vectors.
template <class R>
[[nodiscard]] index_t stebz_stein(Job job, const Range& range, index_t n, const R* d, const R* e, index_t& m, R* w,
                                  R* z, index_t ldz);
// stemr: MRRR for all or a subset.
template <class R>
[[nodiscard]] index_t stemr(Job job, const Range& range, index_t n, R* d, R* e, index_t& m, R* w, R* z,
                            index_t ldz);
// steqr: all pairs by implicit QL/QR, z = the eigenvectors of T (compz 'I').
// Pure Givens work (no BLAS-3), so independent calls may run on concurrent
// host threads: the leaves of keig's divide and conquer.
template <class R>
[[nodiscard]] index_t steqr(index_t n, R* d, R* e, R* z, index_t ldz);
// laed4: root i (0-based) of the secular equation 1 + rho sum_j z_j^2 / (d_j - x) = 0,
// with d strictly ascending, rho > 0 and k >= 1 terms; delta_j = d_j - root, computed
// to high relative accuracy (what makes divide and conquer's vectors orthogonal).
// Thread-safe; info > 0: no convergence.
template <class R>
[[nodiscard]] index_t laed4(index_t k, index_t i, const R* d, const R* z, R* delta, R rho, R& root);

}  // namespace keig::backends::host
