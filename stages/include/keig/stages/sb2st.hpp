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
#include "keig/backends/host_simd.hpp"
#include "keig/backends/warp.hpp"
#include "keig/stages/sytrd.hpp"
#include "keig/views/matrix.hpp"

namespace keig::stages {

// Task kernels. Global: one team walks b-long loops over the band in place
// (any execution space). Tiled: every thread of a G x G team (G = 8 up to
// b = 32, 16 up to b = 64) owns a 4 x 4 tile of the bulge block and of the
// diagonal block in registers, so a task is one round trip to memory plus
// team reductions (GPUs, b <= 64).
// Global and Tiled launch one kernel per wave (2n launches). Persistent: on
// GPUs the Tiled task in one launch of at most one team per multiprocessor,
// each team chasing every P-th sweep and waiting on its predecessor's
// progress counter instead of a launch boundary; on hosts the Global task in
// one parallel region the same way (BulgeChaseHostPipeline). Auto:
// Persistent where its task is available, else Global.
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
      // Restrict pointers: the scratch vectors never alias the band, and
      // without that promise the compiler keeps these loops scalar.
      T* KOKKOS_RESTRICT const wp = w.data();
      const T* KOKKOS_RESTRICT const vv = v.data();
      for (index_t i = 0; i < L; ++i) wp[i] = T(0);
      for (index_t j = 0; j < L; ++j) {
        const T* KOKKOS_RESTRICT const col = &ab(0, q + j);  // col[d] = A(q + j + d, q + j)
        const T vj = vv[j];
        T acc = col[0] * vj;
        for (index_t d = 1; d < L - j; ++d) {
          wp[j + d] += col[d] * vj;
          acc += conjugate(col[d]) * vv[j + d];
        }
        wp[j] += acc;
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
    Scratch v(team.team_scratch(0), b), w(team.team_scratch(0), b), vp(team.team_scratch(0), b);
    task(team, s, k, v, w, vp);
  }

  // v, w, vp: b entries of team scratch each (a team's scratch is a bump
  // allocator, so callers that run many tasks take them once).
  KOKKOS_INLINE_FUNCTION void task(const Team& team, const index_t s, const index_t k, const Scratch& v,
                                   const Scratch& w, const Scratch& vp) const {
    T* slot = ring.data() + (s % slots) * (b + 1);
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
        // Host (one thread): y = tau_p C vp column by column (C's columns are
        // contiguous in the band storage; w holds y), and C(:, 0) -= y
        // conj(vp(0)); the other columns' C -= y vp^H joins their H^H pass.
        T* KOKKOS_RESTRICT const y = w.data();
        for (index_t r = 0; r < L; ++r) y[r] = T(0);
        for (index_t c = 0; c < b; ++c) {
          const T* KOKKOS_RESTRICT const col = &at(q, p0 + c);  // col[r] = C(r, c)
          const T vc = vp(c);
          for (index_t r = 0; r < L; ++r) y[r] += col[r] * vc;
        }
        for (index_t r = 0; r < L; ++r) y[r] *= tau_p;
        T* const col0 = &at(q, p0);
        const T v0 = conjugate(vp(0));
        for (index_t r = 0; r < L; ++r) col0[r] -= y[r] * v0;
      }
      team.team_barrier();
      // Annihilate its first column, then C(:, 1:b) := H^H C(:, 1:b).
      tau = reflector(team, q, p0, L, v, beta);
      const T tau_c = conjugate(tau);
      if constexpr (backends::is_cuda_space_v<ExecSpace>) {
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, index_t(1), b), [&](const index_t c) {
          T z = T(0);
          for (index_t r = 0; r < L; ++r) z += conjugate(v(r)) * at(q + r, p0 + c);
          z *= tau_c;
          for (index_t r = 0; r < L; ++r) at(q + r, p0 + c) -= v(r) * z;
        });
      } else {
        // Per column: x = C(:, c) - y conj(vp(c)) (the deferred update), then
        // x - v tau^* (v^H x): two passes over the column instead of three
        // (with restrict pointers here and in two_sided: 2 cores, b = 32, n =
        // 1000 / 2000 / 4000: sb2st 0.015 / 0.0605 / 0.239 s against 0.016 /
        // 0.064 / 0.256-0.260 s, the same results bit for bit).
        const T* KOKKOS_RESTRICT const y = w.data();
        const T* KOKKOS_RESTRICT const vv = v.data();
        for (index_t c = 1; c < b; ++c) {
          T* KOKKOS_RESTRICT const col = &at(q, p0 + c);
          const T vc = conjugate(vp(c));
          T z = T(0);
          for (index_t r = 0; r < L; ++r) {
            const T x = col[r] - y[r] * vc;
            col[r] = x;
            z += conjugate(vv[r]) * x;
          }
          z *= tau_c;
          for (index_t r = 0; r < L; ++r) col[r] -= vv[r] * z;
        }
      }
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

