// stages/panel_cholqr: Householder QR of a tall real panel (m x k, m >= k,
// k <= 64) in three launches whatever k, for sy2sb's panels: CholeskyQR2
// gives an orthonormal Q with A = Q R, and Householder reconstruction turns Q
// into the reflectors ?geqrf stores (V unit lower trapezoidal, T, tau, R).
//
// Why: panel_qr's teams meet once per column, about 4.5 us a meeting on an
// H200 whatever m, so sy2sb's panels took 0.075 of its 0.245 s at n = 16384
// (64 meetings a panel). Here the teams meet twice a panel, through the last
// team to arrive (it factors the k x k sums alone):
//
//   1. G = A^T A (every team adds its rows' share);  last team: R1 = chol(G)^T, R1^{-1}
//   2. Q1 = A R1^{-1} (into V), G = Q1^T Q1;          last team: R2 = chol(G)^T
//        (CholeskyQR2: Q = Q1 R2^{-1}, R = R2 R1; Fukaya, Nakatsukasa,
//        Yanagisawa, Yamamoto, ScalA 2014)
//      Q(0:k) = Q1(0:k) R2^{-1}, then the LU of Q(0:k) - D = L1 U without
//        pivoting, D(j) = -sign of the pivot entry as the elimination
//        reaches it, so |U(j, j)| = |q| + 1 >= 1 (Ballard, Demmel, Grigori,
//        Jacquelin, Knight, Nguyen, IPDPS 2014, "Reconstructing Householder
//        vectors from tall-skinny QR"),
//      T = -U D L1^{-T}, tau = diag(T), R_h = D R, M = R2^{-1} U^{-1}
//   3. V(k:m) = Q1(k:m) M  (= Q(k:m) U^{-1}: the rest of the LU's L)
//
// Householder QR is A = H [R_h; 0] with H = I - V T V^T, so the first k
// columns of H are Q D (Q's columns up to sign) and Q - [D; 0] = V (-T V1^T D)
// is an LU factorization: unit lower trapezoidal V times upper triangular
// U = -T V1^T D. The sign rule is ?larfg's (beta = -sign(alpha) |x|), so V,
// tau and R agree with ?geqrf's to rounding, except on square panels, whose
// last column ?geqrf leaves alone (tau = 0) and this reflects (tau = 2).
//
// Not sy2sb's default (Sy2sbPanel::CholQr opts in): the last teams' k x k
// factorizations take a team barrier per elimination step, five sweeps of
// k steps a panel, and measured slower than panel_qr's meetings (H200,
// b = 64, n = 16384: the panels alone 0.132 against 0.079 s). Blocked k x k
// factorizations (a warp per diagonal block, the rest as team products)
// would cut the barriers about fourfold.
//
// CholeskyQR2 is as accurate as Householder QR while cond(A) stays below
// about u^{-1/2} (1e8 in double, 4e3 in float). Past that, or on a singular
// panel, it refuses: a Cholesky pivot that is not positive, or
// ||Q1^T Q1 - I||_F > 1/2 (Q1 too far from orthonormal for the second pass
// to reach full accuracy), leaves A untouched and the panel goes to
// panel_qr on GPUs (a launch that does nothing unless refused) and to the
// vendor's geqrf on hosts. Nothing waits on the host for the decision on
// GPUs: it is a flag in the workspace.
#pragma once

#include <Kokkos_Core.hpp>
#include <type_traits>

#include "keig/backends/context.hpp"
#include "keig/backends/device_sync.hpp"
#include "keig/backends/lapack.hpp"
#include "keig/stages/panel_qr.hpp"
#include "keig/views/compat.hpp"
#include "keig/views/matrix.hpp"

