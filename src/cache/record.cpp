// record.cpp — see record.h.
#include "cache/record.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "support/sha256.h"

namespace tc::cache {
namespace {

const char* const kMagic = "tc-cache-record";

}  // namespace

std::string key_hash(const std::string& key_text) { return sha256_hex(key_text); }

std::string utc_now() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string number_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string encode_fields(const std::string& magic, const Fields& fields) {
  std::string out = magic + " " + std::to_string(kSchemaVersion) + "\n";
  for (const auto& [name, value] : fields) out += name + ":" + std::to_string(value.size()) + ":" + value + "\n";
  return out + "checksum:" + sha256_hex(out) + "\n";
}

std::optional<std::map<std::string, std::string>> decode_fields(const std::string& bytes, const std::string& magic,
                                                                const std::string& what,
                                                                const std::vector<const char*>& required,
                                                                std::string& why) {
  std::string head = magic + " ";
  if (bytes.compare(0, head.size(), head) != 0) {
    why = "not a libtc cache " + what;
    return std::nullopt;
  }
  size_t eol = bytes.find('\n');
  if (eol == std::string::npos) {
    why = "truncated " + what;
    return std::nullopt;
  }
  if (std::atoi(bytes.c_str() + head.size()) != kSchemaVersion) {
    why = what + " of cache schema " + bytes.substr(head.size(), eol - head.size()) + " (this libtc reads schema " +
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
    why = "truncated or malformed " + what;
    return std::nullopt;
  }
  if (bytes.compare(at + 9, 64, sha256_hex(bytes.substr(0, at))) != 0) {
    why = what + " checksum mismatch (the " + what + " is damaged)";
    return std::nullopt;
  }
  for (const char* name : required)
    if (!fields.count(name)) {
      why = what + " without field '" + name + "'";
      return std::nullopt;
    }
  return fields;
}

std::string encode(const Record& r) {
  return encode_fields(kMagic, {{"key", r.key},
                                {"knobs", r.knobs},
                                {"best_ms", number_text(r.best_ms)},
                                {"default_ms", number_text(r.default_ms)},
                                {"candidates", std::to_string(r.candidates)},
                                {"date", r.date},
                                {"libtc", r.libtc},
                                {"def", r.def},
                                {"sizes", r.sizes},
                                {"backend", r.backend},
                                {"target", r.target},
                                {"family", r.family},
                                {"artefact", r.artefact}});
}

std::optional<Record> decode(const std::string& bytes, std::string& why) {
  auto f = decode_fields(bytes, kMagic, "record",
                         {"key", "knobs", "best_ms", "default_ms", "candidates", "date", "libtc", "def", "sizes",
                          "backend", "target", "family", "artefact"},
                         why);
  if (!f) return std::nullopt;
  Record r;
  r.key = (*f)["key"];
  r.knobs = (*f)["knobs"];
  r.best_ms = std::strtod((*f)["best_ms"].c_str(), nullptr);
  r.default_ms = std::strtod((*f)["default_ms"].c_str(), nullptr);
  r.candidates = std::strtoll((*f)["candidates"].c_str(), nullptr, 10);
  r.date = (*f)["date"];
  r.libtc = (*f)["libtc"];
  r.def = (*f)["def"];
  r.sizes = (*f)["sizes"];
  r.backend = (*f)["backend"];
  r.target = (*f)["target"];
  r.family = (*f)["family"];
  r.artefact = (*f)["artefact"];
  return r;
}

}  // namespace tc::cache
