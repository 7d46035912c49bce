// X = A V for a real symmetric A (m x m, lower triangle referenced) and a
// skinny V (m x k, k <= 64) on the FP64 tensor cores: the product of sy2sb's
// panels with the trailing matrix (X = A22 V, seed 003 §5.2).
//
// Why: sy2sb's Blocked update keeps only the lower triangle, so X took two
// cuBLAS gemms per block column (16 block columns: 32 launches a panel) of
// 32 or 64 columns; cuBLAS runs those on 32 x 32 tiles in under a wave of
// thread blocks with short inner loops (ncu, H200, n = 8192, b = 32: about
// 10 us a gemm, 0.8-2 TB/s).
//
// Here one thread block computes one 64-row block R of X in a single launch:
//   X(R) = sum over tile columns C of  A(R, C) V(C)      (C < R)
//                                      A(C, R)^T V(C)    (C > R)
//                                      sym(A(R, R)) V(R) (C = R, the lower
//                                                         triangle mirrored)
// i.e. the block row R of the symmetric matrix, read from the lower triangle
// (no atomics, no partial sums in memory). Tile {R, C} is read by the blocks
// R and C; block R visits C = (s - R) mod T at step s, so both read it at the
// same step, and the second read hits L2 while all blocks are resident (up
// to 2 x 132 blocks of 64 rows on an H200: m <= 16896 with k <= 32).
// A and V tiles reach double-buffered shared memory by asynchronous copies
// (the next step's in flight during this step's products).
// When there are fewer row blocks than multiprocessors the steps are split
// into parts that add into X atomically (X zeroed first).
//
// Measured (H200, sy2sb in keig-bench --suite sy2sb): with 32 columns and
// every row block resident (n = 16384) slightly faster than the 32 gemms,
// sy2sb 0.345-0.348 s against 0.354-0.357 s in four same-run pairs; where
// the blocks are not all resident, slower: 2.05 against 1.80 s at
// n = 32768 (b = 32), and 0.328 against 0.284 s at 16384 with 64 columns
// (sy2sb uses the kernel only where it was faster). ncu at
// m = 6912: 190 us, the FP64 tensor pipe 38 % busy, L2 hit rate 43 %. A step
// moves 48 KB from L2 into a block for 262 k flops (5.3 flop/B), which at
// the L2's bandwidth caps the kernel near the rate it runs at; 16 x 8 x 4
// or 16 x 8 x 16 products, 8 or 16 warps did not change that. What would:
// one read of each tile for both of its products (X(R) += A V(C) and
// X(C) += A^T V(R)), twice the flops per byte, with the second product's
// sums reduced across blocks.
#include <cuda_runtime.h>

#include <algorithm>

#include "cuda_common.hpp"
#include "cuda_mma.hpp"

