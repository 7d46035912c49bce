// stages/ormtr: Z := Q Z for the Q = H(0) H(1) ... H(n-2) of sytrd (lower
// storage), blocked with the compact WY form (LAPACK ?ormtr/?ormqr + ?larfb;
// seed 002 §4.2.1): for each block of nb reflectors, last block first,
//   Z(k+1:n, :) -= V (T (V^H Z(k+1:n, :)))
// with T from larft and two gemms plus a trmm, or on GPUs with many columns
// three gemms: W = V T, then Z -= W (V^H Z). Only the m columns of Z that
// are wanted are transformed: the cost is 2 n^2 m flops.
#pragma once

#include <Kokkos_Core.hpp>

#include "keig/backends/lapack.hpp"
#include "keig/views/workspace.hpp"

namespace keig::stages {

// Default reflectors per block (gemm rank); any block size is valid.
inline constexpr index_t ormtr_block_default = 128;

// Reflectors per block for the solvers' back-transformations of m wanted
// columns on ExecSpace (ormtr after sytrd, bt_sy2sb). GPUs: 512 from m =
// 2048 and 1024 from m = 16384, where the gemms of inner size nb run faster
// the larger nb and Z is read and written once per block (keig-bench
// --suite sy2sb, H200, Z := Q1 Z with n columns, nb = 64 / 128 / 256 / 512:
// 24.0 / 37.0 / 40.9 / 43.5 TFLOP/s at n = 16384, 24.9 / 36.0 / 43.0 / 45.7
// at 32768; H100, 2026-12-07, nb = 512 / 1024: 0.1933 / 0.1931 s at 16384,
// 0.3982 / 0.3837 s at 20694); 256 below 2048, since forming each block's V
// and T costs O(n^2 nb) whatever m is; hosts ormtr_block_default.
template <class ExecSpace>
index_t back_transform_block(index_t m) {
  if constexpr (backends::is_cuda_space_v<ExecSpace>) return m >= 16384 ? 1024 : m >= 2048 ? 512 : 256;
  (void)m;
  return ormtr_block_default;
}

// Whether the reflector application forms W = V T per block (one gemm on V)
// and updates Z -= W (V^H Z), rather than X := T (V^H Z) with a trmm on the
// nb x m X. GPUs, from m >= n / 2: cuBLAS's trmm ran at 8 TFLOP/s where the
// gemms run at 48-54 (H100, bt_sy2sb at n = m = 16384, nb = 512: trmm 16.5 ms
// of 0.20 s), and W's gemm costs 2 rows nb^2 flops against the trmm's nb^2 m.
template <class ExecSpace>
bool reflectors_fold_t(index_t n, index_t m) {
  if constexpr (backends::is_cuda_space_v<ExecSpace>) return 2 * m >= n;
  (void)n;
  (void)m;
  return false;
}

// Workspace of ormtr (elements of T): V block (n x nb, its columns
// 256-byte aligned for the gemms: aligned_leading_dimension), T (nb x nb),
// with reflectors_fold_t W = V T (as V), V^H Z (nb x m).
template <class T, class ExecSpace>
index_t ormtr_workspace_size(index_t n, index_t m, index_t nb) {
  const index_t v = aligned_leading_dimension<T>(n) * nb;
  return v * (reflectors_fold_t<ExecSpace>(n, m) ? 2 : 1) + nb * nb + nb * (m > 0 ? m : 1);
}

// Z := Q Z for Q = H(0) H(1) ... H(count-1), H(j) = I - tau_j v_j v_j^H with
// v_j stored in a(j + offset : n, j) (its unit entry at row j + offset is
// implied): the reflectors of geqrf (offset 0, LAPACK ?ormqr), of sytrd
// (offset 1) and of sy2sb (offset b, the band width) have this shape.
// z: n x m. Asynchronous on ctx.space().
template <class T, class ExecSpace>
void apply_column_reflectors(const backends::Context<ExecSpace>& ctx, const Matrix<T, ExecSpace>& a, index_t offset,
                             index_t count, const Vector<T, ExecSpace>& tau, const Matrix<T, ExecSpace>& z,
                             const Vector<T, ExecSpace>& work, index_t nb) {
  const ExecSpace& space = ctx.space();
  const index_t n = a.extent(0), m = z.extent(1);
  if (static_cast<index_t>(z.extent(0)) != n) throw InvalidArgument("Z", "reflector application: Z needs n rows");
  if (offset < 0 || count < 0 || count > n - offset)
    throw InvalidArgument("count", "reflector application: needs offset >= 0 and 0 <= count <= n - offset");
  if (static_cast<index_t>(tau.extent(0)) < count) throw InvalidArgument("tau", "reflector application: needs count entries");
  if (static_cast<index_t>(work.extent(0)) < ormtr_workspace_size<T, ExecSpace>(n, m, nb))
    throw InvalidArgument("work", "reflector application: needs ormtr_workspace_size(n, m, nb) entries");
  if (count == 0 || m == 0) return;
  T* p = work.data();
  const index_t ldv = aligned_leading_dimension<T>(n);
  const Matrix<T, ExecSpace> v_all = make_matrix<T, ExecSpace>(p, n, nb, ldv);
  const bool fold = reflectors_fold_t<ExecSpace>(n, m);
  const Matrix<T, ExecSpace> w_all = fold ? make_matrix<T, ExecSpace>(p + ldv * nb, n, nb, ldv) : Matrix<T, ExecSpace>();
  T* const q = p + ldv * nb * (fold ? 2 : 1);  // past V and W, whose columns stay aligned
  const Matrix<T, ExecSpace> t_all(q, nb, nb);
  const Matrix<T, ExecSpace> x_all(q + nb * nb, nb, m);
  // Blocks of reflectors [first, first + kb), last block first.
  const index_t last_first = ((count - 1) / nb) * nb;
  for (index_t first = last_first; first >= 0; first -= nb) {
    const index_t kb = nb < count - first ? nb : count - first;
    const index_t rows = n - first - offset;  // the block acts on rows first+offset .. n-1
    // V with explicit zeros above its unit diagonal (gemm needs them).
    const Matrix<T, ExecSpace> V = Kokkos::subview(v_all, std::make_pair(index_t(0), rows), std::make_pair(index_t(0), kb));
    using Policy2 = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2, Kokkos::Iterate::Left, Kokkos::Iterate::Left>>;
    Kokkos::parallel_for(
        "keig::ormtr::extract_v", Policy2(space, {0, 0}, {rows, kb}), KOKKOS_LAMBDA(const index_t r, const index_t c) {
          // Reflector first + c: local row c is its unit entry.
          V(r, c) = reflector_entry(r, c, a(first + offset + r, first + c));
        });
    const Matrix<T, ExecSpace> Tf = Kokkos::subview(t_all, std::make_pair(index_t(0), kb), std::make_pair(index_t(0), kb));
    const Vector<T, ExecSpace> tau_b = Kokkos::subview(tau, std::make_pair(first, first + kb));
    backends::larft<T>(ctx, V, tau_b, Tf, n - offset);  // the first block (the last applied) has the most rows
    const Matrix<T, ExecSpace> Zb = Kokkos::subview(z, std::make_pair(first + offset, n), Kokkos::ALL());
    const Matrix<T, ExecSpace> X = Kokkos::subview(x_all, std::make_pair(index_t(0), kb), Kokkos::ALL());
    backends::gemm<T>(ctx, backends::Op::ConjTrans, backends::Op::NoTrans, T(1), V, Zb, T(0), X);  // X = V^H Z
    Matrix<T, ExecSpace> left = V;  // Z -= left X: V after X := T X, else W = V T
    if (fold) {
      // T's strict lower triangle zeroed first (larft leaves it unset).
      Kokkos::parallel_for(
          "keig::ormtr::t_lower_zero", Policy2(space, {0, 0}, {kb, kb}),
          KOKKOS_LAMBDA(const index_t r, const index_t c) {
            if (r > c) Tf(r, c) = T(0);
          });
      left = Kokkos::subview(w_all, std::make_pair(index_t(0), rows), std::make_pair(index_t(0), kb));
      backends::gemm<T>(ctx, backends::Op::NoTrans, backends::Op::NoTrans, T(1), V, Tf, T(0), left);  // W = V T
    } else {
      backends::trmm<T>(ctx, backends::Side::Left, Uplo::Upper, backends::Op::NoTrans, backends::Diag::NonUnit, T(1),
                        Tf, X);  // X = T X
    }
    backends::gemm<T>(ctx, backends::Op::NoTrans, backends::Op::NoTrans, T(-1), left, X, T(1), Zb);  // Z -= left X
  }
}

// a, tau: the output of sytrd (reflector k in a(k+1:n, k), a(k+1, k) = 1).
// z: n x m. Asynchronous on ctx.space().
template <class T, class ExecSpace>
void ormtr(const backends::Context<ExecSpace>& ctx, const Matrix<T, ExecSpace>& a, const Vector<T, ExecSpace>& tau,
           const Matrix<T, ExecSpace>& z, const Vector<T, ExecSpace>& work, index_t nb) {
  const index_t n = a.extent(0);
  if (static_cast<index_t>(z.extent(0)) != n) throw InvalidArgument("Z", "ormtr: Z needs n rows");
  if (n < 2) return;
  apply_column_reflectors<T, ExecSpace>(ctx, a, 1, n - 1, tau, z, work, nb);
}

}  // namespace keig::stages
