// stages/tridiagonal_bisection: eigenvalues of the real symmetric tridiagonal
// (d, e) by Sturm-count bisection (LAPACK dstebz/dlaebz; Demmel, "Applied
// Numerical Linear Algebra" §5.3.4), in parallel over the wanted eigenvalues
// on any execution space: the eigenvalues-only job without the host stemr
// round trip.
//
// count(x), the number of eigenvalues <= x, is the number of non-positive
// pivots of T - x I = L D L^T (Sylvester's law of inertia):
//   q_0 = d_0 - x,  q_i = (d_i - x) - e_{i-1}^2 / q_{i-1}.
// A pivot with |q| < pivmin is replaced by -pivmin, as dlaebz does, so that
// no division overflows. Eigenvalue k (0-based) is where count crosses k:
// each wanted eigenvalue bisects its own bracket, independently of the
// others (a group of GPU lanes each, with Newton steps once the bracket
// isolates it; four per work item on host spaces), so w comes out
// ascending. The brackets start from a shared multisection: count at P
// evenly spaced points of the Gershgorin interval, which saves log2(P)
// bisection steps per eigenvalue.
//
// T is first scaled by a power of two (exact) so that its largest entry lies
// in [0.5, 1): e^2 neither overflows nor underflows harmfully, LAPACK's
// pivmin = max(tiny, tiny max e^2) is just tiny, the spectrum lies in
// [-3, 3], and the results are scaled back exactly.
//
// The host waits once, for max|T| (which also rejects NaN/Inf); a value range
// adds a second wait for its two counts. Everything else is asynchronous on
// `space`.
#pragma once

#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <type_traits>

#include "keig/backends/context.hpp"
#include "keig/backends/warp.hpp"
#include "keig/errors.hpp"
#include "keig/options.hpp"
#include "keig/views/matrix.hpp"
#include "keig/views/workspace.hpp"

namespace keig::stages {

namespace detail {

// Multisection points (at most 1024 on hosts, max(1024, n) on devices) and
// the cap on bisection steps: 128 halvings take any bracket within [-4, 4]
// below 2^-125, past the tolerance of either precision, so no work item
// loops long whatever the input.
inline constexpr index_t bisection_max_points = 1024;
inline index_t bisection_device_points(index_t n) { return n > bisection_max_points ? n : bisection_max_points; }
inline constexpr int bisection_max_steps = 128;

// Workspace layout (elements of R): scaled d (n), scaled e^2 shifted by one
// (n, e2(0) = 0), Gershgorin bounds (2), multisection counts (points + 1).
inline index_t bisection_e2_offset(index_t n) { return n; }
inline index_t bisection_bounds_offset(index_t n) { return 2 * n; }
inline index_t bisection_counts_offset(index_t n) { return 2 * n + 2; }

template <class R>
KOKKOS_INLINE_FUNCTION R bisection_abs(R x) {
  return x < R(0) ? -x : x;
}

// e2 / q for the GPU counts: on CUDA devices (double) the hardware's
// approximate reciprocal refined by two Newton steps (to about one ulp)
// times e2, where IEEE division is a sequence with a data-dependent slow
// path that keeps independent recurrences from overlapping. The count stays
// the exact count of T with entries perturbed by a few ulps (the ratio
// recurrence's backward stability does not need correct rounding).
template <class R>
KOKKOS_INLINE_FUNCTION constexpr bool ratio_by_reciprocal() {
#if defined(__CUDA_ARCH__)
  return std::is_same_v<R, double>;
#else
  return false;
#endif
}

template <class R>
KOKKOS_INLINE_FUNCTION R reciprocal_for_count(R q) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<R, double>) {
    double r;
    asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(q));
    r = fma(r, fma(-q, r, 1.0), r);
    r = fma(r, fma(-q, r, 1.0), r);
    return r;
  } else {
    return R(1) / q;
  }
#else
  return R(1) / q;
#endif
}

template <class R>
KOKKOS_INLINE_FUNCTION R ratio_for_count(R e2, R q) {
  if constexpr (ratio_by_reciprocal<R>()) return e2 * reciprocal_for_count(q);
  else return e2 / q;
}

