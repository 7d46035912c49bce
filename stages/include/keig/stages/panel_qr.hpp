// stages/panel_qr: Householder QR of a tall panel (m x k, k <= 64) on the GPU
// in one launch, for sy2sb's panels (LAPACK ?geqrf's output: R on and above
// the diagonal, the reflectors below it with v(0) = 1 implied, tau).
//
// Why: the vendor's geqrf costs about 16 us per column on an m x 64 panel of
// an H200 whatever m (a chain of small launches per column), 37 % of sy2sb at
// n = 16384. Here P teams (at most one per multiprocessor, all resident) own
// contiguous row blocks of the panel and meet once per column:
//
//   step j: every team has added, for its rows g > j,
//     s_c = sum_g conj(A(g, j)) A(g, c), c in [j, k)   (s_j = |x|^2)
//   into one buffer of sums (atomic adds: a reduction of P partials in one
//   hop; every team then reads the same sums, so all compute the same
//   reflector, though the order of the additions may differ between runs),
//   and the owner of row j has published that row. Then each team computes
//     H^H (alpha, x) = (beta, 0), v = (1, x scale)       (detail::householder)
//     (v^H A)_c = A(j, c) + conj(scale) s_c
//     A(g, c) -= conj(tau) v_g (v^H A)_c                 (its own rows)
//   then computes the partials of step j + 1 from its updated rows.
//
// One reduction per column instead of two (norm, then v^H A): v^H A follows
// from x^H A since v is a multiple of x below row j; |alpha - beta| >= |x| so
// the division by alpha - beta loses nothing. Sums and pivot rows rotate
// over three buffers: during step j team 0 clears step j + 2's buffer, which
// every team finished reading at step j - 1 and none adds to before step
// j + 1's meeting.
//
// The same meetings also give the compact-WY factor T of Q = I - V T V^H
// (?larft's, forward and columnwise), so sy2sb needs no larft launches: at
// step j the threads of the finished columns q < j, idle in the sums above,
// add s_q = sum_{g > j} conj(A(g, j)) v_q(g) in the same buffer, and with
// v_j = (1, x scale) below row j,
//   (V^H v_j)_q = conj(v_q(j)) + scale conj(s_q),
//   T(0:j, j) = -tau_j T(0:j, 0:j) (V^H v_j)(0:j),   T(j, j) = tau_j,
// which team 0's thread q forms from row q of T it wrote itself at the earlier
// steps. Optionally the reflectors are also written as a matrix V (unit
// diagonal, zeros above), the shape the blocked products take.
//
// Where a team's rows fit in its threads' registers (m up to about 16 or 32
// rows per thread times 8 or 16 groups times the multiprocessors: n = 16384 and
// 32768 panels on an H200), PanelQrResident keeps the panel there for all
// k steps; larger panels stream through L2 at every step (PanelQr). For real
// scalars with up to 16 rows a thread, PanelQrBlocked factors up to
// panel_qr_meeting_columns = 4 columns per meeting (see there). A meeting was
// not the main cost: the teams' own chains between barriers are (ncu, H100,
// m = 16320: 28 % of the warps' time waits for the meeting, 15 % for the
// thread that forms a reflector, a third in the row loops), so 4 columns a
// meeting take a panel from 342 to 263 us (H200), not to a quarter (keig-bench
// --suite sy2sb compares the two).
#pragma once

#include <Kokkos_Core.hpp>
#include <type_traits>

#include "keig/backends/context.hpp"
#include "keig/backends/device_sync.hpp"
#include "keig/backends/lapack.hpp"
#include "keig/stages/sytrd.hpp"
#include "keig/views/matrix.hpp"

namespace keig::stages {

inline constexpr index_t panel_qr_max_columns = 64;
// Columns factored per meeting of the teams at most (real scalars; complex
// ones take one).
inline constexpr int panel_qr_meeting_columns = 4;

// Workspace (elements of T): three buffers of sums and three of pivot (head)
// rows, 64 x panel_qr_meeting_columns each, and the arrival counter.
inline constexpr index_t panel_qr_buffer_entries = 6 * panel_qr_meeting_columns * panel_qr_max_columns;
inline index_t panel_qr_workspace_size() { return panel_qr_buffer_entries + 1; }

// Optional outputs of panel_qr (empty views: not formed).
template <class T, class ExecSpace>
struct PanelQrFactors {
  Matrix<T, ExecSpace> v;  // m x min(m, k): the reflectors, unit diagonal and zeros above it
  Matrix<T, ExecSpace> t;  // min(m, k) square: upper triangular T of Q = I - V T V^H (zeros below)
};

// GPU execution spaces and k <= 64.
template <class ExecSpace>
bool panel_qr_available(index_t k) {
  return backends::is_cuda_space_v<ExecSpace> && k >= 0 && k <= panel_qr_max_columns;
}

namespace detail {

template <class T, class ExecSpace, int Cols = static_cast<int>(panel_qr_max_columns)>
struct PanelQr {
  using R = real_t<T>;
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using Scratch = Kokkos::View<T*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  // Thread (group, column): a team of 512 threads, Cols = 64 columns (8
  // groups) or, for panels of at most 32 columns, 32 (16 groups: half the
  // rows a thread, no idle columns). With 256 threads (8 warps per
  // multiprocessor) the H200 profile showed a latency-bound instruction
  // stream, 43 cycles between a warp's instructions and about 20 us per
  // column at m = 16320.
  static_assert(Cols == 32 || Cols == 64, "PanelQr: 32 or 64 columns");
  static constexpr int cols = Cols, groups = 512 / Cols;
  static constexpr int team_size = cols * groups;
  // Rows a thread handles per batch: all loads of a batch are issued before
  // any store (row by row, each load would wait for the previous store).
  static constexpr int batch = sizeof(T) > 8 ? 4 : 8;
  static size_t scratch_bytes() { return Scratch::shmem_size(team_size) + 2 * Scratch::shmem_size(cols); }

