// history.h — one entry of the tuning history: a candidate the tuner tried for one cache key
// (the full key text and the knob values it tried), what came of it (a median time, a run cut
// short with the one time seen, or why it failed) and when. Encoded with the records' checksummed
// field encoding (record.h) under its own magic; keyed in the database so that one key's
// history is one prefix (history_key). It knows nothing of LMDB (store.h) or of the tuner.
#pragma once

#include <optional>
#include <string>

#include "cache/record.h"

namespace tc::cache {

enum class Outcome {
  Measured,       // ms: the median of its timed runs
  CutOff,         // ms: its first timed run, more than 5x the best then; not run again
  CompileFailed,  // why: the backend's message
  RunFailed,      // why: the run's message
  WrongResult,    // why: which output differed from the starting point's
};
const char* outcome_text(Outcome o);  // "measured", "cut-off", "compile-failed", "run-failed", "wrong-result"

struct HistoryEntry {
  std::string key;    // the full key text (as a record's)
  std::string knobs;  // "cpu.tile=32x4 cpu.unroll=8": every tuned knob
  Outcome outcome = Outcome::Measured;
  double ms = 0;      // Measured, CutOff: the time; failures: 0
  std::string why;    // failures: the message; else ""
  std::string date;   // UTC, ISO 8601

  bool timed() const { return outcome == Outcome::Measured || outcome == Outcome::CutOff; }
};

std::string encode(const HistoryEntry& h);
// The entry, or nullopt with `why` set (as decode(Record): damage, another schema, an outcome
// this libtc does not know).
std::optional<HistoryEntry> decode_history(const std::string& bytes, std::string& why);

// The database key of an entry: key_hash(key) + ":" + the first 32 hex digits of the knobs'
// SHA-256 (LMDB keys are at most 511 bytes); history_prefix(key) begins every entry of a key.
std::string history_key(const std::string& key_text, const std::string& knobs);
std::string history_prefix(const std::string& key_text);

}  // namespace tc::cache
