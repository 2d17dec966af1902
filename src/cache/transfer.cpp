// transfer.cpp — see transfer.h. File: "tc-cache-export 1\n", then per record its length in
// decimal, "\n", and its encoding (record.h, with its own checksum).
#include "cache/transfer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "support/error.h"

namespace tc::cache {
namespace {

const char* const kHeader = "tc-cache-export 1\n";

}  // namespace

size_t export_to(const Store& store, const std::string& file) {
  std::vector<Record> records = store.all([](const std::string&, const std::string&) {});
  std::string tmp = file + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail(TC_ERROR_CACHE, "cannot write '" + tmp + "': " + std::strerror(errno));
    out << kHeader;
    for (const Record& r : records) {
      std::string bytes = encode(r);
      out << bytes.size() << "\n" << bytes;
    }
    if (!out.flush()) fail(TC_ERROR_CACHE, "cannot write '" + tmp + "': " + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), file.c_str()) != 0)
    fail(TC_ERROR_CACHE, "cannot move '" + tmp + "' to '" + file + "': " + std::strerror(errno));
  return records.size();
}

size_t import_from(Store& store, const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(TC_ERROR_CACHE, "cannot read '" + file + "': " + std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string data = ss.str();
  if (data.compare(0, std::strlen(kHeader), kHeader) != 0)
    fail(TC_ERROR_CACHE, "'" + file + "' is not a libtc cache export (version 1)");
  std::vector<Record> records;
  size_t at = std::strlen(kHeader);
  while (at < data.size()) {
    size_t eol = data.find('\n', at);
    if (eol == std::string::npos) fail(TC_ERROR_CACHE, "'" + file + "' is truncated");
    size_t len = std::strtoull(data.c_str() + at, nullptr, 10);
    if (eol + 1 + len > data.size()) fail(TC_ERROR_CACHE, "'" + file + "' is truncated");
    std::string why;
    auto r = decode(data.substr(eol + 1, len), why);
    if (!r) fail(TC_ERROR_CACHE, "'" + file + "': record " + std::to_string(records.size() + 1) + ": " + why);
    records.push_back(*r);
    at = eol + 1 + len;
  }
  size_t stored = 0;
  for (const Record& r : records) stored += store.put_if_faster(r) ? 1 : 0;
  return stored;
}

}  // namespace tc::cache
