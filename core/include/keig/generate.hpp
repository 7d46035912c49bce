// Test problems with known spectra, built on the host (LAPACK), for the test
// suite, the CLI and the benchmarks. Deterministic for a given seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "keig/views/matrix.hpp"

namespace keig {

enum class MatrixKind {
  Random,     // symmetric/Hermitian with N(0,1) entries (spectrum not known in closed form)
  Uniform,    // Q diag(lambda) Q^H, lambda evenly spaced in [-1, 1]
  Clustered,  // three tight clusters (-1, 0.5, 1) of width ~1e-9 n
  Graded,     // lambda_i = 10^(-12 + 12 i/(n-1)): graded from 1e-12 to 1
  Repeated,   // lambda in {-1, 0.5, 2}, each with multiplicity ~n/3
  Wilkinson,  // W_n^+ tridiagonal: diagonal |(n-1)/2 - i|, off-diagonal 1
  Clement,    // tridiagonal, zero diagonal, off-diagonal sqrt(i (n - i)); lambda = -(n-1) + 2k
  Zero,
  Identity,
  Diagonal,   // random diagonal, entries in [-1, 1]
};

MatrixKind parse_matrix_kind(const std::string& name);  // throws InvalidArgument("matrix", ...)
const char* to_string(MatrixKind kind);
std::vector<MatrixKind> all_matrix_kinds();

template <class T>
struct TestMatrix {
  HostMatrix<T> a;                      // full Hermitian matrix (both triangles)
  std::vector<real_t<T>> eigenvalues;   // ascending, exact up to rounding; empty when unknown
};

template <class T>
TestMatrix<T> generate(MatrixKind kind, index_t n, std::uint64_t seed = 1);

// A random unitary (orthogonal) n x n matrix (QR of a Gaussian matrix).
template <class T>
HostMatrix<T> random_unitary(index_t n, std::uint64_t seed);

// Generalized pair (A, B) with B Hermitian positive definite of 2-norm
// condition `b_condition` and the spectrum of A x = lambda B x given by
// `kind` (one of the kinds with known eigenvalues): A = L Q diag(lambda) Q^H L^H, B = L L^H.
template <class T>
struct TestPair {
  HostMatrix<T> a, b;
  std::vector<real_t<T>> eigenvalues;
};
template <class T>
TestPair<T> generate_pair(MatrixKind kind, index_t n, double b_condition = 1e2, std::uint64_t seed = 1);

// The known spectrum of a kind (ascending); empty for Random and Wilkinson.
template <class T>
std::vector<real_t<T>> known_spectrum(MatrixKind kind, index_t n, std::uint64_t seed = 1);

}  // namespace keig
