// test_cache.cpp — the compilation cache's storage layer (src/cache): records and history
// entries round-trip and detect damage (checksum, truncation, garbage, another schema);
// directories are refused when unsafe; the LMDB store keeps the faster record, grows its map,
// refuses garbage files and read-only directories with TC_ERROR_CACHE naming the path, survives
// writers killed with SIGKILL and two processes writing one key at once; the history is kept
// per key and read back by other processes; the listing names every damaged record and history
// entry (written into the database directly, through LMDB), and clear empties both tables.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include <lmdb.h>

#include "cache/listing.h"
#include "cache/location.h"
#include "cache/record.h"
#include "cache/store.h"
#include "common/error_of.h"
#include "support/sha256.h"

using tc::cache::Record;
using tc::cache::Store;
using tc_test::error_of;

namespace {

// A fresh directory under the test's temporary directory (0700), removed at the end.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/tc-cache-test-XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

Record record(const std::string& key, double best_ms, const std::string& knobs = "cpu.tile=32x4") {
  Record r;
  r.key = key;
  r.knobs = knobs;
  r.best_ms = best_ms;
  r.default_ms = 2 * best_ms;
  r.candidates = 40;
  r.date = "2026-11-23T05:00:00Z";
  r.libtc = "0.1.0";
  return r;
}

tc::cache::HistoryEntry trial(const std::string& key, const std::string& knobs, double ms,
                             tc::cache::Outcome outcome = tc::cache::Outcome::Measured) {
  tc::cache::HistoryEntry h;
  h.key = key;
  h.knobs = knobs;
  h.outcome = outcome;
  h.ms = ms;
  h.why = outcome == tc::cache::Outcome::Measured ? "" : "it failed";
  h.date = "2026-11-23T05:00:00Z";
  return h;
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Runs f in a child process (a fresh LMDB environment: never one opened before a fork) and
// expects it to exit 0, i.e. without a failed expectation.
template <class F>
void in_child(F&& f) {
  pid_t kid = ::fork();
  if (kid == 0) {
    f();
    ::_exit(::testing::Test::HasFailure() ? 1 : 0);
  }
  int status = 0;
  ::waitpid(kid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// Writes raw (key, value) pairs into a table of the cache at `dir` with LMDB itself, bypassing
// the store's encoding: how a test damages entries. Exits non-zero on any LMDB error.
void write_raw(const std::string& dir, const char* table, const std::vector<std::pair<std::string, std::string>>& kv) {
  MDB_env* env = nullptr;
  MDB_txn* txn = nullptr;
  MDB_dbi dbi = 0;
  if (mdb_env_create(&env) || mdb_env_set_maxdbs(env, 4) || mdb_env_open(env, dir.c_str(), 0, 0600) ||
      mdb_txn_begin(env, nullptr, 0, &txn) || mdb_dbi_open(txn, table, 0, &dbi))
    ::_exit(3);
  for (const auto& [k, v] : kv) {
    MDB_val key{k.size(), const_cast<char*>(k.data())}, val{v.size(), const_cast<char*>(v.data())};
    if (mdb_put(txn, dbi, &key, &val, 0)) ::_exit(4);
  }
  if (mdb_txn_commit(txn)) ::_exit(5);
  mdb_env_close(env);
}

}  // namespace

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(tc::sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(tc::sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(tc::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(tc::sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  for (const std::string& s : {std::string(""), std::string("abc"), std::string(1000000, 'a')})
    EXPECT_EQ(tc::sha256_hex_portable(s), tc::sha256_hex(s));
}

// Every length around the block and padding boundaries, and some random bytes: the SHA
// instructions (where this CPU has them) and the portable code agree.
TEST(Sha256, ExtensionsAgreeWithThePortableCode) {
  std::string bytes;
  uint32_t x = 12345;
  for (int i = 0; i < 4200; ++i) bytes.push_back(static_cast<char>((x = x * 1103515245u + 12345u) >> 24));
  for (size_t n = 0; n <= 200; ++n) EXPECT_EQ(tc::sha256_hex(bytes.substr(0, n)), tc::sha256_hex_portable(bytes.substr(0, n))) << n;
  EXPECT_EQ(tc::sha256_hex(bytes), tc::sha256_hex_portable(bytes));
}

TEST(Record, RoundTripsAndDetectsDamage) {
  Record r = record("tc-ir 1 bound\nline two: with colons\n", 1.25);
  r.def = "mm";
  r.sizes = "M=4 K=5 N=6";
  r.backend = "cpu";
  r.family = "f00d";
  r.artefact = std::string("\x7f" "ELF\0\n:12:\n", 11);
  std::string bytes = tc::cache::encode(r), why;
  auto back = tc::cache::decode(bytes, why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(back->key, r.key);
  EXPECT_EQ(back->knobs, r.knobs);
  EXPECT_EQ(back->best_ms, 1.25);
  EXPECT_EQ(back->candidates, 40);
  EXPECT_EQ(back->def, "mm");
  EXPECT_EQ(back->sizes, "M=4 K=5 N=6");
  EXPECT_EQ(back->backend, "cpu");
  EXPECT_EQ(back->family, "f00d");
  EXPECT_EQ(back->artefact, r.artefact);  // binary, with NULs, newlines and colons
  std::string flipped = bytes;
  flipped[bytes.find("32x4")] = '6';  // one changed byte
  EXPECT_FALSE(tc::cache::decode(flipped, why));
  EXPECT_TRUE(has(why, "checksum")) << why;
  EXPECT_FALSE(tc::cache::decode(bytes.substr(0, bytes.size() / 2), why));
  EXPECT_TRUE(has(why, "truncated")) << why;
  EXPECT_FALSE(tc::cache::decode("\x7f" "ELF garbage", why));
  EXPECT_TRUE(has(why, "not a libtc cache record")) << why;
  std::string other = bytes;
  std::string magic = "tc-cache-record " + std::to_string(tc::cache::kSchemaVersion) + "\n";
  ASSERT_EQ(other.compare(0, magic.size(), magic), 0);
  other.replace(0, magic.size(), "tc-cache-record 9\n");
  EXPECT_FALSE(tc::cache::decode(other, why));
  EXPECT_TRUE(has(why, "schema 9")) << why;
}

TEST(Location, ResolvesAndRefusesUnsafeDirectories) {
  EXPECT_FALSE(tc::cache::resolve_dir("off"));
  EXPECT_EQ(*tc::cache::resolve_dir("/some/dir"), "/some/dir");
  ::setenv("TC_CACHE_DIR", "/from/env", 1);
  EXPECT_EQ(*tc::cache::resolve_dir("auto"), "/from/env");
  ::unsetenv("TC_CACHE_DIR");
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(*tc::cache::resolve_dir("auto"), "/xdg/libtc");
  ::unsetenv("XDG_CACHE_HOME");
  TempDir t;
  std::string dir = t.path() + "/a/b";
  EXPECT_TRUE(has(tc::cache::check_dir(dir, false), "does not exist"));
  EXPECT_EQ(tc::cache::check_dir(dir, true), "");
  struct stat st{};
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ::chmod(dir.c_str(), 0770);
  EXPECT_TRUE(has(tc::cache::check_dir(dir, false), "writable by group or others (mode 770)"));
  ::chmod(dir.c_str(), 0702);
  EXPECT_TRUE(has(tc::cache::check_dir(dir, false), "writable by group or others"));
}

TEST(Store, KeepsTheFasterRecord) {
  TempDir t;
  auto store = Store::open(t.path() + "/c", true);
  EXPECT_FALSE(store->get("k"));
  EXPECT_TRUE(store->put_if_faster(record("k", 5.0, "cpu.tile=8x8")));
  EXPECT_FALSE(store->put_if_faster(record("k", 6.0, "cpu.tile=16x16")));  // slower: kept 5.0
  EXPECT_EQ(store->get("k")->knobs, "cpu.tile=8x8");
  EXPECT_TRUE(store->put_if_faster(record("k", 4.0, "cpu.tile=32x4")));
  EXPECT_EQ(store->get("k")->best_ms, 4.0);
  EXPECT_TRUE(store->put_if_faster(record("other", 1.0)));
  auto all = store->all([](const std::string&, const std::string&) { ADD_FAILURE() << "damaged"; });
  EXPECT_EQ(all.size(), 2u);
  struct stat st{};
  ASSERT_EQ(::stat((t.path() + "/c/data.mdb").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // The same directory again, by another spelling: the one environment of the process.
  auto again = Store::open(t.path() + "/c/../c", false);
  EXPECT_EQ(again->get("k")->best_ms, 4.0);
}

TEST(Store, GrowsItsMapWhenFull) {
  TempDir t;
  auto store = Store::open(t.path(), false);
  std::string big(1 << 20, 'x');  // 40 records of 1 MiB: more than the initial 16 MiB map
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(store->put_if_faster(record("key" + std::to_string(i) + big, 1.0)));
  EXPECT_EQ(store->get("key39" + big)->best_ms, 1.0);
}

TEST(Store, RefusesGarbageAndUnsafeDirectories) {
  TempDir t;
  std::string garbage = t.path() + "/garbage";
  ::mkdir(garbage.c_str(), 0700);
  std::ofstream(garbage + "/data.mdb") << std::string(100000, 'g');
  std::string m = error_of([&] { Store::open(garbage, false); }, TC_ERROR_CACHE);
  EXPECT_TRUE(has(m, "cache '" + garbage)) << m;
  std::string open_dir = t.path() + "/open";
  ::mkdir(open_dir.c_str(), 0777);
  ::chmod(open_dir.c_str(), 0777);
  m = error_of([&] { Store::open(open_dir, false); }, TC_ERROR_CACHE);
  EXPECT_TRUE(has(m, "writable by group or others")) << m;
  if (::geteuid() != 0) {  // root writes anywhere: read-only means nothing to it
    std::string ro = t.path() + "/ro";
    ::mkdir(ro.c_str(), 0500);
    m = error_of([&] { Store::open(ro, false); }, TC_ERROR_CACHE);
    EXPECT_TRUE(has(m, ro)) << m;
  }
}

TEST(Store, TwoProcessesWritingOneKeyKeepTheFastest) {
  TempDir t;
  std::string dir = t.path() + "/shared";
  ASSERT_EQ(tc::cache::check_dir(dir, true), "");
  pid_t kids[2];
  for (int k = 0; k < 2; ++k) {
    kids[k] = ::fork();
    if (kids[k] == 0) {  // each child opens its own environment (never across fork)
      auto s = Store::open(dir, false);
      for (int i = 200; i > 0; --i) s->put_if_faster(record("key", k == 0 ? i * 1.0 : i * 1.0 + 0.5));
      ::_exit(0);
    }
  }
  for (pid_t kid : kids) {
    int status = 0;
    ::waitpid(kid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  auto s = Store::open(dir, false);
  EXPECT_EQ(s->get("key")->best_ms, 1.0);
}

TEST(Store, AWriterKilledAtAnyMomentLosesNothingCommitted) {
  TempDir t;
  std::string dir = t.path() + "/killed";
  ASSERT_EQ(tc::cache::check_dir(dir, true), "");
  for (int round = 0; round < 3; ++round) {
    int committed[2];  // the child says when its first write is committed: then it is killed
    ASSERT_EQ(::pipe(committed), 0);
    pid_t kid = ::fork();
    if (kid == 0) {
      ::close(committed[0]);
      auto s = Store::open(dir, false);
      for (int i = 0;; ++i) {
        s->put_if_faster(record("key" + std::to_string(round) + "-" + std::to_string(i % 500), 1.0 / (i + 1)));
        if (i == 0 && ::write(committed[1], "c", 1) != 1) ::_exit(1);
      }
    }
    ::close(committed[1]);
    char c = 0;
    ASSERT_EQ(::read(committed[0], &c, 1), 1);
    ::close(committed[0]);
    ::usleep(50000 * round);  // killed after its first write, or later: at any moment of a write
    ::kill(kid, SIGKILL);
    ::waitpid(kid, nullptr, 0);
  }
  // A fresh process (the test's, which never opened it) opens, verifies and uses the cache.
  auto s = Store::open(dir, false);
  int damaged = 0;
  auto all = s->all([&](const std::string&, const std::string&) { ++damaged; });
  EXPECT_EQ(damaged, 0);
  EXPECT_GT(all.size(), 0u);
  EXPECT_TRUE(s->put_if_faster(record("after", 1.0)));
  EXPECT_TRUE(s->get("after"));
}

TEST(History, RoundTripsAndDetectsDamage) {
  using tc::cache::Outcome;
  auto h = trial("tc-cache-key 3\nline: two\n", "cpu.tile=32x4 cpu.unroll=8", 0.25, Outcome::CutOff);
  std::string bytes = tc::cache::encode(h), why;
  auto back = tc::cache::decode_history(bytes, why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(back->key, h.key);
  EXPECT_EQ(back->knobs, h.knobs);
  EXPECT_EQ(back->outcome, Outcome::CutOff);
  EXPECT_EQ(back->ms, 0.25);
  EXPECT_EQ(back->why, "it failed");
  EXPECT_TRUE(back->timed());
  for (Outcome o : {Outcome::Measured, Outcome::CompileFailed, Outcome::RunFailed, Outcome::WrongResult})
    EXPECT_EQ(tc::cache::decode_history(tc::cache::encode(trial("k", "x=1", 0, o)), why)->outcome, o) << why;
  std::string flipped = bytes;
  flipped[bytes.find("32x4")] = '6';
  EXPECT_FALSE(tc::cache::decode_history(flipped, why));
  EXPECT_TRUE(has(why, "history entry checksum mismatch")) << why;
  EXPECT_FALSE(tc::cache::decode_history(bytes.substr(0, bytes.size() - 10), why));
  EXPECT_TRUE(has(why, "truncated")) << why;
  // A record is not a history entry, nor the other way round.
  EXPECT_FALSE(tc::cache::decode_history(tc::cache::encode(record("k", 1.0)), why));
  EXPECT_TRUE(has(why, "not a libtc cache history entry")) << why;
  EXPECT_FALSE(tc::cache::decode(bytes, why));
  EXPECT_TRUE(has(why, "not a libtc cache record")) << why;
  // Keys: one prefix per key text, within LMDB's 511 bytes whatever the key's length.
  std::string long_key(100000, 'k');
  std::string k = tc::cache::history_key(long_key, "cpu.tile=4x4");
  EXPECT_EQ(k.size(), 64u + 1 + 32);
  EXPECT_EQ(k.compare(0, 65, tc::cache::history_prefix(long_key)), 0);
  EXPECT_NE(k, tc::cache::history_key(long_key, "cpu.tile=4x8"));
}

TEST(Store, KeepsAHistoryPerKeyThatOtherProcessesReadBack) {
  TempDir t;
  std::string dir = t.path() + "/h";
  ASSERT_EQ(tc::cache::check_dir(dir, true), "");
  using tc::cache::Outcome;
  in_child([&] {  // another process writes; this one reads what it committed
    auto s = Store::open(dir, false);
    s->put_history(trial("key A", "x=1", 2.0));
    s->put_history(trial("key A", "x=2", 0, Outcome::CompileFailed));
    s->put_history(trial("key A", "x=1", 1.5));  // the same point again: replaced
    s->put_history(trial("key B", "x=1", 9.0));
  });
  auto s = Store::open(dir, false);
  auto none = [](const std::string& k, const std::string& why) { ADD_FAILURE() << k << ": " << why; };
  auto a = s->history("key A", none);
  ASSERT_EQ(a.size(), 2u);
  for (const auto& h : a) {
    EXPECT_EQ(h.key, "key A");
    if (h.knobs == "x=1") EXPECT_EQ(h.ms, 1.5);
    else EXPECT_EQ(h.outcome, Outcome::CompileFailed);
  }
  EXPECT_EQ(s->history("key B", none).size(), 1u);
  EXPECT_TRUE(s->history("key C", none).empty());
  EXPECT_EQ(s->all_history(none).size(), 3u);
}

TEST(Store, TheListingNamesEveryDamagedEntryAndClearEmptiesBothTables) {
  TempDir t;
  std::string dir = t.path() + "/d";
  ASSERT_EQ(tc::cache::check_dir(dir, true), "");
  in_child([&] {
    auto s = Store::open(dir, false);
    Record good = record("good key", 1.0);
    good.def = "mm";
    ASSERT_TRUE(s->put_if_faster(good));
    s->put_history(trial("good key", "x=1", 1.0));
    s->put_history(trial("good key", "x=2", 0, tc::cache::Outcome::WrongResult));
    s->put_history(trial("key without a record", "x=1", 3.0));
  });
  std::string flipped = tc::cache::encode(trial("good key", "x=3", 2.0));
  flipped[flipped.find("x=3")] = 'y';
  Record old_schema = record("old", 1.0);
  std::string old = tc::cache::encode(old_schema);
  old.replace(0, old.find('\n'), "tc-cache-record 2");
  in_child([&] {
    write_raw(dir, "records", {{tc::cache::key_hash("garbage"), "\x7f" "ELF not a record"},
                               {tc::cache::key_hash("elsewhere"), tc::cache::encode(record("moved", 1.0))},
                               {tc::cache::key_hash("old"), old}});
    write_raw(dir, "history", {{tc::cache::history_key("good key", "x=3"), flipped},
                               {tc::cache::history_key("good key", "x=4"), tc::cache::encode(trial("good key", "x=5", 1.0))}});
  });
  auto s = Store::open(dir, false);
  tc::cache::Listing l = tc::cache::list(*s);
  ASSERT_EQ(l.entries.size(), 1u);
  EXPECT_EQ(l.entries[0].record.def, "mm");
  EXPECT_EQ(l.entries[0].key_hash, tc::cache::key_hash("good key"));
  ASSERT_EQ(l.entries[0].history.size(), 2u);
  EXPECT_EQ(l.entries[0].history[0].knobs, "x=1");  // timed first, then failures
  EXPECT_EQ(l.entries[0].history[1].outcome, tc::cache::Outcome::WrongResult);
  EXPECT_EQ(l.history_entries, 3u);  // the key without a record's included
  std::map<std::string, std::string> damage;
  for (const auto& d : l.damage) damage[d.id] = d.why;
  EXPECT_EQ(damage.size(), 5u);
  auto why_of = [&](const std::string& id) { return damage.count(id) ? damage[id] : "(not reported)"; };
  EXPECT_TRUE(has(why_of("record " + tc::cache::key_hash("garbage").substr(0, 16)), "not a libtc cache record"));
  EXPECT_TRUE(has(why_of("record " + tc::cache::key_hash("elsewhere").substr(0, 16)), "stored under another key's hash"));
  EXPECT_TRUE(has(why_of("record " + tc::cache::key_hash("old").substr(0, 16)), "record of cache schema 2"));
  std::string h3 = tc::cache::history_key("good key", "x=3"), h4 = tc::cache::history_key("good key", "x=4");
  EXPECT_TRUE(has(why_of("history " + h3.substr(0, 16) + ":" + h3.substr(65, 16)), "history entry checksum mismatch"));
  EXPECT_TRUE(has(why_of("history " + h4.substr(0, 16) + ":" + h4.substr(65, 16)), "stored under another key's or knobs' hash"));
  // The tuner's view of the key: the sound entries only.
  EXPECT_EQ(s->history("good key", [](const std::string&, const std::string&) {}).size(), 2u);
  s->clear();
  l = tc::cache::list(*s);
  EXPECT_TRUE(l.entries.empty());
  EXPECT_TRUE(l.damage.empty());
  EXPECT_EQ(l.history_entries, 0u);
  struct stat st{};
  ASSERT_EQ(::stat((dir + "/data.mdb").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_TRUE(s->put_if_faster(record("after", 1.0)));  // still a working cache
}

TEST(Store, ReadingToolsNeedAnExistingCacheAndCreateNothing) {
  TempDir t;
  std::string missing = t.path() + "/missing";
  std::string m = error_of([&] { Store::open_existing(missing); }, TC_ERROR_CACHE);
  EXPECT_EQ(m, "no cache at '" + missing + "'");
  struct stat st{};
  EXPECT_NE(::stat(missing.c_str(), &st), 0);
  m = error_of([&] { Store::open_existing(t.path()); }, TC_ERROR_CACHE);  // a directory, no database
  EXPECT_EQ(m, "no cache at '" + t.path() + "'");
  EXPECT_NE(::stat((t.path() + "/data.mdb").c_str(), &st), 0);
}
