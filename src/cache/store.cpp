// store.cpp — see store.h. Every transaction runs under a shared lock of its environment and a
// map resize under the exclusive lock: LMDB allows mdb_env_set_mapsize only while this process
// has no transaction open.
#include "cache/store.h"

#include <lmdb.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <map>
#include <mutex>
#include <shared_mutex>

#include "cache/location.h"
#include "support/error.h"

namespace tc::cache {

struct Store::Env {
  MDB_env* env = nullptr;
  MDB_dbi records = 0, history = 0;
  std::shared_mutex resize;
  std::string path;
};

namespace {

constexpr size_t kInitialMapBytes = size_t{16} << 20;
constexpr unsigned kMaxReaders = 1024;  // reader slots: threads of all processes reading at once

[[noreturn]] void lmdb_fail(const std::string& path, const char* what, int rc) {
  fail(TC_ERROR_CACHE, "cache '" + path + "': " + what + ": " + mdb_strerror(rc));
}

std::shared_ptr<Store::Env> open_env(const std::string& dir) {
  auto e = std::make_shared<Store::Env>();
  e->path = dir;
  int rc = mdb_env_create(&e->env);
  if (rc != 0) lmdb_fail(dir, "cannot create the environment", rc);
  mdb_env_set_maxreaders(e->env, kMaxReaders);
  mdb_env_set_maxdbs(e->env, 4);
  mdb_env_set_mapsize(e->env, kInitialMapBytes);
  // MDB_NOTLS: reader slots belong to transactions, not threads (many short-lived threads).
  rc = mdb_env_open(e->env, dir.c_str(), MDB_NOTLS, 0600);
  if (rc != 0) {
    mdb_env_close(e->env);
    lmdb_fail(dir, "cannot open the database", rc);
  }
  int dead = 0;
  mdb_reader_check(e->env, &dead);
  MDB_txn* txn = nullptr;
  rc = mdb_txn_begin(e->env, nullptr, 0, &txn);
  if (rc == 0) rc = mdb_dbi_open(txn, "records", MDB_CREATE, &e->records);
  if (rc == 0) rc = mdb_dbi_open(txn, "history", MDB_CREATE, &e->history);
  if (rc == 0) rc = mdb_txn_commit(txn);
  else if (txn) mdb_txn_abort(txn);
  if (rc != 0) {
    mdb_env_close(e->env);
    lmdb_fail(dir, "cannot open its tables", rc);
  }
  return e;
}

// One environment per canonical directory per process, never closed: closing one while another
// thread (or a static destructor at exit) still uses it is unsafe, and LMDB forbids opening the
// same file twice in a process. The table is never destroyed, so it stays reachable (no leak
// reported) and usable until the very end of the process.
std::shared_ptr<Store::Env> env_for(const std::string& dir) {
  static std::mutex& mu = *new std::mutex;
  static auto& envs = *new std::map<std::string, std::shared_ptr<Store::Env>>;
  char* real = ::realpath(dir.c_str(), nullptr);
  std::string canonical = real ? real : dir;
  free(real);
  std::lock_guard<std::mutex> lock(mu);
  auto it = envs.find(canonical);
  if (it != envs.end()) return it->second;
  auto e = open_env(canonical);
  envs[canonical] = e;
  return e;
}

std::string bytes_of(const MDB_val& v) { return std::string(static_cast<const char*>(v.mv_data), v.mv_size); }

// Runs f(txn) in a transaction, growing the map and retrying on MDB_MAP_FULL, and adopting
// another process's larger map on MDB_MAP_RESIZED.
template <class F>
void transact(Store::Env& e, bool write, F&& f) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    int rc;
    {
      std::shared_lock<std::shared_mutex> shared(e.resize);
      MDB_txn* txn = nullptr;
      rc = mdb_txn_begin(e.env, nullptr, write ? 0 : MDB_RDONLY, &txn);
      if (rc == 0) {
        rc = f(txn);
        if (rc == 0 && write) rc = mdb_txn_commit(txn);
        else mdb_txn_abort(txn);
      }
    }
    if (rc == 0) return;
    std::unique_lock<std::shared_mutex> exclusive(e.resize);
    if (rc == MDB_MAP_RESIZED) {
      mdb_env_set_mapsize(e.env, 0);
    } else if (rc == MDB_MAP_FULL) {
      MDB_envinfo info;
      mdb_env_info(e.env, &info);
      mdb_env_set_mapsize(e.env, info.me_mapsize * 2);
    } else {
      lmdb_fail(e.path, write ? "write failed" : "read failed", rc);
    }
  }
  fail(TC_ERROR_CACHE, "cache '" + e.path + "': the database kept growing; giving up");
}

// Every (key, value) of `table` whose key starts with `prefix`, in key order, in one read
// transaction (copied out: LMDB's pointers die with it).
std::vector<std::pair<std::string, std::string>> scan(Store::Env& e, MDB_dbi table, const std::string& prefix) {
  std::vector<std::pair<std::string, std::string>> raw;
  transact(e, false, [&](MDB_txn* txn) {
    raw.clear();
    MDB_cursor* c = nullptr;
    int rc = mdb_cursor_open(txn, table, &c);
    if (rc != 0) return rc;
    MDB_val k{prefix.size(), const_cast<char*>(prefix.data())}, v;
    rc = mdb_cursor_get(c, &k, &v, prefix.empty() ? MDB_FIRST : MDB_SET_RANGE);
    for (; rc == 0 && bytes_of(k).compare(0, prefix.size(), prefix) == 0; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT))
      raw.emplace_back(bytes_of(k), bytes_of(v));
    mdb_cursor_close(c);
    return rc == MDB_NOTFOUND || rc == 0 ? 0 : rc;
  });
  return raw;
}

