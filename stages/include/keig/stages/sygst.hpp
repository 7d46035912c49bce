// stages/sygst: reduction of the generalized Hermitian-definite problem to
// standard form, in place, lower storage (LAPACK ?sygst/?hegst, blocked; seed
// 002 §4.1, eqs. (4.2)-(4.7)):
//   type 1 (A x = lambda B x):              C = L^{-1} A L^{-H}
//   types 2, 3 (A B x = lambda x, B A x = lambda x): C = L^H A L
// with B = L L^H (potrf, lower). Like LAPACK dsygst/zhegst the blocked loop
// exploits the symmetry of A and C: per block column of width nb a small
// diagonal-block step (LAPACK ?hegs2) and then trsm + hemm + her2k + hemm
// (type 1; the block columns' final solves with the trailing triangle of L
// are deferred to one forward substitution of gemms after the loop) or
// trmm + hemm + her2k + hemm + trmm (types 2, 3), about n^3 flops in all --
// half the 2 n^3 of forming L^{-1} A L^{-H} with two full triangular solves
// (seed 002 §5.2.2, eqs. (5.8)-(5.9): two TRSMs, 2 n^3).
// Nearly all flops are vendor BLAS-3 on ctx.space() (cuBLAS on the
// instance's stream, OpenBLAS on hosts); nothing is copied between host and
// device and nothing is fenced (host BLAS calls fence their own instance).
//
// Storage contract: only the lower triangles of A and L are read; A's lower
// triangle (diagonal included) is overwritten with C's lower triangle. A's
// strictly upper triangle is used as scratch inside the nb x nb diagonal
// blocks only (the diagonal-block step mirrors the block to a full Hermitian
// square there and transforms it in place): on return those entries hold
// intermediate values (type 1: conj of C's, up to rounding; types 2, 3: stale
// ones -- do not rely on them). Every other entry of A's strictly upper
// triangle (outside the diagonal blocks) is untouched; NaN there is harmless.
// No other workspace is needed (hence no sygst_workspace_size).
//
// sygst_backtransform then maps the standard eigenvectors Y of C to the
// generalized ones: types 1, 2: X = L^{-H} Y (trsm); type 3: X = L Y (trmm).
#pragma once

#include <Kokkos_Core.hpp>
#include <string>

#include "keig/backends/blas.hpp"
#include "keig/options.hpp"

