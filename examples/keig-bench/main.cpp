// keig-bench: keig against the peer a user would otherwise pick, measured in
// the same run on the same data (cuBLAS/cuSOLVER on CUDA, OpenBLAS/LAPACK on
// hosts). Prints a table and writes one CSV row per case:
//   n,case,keig_seconds,peer,peer_seconds,ratio,detail
// ratio = peer_seconds / keig_seconds (> 1: keig is faster).
//
//   keig-bench [--suite symv|eigh|generalized|sy2sb|sb2st|sygst|bt_sb2st|all] [--n 4096,8192] [--type double|float|cdouble|cfloat]
//              [--space device|host] [--repeat R] [--jobs values,vectors,subset] [--csv FILE]
//              [--methods one-stage,two-stage] [--band B] [--peer vendor|none] [--verify]
//              [--solver auto|dc|mrrr|bisection] [--runs R]   (eigh, generalized: the fastest of R solves, keig and peer alike)
//              [--stage-times 1|0]           (eigh, generalized: 0 runs keig's solves without the fences that time
//                                             each stage; its rows then show the whole call only)
//              [--ld packed|aligned]         (eigh, generalized: A, B and Z with leading dimension n, or with
//                                             columns on 256-byte boundaries; keig and the peer get the same arrays)
//              [--problem-type 1,2,3]        (generalized, sygst: A x = l B x, A B x = l x, B A x = l x;
//                                             --verify checks type 1 only)
//              [--symv-segments 1,2,4,...]   (symv tuning sweep: blocks per device team)
//              [--uplo lower,upper]          (symv: the stored triangles measured; default both)
//              [--sweeps 16,32,...] [--chunks 2048,n] [--t-factors gram,dots] [--fold-t 0,1,...,9]
//              [--queue L:R,...]
//              [--batches 1,8] [--cols M]
//                                            (bt_sb2st block shapes, M wanted columns (default n);
//                                             suite bt_sb2st only, not in "all")
//              [--groups 1,2,4]              (sy2sb: panels per trailing update; suite sy2sb only)
//              [--blocks 2048,...] [--splits 256,1024,...]
//                                            (sy2sb: Blocked update block-column widths, diagonal-block
//                                             sub-column widths; suite sy2sb only)
#include <Kokkos_Core.hpp>
#include <Kokkos_Random.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "keig/backends/blas.hpp"
#include "keig/backends/lapack.hpp"
#include "keig/generate.hpp"
#include "keig/keig.hpp"
#include "keig/stages/bt_sb2st.hpp"
#include "keig/stages/bt_sy2sb.hpp"
#include "keig/stages/ormtr.hpp"
#include "keig/stages/sb2st.hpp"
#include "keig/stages/sy2sb.hpp"
#include "keig/stages/sygst.hpp"
#include "keig/stages/symv.hpp"
#include "keig/views/workspace.hpp"

namespace {

using keig::index_t;

struct Args {
  std::string suite = "all", type = "double", space = "device", csv = "keig-bench.csv";
  std::vector<index_t> sizes = {1024, 2048};
  std::vector<std::string> jobs = {"values", "vectors"};
  std::vector<std::string> methods = {"one-stage", "two-stage"};
  int band = 0;  // two-stage half-bandwidth; 0 = keig's default
  int panel = 0;  // eigh, generalized: the reductions' panel width (Options::block_size); 0 = keig's default
  std::string peer = "vendor";  // eigh, generalized suites: "none" skips the vendor (sizes it cannot hold)
  keig::TridiagonalSolver solver = keig::TridiagonalSolver::Auto;  // eigh, generalized: keig's tridiagonal step
  bool verify = false;          // eigh, generalized suites: the accuracy contract on the execution space
  bool stage_times = true;      // eigh, generalized: keig's solves fence and time each stage (Options::stage_times)
  std::vector<index_t> symv_segments;  // extra symv rows with a fixed segment length (tuning sweep)
  std::vector<keig::Uplo> uplos = {keig::Uplo::Lower, keig::Uplo::Upper};  // symv's stored triangles
  int repeat = 20;
  int runs = 1;  // eigh, generalized suites: solves per side and case; the fastest counts (first-use costs at a size drop out)
  // eigh, generalized suites: A, B and Z with leading dimension n ("packed",
  // as a caller's n x n Views) or keig::aligned_leading_dimension ("aligned").
  bool aligned_ld = false;
  std::vector<keig::GeneralizedType> problem_types = {keig::GeneralizedType::AxLBx};  // generalized suite
  // bt_sb2st suite: sigma values (empty: 16,32,64,128 on CUDA, 32 on hosts),
  // column chunks (0 stands for n), T factors and apply forms of the full runs.
  std::vector<index_t> sweeps, chunks = {2048, 0};
  std::vector<std::string> t_factors = {"gram"};
  std::vector<int> fold_t = {0, 1};
  std::vector<index_t> batches = {8};  // bt_sb2st waves per T-factor batch
  // bt_sb2st --fold-t 8: queued sequences of L batches a launch in R copies of V and W, as "L:R".
  std::vector<std::pair<index_t, index_t>> queues = {{4, 4}};
  index_t cols = 0;                    // bt_sb2st: wanted columns of Z (0: n), as for a subset of pairs
  std::vector<index_t> groups;         // sy2sb suite: panels per update to time besides the default (and 1)
  std::vector<index_t> blocks;         // sy2sb suite: Blocked update block-column widths to time besides the default
  std::vector<index_t> splits;         // sy2sb suite: diagonal-block sub-column widths to time besides the default
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string p; std::getline(in, p, ',');)
    if (!p.empty()) out.push_back(p);
  return out;
}

[[noreturn]] void usage(const std::string& error) {
  std::fprintf(stderr,
               "keig-bench: %s\nusage: keig-bench [--suite symv|eigh|generalized|sy2sb|sb2st|sygst|bt_sb2st|all] [--n N1,N2,...] [--type double|float|cdouble|cfloat]\n"
               "                  [--space device|host] [--repeat R] [--jobs values,vectors,subset] [--csv FILE]\n"
               "                  [--methods one-stage,two-stage] [--band B] [--panel NB] [--peer vendor|none] [--verify]\n"
               "                  [--solver auto|dc|mrrr|bisection] [--runs R] [--ld packed|aligned] [--stage-times 1|0]\n"
               "                  [--problem-type 1,2,3]\n"
               "                  [--symv-segments S1,S2,...] [--uplo lower,upper]\n"
               "                  [--sweeps S1,S2,...] [--chunks C1,n,...] [--t-factors gram,dots] [--fold-t 0,1,...,9]\n"
               "                  [--queue L:R,...]\n"
               "                  [--batches B1,B2,...] [--cols M] [--groups G1,G2,...] [--blocks NB1,NB2,...]\n"
               "                  [--splits S1,S2,...]\n",
               error.c_str());
  std::exit(2);
}

struct Row {
  index_t n;
  std::string what, peer, detail;
  double keig_s, peer_s;
};

// A problem matrix of the eigh and generalized suites (--ld).
template <class T, class Space>
keig::OwnedMatrix<T, Space> problem_matrix(const Args& args, const Space& space, const std::string& label, index_t rows,
                                           index_t cols) {
  return args.aligned_ld ? keig::allocate_matrix_aligned<T>(space, label, rows, cols)
                         : keig::allocate_matrix<T>(space, label, rows, cols);
}