// The history entries of `raw`, each checked against the database key it is stored under.
std::vector<HistoryEntry> history_of(const std::vector<std::pair<std::string, std::string>>& raw,
                                     const Store::Damaged& damaged) {
  std::vector<HistoryEntry> out;
  for (const auto& [k, bytes] : raw) {
    std::string why;
    std::optional<HistoryEntry> h = decode_history(bytes, why);
    if (!h) damaged(k, why);
    else if (history_key(h->key, h->knobs) != k) damaged(k, "stored under another key's or knobs' hash");
    else out.push_back(*h);
  }
  return out;
}

}  // namespace

std::shared_ptr<Store> Store::open(const std::string& dir, bool create) {
  std::string why = check_dir(dir, create);
  if (!why.empty()) fail(TC_ERROR_CACHE, why);
  return std::shared_ptr<Store>(new Store(dir, env_for(dir)));
}

std::shared_ptr<Store> Store::open_existing(const std::string& dir) {
  struct stat st{};
  if (::stat((dir + "/data.mdb").c_str(), &st) != 0) fail(TC_ERROR_CACHE, "no cache at '" + dir + "'");
  return open(dir, false);
}

std::optional<Record> Store::get(const std::string& key_text) const {
  std::string hash = key_hash(key_text);
  std::optional<std::string> bytes;
  transact(*env_, false, [&](MDB_txn* txn) {
    MDB_val k{hash.size(), hash.data()}, v;
    int rc = mdb_get(txn, env_->records, &k, &v);
    if (rc == 0) bytes = bytes_of(v);
    return rc == MDB_NOTFOUND ? 0 : rc;
  });
  if (!bytes) return std::nullopt;
  std::string why;
  std::optional<Record> r = decode(*bytes, why);
  if (!r) fail(TC_ERROR_CACHE, "cache '" + dir_ + "': record " + hash.substr(0, 16) + ": " + why);
  if (r->key != key_text)
    fail(TC_ERROR_CACHE, "cache '" + dir_ + "': record " + hash.substr(0, 16) + " holds another key (a hash collision)");
  return r;
}

// Stores r in one write transaction unless `keep(current)` says the stored record (decoded,
// of the same key) stays; a damaged record is replaced.
bool Store::put_unless(const Record& r, const std::function<bool(const Record&)>& keep) {
  std::string hash = key_hash(r.key), bytes = encode(r);
  bool stored = false;
  transact(*env_, true, [&](MDB_txn* txn) {
    stored = false;
    MDB_val k{hash.size(), hash.data()}, old;
    int rc = mdb_get(txn, env_->records, &k, &old);
    if (rc == 0) {
      std::string why;
      std::optional<Record> current = decode(bytes_of(old), why);
      if (current && current->key == r.key && keep(*current)) return 0;
    } else if (rc != MDB_NOTFOUND) {
      return rc;
    }
    MDB_val v{bytes.size(), bytes.data()};
    rc = mdb_put(txn, env_->records, &k, &v, 0);
    stored = rc == 0;
    return rc;
  });
  return stored;
}

bool Store::put_if_faster(const Record& r) {
  return put_unless(r, [&](const Record& current) { return current.best_ms <= r.best_ms; });
}

bool Store::replace_if_knobs(const Record& r, const std::string& knobs) {
  return put_unless(r, [&](const Record& current) { return current.knobs != knobs; });
}

std::vector<Record> Store::all(const Damaged& damaged) const {
  std::vector<Record> out;
  for (const auto& [hash, bytes] : scan(*env_, env_->records, "")) {
    std::string why;
    std::optional<Record> r = decode(bytes, why);
    if (!r) damaged(hash, why);
    else if (key_hash(r->key) != hash) damaged(hash, "stored under another key's hash");
    else out.push_back(*r);
  }
  return out;
}

void Store::put_history(const HistoryEntry& h) {
  std::string k = history_key(h.key, h.knobs), bytes = encode(h);
  transact(*env_, true, [&](MDB_txn* txn) {
    MDB_val key{k.size(), k.data()}, v{bytes.size(), bytes.data()};
    return mdb_put(txn, env_->history, &key, &v, 0);
  });
}

std::vector<HistoryEntry> Store::history(const std::string& key_text, const Damaged& damaged) const {
  std::vector<HistoryEntry> out;
  for (HistoryEntry& h : history_of(scan(*env_, env_->history, history_prefix(key_text)), damaged)) {
    if (h.key == key_text) out.push_back(std::move(h));
    else damaged(history_key(h.key, h.knobs), "holds another key (a hash collision)");
  }
  return out;
}

std::vector<HistoryEntry> Store::all_history(const Damaged& damaged) const {
  return history_of(scan(*env_, env_->history, ""), damaged);
}

void Store::clear() {
  transact(*env_, true, [&](MDB_txn* txn) {
    int rc = mdb_drop(txn, env_->records, 0);
    return rc == 0 ? mdb_drop(txn, env_->history, 0) : rc;
  });
}

}  // namespace tc::cache
