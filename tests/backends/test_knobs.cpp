// test_knobs.cpp — knobs as data (src/backends/knob.h, registry.h): each kind parses what its
// values text says and nothing else; parsed values reach the backend with defaults filled in;
// the registry lists general options then every backend's knobs; the domains a tuner tries are
// derived from the bound sizes.
#include <gtest/gtest.h>

#include <algorithm>

#include "tune/options.h"
#include "common/error_of.h"
#include "infer_test_util.h"

using tc::backends::find_backend;
using tc::tune::find_option;
using tc::backends::KnobValues;
using tc::tune::OptionSet;
using tc_test::error_of;

namespace {

std::vector<std::string> domain_of(const std::string& key, const tc::ir::BoundDef& b) {
  return find_option(key).domain(b);
}

bool contains(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

}  // namespace

TEST(Knobs, ParseByKind) {
  EXPECT_EQ(find_option("cpu.tile").parse("32x4").x, 32);
  EXPECT_EQ(find_option("cpu.tile").parse("32x4").y, 4);
  EXPECT_TRUE(find_option("cpu.tile").parse("auto").is_auto);
  EXPECT_EQ(find_option("cpu.vectorize").parse("64").x, 64);
  EXPECT_EQ(find_option("threads").parse("0").x, 0);
  EXPECT_EQ(find_option("cpu.pack").parse("0").x, 0);
  EXPECT_EQ(find_option("cpu.parallel").parse("none").text, "none");
  // Sizes: one to max_items numbers, each in min..max.
  EXPECT_EQ(find_option("cuda.block").parse("32x4x2").sizes, (std::vector<int64_t>{32, 4, 2}));
  EXPECT_EQ(find_option("cuda.tile").parse("64").sizes, (std::vector<int64_t>{64}));
  EXPECT_EQ(find_option("cuda.tile").parse("1x2x3x4x5x6x7x8").sizes.size(), 8u);
  EXPECT_TRUE(find_option("cuda.grid").parse("auto").is_auto);
  EXPECT_EQ(find_option("cuda.block").values_text(), "auto|N[xN]... (at most 3, N in 1..1024)");
  // Seconds: decimal seconds, up to 3 decimals, as milliseconds.
  EXPECT_EQ(find_option("tune.budget").parse("0.1").x, 100);
  EXPECT_EQ(find_option("tune.budget").parse("0").x, 0);
  EXPECT_EQ(find_option("tune.budget").parse("2.25").x, 2250);
  EXPECT_EQ(find_option("tune.budget").parse("0.001").x, 1);
  EXPECT_EQ(find_option("tune.budget").parse("86400").x, 86400000);
  EXPECT_EQ(find_option("tune.budget").values_text(), "0..86400 (seconds, up to 3 decimals)");
  for (const auto& [key, bad] : std::vector<std::pair<std::string, std::string>>{
           {"cpu.tile", "32x"}, {"cpu.tile", "0x4"}, {"cpu.tile", "+3x4"}, {"cpu.vectorize", "65"},
           {"cpu.vectorize", "-1"}, {"threads", "auto"}, {"cpu.pack", "auto"}, {"cpu.parallel", "inner"},
           {"backend", "gpu"}, {"cpu.unroll", "999999999999999"}, {"cuda.block", "32x"}, {"cuda.block", "x32"},
           {"cuda.block", "1x1x1x1"}, {"cuda.block", "2048"}, {"cuda.tile", "0"}, {"cuda.grid", "4x-1"},
           {"cuda.fusion", "some"}, {"tune.budget", "0.0001"}, {"tune.budget", ".5"}, {"tune.budget", "1."},
           {"tune.budget", "-1"}, {"tune.budget", "1e3"}, {"tune.budget", "86400.001"}, {"tune.budget", "1.2.3"},
           {"tune.budget", " 1"}}) {
    std::string m = error_of([&] { find_option(key).parse(bad); }, TC_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(m.find("option '" + key + "' cannot be '" + bad + "' (allowed: " + find_option(key).values_text() + ")"),
              std::string::npos)
        << m;
  }
}

TEST(Knobs, RegistryOrderAndBackendValues) {
  const auto& all = tc::tune::all_options();
  ASSERT_GE(all.size(), 3u);
  EXPECT_EQ(all[0]->key, "backend");
  EXPECT_EQ(all[1]->key, "checked");
  EXPECT_EQ(all[2]->key, "threads");
  EXPECT_EQ(all[0]->values_text(), "cpu|reference|cuda");  // from the registry's backends
  EXPECT_EQ(find_backend("reference").knobs().size(), 0u);
  EXPECT_FALSE(find_backend("cpu").knobs().empty());
  EXPECT_NE(error_of([] { find_backend("opencl"); }, TC_ERROR_INVALID_ARGUMENT).find("backends: cpu, reference, cuda"),
            std::string::npos);
}

TEST(Knobs, ValuesForABackendHaveDefaultsAndOnlyItsKnobs) {
  OptionSet o;
  o.set("cpu.tile", "16x2");
  o.set("checked", "0");
  KnobValues cpu = o.values_for(find_backend("cpu"));
  EXPECT_EQ(cpu.get("cpu.tile").x, 16);
  EXPECT_FALSE(cpu.flag("checked"));
  EXPECT_TRUE(cpu.is_auto("cpu.unroll"));  // not set: the default
  EXPECT_TRUE(cpu.flag("cpu.pack"));
  KnobValues ref = o.values_for(find_backend("reference"));
  EXPECT_FALSE(ref.flag("checked"));
  error_of([&] { ref.get("cpu.tile"); }, TC_ERROR_INTERNAL);  // not the reference backend's
  EXPECT_EQ(o.to_string().substr(0, 30), "backend=cpu checked=0 threads=");
}

TEST(Knobs, DomainsDerivedFromBoundSizes) {
  auto p = tc_test::build("def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }");
  tc_test::Inputs small, large;
  small.f32({3, 5}).f32({5, 6});
  large.f32({512, 64}).f32({64, 1000});
  auto bs = tc_test::bind_def(p, small), bl = tc_test::bind_def(p, large);
  // Tiles: X powers of two from 4 up to the last extent (at most 256) and 48 and 96 (three and
  // six 16-lane vectors) where they fit, Y powers of two up to the one before (at most 512).
  EXPECT_EQ(domain_of("cpu.tile", bs), (std::vector<std::string>{"4x1", "4x2"}));
  auto tiles = domain_of("cpu.tile", bl);
  EXPECT_TRUE(contains(tiles, "256x512"));
  EXPECT_TRUE(contains(tiles, "48x256"));
  EXPECT_TRUE(contains(tiles, "4x1"));
  EXPECT_FALSE(contains(tiles, "512x64"));
  EXPECT_FALSE(contains(tiles, "4x1024"));
  EXPECT_EQ(tiles.size(), 9u * 10u);
  EXPECT_EQ(domain_of("cpu.parallel", bs), (std::vector<std::string>{"outer", "none"}));
  // Every domain value is a value its knob accepts.
  for (const auto* k : tc::tune::all_options())
    if (k->domain)
      for (const auto& v : k->domain(bl)) EXPECT_NO_THROW(k->parse(v)) << k->key << "=" << v;
}

// Register blocks hold at most 32 accumulator vectors: a tile beyond that is narrowed (and
// described as such) rather than compiled into fully unrolled code that spills and that took
// LLVM minutes (fcrelu with cpu.tile=256x8 cpu.unroll=8: over 10 minutes before the cap).
TEST(Knobs, RegisterBlocksAreNarrowedToTheAccumulatorsThereAre) {
  const auto& cpu = find_backend("cpu");
  auto describe = [&](const std::string& src, tc_test::Inputs& in, const std::string& tile) {
    auto b = tc_test::bind_def(tc_test::build(src), in);
    OptionSet o;
    for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
             {"cpu.tile", tile}, {"cpu.unroll", "8"}, {"cpu.vectorize", "16"}, {"cpu.pack", "0"}, {"cpu.contract", "0"}})
      o.set(k, v);
    return cpu.compile(b, cpu.default_target(), o.values_for(cpu))->describe();
  };
  // A register-blocked matmul: 256 wide in vectors of 16, 8 rows, is 128 accumulators; 4
  // vectors wide (64) fit.
  const char* mm = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }";
  tc_test::Inputs mm_in;
  mm_in.f32({64, 32}).f32({32, 512});
  std::string wide = describe(mm, mm_in, "256x8");
  EXPECT_NE(wide.find("register-blocked 64x8 (vector 16)"), std::string::npos) << wide;
  EXPECT_NE(wide.find("tile narrowed to 32 accumulator vectors"), std::string::npos) << wide;
  std::string fits = describe(mm, mm_in, "48x8");
  EXPECT_NE(fits.find("register-blocked 48x8 (vector 16)"), std::string::npos) << fits;
  EXPECT_EQ(fits.find("narrowed"), std::string::npos) << fits;
  // A dot-product reduction (fcrelu's, contiguous along k): a vector of partial sums per output
  // element, so 256x8 blocks are 2048 vectors; 4x8 fit.
  const char* fc = "def fcrelu(float(B,K) I, float(N,K) W, float(N) bias) -> (O) {\n"
                   "  O(b,n) +=! I(b,k) * W(n,k)\n  O(b,n) = fmax(O(b,n) + bias(n), 0)\n}";
  tc_test::Inputs fc_in;
  fc_in.f32({64, 256}).f32({512, 256}).f32({512});
  std::string dot = describe(fc, fc_in, "256x8");
  EXPECT_NE(dot.find("blocks 4x8"), std::string::npos) << dot;
  EXPECT_NE(dot.find("tile narrowed to 32 accumulator vectors"), std::string::npos) << dot;
  std::string dot_fits = describe(fc, fc_in, "4x8");
  EXPECT_NE(dot_fits.find("blocks 4x8"), std::string::npos) << dot_fits;
  EXPECT_EQ(dot_fits.find("narrowed"), std::string::npos) << dot_fits;
}