  Matrix<T, ExecSpace> a;
  Vector<T, ExecSpace> tau;
  T* buffers;    // [3][64] sums (step j in j % 3), then [3][64] pivot rows
  int* arrived;  // teams arrived, summed over the steps (zero at launch)
  index_t m, k, kk, teams, rows;
  Matrix<T, ExecSpace> v, t;  // PanelQrFactors (empty: not formed)
  const int* done = nullptr;  // non-null: the launch does nothing where *done != 0 (panel_cholqr's flag)
  KOKKOS_INLINE_FUNCTION bool skipped() const { return done != nullptr && *done != 0; }

  // T is formed: the sums also run over the finished columns.
  KOKKOS_INLINE_FUNCTION bool want_t() const { return t.data() != nullptr; }
  // Column c takes part in step j's sums (and its pivot entry is published).
  KOKKOS_INLINE_FUNCTION bool in_sums(int c, index_t j) const { return c < k && (c >= j || want_t()); }
  // Team p's column-c thread reads step j's sum and pivot entry: its update
  // needs c >= j, team 0's T column all of them.
  KOKKOS_INLINE_FUNCTION bool reads_sums(int c, index_t j, index_t p) const {
    return c < k && (c >= j || (p == 0 && want_t()));
  }
  // Team 0's thread for row c of T, once every team has step j's sums in
  // (sum, piv): T(c, j) (see the top of this file).
  template <class Sc>
  KOKKOS_INLINE_FUNCTION void form_t_column(int c, index_t j, const T& tau_j, const T& scale, const Sc& sum,
                                            const Sc& piv) const {
    if (c > kk - 1) return;
    if (c < j) {
      T acc = T(0);
      for (index_t q = c; q < j; ++q) acc += t(c, q) * (conjugate(piv(q)) + scale * conjugate(sum(q)));
      t(c, j) = -tau_j * acc;
    } else {
      t(c, j) = c == j ? tau_j : T(0);
    }
  }

  // A thread's register rows r0 + rg + groups i (i < NR) of column c from
  // the panel (zeros past it), and back into it and into V where V is formed
  // (the resident kernels).
  template <int NR>
  KOKKOS_INLINE_FUNCTION void load_rows(T (&y)[NR], index_t r0, index_t r1, int rg, int c) const {
#pragma unroll
    for (int i = 0; i < NR; ++i) {
      const index_t g = r0 + rg + index_t(groups) * i;
      y[i] = c < k && g < r1 ? a(g, c) : T(0);
    }
  }
  template <int NR>
  KOKKOS_INLINE_FUNCTION void store_rows(const T (&y)[NR], index_t r0, index_t r1, int rg, int c) const {
    if (c >= k) return;
    const bool want_v = v.data() != nullptr && c < kk;
#pragma unroll
    for (int i = 0; i < NR; ++i) {
      const index_t g = r0 + rg + index_t(groups) * i;
      if (g < r1) {
        a(g, c) = y[i];
        if (want_v) v(g, c) = reflector_entry(g, c, y[i]);
      }
    }
  }

  KOKKOS_INLINE_FUNCTION T* sums_of(index_t step) const { return buffers + (step % 3) * cols; }
  KOKKOS_INLINE_FUNCTION T* pivot_of(index_t step) const { return buffers + (3 + step % 3) * cols; }
  // x(i) = col(g + i groups) for the rows below r1, else 0.
  KOKKOS_INLINE_FUNCTION static void load_batch(const T* col, index_t g, index_t r1, T (&x)[batch]) {
    for (int i = 0; i < batch; ++i) {
      const index_t gi = g + i * groups;
      x[i] = gi < r1 ? col[gi] : T(0);
    }
  }
  // First of this thread's rows (r0 + rg + groups i) below row j.
  KOKKOS_INLINE_FUNCTION static index_t first_below(index_t r0, int rg, index_t j) {
    index_t g = r0 + rg;
    if (g <= j) g += ((j + 1 - g + groups - 1) / groups) * groups;
    return g;
  }

