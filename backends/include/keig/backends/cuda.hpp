// CUDA vendor layer: cuBLAS and cuSOLVER on the stream of a
// Context<Kokkos::Cuda>, with the same signatures and conventions as
// keig/backends/host.hpp (device pointers; positive info returned, negative
// info and non-success status thrown). Compiled only when Kokkos has CUDA.
#pragma once

#include <cstdint>

#include "keig/backends/context.hpp"
#include "keig/backends/types.hpp"
#include "keig/options.hpp"
#include "keig/views/scalar.hpp"

namespace keig::backends::cuda {
// One block of bt_sb2st's window apply: its V and W at q * stride entries
// from the bases, its rows [row0, row0 + ldv) of Z.
struct BandBlock {
  std::int64_t q, row0;
};
// Entries (doubles) of a block's V or W in the order the window kernel reads
// them (pack_band_blocks; complex blocks take two such planes, real then
// imaginary), and the least stride, in entries of the blocks' scalar
// (scalar_bytes: 8 for double, 4 float, 16 complex<double>, 8 complex<float>;
// planes: 2 for the complex ones), from one block's V (or W) to the next's:
// room for either the column-major ldv x 64 or the packed order, which is
// always double (float blocks are widened as they are packed).
constexpr std::int64_t band_block_packed_entries = 6656;
constexpr std::int64_t band_block_packed_v_entries = 5120;  // a packed V's (band_block_packed_entries: W's)
constexpr std::int64_t band_block_min_stride(std::int64_t ldv, int scalar_bytes = 8, int planes = 1) {
  const std::int64_t packed = planes * band_block_packed_entries * 8 / scalar_bytes;
  return ldv * 64 > packed ? ldv * 64 : packed;
}
// One batch of a queued window apply (apply_band_blocks_queued): its block
// list (device memory) and its packed V and W (block q at q * stride doubles).
struct BandBatch {
  const BandBlock* list;
  std::int64_t count;
  const double* v;
  const double* w;
};
// Batches in one queued launch at most (they travel as a kernel parameter).
constexpr int band_batches_max = 16;
// The device counters of one sequence of queued window launches
// (apply_band_blocks_queued) over `batches` batches of `tiles` tiles (64
// window columns each), band_queue_ints(batches, tiles) ints, all zero
// before the sequence's first launch: the jobs' tickets, per batch the
// order in which its tiles became ready (their previous batch applied),
// how many are listed, applied and how many of its factor blocks are formed,
// and per launch the thread blocks that finished.
struct BandQueue {
  int* counters;
  int batches;
  int tiles;
};
constexpr std::int64_t band_queue_ints(std::int64_t batches, std::int64_t tiles) { return 1 + batches * (tiles + 5); }
// A factor launch (form_band_block_factors) in a queued sequence: it forms
// batch `batch`'s blocks into the copy of V and W that batch `batch -
// copies` read, once that batch is applied, and counts them as formed, so
// that the batch's jobs start when their own blocks are ready. `dependent`:
// the launch is a programmatic dependent of the kernel before it on the
// stream (a queued launch or the factor launch of the batch before).
struct BandQueueFactors {
  BandQueue queue;
  int batch;
  int copies;
  bool dependent;
};
// The stride in doubles of the packed blocks that pack_band_blocks leaves
// from blocks of scalar_bytes entries `stride` apart (apply_band_blocks' stride).
constexpr std::int64_t band_block_packed_stride(std::int64_t stride, int scalar_bytes) {
  return stride * scalar_bytes / 8;
}
}  // namespace keig::backends::cuda

