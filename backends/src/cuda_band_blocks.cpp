// bt_sb2st's sweep blocks applied to Z by column tiles on the FP64 tensor
// cores (CUDA; PTX mma m16n8k4 f64 on compute capability 9.0, two m8n8k4 on
// 8.x). Z is double or float: a float Z's rows are widened as they enter the
// shared-memory window and rounded as they leave it, so float runs the same
// FP64 products (there is no FP32 tensor-core product, and TF32's 10-bit
// mantissa would lose float's accuracy) and moves half the bytes of Z.
// Complex Z (complex<double> or complex<float>): a tile of Cols window
// columns holds Cols / 2 columns of Z as [real parts | imaginary parts], and
// V, W come as two packed planes (real, imaginary), so each complex product
// is two real ones on the tensor cores: X = V^H Zw is
//   [Xr | Xi] = Vr^T [Zr | Zi] + Vi^T [Zi | -Zr]
// and Zw -= W X, with Y = -X, is
//   [Zr | Zi] += Wr [Yr | Yi] + Wi [-Yi | Yr].
//
// Each thread block owns 64 (or 128, 32, 16) window columns of Z and walks the whole list
// of blocks in order. A block (group g, step k) touches rows [row0, row0 +
// ldv), and step k + 1 of the same group the rows b further down, so the
// tile's rows live in a window of 128 rows in shared memory (a ring: row r
// in slot r mod 128): per block only the b rows that enter are loaded and
// the b that leave are written back, and X = V^T Zw never leaves the chip.
// The batched-gemm apply reads each block's rows of Z twice and writes them
// and X once (about 19 TFLOP/s on the H200); here V and W (94 KB a block
// in the packed order below, from L2, read by every tile) are the only
// traffic that grows with the blocks. This is seed 004's column-group kernel (one team per group of
// eigenvector columns, a sliding b-row window) with the reflectors of a block
// applied as one compact-WY product: Zw -= W (V^T Zw), W = V T. Raw CUDA
// rather than a Kokkos team kernel: the window needs 111-209 KB of shared
// memory, and Kokkos 3.4 gives a team at most 40 KB.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "cuda_common.hpp"
#include "cuda_mma.hpp"
#include "keig/backends/dependent_launch.hpp"
#include "keig/backends/device_sync.hpp"

namespace keig::backends::cuda {

namespace {

using detail::mma_16x8x4;

constexpr int kSlots = 128;    // window rows (a block has ldv <= 128 rows)
constexpr int kSigma = 64;     // reflectors per block: columns of V and W, rows of X
// Threads of a thread block for tiles of Cols columns: 8 warps per 64
// columns, so every warp does the same work in either shape; narrow tiles
// (16, 32 columns: the columns past the whole rounds of 64-column tiles)
// keep 8 warps, each with a narrower share of X and of the window.
__host__ __device__ constexpr int block_threads(int cols) { return cols < 64 ? 256 : 4 * cols; }
// Shared row stride in doubles for tiles of Cols columns. Cols + 8 (8 mod 16
// doubles): consecutive rows start half the 16 bank pairs apart, so the
// 16-byte accesses of the accumulators (rows q, columns 2t, 2t + 1) and the
// fragment loads (rows t, columns q) need the fewest wavefronts; the window
// rows are swizzled on top (swz below) for the entering and leaving rows.
// With Cols + 4 the accumulators' 8-byte accesses took twice the
// wavefronts (ncu: 30 % of the shared wavefronts were bank conflicts;
// H200, n = m = 16384: 0.515-0.528 -> 0.498-0.509 s).
__host__ __device__ constexpr int row_stride(int cols) { return cols + 8; }
constexpr size_t shared_bytes(int cols) { return size_t(kSlots + kSigma) * row_stride(cols) * sizeof(double); }

// V and W in the order of the warps' mma fragments (pack_band_blocks), so
// that a fragment load is one 16-byte load a lane from 512 contiguous bytes.
// Column-major, a warp's load of 32 doubles touched 8 columns, 8 cache
// lines, and L1's tag lookups for V and W bounded the kernel (ncu on the
// H200, n = m = 16384: L1/TEX throughput 83 %, 64 % packed; bt_sb2st 0.577-
// 0.590 -> 0.533-0.540 s with the packing). Entry pairs, 32 a step (one per
// lane, q = lane / 4, t = lane % 4):
//   V: X rows j0 = 16 jb (jb < 4), steps s < kVSteps over window rows
//      k = j0 + 4 s + t: (V(k, j0 + q), V(k, j0 + 8 + q));
//   W: window rows m0 = 16 i (i < 8), steps st = w_first_step(i) .. 15 over
//      columns k = 4 st + t: (W(m0 + q, k), W(m0 + 8 + q, k)). W = V T has
//      W(r, j) = 0 for r >= j + 64, so rows from m0 need only the columns
//      j > m0 - 64, from 4 w_first_step(i) on.
// Rows past the block's ldv are packed as zeros.
constexpr int kVSteps = 20;
constexpr int kVEntries = 4 * kVSteps * 64;  // a packed V plane; W's is band_block_packed_entries
// Complex blocks: the imaginary plane right after the real one (V at
// kVEntries, W at band_block_packed_entries doubles).
__host__ __device__ constexpr int w_first_step(int i) { return 16 * i > 64 ? ((16 * i - 63) & ~3) / 4 : 0; }
__host__ __device__ constexpr int w_offset(int i) { return i == 0 ? 0 : w_offset(i - 1) + 16 - w_first_step(i - 1); }
static_assert(kVEntries == band_block_packed_v_entries, "cuda.hpp's band_block_packed_v_entries");
static_assert(w_offset(8) * 64 == band_block_packed_entries && kVEntries <= band_block_packed_entries,
              "band_block_packed_entries must hold a packed V and W");
static_assert(w_first_step(4) == 0 && w_first_step(5) > 0, "pack_band_blocks_kernel: warps 0-4 take all 16 steps");

// How an entry of Z (or of V and W before packing) enters the FP64 window
// (widen) and leaves it (narrow): real scalars as one double, complex ones
// (CUDA's double2 / float2, laid out as Kokkos::complex) as a double2.
template <class S>
struct Entry {
  static constexpr bool complex = false;
  using Wide = double;
  __device__ static double widen(S z) { return static_cast<double>(z); }
  __device__ static S narrow(double v) { return static_cast<S>(v); }
};
template <>
struct Entry<double2> {
  static constexpr bool complex = true;
  using Wide = double2;
  __device__ static double2 widen(double2 z) { return z; }
  __device__ static double2 narrow(double2 v) { return v; }
};
template <>
struct Entry<float2> {
  static constexpr bool complex = true;
  using Wide = double2;
  __device__ static double2 widen(float2 z) { return make_double2(z.x, z.y); }
  __device__ static float2 narrow(double2 v) { return make_float2(static_cast<float>(v.x), static_cast<float>(v.y)); }
};
// Packed planes of a block (real, and imaginary for complex scalars): also
// the window columns per column of Z.
template <class S>
constexpr int planes = Entry<S>::complex ? 2 : 1;

// Entry e of a block's packed V (is_v) or W: its row and column in the
// column-major ldv x 64 block (the order above; the caller reads a zero for
// row >= ldv). The rows of W: 0 .. 79 take 16 steps a warp, the last three
// warps fewer (closed form: a search over w_offset per entry made the pack
// kernel 13 times slower).
__device__ __forceinline__ void packed_place(bool is_v, int e, int& row, int& col) {
  const int h = e & 1, lane = (e >> 1) & 31, step = e >> 6, q = lane >> 2, t = lane & 3;
  if (is_v) {
    const int j0 = 16 * (step / kVSteps);
    row = j0 + 4 * (step % kVSteps) + t;
    col = j0 + 8 * h + q;
  } else {
    int i = 7;
    if (step < w_offset(5)) i = step / 16;
    else if (step < w_offset(6)) i = 5;
    else if (step < w_offset(7)) i = 6;
    const int offset = i < 5 ? 16 * i : (i == 5 ? w_offset(5) : (i == 6 ? w_offset(6) : w_offset(7)));
    row = 16 * i + 8 * h + q;
    col = 4 * (w_first_step(i) + step - offset) + t;
  }
}

// One thread block per (block, V or W): each thread gathers its entries of
// the packed order from the column-major block into registers (a warp's
// loads fill whole 32-byte sectors: 4 rows of 4 or 8 columns), and once the
// whole block is read writes them back contiguously over the same storage,
// as doubles (float blocks are widened here: their stride leaves room;
// complex blocks as a real plane followed by an imaginary one).
// H200, n = 16384: 53 us a batch of 16 waves (2.5 ms in all).
constexpr int kPackThreads = 256;
template <class S>
__global__ void __launch_bounds__(kPackThreads) pack_band_blocks_kernel(S* __restrict__ v, S* __restrict__ w,
                                                                        int ldv, index_t stride) {
  constexpr int kPerThread = static_cast<int>((band_block_packed_entries + kPackThreads - 1) / kPackThreads);
  const bool is_v = blockIdx.y == 0;
  S* const base = (is_v ? v : w) + index_t(blockIdx.x) * stride;
  double* const packed = reinterpret_cast<double*>(base);
  const int entries = is_v ? kVEntries : static_cast<int>(band_block_packed_entries);
  typename Entry<S>::Wide mine[kPerThread];
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) {
    const int e = static_cast<int>(threadIdx.x) + kPackThreads * j;
    int row = ldv, col = 0;  // entry e's place in the column-major block (row >= ldv: a zero)
    if (e < entries) packed_place(is_v, e, row, col);
    mine[j] = row < ldv ? Entry<S>::widen(base[row + index_t(col) * ldv]) : typename Entry<S>::Wide{};
  }
  __syncthreads();  // every entry of the block is read before any is overwritten
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) {
    const int e = static_cast<int>(threadIdx.x) + kPackThreads * j;
    if (e >= entries) continue;
    if constexpr (Entry<S>::complex) {
      packed[e] = mine[j].x;
      packed[e + entries] = mine[j].y;
    } else {
      packed[e] = mine[j];
    }
  }
}

