// Accuracy checks of DESIGN.md's contract, computed on the host in double
// precision (Kokkos Kernels gemm), scaled by the unit roundoff eps of the
// scalar type T the solver ran in:
//   residual       ||A Z - Z diag(w)||_F / (||A||_F n eps)
//   orthogonality  ||Z^H Z - I||_F / (n eps)
//   generalized    ||A Z - B Z diag(w)||_F / (||A||_F ||Z||_F n eps),  ||Z^H B Z - I||_F / (n eps)
//   eigenvalues    max_i |w_i - w_ref_i| / (||A||_F n eps)
//   generalized    max_i |w_i - w_ref_i| / ((||A||_F + max|w_ref| ||B||_F) ||B^-1||_2 n eps)
//                  (perturbation theory of A x = lambda B x: errors scale with ||B^-1||)
// A and B are full Hermitian host matrices; Z holds m eigenvector columns.
#pragma once

#include <vector>

#include "keig/views/matrix.hpp"

namespace keig {

template <class T>
double scaled_residual(const HostMatrix<T>& a, const HostVector<real_t<T>>& w, const HostMatrix<T>& z, index_t m);

template <class T>
double scaled_orthogonality(const HostMatrix<T>& z, index_t m);

template <class T>
double scaled_residual_generalized(const HostMatrix<T>& a, const HostMatrix<T>& b, const HostVector<real_t<T>>& w,
                                   const HostMatrix<T>& z, index_t m);

template <class T>
double scaled_b_orthogonality(const HostMatrix<T>& b, const HostMatrix<T>& z, index_t m);

template <class T>
double scaled_eigenvalue_error(const HostMatrix<T>& a, const HostVector<real_t<T>>& w,
                               const std::vector<real_t<T>>& reference, index_t m);

template <class T>
double scaled_eigenvalue_error_generalized(const HostMatrix<T>& a, const HostMatrix<T>& b,
                                           const HostVector<real_t<T>>& w, const std::vector<real_t<T>>& reference,
                                           index_t m);

template <class T>
double frobenius_norm(const HostMatrix<T>& a);

// True when w(0..m-1) is in ascending order.
template <class R>
bool is_ascending(const HostVector<R>& w, index_t m);

}  // namespace keig
