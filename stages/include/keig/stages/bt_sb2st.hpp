// stages/bt_sb2st: Z := Q2 Z for the bulge-chasing factor of sb2st,
// Q2 = prod over sweeps s (ascending) and steps k (ascending) of H(s, k):
// the reflectors are applied last one first. Seed 004's kernel (§3, its
// back-transformation of the bulge-chasing reflectors): the eigenvector
// columns are independent, so one team owns a group of columns and streams
// every reflector over them, with a vector reduction (the dot product v^H z)
// per reflector and column; each reflector is read once per column group.
// Only the m wanted columns are transformed: about 2 n^2 m flops.
#pragma once

#include <Kokkos_Core.hpp>

#include "keig/stages/sb2st.hpp"

namespace keig::stages {

namespace detail {

template <class T, class ExecSpace>
struct ApplyBulgeReflectors {
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  Matrix<T, ExecSpace> reflectors;  // sb2st's storage
  Matrix<T, ExecSpace> z;
  index_t n, b, group;  // columns per team

  KOKKOS_INLINE_FUNCTION void operator()(const Team& team) const {
    const index_t m = z.extent(1);
    const index_t c0 = team.league_rank() * group;
    const index_t c1 = c0 + group < m ? c0 + group : m;
    for (index_t s = n - 2; s >= 0; --s) {
      const index_t col = n - 1 - s;
      for (index_t k = sb2st_steps(n, b, s) - 1; k >= 0; --k) {
        const index_t r0 = s + 1 + k * b;
        const index_t L = b < n - r0 ? b : n - r0;
        const T* h = &reflectors(k * b, col);  // tau, v(1..L-1)
        const T tau = h[0];
        if (tau == T(0)) continue;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, c0, c1), [&](const index_t c) {
          T* zc = &z(r0, c);
          T dot = T(0);
          Kokkos::parallel_reduce(
              Kokkos::ThreadVectorRange(team, L),
              [&](const index_t i, T& acc) { acc += (i == 0 ? zc[0] : conjugate(h[i]) * zc[i]); }, dot);
          dot *= tau;
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, L),
                               [&](const index_t i) { zc[i] -= (i == 0 ? dot : h[i] * dot); });
        });
      }
    }
  }
};

}  // namespace detail

// reflectors: as written by sb2st (n x n); z: n x m. Asynchronous on `space`.
template <class T, class ExecSpace>
void bt_sb2st(const ExecSpace& space, index_t b, const Matrix<T, ExecSpace>& reflectors, const Matrix<T, ExecSpace>& z) {
  const index_t n = z.extent(0), m = z.extent(1);
  if (b < 1) throw InvalidArgument("b", "bt_sb2st: the half-bandwidth must be >= 1, got " + std::to_string(b));
  if (static_cast<index_t>(reflectors.extent(0)) < n || static_cast<index_t>(reflectors.extent(1)) < n)
    throw InvalidArgument("reflectors", "bt_sb2st: needs sb2st's n x n reflector storage");
  if (n < 2 || m == 0) return;
  // Devices: a warp-wide vector per column, 4 columns per team. Hosts: one
  // thread streams each reflector over 32 columns that stay in its cache.
  constexpr bool device = backends::is_cuda_space_v<ExecSpace>;
  const index_t group = device ? 4 : 32;
  const int team_size = device ? 4 : 1, vector = device ? 32 : 1;
  detail::ApplyBulgeReflectors<T, ExecSpace> apply{reflectors, z, n, b, group};
  Kokkos::parallel_for("keig::bt_sb2st", Kokkos::TeamPolicy<ExecSpace>(space, (m + group - 1) / group, team_size, vector),
                       apply);
}

}  // namespace keig::stages
