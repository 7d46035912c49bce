// Test driver: the application (not keig) initializes Kokkos.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include "poison.hpp"
#include "support.hpp"

// Every test starts with NaN in the team scratch (poison.hpp): a
// kernel whose result depends on team scratch it did not write gets NaN in
// every run instead of in a rare one.
class PoisonTeamScratch : public ::testing::EmptyTestEventListener {
  void OnTestStart(const ::testing::TestInfo&) override {
    keig::test::poison_team_scratch();
    Kokkos::fence();
  }
};

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  Kokkos::ScopeGuard kokkos(argc, argv);
  std::printf("keig tests on execution space %s\n", keig::test::Space::name());
  ::testing::UnitTest::GetInstance()->listeners().Append(new PoisonTeamScratch);  // gtest owns it
  return RUN_ALL_TESTS();
}
