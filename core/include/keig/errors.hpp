// Typed errors. Every message names the argument or routine and the value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace keig {

// Base of every error keig throws.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A bad argument: sizes, ranges, options. `argument()` names it.
class InvalidArgument : public Error {
 public:
  InvalidArgument(std::string argument, const std::string& message)
      : Error("keig: invalid argument '" + argument + "': " + message), argument_(std::move(argument)) {}
  const std::string& argument() const noexcept { return argument_; }

 private:
  std::string argument_;
};

// NaN or Inf in an input matrix; the first offending entry is reported.
class NonFiniteInput : public InvalidArgument {
 public:
  NonFiniteInput(const std::string& argument, std::int64_t row, std::int64_t col)
      : InvalidArgument(argument, "entry (" + std::to_string(row) + ", " + std::to_string(col) +
                                      ") of the referenced triangle is NaN or Inf"),
        row_(row), col_(col) {}
  std::int64_t row() const noexcept { return row_; }
  std::int64_t col() const noexcept { return col_; }

 private:
  std::int64_t row_, col_;
};

// B (generalized problems) is not positive definite: the leading minor of
// order `minor()` (1-based, as LAPACK's info) is not positive.
class NotPositiveDefinite : public Error {
 public:
  NotPositiveDefinite(const std::string& argument, std::int64_t minor)
      : Error("keig: '" + argument + "' is not positive definite: its leading minor of order " +
              std::to_string(minor) + " is not positive"),
        minor_(minor) {}
  std::int64_t minor() const noexcept { return minor_; }

 private:
  std::int64_t minor_;
};

// A device or host allocation failed; `bytes()` is what was requested.
class OutOfMemory : public Error {
 public:
  OutOfMemory(const std::string& label, std::size_t bytes, const std::string& space)
      : Error("keig: out of memory in " + space + " allocating " + std::to_string(bytes) + " bytes for '" +
              label + "'"),
        bytes_(bytes) {}
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  std::size_t bytes_;
};

// An iterative stage did not converge (LAPACK/cuSOLVER info > 0 for that reason).
class ConvergenceFailure : public Error {
 public:
  ConvergenceFailure(const std::string& routine, std::int64_t info)
      : Error("keig: " + routine + " failed to converge (info = " + std::to_string(info) + ")"), info_(info) {}
  std::int64_t info() const noexcept { return info_; }

 private:
  std::int64_t info_;
};

// A vendor library (BLAS, LAPACK, cuBLAS, cuSOLVER, CUDA runtime) reported an
// error keig does not translate into one of the types above.
class BackendError : public Error {
 public:
  BackendError(const std::string& routine, std::int64_t status, const std::string& detail = "")
      : Error("keig: " + routine + " returned " + std::to_string(status) + (detail.empty() ? "" : " (" + detail + ")")),
        status_(status) {}
  std::int64_t status() const noexcept { return status_; }

 private:
  std::int64_t status_;
};

// A path that exists in the API but is not implemented yet.
class NotImplemented : public Error {
 public:
  explicit NotImplemented(const std::string& what) : Error("keig: not implemented: " + what) {}
};

}  // namespace keig