// Deterministic pseudo-random Hermitian matrix with variance-1 entries, made on
// the execution space (host generation would dominate at n = 32768).
template <class T, class Space>
void fill_random_hermitian(const Space& space, const keig::Matrix<T, Space>& a, std::uint64_t seed) {
  const index_t rows = a.extent(0), cols = a.extent(1);  // a rectangle: its entries as in the square's
  using Policy = Kokkos::MDRangePolicy<Space, Kokkos::Rank<2, Kokkos::Iterate::Left, Kokkos::Iterate::Left>>;
  Kokkos::parallel_for(
      "keig::bench::fill", Policy(space, {0, 0}, {rows, cols}), KOKKOS_LAMBDA(const index_t i, const index_t j) {
        const index_t r = i > j ? i : j, c = i > j ? j : i;
        auto uniform = [&](std::uint64_t salt) {  // splitmix64 of (r, c, salt) -> [-sqrt(3), sqrt(3)]
          std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (std::uint64_t(r) * 2654435761ull + std::uint64_t(c) + salt);
          z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
          z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
          z ^= z >> 31;
          return (double(z >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0) * 1.7320508075688772;
        };
        using R = keig::real_t<T>;
        T value;
        if constexpr (keig::is_complex_v<T>) {
          const R re = R(uniform(1) * 0.7071067811865476), im = R(r == c ? 0.0 : uniform(2) * 0.7071067811865476);
          value = i >= j ? T(re, im) : T(re, -im);
        } else {
          value = R(uniform(1));
        }
        a(i, j) = value;  // captured outside the constexpr-if (nvcc extended-lambda rule)
      });
}

template <class Space>
double copy_bandwidth(const Space& space) {
  const index_t count = index_t(1) << 27;  // 1 GiB of doubles each way
  auto src = keig::allocate_vector<double>(space, "keig::bench::src", count);
  auto dst = keig::allocate_vector<double>(space, "keig::bench::dst", count);
  Kokkos::deep_copy(space, src, 1.0);
  std::vector<double> t;
  for (int r = 0; r < 6; ++r) {
    space.fence();
    Kokkos::Timer timer;
    Kokkos::deep_copy(space, dst, src);  // cudaMemcpy on devices, memcpy on hosts
    space.fence();
    if (r > 0) t.push_back(timer.seconds());
  }
  std::sort(t.begin(), t.end());
  return 2.0 * count * sizeof(double) / t[t.size() / 2];
}

template <class F>
double median_seconds(int repeat, const F& f) {
  std::vector<double> t;
  f();  // warm-up
  for (int r = 0; r < repeat; ++r) {
    Kokkos::Timer timer;
    f();
    t.push_back(timer.seconds());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Seconds per call of f when `calls` calls are queued back to back and
// fenced once (the median of `repeat` such rounds): the device's time per
// call without the host's launch and fence latency, as inside a solver
// that queues its products.
template <class Space, class F>
double back_to_back_seconds(const Space& space, int repeat, const F& f) {
  constexpr int calls = 20;
  std::vector<double> t;
  f();
  space.fence();
  for (int r = 0; r < std::max(repeat / 4, 3); ++r) {
    Kokkos::Timer timer;
    for (int c = 0; c < calls; ++c) f();
    space.fence();
    t.push_back(timer.seconds() / calls);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

template <class T, class Space>
void bench_symv(const Args& args, const Space& space, double bandwidth, std::vector<Row>& rows) {
  keig::backends::Context<Space> ctx(space);
  for (index_t n : args.sizes) {
    auto a_owned = keig::allocate_matrix<T>(space, "keig::bench::A", n, n);
    keig::Matrix<T, Space> a = a_owned;
    fill_random_hermitian<T>(space, a, 7);
    auto x = keig::allocate_vector<T>(space, "keig::bench::x", n);
    auto y = keig::allocate_vector<T>(space, "keig::bench::y", n);
    auto y_peer = keig::allocate_vector<T>(space, "keig::bench::y_peer", n);
    auto work = keig::allocate_vector<T>(space, "keig::bench::work", keig::stages::symv_workspace_size<T, Space>(n));
    Kokkos::deep_copy(space, x, T(1));
    const keig::Vector<T, Space> xv = x, yv = y, ypv = y_peer, wv = work;
    for (const keig::Uplo uplo : args.uplos) {
    const double keig_s = median_seconds(args.repeat, [&] {
      keig::stages::symv<T, Space>(space, uplo, T(1), a, xv, T(0), yv, wv);
      space.fence();
    });
    for (index_t seg : args.symv_segments) {
      const double t = median_seconds(args.repeat, [&] {
        keig::stages::symv<T, Space>(space, uplo, T(1), a, xv, T(0), yv, wv, seg);
        space.fence();
      });
      const double useful = (double(n) * (n + 1) / 2 + 2.0 * n) * sizeof(T);
      char d[96];
      std::snprintf(d, sizeof d, "keig %.0f GB/s (%.0f%% of copy)", useful / t / 1e9, 100 * useful / t / bandwidth);
      rows.push_back({n, std::string("symv ") + keig::to_string(uplo) + " segment=" + std::to_string(seg), "(sweep)", d,
                      t, t});
    }
    const double peer_s = median_seconds(args.repeat, [&] {
      keig::backends::symv<T>(ctx, uplo, T(1), a, xv, T(0), ypv);
      space.fence();
    });
    const double keig_queued = back_to_back_seconds(
        space, args.repeat, [&] { keig::stages::symv<T, Space>(space, uplo, T(1), a, xv, T(0), yv, wv); });
    const double peer_queued = back_to_back_seconds(
        space, args.repeat, [&] { keig::backends::symv<T>(ctx, uplo, T(1), a, xv, T(0), ypv); });
    // Agreement of the two products (relative, max norm).
    double diff = 0, scale = 0;
    Kokkos::parallel_reduce(
        "keig::bench::diff", Kokkos::RangePolicy<Space>(space, 0, n),
        KOKKOS_LAMBDA(const index_t i, double& m) {
          const double d = keig::compat::sqrt(double(keig::abs_squared(T(yv(i) - ypv(i)))));
          m = d > m ? d : m;
        },
        Kokkos::Max<double>(diff));
    Kokkos::parallel_reduce(
        "keig::bench::scale", Kokkos::RangePolicy<Space>(space, 0, n),
        KOKKOS_LAMBDA(const index_t i, double& m) {
          const double d = keig::compat::sqrt(double(keig::abs_squared(ypv(i))));
          m = d > m ? d : m;
        },
        Kokkos::Max<double>(scale));
    const double useful = (double(n) * (n + 1) / 2 + 2.0 * n) * sizeof(T);
    char detail[320];
    std::snprintf(detail, sizeof detail,
                  "keig %.0f GB/s (%.0f%% of copy %.0f GB/s); peer %.0f GB/s; queued back to back: keig %.0f%% of "
                  "copy, peer %.0f%%; rel.diff %.1e",
                  useful / keig_s / 1e9, 100 * useful / keig_s / bandwidth, bandwidth / 1e9, useful / peer_s / 1e9,
                  100 * useful / keig_queued / bandwidth, 100 * useful / peer_queued / bandwidth,
                  diff / std::max(scale, 1e-300));
    rows.push_back({n, std::string("symv ") + keig::to_string(uplo),
                    keig::backends::is_cuda_space_v<Space> ? "cuBLAS symv/hemv" : "OpenBLAS symv/hemv", detail, keig_s,
                    peer_s});
    }
  }
}

// The fastest of `runs` solves by `seconds_of(result)` (--runs: a process's
// first solve at a size pays lazy module loads and allocations).
template <class Solve, class Seconds>
keig::Result fastest_of(int runs, const Solve& solve, const Seconds& seconds_of) {
  keig::Result best = solve();
  for (int r = 1; r < runs; ++r) {
    keig::Result one = solve();
    if (seconds_of(one) < seconds_of(best)) best = std::move(one);
  }
  return best;
}

// The seconds of the vendor routine alone (stage `name`) in a vendor run.
double vendor_seconds(const keig::Result& r, const std::string& name) {
  for (const auto& s : r.stages)
    if (s.name == name) return s.seconds;
  return 0;
}

// "sytrd=0.8s tridiagonal=3.5s ... workspace=1.2GB": a run's stages without the
// keig:: prefix, and the workspace it took.
std::string stage_seconds(const keig::Result& r) {
  std::ostringstream out;
  double staged = 0;
  for (const auto& s : r.stages) {
    out << s.name.substr(6) << "=" << s.seconds << "s ";
    staged += s.seconds;
  }
  out << "outside stages=" << r.seconds - staged << "s ";  // checks, allocations, frees
  out << "workspace=" << double(r.workspace_bytes) / 1e9 << "GB ";
  return out.str();
}

// sum |M(i, j) - [i == j + offset]|^2 (offset < 0: no identity).
template <class T, class Space>
double sum_squares(const Space& space, const keig::Matrix<T, Space>& m, index_t offset) {
  double total = 0;
  using Policy = Kokkos::MDRangePolicy<Space, Kokkos::Rank<2, Kokkos::Iterate::Left, Kokkos::Iterate::Left>>;
  Kokkos::parallel_reduce(
      "keig::bench::sum_squares", Policy(space, {0, 0}, {index_t(m.extent(0)), index_t(m.extent(1))}),
      KOKKOS_LAMBDA(const index_t i, const index_t j, double& acc) {
        const T x = m(i, j) - (offset >= 0 && i == j + offset ? T(1) : T(0));
        acc += double(keig::abs_squared(x));
      },
      total);
  return total;
}

// Sums of squares of R = A Z - B Z W and of Z^H B Z - I (B = I when b is
// empty) for the columns of z, on the execution space in column blocks of
// at most 1024: the host checks are O(n^3) on a CPU, hours at n = 65536.
template <class T, class Space>
std::pair<double, double> blocked_residual_squares(const Space& space, const keig::Matrix<T, Space>& a,
                                                   const keig::Matrix<T, Space>& b,
                                                   const keig::Vector<keig::real_t<T>, Space>& w,
                                                   const keig::Matrix<T, Space>& z) {
  using keig::backends::Op;
  const index_t n = a.extent(0), m = z.extent(1), nb = std::min<index_t>(m, 1024);
  const bool generalized = b.extent(0) > 0;
  keig::backends::Context<Space> ctx(space);
  auto r_owned = keig::allocate_matrix<T>(space, "keig::bench::R", n, nb);
  auto bz_owned = keig::allocate_matrix<T>(space, "keig::bench::BZ", generalized ? n : 0, nb);
  auto g_owned = keig::allocate_matrix<T>(space, "keig::bench::G", m, nb);
  double res2 = 0, orth2 = 0;
  for (index_t j0 = 0; j0 < m; j0 += nb) {
    const index_t cols = std::min(nb, m - j0);
    const auto first = std::make_pair(index_t(0), cols);
    const keig::Matrix<T, Space> zb = Kokkos::subview(z, Kokkos::ALL(), std::make_pair(j0, j0 + cols));
    const keig::Matrix<T, Space> r = Kokkos::subview(keig::Matrix<T, Space>(r_owned), Kokkos::ALL(), first);
    const keig::Matrix<T, Space> g = Kokkos::subview(keig::Matrix<T, Space>(g_owned), Kokkos::ALL(), first);
    keig::Matrix<T, Space> bz = zb;
    if (generalized) {
      bz = Kokkos::subview(keig::Matrix<T, Space>(bz_owned), Kokkos::ALL(), first);
      keig::backends::gemm<T>(ctx, Op::NoTrans, Op::NoTrans, T(1), b, zb, T(0), bz);
    }
    keig::backends::gemm<T>(ctx, Op::NoTrans, Op::NoTrans, T(1), a, zb, T(0), r);
    using Policy = Kokkos::MDRangePolicy<Space, Kokkos::Rank<2, Kokkos::Iterate::Left, Kokkos::Iterate::Left>>;
    Kokkos::parallel_for(
        "keig::bench::residual", Policy(space, {0, 0}, {n, cols}),
        KOKKOS_LAMBDA(const index_t i, const index_t j) { r(i, j) -= bz(i, j) * w(j0 + j); });
    res2 += sum_squares<T>(space, r, -1);
    keig::backends::gemm<T>(ctx, Op::ConjTrans, Op::NoTrans, T(1), z, bz, T(0), g);
    orth2 += sum_squares<T>(space, g, j0);  // G(j0 + j, j) is the diagonal of Z^H B Z
  }
  return {res2, orth2};
}

// DESIGN.md's accuracy contract for eigenpairs of the bench matrix (seed
// 11), on the execution space. A is regenerated (the solve used it as
// workspace). Returns {||A Z - Z W||_F / (||A||_F n eps), ||Z^H Z - I||_F / (n eps)}.
template <class T, class Space>
std::pair<double, double> device_accuracy(const Space& space, const keig::Matrix<T, Space>& a,
                                          const keig::Vector<keig::real_t<T>, Space>& w,
                                          const keig::Matrix<T, Space>& z) {
  const index_t n = a.extent(0);
  fill_random_hermitian<T>(space, a, 11);
  const double norm_a = std::sqrt(sum_squares<T>(space, a, -1));
  const auto [res2, orth2] = blocked_residual_squares<T>(space, a, keig::Matrix<T, Space>(), w, z);
  const double unit = double(n) * double(keig::unit_roundoff<T>());
  return {std::sqrt(res2) / (std::max(norm_a, 1e-300) * unit), std::sqrt(orth2) / unit};
}

template <class T, class Space>
bool bench_eigh(const Args& args, const Space& space, std::vector<Row>& rows) {
  using R = keig::real_t<T>;
  bool ok = true;
  const bool with_peer = args.peer != "none";
  // Library warm-up (handles, module load) outside the timings.
  {
    auto a = keig::allocate_matrix<T>(space, "keig::bench::warm", 256, 256);
    auto w = keig::allocate_vector<R>(space, "keig::bench::w", 256);
    auto z = keig::allocate_matrix<T>(space, "keig::bench::z", 256, 256);
    for (keig::Method m : {keig::Method::Vendor, keig::Method::OneStage, keig::Method::TwoStage}) {
      fill_random_hermitian<T>(space, keig::Matrix<T, Space>(a), 1);
      keig::Options o;
      o.method = m;
      keig::eigh(space, a, w, z, o);
    }
  }
  for (index_t n : args.sizes) {
    auto a = problem_matrix<T>(args, space, "keig::bench::A", n, n);
    auto w_keig = keig::allocate_vector<R>(space, "keig::bench::w", n);
    auto w_peer = keig::allocate_vector<R>(space, "keig::bench::w_peer", with_peer ? n : 0);
    for (const std::string& job : args.jobs) {
      // "subset": the 1 % smallest pairs (an index range, ?syevdx's job).
      const bool subset = job == "subset", vectors = job == "vectors" || subset;
      const index_t m = subset ? std::max<index_t>(1, n / 100) : n;
      auto z = problem_matrix<T>(args, space, "keig::bench::Z", vectors ? n : 0, vectors ? m : 0);
      auto run = [&](keig::Method method, auto& w) {
        fill_random_hermitian<T>(space, keig::Matrix<T, Space>(a), 11);
        space.fence();
        keig::Options o;
        o.method = method;
        o.band_width = args.band;
        o.block_size = args.panel;
        if (method != keig::Method::Vendor) {
          o.tridiagonal_solver = args.solver;
          o.stage_times = args.stage_times;
        }
        if (subset) o.range = keig::Range::index(0, m - 1);
        return vectors ? keig::eigh(space, a, w, z, o) : keig::eigvalsh(space, a, w, o);
      };
      double peer_s = 0;
      std::string peer_name = "none";
      if (with_peer) {
        const auto seconds = [](const keig::Result& r) { return vendor_seconds(r, "keig::vendor::eigh"); };
        const keig::Result peer = fastest_of(args.runs, [&] { return run(keig::Method::Vendor, w_peer); }, seconds);
        peer_s = seconds(peer);
        peer_name = peer.method.substr(8);
      }
      // On hosts the values-only job has a second peer: LAPACK's own
      // two-stage driver (?syevd_2stage / ?heevd_2stage), on the same matrix.
      double lapack_2stage_s = 0;
      if constexpr (!keig::backends::is_cuda_space_v<Space>) {
        if (with_peer && !vectors) {
          fill_random_hermitian<T>(space, keig::Matrix<T, Space>(a), 11);
          space.fence();
          std::vector<R> w2(n);
          Kokkos::Timer timer;
          if (keig::backends::host::syevd_2stage<T>(keig::backends::Job::ValuesOnly, keig::Uplo::Lower, n, a.data(),
                                                    a.stride(1), w2.data()) != 0)
            throw std::runtime_error("keig-bench: LAPACK ?syevd_2stage did not converge");
          lapack_2stage_s = timer.seconds();
        }
      }
      for (const std::string& method : args.methods) {
        const keig::Result mine = fastest_of(
            args.runs,
            [&] { return run(method == "two-stage" ? keig::Method::TwoStage : keig::Method::OneStage, w_keig); },
            [](const keig::Result& r) { return r.seconds; });
        std::ostringstream detail;
        detail << stage_seconds(mine);
        char buf[160];
        if (with_peer) {  // eigenvalue agreement, scaled by n eps max|w|
          auto wk = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w_keig);
          auto wp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w_peer);
          double err = 0, big = 0;
          for (index_t i = 0; i < m; ++i) {
            err = std::max(err, std::abs(double(wk(i)) - double(wp(i))));
            big = std::max(big, std::abs(double(wp(i))));
          }
          std::snprintf(buf, sizeof buf, "| eig diff %.2g n*eps*max|w| ",
                        err / (double(n) * keig::unit_roundoff<T>() * std::max(big, 1e-300)));
          detail << buf;
        }
        if (args.verify && vectors && !subset) {
          const auto [residual, orthogonality] =
              device_accuracy<T>(space, keig::Matrix<T, Space>(a), keig::Vector<R, Space>(w_keig), keig::Matrix<T, Space>(z));
          const bool pass = residual <= 10.0 && orthogonality <= 10.0;  // DESIGN.md's contract
          ok = ok && pass;
          std::snprintf(buf, sizeof buf, "| residual %.3g orthogonality %.3g %s", residual, orthogonality,
                        pass ? "PASSED" : "FAILED");
          detail << buf;
        }
        rows.push_back({n, std::string("eigh ") + job + " (" + method + (args.aligned_ld ? ", aligned ld" : "") + ")",
                        peer_name, detail.str(), mine.seconds, peer_s});
        if (lapack_2stage_s > 0)
          rows.push_back({n, rows.back().what, "LAPACK ?syevd_2stage", rows.back().detail, mine.seconds,
                          lapack_2stage_s});
        std::printf("%s\n", (std::to_string(n) + " " + rows.back().what + " " + std::to_string(mine.seconds) + " s " +
                             rows.back().detail).c_str());
        std::fflush(stdout);
      }
      z = decltype(z)();
    }
  }
  return ok;
}

// sy2sb alone, both trailing updates, against the dgemm rate of the same run
// (issue target: >= 50 % of it at n >= 16384). Rates count the useful
// 4/3 n^3 flops (x4 for complex) of the reduction. Then bt_sy2sb on its
// reflectors for reflector blocks of 64, 128, 256, 512 and 1024 (2 n^3 flops).
template <class T, class Space>
void bench_sy2sb(const Args& args, const Space& space, std::vector<Row>& rows) {
  using keig::backends::Op;
  namespace st = keig::stages;
  keig::backends::Context<Space> ctx(space);
  const double cx = keig::is_complex_v<T> ? 4.0 : 1.0;
  const index_t b = args.band > 0 ? args.band : st::Sy2sbTuning<Space>::default_band;
  // The gemm rate: C = A B, square 8192 (or n if smaller), median of 5.
  const index_t g = std::min<index_t>(8192, *std::max_element(args.sizes.begin(), args.sizes.end()));
  double gemm_rate = 0;
  {
    auto x = keig::allocate_matrix<T>(space, "keig::bench::gx", g, g);
    auto y = keig::allocate_matrix<T>(space, "keig::bench::gy", g, g);
    auto c = keig::allocate_matrix<T>(space, "keig::bench::gc", g, g);
    fill_random_hermitian<T>(space, keig::Matrix<T, Space>(x), 3);
    fill_random_hermitian<T>(space, keig::Matrix<T, Space>(y), 4);
    const double t = median_seconds(5, [&] {
      keig::backends::gemm<T>(ctx, Op::NoTrans, Op::NoTrans, T(1), keig::Matrix<T, Space>(x),
                              keig::Matrix<T, Space>(y), T(0), keig::Matrix<T, Space>(c));
      space.fence();
    });
    gemm_rate = cx * 2.0 * double(g) * g * g / t;
    std::printf("gemm %lld^3: %.1f TFLOP/s\n", (long long)g, gemm_rate / 1e12);
  }
  for (index_t n : args.sizes) {
    auto a = keig::allocate_matrix<T>(space, "keig::bench::A", n, n);
    auto tau = keig::allocate_vector<T>(space, "keig::bench::tau", n);
    // Panels per update: the default, one (the earlier default) and --groups.
    std::vector<index_t> groups{st::sy2sb_group<Space>(0, b), 1};
    for (index_t g : args.groups)
      if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
    auto work = keig::allocate_vector<T>(
        space, "keig::bench::work",
        st::sy2sb_workspace_size<T, Space>(n, b, *std::max_element(groups.begin(), groups.end())));
    // The options of a timed run: an update and a panel, the rest as `change` sets it.
    const auto options = [](st::Sy2sbUpdate update, st::Sy2sbPanel panel, const auto& change) {
      st::Sy2sbOptions o;
      o.update = update;
      o.panel = panel;
      change(o);
      return o;
    };
    const auto as_is = [](st::Sy2sbOptions&) {};
    auto time = [&](const st::Sy2sbOptions& run_options, double* issued = nullptr) {
      std::vector<double> t, host;
      for (int r = 0; r < 3; ++r) {
        fill_random_hermitian<T>(space, keig::Matrix<T, Space>(a), 11);
        space.fence();
        Kokkos::Timer timer;
        st::sy2sb<T, Space>(ctx, keig::Uplo::Lower, keig::Matrix<T, Space>(a), keig::Vector<T, Space>(tau),
                            keig::Vector<T, Space>(work), b, run_options);
        const double returned = timer.seconds();  // the host's share: issuing the launches
        space.fence();
        if (r > 0) t.push_back(timer.seconds()), host.push_back(returned);  // the first run warms up
      }
      if (issued) *issued = host[std::min_element(t.begin(), t.end()) - t.begin()];
      return *std::min_element(t.begin(), t.end());
    };
    // keig: the default (Blocked update, keig's panel QR where available);
    // peer: the previous default (Full update, vendor geqrf).
    double keig_issued = 0;  // seconds until sy2sb returned, before the fence (GPU: launch-bound if close to keig_s)
    const double keig_s =
        time(options(st::Sy2sbUpdate::Auto, st::Sy2sbPanel::Auto, as_is), &keig_issued);
    // The panels alone (QR, V, T of every panel, no trailing products): the
    // default's panel share; the rest is the trailing update's.
    const auto panels_alone = [](st::Sy2sbOptions& o) { o.panels_only = true; };
    const double panels = time(options(st::Sy2sbUpdate::Auto, st::Sy2sbPanel::Auto, panels_alone));
    const double blocked = time(options(st::Sy2sbUpdate::Blocked, st::Sy2sbPanel::Vendor, as_is));
    const double full = time(options(st::Sy2sbUpdate::Full, st::Sy2sbPanel::Vendor, as_is));
    const double symmetric = time(options(st::Sy2sbUpdate::Symmetric, st::Sy2sbPanel::Vendor, as_is));
    const double useful = cx * 4.0 / 3.0 * double(n) * n * n;
    const auto share = [&](double s) { return 100 * useful / s / gemm_rate; };
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  "b=%lld nb=%lld gemm %.3g TFLOP/s | %% of gemm: default %.0f%% (issued in %.3f s; panels %.3f s, updates "
                  "%.3f s = %.0f%% of gemm); vendor panel: blocked %.0f%% (%.3f s), full %.0f%%, symm+syr2k %.0f%% (%.3f s)",
                  (long long)b, (long long)st::sy2sb_block_columns(n, b), gemm_rate / 1e12, share(keig_s), keig_issued, panels,
                  keig_s - panels, share(keig_s - panels), share(blocked), blocked, share(full), share(symmetric),
                  symmetric);
    rows.push_back({n, "sy2sb", "sy2sb full, geqrf", buf, keig_s, full});
    // The default against the same run with X = A22 V by cuBLAS gemms, where
    // the default uses keig's tensor-core product.
    if (keig::backends::symm_skinny_available<T>(ctx, b)) {
      const double gemm_x = time(options(st::Sy2sbUpdate::Auto, st::Sy2sbPanel::Auto,
                                         [](st::Sy2sbOptions& o) { o.product = st::Sy2sbProduct::Gemm; }));
      std::snprintf(buf, sizeof buf, "X = A22 V: keig's tensor-core kernel against two cuBLAS gemms per block column");
      rows.push_back({n, "sy2sb skinny X", "sy2sb gemm X", buf, keig_s, gemm_x});
    }
    // panel_qr one column a meeting (the kernel before several columns a
    // meeting; complex scalars' only one) against the default: whole
    // reductions and the panels alone.
    if (st::panel_qr_available<Space>(b) && !keig::is_complex_v<T>) {
      const auto one_column = [&](bool panels_only) {
        return time(options(st::Sy2sbUpdate::Auto, st::Sy2sbPanel::Keig, [&](st::Sy2sbOptions& o) {
          o.panels_only = panels_only;
          o.panel_columns = 1;
        }));
      };
      const double whole1 = one_column(false), panels1 = one_column(true);
      std::snprintf(buf, sizeof buf,
                    "panel_qr, %d columns a meeting (default) against 1: panels alone %.3f s against %.3f s; sy2sb "
                    "%.0f%% against %.0f%% of gemm",
                    st::panel_qr_meeting_columns, panels, panels1, share(keig_s), share(whole1));
      rows.push_back({n, "sy2sb panel 4 columns/meeting", "sy2sb panel 1 column/meeting", buf, keig_s, whole1});
    }
    // CholeskyQR2 panels (stages/panel_cholqr, real scalars) against the
    // default's: whole reductions and the panels alone.
    if (st::panel_cholqr_available<T>(b)) {
      const double chol_whole = time(options(st::Sy2sbUpdate::Auto, st::Sy2sbPanel::CholQr, as_is));
      const double chol_panels = time(options(st::Sy2sbUpdate::Auto, st::Sy2sbPanel::CholQr, panels_alone));
      std::snprintf(buf, sizeof buf, "panels alone: CholeskyQR2 %.3f s, default %.3f s; sy2sb with CholeskyQR2 %.0f%% of gemm",
                    chol_panels, panels, share(chol_whole));
      rows.push_back({n, "sy2sb cholqr panels", "sy2sb default panels", buf, chol_whole, keig_s});
    }
    // The default update and panel with g panels per update, against one.
    std::vector<std::pair<index_t, double>> by_group;
    for (index_t g : groups)
      by_group.emplace_back(g, g == groups[0] ? keig_s
                                              : time(options(st::Sy2sbUpdate::Auto, st::Sy2sbPanel::Auto,
                                                             [g](st::Sy2sbOptions& o) { o.group = g; })));
    const double one = std::find_if(by_group.begin(), by_group.end(), [](const auto& p) { return p.first == 1; })->second;
    for (const auto& [g, sec] : by_group) {
      std::snprintf(buf, sizeof buf, "%lld panels per update: %.0f%% of gemm (updates %.3f s)", (long long)g,
                    share(sec), sec - panels);
      rows.push_back({n, "sy2sb group=" + std::to_string(g), "sy2sb group=1", buf, sec, one});
    }
    // The default with other block-column widths of the Blocked update, each
    // with the default diagonal sub-columns and those of --splits.
    std::vector<index_t> block_splits{0};
    block_splits.insert(block_splits.end(), args.splits.begin(), args.splits.end());
    for (index_t nb : args.blocks)
      for (index_t sp : block_splits) {
        const double sec = time(options(st::Sy2sbUpdate::Auto, st::Sy2sbPanel::Auto, [nb, sp](st::Sy2sbOptions& o) {
          o.block = nb;
          o.diagonal_split = sp;
        }));
        const index_t shown = sp > 0 ? sp : st::sy2sb_diagonal_split_default;
        std::snprintf(buf, sizeof buf, "block columns of %lld (default %lld), diagonal sub-columns of %lld: %.0f%% of gemm",
                      (long long)nb, (long long)st::sy2sb_block_columns(n, b), (long long)shown, share(sec));
        rows.push_back({n, "sy2sb nb=" + std::to_string(nb) + " split=" + std::to_string(shown), "sy2sb default nb", buf,
                        sec, keig_s});
      }
    // The default's diagonal blocks formed in sub-columns (and mirrored)
    // against whole (the update before; a split of n is never narrower than
    // a block), and the --splits widths: GPUs, whose default is the Blocked
    // update (hosts update with hemm/her2k, which has no diagonal blocks).
    if (keig::backends::is_cuda_space_v<Space>) {
      const auto with_split = [&](index_t split) {
        return time(options(st::Sy2sbUpdate::Auto, st::Sy2sbPanel::Auto,
                            [split](st::Sy2sbOptions& o) { o.diagonal_split = split; }));
      };
      const double whole = with_split(n);
      std::snprintf(buf, sizeof buf, "diagonal blocks in sub-columns of %lld (default) against whole: %.0f%% against %.0f%% of gemm",
                    (long long)st::sy2sb_diagonal_split_default, share(keig_s), share(whole));
      rows.push_back({n, "sy2sb diagonal split", "sy2sb whole diagonal blocks", buf, keig_s, whole});
      for (index_t sp : args.splits) {
        const double sec = with_split(sp);
        std::snprintf(buf, sizeof buf, "diagonal blocks in sub-columns of %lld (default %lld): %.0f%% of gemm",
                      (long long)sp, (long long)st::sy2sb_diagonal_split_default, share(sec));
        rows.push_back({n, "sy2sb split=" + std::to_string(sp), "sy2sb default split", buf, sec, keig_s});
      }
    }
    // bt_sy2sb on these reflectors, Z := Q1 Z for n columns, by reflectors
    // per compact-WY block (the solvers use bt_sy2sb_block(b, m)):
    // each block is two gemms with inner size nb or n - first.
    auto z = keig::allocate_matrix<T>(space, "keig::bench::Z", n, n);
    std::vector<std::pair<index_t, double>> by_block;
    for (index_t nbq : {index_t(64), index_t(128), index_t(256), index_t(512), index_t(1024)}) {
      if (nbq < b) continue;
      auto w = keig::allocate_vector<T>(space, "keig::bench::bt_work", st::ormtr_workspace_size<T, Space>(n, n, nbq));
      std::vector<double> t;
      for (int r = 0; r < 3; ++r) {
        fill_random_hermitian<T>(space, keig::Matrix<T, Space>(z), 5);
        space.fence();
        Kokkos::Timer timer;
        st::bt_sy2sb<T, Space>(ctx, keig::Matrix<T, Space>(a), b, keig::Vector<T, Space>(tau),
                               keig::Matrix<T, Space>(z), keig::Vector<T, Space>(w), nbq);
        space.fence();
        if (r > 0) t.push_back(timer.seconds());
      }
      by_block.emplace_back(nbq, *std::min_element(t.begin(), t.end()));
    }
    const auto base = std::find_if(by_block.begin(), by_block.end(), [&](const auto& p) {
      return p.first == std::max<index_t>(b, st::ormtr_block_default);  // the block of earlier stops
    });
    for (const auto& [nbq, sec] : by_block) {
      const double rate = cx * 2.0 * double(n) * n * n / sec;
      std::snprintf(buf, sizeof buf, "Z := Q1 Z, n columns: %.1f TFLOP/s = %.0f%% of gemm", rate / 1e12,
                    100 * rate / gemm_rate);
      rows.push_back({n, "bt_sy2sb nb=" + std::to_string(nbq), "bt_sy2sb nb=" + std::to_string(base->first), buf, sec,
                      base->second});
    }
  }
}

// sb2st alone on a random band: the persistent kernel (one launch, progress
// counters) against the tiled task launched wave by wave (2n launches). Both
// run the same task code, so d and e must agree bit for bit. GPU only: host
// spaces have the in-place kernel alone.
template <class T, class Space>
bool bench_sb2st(const Args& args, const Space& space, std::vector<Row>& rows) {
  namespace st = keig::stages;
  using R = keig::real_t<T>;
  if (!keig::backends::is_cuda_space_v<Space>) {
    std::printf("sb2st suite: the tiled and persistent kernels are GPU kernels; nothing to compare on %s\n",
                Space::name());
    return true;
  }
  const index_t b = args.band > 0 ? index_t(args.band) : st::Sy2sbTuning<Space>::default_band;
  bool ok = true;
  for (index_t n : args.sizes) {
    auto a = keig::allocate_matrix<T>(space, "keig::bench::A", n, n);
    auto ab0 = keig::allocate_matrix<T>(space, "keig::bench::band0", st::sb2st_band_rows(b), n);
    auto ab = keig::allocate_matrix<T>(space, "keig::bench::band", st::sb2st_band_rows(b), n);
    auto work = keig::allocate_vector<T>(space, "keig::bench::sb2st_work", st::sb2st_workspace_size(n, b));
    fill_random_hermitian<T>(space, keig::Matrix<T, Space>(a), 3);
    st::dense_to_band<T, Space>(space, keig::Matrix<T, Space>(a), b, keig::Matrix<T, Space>(ab0));
    std::vector<R> d_of[2], e_of[2];
    double best[2] = {1e300, 1e300};
    const st::Sb2stKernel kernels[2] = {st::Sb2stKernel::Persistent, st::Sb2stKernel::Tiled};
    for (int which = 0; which < 2; ++which) {
      auto d = keig::allocate_vector<R>(space, "keig::bench::d", n);
      auto e = keig::allocate_vector<R>(space, "keig::bench::e", n);
      for (int r = 0; r < 3; ++r) {  // best of 2 after a warm-up
        Kokkos::deep_copy(space, ab, ab0);
        space.fence();
        Kokkos::Timer timer;
        st::sb2st<T, Space>(space, b, keig::Matrix<T, Space>(ab), keig::Vector<R, Space>(d),
                            keig::Vector<R, Space>(e), keig::Matrix<T, Space>(), keig::Vector<T, Space>(work),
                            kernels[which]);
        space.fence();
        if (r > 0) best[which] = std::min(best[which], timer.seconds());
      }
      auto dh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d);
      auto eh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e);
      d_of[which].assign(dh.data(), dh.data() + n);
      e_of[which].assign(eh.data(), eh.data() + (n > 0 ? n - 1 : 0));
    }
    const bool same = d_of[0] == d_of[1] && e_of[0] == e_of[1];
    if (!same) {
      std::fprintf(stderr, "keig-bench: sb2st persistent and wave-by-wave results differ at n=%lld\n", (long long)n);
      ok = false;
    }
    const double waves = 2.0 * double(n > 2 ? n - 2 : 0) + 1;
    char buf[200];
    std::snprintf(buf, sizeof buf, "b=%lld | %.2f us per wave persistent, %.2f us wave by wave; results %s", (long long)b,
                  1e6 * best[0] / waves, 1e6 * best[1] / waves, same ? "identical" : "DIFFER");
    rows.push_back({n, "sb2st persistent", "sb2st tiled waves", buf, best[0], best[1]});
  }
  return ok;
}

