// The driver behind keig::eigh: argument checks, then the chosen method as a
// sequence of timed stages. Included by one instantiation file per execution
// space (solve_<space>.cpp) so the spaces compile in parallel.
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <type_traits>

#include "keig/backends/vendor_eigensolver.hpp"
#include "keig/stages/bt_sb2st.hpp"
#include "keig/stages/bt_sy2sb.hpp"
#include "keig/stages/ormtr.hpp"
#include "keig/stages/sb2st.hpp"
#include "keig/stages/sy2sb.hpp"
#include "keig/stages/sygst.hpp"
#include "keig/stages/sytrd.hpp"
#include "keig/stages/tridiagonal.hpp"
#include "keig/detail/solve.hpp"
#include "keig/errors.hpp"
#include "keig/views/arena.hpp"
#include "keig/views/kernels.hpp"
#include "keig/views/workspace.hpp"

namespace keig::detail {

// Kokkos Tools region that closes on every exit path.
class ProfilingRegion {
 public:
  explicit ProfilingRegion(const std::string& name) { Kokkos::Profiling::pushRegion(name); }
  ~ProfilingRegion() { Kokkos::Profiling::popRegion(); }
  ProfilingRegion(const ProfilingRegion&) = delete;
  ProfilingRegion& operator=(const ProfilingRegion&) = delete;
};

// Runs a stage inside its profiling region and records its time (fencing the
// instance at the end only when stage times are requested) and model flops.
template <class ExecSpace>
class StageRecorder {
 public:
  StageRecorder(const ExecSpace& space, bool timed, Result& result) : space_(space), timed_(timed), result_(result) {}
  template <class F>
  auto operator()(const std::string& name, double flops, F&& stage) {
    ProfilingRegion region(name);
    Kokkos::Timer timer;
    if constexpr (std::is_void_v<decltype(stage())>) {
      stage();
      finish(name, flops, timer);
    } else {
      auto value = stage();
      finish(name, flops, timer);
      return value;
    }
  }

 private:
  ExecSpace space_;
  bool timed_;
  Result& result_;

