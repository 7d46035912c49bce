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
// run as one wave of batched gemms (seed 004 §3 applies reflectors one by one; the
// grouping is what seed 003 §5.2.3 and ELPA's two-reflector kernels trade
// extra flops, (b + sigma)/b, for).
//
// Reflector variant: seed 004's kernel, one team per group of columns, every
// reflector streamed over them with a vector reduction per reflector.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <vector>

#include "keig/backends/blas.hpp"
#include "keig/stages/sb2st.hpp"
#include "keig/views/workspace.hpp"

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

// Sweeps per block of the blocked variant (V is (b + sigma - 1) x sigma), and
// the default number of Z's columns per gemm (X and Y are sigma x chunk).
inline constexpr index_t bt_sb2st_sweeps_per_block = 32;
inline constexpr index_t bt_sb2st_chunk_default = 2048;

// Most blocks of one wave: a wave holds one block per group with k of one
// parity, so at most min(groups, kmax / 2 + 1).
inline index_t bt_sb2st_wave_blocks(index_t n, index_t b) {
  constexpr index_t sigma = bt_sb2st_sweeps_per_block;
  if (n < 2 || b < 1) return 1;
  const index_t groups = (n - 2) / sigma + 1, half = (sb2st_steps(n, b, 0) - 1) / 2 + 1;
  return groups < half ? groups : half;
}

// Workspace of the blocked variant (elements of T) for gemms of `chunk`
// columns: per block of one wave its T (sigma x sigma), V ((b + sigma - 1) x
// sigma), X and Y (sigma x chunk). O(n (b + sigma + chunk)).
inline index_t bt_sb2st_workspace_size(index_t n, index_t b, index_t chunk) {
  constexpr index_t sigma = bt_sb2st_sweeps_per_block;
  const index_t ldv = (b > 0 ? b : 1) + sigma - 1;
  return bt_sb2st_wave_blocks(n, b) * sigma * (sigma + ldv + 2 * (chunk > 0 ? chunk : 1));
}
inline index_t bt_sb2st_workspace_size(index_t n, index_t b) {
  return bt_sb2st_workspace_size(n, b, bt_sb2st_chunk_default);
}

