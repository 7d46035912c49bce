#include "matrix_market.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>

#include "keig/errors.hpp"

namespace keig::examples {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

[[noreturn]] void fail(const std::string& path, index_t line, const std::string& what) {
  throw InvalidArgument("file", path + ":" + std::to_string(line) + ": " + what);
}

struct Reader {
  std::ifstream in;
  std::string path;
  index_t line_no = 0;

  explicit Reader(const std::string& p) : in(p), path(p) {
    if (!in) throw InvalidArgument("file", "cannot open '" + p + "'");
  }
  // Next non-comment, non-empty line.
  bool next(std::string& line) {
    while (std::getline(in, line)) {
      ++line_no;
      if (line.empty() || line[0] == '%') continue;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      return true;
    }
    return false;
  }
};

MatrixMarketInfo parse_header(Reader& r) {
  std::string line;
  if (!std::getline(r.in, line)) fail(r.path, 1, "empty file");
  r.line_no = 1;
  std::istringstream h(line);
  std::string banner, object, format, field, symmetry;
  h >> banner >> object >> format >> field >> symmetry;
  if (banner != "%%MatrixMarket" || lower(object) != "matrix")
    fail(r.path, 1, "not a Matrix Market matrix (header '%%MatrixMarket matrix ...' expected)");
  MatrixMarketInfo info{lower(format), lower(field), lower(symmetry), 0, 0};
  if (info.format != "coordinate" && info.format != "array") fail(r.path, 1, "format must be coordinate or array");
  if (info.field != "real" && info.field != "integer" && info.field != "complex" && info.field != "double")
    fail(r.path, 1, "field '" + info.field + "' not supported (real, integer, complex)");
  if (info.field == "double") info.field = "real";
  if (info.symmetry != "symmetric" && info.symmetry != "hermitian" && info.symmetry != "general")
    fail(r.path, 1, "symmetry '" + info.symmetry + "' not supported (symmetric, hermitian, general)");
  if (!r.next(line)) fail(r.path, r.line_no, "missing size line");
  std::istringstream s(line);
  index_t rows = -1, cols = -1;
  s >> rows >> cols;
  if (info.format == "coordinate" && !(s >> info.entries)) info.entries = -1;
  if (rows < 0 || cols < 0 || info.entries < 0) fail(r.path, r.line_no, "bad size line");
  if (rows != cols) fail(r.path, r.line_no, "matrix is " + std::to_string(rows) + " x " + std::to_string(cols) + ", not square");
  info.n = rows;
  return info;
}

}  // namespace

MatrixMarketInfo read_matrix_market_info(const std::string& path) {
  Reader r(path);
  return parse_header(r);
}

template <class T>
HostMatrix<T> read_matrix_market(const std::string& path) {
  Reader r(path);
  const MatrixMarketInfo info = parse_header(r);
  const bool complex_data = info.field == "complex";
  if (complex_data && !is_complex_v<T>) fail(path, 1, "complex data needs a complex scalar type (--type cdouble)");
  const index_t n = info.n;
  HostMatrix<T> a("keig::matrix_market", n, n);
  auto value = [&](std::istringstream& s) -> T {
    double re = 0, im = 0;
    if (!(s >> re)) fail(path, r.line_no, "missing value");
    if (complex_data && !(s >> im)) fail(path, r.line_no, "missing imaginary part");
    if constexpr (is_complex_v<T>) return T(real_t<T>(re), real_t<T>(im));
    else return T(re);
  };
  auto store = [&](index_t i, index_t j, T v) {
    a(i, j) = v;
    if (info.symmetry != "general" && i != j) {
      a(j, i) = conjugate(v);
    }
  };
  std::string line;
  if (info.format == "coordinate") {
    const index_t entries = info.entries;
    for (index_t k = 0; k < entries; ++k) {
      if (!r.next(line)) fail(path, r.line_no, "expected " + std::to_string(entries) + " entries, found " + std::to_string(k));
      std::istringstream s(line);
      index_t i = 0, j = 0;
      if (!(s >> i >> j) || i < 1 || j < 1 || i > n || j > n) fail(path, r.line_no, "bad index");
      store(i - 1, j - 1, value(s));
    }
  } else {
    // Column-major; symmetric/hermitian arrays list the lower triangle only.
    for (index_t j = 0; j < n; ++j)
      for (index_t i = info.symmetry == "general" ? 0 : j; i < n; ++i) {
        if (!r.next(line)) fail(path, r.line_no, "too few array entries");
        std::istringstream s(line);
        store(i, j, value(s));
      }
  }
  // A general matrix is accepted only if it is Hermitian.
  for (index_t j = 0; j < n; ++j)
    for (index_t i = j; i < n; ++i) {
      const double scale = std::sqrt(double(abs_squared(a(i, j)))) + std::sqrt(double(abs_squared(a(j, i))));
      const double diff = std::sqrt(double(abs_squared(T(a(i, j) - conjugate(a(j, i))))));
      if (diff > 1e-12 * scale)
        throw InvalidArgument("file", path + ": entries (" + std::to_string(i + 1) + ", " + std::to_string(j + 1) +
                                          ") and its transpose differ: the matrix is not symmetric/Hermitian");
    }
  return a;
}

template HostMatrix<float> read_matrix_market<float>(const std::string&);
template HostMatrix<double> read_matrix_market<double>(const std::string&);
template HostMatrix<Kokkos::complex<float>> read_matrix_market<Kokkos::complex<float>>(const std::string&);
template HostMatrix<Kokkos::complex<double>> read_matrix_market<Kokkos::complex<double>>(const std::string&);

}  // namespace keig::examples
