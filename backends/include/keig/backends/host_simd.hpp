// Host CPU primitives: inner loops that the compiler does not keep in vector
// registers on its own, written with the CPU's intrinsics in
// backends/src/host_simd.cpp (AVX-512 where libkeig is built for it, plain
// loops otherwise; declared for the scalar types that have a kernel), and
// the prefetch, atomic and spin-wait primitives of host-only stage code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <thread>

namespace keig::backends::host {

using index_t = std::int64_t;

// Columns of the row-major stripes that apply_reflector_quad works on.
inline constexpr int reflector_stripe_columns = 64;

// q := H_3 H_2 H_1 H_0 q for a rows x 64 block q of a row-major stripe
// (64 doubles a row, rows consecutive), H_j = I - tau_j v_j v_j^T, H_0
// applied first. v holds the four vectors one after another (v_j at
// v + j * rows, zero outside the reflector's rows). With
// d_j = tau_j (v_j^T q - sum_{i<j} (v_j^T v_i) d_i), the product is
// q - sum_j v_j d_j: one pass forms the four dot products, one applies them
// (stages/bt_sb2st's host kernel, ELPA's multi-Householder kernels, seed 004
// §1).
void apply_reflector_quad(index_t rows, const double* v, const double* tau, double* q);

// Asks the caches for [p, p + bytes) ahead of its use (a hint, no effect on
// results): loops that jump between many short streams, which the hardware
// prefetchers do not follow.
inline void prefetch(const void* p, std::size_t bytes) {
#if defined(__GNUC__) || defined(__clang__)
  const char* c = static_cast<const char*>(p);
  for (std::size_t off = 0; off < bytes; off += 64) __builtin_prefetch(c + off, 0, 3);
#else
  (void)p;
  (void)bytes;
#endif
}

// Counters that host threads hand work through (GCC/Clang atomics; the
// orderings say which writes a reader of the counter sees).
inline int fetch_add_relaxed(int* counter, int value) { return __atomic_fetch_add(counter, value, __ATOMIC_RELAXED); }
// Every write before it is seen by a thread that load_acquire()s the value.
inline void store_release(int* counter, int value) { __atomic_store_n(counter, value, __ATOMIC_RELEASE); }
inline int load_acquire(const int* counter) { return __atomic_load_n(counter, __ATOMIC_ACQUIRE); }

// Iteration `spins` of a spin-wait loop: first tells the core that it
// waits (x86 pause, Arm yield), so a waiting thread does not starve its
// sibling; after a while gives the core away, so a thread that waits on one
// the scheduler has set aside (more threads than cores) lets it run.
inline void spin_wait(int spins) {
  if (spins >= 2000) {
    std::this_thread::yield();
    return;
  }
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
  __builtin_ia32_pause();
#elif (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

// True where apply_reflector_quad runs on vector registers (AVX-512 build).
bool reflector_quad_vectorized();

}  // namespace keig::backends::host
