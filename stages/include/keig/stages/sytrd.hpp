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
#include "keig/backends/warp.hpp"
#include "keig/stages/symv.hpp"
#include "keig/views/workspace.hpp"

namespace keig::stages {

// Panel width: on GPUs 64 (H200, one-stage values: sytrd 2.89 s against
// 2.96 s with 32 at n = 16384, 0.648 / 0.643 s at 8192: half the trailing
// updates for wider column steps). With the four-launch column step
// (keig-bench --panel): 48 / 64 / 96 / 128 give 2.63 / 2.63 / 2.65 / 2.69 s at
// n = 16384 and 0.507 / 0.511 / 0.524 / 0.538 s at 8192.
template <class ExecSpace>
struct SytrdTuning {
  static constexpr index_t default_nb = backends::is_cuda_space_v<ExecSpace> ? 64 : 32;
  // GPUs: the trailing update runs as one gemm per block column of this
  // many columns of the lower triangle (see sytrd's step 6).
  static constexpr index_t update_block = 1024;
};

namespace detail {
inline constexpr index_t latrd_t_copies = 16;  // see LatrdDeviceState
}  // namespace detail

// Workspace of sytrd for order n and panel width nb (elements of T); GPUs
// add n x 3 nb for the trailing update's [V W V].
template <class T, class ExecSpace>
index_t sytrd_workspace_size(index_t n, index_t nb) {
  const index_t update = backends::is_cuda_space_v<ExecSpace> ? 3 * n * nb : 0;
  return n * nb + symv_workspace_size<T, ExecSpace>(n) + 4 * nb * detail::latrd_t_copies + 8 + update;
}

namespace detail {

// The unstored triangle of a square D from the stored one `from`:
// D(i, j) = conj(D(j, i)) for i < j (from Lower) or i > j (from Upper), and
// with real_diagonal D(i, i) = Re D(i, i). In 32 x 32 tiles through team
// scratch, so that both the reads and the writes run down columns (coalesced
// on GPUs): a two-dimensional range reading D(j, i) took 5.06 ms for
// n = 16384 on an H200, against 54 us for the 4096 x 4096 blocks of this
// kernel (sy2sb's diagonal blocks).
template <class T, class ExecSpace>
void mirror_triangle_tiled(const ExecSpace& space, const Matrix<T, ExecSpace>& d, Uplo from, bool real_diagonal) {
  const index_t w = d.extent(0);
  if (w == 0 || (w == 1 && !real_diagonal)) return;
  constexpr int tile = 32;
  const index_t tiles = (w + tile - 1) / tile;
  const bool lower = from == Uplo::Lower;
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Member = typename Policy::member_type;
  // s(r, c) at r + 33 c: a lane's column reads s(c, lane) hit distinct banks.
  using Tile = Kokkos::View<T[tile + 1][tile], Kokkos::LayoutLeft, typename ExecSpace::scratch_memory_space,
                            Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Policy policy = backends::is_cuda_space_v<ExecSpace> ? Policy(space, tiles * tiles, 256)
                                                        : Policy(space, tiles * tiles, Kokkos::AUTO);
  policy.set_scratch_size(0, Kokkos::PerTeam(Tile::shmem_size()));
  Kokkos::parallel_for(
      "keig::mirror_triangle", policy, KOKKOS_LAMBDA(const Member& team) {
        // Source tile (ti, tj) of the stored triangle, target tile (tj, ti).
        const index_t ti = team.league_rank() % tiles, tj = team.league_rank() / tiles;
        if (lower ? ti < tj : ti > tj) return;  // the whole team leaves: no barrier is skipped by part of it
        const Tile s(team.team_scratch(0));
        const int threads = team.team_size();
        for (int e = team.team_rank(); e < tile * tile; e += threads) {
          const int r = e % tile, c = e / tile;
          const index_t i = ti * tile + r, j = tj * tile + c;
          if (i < w && j < w && (lower ? i >= j : i <= j)) s(r, c) = d(i, j);
        }
        team.team_barrier();
        for (int e = team.team_rank(); e < tile * tile; e += threads) {
          const int r = e % tile, c = e / tile;  // target row tj*32 + r (a source column), column ti*32 + c
          const index_t i = tj * tile + r, j = ti * tile + c;
          if (i >= w || j >= w) continue;
          if (lower ? i < j : i > j) d(i, j) = conjugate(s(c, r));
          else if (i == j && real_diagonal) d(i, i) = T(real_part(s(c, r)));
        }
      });
}

// A(i, j) = conj(A(j, i)) for i > j: the upper triangle copied to the lower.
template <class T, class ExecSpace>
void mirror_upper_to_lower(const ExecSpace& space, const Matrix<T, ExecSpace>& a) {
  mirror_triangle_tiled(space, a, Uplo::Upper, false);
}

// Both triangles from the `uplo` one (real diagonal): a full Hermitian matrix.
template <class T, class ExecSpace>
void mirror_full_hermitian(const ExecSpace& space, const Matrix<T, ExecSpace>& a, Uplo uplo) {
  mirror_triangle_tiled(space, a, uplo, true);
}

// The O(m) loops of a column step: on host spaces they run inline on the
// calling thread (a fork/join per column step costs more than the loop); on
// devices they are kernels on the instance (latrd_column_device), keeping
// the column's scalars on the device.
template <class ExecSpace>
inline constexpr bool runs_inline_v = !backends::is_cuda_space_v<ExecSpace>;

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

// Term k of column j's update from the panel's earlier reflectors (latrd):
// P(r, j) -= sum_{k < j} P(r, k) W(j, k)^H + W(r, k) P(j, k)^H. W: the view,
// or on devices an accessor that adds the deferred axpy to its last column.
template <class View, class WAccess>
KOKKOS_INLINE_FUNCTION typename View::non_const_value_type column_update_term(const View& P, const WAccess& W,
                                                                              index_t r, index_t j, index_t k) {
  return P(r, k) * conjugate(W(j, k)) + W(r, k) * conjugate(P(j, k));
}

// part[q * Stride + l] summed over the Slices slices q (passes A and D).
template <int Slices, int Stride, class T>
KOKKOS_INLINE_FUNCTION T sum_of_slices(const T* part, int l) {
  T sum = T(0);
  for (int q = 0; q < Slices; ++q) sum += part[q * Stride + l];
  return sum;
}

// Address of m(row, col) (no access: valid for device views on the host).
template <class View>
typename View::pointer_type element_pointer(const View& m, index_t row, index_t col) {
  return m.data() + row + col * leading_dimension(m);
}

// LAPACK latrd's last step of a column, w += alpha v with
// alpha = -1/2 tau (w^H v): on devices it is deferred into the next column's
// launches (and the trailing update's copy), which read w anyway.
template <class T>
KOKKOS_INLINE_FUNCTION T deferred_axpy_scale(const T& tau, const T& dot) {
  return real_t<T>(-0.5) * tau * dot;
}

// Device-resident state of the latrd column steps. The host never reads it.
// The sums of passes A and D (norm, dot product, t1 and t2) are atomic adds
// of each team's share into zeroed slots: Kokkos's parallel_reduce would end
// each pass with a team-wide reduction and a last-team sum (a fifth of pass
// A's samples). A sum that pass D reads in every team has a slot per column
// parity, so that a slot is zeroed for the next column only once no pass
// reads it: D zeroes the next column's norm and t1 / t2 slots, A its own
// column's dot product.
template <class T, class ExecSpace>
struct LatrdDeviceState {
  T* alpha;           // the updated P(j + 1, j)
  real_t<T>* xn2[2];  // ||P(j+2:m, j)||^2, for even and odd global columns
  T* dot[2];          // (tau w)^H v, for even and odd global columns
  // [t1 | t2] (nb each) in several copies, for even and odd global columns:
  // pass A's teams add into copy (team % copies), so that no more than a
  // few dozen atomic adds meet on one address (all teams on one copy took
  // 19 us a column at m = 4450): latrd_t_copies.
  T* t[2];
  index_t nb;
  Vector<T, ExecSpace> symv_work;
};

// One latrd column step on a device: column j of the panel's trailing
// matrix P (global column c), W its m x jb partner. Three launches (A, symv,
// D), with every scalar on the device (seed 002 §4.2.1's column loop):
//  A. update: u = P(j:m, j) - V W(j, :)^H - W V(j, :)^H, written back; the
//     norm of u(j+2:m) and, in the same pass (V's and W's rows are in
//     cache), t1u = W^H u, t2u = V^H u over rows j+2.. into t[c % 2];
//  C. y' = A22 x for x = P(j+1:m, j) = (alpha, u(j+2:m)) as it stands, as
//     symv's partial sums: the product needs no reflector yet, so no pass
//     between A and it has to finish first;
//  D. the reflector: tau, beta, s = 1 / (alpha - beta) from the norm (every
//     team), v = (1, s u(j+2:m)) written back, and by linearity
//     y = A22 v = s y' + (1 - s alpha) A22(:, 0); t1 = W^H v =
//     W(j+1, :)^H + s t1u (t2 likewise with V) in every team from A's sums;
//     w = tau (y - V t1 - W t2) and w^H v, in one pass that also sums y'.
// The previous column's axpy (deferred_axpy_scale) is applied where W's
// column j - 1 is read in A, and A writes it back. Before this layout the
// step took eight launches, then four (D's reflector work ran in a launch of
// symv's diagonal blocks, 8-10 us a column at m = 4450).
template <class T, class ExecSpace>
void latrd_column_device(const ExecSpace& space, const Matrix<T, ExecSpace>& P, const Matrix<T, ExecSpace>& W,
                         index_t j, index_t c, const Vector<T, ExecSpace>& tau,
                         const Vector<real_t<T>, ExecSpace>& e, const LatrdDeviceState<T, ExecSpace>& st) {
  using R = real_t<T>;
  // Passes A and D: a team per 32 rows (a vector lane per row, so every load
  // is coalesced), its 16 slices splitting the row's terms; the slices meet
  // in team scratch. These passes are latency-bound: 16 slices halve each
  // warp's chain of loads, and at 64 registers a thread two teams share a
  // multiprocessor (H200, sytrd at n = 8192 / 16384: 0.468 / 2.61 s with one
  // team a multiprocessor, 0.437 / 2.46 s with two; two rows a lane and one
  // wave at n = 16384: 0.469 / 2.48 s).
  constexpr int slices = 16, lanes = 32;
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<slices * lanes, 2>>;
  using Member = typename Policy::member_type;
  constexpr index_t copies = latrd_t_copies;
  const index_t m = P.extent(0);
  const index_t x0 = j + 2 < m ? j + 2 : m;
  const index_t nb = st.nb, stride = 2 * nb;  // one copy of [t1 | t2]
  T* const t = st.t[c % 2];
  T* const t_next = st.t[(c + 1) % 2];
  T* const alpha = st.alpha;
  R* const xn2 = st.xn2[c % 2];
  R* const xn2_next = st.xn2[(c + 1) % 2];
  T* const dot = st.dot[c % 2];
  T* const dot_prev = st.dot[(c + 1) % 2];  // the previous column's

  // A. u = P(j:m, j) - V W(j, :)^H - W V(j, :)^H, the norm of u(j+2:m), and
  //    t1u = W^H u, t2u = V^H u over rows j+2.. (V's and W's rows are in cache);
  //    W(j+1:m, j - 1) with the previous column's axpy written back (each
  //    row by the thread that read it last; row j is not needed again).
  {
    const index_t league = (m - j + lanes - 1) / lanes;
    const size_t bytes = (slices + 1) * lanes * sizeof(T);
    Kokkos::parallel_for(
        "keig::sytrd::column_update", Policy(space, league, slices, lanes).set_scratch_size(0, Kokkos::PerTeam(bytes)),
        KOKKOS_LAMBDA(const Member& team) {
          T* const part = static_cast<T*>(team.team_shmem().get_shmem(bytes));
          T* const u = part + slices * lanes;
          T* const tu = t + (team.league_rank() % copies) * stride;
          const index_t base = j + team.league_rank() * lanes;
          const int slice = team.team_rank();
          if (team.league_rank() == 0 && slice == 0)
            Kokkos::single(Kokkos::PerThread(team), [&]() { *dot = T(0); });  // D sums into it
          const T a_prev = j > 0 ? deferred_axpy_scale(tau(c - 1), *dot_prev) : T(0);
          const auto w_at = [&](index_t r, index_t k) {  // W(r, k) with the deferred axpy
            return k + 1 == j ? W(r, k) + a_prev * P(r, k) : W(r, k);
          };
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, lanes), [&](const int l) {
            const index_t r = base + l;
            T sum = T(0);
            if (r < m)
              for (index_t k = slice; k < j; k += slices) sum += column_update_term(P, w_at, r, j, k);
            part[slice * lanes + l] = sum;
          });
          team.team_barrier();
          if (slice == 0) {
            R norm = R(0);
            Kokkos::parallel_reduce(
                Kokkos::ThreadVectorRange(team, lanes),
                [&](const int l, R& a) {
                  const index_t r = base + l;
                  T x = T(0);
                  if (r < m) {
                    x = P(r, j);
                    if (j > 0) {
                      x -= sum_of_slices<slices, lanes>(part, l);
                      if (r == j) x = T(real_part(x));
                      P(r, j) = x;
                    }
                    if (r == j + 1) *alpha = x;
                  }
                  const bool below = r >= x0 && r < m;
                  u[l] = below ? x : T(0);
                  a += below ? abs_squared(x) : R(0);
                },
                norm);
            Kokkos::single(Kokkos::PerThread(team), [&]() { atomic_accumulate(xn2, norm); });
          }
          team.team_barrier();
          // Each warp sums its columns' products over the team's 32 rows
          // with shuffles (the loads hit what phase one brought in).
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, lanes), [&](const int l) {
            const index_t r = base + l;
            for (index_t k = slice; k < j; k += slices) {
              T s1 = T(0), s2 = T(0);
              if (r < m) {
                const T w = w_at(r, k);
                if (k + 1 == j && r > j) W(r, k) = w;  // the axpy written back
                s1 = conjugate(w) * u[l];
                s2 = conjugate(P(r, k)) * u[l];
              }
              s1 = backends::warp_sum(s1, 1, lanes);
              s2 = backends::warp_sum(s2, 1, lanes);
              if (l == 0) {
                atomic_accumulate(tu + k, s1);
                atomic_accumulate(tu + nb + k, s2);
              }
            }
          });
        });
  }
  // C. y' = A22 x for x = P(j+1:m, j) = (alpha, u(j+2:m)), left as symv's
  //    partial sums. Even columns walk the blocks backward: the first column
  //    of a panel starts where the trailing update's last gemm ended, and
  //    each next one where the previous product ended (SymvOrder).
  const index_t mv = m - j - 1;
  const Matrix<T, ExecSpace> A22 = Kokkos::subview(P, std::make_pair(j + 1, m), std::make_pair(j + 1, m));
  const Vector<T, ExecSpace> x(element_pointer(P, j + 1, j), mv);
  const SymvPartials<T, ExecSpace> y = symv_partials<T, ExecSpace>(space, Uplo::Lower, A22, x, st.symv_work, 0,
                                                                   c % 2 == 0 ? SymvOrder::Backward : SymvOrder::Forward);
  // D. The reflector, v written back over x, w = tau (A22 v - V t1 - W t2)
  //    into W(j+1:m, j) and dot = w^H v; the first team stores tau and beta
  //    and zeroes the next column's sums.
  {
    const index_t league = mv > 0 ? (mv + lanes - 1) / lanes : 1;
    const size_t bytes = (slices * lanes + 2 * nb) * sizeof(T);
    const index_t zero_count = copies * stride;
    Kokkos::parallel_for(
        "keig::sytrd::reflector_product",
        Policy(space, league, slices, lanes).set_scratch_size(0, Kokkos::PerTeam(bytes)),
        KOKKOS_LAMBDA(const Member& team) {
          T* const part = static_cast<T*>(team.team_shmem().get_shmem(bytes));
          T* const tv = part + slices * lanes;  // t1 = W^H v in tv[0..j), t2 = V^H v in tv[nb..nb+j)
          const index_t base = team.league_rank() * lanes;  // rows of x, v, w (P and W from row j + 1)
          const int slice = team.team_rank();
          T tau_c, s_c;
          R beta_c;
          householder(*alpha, *xn2, tau_c, s_c, beta_c);
          const T a0 = T(1) - s_c * *alpha;  // the weight of A22(:, 0) in A22 v
          // symv's partial sums first: their loads wait for nothing, so they
          // overlap with the t1 / t2 sums (a lane's row stays with its thread).
          T product = T(0);
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, lanes), [&](const int l) {
            const index_t r = base + l;
            if (r < mv) {
              const index_t count = y.count(r);
#pragma unroll 4
              for (index_t idx = slice; idx < count; idx += slices) product += y.partial(r, idx);
            }
            for (index_t k = slice * lanes + l; k < 2 * j; k += slices * lanes) {
              const index_t q = k < j ? k : nb + k - j;  // t1 entries first, then t2's
              T sum = T(0);
              for (index_t copy = 0; copy < copies; ++copy) sum += t[copy * stride + q];
              tv[q] = (k < j ? conjugate(W(j + 1, k)) : conjugate(P(j + 1, k - j))) + s_c * sum;
            }
            if (team.league_rank() == 0) {
              for (index_t q = slice * lanes + l; q < zero_count; q += slices * lanes) t_next[q] = T(0);
              if (slice == 0 && l == 0) {
                tau(c) = tau_c;
                e(c) = beta_c;
                *xn2_next = R(0);
              }
            }
          });
          team.team_barrier();
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, lanes), [&](const int l) {
            const index_t r = base + l;
            T correction = T(0);
            if (r < mv) {
#pragma unroll 2
              for (index_t k = slice; k < j; k += slices)
                correction += P(j + 1 + r, k) * tv[k] + W(j + 1 + r, k) * tv[nb + k];
            }
            part[slice * lanes + l] = s_c * product - correction;
          });
          team.team_barrier();
          if (slice == 0) {
            T local = T(0);
            Kokkos::parallel_reduce(
                Kokkos::ThreadVectorRange(team, lanes),
                [&](const int l, T& sum) {
                  const index_t r = base + l;
                  if (r >= mv) return;
                  const T v = r == 0 ? T(1) : s_c * P(j + 1 + r, j);
                  const T w = tau_c * (sum_of_slices<slices, lanes>(part, l) + a0 * P(j + 1 + r, j + 1));
                  P(j + 1 + r, j) = v;
                  W(j + 1 + r, j) = w;
                  sum += conjugate(w) * v;
                },
                local);
            Kokkos::single(Kokkos::PerThread(team), [&]() { atomic_accumulate(dot, local); });
          }
        });
  }
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

  // Carve the workspace: W (n x nb), symv partials, t1 / t2 (2 x 2 nb x copies), scalars.
  T* p = work.data();
  const Matrix<T, ExecSpace> w_all(p, n, nb);
  p += n * nb;
  const Vector<T, ExecSpace> symv_work(p, symv_workspace_size<T, ExecSpace>(n));
  p += symv_workspace_size<T, ExecSpace>(n);
  T* const t_buffers = p;
  p += 4 * nb * detail::latrd_t_copies;
  // Device-resident scalars of the latrd column steps (the host never reads them).
  detail::LatrdDeviceState<T, ExecSpace> state;
  state.alpha = p;
  state.xn2[0] = reinterpret_cast<R*>(p + 1);
  state.xn2[1] = reinterpret_cast<R*>(p + 4);
  state.dot[0] = p + 2;
  state.dot[1] = p + 3;
  state.t[0] = t_buffers;
  state.t[1] = t_buffers + 2 * nb * detail::latrd_t_copies;
  state.nb = nb;
  state.symv_work = symv_work;
  if constexpr (!detail::runs_inline_v<ExecSpace>) {  // the first column's sums start from zero
    T* const scalars = p;
    Kokkos::parallel_for(
        "keig::sytrd::zero", Range(space, 0, 5), KOKKOS_LAMBDA(const index_t q) { scalars[q] = T(0); });
  }
  p += 8;
  const Matrix<T, ExecSpace> vwv_all(p, n, backends::is_cuda_space_v<ExecSpace> ? 3 * nb : 0);  // GPUs: [V W V]

  for (index_t i = 0; i + 1 < n; i += nb) {
    const index_t jb = nb < n - 1 - i ? nb : n - 1 - i;  // columns of this panel
    const index_t m = n - i;                             // rows of the panel's trailing matrix
    const Matrix<T, ExecSpace> P = Kokkos::subview(a, std::make_pair(i, n), std::make_pair(i, n));
    const Matrix<T, ExecSpace> W = Kokkos::subview(w_all, std::make_pair(index_t(0), m), std::make_pair(index_t(0), jb));

    for (index_t j = 0; j < jb; ++j) {
      const index_t c = i + j;
      if constexpr (!detail::runs_inline_v<ExecSpace>) {
        detail::latrd_column_device<T, ExecSpace>(space, P, W, j, c, tau, e, state);
      } else {
        // Host: the same step with the O(m) loops inline and threaded gemvs.
        // 1. Bring column j up to date with the panel's earlier reflectors:
        //    P(j:m, j) -= V(j:m, 0:j) W(j, 0:j)^H + W(j:m, 0:j) V(j, 0:j)^H.
        // 2. Householder reflector annihilating P(j+2:m, j) (LAPACK ?larfg,
        //    without its rescaling loop for norms below the underflow threshold).
        const index_t x0 = j + 2 < m ? j + 2 : m;
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
        tau(c) = t_out;
        e(c) = b_out;
        P(j + 1, j) = T(1);
        for (index_t r = x0; r < m; ++r) P(r, j) *= s_out;
        // 3. w = A22 v with the panel-start trailing matrix (keig symv).
        const Matrix<T, ExecSpace> A22 = Kokkos::subview(P, std::make_pair(j + 1, m), std::make_pair(j + 1, m));
        const Vector<T, ExecSpace> v(detail::element_pointer(P, j + 1, j), m - j - 1);
        const Vector<T, ExecSpace> w(detail::element_pointer(W, j + 1, j), m - j - 1);
        symv<T, ExecSpace>(space, Uplo::Lower, T(1), A22, v, T(0), w, symv_work);
        // 4. w -= V (W^H v) + W (V^H v) over the panel's earlier columns, then
        // 5. w *= tau and w += -1/2 tau (w^H v) v (LAPACK latrd).
        const Matrix<T, ExecSpace> Vp = Kokkos::subview(P, std::make_pair(j + 1, m), std::make_pair(index_t(0), j));
        const Matrix<T, ExecSpace> Wp = Kokkos::subview(W, std::make_pair(j + 1, m), std::make_pair(index_t(0), j));
        const Vector<T, ExecSpace> t1j(t_buffers, j), t2j(t_buffers + nb, j);
        if (j > 0) {
          backends::gemv<T>(ctx, backends::Op::ConjTrans, T(1), Wp, v, T(0), t1j);
          backends::gemv<T>(ctx, backends::Op::ConjTrans, T(1), Vp, v, T(0), t2j);
          backends::gemv<T>(ctx, backends::Op::NoTrans, T(-1), Vp, t1j, T(1), w);
          backends::gemv<T>(ctx, backends::Op::NoTrans, T(-1), Wp, t2j, T(1), w);
        }
        T acc = T(0);
        for (index_t r = 0; r < m - j - 1; ++r) {
          w(r) = t_out * w(r);
          acc += conjugate(w(r)) * v(r);
        }
        const T scale = detail::deferred_axpy_scale(t_out, acc);
        for (index_t r = 0; r < m - j - 1; ++r) w(r) += scale * v(r);
      }
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
        // The copy also applies the panel's last deferred axpy to W.
        const Matrix<T, ExecSpace> VWV = block(vwv_all, 0, m2, 0, 3 * jb);
        const index_t last = i + jb - 1;
        T* const dot_last = state.dot[last % 2];
        using Policy2 = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2, Kokkos::Iterate::Left, Kokkos::Iterate::Left>>;
        Kokkos::parallel_for(
            "keig::sytrd::vwv", Policy2(space, {0, 0}, {m2, jb}), KOKKOS_LAMBDA(const index_t r, const index_t k) {
              const T vk = V2(r, k);
              VWV(r, k) = vk;
              VWV(r, jb + k) = k + 1 == jb ? W2(r, k) + detail::deferred_axpy_scale(tau(last), *dot_last) * vk : W2(r, k);
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
