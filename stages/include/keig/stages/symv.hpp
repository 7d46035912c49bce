// stages/symv: y = alpha A x + beta y for Hermitian A stored in one triangle,
// reading every stored element from memory exactly once (seed 001).
//
// The matrix is cut into NB x NB blocks, walked vertically through each
// block column (column-major friendly, seed 001 Fig. 1b). Every stored
// element a of block A_IJ contributes a x_J to y_I (row partial, reduced per
// block) and, off the diagonal, conj(a) x_I to y_J (column partial, kept in
// registers while a team walks its segment of the block column and reduced
// once: seed 001 "using more registers"). A diagonal block is the same walk
// over its stored triangle, its diagonal counted once.
//  1. devices: one team per segment of S consecutive blocks of a block
//     column, the diagonal block first (lower) or last (upper) in its
//     column's outermost segment. The rows reach the registers through team
//     scratch, copied asynchronously a stage ahead (cp.async), so the loads
//     in flight cost no registers and a diagonal block's unstored triangle
//     is never read (device_segment).
//  2. a reduction through global memory sums the partials: y = beta y + alpha sum
//     (backends::sum_row_partials, launched as a dependent of the first
//     launch so that its start overlaps the first one's tail).
// Partials live in a caller-provided n x (nblk + 1) workspace
// (symv_workspace_size) with one slot per (row, block or segment)
// contribution, so no atomics are needed and the result is deterministic.
// Any n: partial edge blocks are guarded, never padded.
//
// Hosts: one parallel region, its threads one team (HostTag). Each thread
// zeroes an n-vector of its own in the workspace, takes a fixed share of
// the block columns and walks each as whole columns, unit-stride streams
// from the diagonal down, adding both the row and the column contributions
// into its vector; after a barrier the threads sum the vectors by rows (the
// layout of OpenBLAS's threaded symv, in one fork instead of two). For a
// given thread count the sums run in the same order every time.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <type_traits>

#include "keig/backends/async_copy.hpp"
#include "keig/backends/context.hpp"
#include "keig/backends/dependent_launch.hpp"
#include "keig/backends/warp.hpp"
#include "keig/errors.hpp"
#include "keig/options.hpp"
#include "keig/views/matrix.hpp"

namespace keig::stages {

// Block size, the device kernel's team shape and the segment length policy.
template <class T, class ExecSpace>
struct SymvTuning {
  static constexpr bool device = backends::is_cuda_space_v<ExecSpace>;
  // 16-byte scalars use 32 x 32 blocks on devices (team scratch < 48 KB).
  static constexpr int nb = device ? (sizeof(T) > 8 ? 32 : 64) : 128;
  // Devices: stages of 32 rows (a warp's lanes), one warp per 8 columns,
  // `stages` stages in flight. H200, raw-CUDA sweep of the off-diagonal walk
  // alone at m = 2048 .. 32768: 2 stages beat 3 and 4 (3.42 / 3.84 / 4.01
  // TB/s at 8192 / 16384 / 32768 against 3.17 / 3.66 / 3.78 with 3); 8-byte
  // copies beat 16-byte ones above m = 6144.
  static constexpr int stage_rows = 32;
  static constexpr int warps = nb / 8;
  static constexpr int team = stage_rows * warps;
  static constexpr int stages = 2;
  // Teams a multiprocessor holds (the launch bound: double has 64 registers
  // a thread, so 4 x 256 threads fill the register file).
  static constexpr int teams_per_sm = 4;
  static constexpr size_t scratch = (size_t(stages) * nb * stage_rows + 2 * warps * stage_rows) * sizeof(T) + 64;
  static constexpr int max_segment = 256;
  // Devices: the block grid starts up to max_shift rows before the matrix
  // (device_segment), so that a block's rows start on a 128-byte line.
  static constexpr int line = 128;
  static constexpr int max_shift = device ? line / int(sizeof(T)) - 1 : 0;
  // Blocks per segment on devices: long segments amortize the pipeline's
  // start and the column reduction, short ones give enough teams. H200,
  // keig-bench --symv-segments 2,4,8,16 (% of copy): n = 3072: 37 / 34 / 31 /
  // 23; 4096: 43 / 43 / 36 / 32; 8192: 67 / 70 / 68 / 64; 16384: 79 / 83 /
  // 83 / 82; 32768: 82 / 87 / 89 / 88. Hosts: whole block columns (long
  // streams).
  static index_t segment(index_t nblk) {
    if (!device) return nblk > 0 ? nblk : 1;
    return nblk < 64 ? 2 : nblk <= 256 ? 4 : 8;
  }
};

// The order in which symv's device teams walk the blocks: Forward from the
// first block column, Backward from the last. A product that follows one in
// the other order over (nearly) the same matrix starts on the blocks that the
// first left in the L2 cache (sytrd alternates them column by column: H100,
// n = 16384, 2.86 -> 2.84 s). Hosts ignore it.
enum class SymvOrder { Forward, Backward };

template <class T, class ExecSpace>
index_t symv_workspace_size(index_t n) {
  constexpr index_t nb = SymvTuning<T, ExecSpace>::nb;
  const index_t nblk = (n + SymvTuning<T, ExecSpace>::max_shift + nb - 1) / nb;
  if constexpr (backends::is_cuda_space_v<ExecSpace>) return n * (nblk + 1);
  // Hosts: an n-vector per thread of the default instance.
  const index_t threads = ExecSpace().concurrency();
  return n * (nblk + 1 > threads ? nblk + 1 : threads);
}

// The partial sums that symv's first launch leaves in its workspace, and how
// a row's are found: A x (row r) = sum_{idx < count(r)} partial(r, idx).
// symv sums them in its last launch; callers that fold the sum into a pass
// of their own (sytrd's column step) take them from symv_partials.
// A row of block row b has one partial per block of its block row (row
// partials) and one per segment of block column b (column partials; the
// diagonal block is in the outermost segment). On hosts every row has one
// partial per thread of the launch (`threads`).
template <class T, class ExecSpace>
struct SymvPartials {
  static constexpr index_t NB = SymvTuning<T, ExecSpace>::nb;
  static constexpr bool device = SymvTuning<T, ExecSpace>::device;  // hosts: per-thread vectors
  // The n x (nblk + 1) workspace as a pointer and leading dimension: kernels
  // that capture this stay small enough for Kokkos's by-value launch (a
  // closure of more than 512 bytes goes through constant memory, and the
  // host then waits for the previous such launch).
  T* work = nullptr;
  index_t ld = 0, nblk = 0, seg = 1;
  index_t shift = 0;  // row r is in block row (r + shift) / NB
  bool lower = true;
  index_t threads = 1;  // hosts