namespace keig::stages {

namespace detail {
// Workspace layout (elements of T): the Gram sums, five k x k factors (64 x
// 64, column-major), then the two arrival counters and the decision flag,
// then panel_qr's workspace for the refused panels.
inline constexpr index_t cholqr_square = panel_qr_max_columns * panel_qr_max_columns;
inline constexpr index_t cholqr_matrices = 6;
inline constexpr int cholqr_accepted_slot = 2;  // after the two arrival counters
// The arrival counters and the decision flag, after the k x k buffers.
template <class T>
KOKKOS_INLINE_FUNCTION auto cholqr_ints(T* work) {
  using I = std::conditional_t<std::is_const_v<T>, const int, int>;
  return reinterpret_cast<I*>(work + cholqr_matrices * cholqr_square);
}
}  // namespace detail

// Real scalars, 1 <= k <= 64, on every execution space.
template <class T>
bool panel_cholqr_available(index_t k) {
  return !is_complex_v<T> && k >= 1 && k <= panel_qr_max_columns;
}

// Workspace (elements of T).
inline index_t panel_cholqr_workspace_size() {
  return detail::cholqr_matrices * detail::cholqr_square + 4 + panel_qr_workspace_size();
}

// The part of panel_cholqr's workspace that its fallback, panel_qr, uses
// (callers that also run panel_qr on its own pass this part).
template <class T, class ExecSpace>
Vector<T, ExecSpace> panel_cholqr_qr_work(const Vector<T, ExecSpace>& work) {
  const index_t end = panel_cholqr_workspace_size();
  return Kokkos::subview(work, std::make_pair(end - panel_qr_workspace_size(), end));
}

namespace detail {

template <class T, class ExecSpace>
struct PanelCholQr {
  using R = real_t<T>;
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using Scratch = Kokkos::View<T*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  static constexpr int kmax = static_cast<int>(panel_qr_max_columns);
  // A team of 256 threads on GPUs (one Gram tile of 4 x 4 entries, or 4
  // entries of a k x k factor in each of 4 row groups, per thread); one
  // thread per team on hosts, which walks all of them.
  static constexpr int threads = backends::is_cuda_space_v<ExecSpace> ? 256 : 1;
  static constexpr int slots = 256;  // work items of a 256-thread layout
  static constexpr int chunk = 16;   // panel rows staged in team scratch at a time
  static constexpr int ld = kmax + 1;
  // Scratch: a k x k factor S (row-major, ld), a chunk of rows X (row-major,
  // ld), three vectors of k.
  static size_t scratch_bytes() { return Scratch::shmem_size(kmax * ld + chunk * ld + 3 * kmax); }

  Matrix<T, ExecSpace> a, v, t;
  Vector<T, ExecSpace> tau;
  T* work;
  index_t m, k, teams, rows;  // rows: a team's share (multiple of chunk)

  // Global k x k buffers (column-major, leading dimension 64).
  KOKKOS_INLINE_FUNCTION T* buffer(int which) const { return work + which * cholqr_square; }
  enum : int { kGram = 0, kR1inv = 1, kR1 = 2, kR2 = 3, kR2inv = 4, kU = 5 };
  KOKKOS_INLINE_FUNCTION int* counter(int phase) const {
    return cholqr_ints(work) + phase;
  }
  KOKKOS_INLINE_FUNCTION int* accepted() const { return cholqr_ints(work) + cholqr_accepted_slot; }
  KOKKOS_INLINE_FUNCTION static T& at(T* p, int i, int j) { return p[i + j * kmax]; }
  KOKKOS_INLINE_FUNCTION static const T& at(const T* p, int i, int j) { return p[i + j * kmax]; }

  struct Shared {
    T* s;  // k x k, S(i, j) = s[i * ld + j]
    T* x;  // chunk x k
    T *d, *p, *e;
    KOKKOS_INLINE_FUNCTION T& S(int i, int j) const { return s[i * ld + j]; }
    KOKKOS_INLINE_FUNCTION T& X(int r, int j) const { return x[r * ld + j]; }
  };
  KOKKOS_INLINE_FUNCTION Shared shared(const Team& team) const {
    T* base = Scratch(team.team_scratch(0), kmax * ld + chunk * ld + 3 * kmax).data();
    return Shared{base, base + kmax * ld, base + (kmax + chunk) * ld, base + (kmax + chunk) * ld + kmax,
                  base + (kmax + chunk) * ld + 2 * kmax};
  }

  // ---- steps over a k x k factor in S, one team barrier per elimination step.
  // Work item w of 256: column c = w % 64, rows i = w / 64 + 4 q.

