// stages/sb2st: second stage of the two-stage reduction, Hermitian band
// (half-bandwidth b) -> real symmetric tridiagonal by bulge chasing,
// Q2^H B Q2 = T (seed 004 §2.2.1 and Fig. 2; LAPACK ?hb2st_kernels).
//
// Sweep s annihilates column s below its subdiagonal with one reflector
// (step 0), which fills the next b x b block below the band; step k >= 1
// applies the previous reflector to that block from the right, annihilates
// only the block's first column with a new reflector (left), and applies the
// new reflector two-sided to the next diagonal block. What stays of a bulge
// is removed by the following sweeps, so the band storage holds 2b
// subdiagonals.
//
// Parallelism (the device version the seeds do not have): step k of sweep s
// reads and writes entries A(i, j) with row i in [s+1+kb, s+1+(k+1)b) only
// (the bulge block C and the diagonal block D share their rows). Step k' of
// sweep s-1 has rows [s+k'b, s+(k'+1)b), which meet those only for k' = k
// and k' = k+1: task (s, k) may run as soon as sweep s-1 has finished its
// step k+1 (its step k+2 touches rows from s+(k+2)b on, disjoint entries,
// although it shares the index s+(k+1)b as a column). Running task (s, k) at
// time t = 2s + k gives a dependency wave: every launch executes all tasks of
// one t (about n/(2b) sweeps in flight), one team each, and the critical path
// is 2 tasks per sweep. The same source runs on host spaces, where the teams
// are the OpenMP threads.
//
// Reflector (s, k) acts on rows [s+1+kb, s+1+kb+L), L = min(b, n-s-1-kb),
// H = I - tau v v^H with v(0) = 1. When `reflectors` is not empty it is
// written to reflectors(k*b + r, n-1-s): r = 0 holds tau, r = 1..L-1 hold
// v(1..L-1); the sweeps' vectors then tile the strict upper triangle of an
// n x n matrix exactly (sweep s owns the n-1-s entries above the diagonal of
// column n-1-s), which is where the two-stage driver keeps them: no O(n^2)
// workspace beyond A.
#pragma once

#include <Kokkos_Core.hpp>

#include "keig/backends/device_sync.hpp"
#include "keig/backends/warp.hpp"
#include "keig/stages/sytrd.hpp"
#include "keig/views/matrix.hpp"

namespace keig::stages {

// Task kernels. Global: one team walks b-long loops over the band in place
// (any execution space). Tiled: every thread of a ceil(b/4)^2 team owns a
// 4 x 4 tile of the bulge block and of the diagonal block in registers, so a
// task is one round trip to memory plus team reductions (GPUs, b <= 128).
// Global and Tiled launch one kernel per wave (2n launches). Persistent: the
// Tiled task in one launch of at most one team per multiprocessor, each team
// chasing every P-th sweep and waiting on its predecessor's progress counter
// instead of a launch boundary. Auto: Persistent where the tiled task is
// available, else Global.
enum class Sb2stKernel { Auto, Global, Tiled, Persistent };

// Rows of the band storage sb2st works in: the band and the bulges.
inline index_t sb2st_band_rows(index_t b) { return 2 * b + 1; }

// Steps of sweep s (n - 1 - s rows below the diagonal, b per step).
KOKKOS_INLINE_FUNCTION index_t sb2st_steps(index_t n, index_t b, index_t s) { return 1 + (n - 2 - s) / b; }

// Sweeps whose reflectors sb2st keeps at once (ring slots).
inline index_t sb2st_ring_slots(index_t n, index_t b) { return n > 1 ? (sb2st_steps(n, b, 0) - 1) / 2 + 2 : 1; }

// Workspace of sb2st (elements of T): the reflector of every sweep in flight
// and one progress counter (an int) per sweep.
inline index_t sb2st_workspace_size(index_t n, index_t b) { return sb2st_ring_slots(n, b) * (b + 1) + n; }

// ab(d, j) = A(j + d, j) for 0 <= d <= b (zero beyond the band and below the
// matrix): the lower band of a dense matrix in sb2st's storage.
template <class T, class ExecSpace>
void dense_to_band(const ExecSpace& space, const Matrix<T, ExecSpace>& a, index_t b, const Matrix<T, ExecSpace>& ab) {
  const index_t n = a.extent(0), rows = ab.extent(0);
  if (static_cast<index_t>(ab.extent(1)) != n || rows < b + 1)
    throw InvalidArgument("ab", "dense_to_band: band storage must be (at least b+1) x n");
  using Policy = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2, Kokkos::Iterate::Left, Kokkos::Iterate::Left>>;
  Kokkos::parallel_for(
      "keig::sb2st::dense_to_band", Policy(space, {0, 0}, {rows, n}), KOKKOS_LAMBDA(const index_t d, const index_t j) {
        ab(d, j) = (d <= b && j + d < n) ? a(j + d, j) : T(0);
      });
}

namespace detail {

// One task (s, k) of the bulge chase, executed by one team.
template <class T, class ExecSpace>
struct BulgeChase {
  using R = real_t<T>;
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using Scratch = Kokkos::View<T*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  Matrix<T, ExecSpace> ab;          // (2b+1) x n band storage
  Vector<real_t<T>, ExecSpace> e;   // subdiagonal out
  Matrix<T, ExecSpace> store;       // reflectors out (empty: not stored)
  Vector<T, ExecSpace> ring;        // reflector of each sweep in flight
  index_t n, b, t, s_hi, slots;