  // Devices. Blocks of block column J that its segments walk (the diagonal one included).
  KOKKOS_INLINE_FUNCTION index_t column_blocks(index_t J) const { return (lower ? nblk - 1 - J : J) + 1; }
  // Slots: lower, block (I, J)'s row partials in J and segment s of block
  // column J in J + 1 + s; upper, segment s in s and block (K, J)'s row
  // partials after them, in J + 1 (segment J may exist).
  KOKKOS_INLINE_FUNCTION index_t row_slot(index_t J) const { return lower ? J : J + 1; }
  KOKKOS_INLINE_FUNCTION index_t column_slot(index_t J, index_t s) const { return lower ? J + 1 + s : s; }
  KOKKOS_INLINE_FUNCTION index_t block_count(index_t b) const {
    return (lower ? b + 1 : nblk - b) + (column_blocks(b) + seg - 1) / seg;
  }
  // The idx-th partial of block row b: its own blocks, then its segments.
  KOKKOS_INLINE_FUNCTION index_t slot(index_t b, index_t idx) const {
    if (lower) return idx;  // own 0..b (row_slot), segments b + 1.. (column_slot)
    const index_t own = nblk - b;
    return idx < own ? row_slot(b + idx) : idx - own;
  }
  KOKKOS_INLINE_FUNCTION index_t count(index_t r) const {
    if constexpr (!device) return threads;
    return block_count((r + shift) / NB);
  }
  KOKKOS_INLINE_FUNCTION T partial(index_t r, index_t idx) const {
    if constexpr (!device) return work[r + idx * ld];
    return work[r + slot((r + shift) / NB, idx) * ld];
  }
};

namespace detail {

// out = beta out + alpha sum; beta = 0 never reads out (y may hold NaN then).
template <class T>
KOKKOS_INLINE_FUNCTION void symv_store(T& out, const T& sum, const T& alpha, const T& beta) {
  out = beta == T(0) ? alpha * sum : beta * out + alpha * sum;
}

template <class T, class ExecSpace>
struct SymvKernels {
  using Tune = SymvTuning<T, ExecSpace>;
  static constexpr int NB = Tune::nb;
  static constexpr bool device = backends::is_cuda_space_v<ExecSpace>;
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;

  Matrix<T, ExecSpace> a;
  Vector<T, ExecSpace> x, y;
  Matrix<T, ExecSpace> work;  // n x (nblk + 1) partial sums
  T alpha{}, beta{};
  index_t n = 0, nblk = 0, seg = 1, nseg = 0;
  index_t shift = 0;  // devices: see device_segment
  bool lower;
  bool backward = false;  // devices: see SymvOrder
  index_t threads = 1;    // hosts: the team's threads, one n-vector of work each
  bool host_sum = false;  // hosts: the team also sums the vectors into y

