// stages/stedc: all eigenpairs of a real symmetric tridiagonal T by divide and
// conquer (Cuppen's tearing; Gu & Eisenstat's recomputed z for orthogonal
// vectors; LAPACK ?stedc / ?laed0-3 is the reference design), with the
// eigenvector matrix kept on the execution space. The O(n^3) part, the merge
// products Q <- Q S, runs as gemm where Q lives, and so do the secular roots
// (stages/secular); the host does only O(n)-sized bookkeeping per merge
// (deflation), and the leaves are solved on the device in one batched Jacobi
// call on GPUs (?steqr on concurrent host threads on hosts). Only d, e
// and per merge a few O(m) vectors cross between host and device, and the
// merges of one height of the tree cross together (one batch of launches and
// two host round trips per height, not per merge, neither of which waits for
// the height's gemms: the host plans the next height while they run); S
// (k x k) is built on the device from the roots, one column panel at a time. Seed
// 002 §4.2 names the tridiagonal solver as the stage that must follow the
// reduction onto the accelerator.
//
// A merge of the halves T1 (n1) and T2 (n2) of a block, torn at beta = e(n1 - 1):
//   T = diag(T1 - |beta| e_last e_last^T, T2 - |beta| e_1 e_1^T) + |beta| v v^T,
//   v = [e_last; sign(beta) e_1], so with T_i = Q_i D_i Q_i^T
//   T = Q (D + rho z z^T) Q^T,  z = Q^T v / sqrt(2),  rho = 2 |beta|.
// Deflation (z_j ~ 0, or two poles closer than tol after a Givens rotation)
// leaves k non-deflated poles; the eigenvectors of D + rho z z^T for those are
// S(:, j) = w ./ (dlambda - lambda_j) / norm, with w recomputed from the roots
// (Loewner), so the new vectors are Q_K S.
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "keig/backends/blas.hpp"
#include "keig/backends/host.hpp"
#include "keig/backends/lapack.hpp"
#include "keig/backends/warp.hpp"
#include "keig/errors.hpp"
#include "keig/stages/host_workers.hpp"
#include "keig/stages/secular.hpp"
#include "keig/views/compat.hpp"
#include "keig/views/kernels.hpp"
#include "keig/views/workspace.hpp"

namespace keig::stages {

struct StedcTuning {
  index_t leaf = 64;    // largest block solved directly
  index_t panel = 512;  // columns of S built and multiplied per gemm
  // CUDA spaces only, with leaf <= 32: from this many leaves on (0: never)
  // the leaves are solved on the device, all in one batched Jacobi call
  // (backends::syevj_batched), instead of by steqr on host threads. Its
  // residuals reach a few times 32 eps |T| whatever the leaf's size (steqr's
  // a few m eps |T|), which the merges' n eps |T| hides once there are many.
  index_t batched_leaves = 0;
};

// The tuning keig's solves use on ExecSpace. GPUs take leaves of 32: a
// height of merges costs little once its small merges are batched (H200
// with 16 host threads, GOE-like tridiagonal, host leaves of 32 against 64:
// n = 4096 / 16384 / 20694: 0.009 / 0.1225 / 0.253 s against 0.0107 / 0.128
// / 0.257 s), and solve them on the device: on the host their steqr calls
// are about 85 ms of CPU time at n = 16384, 5.5-22 ms on 16 threads within
// the pipeline (the longest of stedc's host steps, and the one that host
// load stretched most), against 0.3 ms for syevjBatched on an H100 (the
// tridiagonal step within the pipeline 0.108-0.119 s against 0.116 s and
// more). From 32 leaves: fewer cost the host little.
template <class ExecSpace>
StedcTuning stedc_default_tuning() {
  StedcTuning tuning;
  if constexpr (backends::is_cuda_space_v<ExecSpace>) {
    tuning.leaf = 32;
    tuning.batched_leaves = 32;
  }
  return tuning;
}

// Host threads besides the caller's that plan a height's merges on CUDA
// spaces (detail::HostWorkers): four in all measured as fast as sixteen
// without their spinning (H200, host_workers.hpp).
inline constexpr int stedc_plan_helpers = 3;

// R entries of the caller's workspace for n: an n x n matrix for the gathered
// columns (256-byte aligned columns for the merge gemms:
// aligned_leading_dimension), an n x panel block of S, and the O(n) buffers of
// the merges (stedc_buffer_entries), so that stedc allocates no device memory.
template <class R>
std::size_t stedc_buffer_entries(index_t n) {
  // 15 vectors of R and 20 of 8-byte integers (indices, gemm operands, the
  // batched leaves' d, e, eigenvalues and status), each of at most n entries,
  // the secular roots' failure count, plus up to 7 bytes of alignment before
  // each carving (detail::WorkspaceCarver; 33 of them, counted as 34).
  const std::size_t m = static_cast<std::size_t>(std::max<index_t>(n, 1));
  return (15 * m * sizeof(R) + 20 * m * 8 + 8 + 34 * 8 + sizeof(R) - 1) / sizeof(R);
}
template <class R>
std::size_t stedc_workspace_size(index_t n, const StedcTuning& tuning = {}) {
  return static_cast<std::size_t>(aligned_leading_dimension<R>(n)) * static_cast<std::size_t>(n) +
         static_cast<std::size_t>(n) * static_cast<std::size_t>(std::min(tuning.panel, std::max<index_t>(n, 1))) +
         stedc_buffer_entries<R>(n);
}

namespace detail {

// Hands out consecutive pieces of a workspace as vectors, each aligned for
// its type; running past the end is a sizing error in keig, not the caller's.
template <class ExecSpace>
class WorkspaceCarver {
 public:
  WorkspaceCarver(void* begin, std::size_t bytes)
      : next_(reinterpret_cast<std::uintptr_t>(begin)), end_(next_ + bytes) {}
  template <class V>
  Vector<V, ExecSpace> take(index_t count) {
    const std::uintptr_t first = (next_ + alignof(V) - 1) / alignof(V) * alignof(V);
    const std::uintptr_t after = first + static_cast<std::uintptr_t>(count) * sizeof(V);
    if (after > end_) throw Error("keig: internal error: a workspace carving runs past its size");
    next_ = after;
    return Vector<V, ExecSpace>(reinterpret_cast<V*>(first), count);
  }