// Hosts: the whole chase in one parallel region. Each team (one thread)
// claims the next sweep from a shared counter and runs its steps in order,
// step k once sweep s - 1 has finished step k + 1 (its progress counter):
// the dependency of the wave schedule without a fork and join per wave (2n
// of them) and without threads idling at a wave's end. A claimed sweep is
// always being run, so any number of teams and any schedule make progress;
// at most `slots` sweeps are in flight (their ring slots). The same tasks as
// the waves, so the same results bit for bit. 2 cores, b = 32, n = 1000 /
// 2000 / 3000 / 4000: 0.016 / 0.063-0.066 / 0.149 / 0.248-0.250 s against
// 0.018 / 0.067-0.069 / 0.154 / 0.257 s wave by wave (the task itself, about
// 2 us, is the cost).
template <class T, class ExecSpace>
struct BulgeChaseHostPipeline {
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  BulgeChase<T, ExecSpace> chase;
  int* progress;  // steps finished per sweep; progress[n - 1]: the next sweep to claim

  void operator()(const Team& team) const {
    using Scratch = typename BulgeChase<T, ExecSpace>::Scratch;
    const index_t n = chase.n, b = chase.b;
    const Scratch v(team.team_scratch(0), b), w(team.team_scratch(0), b), vp(team.team_scratch(0), b);
    for (;;) {
      const index_t s = backends::host::fetch_add_relaxed(&progress[n - 1], 1);
      if (s > n - 2) return;
      const index_t steps = sb2st_steps(n, b, s), before = s > 0 ? sb2st_steps(n, b, s - 1) : 0;
      for (index_t k = 0; k < steps; ++k) {
        if (s > 0) {
          const int need = static_cast<int>(k + 2 < before ? k + 2 : before);
          for (int spins = 0; backends::host::load_acquire(&progress[s - 1]) < need; ++spins)
            backends::host::spin_wait(spins);
        }
        chase.task(team, s, k, v, w, vp);
        backends::host::store_release(&progress[s], static_cast<int>(k + 1));
      }
    }
  }
};

