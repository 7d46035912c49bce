// stages/tridiagonal_inverse_iteration: eigenvectors of the real symmetric
// tridiagonal (d, e) for m given eigenvalues (from tridiagonal_bisection),
// in parallel over the vectors, on any execution space: the subset-of-vectors
// job without the host's stebz + stein.
//
// Each vector follows LAPACK dstein's iteration: T - w_j I = P L U with
// partial pivoting (dlagtf), then up to 5 solves U x = L^-1 P b (dlagts with
// tiny pivots perturbed) from a pseudo-random start, the right-hand side
// scaled each time, until the iterate's max norm passed sqrt(0.1 / n) and two
// more solves ran (a vector that never passes is a ConvergenceFailure, as
// dstein's info); finally unit 2-norm, largest entry positive. dstein
// re-orthogonalizes each iterate against the earlier vectors of its cluster
// (modified Gram-Schmidt, sequential over the vectors); here the iterations
// are independent and the block Y = [y_1 .. y_m] is orthonormalized once
// afterwards by Householder QR (Y = Q R, Y := Q with the signs of R's
// diagonal): each y_j then changes only within the span of y_1 .. y_j, i.e.
// by its overlaps with neighbours of close eigenvalues, which are of the size
// dstein removes (eps ||T|| / gap).
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <limits>

#include "keig/backends/lapack.hpp"
#include "keig/errors.hpp"
#include "keig/stages/ormtr.hpp"
#include "keig/views/compat.hpp"
#include "keig/views/matrix.hpp"

namespace keig::stages {

namespace detail {

// Vectors iterated at once (bounds the workspace to about 6 n batch).
inline constexpr index_t inverse_iteration_batch = 1024;

// One thread per vector of a batch; per-vector storage at [row * stride +
// vector], so that the threads of a batch touch consecutive addresses.
template <class R, class ExecSpace>
struct InverseIterationBatch {
  using value_type = index_t;  // parallel_reduce: vectors that failed dstein's test
  Vector<R, ExecSpace> d, e, w;  // T and the wanted eigenvalues
  R* a;    // U's diagonal (dlagtf's a)
  R* b;    // U's first superdiagonal
  R* c;    // L's multipliers
  R* s;    // U's second superdiagonal (dlagtf's d)
  R* y;    // the iterate
  int* pivot;
  index_t n, first, stride;
  R norm1;         // ||T||_1
  R eps, sfmin;    // numeric_limits' epsilon and min, from the host

  KOKKOS_INLINE_FUNCTION static R absolute(R x) { return x < R(0) ? -x : x; }
  // m := max(m, |v|).
  KOKKOS_INLINE_FUNCTION static void raise_to_abs(R& m, R v) { m = m > absolute(v) ? m : absolute(v); }

