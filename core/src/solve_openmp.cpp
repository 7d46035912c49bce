// keig::detail::solve for Kokkos::OpenMP (all four scalars).
#include "solve_impl.hpp"

#if defined(KOKKOS_ENABLE_OPENMP)
namespace keig::detail {
KEIG_INSTANTIATE_SOLVE_ALL(Kokkos::OpenMP)
}  // namespace keig::detail
#endif