// The same task (s, k) with register tiles (Sb2stKernel::Tiled). The wave's
// latency is the task's: the global kernel's b-long loops of dependent band
// loads and read-modify-writes cost one memory round trip per iteration
// (about 45 us per wave on the H200 at b = 64). Here thread (rg, cg) of a
// G x G team (G = sb2st_tile_grid(b): a power of two, at least 8, with
// 4 G >= b, so groups of G lanes tile the warps) loads the elements
// (rg + G i, cg + G j), i, j < 4, of the bulge block C and of the diagonal
// block D once, at the start, all loads in flight together. Every product
// the task needs is a register partial per thread: sums over a column (v^H C,
// the mirrored half of D v) stay inside a group of G lanes (warp shuffles),
// sums over a row (C vp, D v) are shuffled across the groups of a warp and
// then added over the warps from team scratch. Every warp forms the
// column-long vectors (the annihilated column, the reflector, p = D v) from
// those sums itself, so a task has two team barriers (one for k = 0: each
// scratch sum is read after the barrier that follows its writes) and the
// blocks go back to the band once.
//
// The task is latency-bound, a chain of a few thousand dependent
// instructions per warp: G is a template parameter and a thread addresses
// its 32 elements by 32-bit offsets from one base pointer per block (in the
// band storage A(q + r, q + c) and C(r, c) both sit at r + c (ld - 1) from
// the block's first entry), so the chain holds the arithmetic, not 64-bit
// index products and integer divisions.
template <class T, class ExecSpace, int G>
struct BulgeChaseTiled {
  using R = real_t<T>;
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using Scratch = Kokkos::View<T*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  static constexpr int tile = 4;
  static constexpr int warp = 32;
  static constexpr int threads = G * G;
  static constexpr int warps = threads / warp;
  static_assert(G >= 8 && G <= 32 && (G & (G - 1)) == 0, "sb2st: the tile grid is a power of two, 8 to 32");

  Matrix<T, ExecSpace> ab;
  Vector<real_t<T>, ExecSpace> e;
  Matrix<T, ExecSpace> store;
  Vector<T, ExecSpace> ring;
  index_t n, b, t, s_hi, slots;
  int ld;             // ab's leading dimension
  bool persistent;    // one launch for all waves (else one launch per wave t)
  int* progress;      // Persistent: steps finished per sweep (zero at launch)
  index_t teams;      // Persistent: the league size P (wave launches: unused)

  // The column half of D v (b) and two sets of per-warp row partials (b x
  // warps each: C vp's, then D v's, so no barrier has to separate the reads
  // of the first from the writes of the second).
  static size_t scratch_bytes(index_t b) { return Scratch::shmem_size(b) + 2 * Scratch::shmem_size(warps * b); }

  // Whether the device accepts a team of G^2 threads with this kernel's
  // registers and scratch: devices only (on host spaces a team is one
  // thread), level-0 scratch within 48 KB.
  static bool launchable(const ExecSpace& space, const BulgeChaseTiled& tiles, index_t b) {
    if (!backends::is_cuda_space_v<ExecSpace> || b < 1 || 4 * G < b || scratch_bytes(b) + 512 > 48 * 1024) return false;
    const auto policy =
        Kokkos::TeamPolicy<ExecSpace>(space, 1, 1).set_scratch_size(0, Kokkos::PerTeam(scratch_bytes(b)));
    return policy.team_size_max(tiles, Kokkos::ParallelForTag()) >= threads;
  }

  // Wave by wave: team r runs task (s_hi - r, t - 2 (s_hi - r)), if any.
  // Persistent: team p chases sweeps p, p + P, ... in order. Task (s, k) may
  // run once sweep s - 1 finished step k + 1 (or all its steps): the wave
  // schedule's rule, with a counter in place of the launch boundary. A ring
  // slot is reused by sweep s + slots only after sweep s ended (the chain of
  // waits puts sweep s at step >= 2 slots > its steps), as in the wave
  // schedule. Every team is resident (P teams fit on the device at once),
  // so the waits cannot deadlock. Both schedules reach the task
  // through one call site, so they run the same instructions and round
  // alike (the tests compare them bit for bit to catch a missed dependency).
  KOKKOS_INLINE_FUNCTION void operator()(const Team& team) const {
    const Scratches scratch(team, b);  // once: every team_scratch view takes new memory
    const index_t first = persistent ? team.league_rank() : s_hi - team.league_rank();
    for (index_t s = first; s <= n - 2; s += teams) {
      const index_t steps = sb2st_steps(n, b, s);
      const index_t before = s > 0 ? sb2st_steps(n, b, s - 1) : 0;
      T* const slot = ring.data() + (s % slots) * (b + 1);
      const index_t k_begin = persistent ? 0 : t - 2 * s, k_end = persistent ? steps : k_begin + 1;
      if (k_begin < 0 || k_begin >= steps) return;  // wave t has no task of sweep s; uniform over the team
      for (index_t k = k_begin; k < k_end; ++k) {
        if (persistent && s > 0) {
          const index_t need = k + 2 < before ? k + 2 : before;
          if (team.team_rank() == 0) backends::wait_progress(progress + (s - 1), static_cast<int>(need));
          team.team_barrier();
        }
        task(team, s, k, slot, scratch);
        if (persistent) {
          team.team_barrier();
          if (team.team_rank() == 0) backends::publish_progress(progress + s, static_cast<int>(k + 1));
        }
      }
      if (!persistent) return;
    }
  }

