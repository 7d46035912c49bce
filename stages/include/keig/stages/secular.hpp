// stages/secular: the roots of divide and conquer's secular equation
//   w(x) = 1/rho + sum_i z_i^2 / (d_i - x) = 0,  d ascending, rho > 0,
// all k of them at once on the execution space (LAPACK ?laed4 solves one per
// call on the host; at n = 32768 the host's roots were most of stedc's time).
// Root j lies in (d_j, d_j+1) (the last in (d_k-1, d_k-1 + rho z^T z]).
// As in ?laed4 it is kept as an offset tau from its nearer pole d_origin,
// so every d_i - root = (d_i - d_origin) - tau keeps its relative accuracy:
// the Loewner z and the vectors of D + rho z z^T are built from those
// differences (Gu & Eisenstat).
//
// Each step interpolates the two partial sums psi (poles left of the root)
// and phi (poles right of it) by one pole each with the value and slope of
// the sum at the current point (Li's two-pole "middle way" model, the core
// of ?laed4) and takes the model's root; a bracket kept from the signs of w
// replaces any step that leaves it by bisection. Converged when |w| is below
// ?laed4's error bound for its evaluation, or the step no longer moves tau.
// On GPUs each root gets a warp whose lanes split the sums over the poles.
#pragma once

#include <Kokkos_Core.hpp>
#include <limits>
#include <string>

#include "keig/backends/context.hpp"
#include "keig/backends/warp.hpp"
#include "keig/errors.hpp"
#include "keig/views/compat.hpp"
#include "keig/views/matrix.hpp"
#include "keig/views/workspace.hpp"

namespace keig::stages {

namespace detail {

inline constexpr int secular_max_steps = 100;

template <class R>
KOKKOS_INLINE_FUNCTION R secular_abs(R x) {
  return x < R(0) ? -x : x;
}

// One root per group of Lanes lanes: a whole warp (Lanes = 32, teams of
// whole warps as backends::warp_sum needs) or, on hosts, one thread.
template <int Lanes, class R, class ExecSpace>
struct SecularRoots {
  static_assert(Lanes == 1 || Lanes == 32, "SecularRoots: a root takes one thread or a whole warp");
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  static constexpr int roots_per_team = Lanes == 1 ? 1 : 4;
  static constexpr int team_size = Lanes * roots_per_team;
  index_t k;
  const R* d;
  const R* z;
  R rho, unit_roundoff;
  index_t* origin;
  R* tau;
  R* lambda;
  index_t* failures;  // roots that did not converge (counted, then reported by the host)
  // Batched (secular_roots_batched): positions instead of one problem's roots;
  // problem_of == nullptr: the single problem above.
  const index_t* problem_of = nullptr;
  const index_t* first = nullptr;
  const index_t* count = nullptr;
  const R* rhos = nullptr;
  index_t min_count = 1;

  // Partial sums over the poles at x = tau relative to d_o: psi (i <= j) and
  // phi (i > j) and their derivatives, reduced over the group's lanes.
  struct Sums {
    R psi, dpsi, phi, dphi;
  };

