// knob.cpp — see knob.h.
#include "backends/knob.h"

#include <algorithm>

#include "support/decimal.h"
#include "support/error.h"

namespace tc::backends {
namespace {

std::string range_text(int64_t lo, int64_t hi) { return std::to_string(lo) + ".." + std::to_string(hi); }

// 1500 -> "1.5": milliseconds as the shortest decimal seconds.
std::string seconds_text(int64_t ms) {
  std::string out = std::to_string(ms / 1000);
  if (int64_t frac = ms % 1000) {
    std::string f = std::to_string(1000 + frac).substr(1);
    out += "." + f.substr(0, f.find_last_not_of('0') + 1);
  }
  return out;
}

// "0.25" -> 250 within [lo, hi] milliseconds: digits, optionally a point and 1 to 3 more
// digits; anything else (signs, exponents, a fourth decimal, out of range) -> -1.
int64_t milliseconds_in(const std::string& text, int64_t lo, int64_t hi) {
  size_t point = text.find('.');
  std::string whole = text.substr(0, point), frac = point == std::string::npos ? "" : text.substr(point + 1);
  if (point != std::string::npos && (frac.empty() || frac.size() > 3)) return -1;
  int64_t s = decimal_in(whole, 0, hi / 1000 + 1);
  int64_t f = frac.empty() ? 0 : decimal_in(frac + std::string(3 - frac.size(), '0'), 0, 999);
  if (s < 0 || f < 0) return -1;
  int64_t ms = s * 1000 + f;
  return ms >= lo && ms <= hi ? ms : -1;
}

}  // namespace

std::string Knob::values_text() const {
  std::string out = allows_auto ? "auto|" : "";
  switch (kind) {
    case KnobKind::Integer: return out + range_text(min, max);
    case KnobKind::Boolean: return out + "1|0";
    case KnobKind::Pair: return out + range_text(min, max) + "x" + range_text(min, max);
    case KnobKind::Sizes: return out + "N[xN]... (at most " + std::to_string(max_items) + ", N in " + range_text(min, max) + ")";
    case KnobKind::Seconds: return out + seconds_text(min) + ".." + seconds_text(max) + " (seconds, up to 3 decimals)";
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
    case KnobKind::Seconds:
      v.x = milliseconds_in(text, min, max);
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

Knob integer_option(const std::string& key, const std::string& default_value, int64_t lo, int64_t hi,
                    const std::string& help) {
  Knob k{key, KnobKind::Integer, default_value, help};
  k.min = lo;
  k.max = hi;
  return k;
}

Knob choice_option(const std::string& key, const std::string& default_value, std::vector<std::string> choices,
                   const std::string& help) {
  Knob k{key, KnobKind::Choice, default_value, help};
  k.choices = std::move(choices);
  return k;
}

Knob text_option(const std::string& key, const std::string& default_value, std::vector<std::string> choices,
                 const std::string& text_name, const std::string& help) {
  Knob k{key, KnobKind::Text, default_value, help};
  k.choices = std::move(choices);
  k.text_name = text_name;
  return k;
}

}  // namespace tc::backends
