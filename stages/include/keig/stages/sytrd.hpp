// stages/sytrd: blocked Householder reduction of a Hermitian matrix to real
// symmetric tridiagonal form, Q^H A Q = T (LAPACK ?sytrd/?hetrd with ?latrd
// panels, lower triangle; seed 002 §4.2.1, seed 001 §6).
//
// For each panel of nb columns, latrd builds the reflectors v_j and the
// matrix W column by column; every column costs one Hermitian matrix-vector
// product with the not-yet-updated trailing matrix (keig's symv: the
// memory-bound heart of one-stage reduction), and the trailing matrix is then
// updated once per panel, A22 -= V W^H + W V^H (vendor her2k/syr2k: BLAS-3).
// All scalars of a column (norms, tau, dot products) stay in device memory:
// the host never waits inside the reduction.
//
// On return: d (n) and e (n-1) hold the tridiagonal, tau (n-1) and the
// columns of A below the diagonal hold the reflectors LAPACK-style,
// H(k) = I - tau_k v_k v_k^H with v_k = A(k+1:n, k) (A(k+1, k) = 1 stored
// explicitly). An upper-stored A is first mirrored into the lower triangle
// (A is workspace; O(n^2) copy, no extra memory).
#pragma once

#include <Kokkos_Core.hpp>

#include "keig/backends/blas.hpp"
#include "keig/stages/symv.hpp"
#include "keig/views/workspace.hpp"