#if defined(KOKKOS_ENABLE_CUDA)
namespace keig::backends::cuda {

using index_t = std::int64_t;
using CudaContext = Context<Kokkos::Cuda>;

template <class T>
void gemv(const CudaContext&, Op ta, index_t m, index_t n, T alpha, const T* a, index_t lda, const T* x, T beta, T* y);
template <class T>
void symv(const CudaContext&, Uplo uplo, index_t n, T alpha, const T* a, index_t lda, const T* x, T beta, T* y);
template <class T>
void gemm(const CudaContext&, Op ta, Op tb, index_t m, index_t n, index_t k, T alpha, const T* a, index_t lda,
          const T* b, index_t ldb, T beta, T* c, index_t ldc);
// Pointer arrays in device memory (cublas?gemmBatched_64).
template <class T>
void gemm_batched(const CudaContext&, Op ta, Op tb, index_t m, index_t n, index_t k, T alpha, const T* const* a,
                  index_t lda, const T* const* b, index_t ldb, T beta, T* const* c, index_t ldc, index_t batch);
template <class T>
void symm(const CudaContext&, Side side, Uplo uplo, index_t m, index_t n, T alpha, const T* a, index_t lda,
          const T* b, index_t ldb, T beta, T* c, index_t ldc);
template <class T>
void syr2k(const CudaContext&, Uplo uplo, Op trans, index_t n, index_t k, T alpha, const T* a, index_t lda,
           const T* b, index_t ldb, real_t<T> beta, T* c, index_t ldc);
template <class T>
void trsm(const CudaContext&, Side side, Uplo uplo, Op ta, Diag diag, index_t m, index_t n, T alpha, const T* a,
          index_t lda, T* b, index_t ldb);
// Pointer arrays in device memory (cublas?trsmBatched_64).
template <class T>
void trsm_batched(const CudaContext&, Side side, Uplo uplo, Op ta, Diag diag, index_t m, index_t n, T alpha,
                  const T* const* a, index_t lda, T* const* b, index_t ldb, index_t batch);
template <class T>
void trmm(const CudaContext&, Side side, Uplo uplo, Op ta, Diag diag, index_t m, index_t n, T alpha, const T* a,
          index_t lda, T* b, index_t ldb);

template <class T>
[[nodiscard]] index_t potrf(const CudaContext&, Uplo uplo, index_t n, T* a, index_t lda);
template <class T>
[[nodiscard]] index_t geqrf(const CudaContext&, index_t m, index_t n, T* a, index_t lda, T* tau);
template <class T>
[[nodiscard]] index_t larft(const CudaContext&, index_t n, index_t k, const T* v, index_t ldv, const T* tau, T* t,
                            index_t ldt, index_t scratch_rows);
// Real float or double: see backends::syevj_batched.
template <class R>
void syevj_batched(const CudaContext&, index_t m, index_t batch, R* a, R* w, int* info);

// bt_sb2st's sweep blocks on Z (n x m, double, float, complex<double> or
// complex<float>) in list order: for each, Z(row0 : row0 + ldv, :) -= W (V^H
// Z(row0 : row0 + ldv, :)) with V, W ldv x 64 (ldv <= 128, zero where the
// block has no rows), by tiles of `columns` window columns (64 or 128; 16 or
// 32 for a remainder of columns that would fill a round of wider tiles
// poorly; a complex Z's tile holds half as many of its columns) of Z whose
// block rows stay in shared memory (FP64 tensor cores; a float Z is widened
// as its rows enter and rounded as they leave; a complex product is two real
// ones). list lives in device memory. band_blocks_supported: compute
// capability 8.0 or newer with the kernel's shared memory.
// pack_band_blocks rewrites blocks 0 .. count - 1 (column-major V and W of
// T = double, float or complex, leading dimension ldv, block q at q * stride
// entries of T, stride >= band_block_min_stride(ldv, sizeof(T), planes) and a
// whole number of 16 bytes, 16-byte aligned) in place into the packed double
// order apply_band_blocks reads (block q then at q *
// band_block_packed_stride(stride, sizeof(T)) doubles); after it they are no
// longer column-major.
bool band_blocks_supported(const CudaContext&);
void pack_band_blocks(const CudaContext&, index_t count, double* v, double* w, index_t ldv, index_t stride);
void pack_band_blocks(const CudaContext&, index_t count, float* v, float* w, index_t ldv, index_t stride);
void pack_band_blocks(const CudaContext&, index_t count, Kokkos::complex<double>* v, Kokkos::complex<double>* w,
                      index_t ldv, index_t stride);
void pack_band_blocks(const CudaContext&, index_t count, Kokkos::complex<float>* v, Kokkos::complex<float>* w,
                      index_t ldv, index_t stride);
// For real blocks of 64 of sb2st's reflectors (reflectors: ld >= b; column
// n - 1 - s holds sweep s's steps, step k as tau, v(1), .. from row k b;
// b <= 65; block q is group g = steps[2 q], sweeps 64 g .. 64 g + 63, at
// step k = steps[2 q + 1], V(r, j) its sweep j's reflector from row j, zero
// for a sweep past n - 2 or without step k) the compact-WY product W = V T,
// I - V T V^T = H_0 H_1 ... H_63, formed in double, and V and W packed as
// pack_band_blocks leaves them at q * stride doubles of v and w (device
// memory throughout): what the batched gemms G = V^T V and W = V T, the
// T-factor kernel and the pack do, in one launch. With arrivals (one device
// int, zero before the first such call, left zero by each) the launch is a
// programmatic dependent of the window launch before it on the stream
// (compute capability 9.0): its blocks start in the places that launch
// leaves free, so it must not write what that launch reads; the launch
// after it still follows both.
void form_band_block_factors(const CudaContext&, index_t count, const double* reflectors, index_t ld, index_t n,
                             index_t b, const index_t* steps, double* v, double* w, index_t stride, int* arrivals);
void form_band_block_factors(const CudaContext&, index_t count, const float* reflectors, index_t ld, index_t n,
                             index_t b, const index_t* steps, double* v, double* w, index_t stride, int* arrivals);
// The same as a step of a queued sequence (BandQueueFactors above).
void form_band_block_factors(const CudaContext&, index_t count, const double* reflectors, index_t ld, index_t n,
                             index_t b, const index_t* steps, double* v, double* w, index_t stride,
                             const BandQueueFactors& step);
void form_band_block_factors(const CudaContext&, index_t count, const float* reflectors, index_t ld, index_t n,
                             index_t b, const index_t* steps, double* v, double* w, index_t stride,
                             const BandQueueFactors& step);
// v, w: packed blocks, block q at q * stride doubles.
void apply_band_blocks(const CudaContext&, const BandBlock* list, index_t count, const double* v, const double* w,
                       index_t ldv, index_t stride, double* z, index_t ldz, index_t n, index_t m, int columns);
void apply_band_blocks(const CudaContext&, const BandBlock* list, index_t count, const double* v, const double* w,
                       index_t ldv, index_t stride, float* z, index_t ldz, index_t n, index_t m, int columns);
void apply_band_blocks(const CudaContext&, const BandBlock* list, index_t count, const double* v, const double* w,
                       index_t ldv, index_t stride, Kokkos::complex<double>* z, index_t ldz, index_t n, index_t m,
                       int columns);
void apply_band_blocks(const CudaContext&, const BandBlock* list, index_t count, const double* v, const double* w,
                       index_t ldv, index_t stride, Kokkos::complex<float>* z, index_t ldz, index_t n, index_t m,
                       int columns);
// The same for batch_count consecutive batches (at most band_batches_max;
// host array, each batch's blocks in list order; first_batch: the sequence
// index of batches[0]) in one launch of a sequence (queue above), tiles of 64
// window columns: one thread block per job (batch, tile). A thread block
// takes the next ticket of the sequence; the tickets go batch by batch, and
// within batch b to its tiles in the order their batch b - 1 was applied
// (batch 0 in tile order). So a tile's batches may run on different
// multiprocessors, the jobs past a batch's whole rounds fill the places the
// next batch leaves, and no job waits for a tile while another is ready.
// queued_factors: each batch's factors come from form_band_block_factors
// steps of this queue (its jobs wait until the batch's blocks are formed)
// and the launch is a programmatic dependent of the factor launch before
// it, so its jobs start in the places the previous launch leaves free.
// Otherwise the factors must be complete before the launch in stream order.
void apply_band_blocks_queued(const CudaContext&, const BandBatch* batches, int batch_count, int first_batch,
                              const BandQueue& queue, bool queued_factors, index_t ldv, index_t stride, double* z,
                              index_t ldz, index_t n, index_t m);
void apply_band_blocks_queued(const CudaContext&, const BandBatch* batches, int batch_count, int first_batch,
                              const BandQueue& queue, bool queued_factors, index_t ldv, index_t stride, float* z,
                              index_t ldz, index_t n, index_t m);
void apply_band_blocks_queued(const CudaContext&, const BandBatch* batches, int batch_count, int first_batch,
                              const BandQueue& queue, bool queued_factors, index_t ldv, index_t stride,
                              Kokkos::complex<double>* z, index_t ldz, index_t n, index_t m);
void apply_band_blocks_queued(const CudaContext&, const BandBatch* batches, int batch_count, int first_batch,
                              const BandQueue& queue, bool queued_factors, index_t ldv, index_t stride,
                              Kokkos::complex<float>* z, index_t ldz, index_t n, index_t m);

// X = A V for a real symmetric A (m x m, lower triangle referenced) and V,
// X m x k, k <= 64, on the FP64 tensor cores, a thread block per 64 rows of
// X (sy2sb's trailing products). symm_skinny_supported: compute capability
// 8.0 or newer with the kernel's shared memory.
// symm_skinny_resident_rows: the largest m whose row blocks all run at once
// (two 64-row blocks a multiprocessor for k <= 32, one for k <= 64), so
// that both readers of a tile read it at about the same time.
bool symm_skinny_supported(const CudaContext&);
index_t symm_skinny_resident_rows(const CudaContext&, index_t k);
void symm_lower_skinny(const CudaContext&, index_t m, index_t k, const double* a, index_t lda, const double* v,
                       index_t ldv, double* x, index_t ldx);

// Xsyevd (all pairs, in place) and Xsyevdx (all or a subset; the m
// eigenvectors found overwrite the first m columns of a).
template <class T>
[[nodiscard]] index_t syevd(const CudaContext&, Job job, Uplo uplo, index_t n, T* a, index_t lda, real_t<T>* w);
template <class T>
[[nodiscard]] index_t syevdx(const CudaContext&, Job job, const Range& range, Uplo uplo, index_t n, T* a,
                             index_t lda, index_t& m, real_t<T>* w);
// ?sygvd / ?sygvdx (32-bit cuSOLVER API; eigenvectors overwrite a).
template <class T>
[[nodiscard]] index_t sygvd(const CudaContext&, GeneralizedType type, Job job, Uplo uplo, index_t n, T* a,
                            index_t lda, T* b, index_t ldb, real_t<T>* w);
template <class T>
[[nodiscard]] index_t sygvdx(const CudaContext&, GeneralizedType type, Job job, const Range& range, Uplo uplo,
                             index_t n, T* a, index_t lda, T* b, index_t ldb, index_t& m, real_t<T>* w);

}  // namespace keig::backends::cuda
#else
// Without CUDA the names exist (for dispatch code in discarded `if constexpr`
// branches) but can never be called.
namespace keig::backends::cuda {
#define KEIG_CUDA_UNAVAILABLE(name) \
  template <class... Args>          \
  std::int64_t name(Args&&...) = delete;
KEIG_CUDA_UNAVAILABLE(gemv)
KEIG_CUDA_UNAVAILABLE(symv)
KEIG_CUDA_UNAVAILABLE(gemm)
KEIG_CUDA_UNAVAILABLE(gemm_batched)
KEIG_CUDA_UNAVAILABLE(symm)
KEIG_CUDA_UNAVAILABLE(syr2k)
KEIG_CUDA_UNAVAILABLE(trsm)
KEIG_CUDA_UNAVAILABLE(trsm_batched)
KEIG_CUDA_UNAVAILABLE(trmm)
KEIG_CUDA_UNAVAILABLE(potrf)
KEIG_CUDA_UNAVAILABLE(geqrf)
KEIG_CUDA_UNAVAILABLE(larft)
KEIG_CUDA_UNAVAILABLE(syevj_batched)
KEIG_CUDA_UNAVAILABLE(syevd)
KEIG_CUDA_UNAVAILABLE(syevdx)
KEIG_CUDA_UNAVAILABLE(sygvd)
KEIG_CUDA_UNAVAILABLE(sygvdx)
KEIG_CUDA_UNAVAILABLE(band_blocks_supported)
KEIG_CUDA_UNAVAILABLE(pack_band_blocks)
KEIG_CUDA_UNAVAILABLE(form_band_block_factors)
KEIG_CUDA_UNAVAILABLE(apply_band_blocks)
KEIG_CUDA_UNAVAILABLE(apply_band_blocks_queued)
KEIG_CUDA_UNAVAILABLE(symm_skinny_supported)
KEIG_CUDA_UNAVAILABLE(symm_skinny_resident_rows)
KEIG_CUDA_UNAVAILABLE(symm_lower_skinny)
#undef KEIG_CUDA_UNAVAILABLE
}  // namespace keig::backends::cuda
#endif
