// LAPACK on host spaces through LAPACKE (OpenBLAS's LAPACK).
// LAPACKE's complex types as std::complex (layout-compatible with Kokkos::complex).
#include <complex>
#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <lapacke.h>

#include <algorithm>
#include <vector>

#include "host_common.hpp"

// ?laed4 is a LAPACK computational auxiliary without a LAPACKE wrapper.
extern "C" {
void slaed4_(const int* n, const int* i, const float* d, const float* z, float* delta, const float* rho, float* dlam,
             int* info);
void dlaed4_(const int* n, const int* i, const double* d, const double* z, double* delta, const double* rho,
             double* dlam, int* info);
}

namespace keig::backends::host {

using detail::checked;
using detail::job_char;
using detail::uplo_char;
using detail::vendor;

namespace {
constexpr int CM = LAPACK_COL_MAJOR;
template <class T>
using Z = std::complex<real_t<T>>;
}  // namespace

template <class T>
index_t potrf(Uplo uplo, index_t n, T* a, index_t lda) {
  detail::check_int_range("potrf", n);
  const char u = uplo_char(uplo);
  lapack_int info;
  if constexpr (std::is_same_v<T, float>) info = LAPACKE_spotrf(CM, u, n, a, lda);
  else if constexpr (std::is_same_v<T, double>) info = LAPACKE_dpotrf(CM, u, n, a, lda);
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>) info = LAPACKE_cpotrf(CM, u, n, vendor(a), lda);
  else info = LAPACKE_zpotrf(CM, u, n, vendor(a), lda);
  return checked("potrf", info);
}

template <class T>
index_t geqrf(index_t m, index_t n, T* a, index_t lda, T* tau) {
  lapack_int info;
  if constexpr (std::is_same_v<T, float>) info = LAPACKE_sgeqrf(CM, m, n, a, lda, tau);
  else if constexpr (std::is_same_v<T, double>) info = LAPACKE_dgeqrf(CM, m, n, a, lda, tau);
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>) info = LAPACKE_cgeqrf(CM, m, n, vendor(a), lda, vendor(tau));
  else info = LAPACKE_zgeqrf(CM, m, n, vendor(a), lda, vendor(tau));
  return checked("geqrf", info);
}

template <class T>
index_t larft(index_t n, index_t k, const T* v, index_t ldv, const T* tau, T* t, index_t ldt) {
  lapack_int info;
  if constexpr (std::is_same_v<T, float>) info = LAPACKE_slarft(CM, 'F', 'C', n, k, v, ldv, tau, t, ldt);
  else if constexpr (std::is_same_v<T, double>) info = LAPACKE_dlarft(CM, 'F', 'C', n, k, v, ldv, tau, t, ldt);
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>)
    info = LAPACKE_clarft(CM, 'F', 'C', n, k, vendor(v), ldv, vendor(tau), vendor(t), ldt);
  else info = LAPACKE_zlarft(CM, 'F', 'C', n, k, vendor(v), ldv, vendor(tau), vendor(t), ldt);
  return checked("larft", info);
}

template <class T>
index_t orgqr(index_t m, index_t n, index_t k, T* a, index_t lda, const T* tau) {
  lapack_int info;
  if constexpr (std::is_same_v<T, float>) info = LAPACKE_sorgqr(CM, m, n, k, a, lda, tau);
  else if constexpr (std::is_same_v<T, double>) info = LAPACKE_dorgqr(CM, m, n, k, a, lda, tau);
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>) info = LAPACKE_cungqr(CM, m, n, k, vendor(a), lda, vendor(tau));
  else info = LAPACKE_zungqr(CM, m, n, k, vendor(a), lda, vendor(tau));
  return checked("orgqr", info);
}

template <class T>
index_t syevd(Job job, Uplo uplo, index_t n, T* a, index_t lda, real_t<T>* w) {
  detail::check_int_range("syevd", n);
  const char j = job_char(job), u = uplo_char(uplo);
  lapack_int info;
  if constexpr (std::is_same_v<T, float>) info = LAPACKE_ssyevd(CM, j, u, n, a, lda, w);
  else if constexpr (std::is_same_v<T, double>) info = LAPACKE_dsyevd(CM, j, u, n, a, lda, w);
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>) info = LAPACKE_cheevd(CM, j, u, n, vendor(a), lda, w);
  else info = LAPACKE_zheevd(CM, j, u, n, vendor(a), lda, w);
  return checked("syevd", info);
}

