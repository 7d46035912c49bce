// A backend context binds vendor-library state to one execution-space
// instance: on host spaces just the instance; on Kokkos::Cuda a cuBLAS and a
// cuSOLVER handle whose stream is the instance's stream. Drivers create one
// per call (no global handles), so concurrent calls on different instances
// never share state.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <vector>

struct cublasContext;
struct cusolverDnContext;
struct cusolverDnParams;

namespace keig::backends {

template <class ExecSpace>
class Context {
 public:
  explicit Context(const ExecSpace& space) : space_(space) {}
  const ExecSpace& space() const { return space_; }
  // Host vendor calls run on the calling thread: earlier Kokkos work on the
  // instance must be complete first.
  void before_vendor_call() const { space_.fence(); }

 private:
  ExecSpace space_;
};

#if defined(KOKKOS_ENABLE_CUDA)
template <>
class Context<Kokkos::Cuda> {
 public:
  explicit Context(const Kokkos::Cuda& space);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const Kokkos::Cuda& space() const { return space_; }
  cublasContext* blas() const { return blas_; }
  cusolverDnContext* solver() const { return solver_; }
  cusolverDnParams* solver_params() const { return params_; }
  // Vendor calls are enqueued on the instance's stream: nothing to wait for.
  void before_vendor_call() const {}

  // Scratch of the vendor routines called once per panel or block (geqrf,
  // larft), kept between calls: allocating and freeing it per call would
  // synchronize the device each time (cudaFree does), and every later launch
  // would then wait for the host. Grows, after a fence, when too small.
  void* device_scratch(std::size_t bytes) const;
  void* host_scratch(std::size_t bytes) const;
  int* device_info() const;

 private:
  Kokkos::Cuda space_;
  cublasContext* blas_ = nullptr;
  cusolverDnContext* solver_ = nullptr;
  cusolverDnParams* params_ = nullptr;
  mutable Kokkos::View<char*, Kokkos::CudaSpace> device_scratch_;
  mutable std::vector<char> host_scratch_;
  mutable Kokkos::View<int*, Kokkos::CudaSpace> info_;
};
#endif

// Multiprocessors of the instance's device: a kernel whose teams wait on
// each other (sb2st's persistent bulge chase, panel_qr) launches at most this
// many teams of one per multiprocessor, so all of them are resident at once.
// Host spaces: their concurrency (such kernels are not launched there).
template <class ExecSpace>
int multiprocessors(const ExecSpace& space) {
  return space.concurrency();
}
#if defined(KOKKOS_ENABLE_CUDA)
inline int multiprocessors(const Kokkos::Cuda& space) { return space.cuda_device_prop().multiProcessorCount; }
#endif

template <class ExecSpace>
inline constexpr bool is_cuda_space_v =
#if defined(KOKKOS_ENABLE_CUDA)
    std::is_same_v<ExecSpace, Kokkos::Cuda>;
#else
    false;
#endif

}  // namespace keig::backends