namespace keig::backends::cuda {

namespace {

using detail::mma_16x8x16;

constexpr int kTile = 64;        // rows of a block of X, rows and columns of A's tiles
constexpr int kThreads = 256;    // 8 warps (16, at most 64 registers a thread at two blocks a multiprocessor, spilled)
constexpr int kLd = kTile + 4;   // shared stride (doubles): a half warp's fragment loads hit distinct banks

// Blocks a multiprocessor holds: two with 32 columns (104 KB of shared
// memory each), one with 64 (139 KB).
__host__ __device__ constexpr int blocks_per_sm(int kc) { return kc == 32 ? 2 : 1; }

constexpr size_t shared_bytes(int kc) { return size_t(2) * (kTile + kc) * kLd * sizeof(double); }

// 8-byte asynchronous copy global -> shared (sm_80), zero-filled when !valid
// (no bytes read; src must still be a valid address).
__device__ __forceinline__ void copy_async(double* dst, const double* src, bool valid) {
  const unsigned to = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(to), "l"(src), "r"(valid ? 8 : 0) : "memory");
}
__device__ __forceinline__ void copy_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void copy_wait_all_but_one() { asm volatile("cp.async.wait_group 1;\n" ::: "memory"); }

// KC = 32 or 64: V's columns padded (k <= KC). Warp w computes X rows
// 16 (w % 4) .. + 16, all KC columns (KC / 8 tiles of 8: independent
// accumulators), over the inner half w / 4 of each tile; the halves are
// added at the end. A and V tiles reach shared memory by asynchronous
// copies, the next step's in flight while this step's products run (a
// register-staged first version was issue-bound on the staging's address
// arithmetic: 217 against 184 us at m = 6912).
template <int KC>
__global__ void __launch_bounds__(kThreads, blocks_per_sm(KC))
    symm_skinny_kernel(index_t m, int k, const double* __restrict__ a, index_t lda, const double* __restrict__ v,
                       index_t ldv, double* __restrict__ x, index_t ldx, index_t tiles, int parts) {
  constexpr int NT = KC / 8, kSplits = kThreads / 128, kInner = kTile / kSplits;
  constexpr int kStride = kThreads / kTile;  // columns between a thread's copies
  extern __shared__ double shared[];
  // as(b): A's tile as stored, column-major (element (r, c) at c kLd + r);
  // vs(b): V's rows of the tile, column-major (element (r, c) at c kLd + r).
  const auto as = [](int buf) { return shared + buf * kTile * kLd; };
  const auto vs = [](int buf) { return shared + 2 * kTile * kLd + buf * KC * kLd; };
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, q = lane >> 2, t = lane & 3;
  const index_t blk = blockIdx.x / parts, part = blockIdx.x % parts;
  const index_t s_begin = tiles * part / parts, s_end = tiles * (part + 1) / parts;
  const int i0 = 16 * (warp & 3), kbase = kInner * (warp >> 2);
  const index_t r_base = blk * kTile;
  const int r = tid % kTile, c0 = tid / kTile;  // this thread copies rows r, columns c0 + kStride j

  // Step s reads tile {R, C}, C = (s - R) mod tiles, as stored (rows sr0..,
  // columns sc0..), and V's rows of tile column C.
  const auto issue = [&](index_t s, int buf) {
    const index_t c_blk = (s + tiles - blk) % tiles;
    const index_t sr0 = (c_blk > blk ? c_blk : blk) * kTile, sc0 = (c_blk > blk ? blk : c_blk) * kTile;
    double* const ad = as(buf) + c0 * kLd + r;
    const bool row_in = sr0 + r < m;
    const double* src = a + (row_in ? sr0 + r : 0) + (sc0 + c0) * lda;
#pragma unroll
    for (int j = 0; j < kTile / kStride; ++j) {
      const bool ok = row_in && sc0 + c0 + kStride * j < m;
      copy_async(ad + kStride * j * kLd, ok ? src : a, ok);
      src += kStride * lda;
    }
    const index_t v0 = c_blk * kTile;
    double* const vd = vs(buf) + c0 * kLd + r;
    const bool vrow_in = v0 + r < m;
    const double* vsrc = v + (vrow_in ? v0 + r : 0) + c0 * ldv;
#pragma unroll
    for (int j = 0; j < KC / kStride; ++j) {
      const bool ok = vrow_in && c0 + kStride * j < k;
      copy_async(vd + kStride * j * kLd, ok ? vsrc : v, ok);
      vsrc += kStride * ldv;
    }
  };

  double acc[NT][2][2];
#pragma unroll
  for (int i = 0; i < NT; ++i) acc[i][0][0] = acc[i][0][1] = acc[i][1][0] = acc[i][1][1] = 0.0;
  // acc += Atile V over this warp's inner indices; at(i, kk) reads Atile.
  // One mma_16x8x16 per 16 inner indices (four 16 x 8 x 4 products ran at
  // the same rate, but cost more instructions).
  const auto product = [&](const double* vt, auto at) {
#pragma unroll
    for (int kk = kbase; kk < kbase + kInner; kk += 16) {
      double af[8];
#pragma unroll
      for (int e = 0; e < 8; ++e) af[e] = at(i0 + q + 8 * (e & 1), kk + t + 4 * (e >> 1));
#pragma unroll
      for (int i = 0; i < NT; ++i) {
        double bf[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) bf[e] = vt[(8 * i + q) * kLd + kk + t + 4 * e];
        mma_16x8x16(acc[i][0], acc[i][1], af, bf);
      }
    }
  };

  if (s_begin < s_end) issue(s_begin, 0);
  copy_commit();
  for (index_t s = s_begin; s < s_end; ++s) {
    const int buf = static_cast<int>((s - s_begin) & 1);
    if (s + 1 < s_end) issue(s + 1, buf ^ 1);
    copy_commit();
    copy_wait_all_but_one();  // this thread's copies of step s have landed
    __syncthreads();          // and everyone's
    const double* const at = as(buf);
    const double* const vt = vs(buf);
    const index_t c_blk = (s + tiles - blk) % tiles;
    if (c_blk < blk) product(vt, [at](int i, int kk) { return at[kk * kLd + i]; });       // A(R, C)
    else if (c_blk > blk) product(vt, [at](int i, int kk) { return at[i * kLd + kk]; });  // A(C, R)^T
    else product(vt, [at](int i, int kk) { return i >= kk ? at[kk * kLd + i] : at[i * kLd + kk]; });
    __syncthreads();  // buf is step s + 2's
  }

  // The other inner parts' sums through shared memory, then X. Lane's
  // acc[i][h][e] is X(i0 + 8 h + q, 8 i + 2 t + e).
  constexpr int kLdR = KC + 2, kPart = kTile * kLdR;
  double* const red = shared;
  if (warp >= 4) {
    double* const mine = red + (warp / 4 - 1) * kPart;
#pragma unroll
    for (int i = 0; i < NT; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int e = 0; e < 2; ++e) mine[(i0 + 8 * h + q) * kLdR + 8 * i + 2 * t + e] = acc[i][h][e];
  }
  __syncthreads();
  if (warp < 4) {
#pragma unroll
    for (int i = 0; i < NT; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int row = i0 + 8 * h + q, col = 8 * i + 2 * t + e;
          double sum = acc[i][h][e];
#pragma unroll
          for (int p = 0; p + 1 < kSplits; ++p) sum += red[p * kPart + row * kLdR + col];
          if (r_base + row < m && col < k) {
            double* const out = x + (r_base + row) + col * ldx;
            if (parts > 1) atomicAdd(out, sum);
            else *out = sum;
          }
        }
  }
}

}  // namespace