template <class T>
index_t syevd_2stage(Job job, Uplo uplo, index_t n, T* a, index_t lda, real_t<T>* w) {
  if (job != Job::ValuesOnly)
    throw NotImplemented("syevd_2stage: LAPACK's two-stage drivers compute eigenvalues only (JOBZ = 'N')");
  detail::check_int_range("syevd_2stage", n);
  const char j = job_char(job), u = uplo_char(uplo);
  lapack_int info;
  if constexpr (std::is_same_v<T, float>) info = LAPACKE_ssyevd_2stage(CM, j, u, n, a, lda, w);
  else if constexpr (std::is_same_v<T, double>) info = LAPACKE_dsyevd_2stage(CM, j, u, n, a, lda, w);
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>) info = LAPACKE_cheevd_2stage(CM, j, u, n, vendor(a), lda, w);
  else info = LAPACKE_zheevd_2stage(CM, j, u, n, vendor(a), lda, w);
  return checked("syevd_2stage", info);
}

template <class T>
index_t syevr(Job job, const Range& range, Uplo uplo, index_t n, T* a, index_t lda, index_t& m, real_t<T>* w, T* z,
              index_t ldz) {
  detail::check_int_range("syevr", n);
  using R = real_t<T>;
  const auto r = detail::lapack_range(range, n);
  const char j = job_char(job), u = uplo_char(uplo);
  std::vector<lapack_int> isuppz(2 * (n > 0 ? n : 1));
  lapack_int found = 0, info;
  const R vl = R(r.vl), vu = R(r.vu), tol = 0;
  if constexpr (std::is_same_v<T, float>)
    info = LAPACKE_ssyevr(CM, j, r.range, u, n, a, lda, vl, vu, r.il, r.iu, tol, &found, w, z, ldz, isuppz.data());
  else if constexpr (std::is_same_v<T, double>)
    info = LAPACKE_dsyevr(CM, j, r.range, u, n, a, lda, vl, vu, r.il, r.iu, tol, &found, w, z, ldz, isuppz.data());
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>)
    info = LAPACKE_cheevr(CM, j, r.range, u, n, vendor(a), lda, vl, vu, r.il, r.iu, tol, &found, w, vendor(z), ldz,
                          isuppz.data());
  else
    info = LAPACKE_zheevr(CM, j, r.range, u, n, vendor(a), lda, vl, vu, r.il, r.iu, tol, &found, w, vendor(z), ldz,
                          isuppz.data());
  m = found;
  return checked("syevr", info);
}

template <class T>
index_t syevx(Job job, const Range& range, Uplo uplo, index_t n, T* a, index_t lda, index_t& m, real_t<T>* w, T* z,
              index_t ldz) {
  detail::check_int_range("syevx", n);
  using R = real_t<T>;
  const auto r = detail::lapack_range(range, n);
  const char j = job_char(job), u = uplo_char(uplo);
  std::vector<lapack_int> ifail(n > 0 ? n : 1);
  lapack_int found = 0, info;
  const R vl = R(r.vl), vu = R(r.vu), tol = detail::accurate_abstol<R>();
  if constexpr (std::is_same_v<T, float>)
    info = LAPACKE_ssyevx(CM, j, r.range, u, n, a, lda, vl, vu, r.il, r.iu, tol, &found, w, z, ldz, ifail.data());
  else if constexpr (std::is_same_v<T, double>)
    info = LAPACKE_dsyevx(CM, j, r.range, u, n, a, lda, vl, vu, r.il, r.iu, tol, &found, w, z, ldz, ifail.data());
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>)
    info = LAPACKE_cheevx(CM, j, r.range, u, n, vendor(a), lda, vl, vu, r.il, r.iu, tol, &found, w, vendor(z), ldz,
                          ifail.data());
  else
    info = LAPACKE_zheevx(CM, j, r.range, u, n, vendor(a), lda, vl, vu, r.il, r.iu, tol, &found, w, vendor(z), ldz,
                          ifail.data());
  m = found;
  return checked("syevx", info);
}

template <class T>
index_t sygvd(GeneralizedType type, Job job, Uplo uplo, index_t n, T* a, index_t lda, T* b, index_t ldb,
              real_t<T>* w) {
  detail::check_int_range("sygvd", n);
  const int it = static_cast<int>(type);
  const char j = job_char(job), u = uplo_char(uplo);
  lapack_int info;
  if constexpr (std::is_same_v<T, float>) info = LAPACKE_ssygvd(CM, it, j, u, n, a, lda, b, ldb, w);
  else if constexpr (std::is_same_v<T, double>) info = LAPACKE_dsygvd(CM, it, j, u, n, a, lda, b, ldb, w);
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>)
    info = LAPACKE_chegvd(CM, it, j, u, n, vendor(a), lda, vendor(b), ldb, w);
  else info = LAPACKE_zhegvd(CM, it, j, u, n, vendor(a), lda, vendor(b), ldb, w);
  return checked("sygvd", info);
}