// Fills g with N(0, 1) entries (complex: (N + i N) / sqrt 2) times row_scale(i).
template <class T, class Space>
void fill_gaussian(const Space& space, const keig::Matrix<T, Space>& g, const keig::Vector<double, Space>& row_scale,
                   std::uint64_t seed) {
  Kokkos::Random_XorShift64_Pool<Space> pool(seed);
  const index_t rows = g.extent(0), cols = g.extent(1);
  Kokkos::parallel_for(
      "keig::bench::gaussian", Kokkos::RangePolicy<Space>(space, 0, cols), KOKKOS_LAMBDA(const index_t j) {
        auto gen = pool.get_state();
        for (index_t i = 0; i < rows; ++i) {
          const double sc = row_scale(i), re = gen.normal();
          T value;
          if constexpr (keig::is_complex_v<T>) {  // no first capture in here (nvcc)
            value = T(re * sc * 0.7071067811865476, gen.normal() * sc * 0.7071067811865476);
          } else {
            value = T(re * sc);
          }
          g(i, j) = value;
        }
        pool.free_state(gen);
      });
}

// a := (a + a^H) / 2 (exactly Hermitian, real diagonal).
template <class T, class Space>
void make_hermitian(const Space& space, const keig::Matrix<T, Space>& a) {
  using Policy = Kokkos::MDRangePolicy<Space, Kokkos::Rank<2, Kokkos::Iterate::Left, Kokkos::Iterate::Left>>;
  const index_t n = a.extent(0);
  Kokkos::parallel_for(
      "keig::bench::hermitian", Policy(space, {0, 0}, {n, n}), KOKKOS_LAMBDA(const index_t i, const index_t j) {
        if (i == j) a(i, i) = T(keig::real_part(a(i, i)));
        if (i > j) {
          const T avg = (a(i, j) + keig::conjugate(a(j, i))) * keig::real_t<T>(0.5);
          a(i, j) = avg;
          a(j, i) = keig::conjugate(avg);
        }
      });
}

