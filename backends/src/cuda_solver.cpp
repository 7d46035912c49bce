// cuSOLVER on Kokkos::Cuda: factorizations and the vendor dense eigensolvers,
// on the context's stream, every status and info checked.
#include <type_traits>

#include "cuda_common.hpp"

namespace keig::backends::cuda {
using detail::check_cusolver;
using detail::checked;
using detail::data_type;
using detail::eig_mode;
using detail::fill;
using detail::read_info;
using detail::vendor;
using detail::Workspace;

template <class T>
index_t potrf(const CudaContext& ctx, Uplo uplo, index_t n, T* a, index_t lda) {
  constexpr auto dt = data_type<T>();
  size_t dev = 0, host = 0;
  check_cusolver("cusolverDnXpotrf_bufferSize",
                 cusolverDnXpotrf_bufferSize(ctx.solver(), ctx.solver_params(), fill(uplo), n, dt, a, lda, dt, &dev,
                                             &host));
  Workspace ws(ctx, "potrf", dev, host);
  check_cusolver("cusolverDnXpotrf",
                 cusolverDnXpotrf(ctx.solver(), ctx.solver_params(), fill(uplo), n, dt, a, lda, dt, ws.device.data(),
                                  dev, ws.host.data(), host, ws.info.data()));
  return checked("cusolverDnXpotrf", read_info(ctx, ws.info.data()));
}

template <class T>
index_t geqrf(const CudaContext& ctx, index_t m, index_t n, T* a, index_t lda, T* tau) {
  constexpr auto dt = data_type<T>();
  size_t dev = 0, host = 0;
  check_cusolver("cusolverDnXgeqrf_bufferSize",
                 cusolverDnXgeqrf_bufferSize(ctx.solver(), ctx.solver_params(), m, n, dt, a, lda, dt, tau, dt, &dev,
                                             &host));
  // Per-panel call (sy2sb): the context's scratch, and info is not read --
  // it reports only invalid arguments, which the wrapper has checked, and
  // reading it would stall the stream's pipeline once per panel.
  check_cusolver("cusolverDnXgeqrf",
                 cusolverDnXgeqrf(ctx.solver(), ctx.solver_params(), m, n, dt, a, lda, dt, tau, dt,
                                  ctx.device_scratch(dev), dev, ctx.host_scratch(host), host, ctx.device_info()));
  return 0;
}

template <class T>
index_t larft(const CudaContext& ctx, index_t n, index_t k, const T* v, index_t ldv, const T* tau, T* t,
              index_t ldt, index_t scratch_rows) {
  constexpr auto dt = data_type<T>();
  size_t dev = 0, host = 0;
  // The scratch is sized for the largest call of a sequence (scratch_rows
  // rows, within ldv): growing it call by call fences the stream and frees
  // and allocates device memory each time (bt_sy2sb's blocks grow row by
  // row from the last: 32 fences at n = 16384).
  const index_t sized = scratch_rows > n && scratch_rows <= ldv ? scratch_rows : n;
  check_cusolver("cusolverDnXlarft_bufferSize",
                 cusolverDnXlarft_bufferSize(ctx.solver(), ctx.solver_params(), CUBLAS_DIRECT_FORWARD,
                                             CUBLAS_STOREV_COLUMNWISE, sized, k, dt, v, ldv, dt, tau, dt, t, ldt, dt,
                                             &dev, &host));
  check_cusolver("cusolverDnXlarft",
                 cusolverDnXlarft(ctx.solver(), ctx.solver_params(), CUBLAS_DIRECT_FORWARD, CUBLAS_STOREV_COLUMNWISE,
                                  n, k, dt, v, ldv, dt, tau, dt, t, ldt, dt, ctx.device_scratch(dev), dev,
                                  ctx.host_scratch(host), host));
  return 0;
}

template <class R>
void syevj_batched(const CudaContext& ctx, index_t m_, index_t batch_, R* a, R* w, int* info) {
  const int m = detail::to_int("syevjBatched", m_), batch = detail::to_int("syevjBatched", batch_);
  syevjInfo_t params = nullptr;
  check_cusolver("cusolverDnCreateSyevjInfo", cusolverDnCreateSyevjInfo(&params));
  struct Release {
    syevjInfo_t params;
    ~Release() { cusolverDnDestroySyevjInfo(params); }
  } release{params};
  check_cusolver("cusolverDnXsyevjSetSortEig", cusolverDnXsyevjSetSortEig(params, 1));
  const auto job = CUSOLVER_EIG_MODE_VECTOR;
  const auto uplo = CUBLAS_FILL_MODE_LOWER;
  int lwork = 0;
  if constexpr (std::is_same_v<R, float>)
    check_cusolver("cusolverDnSsyevjBatched_bufferSize",
                   cusolverDnSsyevjBatched_bufferSize(ctx.solver(), job, uplo, m, a, m, w, &lwork, params, batch));
  else
    check_cusolver("cusolverDnDsyevjBatched_bufferSize",
                   cusolverDnDsyevjBatched_bufferSize(ctx.solver(), job, uplo, m, a, m, w, &lwork, params, batch));
  // The context's scratch: a workspace of its own would be freed, and
  // cudaFree waits for the whole device.
  R* const work = static_cast<R*>(ctx.device_scratch(static_cast<size_t>(lwork) * sizeof(R)));
  if constexpr (std::is_same_v<R, float>)
    check_cusolver("cusolverDnSsyevjBatched", cusolverDnSsyevjBatched(ctx.solver(), job, uplo, m, a, m, w, work, lwork,
                                                                      info, params, batch));
  else
    check_cusolver("cusolverDnDsyevjBatched", cusolverDnDsyevjBatched(ctx.solver(), job, uplo, m, a, m, w, work, lwork,
                                                                      info, params, batch));
}

template <class T>
index_t syevd(const CudaContext& ctx, Job job, Uplo uplo, index_t n, T* a, index_t lda, real_t<T>* w) {
  constexpr auto dt = data_type<T>();
  constexpr auto rt = data_type<real_t<T>>();
  size_t dev = 0, host = 0;
  check_cusolver("cusolverDnXsyevd_bufferSize",
                 cusolverDnXsyevd_bufferSize(ctx.solver(), ctx.solver_params(), eig_mode(job), fill(uplo), n, dt, a,
                                             lda, rt, w, dt, &dev, &host));
  Workspace ws(ctx, "syevd", dev, host);
  check_cusolver("cusolverDnXsyevd",
                 cusolverDnXsyevd(ctx.solver(), ctx.solver_params(), eig_mode(job), fill(uplo), n, dt, a, lda, rt, w,
                                  dt, ws.device.data(), dev, ws.host.data(), host, ws.info.data()));
  return checked("cusolverDnXsyevd", read_info(ctx, ws.info.data()));
}

template <class T>
index_t syevdx(const CudaContext& ctx, Job job, const Range& range, Uplo uplo, index_t n, T* a, index_t lda,
               index_t& m, real_t<T>* w) {
  using R = real_t<T>;
  constexpr auto dt = data_type<T>();
  constexpr auto rt = data_type<R>();
  // vl, vu in the compute type's storage: for complex types (vl, 0), whose first
  // half is the real bound, so either reading of the pointer gets the bound.
  T vl = T(R(range.vl)), vu = T(R(range.vu));
  // cuSOLVER counts il, iu from 1 like LAPACK.
  const index_t il = range.kind == Range::Kind::Index ? range.il + 1 : 1;
  const index_t iu = range.kind == Range::Kind::Index ? range.iu + 1 : n;
  int64_t found = 0;
  size_t dev = 0, host = 0;
  check_cusolver("cusolverDnXsyevdx_bufferSize",
                 cusolverDnXsyevdx_bufferSize(ctx.solver(), ctx.solver_params(), eig_mode(job),
                                              detail::eig_range(range), fill(uplo), n, dt, a, lda, &vl, &vu, il, iu,
                                              &found, rt, w, dt, &dev, &host));
  Workspace ws(ctx, "syevdx", dev, host);
  check_cusolver("cusolverDnXsyevdx",
                 cusolverDnXsyevdx(ctx.solver(), ctx.solver_params(), eig_mode(job), detail::eig_range(range),
                                   fill(uplo), n, dt, a, lda, &vl, &vu, il, iu, &found, rt, w, dt, ws.device.data(),
                                   dev, ws.host.data(), host, ws.info.data()));
  const index_t info = checked("cusolverDnXsyevdx", read_info(ctx, ws.info.data()));
  m = found;
  return info;
}

namespace {
cusolverEigType_t eig_type(GeneralizedType t) {
  return t == GeneralizedType::AxLBx ? CUSOLVER_EIG_TYPE_1
         : t == GeneralizedType::ABxLx ? CUSOLVER_EIG_TYPE_2
                                       : CUSOLVER_EIG_TYPE_3;
}
}  // namespace

template <class T>
index_t sygvd(const CudaContext& ctx, GeneralizedType type, Job job, Uplo uplo, index_t n_, T* a, index_t lda_, T* b,
              index_t ldb_, real_t<T>* w) {
  const int n = detail::to_int("sygvd", n_), lda = detail::to_int("sygvd", lda_), ldb = detail::to_int("sygvd", ldb_);
  auto h = ctx.solver();
  const auto it = eig_type(type);
  const auto jz = eig_mode(job);
  const auto ul = fill(uplo);
  int lwork = 0;
  if constexpr (std::is_same_v<T, float>)
    check_cusolver("cusolverDnSsygvd_bufferSize", cusolverDnSsygvd_bufferSize(h, it, jz, ul, n, a, lda, b, ldb, w, &lwork));
  else if constexpr (std::is_same_v<T, double>)
    check_cusolver("cusolverDnDsygvd_bufferSize", cusolverDnDsygvd_bufferSize(h, it, jz, ul, n, a, lda, b, ldb, w, &lwork));
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>)
    check_cusolver("cusolverDnChegvd_bufferSize",
                   cusolverDnChegvd_bufferSize(h, it, jz, ul, n, vendor(a), lda, vendor(b), ldb, w, &lwork));
  else
    check_cusolver("cusolverDnZhegvd_bufferSize",
                   cusolverDnZhegvd_bufferSize(h, it, jz, ul, n, vendor(a), lda, vendor(b), ldb, w, &lwork));
  Workspace ws(ctx, "sygvd", sizeof(T) * static_cast<size_t>(lwork > 0 ? lwork : 1), 0);
  T* work = reinterpret_cast<T*>(ws.device.data());
  if constexpr (std::is_same_v<T, float>)
    check_cusolver("cusolverDnSsygvd", cusolverDnSsygvd(h, it, jz, ul, n, a, lda, b, ldb, w, work, lwork, ws.info.data()));
  else if constexpr (std::is_same_v<T, double>)
    check_cusolver("cusolverDnDsygvd", cusolverDnDsygvd(h, it, jz, ul, n, a, lda, b, ldb, w, work, lwork, ws.info.data()));
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>)
    check_cusolver("cusolverDnChegvd", cusolverDnChegvd(h, it, jz, ul, n, vendor(a), lda, vendor(b), ldb, w,
                                                        vendor(work), lwork, ws.info.data()));
  else
    check_cusolver("cusolverDnZhegvd", cusolverDnZhegvd(h, it, jz, ul, n, vendor(a), lda, vendor(b), ldb, w,
                                                        vendor(work), lwork, ws.info.data()));
  return checked("cusolverDn?sygvd", read_info(ctx, ws.info.data()));
}