  // Step j's partial sums over this team's rows g > j, and row j if owned;
  // then the arrival.
  KOKKOS_INLINE_FUNCTION void publish_partials(const Team& team, index_t j, const Scratch& red) const {
    const int t = team.team_rank(), c = t % cols, rg = t / cols;
    const index_t p = team.league_rank(), r0 = p * rows, r1 = r0 + rows < m ? r0 + rows : m;
    T acc = T(0);
    if (in_sums(c, j)) {
      const T* const xj = &a(0, j);
      const T* const yc = &a(0, c);
      for (index_t g = first_below(r0, rg, j); g < r1; g += groups * batch) {
        T x[batch], y[batch];
        load_batch(xj, g, r1, x);
        load_batch(yc, g, r1, y);
        for (int i = 0; i < batch; ++i) acc += conjugate(x[i]) * y[i];
      }
    }
    red(rg * cols + c) = acc;
    team.team_barrier();
    if (rg == 0 && in_sums(c, j)) {
      T s = T(0);
      for (int h = 0; h < groups; ++h) s += red(h * cols + c);
      atomic_accumulate(sums_of(j) + c, s);
      if (j >= r0 && j < r1) pivot_of(j)[c] = a(j, c);
    }
    team.team_barrier();
    if (t == 0) backends::arrive_progress(arrived);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Team& team) const {
    if (skipped()) return;
    const Scratch red(team.team_scratch(0), team_size), piv(team.team_scratch(0), cols), sum(team.team_scratch(0), cols);
    const int t = team.team_rank(), c = t % cols, rg = t / cols;
    const index_t p = team.league_rank(), r0 = p * rows, r1 = r0 + rows < m ? r0 + rows : m;
    publish_partials(team, 0, red);
    for (index_t j = 0; j < kk; ++j) {
      if (t == 0) backends::wait_progress(arrived, static_cast<int>((j + 1) * teams));
      team.team_barrier();
      if (rg == 0 && reads_sums(c, j, p)) {
        sum(c) = backends::load_coherent(sums_of(j) + c);
        piv(c) = backends::load_coherent(pivot_of(j) + c);
      }
      if (p == 0 && rg == 1) sums_of(j + 2)[c] = T(0);
      team.team_barrier();
      T tau_j, scale;
      R beta;
      householder(piv(j), real_part(sum(j)), tau_j, scale, beta);
      if (want_t() && p == 0 && rg == 0) form_t_column(c, j, tau_j, scale, sum, piv);
      const bool mine = j >= r0 && j < r1 && (j - r0) % groups == rg;  // this thread's group holds row j
      if (c > j && c < k) {
        const T z = conjugate(tau_j) * (piv(c) + conjugate(scale) * sum(c));
        const T zs = scale * z;
        const T* const xj = &a(0, j);
        T* const yc = &a(0, c);
        for (index_t g = first_below(r0, rg, j); g < r1; g += groups * batch) {
          T x[batch], y[batch];
          load_batch(xj, g, r1, x);
          load_batch(yc, g, r1, y);
          for (int i = 0; i < batch; ++i) {
            const index_t gi = g + i * groups;
            if (gi < r1) yc[gi] = y[i] - x[i] * zs;
          }
        }
        if (mine) a(j, c) -= z;
      }
      team.team_barrier();  // column j is read above: scale it only now
      if (c == j) {
        T* const xj = &a(0, j);
        for (index_t g = first_below(r0, rg, j); g < r1; g += groups * batch) {
          T x[batch];
          load_batch(xj, g, r1, x);
          for (int i = 0; i < batch; ++i) {
            const index_t gi = g + i * groups;
            if (gi < r1) xj[gi] = x[i] * scale;
          }
        }
        if (mine) a(j, j) = T(beta);
      }
      if (p == 0 && t == 0) tau(j) = tau_j;
      if (j + 1 < kk) publish_partials(team, j + 1, red);
    }
    if (v.data() != nullptr) {
      team.team_barrier();  // the last column is scaled by its own threads
      if (c < kk)
        for (index_t g = r0 + rg; g < r1; g += groups) v(g, c) = reflector_entry(g, c, a(g, c));
    }
  }
};

// The panel held in registers (used when a team's rows fit): thread (group
// rg, column c) keeps A(g, c) for its rows g = r0 + rg + groups i, i < NR,
// from the first step to the last, so a step reads no panel data from
// memory; each step's column j reaches the other columns' threads through
// team scratch (double-buffered, so the update of step j and the partials of
// step j + 1 need no barrier between them). The steps are PanelQr's: one
// meeting of all teams per column. PanelQr streams the panel through L2 at
// every step: 2 loads and a store per entry, about 13 us per column at
// n = 16384 on the H200.
template <class T, class ExecSpace, int NR, int Cols = static_cast<int>(panel_qr_max_columns)>
struct PanelQrResident {
  using Base = PanelQr<T, ExecSpace, Cols>;
  using R = real_t<T>;
  using Team = typename Base::Team;
  using Scratch = typename Base::Scratch;
  static constexpr int cols = Base::cols, groups = Base::groups, team_size = Base::team_size;
  static constexpr index_t rows_per_team = index_t(groups) * NR;
  static size_t scratch_bytes() { return Base::scratch_bytes() + Scratch::shmem_size(2 * groups * NR); }

  Base q;  // panel, tau, buffers, sizes

  KOKKOS_INLINE_FUNCTION index_t row(index_t r0, int rg, int i) const { return r0 + rg + index_t(groups) * i; }

