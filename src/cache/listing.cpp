// listing.cpp — see listing.h.
#include "cache/listing.h"

#include <algorithm>
#include <map>

namespace tc::cache {

namespace {

// Source: Store or Remote (both list every record and history entry, naming the damaged).
template <typename Source>
Listing list_of(const Source& store) {
  Listing out;
  auto damaged_as = [&](const char* table) {
    return [&out, table](const std::string& key, const std::string& why) {
      size_t colon = key.find(':');
      std::string id = colon == std::string::npos ? key.substr(0, 16) : key.substr(0, 16) + ":" + key.substr(colon + 1, 16);
      out.damage.push_back({std::string(table) + " " + id, why});
    };
  };
  std::map<std::string, size_t> by_key;  // key text -> index in entries
  for (Record& r : store.all(damaged_as("record"))) {
    by_key[r.key] = out.entries.size();
    out.entries.push_back({key_hash(r.key), std::move(r), {}});
  }
  for (HistoryEntry& h : store.all_history(damaged_as("history"))) {
    ++out.history_entries;
    auto it = by_key.find(h.key);
    if (it != by_key.end()) out.entries[it->second].history.push_back(std::move(h));
  }
  for (Listing::Entry& e : out.entries)
    std::stable_sort(e.history.begin(), e.history.end(), [](const HistoryEntry& a, const HistoryEntry& b) {
      return a.timed() != b.timed() ? a.timed() : a.timed() && a.ms < b.ms;
    });
  return out;
}

}  // namespace

Listing list(const Store& store) { return list_of(store); }
Listing list(const Remote& remote) { return list_of(remote); }

}  // namespace tc::cache