// The default register block comes from the target and the extent: on AVX-512 (32 vector
// registers) 3 vectors x 8 rows where 48-wide tiles cover the columns with at most 10%
// recomputed (1024 columns), fewer vectors where they would not (54 columns: 2 vectors
// compute 64, 3 would compute 96); on 16 registers 2 vectors x 6 rows.
TEST(Knobs, DefaultRegisterBlockFromTheTargetAndTheExtent) {
  const auto& cpu = find_backend("cpu");
  auto describe = [&](int64_t n) {
    tc_test::Inputs in;
    in.f32({64, 32}).f32({32, n});
    auto b = tc_test::bind_def(tc_test::build("def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }"), in);
    OptionSet o;
    o.set("cpu.contract", "0");  // the pipeline's register blocks
    return cpu.compile(b, cpu.default_target(), o.values_for(cpu))->describe();
  };
  std::string wide = describe(1024), narrow = describe(54);
  if (wide.find("avx512") != std::string::npos) {
    EXPECT_NE(wide.find("register-blocked 48x8 (vector 16), tiles 48x32"), std::string::npos) << wide;
    EXPECT_NE(narrow.find("register-blocked 32x8 (vector 16)"), std::string::npos) << narrow;
  } else {
    EXPECT_NE(wide.find("x6 (vector"), std::string::npos) << wide;
  }
}