// A block's W = V T from its V and tau's, and both packed:
// what bt_sb2st otherwise forms with a batched gemm (G = V^T V), a kernel
// (T from G, LAPACK larft's recurrence), a second batched gemm (W = V T) and
// the pack kernel, four launches a batch that read and write V and W in
// global memory (about 13.6 of bt_sb2st's 464 ms at n = 16384 on an H100).
// Here one thread block keeps the block in shared memory (H200, n = 16384:
// 9.3 ms for the 48 batches, and bt_sb2st 2-3.5 ms faster). T is never
// formed: T^{-1} = diag(1 / tau) + striu(V^T V) (the identity behind larft's
// recurrence; a zero tau gives a zero column of T, and of W), so W T^{-1} = V
// gives W's columns left to right,
//   W(:, i) = tau_i (V(:, i) - W(:, 0:i) G(0:i, i)),  G = V^T V,
// each row of W from its own earlier entries and G: two threads a row, no
// barrier in the recurrence. Real scalars (float widened to double); V(r, j)
// is zero outside rows [j, j + ldv - 63) (the band's reflectors have at most
// b = ldv - 63 entries), so G's dots run over at most b - 1 rows.
constexpr int kFactorThreads = 256;
constexpr int kFactorLd = kSigma + 1;  // shared row stride (doubles) of the block and of G
constexpr size_t factor_shared_bytes = size_t(kSlots + kSigma) * kFactorLd * sizeof(double) + kSigma * sizeof(double);
// The factors of one block once its V (rows r < ldv at a[r kFactorLd], zero
// elsewhere) and tau's are in shared memory: V packed over vb, then W = V T
// packed over wb. Ends with the block's threads past their last read of a.
__device__ __forceinline__ void factor_and_pack(double* a, double* g, const double* tau, double* vb, double* wb,
                                                int ldv) {
  const int tid = threadIdx.x;
  // V (is_v) or W from a, packed over `out`.
  const auto write_packed = [&](bool is_v, double* out, int entries) {
    for (int e = tid; e < entries; e += kFactorThreads) {
      int row, col;
      packed_place(is_v, e, row, col);
      out[e] = row < ldv ? a[row * kFactorLd + col] : 0.0;
    }
  };
  __syncthreads();  // V is read: its storage takes the packed V
  write_packed(true, vb, kVEntries);
  // G's 2016 entries l < i in triangular order, p = i (i - 1) / 2 + l.
  const int b = ldv - (kSigma - 1);
  for (int p = tid; p < kSigma * (kSigma - 1) / 2; p += kFactorThreads) {
    int i = static_cast<int>((1.0f + sqrtf(1.0f + 8.0f * static_cast<float>(p))) * 0.5f);
    while (i * (i - 1) / 2 > p) --i;
    while ((i + 1) * i / 2 <= p) ++i;
    const int l = p - i * (i - 1) / 2;
    const int end = min(ldv, l + b);  // V(:, l) ends there, V(:, i) starts at row i
    double s0 = 0.0, s1 = 0.0;
    int r = i;
    for (; r + 2 <= end; r += 2) {
      s0 += a[r * kFactorLd + l] * a[r * kFactorLd + i];
      s1 += a[(r + 1) * kFactorLd + l] * a[(r + 1) * kFactorLd + i];
    }
    if (r < end) s0 += a[r * kFactorLd + l] * a[r * kFactorLd + i];
    g[i * kFactorLd + l] = s0 + s1;
  }
  __syncthreads();  // G complete, packed V read from a
  {
    // Two threads a row (neighbouring lanes), each over every other l; both
    // write W(r, i), so each reads only entries it wrote itself. (Right-
    // looking instead, row(j) -= W(r, i) G(i, j) for all j > i after each
    // column, ran slower: 14.3 against 9.3 ms at n = 16384, H200.)
    const int r = tid >> 1, half = tid & 1;
    double* const row = a + r * kFactorLd;
    for (int i = 0; i < kSigma; ++i) {
      const double* const gi = g + i * kFactorLd;
      double s0 = 0.0, s1 = 0.0;  // two chains each: the sum's latency a quarter
      int l = half;
      for (; l + 2 < i; l += 4) {
        s0 += row[l] * gi[l];
        s1 += row[l + 2] * gi[l + 2];
      }
      if (l < i) s0 += row[l] * gi[l];
      double sum = s0 + s1;
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      row[i] = tau[i] * (row[i] - sum);
    }
  }
  __syncthreads();
  write_packed(false, wb, static_cast<int>(band_block_packed_entries));
}

