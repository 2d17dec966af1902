// test_remote.cpp — the cache's remote tier against a real redis-server on a loopback port
// (tests/common/redis_server.h): HMAC-SHA256 against RFC 4231; signed values refused when
// changed or signed with another secret; the key file's rules; records kept faster-wins under
// concurrent writers (compare-and-set); tc_compile's lookup order local -> remote -> compile
// with tc_kernel_cache_hit naming the tier; a tampered record, a record signed with another key,
// a server that is down, silent, answering garbage or full, each falling back to the default
// with the reason in the description; tc_tune publishing its winner and history; and
// tc_cache_push/pull/list_remote. The multi-process scenarios (tune in one process, a hit in
// another; Redis killed mid-tune; 8 tuners at once) are tests/cache/remote_processes.py.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cache/remote.h"
#include "cache/signing.h"
#include "common/matmul_case.h"
#include "common/redis_server.h"
#include "support/error.h"
#include "support/hmac.h"
#include "tc/tc.h"

namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Writes `text` to `path` with `mode`; returns path.
std::string write_file(const std::string& path, const std::string& text, mode_t mode = 0600) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  ::chmod(path.c_str(), mode);
  return path;
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const tc::Error& e) {
    return e.what();
  }
  return "(no error)";
}

tc::cache::Record record(const std::string& key, double best_ms, const std::string& knobs = "cpu.tile=8x2") {
  tc::cache::Record r;
  r.key = key;
  r.knobs = knobs;
  r.best_ms = best_ms;
  r.default_ms = 2 * best_ms;
  r.candidates = 3;
  r.date = "2026-11-28T05:00:00Z";
  r.libtc = LIBTC_VERSION_STRING;
  r.def = "mm";
  r.artefact = std::string("code\0bytes", 10);
  return r;
}

// cache.remote_timeout where a time limit is not what a test is about: a loaded machine's stall
// must not turn a hit into a miss (the silent server's cases set their own 200 ms).
constexpr const char* kTimeout = "5000";

// A Redis server, a secret key file and a Remote on it.
struct Tier {
  char tmpl[32] = "/tmp/tc-remote-XXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  tc_test::RedisServer server{dir};
  std::string key = write_file(dir + "/key", "0123456789abcdef0123456789abcdef\n");
  std::shared_ptr<tc::cache::Remote> remote = open(key);
  ~Tier() { std::system(("rm -rf '" + dir + "'").c_str()); }

  std::shared_ptr<tc::cache::Remote> open(const std::string& key_file, int timeout_ms = 5000) const {
    return tc::cache::Remote::open({server.url(), key_file, timeout_ms});
  }
};

// A loopback server that accepts connections and then, per `garbage`, answers every request
// with an HTTP error (not Redis's protocol) or never answers at all.
class FakeServer {
 public:
  explicit FakeServer(bool garbage) : garbage_(garbage) {
    fd_ = tc_test::loopback_socket(&port_);
    ::listen(fd_, 16);
    thread_ = std::thread([this] {
      while (true) {
        int c = ::accept(fd_, nullptr, nullptr);
        if (c < 0 || stop_) break;
        clients_.push_back(c);
        if (garbage_) {
          char buf[512];
          if (::read(c, buf, sizeof buf) > 0) {
            const char reply[] = "HTTP/1.1 400 Bad Request\r\n\r\n";
            (void)!::write(c, reply, sizeof reply - 1);
          }
        }
      }
    });
  }
  ~FakeServer() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
    for (int c : clients_) ::close(c);
  }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

 private:
  bool garbage_;
  int fd_ = -1, port_ = 0;
  std::atomic<bool> stop_{false};
  std::vector<int> clients_;
  std::thread thread_;
};

using Options = std::vector<std::pair<const char*, std::string>>;

struct Lookup : tc_test::MatmulCase {
  Lookup() : MatmulCase(37, 29, 53) {}

