// decimal.h — a whole decimal number in a range, as option values and URLs spell them: digits
// only (no sign, no spaces), at most 12 of them. Shared by the knobs' parser and the remote
// cache's URL parser.
#pragma once

#include <cstdint>
#include <string>

namespace tc {

// "12" -> 12 within [lo, hi]; anything else (signs, spaces, out of range) -> -1.
inline int64_t decimal_in(const std::string& s, int64_t lo, int64_t hi) {
  if (s.empty() || s.size() > 12 || s.find_first_not_of("0123456789") != std::string::npos) return -1;
  int64_t v = std::stoll(s);
  return v >= lo && v <= hi ? v : -1;
}

}  // namespace tc
