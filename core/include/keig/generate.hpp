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

// IC-NMA-like generalized pair (internal-coordinate normal-mode analysis of
// macromolecules, seed 002 §6.1: A X = B X Lambda with A the Hessian and B the
// kinetic matrix, both dense SPD; only the smallest ~1% of the pairs are
// wanted). A = Q diag(lambda) Q^H with a random unitary Q and
// lambda_i = 1e-3 (1 + t) 10^(5 t^3), t = i / (n - 1): clustered near the
// smallest eigenvalue 1e-3 (the lowest 20% within a factor 1.35 of it) with a
// long upper tail to 200 (ratio 2e5). B = J^H M J + delta I with masses M
// (diagonal, uniform in [1, 16]), a dense Gaussian J / sqrt(n) and delta =
// 1e-3 ||J^H M J||_2 (power-iteration estimate). Both are built in double
// precision (complex<double>) and rounded to T. The generalized eigenvalues
// are not known in closed form: `eigenvalues` is empty. Cost: one QR and
// two n x n x n gemms (host BLAS); peak memory about 3 n^2 double-precision
// entries plus the result.
template <class T>
TestPair<T> generate_icnma_pair(index_t n, std::uint64_t seed = 1);

// The eigenvalues of the IC-NMA-like A above, ascending (for building the
// same kind of pair elsewhere, e.g. on a GPU at sizes where host BLAS is slow).
std::vector<double> icnma_hessian_spectrum(index_t n);

// The known spectrum of a kind (ascending); empty for Random and Wilkinson.
template <class T>
std::vector<real_t<T>> known_spectrum(MatrixKind kind, index_t n, std::uint64_t seed = 1);

}  // namespace keig