// V read straight from sb2st's reflector storage (column n - 1 - s holds
// sweep s's steps, step k at rows k b .. k b + b - 1 as tau, v(1), ..):
// block q is (group g, step k) = steps[2 q], steps[2 q + 1], its column j
// sweep s = 64 g + j, whose reflector starts at the block's row j. (Before,
// a Kokkos kernel wrote each batch's V column-major for this one to read.)
// As a programmatic dependent of the window kernel before it on the stream
// (arrivals set: it writes no storage that kernel reads), its thread blocks
// run in the places that kernel leaves free; the block that finishes last
// waits for that kernel (griddepcontrol.wait), so that the launch after
// this one also follows it. In a queued sequence (reuse set) the blocks
// first wait until the batch that read this copy of V and W is applied
// (*reuse >= reuse_at_least), and each adds itself to *formed once written,
// which the batch's jobs wait for; the launch after it may start at once.
template <class S>
__global__ void __launch_bounds__(kFactorThreads)
    band_factors_from_reflectors_kernel(const S* __restrict__ reflectors, index_t ld, index_t n, int b,
                                        const index_t* __restrict__ steps, double* __restrict__ v,
                                        double* __restrict__ w, index_t stride, int* arrivals, const int* reuse,
                                        int reuse_at_least, int* formed) {
#if __CUDA_ARCH__ >= 900
  if (formed != nullptr) asm volatile("griddepcontrol.launch_dependents;");
#endif
  extern __shared__ double shared[];
  double* const a = shared;
  double* const g = shared + kSlots * kFactorLd;
  double* const tau = g + kSigma * kFactorLd;
  __shared__ int length[kSigma];
  __shared__ index_t column[kSigma];
  const int tid = threadIdx.x, ldv = b + kSigma - 1;
  const index_t group = steps[2 * index_t(blockIdx.x)], k = steps[2 * index_t(blockIdx.x) + 1];
  if (tid < kSigma) {
    // Sweep s has step k when k < 1 + (n - 2 - s) / b (sb2st_steps); its
    // reflector then starts at row s + 1 + k b and has min(b, n - that) entries.
    const index_t s = kSigma * group + tid, start = s + 1 + k * b;
    const bool present = s <= n - 2 && k < 1 + (n - 2 - s) / b;
    const int len = present ? static_cast<int>(b < n - start ? b : n - start) : 0;
    length[tid] = len;
    column[tid] = (n - 1 - s) * ld + k * b;  // tau, then v(1), ..
    tau[tid] = len > 0 ? static_cast<double>(reflectors[column[tid]]) : 0.0;
  }
  __syncthreads();
  {
    // V(r, j) = v(r - j) of column j (v(0) = 1), zero outside its length:
    // a warp reads 32 consecutive entries of one column, all 32 loads of a
    // thread issued before any is stored.
    constexpr int kPer = kSlots * kSigma / kFactorThreads;
    const int r = tid % kSlots, j0 = tid / kSlots;
    double mine[kPer];
#pragma unroll
    for (int c = 0; c < kPer; ++c) {
      const int j = j0 + 2 * c, d = r - j;
      mine[c] = d > 0 && d < length[j] ? static_cast<double>(reflectors[column[j] + d])
                                       : (d == 0 && length[j] > 0 ? 1.0 : 0.0);
    }
#pragma unroll
    for (int c = 0; c < kPer; ++c) a[r * kFactorLd + j0 + 2 * c] = mine[c];
  }
  if (reuse != nullptr) {
    // Before factor_and_pack, whose first writes are the packed V.
    if (tid == 0) wait_progress(reuse, reuse_at_least);
    __syncthreads();
  }
  factor_and_pack(a, g, tau, v + index_t(blockIdx.x) * stride, w + index_t(blockIdx.x) * stride, ldv);
  if (arrivals == nullptr) return;
  __syncthreads();  // the block's writes are done
  if (tid == 0 && formed != nullptr) arrive_progress(formed);
  if (tid == 0 && atomicAdd(arrivals, 1) == static_cast<int>(gridDim.x) - 1) {
    *arrivals = 0;  // for the next launch, which starts after this one ends
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  }
}

