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

// panel_cholqr on host through factor_and_check; returns whether it took
// the CholeskyQR2 path.
template <class T>
bool cholqr_and_check(const HostMatrix<T>& host, index_t m, index_t k, const SpaceVector<T>& work,
                      bool compare_to_geqrf) {
  bool accepted = false;
  factor_and_check<T>(
      host, m, k,
      [&](const Matrix<T, Space>& a, const Vector<T, Space>& tau, const stages::PanelQrFactors<T, Space>& factors) {
        stages::panel_cholqr<T, Space>(backends::Context<Space>{Space()}, a, tau, to_vector<Space>(work), factors);
        accepted = stages::panel_cholqr_accepted<T, Space>(Space(), to_vector<Space>(work));
      },
      compare_to_geqrf);
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
        const bool accepted = cholqr_and_check<T>(make_panel<T>(PanelKind::Random, m, k, rng), m, k, work, true);
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
          const bool accepted = cholqr_and_check<T>(make_panel<T>(kind, m, k, rng), m, k, work, kind == PanelKind::Random);
          EXPECT_EQ(accepted, kind == PanelKind::Random);
        }
  }
}

}  // namespace
}  // namespace keig::test