  void finish(const std::string& name, double flops, Kokkos::Timer& timer) {
    if (timed_) space_.fence();
    result_.stages.push_back({name, timed_ ? timer.seconds() : 0.0, flops});
  }
};

inline std::string shape(index_t rows, index_t cols) { return std::to_string(rows) + " x " + std::to_string(cols); }

template <class V1, class V2>
bool overlap(const V1& x, const V2& y) {
  if (x.span() == 0 || y.span() == 0) return false;
  const char* x0 = reinterpret_cast<const char*>(x.data());
  const char* y0 = reinterpret_cast<const char*>(y.data());
  const char* x1 = x0 + x.span() * sizeof(typename V1::value_type);
  const char* y1 = y0 + y.span() * sizeof(typename V2::value_type);
  return x0 < y1 && y0 < x1;
}

// Most eigenpairs the range can select (sizes w and Z must accommodate).
inline index_t max_wanted(const Range& range, index_t n) {
  return range.kind == Range::Kind::Index ? range.iu - range.il + 1 : n;
}
// The eigenpairs the range selects where that is known before the
// tridiagonal step; -1 for a value range.
inline index_t known_wanted(const Range& range, index_t n) {
  return range.kind == Range::Kind::Value ? -1 : max_wanted(range, n);
}

template <class T, class ExecSpace>
void check_arguments(const Matrix<T, ExecSpace>& a, const Matrix<T, ExecSpace>& b,
                     const Vector<real_t<T>, ExecSpace>& w, const Matrix<T, ExecSpace>& z, Problem problem,
                     const Options& options) {
  const index_t n = a.extent(0);
  if (static_cast<index_t>(a.extent(1)) != n) throw InvalidArgument("A", "must be square, got " + shape(n, a.extent(1)));
  const Range& r = options.range;
  if (r.kind == Range::Kind::Index) {
    const bool ok = n == 0 ? (r.il == 0 && r.iu == -1) : (0 <= r.il && r.il <= r.iu && r.iu < n);
    if (!ok)
      throw InvalidArgument("options.range", "index range il = " + std::to_string(r.il) + ", iu = " + std::to_string(r.iu) +
                                                 " must satisfy 0 <= il <= iu < n = " + std::to_string(n) +
                                                 (n == 0 ? " (for n = 0: il = 0, iu = -1)" : ""));
  } else if (r.kind == Range::Kind::Value) {
    if (!(r.vl < r.vu) || !std::isfinite(r.vl) || !std::isfinite(r.vu))
      throw InvalidArgument("options.range", "value range (vl, vu] = (" + std::to_string(r.vl) + ", " +
                                                 std::to_string(r.vu) + "] must be finite with vl < vu");
  }
  const index_t wanted = max_wanted(r, n);
  if (static_cast<index_t>(w.extent(0)) < wanted)
    throw InvalidArgument("w", "needs at least " + std::to_string(wanted) + " entries, has " + std::to_string(w.extent(0)));
  if (problem.vectors) {
    if (static_cast<index_t>(z.extent(0)) != n || static_cast<index_t>(z.extent(1)) < wanted)
      throw InvalidArgument("Z", "must be " + std::to_string(n) + " x (at least " + std::to_string(wanted) + "), got " +
                                     shape(z.extent(0), z.extent(1)));
    if (overlap(z, a)) throw InvalidArgument("Z", "must not overlap A");
    if (overlap(z, w)) throw InvalidArgument("Z", "must not overlap w");
    if (problem.generalized && overlap(z, b)) throw InvalidArgument("Z", "must not overlap B");
  }
  if (overlap(w, a)) throw InvalidArgument("w", "must not overlap A");
  if (problem.generalized) {
    if (static_cast<index_t>(b.extent(0)) != n || static_cast<index_t>(b.extent(1)) != n)
      throw InvalidArgument("B", "must be " + shape(n, n) + " like A, got " + shape(b.extent(0), b.extent(1)));
    if (overlap(a, b)) throw InvalidArgument("B", "must not overlap A");
    const int type = static_cast<int>(options.generalized_type);
    if (type < 1 || type > 3)
      throw InvalidArgument("options.generalized_type", "must be 1, 2 or 3, got " + std::to_string(type));
  }
  if (problem.generalized && options.b_factored && options.method == Method::Vendor)
    throw InvalidArgument("options.b_factored", "the vendor generalized solvers factor B themselves; use "
                                                "Method::Auto, OneStage or TwoStage with a pre-factored B");
  if (options.block_size < 0)
    throw InvalidArgument("options.block_size", "must be >= 0, got " + std::to_string(options.block_size));
  if (options.band_width < 0)
    throw InvalidArgument("options.band_width", "must be >= 0, got " + std::to_string(options.band_width));
}

template <class T, class ExecSpace>
void check_finite(const ExecSpace& space, const Matrix<T, ExecSpace>& m, Uplo uplo, const char* name) {
  const index_t bad = find_nonfinite(space, m, uplo);
  if (bad >= 0) throw NonFiniteInput(name, bad % m.extent(0), bad / m.extent(0));
}

// Model flop counts (LAPACK working notes' leading terms, real arithmetic;
// complex costs about 4x): reduction to tridiagonal 4/3 n^3, back-transform
// 2 n^2 m, Cholesky n^3/3, reduction to standard form n^3, triangular solve n^2 m.
inline double reduction_flops(double n) { return 4.0 / 3.0 * n * n * n; }
inline double backtransform_flops(double n, double m) { return 2.0 * n * n * m; }

// ---- Method::Vendor: LAPACK / cuSOLVER dense drivers --------------------------
template <class T, class ExecSpace>
index_t solve_vendor(const backends::Context<ExecSpace>& ctx, StageRecorder<ExecSpace>& stage,
                     const Matrix<T, ExecSpace>& a, const Matrix<T, ExecSpace>& b,
                     const Vector<real_t<T>, ExecSpace>& w_all, const Matrix<T, ExecSpace>& z, Problem problem,
                     const Options& options, Result& result) {
  const ExecSpace& space = ctx.space();
  const index_t n = a.extent(0);
  const backends::Job job = problem.vectors ? backends::Job::Vectors : backends::Job::ValuesOnly;
  const double wanted = static_cast<double>(max_wanted(options.range, n));
  const double cx = is_complex_v<T> ? 4.0 : 1.0;
  double flops = cx * reduction_flops(n) + (problem.vectors ? cx * backtransform_flops(n, wanted) : 0.0);
  backends::VendorCall call;
  if (!problem.generalized) {
    call = stage("keig::vendor::eigh", flops, [&] {
      return backends::vendor_eigh(ctx, job, options.uplo, options.range, options.tridiagonal_solver, a, w_all, z);
    });
  } else {
    flops += cx * (n * double(n) * n / 3.0 + double(n) * n * n + (problem.vectors ? double(n) * n * wanted : 0.0));
    // The vendor overwrites B with its Cholesky factor: work on a copy so B
    // is preserved, with B's leading dimension (the vendor's BLAS-3 speed
    // depends on it: aligned_leading_dimension).
    auto b_owned = allocate_matrix<T>(space, "keig::vendor::B", n, n, leading_dimension(b));
    const Matrix<T, ExecSpace> b_work = b_owned;
    stage("keig::copy_input", 0.0, [&] { copy_matrix(space, b, b_work); });
    call = stage("keig::vendor::eigh_generalized", flops, [&] {
      return backends::vendor_eigh_generalized(ctx, options.generalized_type, job, options.uplo, options.range,
                                               options.tridiagonal_solver, a, b_work, w_all, z);
    });
  }
  result.method = "vendor: " + call.routine;
  return call.found;
}

// ---- Workspace: every stage of keig's pipelines takes its device workspace
// from one Arena (views/arena.hpp says why), allocated before the first
// stage and sized by the *_workspace functions below, which add up the same
// pieces in the same frames as the pipelines take them. Where a size is
// known only later (a value range's eigenpair count) they leave it out and
// the piece comes from the arena if it has room, else from an allocation of
// its own (Result::workspace_fallbacks counts those).

// The tridiagonal eigensolver stage both reductions end in.
template <class T, class ExecSpace>
index_t tridiagonal_stage(const backends::Context<ExecSpace>& ctx, StageRecorder<ExecSpace>& stage, const Vector<real_t<T>, ExecSpace>& d,
                          const Vector<real_t<T>, ExecSpace>& e, const Vector<real_t<T>, ExecSpace>& w_all,
                          const Matrix<T, ExecSpace>& z, bool vectors, const Options& options, Arena<ExecSpace>& arena) {
  const backends::Job job = vectors ? backends::Job::Vectors : backends::Job::ValuesOnly;
  return stage("keig::tridiagonal", 0.0, [&] {
    return stages::tridiagonal_eigenpairs<T, ExecSpace>(ctx, job, options.range, options.tridiagonal_solver, d, e,
                                                        w_all, z, arena);
  });
}
template <class T, class ExecSpace>
void tridiagonal_stage_workspace(ArenaSize& size, index_t n, bool vectors, const Options& options) {
  stages::tridiagonal_workspace<T, ExecSpace>(size, vectors ? backends::Job::Vectors : backends::Job::ValuesOnly,
                                              options.range, options.tridiagonal_solver, n,
                                              known_wanted(options.range, n));
}

// ---- Method::OneStage: keig's sytrd (symv + her2k), tridiagonal, ormtr --------
template <class ExecSpace>
index_t one_stage_block(const Options& options) {
  return options.block_size > 0 ? options.block_size : stages::SytrdTuning<ExecSpace>::default_nb;
}
// Reflector blocks for the back-transformation need not match sytrd's
// panels: wider blocks make its two gemms rank-nbq updates.
template <class ExecSpace>
index_t one_stage_back_block(index_t nb, index_t m) {
  const index_t wide = stages::back_transform_block<ExecSpace>(m);
  return nb > wide ? nb : wide;
}

template <class T, class ExecSpace>
void one_stage_workspace(ArenaSize& size, index_t n, bool vectors, const Options& options) {
  using R = real_t<T>;
  const index_t nb = one_stage_block<ExecSpace>(options), m = known_wanted(options.range, n);
  size.add<R>(n);  // d
  size.add<R>(n);  // e
  size.add<T>(n);  // tau
  {
    const auto frame = size.frame();
    size.add<T>(stages::sytrd_workspace_size<T, ExecSpace>(n, nb));
  }
  tridiagonal_stage_workspace<T, ExecSpace>(size, n, vectors, options);
  if (vectors && m > 0) {
    const auto frame = size.frame();
    size.add<T>(stages::ormtr_workspace_size<T, ExecSpace>(n, m, one_stage_back_block<ExecSpace>(nb, m)));
  }
}

template <class T, class ExecSpace>
index_t solve_one_stage_standard(const backends::Context<ExecSpace>& ctx, StageRecorder<ExecSpace>& stage,
                                 Uplo uplo, const Matrix<T, ExecSpace>& a, const Vector<real_t<T>, ExecSpace>& w_all,
                                 const Matrix<T, ExecSpace>& z, bool vectors, const Options& options,
                                 Arena<ExecSpace>& arena) {
  using R = real_t<T>;
  const index_t n = a.extent(0);
  const index_t nb = one_stage_block<ExecSpace>(options);
  const double cx = is_complex_v<T> ? 4.0 : 1.0;
  const auto d = arena.template vector<R>("keig::sytrd::d", n);
  const auto e = arena.template vector<R>("keig::sytrd::e", n);
  const auto tau = arena.template vector<T>("keig::sytrd::tau", n);
  {
    const auto frame = arena.frame();
    const auto work = arena.template vector<T>("keig::sytrd::work", stages::sytrd_workspace_size<T, ExecSpace>(n, nb));
    stage("keig::sytrd", cx * reduction_flops(n),
          [&] { stages::sytrd<T, ExecSpace>(ctx, uplo, a, d, e, tau, work, nb); });
  }
  const index_t m = tridiagonal_stage<T>(ctx, stage, d, e, w_all, z, vectors, options, arena);
  if (vectors && m > 0) {
    const index_t nbq = one_stage_back_block<ExecSpace>(nb, m);
    const auto frame = arena.frame();
    const auto work =
        arena.template vector<T>("keig::ormtr::work", stages::ormtr_workspace_size<T, ExecSpace>(n, m, nbq));
    stage("keig::ormtr", cx * backtransform_flops(n, m),
          [&] { stages::ormtr<T, ExecSpace>(ctx, a, tau, columns(z, 0, m), work, nbq); });
  }
  return m;
}

// ---- Method::TwoStage: sy2sb (BLAS-3), sb2st (bulge chasing), tridiagonal,
// bt_sb2st, bt_sy2sb. Beyond A and Z its stages take O(n b) (sb2st keeps
// its reflectors in A's strict upper triangle, free once sy2sb is done) and,
// for all pairs, stedc's n x n matrix, whose bytes hold aligned copies of A
// and Z on GPUs where the caller's columns are not aligned (Z's beside the
// back-transformations' own workspace: on_aligned_copy).
template <class ExecSpace>
index_t two_stage_band(index_t n, bool vectors, const Options& options) {
  index_t b = options.band_width > 0
                  ? options.band_width
                  : stages::Sy2sbTuning<ExecSpace>::band(vectors, n, known_wanted(options.range, n));
  if (b > n - 1) b = n > 1 ? n - 1 : 1;  // a wider band is the whole matrix
  return b;
}
// Whether a two-stage solve works on a copy with 256-byte aligned columns
// of the caller's matrix m, A or Z: on devices, for all pairs, where m's
// columns do not all start on 64-byte lines. cuBLAS's BLAS-3 and bt_sb2st's
// window kernel (which moves whole lines of a column's rows) lose on
// columns off 32-byte sectors.
// - Z: the back-transformations (bt_sb2st, bt_sy2sb, then a generalized
//   problem's bt_sygst) run on the copy, which takes the bytes stedc's
//   n x n workspace took, beside their own workspace. H200, generalized
//   solve at n = 20694 with ld = n (16 bytes off on odd columns), the copies
//   in and out included: bt_sb2st 0.981 -> 0.962 s, bt_sy2sb 0.382 -> 0.373 s
//   (docs/measurements.md).
// - A: the reduction (a generalized problem's sygst, sy2sb and sb2st) runs
//   on the copy, in the bytes the tridiagonal step and the
//   back-transformations take after it (the peak grows at most by sy2sb's
//   workspace over stedc's S panel): sygst 0.235 / 0.220 s, sy2sb 0.422 /
//   0.395 s with ld = n / aligned columns. After sb2st the copy goes back to
//   A, which then holds the reflectors the back-transformations read.
template <class ExecSpace>
bool aligned_copies_possible(bool vectors, const Range& range) {
  return stages::is_device_space_v<ExecSpace> && vectors && range.kind == Range::Kind::All;
}
template <class T, class ExecSpace>
bool on_aligned_copy(const Matrix<T, ExecSpace>& m, bool vectors, const Range& range) {
  constexpr index_t line = 64;
  return aligned_copies_possible<ExecSpace>(vectors, range) && m.extent(1) > 1 &&
         (leading_dimension(m) * static_cast<index_t>(sizeof(T))) % line != 0;
}

// One workspace serves both back-transformations, one after the other.
template <class T, class ExecSpace>
index_t two_stage_back_workspace(const ExecSpace& space, index_t n, index_t b, index_t m) {
  const auto tuning = stages::bt_sb2st_default_tuning<ExecSpace, T>(space, m);
  const index_t nbq = stages::bt_sy2sb_block<ExecSpace>(b, m);
  return std::max(stages::bt_sb2st_workspace_size<T>(n, b, tuning, m),
                  stages::ormtr_workspace_size<T, ExecSpace>(n, m, nbq));
}

template <class T, class ExecSpace>
void two_stage_workspace(ArenaSize& size, const ExecSpace& space, index_t n, bool vectors, const Options& options,
                         bool generalized, bool a_copied, bool z_copied) {
  using R = real_t<T>;
  const index_t b = two_stage_band<ExecSpace>(n, vectors, options), m = known_wanted(options.range, n);
  size.add<T>(n);  // tau
  size.add<R>(n);  // d
  size.add<R>(n);  // e
  {
    const auto reduction = size.frame();
    if (a_copied) size.add_matrix<T>(n, n);  // on_aligned_copy(A)
    if (generalized) {
      const auto frame = size.frame();
      size.add<T>(stages::sygst_workspace_size<T, ExecSpace>(n));
    }
    {
      const auto frame = size.frame();
      size.add<T>(stages::sy2sb_workspace_size<T, ExecSpace>(n, b));
    }
    {
      const auto frame = size.frame();
      size.add_matrix<T>(stages::sb2st_band_rows(b), n, stages::sb2st_band_rows(b));
      size.add<T>(stages::sb2st_workspace_size(n, b));
    }
  }
  tridiagonal_stage_workspace<T, ExecSpace>(size, n, vectors, options);
  if (vectors && m > 0) {
    const auto frame = size.frame();
    if (z_copied) size.add_matrix<T>(n, m);  // on_aligned_copy(Z)
    {
      const auto back = size.frame();
      size.add<T>(two_stage_back_workspace<T>(space, n, b, m));
    }
    if (generalized) {
      const auto back = size.frame();
      size.add<T>(stages::sygst_backtransform_workspace_size<T, ExecSpace>(options.generalized_type, n, m));
    }
  }
}

// before_reduction(c, from_a): the stages that run on A before sy2sb (a
// generalized problem's sygst), given the matrix the reduction runs on;
// from_a: c is A's aligned copy (on_aligned_copy), still to be filled from A.
// Returns whether it filled it.
// after_back_transforms(y, z_out), where given: the stages that run on the
// eigenvectors after bt_sy2sb (a generalized problem's bt_sygst), on y,
// Z's aligned copy (on_aligned_copy) or Z's first m columns; where z_out
// is not empty it ends by copying y to it (Z's columns).
template <class T, class ExecSpace>
using AfterBackTransforms = std::function<void(const Matrix<T, ExecSpace>& y, const Matrix<T, ExecSpace>& z_out)>;
template <class T, class ExecSpace, class BeforeReduction>
index_t solve_two_stage_standard(const backends::Context<ExecSpace>& ctx, StageRecorder<ExecSpace>& stage,
                                 Uplo uplo, const Matrix<T, ExecSpace>& a, const Vector<real_t<T>, ExecSpace>& w_all,
                                 const Matrix<T, ExecSpace>& z, bool vectors, const Options& options,
                                 Arena<ExecSpace>& arena, const BeforeReduction& before_reduction,
                                 const AfterBackTransforms<T, ExecSpace>& after_back_transforms) {
  using R = real_t<T>;
  const ExecSpace& space = ctx.space();
  const index_t n = a.extent(0);
  const index_t b = two_stage_band<ExecSpace>(n, vectors, options);
  const double cx = is_complex_v<T> ? 4.0 : 1.0;
  const auto tau = arena.template vector<T>("keig::sy2sb::tau", n);
  const auto d = arena.template vector<R>("keig::sb2st::d", n);
  const auto e = arena.template vector<R>("keig::sb2st::e", n);
  {
    const auto reduction = arena.frame();
    const bool copied = on_aligned_copy<T, ExecSpace>(a, vectors, options.range);
    const Matrix<T, ExecSpace> c = copied ? arena.template matrix<T>("keig::reduction::a", n, n) : a;
    const bool filled = before_reduction(c, copied);
    {
      const auto frame = arena.frame();
      const auto work = arena.template vector<T>("keig::sy2sb::work", stages::sy2sb_workspace_size<T, ExecSpace>(n, b));
      stage("keig::sy2sb", cx * reduction_flops(n), [&] {
        if (copied && !filled) copy_matrix(space, a, c);
        stages::sy2sb<T, ExecSpace>(ctx, uplo, c, tau, work, b);
      });
    }
    {
      const auto frame = arena.frame();
      const index_t rows = stages::sb2st_band_rows(b);
      const auto ab = arena.template matrix<T>("keig::sb2st::band", rows, n, rows);
      const auto work = arena.template vector<T>("keig::sb2st::work", stages::sb2st_workspace_size(n, b));
      // Model: about 6 b^2 flops per step, n/b steps per sweep, n sweeps.
      stage("keig::sb2st", cx * 6.0 * double(n) * n * b, [&] {
        stages::dense_to_band<T, ExecSpace>(space, c, b, ab);
        stages::sb2st<T, ExecSpace>(space, b, ab, d, e, vectors ? c : Matrix<T, ExecSpace>(), work);
        if (copied) copy_matrix(space, c, a);  // sy2sb's and sb2st's reflectors, for the back-transformations
      });
    }
  }
  const index_t m = tridiagonal_stage<T>(ctx, stage, d, e, w_all, z, vectors, options, arena);
  if (vectors && m > 0) {
    const Matrix<T, ExecSpace> zm = columns(z, 0, m);
    const auto tuning = stages::bt_sb2st_default_tuning<ExecSpace, T>(space, m);
    const index_t nbq = stages::bt_sy2sb_block<ExecSpace>(b, m);
    const auto frame = arena.frame();
    const bool copied = on_aligned_copy<T, ExecSpace>(z, vectors, options.range);
    const Matrix<T, ExecSpace> y = copied ? arena.template matrix<T>("keig::back_transform::z", n, m) : zm;
    const bool after = static_cast<bool>(after_back_transforms);
    {
      const auto back = arena.frame();
      const auto work =
          arena.template vector<T>("keig::back_transform::work", two_stage_back_workspace<T>(space, n, b, m));
      stage("keig::bt_sb2st", cx * backtransform_flops(n, m), [&] {
        if (copied) copy_matrix(space, zm, y);
        stages::bt_sb2st<T, ExecSpace>(ctx, b, a, y, work, tuning);
      });
      stage("keig::bt_sy2sb", cx * backtransform_flops(n, m), [&] {
        stages::bt_sy2sb<T, ExecSpace>(ctx, a, b, tau, y, work, nbq);
        if (copied && !after) copy_matrix(space, y, zm);
      });
    }
    if (after) after_back_transforms(y, copied ? zm : Matrix<T, ExecSpace>());
  }
  return m;
}

// Whether the generalized pipeline factors a copy of B (not B itself).
inline bool generalized_factor_copied(Problem problem, const Options& options) {
  return problem.generalized && !(options.b_factored && options.uplo == Uplo::Lower);
}

// The bytes of the arena solve_own_pipeline takes: its pieces in its frames.
// a_copied, z_copied: the two-stage reduction and back-transformations run
// on aligned copies of A and Z (on_aligned_copy).
template <class T, class ExecSpace>
std::size_t own_pipeline_workspace(const ExecSpace& space, index_t n, Problem problem, Method method,
                                   const Options& options, bool a_copied, bool z_copied) {
  const index_t known = known_wanted(options.range, n);
  ArenaSize size;
  if (generalized_factor_copied(problem, options)) size.add_matrix<T>(n, n);  // L
  if (method == Method::TwoStage) {
    two_stage_workspace<T, ExecSpace>(size, space, n, problem.vectors, options, problem.generalized, a_copied,
                                      z_copied);
  } else {
    if (problem.generalized) {
      const auto frame = size.frame();
      size.add<T>(stages::sygst_workspace_size<T, ExecSpace>(n));
    }
    one_stage_workspace<T, ExecSpace>(size, n, problem.vectors, options);
  }
  // The two-stage pipeline runs bt_sygst in its back-transformation frame
  // (after_back_transforms), beside Z's aligned copy.
  if (method != Method::TwoStage && problem.generalized && problem.vectors && known > 0) {
    const auto frame = size.frame();
    size.add<T>(stages::sygst_backtransform_workspace_size<T, ExecSpace>(options.generalized_type, n, known));
  }
  return size.bytes();
}

// keig's own pipelines. Generalized problems (seed 002 §4.1): B = L L^H
// (potrf, skipped when the caller passes the factor), C = sygst(A, L), the
// standard problem for C, then Z = L^-H Y (types 1, 2) or L Y (type 3).
template <class T, class ExecSpace>
index_t solve_own_pipeline(const backends::Context<ExecSpace>& ctx, StageRecorder<ExecSpace>& stage, Method method,
                           const Matrix<T, ExecSpace>& a, const Matrix<T, ExecSpace>& b,
                           const Vector<real_t<T>, ExecSpace>& w_all, const Matrix<T, ExecSpace>& z, Problem problem,
                           const Options& options, Result& result) {
  using backends::Diag;
  using backends::Op;
  using backends::Side;
  const bool dc = options.tridiagonal_solver == TridiagonalSolver::DivideAndConquer ||
                  (options.tridiagonal_solver == TridiagonalSolver::Auto && options.range.kind == Range::Kind::All &&
                   problem.vectors);
  const bool bisection = options.tridiagonal_solver == TridiagonalSolver::BisectionInverseIteration ||
                         (options.tridiagonal_solver == TridiagonalSolver::Auto && options.range.kind != Range::Kind::All &&
                          problem.vectors);
  const bool two_stage = method == Method::TwoStage;
  constexpr bool device = stages::is_device_space_v<ExecSpace>;
  const bool device_bisection = device && !problem.vectors &&
                                (bisection || options.tridiagonal_solver == TridiagonalSolver::Auto);
  const bool device_inverse_iteration = device && problem.vectors && bisection && options.range.kind != Range::Kind::All;
  const std::string tridiagonal_name = dc ? (problem.vectors ? (device ? "keig stedc (device merges)" : "keig stedc") : "stedc")
                                       : device_bisection         ? "keig bisection"
                                       : device_inverse_iteration ? "keig bisection + inverse iteration"
                                       : bisection                ? "stebz+stein"
                                                                  : "stemr";
  result.method = std::string(two_stage ? "two-stage: keig sy2sb, sb2st, " : "one-stage: keig sytrd (symv + her2k), ") +
                  tridiagonal_name +
                  (problem.vectors ? (two_stage ? ", bt_sb2st, bt_sy2sb" : ", ormtr") : "");
  const ExecSpace& space = ctx.space();
  const index_t n = a.extent(0);
  const bool own_factor = generalized_factor_copied(problem, options);
  // The caller's workspace (solve checked its size), else one allocation.
  Arena<ExecSpace> arena =
      options.workspace != nullptr
          ? Arena<ExecSpace>(space, "keig::workspace", options.workspace, options.workspace_size)
          : Arena<ExecSpace>(space, "keig::workspace",
                             own_pipeline_workspace<T>(
                                 space, n, problem, method, options,
                                 on_aligned_copy<T, ExecSpace>(a, problem.vectors, options.range),
                                 on_aligned_copy<T, ExecSpace>(z, problem.vectors, options.range)));
  result.workspace_bytes = arena.capacity();
  const double cx = is_complex_v<T> ? 4.0 : 1.0;
  // The generalized problem's sygst on c, filled from A first where from_a.
  const auto sygst_stage = [&](const Matrix<T, ExecSpace>& c, const Matrix<T, ExecSpace>& l, bool from_a) {
    stage("keig::sygst", cx * stages::sygst_flops(n), [&] {
      if (from_a) copy_matrix(space, a, c);
      if (options.uplo == Uplo::Upper) stages::detail::mirror_upper_to_lower(space, c);
      const auto frame = arena.frame();
      const auto work = arena.template vector<T>("keig::sygst::work", stages::sygst_workspace_size<T, ExecSpace>(n));
      stages::sygst<T, ExecSpace>(ctx, options.generalized_type, c, l, 0, work);
    });
    return from_a;
  };
  // The generalized problem's back-transformation of the eigenvectors y of
  // C, then y copied to z_out where that is not empty.
  const auto bt_sygst_stage = [&](const Matrix<T, ExecSpace>& l, const Matrix<T, ExecSpace>& y,
                                  const Matrix<T, ExecSpace>& z_out) {
    const index_t m = y.extent(1);
    stage("keig::bt_sygst", cx * double(n) * n * m, [&] {
      const auto frame = arena.frame();
      const auto work = arena.template vector<T>(
          "keig::bt_sygst::work",
          stages::sygst_backtransform_workspace_size<T, ExecSpace>(options.generalized_type, n, m));
      stages::sygst_backtransform<T, ExecSpace>(ctx, options.generalized_type, l, y, 0, work);
      if (z_out.data() != nullptr) copy_matrix(space, y, z_out);
    });
  };
  // The standard problem for A (l empty) or for C = sygst(A, l), and for
  // the latter the eigenvectors' back-transformation.
  const auto solve_for = [&](Uplo uplo, const Matrix<T, ExecSpace>& l) {
    const bool generalized = l.data() != nullptr;
    if (two_stage) {
      // On GPUs bt_sygst runs on Z's aligned copy (on_aligned_copy), whose columns its gemms
      // read faster. H200, generalized n = 20694, ld = n, alternating processes: bt_sygst with the copy out
      // 0.170-0.171 s against 0.173 s plus the 2 ms copy out after bt_sy2sb before.
      AfterBackTransforms<T, ExecSpace> after;
      if (generalized)
        after = [&](const Matrix<T, ExecSpace>& y, const Matrix<T, ExecSpace>& z_out) { bt_sygst_stage(l, y, z_out); };
      return solve_two_stage_standard(
          ctx, stage, uplo, a, w_all, z, problem.vectors, options, arena,
          [&](const Matrix<T, ExecSpace>& c, bool from_a) { return generalized && sygst_stage(c, l, from_a); }, after);
    }
    if (generalized) sygst_stage(a, l, false);
    const index_t m = solve_one_stage_standard(ctx, stage, uplo, a, w_all, z, problem.vectors, options, arena);
    if (generalized && problem.vectors && m > 0) bt_sygst_stage(l, columns(z, 0, m), Matrix<T, ExecSpace>());
    return m;
  };
  const auto finish = [&](index_t m) {
    result.workspace_fallbacks = arena.fallbacks();
    return m;
  };
  if (!problem.generalized) return finish(solve_for(options.uplo, Matrix<T, ExecSpace>()));
  // L, the lower Cholesky factor of B (B = L L^H): B itself when the caller
  // passes a lower factor, otherwise a copy with 256-byte aligned columns
  // (B is never modified; sygst's and its back-transformation's BLAS-3 run
  // faster on those: aligned_leading_dimension).
  const Matrix<T, ExecSpace> l = own_factor ? arena.template matrix<T>("keig::generalized::L", n, n) : b;
  stage(options.b_factored ? "keig::copy_factor" : "keig::potrf", options.b_factored ? 0.0 : cx * n * double(n) * n / 3.0,
        [&] {
          if (l.data() != b.data()) copy_matrix(space, b, l);
          if (options.uplo == Uplo::Upper) stages::detail::mirror_upper_to_lower(space, l);  // U^H = L
          if (!options.b_factored) backends::potrf<T>(ctx, Uplo::Lower, l, "B");
        });
  return finish(solve_for(Uplo::Lower, l));
}

// Method::Auto: the fastest method measured for this backend and problem
// (keig-bench, docs/measurements.md); a pre-factored B needs keig's own pipeline.
inline constexpr index_t host_two_stage_values_from = 1500;
inline constexpr index_t host_one_stage_vectors_from = 1000;
inline constexpr index_t host_two_stage_subsets_from = 2000;
template <class T, class ExecSpace>
Method choose_method(index_t n, Problem problem, const Options& options) {
  if (problem.generalized && options.b_factored) return Method::TwoStage;
  // Hosts (2-core Xeon with AVX-512, OpenBLAS's OpenMP build), against
  // LAPACK in the same run. Eigenvalues only: two-stage 0.81x of dsyevd at
  // n = 1000, 1.31x at 1500, 1.4-1.8x at 2000-4000; generalized 1.00x of
  // dsygvd at 1000, 2.0-2.6x at 2000-4000. All vectors: one-stage 1.03x of
  // dsyevd at 500, 1.11-1.23x at 1000-4000 (two-stage 0.90-0.96x at 1000,
  // 1.02-1.14x at 2000-4000); generalized one-stage 1.10-1.16x of dsygvd at
  // 1000-4000. The 1 % smallest pairs: two-stage 0.71x of dsyevr at 1000,
  // 1.39x at 2000, 1.73x at 4000; generalized 0.80x / 1.20x / 1.44x of
  // dsygvx at 1000 / 2000 / 4000.
  if (!stages::is_device_space_v<ExecSpace>) {
    if (!problem.vectors) return n >= host_two_stage_values_from ? Method::TwoStage : Method::Vendor;
    if (options.range.kind == Range::Kind::All) return n >= host_one_stage_vectors_from ? Method::OneStage : Method::Vendor;
    return n >= host_two_stage_subsets_from ? Method::TwoStage : Method::Vendor;
  }
  // Crossovers measured with keig-bench on the H200 (two-stage against
  // cuSOLVER, same run, --runs 2; 2026-11-22, third stop). Standard,
  // eigenvalues only, double: 0.83x at n = 2048, 1.06x at 2560, 1.25x at
  // 3072 (complex<double> 1.17x), 1.74x at 4096, 2.5-3.1x at 5120-6144;
  // float / complex<float>: 0.87x / 0.79x at 3072, 1.09x / 1.05x at 4096,
  // 1.59x / 1.51x at 5120. All vectors (2026-11-23, after sy2sb's wider
  // block columns), double: 0.81x at 4096 (earlier), 1.11x at 5120, 1.22x at
  // 5632, 1.49x at 8192 (earlier); float 1.09x / 1.20x / 1.31x at 5120 / 5632
  // / 6144, complex<double> 1.05x / 1.10x / 1.16x; complex<float> 0.88x /
  // 0.95x / 1.00x there and 1.02x / 1.05x at 7168 / 8192 (earlier); float
  // since bt_sb2st's window kernel takes it (H100, 2026-11-24, twenty-first
  // stop): 1.04x / 1.14x / 1.30x / 1.36x at 3584 / 4096 / 4608 / 5120, so
  // float from 4608, not 4096 (on the H200 the peer gains more from its
  // memory); complex since the window kernel takes it (H100, twenty-second
  // stop): complex<double> 1.13x / 1.38x / 1.49x at 3584 / 4096 / 5120,
  // complex<float> 0.88x / 1.02x / 1.28x / 1.46x at 4096 / 5120 / 6144 /
  // 8192, so from 4096 and 6144. The 1 % smallest pairs (keig's device
  // inverse iteration against Xsyevdx): 0.89x at 4096, 1.29x at 5120
  // (1.11-1.36x for the other types).
  // An index range of fewer than Sy2sbTuning::few_vectors pairs runs on the
  // band of 32 up to n = few_vectors_max_n (2026-11-23, fourth stop, then up
  // to 16384; ninth stop 6144), and in double precision from n = 4096 /
  // 4000: double 0.90x / 1.19x at 3072 / 4096, complex<double> 0.98x /
  // 1.43x; generalized 0.83x / 1.08x and 0.88x / 1.33x at 3000 / 4000;
  // float and complex<float> still lose there (0.89x / 0.91x at 4096, 0.84x
  // / 0.89x generalized at 4000).
  constexpr bool single = sizeof(real_t<T>) == 4;
  const bool few_double_pairs =
      !single && stages::Sy2sbTuning<ExecSpace>::few_pairs(n, known_wanted(options.range, n));
  if (!problem.generalized) {
    if (!problem.vectors) return n >= (single ? 5120 : 3072) ? Method::TwoStage : Method::Vendor;
    if (options.range.kind == Range::Kind::All) {
      const index_t from = is_complex_v<T> ? (single ? 6144 : 4096) : (single ? 4608 : 5120);
      return n >= from ? Method::TwoStage : Method::Vendor;
    }
    return n >= (few_double_pairs ? 4096 : 5120) ? Method::TwoStage : Method::Vendor;
  }
  // Generalized IC-NMA-like pairs against ?sygvd / ?sygvdx, double:
  // eigenvalues only 1.08x at n = 3000, 1.42x at 4000 (complex<double>
  // 1.43x; float 0.98x, complex<float> 1.04x, both 1.27-1.36x at 4998),
  // 1.9-2.7x at 4998-7000; all vectors (2026-11-23, after sygst's wider
  // steps) 1.06x at 4998, 1.17x at 5500, 1.27x at 6000 (float 1.05x / 1.22x /
  // 1.33x, complex<double> 1.02x / 1.06x / 1.10x, complex<float> 0.97x at
  // 5500 and 1.03x at 6000), 1.61x at 10884; the 1 %
  // smallest 0.82x at 4000, 1.13x at 4998 (the other types 1.10-1.27x),
  // 1.28-1.67x at 5500-7000; complex all vectors since bt_sb2st's window
  // kernel takes it (H100, twenty-second stop): complex<double> 1.32x /
  // 1.38x / 1.44x at 4000 / 4500 / 4998, complex<float> 1.14x / 1.22x /
  // 1.27x at 4998 / 5500 / 6000, so from 4000 and 4998. At n = 30504
  // cuSOLVER's 32-bit ?sygvd(x) refuse the size.
  if (!problem.vectors) return n >= (single ? 4998 : 4000) ? Method::TwoStage : Method::Vendor;
  if (options.range.kind == Range::Kind::All)
    return n >= (is_complex_v<T> && !single ? 4000 : 4998) ? Method::TwoStage : Method::Vendor;
  return n >= (few_double_pairs ? 4000 : 4998) ? Method::TwoStage : Method::Vendor;
}

template <class T, class ExecSpace>
std::size_t workspace_bytes(const ExecSpace& space, index_t n, Problem problem, const Options& options) {
  const Method method = options.method == Method::Auto ? choose_method<T, ExecSpace>(n, problem, options) : options.method;
  if (method == Method::Vendor || n <= 0) return 0;
  // The alignment slack: Arena starts the caller's memory on a 256-byte
  // boundary. A's and Z's layouts are not known here: their aligned copies
  // are counted wherever they may be taken.
  const bool copies = aligned_copies_possible<ExecSpace>(problem.vectors, options.range);
  return own_pipeline_workspace<T>(space, n, problem, method, options, copies, copies) + arena_alignment;
}

// A caller's workspace: both fields or neither, and large enough.
template <class T, class ExecSpace>
void check_workspace(const ExecSpace& space, index_t n, Problem problem, const Options& options) {
  if (options.workspace == nullptr && options.workspace_size == 0) return;
  if (options.workspace == nullptr)
    throw InvalidArgument("options.workspace", "is null while options.workspace_size = " +
                                                   std::to_string(options.workspace_size));
  const std::size_t needed = workspace_bytes<T>(space, n, problem, options);
  if (options.workspace_size < needed)
    throw InvalidArgument("options.workspace", "needs at least " + std::to_string(needed) +
                                                   " bytes for this problem (keig::workspace_bytes), got " +
                                                   std::to_string(options.workspace_size));
}

template <class T, class ExecSpace>
Result solve(const ExecSpace& space, const Matrix<T, ExecSpace>& a, const Matrix<T, ExecSpace>& b,
             const Vector<real_t<T>, ExecSpace>& w, const Matrix<T, ExecSpace>& z, Problem problem,
             const Options& options) {
  using R = real_t<T>;
  ProfilingRegion region(problem.generalized ? "keig::eigh_generalized" : "keig::eigh");
  Kokkos::Timer total;
  check_arguments<T, ExecSpace>(a, b, w, z, problem, options);

  Result result;
  result.execution_space = ExecSpace::name();
  const index_t n = a.extent(0);
  StageRecorder<ExecSpace> stage(space, options.stage_times, result);

  const Method method = options.method == Method::Auto ? choose_method<T, ExecSpace>(n, problem, options) : options.method;
  check_workspace<T>(space, n, problem, options);

  if (options.check_finite && n > 0) {
    stage("keig::check_finite", 0.0, [&] {
      check_finite(space, a, options.uplo, "A");
      if (problem.generalized) check_finite(space, b, options.uplo, "B");
    });
  }
  if (n == 0) {
    result.method = "none (n = 0)";
    result.seconds = total.seconds();
    return result;
  }

  backends::Context<ExecSpace> ctx(space);
  // The solvers write up to n eigenvalues: use w directly when it is long enough.
  Vector<R, ExecSpace> w_all = w;
  OwnedVector<R, ExecSpace> w_work;
  if (static_cast<index_t>(w.extent(0)) < n) {
    w_work = allocate_vector<R>(space, "keig::eigenvalues", n);
    w_all = w_work;
  }
  const index_t found = method == Method::Vendor
                            ? solve_vendor<T, ExecSpace>(ctx, stage, a, b, w_all, z, problem, options, result)
                            : solve_own_pipeline<T, ExecSpace>(ctx, stage, method, a, b, w_all, z, problem, options,
                                                               result);
  result.eigenvalues_found = found;
  if (w_all.data() != w.data())
    stage("keig::copy_output", 0.0, [&] {
      copy_vector(space, Vector<R, ExecSpace>(Kokkos::subview(w_all, std::make_pair(index_t(0), found))),
                  Vector<R, ExecSpace>(Kokkos::subview(w, std::make_pair(index_t(0), found))));
    });
  space.fence();  // results are ready when eigh returns
  result.seconds = total.seconds();
  return result;
}

#define KEIG_INSTANTIATE_SOLVE(T, SPACE)                                                                    \
  template Result solve<T, SPACE>(const SPACE&, const Matrix<T, SPACE>&, const Matrix<T, SPACE>&,          \
                                  const Vector<real_t<T>, SPACE>&, const Matrix<T, SPACE>&, Problem,        \
                                  const Options&);                                                          \
  template std::size_t workspace_bytes<T, SPACE>(const SPACE&, index_t, Problem, const Options&);
#define KEIG_INSTANTIATE_SOLVE_ALL(SPACE)              \
  KEIG_INSTANTIATE_SOLVE(float, SPACE)                 \
  KEIG_INSTANTIATE_SOLVE(double, SPACE)                \
  KEIG_INSTANTIATE_SOLVE(Kokkos::complex<float>, SPACE) \
  KEIG_INSTANTIATE_SOLVE(Kokkos::complex<double>, SPACE)

}  // namespace keig::detail
