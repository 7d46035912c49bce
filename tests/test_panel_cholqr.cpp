// stages/panel_cholqr (CholeskyQR2 + Householder reconstruction, an option
// for sy2sb's panels): every result must be a Householder QR of the panel
// (A = H [R; 0], H's first columns orthonormal, T = larft(V, tau)). The
// reconstruction follows ?larfg's sign rule, so on well-conditioned panels,
// which must take the CholeskyQR2 path, R, the reflectors and tau also agree
// with the vendor's geqrf to rounding. Singular and ill-conditioned panels
// must be refused and factored by the fallback (panel_qr on GPUs, geqrf on
// hosts); there the factorization is not unique, so only its validity is
// checked. Runs on every backend; complex scalars and bad shapes are refused
// by name.
#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "keig/backends/lapack.hpp"
#include "keig/stages/panel_cholqr.hpp"
#include "support.hpp"

namespace keig::test {
namespace {

template <class T>
class PanelCholQr : public ::testing::Test {};
TYPED_TEST_SUITE(PanelCholQr, Scalars);

enum class PanelKind { Random, Zero, RankOne, IllConditioned };

// Factors host (m x k, leading dimension m + 3) with panel_cholqr and checks
// the result is a Householder QR of the panel whatever the path: V unit lower
// trapezoidal and equal to the stored reflectors, T upper triangular with
// tau on its diagonal and equal to the vendor's larft on that V and tau,
// A = H [R; 0] with H = I - V T V^T, the first k columns of H orthonormal,
// the rows beyond the panel untouched. With compare_to_geqrf (panels of full
// rank, where the factorization is unique up to rounding) R, V and tau must
// also agree with the vendor's geqrf. Returns whether panel_cholqr took the
// CholeskyQR2 path.
template <class T>
bool factor_and_check(const HostMatrix<T>& host, index_t m, index_t k, const SpaceVector<T>& work,
                      bool compare_to_geqrf) {
  backends::Context<Space> ctx{Space()};
  auto mine = to_space(host), theirs = to_space(host);
  const auto rows = std::make_pair(index_t(0), m);
  const Matrix<T, Space> a_mine = Kokkos::subview(mine, rows, Kokkos::ALL);
  const Matrix<T, Space> a_theirs = Kokkos::subview(theirs, rows, Kokkos::ALL);
  SpaceVector<T> tau_mine("tau_mine", k), tau_theirs("tau_theirs", k);
  SpaceMatrix<T> v_mine("v_mine", m, k), t_mine("t_mine", k, k), t_larft("t_larft", k, k);
  Kokkos::deep_copy(t_mine, T(7));  // every entry must be written
  Kokkos::deep_copy(v_mine, T(7));
  stages::panel_cholqr<T, Space>(ctx, a_mine, to_vector<Space>(tau_mine), to_vector<Space>(work),
                                 stages::PanelQrFactors<T, Space>{to_matrix<Space>(v_mine), to_matrix<Space>(t_mine)});
  const bool accepted = stages::panel_cholqr_accepted<T, Space>(Space(), to_vector<Space>(work));
  backends::larft<T>(ctx, to_matrix<Space>(v_mine), to_vector<Space>(tau_mine), to_matrix<Space>(t_larft));
  backends::geqrf<T>(ctx, a_theirs, to_vector<Space>(tau_theirs));
  Kokkos::fence();
  const auto mh = to_host(mine), th = to_host(theirs);
  const auto tm = to_host(tau_mine), tt = to_host(tau_theirs);
  const auto vm = to_host(v_mine), tfm = to_host(t_mine), tfl = to_host(t_larft);
  double scale = 0;
  for (index_t j = 0; j < k; ++j)
    for (index_t i = 0; i < m; ++i) scale = std::max(scale, std::abs(double(host(i, j))));
  // |R| ~ sqrt(m) |A| and reflector entries ~ 1: errors of a few m eps.
  const double eps = double(unit_roundoff<T>());
  const double tol = 64 * double(m + k) * eps * std::sqrt(double(m)) * std::max(scale, 1.0);
  const double tol_q = 64 * double(m + k) * eps;
  index_t untouched = 0, v_shape = 0, t_diagonal = 0, t_lower = 0;
  double worst_t = 0;
  std::string first_v;
  for (index_t j = 0; j < k; ++j) {
    for (index_t i = m; i < m + 3; ++i) untouched += mh(i, j) != host(i, j);
    for (index_t i = 0; i < m; ++i) {
      const T expected = i < j ? T(0) : (i == j ? T(1) : mh(i, j));
      if (vm(i, j) != expected && v_shape++ == 0)
        first_v = "V(" + std::to_string(i) + ", " + std::to_string(j) + ") = " + std::to_string(double(vm(i, j))) +
                  ", expected " + std::to_string(double(expected));
    }
    t_diagonal += tfm(j, j) != tm(j);
    for (index_t i = 0; i < k; ++i) {
      if (i > j) t_lower += tfm(i, j) != T(0);
      else worst_t = std::max(worst_t, std::abs(double(tfm(i, j) - tfl(i, j))));
    }
  }
  EXPECT_EQ(untouched, 0) << "panel_cholqr wrote outside the panel";
  EXPECT_EQ(v_shape, 0) << "V is not the stored unit lower trapezoidal reflectors: " << first_v;
  EXPECT_EQ(t_diagonal, 0) << "T's diagonal is not tau";
  EXPECT_EQ(t_lower, 0) << "T's strict lower triangle is not zero";
  EXPECT_LE(worst_t, tol_q * 4) << "T against larft(V, tau)";
  // H [R; 0] = [R; 0] - V T (V1^T R), and H(:, 0:k) = [I; 0] - V T V1^T.
  HostMatrix<T> w("w", k, k), tw("tw", k, k), q("q", m, k);
  for (index_t j = 0; j < k; ++j)
    for (index_t i = 0; i < k; ++i) {  // w = V1^T R
      T s = T(0);
      for (index_t l = i; l <= j; ++l) s += vm(l, i) * mh(l, j);
      w(i, j) = s;
    }
  for (index_t j = 0; j < k; ++j)
    for (index_t i = 0; i < k; ++i) {  // tw = T w
      T s = T(0);
      for (index_t l = i; l < k; ++l) s += tfm(i, l) * w(l, j);
      tw(i, j) = s;
    }
  double worst_a = 0;
  for (index_t j = 0; j < k; ++j)
    for (index_t i = 0; i < m; ++i) {
      T s = i <= j ? mh(i, j) : T(0);
      for (index_t l = 0; l < k; ++l) s -= vm(i, l) * tw(l, j);
      worst_a = std::max(worst_a, std::abs(double(s - host(i, j))));
    }
  EXPECT_LE(worst_a, tol) << "A against H [R; 0]";
  HostMatrix<T> tv("tv", k, k);
  for (index_t j = 0; j < k; ++j)
    for (index_t l = 0; l < k; ++l) {  // tv = T V1^T
      T s = T(0);
      for (index_t p = l; p <= j; ++p) s += tfm(l, p) * vm(j, p);
      tv(l, j) = s;
    }
  for (index_t j = 0; j < k; ++j)
    for (index_t i = 0; i < m; ++i) {  // q = [I; 0] - V tv
      T s = i == j ? T(1) : T(0);
      for (index_t l = 0; l < k; ++l) s -= vm(i, l) * tv(l, j);
      q(i, j) = s;
    }
  double worst_q = 0;
  for (index_t j = 0; j < k; ++j)
    for (index_t i = 0; i <= j; ++i) {
      T s = T(0);
      for (index_t r = 0; r < m; ++r) s += q(r, i) * q(r, j);
      worst_q = std::max(worst_q, std::abs(double(s - (i == j ? T(1) : T(0)))));
    }
  EXPECT_LE(worst_q, tol_q) << "H's first k columns are not orthonormal";
  // A square panel's last column: geqrf's H = I there, the reconstruction
  // reflects it (both are valid).
  if (compare_to_geqrf && m > k) {
    double worst = 0;
    for (index_t j = 0; j < k; ++j) {
      for (index_t i = 0; i < m; ++i) worst = std::max(worst, std::abs(double(mh(i, j) - th(i, j))));
      worst = std::max(worst, std::abs(double(tm(j) - tt(j))));
    }
    EXPECT_LE(worst, tol) << "R, reflectors and tau against geqrf's";
  }
  return accepted;
}

template <class T>
HostMatrix<T> make_panel(PanelKind kind, index_t m, index_t k, std::mt19937_64& rng) {
  HostMatrix<T> host("host", m + 3, k);
  for (index_t j = 0; j < k; ++j)
    for (index_t i = 0; i < m + 3; ++i) host(i, j) = random_scalar<T>(rng);
  if (kind == PanelKind::Random) return host;
  if (kind == PanelKind::Zero) {
    for (index_t j = 0; j < k; ++j)
      for (index_t i = 0; i < m; ++i) host(i, j) = T(0);
    return host;
  }
  // X diag(sigma) Y with X (m x k) and Y (k x k) random: rank one, or
  // singular values graded from 1 down to 1e-12 (double) / 1e-6 (float),
  // mixed over the columns (a column scaling alone would not trouble
  // CholeskyQR2, which is invariant to it).
  HostMatrix<T> y("y", k, k);
  for (index_t j = 0; j < k; ++j)
    for (index_t l = 0; l < k; ++l) y(l, j) = random_scalar<T>(rng);
  const double tiny = sizeof(T) == 4 ? 1e-6 : 1e-12;
  std::vector<double> sigma(k);
  for (index_t l = 0; l < k; ++l)
    sigma[l] = kind == PanelKind::RankOne ? (l == 0 ? 1.0 : 0.0)
                                          : std::pow(tiny, k > 1 ? double(l) / double(k - 1) : 1.0);
  std::vector<T> x(k);
  for (index_t i = 0; i < m; ++i) {
    for (index_t l = 0; l < k; ++l) x[l] = T(double(host(i, l)) * sigma[l]);
    for (index_t j = 0; j < k; ++j) {
      T s = T(0);
      for (index_t l = 0; l < k; ++l) s += x[l] * y(l, j);
      host(i, j) = s;
    }
  }
  return host;
}

TYPED_TEST(PanelCholQr, MatchesVendorGeqrf) {
  using T = TypeParam;
  backends::Context<Space> ctx{Space()};
  SpaceVector<T> work("work", stages::panel_cholqr_workspace_size());
  if constexpr (is_complex_v<T>) {
    SpaceMatrix<T> a("a", 10, 4), v("v", 10, 4), t("t", 4, 4);
    SpaceVector<T> tau("tau", 4);
    EXPECT_FALSE(stages::panel_cholqr_available<T>(4));
    EXPECT_THROW((stages::panel_cholqr<T, Space>(ctx, to_matrix<Space>(a), to_vector<Space>(tau), to_vector<Space>(work),
                                                 stages::PanelQrFactors<T, Space>{to_matrix<Space>(v), to_matrix<Space>(t)})),
                 InvalidArgument);
  } else {
    stages::panel_cholqr_prepare<T, Space>(Space(), to_vector<Space>(work));
    {  // shapes that are refused by name
      SpaceMatrix<T> wide("wide", 3, 4), big("big", 100, 65), a("a", 10, 4), v("v", 10, 4), t("t", 4, 4),
          wrong("wrong", 10, 3);
      SpaceVector<T> tau("tau", 65);
      const auto call = [&](auto& panel, auto& vv, auto& tt) {
        stages::panel_cholqr<T, Space>(ctx, to_matrix<Space>(panel), to_vector<Space>(tau), to_vector<Space>(work),
                                       stages::PanelQrFactors<T, Space>{to_matrix<Space>(vv), to_matrix<Space>(tt)});
      };
      EXPECT_THROW(call(wide, v, t), InvalidArgument);
      EXPECT_THROW(call(big, v, t), InvalidArgument);
      EXPECT_THROW(call(a, wrong, t), InvalidArgument);
      EXPECT_THROW(call(a, v, wrong), InvalidArgument);
    }
    std::mt19937_64 rng(29);
    for (index_t k : {index_t(1), index_t(3), index_t(17), index_t(32), index_t(64)}) {
      // One team up to many (one a multiprocessor), part chunks of rows.
      std::vector<index_t> sizes{k, k + 1, index_t(100), index_t(1000), index_t(5003)};
      if (backends::is_cuda_space_v<Space>) sizes.push_back(20000);
      for (index_t m : sizes) {
        if (m < k) continue;
        SCOPED_TRACE("panel_cholqr random m=" + std::to_string(m) + " k=" + std::to_string(k));
        const bool accepted = factor_and_check<T>(make_panel<T>(PanelKind::Random, m, k, rng), m, k, work, true);
        // Gaussian panels with at least twice as many rows as columns are
        // well conditioned (square ones may exceed float's u^{-1/2}).
        if (m >= 2 * k || sizeof(T) == 8) EXPECT_TRUE(accepted) << "a well-conditioned panel was refused";
      }
    }
  }
}

TYPED_TEST(PanelCholQr, RefusedPanelsFallBackToHouseholder) {
  using T = TypeParam;
  if constexpr (!is_complex_v<T>) {
    SpaceVector<T> work("work", stages::panel_cholqr_workspace_size());
    stages::panel_cholqr_prepare<T, Space>(Space(), to_vector<Space>(work));
    std::mt19937_64 rng(31);
    for (PanelKind kind : {PanelKind::Zero, PanelKind::RankOne, PanelKind::IllConditioned, PanelKind::Random})
      for (index_t k : {index_t(3), index_t(64)})
        for (index_t m : {index_t(200), index_t(3000)}) {
          SCOPED_TRACE("panel_cholqr kind=" + std::to_string(int(kind)) + " m=" + std::to_string(m) +
                       " k=" + std::to_string(k));
          // A random panel between refused ones: the workspace is left
          // ready for the next panel either way.
          const bool accepted = factor_and_check<T>(make_panel<T>(kind, m, k, rng), m, k, work, kind == PanelKind::Random);
          EXPECT_EQ(accepted, kind == PanelKind::Random);
        }
  }
}

}  // namespace
}  // namespace keig::test
