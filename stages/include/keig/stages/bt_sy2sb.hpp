// stages/bt_sy2sb: Z := Q1 Z for the first-stage orthogonal factor of sy2sb,
// Q1 = H(0) H(1) ... H(n-b-1) with H(j) = I - tau_j v_j v_j^H, v_j in
// A(j+b:n, j). Blocked compact WY with gemm (LAPACK ?ormqr; seed 003 §5.2.3),
// the same kernel sequence as ormtr with the reflectors b rows (not one row)
// below the diagonal. Only the m wanted columns of Z are transformed: 2 n^2 m flops.
#pragma once

#include "keig/stages/ormtr.hpp"

namespace keig::stages {

// Reflectors per compact-WY block for band width b and m wanted columns:
// back_transform_block(m), never fewer than b (one panel).
template <class ExecSpace>
index_t bt_sy2sb_block(index_t b, index_t m) {
  const index_t nb = back_transform_block<ExecSpace>(m);
  return nb > b ? nb : b;
}

// Workspace: ormtr_workspace_size(n, m, nb).
template <class T, class ExecSpace>
void bt_sy2sb(const backends::Context<ExecSpace>& ctx, const Matrix<T, ExecSpace>& a, index_t b,
              const Vector<T, ExecSpace>& tau, const Matrix<T, ExecSpace>& z, const Vector<T, ExecSpace>& work,
              index_t nb) {
  const index_t n = a.extent(0);
  if (b < 1) throw InvalidArgument("b", "bt_sy2sb: the half-bandwidth must be >= 1, got " + std::to_string(b));
  if (n <= b) return;  // already a band: Q1 = I
  apply_column_reflectors<T, ExecSpace>(ctx, a, b, n - b, tau, z, work, nb);
}

}  // namespace keig::stages
