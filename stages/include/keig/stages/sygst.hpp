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
//
// GPUs, type 1: the solves with L's nb x nb diagonal blocks run as gemms with
// their inverses (MAGMA's trsm does the same), formed once per call by one
// batched triangular solve against the identity. cuBLAS's triangular solves
// of these shapes are chains of small launches at 1-8 TFLOP/s; they took
// 29.7 of sygst's 137.5 ms at n = 16384 (H100, twenty-fourth stop's trace).
// The her2k on large blocks (type 1's trailing ones, types 2 and 3's
// leading ones) is split into gemms of inner size 2 nb
// (sygst_her2k_leaf_default). The inverses and an n x 3 nb scratch (the
// products that replace in-place solves, the split her2k's operands) live
// in the caller's workspace (sygst_workspace_size; none on hosts, whose
// trsm and her2k run at the gemm rate).
//
// sygst_backtransform then maps the standard eigenvectors Y of C to the
// generalized ones: types 1, 2: X = L^{-H} Y (trsm); type 3: X = L Y (trmm).
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <string>

#include "keig/backends/blas.hpp"
#include "keig/options.hpp"
#include "keig/views/kernels.hpp"
#include "keig/views/workspace.hpp"

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
// (0.406-0.448 against 0.398 s at 20694, nb = 128); halved recursively,
// both products in one gemm of inner size 2 nb, it is faster
// (sygst_her2k_leaf_default).
template <class ExecSpace>
inline constexpr index_t sygst_block_default = backends::is_cuda_space_v<ExecSpace> ? 512 : 64;

// Type 1 on GPUs: the trailing update A22 -= A21 L21^H + L21 A21^H runs as
// one her2k only on trailing blocks of at most this many rows; larger ones
// are halved recursively, the lower-left half of each split one gemm of
// inner size 2 nb over [A21 | L21] and [L21 | A21] side by side in the
// scratch (detail::her2k_lower_by_gemms), the diagonal halves split again.
// cuBLAS's syr2k ran at about 44 TFLOP/s where its gemms run at 55 (H200,
// n = 20694, thirty-seventh stop's trace). H100, sygst type 1's blocked loop
// alone with nb = 512 (a cuBLAS harness outside the repository, 2026-12-07):
// n = 16384: 76.5-76.9 ms with one syr2k a step, leaves of 1024 / 2048 /
// 3072 / 4096 / 6144 rows 70.1 / 66.9-67.1 / 66.8-68.4 / 65.3-66.9 /
// 65.0-70.0 ms; n = 20694: 163.3-165.7 ms, 143.5-145.5 / 141.3-142.5 /
// 137.1-137.4 / 136.0-139.9 / 138.5-138.8 ms. Types 2 and 3 split their
// her2k on the leading k x k block the same way, from [A10; L10; A10]
// stacked by rows.
template <class ExecSpace>
inline constexpr index_t sygst_her2k_leaf_default = 4096;
// The smallest leaf sygst accepts: the split needs room for its granule.
inline constexpr index_t sygst_her2k_leaf_min = 16;

