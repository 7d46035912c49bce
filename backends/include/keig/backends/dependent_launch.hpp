// A short kernel launched as a programmatic dependent of the kernel before it
// on the stream (CUDA, compute capability 9.0): its blocks start while the
// first kernel's last blocks still run and wait inside (griddepcontrol.wait)
// until all of that kernel's writes are visible, so the gap between the two
// launches overlaps the first one's tail instead of following it. The first
// kernel opts in with allow_dependent_launch() in every team; a kernel
// launched the ordinary way after it is not affected.
//
// sum_row_partials is such a kernel: the last launch of symv, which sums
// each row's partial products (H100, n = 8192, 20 products queued: 106.0 ->
// 104.4 us a product with this launch, about 1.5 % of the copy bandwidth).
// Where the device or the architecture the kernel was compiled for predates
// compute capability 9.0 the same kernel is launched the ordinary way.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <string>

#include "keig/errors.hpp"

namespace keig::backends {

// Called by every team of a kernel: the dependent launched after it may start.
KOKKOS_FORCEINLINE_FUNCTION void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;");
#endif
}

#if defined(KOKKOS_ENABLE_CUDA)
namespace detail {

inline constexpr int row_sum_slices = 8, row_sum_rows = 32;

// Block b: rows [32 b, 32 b + 32), each row's partials split over 8 slices
// (slice s sums partials s, s + 8, ..), then slice 0 adds the 8 slice sums
// in order: a fixed order, so the results repeat bit for bit. (One thread
// per row took 24 us at n = 16384 for symv's last block row, 256 partials
// in sequence; 4, 16 or 32 slices, or four loads in flight a thread, measured
// the same as 8.)
template <class Rows>
__global__ void __launch_bounds__(row_sum_slices* row_sum_rows)
    sum_row_partials_kernel(const Rows rows, const std::int64_t n) {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  using T = typename Rows::value_type;
  // Raw storage: complex scalars have constructors, which __shared__ forbids.
  __shared__ alignas(16) unsigned char storage[row_sum_slices * row_sum_rows * sizeof(T)];
  T* const part = reinterpret_cast<T*>(storage);
  const int lane = static_cast<int>(threadIdx.x) % row_sum_rows, slice = static_cast<int>(threadIdx.x) / row_sum_rows;
  const std::int64_t r = std::int64_t(blockIdx.x) * row_sum_rows + lane;
  T sum = T(0);
  if (r < n) {
    const std::int64_t count = rows.count(r);
    for (std::int64_t idx = slice; idx < count; idx += row_sum_slices) sum += rows.partial(r, idx);
  }
  part[slice * row_sum_rows + lane] = sum;
  __syncthreads();
  if (slice != 0 || r >= n) return;
  T total = T(0);
  for (int q = 0; q < row_sum_slices; ++q) total += part[q * row_sum_rows + lane];
  rows.store(r, total);
}

}  // namespace detail

// Launches kernel(args...) on the instance's stream as a programmatic
// dependent of the kernel before it where `dependent` asks for it and both the
// device and the virtual architecture the kernel was compiled for have it: its
// code has the in-kernel wait only from compute capability 9.0 on, so a binary
// built for 8.x and compiled just in time for a 9.0 device must not launch
// early. Otherwise the launch is an ordinary one. Returns the launch's status.
template <auto kernel, class... Args>
cudaError_t launch_dependent(bool dependent, const Kokkos::Cuda& space, dim3 grid, dim3 block,
                             std::size_t shared_bytes, const Args&... args) {
  // Fixed for the process: asked once per kernel.
  static const int ptx_version = [] {
    cudaFuncAttributes attributes{};
    return cudaFuncGetAttributes(&attributes, kernel) == cudaSuccess ? attributes.ptxVersion : 0;
  }();
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  config.stream = space.cuda_stream();
  config.attrs = &attribute;
  config.numAttrs = dependent && ptx_version >= 90 && space.cuda_device_prop().major >= 9 ? 1 : 0;
  return cudaLaunchKernelEx(&config, kernel, args...);
}

// rows.store(r, sum of rows.partial(r, idx) over idx < rows.count(r)) for
// every r < n, as a dependent of the kernel before it on the instance's
// stream. Rows: value_type and device-callable count, partial and store,
// trivially copyable (the launch copies it as kernel arguments).
template <class Rows>
void sum_row_partials(const Kokkos::Cuda& space, std::int64_t n, const Rows& rows) {
  if (n <= 0) return;
  const cudaError_t status = launch_dependent<detail::sum_row_partials_kernel<Rows>>(
      true, space, dim3(static_cast<unsigned>((n + detail::row_sum_rows - 1) / detail::row_sum_rows)),
      dim3(detail::row_sum_slices * detail::row_sum_rows), 0, rows, n);
  if (status != cudaSuccess)
    throw BackendError("cudaLaunchKernelEx (sum_row_partials)", status, cudaGetErrorString(status));
}
#endif

}  // namespace keig::backends