  KOKKOS_INLINE_FUNCTION static Sums sums(int lane, index_t k, const R* d, const R* z, index_t j, R d_o, R t) {
    Sums s{R(0), R(0), R(0), R(0)};
    for (index_t i = lane; i < k; i += Lanes) {
      const R q = z[i] / ((d[i] - d_o) - t);
      if (i <= j) {
        s.psi += z[i] * q;
        s.dpsi += q * q;
      } else {
        s.phi += z[i] * q;
        s.dphi += q * q;
      }
    }
    if constexpr (Lanes > 1) {
      s.psi = backends::warp_sum(s.psi, 1, Lanes);
      s.dpsi = backends::warp_sum(s.dpsi, 1, Lanes);
      s.phi = backends::warp_sum(s.phi, 1, Lanes);
      s.dphi = backends::warp_sum(s.dphi, 1, Lanes);
    }
    return s;
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Team& team) const {
    const int lane = team.team_rank() % Lanes;
    const index_t p = team.league_rank() * roots_per_team + team.team_rank() / Lanes;
    // The problem of position p: its first position, poles and rho (the
    // whole group leaves together where p holds no root).
    index_t base = 0, k = this->k;
    R rho = this->rho;
    if (problem_of != nullptr) {
      const index_t b = p < this->k ? problem_of[p] : -1;
      if (b < 0) return;
      base = first[b];
      k = count[b];
      if (k < min_count) return;
      rho = rhos[b];
    }
    const index_t j = p - base;
    if (j >= k) return;
    const R* const d = this->d + base;
    const R* const z = this->z + base;
    const bool last = j == k - 1;
    const R rho_inv = R(1) / rho;
    // Bracket (lo, hi) around tau, both relative to d_o; dl and dr are the
    // neighbouring poles relative to d_o (the last root has none on its right).
    index_t o = j;
    R d_o = d[j], t, lo, hi, dl = 0, dr = 0;
    Sums s;
    if (last) {
      R zz = 0;
      for (index_t i = lane; i < k; i += Lanes) zz += z[i] * z[i];
      if constexpr (Lanes > 1) zz = backends::warp_sum(zz, 1, Lanes);
      lo = 0;
      hi = rho * zz * (R(1) + R(4) * unit_roundoff);
      t = R(0.5) * hi;
      s = sums(lane, k, d, z, j, d_o, t);
    } else {
      // The midpoint's sign picks the nearer pole as the origin (as ?laed4).
      const R gap = d[j + 1] - d[j];
      const R mid = R(0.5) * gap;
      s = sums(lane, k, d, z, j, d_o, mid);
      if (rho_inv + s.psi + s.phi >= R(0)) {
        lo = 0;
        hi = mid;
        t = mid;
        dr = gap;
      } else {
        o = j + 1;
        d_o = d[j + 1];
        lo = -mid;
        hi = 0;
        t = -mid;
        dl = -gap;
      }
    }
    bool converged = false;
    for (int step = 0; step < secular_max_steps && !converged; ++step) {
      if (step > 0) s = sums(lane, k, d, z, j, d_o, t);
      const R w = rho_inv + s.psi + s.phi;
      // ?laed4's bound on the rounding error of w.
      const R bound = unit_roundoff * (R(8) * (s.phi - s.psi) + rho_inv + secular_abs(t) * (s.dpsi + s.dphi));
      if (secular_abs(w) <= bound) {
        converged = true;
        break;
      }
      if (w > R(0)) hi = t;
      else lo = t;
      // Two-pole model c + s1 / (D1 - eta) + s2 / (D2 - eta) = 0 for the step
      // eta, D1 = dl - t < 0 < D2 = dr - t; its value and slope match w's.
      const R d1 = dl - t;
      R eta;
      bool model = true;
      if (last) {
        const R c = w - s.dpsi * d1;
        model = c > R(0);
        eta = model ? d1 + s.dpsi * d1 * d1 / c : R(0);
      } else {
        const R d2 = dr - t;
        const R s1 = s.dpsi * d1 * d1, s2 = s.dphi * d2 * d2;
        const R c = w - s.dpsi * d1 - s.dphi * d2;
        // c eta^2 - b eta + d1 d2 w = 0 has exactly one root in (D1, D2).
        const R b = c * (d1 + d2) + s1 + s2;
        const R cc = d1 * d2 * w;
        const R disc = b * b - R(4) * c * cc;
        model = disc >= R(0);
        if (model) {
          const R root = compat::sqrt(disc);
          const R qq = R(0.5) * (b >= R(0) ? b + root : b - root);
          const R r1 = c != R(0) ? qq / c : d2 * R(2), r2 = qq != R(0) ? cc / qq : d2 * R(2);
          eta = (r1 > d1 && r1 < d2) ? r1 : r2;
        }
      }
      R next = t + eta;
      // Late steps bisect only: the bracket then halves every step.
      if (!model || !(next > lo && next < hi) || step >= secular_max_steps / 2) next = R(0.5) * (lo + hi);
      if (next == t || !(next > lo && next < hi)) converged = true;  // nothing left between the bracket's ends
      else t = next;
    }
    if (lane == 0) {
      origin[base + j] = o;
      tau[base + j] = t;
      lambda[base + j] = d_o + t;
      if (!converged) Kokkos::atomic_add(failures, index_t(1));
    }
  }
};

// The roots' failure count, zeroed on `space` (a labelled view would be
// zeroed by a kernel on the memory space's default instance and a fence of
// that instance: a wait on other work, not only this call's).
template <class ExecSpace>
Kokkos::View<index_t, memory_space_of<ExecSpace>> failure_counter(const ExecSpace& space) {
  const auto failures =
      keig::detail::allocate<Kokkos::View<index_t, memory_space_of<ExecSpace>>>(space, "keig::secular::failures");
  Kokkos::deep_copy(space, failures, index_t(0));
  return failures;
}

}  // namespace detail

// The k roots of 1/rho + sum_i z_i^2 / (d_i - x) = 0 for strictly ascending
// d (k >= 1 entries used of each view), rho > 0: root j = d(origin(j)) +
// tau(j) with origin(j) its nearer pole, lambda(j) = that sum. Asynchronous
// on the space except for the convergence check, which fences.
template <class R, class ExecSpace>
void secular_roots(const ExecSpace& space, index_t k, const Vector<R, ExecSpace>& d, const Vector<R, ExecSpace>& z, R rho,
                   const Vector<index_t, ExecSpace>& origin, const Vector<R, ExecSpace>& tau,
                   const Vector<R, ExecSpace>& lambda) {
  if (k < 0) throw InvalidArgument("k", "must be non-negative, is " + std::to_string(k));
  const auto short_view = [&](const auto& v) { return static_cast<index_t>(v.extent(0)) < k; };
  if (short_view(d)) throw InvalidArgument("d", "needs k = " + std::to_string(k) + " poles");
  if (short_view(z)) throw InvalidArgument("z", "needs k = " + std::to_string(k) + " entries");
  if (short_view(origin) || short_view(tau) || short_view(lambda))
    throw InvalidArgument("origin/tau/lambda", "need k = " + std::to_string(k) + " entries each");
  if (!(rho > R(0)) || !std::isfinite(rho)) throw InvalidArgument("rho", "must be positive and finite");
  if (k == 0) return;
  constexpr int lanes = backends::is_cuda_space_v<ExecSpace> ? 32 : 1;
  using Functor = detail::SecularRoots<lanes, R, ExecSpace>;
  const auto failures = detail::failure_counter(space);
  const index_t teams = (k + Functor::roots_per_team - 1) / Functor::roots_per_team;
  Kokkos::parallel_for("keig::secular::roots", Kokkos::TeamPolicy<ExecSpace>(space, teams, Functor::team_size),
                       Functor{k, d.data(), z.data(), rho, std::numeric_limits<R>::epsilon() / 2, origin.data(),
                               tau.data(), lambda.data(), failures.data()});
  auto failed = host_mirror_for_copy(failures);
  Kokkos::deep_copy(space, failed, failures);
  space.fence();
  if (failed() > 0) throw ConvergenceFailure("secular_roots (roots left unconverged)", failed());
}

// Independent secular equations solved in one launch (stedc's merges of one
// level): position p in [0, positions) belongs to problem b = problem_of(p)
// (-1: none), whose count(b) poles and z entries sit at positions first(b)
// .. first(b) + count(b) - 1 of d and z, with rho(b); the root of position
// p = first(b) + j is root j of problem b, written at position p of origin
// (an index relative to first(b)), tau and lambda. Problems with fewer than
// min_count poles are skipped. Each root runs the same steps as
// secular_roots on its problem alone. Asynchronous on the space except for
// the convergence check, which fences.
template <class R, class ExecSpace>
void secular_roots_batched(const ExecSpace& space, index_t positions, const Vector<index_t, ExecSpace>& problem_of,
                           const Vector<index_t, ExecSpace>& first, const Vector<index_t, ExecSpace>& count,
                           const Vector<R, ExecSpace>& rho, index_t min_count, const Vector<R, ExecSpace>& d,
                           const Vector<R, ExecSpace>& z, const Vector<index_t, ExecSpace>& origin,
                           const Vector<R, ExecSpace>& tau, const Vector<R, ExecSpace>& lambda,
                           const Vector<index_t, ExecSpace>& counter = {}) {
  if (positions < 0) throw InvalidArgument("positions", "must be non-negative, is " + std::to_string(positions));
  const auto short_view = [&](const auto& v) { return static_cast<index_t>(v.extent(0)) < positions; };
  if (short_view(problem_of) || short_view(d) || short_view(z) || short_view(origin) || short_view(tau) ||
      short_view(lambda))
    throw InvalidArgument("problem_of/d/z/origin/tau/lambda",
                          "need " + std::to_string(positions) + " positions each");
  if (positions == 0) return;
  constexpr int lanes = backends::is_cuda_space_v<ExecSpace> ? 32 : 1;
  using Functor = detail::SecularRoots<lanes, R, ExecSpace>;
  // The failure count: the caller's one entry (counter), zeroed here, or
  // one of its own (an allocation: views/arena.hpp says what that costs).
  Kokkos::View<index_t, memory_space_of<ExecSpace>> owned;
  if (counter.extent(0) == 0) owned = detail::failure_counter(space);
  const Kokkos::View<index_t, memory_space_of<ExecSpace>, Kokkos::MemoryTraits<Kokkos::Unmanaged>> failures(
      counter.extent(0) > 0 ? counter.data() : owned.data());
  if (counter.extent(0) > 0) Kokkos::deep_copy(space, failures, index_t(0));
  Functor functor{positions, d.data(), z.data(), R(1), std::numeric_limits<R>::epsilon() / 2, origin.data(),
                  tau.data(), lambda.data(), failures.data()};
  functor.problem_of = problem_of.data();
  functor.first = first.data();
  functor.count = count.data();
  functor.rhos = rho.data();
  functor.min_count = min_count;
  const index_t teams = (positions + Functor::roots_per_team - 1) / Functor::roots_per_team;
  Kokkos::parallel_for("keig::secular::roots_batched", Kokkos::TeamPolicy<ExecSpace>(space, teams, Functor::team_size),
                       functor);
  auto failed = host_mirror_for_copy(failures);
  Kokkos::deep_copy(space, failed, failures);
  space.fence();
  if (failed() > 0) throw ConvergenceFailure("secular_roots (roots left unconverged)", failed());
}

}  // namespace keig::stages
