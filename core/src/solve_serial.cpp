// keig::detail::solve for Kokkos::Serial (all four scalars).
#include "solve_impl.hpp"

#if defined(KOKKOS_ENABLE_SERIAL)
namespace keig::detail {
KEIG_INSTANTIATE_SOLVE_ALL(Kokkos::Serial)
}  // namespace keig::detail
#endif