// The IC-NMA-like pair of keig::generate_icnma_pair (same recipe: A = Q
// diag(lambda) Q^H with Q from the QR of a Gaussian matrix, B = S^H S +
// delta I with S = M^{1/2} J / sqrt(n), masses M uniform in [1, 16], delta =
// 1e-3 ||S^H S||_2 from 12 power iterations), built on the GPU with its own
// random streams: the host recipe (a QR and two n^3 gemms with host BLAS)
// takes minutes at the 1cwp sizes 20694 and 30504. Q is applied with keig's
// blocked reflector kernel (offset 0 = ?ormqr) to diag(lambda), twice.
template <class T, class Space>
void icnma_pair_on_device(const Space& space, index_t n, std::uint64_t seed, const keig::Matrix<T, Space>& a,
                          const keig::Matrix<T, Space>& b) {
  using R = keig::real_t<T>;
  namespace kb = keig::backends;
  kb::Context<Space> ctx(space);
  const std::vector<double> spectrum = keig::icnma_hessian_spectrum(n);
  auto lambda = keig::allocate_vector<double>(space, "keig::bench::lambda", n);
  auto scale = keig::allocate_vector<double>(space, "keig::bench::row_scale", n);
  {
    auto h = Kokkos::create_mirror_view(Kokkos::HostSpace(), lambda);
    for (index_t i = 0; i < n; ++i) h(i) = spectrum[i];
    Kokkos::deep_copy(space, lambda, h);
  }
  auto g = keig::allocate_matrix<T>(space, "keig::bench::G", n, n);
  auto tau = keig::allocate_vector<T>(space, "keig::bench::tau", n);
  const index_t nb = keig::stages::ormtr_block_default;
  auto work = keig::allocate_vector<T>(space, "keig::bench::work", keig::stages::ormtr_workspace_size<T, Space>(n, n, nb));
  Kokkos::deep_copy(space, scale, 1.0);
  fill_gaussian<T, Space>(space, g, scale, seed);
  kb::geqrf<T, Space>(ctx, g, tau);
  // b (as scratch) := Q diag(lambda); a := b^H; a := Q a = Q diag(lambda) Q^H.
  using Policy = Kokkos::MDRangePolicy<Space, Kokkos::Rank<2, Kokkos::Iterate::Left, Kokkos::Iterate::Left>>;
  Kokkos::parallel_for(
      "keig::bench::diagonal", Policy(space, {0, 0}, {n, n}),
      KOKKOS_LAMBDA(const index_t i, const index_t j) { b(i, j) = i == j ? T(R(lambda(i))) : T(0); });
  keig::stages::apply_column_reflectors<T, Space>(ctx, g, 0, n, tau, b, work, nb);
  Kokkos::parallel_for(
      "keig::bench::adjoint", Policy(space, {0, 0}, {n, n}),
      KOKKOS_LAMBDA(const index_t i, const index_t j) { a(i, j) = keig::conjugate(b(j, i)); });
  keig::stages::apply_column_reflectors<T, Space>(ctx, g, 0, n, tau, a, work, nb);
  make_hermitian<T, Space>(space, a);
  // S = M^{1/2} J / sqrt(n) in g; b = S^H S + delta I.
  {
    Kokkos::Random_XorShift64_Pool<Space> pool(seed * 7 + 29);
    const double inv_sqrt_n = 1.0 / std::sqrt(double(n));
    Kokkos::parallel_for(
        "keig::bench::masses", Kokkos::RangePolicy<Space>(space, 0, n), KOKKOS_LAMBDA(const index_t i) {
          auto gen = pool.get_state();
          scale(i) = keig::compat::sqrt(double(gen.drand(1.0, 16.0))) * inv_sqrt_n;
          pool.free_state(gen);
        });
  }
  fill_gaussian<T, Space>(space, g, scale, seed + 1);
  kb::gemm<T, Space>(ctx, kb::Op::ConjTrans, kb::Op::NoTrans, T(1), g, g, T(0), b);
  make_hermitian<T, Space>(space, b);
  // ||B||_2 from below by power iteration (only sets delta).
  auto x = keig::allocate_vector<T>(space, "keig::bench::x", n);
  auto y = keig::allocate_vector<T>(space, "keig::bench::y", n);
  Kokkos::deep_copy(space, x, T(R(1.0 / std::sqrt(double(n)))));
  double norm = 0;
  for (int it = 0; it < 12; ++it) {
    kb::symv<T, Space>(ctx, keig::Uplo::Lower, T(1), b, x, T(0), y);
    double y2 = 0;
    Kokkos::parallel_reduce(
        "keig::bench::norm", Kokkos::RangePolicy<Space>(space, 0, n),
        KOKKOS_LAMBDA(const index_t i, double& acc) { acc += double(keig::abs_squared(y(i))); }, y2);
    norm = std::sqrt(y2);
    if (!(norm > 0)) break;
    const T inv = T(R(1.0 / norm));
    Kokkos::parallel_for(
        "keig::bench::normalize", Kokkos::RangePolicy<Space>(space, 0, n),
        KOKKOS_LAMBDA(const index_t i) { x(i) = y(i) * inv; });
  }
  const R delta = R(1e-3 * (norm > 0 ? norm : 1.0));
  Kokkos::parallel_for(
      "keig::bench::shift", Kokkos::RangePolicy<Space>(space, 0, n),
      KOKKOS_LAMBDA(const index_t i) { b(i, i) = T(keig::real_part(b(i, i)) + delta); });
  space.fence();
}

