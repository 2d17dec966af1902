// options.cpp — option keys:
//   backend  reference            which backend compiles the kernel
//   checked  1 | 0                bounds-check every tensor read at run time
#include "support/options.h"

#include <vector>

#include "support/error.h"

namespace tc {
namespace {

struct KeySpec {
  const char* key;
  std::vector<std::string> allowed;  // first is the default
};

const std::vector<KeySpec>& keys() {
  static const std::vector<KeySpec> kKeys = {
      {"backend", {"reference"}},
      {"checked", {"1", "0"}},
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

}  // namespace

void Options::set(const std::string& key, const std::string& value) {
  const KeySpec& k = spec(key);
  for (const auto& a : k.allowed)
    if (a == value) {
      values_[key] = value;
      return;
    }
  std::string allowed;
  for (const auto& a : k.allowed) allowed += (allowed.empty() ? "'" : ", '") + a + "'";
  fail(TC_ERROR_INVALID_ARGUMENT, "option '" + key + "' cannot be '" + value + "' (allowed: " + allowed + ")");
}

const std::string& Options::get(const std::string& key) const {
  const KeySpec& k = spec(key);
  auto it = values_.find(key);
  return it != values_.end() ? it->second : k.allowed.front();
}

}  // namespace tc
