// Asynchronous copies from global memory into team scratch (CUDA cp.async,
// sm_80 and later), for streaming kernels that keep the next stage's loads in
// flight without holding them in registers (symv's off-diagonal blocks).
// A thread's copies form groups (async_copy_commit); async_copy_wait<P>()
// returns once at most P of its groups are still in flight, and a team
// barrier after it makes every thread's finished copies visible to the team.
// Elsewhere (hosts, older devices) a copy completes at once.
//
// A copy carries an L2 eviction policy (l2_evict_first): data streamed
// once, such as a matrix that a matrix-vector product reads, then leaves
// the L2 cache to what is read again soon (sytrd's panels and symv's partial
// sums: H100, sytrd at n = 16384 2.95 -> 2.86 s).
#pragma once

#include <Kokkos_Core.hpp>

namespace keig::backends {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define KEIG_ASYNC_COPY 1
#endif

// An L2 cache policy for async_copy (createpolicy; 0 where there is none).
struct L2Policy {
  unsigned long long bits = 0;
};

// Lines that an access with this policy brings into L2 are evicted first.
KOKKOS_FORCEINLINE_FUNCTION L2Policy l2_evict_first() {
  L2Policy policy;
#if defined(KEIG_ASYNC_COPY)
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy.bits));
#endif
  return policy;
}

// scratch[0] = valid ? global[0] : 0 for a 4-, 8- or 16-byte T, with the
// L2 policy `policy`; when !valid nothing is read, but `global` must still
// point into an allocation.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void async_copy(T* scratch, const T* global, bool valid, L2Policy policy) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16, "keig: async_copy moves 4, 8 or 16 bytes");
#if defined(KEIG_ASYNC_COPY)
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(scratch));
  const int bytes = valid ? static_cast<int>(sizeof(T)) : 0;  // 0: the entry is zero-filled
  if constexpr (sizeof(T) == 16)
    asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2, %3;\n" ::"r"(dst), "l"(global),
                 "r"(bytes), "l"(policy.bits)
                 : "memory");
  else
    asm volatile("cp.async.ca.shared.global.L2::cache_hint [%0], [%1], %2, %3, %4;\n" ::"r"(dst), "l"(global),
                 "n"(sizeof(T)), "r"(bytes), "l"(policy.bits)
                 : "memory");
#else
  (void)policy;
  *scratch = valid ? *global : T(0);
#endif
}

// Closes this thread's current group of copies.
KOKKOS_FORCEINLINE_FUNCTION void async_copy_commit() {
#if defined(KEIG_ASYNC_COPY)
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Waits until at most Pending of this thread's committed groups are in flight.
template <int Pending>
KOKKOS_FORCEINLINE_FUNCTION void async_copy_wait() {
#if defined(KEIG_ASYNC_COPY)
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
#endif
}

#undef KEIG_ASYNC_COPY

}  // namespace keig::backends
