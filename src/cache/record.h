// record.h — one entry of the compilation cache and its bytes in the database: the full key
// text (compared on every read, so a hash collision can never hand out another def's kernel),
// the winning knob values as tc_options_set accepts them, the measurements behind them, and a
// SHA-256 checksum over all of it, verified on every read. The encoding is length-prefixed
// fields after a schema line; a record of another schema is not decoded. It knows nothing of
// LMDB (store.h) or of what the key text says (the C facade builds it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tc::cache {

constexpr int kSchemaVersion = 1;

struct Record {
  std::string key;       // the full key text
  std::string knobs;     // "cpu.tile=32x4 cpu.unroll=8": applied with tc_options_set
  double best_ms = 0;    // median time of the stored knobs
  double default_ms = 0; // median time of the default point, measured alongside
  int64_t candidates = 0;  // candidates measured to find it
  std::string date;      // UTC, ISO 8601
  std::string libtc;     // the libtc version that stored it
};

std::string encode(const Record& r);
// The record, or nullopt with `why` set (truncated, not a record, another schema, checksum).
std::optional<Record> decode(const std::string& bytes, std::string& why);

// The database key of a key text: its SHA-256, in hex.
std::string key_hash(const std::string& key_text);

}  // namespace tc::cache