namespace keig::stages {

// Default block size (columns per blocked step; sygst's nb = 0 selects it);
// any nb >= 1 is valid. GPUs: 512: each step's her2k and the deferred
// solves' gemms get inner size nb, and a quarter of the small diagonal-block
// steps of nb = 128 run. H200, type 1,
// n = 8192 / 16384 / 20694 / 30504: nb = 128: 0.037 / 0.188 / 0.398 / 1.10 s;
// 256: 0.027 / 0.138 / 0.310 / 0.870 s; 512: 0.025 / 0.131 / 0.284-0.287 /
// 0.785 s; 768 and 1024 within 3 % of 512 (sygst alone, fenced; in the
// solve, keig-bench --suite generalized reports its stage time).
// A her2k split into block columns of gemms was no faster than cuBLAS's
// (0.406-0.448 against 0.398 s at 20694, nb = 128).
template <class ExecSpace>
inline constexpr index_t sygst_block_default = backends::is_cuda_space_v<ExecSpace> ? 512 : 64;

namespace detail {

// The diagonal-block step (LAPACK ?hegs2) on a kb x kb block a11 (lower
// triangle valid, upper is scratch) with the lower triangular l11:
// type 1: a11 = l11^{-1} a11 l11^{-H}; types 2, 3: a11 = l11^H a11 l11.
// The block is mirrored to a full Hermitian square in place, transformed by
// two small trsm/trmm calls, and its diagonal made exactly real again.
template <class T, class ExecSpace>
void sygst_diagonal_block(const backends::Context<ExecSpace>& ctx, bool inverse, const Matrix<T, ExecSpace>& a11,
                          const Matrix<T, ExecSpace>& l11) {
  using backends::Diag;
  using backends::Op;
  using backends::Side;
  const ExecSpace& space = ctx.space();
  const index_t kb = a11.extent(0);
  if (kb == 0) return;
  using Policy2 = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2, Kokkos::Iterate::Left, Kokkos::Iterate::Left>>;
  Kokkos::parallel_for(
      "keig::sygst::mirror_block", Policy2(space, {0, 0}, {kb, kb}), KOKKOS_LAMBDA(const index_t i, const index_t j) {
        if (i < j) a11(i, j) = conjugate(a11(j, i));
        else if (i == j) a11(i, i) = T(real_part(a11(i, i)));
      });
  if (inverse) {
    backends::trsm<T>(ctx, Side::Left, Uplo::Lower, Op::NoTrans, Diag::NonUnit, T(1), l11, a11);     // L^{-1} A
    backends::trsm<T>(ctx, Side::Right, Uplo::Lower, Op::ConjTrans, Diag::NonUnit, T(1), l11, a11);  // ... L^{-H}
  } else {
    backends::trmm<T>(ctx, Side::Left, Uplo::Lower, Op::ConjTrans, Diag::NonUnit, T(1), l11, a11);   // L^H A
    backends::trmm<T>(ctx, Side::Right, Uplo::Lower, Op::NoTrans, Diag::NonUnit, T(1), l11, a11);    // ... L
  }
  Kokkos::parallel_for(
      "keig::sygst::real_diagonal", Kokkos::RangePolicy<ExecSpace>(space, 0, kb),
      KOKKOS_LAMBDA(const index_t i) { a11(i, i) = T(real_part(a11(i, i))); });
}

// The deferred solves of type 1: block column k (columns k..k+kb, rows
// below its diagonal block) becomes L22_k^{-1} A21_k, L22_k the trailing
// triangle of L from row k+kb. Together these are X = L^{-1} M for M the part
// of A below the diagonal blocks (zero above them), and X keeps that shape,
// so a row-block forward substitution over M alone does all of them:
//   X_i = L_ii^{-1} M_i,  M_below -= L(below, i) X_i,
// where X_i is block row i left of its diagonal block. The updates are gemms
// of inner size kb and the exact n^3 / 3 flops of the solves they replace.
template <class T, class ExecSpace>
void sygst_finish_block_columns(const backends::Context<ExecSpace>& ctx, const Matrix<T, ExecSpace>& a,
                                const Matrix<T, ExecSpace>& l, index_t nb) {
  using backends::Diag;
  using backends::Op;
  using backends::Side;
  const index_t n = a.extent(0);
  for (index_t i = nb; i < n; i += nb) {
    const index_t i2 = nb < n - i ? i + nb : n;
    const Matrix<T, ExecSpace> Xi = block(a, i, i2, 0, i);
    backends::trsm<T>(ctx, Side::Left, Uplo::Lower, Op::NoTrans, Diag::NonUnit, T(1), block(l, i, i2, i, i2), Xi);
    if (i2 < n)
      backends::gemm<T>(ctx, Op::NoTrans, Op::NoTrans, T(-1), block(l, i2, n, i, i2), Xi, T(1),
                        block(a, i2, n, 0, i));
  }
}

inline void sygst_check_type(GeneralizedType type, const char* routine) {
  const int t = static_cast<int>(type);
  if (t < 1 || t > 3)
    throw InvalidArgument("type", std::string(routine) + ": generalized type must be 1, 2 or 3, got " +
                                      std::to_string(t));
}

}  // namespace detail

// Reduces (A, B = L L^H) to the standard problem C in place (see the header
// comment for the storage contract). a, l: n x n; nb: block size, 0 selects
// sygst_block_default. Asynchronous on ctx.space().
template <class T, class ExecSpace>
void sygst(const backends::Context<ExecSpace>& ctx, GeneralizedType type, const Matrix<T, ExecSpace>& a,
           const Matrix<T, ExecSpace>& l, index_t nb = 0) {
  using backends::Diag;
  using backends::Op;
  using backends::Side;
  using R = real_t<T>;
  detail::sygst_check_type(type, "sygst");
  const index_t n = a.extent(0);
  if (static_cast<index_t>(a.extent(1)) != n)
    throw InvalidArgument("A", "sygst: A must be square, got " + std::to_string(n) + " x " +
                                   std::to_string(a.extent(1)));
  if (static_cast<index_t>(l.extent(0)) != n || static_cast<index_t>(l.extent(1)) != n)
    throw InvalidArgument("L", "sygst: L must be n x n with n = " + std::to_string(n) + ", got " +
                                   std::to_string(l.extent(0)) + " x " + std::to_string(l.extent(1)));
  if (nb < 0) throw InvalidArgument("nb", "sygst: block size must be >= 1 (0: default), got " + std::to_string(nb));
  if (n > 0 && a.data() == l.data()) throw InvalidArgument("L", "sygst: L must not alias A");
  if (nb == 0) nb = sygst_block_default<ExecSpace>;
  if (n == 0) return;

  if (type == GeneralizedType::AxLBx) {
    // LAPACK ?hegst, itype = 1, lower: left to right.
    for (index_t k = 0; k < n; k += nb) {
      const index_t kb = nb < n - k ? nb : n - k, k2 = k + kb;
      const Matrix<T, ExecSpace> A11 = block(a, k, k2, k, k2), L11 = block(l, k, k2, k, k2);
      detail::sygst_diagonal_block<T, ExecSpace>(ctx, true, A11, L11);
      if (k2 < n) {
        const Matrix<T, ExecSpace> A21 = block(a, k2, n, k, k2), L21 = block(l, k2, n, k, k2);
        const Matrix<T, ExecSpace> A22 = block(a, k2, n, k2, n);
        backends::trsm<T>(ctx, Side::Right, Uplo::Lower, Op::ConjTrans, Diag::NonUnit, T(1), L11, A21);
        backends::symm<T>(ctx, Side::Right, Uplo::Lower, T(R(-0.5)), A11, L21, T(1), A21);
        backends::syr2k<T>(ctx, Uplo::Lower, Op::NoTrans, T(-1), A21, L21, R(1), A22);
        backends::symm<T>(ctx, Side::Right, Uplo::Lower, T(R(-0.5)), A11, L21, T(1), A21);
        // LAPACK finishes the block column here with A21 := L22^{-1} A21, a
        // solve with only kb right-hand sides (about a third of the flops, at
        // a small fraction of the gemm rate on GPUs). No later step reads
        // A21, so all of these solves wait for the end of the loop.
      }
    }
    detail::sygst_finish_block_columns<T, ExecSpace>(ctx, a, l, nb);
  } else {
    // LAPACK ?hegst, itype = 2 or 3, lower: the leading k x k part is already
    // C's; each step extends it by kb rows and columns.
    for (index_t k = 0; k < n; k += nb) {
      const index_t kb = nb < n - k ? nb : n - k, k2 = k + kb;
      const Matrix<T, ExecSpace> A11 = block(a, k, k2, k, k2), L11 = block(l, k, k2, k, k2);
      if (k > 0) {
        const Matrix<T, ExecSpace> A10 = block(a, k, k2, 0, k), L10 = block(l, k, k2, 0, k);
        const Matrix<T, ExecSpace> A00 = block(a, 0, k, 0, k), L00 = block(l, 0, k, 0, k);
        backends::trmm<T>(ctx, Side::Right, Uplo::Lower, Op::NoTrans, Diag::NonUnit, T(1), L00, A10);
        backends::symm<T>(ctx, Side::Left, Uplo::Lower, T(R(0.5)), A11, L10, T(1), A10);
        backends::syr2k<T>(ctx, Uplo::Lower, Op::ConjTrans, T(1), A10, L10, R(1), A00);
        backends::symm<T>(ctx, Side::Left, Uplo::Lower, T(R(0.5)), A11, L10, T(1), A10);
        backends::trmm<T>(ctx, Side::Left, Uplo::Lower, Op::ConjTrans, Diag::NonUnit, T(1), L11, A10);
      }
      detail::sygst_diagonal_block<T, ExecSpace>(ctx, false, A11, L11);
    }
  }
}

// Model flop count of sygst (real scalars; the caller applies its complex
// factor, as for the other stages): n^3.
inline double sygst_flops(index_t n) { return double(n) * double(n) * double(n); }

// Rows per block of sygst_backtransform's solve (0: one trsm over all rows).
// GPUs: by blocks of rows, left-looking, the solve is n / nb gemms that
// each form one block row of nb x m from all rows below it (inner size up
// to n) plus n / nb small solves. H200, type 1, n = m = 20694 (columns
// 256-byte aligned / packed): nb = 512 / 768 / 1024 / 1536: 0.199 / 0.232 /
// 0.194 / 0.201 s and 0.191 / 0.202 / 0.184 / 0.187 s; n = 16384: 0.090 /
// 0.088 / 0.086 / 0.087 s; right-looking with nb = 2048 (rank-2048 updates
// of all rows above, as before) 0.236 / 0.207 s at 20694 and one cuBLAS trsm
// 0.216 s. Few columns (m < n / 8) take one trsm: at m = n / 100 it beat
// blocked right-looking solves (0.0097 s against 0.013 s for nb <= 1024).
template <class ExecSpace>
inline constexpr index_t sygst_backtransform_block_default = backends::is_cuda_space_v<ExecSpace> ? 1024 : 0;

// Back-transformation of the eigenvectors of C (z: n x m, in place):
// types 1, 2: Z := L^{-H} Z; type 3: Z := L Z. Only L's lower triangle is read.
// nb: rows per block of the solve (0: sygst_backtransform_block_default; a
// value of at least n: one trsm). Asynchronous on ctx.space().
template <class T, class ExecSpace>
void sygst_backtransform(const backends::Context<ExecSpace>& ctx, GeneralizedType type, const Matrix<T, ExecSpace>& l,
                         const Matrix<T, ExecSpace>& z, index_t nb = 0) {
  using backends::Diag;
  using backends::Op;
  using backends::Side;
  detail::sygst_check_type(type, "sygst_backtransform");
  const index_t n = l.extent(0);
  if (static_cast<index_t>(l.extent(1)) != n)
    throw InvalidArgument("L", "sygst_backtransform: L must be square, got " + std::to_string(n) + " x " +
                                   std::to_string(l.extent(1)));
  if (static_cast<index_t>(z.extent(0)) != n)
    throw InvalidArgument("Z", "sygst_backtransform: Z needs n = " + std::to_string(n) + " rows, got " +
                                   std::to_string(z.extent(0)));
  if (nb < 0)
    throw InvalidArgument("nb", "sygst_backtransform: block size must be >= 1 (0: default), got " + std::to_string(nb));
  const index_t m = z.extent(1);
  if (nb == 0) nb = 8 * m < n ? 0 : sygst_backtransform_block_default<ExecSpace>;
  if (n == 0 || m == 0) return;
  if (type == GeneralizedType::BAxLx) {
    backends::trmm<T>(ctx, Side::Left, Uplo::Lower, Op::NoTrans, Diag::NonUnit, T(1), l, z);
  } else if (nb == 0 || nb >= n) {
    backends::trsm<T>(ctx, Side::Left, Uplo::Lower, Op::ConjTrans, Diag::NonUnit, T(1), l, z);
  } else {
    // L^H X = Z by block rows, the last first, left-looking: block row i
    // first drops the share of the rows below it, already solved,
    //   Z_i -= L(i2:n, i:i2)^H X(i2:n),
    // then X_i = L_ii^{-H} Z_i. Only L's strictly lower part and its
    // diagonal blocks are read.
    for (index_t i2 = n; i2 > 0; i2 -= nb) {
      const index_t i = i2 > nb ? i2 - nb : 0;
      const Matrix<T, ExecSpace> Zi = block(z, i, i2, 0, m);
      if (i2 < n)
        backends::gemm<T>(ctx, Op::ConjTrans, Op::NoTrans, T(-1), block(l, i2, n, i, i2), block(z, i2, n, 0, m), T(1), Zi);
      backends::trsm<T>(ctx, Side::Left, Uplo::Lower, Op::ConjTrans, Diag::NonUnit, T(1), block(l, i, i2, i, i2), Zi);
    }
  }
}

}  // namespace keig::stages