// Cols = 64: two thread blocks of 8 warps per multiprocessor (111 KB of
// shared memory each, at most 128 registers a thread); Cols = 16, 32 the
// same with narrower shares (37 / 61 KB); Cols = 128: one of 16
// warps (209 KB), each warp with the work of a 64-column warp, so that the
// two halves share each block's V and W. H200, n = m = 16384 (32768):
// 0.575 (4.47) s with 64 columns, 0.623 (4.82) s with 128 (0.75 s when 8
// warps did the 128 columns): all 16 warps of a multiprocessor then wait at
// the same barriers, where two thread blocks overlap one's waits with the
// other's products. Thread block b owns Z's columns [b Cols, (b + 1) Cols)
// (complex Z: [b Cols / 2, (b + 1) Cols / 2)).
// ZT: Z's scalar; a float Z's rows are widened to double as they enter the
// window and rounded back as they leave it (all arithmetic in FP64);
// complex Z (double2 / float2) as above.
// Thread block `tile` of the one-batch kernel, or a job of the queued one.
// batch: the blocks, their V and W, read where used from the kernel
// parameters (the queued kernel's by the job's index, through
// __grid_constant__), which cost no registers. Copied into registers they
// made the queued kernel spill; read from a shared-memory copy it took 2 %
// longer (H200, n = m = 20694: bt_sb2st 1.073-1.075 against 1.053-1.054 s).
template <int Cols, class ZT>
__device__ __forceinline__ void walk_tile(const BandBatch& batch, int ldv, index_t stride, ZT* __restrict__ z,
                                          index_t ldz, index_t n, index_t m, index_t tile) {
  constexpr int kCols = Cols, kLd = row_stride(Cols), kThreads = block_threads(Cols), kWarps = kThreads / 32;
  // Complex: window column c < kHalf holds the real part of the tile's
  // column c of Z, column c + kHalf its imaginary part.
  constexpr bool kComplex = Entry<ZT>::complex;
  constexpr int kZCols = kCols / planes<ZT>, kHalf = kCols / 2;  // Z's columns of a tile
  using Wide = typename Entry<ZT>::Wide;
  extern __shared__ double shared[];
  double* const zs = shared;                // the window: row r in slot r % kSlots, kLd doubles a slot
  double* const xs = shared + kSlots * kLd;  // X = V^T Zw, kSigma rows
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, q = lane >> 2, t = lane & 3;
  const index_t c0 = tile * kZCols;
  const int cols = static_cast<int>(m - c0 < kZCols ? m - c0 : kZCols);
  ZT* const zt = z + c0 * ldz;
  const auto slot = [](index_t r) { return static_cast<int>(r & (kSlots - 1)); };
  // Column c of window slot sl lives at sl * kLd + (c ^ swz(sl)).
  const auto swz = [](int sl) { return (sl & 2) << 1; };
  for (int i = tid; i < kSlots * kLd; i += kThreads) zs[i] = 0.0;
  // Entering and leaving rows move in tiles of 8 rows x 4 columns per warp:
  // lane = 8 c + r reads 64 contiguous bytes of each of 4 columns of Z, and
  // the 32 lanes' shared slots (kLd r + (c ^ swz(r)) doubles apart, kLd = 8
  // mod 16, swz flipping column bit 2 on rows 2, 3 mod 4) fall on the 16
  // bank pairs twice each, the least a warp of doubles needs. A
  // thread always moves the same kCols / (4 kWarps) columns, 4 warp +
  // (lane / 8) + 4 kWarps j, at rows 8 i + lane % 8 of the range, so its
  // column pointers are formed once (the former row-by-row mapping divided
  // by the row count per entry and spent more instructions than the
  // products). 16-column tiles have two warps per group of 4 columns: warp
  // w takes column group w % 4 and the octets w / 4, w / 4 + 2, ... of a
  // range (kRowSplit = 2, kStep = 16 rows). A complex entry moves as one
  // double2 into (out of) its two window columns.
  constexpr int kQuads = kZCols / 4;                                // groups of 4 columns of Z
  constexpr int kColumnWarps = kQuads < kWarps ? kQuads : kWarps;   // warps side by side over the columns
  constexpr int kRowSplit = kWarps / kColumnWarps;                  // warps per group of 4 columns (1, 2; 4 complex)
  constexpr int kMine = kQuads / kColumnWarps;                      // columns of each thread (2 or 1)
  constexpr int kStep = 8 * kRowSplit;  // rows from one of a thread's rows to its next
  const int lr = lane & 7, first_row = lr + 8 * (warp / kColumnWarps);
  int my_col[kMine];
  ZT* my_z[kMine];  // clamped to a valid column: loads of absent columns are predicated off
#pragma unroll
  for (int j = 0; j < kMine; ++j) {
    my_col[j] = 4 * (warp % kColumnWarps) + (lane >> 3) + 4 * kWarps * j;
    my_z[j] = zt + (my_col[j] < cols ? my_col[j] : 0) * ldz;
  }
  // Z's column c of the tile in window slot sl (row zrow).
  const auto window_entry = [&](const double* zrow, int sl, int c) -> Wide {
    if constexpr (kComplex) return make_double2(zrow[c ^ swz(sl)], zrow[(c + kHalf) ^ swz(sl)]);
    else return zrow[c ^ swz(sl)];
  };
  const auto set_window_entry = [&](double* zrow, int sl, int c, const Wide& value) {
    if constexpr (kComplex) {
      zrow[c ^ swz(sl)] = value.x;
      zrow[(c + kHalf) ^ swz(sl)] = value.y;
    } else {
      zrow[c ^ swz(sl)] = value;
    }
  };
  // Rows [from, to) of the window back to Z (rows past n are not Z's).
  // A thread's octets of rows start on a boundary of 8 entries of its
  // columns (the same for both of them: they are 4 kWarps columns apart), so
  // that a warp's stores cover whole sectors: the leaving rows start at
  // 64 (g + k) + 1, one entry past a boundary (H200, n = m = 16384:
  // bt_sb2st 0.470-0.471 -> 0.462-0.463 s). The entering rows stay as they
  // are: with the octet more that their phase needs in the registers of a
  // batch, the kernel spilled and took longer (0.467-0.470 s).
  const auto flush = [&](index_t from, index_t to) {
    const int rows = static_cast<int>((to < n ? to : n) - from);
    const int phase = static_cast<int>((reinterpret_cast<std::uintptr_t>(my_z[0] + from) / sizeof(ZT)) & 7);
    for (int r = first_row - phase; r < rows; r += kStep) {
      if (r < 0) continue;
      const int sl = slot(from + r);
      const double* const zrow = zs + sl * kLd;
#pragma unroll
      for (int j = 0; j < kMine; ++j)
        if (my_col[j] < cols) my_z[j][from + r] = Entry<ZT>::narrow(window_entry(zrow, sl, my_col[j]));
    }
  };
  // Loads in batches of 16 per thread (kOctets row octets), all issued
  // before the first store, so a thread waits out the memory latency once
  // per batch, not per entry. fetch / place move one batch: rows [from +
  // first, from + first + kStep kOctets) of the range [from, to).
  constexpr int kOctets = 16 / (kMine * kRowSplit);  // 128 rows a batch for narrow tiles, 64 otherwise
  using Batch = Wide[kOctets][kMine];
  const auto fetch = [&](index_t from, index_t to, int first, Batch& buf) {
    const index_t in_z = (n < to ? n : to) - from;  // rows of the range that are Z's (none when to <= from)
#pragma unroll
    for (int o = 0; o < kOctets; ++o) {
      const int r = first + first_row + kStep * o;
#pragma unroll
      for (int j = 0; j < kMine; ++j)
        buf[o][j] = (r < in_z && my_col[j] < cols) ? Entry<ZT>::widen(my_z[j][from + r]) : Wide{};
    }
  };
  const auto place = [&](index_t from, index_t to, int first, const Batch& buf) {
    const int rows = static_cast<int>(to - from);
#pragma unroll
    for (int o = 0; o < kOctets; ++o) {
      const int r = first + first_row + kStep * o;
      if (r < rows) {
        const int sl = slot(from + r);
        double* const zrow = zs + sl * kLd;
#pragma unroll
        for (int j = 0; j < kMine; ++j) set_window_entry(zrow, sl, my_col[j], buf[o][j]);
      }
    }
  };
  const auto load = [&](index_t from, index_t to) {
    for (int first = 0; first < to - from; first += kStep * kOctets) {
      Batch buf;
      fetch(from, to, first, buf);
      place(from, to, first, buf);
    }
  };
  // The next block's entering rows when they fit one batch (a block that
  // continues the window: b rows), fetched at the end of this block, so
  // their memory latency overlaps the barrier and the leaving rows' flush.
  Batch ahead;
  bool have_ahead = false;
  index_t lo = 0, hi = 0;  // the window holds rows [lo, hi)
  // A block whose first row is in the window continues it (the same group,
  // one step down); any other block starts it anew.
  const auto continues = [&](index_t first_row) { return first_row >= lo && first_row < hi; };
  // The warp's fragments of V for X = V^T Zw and of W for Zw += W (-X) come
  // from L2; each set is issued before a barrier that precedes its use (V's
  // once the entering rows are stored, W's first two quarters before the X
  // stores),
  // so the latency overlaps the wait at the barrier. With 128 registers a
  // thread (two thread blocks per multiprocessor) there is no room to issue
  // them earlier: V's 40 doubles across the row loads spilled.
  // X phase: X rows j0 .. j0 + 15, columns n0 .. n0 + kXCols - 1 (kWarps / 4
  // column groups); W phase: window rows m0 .. m0 + 15, columns c1 .. c1 +
  // kWCols - 1. Narrow tiles: 8 / 16 columns of X and 16 / 32 of the
  // window a warp, the same fragments of V and W as 64 columns.
  constexpr int kGroups = kWarps / 4, kXCols = kCols / kGroups, kWCols = kCols < 64 ? kCols : 64;
  const int j0 = 16 * int(unsigned(warp) / kGroups), n0 = kXCols * int(unsigned(warp) % kGroups);
  const int m0 = 16 * (kWarps > 8 ? warp & 7 : warp), c1 = kWarps > 8 ? 64 * (warp >> 3) : 0;
  // This lane's first fragment pair of each step (packed order, above).
  const int w_first = w_first_step(m0 / 16), k_begin = 4 * w_first;
  const index_t v_lane = 2 * ((j0 / 16) * kVSteps * 32 + lane), w_lane = 2 * ((w_offset(m0 / 16) - w_first) * 32 + lane);
  // Complex: the window columns that pair with the warp's X columns (the
  // other half), and the sign of Vi there: Xr takes +Vi^T Zi, Xi -Vi^T Zr.
  [[maybe_unused]] const int n0_pair = n0 < kHalf ? n0 + kHalf : n0 - kHalf;
  [[maybe_unused]] const double vi_sign = n0 < kHalf ? 1.0 : -1.0;
  BandBlock next = batch.count > 0 ? batch.list[0] : BandBlock{};
  __syncthreads();
  for (index_t e = 0; e < batch.count; ++e) {
    const BandBlock blk = next;
    if (e + 1 < batch.count) next = batch.list[e + 1];
    const index_t r0 = blk.row0, end = r0 + ldv;
    const double2* const v = reinterpret_cast<const double2*>(batch.v + blk.q * stride + v_lane);
    const double2* const w = reinterpret_cast<const double2*>(batch.w + blk.q * stride + w_lane);
    // Complex: the imaginary planes.
    [[maybe_unused]] const double2* const vi = v + kVEntries / 2;
    [[maybe_unused]] const double2* const wi = w + band_block_packed_entries / 2;
    // Rows above the block leave (all of them when the block is not ahead of
    // the window: a new group); then the block's missing rows enter.
    if (!continues(r0)) {
      flush(lo, hi);
      lo = hi = r0;
    } else {
      flush(lo, r0);
      lo = r0;
    }
    __syncthreads();  // a leaving row's slot may be an entering row's
    if (have_ahead) {
      place(hi, end, 0, ahead);
      hi = end;
      have_ahead = false;
    } else if (end > hi) {
      load(hi, end);
      hi = end;
    }
    // X = V^T Zw in 20 steps of k = 4 window rows: V(:, j) lives in rows
    // [j, j + 64), so the warp's X rows j0 .. j0 + 15 need window rows
    // [j0, j0 + 79) only (j0 + 79 <= 127).
    double av[kVSteps][2];
#pragma unroll
    for (int s = 0; s < kVSteps; ++s) {
      const double2 pair = v[32 * s];
      av[s][0] = pair.x;
      av[s][1] = pair.y;
    }
    __syncthreads();

    // W's fragments in quarters of 4 steps of k = 4 columns, two quarters
    // in flight: each quarter's loads go out one quarter of products ahead
    // of their use.
    // Complex: awi holds Wi's fragments alongside.
    double aw[2][4][2], awi[2][4][2];
    const auto load_w = [&](const double2* plane, int quarter, double(&frag)[4][2]) {
#pragma unroll
      for (int s = 0; s < 4; ++s) {
        const int step = 4 * quarter + s;
        const double2 pair = step >= w_first ? plane[32 * step] : double2{0.0, 0.0};
        frag[s][0] = pair.x;
        frag[s][1] = pair.y;
      }
    };

    // -X = -(V^T Zw), stored negated so that the second phase adds W (-X).
    // Warp: X rows j0 .. j0 + 15 (two 8-row tiles), columns n0 .. n0 +
    // kXCols - 1 (32; narrow tiles 8 or 16).
    {
      constexpr int tiles = kXCols / 8;  // 8-column tiles of each warp
      double acc[2][tiles][2];
#pragma unroll
      for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int i = 0; i < tiles; ++i) acc[mt][i][0] = acc[mt][i][1] = 0.0;
#pragma unroll
      for (int s = 0; s < kVSteps; ++s) {
        const int sl = slot(r0 + j0 + 4 * s + t);
        const double* const zrow = zs + sl * kLd + n0 + (q ^ swz(sl));  // B(t, q) = Zw(k, n0 + 8 i + q)
#pragma unroll
        for (int i = 0; i < tiles; ++i) {
          const double b = zrow[8 * i];
          mma_16x8x4(acc[0][i], acc[1][i], av[s][0], av[s][1], b);
        }
        if constexpr (kComplex) {
          // Vi's step s into the registers Vr's step s leaves, a pass ahead
          // of its use (the second pass below).
          const double2 pair = vi[32 * s];
          av[s][0] = vi_sign * pair.x;
          av[s][1] = vi_sign * pair.y;
        }
      }
      if constexpr (kComplex) {
#pragma unroll
        for (int s = 0; s < kVSteps; ++s) {
          const int sl = slot(r0 + j0 + 4 * s + t);
          const double* const zrow = zs + sl * kLd + n0_pair + (q ^ swz(sl));
#pragma unroll
          for (int i = 0; i < tiles; ++i) {
            const double b = zrow[8 * i];
            mma_16x8x4(acc[0][i], acc[1][i], av[s][0], av[s][1], b);
          }
        }
      }
      // V's registers are free: W's first two quarters go out ahead of the X
      // stores and the barrier.
      load_w(w, 0, aw[0]);
      load_w(w, 1, aw[1]);
      if constexpr (kComplex) {
        load_w(wi, 0, awi[0]);
        load_w(wi, 1, awi[1]);
      }
#pragma unroll
      for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int i = 0; i < tiles; ++i) {
          double* const x = xs + (j0 + 8 * mt + q) * kLd + n0 + 8 * i + 2 * t;
          *reinterpret_cast<double2*>(x) = double2{-acc[mt][i][0], -acc[mt][i][1]};
        }
    }
    __syncthreads();

    // Zw += W (-X). Warp: window rows m0 .. m0 + 15 (two tiles), columns
    // c1 .. c1 + kWCols - 1 (64; narrow tiles all of theirs).
    {
      constexpr int tiles = kWCols / 8;  // columns from c1
      double acc[2][tiles][2];
#pragma unroll
      for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int i = 0; i < tiles; ++i) {
          const int sl = slot(r0 + m0 + 8 * mt + q);
          const double2 pair = *reinterpret_cast<const double2*>(zs + sl * kLd + c1 + 8 * i + (2 * t ^ swz(sl)));
          acc[mt][i][0] = pair.x;
          acc[mt][i][1] = pair.y;
        }