template <class T>
index_t sygvx(GeneralizedType type, Job job, const Range& range, Uplo uplo, index_t n, T* a, index_t lda, T* b,
              index_t ldb, index_t& m, real_t<T>* w, T* z, index_t ldz) {
  detail::check_int_range("sygvx", n);
  using R = real_t<T>;
  const int it = static_cast<int>(type);
  const auto r = detail::lapack_range(range, n);
  const char j = job_char(job), u = uplo_char(uplo);
  std::vector<lapack_int> ifail(n > 0 ? n : 1);
  lapack_int found = 0, info;
  const R vl = R(r.vl), vu = R(r.vu), tol = detail::accurate_abstol<R>();
  if constexpr (std::is_same_v<T, float>)
    info = LAPACKE_ssygvx(CM, it, j, r.range, u, n, a, lda, b, ldb, vl, vu, r.il, r.iu, tol, &found, w, z, ldz,
                          ifail.data());
  else if constexpr (std::is_same_v<T, double>)
    info = LAPACKE_dsygvx(CM, it, j, r.range, u, n, a, lda, b, ldb, vl, vu, r.il, r.iu, tol, &found, w, z, ldz,
                          ifail.data());
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>)
    info = LAPACKE_chegvx(CM, it, j, r.range, u, n, vendor(a), lda, vendor(b), ldb, vl, vu, r.il, r.iu, tol, &found,
                          w, vendor(z), ldz, ifail.data());
  else
    info = LAPACKE_zhegvx(CM, it, j, r.range, u, n, vendor(a), lda, vendor(b), ldb, vl, vu, r.il, r.iu, tol, &found,
                          w, vendor(z), ldz, ifail.data());
  m = found;
  return checked("sygvx", info);
}

template <class R>
index_t stedc(Job job, index_t n, R* d, R* e, R* z, index_t ldz) {
  detail::check_int_range("stedc", n);
  const char compz = job == Job::Vectors ? 'I' : 'N';
  lapack_int info;
  if constexpr (std::is_same_v<R, float>) info = LAPACKE_sstedc(CM, compz, n, d, e, z, ldz);
  else info = LAPACKE_dstedc(CM, compz, n, d, e, z, ldz);
  return checked("stedc", info);
}

template <class R>
index_t steqr(index_t n, R* d, R* e, R* z, index_t ldz) {
  detail::check_int_range("steqr", n);
  lapack_int info;
  if constexpr (std::is_same_v<R, float>) info = LAPACKE_ssteqr(CM, 'I', n, d, e, z, ldz);
  else info = LAPACKE_dsteqr(CM, 'I', n, d, e, z, ldz);
  return checked("steqr", info);
}

template <class R>
index_t laed4(index_t k, index_t i, const R* d, const R* z, R* delta, R rho, R& root) {
  detail::check_int_range("laed4", k);
  const int kk = static_cast<int>(k), ii = static_cast<int>(i + 1);
  int info = 0;
  if constexpr (std::is_same_v<R, float>) slaed4_(&kk, &ii, d, z, delta, &rho, &root, &info);
  else dlaed4_(&kk, &ii, d, z, delta, &rho, &root, &info);
  return checked("laed4", info);
}

template <class R>
index_t stebz_stein(Job job, const Range& range, index_t n, const R* d, const R* e, index_t& m, R* w, R* z,
                    index_t ldz) {
  detail::check_int_range("stebz", n);
  const auto r = detail::lapack_range(range, n);
  const R tol = detail::accurate_abstol<R>();
  std::vector<lapack_int> iblock(n > 0 ? n : 1), isplit(n > 0 ? n : 1);
  lapack_int found = 0, nsplit = 0, info;
  // 'B': eigenvalues ordered by block, as stein wants them.
  if constexpr (std::is_same_v<R, float>)
    info = LAPACKE_sstebz(r.range, 'B', n, R(r.vl), R(r.vu), r.il, r.iu, tol, d, e, &found, &nsplit, w,
                          iblock.data(), isplit.data());
  else
    info = LAPACKE_dstebz(r.range, 'B', n, R(r.vl), R(r.vu), r.il, r.iu, tol, d, e, &found, &nsplit, w,
                          iblock.data(), isplit.data());
  m = found;
  if (checked("stebz", info) != 0) return info;
  if (job == Job::Vectors && found > 0) {
    std::vector<lapack_int> ifail(found);
    if constexpr (std::is_same_v<R, float>)
      info = LAPACKE_sstein(CM, n, d, e, found, w, iblock.data(), isplit.data(), z, ldz, ifail.data());
    else
      info = LAPACKE_dstein(CM, n, d, e, found, w, iblock.data(), isplit.data(), z, ldz, ifail.data());
    if (checked("stein", info) != 0) return info;
  }
  // Order 'B' groups eigenvalues by split block; keig promises ascending order.
  std::vector<index_t> order(found);
  for (index_t i = 0; i < found; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](index_t x, index_t y) { return w[x] < w[y]; });
  std::vector<R> ws(w, w + found);
  for (index_t i = 0; i < found; ++i) w[i] = ws[order[i]];
  if (job == Job::Vectors && found > 1) {
    std::vector<R> zs(static_cast<size_t>(n) * found);
    for (index_t j = 0; j < found; ++j)
      for (index_t i = 0; i < n; ++i) zs[j * n + i] = z[order[j] * ldz + i];
    for (index_t j = 0; j < found; ++j)
      for (index_t i = 0; i < n; ++i) z[j * ldz + i] = zs[j * n + i];
  }
  return 0;
}

