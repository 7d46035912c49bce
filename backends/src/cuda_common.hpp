// Private helpers of the CUDA vendor layer (not installed).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "keig/backends/cuda.hpp"
#include "keig/errors.hpp"
#include "keig/views/workspace.hpp"

namespace keig::backends::cuda::detail {

template <class T>
struct vendor_type { using type = T; };
template <>
struct vendor_type<Kokkos::complex<float>> { using type = cuComplex; };
template <>
struct vendor_type<Kokkos::complex<double>> { using type = cuDoubleComplex; };
template <class T>
using vendor_t = typename vendor_type<T>::type;

template <class T>
auto* vendor(T* p) { return reinterpret_cast<vendor_t<T>*>(p); }
template <class T>
const auto* vendor(const T* p) { return reinterpret_cast<const vendor_t<T>*>(p); }

template <class T>
constexpr cudaDataType data_type() {
  if constexpr (std::is_same_v<T, float>) return CUDA_R_32F;
  else if constexpr (std::is_same_v<T, double>) return CUDA_R_64F;
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>) return CUDA_C_32F;
  else return CUDA_C_64F;
}

inline cublasFillMode_t fill(Uplo u) { return u == Uplo::Lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER; }
inline cusolverEigMode_t eig_mode(Job j) {
  return j == Job::Vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
}
inline cusolverEigRange_t eig_range(const Range& r) {
  switch (r.kind) {
    case Range::Kind::Index: return CUSOLVER_EIG_RANGE_I;
    case Range::Kind::Value: return CUSOLVER_EIG_RANGE_V;
    default: return CUSOLVER_EIG_RANGE_ALL;
  }
}

void check_cublas(const char* routine, cublasStatus_t status);
void check_cusolver(const char* routine, cusolverStatus_t status);
void check_cuda(const char* what, cudaError_t status);

// Reads the device-side info word (the host needs it: fences the instance).
index_t read_info(const CudaContext& ctx, const int* d_info);

inline int to_int(const char* routine, index_t value) {
  if (value > std::numeric_limits<int>::max())
    throw InvalidArgument("n", "size " + std::to_string(value) + " exceeds the 32-bit cuSOLVER interface of " +
                                   routine);
  return static_cast<int>(value);
}

// info < 0 from cuSOLVER means keig passed a bad argument: a bug.
inline index_t checked(const char* routine, index_t info) {
  if (info < 0)
    throw BackendError(routine, info, "cuSOLVER rejected argument " + std::to_string(-info) + "; this is a keig bug");
  return info;
}

// Device and host workspaces of a cuSOLVER 64-bit-API call.
struct Workspace {
  OwnedVector<char, Kokkos::Cuda> device;
  std::vector<char> host;
  OwnedVector<int, Kokkos::Cuda> info;
  Workspace(const CudaContext& ctx, const char* routine, size_t device_bytes, size_t host_bytes)
      : device(allocate_vector<char, Kokkos::Cuda>(ctx.space(), std::string("keig::cusolver::") + routine,
                                                   device_bytes > 0 ? device_bytes : 1)),
        host(host_bytes > 0 ? host_bytes : 1),
        info(allocate_vector<int, Kokkos::Cuda>(ctx.space(), "keig::cusolver::info", 1)) {}
};

}  // namespace keig::backends::cuda::detail
