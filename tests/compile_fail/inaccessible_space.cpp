// Must not compile (CUDA builds): host memory is not accessible from the Cuda space.
#include "keig/keig.hpp"

void call() {
  Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace> a("A", 4, 4), z("Z", 4, 4);
  Kokkos::View<double*, Kokkos::HostSpace> w("w", 4);
  keig::eigh(Kokkos::Cuda(), a, w, z);
}
