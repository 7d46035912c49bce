// Host LAPACK reference eigenvalues for the tests.
#include "keig/backends/host.hpp"
#include "support.hpp"

namespace keig::test {

template <class T>
std::vector<real_t<T>> reference_eigenvalues(const HostMatrix<T>& a) {
  const index_t n = a.extent(0);
  HostMatrix<T> work = copy_of(a);
  std::vector<real_t<T>> w(n);
  if (n > 0 && backends::host::syevd<T>(backends::Job::ValuesOnly, Uplo::Lower, n, work.data(), n, w.data()) != 0)
    throw Error("reference ?syevd failed");
  return w;
}

template <class T>
std::vector<real_t<T>> reference_eigenvalues(const HostMatrix<T>& a, const HostMatrix<T>& b, GeneralizedType type) {
  const index_t n = a.extent(0);
  HostMatrix<T> aw = copy_of(a), bw = copy_of(b);
  std::vector<real_t<T>> w(n);
  if (n > 0 && backends::host::sygvd<T>(type, backends::Job::ValuesOnly, Uplo::Lower, n, aw.data(), n, bw.data(), n,
                                        w.data()) != 0)
    throw Error("reference ?sygvd failed");
  return w;
}

#define KEIG_TEST_REFERENCE(T)                                                        \
  template std::vector<real_t<T>> reference_eigenvalues<T>(const HostMatrix<T>&); \
  template std::vector<real_t<T>> reference_eigenvalues<T>(const HostMatrix<T>&, const HostMatrix<T>&, GeneralizedType);
KEIG_TEST_REFERENCE(float)
KEIG_TEST_REFERENCE(double)
KEIG_TEST_REFERENCE(Kokkos::complex<float>)
KEIG_TEST_REFERENCE(Kokkos::complex<double>)

}  // namespace keig::test
