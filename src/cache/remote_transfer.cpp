// remote_transfer.cpp — see remote_transfer.h. Store and Remote answer the same calls (get,
// history, all, all_history, put_if_faster, put_history), so one copy serves both directions.
#include "cache/remote_transfer.h"

namespace tc::cache {
namespace {

void ignore(const std::string&, const std::string&) {}

template <typename From, typename To>
Moved copy(const From& from, To& to, const std::string* key_text) {
  Moved m;
  std::vector<Record> records;
  if (!key_text) records = from.all(ignore);
  else if (std::optional<Record> r = from.get(*key_text)) records.push_back(std::move(*r));
  m.offered = records.size();
  for (const Record& r : records) m.records += to.put_if_faster(r) ? 1 : 0;
  for (const HistoryEntry& h : key_text ? from.history(*key_text, ignore) : from.all_history(ignore)) {
    to.put_history(h);
    ++m.history;
  }
  return m;
}

}  // namespace

Moved push(const Store& local, const Remote& remote) { return copy(local, remote, nullptr); }
Moved pull(Store& local, const Remote& remote) { return copy(remote, local, nullptr); }
Moved push_key(const Store& local, const Remote& remote, const std::string& key_text) {
  return copy(local, remote, &key_text);
}
Moved pull_key(Store& local, const Remote& remote, const std::string& key_text) {
  return copy(remote, local, &key_text);
}

}  // namespace tc::cache