#pragma unroll
      for (int quarter = 0; quarter < 4; ++quarter) {
        double(&frag)[4][2] = aw[quarter & 1];
        double(&fragi)[4][2] = awi[quarter & 1];
#pragma unroll
        for (int s = 0; s < 4; ++s) {
          const int k = 16 * quarter + 4 * s;
          if (k < k_begin) continue;
          const double* const xrow = xs + (k + t) * kLd + c1 + q;  // B(t, q) = -X(k + t, c1 + 8 i + q)
          double b[tiles];
#pragma unroll
          for (int i = 0; i < tiles; ++i) {
            b[i] = xrow[8 * i];
            mma_16x8x4(acc[0][i], acc[1][i], frag[s][0], frag[s][1], b[i]);
          }
          if constexpr (kComplex) {
            // Wi times the other half's Y: -Yi into the real half, +Yr into
            // the imaginary one. A warp of 64 columns or fewer spans both
            // halves; 128-column tiles give each warp one half.
#pragma unroll
            for (int i = 0; i < tiles; ++i) {
              double pair;
              if constexpr (kWCols == kCols)
                pair = i < tiles / 2 ? -b[i + tiles / 2] : b[i - tiles / 2];
              else
                pair = c1 < kHalf ? -xrow[8 * i + kHalf] : xrow[8 * i - kHalf];
              mma_16x8x4(acc[0][i], acc[1][i], fragi[s][0], fragi[s][1], pair);
            }
          }
        }
        if (quarter < 2) {
          load_w(w, quarter + 2, frag);
          if constexpr (kComplex) load_w(wi, quarter + 2, fragi);
        }
      }