  // S's lower triangle holds a symmetric matrix G. Afterwards S's strict
  // lower triangle and sh.d hold L of G = L L^T, and S's upper triangle,
  // diagonal included, holds R^{-1} = L^{-T}; false (every thread) on a
  // pivot that is not positive. One elimination sweep for both: step j
  // eliminates column j of G (unscaled, G = L~ D L~^T) and applies the
  // same row operation to Y = L~^{-1}, kept transposed in the strict upper
  // triangle (Y(i, c) at S(c, i), unit diagonal implied); then
  // L = L~ D^{1/2} and L^{-1} = D^{-1/2} Y.
  KOKKOS_INLINE_FUNCTION bool cholesky_inverse(const Team& team, const Shared& sh) const {
    const int t = team.team_rank();
    this->for_lower(team, [&](const int i, const int c) { if (i > c) sh.S(c, i) = T(0); });
    team.team_barrier();
    for (int j = 0; j < k; ++j) {
      const T pivot = sh.S(j, j);
      if (!(pivot > T(0))) return false;
      const T inv = T(1) / pivot;
      for (int w = t; w < slots; w += threads) {
        const int c = w % kmax;
        if (c >= k) continue;
        if (c > j) {  // G(i, c) -= L~(i, j) D(j) L~(c, j), i >= c
          const T f = sh.S(c, j) * inv;
          for (int i = first_row(w, c); i < k; i += 4) sh.S(i, c) -= sh.S(i, j) * f;
        } else {  // Y(i, c) -= L~(i, j) Y(j, c), i > j
          const T f = (c == j ? T(1) : sh.S(c, j)) * inv;
          for (int i = first_row(w, j + 1); i < k; i += 4) sh.S(c, i) -= sh.S(i, j) * f;
        }
      }
      team.team_barrier();
    }
    for (int c = t; c < k; c += threads) sh.d[c] = compat::sqrt(sh.S(c, c));
    team.team_barrier();
    this->for_lower(team, [&](const int i, const int c) {
      if (i == c) {
        sh.S(c, c) = T(1) / sh.d[c];
      } else {
        sh.S(i, c) /= sh.d[c];
        sh.S(c, i) /= sh.d[i];
      }
    });
    team.team_barrier();
    return true;
  }
  // f(i, c) over this thread's entries of a k x k factor (work item w:
  // column c = w % 64, rows w / 64 + 4 q): all rows, or those on and below
  // the diagonal.
  template <class F>
  KOKKOS_INLINE_FUNCTION void for_all(const Team& team, const F& f) const {
    for (int w = team.team_rank(); w < slots; w += threads) {
      const int c = w % kmax;
      if (c >= k) continue;
      for (int i = w / kmax; i < k; i += 4) f(i, c);
    }
  }
  template <class F>
  KOKKOS_INLINE_FUNCTION void for_lower(const Team& team, const F& f) const {
    for (int w = team.team_rank(); w < slots; w += threads) {
      const int c = w % kmax;
      if (c >= k) continue;
      for (int i = first_row(w, c); i < k; i += 4) f(i, c);
    }
  }
  // First of work item w's rows (w / 64 + 4 q) at or below row c.
  KOKKOS_INLINE_FUNCTION static int first_row(int w, int c) {
    const int i0 = w / kmax;
    return c + (((i0 - c) % 4) + 4) % 4;
  }

  // S's strict lower triangle and the diagonal sh.d hold a lower triangular
  // L; afterwards S's upper triangle, diagonal included, holds L^{-T}
  // (entry (c, i) = (L^{-1})(i, c)); the strict lower triangle is kept.
  // Forward substitution on the identity, right-looking and unscaled:
  // Y(i, :) -= L(i, j) / L(j, j) Y(j, :), then Y(i, :) /= L(i, i).
  KOKKOS_INLINE_FUNCTION void invert_lower_transposed(const Team& team, const Shared& sh) const {
    const int t = team.team_rank();
    this->for_lower(team, [&](const int i, const int c) { sh.S(c, i) = i == c ? T(1) : T(0); });
    team.team_barrier();
    for (int j = 0; j + 1 < k; ++j) {
      const T dj = sh.d[j];
      for (int w = t; w < slots; w += threads) {
        const int c = w % kmax;
        if (c > j) continue;
        const T yjc = sh.S(c, j) / dj;
        for (int i = first_row(w, j + 1); i < k; i += 4) sh.S(c, i) -= sh.S(i, j) * yjc;
      }
      team.team_barrier();
    }
    this->for_lower(team, [&](const int i, const int c) { sh.S(c, i) /= sh.d[i]; });
    team.team_barrier();
  }

