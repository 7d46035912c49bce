// keig-bench: keig against the peer a user would otherwise pick, measured in
// the same run on the same data (cuBLAS/cuSOLVER on CUDA, OpenBLAS/LAPACK on
// hosts). Prints a table and writes one CSV row per case:
//   n,case,keig_seconds,peer,peer_seconds,ratio,detail
// ratio = peer_seconds / keig_seconds (> 1: keig is faster).
//
//   keig-bench [--suite symv|eigh|generalized|all] [--n 4096,8192] [--type double|float|cdouble|cfloat]
//              [--space device|host] [--repeat R] [--jobs values,vectors] [--csv FILE]
//              [--methods one-stage,two-stage] [--band B]
//              [--symv-segments 1,2,4,...]   (symv tuning sweep: blocks per device team)
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "keig/backends/blas.hpp"
#include "keig/generate.hpp"
#include "keig/keig.hpp"
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
  std::vector<index_t> symv_segments;  // extra symv rows with a fixed segment length (tuning sweep)
  int repeat = 20;
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
               "keig-bench: %s\nusage: keig-bench [--suite symv|eigh|generalized|all] [--n N1,N2,...] [--type double|float|cdouble|cfloat]\n"
               "                  [--space device|host] [--repeat R] [--jobs values,vectors] [--csv FILE]\n"
               "                  [--methods one-stage,two-stage] [--band B]\n",
               error.c_str());
  std::exit(2);
}

struct Row {
  index_t n;
  std::string what, peer, detail;
  double keig_s, peer_s;
};

// Deterministic pseudo-random Hermitian matrix with variance-1 entries, made on
// the execution space (host generation would dominate at n = 32768).
template <class T, class Space>
void fill_random_hermitian(const Space& space, const keig::Matrix<T, Space>& a, std::uint64_t seed) {
  const index_t n = a.extent(0);
  using Policy = Kokkos::MDRangePolicy<Space, Kokkos::Rank<2, Kokkos::Iterate::Left, Kokkos::Iterate::Left>>;
  Kokkos::parallel_for(
      "keig::bench::fill", Policy(space, {0, 0}, {n, n}), KOKKOS_LAMBDA(const index_t i, const index_t j) {
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
    const double keig_s = median_seconds(args.repeat, [&] {
      keig::stages::symv<T, Space>(space, keig::Uplo::Lower, T(1), a, xv, T(0), yv, wv);
      space.fence();
    });
    for (index_t seg : args.symv_segments) {
      const double t = median_seconds(args.repeat, [&] {
        keig::stages::symv<T, Space>(space, keig::Uplo::Lower, T(1), a, xv, T(0), yv, wv, seg);
        space.fence();
      });
      const double useful = (double(n) * (n + 1) / 2 + 2.0 * n) * sizeof(T);
      char d[96];
      std::snprintf(d, sizeof d, "keig %.0f GB/s (%.0f%% of copy)", useful / t / 1e9, 100 * useful / t / bandwidth);
      rows.push_back({n, "symv segment=" + std::to_string(seg), "(sweep)", d, t, t});
    }
    const double peer_s = median_seconds(args.repeat, [&] {
      keig::backends::symv<T>(ctx, keig::Uplo::Lower, T(1), a, xv, T(0), ypv);
      space.fence();
    });
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
    char detail[256];
    std::snprintf(detail, sizeof detail, "keig %.0f GB/s (%.0f%% of copy %.0f GB/s); peer %.0f GB/s; rel.diff %.1e",
                  useful / keig_s / 1e9, 100 * useful / keig_s / bandwidth, bandwidth / 1e9, useful / peer_s / 1e9,
                  diff / std::max(scale, 1e-300));
    rows.push_back({n, "symv", keig::backends::is_cuda_space_v<Space> ? "cuBLAS symv/hemv" : "OpenBLAS symv/hemv",
                    detail, keig_s, peer_s});
  }
}

// "sytrd=0.8s tridiagonal=3.5s ...": a run's stages without the keig:: prefix.
std::string stage_seconds(const keig::Result& r) {
  std::ostringstream out;
  for (const auto& s : r.stages)
    if (s.name != "keig::check_finite") out << s.name.substr(6) << "=" << s.seconds << "s ";
  return out.str();
}

template <class T, class Space>
void bench_eigh(const Args& args, const Space& space, std::vector<Row>& rows) {
  using R = keig::real_t<T>;
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
    auto a = keig::allocate_matrix<T>(space, "keig::bench::A", n, n);
    auto w_keig = keig::allocate_vector<R>(space, "keig::bench::w", n);
    auto w_peer = keig::allocate_vector<R>(space, "keig::bench::w_peer", n);
    for (const std::string& job : args.jobs) {
      const bool vectors = job == "vectors";
      auto z = keig::allocate_matrix<T>(space, "keig::bench::Z", vectors ? n : 0, vectors ? n : 0);
      auto run = [&](keig::Method method, auto& w) {
        fill_random_hermitian<T>(space, keig::Matrix<T, Space>(a), 11);
        space.fence();
        keig::Options o;
        o.method = method;
        o.band_width = args.band;
        return vectors ? keig::eigh(space, a, w, z, o) : keig::eigvalsh(space, a, w, o);
      };
      const keig::Result peer = run(keig::Method::Vendor, w_peer);
      double peer_s = 0;
      for (const auto& s : peer.stages)
        if (s.name == "keig::vendor::eigh") peer_s = s.seconds;  // the vendor routine alone
      for (const std::string& method : args.methods) {
      const keig::Result mine = run(method == "two-stage" ? keig::Method::TwoStage : keig::Method::OneStage, w_keig);
      // Eigenvalue agreement, scaled by n eps max|w|.
      auto wk = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w_keig);
      auto wp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w_peer);
      double err = 0, big = 0;
      for (index_t i = 0; i < n; ++i) {
        err = std::max(err, std::abs(double(wk(i)) - double(wp(i))));
        big = std::max(big, std::abs(double(wp(i))));
      }
      std::ostringstream detail;
      detail << stage_seconds(mine);
      char buf[128];
      std::snprintf(buf, sizeof buf, "| eig diff %.2g n*eps*max|w|", err / (double(n) * keig::unit_roundoff<T>() * std::max(big, 1e-300)));
      detail << buf;
      rows.push_back({n, std::string("eigh ") + job + " (" + method + ")", peer.method.substr(8), detail.str(),
                      mine.seconds, peer_s});
      }
      z = decltype(z)();
    }
  }
}

