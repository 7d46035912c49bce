// stages/symv: y = alpha A x + beta y for Hermitian A stored in one triangle,
// reading every stored element from memory exactly once (seed 001).
//
// The matrix is cut into NB x NB blocks. Three launches, as in seed 001 §3:
//  1. diagonal blocks: one team per block mirrors the stored triangle in team
//     scratch and forms A_JJ x_J;
//  2. off-diagonal blocks: one team per segment of S consecutive blocks of a
//     block column, travelling vertically (column-major friendly, seed 001
//     Fig. 1b). Every element a of block A_IJ contributes a x_J to y_I (row
//     partial, reduced per block) and conj(a) x_I to y_J (column partial, kept
//     in registers over the whole segment and reduced once at its end: seed 001
//     "using more registers", scratch only for the final reduction);
//  3. a reduction through global memory sums the partials: y = beta y + alpha sum.
// Partials live in a caller-provided n x nblk workspace (symv_workspace_size)
// with one slot per (row, block) contribution, so no atomics are needed and the
// result is deterministic. Any n: partial edge blocks are guarded, never padded.
//
// The same source runs on host spaces, where a team is one thread that forms
// its diagonal block and then walks its whole block column (unit-stride
// inner loops over rows): two parallel regions per product.
#pragma once

#include <Kokkos_Core.hpp>
#include <type_traits>

#include "keig/backends/context.hpp"
#include "keig/errors.hpp"
#include "keig/options.hpp"
#include "keig/views/matrix.hpp"

namespace keig::stages {

// Block size, column groups per block (device) and the segment length policy.
template <class T, class ExecSpace>
struct SymvTuning {
  static constexpr bool device = backends::is_cuda_space_v<ExecSpace>;
  // 16-byte scalars use 32 x 32 blocks on devices so team scratch stays < 48 KB.
  static constexpr int nb = device ? (sizeof(T) > 8 ? 32 : 64) : 128;
  static constexpr int groups = device ? 4 : 1;  // threads per block row
  static constexpr int columns_per_thread = nb / groups;
  // Row partials wait in scratch for `flush` blocks between two barriers;
  // a segment (one column-partial reduction) may span many flushes.
  static constexpr int flush = 16;
  static constexpr int max_segment = 256;
  // Scratch columns: `flush` blocks of row partials (groups x flush) or the NB column partials.
  static constexpr int scratch_columns = groups * flush > nb ? groups * flush : nb;
  // Blocks per off-diagonal segment. Device: long segments amortize the
  // column reduction and the team start, short ones give enough teams. H200
  // sweep (keig-bench --symv-segments, double): n = 4096: 8 best (33 % of
  // copy bandwidth; 16: 29 %); n = 8192..32768: 16 best (58 / 76 / 84 %),
  // 1..4 and 32..128 slower. Host: whole block columns (long streams).
  static index_t segment(index_t nblk) {
    if (!backends::is_cuda_space_v<ExecSpace>) return nblk > 0 ? nblk : 1;
    return nblk <= 64 ? 8 : 16;
  }
};

template <class T, class ExecSpace>
index_t symv_workspace_size(index_t n) {
  constexpr index_t nb = SymvTuning<T, ExecSpace>::nb;
  const index_t nblk = (n + nb - 1) / nb;
  return n * (nblk > 0 ? nblk : 1);
}

// The partial sums that symv's first launches leave in its workspace, and
// how a row's are found: A x (row r) = sum_{idx < count(r)} partial(r, idx).
// symv sums them in its last launch; callers that fold the sum into a pass
// of their own (sytrd's column step) take them from symv_partials.
template <class T, class ExecSpace>
struct SymvPartials {
  static constexpr index_t NB = SymvTuning<T, ExecSpace>::nb;
  // The n x nblk workspace as a pointer and leading dimension: kernels that
  // capture this stay small enough for Kokkos's by-value launch (a closure
  // of more than 512 bytes goes through constant memory, and the host then
  // waits for the previous such launch).
  T* work = nullptr;
  index_t ld = 0, nblk = 0, seg = 1;
  bool lower = true;

