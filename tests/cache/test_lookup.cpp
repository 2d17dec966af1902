// test_lookup.cpp — tc_compile through the compilation cache (src/tune/cached_compile.cpp),
// called through the C API: a miss compiles the default; a record for the same def, shapes,
// backend, target and `checked` is a hit whose knob values are used (same results, reported by
// tc_kernel_cache_hit and tc_kernel_describe); explicit knobs and cache=off bypass it; a cache
// that cannot be used (unsafe directory, garbage file, stale knob values) falls back to the
// default with the reason in the description, never an error.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "tune/options.h"
#include "common/matmul_case.h"
#include "cache/store.h"
#include "ir/bind.h"
#include "ir/program.h"
#include "tc/tc.h"
#include "tune/cached_compile.h"

namespace {

struct Fixture : tc_test::MatmulCase {
  Fixture() : MatmulCase(37, 29, 53) {}

  // Compiles with the given options; returns the kernel (the caller destroys it).
  tc_kernel* compile(const std::vector<std::pair<const char*, std::string>>& opts) {
    tc_options* o = nullptr;
    tc_options_create(&o);
    for (const auto& [k, v] : opts) EXPECT_EQ(tc_options_set(o, k, v.c_str()), TC_OK) << k;
    tc_kernel* kernel = nullptr;
    EXPECT_EQ(tc_compile(&kernel, program, nullptr, in, 2, o), TC_OK) << tc_last_error_message();
    tc_options_destroy(o);
    return kernel;
  }
  // Stores a record for this def and these shapes in `cache_dir` with the given knobs.
  void store(const std::string& cache_dir, const std::string& knobs, double best_ms = 1.0) {
    auto p = tc::ir::build_program(kSrc, "");
    tc::ir::BoundDef bound = tc::ir::bind(p, 0, in, 2);
    tc::tune::OptionSet options;
    options.set("cache", cache_dir);
    const auto& cpu = tc::backends::find_backend("cpu");
    tc::cache::Record r;
    r.key = tc::tune::cache_key(bound, cpu, cpu.default_target(), options);
    r.knobs = knobs;
    r.best_ms = best_ms;
    r.default_ms = 2 * best_ms;
    r.candidates = 12;
    r.date = "2026-11-23T05:00:00Z";
    r.libtc = LIBTC_VERSION_STRING;
    ASSERT_TRUE(tc::cache::Store::open(cache_dir, true)->put_if_faster(r));
  }
};

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST(CacheLookup, MissThenHitWithTheStoredKnobs) {
  Fixture f;
  std::string cache = f.dir + "/cache";
  tc_kernel* miss = f.compile({{"cache", cache}});
  EXPECT_EQ(Fixture::hit(miss), 0);
  EXPECT_TRUE(has(Fixture::describe(miss), "cache: miss (no cache at '" + cache + "' yet)")) << Fixture::describe(miss);
  std::vector<float> want = f.run(miss);
  f.store(cache, "cpu.vectorize=4 cpu.tile=8x2 cpu.unroll=2 cpu.contract=0");  // the pipeline's knobs
  tc_kernel* k = f.compile({{"cache", cache}});
  EXPECT_EQ(Fixture::hit(k), 1);
  std::string d = Fixture::describe(k);
  EXPECT_TRUE(has(d, "cache: hit in '" + cache + "': cpu.vectorize=4 cpu.tile=8x2 cpu.unroll=2 cpu.contract=0 (tuned 2026-11-23T05:00:00Z, 2.00x"))
      << d;
  EXPECT_TRUE(has(d, "cpu.tile=8x2")) << d;      // in the options line
  EXPECT_TRUE(has(d, "register-blocked 8x2 (vector 4)")) << d;  // and in the schedule
  EXPECT_EQ(f.run(k), want);
  // Another spelling of the program (names, layout) is the same key.
  tc_program* renamed = nullptr;
  ASSERT_EQ(tc_define(&renamed, "def matmul(float(R,Q) X, float(Q,S) Y) -> (Z) {\n  Z(r, s) +=! X(r, q) * Y(q, s)\n}"), TC_OK);
  std::swap(renamed, f.program);
  tc_kernel* again = f.compile({{"cache", cache}});
  std::swap(renamed, f.program);
  EXPECT_EQ(Fixture::hit(again), 1);
  tc_program_destroy(renamed);
  tc_kernel_destroy(again);
  tc_kernel_destroy(k);
  tc_kernel_destroy(miss);
  int h = 0;
  EXPECT_EQ(tc_kernel_cache_hit(nullptr, &h), TC_ERROR_INVALID_ARGUMENT);
}

TEST(CacheLookup, ExplicitKnobsOffAndOtherKeysBypassIt) {
  Fixture f;
  std::string cache = f.dir + "/cache";
  f.store(cache, "cpu.tile=8x2");
  tc_kernel* k = f.compile({{"cache", cache}, {"cpu.unroll", "4"}});
  EXPECT_EQ(Fixture::hit(k), 0);
  EXPECT_TRUE(has(Fixture::describe(k), "cache: not consulted (knobs set explicitly: cpu.unroll)"));
  tc_kernel_destroy(k);
  k = f.compile({{"cache", "off"}});
  EXPECT_EQ(Fixture::hit(k), 0);
  EXPECT_TRUE(has(Fixture::describe(k), "cache: off"));
  tc_kernel_destroy(k);
  k = f.compile({{"cache", cache}, {"checked", "0"}});  // checked is part of the key
  EXPECT_EQ(Fixture::hit(k), 0);
  EXPECT_TRUE(has(Fixture::describe(k), "cache: miss in '" + cache + "'")) << Fixture::describe(k);
  tc_kernel_destroy(k);
  k = f.compile({{"cache", cache}, {"backend", "reference"}});  // so is the backend
  EXPECT_EQ(Fixture::hit(k), 0);
  tc_kernel_destroy(k);
}

TEST(CacheLookup, AnUnusableCacheFallsBackToTheDefault) {
  Fixture f;
  tc_kernel* ref = f.compile({{"cache", "off"}});
  std::vector<float> want = f.run(ref);
  tc_kernel_destroy(ref);
  // Group-writable: never loaded from.
  std::string open_dir = f.dir + "/open";
  f.store(open_dir, "cpu.tile=8x2");
  ::chmod(open_dir.c_str(), 0770);
  tc_kernel* k = f.compile({{"cache", open_dir}});
  EXPECT_EQ(Fixture::hit(k), 0);
  EXPECT_TRUE(has(Fixture::describe(k), "cache: not used: cache directory '" + open_dir + "' is writable by group"))
      << Fixture::describe(k);
  EXPECT_EQ(f.run(k), want);
  tc_kernel_destroy(k);
  // A garbage database file.
  std::string garbage = f.dir + "/garbage";
  ::mkdir(garbage.c_str(), 0700);
  std::ofstream(garbage + "/data.mdb") << std::string(65536, 'x');
  k = f.compile({{"cache", garbage}});
  EXPECT_EQ(Fixture::hit(k), 0);
  EXPECT_TRUE(has(Fixture::describe(k), "cache: not used: cache '" + garbage)) << Fixture::describe(k);
  tc_kernel_destroy(k);
  // Stored knob values this libtc no longer accepts.
  std::string stale = f.dir + "/stale";
  f.store(stale, "cpu.tile=0x0");
  k = f.compile({{"cache", stale}});
  EXPECT_EQ(Fixture::hit(k), 0);
  EXPECT_TRUE(has(Fixture::describe(k), "cache: not used: option 'cpu.tile' cannot be '0x0'")) << Fixture::describe(k);
  EXPECT_EQ(f.run(k), want);
  tc_kernel_destroy(k);
}
