// stages/bt_sb2st: Z := Q2 Z for the bulge-chasing factor of sb2st,
// Q2 = Q_0 Q_1 ... Q_{n-2}, Q_s = prod_k H(s, k) (sweep s's reflectors act on
// disjoint rows). Only the m wanted columns are transformed.
//
// Blocked variant (the default): sweeps are grouped by sigma; within a group
// G = [S, S + sigma) the product Q_G equals M_Kmax ... M_1 M_0 with
// M_k = prod_{s in G} H(s, k) -- moving H(s, k) past H(s', k') (s < s',
// k' < k) is legal because their rows are disjoint -- so Q_G Z applies M_0
// first and walks down the matrix. Each M_k is one compact-WY block
// I - V T V^H with V of (b + sigma - 1) x sigma (a parallelogram of
// reflectors), applied as Z -= V (T (V^H Z)): BLAS-3-shaped work instead of
// one dot product and one axpy per reflector. Block (G, k) must follow
// blocks (G', k) and (G', k-1) of the next group G' (the only overlapping
// ones), so all blocks with equal 2 (groups after G) + k are independent and
// run in one batched launch (seed 004 §3 applies reflectors one by one; the
// grouping is what seed 003 §5.2.3 and ELPA's two-reflector kernels trade
// extra flops, (b + sigma)/b, for).
//
// Reflector variant: seed 004's kernel, one team per group of columns, every
// reflector streamed over them with a vector reduction per reflector.
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
void bt_sb2st_reflectors(const ExecSpace& space, index_t b, const Matrix<T, ExecSpace>& reflectors,
                         const Matrix<T, ExecSpace>& z) {
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

namespace detail {

// The reflector block M_k of sweep group g: V(r, j) (0 <= r < len) for sweep
// S + j, with its unit entry at row j, and tau_j (0 for sweeps without step k).
template <class T, class ExecSpace>
struct SweepBlock {
  Matrix<T, ExecSpace> reflectors;
  index_t n, b, sigma;

  struct Shape {
    index_t first_sweep, sweeps, row0, len;  // sweeps: columns of V; rows [row0, row0 + len)
  };
  KOKKOS_INLINE_FUNCTION Shape shape(index_t g, index_t k) const {
    Shape sh;
    sh.first_sweep = g * sigma;
    const index_t last = n - 2;
    sh.sweeps = sh.first_sweep + sigma - 1 <= last ? sigma : last - sh.first_sweep + 1;
    sh.row0 = sh.first_sweep + 1 + k * b;
    const index_t end = sh.first_sweep + sh.sweeps + (k + 1) * b;
    sh.len = (end < n ? end : n) - sh.row0;
    return sh;
  }
  KOKKOS_INLINE_FUNCTION bool exists(index_t g, index_t k) const {
    return g * sigma <= n - 2 && k < sb2st_steps(n, b, g * sigma);
  }
  // Column j of V: its reflector's length (0: sweep S + j has no step k) and
  // its column in the reflector storage.
  KOKKOS_INLINE_FUNCTION void column(const Shape& sh, index_t k, index_t j, index_t& len, index_t& col) const {
    const index_t s = sh.first_sweep + j;
    col = n - 1 - s;
    len = 0;
    if (j < sh.sweeps && k < sb2st_steps(n, b, s)) {
      const index_t start = s + 1 + k * b;
      len = b < n - start ? b : n - start;
    }
  }
};

// Block (g, k) as one team sees it: every column's length and storage column
// computed once into team scratch, then V(r, j) and tau_j without divisions.
template <class T, class ExecSpace>
struct TeamBlockColumns {
  using IndexScratch = Kokkos::View<index_t*, typename ExecSpace::scratch_memory_space,
                                    Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Matrix<T, ExecSpace> reflectors;
  index_t k, b;
  IndexScratch lens, cols;

  static size_t scratch_bytes(index_t sigma) { return 2 * IndexScratch::shmem_size(sigma); }

  template <class Team>
  KOKKOS_INLINE_FUNCTION TeamBlockColumns(const Team& team, const SweepBlock<T, ExecSpace>& blocks,
                                          const typename SweepBlock<T, ExecSpace>::Shape& sh, index_t step)
      : reflectors(blocks.reflectors), k(step), b(blocks.b), lens(team.team_scratch(0), blocks.sigma),
        cols(team.team_scratch(0), blocks.sigma) {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, blocks.sigma),
                         [&](const index_t j) { blocks.column(sh, k, j, lens(j), cols(j)); });
    team.team_barrier();
  }
  // Rows of column j that can be nonzero: [j, end(j)).
  KOKKOS_INLINE_FUNCTION index_t end(index_t j) const { return j + lens(j); }
  KOKKOS_INLINE_FUNCTION T tau(index_t j) const { return lens(j) > 0 ? reflectors(k * b, cols(j)) : T(0); }
  KOKKOS_INLINE_FUNCTION T v(index_t r, index_t j) const {  // unit entry at r = j
    const index_t d = r - j;
    return (d < 0 || d >= lens(j)) ? T(0) : (d == 0 ? T(1) : reflectors(k * b + d, cols(j)));
  }
};

