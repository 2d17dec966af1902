// store.h — the cache database: one LMDB environment per directory per process (LMDB's rule:
// never open the same file twice in a process), shared by all threads, opened on first use and
// kept for the life of the process. Two tables: "records", keyed by the SHA-256 of their key
// text, and "history", the tuning history (history.h), keyed so that one key's entries are one
// prefix. Every write is one write transaction: record writers keep the faster of the stored
// and the new record, so concurrent processes never lose the better entry; history writers
// replace the entry of the same key and knobs. LMDB's copy-on-write means a process killed at
// any moment leaves the last committed state. The map doubles when full; readers of dead processes
// are cleared on open. Errors are tc::Error(TC_ERROR_CACHE) naming the path and the problem;
// the caller decides whether that is fatal (writes) or a fallback (tc_compile's lookups).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cache/history.h"
#include "cache/record.h"

namespace tc::cache {

class Store {
 public:
  // The store of directory `dir` (created 0700 with `create`; the database files are 0600).
  // Checks the directory's safety first (location.h). Throws TC_ERROR_CACHE.
  static std::shared_ptr<Store> open(const std::string& dir, bool create);
  // For tools that only read or clear: a directory without a database is TC_ERROR_CACHE "no
  // cache at '<dir>'" and nothing is created.
  static std::shared_ptr<Store> open_existing(const std::string& dir);

  // Reports a damaged entry: its database key and why.
  using Damaged = std::function<void(const std::string&, const std::string&)>;

  // The record for `key_text`, or nullopt if none. A damaged record, or one whose stored key
  // differs from key_text (a hash collision), throws TC_ERROR_CACHE naming the damage.
  std::optional<Record> get(const std::string& key_text) const;
  // Stores r unless a record with the same key and a smaller or equal best_ms is there; returns
  // whether it stored. A damaged stored record is replaced.
  bool put_if_faster(const Record& r);
  // Stores r in place of the record of r.key if that record's knobs are `knobs` (a record its
  // writer now corrects, whatever its time) or there is none; returns whether it stored. A
  // record another writer stored meanwhile (other knobs) is kept.
  bool replace_if_knobs(const Record& r, const std::string& knobs);
  // Every record (damaged ones reported through `damaged(key hash, why)`), in key-hash order.
  std::vector<Record> all(const Damaged& damaged) const;

  // Stores (or replaces) the history entry of h.key and h.knobs.
  void put_history(const HistoryEntry& h);
  // The history of `key_text` (damaged entries, and entries of another key, reported and left out).
  std::vector<HistoryEntry> history(const std::string& key_text, const Damaged& damaged) const;
  // Every history entry, in database-key order (so grouped by key).
  std::vector<HistoryEntry> all_history(const Damaged& damaged) const;

  // Removes every record and history entry in one write transaction; the files stay.
  void clear();

  const std::string& dir() const { return dir_; }
  struct Env;

 private:
  explicit Store(std::string dir, std::shared_ptr<Env> env) : dir_(std::move(dir)), env_(std::move(env)) {}
  bool put_unless(const Record& r, const std::function<bool(const Record&)>& keep);
  std::string dir_;
  std::shared_ptr<Env> env_;
};

}  // namespace tc::cache