  // Rows of block row J (the last one may be short).
  KOKKOS_INLINE_FUNCTION index_t block_rows(index_t J) const { return n - J * NB < NB ? n - J * NB : index_t(NB); }
  KOKKOS_INLINE_FUNCTION SymvPartials<T, ExecSpace> partials() const {
    SymvPartials<T, ExecSpace> p;
    p.work = work.data();
    p.ld = n;
    p.nblk = nblk;
    p.seg = seg;
    p.shift = shift;
    p.lower = lower;
    p.threads = threads;
    return p;
  }

  // Host diagonal block J into the thread's vector yt: each stored element
  // once, a(t, j) feeds row t and, mirrored, row j.
  KOKKOS_INLINE_FUNCTION void host_diagonal(const index_t J, T* yt) const {
    const index_t c0 = J * NB;
    const int rows = static_cast<int>(n - c0 < NB ? n - c0 : NB);
    T acc[NB];
    for (int t = 0; t < NB; ++t) acc[t] = T(0);
    for (int j = 0; j < rows; ++j) {
      const T xj = x(c0 + j);
      const int t0 = lower ? j + 1 : 0, t1 = lower ? rows : j;
      T dot = T(0);
      for (int t = t0; t < t1; ++t) {
        const T v = a(c0 + t, c0 + j);
        acc[t] += v * xj;
        dot += conjugate(v) * x(c0 + t);
      }
      acc[j] += T(real_part(a(c0 + j, c0 + j))) * xj + dot;
    }
    for (int t = 0; t < rows; ++t) yt[c0 + t] += acc[t];
  }

  // Host, real scalars: columns c .. c + 7 of A over rows r .. r + len - 1,
  //   w[u] += sum_p A(r + u, c + p) x(c + p),   dots[p] = sum_u A(r + u, c + p) x(r + u):
  // eight columns per pass, so the row partials are loaded and stored once
  // per eight matrix columns (11 streams for 8 columns of data instead of 7
  // for 4: what bounds the in-cache product); an OpenMP SIMD reduction lets
  // the compiler spread the eight dot products over vector lanes.
  KOKKOS_INLINE_FUNCTION void host_eight_columns(index_t r, index_t c, index_t len, T* KOKKOS_RESTRICT w,
                                                 T* dots) const {
    const T* KOKKOS_RESTRICT xr = &x(0) + r;
    const T* KOKKOS_RESTRICT a0 = &a(0, c) + r;
    const T* KOKKOS_RESTRICT a1 = &a(0, c + 1) + r;
    const T* KOKKOS_RESTRICT a2 = &a(0, c + 2) + r;
    const T* KOKKOS_RESTRICT a3 = &a(0, c + 3) + r;
    const T* KOKKOS_RESTRICT a4 = &a(0, c + 4) + r;
    const T* KOKKOS_RESTRICT a5 = &a(0, c + 5) + r;
    const T* KOKKOS_RESTRICT a6 = &a(0, c + 6) + r;
    const T* KOKKOS_RESTRICT a7 = &a(0, c + 7) + r;
    const T x0 = x(c), x1 = x(c + 1), x2 = x(c + 2), x3 = x(c + 3);
    const T x4 = x(c + 4), x5 = x(c + 5), x6 = x(c + 6), x7 = x(c + 7);
    T d0 = T(0), d1 = T(0), d2 = T(0), d3 = T(0), d4 = T(0), d5 = T(0), d6 = T(0), d7 = T(0);
#if defined(_OPENMP) && !defined(__CUDA_ARCH__)
#pragma omp simd reduction(+ : d0, d1, d2, d3, d4, d5, d6, d7)
#endif
    for (index_t u = 0; u < len; ++u) {
      const T xt = xr[u];
      const T v0 = a0[u], v1 = a1[u], v2 = a2[u], v3 = a3[u], v4 = a4[u], v5 = a5[u], v6 = a6[u], v7 = a7[u];
      w[u] += ((v0 * x0 + v1 * x1) + (v2 * x2 + v3 * x3)) + ((v4 * x4 + v5 * x5) + (v6 * x6 + v7 * x7));
      d0 += v0 * xt;
      d1 += v1 * xt;
      d2 += v2 * xt;
      d3 += v3 * xt;
      d4 += v4 * xt;
      d5 += v5 * xt;
      d6 += v6 * xt;
      d7 += v7 * xt;
    }
    dots[0] = d0;
    dots[1] = d1;
    dots[2] = d2;
    dots[3] = d3;
    dots[4] = d4;
    dots[5] = d5;
    dots[6] = d6;
    dots[7] = d7;
  }