// count(x_l) for L points at once, c_l = number of eigenvalues <= x_l of the
// scaled T. The L recurrences are independent: on CPUs they overlap the
// latency of the divisions (and vectorize). e2(0) = 0 makes the first step
// q_0 = d_0 - x (any nonzero q before it). DeviceRatio: e2 / q by
// ratio_for_count (the GPU bisection kernel). LogDerivative: chain 0 also
// returns f'/f at x_0 for f(x) = det(T - x I) = prod q_i, that is
// sum q_i' / q_i, through the differentiated recurrence
//   q_i' = -1 + (e_{i-1}^2 / q_{i-1}^2) q_{i-1}'   (so q_i' <= -1);
// near a pivot at pivmin it overflows to Inf or NaN, which callers reject.
template <int L, class R, bool DeviceRatio = false, bool LogDerivative = false>
KOKKOS_INLINE_FUNCTION void sturm_counts(const R* d, const R* e2, index_t n, const R* x, R pivmin, index_t* c,
                                         R* log_derivative = nullptr) {
  R q[L];
  R dq = 0, sum = 0;  // chain 0's q_{i-1}' and sum of q_j' / q_j, j < i - 1
  for (int l = 0; l < L; ++l) {
    q[l] = R(1);
    c[l] = 0;
  }
  for (index_t i = 0; i < n; ++i) {
    const R di = d[i], e2i = e2[i];
    for (int l = 0; l < L; ++l) {
      R ratio;
      if (LogDerivative && l == 0) {
        const R r = reciprocal_for_count(q[0]);
        // The same bits as the other chains' ratio (ratio_for_count divides
        // wherever it does not use the reciprocal).
        ratio = DeviceRatio && ratio_by_reciprocal<R>() ? e2i * r : e2i / q[0];
        sum += dq * r;
        dq = (ratio * r) * dq - R(1);
      } else {
        ratio = DeviceRatio ? ratio_for_count(e2i, q[l]) : e2i / q[l];
      }
      R v = (di - x[l]) - ratio;
      v = (v < pivmin && v > -pivmin) ? -pivmin : v;  // dlaebz's pivot guard
      q[l] = v;
      c[l] += v <= R(0) ? 1 : 0;
    }
  }
  if (LogDerivative) *log_derivative = sum + dq * reciprocal_for_count(q[0]);
}

// Gershgorin interval widened as dstebz does (FUDGE = 2.1), so that count(gl)
// = 0 and count(gu) = n also in floating point.
template <class R>
KOKKOS_INLINE_FUNCTION void bisection_bounds(const R* raw, index_t n, R ulp, R pivmin, R& gl, R& gu) {
  const R fudge = R(2.1);
  const R agl = bisection_abs(raw[0]), agu = bisection_abs(raw[1]);
  const R widen = fudge * (agl > agu ? agl : agu) * ulp * R(n);
  gl = raw[0] - widen - fudge * 2 * pivmin;
  gu = raw[1] + widen + fudge * pivmin;
}

// |e_{i-1}| + |e_i| of the scaled T.
template <class View, class R>
KOKKOS_INLINE_FUNCTION R gershgorin_radius(const View& e, index_t i, index_t n, R s1, R s2) {
  const R a = i > 0 ? bisection_abs((e(i - 1) * s1) * s2) : R(0);
  const R b = i + 1 < n ? bisection_abs((e(i) * s1) * s2) : R(0);
  return a + b;
}

// Multisection point j of P over [gl, gu] (the same expression in every kernel).
template <class R>
KOKKOS_INLINE_FUNCTION R bisection_point(R gl, R gu, index_t j, index_t points) {
  return j >= points ? gu : gl + R(j) * ((gu - gl) / R(points));
}

// Scalars every kernel needs (scaled T in ws).
template <class R>
struct BisectionSetup {
  const R* ws;
  index_t n, e2_at, bounds_at, counts_at, points;
  R ulp, pivmin;

  KOKKOS_INLINE_FUNCTION void bounds(R& gl, R& gu) const { bisection_bounds(ws + bounds_at, n, ulp, pivmin, gl, gu); }
  template <int L, bool DeviceRatio = false, bool LogDerivative = false>
  KOKKOS_INLINE_FUNCTION void counts(const R* x, index_t* c, R* log_derivative = nullptr) const {
    sturm_counts<L, R, DeviceRatio, LogDerivative>(ws, ws + e2_at, n, x, pivmin, c, log_derivative);
  }
};

