// remote.cpp — see remote.h. hiredis's blocking API: one command and its reply at a time on a
// connection taken from the process's pool for the server; a connection that failed, or that a
// transaction left in an unknown state, is closed instead of going back.
#include "cache/remote.h"

#include <hiredis/hiredis.h>
#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>

#include "cache/signing.h"
#include "support/decimal.h"
#include "support/error.h"

namespace tc::cache {

struct Remote::Address {
  std::string host;  // TCP; empty for a Unix socket
  int port = 6379;
  int db = 0;
  std::string socket_path;
};

namespace {

using Clock = std::chrono::steady_clock;

const char kRecordPrefix[] = "libtc:record:";
const char kHistoryPrefix[] = "libtc:history:";
constexpr int kMaxIdleConnections = 4;
constexpr int kCasAttempts = 32;

[[noreturn]] void bad_url(const std::string& url, const std::string& why) {
  fail(TC_ERROR_INVALID_ARGUMENT, "option cache.remote '" + url + "': " + why +
                                      " (expected redis://HOST:PORT[/DB] or unix:///PATH)");
}

Remote::Address parse(const std::string& url) {
  Remote::Address a;
  if (url.rfind("unix://", 0) == 0) {
    a.socket_path = url.substr(7);
    if (a.socket_path.empty() || a.socket_path[0] != '/') bad_url(url, "a Unix socket needs an absolute path");
    return a;
  }
  if (url.rfind("redis://", 0) != 0) bad_url(url, "not a redis:// or unix:// URL");
  std::string rest = url.substr(8);
  size_t slash = rest.find('/');
  if (slash != std::string::npos) {
    a.db = static_cast<int>(decimal_in(rest.substr(slash + 1), 0, 100000));
    if (a.db < 0) bad_url(url, "the database must be a number");
    rest.resize(slash);
  }
  if (rest.find('@') != std::string::npos) bad_url(url, "passwords in the URL are not supported");
  size_t colon = rest.rfind(':');
  if (colon == std::string::npos) bad_url(url, "no port");
  a.host = rest.substr(0, colon);
  if (a.host.size() >= 2 && a.host.front() == '[' && a.host.back() == ']') a.host = a.host.substr(1, a.host.size() - 2);
  a.port = static_cast<int>(decimal_in(rest.substr(colon + 1), 1, 65535));
  if (a.host.empty()) bad_url(url, "no host");
  if (a.port < 0) bad_url(url, "the port must be a number from 1 to 65535");
  return a;
}

timeval to_timeval(int ms) { return timeval{ms / 1000, (ms % 1000) * 1000}; }

// Blocks SIGPIPE in this thread while a connection writes (a server that closed the socket
// would otherwise kill the process), and takes back a SIGPIPE raised meanwhile.
class NoSigpipe {
 public:
  NoSigpipe() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~NoSigpipe() {
    sigset_t pending;
    sigpending(&pending);
    if (!was_pending_ && sigismember(&pending, SIGPIPE) == 1) {
      timespec zero{0, 0};
      sigtimedwait(&pipe_, nullptr, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  sigset_t pipe_, old_;
  bool was_pending_ = false;
};

// The process's idle connections per server, and when lookups may use each server again.
// A child process (fork) must not share its parent's sockets: its pool starts empty.
struct Servers {
  std::mutex mutex;
  pid_t pid = 0;
  std::map<std::string, std::vector<redisContext*>> idle;
  std::map<std::string, std::pair<Clock::time_point, std::string>> paused;  // until, why
};

Servers& servers() {
  static Servers* s = new Servers;  // never destroyed: connections may outlive static destructors
  return *s;
}

// The idle connections to `url` this process may use; call with the mutex held.
std::vector<redisContext*>& idle_connections(Servers& s, const std::string& url) {
  if (s.pid != ::getpid()) {  // forked: the parent's sockets are the parent's (left open, not used)
    s.pid = ::getpid();
    s.idle.clear();
  }
  return s.idle[url];
}

struct ReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

// Thrown for a failure to reach the server or to understand it (not for Redis's own errors):
// the kind of failure that pauses lookups and that a fresh connection may cure.
struct Unreachable : Error {
  using Error::Error;
};

}  // namespace

class Remote::Connection {
 public:
  // A pooled connection to the server, or a new one.
  explicit Connection(const Remote& remote) : remote_(remote) {
    {
      Servers& s = servers();
      std::lock_guard<std::mutex> lock(s.mutex);
      auto& idle = idle_connections(s, pool_key());
      if (!idle.empty()) {
        c_ = idle.back();
        idle.pop_back();
        reused_ = true;
        return;
      }
    }
    connect();
  }
  ~Connection() {
    if (!c_) return;
    if (healthy_ && c_->err == 0) {
      Servers& s = servers();
      std::lock_guard<std::mutex> lock(s.mutex);
      auto& idle = idle_connections(s, pool_key());
      if (static_cast<int>(idle.size()) < kMaxIdleConnections) {
        idle.push_back(c_);
        return;
      }
    }
    redisFree(c_);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  bool reused() const { return reused_; }
  // Whether it may go back to the pool: not while a transaction may be open.
  void set_reusable(bool reusable) { healthy_ = reusable; }

  // The reply to one command; Unreachable when the server did not answer as Redis does; a
  // Redis error reply is TC_ERROR_CACHE with Redis's message.
  Reply command(std::initializer_list<std::string> args) {
    std::vector<const char*> argv;
    std::vector<size_t> lengths;
    for (const std::string& a : args) {
      argv.push_back(a.data());
      lengths.push_back(a.size());
    }
    Reply r;
    {
      NoSigpipe guard;
      r.reset(static_cast<redisReply*>(
          redisCommandArgv(c_, static_cast<int>(argv.size()), argv.data(), lengths.data())));
    }
    if (!r || c_->err) {
      healthy_ = false;
      bool timed_out = c_->err == REDIS_ERR_IO && std::strstr(c_->errstr, "temporarily unavailable");
      std::string why = timed_out
                            ? "no answer within " + std::to_string(remote_.settings_.timeout_ms) + " ms"
                        : c_->err == REDIS_ERR_PROTOCOL ? std::string("the answer is not Redis's protocol (") + c_->errstr + ")"
                        : c_->err == REDIS_ERR_EOF      ? std::string("the server closed the connection")
                                                        : std::string(c_->errstr);
      throw Unreachable(TC_ERROR_CACHE, remote_.where() + why);
    }
    if (r->type == REDIS_REPLY_ERROR) {
      healthy_ = false;
      fail(TC_ERROR_CACHE, remote_.where() + "Redis answered " + *args.begin() + " with an error: " +
                               std::string(r->str, r->len));
    }
    return r;
  }

  // A string reply's bytes, nullopt for nil; anything else is an answer Redis does not give.
  std::optional<std::string> string_of(const Reply& r, const char* what) {
    if (r->type == REDIS_REPLY_NIL) return std::nullopt;
    if (r->type != REDIS_REPLY_STRING) unexpected(what);
    return std::string(r->str, r->len);
  }
  [[noreturn]] void unexpected(const char* what) {
    healthy_ = false;
    throw Unreachable(TC_ERROR_CACHE, remote_.where() + "unexpected answer to " + what);
  }

 private:
  void connect() {
    const Address& a = *remote_.address_;
    timeval tv = to_timeval(remote_.settings_.timeout_ms);
    {
      NoSigpipe guard;
      c_ = a.socket_path.empty() ? redisConnectWithTimeout(a.host.c_str(), a.port, tv)
                                 : redisConnectUnixWithTimeout(a.socket_path.c_str(), tv);
    }
    if (!c_) throw Unreachable(TC_ERROR_CACHE, remote_.where() + "cannot connect: out of memory");
    if (c_->err) {
      std::string why = c_->errstr;
      if (why.find("Operation now in progress") != std::string::npos || why.find("timed out") != std::string::npos)
        why = "no connection within " + std::to_string(remote_.settings_.timeout_ms) + " ms";
      redisFree(c_);
      c_ = nullptr;
      throw Unreachable(TC_ERROR_CACHE, remote_.where() + "cannot connect: " + why);
    }
    redisSetTimeout(c_, tv);
    if (a.db == 0) return;
    try {
      command({"SELECT", std::to_string(a.db)});
    } catch (const Error&) {  // the constructor fails: no destructor will free it
      redisFree(c_);
      c_ = nullptr;
      throw;
    }
  }

  // Pooled connections are per server and time limit (a socket keeps the limit it was made with).
  std::string pool_key() const { return remote_.url() + " " + std::to_string(remote_.settings_.timeout_ms); }

  const Remote& remote_;
  redisContext* c_ = nullptr;
  bool reused_ = false;
  bool healthy_ = true;
};

namespace {

// Runs fn(connection); a pooled connection the server has since dropped (a restart) is
// replaced once by a new one. A failure to reach the server pauses lookups.
template <typename Fn>
auto with_connection(const Remote& remote, Fn fn) {
  for (int attempt = 0;; ++attempt) {
    try {
      Remote::Connection c(remote);
      try {
        return fn(c);
      } catch (const Unreachable&) {
        if (c.reused() && attempt == 0) continue;
        throw;
      }
    } catch (const Unreachable& e) {
      Servers& s = servers();
      std::lock_guard<std::mutex> lock(s.mutex);
      s.paused[remote.url()] = {Clock::now() + std::chrono::seconds(kPauseSeconds), e.what()};
      throw Error(e.status(), e.what());
    }
  }
}

std::string record_key(const std::string& key_text) { return kRecordPrefix + key_hash(key_text); }
std::string history_redis_key(const std::string& key_text) { return kHistoryPrefix + key_hash(key_text); }
std::string history_field(const HistoryEntry& h) {
  std::string k = history_key(h.key, h.knobs);
  return k.substr(k.find(':') + 1);
}

}  // namespace

void check_remote_url(const std::string& url) { parse(url); }

std::shared_ptr<Remote> Remote::open(const RemoteSettings& settings) {
  auto address = std::make_unique<Address>(parse(settings.url));
  std::string secret = read_secret_key(settings.key_file);
  return std::shared_ptr<Remote>(new Remote(settings, std::move(secret), std::move(address)));
}

Remote::Remote(RemoteSettings settings, std::string secret, std::unique_ptr<Address> address)
    : settings_(std::move(settings)), secret_(std::move(secret)), address_(std::move(address)) {}

Remote::~Remote() = default;

std::string Remote::where() const { return "remote cache '" + settings_.url + "': "; }

std::string Remote::paused() const {
  Servers& s = servers();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.paused.find(settings_.url);
  if (it == s.paused.end() || Clock::now() >= it->second.first) return "";
  auto left = std::chrono::duration_cast<std::chrono::seconds>(it->second.first - Clock::now()).count() + 1;
  return it->second.second + " (lookups skip it for " + std::to_string(left) + " s more)";
}

std::optional<Record> Remote::checked_record(const std::string& redis_key, const std::string& value,
                                             const std::string* key_text, std::string& why) const {
  std::optional<std::string> payload = verify(secret_, redis_key, "", value, why);
  if (!payload) return std::nullopt;
  std::optional<Record> r = decode(*payload, why);
  if (r && redis_key != kRecordPrefix + key_hash(r->key)) {
    why = "record stored under another key's hash";
    return std::nullopt;
  }
  if (r && key_text && r->key != *key_text) {
    why = "record of another key (a hash collision)";
    return std::nullopt;
  }
  return r;
}

std::optional<HistoryEntry> Remote::checked_history(const std::string& redis_key, const std::string& field,
                                                    const std::string& value, std::string& why) const {
  std::optional<std::string> payload = verify(secret_, redis_key, field, value, why);
  if (!payload) return std::nullopt;
  std::optional<HistoryEntry> h = decode_history(*payload, why);
  if (h && (redis_key != history_redis_key(h->key) || field != history_field(*h))) {
    why = "history entry stored under another key's hash";
    return std::nullopt;
  }
  return h;
}

std::optional<Record> Remote::get(const std::string& key_text) const {
  std::string key = record_key(key_text);
  std::optional<std::string> value =
      with_connection(*this, [&](Connection& c) { return c.string_of(c.command({"GET", key}), "GET"); });
  if (!value) return std::nullopt;
  std::string why;
  std::optional<Record> r = checked_record(key, *value, &key_text, why);
  if (!r) fail(TC_ERROR_CACHE, where() + "record " + key_hash(key_text).substr(0, 16) + " refused: " + why);
  return r;
}

bool Remote::put_if_faster(const Record& r) const {
  std::string key = record_key(r.key);
  std::string value = sign(secret_, key, "", encode(r));
  return with_connection(*this, [&](Connection& c) {
    for (int attempt = 0; attempt < kCasAttempts; ++attempt) {
      c.set_reusable(false);  // until the transaction is over
      c.command({"WATCH", key});
      std::optional<std::string> stored = c.string_of(c.command({"GET", key}), "GET");
      std::string why;
      std::optional<Record> old = stored ? checked_record(key, *stored, &r.key, why) : std::nullopt;
      if (old && old->best_ms <= r.best_ms) {
        c.command({"UNWATCH"});
        c.set_reusable(true);
        return false;
      }
      c.command({"MULTI"});
      c.command({"SET", key, value});
      Reply done = c.command({"EXEC"});
      if (done->type == REDIS_REPLY_ARRAY) {
        c.set_reusable(true);
        return true;
      }
      if (done->type != REDIS_REPLY_NIL) c.unexpected("EXEC");
      // Nil: another writer changed the key between WATCH and EXEC; look again.
    }
    fail(TC_ERROR_CACHE, where() + "record " + key_hash(r.key).substr(0, 16) + " kept changing under " +
                             std::to_string(kCasAttempts) + " attempts to store it");
  });
}

void Remote::put_history(const HistoryEntry& h) const {
  std::string key = history_redis_key(h.key), field = history_field(h);
  std::string value = sign(secret_, key, field, encode(h));
  with_connection(*this, [&](Connection& c) { return c.command({"HSET", key, field, value}) != nullptr; });
}

std::vector<HistoryEntry> Remote::history(const std::string& key_text, const Store::Damaged& damaged) const {
  std::vector<HistoryEntry> out;
  for (HistoryEntry& h : entries_of(history_redis_key(key_text), damaged)) {
    if (h.key == key_text) out.push_back(std::move(h));
    else damaged(key_hash(key_text) + ":" + history_field(h), "history entry of another key (a hash collision)");
  }
  return out;
}

std::vector<HistoryEntry> Remote::entries_of(const std::string& redis_key, const Store::Damaged& damaged) const {
  std::vector<std::pair<std::string, std::string>> fields = with_connection(*this, [&](Connection& c) {
    Reply r = c.command({"HGETALL", redis_key});
    if (r->type != REDIS_REPLY_ARRAY || r->elements % 2) c.unexpected("HGETALL");
    std::vector<std::pair<std::string, std::string>> out;
    for (size_t i = 0; i + 1 < r->elements; i += 2) {
      const redisReply* f = r->element[i];
      const redisReply* v = r->element[i + 1];
      if (f->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING) c.unexpected("HGETALL");
      out.emplace_back(std::string(f->str, f->len), std::string(v->str, v->len));
    }
    return out;
  });
  std::vector<HistoryEntry> out;
  for (const auto& [field, value] : fields) {
    std::string why;
    std::optional<HistoryEntry> h = checked_history(redis_key, field, value, why);
    if (h) out.push_back(std::move(*h));
    else damaged(redis_key.substr(sizeof kHistoryPrefix - 1) + ":" + field, why);
  }
  return out;
}

namespace {

// Every Redis key that starts with `prefix`, SCAN's way (never blocks the server).
std::vector<std::string> keys_with(Remote::Connection& c, const std::string& prefix) {
  std::vector<std::string> out;
  std::string cursor = "0";
  do {
    Reply r = c.command({"SCAN", cursor, "MATCH", prefix + "*", "COUNT", "1000"});
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 || r->element[0]->type != REDIS_REPLY_STRING ||
        r->element[1]->type != REDIS_REPLY_ARRAY)
      c.unexpected("SCAN");
    cursor.assign(r->element[0]->str, r->element[0]->len);
    for (size_t i = 0; i < r->element[1]->elements; ++i) {
      const redisReply* k = r->element[1]->element[i];
      if (k->type != REDIS_REPLY_STRING) c.unexpected("SCAN");
      out.emplace_back(k->str, k->len);
    }
  } while (cursor != "0");
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());  // SCAN may repeat a key
  return out;
}

}  // namespace

std::vector<Record> Remote::all(const Store::Damaged& damaged) const {
  std::vector<std::pair<std::string, std::optional<std::string>>> values = with_connection(*this, [&](Connection& c) {
    std::vector<std::pair<std::string, std::optional<std::string>>> out;
    for (const std::string& key : keys_with(c, kRecordPrefix))
      out.emplace_back(key, c.string_of(c.command({"GET", key}), "GET"));
    return out;
  });
  std::vector<Record> out;
  for (const auto& [key, value] : values) {
    if (!value) continue;  // removed meanwhile
    std::string why;
    std::optional<Record> r = checked_record(key, *value, nullptr, why);
    if (r) out.push_back(std::move(*r));
    else damaged(key.substr(sizeof kRecordPrefix - 1), why);
  }
  return out;
}

std::vector<HistoryEntry> Remote::all_history(const Store::Damaged& damaged) const {
  std::vector<std::string> keys = with_connection(*this, [&](Connection& c) { return keys_with(c, kHistoryPrefix); });
  std::vector<HistoryEntry> out;
  for (const std::string& key : keys)
    for (HistoryEntry& h : entries_of(key, damaged)) out.push_back(std::move(h));
  return out;
}

}  // namespace tc::cache