  // LU of S - D without pivoting, D(j) = -sign(the pivot entry) (+ counts as
  // positive, as in ?larfg): U on and above the diagonal of S, L1's strict
  // lower triangle below it (unit diagonal implied), D in sh.e.
  KOKKOS_INLINE_FUNCTION void lu_sign_shift(const Team& team, const Shared& sh) const {
    const int t = team.team_rank();
    for (int j = 0; j < k; ++j) {
      const T q = sh.S(j, j), dj = q >= T(0) ? T(-1) : T(1), pivot = q - dj;
      if (t == 0) {
        sh.e[j] = dj;
        sh.p[j] = pivot;
      }
      for (int w = t; w < slots; w += threads) {
        const int c = w % kmax;
        if (c <= j || c >= k) continue;
        const T f = sh.S(j, c) / pivot;
        for (int i = first_row(w, j + 1); i < k; i += 4) sh.S(i, c) -= sh.S(i, j) * f;
      }
      team.team_barrier();
    }
    this->for_lower(team, [&](const int i, const int c) { sh.S(i, c) = i == c ? sh.p[c] : sh.S(i, c) / sh.p[c]; });
    team.team_barrier();
  }

  // ---- the panel's rows, a chunk at a time.

  // X = rows [r0, r1) of src (the rest of the chunk zero), coalesced.
  KOKKOS_INLINE_FUNCTION void stage(const Team& team, const Shared& sh, const Matrix<T, ExecSpace>& src, index_t r0,
                                    index_t r1) const {
    for (int w = team.team_rank(); w < chunk * kmax; w += threads) {
      const int r = w % chunk, c = w / chunk;
      if (c < k) sh.X(r, c) = r0 + r < r1 ? src(r0 + r, c) : T(0);
    }
  }
  // X = X F with F upper triangular in S; the rows are replaced in place.
  KOKKOS_INLINE_FUNCTION void times_upper(const Team& team, const Shared& sh) const {
    constexpr int per = chunk * kmax / slots;  // 4 entries a work item
    T out[slots / threads][per];
    for (int w = team.team_rank(), s = 0; w < slots; w += threads, ++s) {
      const int c = w % kmax, r0 = w / kmax;
      for (int q = 0; q < per; ++q) out[s][q] = T(0);
      if (c < k)
        for (int l = 0; l <= c; ++l) {
          const T f = sh.S(l, c);
          for (int q = 0; q < per; ++q) out[s][q] += sh.X(r0 + 4 * q, l) * f;
        }
    }
    team.team_barrier();
    for (int w = team.team_rank(), s = 0; w < slots; w += threads, ++s) {
      const int c = w % kmax, r0 = w / kmax;
      if (c < k)
        for (int q = 0; q < per; ++q) sh.X(r0 + 4 * q, c) = out[s][q];
    }
    team.team_barrier();
  }
  // X = rows [r0, r1) of src times the upper triangular factor in S.
  KOKKOS_INLINE_FUNCTION void transform_chunk(const Team& team, const Shared& sh, const Matrix<T, ExecSpace>& src,
                                              index_t r0, index_t r1) const {
    stage(team, sh, src, r0, r1);
    team.team_barrier();
    times_upper(team, sh);
  }
  // acc += X^T X on work item w's 4 x 4 entries (ti + 16 a, tj + 16 b).
  KOKKOS_INLINE_FUNCTION void add_gram(const Team& team, const Shared& sh, T (&acc)[slots / threads][16]) const {
    for (int w = team.team_rank(), s = 0; w < slots; w += threads, ++s) {
      const int ti = w / 16, tj = w % 16;
      for (int r = 0; r < chunk; ++r) {
        T xa[4], xb[4];
        for (int q = 0; q < 4; ++q) {
          xa[q] = sh.X(r, ti + 16 * q);
          xb[q] = sh.X(r, tj + 16 * q);
        }
        for (int qa = 0; qa < 4; ++qa)
          for (int qb = 0; qb < 4; ++qb) acc[s][qa * 4 + qb] += xa[qa] * xb[qb];
      }
    }
  }
  // The Gram sums of the lower triangle into the global buffer, then the
  // arrival; true in every thread of the last team to arrive (it then sees
  // every team's sums and stores).
  KOKKOS_INLINE_FUNCTION bool arrive(const Team& team, const T (&acc)[slots / threads][16], int phase) const {
    T* const gram = buffer(kGram);
    for (int w = team.team_rank(), s = 0; w < slots; w += threads, ++s) {
      const int ti = w / 16, tj = w % 16;
      for (int qa = 0; qa < 4; ++qa)
        for (int qb = 0; qb < 4; ++qb) {
          const int i = ti + 16 * qa, c = tj + 16 * qb;
          if (i < k && c <= i) Kokkos::atomic_add(&at(gram, i, c), acc[s][qa * 4 + qb]);
        }
    }
    Kokkos::memory_fence();
    team.team_barrier();
    int last = 0;
    Kokkos::single(
        Kokkos::PerTeam(team),
        [&](int& l) {
          l = Kokkos::atomic_fetch_add(counter(phase), 1) == teams - 1;
          Kokkos::memory_fence();
        },
        last);
    return last != 0;
  }
  // S = the Gram sums (lower triangle); the buffer and the counter are reset
  // for the next launch.
  KOKKOS_INLINE_FUNCTION void take_gram(const Team& team, const Shared& sh, int phase) const {
    T* const gram = buffer(kGram);
    this->for_lower(team, [&](const int i, const int c) {
      sh.S(i, c) = backends::load_coherent(&at(gram, i, c));
      at(gram, i, c) = T(0);
    });
    if (team.team_rank() == 0) *counter(phase) = 0;
    team.team_barrier();
  }
  // Global buffer `which` = S's upper triangle (diagonal included), zeros below.
  KOKKOS_INLINE_FUNCTION void save_upper(const Team& team, const Shared& sh, int which) const {
    T* const p = buffer(which);
    this->for_all(team, [&](const int i, const int c) { at(p, i, c) = i <= c ? sh.S(i, c) : T(0); });
  }
  // Global buffer `which` = the transpose of S's lower triangle, with
  // diagonal sh.d: the upper triangular L^T.
  KOKKOS_INLINE_FUNCTION void save_lower_transposed(const Team& team, const Shared& sh, int which) const {
    T* const p = buffer(which);
    this->for_all(team, [&](const int i, const int c) { at(p, i, c) = i < c ? sh.S(c, i) : (i == c ? sh.d[c] : T(0)); });
  }
  // S = global buffer `which` (k x k).
  KOKKOS_INLINE_FUNCTION void load_factor(const Team& team, const Shared& sh, int which) const {
    const T* const p = buffer(which);
    this->for_all(team, [&](const int i, const int c) { sh.S(i, c) = at(p, i, c); });
  }
  // The panel's rows of this team, [r0, r1).
  KOKKOS_INLINE_FUNCTION void team_rows(const Team& team, index_t first, index_t& r0, index_t& r1) const {
    r0 = first + team.league_rank() * rows;
    r1 = r0 + rows < m ? r0 + rows : m;
  }
};

// Launch 1: the Gram sums of A; the last team factors them (R1^{-1} for
// launch 2, R1 for R_h) or refuses.
template <class T, class ExecSpace>
struct CholQrFirstPass : PanelCholQr<T, ExecSpace> {
  using Base = PanelCholQr<T, ExecSpace>;
  using typename Base::Team;
  using Base::slots;
  using Base::threads;
  KOKKOS_INLINE_FUNCTION void operator()(const Team& team) const {
    const auto sh = this->shared(team);
    index_t r0, r1;
    this->team_rows(team, 0, r0, r1);
    T acc[slots / threads][16] = {};
    for (index_t c0 = r0; c0 < r1; c0 += Base::chunk) {
      this->stage(team, sh, this->a, c0, c0 + Base::chunk < r1 ? c0 + Base::chunk : r1);
      team.team_barrier();
      this->add_gram(team, sh, acc);
      team.team_barrier();
    }
    if (!this->arrive(team, acc, 0)) return;
    this->take_gram(team, sh, 0);
    const bool ok = this->cholesky_inverse(team, sh);
    if (ok) {
      this->save_lower_transposed(team, sh, Base::kR1);
      this->save_upper(team, sh, Base::kR1inv);
    }
    if (team.team_rank() == 0) *this->accepted() = ok ? 1 : 0;
  }
};

// Launch 2: Q1 = A R1^{-1} into V and its Gram sums; the last team checks
// Q1, finishes CholeskyQR2 and reconstructs the reflectors (see the top of
// this file): T, tau, the panel's first k rows (R_h and L1), V's first k
// rows, and M for launch 3.
template <class T, class ExecSpace>
struct CholQrSecondPass : PanelCholQr<T, ExecSpace> {
  using Base = PanelCholQr<T, ExecSpace>;
  using typename Base::Team;
  using Base::at;
  using Base::first_row;
  using Base::kmax;
  using Base::slots;
  using Base::threads;
  KOKKOS_INLINE_FUNCTION void operator()(const Team& team) const {
    if (*this->accepted() == 0) return;  // launch 1 refused the panel
    const auto sh = this->shared(team);
    const int t = team.team_rank();
    const int k = static_cast<int>(this->k);
    this->load_factor(team, sh, Base::kR1inv);
    index_t r0, r1;
    this->team_rows(team, 0, r0, r1);
    T acc[slots / threads][16] = {};
    for (index_t c0 = r0; c0 < r1; c0 += Base::chunk) {
      const index_t c1 = c0 + Base::chunk < r1 ? c0 + Base::chunk : r1;
      this->transform_chunk(team, sh, this->a, c0, c1);  // Q1 = A R1^{-1}
      for (int w = t; w < Base::chunk * kmax; w += threads) {
        const int r = w % Base::chunk, c = w / Base::chunk;
        if (c < k && c0 + r < c1) this->v(c0 + r, c) = sh.X(r, c);
      }
      this->add_gram(team, sh, acc);
      team.team_barrier();
    }
    if (!this->arrive(team, acc, 1)) return;
    this->take_gram(team, sh, 1);
    // ||Q1^T Q1 - I||_F^2 over the lower triangle (off-diagonal twice).
    T err = T(0);
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, k * k),
        [&](const int w, T& s) {
          const int i = w % k, c = w / k;
          if (i >= c) {
            const T e = sh.S(i, c) - (i == c ? T(1) : T(0));
            s += (i == c ? T(1) : T(2)) * e * e;
          }
        },
        err);
    bool ok = err <= T(0.25) && this->cholesky_inverse(team, sh);
    if (!ok) {
      if (t == 0) *this->accepted() = 0;
      return;
    }
    // R2 (kept for R = R2 R1) and R2^{-1}.
    this->save_lower_transposed(team, sh, Base::kR2);
    this->save_upper(team, sh, Base::kR2inv);
    team.team_barrier();
    // S = Q(0:k) = Q1(0:k) R2^{-1} (Q1's first rows as the teams stored them).
    {
      constexpr int per = kmax / 4;
      T q[slots / threads][per];
      for (int w = t, s = 0; w < slots; w += threads, ++s) {
        const int c = w % kmax, i0 = w / kmax;
        for (int h = 0; h < per; ++h) {
          const int i = i0 + 4 * h;
          T sum = T(0);
          if (c < k && i < k)
            for (int l = 0; l <= c; ++l) sum += backends::load_coherent(&this->v(i, l)) * sh.S(l, c);
          q[s][h] = sum;
        }
      }
      team.team_barrier();
      for (int w = t, s = 0; w < slots; w += threads, ++s) {
        const int c = w % kmax, i0 = w / kmax;
        for (int h = 0; h < per; ++h)
          if (c < k && i0 + 4 * h < k) sh.S(i0 + 4 * h, c) = q[s][h];
      }
      team.team_barrier();
    }
    this->lu_sign_shift(team, sh);
    // U to its buffer; then L1^{-T} (unit diagonal) into S's upper triangle,
    // L1 staying below.
    this->save_upper(team, sh, Base::kU);
    for (int c = t; c < k; c += threads) sh.d[c] = T(1);
    team.team_barrier();
    this->invert_lower_transposed(team, sh);
    const T* const u = this->buffer(Base::kU);
    const T* const r1m = this->buffer(Base::kR1);
    const T* const r2m = this->buffer(Base::kR2);
    this->for_all(team, [&](const int i, const int c) {
      // T = -U D L1^{-T} (upper triangular).
      T tic = T(0);
      if (i <= c) {
        for (int l = i; l <= c; ++l) tic -= at(u, i, l) * sh.e[l] * sh.S(l, c);
        if (i == c) this->tau(i) = tic;
      }
      this->t(i, c) = tic;
      // The panel's row i: R_h = D R2 R1 on and above the diagonal, L1 below.
      T aic;
      if (i <= c) {
        T r = T(0);
        for (int l = i; l <= c; ++l) r += at(r2m, i, l) * at(r1m, l, c);
        aic = sh.e[i] * r;
      } else {
        aic = sh.S(i, c);
      }
      this->a(i, c) = aic;
      this->v(i, c) = reflector_entry(i, c, aic);
    });
    team.team_barrier();
    // M = R2^{-1} U^{-1}: U^T into S's lower triangle, inverted.
    this->for_lower(team, [&](const int i, const int c) { sh.S(i, c) = at(u, c, i); });
    for (int c = t; c < k; c += threads) sh.d[c] = at(u, c, c);
    team.team_barrier();
    this->invert_lower_transposed(team, sh);  // S's upper triangle: U^{-1}
    T* const mm = this->buffer(Base::kR1inv);  // launch 2's R1^{-1} is no longer needed: M goes there
    const T* const r2inv = this->buffer(Base::kR2inv);
    this->for_all(team, [&](const int i, const int c) {
      T sum = T(0);
      for (int l = i; l <= c; ++l) sum += at(r2inv, i, l) * sh.S(l, c);
      at(mm, i, c) = sum;
    });
    if (t == 0) *this->accepted() = 1;
  }
};