// The generalized contract (DESIGN.md) for the first m columns of Z, on the
// execution space in column blocks, as keig::scaled_residual_generalized and
// scaled_b_orthogonality compute it on the host: returns
// {||A Z - B Z W||_F / (||A||_F ||Z||_F n eps), ||Z^H B Z - I||_F / (n eps)}.
template <class T, class Space>
std::pair<double, double> device_accuracy_generalized(const Space& space, const keig::Matrix<T, Space>& a,
                                                      const keig::Matrix<T, Space>& b,
                                                      const keig::Vector<keig::real_t<T>, Space>& w,
                                                      const keig::Matrix<T, Space>& z_all, index_t m) {
  const index_t n = a.extent(0);
  const keig::Matrix<T, Space> z = Kokkos::subview(z_all, Kokkos::ALL(), std::make_pair(index_t(0), m));
  const double norm_a = std::sqrt(sum_squares<T>(space, a, -1)), norm_z = std::sqrt(sum_squares<T>(space, z, -1));
  const auto [res2, orth2] = blocked_residual_squares<T>(space, a, b, w, z);
  const double unit = double(n) * double(keig::unit_roundoff<T>());
  return {std::sqrt(res2) / (std::max(norm_a * norm_z, 1e-300) * unit), std::sqrt(orth2) / unit};
}