// Few rows that the default block would cover with more than 10% recomputed (tbmm's 26:
// 8+8+8+8) are split into the fewest equal blocks of at most three quarters of the vector
// registers, one block a tile: 2 x 13 rows one vector wide on AVX-512. 24 rows (3 x 8) and
// 1024 rows keep the default; a row count past twice the largest block keeps it too.
TEST(Knobs, FewRowsSplitIntoEqualRegisterBlocks) {
  const auto& cpu = find_backend("cpu");
  auto describe = [&](int64_t rows, int64_t cols) {
    tc_test::Inputs in;
    in.f32({3, rows, 72}).f32({3, cols, 72});
    auto b = tc_test::bind_def(
        tc_test::build("def tbmm(float(B,N,K) X, float(B,M,K) Y) -> (Z) { Z(b,n,m) +=! X(b,n,k) * Y(b,m,k) }"), in);
    OptionSet o;
    o.set("cpu.contract", "0");  // the pipeline's register blocks
    return cpu.compile(b, cpu.default_target(), o.values_for(cpu))->describe();
  };
  std::string few = describe(26, 26), even = describe(24, 26), many = describe(60, 26);
  if (few.find("avx512") == std::string::npos) GTEST_SKIP() << "AVX-512's blocks: " << few;
  EXPECT_NE(few.find("register-blocked 16x13 (vector 16), tiles 16x13"), std::string::npos) << few;
  EXPECT_NE(even.find("register-blocked 16x8 (vector 16)"), std::string::npos) << even;
  EXPECT_NE(many.find("register-blocked 16x8 (vector 16)"), std::string::npos) << many;
  // The knobs win over the model.
  tc_test::Inputs in;
  in.f32({3, 26, 72}).f32({3, 26, 72});
  auto b = tc_test::bind_def(
      tc_test::build("def tbmm(float(B,N,K) X, float(B,M,K) Y) -> (Z) { Z(b,n,m) +=! X(b,n,k) * Y(b,m,k) }"), in);
  OptionSet o;
  o.set("cpu.unroll", "8");
  std::string set = cpu.compile(b, cpu.default_target(), o.values_for(cpu))->describe();
  EXPECT_NE(set.find("register-blocked 16x8 (vector 16)"), std::string::npos) << set;
}