namespace detail {

// Whether type 1's solves with L's diagonal blocks run as products with
// their inverses on ExecSpace (GPUs; see the header comment).
template <class ExecSpace>
inline constexpr bool sygst_inverse_blocks_v = backends::is_cuda_space_v<ExecSpace>;

// Whether the her2k of large blocks is split into gemms on ExecSpace (GPUs;
// sygst_her2k_leaf_default says why).
template <class ExecSpace>
inline constexpr bool sygst_split_her2k_v = backends::is_cuda_space_v<ExecSpace>;

// Entries of T that hold `count` pointers anywhere in a T workspace (8-byte
// alignment included).
template <class T>
constexpr index_t pointer_entries(index_t count) {
  return (count * index_t(sizeof(void*)) + index_t(sizeof(void*)) - 1) / index_t(sizeof(T)) + 1;
}

// The inverted diagonal blocks of a lower triangular l for block size nb, as
// carved from a workspace: block q (rows and columns [q nb, q nb + kb)) is
// inv(0:kb, q nb : q nb + kb) of an nb x (blocks nb) matrix.
template <class T, class ExecSpace>
struct InverseBlocks {
  Matrix<T, ExecSpace> inv;
  Matrix<T, ExecSpace> block(index_t k, index_t kb) const {
    return Kokkos::subview(inv, std::make_pair(index_t(0), kb), std::make_pair(k, k + kb));
  }
};

// Pieces of a workspace start on 256-byte boundaries: cuBLAS's gemms run up
// to a third slower on operands 8 bytes off one (aligned_leading_dimension);
// bt_sygst took 0.113 s instead of 0.085 s at n = 16384 (H200) with its
// scratch there.
template <class T>
constexpr index_t align_slack = sizeof(T) < 256 ? index_t(256 / sizeof(T)) : 1;
template <class T>
T* align_256(T* p) {
  const std::uintptr_t u = reinterpret_cast<std::uintptr_t>(p);
  return reinterpret_cast<T*>((u + 255) / 256 * 256);
}

// Entries for invert_diagonal_blocks(n, nb): the blocks (from a 256-byte
// boundary) and the batched call's two pointer arrays.
template <class T>
index_t inverse_blocks_entries(index_t n, index_t nb) {
  const index_t blocks = (n + nb - 1) / nb;
  return align_slack<T> + nb * nb * blocks + pointer_entries<T>(2 * blocks);
}

// The scratch after the inverse blocks in a workspace, on a 256-byte boundary
// (its entries count align_slack<T> more than it holds).
template <class T>
T* scratch_after_inverses(T* work, index_t n, index_t nb) {
  return align_256(work + inverse_blocks_entries<T>(n, nb));
}

// L_kk^{-1} for the diagonal blocks [k, k + nb) of l, k = 0, nb, ...: the
// identity in each block's square, then one batched triangular solve for the
// full blocks and one solve for a shorter last block. work: at least
// inverse_blocks_entries(n, nb) entries. Asynchronous on ctx.space().
template <class T, class ExecSpace>
InverseBlocks<T, ExecSpace> invert_diagonal_blocks(const backends::Context<ExecSpace>& ctx, const Matrix<T, ExecSpace>& l,
                                                   index_t nb, T* work) {
  using backends::Diag;
  using backends::Op;
  using backends::Side;
  const ExecSpace& space = ctx.space();
  const index_t n = l.extent(0), blocks = (n + nb - 1) / nb, full = n / nb;
  work = align_256(work);
  const Matrix<T, ExecSpace> inv = make_matrix<T, ExecSpace>(work, nb, blocks * nb, nb);
  using Policy2 = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2, Kokkos::Iterate::Left, Kokkos::Iterate::Left>>;
  Kokkos::parallel_for(
      "keig::sygst::identity_blocks", Policy2(space, {0, 0}, {nb, blocks * nb}),
      KOKKOS_LAMBDA(const index_t i, const index_t j) { inv(i, j) = i == j % nb ? T(1) : T(0); });
  if (full > 0) {
    const std::uintptr_t after = reinterpret_cast<std::uintptr_t>(work + nb * nb * blocks);
    const std::uintptr_t first = (after + sizeof(void*) - 1) / sizeof(void*) * sizeof(void*);
    const T** l_blocks = reinterpret_cast<const T**>(first);
    T** inv_blocks = reinterpret_cast<T**>(first) + full;
    const T* l0 = l.data();
    T* inv0 = inv.data();
    const index_t ldl = leading_dimension(l);
    Kokkos::parallel_for(
        "keig::sygst::block_pointers", Kokkos::RangePolicy<ExecSpace>(space, 0, full), KOKKOS_LAMBDA(const index_t q) {
          l_blocks[q] = l0 + q * nb * (ldl + 1);
          inv_blocks[q] = inv0 + q * nb * nb;
        });
    backends::trsm_batched<T>(ctx, Side::Left, Uplo::Lower, Op::NoTrans, Diag::NonUnit, nb, nb, T(1), l_blocks, ldl,
                              inv_blocks, nb, full);
  }
  if (full < blocks) {
    const index_t k = full * nb;
    backends::trsm<T>(ctx, Side::Left, Uplo::Lower, Op::NoTrans, Diag::NonUnit, T(1), block(l, k, n, k, n),
                      block(inv, 0, n - k, k, n));
  }
  return {inv};
}

// The diagonal-block step (LAPACK ?hegs2) on a kb x kb block a11 (lower
// triangle valid, upper is scratch) with the lower triangular l11:
// type 1: a11 = l11^{-1} a11 l11^{-H}; types 2, 3: a11 = l11^H a11 l11.
// The block is mirrored to a full Hermitian square in place, transformed by
// two small trsm/trmm calls, and its diagonal made exactly real again.
// With li11 = l11^{-1} (type 1 on GPUs) the two solves are gemms through
// the kb x kb scratch s.
template <class T, class ExecSpace>
void sygst_diagonal_block(const backends::Context<ExecSpace>& ctx, bool inverse, const Matrix<T, ExecSpace>& a11,
                          const Matrix<T, ExecSpace>& l11, const Matrix<T, ExecSpace>& li11 = {},
                          const Matrix<T, ExecSpace>& s = {}) {
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
  if (inverse && li11.data() != nullptr) {
    backends::gemm<T>(ctx, Op::NoTrans, Op::NoTrans, T(1), li11, a11, T(0), s);     // S = L^{-1} A
    backends::gemm<T>(ctx, Op::NoTrans, Op::ConjTrans, T(1), s, li11, T(0), a11);  // A = S L^{-H}
  } else if (inverse) {
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
// With inverse blocks (GPUs) X_i = L_ii^{-1} M_i is a gemm into the scratch
// (nb x n entries) and a copy back.
template <class T, class ExecSpace>
void sygst_finish_block_columns(const backends::Context<ExecSpace>& ctx, const Matrix<T, ExecSpace>& a,
                                const Matrix<T, ExecSpace>& l, index_t nb, const InverseBlocks<T, ExecSpace>* inverses,
                                T* scratch) {
  using backends::Diag;
  using backends::Op;
  using backends::Side;
  const index_t n = a.extent(0);
  for (index_t i = nb; i < n; i += nb) {
    const index_t i2 = nb < n - i ? i + nb : n;
    const Matrix<T, ExecSpace> Xi = block(a, i, i2, 0, i);
    if (inverses) {
      const Matrix<T, ExecSpace> s = make_matrix<T, ExecSpace>(scratch, i2 - i, i, i2 - i);
      backends::gemm<T>(ctx, Op::NoTrans, Op::NoTrans, T(1), inverses->block(i, i2 - i), Xi, T(0), s);
      copy_matrix(ctx.space(), s, Xi);
    } else {
      backends::trsm<T>(ctx, Side::Left, Uplo::Lower, Op::NoTrans, Diag::NonUnit, T(1), block(l, i, i2, i, i2), Xi);
    }
    if (i2 < n)
      backends::gemm<T>(ctx, Op::NoTrans, Op::NoTrans, T(-1), block(l, i2, n, i, i2), Xi, T(1),
                        block(a, i2, n, 0, i));
  }
}

// C += alpha (X Y^H + Y X^H) on C's lower triangle (her2k / syr2k, alpha
// real, beta = 1; op = ConjTrans: C += alpha (X^H Y + Y^H X)) for c (m x m)
// and p = [X | Y | X] (m x 3 kb; ConjTrans: [X; Y; X], 3 kb x m): at most
// `leaf` rows one her2k; else C's lower-left block C(mid:m, 0:mid) gets
// alpha P(mid:m) Q(0:mid)^H as one gemm of inner size 2 kb, with
// P = [X | Y] = p(:, 0:2kb) and Q = [Y | X] = p(:, kb:3kb) (so
// P Q^H = X Y^H + Y X^H; ConjTrans the same by rows), and both diagonal
// halves the same way. The split falls on a multiple of 256 rows (8 for
// leaves under 512, as the tests use), so every block starts where C does,
// modulo whole 256-row steps. leaf >= sygst_her2k_leaf_min.
template <class T, class ExecSpace>
void her2k_lower_by_gemms(const backends::Context<ExecSpace>& ctx, backends::Op op, real_t<T> alpha,
                          const Matrix<T, ExecSpace>& p, index_t kb, const Matrix<T, ExecSpace>& c, index_t leaf) {
  using backends::Op;
  using R = real_t<T>;
  const bool by_rows = op != Op::NoTrans;
  const index_t m = c.extent(0);
  if (m == 0 || kb == 0) return;
  // The operand's rows [i0, i1) of C and its parts [j0, j1) of 3 kb.
  const auto part = [&](index_t i0, index_t i1, index_t j0, index_t j1) {
    return by_rows ? block(p, j0, j1, i0, i1) : block(p, i0, i1, j0, j1);
  };
  if (m <= leaf) {
    backends::syr2k<T>(ctx, Uplo::Lower, op, T(alpha), part(0, m, 0, kb), part(0, m, kb, 2 * kb), R(1), c);
    return;
  }
  const index_t granule = leaf >= 512 ? 256 : 8;
  const index_t mid = ((m + 1) / 2 + granule - 1) / granule * granule;  // < m since m > leaf >= 2 granule
  // By rows p holds P^H and Q^H, so the product is (P^H)^H (Q^H).
  const Op left = by_rows ? Op::ConjTrans : Op::NoTrans;
  const Op right = by_rows ? Op::NoTrans : Op::ConjTrans;
  backends::gemm<T>(ctx, left, right, T(alpha), part(mid, m, 0, 2 * kb), part(0, mid, kb, 3 * kb), T(1),
                    block(c, mid, m, 0, mid));
  her2k_lower_by_gemms<T, ExecSpace>(ctx, op, alpha, part(0, mid, 0, 3 * kb), kb, block(c, 0, mid, 0, mid), leaf);
  her2k_lower_by_gemms<T, ExecSpace>(ctx, op, alpha, part(mid, m, 0, 3 * kb), kb, block(c, mid, m, mid, m), leaf);
}

// The operands of her2k_lower_by_gemms from type 1's step: s = p(:, 0:kb)
// holds the new A21; A21 := s, p(:, 2kb:3kb) := s, p(:, kb:2kb) := L21.
template <class T, class ExecSpace>
void spread_her2k_operands(const ExecSpace& space, const Matrix<T, ExecSpace>& p, const Matrix<T, ExecSpace>& a21,
                           const Matrix<T, ExecSpace>& l21) {
  const index_t m = a21.extent(0), kb = a21.extent(1);
  using Policy2 = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2, Kokkos::Iterate::Left, Kokkos::Iterate::Left>>;
  Kokkos::parallel_for(
      "keig::sygst::spread_her2k_operands", Policy2(space, {0, 0}, {m, kb}),
      KOKKOS_LAMBDA(const index_t i, const index_t j) {
        const T x = p(i, j);
        a21(i, j) = x;
        p(i, 2 * kb + j) = x;
        p(i, kb + j) = l21(i, j);
      });
}

// The operands of her2k_lower_by_gemms by rows from a type 2 / 3 step:
// p (3 kb x k) := [A10; L10; A10].
template <class T, class ExecSpace>
void stack_her2k_operands(const ExecSpace& space, const Matrix<T, ExecSpace>& p, const Matrix<T, ExecSpace>& a10,
                          const Matrix<T, ExecSpace>& l10) {
  const index_t kb = a10.extent(0), k = a10.extent(1);
  using Policy2 = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2, Kokkos::Iterate::Left, Kokkos::Iterate::Left>>;
  Kokkos::parallel_for(
      "keig::sygst::stack_her2k_operands", Policy2(space, {0, 0}, {kb, k}),
      KOKKOS_LAMBDA(const index_t i, const index_t j) {
        const T x = a10(i, j);
        p(i, j) = x;
        p(kb + i, j) = l10(i, j);
        p(2 * kb + i, j) = x;
      });
}

inline void sygst_check_type(GeneralizedType type, const char* routine) {
  const int t = static_cast<int>(type);
  if (t < 1 || t > 3)
    throw InvalidArgument("type", std::string(routine) + ": generalized type must be 1, 2 or 3, got " +
                                      std::to_string(t));
}

}  // namespace detail

// Workspace entries of sygst for n and block size nb (0: the default): on
// GPUs the inverted diagonal blocks of L and an n x 3 nb scratch (type 1;
// types 2 and 3 use the scratch alone, as 3 nb x n); none on hosts.
template <class T, class ExecSpace>
index_t sygst_workspace_size(index_t n, index_t nb = 0) {
  if (nb <= 0) nb = sygst_block_default<ExecSpace>;
  if (!detail::sygst_inverse_blocks_v<ExecSpace> || n <= 0) return 0;
  return detail::inverse_blocks_entries<T>(n, nb) + detail::align_slack<T> + aligned_leading_dimension<T>(n) * 3 * nb;
}

// Reduces (A, B = L L^H) to the standard problem C in place (see the header
// comment for the storage contract). a, l: n x n; nb: block size, 0 selects
// sygst_block_default; work: sygst_workspace_size(n, nb) entries (none on
// hosts); her2k_leaf: GPUs, the largest block updated by one her2k (0:
// sygst_her2k_leaf_default; else at least sygst_her2k_leaf_min; hosts
// always run one her2k). Asynchronous on ctx.space().
template <class T, class ExecSpace>
void sygst(const backends::Context<ExecSpace>& ctx, GeneralizedType type, const Matrix<T, ExecSpace>& a,
           const Matrix<T, ExecSpace>& l, index_t nb = 0, const Vector<T, ExecSpace>& work = {},
           index_t her2k_leaf = 0) {
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
  if (her2k_leaf < 0 || (her2k_leaf > 0 && her2k_leaf < sygst_her2k_leaf_min))
    throw InvalidArgument("her2k_leaf", "sygst: must be 0 (default) or >= " + std::to_string(sygst_her2k_leaf_min) +
                                            ", got " + std::to_string(her2k_leaf));
  if (n > 0 && a.data() == l.data()) throw InvalidArgument("L", "sygst: L must not alias A");
  if (nb == 0) nb = sygst_block_default<ExecSpace>;
  if (her2k_leaf == 0) her2k_leaf = sygst_her2k_leaf_default<ExecSpace>;
  constexpr bool inverse_blocks = detail::sygst_inverse_blocks_v<ExecSpace>;
  constexpr bool split_her2k = detail::sygst_split_her2k_v<ExecSpace>;
  const index_t needed = sygst_workspace_size<T, ExecSpace>(n, nb);
  if (static_cast<index_t>(work.extent(0)) < needed)
    throw InvalidArgument("work", "sygst: needs sygst_workspace_size(n, nb) = " + std::to_string(needed) +
                                      " entries, got " + std::to_string(work.extent(0)));
  if (n == 0) return;

  if (type == GeneralizedType::AxLBx) {
    // LAPACK ?hegst, itype = 1, lower: left to right.
    detail::InverseBlocks<T, ExecSpace> inverses;
    T* scratch = nullptr;
    if constexpr (inverse_blocks) {
      inverses = detail::invert_diagonal_blocks<T, ExecSpace>(ctx, l, nb, work.data());
      scratch = detail::scratch_after_inverses(work.data(), n, nb);
    }
    for (index_t k = 0; k < n; k += nb) {
      const index_t kb = nb < n - k ? nb : n - k, k2 = k + kb;
      const Matrix<T, ExecSpace> A11 = block(a, k, k2, k, k2), L11 = block(l, k, k2, k, k2);
      if constexpr (inverse_blocks)
        detail::sygst_diagonal_block<T, ExecSpace>(ctx, true, A11, L11, inverses.block(k, kb),
                                                   make_matrix<T, ExecSpace>(scratch, kb, kb, kb));
      else
        detail::sygst_diagonal_block<T, ExecSpace>(ctx, true, A11, L11);
      if (k2 < n) {
        const Matrix<T, ExecSpace> A21 = block(a, k2, n, k, k2), L21 = block(l, k2, n, k, k2);
        const Matrix<T, ExecSpace> A22 = block(a, k2, n, k2, n);
        if constexpr (inverse_blocks) {
          // s = A21 L11^{-H} - 1/2 L21 A11 in the scratch's first kb
          // columns, then spread to A21 and to the her2k's operands.
          const Matrix<T, ExecSpace> p =
              make_matrix<T, ExecSpace>(scratch, n - k2, 3 * kb, aligned_leading_dimension<T>(n - k2));
          const Matrix<T, ExecSpace> s = columns(p, 0, kb);
          backends::gemm<T>(ctx, Op::NoTrans, Op::ConjTrans, T(1), A21, inverses.block(k, kb), T(0), s);
          backends::symm<T>(ctx, Side::Right, Uplo::Lower, T(R(-0.5)), A11, L21, T(1), s);
          detail::spread_her2k_operands<T, ExecSpace>(ctx.space(), p, A21, L21);
          detail::her2k_lower_by_gemms<T, ExecSpace>(ctx, Op::NoTrans, R(-1), p, kb, A22, her2k_leaf);
        } else {
          backends::trsm<T>(ctx, Side::Right, Uplo::Lower, Op::ConjTrans, Diag::NonUnit, T(1), L11, A21);
          backends::symm<T>(ctx, Side::Right, Uplo::Lower, T(R(-0.5)), A11, L21, T(1), A21);
          backends::syr2k<T>(ctx, Uplo::Lower, Op::NoTrans, T(-1), A21, L21, R(1), A22);
        }
        backends::symm<T>(ctx, Side::Right, Uplo::Lower, T(R(-0.5)), A11, L21, T(1), A21);
        // LAPACK finishes the block column here with A21 := L22^{-1} A21, a
        // solve with only kb right-hand sides (about a third of the flops, at
        // a small fraction of the gemm rate on GPUs). No later step reads
        // A21, so all of these solves wait for the end of the loop.
      }
    }
    detail::sygst_finish_block_columns<T, ExecSpace>(ctx, a, l, nb, inverse_blocks ? &inverses : nullptr, scratch);
  } else {
    // LAPACK ?hegst, itype = 2 or 3, lower: the leading k x k part is already
    // C's; each step extends it by kb rows and columns. On GPUs the her2k on
    // the leading part is split into gemms as type 1's trailing one, from
    // [A10; L10; A10] in the scratch.
    T* const scratch = split_her2k ? detail::scratch_after_inverses(work.data(), n, nb) : nullptr;
    for (index_t k = 0; k < n; k += nb) {
      const index_t kb = nb < n - k ? nb : n - k, k2 = k + kb;
      const Matrix<T, ExecSpace> A11 = block(a, k, k2, k, k2), L11 = block(l, k, k2, k, k2);
      if (k > 0) {
        const Matrix<T, ExecSpace> A10 = block(a, k, k2, 0, k), L10 = block(l, k, k2, 0, k);
        const Matrix<T, ExecSpace> A00 = block(a, 0, k, 0, k), L00 = block(l, 0, k, 0, k);
        backends::trmm<T>(ctx, Side::Right, Uplo::Lower, Op::NoTrans, Diag::NonUnit, T(1), L00, A10);
        backends::symm<T>(ctx, Side::Left, Uplo::Lower, T(R(0.5)), A11, L10, T(1), A10);
        if constexpr (split_her2k) {
          const Matrix<T, ExecSpace> p = make_matrix<T, ExecSpace>(scratch, 3 * kb, k, 3 * kb);
          detail::stack_her2k_operands<T, ExecSpace>(ctx.space(), p, A10, L10);
          detail::her2k_lower_by_gemms<T, ExecSpace>(ctx, Op::ConjTrans, R(1), p, kb, A00, her2k_leaf);
        } else {
          backends::syr2k<T>(ctx, Uplo::Lower, Op::ConjTrans, T(1), A10, L10, R(1), A00);
        }
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
// to n), each block row then multiplied by its inverted diagonal block of L
// (the blocks aligned at multiples of nb from the first row, as sygst's).
// H200, type 1, n = m = 16384, a cuBLAS harness outside the repository
// (2026-11-25, twenty-sixth stop): with the inverses nb = 256 / 512 / 1024:
// 76.1 / 77.1-79.0 / 76.1 ms, with cuBLAS's solves on the diagonal blocks
// (the default before) nb = 512 / 1024: 84.9 / 83.9-88.0 ms. Earlier (H200,
// solves, n = m = 20694, columns 256-byte aligned / packed): nb = 512 / 768 /
// 1024 / 1536: 0.199 / 0.232 / 0.194 / 0.201 s and 0.191 / 0.202 / 0.184 /
// 0.187 s; right-looking with nb = 2048 0.236 / 0.207 s and one cuBLAS trsm
// 0.216 s. Few columns (m < n / 8) take one trsm: at m = n / 100 it beat
// blocked right-looking solves (0.0097 s against 0.013 s for nb <= 1024).
template <class ExecSpace>
inline constexpr index_t sygst_backtransform_block_default = backends::is_cuda_space_v<ExecSpace> ? 512 : 0;

namespace detail {
// The block size sygst_backtransform runs with for n x m and the caller's nb
// (0: the default), and whether its blocks use inverted diagonal blocks.
template <class ExecSpace>
index_t sygst_backtransform_block(index_t n, index_t m, index_t nb) {
  return nb != 0 ? nb : 8 * m < n ? 0 : sygst_backtransform_block_default<ExecSpace>;
}
template <class ExecSpace>
bool sygst_backtransform_inverses(GeneralizedType type, index_t n, index_t nb) {
  return sygst_inverse_blocks_v<ExecSpace> && type != GeneralizedType::BAxLx && nb > 0 && nb < n;
}
}  // namespace detail

// Workspace entries of sygst_backtransform for type, n x m and block size nb
// (0: the default): on GPUs with blocks of rows (types 1, 2) the inverted
// diagonal blocks of L and an nb x m scratch; none otherwise.
template <class T, class ExecSpace>
index_t sygst_backtransform_workspace_size(GeneralizedType type, index_t n, index_t m, index_t nb = 0) {
  nb = detail::sygst_backtransform_block<ExecSpace>(n, m, nb);
  if (m <= 0 || !detail::sygst_backtransform_inverses<ExecSpace>(type, n, nb)) return 0;
  return detail::inverse_blocks_entries<T>(n, nb) + detail::align_slack<T> + nb * m;
}

// Back-transformation of the eigenvectors of C (z: n x m, in place):
// types 1, 2: Z := L^{-H} Z; type 3: Z := L Z. Only L's lower triangle is read.
// nb: rows per block of the solve (0: sygst_backtransform_block_default; a
// value of at least n: one trsm); work:
// sygst_backtransform_workspace_size(type, n, m, nb) entries. Asynchronous on
// ctx.space().
template <class T, class ExecSpace>
void sygst_backtransform(const backends::Context<ExecSpace>& ctx, GeneralizedType type, const Matrix<T, ExecSpace>& l,
                         const Matrix<T, ExecSpace>& z, index_t nb = 0, const Vector<T, ExecSpace>& work = {}) {
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
  const index_t needed = sygst_backtransform_workspace_size<T, ExecSpace>(type, n, m, nb);
  if (static_cast<index_t>(work.extent(0)) < needed)
    throw InvalidArgument("work", "sygst_backtransform: needs sygst_backtransform_workspace_size(type, n, m, nb) = " +
                                      std::to_string(needed) + " entries, got " + std::to_string(work.extent(0)));
  nb = detail::sygst_backtransform_block<ExecSpace>(n, m, nb);
  if (n == 0 || m == 0) return;
  if (type == GeneralizedType::BAxLx) {
    backends::trmm<T>(ctx, Side::Left, Uplo::Lower, Op::NoTrans, Diag::NonUnit, T(1), l, z);
  } else if (nb == 0 || nb >= n) {
    backends::trsm<T>(ctx, Side::Left, Uplo::Lower, Op::ConjTrans, Diag::NonUnit, T(1), l, z);
  } else {
    // L^H X = Z by block rows [i, i2), i = q nb, the last first,
    // left-looking: block row i first drops the share of the rows below it,
    // already solved,
    //   Z_i -= L(i2:n, i:i2)^H X(i2:n),
    // then X_i = L_ii^{-H} Z_i: a solve, or on GPUs a product with the
    // inverted block (Z_i copied to the scratch first, so that the product
    // writes X_i in place of it). Only L's strictly lower part and its
    // diagonal blocks are read.
    const bool inverse = detail::sygst_backtransform_inverses<ExecSpace>(type, n, nb);
    detail::InverseBlocks<T, ExecSpace> inverses;
    T* scratch = nullptr;
    if (inverse) {
      inverses = detail::invert_diagonal_blocks<T, ExecSpace>(ctx, l, nb, work.data());
      scratch = detail::scratch_after_inverses(work.data(), n, nb);
    }
    for (index_t i = (n - 1) / nb * nb; i >= 0; i -= nb) {
      const index_t i2 = nb < n - i ? i + nb : n, kb = i2 - i;
      const Matrix<T, ExecSpace> Zi = block(z, i, i2, 0, m);
      const Matrix<T, ExecSpace> Si = inverse ? make_matrix<T, ExecSpace>(scratch, kb, m, kb) : Zi;
      if (inverse) copy_matrix(ctx.space(), Zi, Si);
      if (i2 < n)
        backends::gemm<T>(ctx, Op::ConjTrans, Op::NoTrans, T(-1), block(l, i2, n, i, i2), block(z, i2, n, 0, m), T(1), Si);
      if (inverse)
        backends::gemm<T>(ctx, Op::ConjTrans, Op::NoTrans, T(1), inverses.block(i, kb), Si, T(0), Zi);
      else
        backends::trsm<T>(ctx, Side::Left, Uplo::Lower, Op::ConjTrans, Diag::NonUnit, T(1), block(l, i, i2, i, i2), Zi);
    }
  }
}

}  // namespace keig::stages