// Generalized IC-NMA-like pairs (seed 002 §6.1): all pairs and the 1 %
// smallest, keig's pipelines against the vendor's ?sygvd / ?sygvdx.
template <class T, class Space>
void bench_generalized(const Args& args, const Space& space, std::vector<Row>& rows) {
  using R = keig::real_t<T>;
  for (index_t n : args.sizes) {
    const keig::TestPair<T> pair = keig::generate_icnma_pair<T>(n, 5);
    auto a0 = keig::allocate_matrix<T>(space, "keig::bench::A0", n, n);
    auto b = keig::allocate_matrix<T>(space, "keig::bench::B", n, n);
    auto a = keig::allocate_matrix<T>(space, "keig::bench::A", n, n);
    Kokkos::deep_copy(space, a0, pair.a);
    Kokkos::deep_copy(space, b, pair.b);
    auto w_keig = keig::allocate_vector<R>(space, "keig::bench::w", n);
    auto w_peer = keig::allocate_vector<R>(space, "keig::bench::w_peer", n);
    auto z = keig::allocate_matrix<T>(space, "keig::bench::Z", n, n);
    for (const std::string job : {"all", "1%"}) {
      const index_t m = job == "all" ? n : std::max<index_t>(1, n / 100);
      auto run = [&](keig::Method method, auto& w) {
        Kokkos::deep_copy(space, a, a0);
        space.fence();
        keig::Options o;
        o.method = method;
        o.band_width = args.band;
        if (job != "all") o.range = keig::Range::index(0, m - 1);
        return keig::eigh(space, a, b, w, z, o);
      };
      const keig::Result peer = run(keig::Method::Vendor, w_peer);
      double peer_s = 0;
      for (const auto& s : peer.stages)
        if (s.name == "keig::vendor::eigh_generalized") peer_s = s.seconds;
      for (const std::string& method : args.methods) {
        const keig::Result mine = run(method == "two-stage" ? keig::Method::TwoStage : keig::Method::OneStage, w_keig);
        auto wk = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w_keig);
        auto wp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w_peer);
        double err = 0, big = 0;
        for (index_t i = 0; i < m; ++i) {
          err = std::max(err, std::abs(double(wk(i)) - double(wp(i))) / std::max(std::abs(double(wp(i))), 1e-300));
          big = std::max(big, std::abs(double(wp(i))));
        }
        std::ostringstream detail;
        detail << stage_seconds(mine);
        char buf[96];
        std::snprintf(buf, sizeof buf, "| max rel. eig diff %.2g", err);
        detail << buf;
        rows.push_back({n, "icnma " + job + " vectors (" + method + ")", peer.method.substr(8), detail.str(),
                        mine.seconds, peer_s});
      }
    }
  }
}

template <class T, class Space>
int run(const Args& args) {
  Space space;
  std::vector<Row> rows;
  const double bandwidth = copy_bandwidth(space);
  std::printf("keig-bench: %s on %s, scalar %s; copy bandwidth %.0f GB/s (read+write)\n", args.suite.c_str(),
              Space::name(), keig::scalar_traits<T>::name, bandwidth / 1e9);
  if (args.suite == "symv" || args.suite == "all") bench_symv<T>(args, space, bandwidth, rows);
  if (args.suite == "eigh" || args.suite == "all") bench_eigh<T>(args, space, rows);
  if (args.suite == "generalized") bench_generalized<T>(args, space, rows);
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
  return 0;
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
    else if (k == "--jobs") args.jobs = split(value());
    else if (k == "--methods") args.methods = split(value());
    else if (k == "--band") args.band = std::stoi(value());
    else if (k == "--symv-segments")
      for (const auto& v : split(value())) args.symv_segments.push_back(std::stoll(v));
    else if (k == "--n") {
      args.sizes.clear();
      for (const auto& s : split(value())) args.sizes.push_back(std::stoll(s));
    } else usage("unknown option '" + k + "'");
  }
  if (args.suite != "symv" && args.suite != "eigh" && args.suite != "all" && args.suite != "generalized")
    usage("--suite must be symv, eigh, generalized or all");
  try {
    if (args.space == "host") return dispatch<Kokkos::DefaultHostExecutionSpace>(args);
    return dispatch<Kokkos::DefaultExecutionSpace>(args);
  } catch (const keig::Error& e) {
    std::fprintf(stderr, "keig-bench: %s\n", e.what());
    return 1;
  }
}