// Generalized IC-NMA-like pairs (seed 002 §6.1): all eigenvalues, all pairs
// and the 1 % smallest, keig's pipelines against the vendor's ?sygvd / ?sygvdx. On GPUs
// the pair is built there (icnma_pair_on_device), on hosts by
// keig::generate_icnma_pair. A vendor that refuses the size (cuSOLVER's
// 32-bit ?sygvd at n = 30504) is reported as such and keig runs alone;
// --verify checks keig's pairs against the contract on the execution space.
template <class T, class Space>
bool bench_generalized(const Args& args, const Space& space, std::vector<Row>& rows) {
  using R = keig::real_t<T>;
  bool ok = true;
  for (index_t n : args.sizes) {
    auto a0 = problem_matrix<T>(args, space, "keig::bench::A0", n, n);
    auto b = problem_matrix<T>(args, space, "keig::bench::B", n, n);
    auto a = problem_matrix<T>(args, space, "keig::bench::A", n, n);
    if constexpr (keig::backends::is_cuda_space_v<Space>) {
      icnma_pair_on_device<T>(space, n, 5, keig::Matrix<T, Space>(a0), keig::Matrix<T, Space>(b));
    } else {
      const keig::TestPair<T> pair = keig::generate_icnma_pair<T>(n, 5);
      Kokkos::deep_copy(space, a0, pair.a);
      Kokkos::deep_copy(space, b, pair.b);
    }
    auto w_keig = keig::allocate_vector<R>(space, "keig::bench::w", n);
    auto w_peer = keig::allocate_vector<R>(space, "keig::bench::w_peer", n);
    auto z = problem_matrix<T>(args, space, "keig::bench::Z", n, n);
    for (const auto type : args.problem_types) {
      for (const std::string job : {"values", "all", "1%"}) {
        const bool vectors = job != "values";
        const index_t m = job == "1%" ? std::max<index_t>(1, n / 100) : n;
        auto run = [&](keig::Method method, auto& w) {
          Kokkos::deep_copy(space, a, a0);
          space.fence();
          keig::Options o;
          o.method = method;
          o.band_width = args.band;
          o.block_size = args.panel;
          o.generalized_type = type;
          if (method != keig::Method::Vendor) {
            o.tridiagonal_solver = args.solver;
            o.stage_times = args.stage_times;
          }
          if (job == "1%") o.range = keig::Range::index(0, m - 1);
          return vectors ? keig::eigh(space, a, b, w, z, o) : keig::eigvalsh(space, a, b, w, o);
        };
        double peer_s = 0;
        std::string peer_name = "none";
        if (args.peer != "none") {
          try {
            const auto seconds = [](const keig::Result& r) { return vendor_seconds(r, "keig::vendor::eigh_generalized"); };
            const keig::Result peer = fastest_of(args.runs, [&] { return run(keig::Method::Vendor, w_peer); }, seconds);
            peer_s = seconds(peer);
            peer_name = peer.method.substr(8);
          } catch (const keig::Error& e) {
            std::printf("%lld icnma %s: the vendor solver failed (%s); keig runs alone\n", (long long)n, job.c_str(),
                        e.what());
            peer_name = "vendor failed";
          }
        }
        for (const std::string& method : args.methods) {
          const keig::Result mine = fastest_of(
              args.runs,
              [&] { return run(method == "two-stage" ? keig::Method::TwoStage : keig::Method::OneStage, w_keig); },
              [](const keig::Result& r) { return r.seconds; });
          std::ostringstream detail;
          detail << stage_seconds(mine);
          char buf[128];
          if (peer_s > 0) {
            auto wk = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w_keig);
            auto wp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w_peer);
            double err = 0;
            for (index_t i = 0; i < m; ++i)
              err = std::max(err, std::abs(double(wk(i)) - double(wp(i))) / std::max(std::abs(double(wp(i))), 1e-300));
            std::snprintf(buf, sizeof buf, "| max rel. eig diff %.2g", err);
            detail << buf;
          }
          if (args.verify && vectors) {
            const auto [residual, b_orthogonality] = device_accuracy_generalized<T>(
                space, keig::Matrix<T, Space>(a0), keig::Matrix<T, Space>(b), keig::Vector<R, Space>(w_keig),
                keig::Matrix<T, Space>(z), m);
            const bool pass = residual <= 10.0 && b_orthogonality <= 10.0;  // DESIGN.md's contract
            ok = ok && pass;
            std::snprintf(buf, sizeof buf, " | residual %.3g B-orthogonality %.3g %s", residual, b_orthogonality,
                          pass ? "PASSED" : "FAILED");
            detail << buf;
          }
          const std::string type_note =
              type == keig::GeneralizedType::AxLBx ? "" : ", type " + std::to_string(static_cast<int>(type));
          rows.push_back({n, "icnma " + (vectors ? job + " vectors" : std::string("values")) + " (" + method +
                                 (args.aligned_ld ? ", aligned ld" : "") + type_note + ")",
                          peer_name, detail.str(), mine.seconds, peer_s});
          std::printf("%s\n", (std::to_string(n) + " " + rows.back().what + " " + std::to_string(mine.seconds) + " s " +
                               rows.back().detail).c_str());
          std::fflush(stdout);
        }
      }
    }
  }
  return ok;
}

// sygst alone (stages::sygst, fenced, best of 2 after a warm-up) on the
// IC-NMA-like pair's A and B's Cholesky factor, for each --problem-type: the
// default (on GPUs her2k blocks over sygst_her2k_leaf_default rows split into
// gemms) against one her2k a step (leaf n); both results must agree to
// rounding. GPU only: hosts always run one her2k.
template <class T, class Space>
bool bench_sygst(const Args& args, const Space& space, std::vector<Row>& rows) {
  namespace st = keig::stages;
  if (!keig::backends::is_cuda_space_v<Space>) {
    std::printf("sygst suite: the split her2k is a GPU path; nothing to compare on %s\n", Space::name());
    return true;
  }
  keig::backends::Context<Space> ctx{space};
  bool ok = true;
  for (index_t n : args.sizes) {
    auto a0 = problem_matrix<T>(args, space, "keig::bench::A0", n, n);
    auto l = problem_matrix<T>(args, space, "keig::bench::L", n, n);
    icnma_pair_on_device<T>(space, n, 5, keig::Matrix<T, Space>(a0), keig::Matrix<T, Space>(l));
    keig::backends::potrf<T>(ctx, keig::Uplo::Lower, keig::Matrix<T, Space>(l), "B");
    auto a = problem_matrix<T>(args, space, "keig::bench::A", n, n);
    auto c_split = problem_matrix<T>(args, space, "keig::bench::C", n, n);
    auto work = keig::allocate_vector<T>(space, "keig::bench::sygst_work", st::sygst_workspace_size<T, Space>(n));
    for (const auto type : args.problem_types) {
      double best[2] = {1e300, 1e300};
      const index_t leaves[2] = {0, std::max<index_t>(n, st::sygst_her2k_leaf_min)};
      for (int which = 0; which < 2; ++which)
        for (int r = 0; r < 3; ++r) {
          Kokkos::deep_copy(space, a, a0);
          space.fence();
          Kokkos::Timer timer;
          st::sygst<T, Space>(ctx, type, keig::Matrix<T, Space>(a), keig::Matrix<T, Space>(l), 0,
                              keig::Vector<T, Space>(work), leaves[which]);
          space.fence();
          if (r > 0) best[which] = std::min(best[which], timer.seconds());
          if (which == 0 && r == 0) Kokkos::deep_copy(space, c_split, a);
        }
      // The lower triangles agree to rounding (the upper one holds scratch).
      const keig::Matrix<T, Space> x = c_split, y = a;
      double diff = 0, scale = 0;
      Kokkos::parallel_reduce(
          "keig::bench::sygst_diff", Kokkos::RangePolicy<Space>(space, 0, n),
          KOKKOS_LAMBDA(const index_t j, double& m) {
            for (index_t i = j; i < n; ++i) {
              const double d = keig::compat::sqrt(double(keig::abs_squared(T(x(i, j) - y(i, j)))));
              m = d > m ? d : m;
            }
          },
          Kokkos::Max<double>(diff));
      Kokkos::parallel_reduce(
          "keig::bench::sygst_scale", Kokkos::RangePolicy<Space>(space, 0, n),
          KOKKOS_LAMBDA(const index_t j, double& m) {
            for (index_t i = j; i < n; ++i) {
              const double d = keig::compat::sqrt(double(keig::abs_squared(y(i, j))));
              m = d > m ? d : m;
            }
          },
          Kokkos::Max<double>(scale));
      const double rel = diff / std::max(scale, 1e-300);
      const bool agree = rel <= 1e3 * double(n) * double(keig::unit_roundoff<T>());
      ok = ok && agree;
      const int t = static_cast<int>(type);
      char buf[200];
      std::snprintf(buf, sizeof buf, "%.1f TFLOP/s (n^3, type %d) | max rel. difference %.2g %s", double(n) * n * n /
                    best[0] / 1e12, t, rel, agree ? "agree" : "DIFFER");
      rows.push_back({n, "sygst type " + std::to_string(t), "one her2k a step", buf, best[0], best[1]});
    }
  }
  return ok;
}

// max |x(i, j) - y(i, j)| over two equally shaped matrices.
template <class T, class Space>
double max_abs_difference(const Space& space, const keig::Matrix<T, Space>& x, const keig::Matrix<T, Space>& y) {
  using Policy = Kokkos::MDRangePolicy<Space, Kokkos::Rank<2, Kokkos::Iterate::Left, Kokkos::Iterate::Left>>;
  const index_t rows = x.extent(0), cols = x.extent(1);
  double out = 0;
  Kokkos::parallel_reduce(
      "keig::bench::max_diff", Policy(space, {0, 0}, {rows, cols}),
      KOKKOS_LAMBDA(const index_t i, const index_t j, double& m) {
        const double d = keig::compat::sqrt(double(keig::abs_squared(T(x(i, j) - y(i, j)))));
        m = d > m ? d : m;
      },
      Kokkos::Max<double>(out));
  return out;
}

