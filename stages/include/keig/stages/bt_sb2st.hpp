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
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "keig/backends/blas.hpp"
#include "keig/backends/cuda.hpp"
#include "keig/backends/host_simd.hpp"
#include "keig/stages/sb2st.hpp"
#include "keig/views/arena.hpp"
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

// Host kernel: each thread copies a stripe of W columns of Z into a row-major
// buffer (W consecutive entries per row) and streams the reflectors over it,
// with the SIMD lanes across the stripe's columns: the dot products are W
// independent FMA chains and no horizontal reduction is needed (the layout of
// ELPA's hand-written CPU kernels for this step, seed 004 §1). Reflectors go
// in pairs, as in ELPA's two-Householder kernels: H(s+1, k) and H(s, k) share
// all but one row (offset by one), so one pass forms both dot products and
// one pass applies both, H(s, k) H(s+1, k) z = z - v1 d1 - v2 d2 with
// d1 = tau1 v1^H z, d2 = tau2 (v2^H z - (v2^H v1) d1). Legal order: within
// a sweep the steps touch disjoint rows, and H(s, k) needs only H(s+1, k - 1)
// and H(s+1, k) of the sweep before it, so k ascending over a pair of sweeps
// works. Half the passes over the stripe of one reflector at a time.
// W: 512 bytes of a row (64 doubles); on the 2-core EPYC (AVX-512) 512 beat
// 128, 256 and 1024 bytes (n = 4000, m = n: 2.9 s against 10.9, 3.4, 3.3 s).
// Real double goes four sweeps at a time instead of two, through
// backends::host::apply_reflector_quad (the pair formula generalized, see its
// header; intrinsics: GCC kept the pair kernel's dot products in stack
// memory, a load and a store per two FMAs), and the next step's reflectors
// are prefetched. 2-core Xeon, n = m = 4000: 1.95 -> 1.40-1.49 s; 2000:
// 0.239 -> 0.164-0.181 s (stripes of 128 columns: 1.49-1.62 s at 4000).
template <class T, class ExecSpace>
struct ApplyBulgeReflectorsToStripes {
  static constexpr int W = 512 / sizeof(T);
  // Sweeps applied in one pass over their rows: four where the quad kernel
  // runs on vector registers, else two (its plain-loop build, in libraries
  // built without AVX-512, took 1.7x the pair kernel's time).
  static constexpr bool quad_type = std::is_same_v<T, double>;
  static constexpr int max_group = quad_type ? 4 : 2;
  static_assert(!quad_type || W == backends::host::reflector_stripe_columns);
  static int group() { return quad_type && backends::host::reflector_quad_vectorized() ? 4 : 2; }
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using Buffer = Kokkos::View<T*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Matrix<T, ExecSpace> reflectors;
  Matrix<T, ExecSpace> z;
  index_t n, b;
  int sweeps = group();  // a pass's group

  // The stripe, then a group's vectors over its b + group - 1 rows.
  static size_t scratch_bytes(index_t n, index_t b) {
    return Buffer::shmem_size(n * W + max_group * (b + max_group - 1));
  }

  // Step k of sweep s as (length, pointer to tau, v(1..)); length 0: none.
  // Sweep s has step k when s <= n - 2 - k b (sb2st_steps without its
  // division: this runs once per group, step and stripe).
  inline index_t step(index_t s, index_t k, const T*& h) const {
    if (s < 0 || s > n - 2 - k * b) return 0;
    const index_t r0 = s + 1 + k * b;
    h = &reflectors(k * b, n - 1 - s);
    return b < n - r0 ? b : n - r0;
  }

  // H(hi, k) H(hi - 1, k) on rows from (hi - 1) + 1 + k b: v2 starts at 0, v1 at 1.
  inline void apply_pair(index_t hi, index_t k, T* KOKKOS_RESTRICT q, T* KOKKOS_RESTRICT v1) const {
    const index_t lo = hi - 1;  // -1: no partner
    T* KOKKOS_RESTRICT v2 = v1 + (b + 1);
    const T *h1 = nullptr, *h2 = nullptr;
    const index_t len1 = step(hi, k, h1), len2 = step(lo, k, h2);
    const T tau1 = len1 > 0 ? h1[0] : T(0), tau2 = len2 > 0 ? h2[0] : T(0);
    if (tau1 == T(0) && tau2 == T(0)) return;
    const index_t r2 = lo + 1 + k * b;
    const index_t rows = len2 > 1 + len1 ? len2 : 1 + len1;
    T v2v1 = T(0);
    for (index_t i = 0; i < rows; ++i) {
      v2[i] = tau2 == T(0) || i >= len2 ? T(0) : (i == 0 ? T(1) : h2[i]);
      v1[i] = tau1 == T(0) || i == 0 || i > len1 ? T(0) : (i == 1 ? T(1) : h1[i - 1]);
      v2v1 += conjugate(v2[i]) * v1[i];
    }
    T* KOKKOS_RESTRICT row = q + r2 * W;
    T d1[W], d2[W];
    for (int j = 0; j < W; ++j) d1[j] = d2[j] = T(0);
    for (index_t i = 0; i < rows; ++i) {
      const T a1 = conjugate(v1[i]), a2 = conjugate(v2[i]);
      for (int j = 0; j < W; ++j) {
        const T x = row[i * W + j];
        d1[j] += a1 * x;
        d2[j] += a2 * x;
      }
    }
    for (int j = 0; j < W; ++j) {
      d1[j] *= tau1;
      d2[j] = tau2 * (d2[j] - v2v1 * d1[j]);
    }
    for (index_t i = 0; i < rows; ++i) {
      const T a1 = v1[i], a2 = v2[i];
      for (int j = 0; j < W; ++j) row[i * W + j] -= a1 * d1[j] + a2 * d2[j];
    }
  }

  // H(hi, k) .. H(hi - 3, k) (those >= 0), H(hi, k) first, on rows from
  // lowest + 1 + k b; sweep lowest + t's vector starts at row t. v: 4 (b + 3).
  inline void apply_quad(index_t hi, index_t k, T* KOKKOS_RESTRICT q, T* KOKKOS_RESTRICT v) const {
    const index_t lowest = hi - 3 > 0 ? hi - 3 : 0;
    const index_t row0 = lowest + 1 + k * b;
    T tau[4];
    index_t first[4], end[4], rows = 0;
    const T* h[4];
    for (int j = 0; j < 4; ++j) {
      const index_t s = hi - j, t = s >= lowest ? s - lowest : 0;  // below sweep 0: an empty vector
      const index_t len = s >= lowest ? step(s, k, h[j]) : 0;
      tau[j] = len > 0 ? h[j][0] : T(0);
      first[j] = t;
      end[j] = tau[j] == T(0) ? t : t + len;  // H = I: no rows
      if (end[j] > rows && tau[j] != T(0)) rows = end[j];
    }
    if (rows == 0) return;
    for (int j = 0; j < 4; ++j) {  // v_j: zero outside [first, end), 1 at first
      T* KOKKOS_RESTRICT vj = v + j * rows;
      for (index_t i = 0; i < rows; ++i) vj[i] = T(0);
      if (end[j] > first[j]) {
        vj[first[j]] = T(1);
        for (index_t i = first[j] + 1; i < end[j]; ++i) vj[i] = h[j][i - first[j]];
      }
    }
    backends::host::apply_reflector_quad(rows, v, tau, q + row0 * W);
  }

