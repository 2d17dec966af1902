// test_warm_start.cpp — a cache hit links the record's compiled code instead of compiling
// (src/tune/cached_compile.cpp, the cpu backend's artefacts and object_loader.cpp): in this
// process and in a fresh one (warm_start_child), which also takes Halide's runtime object from
// the cache; code that cannot be used here (garbage, another pipeline's, an object LLVM cannot
// link, a damaged runtime) is never an error: the kernel is compiled from the stored knob
// values, or the runtime built, with the reason in tc_kernel_describe, and results are the same.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tune/options.h"
#include "cache/store.h"
#include "common/matmul_case.h"
#include "ir/bind.h"
#include "ir/program.h"
#include "tc/tc.h"
#include "tune/cached_compile.h"

namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

constexpr int kM = 37, kK = 29, kN = 53;

struct Fixture : tc_test::MatmulCase {
  Fixture() : MatmulCase(kM, kK, kN), cache(dir + "/cache") {}

  tc_kernel* compile(const std::string& cache_option) {
    tc_options* o = nullptr;
    tc_options_create(&o);
    EXPECT_EQ(tc_options_set(o, "cache", cache_option.c_str()), TC_OK);
    tc_kernel* kernel = nullptr;
    EXPECT_EQ(tc_compile(&kernel, program, nullptr, in, 2, o), TC_OK) << tc_last_error_message();
    tc_options_destroy(o);
    return kernel;
  }
  std::vector<float> expected() {
    tc_kernel* k = compile("off");
    std::vector<float> want = run(k);
    tc_kernel_destroy(k);
    return want;
  }
  // The cpu backend's artefact of this matmul compiled with `knobs` ("cpu.tile=16x4").
  std::string artefact(const std::string& key, const std::string& value) {
    tc::tune::OptionSet options;
    options.set(key, value);
    options.set("cpu.contract", "0");  // the pipeline's object code, which these tests load
    const auto& cpu = tc::backends::find_backend("cpu");
    return cpu.compile(bound(), cpu.default_target(), options.values_for(cpu))->artefact();
  }
  tc::ir::BoundDef bound() {
    program_ir = tc::ir::build_program(kSrc, "");
    return tc::ir::bind(program_ir, 0, in, 2);
  }
  // Stores (replacing) this matmul's record with these knobs and this artefact.
  void store(const std::string& knobs, const std::string& code, double best_ms) {
    tc::tune::OptionSet options;
    options.set("cache", cache);
    const auto& cpu = tc::backends::find_backend("cpu");
    tc::cache::Record r;
    r.key = tc::tune::cache_key(bound(), cpu, cpu.default_target(), options);
    r.knobs = knobs;
    r.best_ms = best_ms;  // smaller than the stored one: replaces it
    r.default_ms = 1.0;
    r.date = "2026-11-23T05:00:00Z";
    r.libtc = LIBTC_VERSION_STRING;
    r.artefact = code;
    ASSERT_TRUE(tc::cache::Store::open(cache, true)->put_if_faster(r));
  }
  // Runs warm_start_child on the cache; its output.
  std::string child() {
    std::string cmd = std::string(TC_WARM_START_CHILD) + " '" + cache + "' " + std::to_string(kM) + " " +
                      std::to_string(kK) + " " + std::to_string(kN) + " 2>&1";
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    EXPECT_NE(p, nullptr);
    char buf[4096];
    for (size_t n; p && (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    EXPECT_EQ(p ? ::pclose(p) : -1, 0) << out;
    return out;
  }
  std::string values_text(const std::vector<float>& v) {
    std::string s = "values:";
    char buf[32];
    for (float x : v) {
      std::snprintf(buf, sizeof buf, " %g", x);
      s += buf;
    }
    return s + "\n";
  }

  std::string cache;
  std::shared_ptr<const tc::ir::Program> program_ir;
};

TEST(WarmStart, AHitLinksTheStoredCode) {
  Fixture f;
  std::vector<float> want = f.expected();
  f.store("cpu.tile=16x4 cpu.contract=0", f.artefact("cpu.tile", "16x4"), 1.0);
  tc_kernel* k = f.compile(f.cache);
  std::string d = f.describe(k);
  EXPECT_EQ(f.hit(k), 1);
  EXPECT_TRUE(has(d, "code loaded from the cache")) << d;
  EXPECT_TRUE(has(d, "register-blocked 16x4")) << d;  // the stored knobs' schedule, as described
  EXPECT_EQ(f.run(k), want);
  tc_kernel_destroy(k);
}

// The same def renamed and reformatted, its tensors renamed, with another def before it: the
// same canonical text, so the same record, and its code is taken (the entry point keeps the
// name it was compiled under), not compiled again from the knobs.
TEST(WarmStart, ARenamedDefTakesTheStoredCode) {
  Fixture f;
  std::vector<float> want = f.expected();
  f.store("cpu.tile=16x4 cpu.contract=0", f.artefact("cpu.tile", "16x4"), 1.0);
  tc_program* renamed = nullptr;
  ASSERT_EQ(tc_define(&renamed,
                      "def other(float(N) X) -> (Y) { Y(i) = X(i) }\n"
                      "# the same product\n"
                      "def matmul(float(M,K) Left, float(K,N) Right) -> (Out) {\n"
                      "  Out(r, c) +=! Left(r, kk) * Right(kk, c)\n"
                      "}\n"),
            TC_OK);
  tc_options* o = nullptr;
  tc_options_create(&o);
  ASSERT_EQ(tc_options_set(o, "cache", f.cache.c_str()), TC_OK);
  tc_kernel* k = nullptr;
  ASSERT_EQ(tc_compile(&k, renamed, "matmul", f.in, 2, o), TC_OK) << tc_last_error_message();
  tc_options_destroy(o);
  std::string d = f.describe(k);
  EXPECT_EQ(f.hit(k), 1);
  EXPECT_TRUE(has(d, "code loaded from the cache")) << d;
  EXPECT_FALSE(has(d, "compiled from the stored knobs")) << d;
  EXPECT_EQ(f.run(k), want);
  tc_kernel_destroy(k);
  tc_program_destroy(renamed);
}

TEST(WarmStart, CodeThatCannotBeUsedIsCompiledFromTheKnobs) {
  Fixture f;
  std::vector<float> want = f.expected();
  std::string good = f.artefact("cpu.tile", "16x4");
  std::string header = good.substr(0, good.find('\n') + 1);  // "tc-cpu-object 3\n"
  std::string other_pipeline = good;
  other_pipeline[header.size()] = other_pipeline[header.size()] == '0' ? '1' : '0';  // the fingerprint
  // "<fingerprint> <entry's def name>\n", then the object
  std::string not_linkable = good.substr(0, good.find('\n', header.size()) + 1) + "\x7f" "ELF but not an object";
  struct Case {
    std::string code, why;
  } cases[] = {{"garbage", "not in this build's format"},
               {other_pipeline, "compiled from another pipeline"},
               {not_linkable, "cannot link"},
               {good.substr(0, good.size() / 2), "cannot link"}};  // a truncated object
  double best = 1.0;
  for (const Case& c : cases) {
    f.store("cpu.tile=16x4 cpu.contract=0", c.code, best /= 2);
    tc_kernel* k = f.compile(f.cache);
    std::string d = f.describe(k);
    EXPECT_EQ(f.hit(k), 1) << c.why;
    EXPECT_TRUE(has(d, "compiled from the stored knobs")) << d;
    EXPECT_TRUE(has(d, c.why)) << d;
    EXPECT_TRUE(has(d, "register-blocked 16x4")) << d;
    EXPECT_EQ(f.run(k), want) << c.why;
    tc_kernel_destroy(k);
  }
}

TEST(WarmStart, AFreshProcessLinksTheCachedRuntimeAndKernel) {
  Fixture f;
  std::vector<float> want = f.expected();
  f.store("cpu.tile=16x4 cpu.contract=0", f.artefact("cpu.tile", "16x4"), 1.0);
  // The runtime goes to the cache the way the tuner puts it there.
  const auto& cpu = tc::backends::find_backend("cpu");
  auto store = tc::cache::Store::open(f.cache, false);
  tc::tune::store_shared_code(*store, cpu, cpu.default_target());
  std::string runtime_key = tc::tune::shared_code_key(cpu, cpu.default_target());
  ASSERT_TRUE(store->get(runtime_key));
  std::string out = f.child();
  EXPECT_TRUE(has(out, "hit=1")) << out;
  EXPECT_TRUE(has(out, "code loaded from the cache")) << out;
  EXPECT_FALSE(has(out, "runtime was not used")) << out;
  EXPECT_TRUE(has(out, f.values_text(want))) << out;
  // A damaged runtime object: the fresh process builds its own and still links the kernel.
  tc::cache::Record damaged = *store->get(runtime_key);
  damaged.artefact = "\x7f" "ELF, but not Halide's runtime";
  damaged.best_ms = -1;  // replaces the stored one
  ASSERT_TRUE(store->put_if_faster(damaged));
  out = f.child();
  EXPECT_TRUE(has(out, "hit=1")) << out;
  EXPECT_TRUE(has(out, "the cached runtime was not used")) << out;
  EXPECT_TRUE(has(out, "code loaded from the cache")) << out;
  EXPECT_TRUE(has(out, f.values_text(want))) << out;
}

}  // namespace
