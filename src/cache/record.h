// record.h — one entry of the compilation cache and its bytes in the database: the full key
// text (compared on every read, so a hash collision can never hand out another def's kernel),
// the winning knob values as tc_options_set accepts them, the measurements behind them, what a
// person reads in `tc cache ls` (def, sizes, backend, target), the family that seeds the tuner
// at other sizes, the compiled artefact where the backend can reload one, and a SHA-256
// checksum over all of it, verified on every read. The encoding — length-prefixed fields after
// a schema line, then the checksum — is shared with the tuning history (history.h) through
// encode_fields/decode_fields; an entry of another schema is not decoded. It knows nothing of
// LMDB (store.h) or of what the key text says (src/tune builds it).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tc::cache {

// 3: records name their backend; the history table exists.
constexpr int kSchemaVersion = 3;

struct Record {
  std::string key;       // the full key text
  std::string knobs;     // "cpu.tile=32x4 cpu.unroll=8": applied with tc_options_set
  double best_ms = 0;    // median time of the stored knobs
  double default_ms = 0; // median time of the default point, measured alongside
  int64_t candidates = 0;  // candidates measured to find it
  std::string date;      // UTC, ISO 8601
  std::string libtc;     // the libtc version that stored it
  std::string def;       // the def's name as the user wrote it ("mm")
  std::string sizes;     // the input signature for people: "M=64 K=32 N=48"
  std::string backend;   // the backend's name ("cpu")
  std::string target;    // the backend's target key (cpu: the Halide target string)
  std::string family;    // the same def, backend and target at any sizes: seeds the tuner
  std::string artefact;  // the backend's compiled code (binary), or empty: then recompile from knobs
};

std::string encode(const Record& r);
// The record, or nullopt with `why` set (truncated, not a record, another schema, checksum).
std::optional<Record> decode(const std::string& bytes, std::string& why);

// Now, as records and history entries date themselves: UTC, ISO 8601 ("2026-11-23T05:00:00Z").
std::string utc_now();

// The database key of a key text: its SHA-256, in hex.
std::string key_hash(const std::string& key_text);

// The encoding of every cache entry: "<magic> <schema>\n", then per field
// "<name>:<length>:<bytes>\n" (any bytes), then "checksum:<SHA-256 of all before, hex>\n".
using Fields = std::vector<std::pair<std::string, std::string>>;
std::string encode_fields(const std::string& magic, const Fields& fields);
// The fields by name, or nullopt with `why` naming the problem as a `what` ("record", "history
// entry"): not one, truncated or malformed, another schema, checksum mismatch, a field of
// `required` missing.
std::optional<std::map<std::string, std::string>> decode_fields(const std::string& bytes, const std::string& magic,
                                                                const std::string& what,
                                                                const std::vector<const char*>& required,
                                                                std::string& why);
// Numbers as fields: doubles round-trip exactly.
std::string number_text(double v);

}  // namespace tc::cache