// Bulge back-transformation Z := Q2 Z (stages::bt_sb2st) per block shape, on
// a random band of half-bandwidth b reduced by sb2st with its reflectors kept
// and a random n x n Z (m = n). Every case starts from a fresh copy of Z;
// seconds are the best of 2 fenced runs after a warm-up. Rows:
//  - full runs of the blocked variant for each sigma x chunk x T factor x
//    apply form (--fold-t 0: 3 gemms per chunk, 1: 2 with W = V T folded,
//    2 / 3: W = V T and the window kernel with 128 / 64 columns per thread
//    block, BtSb2stTuning::window_apply and window_columns; 4: the window
//    choice of bt_sb2st_default_tuning, which may split Z's columns between
//    the window kernel and the gemms, BtSb2stTuning::window_tiles, and may
//    give the columns past the window's whole rounds to narrow window tiles,
//    BtSb2stTuning::remainder_columns; 5 / 6 / 7: that split with those
//    columns on the gemms / window tiles of 16 / of 32 columns; 8 / 9: every
//    column on the window in queued launches of L batches with R copies of V
//    and W for each --queue L:R (default 4:4) / of 8 batches,
//    BtSb2stTuning::queue_batches and queue_copies);
//  - "T only": the same with the Z gemms skipped (BtSb2stTuning::t_factor_only:
//    V, T, G = V^H V and W per wave plus the host plan), so the gemm time of a
//    shape is its full time minus this;
//  - the reflector kernel for n <= 8192 (it is slow).
// peer = sigma 32, chunk 2048, Dots T factor, 3 gemms, one wave per T batch: the blocked variant as
// it was before tunings; every result is checked against its Z.
template <class T, class Space>
bool bench_bt_sb2st(const Args& args, const Space& space, std::vector<Row>& rows) {
  namespace st = keig::stages;
  using R = keig::real_t<T>;
  constexpr bool device = keig::backends::is_cuda_space_v<Space>;
  keig::backends::Context<Space> ctx(space);
  const index_t b = args.band > 0 ? index_t(args.band) : st::Sy2sbTuning<Space>::default_band;
  std::vector<index_t> sweeps = args.sweeps;
  if (sweeps.empty()) sweeps = device ? std::vector<index_t>{16, 32, 64, 128} : std::vector<index_t>{32};
  const double cx = keig::is_complex_v<T> ? 4.0 : 1.0;
  bool ok = true;
  for (index_t n : args.sizes) {
    const index_t m = args.cols > 0 && args.cols < n ? args.cols : n;
    // Random band -> sb2st with reflectors (the dense source borrows the reflector storage).
    auto z_owned = keig::allocate_matrix<T>(space, "keig::bench::Z", n, m);
    auto z0_owned = keig::allocate_matrix<T>(space, "keig::bench::Z0", n, m);
    auto zref_owned = keig::allocate_matrix<T>(space, "keig::bench::Zref", n, m);
    auto store_owned = keig::allocate_matrix<T>(space, "keig::bench::reflectors", n, n);
    const keig::Matrix<T, Space> z = z_owned, z0 = z0_owned, zref = zref_owned, store = store_owned;
    double sb2st_s = 0;
    {
      auto ab = keig::allocate_matrix<T>(space, "keig::bench::band", st::sb2st_band_rows(b), n);
      auto d = keig::allocate_vector<R>(space, "keig::bench::d", n);
      auto e = keig::allocate_vector<R>(space, "keig::bench::e", n);
      auto work = keig::allocate_vector<T>(space, "keig::bench::sb2st_work", st::sb2st_workspace_size(n, b));
      fill_random_hermitian<T>(space, store, 3);
      st::dense_to_band<T, Space>(space, store, b, keig::Matrix<T, Space>(ab));
      space.fence();
      Kokkos::Timer timer;
      st::sb2st<T, Space>(space, b, keig::Matrix<T, Space>(ab), keig::Vector<R, Space>(d), keig::Vector<R, Space>(e),
                          store, keig::Vector<T, Space>(work));
      space.fence();
      sb2st_s = timer.seconds();
    }
    fill_random_hermitian<T>(space, z0, 5);  // any random matrix will do
    space.fence();
    const double flops = cx * 2.0 * double(n) * double(n) * double(m);
    const double tol = 1e-10 * double(n) * (double(keig::unit_roundoff<T>()) / double(keig::unit_roundoff<double>()));
    std::printf("bt_sb2st: n=%lld b=%lld m=%lld, sb2st %.3f s; best of 2 after a warm-up; %.3g useful flops "
                "(2 n^2 m%s); max|dZ| against the peer, limit %.2g\n",
                (long long)n, (long long)b, (long long)m, sb2st_s, flops, keig::is_complex_v<T> ? " x 4" : "", tol);
    std::printf("%7s %4s %6s %6s %-5s %-6s %10s %8s %8s %10s %10s %9s\n", "n", "b", "sigma", "chunk", "T", "apply",
                "seconds", "TFLOP/s", "overhead", "T only [s]", "gemms [s]", "max|dZ|");
    std::fflush(stdout);

    // Best of 2 after a warm-up; f runs on a fresh copy of Z0 each time.
    const auto best_of_2 = [&](const auto& f) {
      double best = 1e300;
      for (int r = 0; r < 3; ++r) {
        Kokkos::deep_copy(space, z_owned, z0_owned);
        space.fence();
        Kokkos::Timer timer;
        f();
        space.fence();
        if (r > 0) best = std::min(best, timer.seconds());
      }
      return best;
    };
    const auto blocked = [&](const st::BtSb2stTuning& tuning) {
      st::BtSb2stTuning sized = tuning;
      sized.chunk = std::min(tuning.chunk, m);
      auto work = keig::allocate_vector<T>(space, "keig::bench::bt_work", st::bt_sb2st_workspace_size<T>(n, b, sized));
      const keig::Vector<T, Space> wv = work;
      return best_of_2([&] { st::bt_sb2st_blocked<T, Space>(ctx, b, store, z, wv, tuning); });
    };
    const auto name = [](st::BtSb2stTFactor f) { return f == st::BtSb2stTFactor::Dots ? "dots" : "gram"; };
    const auto shape = [&](const st::BtSb2stTuning& t) {
      return "s=" + std::to_string(t.sweeps_per_block) + (t.t_factor_only ? "" : " c=" + std::to_string(t.chunk)) +
             " " + name(t.t_factor) + (t.fold_t ? " fold" : "") +
             (t.window_apply ? " window" + std::to_string(t.window_columns) : "") +
             (t.window_apply && t.window_tiles > 0 ? " tiles=" + std::to_string(t.window_tiles) : "") +
             (t.window_apply && t.window_tiles > 0 && t.remainder_columns > 0
                  ? " rest=" + std::to_string(t.remainder_columns)
                  : "") +
             (t.window_apply && t.queue_batches > 0
                  ? " queue=" + std::to_string(t.queue_batches) + ":" + std::to_string(t.queue_copies)
                  : "") +
             " batch=" + std::to_string(t.waves_per_batch);
    };
    // One table row (printed at once, so a run cut short still shows its rows) and one CSV row.
    double peer_s = 0;
    const auto report = [&](const std::string& what, index_t sigma, index_t chunk, const char* factor,
                            const char* apply, double s, double t_only, bool full, double diff) {
      char sig[16] = "-", chk[16] = "-", tf[16] = "-", ov[16] = "-", tonly[16] = "-", gemms[16] = "-", dz[16] = "-";
      if (sigma > 0) {
        std::snprintf(sig, sizeof sig, "%lld", (long long)sigma);
        std::snprintf(ov, sizeof ov, "%.3f", double(b + std::min(sigma, std::max<index_t>(n - 1, 1)) - 1) / double(b));
      }
      if (chunk > 0) std::snprintf(chk, sizeof chk, "%lld", (long long)chunk);
      if (full) std::snprintf(tf, sizeof tf, "%.2f", flops / s / 1e12);
      if (t_only > 0) {
        std::snprintf(tonly, sizeof tonly, "%.4f", t_only);
        std::snprintf(gemms, sizeof gemms, "%.4f", s - t_only);
      }
      if (diff >= 0) std::snprintf(dz, sizeof dz, "%.2e", diff);
      std::printf("%7lld %4lld %6s %6s %-5s %-6s %10.4f %8s %8s %10s %10s %9s%s\n", (long long)n, (long long)b, sig,
                  chk, factor, apply, s, tf, ov, tonly, gemms, dz, diff > tol ? "  FAILED" : "");
      std::fflush(stdout);
      char detail[224];
      std::snprintf(detail, sizeof detail, "b=%lld sigma=%s chunk=%s T=%s apply=%s; %s TFLOP/s; overhead %s; "
                    "T only %s s, gemms %s s; max|dZ| %s; sb2st %.3f s",
                    (long long)b, sig, chk, factor, apply, tf, ov, tonly, gemms, dz, sb2st_s);
      rows.push_back({n, what, "blocked s=32 c=2048 dots", detail, s, peer_s});
      if (diff > tol) {
        std::fprintf(stderr, "keig-bench: bt_sb2st %s at n=%lld differs from the peer by %.3g > %.3g\n",
                     what.c_str(), (long long)n, diff, tol);
        ok = false;
      }
    };

    // The peer and reference result.
    st::BtSb2stTuning peer;
    peer.t_factor = st::BtSb2stTFactor::Dots;
    peer.waves_per_batch = 1;
    peer_s = blocked(peer);
    Kokkos::deep_copy(space, zref_owned, z_owned);
    space.fence();

    // T factor alone, per sigma, T factor and apply form.
    std::vector<std::pair<st::BtSb2stTuning, double>> t_only;
    for (index_t sigma : sweeps)
      for (st::BtSb2stTFactor f : {st::BtSb2stTFactor::Dots, st::BtSb2stTFactor::Gram})
        for (int fold : args.fold_t)
          for (index_t batch : args.batches) {
            if (fold >= 2) continue;  // the window apply's factors are fold 1's
            st::BtSb2stTuning t;
            t.sweeps_per_block = sigma;
            t.t_factor = f;
            t.fold_t = fold != 0;
            t.waves_per_batch = batch;
            t.t_factor_only = true;
            const double s = blocked(t);
            t_only.push_back({t, s});
            const double unchanged = max_abs_difference<T>(space, z, z0);
            report("bt_sb2st T only " + shape(t), sigma, 0, name(f), fold ? "W=VT" : "-", s, 0, false, -1);
            if (unchanged != 0) {
              std::fprintf(stderr, "keig-bench: bt_sb2st T only %s changed Z\n", shape(t).c_str());
              ok = false;
            }
          }
    const auto t_only_of = [&](const st::BtSb2stTuning& t) {
      for (const auto& [u, s] : t_only)
        if (u.sweeps_per_block == t.sweeps_per_block && u.t_factor == t.t_factor && u.fold_t == t.fold_t &&
            u.waves_per_batch == t.waves_per_batch)
          return s;
      return 0.0;
    };
    // The peer's row (its T-only time when sigma 32 was measured).
    report("bt_sb2st " + shape(peer) + " (peer)", 32, 2048, "dots", "3 gemm", peer_s, t_only_of(peer), true, 0);
    std::vector<index_t> chunks;  // "n" resolved, duplicates dropped
    for (index_t c : args.chunks)
      if (std::find(chunks.begin(), chunks.end(), c > 0 ? c : n) == chunks.end()) chunks.push_back(c > 0 ? c : n);
    for (index_t sigma : sweeps)
      for (index_t chunk : chunks)
        for (const std::string& factor : args.t_factors)
          for (int fold : args.fold_t)
            for (index_t batch : args.batches)
              for (std::size_t qv = 0; qv < (fold == 8 ? args.queues.size() : 1); ++qv) {
              st::BtSb2stTuning t;
              t.sweeps_per_block = sigma;
              t.chunk = chunk;
              t.t_factor = factor == "dots" ? st::BtSb2stTFactor::Dots : st::BtSb2stTFactor::Gram;
              t.fold_t = fold != 0;
              t.window_apply = fold >= 2;
              t.window_columns = fold == 2 ? 128 : 64;
              if (fold >= 4 && fold <= 7) {
                const auto d = st::bt_sb2st_default_tuning<Space, T>(space, m);
                t.window_apply = d.window_apply;
                t.window_columns = d.window_columns;
                t.window_tiles = d.window_tiles;
                t.queue_batches = fold == 4 ? d.queue_batches : 0;
                // 5: the columns past the window's whole rounds to the gemms, 6 / 7: to
                // window tiles of 16 / 32 columns (4: the default's choice).
                t.remainder_columns = fold == 4 ? d.remainder_columns : (fold == 5 ? 0 : (fold == 6 ? 16 : 32));
              }
              // 8 / 9: every column on the window in queued launches of L (--queue) / 8 batches.
              if (fold == 8) {
                t.queue_batches = args.queues[qv].first;
                t.queue_copies = args.queues[qv].second;
              }
              if (fold == 9) t.queue_batches = 8;
              t.waves_per_batch = batch;
              if (t.sweeps_per_block == peer.sweeps_per_block && t.chunk == peer.chunk &&
                  t.t_factor == peer.t_factor && t.fold_t == peer.fold_t && t.waves_per_batch == peer.waves_per_batch)
                continue;  // the peer's row
              const double s = blocked(t);
              report("bt_sb2st " + shape(t), sigma, t.chunk, name(t.t_factor),
                     fold == 4   ? "default window"
                     : fold == 5 ? "window+gemms"
                     : fold == 6 ? "window+w16"
                     : fold == 7 ? "window+w32"
                     : fold == 8 ? "queued"
                     : fold == 9 ? "queued8"
                     : fold == 3 ? "window64"
                                 : (fold == 2 ? "window128" : (fold ? "2 gemm" : "3 gemm")),
                     s,
                     t_only_of(t), true, max_abs_difference<T>(space, z, zref));
            }
    if (n <= 8192) {
      const double s = best_of_2([&] { st::bt_sb2st_reflectors<T, Space>(space, b, store, z); });
      report("bt_sb2st reflector kernel", 0, 0, "-", "-", s, 0, true, max_abs_difference<T>(space, z, zref));
    }
  }
  return ok;
}