// Launch 3: V(k:m) = Q1(k:m) M in place, and the panel's rows below the
// first k get the same reflector entries.
template <class T, class ExecSpace>
struct CholQrThirdPass : PanelCholQr<T, ExecSpace> {
  using Base = PanelCholQr<T, ExecSpace>;
  using typename Base::Team;
  using Base::kmax;
  using Base::slots;
  using Base::threads;
  KOKKOS_INLINE_FUNCTION void operator()(const Team& team) const {
    if (*this->accepted() == 0) return;
    const auto sh = this->shared(team);
    const int t = team.team_rank();
    const int k = static_cast<int>(this->k);
    this->load_factor(team, sh, Base::kR1inv);  // M, which launch 2 left in R1^{-1}'s place
    index_t r0, r1;
    this->team_rows(team, this->k, r0, r1);
    for (index_t c0 = r0; c0 < r1; c0 += Base::chunk) {
      const index_t c1 = c0 + Base::chunk < r1 ? c0 + Base::chunk : r1;
      this->transform_chunk(team, sh, this->v, c0, c1);  // V = Q1 M
      for (int w = t; w < Base::chunk * kmax; w += threads) {
        const int r = w % Base::chunk, c = w / Base::chunk;
        if (c < k && c0 + r < c1) {
          this->v(c0 + r, c) = sh.X(r, c);
          this->a(c0 + r, c) = sh.X(r, c);
        }
      }
      team.team_barrier();
    }
  }
};

}  // namespace detail