  // Host, real scalars, lower triangle: block column J as one pass per eight
  // columns over all their stored rows, the diagonal block's included, so
  // each column is one unit-stride stream from its diagonal down (the
  // diagonal block on its own was 128 short column streams the prefetchers
  // missed). Rows c0.. and the dot of each column (its rows below it) add
  // into the thread's vector yt.
  KOKKOS_INLINE_FUNCTION void host_lower_block_column(const index_t J, T* KOKKOS_RESTRICT yt) const {
    const index_t c0 = J * NB;
    const int cols = static_cast<int>(n - c0 < NB ? n - c0 : NB);
    T* KOKKOS_RESTRICT wr = yt + c0;
    const auto store_dot = [&](int j, T dot) { wr[j] += dot; };
    int j = 0;
    for (; j + 8 <= cols; j += 8) {
      // The 8 x 8 triangle at the top of the group, entry by entry.
      T dots[8];
      for (int p = 0; p < 8; ++p) {
        const index_t c = c0 + j + p;
        const T xc = x(c);
        T dot = T(0);
        wr[j + p] += a(c, c) * xc;
        for (int r = p + 1; r < 8; ++r) {
          const T v = a(c0 + j + r, c);
          wr[j + r] += v * xc;
          dot += v * x(c0 + j + r);
        }
        dots[p] = dot;
      }
      // The group's rows below it, eight columns per pass.
      T d[8];
      host_eight_columns(c0 + j + 8, c0 + j, n - (c0 + j + 8), wr + j + 8, d);
      for (int p = 0; p < 8; ++p) store_dot(j + p, dots[p] + d[p]);
    }
    for (; j < cols; ++j) {  // the columns past the last group of eight
      const index_t c = c0 + j, len = n - c - 1;  // rows c + 1 .. n - 1
      const T xc = x(c);
      const T* KOKKOS_RESTRICT column = &a(0, c) + c + 1;
      const T* KOKKOS_RESTRICT xr = &x(0) + c + 1;
      T* KOKKOS_RESTRICT w = wr + j + 1;
      T dot = T(0);
      wr[j] += a(c, c) * xc;
#if defined(_OPENMP) && !defined(__CUDA_ARCH__)
#pragma omp simd reduction(+ : dot)
#endif
      for (index_t u = 0; u < len; ++u) {
        w[u] += column[u] * xc;
        dot += column[u] * xr[u];
      }
      store_dot(j, dot);
    }
  }