// Work item t counts at multisection points tL .. tL + L - 1 (of 0..P).
template <int L, class R>
struct Multisection {
  BisectionSetup<R> s;
  R* counts;

  KOKKOS_INLINE_FUNCTION void operator()(const index_t t) const {
    R gl, gu;
    s.bounds(gl, gu);
    R x[L];
    index_t c[L];
    for (int l = 0; l < L; ++l) x[l] = bisection_point(gl, gu, t * L + l, s.points);
    s.template counts<L>(x, c);
    for (int l = 0; l < L; ++l) {
      const index_t j = t * L + l;
      if (j <= s.points) counts[j] = j == 0 ? R(0) : (j == s.points ? R(s.n) : R(c[l]));
    }
  }
};

// Work item t finds eigenvalues k = il + tL + l, l < L: from the multisection
// bracket with counts(lo) <= k < counts(hi), cut to [xlo, xhi], bisection to
// hi - lo <= 2 eps max(|lo|, |hi|) + pivmin (dstebz's test with abstol = pivmin).
template <int L, class R, class WView>
struct Bisect {
  BisectionSetup<R> s;
  const R* counts;
  WView w;
  index_t il, iu;
  R xlo, xhi, u1, u2;

  KOKKOS_INLINE_FUNCTION void operator()(const index_t t) const {
    R gl, gu;
    s.bounds(gl, gu);
    R lo[L], hi[L], x[L];
    index_t k[L], c[L];
    bool open[L];
    for (int l = 0; l < L; ++l) {
      k[l] = il + t * L + l < iu ? il + t * L + l : iu;  // lanes past iu repeat iu
      index_t jl = 0, jh = s.points;
      while (jh - jl > 1) {
        const index_t mid = (jl + jh) / 2;
        if (counts[mid] <= R(k[l])) jl = mid;
        else jh = mid;
      }
      lo[l] = bisection_point(gl, gu, jl, s.points);
      hi[l] = bisection_point(gl, gu, jh, s.points);
      if (lo[l] < xlo) lo[l] = xlo;
      if (hi[l] > xhi) hi[l] = xhi;
    }
    for (int step = 0; step < bisection_max_steps; ++step) {
      bool active = false;
      for (int l = 0; l < L; ++l) {
        const R alo = bisection_abs(lo[l]), ahi = bisection_abs(hi[l]);
        const R mid = R(0.5) * (lo[l] + hi[l]);
        // Closed: converged, or no float strictly inside.
        open[l] = hi[l] - lo[l] > R(2) * s.ulp * (alo > ahi ? alo : ahi) + s.pivmin && lo[l] < mid && mid < hi[l];
        x[l] = mid;
        active = active || open[l];
      }
      if (!active) break;
      s.template counts<L>(x, c);
      for (int l = 0; l < L; ++l) {
        if (!open[l]) continue;
        if (c[l] > k[l]) hi[l] = x[l];
        else lo[l] = x[l];
      }
    }
    for (int l = 0; l < L; ++l)
      if (il + t * L + l <= iu) w(k[l] - il) = ((R(0.5) * (lo[l] + hi[l])) * u1) * u2;
  }
};

// Devices: eigenvalue k gets an aligned group of G lanes of a warp, L
// points per lane. One thread per eigenvalue (the host work items' layout)
// leaves a GPU latency-bound: at n = 16384 that is 16384 threads, each a
// chain of n dependent divisions per count. Each step counts at G L points
// of the bracket [lo, hi] at once and keeps the two nearest points whose
// counts straddle k: log2(G L + 1) bits a step instead of one.
//
// Newton (rtsafe's scheme, on f(x) = det(T - x I)): chain 0 of lane 0 also
// carries f'/f (sturm_counts' LogDerivative). Once the bracket holds
// eigenvalue k alone (count(lo) = k, count(hi) = k + 1), its Newton point
// x_0 - f/f' takes slot 0 of the next step and the other G L - 1 points cut
// the bracket evenly, so a step never gains fewer bits than the cuts, and
// near the root Newton's quadratic convergence closes it: at n = 16384 about
// 9 steps of the 8 eigenvalues of a warp instead of 15 (random spectra; a
// host model of this loop). A Newton step below half the closing width is
// stretched to half of it, so the next count lands past the root and the
// bracket closes by Bisect's test (results within its tolerance). Without a
// Newton point slot 0 holds the middle cut, so a derivative is at hand when
// the bracket becomes isolated. Points outside the bracket, NaN or Inf (f'/f
// overflows near a pivot at pivmin) fall back to the cuts.
//
// With L = 1 the H200 profile (n = 16384, before Newton) showed a
// latency-bound kernel (the FP64 pipe 37 % busy, 0.75 eligible warps a
// scheduler): L = 2 independent recurrences per lane fill it at the same
// thread count, once the division is one without a slow path
// (ratio_for_count). The launch picks G and L by the number of eigenvalues.
template <class R, class WView, class ExecSpace, int L = 2, int G = 4>
struct BisectGroups {
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  static constexpr int group = G, per_lane = L, slots = group * per_lane;
  static constexpr int team_size = 128;
  BisectionSetup<R> s;
  const R* counts;
  WView w;
  index_t il, iu;
  R xlo, xhi, u1, u2;