  static size_t scratch_bytes(index_t b) { return 3 * Scratch::shmem_size(b); }

  // A(i, j), i >= j (lower storage).
  KOKKOS_INLINE_FUNCTION T& at(index_t i, index_t j) const { return ab(i - j, j); }
  // A(i, j) of the Hermitian matrix from its lower storage.
  KOKKOS_INLINE_FUNCTION T herm(index_t i, index_t j) const { return i >= j ? ab(i - j, j) : conjugate(ab(j - i, i)); }

  // Householder reflector from x = (A(r0 + i, c))_{i < L}: H^H x = beta e_1.
  // v goes to scratch (v(0) = 1), x is overwritten by (beta, 0, ...).
  KOKKOS_INLINE_FUNCTION T reflector(const Team& team, index_t r0, index_t c, index_t L, const Scratch& v,
                                     R& beta) const {
    R xn2 = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, index_t(1), L), [&](const index_t i, R& acc) { acc += abs_squared(at(r0 + i, c)); },
        xn2);
    const T alpha = at(r0, c);
    T tau, scale;
    householder(alpha, xn2, tau, scale, beta);
    team.team_barrier();  // every thread has read alpha before it is overwritten
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, index_t(1), L), [&](const index_t i) {
      v(i) = at(r0 + i, c) * scale;
      at(r0 + i, c) = T(0);
    });
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      v(0) = T(1);
      at(r0, c) = T(beta);
    });
    team.team_barrier();
    return tau;
  }

  // w := tau w - 1/2 |tau|^2 (v^H w) v, from w = D v: D - v w^H - w v^H = H^H D H.
  KOKKOS_INLINE_FUNCTION static void rank2_direction(const Team& team, index_t L, T tau, const Scratch& v,
                                                     const Scratch& w) {
    R c = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, L), [&](const index_t i, R& acc) { acc += real_part(conjugate(v(i)) * w(i)); }, c);
    const T half = T(R(0.5) * abs_squared(tau) * c);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, L), [&](const index_t i) { w(i) = tau * w(i) - half * v(i); });
    team.team_barrier();
  }

  // D := H^H D H for the diagonal block D = A(q:q+L, q:q+L) (lower storage):
  // p = D v, w = tau p - 1/2 |tau|^2 (v^H p) v, D -= v w^H + w v^H.
  KOKKOS_INLINE_FUNCTION void two_sided(const Team& team, index_t q, index_t L, T tau, const Scratch& v,
                                        const Scratch& w) const {
    if constexpr (backends::is_cuda_space_v<ExecSpace>) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, L), [&](const index_t i) {
        T sum = T(0);
        for (index_t j = 0; j < L; ++j) sum += herm(q + i, q + j) * v(j);
        w(i) = sum;
      });
    } else {
      // Host teams are one thread: walk the stored lower triangle column by
      // column (contiguous in the band storage), each entry used for its row
      // and, mirrored, its column.
      for (index_t i = 0; i < L; ++i) w(i) = T(0);
      for (index_t j = 0; j < L; ++j) {
        const T* const col = &ab(0, q + j);  // col[d] = A(q + j + d, q + j)
        const T vj = v(j);
        T acc = col[0] * vj;
        for (index_t d = 1; d < L - j; ++d) {
          w(j + d) += col[d] * vj;
          acc += conjugate(col[d]) * v(j + d);
        }
        w(j) += acc;
      }
    }
    team.team_barrier();
    rank2_direction(team, L, tau, v, w);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, L), [&](const index_t j) {
      for (index_t i = j; i < L; ++i) {
        const T updated = at(q + i, q + j) - v(i) * conjugate(w(j)) - w(i) * conjugate(v(j));
        at(q + i, q + j) = i == j ? T(real_part(updated)) : updated;
      }
    });
    team.team_barrier();
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Team& team) const {
    const index_t s = s_hi - team.league_rank();
    const index_t k = t - 2 * s;
    if (k < 0 || k >= sb2st_steps(n, b, s)) return;  // uniform over the team
    T* slot = ring.data() + (s % slots) * (b + 1);
    Scratch v(team.team_scratch(0), b), w(team.team_scratch(0), b), vp(team.team_scratch(0), b);
    index_t q, L;  // the new reflector acts on rows [q, q+L)
    T tau;
    R beta;
    if (k == 0) {
      q = s + 1;
      L = b < n - 1 - s ? b : n - 1 - s;
      tau = reflector(team, q, s, L, v, beta);
      Kokkos::single(Kokkos::PerTeam(team), [&]() { e(s) = beta; });
    } else {
      const index_t p0 = s + 1 + (k - 1) * b;  // rows of the previous reflector: [p0, p0 + b)
      q = p0 + b;
      L = b < n - q ? b : n - q;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, b), [&](const index_t i) { vp(i) = slot[1 + i]; });
      const T tau_p = slot[0];
      team.team_barrier();
      // Bulge block C = A(q:q+L, p0:p0+b) := C H_prev (fills it).
      if constexpr (backends::is_cuda_space_v<ExecSpace>) {
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, L), [&](const index_t r) {
          T y = T(0);
          for (index_t c = 0; c < b; ++c) y += at(q + r, p0 + c) * vp(c);
          y *= tau_p;
          for (index_t c = 0; c < b; ++c) at(q + r, p0 + c) -= y * conjugate(vp(c));
        });
      } else {
        // Host (one thread): y = tau_p C vp and C -= y vp^H column by column
        // (C's columns are contiguous in the band storage); w holds y.
        for (index_t r = 0; r < L; ++r) w(r) = T(0);
        for (index_t c = 0; c < b; ++c) {
          const T* const col = &at(q, p0 + c);  // col[r] = C(r, c)
          const T vc = vp(c);
          for (index_t r = 0; r < L; ++r) w(r) += col[r] * vc;
        }
        for (index_t r = 0; r < L; ++r) w(r) *= tau_p;
        for (index_t c = 0; c < b; ++c) {
          T* const col = &at(q, p0 + c);
          const T vc = conjugate(vp(c));
          for (index_t r = 0; r < L; ++r) col[r] -= w(r) * vc;
        }
      }
      team.team_barrier();
      // Annihilate its first column, then C(:, 1:b) := H^H C(:, 1:b).
      tau = reflector(team, q, p0, L, v, beta);
      const T tau_c = conjugate(tau);
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, index_t(1), b), [&](const index_t c) {
        T z = T(0);
        for (index_t r = 0; r < L; ++r) z += conjugate(v(r)) * at(q + r, p0 + c);
        z *= tau_c;
        for (index_t r = 0; r < L; ++r) at(q + r, p0 + c) -= v(r) * z;
      });
      team.team_barrier();
    }
    two_sided(team, q, L, tau, v, w);
    // Hand the reflector to step k+1 (and to the back-transformation).
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, b), [&](const index_t i) { slot[1 + i] = i < L ? v(i) : T(0); });
    Kokkos::single(Kokkos::PerTeam(team), [&]() { slot[0] = tau; });
    if (store.extent(0) > 0) {
      const index_t col = n - 1 - s, row = k * b;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, L), [&](const index_t i) {
        store(row + i, col) = i == 0 ? tau : v(i);
      });
    }
  }
};