#pragma unroll
      for (int mt = 0; mt < 2; ++mt) {
        const int row = m0 + 8 * mt + q;
        if (row >= ldv) continue;  // the ring slot past the block belongs to row r0 - 1
#pragma unroll
        for (int i = 0; i < tiles; ++i) {
          const int sl = slot(r0 + row);
          *reinterpret_cast<double2*>(zs + sl * kLd + c1 + 8 * i + (2 * t ^ swz(sl))) =
              double2{acc[mt][i][0], acc[mt][i][1]};
        }
      }
    }
    {
      // V and W of the block after next into L2 (736 lines of 128 bytes,
      // packed): the tiles drift apart along the list, and a batch's V and W
      // (about 190 MB at n = 16384) outgrow L2, so without it many tiles
      // waited on DRAM for them (H200, n = m = 16384: 0.528-0.550 -> 0.517
      // s; two blocks ahead beat one and three; an L2 evict_last policy on
      // their loads instead: 0.538-0.543 s). The prefetched lines are marked
      // evict_last, so that Z's streamed rows leave L2 before them (0.499-
      // 0.504 -> 0.491-0.492 s; Z's rows loaded and stored as streaming
      // instead: 0.495-0.504 s). Z's entering rows asked for the same way
      // made the kernel slower (README).
      if (e + 2 < batch.count) {
        const index_t q2 = batch.list[e + 2].q;
        const char* const v2 = reinterpret_cast<const char*>(batch.v + q2 * stride);
        const char* const w2 = reinterpret_cast<const char*>(batch.w + q2 * stride);
        // (a complex block's imaginary planes follow its real ones)
        constexpr int kVLines = planes<ZT> * kVEntries * 8 / 128;
        constexpr int kLines = kVLines + planes<ZT> * int(band_block_packed_entries) * 8 / 128;
        for (int l = tid; l < kLines; l += kThreads) {
          const char* const line = l < kVLines ? v2 + 128 * l : w2 + 128 * (l - kVLines);
          asm volatile("prefetch.global.L2::evict_last [%0];" ::"l"(line));
        }
      }
      // The next iteration's test, on the window after this block. ahead is
      // written on every iteration (zeros when unused), so the compiler
      // does not keep it alive through the products.
      const index_t r0_next = next.row0, end_next = r0_next + ldv;
      have_ahead = e + 1 < batch.count && continues(r0_next) && end_next > hi && end_next - hi <= kStep * kOctets;
      fetch(hi, have_ahead ? end_next : hi, 0, ahead);
    }
    __syncthreads();
  }
  flush(lo, hi);
}

template <int Cols, class ZT>
__global__ void __launch_bounds__(block_threads(Cols), Cols <= 64 ? 2 : 1)
    band_blocks_kernel(const BandBlock* __restrict__ list, index_t count, const double* __restrict__ vbase,
                       const double* __restrict__ wbase, int ldv, index_t stride, ZT* __restrict__ z, index_t ldz,
                       index_t n, index_t m) {
#if __CUDA_ARCH__ >= 900
  // The next batch's factors (band_factors_from_reflectors_kernel, launched
  // as a dependent) may take the places this launch leaves free.
  asm volatile("griddepcontrol.launch_dependents;");
#endif
  walk_tile<Cols, ZT>(BandBatch{list, count, vbase, wbase}, ldv, stride, z, ldz, n, m, blockIdx.x);
}

// The batches of a queued launch, by value (a kernel parameter).
struct QueuedBatches {
  BandBatch batch[band_batches_max];
};

// Where a queued sequence keeps its counters (BandQueue; band_queue_ints).
struct QueueCounters {
  int* head;     // tickets taken
  int* ready;    // batches x tiles: 1 + tile, in the order the tiles became ready
  int* listed;   // per batch: entries of its row of ready
  int* applied;  // per batch: tiles applied
  int* formed;   // per batch: factor blocks formed
  int* exits;    // per launch (factor launches by batch, then queued ones): thread blocks finished
  __host__ __device__ explicit QueueCounters(const BandQueue& q)
      : head(q.counters),
        ready(q.counters + 1),
        listed(ready + std::int64_t(q.batches) * q.tiles),
        applied(listed + q.batches),
        formed(applied + q.batches),
        exits(formed + q.batches) {}
};

// One job (batch b, tile i) per thread block. A thread block takes the
// sequence's next ticket when it starts: tickets go batch by batch, and the
// s-th ticket of batch b to the s-th of its tiles to become ready (its job of
// batch b - 1 applied; batch 0 in tile order). Every job a ticket waits for
// (the tile's job of the batch before, listed ahead of it) holds an earlier
// ticket, so it started before: the waits cannot deadlock. That holds
// across launches too: a launch of the sequence starts its thread blocks
// only once every thread block of the launch before it has taken its
// ticket (griddepcontrol.launch_dependents after the ticket), or later.
// The tile's previous batch may have been written by another multiprocessor:
// the acquire load of its entry invalidates this multiprocessor's L1
// (CCTL.IVALL after it in the sm_90 SASS), so the walk's plain loads see
// those rows. Reading Z through L2 (ld.global.cg) instead, and a persistent
// grid looping over jobs, each took 7-8 % longer (H200, n = m = 16384).
// The thread block that finishes last waits for the launch before it
// (griddepcontrol.wait), so that a launch after the sequence follows all of it.
template <int Cols, class ZT>
__global__ void __launch_bounds__(block_threads(Cols), Cols <= 64 ? 2 : 1)
    band_blocks_queued_kernel(const __grid_constant__ QueuedBatches batches, int first_batch, int batch_count,
                              const BandQueue queue, bool queued_factors, int ldv, index_t stride,
                              ZT* __restrict__ z, index_t ldz, index_t n, index_t m) {
  const QueueCounters c(queue);
  __shared__ int job_shared[2];
  if (threadIdx.x == 0) {
    const int ticket = atomicAdd(c.head, 1), batch = ticket / queue.tiles, slot = ticket % queue.tiles;
    if (batch < first_batch || batch >= first_batch + batch_count) __trap();  // a keig bug: tickets out of order
    job_shared[0] = batch;
    job_shared[1] = slot;
  }
  __syncthreads();
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;");
#endif
  if (threadIdx.x == 0) {
    const int batch = job_shared[0], slot = job_shared[1];
    const std::int64_t row = std::int64_t(batch) * queue.tiles;
    job_shared[1] = batch == 0 ? slot : wait_progress(c.ready + row + slot, 1) - 1;  // entries are 1 + tile
    if (queued_factors)
      wait_progress(c.formed + batch, static_cast<int>(batches.batch[batch - first_batch].count));
  }
  __syncthreads();
  const int batch = job_shared[0], tile = job_shared[1];
  walk_tile<Cols, ZT>(batches.batch[batch - first_batch], ldv, stride, z, ldz, n, m, tile);
  __syncthreads();
  if (threadIdx.x == 0) {
    if (batch + 1 < queue.batches) {
      const std::int64_t next = std::int64_t(batch + 1) * queue.tiles;
      publish_progress(c.ready + next + atomicAdd(c.listed + batch + 1, 1), tile + 1);
    }
    arrive_progress(c.applied + batch);
    if (atomicAdd(c.exits + queue.batches + first_batch, 1) == static_cast<int>(gridDim.x) - 1) {
#if __CUDA_ARCH__ >= 900
      asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
    }
  }
}

}  // namespace

bool band_blocks_supported(const CudaContext& ctx) {
  const cudaDeviceProp& prop = ctx.space().cuda_device_prop();
  return prop.major >= 8 && prop.sharedMemPerBlockOptin >= shared_bytes(128);
}