template <class T, class Space>
int run(const Args& args) {
  Space space;
  std::vector<Row> rows;
  const double bandwidth = copy_bandwidth(space);
  std::printf("keig-bench: %s on %s, scalar %s; copy bandwidth %.0f GB/s (read+write)\n", args.suite.c_str(),
              Space::name(), keig::scalar_traits<T>::name, bandwidth / 1e9);
  if (args.suite == "symv" || args.suite == "all") bench_symv<T>(args, space, bandwidth, rows);
  bool ok = true;
  if (args.suite == "eigh" || args.suite == "all") ok = bench_eigh<T>(args, space, rows) && ok;
  if (args.suite == "generalized") ok = bench_generalized<T>(args, space, rows) && ok;
  if (args.suite == "sy2sb") bench_sy2sb<T>(args, space, rows);
  if (args.suite == "sygst") ok = bench_sygst<T>(args, space, rows) && ok;
  if (args.suite == "bt_sb2st") ok = bench_bt_sb2st<T>(args, space, rows);
  if (args.suite == "sb2st") ok = bench_sb2st<T>(args, space, rows) && ok;
  std::ofstream csv(args.csv);
  csv << "n,case,keig_seconds,peer,peer_seconds,ratio,detail\n";
  std::printf("%7s  %-28s %11s  %-20s %11s  %7s  %s\n", "n", "case", "keig [s]", "peer", "peer [s]", "ratio",
              "detail");
  for (const auto& r : rows) {
    const double ratio = r.peer_s / r.keig_s;
    std::printf("%7lld  %-28s %11.5f  %-20s %11.5f  %7.2f  %s\n", (long long)r.n, r.what.c_str(), r.keig_s,
                r.peer.c_str(), r.peer_s, ratio, r.detail.c_str());
    csv << r.n << "," << r.what << "," << r.keig_s << "," << r.peer << "," << r.peer_s << "," << ratio << ",\""
        << r.detail << "\"\n";
  }
  std::printf("csv: %s (ratio = peer seconds / keig seconds)\n", args.csv.c_str());
  return ok ? 0 : 1;
}

template <class Space>
int dispatch(const Args& args) {
  if (args.type == "double") return run<double, Space>(args);
  if (args.type == "float") return run<float, Space>(args);
  if (args.type == "cdouble") return run<Kokkos::complex<double>, Space>(args);
  if (args.type == "cfloat") return run<Kokkos::complex<float>, Space>(args);
  usage("--type must be double, float, cdouble or cfloat");
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(k + " needs a value");
      return argv[++i];
    };
    if (k == "--suite") args.suite = value();
    else if (k == "--type") args.type = value();
    else if (k == "--space") args.space = value();
    else if (k == "--csv") args.csv = value();
    else if (k == "--repeat") args.repeat = std::stoi(value());
    else if (k == "--runs") {
      args.runs = std::stoi(value());
      if (args.runs < 1) usage("--runs takes a count >= 1");
    }
    else if (k == "--jobs") args.jobs = split(value());
    else if (k == "--methods") args.methods = split(value());
    else if (k == "--band") args.band = std::stoi(value());
    else if (k == "--panel") {
      args.panel = std::stoi(value());
      if (args.panel < 0) usage("--panel takes a panel width >= 0");
    }
    else if (k == "--ld") {
      const std::string v = value();
      if (v != "packed" && v != "aligned") usage("--ld takes packed or aligned");
      args.aligned_ld = v == "aligned";
    }
    else if (k == "--peer") {
      args.peer = value();
      if (args.peer != "vendor" && args.peer != "none") usage("--peer takes vendor or none");
    } else if (k == "--stage-times") {
      const std::string v = value();
      if (v != "0" && v != "1") usage("--stage-times takes 0 or 1");
      args.stage_times = v == "1";
    } else if (k == "--verify") {
      args.verify = true;
    } else if (k == "--problem-type") {
      args.problem_types.clear();
      for (const auto& v : split(value())) {
        if (v != "1" && v != "2" && v != "3") usage("--problem-type takes 1, 2 and/or 3");
        args.problem_types.push_back(static_cast<keig::GeneralizedType>(std::stoi(v)));
      }
    } else if (k == "--solver") {
      const std::string v = value();
      if (v == "auto") args.solver = keig::TridiagonalSolver::Auto;
      else if (v == "dc") args.solver = keig::TridiagonalSolver::DivideAndConquer;
      else if (v == "mrrr") args.solver = keig::TridiagonalSolver::MRRR;
      else if (v == "bisection") args.solver = keig::TridiagonalSolver::BisectionInverseIteration;
      else usage("--solver takes auto, dc, mrrr or bisection");
    }
    else if (k == "--uplo") {
      args.uplos.clear();
      for (const auto& v : split(value())) {
        if (v == "lower") args.uplos.push_back(keig::Uplo::Lower);
        else if (v == "upper") args.uplos.push_back(keig::Uplo::Upper);
        else usage("--uplo takes lower and/or upper");
      }
    } else if (k == "--symv-segments")
      for (const auto& v : split(value())) args.symv_segments.push_back(std::stoll(v));
    else if (k == "--sweeps") {
      args.sweeps.clear();
      for (const auto& v : split(value())) args.sweeps.push_back(std::stoll(v));
    } else if (k == "--chunks") {
      args.chunks.clear();
      for (const auto& v : split(value())) args.chunks.push_back(v == "n" ? 0 : std::stoll(v));
    } else if (k == "--t-factors") {
      args.t_factors = split(value());
      for (const auto& f : args.t_factors)
        if (f != "gram" && f != "dots") usage("--t-factors takes gram and/or dots");
    } else if (k == "--batches") {
      args.batches.clear();
      for (const auto& v : split(value())) args.batches.push_back(std::stoll(v));
    } else if (k == "--groups") {
      args.groups.clear();
      for (const auto& v : split(value())) {
        args.groups.push_back(std::stoll(v));
        if (args.groups.back() < 1) usage("--groups takes panel counts >= 1");
      }
    } else if (k == "--blocks") {
      args.blocks.clear();
      for (const auto& v : split(value())) {
        args.blocks.push_back(std::stoll(v));
        if (args.blocks.back() < 1) usage("--blocks takes block-column widths >= 1");
      }
    } else if (k == "--splits") {
      args.splits.clear();
      for (const auto& v : split(value())) {
        args.splits.push_back(std::stoll(v));
        if (args.splits.back() < 1) usage("--splits takes sub-column widths >= 1");
      }
    } else if (k == "--cols") {
      args.cols = std::stoll(value());
      if (args.cols < 1) usage("--cols takes a column count >= 1");
    } else if (k == "--queue") {
      args.queues.clear();
      for (const auto& v : split(value())) {
        const auto colon = v.find(':');
        if (colon == std::string::npos) usage("--queue takes L:R pairs (batches a launch : copies of V and W)");
        args.queues.push_back({std::stoll(v.substr(0, colon)), std::stoll(v.substr(colon + 1))});
      }
    } else if (k == "--fold-t") {
      args.fold_t.clear();
      for (const auto& v : split(value())) args.fold_t.push_back(std::stoi(v));
    }
    else if (k == "--n") {
      args.sizes.clear();
      for (const auto& s : split(value())) args.sizes.push_back(std::stoll(s));
    } else usage("unknown option '" + k + "'");
  }
  if (args.suite != "symv" && args.suite != "eigh" && args.suite != "all" && args.suite != "generalized" &&
      args.suite != "bt_sb2st" && args.suite != "sy2sb" && args.suite != "sb2st" && args.suite != "sygst")
    usage("--suite must be symv, eigh, generalized, sy2sb, sb2st, sygst, bt_sb2st or all");
  for (index_t c : args.chunks)
    if (c < 0) usage("--chunks takes positive counts or n");
  if (args.verify && (args.suite == "generalized" || args.suite == "all"))
    for (const auto type : args.problem_types)
      if (type != keig::GeneralizedType::AxLBx) usage("--verify checks the generalized type 1 only");
  try {
    if (args.space == "host") return dispatch<Kokkos::DefaultHostExecutionSpace>(args);
    return dispatch<Kokkos::DefaultExecutionSpace>(args);
  } catch (const keig::Error& e) {
    std::fprintf(stderr, "keig-bench: %s\n", e.what());
    return 1;
  }
}
