// keig::detail::solve for Kokkos::Cuda (all four scalars).
#include "solve_impl.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
namespace keig::detail {
KEIG_INSTANTIATE_SOLVE_ALL(Kokkos::Cuda)
}  // namespace keig::detail
#endif