  // ---- devices: team (J, s) walks segment s of block column J ----------------
  // Lower: blocks I = J + s S .. (the diagonal block first in segment 0);
  // upper: K = s S .. <= J (the diagonal block last). Blocks are counted in
  // shifted coordinates, row and column `shift` + r for row r (a `shift`
  // rows and columns before the matrix that are never read), so that a
  // block's rows start on a 128-byte line: a stage's piece of a column (256
  // bytes of double) then spans 2 lines, not 3, and no line is shared by two
  // teams (sytrd's trailing matrices start anywhere; H200, n = 16384: 304 us
  // aligned, 350 us one row off; with 32-byte alignment only, the columns of
  // sytrd at n = 32768 whose grid was off a line by 32 or 96 bytes took
  // 1.39 ms against 1.14 ms, and read 10 % more from memory). The segment's rows are one stream that passes through team
  // scratch in stages of 32 rows, copied asynchronously `stages` deep
  // (backends/async_copy.hpp): a stage's loads are in flight while the one
  // before is summed, and no registers wait for them. Warp w owns columns
  // 8w .. 8w + 7 and lane l row l of every stage: a thread keeps 8 column
  // partials over the segment (reduced once, by shuffles) and forms one row
  // partial per stage, which one warp sums over the warps after the barrier
  // that opens the next stage. The matrix is read once: its copies ask L2 to
  // evict it first. A diagonal block's unstored triangle is
  // zero-filled instead of read, so it adds nothing; its diagonal counts in
  // the row partials only. (Diagonal blocks in a launch of their own cost
  // sytrd 8-10 us a column at m = 4450; register-loaded blocks, 16 columns a
  // thread, reached 35 / 62 / 78 % of the copy bandwidth at n = 4096 / 8192
  // / 16384, and a diagonal block raised them to 128 registers a thread.)
  KOKKOS_INLINE_FUNCTION void device_segment(const Team& team, index_t J, index_t s) const {
    constexpr int R = Tune::stage_rows, W = Tune::warps, S = Tune::stages, CPT = NB / W;
    static_assert(R == 32 && NB % W == 0 && NB % R == 0, "symv: a stage's rows are a warp's lanes");
    const index_t first = lower ? J + s * seg : s * seg;
    const index_t end_all = lower ? nblk : J + 1;
    if (first >= end_all) return;
    const index_t last = first + seg < end_all ? first + seg : end_all;  // exclusive
    const SymvPartials<T, ExecSpace> p = partials();
    T* const tile = static_cast<T*>(team.team_scratch(0).get_shmem_aligned(S * NB * R * sizeof(T), 16));
    T* const rowpart = static_cast<T*>(team.team_scratch(0).get_shmem_aligned(2 * W * R * sizeof(T), 16));
    const int rank = team.team_rank(), lane = rank % R, w = rank / R;
    // Shifted coordinates: block column J's columns [c0, c0 + cols), the segment's rows [row_begin, row_end).
    const index_t shifted_n = n + shift;
    const index_t c0 = J * NB;
    const int cols = static_cast<int>(shifted_n - c0 < NB ? shifted_n - c0 : NB);
    const int first_col = static_cast<int>(shift > c0 ? shift - c0 : 0);  // columns before it are not A's
    const index_t row_begin = first * NB, row_end = last * NB < shifted_n ? last * NB : shifted_n;
    const int stages = static_cast<int>((row_end - row_begin + R - 1) / R);
    const index_t row_slot = p.row_slot(J);
    // The stages [diagonal_begin, diagonal_end) hold the diagonal block's rows.
    const int diagonal_begin = static_cast<int>((c0 - row_begin) / R);
    const int diagonal_end = diagonal_begin + (cols + R - 1) / R;
    const auto diagonal_stage = [&](int st) { return st >= diagonal_begin && st < diagonal_end; };
    // A shifted row of this thread's stage st is A's row (row - shift) if in [shift, row_end).
    const auto stage_row = [&](int st) { return row_begin + index_t(st) * R + lane; };
    const auto row_of_a = [&](index_t row) { return row >= shift && row < row_end; };
    // Stage st -> buffer st % S, column-major with R rows (lane-contiguous
    // reads). Thread (w, l) copies row l of columns w, w + W, ...: few
    // instructions a copy (the copy loop's index arithmetic cost 6-12 % of
    // the bandwidth when it went through the view's indexing).
    const T* const a_data = a.data();
    const index_t lda = a.stride(1);
    const backends::L2Policy once = backends::l2_evict_first();
    const auto copy_stage = [&](int st) {
      T* const buf = tile + (st % S) * NB * R + w * R + lane;
      const index_t row = stage_row(st);
      const bool row_valid = row_of_a(row);
      const T* const src = a_data + (row - shift) + (c0 - shift + w) * lda;
      if (!diagonal_stage(st)) {
        for (int i = 0; i < CPT; ++i) {
          const int col = w + W * i;
          const bool valid = row_valid && col < cols && col >= first_col;
          backends::async_copy(buf + i * W * R, valid ? src + i * W * lda : a_data, valid, once);
        }
      } else {  // the stored triangle only
        const int d = static_cast<int>(row - c0);  // the row within the diagonal block
        for (int i = 0; i < CPT; ++i) {
          const int col = w + W * i;
          const bool valid = row_valid && col < cols && col >= first_col && (lower ? d >= col : d <= col);
          backends::async_copy(buf + i * W * R, valid ? src + i * W * lda : a_data, valid, once);
        }
      }
    };
    // The row partials of stage st (rows of block row stage_row(st) / NB).
    const auto store_row_partials = [&](int st) {
      const T* const part = rowpart + (st & 1) * W * R;
      T total = part[lane];
      for (int g = 1; g < W; ++g) total += part[g * R + lane];
      const index_t row = stage_row(st);
      if (row_of_a(row)) work(row - shift, row_slot) = total;
    };
    T xj[CPT], colacc[CPT];
    for (int j = 0; j < CPT; ++j) {
      const int c = w * CPT + j;
      xj[j] = c < cols && c >= first_col ? x(c0 + c - shift) : T(0);
      colacc[j] = T(0);
    }
    for (int q = 0; q < S - 1; ++q) {
      if (q < stages) copy_stage(q);
      backends::async_copy_commit();
    }
    for (int st = 0; st < stages; ++st) {
      backends::async_copy_wait<S - 2>();
      team.team_barrier();  // stage st landed; stage st - 1's buffer is free
      if (st > 0 && w == st % W) store_row_partials(st - 1);
      if (st + S - 1 < stages) copy_stage(st + S - 1);
      backends::async_copy_commit();
      const T* const buf = tile + (st % S) * NB * R;
      const index_t row = stage_row(st);
      const T xr = row_of_a(row) ? x(row - shift) : T(0);
      T rowsum = T(0);
      if (!diagonal_stage(st)) {  // the same for the whole team
        for (int j = 0; j < CPT; ++j) {
          const T v = buf[(w * CPT + j) * R + lane];
          rowsum += v * xj[j];
          colacc[j] += conjugate(v) * xr;
        }
      } else {  // diagonal block: its diagonal once, in the row partial
        for (int j = 0; j < CPT; ++j) {
          const T v = buf[(w * CPT + j) * R + lane];
          if (row - c0 == w * CPT + j) {
            rowsum += T(real_part(v)) * xj[j];
          } else {
            rowsum += v * xj[j];
            colacc[j] += conjugate(v) * xr;
          }
        }
      }
      rowpart[(st & 1) * W * R + w * R + lane] = rowsum;
    }
    team.team_barrier();
    if (w == stages % W) store_row_partials(stages - 1);
    // Column partials: the sum over the segment's rows -> the segment's slot.
    const index_t slot = p.column_slot(J, s);
    for (int j = 0; j < CPT; ++j) {
      const T total = backends::warp_sum(colacc[j], 1, 32);
      const int c = w * CPT + j;
      if (lane == 0 && c < cols && c >= first_col) work(c0 + c - shift, slot) = total;
    }
  }

