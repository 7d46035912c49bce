// Matrix Market reader for symmetric / Hermitian matrices (coordinate or
// array; real, integer or complex). Returns the full matrix (both triangles).
#pragma once

#include <string>

#include "keig/views/matrix.hpp"

namespace keig::examples {

struct MatrixMarketInfo {
  std::string format;    // "coordinate" or "array"
  std::string field;     // "real", "integer" or "complex"
  std::string symmetry;  // "symmetric", "hermitian" or "general"
  index_t n = 0;
  index_t entries = 0;   // stored entries (coordinate format)
};

// Reads the header only (to pick the scalar type before reading the values).
MatrixMarketInfo read_matrix_market_info(const std::string& path);

// Throws keig::InvalidArgument("file", ...) with the line number on malformed
// input, non-square or non-symmetric matrices, or complex data for a real T.
template <class T>
HostMatrix<T> read_matrix_market(const std::string& path);

}  // namespace keig::examples
