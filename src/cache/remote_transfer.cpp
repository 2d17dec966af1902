// remote_transfer.cpp — see remote_transfer.h.
#include "cache/remote_transfer.h"

namespace tc::cache {
namespace {

void ignore(const std::string&, const std::string&) {}

}  // namespace

Moved push(const Store& local, const Remote& remote) {
  Moved m;
  for (const Record& r : local.all(ignore)) m.records += remote.put_if_faster(r) ? 1 : 0;
  for (const HistoryEntry& h : local.all_history(ignore)) {
    remote.put_history(h);
    ++m.history;
  }
  return m;
}

Moved pull(Store& local, const Remote& remote) {
  Moved m;
  for (const Record& r : remote.all(ignore)) m.records += local.put_if_faster(r) ? 1 : 0;
  for (const HistoryEntry& h : remote.all_history(ignore)) {
    local.put_history(h);
    ++m.history;
  }
  return m;
}

Moved push_key(const Store& local, const Remote& remote, const std::string& key_text) {
  Moved m;
  if (std::optional<Record> r = local.get(key_text)) m.records += remote.put_if_faster(*r) ? 1 : 0;
  for (const HistoryEntry& h : local.history(key_text, ignore)) {
    remote.put_history(h);
    ++m.history;
  }
  return m;
}

Moved pull_key(Store& local, const Remote& remote, const std::string& key_text) {
  Moved m;
  if (std::optional<Record> r = remote.get(key_text)) m.records += local.put_if_faster(*r) ? 1 : 0;
  for (const HistoryEntry& h : remote.history(key_text, ignore)) {
    local.put_history(h);
    ++m.history;
  }
  return m;
}

}  // namespace tc::cache