bool symm_skinny_supported(const CudaContext& ctx) {
  const cudaDeviceProp& prop = ctx.space().cuda_device_prop();
  return prop.major >= 8 && prop.sharedMemPerBlockOptin >= shared_bytes(64);
}

index_t symm_skinny_resident_rows(const CudaContext& ctx, index_t k) {
  return index_t(kTile) * ctx.space().cuda_device_prop().multiProcessorCount * blocks_per_sm(k <= 32 ? 32 : 64);
}

void symm_lower_skinny(const CudaContext& ctx, index_t m, index_t k, const double* a, index_t lda, const double* v,
                       index_t ldv, double* x, index_t ldx) {
  if (k < 0 || k > 64) throw InvalidArgument("k", "symm_lower_skinny: V needs 0 to 64 columns, got " + std::to_string(k));
  if (lda < std::max<index_t>(m, 1)) throw InvalidArgument("lda", "symm_lower_skinny: lda must be >= m");
  if (ldv < std::max<index_t>(m, 1)) throw InvalidArgument("ldv", "symm_lower_skinny: ldv must be >= m");
  if (ldx < std::max<index_t>(m, 1)) throw InvalidArgument("ldx", "symm_lower_skinny: ldx must be >= m");
  if (!symm_skinny_supported(ctx))
    throw InvalidArgument("space", "symm_lower_skinny: needs compute capability 8.0 and " +
                                       std::to_string(shared_bytes(64)) + " bytes of shared memory per block");
  if (m == 0 || k == 0) return;
  const cudaStream_t stream = ctx.space().cuda_stream();
  const index_t tiles = (m + kTile - 1) / kTile;
  const auto launch = [&](auto kernel, int kc) {
    // Split the steps where the row blocks alone leave multiprocessors idle.
    const index_t slots = symm_skinny_resident_rows(ctx, kc) / kTile;
    const int parts = static_cast<int>(std::clamp<index_t>(slots / tiles, 1, std::min<index_t>(tiles, 8)));
    if (parts > 1)
      detail::check_cuda("cudaMemset2DAsync", cudaMemset2DAsync(x, ldx * sizeof(double), 0, m * sizeof(double), k, stream));
    const size_t bytes = shared_bytes(kc);
    detail::check_cuda("cudaFuncSetAttribute", cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                                    static_cast<int>(bytes)));
    kernel<<<static_cast<unsigned>(tiles * parts), kThreads, bytes, stream>>>(m, static_cast<int>(k), a, lda, v, ldv, x,
                                                                              ldx, tiles, parts);
    detail::check_cuda("symm_skinny_kernel launch", cudaGetLastError());
  };
  if (k <= 32) launch(symm_skinny_kernel<32>, 32);
  else launch(symm_skinny_kernel<64>, 64);
}

}  // namespace keig::backends::cuda
