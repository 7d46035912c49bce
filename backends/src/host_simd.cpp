// Host SIMD kernels (backends/include/keig/backends/host_simd.hpp).
#include "keig/backends/host_simd.hpp"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace keig::backends::host {

#if defined(__AVX512F__)

// A half stripe (32 columns, 4 vectors of 8) at a time: the 16 dot-product
// accumulators, 4 row vectors and a broadcast fit the 32 vector registers,
// and a row costs 4 loads and 16 FMAs in the dot pass, 4 loads, 16 FMAs and
// 4 stores in the update (GCC's own code kept the sums in memory: a load and
// a store per FMA pair).
void apply_reflector_quad(index_t rows, const double* v, const double* tau, double* q) {
  constexpr int ld = reflector_stripe_columns;
  // gram[4 j + i] = v_j^T v_i (i < j), 8 rows at a time.
  double gram[16];
  {
    __m512d g10 = _mm512_setzero_pd(), g20 = g10, g21 = g10, g30 = g10, g31 = g10, g32 = g10;
    for (index_t i = 0; i < rows; i += 8) {
      const __mmask8 m = rows - i >= 8 ? __mmask8(0xff) : __mmask8((1u << (rows - i)) - 1);
      const __m512d a0 = _mm512_maskz_loadu_pd(m, v + i), a1 = _mm512_maskz_loadu_pd(m, v + rows + i);
      const __m512d a2 = _mm512_maskz_loadu_pd(m, v + 2 * rows + i), a3 = _mm512_maskz_loadu_pd(m, v + 3 * rows + i);
      g10 = _mm512_fmadd_pd(a1, a0, g10);
      g20 = _mm512_fmadd_pd(a2, a0, g20);
      g21 = _mm512_fmadd_pd(a2, a1, g21);
      g30 = _mm512_fmadd_pd(a3, a0, g30);
      g31 = _mm512_fmadd_pd(a3, a1, g31);
      g32 = _mm512_fmadd_pd(a3, a2, g32);
    }
    gram[4] = _mm512_reduce_add_pd(g10);
    gram[8] = _mm512_reduce_add_pd(g20);
    gram[9] = _mm512_reduce_add_pd(g21);
    gram[12] = _mm512_reduce_add_pd(g30);
    gram[13] = _mm512_reduce_add_pd(g31);
    gram[14] = _mm512_reduce_add_pd(g32);
  }
  const double* v0 = v;
  const double* v1 = v + rows;
  const double* v2 = v + 2 * rows;
  const double* v3 = v + 3 * rows;
  for (int half = 0; half < ld; half += 32) {
    double* col = q + half;
    __m512d d[4][4];
    for (int j = 0; j < 4; ++j)
      for (int u = 0; u < 4; ++u) d[j][u] = _mm512_setzero_pd();
    for (index_t i = 0; i < rows; ++i) {
      const double* row = col + i * ld;
      const __m512d x0 = _mm512_loadu_pd(row), x1 = _mm512_loadu_pd(row + 8);
      const __m512d x2 = _mm512_loadu_pd(row + 16), x3 = _mm512_loadu_pd(row + 24);
      const __m512d a0 = _mm512_set1_pd(v0[i]), a1 = _mm512_set1_pd(v1[i]);
      const __m512d a2 = _mm512_set1_pd(v2[i]), a3 = _mm512_set1_pd(v3[i]);
      d[0][0] = _mm512_fmadd_pd(a0, x0, d[0][0]);
      d[0][1] = _mm512_fmadd_pd(a0, x1, d[0][1]);
      d[0][2] = _mm512_fmadd_pd(a0, x2, d[0][2]);
      d[0][3] = _mm512_fmadd_pd(a0, x3, d[0][3]);
      d[1][0] = _mm512_fmadd_pd(a1, x0, d[1][0]);
      d[1][1] = _mm512_fmadd_pd(a1, x1, d[1][1]);
      d[1][2] = _mm512_fmadd_pd(a1, x2, d[1][2]);
      d[1][3] = _mm512_fmadd_pd(a1, x3, d[1][3]);
      d[2][0] = _mm512_fmadd_pd(a2, x0, d[2][0]);
      d[2][1] = _mm512_fmadd_pd(a2, x1, d[2][1]);
      d[2][2] = _mm512_fmadd_pd(a2, x2, d[2][2]);
      d[2][3] = _mm512_fmadd_pd(a2, x3, d[2][3]);
      d[3][0] = _mm512_fmadd_pd(a3, x0, d[3][0]);
      d[3][1] = _mm512_fmadd_pd(a3, x1, d[3][1]);
      d[3][2] = _mm512_fmadd_pd(a3, x2, d[3][2]);
      d[3][3] = _mm512_fmadd_pd(a3, x3, d[3][3]);
    }
    // d_j = tau_j (v_j^T q - sum_{i<j} gram(j, i) d_i), in application order.
    for (int j = 0; j < 4; ++j) {
      const __m512d t = _mm512_set1_pd(tau[j]);
      for (int u = 0; u < 4; ++u) {
        __m512d s = d[j][u];
        for (int i = 0; i < j; ++i) s = _mm512_fnmadd_pd(_mm512_set1_pd(gram[4 * j + i]), d[i][u], s);
        d[j][u] = _mm512_mul_pd(t, s);
      }
    }
    for (index_t i = 0; i < rows; ++i) {
      double* row = col + i * ld;
      const __m512d a0 = _mm512_set1_pd(v0[i]), a1 = _mm512_set1_pd(v1[i]);
      const __m512d a2 = _mm512_set1_pd(v2[i]), a3 = _mm512_set1_pd(v3[i]);
      for (int u = 0; u < 4; ++u) {
        __m512d x = _mm512_loadu_pd(row + 8 * u);
        x = _mm512_fnmadd_pd(a0, d[0][u], x);
        x = _mm512_fnmadd_pd(a1, d[1][u], x);
        x = _mm512_fnmadd_pd(a2, d[2][u], x);
        x = _mm512_fnmadd_pd(a3, d[3][u], x);
        _mm512_storeu_pd(row + 8 * u, x);
      }
    }
  }
}

bool reflector_quad_vectorized() { return true; }

#else

void apply_reflector_quad(index_t rows, const double* v, const double* tau, double* q) {
  constexpr int ld = reflector_stripe_columns;
  double gram[16];
  for (int j = 1; j < 4; ++j)
    for (int i = 0; i < j; ++i) {
      double g = 0.0;
      for (index_t r = 0; r < rows; ++r) g += v[j * rows + r] * v[i * rows + r];
      gram[4 * j + i] = g;
    }
  double d[4][ld];
  for (int j = 0; j < 4; ++j)
    for (int c = 0; c < ld; ++c) d[j][c] = 0.0;
  for (index_t i = 0; i < rows; ++i)
    for (int j = 0; j < 4; ++j) {
      const double a = v[j * rows + i];
      for (int c = 0; c < ld; ++c) d[j][c] += a * q[i * ld + c];
    }
  for (int j = 0; j < 4; ++j)
    for (int c = 0; c < ld; ++c) {
      double s = d[j][c];
      for (int i = 0; i < j; ++i) s -= gram[4 * j + i] * d[i][c];
      d[j][c] = tau[j] * s;
    }
  for (index_t i = 0; i < rows; ++i)
    for (int j = 0; j < 4; ++j) {
      const double a = v[j * rows + i];
      for (int c = 0; c < ld; ++c) q[i * ld + c] -= a * d[j][c];
    }
}

bool reflector_quad_vectorized() { return false; }

#endif

}  // namespace keig::backends::host