  // Step j's partial sums over this team's rows below j and, where owned,
  // pivot row j, then the arrival. xs(j % 2) gets column j.
  KOKKOS_INLINE_FUNCTION void publish(const Team& team, index_t j, const T (&y)[NR], const Scratch& red,
                                      const Scratch& xs) const {
    const int t = team.team_rank(), c = t % cols, rg = t / cols;
    const index_t r0 = team.league_rank() * q.rows, r1 = r0 + q.rows < q.m ? r0 + q.rows : q.m;
    T* const x = &xs((j % 2) * groups * NR + rg * NR);
    if (c == j) {
#pragma unroll
      for (int i = 0; i < NR; ++i) x[i] = y[i];
    }
    team.team_barrier();
    T acc = T(0);
    if (q.in_sums(c, j)) {
#pragma unroll
      for (int i = 0; i < NR; ++i)
        if (row(r0, rg, i) > j) acc += conjugate(x[i]) * y[i];  // rows >= r1 hold zeros
      if (j >= r0 && j < r1 && (j - r0) % groups == rg) {
        const int ij = static_cast<int>((j - r0) / groups);
        T v = T(0);
#pragma unroll
        for (int i = 0; i < NR; ++i)
          if (i == ij) v = y[i];
        q.pivot_of(j)[c] = v;
      }
    }
    red(rg * cols + c) = acc;
    team.team_barrier();
    if (rg == 0 && q.in_sums(c, j)) {
      T s = T(0);
      for (int h = 0; h < groups; ++h) s += red(h * cols + c);
      atomic_accumulate(q.sums_of(j) + c, s);
    }
    team.team_barrier();
    if (t == 0) backends::arrive_progress(q.arrived);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Team& team) const {
    if (q.skipped()) return;
    const Scratch red(team.team_scratch(0), team_size), piv(team.team_scratch(0), cols), sum(team.team_scratch(0), cols);
    const Scratch xs(team.team_scratch(0), 2 * groups * NR);
    const int t = team.team_rank(), c = t % cols, rg = t / cols;
    const index_t p = team.league_rank(), r0 = p * q.rows, r1 = r0 + q.rows < q.m ? r0 + q.rows : q.m;
    T y[NR];
    q.load_rows(y, r0, r1, rg, c);
    publish(team, 0, y, red, xs);
    for (index_t j = 0; j < q.kk; ++j) {
      if (t == 0) backends::wait_progress(q.arrived, static_cast<int>((j + 1) * q.teams));
      team.team_barrier();
      if (rg == 0 && q.reads_sums(c, j, p)) {
        sum(c) = backends::load_coherent(q.sums_of(j) + c);
        piv(c) = backends::load_coherent(q.pivot_of(j) + c);
      }
      if (p == 0 && rg == 1) q.sums_of(j + 2)[c] = T(0);
      team.team_barrier();
      T tau_j, scale;
      R beta;
      householder(piv(j), real_part(sum(j)), tau_j, scale, beta);
      if (q.want_t() && p == 0 && rg == 0) q.form_t_column(c, j, tau_j, scale, sum, piv);
      const bool owner = j >= r0 && j < r1 && (j - r0) % groups == rg;  // this thread's group holds row j
      const int ij = owner ? static_cast<int>((j - r0) / groups) : -1;
      const T* const x = &xs((j % 2) * groups * NR + rg * NR);  // column j as published at step j
      if (c > j && c < q.k) {
        const T z = conjugate(tau_j) * (piv(c) + conjugate(scale) * sum(c));
        const T zs = scale * z;
#pragma unroll
        for (int i = 0; i < NR; ++i) {
          if (row(r0, rg, i) > j) y[i] -= x[i] * zs;
          if (i == ij) y[i] -= z;
        }
      } else if (c == j) {
#pragma unroll
        for (int i = 0; i < NR; ++i) {
          if (row(r0, rg, i) > j) y[i] *= scale;
          if (i == ij) y[i] = T(beta);
        }
      }
      if (p == 0 && t == 0) q.tau(j) = tau_j;
      if (j + 1 < q.kk) publish(team, j + 1, y, red, xs);
    }
    q.store_rows(y, r0, r1, rg, c);
  }
};

// Several columns per meeting (real scalars, panel in registers). The
// teams publish, for the next KB columns J = [j, j + KB) (the block), the
// sums S(p, c) = sum_g A(g, j + p) A(g, c) over the tail rows g >= j + KB,
// and the block's rows j .. j + KB - 1 (the head) of every column. From
// them every team forms the block's KB reflectors itself, without meeting
// again: a column's tail after the block's earlier reflectors is
// a_c - A_J m_c (A_J: the block's tails as published), so with
// u_c = A_J^T (a_c - A_J m_c) and G = A_J^T A_J (the block's own sums)
//   tail_x . tail_c = n_x . u_c,  n_x = e_x - m_x   (x a block column),
// and applying reflector i (column j + i, v = (1, head, scale tail)) to
// column c updates only the KB-vectors h_c (head), m_c and u_c:
//   z = h_c(i) + vh . h_c + scale n_i . u_c,  w = tau z,
//   h_c -= v_head w,  m_c += scale w n_i,  u_c -= scale w G n_i.
// Each thread then updates its register rows once for the whole block,
// a_c(g) -= sum_r A_J(g, r) m_c(r) (times scale for the block's own columns,
// which become the reflectors). The tail norm n_i . u_i of a column that
// lies close to the span of the earlier block columns would cancel; where
// the bound of that cancellation (sum |n_r| |G_rs| |n_s|) exceeds theta
// times the column's norm below row j + i - 1, the block ends before that
// column (all teams decide alike from the same sums), and the next meeting
// starts there with exact sums: every meeting factors at least one column,
// and the result is the one-column kernel's up to rounding. T's columns of
// the block are formed by team 0 after its arrival, off the meetings' path.
template <class T, class ExecSpace, int NR, int KB, int Cols = static_cast<int>(panel_qr_max_columns)>
struct PanelQrBlocked {
  using Base = PanelQr<T, ExecSpace, Cols>;
  using R = real_t<T>;
  using Team = typename Base::Team;
  using Scratch = typename Base::Scratch;
  static_assert(!is_complex_v<T>, "PanelQrBlocked: real scalars");
  static_assert(KB >= 1 && KB <= panel_qr_meeting_columns, "PanelQrBlocked: KB columns a meeting");
  static constexpr int cols = Base::cols, groups = Base::groups, team_size = Base::team_size;
  static_assert(KB <= groups, "PanelQrBlocked: the sums of a block are reduced by KB groups");
  static constexpr index_t rows_per_team = index_t(groups) * NR;
  static constexpr R theta = R(8);  // the cancellation a block accepts (see above)
  // Team scratch, in elements of T: the row partials (KB x team), the block's
  // columns at the team's rows, h, u and m (KB x cols each),
  // G (KB x KB), the reflectors (tau, scale, n, G n, v's head: 2 + 3 KB
  // each, and an accepted flag), T's V^T v (KB x cols), and the columns'
  // scales.
  static constexpr int refl_size = 3 + 3 * KB;
  static constexpr int scratch_entries =
      KB * team_size + KB * groups * NR + 4 * KB * cols + KB * KB + KB * refl_size + cols;
  static size_t scratch_bytes() { return Scratch::shmem_size(scratch_entries); }

  Base q;
  int block;  // columns a meeting, 1 .. KB