  inline void operator()(const Team& team) const {
    const index_t m = z.extent(1);
    const index_t c0 = team.league_rank() * W;
    const int cols = static_cast<int>(m - c0 < W ? m - c0 : W);
    Buffer buffer(team.team_scratch(1), n * W + max_group * (b + max_group - 1));
    T* KOKKOS_RESTRICT q = buffer.data();
    T* KOKKOS_RESTRICT v = q + n * W;
    for (int j = 0; j < W; ++j)
      for (index_t r = 0; r < n; ++r) q[r * W + j] = j < cols ? z(r, c0 + j) : T(0);
    // Groups of sweeps hi, hi - 1, .. (hi first), hi = n - 2, n - 2 - sweeps,
    // ..., in blocks of 16 sweeps that go down the stripe together: step k of
    // every group of the block, highest group first, then step k + 1.
    // Legal: H(s, k) shares rows only with the higher sweeps' steps k - 1 and
    // k (done by then) and with nothing of their steps k + 1; the block's rows
    // at one step (b + 16 of them) stay in L1 for all its groups instead of
    // being streamed from L2 once per group. 2 cores, n = m = 4000, b = 32,
    // pairs: 2.25 -> 1.95 s with 8 pairs (4: 2.03, 16: 2.05 s); 0.266 ->
    // 0.239 s at 2000.
    constexpr index_t block = 16;
    for (index_t top = n - 2; top >= 0; top -= block) {
      const index_t bottom = top - block + 1 > 0 ? top - block + 1 : 0;  // the block's lowest sweep
      const index_t kmax = sb2st_steps(n, b, bottom);
      for (index_t k = 0; k < kmax; ++k) {
        // The next step's reflectors: 16 columns of the storage, b entries
        // apart, which the hardware prefetchers miss (n = 4000: 26 % of the
        // time outside the arithmetic waited on them).
        if (k + 1 < kmax)
          for (index_t s = top; s >= bottom; --s) backends::host::prefetch(&reflectors((k + 1) * b, n - 1 - s), b * sizeof(T));
        for (index_t hi = top; hi >= bottom; hi -= sweeps) {
          const index_t low = hi - sweeps + 1 > 0 ? hi - sweeps + 1 : 0;
          if (low > n - 2 - k * b) continue;  // no sweep of the group has step k
          if constexpr (quad_type) {
            if (sweeps == 4) {
              apply_quad(hi, k, q, v);
              continue;
            }
          }
          apply_pair(hi, k, q, v);
        }
      }
    }
    for (int j = 0; j < cols; ++j)
      for (index_t r = 0; r < n; ++r) z(r, c0 + j) = q[r * W + j];
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
  // thread per stripe of columns, transposed into its scratch.
  constexpr bool device = backends::is_cuda_space_v<ExecSpace>;
  if constexpr (!device) {
    using Stripes = detail::ApplyBulgeReflectorsToStripes<T, ExecSpace>;
    const index_t stripes = (m + Stripes::W - 1) / Stripes::W;
    Kokkos::parallel_for("keig::bt_sb2st::stripes",
                         Kokkos::TeamPolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>(space, stripes, 1)
                             .set_scratch_size(1, Kokkos::PerTeam(Stripes::scratch_bytes(n, b))),
                         Stripes{reflectors, z, n, b});
    return;
  }
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

// How the blocked variant forms each block's T (LAPACK ?larft, forward, columnwise):
// Dots: one team per block walks the sigma columns, each step a dot product per
//   earlier column over V's rows and a triangular mat-vec (two barriers a step).
// Gram: G = V^H V for all blocks of a wave as one batched gemm, then T from
//   T^{-1} = diag(1/tau) + striu(G) (Puglisi; Joffrain et al. 2006) by rows:
//   row j needs only its own earlier entries, so no barrier between columns and
//   tau = 0 needs no special case (its row and column of T stay zero).
enum class BtSb2stTFactor { Dots, Gram };

// Block shape of the blocked variant (bt_sb2st_blocked). Larger sigma means
// fewer waves and fatter gemms (V^H Z is sigma x chunk x (b + sigma - 1)) for
// (b + sigma - 1) / b the flops; chunk bounds X and Y (sigma x chunk per block
// of a wave). sigma beyond the n - 1 sweeps runs as sigma = n - 1.
struct BtSb2stTuning {
  index_t sweeps_per_block = bt_sb2st_sweeps_per_block;  // sigma
  index_t chunk = bt_sb2st_chunk_default;
  BtSb2stTFactor t_factor = BtSb2stTFactor::Gram;
  // Z -= (V T) (V^H Z): W = V T once per block and wave, then two gemms per
  // chunk instead of three (no Y round trip). W replaces Y in the workspace.
  bool fold_t = false;
  // With fold_t on CUDA devices, sigma = 64 and b <= 65: apply
  // each batch of waves with one kernel in which every thread block keeps
  // window_columns (64 or 128; complex Z half as many, each as a real and
  // an imaginary column) columns of Z's block rows in shared memory
  // and walks the batch's blocks group by group
  // (backends::cuda::apply_band_blocks), instead of two batched gemms per
  // wave. Elsewhere the batched gemms run. Measured with keig-bench --suite
  // bt_sb2st --fold-t 1,2,3; where keig uses it: bt_sb2st_default_tuning.
  bool window_apply = false;
  int window_columns = 64;
  // With window_apply: the window kernel takes Z's first window_tiles tiles
  // of window_columns columns and the batched gemms the rest (0: the window
  // takes every column). A tile walks all blocks whatever its columns, so a
  // part round of tiles costs a whole walk: where the tiles do not fill
  // whole rounds, the columns past the last whole round go to the gemms.
  index_t window_tiles = 0;
  // With window_tiles > 0: 0, the batched gemms take the columns past the
  // window's tiles; 16 or 32, a second window launch per batch takes them,
  // in narrow tiles of that many columns (the same walk with a quarter or
  // half of the products a block, so that the part round fills the places).
  int remainder_columns = 0;
  // With window_apply and window_columns = 64: > 0 applies the batches in
  // queued launches of the window kernel of this many batches each (at most
  // backends::cuda::band_batches_max; backends::cuda::apply_band_blocks_queued),
  // one sequence for the whole of Z, whose thread blocks take (batch, tile)
  // jobs in order, a tile as soon as its previous batch is applied: a tile
  // past the whole rounds shares the places with the next batch's tiles
  // instead of costing a whole walk per batch. The window then takes every
  // column (window_tiles and remainder_columns are not used). Each batch's
  // factors go to one of queue_copies copies of V and W (0: queue_batches;
  // at least queue_batches, as a launch's batches are in flight together).
  // Real blocks take them from factor launches that wait only for the batch
  // that read their copy and launch early, in the places the launch before
  // leaves free; with copies to spare (at least queue_batches + 2) the next
  // queued launch starts there too. That measured slower: its tiles then
  // walk out of step with the tiles already running, which read the same V
  // and W (H200, n = m = 20694, 4 batches a launch: 1.006-1.011 s with 6
  // copies, 0.982-0.987 s with 4, where the last batch's factors wait for
  // the launch before to end).
  index_t queue_batches = 0;
  index_t queue_copies = 0;
  // Benchmark only (keig-bench --suite bt_sb2st): form V and T (and W) per
  // wave but skip the gemms on Z, which is left unchanged; the difference to a
  // full run is the time of the Z gemms.
  bool t_factor_only = false;
  // Waves whose V, T (and W) are formed together, in one launch per kernel
  // and one batched gemm each: a wave has at most about n / (sigma + 2b)
  // blocks (43 on average at n = 16384), too few teams to fill a GPU, while
  // the factors depend only on the reflectors, not on Z. Costs this many
  // times the V, T and W storage (O(n b) each).
  index_t waves_per_batch = 8;
};

// The shape keig uses for m wanted columns (keig-bench --suite bt_sb2st on
// the H200, n = m = 16384, b = 64: sigma = 64 with W = V T and Gram T took
// 1.16 s with the batched gemms; sigma = 32 1.34 s, sigma = 128 1.82 s; the
// former sigma = 32, Dots, three gemms in chunks of 2048 2.29 s). Chunks of
// at most 8192 columns keep X and W at O(n chunk) (about n/2 rows of blocks
// per wave). The window apply takes its tiles of 64 columns (two resident
// per multiprocessor, `places` in all) where they fill at least 80 % of the
// places over the rounds they need, or, within one round, at least a fifth
// of them: each tile is one thread block's walk over all blocks, so a part
// round costs a whole walk. H200, 264 places, window (with V and W packed,
// 2026-11-23) against gemms: n = m = 3072, 48 tiles: 0.0127 against 0.0120
// s; 4096, 64: 0.0211 / 0.0232 s; 4608, 72: 0.0265 / 0.0311 s; 5120, 80:
// 0.0319 / 0.0401 s; 6144, 96: 0.0448 / 0.0634 s; 8192, 128: 0.077 / 0.133
// s; 16384, 256: 0.507 / 0.976 s (before the packing the window lost at
// 4096 and took a third of a round). Past one round, where the rounds are
// filled less, the window takes the whole rounds' tiles and the gemms the
// columns past them (window_tiles; 20694, 324 tiles: 1.207 against 2.009 s
// for the gemms alone; two whole rounds would take about 1.7 s), or, where
// they fit one round of 32-column tiles, those (remainder_columns; 20694:
// 1.086 against 1.196 s with the gemms).
// Below this many wanted columns GPUs take blocks of 32 sweeps (below).
// H200, keig-bench --suite bt_sb2st --cols m --sweeps 32,64 --t-factors gram
// --fold-t 1 --batches 16 --chunks n, sigma 32 against 64: n = 16384, m =
// 164 / 1024 / 2048: 0.051 / 0.114 / 0.191 against 0.059 / 0.109 / 0.170 s
// (even near m = 690); n = 30504, m = 305 / 1024 / 2048: 0.177 / 0.376 /
// 0.649 against 0.237 / 0.371 / 0.570 s (even near m = 970).
inline constexpr index_t bt_sb2st_few_columns = 768;

namespace detail {
// The window kernel takes every scalar (FP64 tensor cores; a float Z is
// widened in shared memory; a complex product is two real ones, its V and
// W packed as a real and an imaginary plane). Z's columns in one of its
// tiles of window_columns: half as many for complex Z, whose real and
// imaginary parts sit side by side in the tile.
template <class T>
inline constexpr int bt_sb2st_window_planes = is_complex_v<T> ? 2 : 1;
template <class T>
constexpr index_t bt_sb2st_tile_columns(int window_columns) {
  return window_columns / bt_sb2st_window_planes<T>;
}
}  // namespace detail

template <class ExecSpace, class T>
BtSb2stTuning bt_sb2st_default_tuning(const ExecSpace& space, index_t m) {
  BtSb2stTuning tuning;
  if constexpr (backends::is_cuda_space_v<ExecSpace>) {
    // Few wanted columns (a subset of pairs): V, T and W cost the same
    // whatever m, and with 64 sweeps a block they cost more than the gemms
    // on Z. Blocks of 32 sweeps form them in a third of the time, for gemms
    // a third slower (H200, n = 30504, m = 305, Gram T, W = V T: 0.177 s
    // against 0.237 s, of which V, T and W 0.041 against 0.133 s). The
    // window kernel needs blocks of 64.
    tuning.sweeps_per_block = m < bt_sb2st_few_columns ? 32 : 64;
    tuning.fold_t = true;
    // 16 waves per batch: half the launches of 8, and a window tile reloads
    // its rows at a group's first block once per 16 steps instead of 8
    // (H200, n = m, window apply: 0.610 -> 0.570 s at 16384 (32: 0.567, 64:
    // 0.571), 1.350 -> 1.319 s at 20694, 4.51 -> 4.41 s at 32768 (32: 4.39)).
    tuning.waves_per_batch = 16;
    tuning.chunk = m < 8192 ? (m > 0 ? m : 1) : 8192;
    const index_t tile_columns = detail::bt_sb2st_tile_columns<T>(tuning.window_columns);
    const index_t tiles = (m + tile_columns - 1) / tile_columns;
    const index_t places = 2 * index_t(backends::multiprocessors(space)), rounds = (tiles + places - 1) / places;
    const bool window_blocks = tuning.sweeps_per_block == 64;  // the window kernel's blocks
    tuning.window_apply =
        window_blocks && (5 * tiles >= 4 * rounds * places || (tiles < places && 5 * tiles >= places));
    if (window_blocks && !tuning.window_apply && tiles >= places) {
      tuning.window_apply = true;
      tuning.window_tiles = tiles / places * places;
      // The columns past the whole rounds in window tiles of 32 columns
      // where those fit one round (H200, n = m = 20694, 264 tiles of 64
      // and 3798 columns past them: batched gemms 1.196 s, tiles of 16
      // (238 of them) 1.110 s, of 32 (119) 1.086 s; keig-bench --suite
      // bt_sb2st --fold-t 5,6,7). Wider remainders stay on the gemms.
      const index_t rest = m - tuning.window_tiles * tile_columns;
      tuning.remainder_columns = rest <= detail::bt_sb2st_tile_columns<T>(32) * places ? 32 : 0;
      // Or queued launches of 4 batches (queue_batches) where they cost
      // less, in walks of a 64-column tile: about 1.22 tiles / places
      // against the whole rounds plus 0.59 for a round of 32-column tiles
      // (their walk, twentieth stop) or 1 for the gemms. H200, n = m =
      // 20694 (324 tiles, 264 places): 1.064 s queued (1.059 s with 8
      // batches) against 1.132 s with 32-column tiles, keig-bench --suite
      // bt_sb2st --fold-t 7,8,9; at 16384 (one round) 0.510 against 0.475 s.
      // Four batches a launch in four copies of V and W: with the factors of
      // a launch's first three batches formed beside the launch before,
      // 0.983-0.988 s against 1.007-1.010 s when each waited for it (H200,
      // 20694, alternating processes); 2 / 3 / 5 / 8 batches 0.98 / 1.01 /
      // 1.01 / 1.00 s, and one batch a launch in 2 or 3 copies 0.98 s (keig-
      // bench --suite bt_sb2st --fold-t 8 --queue L:R).
      const index_t split = 100 * (tiles / places) + (tuning.remainder_columns > 0 ? 59 : 100);
      if (tiles > places && 122 * tiles < split * places) {
        tuning.window_tiles = 0;
        tuning.remainder_columns = 0;
        tuning.queue_batches = 4;
      }
    }
  }
  (void)space;
  return tuning;
}

namespace detail {

// Effective sigma: the n - 1 sweeps at most (one group), 1 at least.
inline index_t bt_sb2st_sigma(index_t n, index_t sigma) {
  const index_t sweeps = n > 1 ? n - 1 : 1;
  return sigma < sweeps ? sigma : sweeps;
}

// Entries from one block's V (and W) to the next's in the workspace: with
// fold_t and sigma = 64 room for the window kernel's packed
// order as well (backends::cuda::pack_band_blocks, always doubles), which
// needs more than ldv x 64 entries for b < 41 in double and complex<double>
// and for every b <= 65 in float and complex<float>.
template <class T>
index_t bt_sb2st_factor_stride(index_t ldv, index_t sigma, bool fold) {
  if (fold && sigma == 64)
    return backends::cuda::band_block_min_stride(ldv, static_cast<int>(sizeof(T)), bt_sb2st_window_planes<T>);
  return ldv * sigma;
}

inline void check_bt_sb2st_tuning(const BtSb2stTuning& tuning) {
  if (tuning.sweeps_per_block < 1)
    throw InvalidArgument("sweeps_per_block", "bt_sb2st: sweeps per block (sigma) must be >= 1, got " +
                                                  std::to_string(tuning.sweeps_per_block));
  if (tuning.chunk < 1)
    throw InvalidArgument("chunk", "bt_sb2st: the column chunk must be >= 1, got " + std::to_string(tuning.chunk));
  if (tuning.waves_per_batch < 1)
    throw InvalidArgument("waves_per_batch", "bt_sb2st: waves per batch must be >= 1, got " +
                                                 std::to_string(tuning.waves_per_batch));
  if (tuning.window_columns != 64 && tuning.window_columns != 128)
    throw InvalidArgument("window_columns",
                          "bt_sb2st: the window apply takes 64 or 128 columns per thread block, got " +
                              std::to_string(tuning.window_columns));
  if (tuning.window_tiles < 0)
    throw InvalidArgument("window_tiles", "bt_sb2st: window tiles must be >= 0, got " +
                                              std::to_string(tuning.window_tiles));
  if (tuning.queue_batches < 0 || tuning.queue_batches > backends::cuda::band_batches_max)
    throw InvalidArgument("queue_batches", "bt_sb2st: a queued window launch takes 0 to " +
                                               std::to_string(backends::cuda::band_batches_max) + " batches, got " +
                                               std::to_string(tuning.queue_batches));
  if (tuning.queue_copies < 0 || (tuning.queue_copies > 0 && tuning.queue_copies < tuning.queue_batches))
    throw InvalidArgument("queue_copies", "bt_sb2st: a queued sequence needs 0 (queue_batches) or at least " +
                                              std::to_string(tuning.queue_batches) +
                                              " copies of V and W (one per batch of a launch), got " +
                                              std::to_string(tuning.queue_copies));
  if (tuning.window_apply && tuning.queue_batches > 0 && tuning.window_columns != 64)
    throw InvalidArgument("queue_batches", "bt_sb2st: queued window launches take tiles of 64 window columns, got " +
                                               std::to_string(tuning.window_columns));
  if (tuning.remainder_columns != 0 && tuning.remainder_columns != 16 && tuning.remainder_columns != 32)
    throw InvalidArgument("remainder_columns",
                          "bt_sb2st: the window's remainder takes tiles of 16 or 32 columns (0: the gemms), got " +
                              std::to_string(tuning.remainder_columns));
}

// Level-0 team scratch of the T-factor kernels for sigma (the larger of the
// two kernels a T factor uses); Kokkos 3.4 allows 48 KB per team on every
// backend keig supports (the same margin as sb2st's staged_fits).
template <class T, class ExecSpace>
size_t bt_sb2st_scratch_bytes(index_t sigma, BtSb2stTFactor factor) {
  using Scratch = Kokkos::View<T*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const size_t columns = TeamBlockColumns<T, ExecSpace>::scratch_bytes(sigma), u = Scratch::shmem_size(sigma);
  return factor == BtSb2stTFactor::Dots ? columns + u : (columns > u ? columns : u);
}
inline constexpr size_t bt_sb2st_scratch_limit = 48 * 1024 - 512;

}  // namespace detail

// Most blocks of one wave: a wave holds one block per group with k of one
// parity, so at most min(groups, kmax / 2 + 1).
inline index_t bt_sb2st_wave_blocks(index_t n, index_t b, const BtSb2stTuning& tuning) {
  detail::check_bt_sb2st_tuning(tuning);
  const index_t sigma = detail::bt_sb2st_sigma(n, tuning.sweeps_per_block);
  if (n < 2 || b < 1) return 1;
  const index_t groups = (n - 2) / sigma + 1, half = (sb2st_steps(n, b, 0) - 1) / 2 + 1;
  return groups < half ? groups : half;
}
inline index_t bt_sb2st_wave_blocks(index_t n, index_t b) { return bt_sb2st_wave_blocks(n, b, BtSb2stTuning{}); }

namespace detail {
// Copies of V and W: queue_copies (at least one per batch of a queued
// launch) in a queued sequence; two where the factors
// come straight from the reflectors into the window kernel (real scalars,
// every column on the window), so that a batch's factors are formed in the
// places the window launch of the batch before leaves free (while it reads
// the other copy); one otherwise.
template <class T>
index_t bt_sb2st_factor_copies(const BtSb2stTuning& tuning) {
  if (tuning.queue_batches > 0)
    return tuning.queue_copies > tuning.queue_batches ? tuning.queue_copies : tuning.queue_batches;
  const bool direct = !is_complex_v<T> && tuning.window_apply && tuning.fold_t &&
                      tuning.t_factor == BtSb2stTFactor::Gram && tuning.sweeps_per_block == 64 &&
                      tuning.queue_batches == 0 && (tuning.window_tiles == 0 || tuning.remainder_columns > 0);
  return direct ? 2 : 1;
}
}  // namespace detail

// Workspace of the blocked variant (elements of T) for gemms of tuning.chunk
// columns (a tuning with chunk = min(chunk, m) is enough for m columns): per
// block of a batch of waves its T (sigma x sigma), V ((b + sigma - 1) x
// sigma, at least the window kernel's packed size with fold_t and sigma =
// 64) and with fold_t W = V T (as V); per block of one wave X (sigma x
// chunk) and without fold_t Y (as X); bt_sb2st_factor_copies of V and W.
// O(n (waves_per_batch (b + sigma) copies + chunk)).
template <class T>
index_t bt_sb2st_workspace_size(index_t n, index_t b, const BtSb2stTuning& tuning) {
  const index_t slots = bt_sb2st_wave_blocks(n, b, tuning);  // validates the tuning
  const index_t sigma = detail::bt_sb2st_sigma(n, tuning.sweeps_per_block);
  const index_t ldv = (b > 0 ? b : 1) + sigma - 1;
  const index_t stride = detail::bt_sb2st_factor_stride<T>(ldv, sigma, tuning.fold_t);
  const index_t copies = detail::bt_sb2st_factor_copies<T>(tuning);  // of V and W
  const index_t factors = tuning.waves_per_batch * (sigma * sigma + copies * stride * (tuning.fold_t ? 2 : 1));
  return slots * (factors + sigma * (tuning.chunk + (tuning.fold_t ? 0 : tuning.chunk)));
}
namespace detail {
// Blocks (g, k) of bt_sb2st's reflectors for sigma sweeps a group: each
// group has the steps of its first sweep.
inline index_t bt_sb2st_block_count(index_t n, index_t b, index_t sigma) {
  index_t blocks = 0;
  for (index_t s = 0; s <= n - 2; s += sigma) blocks += sb2st_steps(n, b, s);
  return blocks;
}
// Bytes of bt_sb2st_blocked's device plan for m columns, at most: its
// pointer table (bt_sb2st_blocked lays it out), the window kernel's block
// list and the queued sequence's counters, each on a 256-byte boundary.
template <class T>
std::size_t bt_sb2st_plan_bytes(index_t n, index_t b, const BtSb2stTuning& tuning, index_t m) {
  if (n < 2 || m <= 0) return 0;
  const index_t sigma = bt_sb2st_sigma(n, tuning.sweeps_per_block), blocks = bt_sb2st_block_count(n, b, sigma);
  const index_t slots = bt_sb2st_wave_blocks(n, b, tuning), factor_slots = tuning.waves_per_batch * slots;
  const index_t copies = bt_sb2st_factor_copies<T>(tuning);
  const index_t cw = tuning.chunk < m ? tuning.chunk : m, chunks = (m + cw - 1) / cw;
  const index_t pointers = (2 * copies + 1) * factor_slots + 2 * slots + (2 + chunks) * blocks;
  const index_t tiles = (m + bt_sb2st_tile_columns<T>(tuning.window_columns) - 1) /
                        bt_sb2st_tile_columns<T>(tuning.window_columns);
  ArenaSize size;
  size.add<std::uintptr_t>(pointers);
  size.add<backends::cuda::BandBlock>(blocks);
  // Batches at most: the waves (sb2st's wave fronts tau) over waves_per_batch.
  const index_t waves = 2 * ((n - 2) / sigma) + sb2st_steps(n, b, 0);
  size.add<int>(backends::cuda::band_queue_ints((waves + tuning.waves_per_batch - 1) / tuning.waves_per_batch, tiles));
  size.add<int>(1);  // the dependent factor launches' arrivals
  return size.bytes() + arena_alignment;  // Arena aligns the start of the memory past the factors
}
}  // namespace detail

// The workspace above for m columns plus room for bt_sb2st's device plan,
// which it then keeps there instead of allocating it: the size the solver's
// arena gives it (views/arena.hpp says why allocations cost on CUDA spaces).
template <class T>
index_t bt_sb2st_workspace_size(index_t n, index_t b, const BtSb2stTuning& tuning, index_t m) {
  BtSb2stTuning sized = tuning;
  sized.chunk = tuning.chunk < m ? tuning.chunk : (m > 0 ? m : 1);
  const std::size_t plan = detail::bt_sb2st_plan_bytes<T>(n, b, sized, m);
  return bt_sb2st_workspace_size<T>(n, b, sized) + static_cast<index_t>((plan + sizeof(T) - 1) / sizeof(T));
}
template <class T>
index_t bt_sb2st_workspace_size(index_t n, index_t b, index_t chunk) {
  BtSb2stTuning tuning;
  tuning.chunk = chunk > 0 ? chunk : 1;
  return bt_sb2st_workspace_size<T>(n, b, tuning);
}
template <class T>
index_t bt_sb2st_workspace_size(index_t n, index_t b) {
  return bt_sb2st_workspace_size<T>(n, b, BtSb2stTuning{});
}

// Per batch of waves: form every block's V (dense, zero outside the
// parallelogram) and T in team kernels (plus the batched gemm G = V^H V for
// Gram; plus W = V T for fold_t). Then per wave of the batch and chunk of Z's
// columns, batched gemms X = V^H Z, Y = T X, Z -= V Y (fold_t: Z -= W X)
// over the blocks of full height b + sigma - 1. Blocks cut by the bottom of the matrix (len < b + sigma - 1)
// get single gemms of height len, so no gemm touches rows outside its block's.
// The pointer arrays of all waves and chunks are built on the host and copied
// once. work: bt_sb2st_workspace_size(n, b, tuning with chunk = min(chunk, m))
// entries or more.
template <class T, class ExecSpace>
void bt_sb2st_blocked(const backends::Context<ExecSpace>& ctx, index_t b, const Matrix<T, ExecSpace>& reflectors,
                      const Matrix<T, ExecSpace>& z, const Vector<T, ExecSpace>& work, const BtSb2stTuning& tuning) {
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using Scratch = Kokkos::View<T**, Kokkos::LayoutLeft, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using Columns = detail::TeamBlockColumns<T, ExecSpace>;
  using backends::Op;
  const ExecSpace& space = ctx.space();
  const index_t n = z.extent(0), m = z.extent(1);
  if (b < 1) throw InvalidArgument("b", "bt_sb2st: the half-bandwidth must be >= 1, got " + std::to_string(b));
  detail::check_bt_sb2st_tuning(tuning);
  if (detail::bt_sb2st_scratch_bytes<T, ExecSpace>(tuning.sweeps_per_block, tuning.t_factor) >
      detail::bt_sb2st_scratch_limit) {
    index_t most = 1;  // the largest sigma that fits, for the message
    while (detail::bt_sb2st_scratch_bytes<T, ExecSpace>(2 * most, tuning.t_factor) <= detail::bt_sb2st_scratch_limit)
      most *= 2;
    for (index_t step = most / 2; step > 0; step /= 2)
      if (detail::bt_sb2st_scratch_bytes<T, ExecSpace>(most + step, tuning.t_factor) <= detail::bt_sb2st_scratch_limit)
        most += step;
    throw InvalidArgument("sweeps_per_block",
                          "bt_sb2st: sigma = " + std::to_string(tuning.sweeps_per_block) +
                              " needs more than 48 KB of team scratch in the T-factor kernel; at most " +
                              std::to_string(most) + " for this scalar and T factor");
  }
  if (static_cast<index_t>(reflectors.extent(0)) < n || static_cast<index_t>(reflectors.extent(1)) < n)
    throw InvalidArgument("reflectors", "bt_sb2st: needs sb2st's n x n reflector storage");
  const index_t cw = tuning.chunk < m ? tuning.chunk : (m > 0 ? m : 1);  // columns per gemm
  BtSb2stTuning sized = tuning;
  sized.chunk = cw;
  if (static_cast<index_t>(work.extent(0)) < bt_sb2st_workspace_size<T>(n, b, sized))
    throw InvalidArgument("work", "bt_sb2st: needs bt_sb2st_workspace_size<T>(n, b, tuning) entries");
  if (n < 2 || m == 0) return;
  const index_t sigma = detail::bt_sb2st_sigma(n, tuning.sweeps_per_block);
  const bool dots = tuning.t_factor == BtSb2stTFactor::Dots, fold = tuning.fold_t;
  constexpr bool device = backends::is_cuda_space_v<ExecSpace>;
  const index_t ldv = b + sigma - 1, ldz = leading_dimension(z);
  const size_t column_bytes = Columns::scratch_bytes(sigma);
  const detail::SweepBlock<T, ExecSpace> blocks{reflectors, n, b, sigma};
  const index_t groups = (n - 2) / sigma + 1, kmax = sb2st_steps(n, b, 0) - 1;
  // The window kernel (CUDA) takes Z's first mw columns, the batched gemms
  // the mg after them.
  bool window = false;
  if constexpr (backends::is_cuda_space_v<ExecSpace>)
    window = tuning.window_apply && fold && sigma == 64 && ldv <= 128 && backends::cuda::band_blocks_supported(ctx) &&
             reinterpret_cast<std::uintptr_t>(work.data()) % 16 == 0;  // its packed V and W are read 16 bytes a lane
  const index_t tile_columns = detail::bt_sb2st_tile_columns<T>(tuning.window_columns);
  // Queued window launches (queue_batches): every column on the window.
  const index_t queued = window ? tuning.queue_batches : 0;
  const index_t mw =
      !window ? 0 : (tuning.window_tiles > 0 && queued == 0 ? std::min(m, tuning.window_tiles * tile_columns) : m);
  // The columns past the window's tiles: narrow window tiles (mr of them)
  // or the batched gemms (mg).
  const index_t mr = window && queued == 0 && tuning.remainder_columns > 0 ? m - mw : 0;
  const index_t mg = m - mw - mr;
  // Real blocks whose every column goes through the window kernel take their
  // W = V T and packing from one launch (backends::cuda::form_band_block_factors)
  // instead of 1b-1d below and the pack: no gemm reads the column-major V and W.
  bool fused_factors = false;
  if constexpr (backends::is_cuda_space_v<ExecSpace> && !is_complex_v<T>) fused_factors = window && mg == 0 && !dots;
  // With it the launch reads V straight from the reflectors (no column-major
  // V first), and with two copies of V and W it forms each batch's factors
  // as a dependent of the window launch before it, in the places that launch
  // leaves free (H200, n = 16384: 256 tiles of 64 columns on 264 places).
  const index_t copies = window ? detail::bt_sb2st_factor_copies<T>(tuning) : 1;
  const bool overlap_factors = fused_factors && queued == 0 && copies == 2;
  T* const zg = z.data() + mw * ldz;  // the gemms' first column (mg > 0 only where mr = 0)
  const index_t slots = bt_sb2st_wave_blocks(n, b, sized), chunks = (mg + cw - 1) / cw;
  const index_t batch = tuning.waves_per_batch, factor_slots = batch * slots;
  // Block q of a batch (its waves' blocks in order) keeps T, V and W at
  // position q of the first three; block p of a wave X and Y at position p.
  // V and W of `copies` batches (copy c: batches c, c + copies, ...); T
  // serves one batch at a time.
  const index_t stride = detail::bt_sb2st_factor_stride<T>(ldv, sigma, fold);  // V's and W's block to block
  // The same stride in doubles once the window kernel's packing has run.
  const index_t packed_stride = backends::cuda::band_block_packed_stride(stride, static_cast<int>(sizeof(T)));
  const index_t copy_size = factor_slots * stride;
  T* const tbase = work.data();
  T* const vbase = tbase + factor_slots * sigma * sigma;
  T* const wbase = vbase + copies * copy_size;  // fold_t only
  T* const xbase = wbase + (fold ? copies * copy_size : 0);
  T* const ybase = xbase + slots * sigma * cw;  // without fold_t only
  const Matrix<T, ExecSpace> tbuf(tbase, sigma * sigma, factor_slots);

  // Host plan: each wave's existing blocks, full-height ones first.
  struct Entry {
    index_t group, step, row0, len;
  };
  struct WavePlan {
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
    WavePlan w{static_cast<index_t>(entries.size()), 0, 0, full_total};
    cut.clear();
    for (index_t slot = 0; slot < wave.count; ++slot) {
      const index_t g = wave.group(slot), k = wave.step(slot);
      if (!blocks.exists(g, k)) continue;
      const auto sh = blocks.shape(g, k);
      const Entry e{g, k, sh.row0, sh.len};
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
  // [V (copies) | T | W (copies)] pointers of batch positions, [X | Y]
  // pointers of wave positions (the same for every batch and wave), each
  // entry's group and step, then Z pointers per chunk of full-height blocks.
  const index_t t_ptrs = copies * factor_slots, w_ptrs = t_ptrs + factor_slots;
  const index_t xy_base = w_ptrs + copies * factor_slots, gk_base = xy_base + 2 * slots;
  const index_t zbase = gk_base + 2 * static_cast<index_t>(entries.size());
  // The device plan: in the workspace past the factors, where the caller
  // sized it so (bt_sb2st_workspace_size with m); what does not fit there
  // the arena allocates (and frees on return, which waits for the device).
  using BandBlock = backends::cuda::BandBlock;
  const index_t plan_entries = zbase + chunks * full_total;
  const index_t factor_entries = bt_sb2st_workspace_size<T>(n, b, sized);
  Arena<ExecSpace> plan_arena(space, "keig::bt_sb2st", work.data() + factor_entries,
                              static_cast<std::size_t>(work.extent(0) - factor_entries) * sizeof(T));
  const auto plan = plan_arena.template vector<std::uintptr_t>("plan", plan_entries);
  // Its host side without Kokkos's initialization (host_mirror_for_copy says
  // why): every entry is written below before the copy.
  const auto plan_h = host_vector_for_copy<std::uintptr_t>("keig::bt_sb2st::plan", plan_entries);
  const auto address = [](const T* p) { return reinterpret_cast<std::uintptr_t>(p); };
  for (index_t q = 0; q < copies * factor_slots; ++q) {
    plan_h(q) = address(vbase + q * stride);
    plan_h(w_ptrs + q) = fold ? address(wbase + q * stride) : 0;
  }
  for (index_t q = 0; q < factor_slots; ++q) plan_h(t_ptrs + q) = address(tbase + q * sigma * sigma);
  for (index_t p = 0; p < slots; ++p) {
    plan_h(xy_base + p) = address(xbase + p * sigma * cw);
    plan_h(xy_base + slots + p) = fold ? 0 : address(ybase + p * sigma * cw);
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    plan_h(gk_base + 2 * i) = static_cast<std::uintptr_t>(entries[i].group);
    plan_h(gk_base + 2 * i + 1) = static_cast<std::uintptr_t>(entries[i].step);
  }
  for (const WavePlan& w : waves)
    for (index_t c = 0; c < chunks; ++c)
      for (index_t e = 0; e < w.full; ++e)
        plan_h(zbase + c * full_total + w.zfirst + e) = address(zg + entries[w.first + e].row0 + c * cw * ldz);
  Kokkos::deep_copy(space, plan, plan_h);
  // Window apply: each batch's blocks group by group (g descending), steps
  // ascending within a group. That order is valid: blocks of different
  // groups that share rows are, in the wave order, later group first.
  Vector<BandBlock, ExecSpace> band_list;
  if (window) {
    // Neither side initialized, and the host side a std::vector: Kokkos
    // constructs a labelled view of structs element by element and destroys
    // it so too, each a parallel region of the host's threads (a kernel and
    // a fence on the device). A traced solve lost 7 ms to the host mirror's
    // construction and 7 ms to its destruction (H200, n = 16384).
    band_list = plan_arena.template vector<BandBlock>("band_list", static_cast<index_t>(entries.size()));
    std::vector<BandBlock> band_h(entries.size());
    // A batch's entries come in wave order, where a group's steps ascend, so
    // placing them stably by group (descending) gives the order above in
    // linear time. (A comparison sort of each batch took 2-3 ms of host time
    // at n = 16384 while the device waited.)
    std::vector<index_t> place;
    for (index_t w0 = 0; w0 < static_cast<index_t>(waves.size()); w0 += tuning.waves_per_batch) {
      const index_t w1 = std::min<index_t>(w0 + tuning.waves_per_batch, static_cast<index_t>(waves.size()));
      const index_t first = waves[w0].first, end = waves[w1 - 1].first + waves[w1 - 1].entries;
      index_t g_lo = entries[first].group, g_hi = g_lo;
      for (index_t i = first; i < end; ++i) {
        g_lo = std::min(g_lo, entries[i].group);
        g_hi = std::max(g_hi, entries[i].group);
      }
      // place[g_hi - g]: the next position of group g's blocks.
      place.assign(g_hi - g_lo + 2, 0);
      for (index_t i = first; i < end; ++i) ++place[g_hi - entries[i].group + 1];
      for (size_t g = 1; g < place.size(); ++g) place[g] += place[g - 1];
      for (index_t i = first; i < end; ++i)
        band_h[first + place[g_hi - entries[i].group]++] = BandBlock{i - first, entries[i].row0};
    }
    Kokkos::deep_copy(space, band_list,
                      Kokkos::View<const BandBlock*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                          band_h.data(), band_h.size()));
    // No fence for band_h: a copy from pageable memory returns once its
    // source is staged (CUDA's API synchronization rules), and on hosts it
    // is done on return.
  }
  T* const* const ptrs = reinterpret_cast<T* const*>(plan.data());
  T* const* const tp = ptrs + t_ptrs;
  T* const* const xp = ptrs + xy_base;
  T* const* const yp = ptrs + xy_base + slots;

  // Dots: 64 threads share each column's dot products (as before). Gram: the
  // V copy is the only work of the first kernel, so more threads; the row
  // recurrence wants one thread per row of T.
  const int v_team = device ? (dots ? 64 : 128) : 1;
  const int t_team = device ? static_cast<int>(sigma <= 32 ? 32 : (sigma >= 128 ? 128 : (sigma + 31) / 32 * 32)) : 1;
  const index_t wave_count = static_cast<index_t>(waves.size());
  // A queued sequence: its counters, the batches formed since the last
  // launch, and the batches launched.
  backends::cuda::BandQueue queue{};
  std::vector<backends::cuda::BandBatch> pending;
  int launched = 0;
  if (queued > 0) {
    const index_t tiles = (m + tile_columns - 1) / tile_columns, batches = (wave_count + batch - 1) / batch;
    const auto counters =
        plan_arena.template vector<int>("queue", backends::cuda::band_queue_ints(batches, tiles));
    Kokkos::deep_copy(space, counters, 0);
    queue = {counters.data(), static_cast<int>(batches), static_cast<int>(tiles)};
  }
  Vector<int, ExecSpace> arrivals;  // of the dependent factor launches
  if (overlap_factors) {
    arrivals = plan_arena.template vector<int>("arrivals", 1);
    Kokkos::deep_copy(space, arrivals, 0);
  }
  for (index_t w0 = 0; w0 < wave_count; w0 += batch) {
    const index_t w1 = w0 + batch < wave_count ? w0 + batch : wave_count;
    // The batch's blocks: entries [first, first + count), position q = entry - first.
    const index_t first = waves[w0].first, count = waves[w1 - 1].first + waves[w1 - 1].entries - first;
    const index_t gk = gk_base + 2 * first;
    // This batch's copy of V and W.
    const index_t copy = (w0 / batch) % copies;
    T* const vcopy = vbase + copy * copy_size;
    T* const wcopy = wbase + copy * copy_size;
    T* const* const vp = ptrs + copy * factor_slots;
    T* const* const wp = ptrs + w_ptrs + copy * factor_slots;
    const auto vbuf = make_matrix<T, ExecSpace>(vcopy, ldv * sigma, factor_slots, stride);
    if constexpr (backends::is_cuda_space_v<ExecSpace> && !is_complex_v<T>) {
      if (fused_factors) {
        // 1. V, T, W = V T in one launch from the reflectors, packed for the
        // window kernel: as a step of the queued sequence (once the batch
        // that read this copy is applied, and a dependent of the launch
        // before it once a queued launch has run), or as a dependent of the
        // window launch of the batch before, which reads the other copy.
        const auto form = [&](const auto& order) {
          backends::cuda::form_band_block_factors(
              ctx, count, reflectors.data(), leading_dimension(reflectors), n, b,
              reinterpret_cast<const index_t*>(plan.data() + gk), reinterpret_cast<double*>(vcopy),
              reinterpret_cast<double*>(wcopy), packed_stride, order);
        };
        if (queued > 0)
          form(backends::cuda::BandQueueFactors{queue, static_cast<int>(w0 / batch), static_cast<int>(copies),
                                                launched > 0});
        else
          form(overlap_factors && w0 > 0 ? arrivals.data() : nullptr);
      }
    }
    if (!fused_factors) {
      // 1. V explicitly (and, with Dots, T) per block.
      Kokkos::parallel_for(
          dots ? "keig::bt_sb2st::larft" : "keig::bt_sb2st::form_v",
          Kokkos::TeamPolicy<ExecSpace>(space, count, v_team)
              .set_scratch_size(0, Kokkos::PerTeam((dots ? Scratch::shmem_size(sigma, 1) : 0) + column_bytes)),
          KOKKOS_LAMBDA(const Team& team) {
            const index_t p = team.league_rank();
            const index_t g = static_cast<index_t>(plan(gk + 2 * p)), k = static_cast<index_t>(plan(gk + 2 * p + 1));
            const auto sh = blocks.shape(g, k);
            Scratch u;  // Dots only; first in scratch, where the widest alignment is
            if (dots) u = Scratch(team.team_scratch(0), sigma, 1);
            const Columns V(team, blocks, sh, k);
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, ldv * sigma),
                                 [&](const index_t q) { vbuf(q, p) = V.v(q % ldv, q / ldv); });
            if (!dots) return;
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
    }
    if (!dots && !fused_factors) {
      // 1b. G = V^H V into each block's T buffer (V is zero outside the
      // parallelogram and below the matrix, so cut blocks need no own gemm).
      backends::gemm_batched<T, ExecSpace>(ctx, Op::ConjTrans, Op::NoTrans, sigma, sigma, ldv, T(1), vp, ldv, vp, ldv,
                                           T(0), tp, sigma, count);
      // 1c. T from G: row j of T (upper triangle) reads its own earlier
      // entries and G(l, i) = conj(G(i, l)) from G's strict lower triangle,
      // which no row writes, so the rows need no barrier between them. G's
      // strict lower triangle is first copied to team scratch (packed by
      // rows), and T is built there too (packed by columns) where both fit
      // (real double at sigma = 64: 33 KB), else in place in G's buffer. On
      // devices a warp's rows step through (i, l) together from the warp's
      // first row, each lane adding only where l >= j: the loads of T(j, l)
      // are then consecutive words and G(i, l) one broadcast. Hosts run each
      // row's own bounds; both add the same terms in the same order. (H100,
      // n = 16384: 30 ms with generic loads, 64-bit indices and per-row
      // bounds, 7 ms now; docs/measurements.md, seventeenth stop.)
      using Taus = Kokkos::View<T*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
      const index_t tri = sigma * (sigma - 1) / 2;  // G's strict lower triangle; T's upper one holds tri + sigma
      const size_t taus_bytes = Taus::shmem_size(sigma), g_bytes = Taus::shmem_size(tri);
      const size_t t_bytes = Taus::shmem_size(tri + sigma);
      const bool g_in_scratch = taus_bytes + g_bytes <= detail::bt_sb2st_scratch_limit;
      const bool t_in_scratch = taus_bytes + g_bytes + t_bytes <= detail::bt_sb2st_scratch_limit;
      const size_t t_scratch = taus_bytes + (g_in_scratch ? g_bytes : 0) + (t_in_scratch ? t_bytes : 0);
      Kokkos::parallel_for(
          "keig::bt_sb2st::t_from_gram",
          Kokkos::TeamPolicy<ExecSpace>(space, count, t_team).set_scratch_size(0, Kokkos::PerTeam(t_scratch)),
          KOKKOS_LAMBDA(const Team& team) {
            const index_t p = team.league_rank();
            const index_t g = static_cast<index_t>(plan(gk + 2 * p)), k = static_cast<index_t>(plan(gk + 2 * p + 1));
            const auto sh = blocks.shape(g, k);
            Taus taus(team.team_scratch(0), sigma);
            T* const gram = &tbuf(0, p);  // G, column-major sigma x sigma; T on the way out
            T* const gs = g_in_scratch ? Taus(team.team_scratch(0), tri).data() : nullptr;
            T* const ts = t_in_scratch ? Taus(team.team_scratch(0), tri + sigma).data() : nullptr;
            const int s = static_cast<int>(sigma);
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, sigma), [&](const index_t j) {
              index_t len, col;
              blocks.column(sh, k, j, len, col);
              taus(j) = len > 0 ? blocks.reflectors(k * b, col) : T(0);
            });
            if (gs)
              Kokkos::parallel_for(Kokkos::TeamThreadRange(team, sigma * sigma), [&](const index_t q) {
                const int i = static_cast<int>(q % sigma), l = static_cast<int>(q / sigma);
                if (i > l) gs[i * (i - 1) / 2 + l] = gram[q];
              });
            team.team_barrier();
            // tv(j, l): T(j, l), j <= l; gv(i, l): G(i, l), l < i. One
            // instance per placement, so that scratch loads stay shared-memory
            // loads rather than generic ones.
            const auto rows = [&](const auto& tv, const auto& gv) {
              Kokkos::parallel_for(Kokkos::TeamThreadRange(team, sigma), [&](const index_t jj) {
                const int j = static_cast<int>(jj), first = device ? j - j % 32 : j;  // the warp's first row
                tv(j, j) = taus(j);
                for (int i = first + 1; i < s; ++i) {
                  T acc = T(0);  // T(j, j:i-1) G(j:i-1, i)
                  for (int l = first; l < i; ++l)
                    if (l >= j) acc += tv(j, l) * conjugate(gv(i, l));
                  if (j < i) tv(j, i) = -taus(i) * acc;
                }
              });
            };
            const auto g_packed = [&](int i, int l) -> T { return gs[i * (i - 1) / 2 + l]; };
            const auto g_full = [&](int i, int l) -> T { return gram[i + l * s]; };
            const auto t_full = [&](int j, int l) -> T& { return gram[j + l * s]; };
            if (ts)
              rows([&](int j, int l) -> T& { return ts[l * (l + 1) / 2 + j]; }, g_packed);
            else if (gs)
              rows(t_full, g_packed);
            else
              rows(t_full, g_full);
            team.team_barrier();
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, sigma * sigma), [&](const index_t q) {
              const index_t r = q % sigma, c = q / sigma;
              if (r > c) gram[q] = T(0);
              else if (ts) gram[q] = ts[c * (c + 1) / 2 + r];
            });
          });
    }
    // 1d. W = V T once per block, reused by every chunk.
    if (fold && !fused_factors)
      backends::gemm_batched<T, ExecSpace>(ctx, Op::NoTrans, Op::NoTrans, ldv, sigma, sigma, T(1), vp, ldv, tp, sigma,
                                           T(0), wp, ldv, count);
    if (tuning.t_factor_only) continue;
    // 2. Per wave, Z(rows, chunk) -= V (T (V^H Z(rows, chunk))) on the
    // gemms' columns: BLAS-3 on tensor cores.
    for (index_t wi = w0; mg > 0 && wi < w1; ++wi) {
      const WavePlan& w = waves[wi];
      const index_t q0 = w.first - first;  // the wave's first block in the batch
      T* const* const vq = vp + q0;
      T* const* const tq = tp + q0;
      T* const* const wq = wp + q0;
      for (index_t c = 0; c < chunks; ++c) {
        const index_t c0 = c * cw, cols = c0 + cw < mg ? cw : mg - c0;
        if (w.full > 0) {
          T* const* const zp = ptrs + zbase + c * full_total + w.zfirst;
          backends::gemm_batched<T, ExecSpace>(ctx, Op::ConjTrans, Op::NoTrans, sigma, cols, ldv, T(1), vq, ldv, zp,
                                               ldz, T(0), xp, sigma, w.full);
          if (fold) {
            backends::gemm_batched<T, ExecSpace>(ctx, Op::NoTrans, Op::NoTrans, ldv, cols, sigma, T(-1), wq, ldv, xp,
                                                 sigma, T(1), zp, ldz, w.full);
          } else {
            backends::gemm_batched<T, ExecSpace>(ctx, Op::NoTrans, Op::NoTrans, sigma, cols, sigma, T(1), tq, sigma, xp,
                                                 sigma, T(0), yp, sigma, w.full);
            backends::gemm_batched<T, ExecSpace>(ctx, Op::NoTrans, Op::NoTrans, ldv, cols, sigma, T(-1), vq, ldv, yp,
                                                 sigma, T(1), zp, ldz, w.full);
          }
        }
        for (index_t p = w.full; p < w.entries; ++p) {
          const Entry& e = entries[w.first + p];
          const auto zb = make_matrix<T, ExecSpace>(zg + e.row0 + c0 * ldz, e.len, cols, ldz);
          const index_t q = q0 + p;
          const auto v = make_matrix<T, ExecSpace>(vcopy + q * stride, e.len, sigma, ldv);
          const auto x = make_matrix<T, ExecSpace>(xbase + p * sigma * cw, sigma, cols, sigma);
          backends::gemm<T, ExecSpace>(ctx, Op::ConjTrans, Op::NoTrans, T(1), v, zb, T(0), x);
          if (fold) {
            const auto wm = make_matrix<T, ExecSpace>(wcopy + q * stride, e.len, sigma, ldv);
            backends::gemm<T, ExecSpace>(ctx, Op::NoTrans, Op::NoTrans, T(-1), wm, x, T(1), zb);
          } else {
            const auto tm = make_matrix<T, ExecSpace>(tbase + q * sigma * sigma, sigma, sigma, sigma);
            const auto y = make_matrix<T, ExecSpace>(ybase + p * sigma * cw, sigma, cols, sigma);
            backends::gemm<T, ExecSpace>(ctx, Op::NoTrans, Op::NoTrans, T(1), tm, x, T(0), y);
            backends::gemm<T, ExecSpace>(ctx, Op::NoTrans, Op::NoTrans, T(-1), v, y, T(1), zb);
          }
        }
      }
    }
    // 3. The window kernel on its columns, after the gemms: its packing
    // overwrites the column-major V and W they read, with doubles (a float
    // block's stride leaves room for them; complex blocks as two planes).
    if constexpr (backends::is_cuda_space_v<ExecSpace>) {
      if (window) {
        if (!fused_factors) backends::cuda::pack_band_blocks(ctx, count, vcopy, wcopy, ldv, stride);
        const double* const vpacked = reinterpret_cast<const double*>(vcopy);
        const double* const wpacked = reinterpret_cast<const double*>(wcopy);
        if (queued > 0) {
          // The launch once queue_batches batches are formed (or at the
          // last). Factors from other kernels are formed after the launch
          // before in stream order.
          pending.push_back({band_list.data() + first, count, vpacked, wpacked});
          if (static_cast<index_t>(pending.size()) == queued || w1 == wave_count) {
            backends::cuda::apply_band_blocks_queued(ctx, pending.data(), static_cast<int>(pending.size()), launched,
                                                     queue, fused_factors, ldv, packed_stride, z.data(), ldz, n, m);
            launched += static_cast<int>(pending.size());
            pending.clear();
          }
        } else {
          backends::cuda::apply_band_blocks(ctx, band_list.data() + first, count, vpacked, wpacked, ldv,
                                            packed_stride, z.data(), ldz, n, mw, tuning.window_columns);
        }
        if (mr > 0)
          backends::cuda::apply_band_blocks(ctx, band_list.data() + first, count, vpacked, wpacked, ldv,
                                            packed_stride, z.data() + mw * ldz, ldz, n, mr, tuning.remainder_columns);
      }
    }
  }
  // Plan pieces the arena allocated must outlive the queued work (the
  // caller's workspace does by contract); plan_h, a pageable copy source,
  // is staged already.
  if (plan_arena.fallbacks() > 0) space.fence();
}

