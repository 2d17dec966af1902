// knob.h — an option declared as data: its key ("cpu.tile"), kind, allowed values, default,
// one line of help, and the values an autotuner should try for a bound def (fixed, or derived
// from the bound sizes). A value is parsed and validated once, by its declaration, into a
// KnobValue; backends read parsed values (KnobValues), never strings. Options are declared next
// to the code that reads them (the general ones in registry.h, each backend's with it, the
// cache's and the tuner's in src/tune); tune/options.h lists them all.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/bind.h"

namespace tc::backends {

enum class KnobKind {
  Integer,  // min..max
  Choice,   // one of `choices`
  Boolean,  // 1 or 0
  Pair,     // XxY, each in min..max
  Text,     // one of `choices`, or any other one-line text (named `text_name` in the values)
  Sizes,    // X, XxY, ... up to `max_items` numbers, each in min..max
  Seconds,  // a duration: decimal seconds with at most 3 decimals ("0.5"), min..max milliseconds
};

// A parsed value.
struct KnobValue {
  std::string text;      // as given, e.g. "32x4"
  bool is_auto = false;  // the word "auto" (where the knob allows it)
  int64_t x = 0, y = 0;  // Integer, Boolean (0/1) and Pair (XxY) values; Seconds: milliseconds
  std::vector<int64_t> sizes;  // Sizes values, in the order given
};

struct Knob {
  std::string key;
  KnobKind kind = KnobKind::Integer;
  std::string default_value;
  std::string help;                  // one line
  bool allows_auto = false;          // "auto": the backend decides
  std::vector<std::string> choices;  // Choice
  int64_t min = 0, max = 0;          // Integer, each half of a Pair or item of Sizes; Seconds: ms
  int max_items = 3;                 // Sizes
  std::string text_name;             // Text: what the free text is ("DIR")
  // Text: checks a free text (not one of `choices`) further; throws TC_ERROR_INVALID_ARGUMENT.
  std::function<void(const std::string& text)> check_text;
  // What a tuner tries for `bound` (as value texts); empty: not tuned.
  std::function<std::vector<std::string>(const ir::BoundDef& bound)> domain;
  // The tuner measures each of its other values (with the starting point's other knobs) in its
  // first generation, before its random points: another route to the same result.
  bool tried_first = false;

  // "auto|1..64", "cpu|reference", "auto|1..4096x1..4096", "1|0".
  std::string values_text() const;
  // Throws TC_ERROR_INVALID_ARGUMENT naming the key, the value and the allowed values.
  KnobValue parse(const std::string& text) const;
};

// Parsed values of a set of knobs; a knob not set has its default. Immutable once built, so
// any number of threads may read it.
class KnobValues {
 public:
  explicit KnobValues(std::vector<const Knob*> knobs = {});
  void set(const std::string& key, const std::string& text);  // validates
  const KnobValue& get(const std::string& key) const;  // TC_ERROR_INTERNAL for an undeclared key
  int64_t integer(const std::string& key) const { return get(key).x; }
  double seconds(const std::string& key) const { return static_cast<double>(get(key).x) / 1000; }
  bool flag(const std::string& key) const { return get(key).x != 0; }
  bool is_auto(const std::string& key) const { return get(key).is_auto; }
  const std::string& text(const std::string& key) const { return get(key).text; }

 private:
  const Knob& knob(const std::string& key) const;
  std::vector<const Knob*> knobs_;
  std::map<std::string, KnobValue> values_;
};

// Domain helpers: powers of two from `lo` up to min(hi, limit), as texts; the same values
// for every bound def.
std::vector<std::string> powers_of_two(int64_t lo, int64_t hi, int64_t limit);
std::function<std::vector<std::string>(const ir::BoundDef&)> fixed_values(std::vector<std::string> values);

// An Integer knob of values lo..hi.
Knob integer_option(const std::string& key, const std::string& default_value, int64_t lo, int64_t hi,
                    const std::string& help);
// A Choice knob of `choices`; a Text knob: one of `choices` or a free text named `text_name`.
Knob choice_option(const std::string& key, const std::string& default_value, std::vector<std::string> choices,
                   const std::string& help);
Knob text_option(const std::string& key, const std::string& default_value, std::vector<std::string> choices,
                 const std::string& text_name, const std::string& help);

}  // namespace tc::backends