namespace {
// The checks pack_band_blocks and apply_band_blocks share: stride in entries
// of scalar_bytes, at least `least` of them, a whole number of 16 bytes.
void check_packed_blocks(const char* who, const CudaContext& ctx, const void* v, const void* w, index_t ldv,
                         index_t stride, index_t least, int scalar_bytes) {
  const std::string name(who);
  if (ldv < 1 || ldv > kSlots)
    throw InvalidArgument("ldv", name + ": blocks need 1 to " + std::to_string(kSlots) + " rows, got " +
                                     std::to_string(ldv));
  const int per16 = 16 / scalar_bytes;
  if (stride < least || stride % per16 != 0)
    throw InvalidArgument("stride", name + ": blocks need a stride of at least " + std::to_string(least) +
                                        " entries, a multiple of " + std::to_string(per16) + ", got " +
                                        std::to_string(stride));
  if (reinterpret_cast<std::uintptr_t>(v) % 16 != 0 || reinterpret_cast<std::uintptr_t>(w) % 16 != 0)
    throw InvalidArgument("v", name + ": V and W must start on 16-byte boundaries");
  if (!band_blocks_supported(ctx))
    throw InvalidArgument("space", name + ": needs compute capability 8.0 and " + std::to_string(shared_bytes(128)) +
                                       " bytes of shared memory per block");
}

// S: double, float, double2 or float2 (complex<double> / complex<float>).
template <class S>
void pack_blocks(const CudaContext& ctx, index_t count, S* v, S* w, index_t ldv, index_t stride) {
  check_packed_blocks("pack_band_blocks", ctx, v, w, ldv, stride,
                      band_block_min_stride(ldv, static_cast<int>(sizeof(S)), planes<S>), static_cast<int>(sizeof(S)));
  if (count == 0) return;
  pack_band_blocks_kernel<S><<<dim3(static_cast<unsigned>(count), 2), kPackThreads, 0, ctx.space().cuda_stream()>>>(
      v, w, static_cast<int>(ldv), stride);
  detail::check_cuda("pack_band_blocks_kernel launch", cudaGetLastError());
}

// S: double or float (sb2st's reflectors). arrivals: as form_band_block_factors
// says; reuse and formed: a step of a queued sequence (band_factors_from_reflectors_kernel).
template <class S>
void form_factors_from_reflectors(const CudaContext& ctx, index_t count, const S* reflectors, index_t ld, index_t n,
                                  index_t b, const index_t* steps, double* v, double* w, index_t stride,
                                  int* arrivals, bool dependent, const int* reuse, int reuse_at_least, int* formed) {
  if (b < 1 || b + kSigma - 1 > kSlots)
    throw InvalidArgument("b", "form_band_block_factors: blocks of 64 reflectors of at most " +
                                   std::to_string(kSlots - kSigma + 1) + " entries, got b = " + std::to_string(b));
  check_packed_blocks("form_band_block_factors", ctx, v, w, b + kSigma - 1, stride, band_block_packed_entries, 8);
  if (ld < b) throw InvalidArgument("ld", "form_band_block_factors: the reflector storage needs ld >= b");
  if (count == 0) return;
  if (steps == nullptr) throw InvalidArgument("steps", "form_band_block_factors: needs the blocks' (group, step)");
  const auto kernel = band_factors_from_reflectors_kernel<S>;
  detail::check_cuda("cudaFuncSetAttribute", cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                                  static_cast<int>(factor_shared_bytes)));
  detail::check_cuda("band_factors_from_reflectors_kernel launch",
                     launch_dependent<band_factors_from_reflectors_kernel<S>>(
                         dependent, ctx.space(), dim3(static_cast<unsigned>(count)), dim3(kFactorThreads),
                         factor_shared_bytes, reflectors, ld, n, static_cast<int>(b), steps, v, w, stride, arrivals,
                         reuse, reuse_at_least, formed));
}

void check_queue(const char* who, const BandQueue& queue) {
  const std::string name(who);
  if (queue.counters == nullptr) throw InvalidArgument("queue", name + ": needs the queue's device counters");
  if (queue.batches < 1 || queue.tiles < 1)
    throw InvalidArgument("queue", name + ": a queue of at least one batch and one tile, got " +
                                       std::to_string(queue.batches) + " batches of " + std::to_string(queue.tiles) +
                                       " tiles");
  if (std::int64_t(queue.batches) * queue.tiles > (std::int64_t(1) << 30))
    throw InvalidArgument("queue", name + ": too many jobs (tiles x batches) for one queue");
}

// A factor step of a queued sequence.
template <class S>
void form_queued_factors(const CudaContext& ctx, index_t count, const S* reflectors, index_t ld, index_t n, index_t b,
                         const index_t* steps, double* v, double* w, index_t stride, const BandQueueFactors& step) {
  check_queue("form_band_block_factors", step.queue);
  if (step.batch < 0 || step.batch >= step.queue.batches)
    throw InvalidArgument("batch", "form_band_block_factors: batch " + std::to_string(step.batch) +
                                       " of a queue of " + std::to_string(step.queue.batches));
  if (step.copies < 1)
    throw InvalidArgument("copies", "form_band_block_factors: at least one copy of V and W, got " +
                                        std::to_string(step.copies));
  const QueueCounters c(step.queue);
  const int previous = step.batch - step.copies;  // the batch that read this copy
  form_factors_from_reflectors(ctx, count, reflectors, ld, n, b, steps, v, w, stride, c.exits + step.batch,
                               step.dependent, previous >= 0 ? c.applied + previous : nullptr, step.queue.tiles,
                               c.formed + step.batch);
}

template <class ZT>
void apply_blocks(const CudaContext& ctx, const BandBlock* list, index_t count, const double* v, const double* w,
                  index_t ldv, index_t stride, ZT* z, index_t ldz, index_t n, index_t m, int columns) {
  if (columns != 16 && columns != 32 && columns != 64 && columns != 128)
    throw InvalidArgument("columns",
                          "apply_band_blocks: tiles of 16, 32, 64 or 128 columns, got " + std::to_string(columns));
  check_packed_blocks("apply_band_blocks", ctx, v, w, ldv, stride,
                      planes<ZT> * band_block_packed_entries, 8);
  if (ldz < n) throw InvalidArgument("ldz", "apply_band_blocks: ldz must be >= n");
  if (count == 0 || m == 0 || n == 0) return;
  const auto launch = [&](auto kernel, int cols) {
    const size_t bytes = shared_bytes(cols);
    detail::check_cuda("cudaFuncSetAttribute", cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                                    static_cast<int>(bytes)));
    const int z_cols = cols / planes<ZT>;  // Z's columns of a tile
    const unsigned tiles = static_cast<unsigned>((m + z_cols - 1) / z_cols);
    kernel<<<tiles, block_threads(cols), bytes, ctx.space().cuda_stream()>>>(list, count, v, w, static_cast<int>(ldv),
                                                                             stride, z, ldz, n, m);
    detail::check_cuda("band_blocks_kernel launch", cudaGetLastError());
  };
  switch (columns) {
    case 16: launch(band_blocks_kernel<16, ZT>, 16); break;
    case 32: launch(band_blocks_kernel<32, ZT>, 32); break;
    case 64: launch(band_blocks_kernel<64, ZT>, 64); break;
    default: launch(band_blocks_kernel<128, ZT>, 128); break;
  }
}

