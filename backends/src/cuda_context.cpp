// Context<Kokkos::Cuda>: handles bound to the instance's stream, and the
// status/info translation shared by the CUDA vendor layer.
#include "cuda_common.hpp"

namespace keig::backends {

Context<Kokkos::Cuda>::Context(const Kokkos::Cuda& space) : space_(space) {
  using cuda::detail::check_cublas;
  using cuda::detail::check_cusolver;
  check_cublas("cublasCreate", cublasCreate(&blas_));
  try {
    check_cublas("cublasSetStream", cublasSetStream(blas_, space_.cuda_stream()));
    check_cusolver("cusolverDnCreate", cusolverDnCreate(&solver_));
    check_cusolver("cusolverDnSetStream", cusolverDnSetStream(solver_, space_.cuda_stream()));
    check_cusolver("cusolverDnCreateParams", cusolverDnCreateParams(&params_));
  } catch (...) {
    if (params_) cusolverDnDestroyParams(params_);
    if (solver_) cusolverDnDestroy(solver_);
    cublasDestroy(blas_);
    throw;
  }
}

void* Context<Kokkos::Cuda>::device_scratch(std::size_t bytes) const {
  if (device_scratch_.extent(0) < bytes) {
    space_.fence();  // queued vendor calls may still use the old buffer
    device_scratch_ = Kokkos::View<char*, Kokkos::CudaSpace>();
    device_scratch_ = Kokkos::View<char*, Kokkos::CudaSpace>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "keig::cusolver::scratch"), bytes);
  }
  return device_scratch_.data();
}

void* Context<Kokkos::Cuda>::host_scratch(std::size_t bytes) const {
  if (host_scratch_.size() < bytes) {
    space_.fence();
    host_scratch_.resize(bytes);
  }
  return host_scratch_.data();
}

int* Context<Kokkos::Cuda>::device_info() const {
  // Written by every vendor call that reports through it before it is read:
  // no initialization (that would be a kernel and a fence on the default
  // instance, not on space_).
  if (info_.extent(0) == 0)
    info_ = Kokkos::View<int*, Kokkos::CudaSpace>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "keig::cusolver::info"), 1);
  return info_.data();
}

Context<Kokkos::Cuda>::~Context() {
  cusolverDnDestroyParams(params_);
  cusolverDnDestroy(solver_);
  cublasDestroy(blas_);
}

namespace cuda::detail {

void check_cublas(const char* routine, cublasStatus_t status) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  if (status == CUBLAS_STATUS_ALLOC_FAILED) throw OutOfMemory(routine, 0, "cuBLAS");
  throw BackendError(routine, static_cast<index_t>(status), cublasGetStatusString(status));
}

void check_cusolver(const char* routine, cusolverStatus_t status) {
  if (status == CUSOLVER_STATUS_SUCCESS) return;
  if (status == CUSOLVER_STATUS_ALLOC_FAILED) throw OutOfMemory(routine, 0, "cuSOLVER");
  const char* what = status == CUSOLVER_STATUS_INVALID_VALUE
                         ? "CUSOLVER_STATUS_INVALID_VALUE: size or argument not supported by this routine"
                         : status == CUSOLVER_STATUS_EXECUTION_FAILED ? "CUSOLVER_STATUS_EXECUTION_FAILED"
                         : status == CUSOLVER_STATUS_INTERNAL_ERROR  ? "CUSOLVER_STATUS_INTERNAL_ERROR"
                                                                     : "cuSOLVER error";
  throw BackendError(routine, static_cast<index_t>(status), what);
}

void check_cuda(const char* what, cudaError_t status) {
  if (status == cudaSuccess) return;
  if (status == cudaErrorMemoryAllocation) throw OutOfMemory(what, 0, "CUDA");
  throw BackendError(what, static_cast<index_t>(status), cudaGetErrorString(status));
}

index_t read_info(const CudaContext& ctx, const int* d_info) {
  int info = 0;
  check_cuda("cudaMemcpyAsync(info)",
             cudaMemcpyAsync(&info, d_info, sizeof(int), cudaMemcpyDeviceToHost, ctx.space().cuda_stream()));
  ctx.space().fence();
  return info;
}

}  // namespace cuda::detail
}  // namespace keig::backends