// Zeroes the workspace's sums and counters: once before the first panel
// (each panel leaves them zero for the next).
template <class T, class ExecSpace>
void panel_cholqr_prepare(const ExecSpace& space, const Vector<T, ExecSpace>& work) {
  if (static_cast<index_t>(work.extent(0)) < panel_cholqr_workspace_size())
    throw InvalidArgument("work", "panel_cholqr: needs panel_cholqr_workspace_size() entries");
  Kokkos::deep_copy(space, Kokkos::subview(work, std::make_pair(index_t(0), panel_cholqr_workspace_size())), T(0));
}

// Whether the last panel_cholqr on `work` took the CholeskyQR2 path (false:
// it was refused and factored by Householder QR). Waits for `space`.
template <class T, class ExecSpace>
bool panel_cholqr_accepted(const ExecSpace& space, const Vector<T, ExecSpace>& work) {
  int flag = 0;
  const int* const p = detail::cholqr_ints<const T>(work.data()) + detail::cholqr_accepted_slot;
  Kokkos::View<int, Kokkos::HostSpace> host(&flag);
  Kokkos::deep_copy(space, host, Kokkos::View<const int, memory_space_of<ExecSpace>, Kokkos::MemoryUnmanaged>(p));
  space.fence();
  return flag != 0;
}

