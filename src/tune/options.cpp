// options.cpp — see options.h.
#include "tune/options.h"

#include <algorithm>

#include "support/error.h"
#include "tune/cached_compile.h"
#include "tune/tuner.h"

namespace tc::tune {
namespace {

using backends::Knob;

// The options that apply whatever the backend: the general ones, the cache's, the tuner's.
const std::vector<const Knob*>& shared_options() {
  static const std::vector<const Knob*> kShared = [] {
    std::vector<const Knob*> out;
    for (const auto* list : {&backends::general_options(), &cache_options(), &tuner_options()})
      for (const Knob& k : *list) out.push_back(&k);
    return out;
  }();
  return kShared;
}

}  // namespace

const std::vector<const Knob*>& all_options() {
  static const std::vector<const Knob*> kAll = [] {
    std::vector<const Knob*> all = shared_options();
    for (const backends::Backend* b : backends::all_backends())
      for (const Knob& k : b->knobs()) all.push_back(&k);
    return all;
  }();
  return kAll;
}

const Knob& find_option(const std::string& key) {
  std::string known;
  for (const Knob* k : all_options()) {
    if (k->key == key) return *k;
    known += (known.empty() ? "" : ", ") + k->key;
  }
  fail(TC_ERROR_INVALID_ARGUMENT, "unknown option '" + key + "' (known options: " + known + ")");
}

void OptionSet::set(const std::string& key, const std::string& value) {
  find_option(key).parse(value);
  values_[key] = value;
}

const std::string& OptionSet::get(const std::string& key) const {
  const Knob& k = find_option(key);
  auto it = values_.find(key);
  return it != values_.end() ? it->second : k.default_value;
}

std::string OptionSet::to_string() const {
  std::string out;
  for (const Knob* k : all_options()) out += (out.empty() ? "" : " ") + k->key + "=" + get(k->key);
  return out;
}

backends::KnobValues OptionSet::values_for(const backends::Backend& backend) const {
  std::vector<const Knob*> knobs = shared_options();
  for (const Knob& k : backend.knobs()) knobs.push_back(&k);
  backends::KnobValues out(knobs);
  for (const auto& [key, value] : values_) {
    const Knob& k = find_option(key);
    bool applies = std::find(knobs.begin(), knobs.end(), &k) != knobs.end();
    if (applies) out.set(key, value);
  }
  return out;
}

}  // namespace tc::tune