  // Partials of a row of block row b: the blocks of its own block row first
  // (idx < b + 1 lower, nblk - b upper), then one per segment on the other
  // side of the diagonal; slot is the work column of the idx-th.
  KOKKOS_INLINE_FUNCTION index_t block_count(index_t b) const {
    return lower ? b + 1 + (nblk - b - 1 + seg - 1) / seg : nblk - b + (b + seg - 1) / seg;
  }
  KOKKOS_INLINE_FUNCTION index_t slot(index_t b, index_t idx) const {
    const index_t own = lower ? b + 1 : nblk - b;
    if (idx < own) return lower ? idx : b + idx;         // blocks (b, K) on the diagonal's side
    return (lower ? b + 1 : 0) + (idx - own) * seg;      // segments below (lower) / above (upper) block b
  }
  KOKKOS_INLINE_FUNCTION index_t count(index_t r) const { return block_count(r / NB); }
  KOKKOS_INLINE_FUNCTION T partial(index_t r, index_t idx) const { return work[r + slot(r / NB, idx) * ld]; }
};

namespace detail {

// No work before the diagonal blocks.
struct SymvNoPrologue {
  template <class Team>
  KOKKOS_INLINE_FUNCTION void operator()(const Team&, index_t, index_t) const {}
};

template <class T, class ExecSpace>
struct SymvKernels {
  using Tune = SymvTuning<T, ExecSpace>;
  static constexpr int NB = Tune::nb;
  static constexpr int Q = Tune::groups;
  static constexpr int C = Tune::columns_per_thread;
  static constexpr bool device = backends::is_cuda_space_v<ExecSpace>;
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using Scratch = Kokkos::View<T**, Kokkos::LayoutLeft, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  Matrix<T, ExecSpace> a;
  Vector<T, ExecSpace> x, y;
  Matrix<T, ExecSpace> work;  // n x nblk partial sums
  T alpha{}, beta{};
  index_t n = 0, nblk = 0, seg = 1, nseg = 0;
  bool lower;

  // Rows of block row J (the last one may be short).
  KOKKOS_INLINE_FUNCTION index_t block_rows(index_t J) const { return n - J * NB < NB ? n - J * NB : index_t(NB); }

  // ---- kernel 1: diagonal blocks (hosts: host_diagonal inside the block
  // column's team; launched through SymvDiagonal). A launch of its own on
  // devices: as the first teams of the off-diagonal launch the diagonal code
  // raised that kernel to 128 registers a thread, and symv fell from 74 % to
  // 60 % of the copy bandwidth at n = 16384. Block J = league rank;
  // before(team, first row, rows) runs once the block's loads are in
  // flight, and x is read after the team barrier that follows it
  // (symv_partials' prologue).
  template <class Before>
  KOKKOS_INLINE_FUNCTION void diagonal_block(const Team& team, const Before& before) const {
    const index_t J = team.league_rank();
    const index_t c0 = J * NB;
    const int rows = static_cast<int>(block_rows(J));
    if constexpr (device) {
      // Mirror the stored triangle into scratch (each stored element read once).
      Scratch tile(team.team_scratch(0), NB + 1, NB);
      const int rank = team.team_rank();
      const int t = rank % NB, q = rank / NB;
      // All C loads first: with the scratch stores in between, each load
      // waited for the one before (11 us for the diagonal blocks at n = 4450).
      T v[C];
      for (int jj = 0; jj < C; ++jj) {
        const int j = q + Q * jj;
        v[jj] = t < rows && j < rows && (lower ? t >= j : t <= j) ? a(c0 + t, c0 + j) : T(0);
      }
      before(team, c0, index_t(rows));
      for (int jj = 0; jj < C; ++jj) {
        const int j = q + Q * jj;
        if (t < rows && j < rows && (lower ? t >= j : t <= j)) {
          tile(t, j) = t == j ? T(real_part(v[jj])) : v[jj];
          if (t != j) tile(j, t) = conjugate(v[jj]);
        }
      }
      team.team_barrier();
      T sum = T(0);
      if (t < rows)
        for (int jj = 0; jj < C; ++jj) {
          const int j = q * C + jj;
          if (j < rows) sum += tile(t, j) * x(c0 + j);
        }
      reduce_rows_and_store(team, t, q, sum, rows, c0, J);
    }
  }

