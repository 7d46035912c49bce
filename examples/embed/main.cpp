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
  Kokkos::parallel_for(
      "laplacian", Kokkos::RangePolicy<Space>(space, 0, n), KOKKOS_LAMBDA(int i) {
        A(i, i) = 2;
        if (i + 1 < n) A(i + 1, i) = -1;  // keig reads the lower triangle by default
      });
  keig::Result r = keig::eigh(space, A, w, Z);
  auto wh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w);
  const double pi = 3.14159265358979323846;
  double err = 0;
  for (int k = 0; k < n; ++k) err = std::max(err, std::abs(wh(k) - (2 - 2 * std::cos((k + 1) * pi / (n + 1)))));
  std::printf("embed: %lld eigenvalues on %s with %s, max error %.2e\n", (long long)r.eigenvalues_found,
              r.execution_space.c_str(), r.method.c_str(), err);
  return err < 1e-12 ? 0 : 1;
}
