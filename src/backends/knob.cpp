// knob.cpp — see knob.h.
#include "backends/knob.h"

#include <algorithm>

#include "support/decimal.h"
#include "support/error.h"

namespace tc::backends {
namespace {

std::string range_text(int64_t lo, int64_t hi) { return std::to_string(lo) + ".." + std::to_string(hi); }

}  // namespace

std::string Knob::values_text() const {
  std::string out = allows_auto ? "auto|" : "";
  switch (kind) {
    case KnobKind::Integer: return out + range_text(min, max);
    case KnobKind::Boolean: return out + "1|0";
    case KnobKind::Pair: return out + range_text(min, max) + "x" + range_text(min, max);
    case KnobKind::Sizes: return out + "N[xN]... (at most " + std::to_string(max_items) + ", N in " + range_text(min, max) + ")";
    case KnobKind::Choice:
    case KnobKind::Text:
      for (size_t i = 0; i < choices.size(); ++i) out += (i ? "|" : "") + choices[i];
      return kind == KnobKind::Text ? out + (choices.empty() ? "" : "|") + text_name : out;
  }
  return out;
}

KnobValue Knob::parse(const std::string& text) const {
  KnobValue v;
  v.text = text;
  if (allows_auto && text == "auto") {
    v.is_auto = true;
    return v;
  }
  bool ok = false;
  switch (kind) {
    case KnobKind::Integer:
      v.x = decimal_in(text, min, max);
      ok = v.x >= 0;
      break;
    case KnobKind::Boolean:
      ok = text == "0" || text == "1";
      v.x = text == "1";
      break;
    case KnobKind::Pair: {
      size_t at = text.find('x');
      if (at == std::string::npos) break;
      v.x = decimal_in(text.substr(0, at), min, max);
      v.y = decimal_in(text.substr(at + 1), min, max);
      ok = v.x >= 0 && v.y >= 0;
      break;
    }
    case KnobKind::Sizes: {
      ok = true;
      for (size_t from = 0; ok;) {
        size_t at = text.find('x', from);
        int64_t n = decimal_in(text.substr(from, at == std::string::npos ? at : at - from), min, max);
        ok = n >= 0 && static_cast<int>(v.sizes.size()) < max_items;
        v.sizes.push_back(n);
        if (at == std::string::npos) break;
        from = at + 1;
      }
      break;
    }
    case KnobKind::Choice:
      ok = std::find(choices.begin(), choices.end(), text) != choices.end();
      break;
    case KnobKind::Text:
      ok = !text.empty() && text.find('\n') == std::string::npos;
      if (ok && check_text && std::find(choices.begin(), choices.end(), text) == choices.end()) check_text(text);
      break;
  }
  if (!ok) fail(TC_ERROR_INVALID_ARGUMENT, "option '" + key + "' cannot be '" + text + "' (allowed: " + values_text() + ")");
  return v;
}

KnobValues::KnobValues(std::vector<const Knob*> knobs) : knobs_(std::move(knobs)) {
  for (const Knob* k : knobs_) values_[k->key] = k->parse(k->default_value);
}

const Knob& KnobValues::knob(const std::string& key) const {
  for (const Knob* k : knobs_)
    if (k->key == key) return *k;
  fail(TC_ERROR_INTERNAL, "option '" + key + "' is not declared for this backend");
}

void KnobValues::set(const std::string& key, const std::string& text) { values_[key] = knob(key).parse(text); }

const KnobValue& KnobValues::get(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) knob(key);  // throws: not declared
  return it->second;
}

std::vector<std::string> powers_of_two(int64_t lo, int64_t hi, int64_t limit) {
  std::vector<std::string> out;
  for (int64_t p = lo; p <= std::min(hi, limit); p *= 2) out.push_back(std::to_string(p));
  if (out.empty()) out.push_back(std::to_string(lo));
  return out;
}

std::function<std::vector<std::string>(const ir::BoundDef&)> fixed_values(std::vector<std::string> values) {
  return [values = std::move(values)](const ir::BoundDef&) { return values; };
}

}  // namespace tc::backends
