// registry.h — every backend of this build, and every option key: the general options
// (backend, checked, threads) followed by each backend's knobs, in that order. The one list
// tc_option_info, tc_options_set and the tuner read. It links each backend library.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "backends/backend.h"

namespace tc::backends {

const std::vector<const Backend*>& all_backends();
// Throws TC_ERROR_INVALID_ARGUMENT naming the backends of this build.
const Backend& find_backend(const std::string& name);

// Every option: the general ones first, then each backend's knobs.
const std::vector<const Knob*>& all_options();
// Throws TC_ERROR_INVALID_ARGUMENT "unknown option ... (known options: ...)".
const Knob& find_option(const std::string& key);

// A set of option values as the user gave them (tc_options), each validated on set.
class OptionSet {
 public:
  void set(const std::string& key, const std::string& value);
  // The value set, or the default. Throws TC_ERROR_INVALID_ARGUMENT for an unknown key.
  const std::string& get(const std::string& key) const;
  bool is_set(const std::string& key) const { return values_.count(key) > 0; }
  // Every key with its value, in the order of all_options(): "backend=cpu checked=1 ...".
  std::string to_string() const;
  const Backend& backend() const { return find_backend(get("backend")); }
  // The general options and `backend`'s knobs, parsed, for compile().
  KnobValues values_for(const Backend& backend) const;

 private:
  std::map<std::string, std::string> values_;  // node-based: get()'s references stay valid
};

}  // namespace tc::backends
