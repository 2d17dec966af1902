// remote.h — the cache's remote tier: records and tuning history kept in a Redis server that
// many machines share, so that a cluster tunes a kernel once. A record is stored under
// "libtc:record:<key hash>" and a key's history in the hash "libtc:history:<key hash>" (one
// field per knob set, the local table's naming); every value is signed (signing.h) and one
// that does not verify, decode or match its key is never handed out. Writing a record is a
// compare-and-set (WATCH/MULTI/EXEC): the faster record wins, whichever machine writes last.
//
// The remote must never make things worse: each connect and each call has a time limit
// (option cache.remote_timeout, default 300 ms), SIGPIPE is never raised, a failure is
// TC_ERROR_CACHE naming the server and the problem, and after a failure to reach the server
// (refused, timed out, an answer that is not Redis's) lookups skip it for kPauseSeconds, so that
// a server that is down costs a process one time limit rather than one per tc_compile.
// Connections are kept for reuse, per server and process. It knows nothing of LMDB (store.h)
// or of what the key text says (src/tune).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cache/history.h"
#include "cache/record.h"
#include "cache/store.h"

namespace tc::cache {

constexpr int kPauseSeconds = 30;

struct RemoteSettings {
  std::string url;       // redis://HOST:PORT[/DB] or unix:///PATH
  std::string key_file;  // the signing secret (signing.h)
  int timeout_ms = 300;  // each connect, and each call's wait for the server
};

// Throws TC_ERROR_INVALID_ARGUMENT saying what is wrong with a cache.remote URL.
void check_remote_url(const std::string& url);

class Remote {
 public:
  struct Address;
  // Reads the key (TC_ERROR_CACHE) and parses the URL (TC_ERROR_INVALID_ARGUMENT); connects on
  // first use.
  static std::shared_ptr<Remote> open(const RemoteSettings& settings);
  ~Remote();

  // The sound record of `key_text`, or nullopt if the server has none. Throws TC_ERROR_CACHE
  // when the server cannot be used or the record is refused (its signature, damage, another key).
  std::optional<Record> get(const std::string& key_text) const;
  // Stores r unless a sound record of the same key with a smaller or equal best_ms is there
  // (a refused one is replaced); returns whether it stored.
  bool put_if_faster(const Record& r) const;
  // Stores (or replaces) the history entry of h.key and h.knobs.
  void put_history(const HistoryEntry& h) const;
  // The history of `key_text`; refused entries reported through `damaged` and left out.
  std::vector<HistoryEntry> history(const std::string& key_text, const Store::Damaged& damaged) const;
  // Every record, and every history entry (by key hash), refused ones reported through
  // `damaged(database key, why)` with the local tables' naming ("<hash>", "<hash>:<knobs hash>").
  std::vector<Record> all(const Store::Damaged& damaged) const;
  std::vector<HistoryEntry> all_history(const Store::Damaged& damaged) const;

  // "" if lookups may use the server now; else why they skip it (a recent failure to reach it).
  std::string paused() const;
  const std::string& url() const { return settings_.url; }

  class Connection;  // one connection to the server (remote.cpp)

 private:
  Remote(RemoteSettings settings, std::string secret, std::unique_ptr<Address> address);
  std::string where() const;  // "remote cache '<url>': ", how its messages begin
  std::optional<Record> checked_record(const std::string& redis_key, const std::string& value,
                                       const std::string* key_text, std::string& why) const;
  // The sound entries of one history hash; the others reported through `damaged`.
  std::vector<HistoryEntry> entries_of(const std::string& redis_key, const Store::Damaged& damaged) const;
  std::optional<HistoryEntry> checked_history(const std::string& redis_key, const std::string& field,
                                              const std::string& value, std::string& why) const;

  RemoteSettings settings_;
  std::string secret_;
  std::unique_ptr<Address> address_;
};

}  // namespace tc::cache
