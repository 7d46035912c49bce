// stages/sy2sb: first stage of the two-stage reduction, dense Hermitian ->
// band of half-bandwidth b, Q1^H A Q1 = B (LAPACK ?sytrd_sy2sb; seed 003
// §5.2, seed 002 §4.2.2). Every flop but the panel QR is BLAS-3:
//
//   for each panel of b columns starting at column i:
//     QR of A(i+b:n, i:i+b) = V R             (panel_qr or geqrf: R stays in the band)
//     T = larft(V, tau)                        (Q = I - V T V^H; panel_qr forms it in its launch)
//     X = A22 V T                              (hemm/symm + trmm; on GPUs gemms, T by a gemm
//                                               into a second buffer, not an in-place trmm)
//     W = X - 1/2 V (T^H (V^H X))              (gemm, trmm, gemm)
//     A22 -= V W^H + W V^H                     (her2k/syr2k)
//
// with A22 = A(i+b:n, i+b:n); since Q^H A22 Q = A22 - V W^H - W V^H and
// T^H V^H A22 V T is Hermitian, one rank-2b update replaces two one-sided
// applications (seed 003 eq. for W).
//
// Groups of g panels share one trailing update. Panel j of a group starts
// from the matrix as the group found it: its b columns first get the
// group's earlier updates, A(:, cols) -= V_e W_e(cols)^H + W_e V_e(cols)^H
// ([V_e W_e]: the earlier panels' reflectors and W's), and its product is
// corrected the same way, X = A_j V - V_e (W_e^H V) - W_e (V_e^H V), with
// skinny gemms of inner size at most 2 (g-1) b (one gemm each: the storage
// of the V's and W's keeps them contiguous, see vw_all). The group then updates the
// trailing matrix once, A -= [V_e W_e] [W_e V_e]^H with inner size 2gb
// (the delayed update of LAPACK's ?latrd, one level up).
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
// For real double on GPUs with b <= 32 the Blocked variant's X = A22 V is
// one launch of keig's tensor-core kernel instead where the trailing matrix
// is small enough (backends::symm_lower_skinny: each thread block forms one
// block row of X from the lower triangle; Sy2sbProduct).
//
// On return the lower band of A (diagonal and b subdiagonals) holds B, the
// reflector of column j in A(j+b:n, j) below the band (unit entry implied)
// and tau(j) its scalar, j < n - b: the shape bt_sy2sb applies. An upper-
// stored A is first mirrored into the lower triangle. The strict upper
// triangle is not referenced afterwards (sb2st may keep its reflectors there).
#pragma once

#include <Kokkos_Core.hpp>

#include "keig/backends/lapack.hpp"
#include "keig/stages/panel_cholqr.hpp"
#include "keig/stages/panel_qr.hpp"
#include "keig/stages/sytrd.hpp"
#include "keig/views/matrix.hpp"
#include "keig/views/workspace.hpp"

