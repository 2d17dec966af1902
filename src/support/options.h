// options.h — the table of option keys, their allowed values and defaults, and the option
// set passed from tc_options to the backends. The one place option keys are defined.
#pragma once

#include <map>
#include <string>

namespace tc {

class Options {
 public:
  // Throws TC_ERROR_INVALID_ARGUMENT for an unknown key or a value the key does not allow.
  void set(const std::string& key, const std::string& value);
  // The value set, or the key's default. Throws TC_ERROR_INVALID_ARGUMENT for an unknown key.
  const std::string& get(const std::string& key) const;
  bool flag(const std::string& key) const { return get(key) == "1"; }
  // Every key with its value, in table order: "backend=cpu checked=1 ...".
  std::string to_string() const;

 private:
  std::map<std::string, std::string> values_;
};

}  // namespace tc