  KOKKOS_INLINE_FUNCTION void operator()(const Team& team) const {
    const index_t item = team.league_rank() * team.team_size() + team.team_rank();
    const int part = static_cast<int>(item % group);
    const index_t j = il + item / group;
    const index_t k = j < iu ? j : iu;  // groups past iu repeat iu
    R gl, gu;
    s.bounds(gl, gu);
    index_t jl = 0, jh = s.points;
    while (jh - jl > 1) {
      const index_t m = (jl + jh) / 2;
      if (counts[m] <= R(k)) jl = m;
      else jh = m;
    }
    R lo = bisection_point(gl, gu, jl, s.points), hi = bisection_point(gl, gu, jh, s.points);
    // Counts at the bracket's ends; a value range's cut makes them unknown
    // (-1 and n + 1 can equal neither k nor k + 1).
    index_t clo = static_cast<index_t>(counts[jl]), chi = static_cast<index_t>(counts[jh]);
    if (lo < xlo) {
      lo = xlo;
      clo = -1;
    }
    if (hi > xhi) {
      hi = xhi;
      chi = s.n + 1;
    }
    R newton_point = 0;
    bool have_newton = false;
    for (int step = 0; step < bisection_max_steps; ++step) {
      // The same closing test as Bisect; lo and hi are equal on the group's lanes.
      const R alo = bisection_abs(lo), ahi = bisection_abs(hi);
      const R closing = R(2) * s.ulp * (alo > ahi ? alo : ahi) + s.pivmin;
      const R mid = R(0.5) * (lo + hi);
      if (!(hi - lo > closing && lo < mid && mid < hi)) break;
      const bool newton = have_newton && lo < newton_point && newton_point < hi;
      const int cuts = newton ? slots - 1 : slots;  // evenly spaced points inside the bracket
      const int middle = (cuts + 1) / 2;
      const R width = (hi - lo) / R(cuts + 1);
      R x[per_lane];
      for (int l = 0; l < per_lane; ++l) {
        const int slot = part * per_lane + l;
        // Slot 0: the Newton point or the middle cut; the others: the remaining cuts in order.
        const int cut = slot == 0 ? middle : (!newton && slot >= middle ? slot + 1 : slot);
        x[l] = slot == 0 && newton ? newton_point : lo + R(cut) * width;
      }
      index_t c[per_lane];
      R log_derivative = 0;
      s.template counts<per_lane, true, true>(x, c, &log_derivative);
      // The nearest points on either side of eigenvalue k, with their counts
      // (counts grow with x).
      R new_lo = lo, new_hi = hi;
      index_t new_clo = clo, new_chi = chi;
      for (int l = 0; l < per_lane; ++l) {
        if (c[l] <= k) {
          if (x[l] > new_lo) {
            new_lo = x[l];
            new_clo = c[l];
          }
        } else if (x[l] < new_hi) {
          new_hi = x[l];
          new_chi = c[l];
        }
      }
      lo = backends::group_max<group>(new_lo);
      hi = backends::group_min<group>(new_hi);
      clo = backends::group_max<group>(new_clo);
      chi = backends::group_min<group>(new_chi);
      // Lane 0's Newton point from slot 0, shared by the group (adding the
      // other lanes' zeros is exact).
      R proposal = 0;
      if (part == 0) {
        R newton_step = -R(1) / log_derivative;
        const R half = R(0.5) * closing;
        if (bisection_abs(newton_step) < half) newton_step = newton_step < R(0) ? -half : half;
        proposal = x[0] + newton_step;
      }
      newton_point = backends::group_sum<group>(proposal);
      have_newton = clo == k && chi == k + 1;
    }
    if (part == 0 && j <= iu) w(k - il) = ((R(0.5) * (lo + hi)) * u1) * u2;
  }
};

}  // namespace detail