  // Host diagonal block J: each stored element once, a(t, j) feeds row t and,
  // mirrored, row j. On hosts the off-diagonal teams call it first, so a
  // product costs two parallel regions instead of three.
  KOKKOS_INLINE_FUNCTION void host_diagonal(const index_t J) const {
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
    for (int t = 0; t < rows; ++t) work(c0 + t, J) = acc[t];
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
  // missed). Row partials of rows c0.. go to slot J (the diagonal block's
  // rows included); the dot of column c (its rows below c) to slot J + 1, or,
  // in the last block column, into its row partial once no later column of
  // the block adds to it (later columns start below c).
  KOKKOS_INLINE_FUNCTION void host_lower_block_column(const index_t J) const {
    const index_t c0 = J * NB;
    const int cols = static_cast<int>(n - c0 < NB ? n - c0 : NB);
    const bool last_block = J + 1 >= nblk;
    T* KOKKOS_RESTRICT wr = &work(c0, J);
    for (index_t t = 0; t < n - c0; ++t) wr[t] = T(0);
    const auto store_dot = [&](int j, T dot) {
      if (last_block) wr[j] += dot;
      else work(c0 + j, J + 1) = dot;
    };
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

  // Sum of the Q per-thread partials of each row (device), stored as slot K.
  KOKKOS_INLINE_FUNCTION void reduce_rows_and_store(const Team& team, int t, int q, T sum, int rows, index_t r0,
                                                    index_t K) const {
    Scratch part(team.team_scratch(0), NB + 1, NB);  // reuses the tile's scratch
    team.team_barrier();
    part(t, q) = sum;
    team.team_barrier();
    if (q == 0 && t < rows) {
      T total = part(t, 0);
      for (int g = 1; g < Q; ++g) total += part(t, g);
      work(r0 + t, K) = total;
    }
  }

  // ---- kernel 2: off-diagonal segments ------------------------------------
  // Team (J, s) handles the blocks of block column J (lower) or block column
  // J (upper, blocks above the diagonal) in segment s.
  struct OffDiagonalTag {};
  KOKKOS_INLINE_FUNCTION void operator()(OffDiagonalTag, const Team& team) const {
    const index_t J = team.league_rank() / nseg;
    const index_t s = team.league_rank() % nseg;
    // Lower: blocks I = J+1+s*seg ... below the diagonal; upper: K = s*seg ... < J above it.
    const index_t first = lower ? J + 1 + s * seg : s * seg;
    const index_t end_all = lower ? nblk : J;
    if constexpr (!device && !is_complex_v<T>) {
      if (lower) return host_lower_block_column(J);  // the diagonal block and the rows below in one stream
    }
    if constexpr (!device) host_diagonal(J);  // host: nseg == 1, one team per block column
    if (first >= end_all) return;
    const index_t last = first + seg < end_all ? first + seg : end_all;  // exclusive
    const index_t c0 = J * NB;
    const int cols = static_cast<int>(n - c0 < NB ? n - c0 : NB);
    if constexpr (device) {
      const int rank = team.team_rank();
      const int t = rank % NB, q = rank / NB;
      // Row partials of all the segment's blocks wait in scratch, so the
      // block loop has no barrier; both reductions happen once per segment.
      Scratch part(team.team_scratch(0), NB + 1, Tune::scratch_columns);
      T xj[C], colacc[C];
      for (int jj = 0; jj < C; ++jj) {
        const int j = q * C + jj;
        xj[jj] = j < cols ? x(c0 + j) : T(0);
        colacc[jj] = T(0);
      }
      // Blocks in chunks of `flush` (the row partials' scratch capacity); the
      // column partials stay in registers over the whole segment.
      for (index_t chunk = first; chunk < last; chunk += Tune::flush) {
        const index_t chunk_end = chunk + Tune::flush < last ? chunk + Tune::flush : last;
        for (index_t I = chunk; I < chunk_end; ++I) {
          const index_t r0 = I * NB;
          const int rows = static_cast<int>(n - r0 < NB ? n - r0 : NB);
          T rowsum = T(0);
          if (t < rows) {
            const T xr = x(r0 + t);
            T v[C];
            for (int jj = 0; jj < C; ++jj) {  // C independent loads in flight
              const int j = q * C + jj;
              v[jj] = j < cols ? a(r0 + t, c0 + j) : T(0);
            }
            for (int jj = 0; jj < C; ++jj) {
              rowsum += v[jj] * xj[jj];
              colacc[jj] += conjugate(v[jj]) * xr;
            }
          }
          part(t, q + Q * static_cast<int>(I - chunk)) = rowsum;
        }
        team.team_barrier();
        // Row partial of block (I, J) -> slot J of the rows of block I.
        const int blocks = static_cast<int>(chunk_end - chunk);
        for (int k = rank; k < blocks * NB; k += NB * Q) {
          const int b = k / NB, r = k % NB;
          const index_t row = (chunk + b) * NB + r;
          if (row < n) {
            T total = part(r, Q * b);
            for (int g = 1; g < Q; ++g) total += part(r, g + Q * b);
            work(row, J) = total;
          }
        }
        team.team_barrier();
      }
      // Column partials: reduce over the NB rows once per segment.
      for (int jj = 0; jj < C; ++jj) part(t, q * C + jj) = colacc[jj];
      team.team_barrier();
      if (rank < cols) {
        T total = T(0);
        for (int r = 0; r < NB; ++r) total += part(r, rank);
        work(c0 + rank, first) = total;  // slot = first block of the segment
      }
    } else {
      // Host: one team per block column walks whole columns (long unit-stride
      // streams the prefetchers follow), accumulating the row partials in
      // this column's slot and the column partial in four independent dot
      // products (not bound by the FMA latency chain).
      const index_t r_begin = first * NB, r_end = last * NB < n ? last * NB : n;
      const index_t len = r_end - r_begin;
      T* KOKKOS_RESTRICT wr = &work(r_begin, J);
      const T* KOKKOS_RESTRICT xr = &x(r_begin);
      for (index_t t = 0; t < len; ++t) wr[t] = T(0);
      // Real scalars: eight columns per pass (host_eight_columns).
      int j = 0;
      if constexpr (!is_complex_v<T>) {
        for (; j + 8 <= cols; j += 8) {
          T d[8];
          host_eight_columns(r_begin, c0 + j, len, wr, d);
          for (int p = 0; p < 8; ++p) work(c0 + j + p, first) = d[p];
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
          work(c0 + j + c, first) = (dot[c][0] + dot[c][1]) + (dot[c][2] + dot[c][3]);
      }
      for (; j < cols; ++j) {
        const T xj = x(c0 + j);
        const T* KOKKOS_RESTRICT column = &a(r_begin, c0 + j);
        T dot = T(0);
        for (index_t t = 0; t < len; ++t) {
          wr[t] += column[t] * xj;
          dot += conjugate(column[t]) * xr[t];
        }
        work(c0 + j, first) = dot;
      }
    }
  }

  // ---- kernel 3: sum the partials (in SymvPartials' order) ----------------
  KOKKOS_INLINE_FUNCTION SymvPartials<T, ExecSpace> partials() const {
    SymvPartials<T, ExecSpace> p;
    p.work = work.data();
    p.ld = n;
    p.nblk = nblk;
    p.seg = seg;
    p.lower = lower;
    return p;
  }
  KOKKOS_INLINE_FUNCTION void store(index_t r, const T& sum) const {
    y(r) = beta == T(0) ? alpha * sum : beta * y(r) + alpha * sum;
  }
  struct ReduceTag {};
  KOKKOS_INLINE_FUNCTION void operator()(ReduceTag, const index_t r) const {
    const SymvPartials<T, ExecSpace> p = partials();
    const index_t count = p.count(r);
    T sum = T(0);
    for (index_t idx = 0; idx < count; ++idx) sum += p.partial(r, idx);
    store(r, sum);
  }

  // Devices: the same sums with each row's partials split over 8 slices of a
  // team of 32 rows (a row of the last block row has nblk partials, and
  // one thread per row summed 256 of them in sequence at n = 16384, 24 us).
  static constexpr int reduce_slices = 8, reduce_rows = 32;
  struct ReduceSlicedTag {};
  KOKKOS_INLINE_FUNCTION void operator()(ReduceSlicedTag, const Team& team) const {
    T* const part = static_cast<T*>(team.team_shmem().get_shmem(reduce_slices * reduce_rows * sizeof(T)));
    const int slice = team.team_rank();
    const index_t base = team.league_rank() * reduce_rows;
    const SymvPartials<T, ExecSpace> p = partials();
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, reduce_rows), [&](const int l) {
      const index_t r = base + l;
      T sum = T(0);
      if (r < n) {
        const index_t count = p.count(r);
        for (index_t idx = slice; idx < count; idx += reduce_slices) sum += p.partial(r, idx);
      }
      part[slice * reduce_rows + l] = sum;
    });
    team.team_barrier();
    if (slice == 0)
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, reduce_rows), [&](const int l) {
        const index_t r = base + l;
        if (r >= n) return;
        T sum = T(0);
        for (int q = 0; q < reduce_slices; ++q) sum += part[q * reduce_rows + l];
        store(r, sum);
      });
  }
};

}  // namespace detail