  // ---- devices, the first launch: team (J, s) walks segment s of block
  // column J (device_segment).
  struct BlocksTag {};
  KOKKOS_INLINE_FUNCTION void operator()(BlocksTag, const Team& team) const {
    if constexpr (device) {
      backends::allow_dependent_launch();  // symv's sums (sum_row_partials) may start
      const index_t t = backward ? team.league_size() - 1 - team.league_rank() : team.league_rank();
      device_segment(team, t / nseg, t % nseg);
    }
  }

  // ---- hosts: block column J into the thread's vector yt, its diagonal
  // block first.
  KOKKOS_INLINE_FUNCTION void host_block_column(const index_t J, T* KOKKOS_RESTRICT yt) const {
    if constexpr (!is_complex_v<T>) {
      if (lower) return host_lower_block_column(J, yt);  // the diagonal block and the rows below in one stream
    }
    host_diagonal(J, yt);
    // Lower: blocks J+1 .. nblk-1 below the diagonal; upper: 0 .. J-1 above it.
    const index_t first = lower ? J + 1 : 0, last = lower ? nblk : J;
    if (first >= last) return;
    const index_t c0 = J * NB;
    const int cols = static_cast<int>(block_rows(J));
    // Whole columns (long unit-stride streams the prefetchers follow),
    // the column's dot product in four independent sums (not bound by the
    // FMA latency chain).
    const index_t r_begin = first * NB, r_end = last * NB < n ? last * NB : n;
    const index_t len = r_end - r_begin;
    T* KOKKOS_RESTRICT wr = yt + r_begin;
    const T* KOKKOS_RESTRICT xr = &x(r_begin);
    // Real scalars: eight columns per pass (host_eight_columns).
    int j = 0;
    if constexpr (!is_complex_v<T>) {
      for (; j + 8 <= cols; j += 8) {
        T d[8];
        host_eight_columns(r_begin, c0 + j, len, wr, d);
        for (int p = 0; p < 8; ++p) yt[c0 + j + p] += d[p];
      }
    }
    // Four columns per pass (complex scalars, and at most one group of four
    // left in a real block column): 4 x 4 independent dot-product lanes.
    for (; j + 4 <= cols; j += 4) {
      const T* KOKKOS_RESTRICT col[4];
      T xc[4];
      T dot[4][4] = {};
      for (int c = 0; c < 4; ++c) {
        col[c] = &a(r_begin, c0 + j + c);
        xc[c] = x(c0 + j + c);
      }
      index_t t = 0;
      for (; t + 4 <= len; t += 4)
        for (int u = 0; u < 4; ++u) {
          T sum = wr[t + u];
          const T xt = xr[t + u];
          for (int c = 0; c < 4; ++c) {
            const T v = col[c][t + u];
            sum += v * xc[c];
            dot[c][u] += conjugate(v) * xt;
          }
          wr[t + u] = sum;
        }
      for (; t < len; ++t)
        for (int c = 0; c < 4; ++c) {
          wr[t] += col[c][t] * xc[c];
          dot[c][0] += conjugate(col[c][t]) * xr[t];
        }
      for (int c = 0; c < 4; ++c)
        yt[c0 + j + c] += (dot[c][0] + dot[c][1]) + (dot[c][2] + dot[c][3]);
    }
    for (; j < cols; ++j) {
      const T xj = x(c0 + j);
      const T* KOKKOS_RESTRICT column = &a(r_begin, c0 + j);
      T dot = T(0);
      for (index_t t = 0; t < len; ++t) {
        wr[t] += column[t] * xj;
        dot += conjugate(column[t]) * xr[t];
      }
      yt[c0 + j] += dot;
    }
  }

