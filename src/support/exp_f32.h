// exp_f32.h — the definition of TC's exp for float32 (and float16, computed in float32 and
// rounded): Cephes' expf, exp(x) = 2^n * exp(r) with |r| <= ln2/2 and a degree-5 polynomial,
// within about 1 ulp of libm's expf. Every backend evaluates exactly these float32 operations
// in this order (the reference here, the cpu backend vectorised in lower_expr.cpp, the cuda
// backend printed in print/prelude.cpp), so their results agree bit for bit; the differential
// fuzzer holds them to it. The multiply-adds are fused (fma: one rounding), one instruction on
// every CPU with AVX2 and every GPU: 9 of the vector code's 36 operations fewer (measured on
// the 2-core Xeon: exp over 128x1000 floats, one thread, 0.073 -> 0.053 ms). 2^n is applied
// as two factors so that results that overflow to inf or underflow through the subnormals
// come out as IEEE arithmetic makes them. NaN gives NaN.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace tc::exp_f32 {

constexpr float kLowest = -104.0f, kHighest = 89.0f;  // x is clamped into [kLowest, kHighest]
constexpr float kLog2E = 1.44269504088896341f;
constexpr float kLn2High = 0.693359375f, kLn2Low = -2.12194440e-4f;  // ln 2 = kLn2High + kLn2Low
constexpr float kPoly[] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                           4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};

// 2^k as a float, for k in [-76, 65] (the range the clamp leaves for each factor).
inline float pow2(int32_t k) {
  uint32_t bits = static_cast<uint32_t>(k + 127) << 23;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// The scalar form. Each operation is one float32 operation, rounded; std::fma rounds once
// (no other contraction: libtc is compiled with -ffp-contract=off).
inline float evaluate(float x) {
  if (std::isnan(x)) return x;
  float xc = std::max(std::min(x, kHighest), kLowest);
  float n = std::floor(std::fma(xc, kLog2E, 0.5f));
  float r = std::fma(n, -kLn2High, xc);
  r = std::fma(n, -kLn2Low, r);
  float p = kPoly[0];
  for (size_t i = 1; i < sizeof kPoly / sizeof kPoly[0]; ++i) p = std::fma(p, r, kPoly[i]);
  float y = std::fma(p * r, r, r) + 1.0f;
  int32_t ni = static_cast<int32_t>(n);
  int32_t n1 = ni >> 1, n2 = ni - n1;
  return y * pow2(n1) * pow2(n2);
}

}  // namespace tc::exp_f32