  // The task's team scratch (scratch_bytes), carved out once per team.
  struct Scratches {
    T *column_half, *c_rows, *d_rows;
    KOKKOS_INLINE_FUNCTION Scratches(const Team& team, index_t b)
        : column_half(Scratch(team.team_scratch(0), b).data()),
          c_rows(Scratch(team.team_scratch(0), warps * b).data()),
          d_rows(Scratch(team.team_scratch(0), warps * b).data()) {}
  };

  // Task (s, k). Band and ring reads go through L2 (load_coherent): another
  // team of the persistent kernel may have written them. Every warp_sum(s) is
  // reached by all threads (contributions outside the blocks are zeros).
  KOKKOS_INLINE_FUNCTION void task(const Team& team, const index_t s, const index_t k, T* const slot,
                                   const Scratches& sc) const {
    using backends::load_coherent;
    using backends::warp_sum;
    const int tid = team.team_rank(), rg = tid % G, cg = tid / G, bb = static_cast<int>(b);
    const int lane = tid % warp, my_warp = tid / warp;
    using backends::warp_fetch;
    T *const column_half = sc.column_half, *const c_rows = sc.c_rows, *const d_rows = sc.d_rows;
    const index_t p0 = s + 1 + (k - 1) * b;  // k >= 1: rows of the previous reflector [p0, p0 + b)
    const index_t q = k == 0 ? s + 1 : p0 + b;
    const int L = static_cast<int>(b < n - q ? b : n - q);  // the new reflector acts on rows [q, q + L)
    // This thread's entry (rg + G i, cg + G j) of D and of C is at
    // offset(i, j) from its base: A(q + r, q + c) = ab(r - c, q + c) and
    // C(r, c) = A(q + r, p0 + c) = ab(b + r - c, p0 + c).
    const int column_step = G * (ld - 1);
    auto offset = [&](int i, int j) { return G * i + column_step * j; };
    T* const d_base = ab.data() + q * ld + (rg + cg * (ld - 1));
    T* const c_base = k > 0 ? ab.data() + p0 * ld + b + (rg + cg * (ld - 1)) : d_base;
    // Sum over the team of per-thread row partials: across the groups of a
    // warp by shuffles, then over the warps from team scratch (after a
    // barrier), where they lie warp by warp (row r of warp h at h b + r), so
    // the G lanes that store or read G consecutive rows hit distinct banks.
    // Row by row (r warps + h: rows 64 bytes apart, 8-way bank conflicts)
    // the reads and their dependent adds were a fifth of a task's stall
    // samples (ncu, H200): sb2st at n = 16384 took 0.239 s, 0.175 s after.
    // A thread's partials of its rows rg + G i, all four summed together
    // (warp_sums), as every other batch of per-thread sums below: one
    // dependent chain of shuffles instead of four.
    auto publish_row_partials = [&](T* rows, T (&partial)[tile]) {
      backends::warp_sums(partial, G, warp);
      for (int i = 0; i < tile; ++i)
        if (lane < G && rg + G * i < bb) rows[my_warp * bb + rg + G * i] = partial[i];
    };
    auto row_total = [&](const T* rows, int r) {
      T sum = rows[r];
      for (int h = 1; h < warps; ++h) sum += rows[h * bb + r];
      return sum;
    };
    // Column-long vectors (the annihilated column, p = D v) are held by
    // every warp, entry r = lane + 32 u in register u of lane r % 32: the
    // row sums become vectors without a barrier, and a thread takes the
    // entries of its rows rg + G i and columns cg + G i by shuffles (the
    // register u = G i / 32 is the same on every lane).
    constexpr int per_lane = (tile * G + warp - 1) / warp;  // b <= 4 G entries over 32 lanes
    auto entry_of_row = [&](const T (&x)[per_lane], int i, int first) {
      return warp_fetch(x[(G * i) / warp], (first + G * i) % warp);
    };

    // Every load of the task, issued together: D's lower tile, and C's tile,
    // the previous reflector's entries of this thread's columns and its tau
    // (k >= 1), and the column to annihilate in every warp (k = 0: column s
    // below the diagonal; k >= 1: C's first column, before H_prev).
    T dt[tile][tile], ct[tile][tile], vp[tile], column[per_lane];
    for (int i = 0; i < tile; ++i)
      for (int j = 0; j < tile; ++j) {
        const int r = rg + G * i, c = cg + G * j;
        // Tiles above the diagonal tiles (j > i) are zero for every thread:
        // the compiler drops them and their products.
        dt[i][j] = (j <= i && r < L && c <= r) ? load_coherent(d_base + offset(i, j)) : T(0);
        ct[i][j] = (k > 0 && r < L && c < bb) ? load_coherent(c_base + offset(i, j)) : T(0);
      }
    for (int j = 0; j < tile; ++j) {
      const int c = cg + G * j;
      vp[j] = (k > 0 && c < bb) ? load_coherent(slot + 1 + c) : T(0);
    }
    const T tau_p = k > 0 ? load_coherent(slot) : T(0), vp0 = k > 0 ? load_coherent(slot + 1) : T(0);
    for (int u = 0; u < per_lane; ++u) {
      const int r = lane + warp * u;
      column[u] = r >= L ? T(0) : k > 0 ? load_coherent(&ab(b + r, p0)) : load_coherent(&ab(1 + r, s));
    }

    if (k > 0) {
      // C := C H_prev = C - tau_p (C vp) vp^H, and so its first column.
      T acc[tile];
      for (int i = 0; i < tile; ++i) {
        acc[i] = ct[i][0] * vp[0];
        for (int j = 1; j < tile; ++j) acc[i] += ct[i][j] * vp[j];
      }
      publish_row_partials(c_rows, acc);
      team.team_barrier();
      T y[per_lane];  // tau_p (C vp) at rows lane + 32 u
      for (int u = 0; u < per_lane; ++u) {
        const int r = lane + warp * u;
        y[u] = r < L ? tau_p * row_total(c_rows, r) : T(0);
        column[u] -= y[u] * conjugate(vp0);
      }
      for (int i = 0; i < tile; ++i) {
        const T yi = entry_of_row(y, i, rg);
        for (int j = 0; j < tile; ++j) ct[i][j] -= yi * conjugate(vp[j]);
      }
    }

    // The reflector annihilating column(1:L): every warp forms the same norm.
    R norm_part = 0;
    for (int u = 0; u < per_lane; ++u) {
      const int r = lane + warp * u;
      if (r >= 1 && r < L) norm_part += abs_squared(column[u]);
    }
    const R xn2 = warp_sum(norm_part, 1, warp);
    T tau, scale;
    R beta;
    householder(warp_fetch(column[0], 0), xn2, tau, scale, beta);
    // v at rows lane + 32 u, and at this thread's rows and columns.
    T vl[per_lane];
    for (int u = 0; u < per_lane; ++u) {
      const int r = lane + warp * u;
      vl[u] = r == 0 ? T(1) : (r < L ? column[u] * scale : T(0));
    }
    T vr[tile], vc[tile];
    for (int i = 0; i < tile; ++i) {
      vr[i] = entry_of_row(vl, i, rg);
      vc[i] = entry_of_row(vl, i, cg);
    }
    if (k == 0) {
      if (tid < L) ab(1 + tid, s) = tid == 0 ? T(beta) : T(0);
      if (tid == 0) e(s) = beta;
    } else {
      // C(:, 1:b) := H^H C(:, 1:b) = C - conj(tau) v (v^H C); C(:, 0) = beta e_1.
      T acc[tile];
      for (int j = 0; j < tile; ++j) {
        acc[j] = conjugate(vr[0]) * ct[0][j];
        for (int i = 1; i < tile; ++i) acc[j] += conjugate(vr[i]) * ct[i][j];
      }
      backends::warp_sums(acc, 1, G);
      for (int j = 0; j < tile; ++j) {
        const int c = cg + G * j;
        const T z = conjugate(tau) * acc[j];
        for (int i = 0; i < tile; ++i) {
          const int r = rg + G * i;
          if (r < L && c < bb) c_base[offset(i, j)] = c == 0 ? (r == 0 ? T(beta) : T(0)) : ct[i][j] - vr[i] * z;
        }
      }
    }

    // D := H^H D H: p = D v from the lower tile (each stored entry adds to
    // its row and, mirrored, to its column; entries above the diagonal or
    // outside the block were loaded as zeros), w = tau p - 1/2 |tau|^2
    // (v^H p) v, D -= v w^H + w v^H.
    T row_acc[tile], column_acc[tile];
    for (int i = 0; i < tile; ++i) {
      row_acc[i] = dt[i][0] * vc[0];
      for (int j = 1; j < tile; ++j) row_acc[i] += dt[i][j] * vc[j];
    }
    for (int j = 0; j < tile; ++j) {
      // The diagonal entry (i == j, rg == cg) counts once, in its row.
      column_acc[j] = T(0);
      for (int i = 0; i < tile; ++i)
        if (i != j || rg != cg) column_acc[j] += conjugate(dt[i][j]) * vr[i];
    }
    publish_row_partials(d_rows, row_acc);
    backends::warp_sums(column_acc, 1, G);
    for (int j = 0; j < tile; ++j) {
      const int c = cg + G * j;
      if (rg == 0 && c < bb) column_half[c] = column_acc[j];
    }
    team.team_barrier();
    T pl[per_lane];  // p at rows lane + 32 u
    R dot_part = 0;  // v^H p, the same in every warp
    for (int u = 0; u < per_lane; ++u) {
      const int r = lane + warp * u;
      pl[u] = r < L ? row_total(d_rows, r) + column_half[r] : T(0);
      if (r < L) dot_part += real_part(conjugate(vl[u]) * pl[u]);
    }
    const T half = T(R(0.5) * abs_squared(tau) * warp_sum(dot_part, 1, warp));
    T wr[tile], wc[tile];
    for (int i = 0; i < tile; ++i) {
      const int r = rg + G * i, c = cg + G * i;
      const T pr = entry_of_row(pl, i, rg), pc = entry_of_row(pl, i, cg);
      wr[i] = r < L ? tau * pr - half * vr[i] : T(0);
      wc[i] = c < L ? tau * pc - half * vc[i] : T(0);
    }
    for (int i = 0; i < tile; ++i)
      for (int j = 0; j < tile; ++j) {
        const int r = rg + G * i, c = cg + G * j;
        if (j <= i && r < L && c <= r) {
          const T updated = dt[i][j] - vr[i] * conjugate(wc[j]) - wr[i] * conjugate(vc[j]);
          d_base[offset(i, j)] = r == c ? T(real_part(updated)) : updated;
        }
      }

    // Hand the reflector to step k+1 (its reads of the slot were before the
    // first barrier) and to the back-transformation: thread tid holds v at
    // row tid as vl[tid / 32] (the same register over a warp).
    T v_mine = vl[0];
    for (int u = 1; u < per_lane; ++u)
      if (my_warp == u) v_mine = vl[u];
    if (tid < bb) slot[1 + tid] = v_mine;
    if (tid == 0) slot[0] = tau;
    if (store.extent(0) > 0 && tid < L) store(k * b + tid, n - 1 - s) = tid == 0 ? tau : v_mine;
  }
};

