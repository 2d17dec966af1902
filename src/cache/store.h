// store.h — the cache database: one LMDB environment per directory per process (LMDB's rule:
// never open the same file twice in a process), shared by all threads, opened on first use and
// kept for the life of the process. Records are keyed by the SHA-256 of their key text. Writers
// keep the faster of the stored and the new record in one write transaction, so concurrent
// processes never lose the better entry; LMDB's copy-on-write means a process killed at any
// moment leaves the last committed state. The map doubles when full; readers of dead processes
// are cleared on open. Errors are tc::Error(TC_ERROR_CACHE) naming the path and the problem;
// the caller decides whether that is fatal (writes) or a fallback (tc_compile's lookups).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cache/record.h"

namespace tc::cache {

class Store {
 public:
  // The store of directory `dir` (created 0700 with `create`; the database files are 0600).
  // Checks the directory's safety first (location.h). Throws TC_ERROR_CACHE.
  static std::shared_ptr<Store> open(const std::string& dir, bool create);

  // The record for `key_text`, or nullopt if none. A damaged record, or one whose stored key
  // differs from key_text (a hash collision), throws TC_ERROR_CACHE naming the damage.
  std::optional<Record> get(const std::string& key_text) const;
  // Stores r unless a record with the same key and a smaller or equal best_ms is there; returns
  // whether it stored. A damaged stored record is replaced.
  bool put_if_faster(const Record& r);
  // Every record (damaged ones reported through `damaged(key hash, why)`), in key-hash order.
  std::vector<Record> all(const std::function<void(const std::string&, const std::string&)>& damaged) const;

  const std::string& dir() const { return dir_; }
  struct Env;

 private:
  explicit Store(std::string dir, std::shared_ptr<Env> env) : dir_(std::move(dir)), env_(std::move(env)) {}
  std::string dir_;
  std::shared_ptr<Env> env_;
};

}  // namespace tc::cache
