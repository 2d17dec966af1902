// options.cpp — option keys (the one table; tc.h and docs/performance.md list them too):
//   backend        cpu | reference      which backend compiles the kernel
//   checked        1 | 0                bounds-check data-dependent (gather) reads at run time
//   threads        0 | N                worker threads for the cpu backend; 0: all cores
//   cpu.vectorize  auto | N             vector width in elements (1: scalar code)
//   cpu.tile       auto | XxY           output tile: X along the innermost dimension, Y along
//                                       the register-blocked one
//   cpu.unroll     auto | N             rows of the register block (accumulators per vector)
//   cpu.parallel   auto | outer | none  run the outer tile loop in parallel, or not
//   cpu.inline     auto | 0 | 1         1: inline every single-use pointwise producer into its
//                                       consumer; 0: compute every producer on its own first
// Values are validated here; what "auto" picks is decided by the cpu backend's scheduler.
#include "support/options.h"

#include <cstdlib>
#include <vector>

#include "support/error.h"

namespace tc {
namespace {

// A value accepted by a key: one of a list of words, or a positive integer (or a pair "AxB")
// up to a bound.
struct KeySpec {
  const char* key;
  std::vector<std::string> words;  // the first is the default
  enum class Number { None, One, Pair } number = Number::None;
  long max = 0;
  const char* number_text = "";
};

const std::vector<KeySpec>& keys() {
  using N = KeySpec::Number;
  static const std::vector<KeySpec> kKeys = {
      {"backend", {"cpu", "reference"}},
      {"checked", {"1", "0"}},
      {"threads", {"0"}, N::One, 1024, "a thread count 1..1024"},
      {"cpu.vectorize", {"auto"}, N::One, 64, "a vector width 1..64"},
      {"cpu.tile", {"auto"}, N::Pair, 4096, "a tile XxY with X, Y in 1..4096"},
      {"cpu.unroll", {"auto"}, N::One, 32, "an unroll factor 1..32"},
      {"cpu.parallel", {"auto", "outer", "none"}},
      {"cpu.inline", {"auto", "0", "1"}},
  };
  return kKeys;
}

const KeySpec& spec(const std::string& key) {
  for (const auto& k : keys())
    if (key == k.key) return k;
  std::string known;
  for (const auto& k : keys()) known += (known.empty() ? "" : ", ") + std::string(k.key);
  fail(TC_ERROR_INVALID_ARGUMENT, "unknown option '" + key + "' (known options: " + known + ")");
}

// "12" -> 12; anything else (signs, spaces, 0, too large) -> -1.
long positive(const std::string& s, long max) {
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) return -1;
  long v = std::strtol(s.c_str(), nullptr, 10);
  return v >= 1 && v <= max ? v : -1;
}

bool number_ok(const KeySpec& k, const std::string& v) {
  if (k.number == KeySpec::Number::One) return positive(v, k.max) > 0;
  if (k.number == KeySpec::Number::Pair) {
    size_t x = v.find('x');
    return x != std::string::npos && positive(v.substr(0, x), k.max) > 0 && positive(v.substr(x + 1), k.max) > 0;
  }
  return false;
}

}  // namespace

void Options::set(const std::string& key, const std::string& value) {
  const KeySpec& k = spec(key);
  for (const auto& a : k.words)
    if (a == value) {
      values_[key] = value;
      return;
    }
  if (number_ok(k, value)) {
    values_[key] = value;
    return;
  }
  std::string allowed;
  for (const auto& a : k.words) allowed += (allowed.empty() ? "'" : ", '") + a + "'";
  if (k.number != KeySpec::Number::None) allowed += std::string(" or ") + k.number_text;
  fail(TC_ERROR_INVALID_ARGUMENT, "option '" + key + "' cannot be '" + value + "' (allowed: " + allowed + ")");
}

const std::string& Options::get(const std::string& key) const {
  const KeySpec& k = spec(key);
  auto it = values_.find(key);
  return it != values_.end() ? it->second : k.words.front();
}

std::string Options::to_string() const {
  std::string out;
  for (const auto& k : keys()) out += (out.empty() ? "" : " ") + std::string(k.key) + "=" + get(k.key);
  return out;
}

}  // namespace tc