// G of the tiled task for half-bandwidth b: the smallest power of two >= 8
// with 4 G >= b (8 up to b = 32, 16 up to 64, ...).
inline index_t sb2st_tile_grid(index_t b) {
  index_t g = 8;
  while (4 * g < b) g *= 2;
  return g;
}

// Calls wave(t, s_hi, league) for every wave t of the schedule: the tasks
// (s, t - 2 s) of the sweeps s_hi - league < s <= s_hi.
template <class Wave>
void for_each_wave(index_t n, index_t b, Wave&& wave) {
  const index_t kmax = sb2st_steps(n, b, 0) - 1;
  for (index_t t = 0; t <= 2 * (n - 2); ++t) {
    const index_t s_hi = t / 2 < n - 2 ? t / 2 : n - 2;
    const index_t s_lo = t - kmax > 0 ? (t - kmax + 1) / 2 : 0;
    if (s_lo <= s_hi) wave(t, s_hi, s_hi - s_lo + 1);
  }
}

// The per-sweep progress counters of the one-launch chases: ints after the
// ring of `slots` reflector slots in sb2st's workspace (sb2st_workspace_size).
template <class T>
int* sb2st_progress(T* work, index_t b, index_t slots) {
  return reinterpret_cast<int*>(work + slots * (b + 1));
}

