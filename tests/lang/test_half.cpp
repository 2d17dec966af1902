// test_half.cpp — src/support/half.h: binary16 <-> binary32 conversions, exhaustively over
// all 65536 half bit patterns, plus the rounding cases of float -> half.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "support/half.h"

namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

bool is_nan_half(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0; }

// The value of a half computed independently of half.h (finite and infinite patterns).
double reference_value(uint16_t h) {
  int sign = h >> 15, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  double mag;
  if (exp == 0x1f)
    mag = std::numeric_limits<double>::infinity();
  else if (exp == 0)
    mag = std::ldexp(static_cast<double>(man), -24);
  else
    mag = std::ldexp(1.0 + man / 1024.0, exp - 15);
  return sign ? -mag : mag;
}

}  // namespace

TEST(Half, HalfToFloatMatchesReferenceForAllPatterns) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = tc::half_to_float(static_cast<uint16_t>(h));
    if (is_nan_half(static_cast<uint16_t>(h))) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << h;
      ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0) << std::hex << h;
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), reference_value(static_cast<uint16_t>(h))) << std::hex << h;
    ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0) << std::hex << h;  // includes -0
  }
}

TEST(Half, RoundTripIsExactForAllNonNaNPatterns) {
  int nans = 0;
  for (uint32_t h = 0; h < 0x10000; ++h) {
    uint16_t back = tc::float_to_half(tc::half_to_float(static_cast<uint16_t>(h)));
    if (is_nan_half(static_cast<uint16_t>(h))) {
      ASSERT_TRUE(is_nan_half(back)) << std::hex << h << " -> " << back;
      ASSERT_EQ(back & 0x8000, h & 0x8000) << std::hex << h;
      ++nans;
      continue;
    }
    ASSERT_EQ(back, h) << std::hex << h;
  }
  EXPECT_EQ(nans, 2 * 1023);
}

TEST(Half, MidpointsRoundToEvenAndNeighboursToNearest) {
  // For every pair of adjacent finite non-negative halves (a, a+1), the float midpoint rounds to
  // the one with an even mantissa, and the floats just beside it round to the nearer one.
  for (uint16_t a = 0; a < 0x7bff; ++a) {
    uint16_t b = a + 1;
    double lo = reference_value(a), hi = reference_value(b);
    float mid = static_cast<float>((lo + hi) / 2);  // exact: the midpoint has 12 significant bits
    ASSERT_EQ(static_cast<double>(mid), (lo + hi) / 2);
    uint16_t even = (a & 1) ? b : a;
    ASSERT_EQ(tc::float_to_half(mid), even) << std::hex << a;
    ASSERT_EQ(tc::float_to_half(float_of(bits_of(mid) - 1)), a) << std::hex << a;
    ASSERT_EQ(tc::float_to_half(float_of(bits_of(mid) + 1)), b) << std::hex << a;
    ASSERT_EQ(tc::float_to_half(-mid), static_cast<uint16_t>(even | 0x8000)) << std::hex << a;
  }
}

TEST(Half, SpecificRounding) {
  EXPECT_EQ(tc::float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(tc::float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(tc::float_to_half(0.1f), 0x2e66);
  EXPECT_EQ(tc::float_to_half(1.0f + 1.0f / 2048), 0x3c00);            // tie -> even (down)
  EXPECT_EQ(tc::float_to_half(1.0f + 3.0f / 2048), 0x3c02);            // tie -> even (up)
  EXPECT_EQ(tc::float_to_half(1.0f + 1.0f / 2048 + 1.0f / 65536), 0x3c01);  // above the tie
  EXPECT_EQ(tc::float_to_half(4095.0f / 2048), 0x4000);  // rounding carries into the exponent
  EXPECT_EQ(tc::half_to_float(0x3555), 0.333251953125f);
}

TEST(Half, OverflowToInfinity) {
  EXPECT_EQ(tc::float_to_half(65504.0f), 0x7bff);                // the largest half
  EXPECT_EQ(tc::float_to_half(65519.99f), 0x7bff);               // below the tie with 65536
  EXPECT_EQ(tc::float_to_half(65520.0f), 0x7c00);                // the tie rounds to even: inf
  EXPECT_EQ(tc::float_to_half(1e10f), 0x7c00);
  EXPECT_EQ(tc::float_to_half(-1e10f), 0xfc00);
  EXPECT_EQ(tc::float_to_half(std::numeric_limits<float>::max()), 0x7c00);
  EXPECT_EQ(tc::float_to_half(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(tc::float_to_half(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_TRUE(std::isinf(tc::half_to_float(0x7c00)));
}

TEST(Half, Subnormals) {
  const float tiny = std::ldexp(1.0f, -24);  // the smallest half subnormal
  EXPECT_EQ(tc::float_to_half(tiny), 0x0001);
  EXPECT_EQ(tc::float_to_half(3 * tiny), 0x0003);
  EXPECT_EQ(tc::float_to_half(1023 * tiny), 0x03ff);   // the largest subnormal
  EXPECT_EQ(tc::float_to_half(1024 * tiny), 0x0400);   // the smallest normal
  EXPECT_EQ(tc::float_to_half(1023.5f * tiny), 0x0400);  // tie rounds up to even into the normals
  EXPECT_EQ(tc::float_to_half(2.5f * tiny), 0x0002);   // tie -> even
  EXPECT_EQ(tc::float_to_half(3.5f * tiny), 0x0004);   // tie -> even
  EXPECT_EQ(tc::float_to_half(0.5f * tiny), 0x0000);   // tie with zero -> zero
  EXPECT_EQ(tc::float_to_half(0.50001f * tiny), 0x0001);
  EXPECT_EQ(tc::float_to_half(-0.5f * tiny), 0x8000);  // signed zero
  EXPECT_EQ(tc::float_to_half(1e-30f), 0x0000);
  EXPECT_EQ(tc::float_to_half(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(tc::float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(tc::half_to_float(0x0001), tiny);
  EXPECT_EQ(tc::half_to_float(0x8001), -tiny);
}

TEST(Half, NaN) {
  uint16_t h = tc::float_to_half(std::numeric_limits<float>::quiet_NaN());
  EXPECT_TRUE(is_nan_half(h));
  EXPECT_TRUE(is_nan_half(tc::float_to_half(-std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(is_nan_half(tc::float_to_half(float_of(0x7f800001u))));  // a signalling NaN stays a NaN
  EXPECT_TRUE(std::isnan(tc::half_to_float(0x7e00)));
  EXPECT_TRUE(std::isnan(tc::round_to_half(std::nanf(""))));
}

TEST(Half, RoundToHalf) {
  EXPECT_EQ(tc::round_to_half(0.1f), 0.0999755859375f);
  EXPECT_EQ(tc::round_to_half(100000.0f), std::numeric_limits<float>::infinity());
  EXPECT_EQ(tc::round_to_half(1.5f), 1.5f);
}