 private:
  std::uintptr_t next_, end_;
};

// Per-merge host plan: what the device must do to a block's columns.
template <class R>
struct MergePlan {
  index_t k = 0;                        // non-deflated poles
  index_t c1 = 0, c2 = 0, c3 = 0;       // of which: top-only, dense, bottom-only columns
  R rho = 0;
  std::vector<index_t> rot_p, rot_q;    // Givens rotations on storage columns, in order
  std::vector<R> rot_c, rot_s;
  std::vector<index_t> gather;          // m storage columns: non-deflated in type order, then deflated ascending
  std::vector<R> dlambda, zw;           // non-deflated poles (ascending) and their z
  std::vector<index_t> row_of_pole;     // pole index of each S row (type order)
  std::vector<R> deflated_values;       // ascending
};

// Deflation (the ?laed2 tests): z_j negligible, or two poles so close that a
// rotation in their plane zeroes one z entry. d and z are in sorted-within-
// half order with storage columns col; on return the plan lists the
// rotations, the surviving poles and the gather order.
template <class R>
MergePlan<R> plan_merge(index_t n1, std::vector<R>& d, std::vector<R>& z, const std::vector<index_t>& col, R beta) {
  const index_t m = static_cast<index_t>(d.size());
  MergePlan<R> plan;
  if (beta < 0)
    for (index_t j = n1; j < m; ++j) z[j] = -z[j];
  const R inv_sqrt2 = R(1) / std::sqrt(R(2));
  for (auto& v : z) v *= inv_sqrt2;
  plan.rho = 2 * std::abs(beta);
  std::vector<index_t> order(m);
  std::iota(order.begin(), order.end(), index_t(0));
  std::inplace_merge(order.begin(), order.begin() + n1, order.end(),
                     [&](index_t a, index_t b) { return d[a] < d[b]; });
  R dmax = 0, zmax = 0;
  for (index_t j = 0; j < m; ++j) {
    dmax = std::max(dmax, std::abs(d[j]));
    zmax = std::max(zmax, std::abs(z[j]));
  }
  const R eps = std::numeric_limits<R>::epsilon() / 2;
  const R tol = 8 * eps * std::max(dmax, zmax);
  std::vector<int> type(m);
  for (index_t j = 0; j < m; ++j) type[j] = j < n1 ? 1 : 3;
  std::vector<index_t> kept, deflated;
  if (plan.rho * zmax <= tol) {
    deflated = order;  // the coupling is negligible: T is already diagonal in Q
  } else {
    index_t pj = -1;
    for (index_t j : order) {
      if (plan.rho * std::abs(z[j]) <= tol) {
        deflated.push_back(j);
        continue;
      }
      if (pj < 0) {
        pj = j;
        continue;
      }
      R s = z[pj], c = z[j];
      const R tau = std::hypot(c, s);
      const R t = d[j] - d[pj];
      c /= tau;
      s = -s / tau;
      if (std::abs(t * c * s) <= tol) {
        // Rotate columns pj, j: z[pj] -> 0, so pj deflates with a value
        // between the two poles; j carries both halves if they differ.
        z[j] = tau;
        z[pj] = 0;
        if (type[pj] != type[j]) type[j] = 2;
        type[pj] = 4;
        plan.rot_p.push_back(col[pj]);
        plan.rot_q.push_back(col[j]);
        plan.rot_c.push_back(c);
        plan.rot_s.push_back(s);
        const R dp = d[pj] * c * c + d[j] * s * s;
        d[j] = d[pj] * s * s + d[j] * c * c;
        d[pj] = dp;
        deflated.push_back(pj);
        pj = j;
      } else {
        kept.push_back(pj);
        pj = j;
      }
    }
    if (pj >= 0) kept.push_back(pj);
  }
  std::stable_sort(deflated.begin(), deflated.end(), [&](index_t a, index_t b) { return d[a] < d[b]; });
  plan.k = static_cast<index_t>(kept.size());
  for (index_t i = 0; i < plan.k; ++i) {
    plan.dlambda.push_back(d[kept[i]]);
    plan.zw.push_back(z[kept[i]]);
  }
  // S rows (and gathered columns) grouped by type: 1 (rows of T1 only),
  // 2 (dense), 3 (rows of T2 only), so each half is one gemm.
  for (int t = 1; t <= 3; ++t)
    for (index_t i = 0; i < plan.k; ++i)
      if (type[kept[i]] == t) {
        plan.row_of_pole.push_back(i);
        plan.gather.push_back(col[kept[i]]);
        (t == 1 ? plan.c1 : t == 2 ? plan.c2 : plan.c3) += 1;
      }
  for (index_t j : deflated) {
    plan.gather.push_back(col[j]);
    plan.deflated_values.push_back(d[j]);
  }
  return plan;
}

// Lanes that share one position's sums over a merge's poles: a warp on GPUs,
// one thread on hosts.
template <class ExecSpace>
inline constexpr int position_lanes = backends::is_cuda_space_v<ExecSpace> ? 32 : 1;

// The positions p < n of a height's merges that hold a non-deflated pole of
// a merge with k >= 3 (those whose roots secular_roots_batched computes):
// position p = lo + i of merge b = merge_of(p) (-1: none), i < k = merge_k(b).
template <class ExecSpace>
struct MergePositions {
  static constexpr int lanes = position_lanes<ExecSpace>, per_team = lanes == 1 ? 1 : 4;
  Vector<index_t, ExecSpace> merge_of, merge_lo, merge_k;