template <class R>
index_t stemr(Job job, const Range& range, index_t n, R* d, R* e, index_t& m, R* w, R* z, index_t ldz) {
  detail::check_int_range("stemr", n);
  const auto r = detail::lapack_range(range, n);
  const char j = job_char(job);
  std::vector<lapack_int> isuppz(2 * (n > 0 ? n : 1));
  lapack_logical tryrac = 1;  // try for high relative accuracy where the matrix allows it
  lapack_int found = 0, info;
  // stemr wants e of length n (the last entry is workspace).
  std::vector<R> e_ext(n > 0 ? n : 1, R(0));
  for (index_t i = 0; i + 1 < n; ++i) e_ext[i] = e[i];
  const lapack_int nzc = n > 0 ? n : 1;
  if constexpr (std::is_same_v<R, float>)
    info = LAPACKE_sstemr(CM, j, r.range, n, d, e_ext.data(), R(r.vl), R(r.vu), r.il, r.iu, &found, w, z, ldz, nzc,
                          isuppz.data(), &tryrac);
  else
    info = LAPACKE_dstemr(CM, j, r.range, n, d, e_ext.data(), R(r.vl), R(r.vu), r.il, r.iu, &found, w, z, ldz, nzc,
                          isuppz.data(), &tryrac);
  m = found;
  return checked("stemr", info);
}

#define KEIG_INSTANTIATE_HOST_LAPACK(T)                                                                           \
  template index_t potrf<T>(Uplo, index_t, T*, index_t);                                                         \
  template index_t geqrf<T>(index_t, index_t, T*, index_t, T*);                                                  \
  template index_t larft<T>(index_t, index_t, const T*, index_t, const T*, T*, index_t);                          \
  template index_t orgqr<T>(index_t, index_t, index_t, T*, index_t, const T*);                                   \
  template index_t syevd<T>(Job, Uplo, index_t, T*, index_t, real_t<T>*);                                        \
  template index_t syevd_2stage<T>(Job, Uplo, index_t, T*, index_t, real_t<T>*);                                 \
  template index_t syevr<T>(Job, const Range&, Uplo, index_t, T*, index_t, index_t&, real_t<T>*, T*, index_t);    \
  template index_t syevx<T>(Job, const Range&, Uplo, index_t, T*, index_t, index_t&, real_t<T>*, T*, index_t);    \
  template index_t sygvd<T>(GeneralizedType, Job, Uplo, index_t, T*, index_t, T*, index_t, real_t<T>*);          \
  template index_t sygvx<T>(GeneralizedType, Job, const Range&, Uplo, index_t, T*, index_t, T*, index_t, index_t&, \
                            real_t<T>*, T*, index_t);
KEIG_INSTANTIATE_HOST_LAPACK(float)
KEIG_INSTANTIATE_HOST_LAPACK(double)
KEIG_INSTANTIATE_HOST_LAPACK(Kokkos::complex<float>)
KEIG_INSTANTIATE_HOST_LAPACK(Kokkos::complex<double>)

#define KEIG_INSTANTIATE_HOST_TRIDIAGONAL(R)                                                                     \
  template index_t stedc<R>(Job, index_t, R*, R*, R*, index_t);                                                 \
  template index_t stebz_stein<R>(Job, const Range&, index_t, const R*, const R*, index_t&, R*, R*, index_t);    \
  template index_t stemr<R>(Job, const Range&, index_t, R*, R*, index_t&, R*, R*, index_t);                    \
  template index_t steqr<R>(index_t, R*, R*, R*, index_t);                                                      \
  template index_t laed4<R>(index_t, index_t, const R*, const R*, R*, R, R&);
KEIG_INSTANTIATE_HOST_TRIDIAGONAL(float)
KEIG_INSTANTIATE_HOST_TRIDIAGONAL(double)

}  // namespace keig::backends::host
