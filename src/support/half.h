// half.h — IEEE 754 binary16 <-> binary32 and bfloat16 <-> binary32 conversions (round to
// nearest even, NaN kept), for the reference backend's float16 and bfloat16 and for constants
// the other backends fold (rounded_to_type). The cpu and cuda backends print the same rules as
// code.
#pragma once

#include <cstdint>
#include <cstring>

#include "support/dtype.h"

namespace tc {

inline float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t man = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        man <<= 1;
      } while ((man & 0x400) == 0);
      bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (man & 0x3ff) << 13;
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | man << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | man << 13;
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) return sign | 0x7c00 | (abs > 0x7f800000u ? 0x200 : 0);  // inf / nan
  if (abs >= 0x477ff000u) return sign | 0x7c00;                                      // overflow -> inf
  if (abs < 0x33000001u) return sign;                                                // underflow -> 0
  uint32_t exp = abs >> 23;
  uint32_t man = (abs & 0x7fffff) | 0x800000;
  int shift = exp < 113 ? static_cast<int>(126 - exp) : 13;  // subnormal results shift more
  uint32_t half_man = man >> shift;
  uint32_t rem = man & ((1u << shift) - 1);
  uint32_t halfway = 1u << (shift - 1);
  if (rem > halfway || (rem == halfway && (half_man & 1))) ++half_man;
  if (exp < 113) return sign | static_cast<uint16_t>(half_man);
  return sign | static_cast<uint16_t>(((exp - 112) << 10) + (half_man - 0x400));
}

inline float round_to_half(float f) { return half_to_float(float_to_half(f)); }

// bfloat16: float32's upper 16 bits.
inline float bfloat16_to_float(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Round to nearest even on the lower 16 bits; a NaN gives the quiet NaN 0x7fc0 (as PyTorch's
// c10::BFloat16 does), where the rounding increment could carry it into infinity.
inline uint16_t float_to_bfloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
  x += 0x7fffu + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

inline float round_to_bfloat16(float f) { return bfloat16_to_float(float_to_bfloat16(f)); }

// x as a value of float type t: float32 and the 16-bit types through float32 (so a float16 or
// bfloat16 from a double is rounded twice, the language's rule), float64 unchanged.
inline double rounded_to_type(double x, ScalarType t) {
  if (t == ScalarType::Float32) return static_cast<float>(x);
  if (t == ScalarType::Float16) return round_to_half(static_cast<float>(x));
  if (t == ScalarType::BFloat16) return round_to_bfloat16(static_cast<float>(x));
  return x;
}

}  // namespace tc