// The same task (s, k) with register tiles (Sb2stKernel::Tiled). The wave's
// latency is the task's: the global kernel's b-long loops of dependent band
// loads and read-modify-writes cost one memory round trip per iteration
// (about 45 us per wave on the H200 at b = 64). Here thread (rg, cg) of a
// G x G team (G = ceil(b / 4) rounded up to a power of two, at least 8, so
// groups of G lanes tile the warps) loads the elements (rg + G i, cg + G j),
// i, j < 4, of the bulge block C and of the diagonal block D once, at the
// start, all loads in flight together. Every product the task needs is a
// register partial per thread: sums over a column (v^H C, the mirrored half
// of D v) stay inside a group of G lanes (warp shuffles), sums over a row
// (C vp, D v) are shuffled across the groups of a warp and then added over
// the warps from team scratch. Reflector entries are recomputed from the
// annihilated column where needed, so a task has two team barriers (three
// for k = 0) and the blocks go back to the band once.
template <class T, class ExecSpace>
struct BulgeChaseTiled {
  using R = real_t<T>;
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using Scratch = Kokkos::View<T*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  static constexpr int tile = 4;
  static constexpr int warp = 32;

  struct WaveTag {};        // one launch per wave t
  struct PersistentTag {};  // one launch, progress counters between sweeps