  // Hosts, the whole product in one parallel region: the team's threads
  // zero their vectors, walk their share of the block columns and (for
  // symv) sum the vectors by rows after a barrier. (Dealing the columns out
  // through an atomic counter ran at the same speed, also with two
  // processes sharing the two cores, but made the sums' order depend on
  // timing.)
  struct HostTag {};
  KOKKOS_INLINE_FUNCTION void operator()(HostTag, const Team& team) const {
    const int rank = team.team_rank();
    T* const yt = work.data() + rank * n;
    for (index_t r = 0; r < n; ++r) yt[r] = T(0);
    // Block columns longest first, dealt out in a snake (0, 1, .., T-1,
    // T-1, .., 0, 0, 1, ..): the shares come out within one column of each
    // other, and a given thread count always sums in the same order.
    for (index_t k = 0; k < nblk; ++k) {
      const index_t lap = k % (2 * threads);
      if ((lap < threads ? lap : 2 * threads - 1 - lap) == rank) host_block_column(lower ? k : nblk - 1 - k, yt);
    }
    if (!host_sum) return;
    team.team_barrier();
    const index_t chunk = (n + threads - 1) / threads;
    const index_t r1 = (rank + 1) * chunk < n ? (rank + 1) * chunk : n;
    for (index_t r = rank * chunk; r < r1; ++r) {
      T sum = T(0);
      for (index_t q = 0; q < threads; ++q) sum += work.data()[r + q * n];
      store(r, sum);
    }
  }