namespace keig::stages {

// Half-bandwidth b: large enough that the panel products run at gemm speed,
// small enough that bulge chasing (O(n^2 b)) stays cheap. Tuned per backend
// with keig-bench (docs/measurements.md).
template <class ExecSpace>
struct Sy2sbTuning {
  static constexpr index_t default_band = backends::is_cuda_space_v<ExecSpace> ? 64 : 32;
  // Eigenvalues only on GPUs up to n = values_narrow_max_n: a band of 32.
  // There is no back-transformation to feed, and the bulge chase's task on a
  // band of 32 (a team of 2 warps) is quicker than one on a band of 64
  // (8 warps); larger n take 64, where sy2sb's fatter products outweigh the
  // chase. H200, eigenvalues only, b = 32 against 64 (keig-bench --band,
  // 2026-11-23, after the faster band-64 chase): n = 4096 / 6144 / 8192:
  // 0.060 / 0.096 / 0.141 against 0.066 / 0.104 / 0.149 s; 10240 / 12288 /
  // 16384 / 32768: 0.207 / 0.281 / 0.464 / 2.013 against 0.201 / 0.259 /
  // 0.416 / 1.822 s (at 16384 sb2st 0.127 against 0.164 s, sy2sb 0.316
  // against 0.227 s).
  // A few vectors (fewer than few_vectors pairs, known before the
  // tridiagonal step: an index range, or all of a small matrix) up to
  // n = few_vectors_max_n take the band of 32 as well: their
  // back-transformations are small, and the faster chase wins. H200, the
  // 1 % smallest pairs, b = 32 against 64: n = 2048 / 4096 / 6144: 0.042 /
  // 0.086 / 0.135 against 0.048 / 0.094 / 0.148 s; 8192 / 16384: 0.199 /
  // 0.619 against 0.195 / 0.548 s.
  static constexpr index_t values_narrow_max_n = 9216;
  static constexpr index_t few_vectors = 768, few_vectors_max_n = 6144;
  // wanted: the pairs the range asks for, -1 where not known before the
  // tridiagonal step (a value range).
  static bool few_pairs(index_t n, index_t wanted) {
    return wanted >= 0 && wanted < few_vectors && n <= few_vectors_max_n;
  }
  static index_t band(bool vectors, index_t n = 0, index_t wanted = -1) {
    if (!backends::is_cuda_space_v<ExecSpace>) return default_band;
    if (!vectors) return n <= values_narrow_max_n ? 32 : default_band;
    return few_pairs(n, wanted) ? 32 : default_band;
  }
};

// How the trailing matrix is updated: Symmetric (symm + syr2k on one
// triangle), Full (gemms on both triangles) or Blocked (gemms per block
// column of the lower triangle). Auto: Blocked on GPUs, where the vendor's
// gemm is much faster than its symm/syr2k; Symmetric on hosts, where gemm
// and syr2k run at about the same rate.
enum class Sy2sbUpdate { Auto, Symmetric, Full, Blocked };

// Block-column width of the Blocked update. Wider blocks waste flops in the
// diagonal blocks (kept whole), narrower ones make more, smaller gemms.
// b >= 64: 4096 columns (rounded up to a multiple of b) whatever n, for the
// skinny X = A22 V gemms, where size matters more. H200, b = 64, sy2sb at
// n = 8192 / 16384 / 20694 / 32768 (keig-bench --suite sy2sb --blocks): 4096
// columns 0.061 / 0.242 / 0.499-0.508 / 1.382 s; n/16 (512 / 1024 / 1344 /
// 2048) 0.072 / 0.260 / 0.543 / 1.412 s; 8192 columns 0.061 / 0.250 / 0.525 /
// 1.452 s. b < 64: n/16 rounded up to a multiple of b: with b <= 32 keig's
// tensor-core kernel forms X up to m = 16896, so only the group updates
// read the blocks, and they do best with narrow ones (b = 32, n = 16384:
// 1024 columns 0.319 s, 4096 0.331 s; n = 32768: 2048 1.742 s, 4096 1.738 s).
// At least 4b either way.
inline index_t sy2sb_block_columns(index_t n, index_t b) {
  const index_t target = b >= 64 ? 4096 : (n + 15) / 16;
  const index_t nb = (target + b - 1) / b * b;
  return nb > 4 * b ? nb : 4 * b;
}

// Width of the sub-columns in which the Blocked group update forms a
// diagonal block's lower triangle (Sy2sbOptions::diagonal_split). The
// products read each diagonal block whole, so the update used to keep both
// of its triangles by updating it whole: with blocks of nb columns that is
// about 1.5 nb / n more update flops over a reduction (0.37 at n = 16384 with
// nb = 4096). Now the update forms the block's lower triangle in sub-columns
// of this width (gemms of rows d0:c1, so only the sub-blocks on the diagonal
// are formed whole) and mirrors it into the upper triangle, a transpose that
// moves the block once. The narrower gemms run slower, so the gain is less
// than the flops: H200, the update alone at m = 16384 (cuBLAS harness) 3.39
// -> 3.26 ms; sy2sb at n = 16384 / 20694 (keig-bench --suite sy2sb) 0.233 /
// 0.501 -> 0.228 / 0.492 s; sub-columns of 256 / 1024 / 2048 0.233 / 0.229 /
// 0.231 s at 16384, and with blocks of 6144 or 8192 within 1-3 % (noise).
inline constexpr index_t sy2sb_diagonal_split_default = 512;

// How a panel is factored: Vendor (the backend's geqrf), Keig
// (stages/panel_qr: one launch per panel, its teams meeting once per 4
// columns for real scalars, per column for complex ones, or as
// Sy2sbOptions::panel_columns asks; GPUs, b <= 64) or CholQr (stages/panel_cholqr: CholeskyQR2 and
// Householder reconstruction, two meetings per panel; real scalars,
// b <= 64, every backend; panels it refuses go to panel_qr on GPUs and to
// geqrf on hosts). Auto: Keig where it is available, else Vendor. CholQr
// is not the default: its last teams factor the k x k sums with a team
// barrier per elimination step (five sweeps of k steps a panel), which
// cost more than panel_qr's meetings: H200, b = 64, the panels of
// n = 16384 alone 0.132 s against 0.079 s with one column a meeting and
// 0.062 s with four (keig-bench --suite sy2sb).
enum class Sy2sbPanel { Auto, Vendor, Keig, CholQr };

// Panels per trailing update (Sy2sbOptions::group; the groups are described
// at the top of this file): the same flops, update gemms of inner size 2gb
// instead of 2b, the trailing matrix read and written once per g panels.
// On GPUs g b = 256 (inner size 512) for b = 64 and 384 for b <= 32: H200,
// b = 64, 1 -> 4 panels: sy2sb 0.317 -> 0.281 s at n = 16384, 1.72 -> 1.47 s
// at 32768 (2 and 3 in between, 6 and 8 no better); b = 32 (V and T from
// panel_qr, one gemm per correction), n = 16384, two runs: 8 panels 0.323 /
// 0.324 s, 10: 0.319 / 0.320, 12: 0.317 / 0.319, 14: 0.322 / 0.324, 16:
// 0.322; n = 32768: 8 panels 1.767 s, 12: 1.748 s. 2 cores, b = 32: 2 panels
// about as fast as 1 at n = 2000 and 1.18x at 4000, 4 slower at 2000
// (0.94x). Tuned with keig-bench --suite sy2sb --groups.
template <class ExecSpace>
struct Sy2sbGroup {
  static index_t default_panels(index_t b) {
    if constexpr (backends::is_cuda_space_v<ExecSpace>) return b >= 256 ? 1 : (b <= 32 ? 384 : 256) / b;
    else return 2;
  }
};

// How the Blocked update forms X = A22 V: Gemm (two cuBLAS gemms per block
// column) or Skinny (backends::symm_lower_skinny: one launch, the lower
// triangle's block row per thread block on the FP64 tensor cores; real
// double on CUDA, b <= 64). Auto: Skinny where it measured faster, b <= 32
// and trailing matrices whose row blocks all run at once
// (backends::symm_skinny_resident_rows: m <= 16896 on an H200); Gemm
// elsewhere. H200 (keig-bench --suite sy2sb times both): b = 32, n = 16384:
// sy2sb 0.345-0.348 s against 0.354-0.357 s in four same-run pairs; the
// kernel on every panel was slower at n = 32768 (2.05 against 1.80 s) and
// with b = 64 (0.328 against 0.284 s at 16384).
enum class Sy2sbProduct { Auto, Gemm, Skinny };

struct Sy2sbOptions {
  Sy2sbUpdate update = Sy2sbUpdate::Auto;
  index_t block = 0;  // Blocked update's block-column width (0: sy2sb_block_columns)
  Sy2sbPanel panel = Sy2sbPanel::Auto;
  // Benchmark only (keig-bench --suite sy2sb): factor every panel (QR, V, T)
  // of the input as it stands and skip all trailing-matrix products, so the
  // time is the panels' share of a full run. A is not reduced.
  bool panels_only = false;
  index_t group = 0;  // panels per trailing update (0: Sy2sbGroup's default)
  Sy2sbProduct product = Sy2sbProduct::Auto;
  int panel_columns = 0;  // panel_qr's columns per meeting (0: its default)
  // Blocked update: sub-column width for the diagonal blocks' lower
  // triangles (0: sy2sb_diagonal_split_default; >= the block width: each
  // diagonal block updated whole, no mirror).
  index_t diagonal_split = 0;
};

namespace detail {

// to1 = from1 and to2 = from2 (all m x k): W's and V's partner copies, in
// one launch over the entries, a column's rows on consecutive threads (a
// two-dimensional range took 20 us for m = 16384, k = 64 on an H100).
template <class T, class ExecSpace>
void copy_partners(const ExecSpace& space, const Matrix<T, ExecSpace>& from1, const Matrix<T, ExecSpace>& from2,
                   const Matrix<T, ExecSpace>& to1, const Matrix<T, ExecSpace>& to2) {
  const index_t m = from1.extent(0), k = from1.extent(1);
  Kokkos::parallel_for(
      "keig::sy2sb::partners", Kokkos::RangePolicy<ExecSpace>(space, 0, m * k), KOKKOS_LAMBDA(const index_t e) {
        const index_t i = e % m, c = e / m;
        to1(i, c) = from1(i, c);
        to2(i, c) = from2(i, c);
      });
}

}  // namespace detail

template <class ExecSpace>
index_t sy2sb_group(index_t group, index_t b) {
  return group > 0 ? group : Sy2sbGroup<ExecSpace>::default_panels(b > 0 ? b : 1);
}

// Workspace of sy2sb (elements of T) for g panels per update: [V W] and
// [W V] (n x 2gb each, columns 256-byte aligned for the gemms:
// aligned_leading_dimension), S and T (b x b each), the group's corrections
// (2 gb x b) and the panel QR's sums (panel_cholqr's, which hold panel_qr's).
template <class T, class ExecSpace>
index_t sy2sb_workspace_size(index_t n, index_t b, index_t group = 0) {
  const index_t g = sy2sb_group<ExecSpace>(group, b);
  return 4 * aligned_leading_dimension<T>(n) * g * b + 2 * b * b + 2 * g * b * b + panel_cholqr_workspace_size();
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
  using Mat = Matrix<T, ExecSpace>;
  const ExecSpace& space = ctx.space();
  const index_t n = a.extent(0);
  if (static_cast<index_t>(a.extent(1)) != n) throw InvalidArgument("A", "sy2sb: A must be square");
  if (b < 1) throw InvalidArgument("b", "sy2sb: the half-bandwidth must be >= 1, got " + std::to_string(b));
  if (static_cast<index_t>(tau.extent(0)) < n) throw InvalidArgument("tau", "sy2sb: needs n entries");
  if (options.group < 0)
    throw InvalidArgument("group", "sy2sb: panels per update must be >= 0, got " + std::to_string(options.group));
  const index_t group = sy2sb_group<ExecSpace>(options.group, b);
  if (static_cast<index_t>(work.extent(0)) < sy2sb_workspace_size<T, ExecSpace>(n, b, group))
    throw InvalidArgument("work", "sy2sb: needs sy2sb_workspace_size(n, b, group) entries");
  const Sy2sbUpdate update = options.update;
  if (options.block < 0)
    throw InvalidArgument("block", "sy2sb: the block-column width must be >= 0, got " + std::to_string(options.block));
  if (options.panel == Sy2sbPanel::Keig && !panel_qr_available<ExecSpace>(b))
    throw InvalidArgument("panel", "sy2sb: keig's panel QR runs on GPU execution spaces with b <= 64, b = " +
                                       std::to_string(b));
  if (options.panel == Sy2sbPanel::CholQr && !panel_cholqr_available<T>(b))
    throw InvalidArgument("panel", "sy2sb: keig's CholeskyQR2 panel runs for real scalars with b <= 64, b = " +
                                       std::to_string(b));
  const bool cholqr_panel = options.panel == Sy2sbPanel::CholQr;
  const bool keig_panel = options.panel == Sy2sbPanel::Keig ||
                          (options.panel == Sy2sbPanel::Auto && panel_qr_available<ExecSpace>(b));
  if (n == 0) return;
  const bool blocked = update == Sy2sbUpdate::Blocked ||
                       (update == Sy2sbUpdate::Auto && backends::is_cuda_space_v<ExecSpace>);
  const bool full = update == Sy2sbUpdate::Full;
  const bool skinny_ok = blocked && backends::symm_skinny_available<T>(ctx, b);
  if (options.product == Sy2sbProduct::Skinny && !skinny_ok)
    throw InvalidArgument("product", "sy2sb: the skinny product runs with the Blocked update for real double on CUDA "
                                     "devices of compute capability 8.0 or newer, b <= 64 (b = " +
                                         std::to_string(b) + ")");
  // Trailing matrices of at most skinny_rows rows take the tensor-core
  // X = A22 V (0: none).
  const index_t skinny_rows = !skinny_ok || options.product == Sy2sbProduct::Gemm ? 0
                              : options.product == Sy2sbProduct::Skinny        ? n
                              : b <= 32 ? backends::symm_skinny_resident_rows<T>(ctx, b)
                                        : 0;
  if (options.diagonal_split < 0)
    throw InvalidArgument("diagonal_split", "sy2sb: the diagonal blocks' sub-column width must be >= 0, got " +
                                                std::to_string(options.diagonal_split));
  const index_t nb = options.block > 0 ? options.block : sy2sb_block_columns(n, b);
  const index_t split = options.diagonal_split > 0 ? options.diagonal_split : sy2sb_diagonal_split_default;
  if (full || blocked) detail::mirror_full_hermitian(space, a, uplo);
  else if (uplo == Uplo::Upper) detail::mirror_upper_to_lower(space, a);
  // The group's reflectors and W's mirror around column gb of vw_all,
  //   vw_all = [.. V_1 V_0 | W_0 W_1 ..]   (V_e ends at gb - e b, W_e starts at gb + e b),
  // so the earlier panels' U = [V_{j-1} .. V_0 W_0 .. W_{j-1}] are the 2 j b
  // columns around gb, with panel j's V just left of them and its X right.
  // wv_all holds the partners in the same places ([.. W_1 W_0 | V_0 V_1 ..]),
  // so U~ U^H-type sums are single gemms. Rows count from the group's first
  // trailing row.
  T* p = work.data();
  const index_t gb = group * b;
  const index_t ldu = aligned_leading_dimension<T>(n);
  const Mat vw_all = make_matrix<T, ExecSpace>(p, n, 2 * gb, ldu);
  const Mat wv_all = make_matrix<T, ExecSpace>(p + 2 * ldu * gb, n, 2 * gb, ldu);
  p += 4 * ldu * gb;
  const Mat s_all(p, b, b), t_all(p + b * b, b, b), c_all(p + 2 * b * b, 2 * gb, b);
  const Vector<T, ExecSpace> qr_work(p + 2 * b * b + 2 * gb * b, panel_cholqr_workspace_size());
  if (cholqr_panel) panel_cholqr_prepare<T, ExecSpace>(space, qr_work);
  // Blocked: the block column of the trailing matrix from absolute column
  // `first` (m columns) that starts at its column c0 ends at c1: the ends
  // sit at multiples of nb in A's columns, so a diagonal block stays the
  // same block from panel to panel.
  const auto block_end = [nb](index_t first, index_t c0, index_t m) {
    return std::min(((first + c0) / nb + 1) * nb - first, m);
  };
  // X(0:m) = A(first:, first:) V for the trailing matrix from absolute
  // column `first` (m rows), V m x k.
  const auto trailing_times = [&](index_t first, const Mat& V, const Mat& X) {
    const index_t m = n - first;
    const Mat A22 = block(a, first, n, first, n);
    if (full) {
      backends::gemm<T>(ctx, Op::NoTrans, Op::NoTrans, T(1), A22, V, T(0), X);
    } else if (m <= skinny_rows) {
      backends::symm_lower_skinny<T>(ctx, A22, V, X);
    } else if (blocked) {
      for (index_t c0 = 0, c1; c0 < m; c0 = c1) {
        c1 = block_end(first, c0, m);
        // X(c0:m) += A22(c0:m, c0:c1) V(c0:c1)
        backends::gemm<T>(ctx, Op::NoTrans, Op::NoTrans, T(1), block(A22, c0, m, c0, c1),
                          block(V, c0, c1, 0, V.extent(1)), c0 == 0 ? T(0) : T(1),
                          block(X, c0, m, 0, X.extent(1)));
        if (c1 < m)  // X(c0:c1) += A22(c1:m, c0:c1)^H V(c1:m)
          backends::gemm<T>(ctx, Op::ConjTrans, Op::NoTrans, T(1), block(A22, c1, m, c0, c1),
                            block(V, c1, m, 0, V.extent(1)), T(1), block(X, c0, c1, 0, X.extent(1)));
      }
    } else {
      backends::symm<T>(ctx, Side::Left, Uplo::Lower, T(1), A22, V, T(0), X);
    }
  };
  for (index_t i0 = 0; i0 + b < n;) {
    // The group: panels j = 0.. of columns [i0 + j b, i0 + (j+1) b), rows
    // from i0 + (j+1) b; rows of vw_all count from base = i0 + b.
    const index_t base = i0 + b, m1 = n - base;
    index_t panels = 0, ktot = 0;
    for (; panels < group && panels * b < m1; ++panels) ktot += std::min(b, m1 - panels * b);
    for (index_t j = 0; j < panels; ++j) {
      const index_t r = j * b, m = m1 - r, k = std::min(b, m), lead = j * b;  // lead: earlier panels' reflectors
      const index_t col = i0 + j * b;
      // U and its partners U~ over the earlier panels, from row r0; this
      // panel's V place (left of them) and W place (right of them).
      const auto earlier = [&](const Mat& all, index_t r0, index_t r1) { return block(all, r0, r1, gb - lead, gb + lead); };
      const auto v_place = [&](const Mat& all) { return block(all, r, m1, gb - lead - k, gb - lead); };
      const auto w_place = [&](const Mat& all) { return block(all, r, m1, gb + lead, gb + lead + k); };
      // The panel's columns made current by the group's earlier panels:
      // A(col:n, col:col+b) -= sum_e V_e W_e(cols)^H + W_e V_e(cols)^H
      // = U U~(cols)^H, rows from r - b (the panel's diagonal block).
      if (j > 0 && !options.panels_only) {
        const index_t r0 = r - b;
        backends::gemm<T>(ctx, Op::NoTrans, Op::ConjTrans, T(-1), earlier(vw_all, r0, m1), earlier(wv_all, r0, r),
                          T(1), block(a, col, n, col, col + b));
      }
      const Mat panel = block(a, col + b, n, col, col + b);
      const Vector<T, ExecSpace> tau_p = Kokkos::subview(tau, std::make_pair(col, col + k));
      const Mat V = v_place(vw_all);
      const Mat Tf = block(t_all, 0, k, 0, k);
      // V and T come out of the panel's launches, except from geqrf. Panels
      // with fewer rows than b columns (the last ones) skip CholeskyQR2.
      if (cholqr_panel && m >= b) {
        panel_cholqr<T, ExecSpace>(ctx, panel, tau_p, qr_work, PanelQrFactors<T, ExecSpace>{V, Tf});
      } else if (keig_panel || (cholqr_panel && panel_qr_available<ExecSpace>(b))) {
        panel_qr<T, ExecSpace>(space, panel, tau_p, panel_cholqr_qr_work<T, ExecSpace>(qr_work),
                               PanelQrFactors<T, ExecSpace>{V, Tf}, nullptr, options.panel_columns);
      } else {
        panel_qr_vendor<T, ExecSpace>(ctx, panel, tau_p, PanelQrFactors<T, ExecSpace>{V, Tf});
      }
      if (options.panels_only) continue;
      // X = A_j V with A_j the trailing matrix as the group's earlier panels
      // leave it: A_j V - U~ (U^H V) (seed 003 §5.2's W, with the update of
      // A_j deferred: sum_e W_e (V_e^H V) + V_e (W_e^H V)).
      const Mat X = w_place(vw_all);
      trailing_times(col + b, V, X);
      if (j > 0) {
        const Mat C = block(c_all, 0, 2 * lead, 0, k);
        backends::gemm<T>(ctx, Op::ConjTrans, Op::NoTrans, T(1), earlier(vw_all, r, m1), V, T(0), C);
        backends::gemm<T>(ctx, Op::NoTrans, Op::NoTrans, T(-1), earlier(wv_all, r, m1), C, T(1), X);
      }
      const Mat S = block(s_all, 0, k, 0, k);
      // The partners: W at V's place and V at W's place in wv_all.
      const Mat W_at_v = v_place(wv_all), V_at_w = w_place(wv_all);
      // W is formed in w and then copied to w_copy with V's partner. GPUs:
      // X T by a gemm into W's partner place (T has zeros below its diagonal
      // from every panel factorization), not cuBLAS's in-place trmm, which
      // ran at 5-6 TFLOP/s on these m x b products (H100, n = 16384: 24 us of
      // a panel's 73 us of small steps). Hosts: the trmm on X in place.
      constexpr bool xt_by_gemm = backends::is_cuda_space_v<ExecSpace>;
      const Mat w = xt_by_gemm ? W_at_v : X, w_copy = xt_by_gemm ? X : W_at_v;
      if constexpr (xt_by_gemm)
        backends::gemm<T>(ctx, Op::NoTrans, Op::NoTrans, T(1), X, Tf, T(0), w);                     // w = X T
      else
        backends::trmm<T>(ctx, Side::Right, Uplo::Upper, Op::NoTrans, Diag::NonUnit, T(1), Tf, w);  // w = X T
      backends::gemm<T>(ctx, Op::ConjTrans, Op::NoTrans, T(1), V, w, T(0), S);                     // S = V^H X T
      backends::trmm<T>(ctx, Side::Left, Uplo::Upper, Op::ConjTrans, Diag::NonUnit, T(1), Tf, S);  // S = T^H S
      backends::gemm<T>(ctx, Op::NoTrans, Op::NoTrans, T(R(-0.5)), V, S, T(1), w);                // W = X T - V S / 2
      detail::copy_partners(space, w, V, w_copy, V_at_w);
    }
    const index_t last = (panels - 1) * b;  // first row of the last panel's trailing matrix (in vw_all)
    const index_t first = base + last, m = n - first;
    i0 += panels * b;
    if (options.panels_only || m <= 0) continue;
    // A(first:, first:) -= [V W] [W V]^H over the group's 2 ktot columns.
    const Mat VW = block(vw_all, last, m1, gb - ktot, gb + ktot);
    if (full || blocked) {
      const Mat WV = block(wv_all, last, m1, gb - ktot, gb + ktot);
      const Mat A22 = block(a, first, n, first, n);
      if (full) {
        backends::gemm<T>(ctx, Op::NoTrans, Op::ConjTrans, T(-1), VW, WV, T(1), A22);
      } else {
        // A22(r0:r1, d0:d1) -= [V W](r0:r1) [W V](d0:d1)^H
        const auto update_block = [&](index_t r0, index_t r1, index_t d0, index_t d1) {
          backends::gemm<T>(ctx, Op::NoTrans, Op::ConjTrans, T(-1), block(VW, r0, r1, 0, 2 * ktot),
                            block(WV, d0, d1, 0, 2 * ktot), T(1), block(A22, r0, r1, d0, d1));
        };
        for (index_t c0 = 0, c1; c0 < m; c0 = c1) {
          c1 = block_end(first, c0, m);
          if (c1 - c0 <= split) {
            update_block(c0, m, c0, c1);
            continue;
          }
          // The rows below the diagonal block in one gemm; the block's lower
          // triangle in sub-columns of `split` (rows d0:c1), then mirrored
          // (sy2sb_diagonal_split_default says why).
          if (c1 < m) update_block(c1, m, c0, c1);
          for (index_t d0 = c0; d0 < c1; d0 += split) update_block(d0, c1, d0, std::min(d0 + split, c1));
          detail::mirror_triangle_tiled(space, block(A22, c0, c1, c0, c1), Uplo::Lower, false);
        }
      }
    } else {  // A22 -= V W^H + W V^H (the W's partnered with the V's in wv_all)
      backends::syr2k<T>(ctx, Uplo::Lower, Op::NoTrans, T(-1), block(vw_all, last, m1, gb - ktot, gb),
                         block(wv_all, last, m1, gb - ktot, gb), R(1), block(a, first, n, first, n));
    }
  }
}

}  // namespace keig::stages