  // Meeting mt's sums (KB x 64, row p: S(p, .)) and head rows, in the
  // workspace's three rotating buffers.
  KOKKOS_INLINE_FUNCTION T* sums_of(int mt) const { return q.buffers + (mt % 3) * KB * panel_qr_max_columns; }
  KOKKOS_INLINE_FUNCTION T* head_of(int mt) const {
    return q.buffers + (3 + mt % 3) * KB * panel_qr_max_columns;
  }
  KOKKOS_INLINE_FUNCTION static T magnitude(const T& x) { return x < T(0) ? -x : x; }
  // Which of a thread's register slots (rows r0 + rg + groups i) hold head
  // rows [j, j + kb) or tail rows (>= j + kb) of a block: 32-bit offsets
  // from the thread's first row, compared with groups i (a constant once
  // unrolled) instead of 64-bit row numbers.
  struct Slots {
    int head_from, tail_from, end;
    KOKKOS_INLINE_FUNCTION Slots(index_t r0, index_t r1, int rg, index_t j, int kb)
        : head_from(clamp(j - r0 - rg)), tail_from(clamp(j + kb - r0 - rg)), end(clamp(r1 - r0 - rg)) {}
    KOKKOS_INLINE_FUNCTION static int clamp(index_t d) {
      return d < -1 ? -1 : (d > index_t(groups) * NR ? int(groups) * NR : int(d));
    }
    KOKKOS_INLINE_FUNCTION bool head(int i) const { return groups * i >= head_from && groups * i < tail_from && groups * i < end; }
    KOKKOS_INLINE_FUNCTION bool tail(int i) const { return groups * i >= tail_from; }
  };

  struct Shared {
    T *red, *xs, *h, *u, *m, *g, *refl, *wq, *sc;
    KOKKOS_INLINE_FUNCTION explicit Shared(const Team& team) {
      T* p = Scratch(team.team_scratch(0), scratch_entries).data();
      red = p, p += KB * team_size;
      xs = p, p += KB * groups * NR;
      h = p, p += KB * cols;
      u = p, p += KB * cols;
      m = p, p += KB * cols;
      wq = p, p += KB * cols;
      g = p, p += KB * KB;
      refl = p, p += KB * refl_size;
      sc = p;
    }
    // Reflector i: tau, scale, accepted (1 or 0), n (KB), G n (KB), v's head (KB).
    KOKKOS_INLINE_FUNCTION T* reflector(int i) const { return refl + i * refl_size; }
  };

  // Meeting mt for the block [j, j + kb): the block's columns at this
  // team's rows into xs, the head rows of every column, the tail sums, the
  // arrival.
  KOKKOS_INLINE_FUNCTION void publish(const Team& team, const Shared& sh, int mt, index_t j, int kb,
                                      const T (&y)[NR]) const {
    const int t = team.team_rank(), c = t % cols, rg = t / cols;
    const index_t r0 = team.league_rank() * q.rows, r1 = r0 + q.rows < q.m ? r0 + q.rows : q.m;
    T* const x = sh.xs + rg * NR;  // x[p * groups * NR + i]
    const Slots slots(r0, r1, rg, j, kb);
    team.team_barrier();  // the previous block's columns are read
    if (c >= j && c < j + kb) {
#pragma unroll
      for (int i = 0; i < NR; ++i) x[(c - j) * groups * NR + i] = y[i];
    }
    if (c < q.k) {
      T* const head = head_of(mt) + c - (j - r0 - rg) * panel_qr_max_columns;  // slot i: head row offset + groups i
#pragma unroll
      for (int i = 0; i < NR; ++i)
        if (slots.head(i)) head[groups * i * panel_qr_max_columns] = y[i];
    }
    team.team_barrier();
    T acc[KB];
#pragma unroll
    for (int p = 0; p < KB; ++p) acc[p] = T(0);
    if (q.in_sums(c, j)) {
#pragma unroll
      for (int i = 0; i < NR; ++i)
        if (slots.tail(i)) {  // rows >= r1 hold zeros
#pragma unroll
          for (int p = 0; p < KB; ++p)
            if (p < kb) acc[p] += x[p * groups * NR + i] * y[i];
        }
    }
#pragma unroll
    for (int p = 0; p < KB; ++p) sh.red[p * team_size + t] = acc[p];
    team.team_barrier();
    if (rg < kb && q.in_sums(c, j)) {
      T s = T(0);
      for (int h = 0; h < groups; ++h) s += sh.red[rg * team_size + h * cols + c];
      atomic_accumulate(sums_of(mt) + rg * panel_qr_max_columns + c, s);
    }
    team.team_barrier();
    if (t == 0) backends::arrive_progress(q.arrived);
  }

  // Reflector i of the block (thread (0, j + i)): from the column's h, u, m
  // and G. Not accepted: nothing else changes.
  KOKKOS_INLINE_FUNCTION void form_reflector(const Shared& sh, index_t j, int kb, int i) const {
    const int cc = static_cast<int>(j) + i;
    T* const rf = sh.reflector(i);
    T n[KB];
    T t2 = T(0), head2 = T(0), mag = T(0);
#pragma unroll
    for (int r = 0; r < KB; ++r) {
      n[r] = r < kb ? (r == i ? T(1) : T(0)) - sh.m[r * cols + cc] : T(0);
      if (r < kb) t2 += n[r] * sh.u[r * cols + cc];
      if (r > i && r < kb) head2 += sh.h[r * cols + cc] * sh.h[r * cols + cc];
    }
#pragma unroll
    for (int r = 0; r < KB; ++r)
#pragma unroll
      for (int s = 0; s < KB; ++s)
        if (r < kb && s < kb) mag += magnitude(n[r]) * magnitude(sh.g[r * KB + s]) * magnitude(n[s]);
    const T alpha = sh.h[i * cols + cc];
    const bool ok = i == 0 || (t2 >= T(0) && mag <= theta * (alpha * alpha + head2 + t2));
    rf[2] = ok ? T(1) : T(0);
    if (!ok) return;
    T tau, scale;
    R beta;
    householder(alpha, R(head2 + t2), tau, scale, beta);
    rf[0] = tau;
    rf[1] = scale;
#pragma unroll
    for (int r = 0; r < KB; ++r) {
      rf[3 + r] = n[r];
      rf[3 + KB + r] = r < kb ? sh.u[r * cols + cc] : T(0);  // G n_i
      const T vh = r > i && r < kb ? scale * sh.h[r * cols + cc] : T(0);
      rf[3 + 2 * KB + r] = vh;
      if (r > i && r < kb) sh.h[r * cols + cc] = vh;
    }
    sh.h[i * cols + cc] = T(beta);
    sh.sc[cc] = scale;
  }

