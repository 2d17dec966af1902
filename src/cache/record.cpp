// record.cpp — see record.h.
#include "cache/record.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

#include "support/sha256.h"

namespace tc::cache {
namespace {

const char* const kMagic = "tc-cache-record ";

void field(std::string& out, const char* name, const std::string& value) {
  out += name;
  out += ":" + std::to_string(value.size()) + ":" + value + "\n";
}

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

std::string key_hash(const std::string& key_text) { return sha256_hex(key_text); }

std::string encode(const Record& r) {
  std::string out = kMagic + std::to_string(kSchemaVersion) + "\n";
  field(out, "key", r.key);
  field(out, "knobs", r.knobs);
  field(out, "best_ms", number(r.best_ms));
  field(out, "default_ms", number(r.default_ms));
  field(out, "candidates", std::to_string(r.candidates));
  field(out, "date", r.date);
  field(out, "libtc", r.libtc);
  return out + "checksum:" + sha256_hex(out) + "\n";
}

std::optional<Record> decode(const std::string& bytes, std::string& why) {
  std::string magic = kMagic;
  if (bytes.compare(0, magic.size(), magic) != 0) {
    why = "not a libtc cache record";
    return std::nullopt;
  }
  size_t eol = bytes.find('\n');
  if (eol == std::string::npos) {
    why = "truncated record";
    return std::nullopt;
  }
  if (std::atoi(bytes.c_str() + magic.size()) != kSchemaVersion) {
    why = "record of cache schema " + bytes.substr(magic.size(), eol - magic.size()) + " (this libtc reads schema " +
          std::to_string(kSchemaVersion) + ")";
    return std::nullopt;
  }
  std::map<std::string, std::string> fields;
  size_t at = eol + 1;
  while (at < bytes.size() && bytes.compare(at, 9, "checksum:") != 0) {
    size_t colon = bytes.find(':', at), colon2 = colon == std::string::npos ? colon : bytes.find(':', colon + 1);
    if (colon2 == std::string::npos) break;
    size_t len = std::strtoull(bytes.c_str() + colon + 1, nullptr, 10);
    if (colon2 + 1 + len + 1 > bytes.size() || bytes[colon2 + 1 + len] != '\n') break;
    fields[bytes.substr(at, colon - at)] = bytes.substr(colon2 + 1, len);
    at = colon2 + 1 + len + 1;
  }
  if (bytes.compare(at, 9, "checksum:") != 0 || bytes.size() != at + 9 + 64 + 1) {
    why = "truncated or malformed record";
    return std::nullopt;
  }
  if (bytes.compare(at + 9, 64, sha256_hex(bytes.substr(0, at))) != 0) {
    why = "record checksum mismatch (the record is damaged)";
    return std::nullopt;
  }
  for (const char* name : {"key", "knobs", "best_ms", "default_ms", "candidates", "date", "libtc"})
    if (!fields.count(name)) {
      why = std::string("record without field '") + name + "'";
      return std::nullopt;
    }
  Record r;
  r.key = fields["key"];
  r.knobs = fields["knobs"];
  r.best_ms = std::strtod(fields["best_ms"].c_str(), nullptr);
  r.default_ms = std::strtod(fields["default_ms"].c_str(), nullptr);
  r.candidates = std::strtoll(fields["candidates"].c_str(), nullptr, 10);
  r.date = fields["date"];
  r.libtc = fields["libtc"];
  return r;
}

}  // namespace tc::cache
