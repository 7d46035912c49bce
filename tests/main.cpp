// Test driver: the application (not keig) initializes Kokkos.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include "support.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  Kokkos::ScopeGuard kokkos(argc, argv);
  std::printf("keig tests on execution space %s\n", keig::test::Space::name());
  return RUN_ALL_TESTS();
}