namespace detail {

// symv's kernels set up for A, x and work (arguments checked; y, alpha and
// beta are left to the caller).
template <class T, class ExecSpace>
SymvKernels<T, ExecSpace> symv_kernels(Uplo uplo, const Matrix<T, ExecSpace>& a, const Vector<T, ExecSpace>& x,
                                       const Vector<T, ExecSpace>& work, index_t segment) {
  using K = SymvKernels<T, ExecSpace>;
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
  k.nblk = (n + K::NB - 1) / K::NB;
  k.seg = SymvTuning<T, ExecSpace>::segment(k.nblk);
  if (segment > 0 && K::device)
    k.seg = segment < SymvTuning<T, ExecSpace>::max_segment ? segment : SymvTuning<T, ExecSpace>::max_segment;
  k.nseg = k.nblk > 0 ? (k.nblk + k.seg - 1) / k.seg : 0;
  k.lower = uplo == Uplo::Lower;
  k.work = Matrix<T, ExecSpace>(work.data(), n, k.nblk > 0 ? k.nblk : 1);
  return k;
}

// The diagonal-block launch (devices), with the caller's prologue: team J
// calls prologue(team, J * NB, rows) for its block's rows (it may write x
// there) while its block's loads are in flight, and reads x after a team
// barrier.
template <class T, class ExecSpace, class Prologue>
struct SymvDiagonal {
  SymvKernels<T, ExecSpace> k;
  Prologue prologue;
  KOKKOS_INLINE_FUNCTION void operator()(const typename SymvKernels<T, ExecSpace>::Team& team) const {
    k.diagonal_block(team, prologue);
  }
};

// Launches 1 and 2: every block's contribution into k.work; devices run
// `prologue` in the diagonal blocks' teams, hosts as a loop before them.
template <class T, class ExecSpace, class Prologue = SymvNoPrologue>
void symv_launch_partials(const ExecSpace& space, const SymvKernels<T, ExecSpace>& k,
                          const Prologue& prologue = Prologue()) {
  using K = SymvKernels<T, ExecSpace>;
  const int team_size = K::device ? K::NB * K::Q : 1;
  const size_t scratch = K::device ? K::Scratch::shmem_size(K::NB + 1, SymvTuning<T, ExecSpace>::scratch_columns) : 0;
  using OffDiagonal = Kokkos::TeamPolicy<ExecSpace, typename K::OffDiagonalTag, Kokkos::Schedule<Kokkos::Dynamic>>;
  if constexpr (K::device) {
    Kokkos::parallel_for("keig::symv::diagonal",
                         Kokkos::TeamPolicy<ExecSpace>(space, k.nblk, team_size)
                             .set_scratch_size(0, Kokkos::PerTeam(scratch)),
                         SymvDiagonal<T, ExecSpace, Prologue>{k, prologue});
  } else if constexpr (!std::is_same_v<Prologue, SymvNoPrologue>) {
    Kokkos::parallel_for("keig::symv::prologue", Kokkos::TeamPolicy<ExecSpace>(space, k.nblk, 1),
                         KOKKOS_LAMBDA(const typename K::Team& team) {
                           prologue(team, team.league_rank() * K::NB, k.block_rows(team.league_rank()));
                         });
  }
  if (k.nblk > 1 || !K::device)
    Kokkos::parallel_for("keig::symv::off_diagonal",
                         OffDiagonal(space, k.nblk * k.nseg, team_size).set_scratch_size(0, Kokkos::PerTeam(scratch)),
                         k);
}

}  // namespace detail