  // Reflector i applied to column c's h, m and u (thread (0, c), c > j + i).
  KOKKOS_INLINE_FUNCTION void apply_reflector(const Shared& sh, int kb, int i, int c) const {
    const T* const rf = sh.reflector(i);
    const T tau = rf[0], scale = rf[1];
    T z = sh.h[i * cols + c], zt = T(0);
#pragma unroll
    for (int r = 0; r < KB; ++r)
      if (r < kb) {
        z += rf[3 + 2 * KB + r] * sh.h[r * cols + c];  // v's head is zero at and above i
        zt += rf[3 + r] * sh.u[r * cols + c];
      }
    const T w = tau * (z + scale * zt), sw = scale * w;
    sh.h[i * cols + c] -= w;
#pragma unroll
    for (int r = 0; r < KB; ++r)
      if (r < kb) {
        sh.h[r * cols + c] -= rf[3 + 2 * KB + r] * w;
        sh.m[r * cols + c] += sw * rf[3 + r];
        sh.u[r * cols + c] -= sw * rf[3 + KB + r];
      }
  }

  // T's columns j .. j + done - 1 (team 0, after its arrival):
  //   T(0:c, c) = -tau T(0:c, 0:c) (V^T v_c)(0:c),  T(c, c) = tau,
  // with (V^T v_i)_q from the published head rows and sums (q < j) or from
  // the block's reflectors (q in the block).
  KOKKOS_INLINE_FUNCTION void form_t(const Team& team, const Shared& sh, index_t j, int kb, int done) const {
    const int t = team.team_rank(), c = t % cols, rg = t / cols;
    const int jj = static_cast<int>(j);
    if (rg < done && c < jj + rg) {
      const int i = rg;
      const T* const ri = sh.reflector(i);
      T head = T(0), tail = T(0);
      if (c < jj) {  // v_c's entries in the head rows and its sums against the block's tails
        head = sh.h[i * cols + c];
#pragma unroll
        for (int r = 0; r < KB; ++r)
          if (r < kb) {
            if (r > i) head += sh.h[r * cols + c] * ri[3 + 2 * KB + r];
            tail += ri[3 + r] * sh.u[r * cols + c];
          }
        sh.wq[i * cols + c] = head + ri[1] * tail;
      } else {
        const T* const rp = sh.reflector(c - jj);
        head = rp[3 + 2 * KB + i];
#pragma unroll
        for (int r = 0; r < KB; ++r)
          if (r < kb) {
            if (r > i) head += rp[3 + 2 * KB + r] * ri[3 + 2 * KB + r];
            tail += rp[3 + r] * ri[3 + KB + r];
          }
        sh.wq[i * cols + c] = head + rp[1] * ri[1] * tail;
      }
    }
    team.team_barrier();
    // Row c's sums over the earlier columns, split over the groups (thread
    // (rg, c) takes columns c + rg, c + rg + groups, ...; one thread per row
    // made team 0 late for the next meeting by about 1.4 us at n = 16384),
    // then added up by the row's thread of group 0.
    T acc[KB];
#pragma unroll
    for (int i = 0; i < KB; ++i) acc[i] = T(0);
    if (c < q.kk)
      for (int qq = c + rg; qq < jj; qq += groups) {
        const T tq = q.t(c, qq);
#pragma unroll
        for (int i = 0; i < KB; ++i)
          if (i < done) acc[i] += tq * sh.wq[i * cols + qq];
      }
#pragma unroll
    for (int i = 0; i < KB; ++i) sh.red[i * team_size + t] = acc[i];  // free: publish has reduced its partials
    team.team_barrier();
    if (rg == 0 && c < q.kk) {
#pragma unroll
      for (int i = 0; i < KB; ++i) {
        acc[i] = T(0);
        for (int h = 0; h < groups; ++h) acc[i] += sh.red[i * team_size + h * cols + c];
      }
#pragma unroll
      for (int i = 0; i < KB; ++i) {
        if (i >= done) break;
        const int col = jj + i;
        const T tau = sh.reflector(i)[0];
        if (c < col) {
          T a = acc[i];
          for (int p = c > jj ? c - jj : 0; p < i; ++p) a += q.t(c, jj + p) * sh.wq[i * cols + jj + p];
          q.t(c, col) = -tau * a;
        } else {
          q.t(c, col) = c == col ? tau : T(0);
        }
      }
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Team& team) const {
    if (q.skipped()) return;
    const Shared sh(team);
    const int t = team.team_rank(), c = t % cols, rg = t / cols;
    const index_t p = team.league_rank(), r0 = p * q.rows, r1 = r0 + q.rows < q.m ? r0 + q.rows : q.m;
    T y[NR];
    q.load_rows(y, r0, r1, rg, c);
    const auto block_at = [&](index_t j) { return static_cast<int>(q.kk - j < block ? q.kk - j : block); };
    publish(team, sh, 0, 0, block_at(0), y);
    int mt = 0;
    for (index_t j = 0; j < q.kk; ++mt) {
      const int kb = block_at(j);
      if (t == 0) backends::wait_progress(q.arrived, (mt + 1) * static_cast<int>(q.teams));
      team.team_barrier();
      // The meeting's sums and head rows: h and u start from them, m from 0.
      if (rg < KB) {  // group rg takes block row rg
        if (rg < kb && c < q.k) {
          sh.h[rg * cols + c] = backends::load_coherent(head_of(mt) + rg * panel_qr_max_columns + c);
          sh.u[rg * cols + c] = backends::load_coherent(sums_of(mt) + rg * panel_qr_max_columns + c);
          sh.m[rg * cols + c] = T(0);
        }
      } else if (t < KB * cols + KB * KB) {
        const int r = (t - KB * cols) / KB, s = (t - KB * cols) % KB;
        if (r < kb && s < kb) sh.g[r * KB + s] = backends::load_coherent(sums_of(mt) + r * panel_qr_max_columns + j + s);
      }
      if (p == 0 && t < KB * panel_qr_max_columns) sums_of(mt + 2)[t] = T(0);  // read by all at mt - 1
      if (t < cols) sh.sc[t] = T(1);
      team.team_barrier();
      int done = 0;
      for (int i = 0; i < kb; ++i) {
        if (rg == 0 && c == j + i) {
          form_reflector(sh, j, kb, i);
          if (p == 0 && sh.reflector(i)[2] != T(0)) q.tau(j + i) = sh.reflector(i)[0];
        }
        team.team_barrier();
        if (sh.reflector(i)[2] == T(0)) break;
        ++done;
        if (rg == 0 && c > j + i && c < q.k) apply_reflector(sh, kb, i, c);
      }
      team.team_barrier();
      // The block at once on the register rows: tails a_c - A_J m_c (times
      // the reflectors' scales), head rows from h.
      if (c >= j && c < q.k) {
        // Only the done block columns: xs's columns past the block (kb <
        // KB) were never written in this launch and hold what an earlier
        // kernel left in shared memory, possibly NaN, which a zero weight
        // does not cancel.
        const T* const x = sh.xs + rg * NR;
        T mc[KB];
#pragma unroll
        for (int r = 0; r < KB; ++r) mc[r] = r < done ? sh.m[r * cols + c] : T(0);
        const T s = sh.sc[c];
        const Slots slots(r0, r1, rg, j, kb);
        const T* const head = sh.h + c - (j - r0 - rg) * cols;  // slot i: head row offset + groups i
#pragma unroll
        for (int i = 0; i < NR; ++i) {
          if (slots.tail(i)) {
            T v = y[i];
#pragma unroll
            for (int r = 0; r < KB; ++r)
              if (r < done) v -= x[r * groups * NR + i] * mc[r];
            y[i] = s * v;
          } else if (slots.head(i)) {
            y[i] = head[groups * i * cols];
          }
        }
      }
      const index_t next = j + done;
      if (next < q.kk) publish(team, sh, mt + 1, next, block_at(next), y);
      if (q.want_t() && p == 0) form_t(team, sh, j, kb, done);
      j = next;
    }
    q.store_rows(y, r0, r1, rg, c);
  }
};

}  // namespace detail

// QR of the panel a (m x k, k <= 64; any leading dimension) in place, as
// ?geqrf: tau gets min(m, k) scalars. work: panel_qr_workspace_size().
// factors: V and T where wanted (see PanelQrFactors; T as ?larft forms it).
// GPU execution spaces only (teams wait on each other: they must all be
// resident); elsewhere InvalidArgument names `a`. Asynchronous on `space`.
// done (device memory, may be null): the launches do nothing where *done is
// not 0 when they run, so panel_cholqr can queue this as its fallback
// without waiting for its decision. columns_per_meeting: how many columns
// the teams factor between two meetings, 1 .. panel_qr_meeting_columns for
// real scalars (0: the most), 1 for complex ones (0 or 1); a panel whose
// team scratch would not fit takes 1.
template <class T, class ExecSpace>
void panel_qr(const ExecSpace& space, const Matrix<T, ExecSpace>& a, const Vector<T, ExecSpace>& tau,
              const Vector<T, ExecSpace>& work, const PanelQrFactors<T, ExecSpace>& factors = {},
              const int* done = nullptr, int columns_per_meeting = 0) {
  const index_t m = a.extent(0), k = a.extent(1), kk = m < k ? m : k;
  if (!panel_qr_available<ExecSpace>(k))
    throw InvalidArgument("a", "panel_qr: runs on GPU execution spaces for panels of at most 64 columns, got " +
                                   std::to_string(k));
  if (static_cast<index_t>(tau.extent(0)) < kk) throw InvalidArgument("tau", "panel_qr: needs min(m, k) entries");
  if (static_cast<index_t>(work.extent(0)) < panel_qr_workspace_size())
    throw InvalidArgument("work", "panel_qr: needs panel_qr_workspace_size() entries");
  const Matrix<T, ExecSpace> v = factors.v, t = factors.t;
  if (v.data() != nullptr && (static_cast<index_t>(v.extent(0)) != m || static_cast<index_t>(v.extent(1)) != kk))
    throw InvalidArgument("factors.v", "panel_qr: V must be " + std::to_string(m) + " x " + std::to_string(kk) +
                                           ", got " + std::to_string(v.extent(0)) + " x " + std::to_string(v.extent(1)));
  if (t.data() != nullptr && (static_cast<index_t>(t.extent(0)) != kk || static_cast<index_t>(t.extent(1)) != kk))
    throw InvalidArgument("factors.t", "panel_qr: T must be " + std::to_string(kk) + " x " + std::to_string(kk) +
                                           ", got " + std::to_string(t.extent(0)) + " x " + std::to_string(t.extent(1)));
  const int most = is_complex_v<T> ? 1 : panel_qr_meeting_columns;
  if (columns_per_meeting < 0 || columns_per_meeting > most)
    throw InvalidArgument("columns_per_meeting", "panel_qr: 0 .. " + std::to_string(most) +
                                                     " columns a meeting for this scalar type, got " +
                                                     std::to_string(columns_per_meeting));
  const int block = columns_per_meeting == 0 ? most : columns_per_meeting;
  if (kk == 0) return;
  T* const buffers = work.data();
  int* const arrived = reinterpret_cast<int*>(work.data() + panel_qr_buffer_entries);
  Kokkos::parallel_for(
      "keig::panel_qr::zero", Kokkos::RangePolicy<ExecSpace>(space, 0, panel_qr_buffer_entries / 2),
      KOKKOS_LAMBDA(const index_t i) {
        if (done != nullptr && *done != 0) return;
        buffers[i] = T(0);
        if (i == 0) *arrived = 0;
      });
  if constexpr (backends::is_cuda_space_v<ExecSpace>) {
    // About 32 rows per team at least; at most one team per multiprocessor.
    index_t teams = (m + 31) / 32;
    const index_t limit = backends::multiprocessors(space);
    if (teams > limit) teams = limit;
    const index_t rows = (m + teams - 1) / teams;
    teams = (m + rows - 1) / rows;  // no team without rows
    const auto run = [&](auto cols_tag) {
      constexpr int Cols = decltype(cols_tag)::value;
      using Kernel = detail::PanelQr<T, ExecSpace, Cols>;
      const Kernel kernel{a, tau, buffers, arrived, m, k, kk, teams, rows, v, t, done};
      const auto launch = [&](const auto& functor) {
        using Functor = std::decay_t<decltype(functor)>;
        Kokkos::parallel_for("keig::panel_qr",
                             Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<Kernel::team_size, 1>>(
                                 space, teams, Kernel::team_size)
                                 .set_scratch_size(0, Kokkos::PerTeam(Functor::scratch_bytes())),
                             functor);
      };
      // The panel in registers where a team's rows fit: 4, 8 or 16 rows per
      // thread, 32 for scalars of at most 8 bytes (64 registers of doubles);
      // the fewest that hold the team's rows, since every step walks all of
      // a thread's slots.
      using R4 = detail::PanelQrResident<T, ExecSpace, 4, Cols>;
      using R8 = detail::PanelQrResident<T, ExecSpace, 8, Cols>;
      using R16 = detail::PanelQrResident<T, ExecSpace, 16, Cols>;
      // Several columns a meeting (real scalars) where the team scratch fits.
      if constexpr (!is_complex_v<T>) {
        constexpr int KB = panel_qr_meeting_columns;
        const auto blocked = [&](auto nr_tag) {
          using B = detail::PanelQrBlocked<T, ExecSpace, decltype(nr_tag)::value, KB, Cols>;
          if (rows > B::rows_per_team ||
              B::scratch_bytes() > size_t(Kokkos::TeamPolicy<ExecSpace>::scratch_size_max(0)))
            return false;
          launch(B{kernel, block});
          return true;
        };
        // (Not 32 rows a thread: 128 registers hold them only with 1-2 KB of
        // spills.)
        if (block > 1 && (blocked(std::integral_constant<int, 4>{}) || blocked(std::integral_constant<int, 8>{}) ||
                          blocked(std::integral_constant<int, 16>{})))
          return;
      }
      if (rows <= R4::rows_per_team) return launch(R4{kernel});
      if (rows <= R8::rows_per_team) return launch(R8{kernel});
      if (rows <= R16::rows_per_team) return launch(R16{kernel});
      if constexpr (sizeof(T) <= 8) {
        using R32 = detail::PanelQrResident<T, ExecSpace, 32, Cols>;
        if (rows <= R32::rows_per_team) return launch(R32{kernel});
      }
      launch(kernel);
    };
    if (k <= 32) run(std::integral_constant<int, 32>{});
    else run(std::integral_constant<int, 64>{});
  }
}

// The same outputs from the vendor: geqrf on a (m x k) in place, then V
// (m x min(m, k), unit diagonal, zeros above) and T (?larft's, zeros below)
// as panel_qr forms them. Any execution space; asynchronous where the
// vendor's calls are.
template <class T, class ExecSpace>
void panel_qr_vendor(const backends::Context<ExecSpace>& ctx, const Matrix<T, ExecSpace>& a,
                     const Vector<T, ExecSpace>& tau, const PanelQrFactors<T, ExecSpace>& factors) {
  const Matrix<T, ExecSpace> v = factors.v, t = factors.t;
  const index_t m = v.extent(0), kk = v.extent(1);
  backends::geqrf<T>(ctx, a, tau);
  Kokkos::parallel_for(
      "keig::panel_qr_vendor::v",
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2, Kokkos::Iterate::Left, Kokkos::Iterate::Left>>(
          ctx.space(), {0, 0}, {m, kk}),
      KOKKOS_LAMBDA(const index_t i, const index_t c) { v(i, c) = reflector_entry(i, c, a(i, c)); });
  backends::larft<T>(ctx, v, tau, t);
  // The vendor's larft may leave T's strict lower triangle alone or use it
  // as workspace.
  Kokkos::parallel_for(
      "keig::panel_qr_vendor::t_lower", Kokkos::RangePolicy<ExecSpace>(ctx.space(), 0, kk),
      KOKKOS_LAMBDA(const index_t c) {
        for (index_t i = c + 1; i < kk; ++i) t(i, c) = T(0);
      });
}

}  // namespace keig::stages