// The former signature: sigma = 32 and the given chunk, default T factor.
template <class T, class ExecSpace>
void bt_sb2st_blocked(const backends::Context<ExecSpace>& ctx, index_t b, const Matrix<T, ExecSpace>& reflectors,
                      const Matrix<T, ExecSpace>& z, const Vector<T, ExecSpace>& work,
                      index_t chunk = bt_sb2st_chunk_default) {
  BtSb2stTuning tuning;
  tuning.chunk = chunk;
  bt_sb2st_blocked<T, ExecSpace>(ctx, b, reflectors, z, work, tuning);
}

// The faster variant per backend, measured with keig-bench (README
// "Status"): blocked on devices; on hosts the reflector kernel, which runs
// reflector pairs over transposed stripes (2 cores, double, m = n, inside
// eigh: 0.36 / 2.9 s at n = 2000 / 4000, where the blocked variant's
// small gemms take 1.1-2.5 / 11-15 s).
// work: bt_sb2st_workspace_size(n, b, tuning); hosts ignore the tuning.
template <class T, class ExecSpace>
void bt_sb2st(const backends::Context<ExecSpace>& ctx, index_t b, const Matrix<T, ExecSpace>& reflectors,
              const Matrix<T, ExecSpace>& z, const Vector<T, ExecSpace>& work, const BtSb2stTuning& tuning) {
  if constexpr (backends::is_cuda_space_v<ExecSpace>) bt_sb2st_blocked<T, ExecSpace>(ctx, b, reflectors, z, work, tuning);
  else bt_sb2st_reflectors<T, ExecSpace>(ctx.space(), b, reflectors, z);
}
template <class T, class ExecSpace>
void bt_sb2st(const backends::Context<ExecSpace>& ctx, index_t b, const Matrix<T, ExecSpace>& reflectors,
              const Matrix<T, ExecSpace>& z, const Vector<T, ExecSpace>& work) {
  bt_sb2st<T, ExecSpace>(ctx, b, reflectors, z, work, BtSb2stTuning{});
}

}  // namespace keig::stages