// The partial sums of A x (symv's launches but the last; see SymvPartials),
// for callers that fold their sum into a pass of their own. work: at least
// symv_workspace_size<T, ExecSpace>(n) entries; the result refers to it.
// Asynchronous on `space`.
// `prologue(team, first, rows)`, if given, is called once for every NB
// rows [first, first + rows) by a team of the space before the product reads
// x there, and may write x in those rows (sytrd scales its reflector there):
// on devices it runs in the diagonal blocks' teams, saving a launch.
template <class T, class ExecSpace, class Prologue = detail::SymvNoPrologue>
SymvPartials<T, ExecSpace> symv_partials(const ExecSpace& space, Uplo uplo, const Matrix<T, ExecSpace>& a,
                                         const Vector<T, ExecSpace>& x, const Vector<T, ExecSpace>& work,
                                         const Prologue& prologue = Prologue(), index_t segment = 0) {
  const auto k = detail::symv_kernels<T, ExecSpace>(uplo, a, x, work, segment);
  if (k.n > 0) detail::symv_launch_partials<T, ExecSpace>(space, k, prologue);
  return k.partials();
}

// y = alpha A x + beta y; A is n x n Hermitian with its `uplo` triangle
// referenced; work has at least symv_workspace_size<T, ExecSpace>(n) entries.
// `segment`: blocks per off-diagonal team on devices (0: SymvTuning's choice;
// a tuning knob for benchmarks). Asynchronous on `space`.
template <class T, class ExecSpace>
void symv(const ExecSpace& space, Uplo uplo, nondeduced_t<T> alpha, const Matrix<T, ExecSpace>& a,
          const Vector<T, ExecSpace>& x, nondeduced_t<T> beta, const Vector<T, ExecSpace>& y,
          const Vector<T, ExecSpace>& work, index_t segment = 0) {
  using K = detail::SymvKernels<T, ExecSpace>;
  K k = detail::symv_kernels<T, ExecSpace>(uplo, a, x, work, segment);
  const index_t n = k.n;
  if (static_cast<index_t>(y.extent(0)) != n)
    throw InvalidArgument("y", "symv: y needs n = " + std::to_string(n) + " entries");
  if (n == 0) return;
  k.y = y;
  k.alpha = alpha;
  k.beta = beta;
  detail::symv_launch_partials<T, ExecSpace>(space, k);
  if constexpr (K::device) {
    using Reduce = Kokkos::TeamPolicy<ExecSpace, typename K::ReduceSlicedTag>;
    const size_t bytes = K::reduce_slices * K::reduce_rows * sizeof(T);
    Kokkos::parallel_for("keig::symv::reduce",
                         Reduce(space, (n + K::reduce_rows - 1) / K::reduce_rows, K::reduce_slices, K::reduce_rows)
                             .set_scratch_size(0, Kokkos::PerTeam(bytes)),
                         k);
  } else {
    Kokkos::parallel_for("keig::symv::reduce", Kokkos::RangePolicy<ExecSpace, typename K::ReduceTag>(space, 0, n), k);
  }
}

}  // namespace keig::stages
