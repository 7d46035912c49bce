// stages/sy2sb: first stage of the two-stage reduction, dense Hermitian ->
// band of half-bandwidth b, Q1^H A Q1 = B (LAPACK ?sytrd_sy2sb; seed 003
// §5.2, seed 002 §4.2.2). Every flop but the panel QR is BLAS-3:
//
//   for each panel of b columns starting at column i:
//     QR of A(i+b:n, i:i+b) = V R             (panel_qr or geqrf: R stays in the band)
//     T = larft(V, tau)                        (Q = I - V T V^H)
//     X = A22 V T                              (hemm/symm + trmm)
//     W = X - 1/2 V (T^H (V^H X))              (gemm, trmm, gemm)
//     A22 -= V W^H + W V^H                     (her2k/syr2k)
//
// with A22 = A(i+b:n, i+b:n); since Q^H A22 Q = A22 - V W^H - W V^H and
// T^H V^H A22 V T is Hermitian, one rank-2b update replaces two one-sided
// applications (seed 003 eq. for W).
//
// Full variant: both triangles of A22 are kept, so the two products are
// plain gemms, X = A22 V and A22 -= [V W] [W V]^H with inner dimension 2b: 1.5x the flops of symm + syr2k, at the vendor's gemm speed
// (keig-bench --suite sy2sb times both against the dgemm rate; seed 003
// §5.2.2 makes the same trade with two gemms per block column).
//
// Blocked variant (GPU default): the lower triangle only, in block columns
// of width nb (fixed boundaries, multiples of nb): X = A22 V is two gemms per
// block column (the block column times V, and its part below the diagonal
// block transposed times V), the update one gemm per block column,
// A22(c0:m, c0:c1) -= [V W](c0:m) [W V](c0:c1)^H. The diagonal blocks are
// kept whole (both triangles), so each gemm is a plain one; the update's
// flops are about (1 + nb/m)/2 of the Full update's and it moves half the
// data (seed 003 §5.2.2's two gemms per block column, with fewer, larger
// blocks).
//
// On return the lower band of A (diagonal and b subdiagonals) holds B, the
// reflector of column j in A(j+b:n, j) below the band (unit entry implied)
// and tau(j) its scalar, j < n - b: the shape bt_sy2sb applies. An upper-
// stored A is first mirrored into the lower triangle. The strict upper
// triangle is not referenced afterwards (sb2st may keep its reflectors there).
#pragma once

#include <Kokkos_Core.hpp>

#include "keig/backends/lapack.hpp"
#include "keig/stages/panel_qr.hpp"
#include "keig/stages/sytrd.hpp"