namespace detail {

// panel_cholqr for real scalars.
template <class T, class ExecSpace>
void panel_cholqr_real(const backends::Context<ExecSpace>& ctx, const Matrix<T, ExecSpace>& a,
                       const Vector<T, ExecSpace>& tau, const Vector<T, ExecSpace>& work,
                       const PanelQrFactors<T, ExecSpace>& factors) {
  const ExecSpace& space = ctx.space();
  const index_t m = a.extent(0), k = a.extent(1);
  if (!panel_cholqr_available<T>(k))
    throw InvalidArgument("a", "panel_cholqr: panels of 1 to 64 columns, got " + std::to_string(k));
  if (m < k)
    throw InvalidArgument("a", "panel_cholqr: needs at least as many rows as columns, got " + std::to_string(m) +
                                   " x " + std::to_string(k));
  if (static_cast<index_t>(tau.extent(0)) < k) throw InvalidArgument("tau", "panel_cholqr: needs k entries");
  if (static_cast<index_t>(work.extent(0)) < panel_cholqr_workspace_size())
    throw InvalidArgument("work", "panel_cholqr: needs panel_cholqr_workspace_size() entries");
  const Matrix<T, ExecSpace> v = factors.v, t = factors.t;
  if (static_cast<index_t>(v.extent(0)) != m || static_cast<index_t>(v.extent(1)) != k || v.data() == nullptr)
    throw InvalidArgument("factors.v", "panel_cholqr: V must be " + std::to_string(m) + " x " + std::to_string(k));
  if (static_cast<index_t>(t.extent(0)) != k || static_cast<index_t>(t.extent(1)) != k || t.data() == nullptr)
    throw InvalidArgument("factors.t", "panel_cholqr: T must be " + std::to_string(k) + " x " + std::to_string(k));
  using Base = detail::PanelCholQr<T, ExecSpace>;
  const index_t chunk = Base::chunk;
  // At most one team a multiprocessor (host: a thread): the Gram sums of
  // every team meet in k (k + 1) / 2 atomic adds each.
  const auto split = [&](index_t rows_total, index_t limit) {
    Base kernel{a, v, t, tau, work.data(), m, k, 1, 0};
    index_t teams = (rows_total + chunk - 1) / chunk;
    if (teams > limit) teams = limit;
    if (teams < 1) teams = 1;
    index_t rows = (rows_total + teams - 1) / teams;
    rows = (rows + chunk - 1) / chunk * chunk;
    kernel.teams = rows > 0 ? (rows_total + rows - 1) / rows : 1;
    kernel.rows = rows;
    return kernel;
  };
  const index_t processors =
      backends::is_cuda_space_v<ExecSpace> ? backends::multiprocessors(space) : index_t(space.concurrency());
  const auto launch = [&](const char* name, const auto& functor, index_t teams) {
    using Functor = std::decay_t<decltype(functor)>;
    Kokkos::parallel_for(name,
                         Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<Base::threads, 1>>(space, teams,
                                                                                               Base::threads)
                             .set_scratch_size(0, Kokkos::PerTeam(Base::scratch_bytes())),
                         functor);
  };
  const Base gram = split(m, processors);
  launch("keig::panel_cholqr::first", detail::CholQrFirstPass<T, ExecSpace>{gram}, gram.teams);
  launch("keig::panel_cholqr::second", detail::CholQrSecondPass<T, ExecSpace>{gram}, gram.teams);
  const Base rest = split(m - k, 4 * processors);
  launch("keig::panel_cholqr::third", detail::CholQrThirdPass<T, ExecSpace>{rest}, rest.teams);
  const Vector<T, ExecSpace> qr_work = panel_cholqr_qr_work<T, ExecSpace>(work);
  const int* const accepted = detail::cholqr_ints<const T>(work.data()) + detail::cholqr_accepted_slot;
  if constexpr (backends::is_cuda_space_v<ExecSpace>) {
    panel_qr<T, ExecSpace>(space, a, tau, qr_work, factors, accepted);
  } else {
    space.fence();
    if (*accepted != 0) return;
    panel_qr_vendor<T, ExecSpace>(ctx, a, tau, factors);
  }
}

}  // namespace detail

// QR of the real panel a (m x k, m >= k, 1 <= k <= 64; any leading
// dimension) in place, as ?geqrf: R on and above the diagonal, the
// reflectors below it, tau (k entries); factors.v (m x k: unit diagonal,
// zeros above) and factors.t (k x k, ?larft's T) are required. work:
// panel_cholqr_workspace_size() entries, zeroed by panel_cholqr_prepare
// before the first panel. Asynchronous on ctx.space() on GPUs; on hosts it
// waits for the decision between CholeskyQR2 and the vendor's geqrf.
template <class T, class ExecSpace>
void panel_cholqr(const backends::Context<ExecSpace>& ctx, const Matrix<T, ExecSpace>& a,
                  const Vector<T, ExecSpace>& tau, const Vector<T, ExecSpace>& work,
                  const PanelQrFactors<T, ExecSpace>& factors) {
  if constexpr (is_complex_v<T>) {
    throw InvalidArgument("a", "panel_cholqr: real panels only, got " + std::to_string(a.extent(1)) +
                                   " complex columns");
  } else {
    detail::panel_cholqr_real<T, ExecSpace>(ctx, a, tau, work, factors);
  }
}

}  // namespace keig::stages