  tc_options* options(const Options& opts) {
    tc_options* o = nullptr;
    tc_options_create(&o);
    for (const auto& [k, v] : opts) EXPECT_EQ(tc_options_set(o, k, v.c_str()), TC_OK) << k << ": " << tc_last_error_message();
    return o;
  }
  tc_kernel* compile(const Options& opts) {
    tc_options* o = options(opts);
    tc_kernel* kernel = nullptr;
    EXPECT_EQ(tc_compile(&kernel, program, nullptr, in, 2, o), TC_OK) << tc_last_error_message();
    tc_options_destroy(o);
    return kernel;
  }
  // A short real search (two generations of four), stored in `cache` and published.
  tc_kernel* tune(const Options& opts) {
    // Two whole generations on any machine: no budget cuts them short.
    Options all = {{"tune.population", "4"}, {"tune.generations", "2"}, {"tune.patience", "0"}, {"tune.budget", "86400"}};
    all.insert(all.end(), opts.begin(), opts.end());
    tc_options* o = options(all);
    tc_kernel* kernel = nullptr;
    EXPECT_EQ(tc_tune(&kernel, program, nullptr, in, 2, o, nullptr, nullptr), TC_OK) << tc_last_error_message();
    tc_options_destroy(o);
    return kernel;
  }
  // Compiles, checks the kernel's results against `want` and returns its tier and description.
  std::pair<int, std::string> lookup(const Options& opts, const std::vector<float>& want) {
    tc_kernel* k = compile(opts);
    EXPECT_EQ(run(k), want);
    std::pair<int, std::string> out{hit(k), describe(k)};
    tc_kernel_destroy(k);
    return out;
  }
};

}  // namespace