template <class ZT>
void apply_blocks_queued(const CudaContext& ctx, const BandBatch* batches, int batch_count, int first_batch,
                         const BandQueue& queue, bool queued_factors, index_t ldv, index_t stride, ZT* z, index_t ldz,
                         index_t n, index_t m) {
  constexpr int kCols = 64;
  if (batch_count < 0 || batch_count > band_batches_max)
    throw InvalidArgument("batch_count", "apply_band_blocks_queued: 0 to " + std::to_string(band_batches_max) +
                                             " batches a launch, got " + std::to_string(batch_count));
  check_queue("apply_band_blocks_queued", queue);
  if (first_batch < 0 || first_batch + batch_count > queue.batches)
    throw InvalidArgument("first_batch", "apply_band_blocks_queued: batches " + std::to_string(first_batch) + " to " +
                                             std::to_string(first_batch + batch_count - 1) + " of a queue of " +
                                             std::to_string(queue.batches));
  QueuedBatches queued{};
  for (int b = 0; b < batch_count; ++b) {
    check_packed_blocks("apply_band_blocks_queued", ctx, batches[b].v, batches[b].w, ldv, stride,
                        planes<ZT> * band_block_packed_entries, 8);
    queued.batch[b] = batches[b];
  }
  if (ldz < n) throw InvalidArgument("ldz", "apply_band_blocks_queued: ldz must be >= n");
  const index_t z_cols = kCols / planes<ZT>, tiles = (m + z_cols - 1) / z_cols;
  if (tiles != queue.tiles)
    throw InvalidArgument("queue", "apply_band_blocks_queued: a queue of " + std::to_string(queue.tiles) +
                                       " tiles for " + std::to_string(tiles) + " tiles of Z");
  if (batch_count == 0 || m == 0 || n == 0) return;
  const auto kernel = band_blocks_queued_kernel<kCols, ZT>;
  const size_t bytes = shared_bytes(kCols);
  detail::check_cuda("cudaFuncSetAttribute", cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                                  static_cast<int>(bytes)));
  detail::check_cuda("band_blocks_queued_kernel launch",
                     launch_dependent<band_blocks_queued_kernel<kCols, ZT>>(
                         queued_factors, ctx.space(), dim3(static_cast<unsigned>(tiles * batch_count)),
                         dim3(block_threads(kCols)), bytes, queued, first_batch, batch_count, queue, queued_factors,
                         static_cast<int>(ldv), stride, z, ldz, n, m));
}
}  // namespace

void apply_band_blocks_queued(const CudaContext& ctx, const BandBatch* batches, int batch_count, int first_batch,
                              const BandQueue& queue, bool queued_factors, index_t ldv, index_t stride, double* z,
                              index_t ldz, index_t n, index_t m) {
  apply_blocks_queued(ctx, batches, batch_count, first_batch, queue, queued_factors, ldv, stride, z, ldz, n, m);
}
void apply_band_blocks_queued(const CudaContext& ctx, const BandBatch* batches, int batch_count, int first_batch,
                              const BandQueue& queue, bool queued_factors, index_t ldv, index_t stride, float* z,
                              index_t ldz, index_t n, index_t m) {
  apply_blocks_queued(ctx, batches, batch_count, first_batch, queue, queued_factors, ldv, stride, z, ldz, n, m);
}
void apply_band_blocks_queued(const CudaContext& ctx, const BandBatch* batches, int batch_count, int first_batch,
                              const BandQueue& queue, bool queued_factors, index_t ldv, index_t stride, Kokkos::complex<double>* z,
                              index_t ldz, index_t n, index_t m) {
  apply_blocks_queued(ctx, batches, batch_count, first_batch, queue, queued_factors, ldv, stride, reinterpret_cast<double2*>(z), ldz, n, m);
}
void apply_band_blocks_queued(const CudaContext& ctx, const BandBatch* batches, int batch_count, int first_batch,
                              const BandQueue& queue, bool queued_factors, index_t ldv, index_t stride, Kokkos::complex<float>* z,
                              index_t ldz, index_t n, index_t m) {
  apply_blocks_queued(ctx, batches, batch_count, first_batch, queue, queued_factors, ldv, stride, reinterpret_cast<float2*>(z), ldz, n, m);
}

void pack_band_blocks(const CudaContext& ctx, index_t count, double* v, double* w, index_t ldv, index_t stride) {
  pack_blocks(ctx, count, v, w, ldv, stride);
}
void pack_band_blocks(const CudaContext& ctx, index_t count, float* v, float* w, index_t ldv, index_t stride) {
  pack_blocks(ctx, count, v, w, ldv, stride);
}
void form_band_block_factors(const CudaContext& ctx, index_t count, const double* reflectors, index_t ld, index_t n,
                             index_t b, const index_t* steps, double* v, double* w, index_t stride, int* arrivals) {
  // A dependent of the window launch before it only with `arrivals`.
  form_factors_from_reflectors(ctx, count, reflectors, ld, n, b, steps, v, w, stride, arrivals, arrivals != nullptr,
                               nullptr, 0, nullptr);
}
void form_band_block_factors(const CudaContext& ctx, index_t count, const float* reflectors, index_t ld, index_t n,
                             index_t b, const index_t* steps, double* v, double* w, index_t stride, int* arrivals) {
  // A dependent of the window launch before it only with `arrivals`.
  form_factors_from_reflectors(ctx, count, reflectors, ld, n, b, steps, v, w, stride, arrivals, arrivals != nullptr,
                               nullptr, 0, nullptr);
}
void form_band_block_factors(const CudaContext& ctx, index_t count, const double* reflectors, index_t ld, index_t n,
                             index_t b, const index_t* steps, double* v, double* w, index_t stride,
                             const BandQueueFactors& step) {
  form_queued_factors(ctx, count, reflectors, ld, n, b, steps, v, w, stride, step);
}
void form_band_block_factors(const CudaContext& ctx, index_t count, const float* reflectors, index_t ld, index_t n,
                             index_t b, const index_t* steps, double* v, double* w, index_t stride,
                             const BandQueueFactors& step) {
  form_queued_factors(ctx, count, reflectors, ld, n, b, steps, v, w, stride, step);
}
void apply_band_blocks(const CudaContext& ctx, const BandBlock* list, index_t count, const double* v,
                       const double* w, index_t ldv, index_t stride, double* z, index_t ldz, index_t n, index_t m,
                       int columns) {
  apply_blocks(ctx, list, count, v, w, ldv, stride, z, ldz, n, m, columns);
}
void apply_band_blocks(const CudaContext& ctx, const BandBlock* list, index_t count, const double* v,
                       const double* w, index_t ldv, index_t stride, float* z, index_t ldz, index_t n, index_t m,
                       int columns) {
  apply_blocks(ctx, list, count, v, w, ldv, stride, z, ldz, n, m, columns);
}
// Kokkos::complex<R> is laid out (and aligned) as CUDA's double2 / float2.
static_assert(sizeof(Kokkos::complex<double>) == sizeof(double2) && alignof(Kokkos::complex<double>) == alignof(double2));
static_assert(sizeof(Kokkos::complex<float>) == sizeof(float2) && alignof(Kokkos::complex<float>) == alignof(float2));
void pack_band_blocks(const CudaContext& ctx, index_t count, Kokkos::complex<double>* v, Kokkos::complex<double>* w,
                      index_t ldv, index_t stride) {
  pack_blocks(ctx, count, reinterpret_cast<double2*>(v), reinterpret_cast<double2*>(w), ldv, stride);
}
void pack_band_blocks(const CudaContext& ctx, index_t count, Kokkos::complex<float>* v, Kokkos::complex<float>* w,
                      index_t ldv, index_t stride) {
  pack_blocks(ctx, count, reinterpret_cast<float2*>(v), reinterpret_cast<float2*>(w), ldv, stride);
}
void apply_band_blocks(const CudaContext& ctx, const BandBlock* list, index_t count, const double* v,
                       const double* w, index_t ldv, index_t stride, Kokkos::complex<double>* z, index_t ldz,
                       index_t n, index_t m, int columns) {
  apply_blocks(ctx, list, count, v, w, ldv, stride, reinterpret_cast<double2*>(z), ldz, n, m, columns);
}
void apply_band_blocks(const CudaContext& ctx, const BandBlock* list, index_t count, const double* v,
                       const double* w, index_t ldv, index_t stride, Kokkos::complex<float>* z, index_t ldz,
                       index_t n, index_t m, int columns) {
  apply_blocks(ctx, list, count, v, w, ldv, stride, reinterpret_cast<float2*>(z), ldz, n, m, columns);
}

}  // namespace keig::backends::cuda
