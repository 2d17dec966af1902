// test_cache.cpp — the compilation cache's storage layer (src/cache): records round-trip and
// detect damage (checksum, truncation, garbage, another schema); directories are refused when
// unsafe; the LMDB store keeps the faster record, grows its map, refuses garbage files and
// read-only directories with TC_ERROR_CACHE naming the path, survives writers killed with
// SIGKILL and two processes writing one key at once.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

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

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(tc::sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(tc::sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(tc::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Record, RoundTripsAndDetectsDamage) {
  Record r = record("tc-ir 1 bound\nline two: with colons\n", 1.25);
  std::string bytes = tc::cache::encode(r), why;
  auto back = tc::cache::decode(bytes, why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(back->key, r.key);
  EXPECT_EQ(back->knobs, r.knobs);
  EXPECT_EQ(back->best_ms, 1.25);
  EXPECT_EQ(back->candidates, 40);
  std::string flipped = bytes;
  flipped[bytes.find("32x4")] = '6';  // one changed byte
  EXPECT_FALSE(tc::cache::decode(flipped, why));
  EXPECT_TRUE(has(why, "checksum")) << why;
  EXPECT_FALSE(tc::cache::decode(bytes.substr(0, bytes.size() / 2), why));
  EXPECT_TRUE(has(why, "truncated")) << why;
  EXPECT_FALSE(tc::cache::decode("\x7f" "ELF garbage", why));
  EXPECT_TRUE(has(why, "not a libtc cache record")) << why;
  std::string other = bytes;
  other.replace(other.find(" 1\n"), 3, " 9\n");
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
    pid_t kid = ::fork();
    if (kid == 0) {
      auto s = Store::open(dir, false);
      for (int i = 0;; ++i) s->put_if_faster(record("key" + std::to_string(round) + "-" + std::to_string(i % 500), 1.0 / (i + 1)));
    }
    ::usleep(150000 + 50000 * round);
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