// Per wave: one kernel forms every block's V (dense, zero outside the
// parallelogram) and T; then, per chunk of Z's columns, three batched gemms
// X = V^H Z, Y = T X, Z -= V Y over the blocks of full height b + sigma - 1.
// Blocks cut by the bottom of the matrix (len < b + sigma - 1) get single
// gemms of height len, so no gemm touches rows outside its block's.
// The pointer arrays of all waves and chunks are built on the host and copied
// once. work: bt_sb2st_workspace_size(n, b, min(chunk, m)) entries or more.
template <class T, class ExecSpace>
void bt_sb2st_blocked(const backends::Context<ExecSpace>& ctx, index_t b, const Matrix<T, ExecSpace>& reflectors,
                      const Matrix<T, ExecSpace>& z, const Vector<T, ExecSpace>& work,
                      index_t chunk = bt_sb2st_chunk_default) {
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using Scratch = Kokkos::View<T**, Kokkos::LayoutLeft, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using Columns = detail::TeamBlockColumns<T, ExecSpace>;
  using backends::Op;
  const ExecSpace& space = ctx.space();
  const index_t n = z.extent(0), m = z.extent(1);
  if (b < 1) throw InvalidArgument("b", "bt_sb2st: the half-bandwidth must be >= 1, got " + std::to_string(b));
  if (chunk < 1)
    throw InvalidArgument("chunk", "bt_sb2st: the column chunk must be >= 1, got " + std::to_string(chunk));
  if (static_cast<index_t>(reflectors.extent(0)) < n || static_cast<index_t>(reflectors.extent(1)) < n)
    throw InvalidArgument("reflectors", "bt_sb2st: needs sb2st's n x n reflector storage");
  const index_t cw = chunk < m ? chunk : (m > 0 ? m : 1);  // columns per gemm
  if (static_cast<index_t>(work.extent(0)) < bt_sb2st_workspace_size(n, b, cw))
    throw InvalidArgument("work", "bt_sb2st: needs bt_sb2st_workspace_size(n, b) entries");
  if (n < 2 || m == 0) return;
  constexpr index_t sigma = bt_sb2st_sweeps_per_block;
  constexpr bool device = backends::is_cuda_space_v<ExecSpace>;
  const index_t ldv = b + sigma - 1, ldz = leading_dimension(z);
  const size_t column_bytes = Columns::scratch_bytes(sigma);
  const detail::SweepBlock<T, ExecSpace> blocks{reflectors, n, b, sigma};
  const index_t groups = (n - 2) / sigma + 1, kmax = sb2st_steps(n, b, 0) - 1;
  const index_t slots = bt_sb2st_wave_blocks(n, b), chunks = (m + cw - 1) / cw;
  // Block p of a wave keeps T, V, X, Y at position p of these.
  T* const tbase = work.data();
  T* const vbase = tbase + slots * sigma * sigma;
  T* const xbase = vbase + slots * ldv * sigma;
  T* const ybase = xbase + slots * sigma * cw;
  const Matrix<T, ExecSpace> tbuf(tbase, sigma * sigma, slots), vbuf(vbase, ldv * sigma, slots);

  // Host plan: each wave's existing blocks, full-height ones first.
  struct Entry {
    index_t slot, row0, len;
  };
  struct WavePlan {
    detail::SweepWave wave;
    index_t first, full, entries, zfirst;  // entries [first, first + entries); Z pointers from zfirst
  };
  std::vector<Entry> entries;
  std::vector<WavePlan> waves;
  std::vector<Entry> cut;
  index_t full_total = 0;
  for (index_t tau = 0; tau <= 2 * (groups - 1) + kmax; ++tau) {
    // Groups g with k = tau - 2 (groups - 1 - g) in [0, kmax].
    const index_t gi_hi = tau / 2 < groups - 1 ? tau / 2 : groups - 1;  // gi = groups - 1 - g
    const index_t gi_lo = tau - kmax > 0 ? (tau - kmax + 1) / 2 : 0;
    if (gi_lo > gi_hi) continue;
    const detail::SweepWave wave{tau, groups - 1 - gi_lo, gi_hi - gi_lo + 1, groups};
    WavePlan w{wave, static_cast<index_t>(entries.size()), 0, 0, full_total};
    cut.clear();
    for (index_t slot = 0; slot < wave.count; ++slot) {
      const index_t g = wave.group(slot), k = wave.step(slot);
      if (!blocks.exists(g, k)) continue;
      const auto sh = blocks.shape(g, k);
      const Entry e{slot, sh.row0, sh.len};
      if (sh.len == ldv) entries.push_back(e);
      else cut.push_back(e);
    }
    w.full = static_cast<index_t>(entries.size()) - w.first;
    entries.insert(entries.end(), cut.begin(), cut.end());
    w.entries = static_cast<index_t>(entries.size()) - w.first;
    if (w.entries == 0) continue;
    if (w.entries > slots) throw BackendError("bt_sb2st", w.entries, "a wave outgrew bt_sb2st_wave_blocks: a keig bug");
    full_total += w.full;
    waves.push_back(w);
  }
  // [V | T | X | Y] pointers of positions 0..slots-1 (the same for every
  // wave), each entry's slot, then Z pointers per chunk of full-height blocks.
  const index_t slot_base = 4 * slots, zbase = slot_base + static_cast<index_t>(entries.size());
  const auto plan = allocate_vector<std::uintptr_t>(space, "keig::bt_sb2st::plan", zbase + chunks * full_total);
  const auto plan_h = Kokkos::create_mirror_view(plan);
  const auto address = [](const T* p) { return reinterpret_cast<std::uintptr_t>(p); };
  for (index_t p = 0; p < slots; ++p) {
    plan_h(p) = address(vbase + p * ldv * sigma);
    plan_h(slots + p) = address(tbase + p * sigma * sigma);
    plan_h(2 * slots + p) = address(xbase + p * sigma * cw);
    plan_h(3 * slots + p) = address(ybase + p * sigma * cw);
  }
  for (size_t i = 0; i < entries.size(); ++i) plan_h(slot_base + i) = static_cast<std::uintptr_t>(entries[i].slot);
  for (const WavePlan& w : waves)
    for (index_t c = 0; c < chunks; ++c)
      for (index_t e = 0; e < w.full; ++e)
        plan_h(zbase + c * full_total + w.zfirst + e) = address(z.data() + entries[w.first + e].row0 + c * cw * ldz);
  Kokkos::deep_copy(space, plan, plan_h);
  T* const* const ptrs = reinterpret_cast<T* const*>(plan.data());
  T* const* const vp = ptrs;
  T* const* const tp = ptrs + slots;
  T* const* const xp = ptrs + 2 * slots;
  T* const* const yp = ptrs + 3 * slots;

  for (const WavePlan& w : waves) {
    const detail::SweepWave wave = w.wave;
    const index_t first = slot_base + w.first;
    // 1. V explicitly and T (LAPACK ?larft, forward, columnwise) per block.
    Kokkos::parallel_for(
        "keig::bt_sb2st::larft",
        Kokkos::TeamPolicy<ExecSpace>(space, w.entries, device ? 64 : 1)
            .set_scratch_size(0, Kokkos::PerTeam(Scratch::shmem_size(sigma, 1) + column_bytes)),
        KOKKOS_LAMBDA(const Team& team) {
          const index_t p = team.league_rank();
          const index_t slot = static_cast<index_t>(plan(first + p));
          const index_t g = wave.group(slot), k = wave.step(slot);
          const auto sh = blocks.shape(g, k);
          Scratch u(team.team_scratch(0), sigma, 1);
          const Columns V(team, blocks, sh, k);
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, ldv * sigma),
                               [&](const index_t q) { vbuf(q, p) = V.v(q % ldv, q / ldv); });
          auto t = [&](index_t i, index_t j) -> T& { return tbuf(i + j * sigma, p); };
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
    // 2. Z(rows, chunk) -= V (T (V^H Z(rows, chunk))): BLAS-3 on tensor cores.
    for (index_t c = 0; c < chunks; ++c) {
      const index_t c0 = c * cw, cols = c0 + cw < m ? cw : m - c0;
      if (w.full > 0) {
        T* const* const zp = ptrs + zbase + c * full_total + w.zfirst;
        backends::gemm_batched<T, ExecSpace>(ctx, Op::ConjTrans, Op::NoTrans, sigma, cols, ldv, T(1), vp, ldv, zp, ldz,
                                             T(0), xp, sigma, w.full);
        backends::gemm_batched<T, ExecSpace>(ctx, Op::NoTrans, Op::NoTrans, sigma, cols, sigma, T(1), tp, sigma, xp,
                                             sigma, T(0), yp, sigma, w.full);
        backends::gemm_batched<T, ExecSpace>(ctx, Op::NoTrans, Op::NoTrans, ldv, cols, sigma, T(-1), vp, ldv, yp,
                                             sigma, T(1), zp, ldz, w.full);
      }
      for (index_t p = w.full; p < w.entries; ++p) {
        const Entry& e = entries[w.first + p];
        const auto zb = make_matrix<T, ExecSpace>(z.data() + e.row0 + c0 * ldz, e.len, cols, ldz);
        const auto v = make_matrix<T, ExecSpace>(vbase + p * ldv * sigma, e.len, sigma, ldv);
        const auto tm = make_matrix<T, ExecSpace>(tbase + p * sigma * sigma, sigma, sigma, sigma);
        const auto x = make_matrix<T, ExecSpace>(xbase + p * sigma * cw, sigma, cols, sigma);
        const auto y = make_matrix<T, ExecSpace>(ybase + p * sigma * cw, sigma, cols, sigma);
        backends::gemm<T, ExecSpace>(ctx, Op::ConjTrans, Op::NoTrans, T(1), v, zb, T(0), x);
        backends::gemm<T, ExecSpace>(ctx, Op::NoTrans, Op::NoTrans, T(1), tm, x, T(0), y);
        backends::gemm<T, ExecSpace>(ctx, Op::NoTrans, Op::NoTrans, T(-1), v, y, T(1), zb);
      }
    }
  }
  // plan_h (the copy's source) and plan (the gemms' pointers) must outlive the queued work.
  space.fence();
}

// The faster variant per backend, measured with keig-bench (README
// "Status"): blocked on devices; on hosts the reflector kernel (its loops
// stay in cache, while the former team-kernel apply's extra (b + sigma)/b
// flops cost 6x at n = 4000 on 2 cores). Not re-measured with keig-bench
// since the gemm apply; a quick 2-core check (double, b = 32, m = n) gave
// 1.2 s vs 2.3 s at n = 2000 and 17 s vs 19 s at n = 4000 for blocked vs reflectors.
// work: bt_sb2st_workspace_size(n, b).
template <class T, class ExecSpace>
void bt_sb2st(const backends::Context<ExecSpace>& ctx, index_t b, const Matrix<T, ExecSpace>& reflectors,
              const Matrix<T, ExecSpace>& z, const Vector<T, ExecSpace>& work) {
  if constexpr (backends::is_cuda_space_v<ExecSpace>) bt_sb2st_blocked<T, ExecSpace>(ctx, b, reflectors, z, work);
  else bt_sb2st_reflectors<T, ExecSpace>(ctx.space(), b, reflectors, z);
}

}  // namespace keig::stages
