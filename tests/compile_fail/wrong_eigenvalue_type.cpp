// Must not compile: eigenvalues are real, w must be a View of the real type.
#include "keig/keig.hpp"

void call() {
  using C = Kokkos::complex<double>;
  Kokkos::View<C**, Kokkos::LayoutLeft, Kokkos::HostSpace> a("A", 4, 4), z("Z", 4, 4);
  Kokkos::View<C*, Kokkos::HostSpace> w("w", 4);
  keig::eigh(Kokkos::DefaultHostExecutionSpace(), a, w, z);
}