  Matrix<T, ExecSpace> ab;
  Vector<real_t<T>, ExecSpace> e;
  Matrix<T, ExecSpace> store;
  Vector<T, ExecSpace> ring;
  index_t n, b, t, s_hi, slots;
  int g;              // G: the team is G x G threads
  int* progress;      // Persistent: steps finished per sweep (zero at launch)
  index_t teams;      // Persistent: the league size P

  static index_t grid(index_t b) {
    index_t g = 8;
    while (g * tile < b) g *= 2;
    return g;
  }
  static index_t team_size(index_t b) { return grid(b) * grid(b); }
  static index_t warps(index_t b) { return team_size(b) / warp; }
  // The annihilated column, p = D v, the column half of D v (b each) and the
  // per-warp row partials (warps x b).
  static size_t scratch_bytes(index_t b) { return 3 * Scratch::shmem_size(b) + Scratch::shmem_size(warps(b) * b); }
  // Devices only (a team of G^2 threads, each with its own registers), a
  // team of at most 1024 threads and level-0 scratch within 48 KB.
  static bool available(index_t b) {
    return backends::is_cuda_space_v<ExecSpace> && b >= 1 && team_size(b) <= 1024 &&
           scratch_bytes(b) + 512 <= 48 * 1024;
  }

  // Whether both launches (wave and persistent) accept a team of
  // team_size(b) threads with this kernel's registers and scratch.
  static bool launchable(const ExecSpace& space, const BulgeChaseTiled& tiles, index_t b) {
    const auto fits = [&](auto tag) {
      using Tag = decltype(tag);
      const auto policy = Kokkos::TeamPolicy<ExecSpace, Tag>(space, 1, 1).set_scratch_size(
          0, Kokkos::PerTeam(scratch_bytes(b)));
      return policy.team_size_max(tiles, Kokkos::ParallelForTag()) >= static_cast<int>(team_size(b));
    };
    return fits(WaveTag()) && fits(PersistentTag());
  }

