// Embedding keig in a Kokkos application: the application owns Kokkos
// (initialize/finalize) and its execution-space instances; keig runs its work
// on the instance it is given and never initializes Kokkos itself.
#include <Kokkos_Core.hpp>
#include <cstdio>

#include <keig/keig.hpp>

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  using Space = Kokkos::DefaultExecutionSpace;
  const int n = 200;
  // The 1D Laplacian (2, -1): eigenvalues 2 - 2 cos(k pi / (n + 1)).
  Kokkos::View<double**, Kokkos::LayoutLeft, Space::memory_space> A("A", n, n), Z("Z", n, n);
  Kokkos::View<double*, Space::memory_space> w("w", n);
  Space space;  // the application's instance (its own CUDA stream on GPUs)
  const auto fill = [&] {  // A is keig's workspace: refilled before every solve
    Kokkos::deep_copy(space, A, 0.0);
    Kokkos::parallel_for(
        "laplacian", Kokkos::RangePolicy<Space>(space, 0, n), KOKKOS_LAMBDA(int i) {
          A(i, i) = 2;
          if (i + 1 < n) A(i + 1, i) = -1;  // keig reads the lower triangle by default
        });
  };
  const auto max_error = [&] {
    auto wh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w);
    const double pi = 3.14159265358979323846;
    double err = 0;
    for (int k = 0; k < n; ++k) err = std::max(err, std::abs(wh(k) - (2 - 2 * std::cos((k + 1) * pi / (n + 1)))));
    return err;
  };
  fill();
  keig::Result r = keig::eigh(space, A, w, Z);
  double err = max_error();
  std::printf("embed: %lld eigenvalues on %s with %s, max error %.2e\n", (long long)r.eigenvalues_found,
              r.execution_space.c_str(), r.method.c_str(), err);
  // Repeated solves (an SCF loop) can share one workspace that the
  // application allocates once: keig then allocates none of its own.
  keig::Options opts;
  opts.method = keig::Method::TwoStage;
  Kokkos::View<unsigned char*, Space::memory_space> workspace("keig workspace",
                                                              keig::workspace_bytes<double>(space, n, opts));
  opts.workspace = workspace.data();
  opts.workspace_size = workspace.size();
  for (int iteration = 0; iteration < 2; ++iteration) {
    fill();
    r = keig::eigh(space, A, w, Z, opts);
    err = std::max(err, max_error());
  }
  std::printf("embed: two solves with %s in a %zu-byte workspace of the application's, max error %.2e\n",
              r.method.c_str(), workspace.size(), err);
  return err < 1e-12 && r.workspace_fallbacks == 0 ? 0 : 1;
}