TEST(RemoteSigning, HmacSha256MatchesRfc4231) {
  EXPECT_EQ(tc::hmac_sha256_hex(std::string(20, '\x0b'), "Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(tc::hmac_sha256_hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(tc::hmac_sha256_hex(std::string(20, '\xaa'), std::string(50, '\xdd')),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  // A key longer than SHA-256's block is hashed first.
  EXPECT_EQ(tc::hmac_sha256_hex(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First"),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  EXPECT_TRUE(tc::digests_equal("abc", "abc"));
  EXPECT_FALSE(tc::digests_equal("abc", "abd"));
  EXPECT_FALSE(tc::digests_equal("abc", "ab"));
}

TEST(RemoteSigning, OnlyAnUnchangedValueUnderTheSameSecretVerifies) {
  const std::string secret = "a secret of many bytes", payload("record\0bytes", 12);
  std::string v = tc::cache::sign(secret, "libtc:record:ab", "", payload);
  std::string why;
  ASSERT_EQ(tc::cache::verify(secret, "libtc:record:ab", "", v, why), payload);
  std::string changed = v;
  changed.back() ^= 1;
  EXPECT_FALSE(tc::cache::verify(secret, "libtc:record:ab", "", changed, why));
  EXPECT_TRUE(has(why, "signature does not verify (signed with another key, or changed since it was signed)")) << why;
  EXPECT_FALSE(tc::cache::verify("another secret", "libtc:record:ab", "", v, why));  // another key
  EXPECT_FALSE(tc::cache::verify(secret, "libtc:record:cd", "", v, why));            // moved to another key
  EXPECT_FALSE(tc::cache::verify(secret, "libtc:record:ab", "f", v, why));           // or field
  EXPECT_FALSE(tc::cache::verify(secret, "libtc:record:a", "b", v, why));            // no split reads as another
  EXPECT_FALSE(tc::cache::verify(secret, "libtc:record:ab", "", payload, why));      // unsigned
  EXPECT_TRUE(has(why, "not a signed libtc record")) << why;
  EXPECT_FALSE(tc::cache::verify(secret, "libtc:record:ab", "", v.substr(0, 40), why));  // truncated
}

TEST(RemoteSigning, TheKeyFileMustBeTheUsersAndReadableByNoOneElse) {
  char tmpl[] = "/tmp/tc-key-XXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  std::string key = write_file(dir + "/key", "0123456789abcdef\n");
  EXPECT_EQ(tc::cache::read_secret_key(key), "0123456789abcdef");  // the newline is not part of it
  write_file(dir + "/key2", "0123456789abcdef");
  EXPECT_EQ(tc::cache::read_secret_key(dir + "/key2"), "0123456789abcdef");
  for (mode_t mode : {0640, 0604, 0620, 0602, 0644}) {
    ::chmod(key.c_str(), mode);
    std::string e = error_of([&] { tc::cache::read_secret_key(key); });
    EXPECT_TRUE(has(e, "remote cache key file '" + key + "' can be read or written by group or others")) << e;
    EXPECT_TRUE(has(e, "chmod 600")) << e;
  }
  ::chmod(key.c_str(), 0600);
  EXPECT_TRUE(has(error_of([&] { tc::cache::read_secret_key(dir + "/missing"); }), "cannot be read: No such file"));
  EXPECT_TRUE(has(error_of([&] { tc::cache::read_secret_key(dir); }), "is not a regular file"));
  ::symlink(key.c_str(), (dir + "/link").c_str());  // a link may point anywhere: not followed
  EXPECT_TRUE(has(error_of([&] { tc::cache::read_secret_key(dir + "/link"); }), "cannot be read"));
  write_file(dir + "/short", "0123456789\n");
  EXPECT_TRUE(has(error_of([&] { tc::cache::read_secret_key(dir + "/short"); }), "holds 10 bytes; a key needs at least 16"));
  EXPECT_TRUE(has(error_of([&] { tc::cache::read_secret_key(""); }), "option cache.remote needs cache.remote_key"));
  if (::geteuid() == 0) {  // root may give the file away; anyone else cannot make another's file
    ASSERT_EQ(::chown(key.c_str(), 12345, 12345), 0);
    EXPECT_TRUE(has(error_of([&] { tc::cache::read_secret_key(key); }), "belongs to another user (uid 12345)"));
  }
  std::system(("rm -rf '" + dir + "'").c_str());
}

TEST(RemoteTier, KeepsTheFasterRecordAndRefusesChangedOnes) {
  Tier t;
  const std::string key = "tc-cache-key test\nsome def";
  EXPECT_FALSE(t.remote->get(key));
  EXPECT_TRUE(t.remote->put_if_faster(record(key, 2.0)));
  std::optional<tc::cache::Record> got = t.remote->get(key);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->artefact, std::string("code\0bytes", 10));
  EXPECT_EQ(got->best_ms, 2.0);
  EXPECT_FALSE(t.remote->put_if_faster(record(key, 3.0, "cpu.tile=4x4")));  // slower: kept out
  EXPECT_FALSE(t.remote->put_if_faster(record(key, 2.0, "cpu.tile=4x4")));  // as fast: kept out
  EXPECT_TRUE(t.remote->put_if_faster(record(key, 1.5, "cpu.tile=16x1")));
  EXPECT_EQ(t.remote->get(key)->knobs, "cpu.tile=16x1");

  // One byte changed in Redis: refused on lookup, reported by the listing, replaced by a writer.
  std::string redis_key = "libtc:record:" + tc::cache::key_hash(key);
  ASSERT_NE(t.server.command({"SETRANGE", redis_key, "120", "X"}), "");
  std::string e = error_of([&] { t.remote->get(key); });
  EXPECT_TRUE(has(e, "remote cache '" + t.server.url() + "': record " + tc::cache::key_hash(key).substr(0, 16) +
                         " refused: signature does not verify"))
      << e;
  std::vector<std::string> damaged;
  EXPECT_TRUE(t.remote->all([&](const std::string& id, const std::string&) { damaged.push_back(id); }).empty());
  EXPECT_EQ(damaged, std::vector<std::string>{tc::cache::key_hash(key)});
  EXPECT_TRUE(t.remote->put_if_faster(record(key, 9.0)));  // a refused record is replaced, whatever its time
  EXPECT_EQ(t.remote->get(key)->best_ms, 9.0);

  // A record signed with another key: refused as well; and a value that is not signed at all.
  write_file(t.dir + "/other", "another secret of 32 bytes......");
  EXPECT_TRUE(t.open(t.dir + "/other")->put_if_faster(record(key, 0.5)));
  EXPECT_TRUE(has(error_of([&] { t.remote->get(key); }), "signature does not verify"));
  t.server.command({"SET", redis_key, "plain bytes"});
  EXPECT_TRUE(has(error_of([&] { t.remote->get(key); }), "not a signed libtc record"));
  // A value moved under another record's name: signed for its own key only.
  EXPECT_TRUE(t.remote->put_if_faster(record(key + "2", 1.0)));
  t.server.command({"COPY", "libtc:record:" + tc::cache::key_hash(key + "2"), redis_key, "REPLACE"});
  EXPECT_TRUE(has(error_of([&] { t.remote->get(key); }), "signature does not verify"));
}

TEST(RemoteTier, TheDatabaseNumberSeparatesRecords) {
  Tier t;
  const std::string key = "tc-cache-key test\ndatabase";
  auto db3 = tc::cache::Remote::open({t.server.url() + "/3", t.key, 300});
  EXPECT_TRUE(db3->put_if_faster(record(key, 1.0)));
  EXPECT_TRUE(db3->get(key));
  EXPECT_FALSE(t.remote->get(key));  // database 0
  EXPECT_EQ(t.server.command({"KEYS", "*"}), "0 elements");
  auto db99 = tc::cache::Remote::open({t.server.url() + "/99", t.key, 300});  // Redis has 16
  std::string e = error_of([&] { db99->get(key); });
  EXPECT_TRUE(has(e, "Redis answered SELECT with an error: ERR DB index is out of range")) << e;
}

TEST(RemoteTier, ConcurrentWritersKeepTheFastestRecord) {
  Tier t;
  const std::string key = "tc-cache-key test\ncontended";
  std::atomic<double> fastest{INFINITY};
  std::vector<std::thread> writers;
  for (int w = 0; w < 8; ++w)
    writers.emplace_back([&, w] {
      std::mt19937 rng(w);
      for (int i = 0; i < 25; ++i) {
        double ms = 1 + std::uniform_real_distribution<double>(0, 100)(rng);
        t.remote->put_if_faster(record(key, ms, "cpu.unroll=" + std::to_string(w)));
        double f = fastest.load();
        while (ms < f && !fastest.compare_exchange_weak(f, ms)) {
        }
      }
    });
  for (auto& w : writers) w.join();
  EXPECT_EQ(t.remote->get(key)->best_ms, fastest.load());  // no update lost between check and write
}

TEST(RemoteTier, HistoryEntriesRoundTripAndAreChecked) {
  Tier t;
  const std::string key = "tc-cache-key test\nhistory";
  tc::cache::HistoryEntry h;
  h.key = key;
  h.knobs = "cpu.tile=8x2";
  h.ms = 0.25;
  h.date = "2026-11-28T05:00:00Z";
  t.remote->put_history(h);
  h.knobs = "cpu.tile=4x4";
  h.outcome = tc::cache::Outcome::CompileFailed;
  h.ms = 0;
  h.why = "too big";
  t.remote->put_history(h);
  h.why = "too big, again";
  t.remote->put_history(h);  // the same knobs: replaced
  auto none = [](const std::string&, const std::string&) { ADD_FAILURE() << "damage reported"; };
  std::vector<tc::cache::HistoryEntry> got = t.remote->history(key, none);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(t.remote->all_history(none).size(), 2u);
  // A changed entry is left out and named.
  std::string redis_key = "libtc:history:" + tc::cache::key_hash(key);
  std::string field = tc::cache::history_key(key, "cpu.tile=8x2").substr(65);
  t.server.command({"HSET", redis_key, field, "junk"});
  std::vector<std::string> damaged;
  got = t.remote->history(key, [&](const std::string& id, const std::string&) { damaged.push_back(id); });
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].why, "too big, again");
  EXPECT_EQ(damaged, std::vector<std::string>{tc::cache::key_hash(key) + ":" + field});
}

TEST(RemoteLookup, LocalThenRemoteThenCompileWithTheTierReported) {
  Tier t;
  Lookup f;
  std::string a = f.dir + "/a", b = f.dir + "/b", c = f.dir + "/c";
  Options remote = {{"cache.remote", t.server.url()}, {"cache.remote_key", t.key}, {"cache.remote_timeout", kTimeout}};
  tc_kernel* ref = f.compile({{"cache", "off"}});
  std::vector<float> want = f.run(ref);
  tc_kernel_destroy(ref);

  // Nothing anywhere: a miss in both tiers.
  Options in_b = {{"cache", b}};
  in_b.insert(in_b.end(), remote.begin(), remote.end());
  auto [tier, d] = f.lookup(in_b, want);
  EXPECT_EQ(tier, TC_CACHE_MISS);
  EXPECT_TRUE(has(d, "cache: miss (no cache at '" + b + "' yet); remote '" + t.server.url() + "': miss")) << d;

  // Tuned with cache a: the winner and its history published.
  Options in_a = {{"cache", a}};
  in_a.insert(in_a.end(), remote.begin(), remote.end());
  tc_kernel* tuned = f.tune(in_a);
  d = Lookup::describe(tuned);
  EXPECT_TRUE(has(d, "; remote '" + t.server.url() + "': 0 history entries and 0 records taken before the search")) << d;
  EXPECT_TRUE(has(d, "; published: ")) << d;
  tc_kernel_destroy(tuned);
  tc_cache_listing* l = nullptr;
  tc_options* o = f.options(remote);
  ASSERT_EQ(tc_cache_list_remote(&l, o), TC_OK) << tc_last_error_message();
  size_t n = 0, history = 0, damage = 0;
  tc_cache_listing_count(l, &n);
  tc_cache_listing_history_total(l, &history);
  tc_cache_listing_damage_count(l, &damage);
  EXPECT_EQ(n, 2u);  // the kernel's record and the cpu backend's shared code (Halide's runtime)
  EXPECT_GE(history, 8u);
  EXPECT_EQ(damage, 0u);
  tc_cache_listing_destroy(l);

  // Cache b: a remote hit, kept locally; then a local hit.
  std::tie(tier, d) = f.lookup(in_b, want);
  EXPECT_EQ(tier, TC_CACHE_HIT_REMOTE);
  EXPECT_TRUE(has(d, "cache: hit in remote '" + t.server.url() + "' (kept in '" + b + "'): ")) << d;
  EXPECT_TRUE(has(d, "code loaded from the cache")) << d;
  std::tie(tier, d) = f.lookup(in_b, want);
  EXPECT_EQ(tier, TC_CACHE_HIT_LOCAL);
  EXPECT_TRUE(has(d, "cache: hit in '" + b + "': ")) << d;
  // Without the remote tier, cache b alone serves it; cache c has nothing.
  EXPECT_EQ(f.lookup({{"cache", b}}, want).first, TC_CACHE_HIT_LOCAL);
  EXPECT_EQ(f.lookup({{"cache", c}}, want).first, TC_CACHE_MISS);
  // A key file named from the home directory.
  std::string home = std::getenv("HOME") ? std::getenv("HOME") : "";
  ::setenv("HOME", t.dir.c_str(), 1);
  std::tie(tier, d) = f.lookup({{"cache", f.dir + "/d"}, {"cache.remote", t.server.url()}, {"cache.remote_key", "~/key"}, {"cache.remote_timeout", kTimeout}}, want);
  ::setenv("HOME", home.c_str(), 1);
  EXPECT_EQ(tier, TC_CACHE_HIT_REMOTE) << d;
  // cache=off turns both tiers off.
  Options off = {{"cache", "off"}};
  off.insert(off.end(), remote.begin(), remote.end());
  std::tie(tier, d) = f.lookup(off, want);
  EXPECT_EQ(tier, TC_CACHE_MISS);
  EXPECT_TRUE(has(d, "cache: off")) << d;
  // A second machine tuning the same key starts from what the first measured.
  Options in_e = {{"cache", f.dir + "/e"}};
  in_e.insert(in_e.end(), remote.begin(), remote.end());
  tuned = f.tune(in_e);
  d = Lookup::describe(tuned);
  EXPECT_TRUE(has(d, "; remote '" + t.server.url() + "': " + std::to_string(history) +
                         " history entries and 1 records taken before the search"))
      << d;
  tc_kernel_destroy(tuned);
  tc_options_destroy(o);
}

TEST(RemoteLookup, RefusedRecordsAndUnusableServersFallBackToCompiling) {
  Tier t;
  Lookup f;
  tc_kernel* ref = f.compile({{"cache", "off"}});
  std::vector<float> want = f.run(ref);
  tc_kernel_destroy(ref);
  std::string a = f.dir + "/a";
  tc_kernel_destroy(f.tune({{"cache", a}, {"cache.remote", t.server.url()}, {"cache.remote_key", t.key}, {"cache.remote_timeout", kTimeout}}));
  auto in = [&](const std::string& dir, const std::string& url, const std::string& key, const char* timeout = kTimeout) {
    return Options{{"cache", f.dir + "/" + dir}, {"cache.remote", url}, {"cache.remote_key", key}, {"cache.remote_timeout", timeout}};
  };

  // Signed with another key: refused, the default compiled.
  write_file(t.dir + "/other", "another secret of 32 bytes......");
  auto [tier, d] = f.lookup(in("b", t.server.url(), t.dir + "/other"), want);
  EXPECT_EQ(tier, TC_CACHE_MISS);
  EXPECT_TRUE(has(d, "refused: signature does not verify")) << d;
  // The key file readable by others: not used (and said so).
  write_file(t.dir + "/open", "0123456789abcdef0123456789abcdef", 0644);
  std::tie(tier, d) = f.lookup(in("b", t.server.url(), t.dir + "/open"), want);
  EXPECT_EQ(tier, TC_CACHE_MISS);
  EXPECT_TRUE(has(d, "remote not used: remote cache key file '" + t.dir + "/open' can be read or written by group or others")) << d;
  // No key file named.
  std::tie(tier, d) = f.lookup({{"cache", f.dir + "/b"}, {"cache.remote", t.server.url()}}, want);
  EXPECT_TRUE(has(d, "remote not used: option cache.remote needs cache.remote_key")) << d;
  // A tampered record in Redis: refused; tc cache verify --remote counts it.
  std::string listed = t.server.command({"KEYS", "libtc:record:*"});
  EXPECT_EQ(listed, "2 elements");
  tc_cache_listing* l = nullptr;
  tc_options* o = f.options({{"cache.remote", t.server.url()}, {"cache.remote_key", t.key}, {"cache.remote_timeout", kTimeout}});
  ASSERT_EQ(tc_cache_list_remote(&l, o), TC_OK);
  std::string victim;  // the kernel's record (the other is the shared code)
  for (size_t i = 0; i < 2; ++i) {
    tc_cache_entry e = TC_STRUCT_INIT(tc_cache_entry);
    tc_cache_listing_entry(l, i, &e);
    if (std::string(e.def) == "mm") victim = e.key_hash;
  }
  tc_cache_listing_destroy(l);
  ASSERT_EQ(victim.size(), 64u);
  t.server.command({"SETRANGE", "libtc:record:" + victim, "300", "\x01"});
  std::tie(tier, d) = f.lookup(in("c", t.server.url(), t.key), want);
  EXPECT_EQ(tier, TC_CACHE_MISS);
  EXPECT_TRUE(has(d, "record " + victim.substr(0, 16) + " refused: signature does not verify")) << d;
  ASSERT_EQ(tc_cache_list_remote(&l, o), TC_OK);
  size_t damaged = 0;
  tc_cache_listing_damage_count(l, &damaged);
  EXPECT_EQ(damaged, 1u);
  const char *id = nullptr, *why = nullptr;
  tc_cache_listing_damage(l, 0, &id, &why);
  EXPECT_EQ(std::string(id), "record " + victim.substr(0, 16));
  EXPECT_TRUE(has(why, "signature does not verify")) << why;
  tc_cache_listing_destroy(l);

  // A server that accepts and never answers: the time limit, then lookups skip it.
  {
    // Not a hang (ctest's TIMEOUT guards that): the first lookup gives up at the limit, the
    // second does not wait on the server at all.
    FakeServer silent(false);
    std::tie(tier, d) = f.lookup(in("d", silent.url(), t.key, "200"), want);
    EXPECT_EQ(tier, TC_CACHE_MISS);
    EXPECT_TRUE(has(d, "remote not used: remote cache '" + silent.url() + "': no answer within 200 ms")) << d;
    std::tie(tier, d) = f.lookup(in("d", silent.url(), t.key, "200"), want);
    EXPECT_TRUE(has(d, "no answer within 200 ms (lookups skip it for ")) << d;
  }
  // A server that answers with something else than Redis's protocol.
  {
    FakeServer garbage(true);
    std::tie(tier, d) = f.lookup(in("e", garbage.url(), t.key), want);
    EXPECT_EQ(tier, TC_CACHE_MISS);
    EXPECT_TRUE(has(d, "the answer is not Redis's protocol")) << d;
  }
  // Nothing listening: refused at once.
  t.server.stop();
  std::tie(tier, d) = f.lookup(in("f", t.server.url(), t.key), want);
  EXPECT_EQ(tier, TC_CACHE_MISS);
  EXPECT_TRUE(has(d, "remote not used: remote cache '" + t.server.url() + "': cannot connect: Connection refused")) << d;
  // push and pull, which the user asked for, fail instead, naming the server.
  size_t moved = 0;
  EXPECT_EQ(tc_cache_push(a.c_str(), o, &moved), TC_ERROR_CACHE);
  EXPECT_TRUE(has(tc_last_error_message(), "cannot connect")) << tc_last_error_message();
  tc_options_destroy(o);
}

TEST(RemoteLookup, AFullServerNeverFailsTuning) {
  Tier t;
  Lookup f;
  ASSERT_EQ(t.server.command({"CONFIG", "SET", "maxmemory", "1"}), "OK");
  ASSERT_EQ(t.server.command({"CONFIG", "SET", "maxmemory-policy", "noeviction"}), "OK");
  std::string a = f.dir + "/a";
  tc_kernel* k = f.tune({{"cache", a}, {"cache.remote", t.server.url()}, {"cache.remote_key", t.key}, {"cache.remote_timeout", kTimeout}});
  std::string d = Lookup::describe(k);
  EXPECT_TRUE(has(d, "remote not updated: remote cache '" + t.server.url() + "': Redis answered")) << d;
  EXPECT_TRUE(has(d, "OOM")) << d;
  std::vector<float> want = f.run(k);
  tc_kernel_destroy(k);
  EXPECT_EQ(f.lookup({{"cache", a}}, want).first, TC_CACHE_HIT_LOCAL);  // stored locally all the same
}

TEST(RemotePushPull, RecordsAndHistoryRoundTrip) {
  Tier t;
  Lookup f;
  std::string a = f.dir + "/a", c = f.dir + "/c";
  tc_kernel_destroy(f.tune({{"cache", a}}));  // local only
  tc_options* o = f.options({{"cache.remote", t.server.url()}, {"cache.remote_key", t.key}, {"cache.remote_timeout", kTimeout}});
  size_t moved = 0;
  ASSERT_EQ(tc_cache_push(a.c_str(), o, &moved), TC_OK) << tc_last_error_message();
  EXPECT_EQ(moved, 2u);  // the kernel and the shared code
  ASSERT_EQ(tc_cache_push(a.c_str(), o, &moved), TC_OK);
  EXPECT_EQ(moved, 0u);  // the remote's are as fast
  ASSERT_EQ(tc_cache_pull(c.c_str(), o, &moved), TC_OK) << tc_last_error_message();
  EXPECT_EQ(moved, 2u);
  auto summary = [](tc_cache_listing* l) {
    std::vector<std::string> out;
    size_t n = 0, history = 0;
    tc_cache_listing_count(l, &n);
    tc_cache_listing_history_total(l, &history);
    for (size_t i = 0; i < n; ++i) {
      tc_cache_entry e = TC_STRUCT_INIT(tc_cache_entry);
      tc_cache_listing_entry(l, i, &e);
      out.push_back(std::string(e.key_hash) + " " + e.knobs + " " + std::to_string(e.best_ms) + " " +
                    std::to_string(e.artefact_bytes) + " " + std::to_string(e.history_count));
    }
    out.push_back(std::to_string(history) + " history entries");
    tc_cache_listing_destroy(l);
    return out;
  };
  tc_cache_listing *la = nullptr, *lc = nullptr, *lr = nullptr;
  ASSERT_EQ(tc_cache_list(&la, a.c_str()), TC_OK);
  ASSERT_EQ(tc_cache_list(&lc, c.c_str()), TC_OK);
  ASSERT_EQ(tc_cache_list_remote(&lr, o), TC_OK);
  std::vector<std::string> sa = summary(la);
  EXPECT_EQ(summary(lc), sa);
  EXPECT_EQ(summary(lr), sa);
  // The pulled cache serves the kernel as a local hit.
  tc_kernel* k = f.compile({{"cache", c}});
  EXPECT_EQ(Lookup::hit(k), TC_CACHE_HIT_LOCAL);
  tc_kernel_destroy(k);
  // Errors: no remote named; a refused key file.
  EXPECT_EQ(tc_cache_push(a.c_str(), nullptr, &moved), TC_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(tc_last_error_message(), "option cache.remote is off")) << tc_last_error_message();
  ::chmod(t.key.c_str(), 0640);
  EXPECT_EQ(tc_cache_pull(c.c_str(), o, &moved), TC_ERROR_CACHE);
  EXPECT_TRUE(has(tc_last_error_message(), "can be read or written by group or others")) << tc_last_error_message();
  tc_options_destroy(o);
}
