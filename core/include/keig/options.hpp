// Per-call options and the result record. No global state: everything a call
// needs travels in Options, everything it reports comes back in Result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace keig {

enum class Method {
  Auto,      // keig picks the method measured fastest for the backend, scalar type, job and n (README "Status")
  Vendor,    // LAPACK ?syevd/?syevr/?sygvd on host spaces, cuSOLVER on CUDA: the reference and the peer
  OneStage,  // keig: dense -> tridiagonal (sytrd with keig's symv)
  TwoStage,  // keig: dense -> band -> tridiagonal (sy2sb, sb2st)
};

enum class Uplo { Lower, Upper };

enum class TridiagonalSolver {
  // Auto: all pairs with vectors by divide and conquer (keig's stedc on
  // every space), subsets with vectors by bisection + inverse iteration
  // (orthogonal within clusters), eigenvalues only by MRRR's dqds; on GPUs
  // keig's bisection where it applies.
  Auto,
  DivideAndConquer,           // keig's stedc with vectors, ?stedc for eigenvalues only
  BisectionInverseIteration,  // ?stebz + ?stein
  MRRR,                       // ?stemr
};

// Which eigenpairs: all, the ones with 0-based indices il..iu (inclusive, in
// ascending order), or the ones with eigenvalues in the half-open (vl, vu].
struct Range {
  enum class Kind { All, Index, Value };
  Kind kind = Kind::All;
  std::int64_t il = 0, iu = -1;
  double vl = 0, vu = 0;

  static Range all() { return {}; }
  static Range index(std::int64_t first, std::int64_t last) {
    Range r;
    r.kind = Kind::Index;
    r.il = first;
    r.iu = last;
    return r;
  }
  static Range value(double lower_exclusive, double upper_inclusive) {
    Range r;
    r.kind = Kind::Value;
    r.vl = lower_exclusive;
    r.vu = upper_inclusive;
    return r;
  }
};

// Generalized problem type, as LAPACK's itype.
enum class GeneralizedType {
  AxLBx = 1,  // A x = lambda B x
  ABxLx = 2,  // A B x = lambda x
  BAxLx = 3,  // B A x = lambda x
};

struct Options {
  Method method = Method::Auto;
  Uplo uplo = Uplo::Lower;  // which triangle of A (and B) is referenced
  Range range = Range::all();
  TridiagonalSolver tridiagonal_solver = TridiagonalSolver::Auto;
  GeneralizedType generalized_type = GeneralizedType::AxLBx;
  int block_size = 0;   // panel width nb of the reductions; 0 = keig's default
  int band_width = 0;   // half-bandwidth b of two-stage; 0 = keig's default
  // Generalized problems: B already holds its Cholesky factor in the uplo
  // triangle (B = L L^H or U^H U, as ?potrf leaves it), e.g. from an earlier
  // call's factorization in an SCF loop: keig skips potrf (seed 004 eq. 2).
  bool b_factored = false;
  bool check_finite = true;  // reject NaN/Inf in the referenced triangle(s)
  bool stage_times = true;   // fence the instance at stage boundaries to time stages
  // Caller-provided workspace for keig's own pipelines (e.g. one buffer for
  // every solve of an SCF loop): memory of the execution space's memory
  // space, at least keig::workspace_bytes<T>(space, n, options, vectors,
  // generalized) bytes, not otherwise in use during the call. The call then
  // allocates no workspace of its own. Method::Vendor does not use it.
  void* workspace = nullptr;
  std::size_t workspace_size = 0;  // bytes at `workspace`
};

struct StageReport {
  std::string name;      // e.g. "keig::vendor::syevd"
  double seconds = 0;    // wall time of the stage (0 when Options::stage_times is off)
  double flops = 0;      // model flop count of the stage (0 for data movement)
};

struct Result {
  std::int64_t eigenvalues_found = 0;  // m: entries of w (and columns of Z) that hold results
  std::string method;                  // the method that ran, e.g. "vendor:cusolverDnXsyevd"
  std::string execution_space;         // e.g. "Cuda", "OpenMP"
  std::vector<StageReport> stages;
  double seconds = 0;                  // whole call, host wall clock (includes a final fence)
  // keig's own pipelines take every stage's device workspace from one piece
  // set up before the first stage (Options::workspace, else one allocation
  // of their own), of workspace_bytes usable bytes; a piece whose size was
  // not known then (a value range's eigenvectors) and did not fit was
  // allocated on its own during the call, counted in workspace_fallbacks.
  std::size_t workspace_bytes = 0;
  int workspace_fallbacks = 0;

  double flops() const {
    double f = 0;
    for (const auto& s : stages) f += s.flops;
    return f;
  }
};

const char* to_string(Method);
const char* to_string(Uplo);
const char* to_string(TridiagonalSolver);
const char* to_string(Range::Kind);

}  // namespace keig