  // ---- hosts: the team's sum into y (devices: SymvRowSums) ----------------
  KOKKOS_INLINE_FUNCTION void store(index_t r, const T& sum) const { symv_store(y(r), sum, alpha, beta); }
};

// Devices, symv's last launch: y(r) = beta y(r) + alpha (row r's partials
// summed in SymvPartials' order by backends::sum_row_partials).
template <class T, class ExecSpace>
struct SymvRowSums {
  using value_type = T;
  SymvPartials<T, ExecSpace> p;
  T* y;  // contiguous (Vector is LayoutLeft)
  T alpha, beta;
  KOKKOS_INLINE_FUNCTION index_t count(index_t r) const { return p.count(r); }
  KOKKOS_INLINE_FUNCTION T partial(index_t r, index_t idx) const { return p.partial(r, idx); }
  KOKKOS_INLINE_FUNCTION void store(index_t r, const T& sum) const { symv_store(y[r], sum, alpha, beta); }
};

// symv's kernels set up for A, x and work (arguments checked; y, alpha and
// beta are left to the caller).
template <class T, class ExecSpace>
SymvKernels<T, ExecSpace> symv_kernels(const ExecSpace& space, Uplo uplo, const Matrix<T, ExecSpace>& a,
                                       const Vector<T, ExecSpace>& x, const Vector<T, ExecSpace>& work,
                                       index_t segment) {
  using K = SymvKernels<T, ExecSpace>;
  (void)space;  // hosts: the team's size
  const index_t n = a.extent(0);
  if (static_cast<index_t>(a.extent(1)) != n) throw InvalidArgument("A", "symv: A must be square");
  if (static_cast<index_t>(x.extent(0)) != n)
    throw InvalidArgument("x", "symv: x needs n = " + std::to_string(n) + " entries");
  if (static_cast<index_t>(work.extent(0)) < symv_workspace_size<T, ExecSpace>(n))
    throw InvalidArgument("work", "symv: needs symv_workspace_size(n) = " +
                                      std::to_string(symv_workspace_size<T, ExecSpace>(n)) + " entries");
  K k;
  k.a = a;
  k.x = x;
  k.n = n;
  if constexpr (K::device) {
    // Shift the block grid where all columns share one alignment: to the
    // 128-byte line, or the largest of 64 and 32 bytes that they share.
    const auto address = reinterpret_cast<std::uintptr_t>(a.data());
    const index_t ld_bytes = a.stride(1) * index_t(sizeof(T));
    for (index_t align = SymvTuning<T, ExecSpace>::line; align >= 32 && address % sizeof(T) == 0; align /= 2)
      if (ld_bytes % align == 0) {
        k.shift = index_t(address % align / sizeof(T));
        break;
      }
  }
  k.nblk = (n + k.shift + K::NB - 1) / K::NB;
  k.lower = uplo == Uplo::Lower;
  k.seg = SymvTuning<T, ExecSpace>::segment(k.nblk);
  if (segment > 0 && K::device)
    k.seg = segment < SymvTuning<T, ExecSpace>::max_segment ? segment : SymvTuning<T, ExecSpace>::max_segment;
  k.nseg = (k.nblk + k.seg - 1) / k.seg;  // the longest block column has nblk blocks
  if constexpr (K::device) {
    k.work = Matrix<T, ExecSpace>(work.data(), n, k.nblk + 1);
  } else if (n > 0) {
    // Hosts: one team of the instance's threads, as many as have an n-vector.
    using Host = Kokkos::TeamPolicy<ExecSpace, typename K::HostTag>;
    const index_t vectors = static_cast<index_t>(work.extent(0)) / n;
    index_t threads = Host(space, 1, 1).team_size_max(k, Kokkos::ParallelForTag());
    if (threads > space.concurrency()) threads = space.concurrency();
    k.threads = threads < vectors ? threads : vectors;
    k.work = Matrix<T, ExecSpace>(work.data(), n, k.threads);
  }
  return k;
}

// Devices, the first launch: every block's contribution into k.work.
// Hosts: the whole product when k.host_sum, else the threads' vectors.
template <class T, class ExecSpace>
void symv_launch(const ExecSpace& space, const SymvKernels<T, ExecSpace>& k) {
  using K = SymvKernels<T, ExecSpace>;
  using Tune = SymvTuning<T, ExecSpace>;
  if constexpr (K::device) {
    using Policy = Kokkos::TeamPolicy<ExecSpace, typename K::BlocksTag, Kokkos::Schedule<Kokkos::Dynamic>,
                                      Kokkos::LaunchBounds<Tune::team, Tune::teams_per_sm>>;
    Kokkos::parallel_for("keig::symv::blocks",
                         Policy(space, k.nblk * k.nseg, Tune::team).set_scratch_size(0, Kokkos::PerTeam(Tune::scratch)),
                         k);
  } else {
    using Host = Kokkos::TeamPolicy<ExecSpace, typename K::HostTag>;
    Kokkos::parallel_for("keig::symv::host", Host(space, 1, k.threads), k);
  }
}

}  // namespace detail

// The partial sums of A x (symv's launches but the last; see SymvPartials),
// for callers that fold their sum into a pass of their own. work: at least
// symv_workspace_size<T, ExecSpace>(n) entries; the result refers to it.
// One launch, asynchronous on `space`.
template <class T, class ExecSpace>
SymvPartials<T, ExecSpace> symv_partials(const ExecSpace& space, Uplo uplo, const Matrix<T, ExecSpace>& a,
                                         const Vector<T, ExecSpace>& x, const Vector<T, ExecSpace>& work,
                                         index_t segment = 0, SymvOrder order = SymvOrder::Forward) {
  auto k = detail::symv_kernels<T, ExecSpace>(space, uplo, a, x, work, segment);
  k.backward = order == SymvOrder::Backward;
  if (k.n > 0) detail::symv_launch<T, ExecSpace>(space, k);
  return k.partials();
}

// y = alpha A x + beta y; A is n x n Hermitian with its `uplo` triangle
// referenced; work has at least symv_workspace_size<T, ExecSpace>(n) entries.
// `segment`: blocks per team on devices (0: SymvTuning's choice; a tuning
// knob for benchmarks and tests). Two launches on devices, one on hosts,
// asynchronous on `space`.
template <class T, class ExecSpace>
void symv(const ExecSpace& space, Uplo uplo, nondeduced_t<T> alpha, const Matrix<T, ExecSpace>& a,
          const Vector<T, ExecSpace>& x, nondeduced_t<T> beta, const Vector<T, ExecSpace>& y,
          const Vector<T, ExecSpace>& work, index_t segment = 0) {
  using K = detail::SymvKernels<T, ExecSpace>;
  K k = detail::symv_kernels<T, ExecSpace>(space, uplo, a, x, work, segment);
  const index_t n = k.n;
  if (static_cast<index_t>(y.extent(0)) != n)
    throw InvalidArgument("y", "symv: y needs n = " + std::to_string(n) + " entries");
  if (n == 0) return;
  k.y = y;
  k.alpha = alpha;
  k.beta = beta;
  k.host_sum = true;
  // Devices: the short block columns first (the lower triangle's last ones,
  // the upper's first), measured faster; likely because teams of a few
  // blocks keep few loads in flight and, last, left the memory idle at the
  // launch's end. Lower backward against forward, 20 products queued, n = 8192:
  // H100 103.5 against 104.4 us, H200 78.1-78.8 against 80.0-80.7 us (blocks
  // launch alone 75.2-75.9 against 76.6-77.5); equal at 16384 and 32768 within
  // their spread; upper backward was slower (H200 8192: 81.1 -> 82.6 us).
  k.backward = k.lower;
  detail::symv_launch<T, ExecSpace>(space, k);
  if constexpr (K::device) {
#if defined(KOKKOS_ENABLE_CUDA)
    backends::sum_row_partials(space, n, detail::SymvRowSums<T, ExecSpace>{k.partials(), y.data(), alpha, beta});
#endif
  }
}

}  // namespace keig::stages