  KOKKOS_INLINE_FUNCTION void operator()(WaveTag, const Team& team) const {
    const index_t s = s_hi - team.league_rank();
    const index_t k = t - 2 * s;
    if (k < 0 || k >= sb2st_steps(n, b, s)) return;  // uniform over the team
    task(team, s, k, Scratches(team, b, g * g / warp));
  }

  // Team p chases sweeps p, p + P, ... in order. Task (s, k) may run once
  // sweep s - 1 finished step k + 1 (or all its steps): the wave schedule's
  // rule, with a counter in place of the launch boundary. A ring slot is
  // reused by sweep s + slots only after sweep s ended (the chain of waits
  // puts sweep s at step >= 2 slots > its steps), as in the wave schedule.
  // Every team is resident (P <= multiprocessors, one team each fits), so
  // the waits cannot deadlock.
  KOKKOS_INLINE_FUNCTION void operator()(PersistentTag, const Team& team) const {
    const Scratches scratch(team, b, g * g / warp);  // once: every team_scratch view takes new memory
    for (index_t s = team.league_rank(); s <= n - 2; s += teams) {
      const index_t steps = sb2st_steps(n, b, s);
      const index_t before = s > 0 ? sb2st_steps(n, b, s - 1) : 0;
      for (index_t k = 0; k < steps; ++k) {
        if (s > 0) {
          const index_t need = k + 2 < before ? k + 2 : before;
          if (team.team_rank() == 0) backends::wait_progress(progress + (s - 1), static_cast<int>(need));
          team.team_barrier();
        }
        task(team, s, k, scratch);
        team.team_barrier();
        if (team.team_rank() == 0) backends::publish_progress(progress + s, static_cast<int>(k + 1));
      }
    }
  }

  // The task's team scratch (scratch_bytes), carved out once per team.
  struct Scratches {
    Scratch column, p, column_half, rows;
    KOKKOS_INLINE_FUNCTION Scratches(const Team& team, index_t b, index_t warps)
        : column(team.team_scratch(0), b), p(team.team_scratch(0), b), column_half(team.team_scratch(0), b),
          rows(team.team_scratch(0), warps * b) {}
  };

