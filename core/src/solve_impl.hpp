// The driver behind keig::eigh: argument checks, then the chosen method as a
// sequence of timed stages. Included by one instantiation file per execution
// space (solve_<space>.cpp) so the spaces compile in parallel.
#pragma once

#include <Kokkos_Core.hpp>
#include <cmath>
#include <string>
#include <type_traits>

#include "keig/backends/vendor_eigensolver.hpp"
#include "keig/detail/solve.hpp"
#include "keig/errors.hpp"
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

  Method method = options.method == Method::Auto ? Method::Vendor : options.method;
  if (method == Method::OneStage)
    throw NotImplemented("Method::OneStage (keig's own one-stage tridiagonalization) is not implemented yet; use "
                         "Method::Vendor or Method::Auto");
  if (method == Method::TwoStage)
    throw NotImplemented("Method::TwoStage (keig's own two-stage tridiagonalization) is not implemented yet; use "
                         "Method::Vendor or Method::Auto");

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
  const backends::Job job = problem.vectors ? backends::Job::Vectors : backends::Job::ValuesOnly;
  // Vendor routines write up to n eigenvalues: use w directly when it is long enough.
  Vector<R, ExecSpace> w_all = w;
  OwnedVector<R, ExecSpace> w_work;
  if (static_cast<index_t>(w.extent(0)) < n) {
    w_work = allocate_vector<R>(space, "keig::eigenvalues", n);
    w_all = w_work;
  }
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
    // The vendor overwrites B with its Cholesky factor: work on a copy so B is preserved.
    auto b_owned = allocate_matrix<T>(space, "keig::vendor::B", n, n);
    Matrix<T, ExecSpace> b_work = b_owned;
    stage("keig::copy_input", 0.0, [&] { copy_matrix(space, b, b_work); });
    call = stage("keig::vendor::eigh_generalized", flops, [&] {
      return backends::vendor_eigh_generalized(ctx, options.generalized_type, job, options.uplo, options.range,
                                               options.tridiagonal_solver, a, b_work, w_all, z);
    });
  }
  result.eigenvalues_found = call.found;
  result.method = "vendor: " + call.routine;
  if (w_all.data() != w.data())
    stage("keig::copy_output", 0.0, [&] {
      copy_vector(space, Vector<R, ExecSpace>(Kokkos::subview(w_all, std::make_pair(index_t(0), call.found))),
                  Vector<R, ExecSpace>(Kokkos::subview(w, std::make_pair(index_t(0), call.found))));
    });
  space.fence();  // results are ready when eigh returns
  result.seconds = total.seconds();
  return result;
}

#define KEIG_INSTANTIATE_SOLVE(T, SPACE)                                                                    \
  template Result solve<T, SPACE>(const SPACE&, const Matrix<T, SPACE>&, const Matrix<T, SPACE>&,          \
                                  const Vector<real_t<T>, SPACE>&, const Matrix<T, SPACE>&, Problem,        \
                                  const Options&);
#define KEIG_INSTANTIATE_SOLVE_ALL(SPACE)              \
  KEIG_INSTANTIATE_SOLVE(float, SPACE)                 \
  KEIG_INSTANTIATE_SOLVE(double, SPACE)                \
  KEIG_INSTANTIATE_SOLVE(Kokkos::complex<float>, SPACE) \
  KEIG_INSTANTIATE_SOLVE(Kokkos::complex<double>, SPACE)

}  // namespace keig::detail
