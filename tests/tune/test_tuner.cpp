// test_tuner.cpp — tc_tune (src/tune/tuner.cpp) through the C API.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cache/store.h"
#include "common/matmul_case.h"
#include "tc/tc.h"
#include "tune/tuner.h"

namespace {

struct Fixture : tc_test::MatmulCase {
  Fixture() : MatmulCase(96, 64, 96) {}
  ~Fixture() { tc::tune::testing::after_check_run = nullptr; }

  // A deliberately bad start: scalar code, 1x1 tiles, one thread.
  tc_options* bad_start(const std::string& cache) {
    tc_options* o = nullptr;
    tc_options_create(&o);
    const char* kv[][2] = {{"cpu.vectorize", "1"}, {"cpu.tile", "1x1"}, {"cpu.unroll", "1"}, {"threads", "1"},
                           {"tune.population", "6"}, {"tune.generations", "2"}, {"tune.threads", "2"}};
    for (auto& p : kv) EXPECT_EQ(tc_options_set(o, p[0], p[1]), TC_OK);
    EXPECT_EQ(tc_options_set(o, "cache", cache.c_str()), TC_OK);
    return o;
  }
};

struct Log {
  int calls = 0;
  tc_tune_progress last{};
  int stop_after = 0;  // 0: never
};

int on_progress(const tc_tune_progress* p, void* user) {
  auto* log = static_cast<Log*>(user);
  log->calls++;
  log->last = *p;
  return log->stop_after > 0 && log->calls >= log->stop_after;
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST(Tuner, BeatsABadStartStoresItAndALaterCompileFindsIt) {
  Fixture f;
  std::string cache = f.dir + "/cache";
  tc_options* o = f.bad_start(cache);
  Log log;
  tc_kernel* tuned = nullptr;
  ASSERT_EQ(tc_tune(&tuned, f.program, nullptr, f.in, 2, o, on_progress, &log), TC_OK) << tc_last_error_message();
  EXPECT_GE(log.calls, 6);
  EXPECT_EQ(log.last.generations, 2);
  EXPECT_LE(log.last.candidates_done, log.last.candidates_planned);
  EXPECT_GT(log.last.default_ms, 0);
  EXPECT_LT(log.last.best_ms, log.last.default_ms);  // scalar 1x1 tiles are easy to beat
  EXPECT_TRUE(has(f.describe(tuned), "tuned now:")) << f.describe(tuned);
  tc_kernel* start = nullptr;
  ASSERT_EQ(tc_compile(&start, f.program, nullptr, f.in, 2, o), TC_OK);
  std::vector<float> want = f.run(start);
  EXPECT_EQ(f.run(tuned), want);
  // A later compile without explicit knobs finds the winner in the cache.
  tc_options* plain = nullptr;
  tc_options_create(&plain);
  tc_options_set(plain, "cache", cache.c_str());
  tc_kernel* later = nullptr;
  ASSERT_EQ(tc_compile(&later, f.program, nullptr, f.in, 2, plain), TC_OK);
  int hit = 0;
  tc_kernel_cache_hit(later, &hit);
  EXPECT_EQ(hit, 1) << f.describe(later);
  EXPECT_EQ(f.run(later), want);
  // Export, then import into an empty directory: the same hit there.
  std::string file = f.dir + "/export.tccache", other = f.dir + "/other";
  ASSERT_EQ(tc_cache_export(cache.c_str(), file.c_str()), TC_OK) << tc_last_error_message();
  ASSERT_EQ(tc_cache_import(other.c_str(), file.c_str()), TC_OK) << tc_last_error_message();
  tc_options_set(plain, "cache", other.c_str());
  tc_kernel* imported = nullptr;
  ASSERT_EQ(tc_compile(&imported, f.program, nullptr, f.in, 2, plain), TC_OK);
  tc_kernel_cache_hit(imported, &hit);
  EXPECT_EQ(hit, 1) << f.describe(imported);
  EXPECT_EQ(f.run(imported), want);
  // A file that is not an export is refused, naming it.
  std::string junk = f.dir + "/junk";
  std::system(("echo junk > '" + junk + "'").c_str());
  EXPECT_EQ(tc_cache_import(other.c_str(), junk.c_str()), TC_ERROR_CACHE);
  EXPECT_TRUE(has(tc_last_error_message(), "is not a libtc cache export")) << tc_last_error_message();
  EXPECT_EQ(tc_cache_export(other.c_str(), nullptr), TC_ERROR_INVALID_ARGUMENT);
  for (tc_kernel* k : {tuned, start, later, imported}) tc_kernel_destroy(k);
  tc_options_destroy(plain);
  tc_options_destroy(o);
}

TEST(Tuner, AWrongCandidateIsNeverStored) {
  Fixture f;
  std::string cache = f.dir + "/cache";
  // Every candidate after the starting point computes a wrong result.
  tc::tune::testing::after_check_run = [](int candidate, const std::vector<tc::runtime::TensorView>& outputs) {
    if (candidate > 0) reinterpret_cast<float*>(outputs[0].data)[0] += 1.0f;
  };
  tc_options* o = f.bad_start(cache);
  tc_kernel* k = nullptr;
  ASSERT_EQ(tc_tune(&k, f.program, nullptr, f.in, 2, o, nullptr, nullptr), TC_OK) << tc_last_error_message();
  std::string d = f.describe(k);
  EXPECT_TRUE(has(d, "rejected")) << d;
  EXPECT_TRUE(has(d, "cpu.tile=1x1")) << d;  // the start is what it returns
  auto all = tc::cache::Store::open(cache, false)->all([](const std::string&, const std::string&) {});
  EXPECT_TRUE(all.empty());
  tc_kernel_destroy(k);
  tc_options_destroy(o);
}

TEST(Tuner, TheCallbackStopsItAndAnUnusableCacheIsAnError) {
  Fixture f;
  std::string cache = f.dir + "/cache";
  tc_options* o = f.bad_start(cache);
  Log log;
  log.stop_after = 1;
  tc_kernel* k = nullptr;
  ASSERT_EQ(tc_tune(&k, f.program, nullptr, f.in, 2, o, on_progress, &log), TC_OK);
  EXPECT_EQ(log.calls, 1);
  EXPECT_EQ(log.last.candidates_done, 1);
  tc_kernel_destroy(k);
  std::string open_dir = f.dir + "/open";
  ::mkdir(open_dir.c_str(), 0777);
  ::chmod(open_dir.c_str(), 0777);
  tc_options_set(o, "cache", open_dir.c_str());
  EXPECT_EQ(tc_tune(&k, f.program, nullptr, f.in, 2, o, nullptr, nullptr), TC_ERROR_CACHE);
  EXPECT_TRUE(has(tc_last_error_message(), "writable by group or others")) << tc_last_error_message();
  tc_options_destroy(o);
}

// The starting point is the caller's own options: when it cannot run, tc_tune fails as
// tc_run would, with the located message (there is nothing to compare candidates with).
TEST(Tuner, AStartThatCannotRunIsTheError) {
  tc_program* p = nullptr;
  ASSERT_EQ(tc_define_named(&p, "def g(float(N) X, int32(K) I) -> (Y) {\n  Y(k) = X(I(k)) where k in 0:K\n}", "g.tc"),
            TC_OK);
  float x[4] = {1, 2, 3, 4};
  int32_t idx[3] = {0, 7, 1};  // 7 is out of range
  int64_t sx[1] = {4}, si[1] = {3};
  DLTensor in[2] = {tc_test::MatmulCase::tensor(x, sx), tc_test::MatmulCase::tensor(nullptr, si)};
  in[0].ndim = 1;
  in[1].ndim = 1;
  in[1].data = idx;
  in[1].dtype = {kDLInt, 32, 1};
  tc_options* o = nullptr;
  tc_options_create(&o);
  tc_options_set(o, "cache", "off");
  tc_kernel* k = nullptr;
  EXPECT_EQ(tc_tune(&k, p, nullptr, in, 2, o, nullptr, nullptr), TC_ERROR_RUNTIME);
  EXPECT_TRUE(has(tc_last_error_message(), "g.tc:2:10: error: 'X(I(k))' reads 'X' out of bounds: index 7"))
      << tc_last_error_message();
  EXPECT_EQ(k, nullptr);
  tc_options_destroy(o);
  tc_program_destroy(p);
}