// Zeroes the n counters on `space` before a one-launch chase.
template <class ExecSpace>
void zero_progress(const ExecSpace& space, int* progress, index_t n) {
  Kokkos::parallel_for(
      "keig::sb2st::zero_progress", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const index_t i) { progress[i] = 0; });
}

// The chase with the tiled task on G x G teams, in one persistent launch or
// wave by wave. Returns false, launching nothing, where the device cannot
// launch such a team (its registers or scratch).
template <int G, class T, class ExecSpace>
bool chase_tiled(const ExecSpace& space, index_t b, const Matrix<T, ExecSpace>& ab,
                 const Vector<real_t<T>, ExecSpace>& e, const Matrix<T, ExecSpace>& reflectors,
                 const Vector<T, ExecSpace>& work, bool persistent) {
  using Tiled = BulgeChaseTiled<T, ExecSpace, G>;
  const index_t n = ab.extent(1), slots = sb2st_ring_slots(n, b);
  int* const progress = sb2st_progress(work.data(), b, slots);
  Tiled tiles{ab, e, reflectors, work, n, b, 0, 0, slots, static_cast<int>(leading_dimension(ab)), persistent, progress,
              n};
  if (!Tiled::launchable(space, tiles, b)) return false;
  const auto scratch = Kokkos::PerTeam(Tiled::scratch_bytes(b));
  if (persistent) {
    zero_progress(space, progress, n);
    // P: no more teams than sweeps in flight, and no more than surely fit
    // on the device at once whatever the kernel's register count (at most
    // 255 a thread, 8192 a warp): one team of 256 threads per
    // multiprocessor, four of 64. With one team per multiprocessor a band of
    // 32 kept 513 sweeps in flight on 132 teams at n = 32768 (H200: 8.1 us
    // per wave, where one launch per wave took 6.5 us).
    const index_t per_multiprocessor = std::max<index_t>(1, 65536 / (8192 * Tiled::warps));
    tiles.teams = std::min(std::min(slots, n - 1),
                           per_multiprocessor * static_cast<index_t>(backends::multiprocessors(space)));
    Kokkos::parallel_for("keig::sb2st::persistent",
                         Kokkos::TeamPolicy<ExecSpace>(space, tiles.teams, G * G)
                             .set_scratch_size(0, scratch),
                         tiles);
    return true;
  }
  for_each_wave(n, b, [&](index_t t, index_t s_hi, index_t league) {
    tiles.t = t;
    tiles.s_hi = s_hi;
    Kokkos::parallel_for(
        "keig::sb2st::wave",
        Kokkos::TeamPolicy<ExecSpace>(space, league, G * G).set_scratch_size(0, scratch),
        tiles);
  });
  return true;
}

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
    // GPUs: the tiled task (persistent by default), the in-place task where
    // the tiles do not fit (bands wider than 64 on sm_90) or with Global.
    // Hosts: the in-place task, in one pipelined region (Auto, Persistent)
    // or wave by wave (Global).
    bool done = false;
    if constexpr (backends::is_cuda_space_v<ExecSpace>) {
      if (kernel != Sb2stKernel::Global) {
        const bool persistent = kernel != Sb2stKernel::Tiled;
        const index_t g = detail::sb2st_tile_grid(b);
        if (g == 8) done = detail::chase_tiled<8>(space, b, ab, e, reflectors, work, persistent);
        if (g == 16) done = detail::chase_tiled<16>(space, b, ab, e, reflectors, work, persistent);
      }
      if (!done && (kernel == Sb2stKernel::Tiled || kernel == Sb2stKernel::Persistent))
        throw InvalidArgument("kernel", "sb2st: the tiled and persistent kernels need a team of "
                                        "sb2st_tile_grid(b)^2 threads that the device can launch (b <= 64); b = " +
                                            std::to_string(b));
    } else {
      if (kernel == Sb2stKernel::Tiled)
        throw InvalidArgument("kernel", "sb2st: the tiled kernel runs on GPU execution spaces");
      if (kernel != Sb2stKernel::Global) {
        using Pipeline = detail::BulgeChaseHostPipeline<T, ExecSpace>;
        const index_t slots = sb2st_ring_slots(n, b);
        int* const progress = detail::sb2st_progress(work.data(), b, slots);
        detail::zero_progress(space, progress, n);
        const index_t teams = std::min<index_t>(std::min<index_t>(space.concurrency(), slots), n - 1);
        Kokkos::parallel_for(
            "keig::sb2st::pipeline",
            Kokkos::TeamPolicy<ExecSpace>(space, teams, 1)
                .set_scratch_size(0, Kokkos::PerTeam(detail::BulgeChase<T, ExecSpace>::scratch_bytes(b))),
            Pipeline{{ab, e, reflectors, work, n, b, 0, 0, slots}, progress});
        done = true;
      }
    }
    if (!done) {
      using Global = detail::BulgeChase<T, ExecSpace>;
      Global global{ab, e, reflectors, work, n, b, 0, 0, sb2st_ring_slots(n, b)};
      const index_t team = backends::is_cuda_space_v<ExecSpace> ? (b < 32 ? 32 : (b > 128 ? 128 : b)) : 1;
      detail::for_each_wave(n, b, [&](index_t t, index_t s_hi, index_t league) {
        global.t = t;
        global.s_hi = s_hi;
        Kokkos::parallel_for("keig::sb2st::wave",
                             Kokkos::TeamPolicy<ExecSpace>(space, league, team)
                                 .set_scratch_size(0, Kokkos::PerTeam(Global::scratch_bytes(b))),
                             global);
      });
    }
  }
  Kokkos::parallel_for(
      "keig::sb2st::diagonal", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const index_t i) { d(i) = real_part(ab(0, i)); });
}

}  // namespace keig::stages