namespace keig::stages {

// Panel width: on GPUs 64 (H200, one-stage values: sytrd 2.89 s against
// 2.96 s with 32 at n = 16384, 0.648 / 0.643 s at 8192: half the trailing
// updates for wider column steps).
template <class ExecSpace>
struct SytrdTuning {
  static constexpr index_t default_nb = backends::is_cuda_space_v<ExecSpace> ? 64 : 32;
  // GPUs: the trailing update runs as one gemm per block column of this
  // many columns of the lower triangle (see sytrd's step 6).
  static constexpr index_t update_block = 1024;
};

// Workspace of sytrd for order n and panel width nb (elements of T); GPUs
// add n x 3 nb for the trailing update's [V W V].
template <class T, class ExecSpace>
index_t sytrd_workspace_size(index_t n, index_t nb) {
  const index_t update = backends::is_cuda_space_v<ExecSpace> ? 3 * n * nb : 0;
  return n * nb + symv_workspace_size<T, ExecSpace>(n) + 2 * nb + 8 + update;
}

namespace detail {

// A(i, j) = conj(A(j, i)) for i > j: the upper triangle copied to the lower.
template <class T, class ExecSpace>
void mirror_upper_to_lower(const ExecSpace& space, const Matrix<T, ExecSpace>& a) {
  const index_t n = a.extent(0);
  if (n < 2) return;
  using Policy = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2, Kokkos::Iterate::Left, Kokkos::Iterate::Left>>;
  Kokkos::parallel_for(
      "keig::sytrd::mirror", Policy(space, {0, 0}, {n, n}), KOKKOS_LAMBDA(const index_t i, const index_t j) {
        if (i > j) a(i, j) = conjugate(a(j, i));
      });
}

// Both triangles from the `uplo` one (real diagonal): a full Hermitian matrix.
template <class T, class ExecSpace>
void mirror_full_hermitian(const ExecSpace& space, const Matrix<T, ExecSpace>& a, Uplo uplo) {
  const index_t n = a.extent(0);
  if (n == 0) return;
  const bool lower = uplo == Uplo::Lower;
  using Policy = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2, Kokkos::Iterate::Left, Kokkos::Iterate::Left>>;
  Kokkos::parallel_for(
      "keig::mirror_full", Policy(space, {0, 0}, {n, n}), KOKKOS_LAMBDA(const index_t i, const index_t j) {
        if (i == j) a(i, i) = T(real_part(a(i, i)));
        else if (lower ? i < j : i > j) a(i, j) = conjugate(a(j, i));
      });
}

// Small O(n) loops of a column step: on host spaces they run inline on the
// calling thread (a fork/join per column step costs more than the loop);
// on devices they are kernels on the instance, keeping scalars on the device.
template <class ExecSpace>
inline constexpr bool runs_inline_v = !backends::is_cuda_space_v<ExecSpace>;

template <class ExecSpace, class F>
void small_for(const char* label, const ExecSpace& space, index_t begin, index_t end, const F& f) {
  if constexpr (runs_inline_v<ExecSpace>) {
    for (index_t i = begin; i < end; ++i) f(i);
  } else {
    Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecSpace>(space, begin, end), f);
  }
}

// LAPACK ?larfg's scalars from alpha and ||x||^2 (computed redundantly by
// every thread that needs them): H = I - tau v v^H, H^H (alpha, x) = (beta, 0),
// v = (1, x / (alpha - beta)). No rescaling for norms below underflow.
template <class T>
KOKKOS_INLINE_FUNCTION void householder(const T alpha, const real_t<T> xn2, T& tau, T& scale, real_t<T>& beta) {
  using R = real_t<T>;
  const R ar = real_part(alpha);
  R ai = R(0);
  if constexpr (is_complex_v<T>) ai = alpha.imag();
  if (xn2 == R(0) && ai == R(0)) {
    tau = T(0);
    scale = T(0);
    beta = ar;
  } else {
    const R norm = compat::sqrt(ar * ar + ai * ai + xn2);
    beta = ar >= R(0) ? -norm : norm;
    if constexpr (is_complex_v<T>) tau = T((beta - ar) / beta, -ai / beta);
    else tau = (beta - ar) / beta;
    scale = T(1) / (alpha - T(beta));
  }
}

// Row sums of a term over a short index range, for the latrd column steps
// on devices: for r in [0, rows), sum(r) = sum_{k < count} term(r, k), with
// k split over 8 slices of a team of 32 rows (a vector lane per row, so every
// load is coalesced) and the slices combined in team scratch; finish(r,
// sum) returns r's share of the reduction into `result` (a device scalar).
// The first team also zeroes zeros[0, zero_count) (at most 256 entries).
// One thread per row looping over all k left a few warps per
// multiprocessor waiting on their loads (12 us a column at m = 4200).
template <class T, class Acc, class ExecSpace, class Term, class Finish, class Result>
void sliced_row_sums(const char* label, const ExecSpace& space, index_t rows, index_t count, const Term& term,
                     const Finish& finish, const Result& result, T* zeros = nullptr, index_t zero_count = 0) {
  constexpr int slices = 8, lanes = 32;
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  const index_t league = rows > 0 ? (rows + lanes - 1) / lanes : 1;
  const size_t bytes = slices * lanes * sizeof(T);
  Kokkos::parallel_reduce(
      label, Policy(space, league, slices, lanes).set_scratch_size(0, Kokkos::PerTeam(bytes)),
      KOKKOS_LAMBDA(const typename Policy::member_type& team, Acc& acc) {
        T* const part = static_cast<T*>(team.team_shmem().get_shmem(bytes));
        const index_t base = team.league_rank() * lanes;
        const int slice = team.team_rank();
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, lanes), [&](const int l) {
          if (team.league_rank() == 0)
            for (index_t q = slice * lanes + l; q < zero_count; q += slices * lanes) zeros[q] = T(0);
          const index_t r = base + l;
          T sum = T(0);
          if (r < rows)
            for (index_t k = slice; k < count; k += slices) sum += term(r, k);
          part[slice * lanes + l] = sum;
        });
        team.team_barrier();
        if (slice == 0) {
          Acc local = Acc(0);
          Kokkos::parallel_reduce(
              Kokkos::ThreadVectorRange(team, lanes),
              [&](const int l, Acc& a) {
                const index_t r = base + l;
                if (r >= rows) return;
                T sum = T(0);
                for (int q = 0; q < slices; ++q) sum += part[q * lanes + l];
                a += finish(r, sum);
              },
              local);
          Kokkos::single(Kokkos::PerThread(team), [&]() { acc += local; });
        }
      },
      result);
}

// Term k of column j's update from the panel's earlier reflectors (latrd):
// P(r, j) -= sum_{k < j} P(r, k) W(j, k)^H + W(r, k) P(j, k)^H.
template <class View>
KOKKOS_INLINE_FUNCTION typename View::non_const_value_type column_update_term(const View& P, const View& W, index_t r,
                                                                              index_t j, index_t k) {
  return P(r, k) * conjugate(W(j, k)) + W(r, k) * conjugate(P(j, k));
}

// Address of m(row, col) (no access: valid for device views on the host).
template <class View>
typename View::pointer_type element_pointer(const View& m, index_t row, index_t col) {
  return m.data() + row + col * leading_dimension(m);
}

}  // namespace detail

