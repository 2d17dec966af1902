// history.cpp — see history.h.
#include "cache/history.h"

#include <cstdlib>

#include "support/sha256.h"

namespace tc::cache {
namespace {

const char* const kMagic = "tc-cache-history";
const Outcome kOutcomes[] = {Outcome::Measured, Outcome::CutOff, Outcome::CompileFailed, Outcome::RunFailed,
                             Outcome::WrongResult};

}  // namespace

const char* outcome_text(Outcome o) {
  switch (o) {
    case Outcome::Measured: return "measured";
    case Outcome::CutOff: return "cut-off";
    case Outcome::CompileFailed: return "compile-failed";
    case Outcome::RunFailed: return "run-failed";
    case Outcome::WrongResult: return "wrong-result";
  }
  return "?";
}

std::string encode(const HistoryEntry& h) {
  return encode_fields(kMagic, {{"key", h.key},
                                {"knobs", h.knobs},
                                {"outcome", outcome_text(h.outcome)},
                                {"ms", number_text(h.ms)},
                                {"why", h.why},
                                {"date", h.date}});
}

std::optional<HistoryEntry> decode_history(const std::string& bytes, std::string& why) {
  auto f = decode_fields(bytes, kMagic, "history entry", {"key", "knobs", "outcome", "ms", "why", "date"}, why);
  if (!f) return std::nullopt;
  HistoryEntry h;
  h.key = (*f)["key"];
  h.knobs = (*f)["knobs"];
  h.ms = std::strtod((*f)["ms"].c_str(), nullptr);
  h.why = (*f)["why"];
  h.date = (*f)["date"];
  bool known = false;
  for (Outcome o : kOutcomes)
    if ((*f)["outcome"] == outcome_text(o)) h.outcome = o, known = true;
  if (!known) {
    why = "history entry with an unknown outcome '" + (*f)["outcome"] + "'";
    return std::nullopt;
  }
  return h;
}

std::string history_prefix(const std::string& key_text) { return key_hash(key_text) + ":"; }

std::string history_key(const std::string& key_text, const std::string& knobs) {
  return history_prefix(key_text) + sha256_hex(knobs).substr(0, 32);
}

}  // namespace tc::cache