  // Task (s, k). Band and ring reads go through L2 (load_coherent): another
  // team of the persistent kernel may have written them. Every warp_sum is
  // reached by all threads (contributions outside the blocks are zeros).
  KOKKOS_INLINE_FUNCTION void task(const Team& team, const index_t s, const index_t k, const Scratches& sc) const {
    using backends::load_coherent;
    using backends::warp_sum;
    const int tid = team.team_rank(), rg = tid % g, cg = tid / g, bb = static_cast<int>(b), nt = g * g;
    const int lane = tid % warp, my_warp = tid / warp, nwarps = nt / warp;
    T* slot = ring.data() + (s % slots) * (b + 1);
    const Scratch &column = sc.column, &p = sc.p, &column_half = sc.column_half, &rows = sc.rows;
    const index_t p0 = s + 1 + (k - 1) * b;  // k >= 1: rows of the previous reflector [p0, p0 + b)
    const index_t q = k == 0 ? s + 1 : p0 + b;
    const int L = static_cast<int>(b < n - q ? b : n - q);  // the new reflector acts on rows [q, q + L)
    // Sum over the team of per-thread row partials: across the groups of a
    // warp by shuffles, then over the warps from scratch (after a barrier).
    auto publish_row_partial = [&](T partial, int r) {
      partial = warp_sum(partial, g, warp);
      if (lane < g && r < bb) rows(my_warp * bb + r) = partial;
    };
    auto row_total = [&](int r) {
      T sum = T(0);
      for (int h = 0; h < nwarps; ++h) sum += rows(h * bb + r);
      return sum;
    };

    // Every load of the task, issued together: D's lower tile, and C's tile,
    // the previous reflector's entries of this thread's columns and its tau
    // (k >= 1) or the column to annihilate (k = 0).
    T dt[tile][tile], ct[tile][tile], vp[tile];
    for (int i = 0; i < tile; ++i)
      for (int j = 0; j < tile; ++j) {
        const int r = rg + g * i, c = cg + g * j;
        dt[i][j] = (r < L && c <= r) ? load_coherent(&ab(r - c, q + c)) : T(0);
        // C(r, c) = A(q + r, p0 + c)
        ct[i][j] = (k > 0 && r < L && c < bb) ? load_coherent(&ab(bb + r - c, p0 + c)) : T(0);
      }
    for (int j = 0; j < tile; ++j) {
      const int c = cg + g * j;
      vp[j] = (k > 0 && c < bb) ? load_coherent(slot + 1 + c) : T(0);
    }
    const T tau_p = k > 0 ? load_coherent(slot) : T(0);

    if (k > 0) {
      // C := C H_prev = C - tau_p (C vp) vp^H.
      for (int i = 0; i < tile; ++i) {
        T acc = T(0);
        for (int j = 0; j < tile; ++j) acc += ct[i][j] * vp[j];
        publish_row_partial(acc, rg + g * i);
      }
      team.team_barrier();
      for (int i = 0; i < tile; ++i) {
        const int r = rg + g * i;
        const T y = r < L ? tau_p * row_total(r) : T(0);
        for (int j = 0; j < tile; ++j) ct[i][j] -= y * conjugate(vp[j]);
        if (cg == 0 && r < L) column(r) = ct[i][0];
      }
    } else {
      for (int i = tid; i < L; i += nt) column(i) = load_coherent(&ab(1 + i, s));  // A(q + i, s)
    }
    team.team_barrier();

    // The reflector annihilating column(1:L): every warp forms the same norm.
    R norm_part = 0;
    for (int r = 1 + lane; r < L; r += warp) norm_part += abs_squared(column(r));
    const R xn2 = warp_sum(norm_part, 1, warp);
    T tau, scale;
    R beta;
    householder(column(0), xn2, tau, scale, beta);
    auto v = [&](int i) { return i == 0 ? T(1) : (i < L ? column(i) * scale : T(0)); };
    T vr[tile], vc[tile];  // v at this thread's rows and columns
    for (int i = 0; i < tile; ++i) {
      vr[i] = v(rg + g * i);
      vc[i] = v(cg + g * i);
    }
    if (k == 0) {
      for (int i = tid; i < L; i += nt) ab(1 + i, s) = i == 0 ? T(beta) : T(0);
      if (tid == 0) e(s) = beta;
    } else {
      // C(:, 1:b) := H^H C(:, 1:b) = C - conj(tau) v (v^H C); C(:, 0) = beta e_1.
      for (int j = 0; j < tile; ++j) {
        const int c = cg + g * j;
        T acc = T(0);
        for (int i = 0; i < tile; ++i) acc += conjugate(vr[i]) * ct[i][j];
        const T z = conjugate(tau) * warp_sum(acc, 1, g);
        for (int i = 0; i < tile; ++i) {
          const int r = rg + g * i;
          if (r < L && c < bb) ab(bb + r - c, p0 + c) = c == 0 ? (r == 0 ? T(beta) : T(0)) : ct[i][j] - vr[i] * z;
        }
      }
    }

    // D := H^H D H: p = D v from the lower tile (each stored entry adds to
    // its row and, mirrored, to its column), w = tau p - 1/2 |tau|^2 (v^H p) v,
    // D -= v w^H + w v^H.
    for (int i = 0; i < tile; ++i) {
      const int r = rg + g * i;
      T acc = T(0);
      for (int j = 0; j < tile; ++j) {
        const int c = cg + g * j;
        if (c <= r) acc += dt[i][j] * vc[j];
      }
      publish_row_partial(acc, r);
    }
    for (int j = 0; j < tile; ++j) {
      const int c = cg + g * j;
      T acc = T(0);
      for (int i = 0; i < tile; ++i) {
        const int r = rg + g * i;
        if (c < r) acc += conjugate(dt[i][j]) * vr[i];
      }
      acc = warp_sum(acc, 1, g);
      if (rg == 0 && c < bb) column_half(c) = acc;
    }
    team.team_barrier();
    for (int i = tid; i < L; i += nt) p(i) = row_total(i) + column_half(i);
    team.team_barrier();
    R dot_part = 0;  // v^H p, the same in every warp
    for (int i = lane; i < L; i += warp) dot_part += real_part(conjugate(v(i)) * p(i));
    const T half = T(R(0.5) * abs_squared(tau) * warp_sum(dot_part, 1, warp));
    T wr[tile], wc[tile];
    for (int i = 0; i < tile; ++i) {
      const int r = rg + g * i, c = cg + g * i;
      wr[i] = r < L ? tau * p(r) - half * vr[i] : T(0);
      wc[i] = c < L ? tau * p(c) - half * vc[i] : T(0);
    }
    for (int i = 0; i < tile; ++i)
      for (int j = 0; j < tile; ++j) {
        const int r = rg + g * i, c = cg + g * j;
        if (r < L && c <= r) {
          const T updated = dt[i][j] - vr[i] * conjugate(wc[j]) - wr[i] * conjugate(vc[j]);
          ab(r - c, q + c) = r == c ? T(real_part(updated)) : updated;
        }
      }

    // Hand the reflector to step k+1 (its reads of the slot were before the
    // first barrier) and to the back-transformation.
    for (int i = tid; i < bb; i += nt) slot[1 + i] = v(i);
    if (tid == 0) slot[0] = tau;
    if (store.extent(0) > 0)
      for (int i = tid; i < L; i += nt) store(k * b + i, n - 1 - s) = i == 0 ? tau : v(i);
  }
};

}  // namespace detail