// Workspace of tridiagonal_bisection for order n (elements of R).
template <class R>
std::size_t tridiagonal_bisection_workspace_size(index_t n) {
  return static_cast<std::size_t>(2 * (n > 0 ? n : 0) + 2 + detail::bisection_device_points(n) + 1);
}

// Eigenvalues of the tridiagonal (d: n, e: n - 1) in `range`: returns m and
// w(0..m-1) ascending (w needs iu - il + 1 entries for an index range, n
// otherwise). d, e are not modified. work: tridiagonal_bisection_workspace_size<R>(n).
// Accuracy: each eigenvalue to within about 2 eps |lambda| + pivmin of where
// the computed count crosses, i.e. O(eps ||T||) absolute.
template <class R, class ExecSpace>
index_t tridiagonal_bisection(const ExecSpace& space, const Range& range, const Vector<R, ExecSpace>& d,
                              const Vector<R, ExecSpace>& e, const Vector<R, ExecSpace>& w,
                              const Vector<R, ExecSpace>& work) {
  static_assert(std::is_same_v<R, float> || std::is_same_v<R, double>,
                "keig: tridiagonal_bisection works on float or double");
  using Policy = Kokkos::RangePolicy<ExecSpace>;
  using memory_space = typename ExecSpace::memory_space;
  const index_t n = d.extent(0);

  // Arguments, as the drivers check them (solve_impl.hpp).
  if (static_cast<index_t>(e.extent(0)) < (n > 0 ? n - 1 : 0))
    throw InvalidArgument("e", "tridiagonal_bisection: needs n - 1 = " + std::to_string(n - 1) + " entries, has " +
                                   std::to_string(e.extent(0)));
  if (range.kind == Range::Kind::Index) {
    const bool ok = n == 0 ? (range.il == 0 && range.iu == -1) : (0 <= range.il && range.il <= range.iu && range.iu < n);
    if (!ok)
      throw InvalidArgument("range", "tridiagonal_bisection: index range il = " + std::to_string(range.il) +
                                         ", iu = " + std::to_string(range.iu) + " must satisfy 0 <= il <= iu < n = " +
                                         std::to_string(n));
  } else if (range.kind == Range::Kind::Value) {
    if (!(range.vl < range.vu) || !std::isfinite(range.vl) || !std::isfinite(range.vu))
      throw InvalidArgument("range", "tridiagonal_bisection: value range (vl, vu] must be finite with vl < vu");
  }
  const index_t wanted = range.kind == Range::Kind::Index ? range.iu - range.il + 1 : n;
  if (static_cast<index_t>(w.extent(0)) < wanted)
    throw InvalidArgument("w", "tridiagonal_bisection: needs " + std::to_string(wanted) + " entries, has " +
                                   std::to_string(w.extent(0)));
  if (work.extent(0) < tridiagonal_bisection_workspace_size<R>(n))
    throw InvalidArgument("work", "tridiagonal_bisection: needs tridiagonal_bisection_workspace_size(n) = " +
                                      std::to_string(tridiagonal_bisection_workspace_size<R>(n)) + " entries");
  if (n == 0) return 0;

  // max |T| on the host (the one wait of an index range); NaN/Inf count as
  // +Inf, so a non-finite maximum means a non-finite entry.
  const R inf = std::numeric_limits<R>::infinity();
  R tnrm = 0;
  Kokkos::parallel_reduce(
      "keig::bisection::norm", Policy(space, 0, n),
      KOKKOS_LAMBDA(const index_t i, R& acc) {
        const R di = d(i), ei = i + 1 < n ? e(i) : R(0);
        R v = inf;
        if (compat::isfinite(di) && compat::isfinite(ei)) {
          const R a = detail::bisection_abs(di), b = detail::bisection_abs(ei);
          v = a > b ? a : b;
        }
        if (v > acc) acc = v;
      },
      Kokkos::Max<R>(tnrm));
  if (!(tnrm < inf)) {  // error path: name the argument
    auto dh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d);
    for (index_t i = 0; i < n; ++i)
      if (!std::isfinite(dh(i)))
        throw InvalidArgument("d", "tridiagonal_bisection: entry " + std::to_string(i) + " is NaN or Inf");
    throw InvalidArgument("e", "tridiagonal_bisection: an entry is NaN or Inf");
  }

  if (n == 1) {  // the eigenvalue is d_0, exactly
    R d0 = 0;
    Kokkos::deep_copy(space, Kokkos::View<R, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(&d0),
                      Kokkos::subview(d, 0));
    space.fence();
    const bool in = range.kind != Range::Kind::Value || (R(range.vl) < d0 && d0 <= R(range.vu));
    if (in) Kokkos::deep_copy(space, Kokkos::subview(w, std::make_pair(0, 1)), Kokkos::subview(d, std::make_pair(0, 1)));
    return in ? 1 : 0;
  }

  if (tnrm == R(0)) {  // T = 0: every eigenvalue is 0, exactly
    const bool in = range.kind != Range::Kind::Value || (range.vl < 0 && 0 <= range.vu);
    const index_t m = in ? wanted : 0;
    if (m > 0) Kokkos::deep_copy(space, Kokkos::subview(w, std::make_pair(index_t(0), m)), R(0));
    return m;
  }

  // T := 2^-ex T with max|T| in [0.5, 1); the factor is applied as two
  // halves so that neither over- nor underflows.
  int ex = 0;
  std::frexp(tnrm, &ex);
  const int p1 = -ex / 2, p2 = -ex - p1;
  const R s1 = std::ldexp(R(1), p1), s2 = std::ldexp(R(1), p2);
  const R u1 = std::ldexp(R(1), -p1), u2 = std::ldexp(R(1), -p2);
  const R ulp = std::numeric_limits<R>::epsilon();
  // LAPACK's pivmin = tiny * max(1, max e^2); max e^2 < 1 after scaling.
  const R pivmin = std::numeric_limits<R>::min();

  const index_t e2_at = detail::bisection_e2_offset(n), bounds_at = detail::bisection_bounds_offset(n),
                counts_at = detail::bisection_counts_offset(n);
  R* const ws = work.data();
  Kokkos::parallel_for(
      "keig::bisection::scale", Policy(space, 0, n), KOKKOS_LAMBDA(const index_t i) {
        ws[i] = (d(i) * s1) * s2;
        const R ei = i > 0 ? (e(i - 1) * s1) * s2 : R(0);
        ws[e2_at + i] = ei * ei;
      });
  // Gershgorin bounds, reduced into the workspace (no wait).
  using Scalar = Kokkos::View<R, memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Kokkos::parallel_reduce(
      "keig::bisection::gershgorin_low", Policy(space, 0, n),
      KOKKOS_LAMBDA(const index_t i, R& acc) {
        const R v = ws[i] - detail::gershgorin_radius(e, i, n, s1, s2);
        if (v < acc) acc = v;
      },
      Kokkos::Min<R, memory_space>(Scalar(ws + bounds_at)));
  Kokkos::parallel_reduce(
      "keig::bisection::gershgorin_high", Policy(space, 0, n),
      KOKKOS_LAMBDA(const index_t i, R& acc) {
        const R v = ws[i] + detail::gershgorin_radius(e, i, n, s1, s2);
        if (v > acc) acc = v;
      },
      Kokkos::Max<R, memory_space>(Scalar(ws + bounds_at + 1)));

  // The wanted indices [il, iu] and the interval [xlo, xhi] that holds them
  // (scaled; [-4, 4] holds the whole spectrum).
  index_t il = 0, iu = n - 1;
  R xlo = -4, xhi = 4;
  if (range.kind == Range::Kind::Index) {
    il = range.il;
    iu = range.iu;
  } else if (range.kind == Range::Kind::Value) {
    // The bounds in R as LAPACK takes them, scaled exactly in double, clamped
    // to [-4, 4] (where the counts are 0 and n robustly).
    const auto scaled = [&](double v) {
      const double x = std::ldexp(double(R(v)), -ex);
      return R(x < -4 ? -4 : (x > 4 ? 4 : x));
    };
    xlo = scaled(range.vl);
    xhi = scaled(range.vu);
    // m = count(vu) - count(vl): both counts in one reduction (count(vu) in
    // units of n + 1), brought to the host.
    index_t both = 0;
    Kokkos::parallel_reduce(
        "keig::bisection::value_counts", Policy(space, 0, 1),
        KOKKOS_LAMBDA(const index_t, index_t& acc) {
          const R x[2] = {xlo, xhi};
          index_t c[2];
          detail::sturm_counts<2>(ws, ws + e2_at, n, x, pivmin, c);
          acc += c[0] + c[1] * (n + 1);
        },
        Kokkos::Sum<index_t>(both));
    il = both % (n + 1);
    iu = both / (n + 1) - 1;
    if (iu < il) return 0;
  }
  const index_t m = iu - il + 1;

  // Multisection: counts at P points; counts(0) = 0 and counts(P) = n by the
  // Gershgorin theorem. Counts are stored as R, exact below 2^digits (else no
  // multisection). On host spaces P follows m (P counts cost as much as
  // log2(P) steps of P / log2(P) eigenvalues) and each work item runs 4
  // recurrences at once. Devices count all points at once, one per thread,
  // about the time of one bisection step: n points (the mean gap of a
  // spectrum as wide as the Gershgorin interval) instead of 1024 save about
  // two of the ~10 steps of a warp at n = 16384 and three at 32768 (host
  // model of BisectGroups on random spectra).
  constexpr bool host = std::is_same_v<memory_space, Kokkos::HostSpace>;
  constexpr int lanes = host ? 4 : 1;
  index_t points = detail::bisection_device_points(n);
  if (host) {
    points = 1;
    while (points < detail::bisection_max_points && points < 4 * m) points *= 2;
  }
  if (n >= (index_t(1) << std::numeric_limits<R>::digits)) points = 1;
  const detail::BisectionSetup<R> setup{ws, n, e2_at, bounds_at, counts_at, points, ulp, pivmin};
  Kokkos::parallel_for("keig::bisection::multisection", Policy(space, 0, (points + lanes) / lanes),
                       detail::Multisection<lanes, R>{setup, ws + counts_at});
  if constexpr (backends::is_cuda_space_v<ExecSpace>) {
    const auto launch = [&](auto per_lane, auto lanes_per_group) {
      using Groups = detail::BisectGroups<R, Vector<R, ExecSpace>, ExecSpace, decltype(per_lane)::value,
                                          decltype(lanes_per_group)::value>;
      const index_t items = m * Groups::group;
      Kokkos::parallel_for("keig::bisection::bisect",
                           Kokkos::TeamPolicy<ExecSpace>(space, (items + Groups::team_size - 1) / Groups::team_size,
                                                         Groups::team_size),
                           Groups{setup, ws + counts_at, w, il, iu, xlo, xhi, u1, u2});
    };
    // Lanes per group G and points per lane L by the number of eigenvalues
    // wanted (H200, all of n, tridiagonal stage of keig-bench --suite eigh
    // --jobs values, with Newton): n = 8192: G = 8, L = 1 0.0099 s; G = 4,
    // L = 2 0.0099 s; G = 2, L = 2 0.0102 s; G = 4, L = 1 0.0107 s; G = 2,
    // L = 1 0.0131 s. n = 16384: G = 2, L = 2 0.022-0.024 s; G = 2, L = 1
    // 0.0256 s; G = 1, L = 2 0.0266 s; G = 4, L = 2 0.0268 s; G = 8, L = 1
    // 0.0304 s. n = 32768: G = 2, L = 1 0.056 s; G = 2, L = 2 0.061 s; G = 4,
    // L = 1 0.072 s. Without Newton: 0.013 / 0.033 / 0.098 s. With many
    // eigenvalues the GPU is busy and fewer points a step win; with few,
    // more lanes hide the latency.
    if (m >= 24576) launch(std::integral_constant<int, 1>{}, std::integral_constant<int, 2>{});
    else if (m >= 12288) launch(std::integral_constant<int, 2>{}, std::integral_constant<int, 2>{});
    else launch(std::integral_constant<int, 1>{}, std::integral_constant<int, 8>{});
  } else {
    Kokkos::parallel_for("keig::bisection::bisect", Policy(space, 0, (m + lanes - 1) / lanes),
                         detail::Bisect<lanes, R, Vector<R, ExecSpace>>{setup, ws + counts_at, w, il, iu, xlo, xhi, u1, u2});
  }
  return m;
}

}  // namespace keig::stages
