// Symmetric tridiagonal eigensolvers (LAPACK on the host; the tridiagonal
// problem is real for every scalar type): divide and conquer (stedc),
// bisection + inverse iteration (stebz + stein), MRRR (stemr).
#pragma once

#include <string>

#include "keig/backends/host.hpp"
#include "keig/errors.hpp"
#include "keig/views/matrix.hpp"

namespace keig::backends {

// Eigenpairs of the tridiagonal (d, e): d has n entries, e n-1 (or more).
// d and e are destroyed. w receives the m wanted eigenvalues in ascending
// order; z (n x >= m) their eigenvectors when job == Vectors. Returns m.
// Auto: divide and conquer for all pairs with vectors; bisection + inverse
// iteration for subsets with vectors (LAPACK ?syevx's method: stein
// re-orthogonalizes the vectors of each cluster; MRRR lost orthogonality on
// the clustered IC-NMA-like spectrum, ||Y^H Y - I|| / (n eps) = 17.7 against
// 0.007 for the 1 % smallest pairs at n = 4000, at the same speed); MRRR for
// eigenvalues only (its dqds is faster than stedc's sterf: 0.12 s vs 0.16 s
// at n = 3000 on 2 cores). Divide and conquer computes all pairs, so a subset
// with it is an invalid argument.
template <class R>
index_t tridiagonal_eigensolver(Job job, const Range& range, TridiagonalSolver solver, const HostVector<R>& d,
                                const HostVector<R>& e, const HostVector<R>& w, const HostMatrix<R>& z) {
  const index_t n = d.extent(0);
  if (static_cast<index_t>(e.extent(0)) < (n > 0 ? n - 1 : 0))
    throw InvalidArgument("e", "needs n - 1 = " + std::to_string(n - 1) + " entries, has " + std::to_string(e.extent(0)));
  if (static_cast<index_t>(w.extent(0)) < n) throw InvalidArgument("w", "needs n = " + std::to_string(n) + " entries");
  if (job == Job::Vectors && static_cast<index_t>(z.extent(0)) != n)
    throw InvalidArgument("Z", "needs n = " + std::to_string(n) + " rows");
  const index_t wanted = range.kind == Range::Kind::Index ? range.iu - range.il + 1 : n;
  if (job == Job::Vectors && static_cast<index_t>(z.extent(1)) < wanted)
    throw InvalidArgument("Z", "needs " + std::to_string(wanted) + " columns for the wanted eigenvectors");
  if (n == 0) return 0;
  const bool all = range.kind == Range::Kind::All;
  if (solver == TridiagonalSolver::Auto)
    solver = job == Job::ValuesOnly ? TridiagonalSolver::MRRR
             : all                  ? TridiagonalSolver::DivideAndConquer
                                    : TridiagonalSolver::BisectionInverseIteration;
  if (solver == TridiagonalSolver::DivideAndConquer && !all)
    throw InvalidArgument("options.tridiagonal_solver", "DivideAndConquer computes all pairs; use Range::all(), MRRR or BisectionInverseIteration for subsets");
  R* zp = job == Job::Vectors ? z.data() : nullptr;
  const index_t ldz = job == Job::Vectors ? leading_dimension(z) : 1;
  index_t m = n, info = 0;
  const char* routine = "stedc";
  switch (solver) {
    case TridiagonalSolver::DivideAndConquer:
      info = host::stedc(job, n, d.data(), e.data(), zp, ldz);
      for (index_t i = 0; i < n; ++i) w(i) = d(i);
      break;
    case TridiagonalSolver::BisectionInverseIteration:
      routine = "stebz/stein";
      info = host::stebz_stein(job, range, n, d.data(), e.data(), m, w.data(), zp, ldz);
      break;
    default:
      routine = "stemr";
      info = host::stemr(job, range, n, d.data(), e.data(), m, w.data(), zp, ldz);
      break;
  }
  if (info > 0) throw ConvergenceFailure(routine, info);
  return m;
}

}  // namespace keig::backends
