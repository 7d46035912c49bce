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
#include "panel_check.hpp"

namespace keig::test {
namespace {

template <class T>
class PanelCholQr : public ::testing::Test {};
TYPED_TEST_SUITE(PanelCholQr, Scalars);

// Factors host (m x k, leading dimension m + 3) with panel_cholqr and checks
// the result is a Householder QR of the panel whatever the path
// (expect_householder_qr). With compare_to_geqrf (panels of full
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
  const double tol = expect_householder_qr<T>(host, m, k, mh, vm, tm, tfm, tfl);
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
