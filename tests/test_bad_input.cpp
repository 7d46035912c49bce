// Bad input: every check raises a typed error whose message names the
// argument, and nothing the caller passed is modified.
#include <cmath>
#include <limits>

#include "keig/views/workspace.hpp"
#include "support.hpp"

namespace keig::test {
namespace {

template <class T>
class BadInput : public ::testing::Test {
 protected:
  using R = real_t<T>;
  static constexpr index_t n = 8;
  HostMatrix<T> a_host = generate<T>(MatrixKind::Uniform, n, 1).a;
  SpaceMatrix<T> a = to_space(a_host);
  SpaceVector<R> w{"w", n};
  SpaceMatrix<T> z{"Z", n, n};

  // Runs f, expects E naming `argument`, and checks A was not touched.
  template <class E, class F>
  void expect_error(F&& f, const std::string& argument, const std::string& fragment = "") {
    bool thrown = false;
    try {
      f();
    } catch (const E& e) {
      thrown = true;
      const std::string what = e.what();
      EXPECT_NE(what.find(argument), std::string::npos) << what;
      if (!fragment.empty()) EXPECT_NE(what.find(fragment), std::string::npos) << what;
      if constexpr (std::is_base_of_v<InvalidArgument, E>) EXPECT_EQ(e.argument(), argument);
    }
    EXPECT_TRUE(thrown) << "expected a typed error naming '" << argument << "'";
    EXPECT_TRUE(same_matrix(to_host(a), a_host)) << "A was modified";
  }
};
TYPED_TEST_SUITE(BadInput, Scalars);

TYPED_TEST(BadInput, NonSquareA) {
  using T = TypeParam;
  SpaceMatrix<T> rect("rect", 8, 7);
  Kokkos::deep_copy(rect, T(1));
  auto before = to_host(rect);
  this->template expect_error<InvalidArgument>([&] { eigh(Space(), rect, this->w, this->z); }, "A", "square");
  EXPECT_TRUE(same_matrix(to_host(rect), HostMatrix<T>(before)));
}

TYPED_TEST(BadInput, SizeMismatchesOfWAndZ) {
  using T = TypeParam;
  using R = real_t<T>;
  SpaceVector<R> short_w("w", 7);
  SpaceMatrix<T> z_rows("Z", 7, 8), z_cols("Z", 8, 7);
  this->template expect_error<InvalidArgument>([&] { eigh(Space(), this->a, short_w, this->z); }, "w", "at least 8");
  this->template expect_error<InvalidArgument>([&] { eigvalsh(Space(), this->a, short_w); }, "w");
  this->template expect_error<InvalidArgument>([&] { eigh(Space(), this->a, this->w, z_rows); }, "Z");
  this->template expect_error<InvalidArgument>([&] { eigh(Space(), this->a, this->w, z_cols); }, "Z");
  // An index range needs only iu - il + 1 entries and columns.
  SpaceVector<R> w3("w3", 3);
  SpaceMatrix<T> z3("z3", 8, 3);
  Options options;
  options.range = Range::index(2, 4);
  EXPECT_EQ(eigh(Space(), this->a, w3, z3, options).eigenvalues_found, 3);
}

TYPED_TEST(BadInput, ZMustNotAliasA) {
  this->template expect_error<InvalidArgument>([&] { eigh(Space(), this->a, this->w, this->a); }, "Z", "overlap");
}

TYPED_TEST(BadInput, NonFiniteEntriesInTheReferencedTriangle) {
  using T = TypeParam;
  using R = real_t<T>;
  for (R bad : {std::numeric_limits<R>::quiet_NaN(), std::numeric_limits<R>::infinity()}) {
    this->a_host(5, 2) = T(bad);  // lower triangle
    this->a = to_space(this->a_host);
    bool thrown = false;
    try {
      eigh(Space(), this->a, this->w, this->z);
    } catch (const NonFiniteInput& e) {
      thrown = true;
      EXPECT_EQ(e.argument(), "A");
      EXPECT_EQ(e.row(), 5);
      EXPECT_EQ(e.col(), 2);
      EXPECT_NE(std::string(e.what()).find("(5, 2)"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(thrown);
    EXPECT_TRUE(same_matrix(to_host(this->a), this->a_host));
    // The same entry is not referenced when the upper triangle is used.
    Options upper;
    upper.uplo = Uplo::Upper;
    EXPECT_NO_THROW(eigvalsh(Space(), this->a, this->w, upper));
    this->a_host(5, 2) = T(0);
  }
}

TYPED_TEST(BadInput, InvalidRanges) {
  const index_t n = this->n;
  for (Range r : {Range::index(3, 2), Range::index(-1, 2), Range::index(0, n), Range::value(1.0, 1.0),
                  Range::value(2.0, -2.0), Range::value(std::nan(""), 1.0)}) {
    Options options;
    options.range = r;
    this->template expect_error<InvalidArgument>([&] { eigh(Space(), this->a, this->w, this->z, options); },
                                                 "options.range");
  }
}

TYPED_TEST(BadInput, InvalidOptions) {
  Options options;
  options.block_size = -1;
  this->template expect_error<InvalidArgument>([&] { eigh(Space(), this->a, this->w, this->z, options); },
                                               "options.block_size");
  options = Options{};
  options.band_width = -4;
  this->template expect_error<InvalidArgument>([&] { eigh(Space(), this->a, this->w, this->z, options); },
                                               "options.band_width");
}

TYPED_TEST(BadInput, GeneralizedSizesAndNonFiniteB) {
  using T = TypeParam;
  using R = real_t<T>;
  HostMatrix<T> b_host = generate<T>(MatrixKind::Identity, this->n, 1).a;
  SpaceMatrix<T> b_small("B", 7, 7);
  this->template expect_error<InvalidArgument>([&] { eigh(Space(), this->a, b_small, this->w, this->z); }, "B");
  b_host(6, 1) = T(std::numeric_limits<R>::infinity());
  auto b = to_space(b_host);
  this->template expect_error<NonFiniteInput>([&] { eigh(Space(), this->a, b, this->w, this->z); }, "B");
  EXPECT_TRUE(same_matrix(to_host(b), b_host));
  Options options;
  options.generalized_type = static_cast<GeneralizedType>(7);
  auto identity = to_space(generate<T>(MatrixKind::Identity, this->n, 1).a);
  this->template expect_error<InvalidArgument>([&] { eigh(Space(), this->a, identity, this->w, this->z, options); },
                                               "options.generalized_type");
}

TYPED_TEST(BadInput, BNotPositiveDefiniteNamesTheMinor) {
  using T = TypeParam;
  HostMatrix<T> b_host = generate<T>(MatrixKind::Identity, this->n, 1).a;
  b_host(4, 4) = T(-1);  // leading minor of order 5 is negative
  auto b = to_space(b_host);
  for (bool vectors : {true, false}) {
    bool thrown = false;
    try {
      if (vectors) eigh(Space(), this->a, b, this->w, this->z);
      else eigvalsh(Space(), this->a, b, this->w);
    } catch (const NotPositiveDefinite& e) {
      thrown = true;
      EXPECT_EQ(e.minor(), 5);
      EXPECT_NE(std::string(e.what()).find("order 5"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("'B'"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(thrown);
    EXPECT_TRUE(same_matrix(to_host(b), b_host)) << "B was modified";
    EXPECT_TRUE(same_matrix(to_host(this->a), this->a_host)) << "A was modified";
  }
}

TEST(Workspace, OutOfMemoryReportsTheBytesRequested) {
  // 2^24 x 2^24 doubles = 2 PiB: beyond any address space, even with overcommit.
  const index_t huge = index_t(1) << 24;
  try {
    auto m = allocate_matrix<double>(Space(), "keig::test::huge", huge, huge);
    ADD_FAILURE() << "a 2 PiB allocation succeeded";
  } catch (const OutOfMemory& e) {
    EXPECT_EQ(e.bytes(), std::size_t(huge) * std::size_t(huge) * sizeof(double));
    EXPECT_NE(std::string(e.what()).find("keig::test::huge"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace keig::test
