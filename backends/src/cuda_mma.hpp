// Private helper of the CUDA vendor layer's own kernels (not installed): the
// FP64 tensor-core product of one warp.
#pragma once

#include <cuda_runtime.h>

namespace keig::backends::cuda::detail {

// D += A B for a 16 x 8 x 4 tile over a warp. With q = lane / 4, t = lane % 4
// a lane holds a0, a1 = A(q, t), A(8 + q, t), b = B(t, q), top = D(q, 2t),
// D(q, 2t + 1) and bottom = D(8 + q, 2t), D(8 + q, 2t + 1): PTX mma.sync
// m16n8k4 f64 on compute capability 9.0, two m8n8k4 (the same fragments
// for each half) on 8.x.
__device__ __forceinline__ void mma_16x8x4(double (&top)[2], double (&bottom)[2], double a0, double a1, double b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
      : "+d"(top[0]), "+d"(top[1]), "+d"(bottom[0]), "+d"(bottom[1])
      : "d"(a0), "d"(a1), "d"(b));
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
      : "+d"(top[0]), "+d"(top[1])
      : "d"(a0), "d"(b));
  asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
      : "+d"(bottom[0]), "+d"(bottom[1])
      : "d"(a1), "d"(b));
#else
  __trap();  // built for an older target: fail loudly (the host checks the device before launching)
#endif
}

// D += A B for a 16 x 8 x 16 tile over a warp (four times the inner size of
// mma_16x8x4 in one instruction; cuBLAS's sm90 dgemm kernels use this
// shape). With q, t as
// above a lane holds a[i] = A(q + 8 (i % 2), t + 4 (i / 2)), i < 8, and
// b[j] = B(t + 4 j, q), j < 4; top, bottom as in mma_16x8x4. On 8.x: four
// mma_16x8x4 of inner size 4.
__device__ __forceinline__ void mma_16x8x16(double (&top)[2], double (&bottom)[2], const double (&a)[8],
                                            const double (&b)[4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
      "{%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
      : "+d"(top[0]), "+d"(top[1]), "+d"(bottom[0]), "+d"(bottom[1])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]),
        "d"(b[1]), "d"(b[2]), "d"(b[3]));
#else
  for (int j = 0; j < 4; ++j) mma_16x8x4(top, bottom, a[2 * j], a[2 * j + 1], b[j]);
#endif
}

}  // namespace keig::backends::cuda::detail
