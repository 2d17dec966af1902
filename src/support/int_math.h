// int_math.h — TC's integer division, the one definition shared by symbolic evaluation
// (src/infer) and every backend's scalar semantics. It is Halide's rule: Euclidean, so
// 0 <= a % b < |b| and a == b * (a / b) + a % b ('/' rounds toward negative infinity for
// positive divisors); division by zero gives 0, and INT64_MIN / -1 wraps instead of trapping.
// No intermediate result overflows (the functions are UBSan-clean for every input).
#pragma once

#include <cstdint>

namespace tc {

inline int64_t euclid_mod(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  int64_t r = a % b;
  if (r >= 0) return r;
  // r + |b|, in unsigned arithmetic: |INT64_MIN| is not an int64_t (the differential fuzzer,
  // seed 149050256: (-1) % INT64_MIN); the sum lies in [0, |b|) and fits.
  uint64_t magnitude = b < 0 ? 0 - static_cast<uint64_t>(b) : static_cast<uint64_t>(b);
  return static_cast<int64_t>(static_cast<uint64_t>(r) + magnitude);
}

inline int64_t euclid_div(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return static_cast<int64_t>(0 - static_cast<uint64_t>(a));
  int64_t q = a / b;  // truncated; |b| >= 2 here, so it cannot overflow
  if (a % b < 0) q += b > 0 ? -1 : 1;
  return q;
}

}  // namespace tc