template <class T>
index_t sygvdx(const CudaContext& ctx, GeneralizedType type, Job job, const Range& range, Uplo uplo, index_t n_,
               T* a, index_t lda_, T* b, index_t ldb_, index_t& m, real_t<T>* w) {
  using R = real_t<T>;
  const int n = detail::to_int("sygvdx", n_), lda = detail::to_int("sygvdx", lda_),
            ldb = detail::to_int("sygvdx", ldb_);
  auto h = ctx.solver();
  const auto it = eig_type(type);
  const auto jz = eig_mode(job);
  const auto rg = detail::eig_range(range);
  const auto ul = fill(uplo);
  const R vl = R(range.vl), vu = R(range.vu);
  const int il = range.kind == Range::Kind::Index ? static_cast<int>(range.il + 1) : 1;
  const int iu = range.kind == Range::Kind::Index ? static_cast<int>(range.iu + 1) : n;
  int found = 0, lwork = 0;
  if constexpr (std::is_same_v<T, float>)
    check_cusolver("cusolverDnSsygvdx_bufferSize", cusolverDnSsygvdx_bufferSize(h, it, jz, rg, ul, n, a, lda, b, ldb,
                                                                                vl, vu, il, iu, &found, w, &lwork));
  else if constexpr (std::is_same_v<T, double>)
    check_cusolver("cusolverDnDsygvdx_bufferSize", cusolverDnDsygvdx_bufferSize(h, it, jz, rg, ul, n, a, lda, b, ldb,
                                                                                vl, vu, il, iu, &found, w, &lwork));
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>)
    check_cusolver("cusolverDnChegvdx_bufferSize",
                   cusolverDnChegvdx_bufferSize(h, it, jz, rg, ul, n, vendor(a), lda, vendor(b), ldb, vl, vu, il, iu,
                                                &found, w, &lwork));
  else
    check_cusolver("cusolverDnZhegvdx_bufferSize",
                   cusolverDnZhegvdx_bufferSize(h, it, jz, rg, ul, n, vendor(a), lda, vendor(b), ldb, vl, vu, il, iu,
                                                &found, w, &lwork));
  Workspace ws(ctx, "sygvdx", sizeof(T) * static_cast<size_t>(lwork > 0 ? lwork : 1), 0);
  T* work = reinterpret_cast<T*>(ws.device.data());
  if constexpr (std::is_same_v<T, float>)
    check_cusolver("cusolverDnSsygvdx", cusolverDnSsygvdx(h, it, jz, rg, ul, n, a, lda, b, ldb, vl, vu, il, iu, &found,
                                                          w, work, lwork, ws.info.data()));
  else if constexpr (std::is_same_v<T, double>)
    check_cusolver("cusolverDnDsygvdx", cusolverDnDsygvdx(h, it, jz, rg, ul, n, a, lda, b, ldb, vl, vu, il, iu, &found,
                                                          w, work, lwork, ws.info.data()));
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>)
    check_cusolver("cusolverDnChegvdx", cusolverDnChegvdx(h, it, jz, rg, ul, n, vendor(a), lda, vendor(b), ldb, vl,
                                                          vu, il, iu, &found, w, vendor(work), lwork, ws.info.data()));
  else
    check_cusolver("cusolverDnZhegvdx", cusolverDnZhegvdx(h, it, jz, rg, ul, n, vendor(a), lda, vendor(b), ldb, vl,
                                                          vu, il, iu, &found, w, vendor(work), lwork, ws.info.data()));
  const index_t info = checked("cusolverDn?sygvdx", read_info(ctx, ws.info.data()));
  m = found;
  return info;
}

