// Small data-parallel kernels over canonical views that every stage uses:
// copies and the finite-input check. Written once as Kokkos patterns.
#pragma once

#include <Kokkos_Core.hpp>

#include "keig/options.hpp"
#include "keig/views/matrix.hpp"

namespace keig {

// body(i, j) for the rows i in rows(j) = [first, second) of every column
// j < cols, where no column has rows beyond most_rows: a team per column (per
// stretch of at most 4096 of its rows, so tall and narrow blocks still give
// many teams), its threads over the rows, so consecutive threads touch
// consecutive entries of column-major storage. Kokkos 3.4's 2-D MDRange over
// (rows, columns) moved about 0.85 TB/s on an H200 for such copies (stedc's
// column permutations at n = 20694: 16 ms for two passes over the matrix).
template <class ExecSpace, class Rows, class Body>
void for_each_column_entry(const ExecSpace& space, const char* name, index_t cols, index_t most_rows, const Rows& rows,
                           const Body& body) {
  if (cols <= 0 || most_rows <= 0) return;
  constexpr index_t stretch = 4096;
  const index_t stretches = (most_rows + stretch - 1) / stretch;
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  Kokkos::parallel_for(
      name, Policy(space, cols * stretches, Kokkos::AUTO), KOKKOS_LAMBDA(const typename Policy::member_type& team) {
        const index_t j = team.league_rank() / stretches, part = team.league_rank() % stretches;
        const Kokkos::pair<index_t, index_t> r = rows(j);
        const index_t begin = r.first + part * stretch;
        const index_t end = r.second < begin ? begin : (begin + stretch < r.second ? begin + stretch : r.second);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, begin, end), [&](const index_t i) { body(i, j); });
      });
}

// dst(i, j) = src(i, j) for the whole matrix (LAPACK lacpy 'A').
template <class T, class ExecSpace>
void copy_matrix(const ExecSpace& space, const Matrix<T, ExecSpace>& src, const Matrix<T, ExecSpace>& dst) {
  const index_t rows = src.extent(0), cols = src.extent(1);
  if (rows == 0) return;
  for_each_column_entry(
      space, "keig::copy_matrix", cols, rows,
      KOKKOS_LAMBDA(const index_t) { return Kokkos::pair<index_t, index_t>(0, rows); },
      KOKKOS_LAMBDA(const index_t i, const index_t j) { dst(i, j) = src(i, j); });
}

template <class T, class ExecSpace>
void copy_vector(const ExecSpace& space, const Vector<T, ExecSpace>& src, const Vector<T, ExecSpace>& dst) {
  const index_t n = src.extent(0);
  if (n == 0) return;
  Kokkos::parallel_for(
      "keig::copy_vector", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const index_t i) { dst(i) = src(i); });
}

// Column-major linear index (col * rows + row) of the first NaN/Inf in the
// referenced triangle of a square matrix, or -1. Blocks the host until known.
template <class T, class ExecSpace>
index_t find_nonfinite(const ExecSpace& space, const Matrix<T, ExecSpace>& a, Uplo uplo) {
  const index_t n = a.extent(0);
  if (n == 0) return -1;
  const bool lower = uplo == Uplo::Lower;
  index_t first = n * n;
  // A team per column, over the referenced rows only: contiguous reads (a
  // 2-D range with a reduction ran at about 70 GB/s on an H200, 16 ms at
  // n = 16384, 3 % of a two-stage solve).
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  Kokkos::parallel_reduce(
      "keig::find_nonfinite", Policy(space, n, Kokkos::AUTO),
      KOKKOS_LAMBDA(const typename Policy::member_type& team, index_t& found) {
        const index_t j = team.league_rank();
        index_t in_column = n * n;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, lower ? j : 0, lower ? n : j + 1),
            [&](const index_t i, index_t& f) {
              if (!is_finite(a(i, j)) && j * n + i < f) f = j * n + i;
            },
            Kokkos::Min<index_t>(in_column));
        Kokkos::single(Kokkos::PerTeam(team), [&] {
          if (in_column < found) found = in_column;
        });
      },
      Kokkos::Min<index_t>(first));
  return first < n * n ? first : -1;
}

}  // namespace keig