// Reduces the band in ab ((2b+1) x n, from dense_to_band; overwritten) to the
// tridiagonal (d: n, e: n-1). reflectors: n x n to keep Q2 for bt_sb2st, or
// an empty view for eigenvalues only. work: sb2st_workspace_size(n, b).
// Asynchronous on `space` (2n launches, or one with Persistent).
template <class T, class ExecSpace>
void sb2st(const ExecSpace& space, index_t b, const Matrix<T, ExecSpace>& ab, const Vector<real_t<T>, ExecSpace>& d,
           const Vector<real_t<T>, ExecSpace>& e, const Matrix<T, ExecSpace>& reflectors,
           const Vector<T, ExecSpace>& work, Sb2stKernel kernel = Sb2stKernel::Auto) {
  const index_t n = ab.extent(1);
  if (b < 1) throw InvalidArgument("b", "sb2st: the half-bandwidth must be >= 1, got " + std::to_string(b));
  if (static_cast<index_t>(ab.extent(0)) < sb2st_band_rows(b))
    throw InvalidArgument("ab", "sb2st: band storage needs 2b + 1 rows");
  if (static_cast<index_t>(d.extent(0)) < n || static_cast<index_t>(e.extent(0)) < (n > 0 ? n - 1 : 0))
    throw InvalidArgument("d", "sb2st: d needs n and e n - 1 entries");
  if (reflectors.extent(0) > 0 &&
      (static_cast<index_t>(reflectors.extent(0)) < n || static_cast<index_t>(reflectors.extent(1)) < n))
    throw InvalidArgument("reflectors", "sb2st: reflector storage must be n x n (or empty)");
  if (static_cast<index_t>(work.extent(0)) < sb2st_workspace_size(n, b))
    throw InvalidArgument("work", "sb2st: needs sb2st_workspace_size(n, b) entries");
  if (n == 0) return;
  if (n > 1) {
    using Global = detail::BulgeChase<T, ExecSpace>;
    using Tiled = detail::BulgeChaseTiled<T, ExecSpace>;
    const bool wants_tiles = kernel == Sb2stKernel::Tiled || kernel == Sb2stKernel::Persistent;
    const index_t slots = sb2st_ring_slots(n, b), kmax = sb2st_steps(n, b, 0) - 1;
    Global global{ab, e, reflectors, work, n, b, 0, 0, slots};
    int* const progress = reinterpret_cast<int*>(work.data() + slots * (b + 1));
    Tiled tiles{ab, e, reflectors, work, n, b, 0, 0, slots, static_cast<int>(Tiled::grid(b)), progress, 1};
    // The tiled team must also fit the compiled kernel's registers: for
    // b > 64 it has 1024 threads, more than a multiprocessor can hold at the
    // kernel's register count (Kokkos would refuse the launch).
    const bool tiles_fit = Tiled::available(b) && Tiled::launchable(space, tiles, b);
    if (wants_tiles && !tiles_fit)
      throw InvalidArgument("kernel", "sb2st: the tiled and persistent kernels run on GPU execution spaces with a "
                                      "team of ceil(b/4)^2 threads that the device can launch (b <= 64 on sm_90); "
                                      "b = " + std::to_string(b));
    const bool persistent = kernel == Sb2stKernel::Persistent || (kernel == Sb2stKernel::Auto && tiles_fit);
    const bool tiled = kernel == Sb2stKernel::Tiled;
    const index_t team = backends::is_cuda_space_v<ExecSpace> ? (b < 32 ? 32 : (b > 128 ? 128 : b)) : 1;
    if (persistent)
      Kokkos::parallel_for(
          "keig::sb2st::zero_progress", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
          KOKKOS_LAMBDA(const index_t i) { progress[i] = 0; });
    if constexpr (backends::is_cuda_space_v<ExecSpace>) {
      if (persistent) {
        // P: no more teams than sweeps in flight, at most one per multiprocessor.
        const index_t sweeps = n - 1, limit = backends::multiprocessors(space);
        tiles.teams = std::min(std::min(slots, sweeps), limit);
        Kokkos::parallel_for("keig::sb2st::persistent",
                             Kokkos::TeamPolicy<ExecSpace, typename Tiled::PersistentTag>(space, tiles.teams,
                                                                                         Tiled::team_size(b))
                                 .set_scratch_size(0, Kokkos::PerTeam(Tiled::scratch_bytes(b))),
                             tiles);
      }
    }
    for (index_t t = 0; !persistent && t <= 2 * (n - 2); ++t) {
      const index_t s_hi = t / 2 < n - 2 ? t / 2 : n - 2;
      const index_t s_lo = t - kmax > 0 ? (t - kmax + 1) / 2 : 0;
      if (s_lo > s_hi) continue;
      const index_t league = s_hi - s_lo + 1;
      if (tiled) {
        tiles.t = t;
        tiles.s_hi = s_hi;
        Kokkos::parallel_for("keig::sb2st::wave",
                             Kokkos::TeamPolicy<ExecSpace, typename Tiled::WaveTag>(space, league, Tiled::team_size(b))
                                 .set_scratch_size(0, Kokkos::PerTeam(Tiled::scratch_bytes(b))),
                             tiles);
      } else {
        global.t = t;
        global.s_hi = s_hi;
        Kokkos::parallel_for(
            "keig::sb2st::wave",
            Kokkos::TeamPolicy<ExecSpace>(space, league, team).set_scratch_size(0, Kokkos::PerTeam(Global::scratch_bytes(b))),
            global);
      }
    }
  }
  Kokkos::parallel_for(
      "keig::sb2st::diagonal", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const index_t i) { d(i) = real_part(ab(0, i)); });
}

}  // namespace keig::stages