// The wave tau = 2 (groups - 1 - g) + k holds the blocks (g, k); slot i is
// group g = g_hi - i.
struct SweepWave {
  index_t tau, g_hi, count, groups;
  KOKKOS_INLINE_FUNCTION index_t group(index_t slot) const { return g_hi - slot; }
  KOKKOS_INLINE_FUNCTION index_t step(index_t slot) const { return tau - 2 * (groups - 1 - group(slot)); }
};

}  // namespace detail

// Sweeps per block of the blocked variant (V is (b + sigma - 1) x sigma).
inline constexpr index_t bt_sb2st_sweeps_per_block = 32;

// Workspace of the blocked variant (elements of T): the T factors of one wave.
inline index_t bt_sb2st_workspace_size(index_t n, index_t b) {
  const index_t sigma = bt_sb2st_sweeps_per_block;
  const index_t groups = n > 1 ? (n - 2) / sigma + 1 : 1;
  return groups * sigma * sigma;
}

template <class T, class ExecSpace>
void bt_sb2st_blocked(const ExecSpace& space, index_t b, const Matrix<T, ExecSpace>& reflectors,
                      const Matrix<T, ExecSpace>& z, const Vector<T, ExecSpace>& work) {
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using Scratch = Kokkos::View<T**, Kokkos::LayoutLeft, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using Columns = detail::TeamBlockColumns<T, ExecSpace>;
  const index_t n = z.extent(0), m = z.extent(1);
  if (b < 1) throw InvalidArgument("b", "bt_sb2st: the half-bandwidth must be >= 1, got " + std::to_string(b));
  if (static_cast<index_t>(reflectors.extent(0)) < n || static_cast<index_t>(reflectors.extent(1)) < n)
    throw InvalidArgument("reflectors", "bt_sb2st: needs sb2st's n x n reflector storage");
  if (static_cast<index_t>(work.extent(0)) < bt_sb2st_workspace_size(n, b))
    throw InvalidArgument("work", "bt_sb2st: needs bt_sb2st_workspace_size(n, b) entries");
  if (n < 2 || m == 0) return;
  constexpr index_t sigma = bt_sb2st_sweeps_per_block;
  constexpr bool device = backends::is_cuda_space_v<ExecSpace>;
  const index_t tile = device ? 16 : 32;  // columns of Z per team
  const size_t column_bytes = Columns::scratch_bytes(sigma);
  const index_t tiles = (m + tile - 1) / tile;
  const int team_size = device ? 256 : 1;
  const detail::SweepBlock<T, ExecSpace> blocks{reflectors, n, b, sigma};
  const index_t groups = (n - 2) / sigma + 1, kmax = sb2st_steps(n, b, 0) - 1;
  const Matrix<T, ExecSpace> tbuf(work.data(), sigma * sigma, groups);
  for (index_t tau = 0; tau <= 2 * (groups - 1) + kmax; ++tau) {
    // Groups g with k = tau - 2 (groups - 1 - g) in [0, kmax].
    const index_t gi_hi = tau / 2 < groups - 1 ? tau / 2 : groups - 1;  // gi = groups - 1 - g
    const index_t gi_lo = tau - kmax > 0 ? (tau - kmax + 1) / 2 : 0;
    if (gi_lo > gi_hi) continue;
    const detail::SweepWave wave{tau, groups - 1 - gi_lo, gi_hi - gi_lo + 1, groups};
    // 1. T factors (LAPACK ?larft, forward, columnwise) of the wave's blocks.
    Kokkos::parallel_for(
        "keig::bt_sb2st::larft",
        Kokkos::TeamPolicy<ExecSpace>(space, wave.count, device ? 64 : 1)
            .set_scratch_size(0, Kokkos::PerTeam(Scratch::shmem_size(sigma, 1) + column_bytes)),
        KOKKOS_LAMBDA(const Team& team) {
          const index_t slot = team.league_rank(), g = wave.group(slot), k = wave.step(slot);
          if (!blocks.exists(g, k)) return;
          const auto sh = blocks.shape(g, k);
          Scratch u(team.team_scratch(0), sigma, 1);
          const Columns V(team, blocks, sh, k);
          auto t = [&](index_t i, index_t j) -> T& { return tbuf(i + j * sigma, slot); };
          for (index_t i = 0; i < sigma; ++i) {
            const T ti = V.tau(i);
            const index_t end = V.end(i);
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, i), [&](const index_t l) {
              T acc = T(0);  // V(:, l)^H v_i over the rows where v_i lives
              for (index_t r = i; r < end; ++r) acc += conjugate(V.v(r, l)) * V.v(r, i);
              u(l, 0) = acc;
            });
            team.team_barrier();
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, sigma), [&](const index_t j) {
              if (j < i) {
                T acc = T(0);
                for (index_t l = j; l < i; ++l) acc += t(j, l) * u(l, 0);
                t(j, i) = -ti * acc;
              } else {
                t(j, i) = j == i ? ti : T(0);
              }
            });
            team.team_barrier();
          }
        });
    // 2. Z(rows, tile) -= V (T (V^H Z(rows, tile))) for every block and tile.
    Kokkos::parallel_for(
        "keig::bt_sb2st::apply",
        Kokkos::TeamPolicy<ExecSpace>(space, wave.count * tiles, team_size)
            .set_scratch_size(0, Kokkos::PerTeam(2 * Scratch::shmem_size(sigma, tile) + column_bytes)),
        KOKKOS_LAMBDA(const Team& team) {
          const index_t slot = team.league_rank() / tiles, c0 = (team.league_rank() % tiles) * tile;
          const index_t g = wave.group(slot), k = wave.step(slot);
          if (!blocks.exists(g, k)) return;
          const auto sh = blocks.shape(g, k);
          const index_t cols = c0 + tile < m ? tile : m - c0;
          Scratch x(team.team_scratch(0), sigma, tile), y(team.team_scratch(0), sigma, tile);
          const Columns V(team, blocks, sh, k);
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, sigma * cols), [&](const index_t p) {
            const index_t j = p % sigma, c = p / sigma;
            T acc = T(0);
            for (index_t r = j; r < V.end(j); ++r) acc += conjugate(V.v(r, j)) * z(sh.row0 + r, c0 + c);
            x(j, c) = acc;
          });
          team.team_barrier();
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, sigma * cols), [&](const index_t p) {
            const index_t j = p % sigma, c = p / sigma;
            T acc = T(0);
            for (index_t l = j; l < sigma; ++l) acc += tbuf(j + l * sigma, slot) * x(l, c);
            y(j, c) = acc;
          });
          team.team_barrier();
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, sh.len * cols), [&](const index_t p) {
            const index_t r = p % sh.len, c = p / sh.len;
            T acc = T(0);
            const index_t jmax = r < sigma - 1 ? r : sigma - 1;
            for (index_t j = 0; j <= jmax; ++j) acc += V.v(r, j) * y(j, c);
            z(sh.row0 + r, c0 + c) -= acc;
          });
        });
  }
}

// The faster variant per backend, measured with keig-bench (README
// "Status"): blocked on devices; on hosts the reflector kernel (its loops
// stay in cache, while the blocked kernel's extra (b + sigma)/b flops in
// scalar team loops cost 6x at n = 4000 on 2 cores).
// work: bt_sb2st_workspace_size(n, b).
template <class T, class ExecSpace>
void bt_sb2st(const ExecSpace& space, index_t b, const Matrix<T, ExecSpace>& reflectors, const Matrix<T, ExecSpace>& z,
              const Vector<T, ExecSpace>& work) {
  if constexpr (backends::is_cuda_space_v<ExecSpace>) bt_sb2st_blocked<T, ExecSpace>(space, b, reflectors, z, work);
  else bt_sb2st_reflectors<T, ExecSpace>(space, b, reflectors, z);
}

}  // namespace keig::stages
