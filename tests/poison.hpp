// Stale team scratch made visible: GPUs keep a multiprocessor's shared
// memory from one kernel to the next (and Kokkos a host thread's scratch
// buffer), so a kernel that reads team scratch it did not write in the same
// launch gets whatever an earlier kernel left, which is usually finite and
// only rarely NaN or Inf. poison_team_scratch fills the team scratch of
// every multiprocessor (every host thread) with NaN first, so such a read
// shows up in every run (main.cpp does it before every test; tests of
// multi-launch stages may do it between launches). scripts/poison-shared
// does it on GPUs before every kernel launch, for an audit of the suite.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>

#include "keig/backends/context.hpp"
#include "support.hpp"

namespace keig::test {

// Asynchronous on space. Several sizes a team, so the fill reaches the
// places that both large and small allocations get, four teams a
// multiprocessor. On hosts team scratch is each thread's buffer, which
// Kokkos keeps from one launch to the next as well: four one-thread teams
// a thread.
inline void poison_team_scratch(const Space& space = Space()) {
  using Policy = Kokkos::TeamPolicy<Space>;
  using Words = Kokkos::View<std::uint32_t*, Space::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  constexpr bool gpu = backends::is_cuda_space_v<Space>;
  const int teams = 4 * backends::multiprocessors(space), team_size = gpu ? 256 : 1;
  const index_t most = static_cast<index_t>(Policy::scratch_size_max(0) / sizeof(std::uint32_t)) - 64;
  for (const index_t words : {most, most / 4, index_t(4096)}) {
    Kokkos::parallel_for(
        "keig::test::poison_team_scratch",
        Policy(space, teams, team_size).set_scratch_size(0, Kokkos::PerTeam(Words::shmem_size(words))),
        KOKKOS_LAMBDA(const typename Policy::member_type& team) {
          // Through a volatile pointer: nothing reads these stores.
          volatile std::uint32_t* const s = Words(team.team_scratch(0), words).data();
          // All ones: NaN as a float, and two of them NaN as a double.
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, words), [&](const index_t i) { s[i] = 0xffffffffu; });
        });
  }
}

}  // namespace keig::test