  // failed counts the vectors whose iterate never reached dstein's norm test.
  // Every recurrence keeps the entries it just formed in registers (a(k + 1)
  // and b(k + 1) in the factorization, y(k - 1) forward, y(k + 1), y(k + 2)
  // backward) and the loads of a pass do not depend on them, so a thread's
  // loads stream instead of waiting, entry by entry, for its own stores to
  // come back from L2, the threads being few (one per wanted vector). The
  // scaling and the max norms ride in the passes of the solves. H200, the
  // 1 % smallest pairs of the IC-NMA-like pairs, the whole tridiagonal step
  // (bisection, this, the QR): n = 20694 / 30504, 206 / 305 vectors: 0.222 /
  // 0.341 -> 0.137 / 0.194 s.
  KOKKOS_INLINE_FUNCTION void operator()(const index_t j, index_t& failed) const {
    const R lambda = w(first + j);
    const R bignum = R(1) / sfmin;
    if (n == 1) {  // dstein's 1 x 1 block
      y[j] = R(1);
      return;
    }
    R* KOKKOS_RESTRICT const aj = a + j;
    R* KOKKOS_RESTRICT const bj = b + j;
    R* KOKKOS_RESTRICT const cj = c + j;
    R* KOKKOS_RESTRICT const sj = s + j;
    R* KOKKOS_RESTRICT const yj = y + j;
    int* KOKKOS_RESTRICT const pj = pivot + j;
    const index_t st = stride;
    // dlagtf: P L U of T - lambda I; ak, bk: a(k) and b(k) as the steps
    // before k left them. dlagts's tolerance (the largest |a|, |b|, |s|)
    // on the way.
    R ak = d(0) - lambda, bk = e(0);
    R scale1 = absolute(ak) + absolute(e(0));
    R tol = 0;
    for (index_t k = 0; k + 1 < n; ++k) {
      R ak1 = d(k + 1) - lambda;                   // a(k + 1)
      R bk1 = k + 2 < n ? e(k + 1) : R(0);         // b(k + 1)
      const R ck = e(k);
      R scale2 = absolute(ck) + absolute(ak1);
      if (k + 2 < n) scale2 += absolute(e(k + 1));
      const R piv1 = ak == R(0) ? R(0) : absolute(ak) / scale1;
      R sk = R(0), c_out = ck;
      int pk = 0;
      if (ck == R(0)) {
        scale1 = scale2;
      } else {
        const R piv2 = absolute(ck) / scale2;
        if (piv2 <= piv1) {
          scale1 = scale2;
          c_out = ck / ak;
          ak1 -= c_out * bk;
        } else {
          pk = 1;
          const R mult = ak / ck;
          ak = ck;
          const R temp = ak1;
          ak1 = bk - mult * temp;
          if (k + 2 < n) {
            sk = e(k + 1);  // the original b(k+1)
            bk1 = -mult * sk;
          }
          bk = temp;
          c_out = mult;
        }
      }
      aj[k * st] = ak;
      bj[k * st] = bk;
      cj[k * st] = c_out;
      sj[k * st] = sk;
      pj[k * st] = pk;
      raise_to_abs(tol, ak);
      raise_to_abs(tol, bk);
      raise_to_abs(tol, sk);
      ak = ak1;
      bk = bk1;
    }
    aj[(n - 1) * st] = ak;
    raise_to_abs(tol, ak);
    tol *= eps;
    if (tol == R(0)) tol = eps;
    // Start: pseudo-random entries in (-1, 1) (a hash of vector and row).
    R ymax = 0;
    for (index_t i = 0; i < n; ++i) {
      std::uint64_t h = (std::uint64_t(first + j) + 1) * 0x9E3779B97F4A7C15ull ^ (std::uint64_t(i) + 1) * 0xBF58476D1CE4E5B9ull;
      h ^= h >> 31;
      h *= 0x94D049BB133111EBull;
      h ^= h >> 29;
      const R v = R(double(h >> 11) * (2.0 / 9007199254740992.0) - 1.0);
      yj[i * st] = v;
      raise_to_abs(ymax, v);
    }
    const R criterion = compat::sqrt(R(0.1) / R(n));
    const R last_a = absolute(ak);
    int extra = 0;      // solves after the norm test first passed
    index_t at_big = 0;  // the first entry of largest magnitude after the last solve
    for (int its = 0; its < 5; ++its) {
      // Scale the right-hand side as dstein does (ymax: max |y| of this
      // right-hand side). (||T|| = 0: any vector is an eigenvector; scale
      // by 1 instead of 0.)
      const R scl = R(n) * (norm1 > R(0) ? norm1 : R(1)) * (eps > last_a ? eps : last_a) / (ymax > R(0) ? ymax : R(1));
      // L^-1 P on the scaled right-hand side; prev: y(k - 1) as it stands.
      R prev = yj[0] * scl;
      for (index_t k = 1; k < n; ++k) {
        const R cur = yj[k * st] * scl, ck = cj[(k - 1) * st];
        if (pj[(k - 1) * st] == 0) {
          yj[(k - 1) * st] = prev;
          prev = cur - ck * prev;
        } else {
          yj[(k - 1) * st] = cur;
          prev = prev - ck * cur;
        }
      }
      // U^-1 with tiny pivots perturbed (dlagts, job = -1); y1, y2: the
      // solved y(k + 1), y(k + 2); ymax, at_big: the result's max norm.
      R y1 = 0, y2 = 0;
      ymax = 0;
      for (index_t k = n - 1; k >= 0; --k) {
        R temp = k == n - 1 ? prev : yj[k * st];
        if (k + 1 < n) temp -= bj[k * st] * y1;
        if (k + 2 < n) temp -= sj[k * st] * y2;
        R ukk = aj[k * st];
        R pert = ukk < R(0) ? -tol : tol;
        for (int guard = 0; guard < 2100; ++guard) {
          const R absak = absolute(ukk);
          if (absak < R(1)) {
            if (absak < sfmin) {
              if (absak == R(0) || absolute(temp) * sfmin > absak) {
                ukk += pert;
                pert *= 2;
                continue;
              }
              temp *= bignum;
              ukk *= bignum;
            } else if (absolute(temp) > absak * bignum) {
              ukk += pert;
              pert *= 2;
              continue;
            }
          }
          break;
        }
        const R v = temp / ukk;
        yj[k * st] = v;
        if (absolute(v) >= ymax) {  // >=: the first such entry, walking backward
          ymax = absolute(v);
          at_big = k;
        }
        y2 = y1;
        y1 = v;
      }
      if (ymax >= criterion && ++extra >= 3) break;
    }
    if (extra == 0) ++failed;
    // Unit 2-norm, largest entry positive.
    const R inv_big = ymax > R(0) ? R(1) / ymax : R(1);
    R sum = 0;
    for (index_t i = 0; i < n; ++i) {
      const R v = yj[i * st] * inv_big;
      sum += v * v;
    }
    const R scale = (yj[at_big * st] < R(0) ? -inv_big : inv_big) / compat::sqrt(sum);
    for (index_t i = 0; i < n; ++i) yj[i * st] *= scale;
  }
};

}  // namespace detail

// Workspace of tridiagonal_inverse_iteration (elements of R): five n x batch
// arrays, the pivots (as many R), and the Householder QR of the m vectors
// (tau, and the reflector application of ormtr_workspace_size).
template <class R, class ExecSpace>
index_t tridiagonal_inverse_iteration_workspace_size(index_t n, index_t m) {
  const index_t batch = m < detail::inverse_iteration_batch ? m : detail::inverse_iteration_batch;
  return 6 * n * (batch > 0 ? batch : 1) + m + ormtr_workspace_size<R, ExecSpace>(n, m, ormtr_block_default) + n * m;
}

// z(:, 0..m-1) := orthonormal eigenvectors of the tridiagonal (d: n, e: n-1)
// for the eigenvalues w(0..m-1) (ascending, each accurate to about
// eps ||T||, e.g. from tridiagonal_bisection). Asynchronous on ctx.space().
template <class R, class ExecSpace>
void tridiagonal_inverse_iteration(const backends::Context<ExecSpace>& ctx, const Vector<R, ExecSpace>& d,
                                   const Vector<R, ExecSpace>& e, const Vector<R, ExecSpace>& w, index_t m,
                                   const Matrix<R, ExecSpace>& z, const Vector<R, ExecSpace>& work) {
  const ExecSpace& space = ctx.space();
  const index_t n = d.extent(0);
  if (static_cast<index_t>(e.extent(0)) < (n > 0 ? n - 1 : 0))
    throw InvalidArgument("e", "tridiagonal_inverse_iteration: needs n - 1 entries");
  if (m < 0 || m > n || static_cast<index_t>(w.extent(0)) < m)
    throw InvalidArgument("w", "tridiagonal_inverse_iteration: needs 0 <= m <= n eigenvalues");
  if (static_cast<index_t>(z.extent(0)) != n || static_cast<index_t>(z.extent(1)) < m)
    throw InvalidArgument("Z", "tridiagonal_inverse_iteration: Z must be n x (at least m)");
  if (static_cast<index_t>(work.extent(0)) < tridiagonal_inverse_iteration_workspace_size<R, ExecSpace>(n, m))
    throw InvalidArgument("work", "tridiagonal_inverse_iteration: needs tridiagonal_inverse_iteration_workspace_size(n, m)");
  if (m == 0 || n == 0) return;
  using Policy = Kokkos::RangePolicy<ExecSpace>;
  using Policy2 = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2, Kokkos::Iterate::Left, Kokkos::Iterate::Left>>;
  // ||T||_1 (dstein's onenrm).
  R norm1 = 0;
  Kokkos::parallel_reduce(
      "keig::inverse_iteration::norm", Policy(space, 0, n),
      KOKKOS_LAMBDA(const index_t i, R& acc) {
        R v = d(i) < R(0) ? -d(i) : d(i);
        if (i > 0) v += e(i - 1) < R(0) ? -e(i - 1) : e(i - 1);
        if (i + 1 < n) v += e(i) < R(0) ? -e(i) : e(i);
        if (v > acc) acc = v;
      },
      Kokkos::Max<R>(norm1));
  const index_t batch = m < detail::inverse_iteration_batch ? m : detail::inverse_iteration_batch;
  R* p = work.data();
  detail::InverseIterationBatch<R, ExecSpace> it{d, e, w, p, p + n * batch, p + 2 * n * batch, p + 3 * n * batch,
                                                 p + 4 * n * batch, reinterpret_cast<int*>(p + 5 * n * batch),
                                                 n, 0, batch, norm1, std::numeric_limits<R>::epsilon(),
                                                 std::numeric_limits<R>::min()};
  const Matrix<R, ExecSpace> y_all(p + 6 * n * batch + m + ormtr_workspace_size<R, ExecSpace>(n, m, ormtr_block_default),
                                   n, m);
  for (index_t first = 0; first < m; first += batch) {
    const index_t count = m - first < batch ? m - first : batch;
    it.first = first;
    index_t failed = 0;  // (the one wait per batch)
    Kokkos::parallel_reduce("keig::inverse_iteration::vectors", Policy(space, 0, count), it, failed);
    if (failed > 0) throw ConvergenceFailure("keig inverse iteration (dstein's test)", failed);
    R* const y = it.y;
    const index_t stride = batch;
    Kokkos::parallel_for(
        "keig::inverse_iteration::gather", Policy2(space, {0, 0}, {n, count}),
        KOKKOS_LAMBDA(const index_t i, const index_t j) { y_all(i, first + j) = y[i * stride + j]; });
  }
  // Y = Q R (Householder); Z := Q(:, 0..m-1) with the signs of R's diagonal.
  const Vector<R, ExecSpace> tau(p + 6 * n * batch, m);
  const Vector<R, ExecSpace> apply_work(p + 6 * n * batch + m, ormtr_workspace_size<R, ExecSpace>(n, m, ormtr_block_default));
  const Matrix<R, ExecSpace> zm = Kokkos::subview(z, Kokkos::ALL(), std::make_pair(index_t(0), m));
  backends::geqrf<R>(ctx, y_all, tau);
  Kokkos::parallel_for(
      "keig::inverse_iteration::identity", Policy2(space, {0, 0}, {n, m}),
      KOKKOS_LAMBDA(const index_t i, const index_t j) {
        zm(i, j) = i == j ? (y_all(j, j) < R(0) ? R(-1) : R(1)) : R(0);
      });
  apply_column_reflectors<R, ExecSpace>(ctx, y_all, 0, m, tau, zm, apply_work, ormtr_block_default);
}

}  // namespace keig::stages
