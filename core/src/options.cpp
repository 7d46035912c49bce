#include "keig/options.hpp"

namespace keig {

const char* to_string(Method m) {
  switch (m) {
    case Method::Auto: return "auto";
    case Method::Vendor: return "vendor";
    case Method::OneStage: return "one-stage";
    case Method::TwoStage: return "two-stage";
  }
  return "?";
}
const char* to_string(Uplo u) { return u == Uplo::Lower ? "lower" : "upper"; }
const char* to_string(TridiagonalSolver s) {
  switch (s) {
    case TridiagonalSolver::Auto: return "auto";
    case TridiagonalSolver::DivideAndConquer: return "divide-and-conquer";
    case TridiagonalSolver::BisectionInverseIteration: return "bisection-inverse-iteration";
    case TridiagonalSolver::MRRR: return "mrrr";
  }
  return "?";
}
const char* to_string(Range::Kind k) {
  switch (k) {
    case Range::Kind::All: return "all";
    case Range::Kind::Index: return "index";
    case Range::Kind::Value: return "value";
  }
  return "?";
}

}  // namespace keig