namespace keig::stages {

// Half-bandwidth b: large enough that the panel products run at gemm speed,
// small enough that bulge chasing (O(n^2 b)) stays cheap. Tuned per backend
// with keig-bench (README "Status").
template <class ExecSpace>
struct Sy2sbTuning {
  static constexpr index_t default_band = backends::is_cuda_space_v<ExecSpace> ? 64 : 32;
};

// How the trailing matrix is updated: Symmetric (symm + syr2k on one
// triangle), Full (gemms on both triangles) or Blocked (gemms per block
// column of the lower triangle). Auto: Blocked on GPUs, where the vendor's
// gemm is much faster than its symm/syr2k; Symmetric on hosts, where gemm
// and syr2k run at about the same rate.
enum class Sy2sbUpdate { Auto, Symmetric, Full, Blocked };

// Block-column width of the Blocked update: n/16 rounded up to a multiple of
// b, at least 4b (about 16 block columns: larger blocks waste flops in the
// diagonal blocks, smaller ones cost launches).
inline index_t sy2sb_block_columns(index_t n, index_t b) {
  const index_t nb = ((n + 15) / 16 + b - 1) / b * b;
  return nb > 4 * b ? nb : 4 * b;
}

// How a panel is factored: Vendor (the backend's geqrf) or Keig
// (stages/panel_qr: one launch per panel, GPUs, b <= 64). Auto: Keig where
// it is available.
enum class Sy2sbPanel { Auto, Vendor, Keig };

struct Sy2sbOptions {
  Sy2sbUpdate update = Sy2sbUpdate::Auto;
  index_t block = 0;  // Blocked update's block-column width (0: sy2sb_block_columns)
  Sy2sbPanel panel = Sy2sbPanel::Auto;
  // Benchmark only (keig-bench --suite sy2sb): factor every panel (QR, V, T)
  // of the input as it stands and skip all trailing-matrix products, so the
  // time is the panels' share of a full run. A is not reduced.
  bool panels_only = false;
};

// Workspace of sy2sb (elements of T): [V X] and [X V] (n x 2b each), S and
// T (b x b each), panel_qr's partial sums.
template <class T, class ExecSpace>
index_t sy2sb_workspace_size(index_t n, index_t b) {
  return 4 * n * b + 2 * b * b + panel_qr_workspace_size();
}

// Reduces A (n x n, `uplo` triangle) to band form. tau: n entries at least.
// Asynchronous on ctx.space().
template <class T, class ExecSpace>
void sy2sb(const backends::Context<ExecSpace>& ctx, Uplo uplo, const Matrix<T, ExecSpace>& a,
           const Vector<T, ExecSpace>& tau, const Vector<T, ExecSpace>& work, index_t b,
           const Sy2sbOptions& options = {}) {
  using R = real_t<T>;
  using backends::Diag;
  using backends::Op;
  using backends::Side;
  const ExecSpace& space = ctx.space();
  const index_t n = a.extent(0);
  if (static_cast<index_t>(a.extent(1)) != n) throw InvalidArgument("A", "sy2sb: A must be square");
  if (b < 1) throw InvalidArgument("b", "sy2sb: the half-bandwidth must be >= 1, got " + std::to_string(b));
  if (static_cast<index_t>(tau.extent(0)) < n) throw InvalidArgument("tau", "sy2sb: needs n entries");
  if (static_cast<index_t>(work.extent(0)) < sy2sb_workspace_size<T, ExecSpace>(n, b))
    throw InvalidArgument("work", "sy2sb: needs sy2sb_workspace_size(n, b) entries");
  const Sy2sbUpdate update = options.update;
  if (options.block < 0)
    throw InvalidArgument("block", "sy2sb: the block-column width must be >= 0, got " + std::to_string(options.block));
  if (options.panel == Sy2sbPanel::Keig && !panel_qr_available<ExecSpace>(b))
    throw InvalidArgument("panel", "sy2sb: keig's panel QR runs on GPU execution spaces with b <= 64, b = " +
                                       std::to_string(b));
  const bool keig_panel = options.panel == Sy2sbPanel::Keig ||
                          (options.panel == Sy2sbPanel::Auto && panel_qr_available<ExecSpace>(b));
  if (n == 0) return;
  const bool blocked = update == Sy2sbUpdate::Blocked ||
                       (update == Sy2sbUpdate::Auto && backends::is_cuda_space_v<ExecSpace>);
  const bool full = update == Sy2sbUpdate::Full;
  const index_t nb = options.block > 0 ? options.block : sy2sb_block_columns(n, b);
  if (full || blocked) detail::mirror_full_hermitian(space, a, uplo);
  else if (uplo == Uplo::Upper) detail::mirror_upper_to_lower(space, a);
  // vx = [V X] with X starting at column k of the panel (so [V W] is one
  // matrix), xv = [W V] for the Full and Blocked updates.
  T* p = work.data();
  const Matrix<T, ExecSpace> vx_all(p, n, 2 * b), xv_all(p + 2 * n * b, n, 2 * b);
  const Matrix<T, ExecSpace> s_all(p + 4 * n * b, b, b), t_all(p + 4 * n * b + b * b, b, b);
  const Vector<T, ExecSpace> qr_work(p + 4 * n * b + 2 * b * b, panel_qr_workspace_size());
  using Policy2 = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2, Kokkos::Iterate::Left, Kokkos::Iterate::Left>>;
  for (index_t i = 0; i + b < n; i += b) {
    const index_t m = n - i - b;         // rows below the band
    const index_t k = m < b ? m : b;     // reflectors of this panel
    const auto rows = std::make_pair(i + b, n);
    const Matrix<T, ExecSpace> panel = Kokkos::subview(a, rows, std::make_pair(i, i + b));
    const Vector<T, ExecSpace> tau_p = Kokkos::subview(tau, std::make_pair(i, i + k));
    if (keig_panel) panel_qr<T, ExecSpace>(space, panel, tau_p, qr_work);
    else backends::geqrf<T>(ctx, panel, tau_p);
    const auto mrows = std::make_pair(index_t(0), m);
    const Matrix<T, ExecSpace> V = Kokkos::subview(vx_all, mrows, std::make_pair(index_t(0), k));
    Kokkos::parallel_for(
        "keig::sy2sb::extract_v", Policy2(space, {0, 0}, {m, k}), KOKKOS_LAMBDA(const index_t r, const index_t c) {
          V(r, c) = r < c ? T(0) : (r == c ? T(1) : panel(r, c));
        });
    const Matrix<T, ExecSpace> Tf = Kokkos::subview(t_all, std::make_pair(index_t(0), k), std::make_pair(index_t(0), k));
    backends::larft<T>(ctx, V, tau_p, Tf);
    if (options.panels_only) continue;
    const Matrix<T, ExecSpace> A22 = Kokkos::subview(a, rows, rows);
    const Matrix<T, ExecSpace> X = Kokkos::subview(vx_all, mrows, std::make_pair(k, 2 * k));
    const Matrix<T, ExecSpace> S = Kokkos::subview(s_all, std::make_pair(index_t(0), k), std::make_pair(index_t(0), k));
    // Block columns [c0, c1) of A22: their ends sit at multiples of nb in A's
    // columns, so a diagonal block stays the same block from panel to panel.
    const auto block_end = [&](index_t c0) {
      const index_t g1 = ((i + b + c0) / nb + 1) * nb - (i + b);
      return g1 < m ? g1 : m;
    };
    if (full) {
      backends::gemm<T>(ctx, Op::NoTrans, Op::NoTrans, T(1), A22, V, T(0), X);  // X = A22 V
    } else if (blocked) {
      for (index_t c0 = 0, c1; c0 < m; c0 = c1) {
        c1 = block_end(c0);
        const auto cols = std::make_pair(c0, c1), below = std::make_pair(c1, m), from = std::make_pair(c0, m);
        const Matrix<T, ExecSpace> Xc = Kokkos::subview(X, from, Kokkos::ALL);  // X(c0:m) += A22(c0:m, c0:c1) V(c0:c1)
        backends::gemm<T>(ctx, Op::NoTrans, Op::NoTrans, T(1), Matrix<T, ExecSpace>(Kokkos::subview(A22, from, cols)),
                          Matrix<T, ExecSpace>(Kokkos::subview(V, cols, Kokkos::ALL)), c0 == 0 ? T(0) : T(1), Xc);
        if (c1 < m)  // X(c0:c1) += A22(c1:m, c0:c1)^H V(c1:m)
          backends::gemm<T>(ctx, Op::ConjTrans, Op::NoTrans, T(1),
                            Matrix<T, ExecSpace>(Kokkos::subview(A22, below, cols)),
                            Matrix<T, ExecSpace>(Kokkos::subview(V, below, Kokkos::ALL)), T(1),
                            Matrix<T, ExecSpace>(Kokkos::subview(X, cols, Kokkos::ALL)));
      }
    } else {
      backends::symm<T>(ctx, Side::Left, Uplo::Lower, T(1), A22, V, T(0), X);
    }
    backends::trmm<T>(ctx, Side::Right, Uplo::Upper, Op::NoTrans, Diag::NonUnit, T(1), Tf, X);  // X = X T
    backends::gemm<T>(ctx, Op::ConjTrans, Op::NoTrans, T(1), V, X, T(0), S);                   // S = V^H X
    backends::trmm<T>(ctx, Side::Left, Uplo::Upper, Op::ConjTrans, Diag::NonUnit, T(1), Tf, S);  // S = T^H S
    backends::gemm<T>(ctx, Op::NoTrans, Op::NoTrans, T(R(-0.5)), V, S, T(1), X);              // W = X - V S / 2
    if (full || blocked) {  // A22 -= [V W] [W V]^H
      const Matrix<T, ExecSpace> VW = Kokkos::subview(vx_all, mrows, std::make_pair(index_t(0), 2 * k));
      const Matrix<T, ExecSpace> WV = Kokkos::subview(xv_all, mrows, std::make_pair(index_t(0), 2 * k));
      Kokkos::parallel_for(
          "keig::sy2sb::swap_vw", Policy2(space, {0, 0}, {m, 2 * k}), KOKKOS_LAMBDA(const index_t r, const index_t c) {
            WV(r, c) = VW(r, c < k ? c + k : c - k);
          });
      if (full) {
        backends::gemm<T>(ctx, Op::NoTrans, Op::ConjTrans, T(-1), VW, WV, T(1), A22);
      } else {
        for (index_t c0 = 0, c1; c0 < m; c0 = c1) {
          c1 = block_end(c0);
          const auto cols = std::make_pair(c0, c1), from = std::make_pair(c0, m);
          backends::gemm<T>(ctx, Op::NoTrans, Op::ConjTrans, T(-1),
                            Matrix<T, ExecSpace>(Kokkos::subview(VW, from, Kokkos::ALL)),
                            Matrix<T, ExecSpace>(Kokkos::subview(WV, cols, Kokkos::ALL)), T(1),
                            Matrix<T, ExecSpace>(Kokkos::subview(A22, from, cols)));
        }
      }
    } else {
      backends::syr2k<T>(ctx, Uplo::Lower, Op::NoTrans, T(-1), V, X, R(1), A22);  // A22 -= V W^H + W V^H
    }
  }
}

}  // namespace keig::stages