// Reduces A (n x n, `uplo` triangle referenced) to tridiagonal form. d: n
// entries, e and tau: n - 1 (at least); work: sytrd_workspace_size(n, nb).
// nb <= 0 selects the default. Asynchronous on ctx.space().
template <class T, class ExecSpace>
void sytrd(const backends::Context<ExecSpace>& ctx, Uplo uplo, const Matrix<T, ExecSpace>& a,
           const Vector<real_t<T>, ExecSpace>& d, const Vector<real_t<T>, ExecSpace>& e,
           const Vector<T, ExecSpace>& tau, const Vector<T, ExecSpace>& work, index_t nb = 0) {
  using R = real_t<T>;
  using Mem = memory_space_of<ExecSpace>;
  using Scalar = Kokkos::View<T, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using Range = Kokkos::RangePolicy<ExecSpace>;
  const ExecSpace& space = ctx.space();
  const index_t n = a.extent(0);
  if (nb <= 0) nb = SytrdTuning<ExecSpace>::default_nb;
  if (static_cast<index_t>(a.extent(1)) != n) throw InvalidArgument("A", "sytrd: A must be square");
  if (static_cast<index_t>(d.extent(0)) < n) throw InvalidArgument("d", "sytrd: needs n entries");
  if (static_cast<index_t>(e.extent(0)) < n - 1 || static_cast<index_t>(tau.extent(0)) < n - 1)
    throw InvalidArgument("e", "sytrd: e and tau need n - 1 entries");
  if (static_cast<index_t>(work.extent(0)) < sytrd_workspace_size<T, ExecSpace>(n, nb))
    throw InvalidArgument("work", "sytrd: needs sytrd_workspace_size(n, nb) entries");
  if (n == 0) return;
  if (uplo == Uplo::Upper) detail::mirror_upper_to_lower(space, a);

  // Carve the workspace: W (n x nb), symv partials, t1/t2 (nb each), scalars.
  T* p = work.data();
  const Matrix<T, ExecSpace> w_all(p, n, nb);
  p += n * nb;
  const Vector<T, ExecSpace> symv_work(p, symv_workspace_size<T, ExecSpace>(n));
  p += symv_workspace_size<T, ExecSpace>(n);
  const Vector<T, ExecSpace> t1(p, nb), t2(p + nb, nb);
  p += 2 * nb;
  // Device-resident scalars of one latrd column (the host never reads them).
  const Scalar tau_j(p);    // tau of the current reflector
  const Scalar dot(p + 1);  // (tau w)^H v
  const Scalar alpha_j(p + 2);  // the updated P(j + 1, j), read by the device reflector kernel
  const Kokkos::View<R, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>> xn2_j(reinterpret_cast<R*>(p + 3));  // ||P(j+2:m, j)||^2
  T* const t12 = t1.data();  // t1 and t2, adjacent
  p += 8;
  const Matrix<T, ExecSpace> vwv_all(p, n, backends::is_cuda_space_v<ExecSpace> ? 3 * nb : 0);  // GPUs: [V W V]

  for (index_t i = 0; i + 1 < n; i += nb) {
    const index_t jb = nb < n - 1 - i ? nb : n - 1 - i;  // columns of this panel
    const index_t m = n - i;                             // rows of the panel's trailing matrix
    const Matrix<T, ExecSpace> P = Kokkos::subview(a, std::make_pair(i, n), std::make_pair(i, n));
    const Matrix<T, ExecSpace> W = Kokkos::subview(w_all, std::make_pair(index_t(0), m), std::make_pair(index_t(0), jb));

    for (index_t j = 0; j < jb; ++j) {
      // 1. Bring column j up to date with the panel's earlier reflectors:
      //    P(j:m, j) -= V(j:m, 0:j) W(j, 0:j)^H + W(j:m, 0:j) V(j, 0:j)^H.
      // 2. Householder reflector annihilating P(j+2:m, j) (LAPACK ?larfg,
      //    without its rescaling loop for norms below the underflow threshold).
      const index_t x0 = j + 2 < m ? j + 2 : m;
      const index_t c = i + j;
      if constexpr (detail::runs_inline_v<ExecSpace>) {
        if (j > 0)
          for (index_t r = j; r < m; ++r) {
            T sum = T(0);
            for (index_t k = 0; k < j; ++k) sum += detail::column_update_term(P, W, r, j, k);
            const T updated = P(r, j) - sum;
            P(r, j) = r == j ? T(real_part(updated)) : updated;
          }
        R xn2 = 0;
        for (index_t r = x0; r < m; ++r) xn2 += abs_squared(P(r, j));
        T t_out, s_out;
        R b_out;
        detail::householder(P(j + 1, j), xn2, t_out, s_out, b_out);
        tau_j() = t_out;
        tau(c) = t_out;
        e(c) = b_out;
        P(j + 1, j) = T(1);
        for (index_t r = x0; r < m; ++r) P(r, j) *= s_out;
      } else {
        // One pass over the column: the update, the norm (into xn2_j on the
        // device), alpha, and zeros for t1 and t2 (step 4 accumulates into
        // them). (A single team did the norm and the scaling before: 24 us
        // a column at m = 16000.)
        detail::sliced_row_sums<T, R>(
            "keig::sytrd::column_norm", space, m - j, j,
            KOKKOS_LAMBDA(const index_t q, const index_t k) { return detail::column_update_term(P, W, j + q, j, k); },
            KOKKOS_LAMBDA(const index_t q, const T& sum) {
              const index_t r = j + q;
              T x = P(r, j);
              if (j > 0) {
                x -= sum;
                if (r == j) x = T(real_part(x));
                P(r, j) = x;
              }
              if (r == j + 1) alpha_j() = x;
              return r >= x0 ? abs_squared(x) : R(0);
            },
            xn2_j, t12, 2 * nb);
        // tau, beta and the scaling, recomputed by every thread from alpha_j
        // and xn2_j (P(j + 1, j) itself is overwritten with 1 here).
        Kokkos::parallel_for(
            "keig::sytrd::reflector", Range(space, j + 1, m), KOKKOS_LAMBDA(const index_t r) {
              T t_out, s_out;
              R b_out;
              detail::householder(alpha_j(), xn2_j(), t_out, s_out, b_out);
              if (r == j + 1) {
                tau_j() = t_out;
                tau(c) = t_out;
                e(c) = b_out;
                P(j + 1, j) = T(1);
              } else {
                P(r, j) *= s_out;
              }
            });
      }
      // 3. w = A22 v with the panel-start trailing matrix (keig symv).
      const Matrix<T, ExecSpace> A22 = Kokkos::subview(P, std::make_pair(j + 1, m), std::make_pair(j + 1, m));
      const Vector<T, ExecSpace> v(detail::element_pointer(P, j + 1, j), m - j - 1);
      const Vector<T, ExecSpace> w(detail::element_pointer(W, j + 1, j), m - j - 1);
      symv<T, ExecSpace>(space, Uplo::Lower, T(1), A22, v, T(0), w, symv_work);
      // 4. w -= V (W^H v) + W (V^H v) over the panel's earlier columns, then
      // 5. w *= tau and dot = w^H v (LAPACK: w *= tau; w += -1/2 tau (w^H v) v).
      const Matrix<T, ExecSpace> Vp = Kokkos::subview(P, std::make_pair(j + 1, m), std::make_pair(index_t(0), j));
      const Matrix<T, ExecSpace> Wp = Kokkos::subview(W, std::make_pair(j + 1, m), std::make_pair(index_t(0), j));
      const Vector<T, ExecSpace> t1j = Kokkos::subview(t1, std::make_pair(index_t(0), j));
      const Vector<T, ExecSpace> t2j = Kokkos::subview(t2, std::make_pair(index_t(0), j));
      if constexpr (detail::runs_inline_v<ExecSpace>) {
        if (j > 0) {  // host: threaded vendor gemv
          backends::gemv<T>(ctx, backends::Op::ConjTrans, T(1), Wp, v, T(0), t1j);
          backends::gemv<T>(ctx, backends::Op::ConjTrans, T(1), Vp, v, T(0), t2j);
          backends::gemv<T>(ctx, backends::Op::NoTrans, T(-1), Vp, t1j, T(1), w);
          backends::gemv<T>(ctx, backends::Op::NoTrans, T(-1), Wp, t2j, T(1), w);
        }
        T acc = T(0);
        const T tj = tau_j();
        for (index_t r = 0; r < m - j - 1; ++r) {
          w(r) = tj * w(r);
          acc += conjugate(w(r)) * v(r);
        }
        dot() = acc;
      } else {
        if (j > 0) {
          // t1 = W^H v, t2 = V^H v: a team per 256 rows and 8 of the 2 j
          // columns, a warp per column, one atomic add per warp into the
          // zeros of step 1 (one team per column took 60 us at m = 16000;
          // all columns per team of 512 rows, 25 us at m = 4200).
          constexpr index_t chunk = 256, per_team = 8;
          const index_t rows = Vp.extent(0), chunks = (rows + chunk - 1) / chunk;
          const index_t groups = (2 * j + per_team - 1) / per_team;
          using TeamPolicy = Kokkos::TeamPolicy<ExecSpace>;
          Kokkos::parallel_for(
              "keig::sytrd::corrections", TeamPolicy(space, chunks * groups, per_team, 32),
              KOKKOS_LAMBDA(const typename TeamPolicy::member_type& team) {
                const index_t r0 = (team.league_rank() / groups) * chunk, r1 = r0 + chunk < rows ? r0 + chunk : rows;
                const index_t col = (team.league_rank() % groups) * per_team + team.team_rank();
                if (col >= 2 * j) return;
                const index_t k = col < j ? col : col - j;
                const Matrix<T, ExecSpace>& src = col < j ? Wp : Vp;
                T s = T(0);
                Kokkos::parallel_reduce(
                    Kokkos::ThreadVectorRange(team, r0, r1),
                    [&](const index_t r, T& acc) { acc += conjugate(src(r, k)) * v(r); }, s);
                Kokkos::single(Kokkos::PerThread(team), [&]() { atomic_accumulate(col < j ? &t1j(k) : &t2j(k), s); });
              });
        }
        // w = tau (w - V t1 - W t2), dot = w^H v: one fused pass.
        detail::sliced_row_sums<T, T>(
            "keig::sytrd::correct_scale_dot", space, m - j - 1, j,
            KOKKOS_LAMBDA(const index_t r, const index_t k) { return Vp(r, k) * t1j(k) + Wp(r, k) * t2j(k); },
            KOKKOS_LAMBDA(const index_t r, const T& sum) {
              const T scaled = tau_j() * (w(r) - sum);
              w(r) = scaled;
              return conjugate(scaled) * v(r);
            },
            dot);
      }
      detail::small_for(
          "keig::sytrd::axpy", space, 0, m - j - 1, KOKKOS_LAMBDA(const index_t r) {
            const T alpha = R(-0.5) * tau_j() * dot();
            w(r) += alpha * v(r);
          });
    }
    // 6. Trailing update A(i+jb:n, i+jb:n) -= V W^H + W V^H (BLAS-3).
    if (jb < m) {
      const Matrix<T, ExecSpace> V2 = Kokkos::subview(P, std::make_pair(jb, m), std::make_pair(index_t(0), jb));
      const Matrix<T, ExecSpace> W2 = Kokkos::subview(W, std::make_pair(jb, m), std::make_pair(index_t(0), jb));
      const Matrix<T, ExecSpace> C = Kokkos::subview(P, std::make_pair(jb, m), std::make_pair(jb, m));
      if constexpr (backends::is_cuda_space_v<ExecSpace>) {
        // C -= [V W] [W V]^H as one gemm per block column of the lower
        // triangle, with [V W] and [W V] the two overlapping windows of one
        // copy [V W V]. With panels of 32 or 64 columns the update is
        // memory-bound, and cuBLAS's syr2k moved the triangle at about a sixth of the bandwidth (3.5 ms
        // at m = 16000 where reading and writing it takes 0.6 ms).
        const index_t m2 = m - jb;
        const Matrix<T, ExecSpace> VWV = block(vwv_all, 0, m2, 0, 3 * jb);
        using Policy2 = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2, Kokkos::Iterate::Left, Kokkos::Iterate::Left>>;
        Kokkos::parallel_for(
            "keig::sytrd::vwv", Policy2(space, {0, 0}, {m2, jb}), KOKKOS_LAMBDA(const index_t r, const index_t k) {
              const T vk = V2(r, k);
              VWV(r, k) = vk;
              VWV(r, jb + k) = W2(r, k);
              VWV(r, 2 * jb + k) = vk;
            });
        const index_t width = SytrdTuning<ExecSpace>::update_block;
        for (index_t c0 = 0; c0 < m2; c0 += width) {
          const index_t c1 = c0 + width < m2 ? c0 + width : m2;
          backends::gemm<T>(ctx, backends::Op::NoTrans, backends::Op::ConjTrans, T(-1), block(VWV, c0, m2, 0, 2 * jb),
                            block(VWV, c0, c1, jb, 3 * jb), T(1), block(C, c0, m2, c0, c1));
        }
      } else {
        backends::syr2k<T>(ctx, Uplo::Lower, backends::Op::NoTrans, T(-1), V2, W2, R(1), C);
      }
    }
  }
  Kokkos::parallel_for(
      "keig::sytrd::diagonal", Range(space, 0, n), KOKKOS_LAMBDA(const index_t r) { d(r) = real_part(a(r, r)); });
}

}  // namespace keig::stages