  // body(p, lo, k, lane) on every lane of each such position (a position's
  // lanes are one aligned group: backends::group_sum reduces over them).
  template <class Body>
  void for_each_lane(const ExecSpace& space, const char* name, index_t n, const Body& body) const {
    using Policy = Kokkos::TeamPolicy<ExecSpace>;
    const MergePositions self = *this;
    Kokkos::parallel_for(
        name, Policy(space, (n + per_team - 1) / per_team, lanes * per_team),
        KOKKOS_LAMBDA(const typename Policy::member_type& team) {
          const index_t p = team.league_rank() * per_team + team.team_rank() / lanes;
          const int lane = team.team_rank() % lanes;
          const index_t b = p < n ? self.merge_of(p) : -1;
          if (b < 0) return;
          const index_t lo = self.merge_lo(b), k = self.merge_k(b);
          if (k >= 3 && p - lo < k) body(p, lo, k, lane);
        });
  }
};

}  // namespace detail

// On entry d (n) and e (n - 1) hold T on the host; on return d holds the
// eigenvalues ascending and q (n x n, execution space) the eigenvectors.
// e is destroyed. work: stedc_workspace_size<R>(n, tuning) entries in the
// execution space's memory. Blocks the calling thread (host steps).
template <class R, class ExecSpace>
void stedc(const backends::Context<ExecSpace>& ctx, const HostVector<R>& d, const HostVector<R>& e,
           const Matrix<R, ExecSpace>& q, const Vector<R, ExecSpace>& work, const StedcTuning& tuning = {}) {
  using Host = Kokkos::DefaultHostExecutionSpace;
  const ExecSpace& space = ctx.space();
  const index_t n = d.extent(0);
  if (static_cast<index_t>(e.extent(0)) < n - 1) throw InvalidArgument("e", "needs n - 1 entries");
  if (static_cast<index_t>(q.extent(0)) != n || static_cast<index_t>(q.extent(1)) != n)
    throw InvalidArgument("Z", "the tridiagonal eigenvectors need an n x n matrix, n = " + std::to_string(n));
  if (work.extent(0) < stedc_workspace_size<R>(n, tuning))
    throw InvalidArgument("work", "needs stedc_workspace_size(n) = " + std::to_string(stedc_workspace_size<R>(n, tuning)) +
                                      " entries, has " + std::to_string(work.extent(0)));
  if (tuning.leaf < 1 || tuning.panel < 1) throw InvalidArgument("tuning", "leaf and panel must be positive");
  if (tuning.batched_leaves < 0) throw InvalidArgument("tuning", "batched_leaves must not be negative");
  if (tuning.batched_leaves > 0 && !backends::is_cuda_space_v<ExecSpace>)
    throw InvalidArgument("tuning", "batched_leaves runs the leaves on a CUDA space; hosts solve them with steqr");
  if (tuning.batched_leaves > 0 && tuning.leaf > 32)
    throw InvalidArgument("tuning", "batched_leaves needs leaf <= 32, got " + std::to_string(tuning.leaf));
  if (n == 0) return;
  // Scale to max |T| = 1 (as ?stedc) so deflation tolerances are absolute.
  R scale = 0;
  for (index_t i = 0; i < n; ++i) {
    if (!std::isfinite(d(i)) || (i + 1 < n && !std::isfinite(e(i))))
      throw InvalidArgument(std::isfinite(d(i)) ? "e" : "d", "non-finite entry at index " + std::to_string(i));
    scale = std::max(scale, std::abs(d(i)));
    if (i + 1 < n) scale = std::max(scale, std::abs(e(i)));
  }
  const auto all_rows = KOKKOS_LAMBDA(const index_t) { return Kokkos::pair<index_t, index_t>(0, n); };
  if (scale == 0) {
    for_each_column_entry(space, "keig::stedc::identity", n, n, all_rows,
                          KOKKOS_LAMBDA(const index_t i, const index_t j) { q(i, j) = i == j ? R(1) : R(0); });
    space.fence();
    return;
  }
  for (index_t i = 0; i < n; ++i) d(i) /= scale;
  for (index_t i = 0; i + 1 < n; ++i) e(i) /= scale;

  const index_t panel = std::min(tuning.panel, n);
  const index_t ldg = aligned_leading_dimension<R>(n);
  const Matrix<R, ExecSpace> gathered = make_matrix<R, ExecSpace>(work.data(), n, n, ldg);
  Matrix<R, ExecSpace> s_panel_all(work.data() + static_cast<std::size_t>(ldg) * n, n, panel);
  // The merges' O(n) buffers, carved from the rest of work: allocating them
  // (cudaMalloc and cudaFree per call, and a cudaFree waits for the whole
  // device) took 1-23 ms of a call on an H100 at n = 16384-20694.
  detail::WorkspaceCarver<ExecSpace> carver(
      work.data() + static_cast<std::size_t>(ldg) * n + static_cast<std::size_t>(n) * panel,
      stedc_buffer_entries<R>(n) * sizeof(R));
  static_assert(sizeof(index_t) == 8 && sizeof(std::uintptr_t) == 8, "stedc_buffer_entries counts 8-byte integers");
  const auto take_r = [&carver](index_t count) { return carver.template take<R>(count); };
  const auto take_i = [&carver](index_t count) { return carver.template take<index_t>(count); };

  // Sorted eigenvalues of each finished block and the storage column of each.
  std::vector<R> ev(n);
  std::vector<index_t> col(n);

  // Blocks: halve [lo, lo + m) until m <= leaf; leaves in order.
  struct Block {
    index_t lo, m;
  };
  std::vector<Block> leaves;
  // heights[h - 1]: the merges of height h (one more than the higher
  // child's; leaves have height 0), each height in order of lo.
  std::vector<std::vector<Block>> heights;
  auto divide = [&](auto&& self, index_t lo, index_t m) -> std::size_t {
    if (m <= tuning.leaf) {
      leaves.push_back({lo, m});
      return 0;
    }
    const index_t n1 = m / 2;
    const std::size_t h = 1 + std::max(self(self, lo, n1), self(self, lo + n1, m - n1));
    if (heights.size() < h) heights.resize(h);
    heights[h - 1].push_back({lo, m});
    return h;
  };
  divide(divide, 0, n);

  // Host vector -> the first entries of a device vector (asynchronous; the
  // host vector must live until the next fence).
  auto to_device = [&](const auto& dst, const auto& src) {
    using V = typename std::decay_t<decltype(src)>::value_type;
    const index_t len = static_cast<index_t>(src.size());
    if (len == 0) return;
    Kokkos::View<const V*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(src.data(), len);
    Kokkos::deep_copy(space, Kokkos::subview(dst, std::make_pair(index_t(0), len)), h);
  };

  // Leaves: ends adjusted by the tears (T_i - |beta| e e^T). Each column's
  // leaf: its first row/column and its size.
  const auto leaf_lo = take_i(n), leaf_m = take_i(n);
  std::vector<index_t> leaf_lo_h(n), leaf_m_h(n);
  for (const auto& b : leaves)
    for (index_t j = b.lo; j < b.lo + b.m; ++j) {
      leaf_lo_h[j] = b.lo;
      leaf_m_h[j] = b.m;
    }
  to_device(leaf_lo, leaf_lo_h);
  to_device(leaf_m, leaf_m_h);
  // Both paths leave the leaves' vectors at the start of the workspace
  // (gathered and S, still unused), column j of Q's block from entry
  // leaf_base(j) on; the host fills ev and col.
  const auto leaf_base = take_i(n);
  std::vector<index_t> base_h(n);
  R* const leaf_vectors = work.data();
  const bool batched = tuning.batched_leaves > 0 && static_cast<index_t>(leaves.size()) >= tuning.batched_leaves;
  // Batched: the eigenvalues and each matrix's status, read after the fence.
  index_t width = std::min(tuning.leaf, n);
  HostVector<R> w_h;
  HostVector<int> info_h;
  HostMatrix<R> packed_h;  // host steqr: the vectors, packed side by side
  if (batched) {
    if constexpr (backends::is_cuda_space_v<ExecSpace>) {
      // On the device: each leaf a dense W x W matrix (W the widest leaf; a
      // narrower one's remaining diagonal is 8, above every eigenvalue of
      // the scaled T -- |T| <= 1, so Gershgorin keeps the leaves' within 3 --
      // and decoupled, so those pairs sort last and leave the leaf's exact),
      // solved together by one batched Jacobi call.
      const index_t count = static_cast<index_t>(leaves.size());
      width = 0;
      for (const auto& b : leaves) width = std::max(width, b.m);
      // Leaf b (in divide's order, not by lo) is the batch's matrix b; its
      // size is leaf_m at its first column.
      std::vector<index_t> first_h(count);
      for (index_t b = 0; b < count; ++b) {
        first_h[b] = leaves[b].lo;
        for (index_t j = leaves[b].lo; j < leaves[b].lo + leaves[b].m; ++j)
          base_h[j] = (b * width + j - leaves[b].lo) * width;
      }
      const auto leaf_d = take_r(n), leaf_e = take_r(n), leaf_w = take_r(2 * n);
      const auto leaf_first = take_i(n);
      const auto leaf_info = carver.template take<int>(count);
      to_device(leaf_first, first_h);
      Kokkos::deep_copy(space, Kokkos::subview(leaf_d, std::make_pair(index_t(0), n)),
                        Kokkos::subview(d, std::make_pair(index_t(0), n)));
      if (n > 1)
        Kokkos::deep_copy(space, Kokkos::subview(leaf_e, std::make_pair(index_t(0), n - 1)),
                          Kokkos::subview(e, std::make_pair(index_t(0), n - 1)));
      // count W^2 <= (n + count) W <= n^2 + n panel entries
      Kokkos::parallel_for(
          "keig::stedc::leaf_matrices", Kokkos::RangePolicy<ExecSpace>(space, 0, count * width * width),
          KOKKOS_LAMBDA(const index_t x) {
            const index_t b = x / (width * width), j = x / width % width, i = x % width;
            const index_t lo = leaf_first(b), m = leaf_m(lo);
            R v = i == j ? R(8) : R(0);
            if (i < m && j < m) {
              v = R(0);
              if (i == j) {
                v = leaf_d(lo + i);
                const R left = lo > 0 ? leaf_e(lo - 1) : R(0), right = lo + m < n ? leaf_e(lo + m - 1) : R(0);
                if (i == 0) v -= left < R(0) ? -left : left;
                if (i == m - 1) v -= right < R(0) ? -right : right;
              } else if (i == j + 1 || j == i + 1) {
                v = leaf_e(lo + (i < j ? i : j));
              }
            }
            leaf_vectors[x] = v;
          });
      backends::syevj_batched<R>(ctx, width, count, leaf_vectors, leaf_w.data(), leaf_info.data());
      w_h = host_vector_for_copy<R>("keig::stedc::leaf_values", count * width);
      info_h = host_vector_for_copy<int>("keig::stedc::leaf_info", count);
      Kokkos::deep_copy(space, w_h, Kokkos::subview(leaf_w, std::make_pair(index_t(0), count * width)));
      Kokkos::deep_copy(space, info_h, leaf_info);
    }
  } else {
    // On concurrent host threads by steqr, packed side by side.
    packed_h = HostMatrix<R>("keig::stedc::leaves", width, n);
    std::vector<index_t> info(leaves.size(), 0);
    Kokkos::parallel_for(
        "keig::stedc::leaves", Kokkos::RangePolicy<Host>(0, static_cast<index_t>(leaves.size())), [&](const index_t b) {
          const index_t lo = leaves[b].lo, m = leaves[b].m;
          std::vector<R> dl(d.data() + lo, d.data() + lo + m), el(m > 1 ? m - 1 : 1, R(0));
          for (index_t i = 0; i + 1 < m; ++i) el[i] = e(lo + i);
          if (lo > 0) dl[0] -= std::abs(e(lo - 1));
          if (lo + m < n) dl[m - 1] -= std::abs(e(lo + m - 1));
          info[b] = backends::host::steqr<R>(m, dl.data(), el.data(), &packed_h(0, lo), width);
          for (index_t i = 0; i < m; ++i) {
            ev[lo + i] = dl[i];
            col[lo + i] = lo + i;
          }
        });
    for (std::size_t b = 0; b < leaves.size(); ++b)
      if (info[b] > 0) throw ConvergenceFailure("steqr", info[b]);
    for (index_t j = 0; j < n; ++j) base_h[j] = j * width;
    Kokkos::deep_copy(space, Matrix<R, ExecSpace>(leaf_vectors, width, n), packed_h);
  }
  to_device(leaf_base, base_h);
  // Every entry of Q: the leaves' blocks, zeros elsewhere.
  for_each_column_entry(
      space, "keig::stedc::scatter_leaves", n, n, all_rows, KOKKOS_LAMBDA(const index_t i, const index_t j) {
        const index_t r = i - leaf_lo(j);
        q(i, j) = r >= 0 && r < leaf_m(j) ? leaf_vectors[leaf_base(j) + r] : R(0);
      });
  space.fence();  // the host buffers above must outlive the copies
  if (batched) {
    for (index_t b = 0; b < static_cast<index_t>(leaves.size()); ++b) {
      if (info_h(b) > 0) throw ConvergenceFailure("syevjBatched", info_h(b));
      for (index_t i = 0; i < leaves[b].m; ++i) {
        ev[leaves[b].lo + i] = w_h(b * width + i);
        col[leaves[b].lo + i] = leaves[b].lo + i;
      }
    }
  }

  // The merges of one height are independent (disjoint blocks of rows and
  // columns), so each height runs as one batch: one launch per kernel for
  // all its merges, one host round trip for their z rows and one for their
  // roots; only S and the gemms go merge by merge. Merge by merge, each of
  // the 240 merges of at most 1024 columns at n = 16384 (leaves of 64) cost
  // 250-450 us of launches, copies and fences whatever its size. H200, the
  // Householder tridiagonal of a GOE matrix (the solver's case): 0.245 ->
  // 0.175 s at n = 16384, 0.44 -> 0.32 s at 20694; uniform random d, e
  // (more deflation): 0.119 -> 0.067 s at 16384; the same results bit for bit.
  // Device buffers (O(n), positions in storage order: a merge's entries at
  // lo .. lo + m - 1) and their host mirrors.
  const auto z_rows = take_r(n), dlambda = take_r(n), zw = take_r(n), tau = take_r(n), roots = take_r(n),
             west = take_r(n), norm = take_r(n), rot_c = take_r(n), rot_s = take_r(n), row_entries = take_r(n);
  const auto origin = take_i(n), row_pole = take_i(n), gather = take_i(n), rot_p = take_i(n), rot_q = take_i(n);
  // Position -> merge of the height (-1: in no merge of it), and per merge:
  // first position, size, non-deflated poles, its rotations [rot_first,
  // rot_end) and rho.
  const auto merge_of = take_i(n), next_row = take_i(n);
  const index_t most_merges = std::max<index_t>(1, static_cast<index_t>(heights.empty() ? 0 : heights[0].size()));
  const auto merge_lo = take_i(most_merges), merge_m = take_i(most_merges), merge_k = take_i(most_merges),
             rot_first = take_i(most_merges), rot_end = take_i(most_merges);
  const auto merge_rho = take_r(most_merges);
  const auto secular_failures = take_i(1);
  auto z_rows_h = host_mirror_for_copy(z_rows);
  auto roots_h = host_mirror_for_copy(roots);
  std::optional<detail::HostWorkers> workers;  // started only where some height has several merges
  if constexpr (backends::is_cuda_space_v<ExecSpace>)
    if (most_merges > 1) workers.emplace(stedc_plan_helpers);
  // The batched gemms' operands (A, B and C of each merge, as addresses).
  const auto operands = carver.template take<std::uintptr_t>(3 * most_merges);

  // Pipelined by heights: the host plans height h + 1 while height h's merge
  // gemms run. Those gemms dominate the step (about 4/3 n^3 flops, 98 ms of
  // kernels in a 107-111 ms step at n = 16384, H200), and before, the device
  // waited for every height's host work: its z rows were read from Q after the
  // gemms, then planned (0.3-1.1 ms at the top heights), and the roots were
  // read back after the gemms too (7.8-14.6 ms of idle in gaps over 20 us).
  // Now height h's steps run in this order: (1) the plan from z (read before)
  // and its uploads; (2) the secular roots (a fence for their convergence
  // check); (3) the roots' copy back, rotations, gather, Loewner z, norms, the
  // merges with k <= 2 (S on the host), and the next height's z rows from Q's
  // rows as they will be after this height's gemms (z_next below); (4) a
  // fence; (5) S and the gemms of the merges with k >= 3, not waited for;
  // (6) the new eigenvalue order on the host. The next plan then overlaps (5).
  const auto next_rows_of = [&](std::size_t h) {  // row of Q each column's merge at heights[h] needs (-1: none)
    std::vector<index_t> rows(n, -1);
    if (h < heights.size())
      for (const auto& blk : heights[h])
        for (index_t c = blk.lo, n1 = blk.m / 2; c < blk.lo + blk.m; ++c)
          rows[c] = c - blk.lo < n1 ? blk.lo + n1 - 1 : blk.lo + n1;
    return rows;
  };
  // z = [last row of Q1; first row of Q2] of every merge of the next height,
  // in storage order, where Q's column c is final: all but the non-deflated
  // columns of this height's merges with k >= 3 (computed by z_next).
  const auto z_rows_from_q = [&](const bool this_height) {
    Kokkos::parallel_for(
        "keig::stedc::z_rows", Kokkos::RangePolicy<ExecSpace>(space, 0, n), KOKKOS_LAMBDA(const index_t c) {
          const index_t r = next_row(c);
          if (r < 0) return;
          if (this_height) {
            const index_t b = merge_of(c);
            if (b >= 0 && merge_k(b) >= 3 && c - merge_lo(b) < merge_k(b)) return;
          }
          z_rows(c) = q(r, c);
        });
  };
  if (!heights.empty()) {  // z of the first merges: rows of the leaves' vectors
    to_device(next_row, next_rows_of(0));
    z_rows_from_q(false);
    Kokkos::deep_copy(space, z_rows_h, z_rows);
    space.fence();
  }
  std::vector<std::uintptr_t> operands_h;  // the batched gemms' operands, alive until the next fence
  for (std::size_t h = 0; h < heights.size(); ++h) {
    const auto& level = heights[h];
    const bool last_height = h + 1 == heights.size();
    const index_t count = static_cast<index_t>(level.size());
    index_t widest = 0;  // the largest merge of the height
    std::vector<index_t> merge_of_h(n, -1), lo_h(count), m_h(count);
    for (index_t b = 0; b < count; ++b) {
      lo_h[b] = level[b].lo;
      m_h[b] = level[b].m;
      widest = std::max(widest, level[b].m);
      for (index_t p = level[b].lo; p < level[b].lo + level[b].m; ++p) merge_of_h[p] = b;
    }
    to_device(merge_of, merge_of_h);
    to_device(merge_lo, lo_h);
    to_device(merge_m, m_h);

    // The plans (host), then every merge's poles, z, gather order, S rows and
    // rotations at its positions (the rotations one list, merge after merge).
    std::vector<detail::MergePlan<R>> plans(count);
    std::vector<index_t> k_h(count), rot_first_h(count), rot_end_h(count);
    std::vector<R> rho_h(count), dlambda_h(n, R(0)), zw_h(n, R(0));
    std::vector<index_t> gather_h(n, 0), row_pole_h(n, 0), rot_p_h, rot_q_h;
    std::vector<R> rot_c_h, rot_s_h;
    // The merges' plans are independent and fill disjoint positions, so they
    // run on several host threads (the lower heights hold many merges; H100,
    // n = 16384: 11-12 ms one merge at a time, 2-4 ms so); their rotations
    // are then listed merge after merge. On CUDA spaces: this call's few
    // HostWorkers (host_workers.hpp says why not a parallel region); on host
    // spaces a parallel region, except for the top heights' one or two
    // merges, which run on this thread (a region cost 0.3-1.2 ms on a busy host).
    const auto plan_one = [&](const index_t b) {
      const index_t lo = lo_h[b], m = m_h[b], n1 = m / 2;
      std::vector<R> dd(m), zz(m);
      std::vector<index_t> cc(m);
      for (index_t p = 0; p < m; ++p) {
        dd[p] = ev[lo + p];
        cc[p] = col[lo + p];
        zz[p] = z_rows_h(cc[p]);
      }
      auto& plan = plans[b];
      plan = detail::plan_merge<R>(n1, dd, zz, cc, e(lo + n1 - 1));
      k_h[b] = plan.k;
      rho_h[b] = plan.rho;
      for (index_t i = 0; i < plan.k; ++i) {
        dlambda_h[lo + i] = plan.dlambda[i];
        zw_h[lo + i] = plan.zw[i];
        row_pole_h[lo + i] = plan.row_of_pole[i];
      }
      for (index_t c = 0; c < m; ++c) gather_h[lo + c] = plan.gather[c];
    };
    if (workers)
      workers->run(count, plan_one);
    else if (count > 2)
      Kokkos::parallel_for("keig::stedc::plans", Kokkos::RangePolicy<Host>(0, count), plan_one);
    else
      for (index_t b = 0; b < count; ++b) plan_one(b);
    for (index_t b = 0; b < count; ++b) {
      const auto& plan = plans[b];
      rot_first_h[b] = static_cast<index_t>(rot_p_h.size());
      if (plan.k > 0) {  // with k = 0 the columns stay where they are
        rot_p_h.insert(rot_p_h.end(), plan.rot_p.begin(), plan.rot_p.end());
        rot_q_h.insert(rot_q_h.end(), plan.rot_q.begin(), plan.rot_q.end());
        rot_c_h.insert(rot_c_h.end(), plan.rot_c.begin(), plan.rot_c.end());
        rot_s_h.insert(rot_s_h.end(), plan.rot_s.begin(), plan.rot_s.end());
      }
      rot_end_h[b] = static_cast<index_t>(rot_p_h.size());
    }
    to_device(merge_k, k_h);
    to_device(merge_rho, rho_h);
    to_device(rot_first, rot_first_h);
    to_device(rot_end, rot_end_h);
    to_device(dlambda, dlambda_h);
    to_device(zw, zw_h);
    to_device(gather, gather_h);
    to_device(row_pole, row_pole_h);
    to_device(rot_p, rot_p_h);
    to_device(rot_q, rot_q_h);
    to_device(rot_c, rot_c_h);
    to_device(rot_s, rot_s_h);

    // Secular roots of the merges with k >= 3, each kept as its nearer pole
    // (origin, relative to the merge's first position) and the offset tau
    // from it, from which the Loewner z and S rebuild dlambda_i - lambda_j
    // with its relative accuracy. Merges with k <= 2 get theirs (and their
    // S) on the host below.
    secular_roots_batched<R, ExecSpace>(space, n, merge_of, merge_lo, merge_k, merge_rho, 3, dlambda, zw, origin, tau,
                                        roots, secular_failures);
    Kokkos::parallel_for(
        "keig::stedc::rotations", Kokkos::RangePolicy<ExecSpace>(space, 0, n), KOKKOS_LAMBDA(const index_t i) {
          const index_t b = merge_of(i);
          if (b < 0) return;
          for (index_t r = rot_first(b); r < rot_end(b); ++r) {
            const R x = q(i, rot_p(r)), y = q(i, rot_q(r));
            q(i, rot_p(r)) = rot_c(r) * x + rot_s(r) * y;
            q(i, rot_q(r)) = rot_c(r) * y - rot_s(r) * x;
          }
        });
    // Merges with k > 0: gather the columns (non-deflated in type order, then
    // deflated); only the deflated ones return unchanged, the first k are
    // rebuilt by the gemms. Column c's rows: its merge's block; none where c
    // is in no merge or its merge has k = 0, and for keep_deflated none
    // where c is not deflated. These column passes (and the leaves' scatter,
    // the final sort) ran as 2-D ranges before, at a quarter of the copy
    // bandwidth: H200, GOE-like tridiagonal, stedc 0.167-0.178 -> 0.131-0.142
    // s at n = 16384, 0.320 -> 0.276 s at 20694, with the warps per position below.
    const auto merge_rows = KOKKOS_LAMBDA(const index_t c) {
      const index_t b = merge_of(c);
      if (b < 0 || merge_k(b) == 0) return Kokkos::pair<index_t, index_t>(0, 0);
      return Kokkos::pair<index_t, index_t>(merge_lo(b), merge_lo(b) + merge_m(b));
    };
    for_each_column_entry(
        space, "keig::stedc::gather", n, widest, merge_rows,
        KOKKOS_LAMBDA(const index_t i, const index_t c) { gathered(i, c) = q(i, gather(c)); });
    for_each_column_entry(
        space, "keig::stedc::keep_deflated", n, widest,
        KOKKOS_LAMBDA(const index_t c) {
          const auto rows = merge_rows(c);
          const index_t b = merge_of(c);
          return b >= 0 && c - merge_lo(b) >= merge_k(b) ? rows : Kokkos::pair<index_t, index_t>(0, 0);
        },
        KOKKOS_LAMBDA(const index_t i, const index_t c) { q(i, c) = gathered(i, c); });
    // Loewner: w_i = sign(z_i) sqrt(-prod_j (dlambda_i - lambda_j) / prod_{j != i} (dlambda_i - dlambda_j)),
    // the z for which the computed roots are exact (Gu & Eisenstat); then
    // the norms of S's columns. Positions of merges with k >= 3.
    // On GPUs a warp per position, its lanes over the k terms (a thread per
    // position left the top merges' loops of k terms on a few warps per
    // multiprocessor).
    const detail::MergePositions<ExecSpace> positions{merge_of, merge_lo, merge_k};
    positions.for_each_lane(
        space, "keig::stedc::loewner", n, KOKKOS_LAMBDA(const index_t p, const index_t lo, const index_t k, const int lane) {
          const index_t i = p - lo;
          const R* const dl = &dlambda(lo);
          const R di = dl[i];
          R prod = lane == 0 ? (di - dl[origin(p)]) - tau(p) : R(1);
          for (index_t j = lane; j < k; j += detail::position_lanes<ExecSpace>)
            if (j != i) prod *= ((di - dl[origin(lo + j)]) - tau(lo + j)) / (di - dl[j]);
          prod = backends::group_product<detail::position_lanes<ExecSpace>>(prod);
          const R mag = compat::sqrt(prod < R(0) ? -prod : R(0));
          if (lane == 0) west(p) = zw(p) < R(0) ? -mag : mag;
        });
    positions.for_each_lane(
        space, "keig::stedc::column_norms", n,
        KOKKOS_LAMBDA(const index_t p, const index_t lo, const index_t k, const int lane) {
          const R* const dl = &dlambda(lo);
          const R dj = dl[origin(p)], tj = tau(p);
          R sum = 0;
          for (index_t i = lane; i < k; i += detail::position_lanes<ExecSpace>) {
            const R v = west(lo + i) / ((dl[i] - dj) - tj);
            sum += v * v;
          }
          sum = backends::group_sum<detail::position_lanes<ExecSpace>>(sum);
          if (lane == 0) norm(p) = compat::sqrt(sum);
        });

    const bool batched_height = widest <= panel;  // see the batched gemms below
    // Per merge (those of the higher heights, and those with k <= 2): S one
    // column panel at a time, and the new vectors Q_K S (one gemm per half:
    // S's rows are grouped by type, so the top half needs types 1 and 2, the
    // bottom half types 2 and 3).
    std::vector<std::vector<R>> lambda_small(count);
    std::vector<HostMatrix<R>> s_small_keep;  // host S of merges with k <= 2, alive until the fence below
    const auto merge_vectors = [&](const bool small) {
      for (index_t b = 0; b < count; ++b) {
        const auto& plan = plans[b];
        const index_t lo = lo_h[b], m = m_h[b], n1 = m / 2, k = plan.k;
        if (k == 0 || (k <= 2) != small || (batched_height && k >= 3)) continue;
        HostMatrix<R> s_small_h;
        if (k <= 2) {
          // Tiny S built on the host: the identity for k = 1; for k = 2 ?laed4
          // (through ?laed5) returns the normalized eigenvector itself.
          std::vector<R> s_small(k * k, R(1));
          auto& lambda = lambda_small[b];
          lambda.assign(k, R(0));
          if (k == 1) lambda[0] = plan.dlambda[0] + plan.rho * plan.zw[0] * plan.zw[0];
          for (index_t j = 0; k == 2 && j < 2; ++j) {
            const index_t info = backends::host::laed4<R>(2, j, plan.dlambda.data(), plan.zw.data(), &s_small[2 * j],
                                                          plan.rho, lambda[j]);
            if (info > 0) throw ConvergenceFailure("laed4", info);
          }
          s_small_h = host_matrix_for_copy<R>("keig::stedc::S_small", k, k);
          for (index_t j = 0; j < k; ++j)
            for (index_t r = 0; r < k; ++r) s_small_h(r, j) = s_small[plan.row_of_pole[r] + k * j];
          s_small_keep.push_back(s_small_h);
        }
        const index_t c1 = plan.c1, c12 = plan.c1 + plan.c2, c23 = plan.c2 + plan.c3;
        for (index_t j0 = 0; j0 < k; j0 += panel) {
          const index_t nb = std::min(panel, k - j0);
          Matrix<R, ExecSpace> s(s_panel_all.data(), k, nb);
          if (k <= 2) {
            Kokkos::deep_copy(space, s, Kokkos::subview(s_small_h, Kokkos::ALL(), std::make_pair(j0, j0 + nb)));
          } else {
            for_each_column_entry(
                space, "keig::stedc::secular_vectors", nb, k,
                KOKKOS_LAMBDA(const index_t) { return Kokkos::pair<index_t, index_t>(0, k); },
                KOKKOS_LAMBDA(const index_t r, const index_t jj) {
                  const index_t i = lo + row_pole(lo + r), j = lo + j0 + jj;
                  s(r, jj) = west(i) / ((dlambda(i) - dlambda(lo + origin(j))) - tau(j)) / norm(j);
                });
          }
          auto out = Kokkos::subview(q, std::make_pair(lo, lo + m), std::make_pair(lo + j0, lo + j0 + nb));
          auto top = Kokkos::subview(out, std::make_pair(index_t(0), n1), Kokkos::ALL());
          auto bottom = Kokkos::subview(out, std::make_pair(n1, m), Kokkos::ALL());
          if (c12 > 0)
            backends::gemm<R>(ctx, backends::Op::NoTrans, backends::Op::NoTrans, R(1),
                              Kokkos::subview(gathered, std::make_pair(lo, lo + n1), std::make_pair(lo, lo + c12)),
                              Kokkos::subview(s, std::make_pair(index_t(0), c12), Kokkos::ALL()), R(0), top);
          else
            Kokkos::deep_copy(space, top, R(0));
          if (c23 > 0)
            backends::gemm<R>(
                ctx, backends::Op::NoTrans, backends::Op::NoTrans, R(1),
                Kokkos::subview(gathered, std::make_pair(lo + n1, lo + m), std::make_pair(lo + c1, lo + k)),
                Kokkos::subview(s, std::make_pair(c1, k), Kokkos::ALL()), R(0), bottom);
          else
            Kokkos::deep_copy(space, bottom, R(0));
        }
      }
    };
    merge_vectors(true);
    // The next height's z: Q's rows it needs, as they will be once this
    // height's gemms below have run. For a non-deflated column c of a merge
    // with k >= 3 that is the row's gathered entries times S's column c,
    // formed here from the same roots as S (the gemms sum the same products
    // in another order); every other column of Q is final already.
    if (!last_height) {
      to_device(next_row, next_rows_of(h + 1));
      Kokkos::parallel_for(
          "keig::stedc::z_next_entries", Kokkos::RangePolicy<ExecSpace>(space, 0, n), KOKKOS_LAMBDA(const index_t c) {
            const index_t r = next_row(c), b = merge_of(c);
            if (r < 0 || b < 0 || merge_k(b) < 3 || c - merge_lo(b) >= merge_k(b)) return;
            row_entries(c) = gathered(r, c);  // every column of a merge shares its row r
          });
      positions.for_each_lane(
          space, "keig::stedc::z_next", n,
          KOKKOS_LAMBDA(const index_t p, const index_t lo, const index_t k, const int lane) {
            if (next_row(p) < 0) return;  // the merge is the root
            const R dj = dlambda(lo + origin(p)), tj = tau(p);
            R sum = 0;
            for (index_t r = lane; r < k; r += detail::position_lanes<ExecSpace>) {
              const index_t i = lo + row_pole(lo + r);
              sum += row_entries(lo + r) * (west(i) / ((dlambda(i) - dj) - tj));
            }
            sum = backends::group_sum<detail::position_lanes<ExecSpace>>(sum);
            if (lane == 0) z_rows(p) = sum / norm(p);
          });
      z_rows_from_q(true);
      Kokkos::deep_copy(space, z_rows_h, z_rows);
    }
    Kokkos::deep_copy(space, roots_h, roots);
    space.fence();  // the roots, the next z, and host buffers (small S) outlive their copies

    // Heights whose merges have at most `panel` columns (the lower ones: 224
    // of the 255 merges at n = 16384 with leaves of 64): every merge with
    // k >= 3 takes its whole m x m block at once, Q_block := G_block S_full
    // with S_full = diag(S, I) (S's rows in type order, the deflated columns
    // passed through by the identity), in one batched gemm per merge size --
    // twice the flops of the two half gemms below, which at m <= 512 are
    // nothing next to 2 launches, a kernel and the vendor's setup for each
    // merge (H200, n = 16384: 8.2 ms for the 128 merges of 128 columns).
    // S_full of the merge at positions lo .. lo + m - 1 fills columns lo ..
    // lo + m - 1 of a widest x n matrix in the S workspace.
    if (batched_height) {
      const Matrix<R, ExecSpace> s_full(s_panel_all.data(), widest, n);
      for_each_column_entry(
          space, "keig::stedc::secular_vectors_batched", n, widest,
          KOKKOS_LAMBDA(const index_t c) {
            const index_t b = merge_of(c);
            return Kokkos::pair<index_t, index_t>(0, b >= 0 && merge_k(b) >= 3 ? merge_m(b) : 0);
          },
          KOKKOS_LAMBDA(const index_t r, const index_t c) {
            const index_t b = merge_of(c), lo = merge_lo(b), k = merge_k(b), j = c - lo;
            R v = r == j ? R(1) : R(0);
            if (r < k && j < k) {
              const index_t i = lo + row_pole(lo + r);
              v = west(i) / ((dlambda(i) - dlambda(lo + origin(c))) - tau(c)) / norm(c);
            }
            s_full(r, c) = v;
          });
      // Merges by size (at most a few sizes per height), their operands in
      // runs of equal size.
      std::vector<index_t> order;
      for (index_t b = 0; b < count; ++b)
        if (plans[b].k >= 3) order.push_back(b);
      std::stable_sort(order.begin(), order.end(), [&](index_t a, index_t c) { return m_h[a] < m_h[c]; });
      const index_t batch = static_cast<index_t>(order.size());
      operands_h.resize(3 * batch);
      const index_t ldq = leading_dimension(q);
      for (index_t t = 0; t < batch; ++t) {
        const index_t lo = lo_h[order[t]];  // device addresses, formed on the host
        operands_h[t] = reinterpret_cast<std::uintptr_t>(gathered.data() + lo + lo * ldg);
        operands_h[batch + t] = reinterpret_cast<std::uintptr_t>(s_full.data() + lo * widest);
        operands_h[2 * batch + t] = reinterpret_cast<std::uintptr_t>(q.data() + lo + lo * ldq);
      }
      to_device(operands, operands_h);
      const auto* const a_of = reinterpret_cast<const R* const*>(operands.data());
      const auto* const b_of = reinterpret_cast<const R* const*>(operands.data() + batch);
      auto* const c_of = reinterpret_cast<R* const*>(operands.data() + 2 * batch);
      for (index_t t0 = 0; t0 < batch;) {
        const index_t m = m_h[order[t0]];
        index_t t1 = t0;
        while (t1 < batch && m_h[order[t1]] == m) ++t1;
        backends::gemm_batched<R>(ctx, backends::Op::NoTrans, backends::Op::NoTrans, m, m, m, R(1), a_of + t0,
                                  ldg, b_of + t0, widest, R(0), c_of + t0, ldq, t1 - t0);
        t0 = t1;
      }
    }

    merge_vectors(false);  // not waited for: the next height's plan runs meanwhile

    // Each block's columns now hold: lambda (first k, ascending), then the
    // deflated values (ascending). Its sorted order merges the two lists.
    for (index_t b = 0; b < count; ++b) {
      const auto& plan = plans[b];
      const index_t lo = lo_h[b], m = m_h[b], k = plan.k;
      std::vector<R> values(m);
      for (index_t c = 0; c < k; ++c) values[c] = k <= 2 ? lambda_small[b][c] : roots_h(lo + c);
      for (index_t t = 0; t < m - k; ++t) values[k + t] = plan.deflated_values[t];
      std::vector<index_t> pos(m);
      std::iota(pos.begin(), pos.end(), index_t(0));
      std::inplace_merge(pos.begin(), pos.begin() + k, pos.end(),
                         [&](index_t a, index_t c) { return values[a] < values[c]; });
      for (index_t p = 0; p < m; ++p) {
        ev[lo + p] = values[pos[p]];
        col[lo + p] = k > 0 ? lo + pos[p] : plan.gather[pos[p]];
      }
    }
  }

  // Columns to ascending order, eigenvalues unscaled.
  std::vector<index_t> final_col(col.begin(), col.end());
  to_device(gather, final_col);
  // Columns already in place move in neither pass.
  const auto moved_rows = KOKKOS_LAMBDA(const index_t c) {
    return Kokkos::pair<index_t, index_t>(0, gather(c) == c ? 0 : n);
  };
  for_each_column_entry(
      space, "keig::stedc::sort_columns", n, n, moved_rows,
      KOKKOS_LAMBDA(const index_t i, const index_t c) { gathered(i, c) = q(i, gather(c)); });
  for_each_column_entry(
      space, "keig::stedc::copy_back", n, n, moved_rows,
      KOKKOS_LAMBDA(const index_t i, const index_t c) { q(i, c) = gathered(i, c); });
  for (index_t i = 0; i < n; ++i) d(i) = ev[i] * scale;
  space.fence();
}

}  // namespace keig::stages
