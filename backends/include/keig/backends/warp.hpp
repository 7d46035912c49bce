// Sums across the lanes of a warp (CUDA shuffles), for team kernels whose
// teams are whole warps: team size a multiple of 32 and vector length 1, so
// team_rank() % 32 is the lane. They replace a scratch round trip and a team
// barrier per reduction (sb2st's tiled bulge-chase task).
#pragma once

#include <Kokkos_Core.hpp>
#include <type_traits>

namespace keig::backends {

namespace detail {
#if defined(__CUDA_ARCH__)
// value of lane l ^ offset among the lanes in `mask` (Kokkos::complex: the
// two parts).
template <class T>
__device__ __forceinline__ T shuffle_xor(unsigned mask, const T& value, int offset) {
  if constexpr (std::is_arithmetic_v<T>) {
    return __shfl_xor_sync(mask, value, offset);
  } else {
    return T(__shfl_xor_sync(mask, value.real(), offset), __shfl_xor_sync(mask, value.imag(), offset));
  }
}
#endif

// value summed over lanes l ^ offset, offset = first, 2 first, ... < last,
// among the lanes in `mask`.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T butterfly_sum(unsigned mask, T value, int first, int last) {
#if defined(__CUDA_ARCH__)
  for (int offset = first; offset < last; offset *= 2) value += shuffle_xor(mask, value, offset);
#else
  (void)mask;
  (void)first;
  (void)last;
#endif
  return value;
}
// value reduced by `op` over the lanes of `mask` that differ from this one
// in the bits below `last` (arithmetic types).
template <class T, class Op>
KOKKOS_FORCEINLINE_FUNCTION T butterfly_reduce(unsigned mask, T value, int last, Op op) {
#if defined(__CUDA_ARCH__)
  for (int offset = 1; offset < last; offset *= 2) value = op(value, __shfl_xor_sync(mask, value, offset));
#else
  (void)mask;
  (void)last;
  (void)op;
#endif
  return value;
}

// The mask of the aligned group of Group consecutive lanes that holds this lane.
template <int Group>
KOKKOS_FORCEINLINE_FUNCTION unsigned group_mask() {
  static_assert(Group >= 1 && Group <= 32 && (Group & (Group - 1)) == 0, "keig: Group must be 1, 2, 4, ..., 32");
  unsigned mask = 0xffffffffu;
#if defined(__CUDA_ARCH__)
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  if constexpr (Group < 32) mask = ((1u << Group) - 1u) << (lane & ~unsigned(Group - 1));
#endif
  return mask;
}
}  // namespace detail

// Butterfly sum of `value` over the lanes that differ from this one in the
// bits first, 2 first, ..., below last (powers of two): (1, g) sums each
// aligned group of g consecutive lanes, (g, 32) the lanes at the same place
// of every group. Every lane ends with the same bits (IEEE addition
// commutes, and each step adds the same two operands on both lanes). All 32
// lanes of the warp must call it together. Host teams are single threads:
// there it returns `value`.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T warp_sum(T value, int first, int last) {
  return detail::butterfly_sum(0xffffffffu, value, first, last);
}

// warp_sum of each of N independent values, level by level: the N
// shuffles of a level are in flight together, so N sums cost one chain of
// shuffles instead of N (the same additions, so the same bits as N calls).
template <int N, class T>
KOKKOS_FORCEINLINE_FUNCTION void warp_sums(T (&values)[N], int first, int last) {
#if defined(__CUDA_ARCH__)
  for (int offset = first; offset < last; offset *= 2) {
    T other[N];
    for (int j = 0; j < N; ++j) other[j] = detail::shuffle_xor(0xffffffffu, values[j], offset);
    for (int j = 0; j < N; ++j) values[j] += other[j];
  }
#else
  (void)values;
  (void)first;
  (void)last;
#endif
}

// `value` of lane `source` (0..31), for every lane of the warp: all 32
// lanes must call it together, with the same register behind `value`.
// Host teams are single threads: there it returns `value`.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T warp_fetch(T value, int source) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_arithmetic_v<T>) {
    return __shfl_sync(0xffffffffu, value, source);
  } else {
    return T(__shfl_sync(0xffffffffu, value.real(), source), __shfl_sync(0xffffffffu, value.imag(), source));
  }
#else
  (void)source;
  return value;
#endif
}

// Sum of `value` over the aligned group of Group consecutive lanes (a power
// of two up to 32) that holds this lane. Only that group's lanes must call it
// together: the other groups of the warp may be elsewhere. Host: `value`.
template <int Group, class T>
KOKKOS_FORCEINLINE_FUNCTION T group_sum(T value) {
  return detail::butterfly_sum(detail::group_mask<Group>(), value, 1, Group);
}

// Maximum and minimum of `value` (arithmetic) over the same aligned group,
// with group_sum's calling rules; exact, so every lane ends with the same bits.
template <int Group, class T>
KOKKOS_FORCEINLINE_FUNCTION T group_max(T value) {
  return detail::butterfly_reduce(detail::group_mask<Group>(), value, Group, [](T a, T b) { return a < b ? b : a; });
}
template <int Group, class T>
KOKKOS_FORCEINLINE_FUNCTION T group_min(T value) {
  return detail::butterfly_reduce(detail::group_mask<Group>(), value, Group, [](T a, T b) { return b < a ? b : a; });
}
// Product of `value` (arithmetic) over the same aligned group, with
// group_sum's calling rules (IEEE multiplication commutes, so every lane
// ends with the same bits).
template <int Group, class T>
KOKKOS_FORCEINLINE_FUNCTION T group_product(T value) {
  return detail::butterfly_reduce(detail::group_mask<Group>(), value, Group, [](T a, T b) { return a * b; });
}

}  // namespace keig::backends
