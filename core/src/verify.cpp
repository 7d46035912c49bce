// Accuracy checks (see keig/verify.hpp): products in double precision through
// Kokkos Kernels' gemm on the host.
#include "keig/verify.hpp"

#include <KokkosBlas3_gemm.hpp>
#include <algorithm>
#include <cmath>

#include "keig/backends/host.hpp"
#include "keig/errors.hpp"

namespace keig {

namespace {

template <class T>
using promoted_t = std::conditional_t<is_complex_v<T>, Kokkos::complex<double>, double>;

// Columns 0..cols-1 of a, converted to double precision.
template <class T>
HostMatrix<promoted_t<T>> promote(const HostMatrix<T>& a, index_t cols) {
  auto p = host_matrix_for_copy<promoted_t<T>>("keig::verify::promoted", a.extent(0), cols);
  for (index_t j = 0; j < cols; ++j)
    for (index_t i = 0; i < static_cast<index_t>(a.extent(0)); ++i) p(i, j) = promoted_t<T>(a(i, j));
  return p;
}

template <class P>
double frobenius(const HostMatrix<P>& a) {
  double s = 0;
  for (size_t j = 0; j < a.extent(1); ++j)
    for (size_t i = 0; i < a.extent(0); ++i) s += abs_squared(a(i, j));
  return std::sqrt(s);
}

template <class P>
HostMatrix<P> product(const char* ta, const HostMatrix<P>& a, const HostMatrix<P>& b) {
  const index_t rows = ta[0] == 'N' ? a.extent(0) : a.extent(1);
  HostMatrix<P> c("keig::verify::product", rows, b.extent(1));
  if (rows > 0 && b.extent(1) > 0) KokkosBlas::gemm(ta, "N", P(1), a, b, P(0), c);
  return c;
}

template <class T>
void check_shapes(const HostMatrix<T>& z, index_t m, const char* what) {
  if (m < 0 || m > static_cast<index_t>(z.extent(1)))
    throw InvalidArgument("m", std::string(what) + ": m = " + std::to_string(m) + " exceeds the columns of Z");
}

template <class T>
double unit(index_t n) {
  return double(n > 0 ? n : 1) * double(unit_roundoff<T>());
}

}  // namespace

template <class T>
double frobenius_norm(const HostMatrix<T>& a) {
  return frobenius(promote(a, a.extent(1)));
}

template <class T>
double scaled_residual(const HostMatrix<T>& a, const HostVector<real_t<T>>& w, const HostMatrix<T>& z, index_t m) {
  check_shapes(z, m, "scaled_residual");
  const index_t n = a.extent(0);
  if (n == 0 || m == 0) return 0;
  auto ap = promote(a, n);
  auto zp = promote(z, m);
  auto r = product("N", ap, zp);
  for (index_t j = 0; j < m; ++j)
    for (index_t i = 0; i < n; ++i) r(i, j) -= zp(i, j) * double(w(j));
  const double norm_a = frobenius(ap);
  return frobenius(r) / (std::max(norm_a, 1e-300) * unit<T>(n));
}

template <class T>
double scaled_orthogonality(const HostMatrix<T>& z, index_t m) {
  check_shapes(z, m, "scaled_orthogonality");
  const index_t n = z.extent(0);
  if (n == 0 || m == 0) return 0;
  auto zp = promote(z, m);
  auto g = product("C", zp, zp);
  for (index_t i = 0; i < m; ++i) g(i, i) -= 1.0;
  return frobenius(g) / unit<T>(n);
}

template <class T>
double scaled_residual_generalized(const HostMatrix<T>& a, const HostMatrix<T>& b, const HostVector<real_t<T>>& w,
                                   const HostMatrix<T>& z, index_t m) {
  check_shapes(z, m, "scaled_residual_generalized");
  const index_t n = a.extent(0);
  if (n == 0 || m == 0) return 0;
  auto ap = promote(a, n);
  auto bp = promote(b, n);
  auto zp = promote(z, m);
  auto az = product("N", ap, zp);
  auto bz = product("N", bp, zp);
  for (index_t j = 0; j < m; ++j)
    for (index_t i = 0; i < n; ++i) az(i, j) -= bz(i, j) * double(w(j));
  return frobenius(az) / (std::max(frobenius(ap) * frobenius(zp), 1e-300) * unit<T>(n));
}

template <class T>
double scaled_b_orthogonality(const HostMatrix<T>& b, const HostMatrix<T>& z, index_t m) {
  check_shapes(z, m, "scaled_b_orthogonality");
  const index_t n = z.extent(0);
  if (n == 0 || m == 0) return 0;
  auto bp = promote(b, n);
  auto zp = promote(z, m);
  auto bz = product("N", bp, zp);
  auto g = product("C", zp, bz);
  for (index_t i = 0; i < m; ++i) g(i, i) -= 1.0;
  return frobenius(g) / unit<T>(n);
}

template <class T>
double scaled_eigenvalue_error(const HostMatrix<T>& a, const HostVector<real_t<T>>& w,
                               const std::vector<real_t<T>>& reference, index_t m) {
  if (static_cast<index_t>(reference.size()) < m || static_cast<index_t>(w.extent(0)) < m)
    throw InvalidArgument("reference", "fewer than m = " + std::to_string(m) + " eigenvalues");
  const index_t n = a.extent(0);
  double err = 0;
  for (index_t i = 0; i < m; ++i) err = std::max(err, std::abs(double(w(i)) - double(reference[i])));
  return err / (std::max(frobenius_norm(a), 1e-300) * unit<T>(n));
}

template <class T>
double scaled_eigenvalue_error_generalized(const HostMatrix<T>& a, const HostMatrix<T>& b,
                                           const HostVector<real_t<T>>& w, const std::vector<real_t<T>>& reference,
                                           index_t m) {
  if (static_cast<index_t>(reference.size()) < m || static_cast<index_t>(w.extent(0)) < m)
    throw InvalidArgument("reference", "fewer than m = " + std::to_string(m) + " eigenvalues");
  const index_t n = a.extent(0);
  if (n == 0 || m == 0) return 0;
  // ||B^-1||_2 = 1 / lambda_min(B), in double precision.
  auto bp = promote(b, n);
  std::vector<double> b_eigenvalues(n);
  if (backends::host::syevd<promoted_t<T>>(backends::Job::ValuesOnly, Uplo::Lower, n, bp.data(), n,
                                           b_eigenvalues.data()) != 0)
    throw Error("keig: scaled_eigenvalue_error_generalized: eigenvalues of B did not converge");
  const double b_inverse_norm = 1.0 / std::max(b_eigenvalues[0], 1e-300);
  double err = 0, largest = 0;
  for (index_t i = 0; i < m; ++i) {
    err = std::max(err, std::abs(double(w(i)) - double(reference[i])));
    largest = std::max(largest, std::abs(double(reference[i])));
  }
  const double scale = (frobenius_norm(a) + largest * frobenius_norm(b)) * b_inverse_norm;
  return err / (std::max(scale, 1e-300) * unit<T>(n));
}

template <class R>
bool is_ascending(const HostVector<R>& w, index_t m) {
  for (index_t i = 1; i < m; ++i)
    if (w(i) < w(i - 1)) return false;
  return true;
}

#define KEIG_INSTANTIATE_VERIFY(T)                                                                                  \
  template double frobenius_norm<T>(const HostMatrix<T>&);                                                          \
  template double scaled_residual<T>(const HostMatrix<T>&, const HostVector<real_t<T>>&, const HostMatrix<T>&,      \
                                     index_t);                                                                      \
  template double scaled_orthogonality<T>(const HostMatrix<T>&, index_t);                                           \
  template double scaled_residual_generalized<T>(const HostMatrix<T>&, const HostMatrix<T>&,                        \
                                                 const HostVector<real_t<T>>&, const HostMatrix<T>&, index_t);      \
  template double scaled_b_orthogonality<T>(const HostMatrix<T>&, const HostMatrix<T>&, index_t);                   \
  template double scaled_eigenvalue_error<T>(const HostMatrix<T>&, const HostVector<real_t<T>>&,                    \
                                             const std::vector<real_t<T>>&, index_t);                               \
  template double scaled_eigenvalue_error_generalized<T>(const HostMatrix<T>&, const HostMatrix<T>&,                \
                                                         const HostVector<real_t<T>>&, const std::vector<real_t<T>>&, \
                                                         index_t);
KEIG_INSTANTIATE_VERIFY(float)
KEIG_INSTANTIATE_VERIFY(double)
KEIG_INSTANTIATE_VERIFY(Kokkos::complex<float>)
KEIG_INSTANTIATE_VERIFY(Kokkos::complex<double>)
template bool is_ascending<float>(const HostVector<float>&, index_t);
template bool is_ascending<double>(const HostVector<double>&, index_t);

}  // namespace keig