#define KEIG_INSTANTIATE_CUDA_SOLVER(T)                                                                            \
  template index_t potrf<T>(const CudaContext&, Uplo, index_t, T*, index_t);                                       \
  template index_t geqrf<T>(const CudaContext&, index_t, index_t, T*, index_t, T*);                                \
  template index_t larft<T>(const CudaContext&, index_t, index_t, const T*, index_t, const T*, T*, index_t,        \
                            index_t);                                                                            \
  template index_t syevd<T>(const CudaContext&, Job, Uplo, index_t, T*, index_t, real_t<T>*);                      \
  template index_t syevdx<T>(const CudaContext&, Job, const Range&, Uplo, index_t, T*, index_t, index_t&,          \
                             real_t<T>*);                                                                          \
  template index_t sygvd<T>(const CudaContext&, GeneralizedType, Job, Uplo, index_t, T*, index_t, T*, index_t,     \
                            real_t<T>*);                                                                           \
  template index_t sygvdx<T>(const CudaContext&, GeneralizedType, Job, const Range&, Uplo, index_t, T*, index_t,   \
                             T*, index_t, index_t&, real_t<T>*);
template void syevj_batched<float>(const CudaContext&, index_t, index_t, float*, float*, int*);
template void syevj_batched<double>(const CudaContext&, index_t, index_t, double*, double*, int*);
KEIG_INSTANTIATE_CUDA_SOLVER(float)
KEIG_INSTANTIATE_CUDA_SOLVER(double)
KEIG_INSTANTIATE_CUDA_SOLVER(Kokkos::complex<float>)
KEIG_INSTANTIATE_CUDA_SOLVER(Kokkos::complex<double>)

}  // namespace keig::backends::cuda
