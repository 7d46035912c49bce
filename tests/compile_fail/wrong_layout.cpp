// Must not compile: keig takes column-major (LayoutLeft) matrices only.
#include "keig/keig.hpp"

void call() {
  Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> a("A", 4, 4), z("Z", 4, 4);
  Kokkos::View<double*, Kokkos::HostSpace> w("w", 4);
  keig::eigh(Kokkos::DefaultHostExecutionSpace(), a, w, z);
}
