// options.h — every option key, collected from the stages that declare them, in this order: the
// general options (backends/registry.h: backend, checked, threads), the cache's
// (cached_compile.h), the tuner's (tuner.h), then each backend's knobs. The one list
// tc_option_info, tc_options_set, compiling and the tuner read; and the set of values a caller
// gives (tc_options).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "backends/registry.h"

namespace tc::tune {

// Every option, in the order above.
const std::vector<const backends::Knob*>& all_options();
// Throws TC_ERROR_INVALID_ARGUMENT "unknown option ... (known options: ...)".
const backends::Knob& find_option(const std::string& key);

// A set of option values as the user gave them (tc_options), each validated on set.
class OptionSet {
 public:
  void set(const std::string& key, const std::string& value);
  // The value set, or the default. Throws TC_ERROR_INVALID_ARGUMENT for an unknown key.
  const std::string& get(const std::string& key) const;
  bool is_set(const std::string& key) const { return values_.count(key) > 0; }
  // Every key with its value, in the order of all_options(): "backend=cpu checked=1 ...".
  std::string to_string() const;
  const backends::Backend& backend() const { return backends::find_backend(get("backend")); }
  // The options every backend sees (general, cache, tuner) and `backend`'s knobs, parsed, for
  // compile().
  backends::KnobValues values_for(const backends::Backend& backend) const;

 private:
  std::map<std::string, std::string> values_;  // node-based: get()'s references stay valid
};

}  // namespace tc::tune
