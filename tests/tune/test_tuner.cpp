// test_tuner.cpp — tc_tune (src/tune/) through the C API: it beats a bad start and
// stores the winner; wrong candidates are never stored; the callback stops it; the tuning
// history remembers every candidate, so a second tune of the same key measures none of them
// again; records of the same def at other sizes seed the first population; a winner that does
// not hold up against the start in the final comparison gives way to it, in the result and
// the cache (hooks into the search, tc::tune::TuneHooks through tc::api::tune_with_hooks,
// observe the candidates and the first population, and bend timings).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cache/store.h"
#include "common/matmul_case.h"
#include "api/tune_with_hooks.h"
#include "tc/tc.h"
#include "tune/tuner.h"

namespace {

struct Fixture : tc_test::MatmulCase {
  Fixture(int m = 96, int k = 64, int n = 96) : MatmulCase(m, k, n) {}
  tc::tune::TuneHooks hooks;  // what tune() passes to the search

  // tc_tune of this case's program on its inputs, with `hooks`.
  int tune(tc_kernel** out, const tc_options* o, tc_tune_callback callback = nullptr, void* user = nullptr) {
    return tc::api::tune_with_hooks(out, program, nullptr, in, 2, o, callback, user, &hooks);
  }

  // A deliberately bad start: the pipeline (not the contraction route) with scalar code, 1x1
  // tiles, one thread. The search is two generations whatever the machine's speed:
  // tune.generations ends it, never the budget.
  tc_options* bad_start(const std::string& cache) {
    tc_options* o = nullptr;
    tc_options_create(&o);
    const char* kv[][2] = {{"cpu.vectorize", "1"},    {"cpu.tile", "1x1"},      {"cpu.unroll", "1"},
                           {"threads", "1"},          {"cpu.contract", "0"},    {"tune.population", "6"},
                           {"tune.generations", "2"}, {"tune.threads", "2"},    {"tune.budget", "86400"}};
    for (auto& p : kv) EXPECT_EQ(tc_options_set(o, p[0], p[1]), TC_OK);
    EXPECT_EQ(tc_options_set(o, "cache", cache.c_str()), TC_OK);
    return o;
  }

  // k computes what the starting point of `o` computes.
  void expect_same_as_start(tc_kernel* k, const tc_options* o) {
    tc_kernel* start = nullptr;
    ASSERT_EQ(tc_compile(&start, program, nullptr, in, 2, o), TC_OK) << tc_last_error_message();
    EXPECT_EQ(run(k), run(start));
    tc_kernel_destroy(start);
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

// "cpu.tile=32x4 cpu.unroll=8" as key -> value.
std::map<std::string, std::string> knobs_of(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream words(text);
  std::string kv;
  while (words >> kv) out[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
  return out;
}

void no_damage(const std::string& key, const std::string& why) { ADD_FAILURE() << "damaged " << key << ": " << why; }

// The records of tuned kernels: without the backend's shared code (Halide's runtime object),
// which the tuner stores too.
std::vector<tc::cache::Record> kernel_records(const tc::cache::Store& store) {
  std::vector<tc::cache::Record> out;
  for (auto& r : store.all(no_damage))
    if (r.def != "(shared code)") out.push_back(r);
  return out;
}

// Tunes f's matmul with its bad start into `cache`, recording the first population and every
// candidate measured.
void tune(Fixture& f, const std::string& cache, std::vector<std::string>& first, std::vector<std::string>& measured) {
  f.hooks.first_population = [&](const std::vector<std::string>& p) { first = p; };
  f.hooks.measuring = [&](const std::string& knobs) { measured.push_back(knobs); };
  tc_options* o = f.bad_start(cache);
  tc_kernel* k = nullptr;
  ASSERT_EQ(f.tune(&k, o), TC_OK) << tc_last_error_message();
  f.expect_same_as_start(k, o);
  tc_kernel_destroy(k);
  tc_options_destroy(o);
  f.hooks.first_population = nullptr;
  f.hooks.measuring = nullptr;
}

}  // namespace

TEST(Tuner, BeatsABadStartStoresItAndALaterCompileFindsIt) {
  Fixture f;
  std::string cache = f.dir + "/cache";
  tc_options* o = f.bad_start(cache);
  Log log;
  tc_kernel* tuned = nullptr;
  ASSERT_EQ(f.tune(&tuned, o, on_progress, &log), TC_OK) << tc_last_error_message();
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

// Every tune has an answer: the starting point is measured and stored before the search
// spends the budget on anything else, however short the budget (0: the starting point only)
// and however slow the machine (nothing here depends on how long a compilation takes). The
// description says what was stored, and when nothing was, why.
TEST(Tuner, ABudgetTooShortForTheSearchStillMeasuresAndStoresTheStart) {
  Fixture f;
  std::string cache = f.dir + "/cache";
  auto tune_with_budget = [&](const char* budget, Log& log, bool only_the_budget_ends_it = false) {
    tc_options* o = f.bad_start(cache);
    EXPECT_EQ(tc_options_set(o, "tune.budget", budget), TC_OK) << tc_last_error_message();
    for (const char* key : {"tune.generations", "tune.patience"})
      if (only_the_budget_ends_it) EXPECT_EQ(tc_options_set(o, key, "1000"), TC_OK) << tc_last_error_message();
    tc_kernel* k = nullptr;
    EXPECT_EQ(f.tune(&k, o, on_progress, &log), TC_OK) << tc_last_error_message();
    f.expect_same_as_start(k, o);
    std::string text = f.describe(k);
    tc_kernel_destroy(k);
    tc_options_destroy(o);
    return text;
  };
  Log log;
  std::string text = tune_with_budget("0", log);
  EXPECT_EQ(log.calls, 1);  // the starting point, reported as it is measured
  EXPECT_EQ(log.last.candidates_done, 1);
  EXPECT_GT(log.last.default_ms, 0);
  EXPECT_EQ(log.last.best_ms, log.last.default_ms);
  EXPECT_EQ(log.last.budget_s, 0);
  EXPECT_TRUE(has(text, "tuned now: 1 candidates (0 rejected)")) << text;
  EXPECT_TRUE(has(text, "the budget of 0 s ran out after the starting point (tune.budget), stored in '" + cache + "'"))
      << text;
  auto store = tc::cache::Store::open(cache, false);
  auto records = kernel_records(*store);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_TRUE(has(records[0].knobs, "cpu.tile=1x1")) << records[0].knobs;
  EXPECT_EQ(records[0].best_ms, records[0].default_ms);
  EXPECT_EQ(records[0].candidates, 1);
  EXPECT_FALSE(records[0].artefact.empty());  // its code: a later process links it
  EXPECT_EQ(store->all_history(no_damage).size(), 1u);
  // A later tc_compile of the def at these sizes (no knobs set) finds it.
  tc_options* o = nullptr;
  tc_options_create(&o);
  tc_options_set(o, "cache", cache.c_str());
  tc_kernel* later = nullptr;
  ASSERT_EQ(tc_compile(&later, f.program, nullptr, f.in, 2, o), TC_OK) << tc_last_error_message();
  int hit = 0;
  tc_kernel_cache_hit(later, &hit);
  EXPECT_EQ(hit, 1) << f.describe(later);
  tc_kernel_destroy(later);
  tc_options_destroy(o);

  // Again: the history knows the start's time, so nothing is measured (no progress call) and
  // nothing stored, which the description says instead of "stored".
  Log again;
  text = tune_with_budget("0", again);
  EXPECT_EQ(again.calls, 0);
  EXPECT_TRUE(has(text, "tuned now: 0 candidates")) << text;
  EXPECT_TRUE(has(text, "nothing stored in '" + cache + "': its record of this key is as fast or faster")) << text;
  EXPECT_FALSE(has(text, "stored in '" + cache + "';")) << text;

  // A tenth of a second, in a new cache: the start first, whatever the search managed after it
  // (with more generations and patience than a tenth of a second holds: candidates compiled
  // before link their kept objects in milliseconds).
  cache = f.dir + "/cache2";
  Log tenth;
  text = tune_with_budget("0.1", tenth, true);
  ASSERT_GE(tenth.calls, 1);
  EXPECT_GT(tenth.last.default_ms, 0);
  EXPECT_EQ(tenth.last.budget_s, 0.1);
  EXPECT_TRUE(has(text, "the budget of 0.1 s ran out")) << text;
  EXPECT_TRUE(has(text, "stored in '" + cache + "'")) << text;
  EXPECT_EQ(kernel_records(*tc::cache::Store::open(cache, false)).size(), 1u);

  // With the cache off, the description says so.
  tc_options* off = f.bad_start("off");
  tc_options_set(off, "tune.budget", "0");
  tc_kernel* k = nullptr;
  ASSERT_EQ(f.tune(&k, off), TC_OK) << tc_last_error_message();
  EXPECT_TRUE(has(f.describe(k), "(tune.budget), cache off")) << f.describe(k);
  tc_kernel_destroy(k);
  tc_options_destroy(off);
}

// Knobs a kernel does not use (the pipeline's tiles on the contraction route) compile to the
// same code: such a candidate is measured once, the others take its time, and the history
// says whose.
TEST(Tuner, CandidatesOfTheSameCodeAreMeasuredOnce) {
  Fixture f;
  std::string cache = f.dir + "/cache";
  std::map<std::string, int> timed_runs;
  f.hooks.timed = [&](const std::string& knobs, bool, double ms) {
    timed_runs[knobs]++;
    return ms;
  };
  tc_options* o = f.bad_start(cache);
  tc_options_set(o, "cpu.contract", "1");
  tc_kernel* k = nullptr;
  ASSERT_EQ(f.tune(&k, o), TC_OK) << tc_last_error_message();
  f.expect_same_as_start(k, o);
  auto store = tc::cache::Store::open(cache, false);
  std::map<std::string, double> times;
  int same = 0;
  auto history = store->all_history(no_damage);
  for (const auto& h : history) times[h.knobs] = h.ms;
  for (const auto& h : history) {
    if (h.why.rfind("the same code as ", 0) != 0) continue;
    ++same;
    std::string first = h.why.substr(17);
    ASSERT_TRUE(times.count(first)) << first;
    EXPECT_EQ(h.ms, times[first]);
    EXPECT_EQ(timed_runs.count(h.knobs), 0u) << "timed again: " << h.knobs;
    EXPECT_GT(timed_runs[first], 0) << first;
  }
  EXPECT_GT(same, 0) << "every candidate measured";
  tc_kernel_destroy(k);
  tc_options_destroy(o);
}

TEST(Tuner, AWrongCandidateIsNeverStored) {
  Fixture f;
  std::string cache = f.dir + "/cache";
  // Every candidate after the starting point computes a wrong result.
  f.hooks.after_check_run = [](int candidate, const std::vector<tc::runtime::TensorView>& outputs) {
    if (candidate > 0) reinterpret_cast<float*>(outputs[0].data)[0] += 1.0f;
  };
  tc_options* o = f.bad_start(cache);
  tc_kernel* k = nullptr;
  ASSERT_EQ(f.tune(&k, o), TC_OK) << tc_last_error_message();
  std::string d = f.describe(k);
  EXPECT_TRUE(has(d, "rejected")) << d;
  EXPECT_TRUE(has(d, "cpu.tile=1x1")) << d;  // the start is what it returns
  // What is stored is the start (nothing beat it) and the backend's shared code, no candidate.
  auto store = tc::cache::Store::open(cache, false);
  for (const auto& r : store->all(no_damage))
    EXPECT_TRUE(r.def == "(shared code)" || has(r.knobs, "cpu.tile=1x1")) << r.def << ": " << r.knobs;
  // The history knows why: the start measured, every other candidate a wrong result.
  auto history = store->all_history(no_damage);
  ASSERT_GE(history.size(), 2u);
  int wrong = 0;
  for (const auto& h : history) {
    if (h.outcome != tc::cache::Outcome::WrongResult) continue;
    ++wrong;
    EXPECT_EQ(h.ms, 0);
    EXPECT_TRUE(has(h.why, "computes a different result than the starting point")) << h.why;
  }
  EXPECT_EQ(wrong, static_cast<int>(history.size()) - 1);
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
  ASSERT_EQ(f.tune(&k, o, on_progress, &log), TC_OK);
  EXPECT_EQ(log.calls, 1);
  EXPECT_EQ(log.last.candidates_done, 1);
  tc_kernel_destroy(k);
  std::string open_dir = f.dir + "/open";
  ::mkdir(open_dir.c_str(), 0777);
  ::chmod(open_dir.c_str(), 0777);
  tc_options_set(o, "cache", open_dir.c_str());
  EXPECT_EQ(f.tune(&k, o), TC_ERROR_CACHE);
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

TEST(Tuner, ASecondTuneMeasuresNoPointTheHistoryKnows) {
  Fixture f;
  std::string cache = f.dir + "/cache";
  std::vector<std::string> first1, measured1, first2, measured2;
  tune(f, cache, first1, measured1);
  auto store = tc::cache::Store::open(cache, false);
  auto history1 = store->all_history(no_damage);  // decoded: every checksum verified
  std::set<std::string> known;
  for (const auto& h : history1) {
    known.insert(h.knobs);
    if (h.timed()) EXPECT_GT(h.ms, 0) << h.knobs;
  }
  EXPECT_EQ(history1.size(), measured1.size());  // every candidate measured is remembered, once
  EXPECT_EQ(known, std::set<std::string>(measured1.begin(), measured1.end()));
  ASSERT_FALSE(first1.empty());
  EXPECT_TRUE(known.count(first1[0])) << first1[0];  // the start was measured
  auto records = kernel_records(*store);
  ASSERT_EQ(records.size(), 1u);
  tune(f, cache, first2, measured2);
  EXPECT_EQ(first2[0], first1[0]);
  for (const auto& k : measured2) EXPECT_FALSE(known.count(k)) << "measured again: " << k;
  // The stored best (this key's record, and the history's best) is in the first population.
  EXPECT_NE(std::find(first2.begin(), first2.end(), records[0].knobs), first2.end()) << records[0].knobs;
  EXPECT_EQ(store->all_history(no_damage).size(), history1.size() + measured2.size());
}

TEST(Tuner, RecordsOfOtherSizesSeedTheFirstPopulation) {
  Fixture big;
  std::string cache = big.dir + "/cache";
  std::vector<std::string> first, measured;
  tune(big, cache, first, measured);
  auto store = tc::cache::Store::open(cache, false);
  auto records = kernel_records(*store);
  ASSERT_EQ(records.size(), 1u);  // scalar 1x1 tiles are easy to beat
  tc::cache::Record tuned = records[0];
  EXPECT_EQ(tuned.backend, "cpu");
  EXPECT_EQ(tuned.family.size(), 64u);
  // Another record of the family naming two knobs, with a tile no small size has.
  tc::cache::Record extra = tuned;
  extra.key += "(another size)";
  extra.knobs = "cpu.vectorize=16 cpu.tile=4096x4096";
  ASSERT_TRUE(store->put_if_faster(extra));

  Fixture small(40, 24, 36);
  first.clear();
  measured.clear();
  tune(small, cache, first, measured);
  ASSERT_GE(first.size(), 3u);
  auto start = knobs_of(first[0]);
  EXPECT_EQ(start["cpu.tile"], "1x1");
  // The seeds follow the start (in key-hash order): the tuned record's knobs, its tile and rows
  // (the knobs whose values depend on the size) fitted to this size if they have to be; and the extra record's, its tile moved to the nearest of this
  // size's (the cpu backend's tiles for a 40x36 output go up to 32x32), the knobs it does not
  // name left at the start's values.
  auto tuned_knobs = knobs_of(tuned.knobs);
  int seen = 0;
  for (size_t i = 1; i < 3; ++i) {
    auto p = knobs_of(first[i]);
    if (p["cpu.vectorize"] == "16" && p["cpu.tile"] == "32x32" && p["cpu.unroll"] == start["cpu.unroll"] &&
        p["cpu.parallel"] == start["cpu.parallel"]) {
      ++seen;
      continue;
    }
    bool same = true;
    for (const auto& [k, v] : tuned_knobs)
      if (k != "cpu.tile" && k != "cpu.rows") same = same && p[k] == v;
    EXPECT_TRUE(same) << first[i] << " is not " << tuned.knobs;
    seen += same ? 1 : 0;
  }
  EXPECT_EQ(seen, 2) << first[1] << " / " << first[2];
  // Both were measured at this size (unless one is the start), and its record joins the family.
  for (size_t i = 1; i < 3; ++i)
    if (first[i] != first[0]) EXPECT_NE(std::find(measured.begin(), measured.end(), first[i]), measured.end()) << first[i];
  records = store->all(no_damage);
  int family = 0;
  for (const auto& r : records) family += r.family == tuned.family && r.sizes == "M=40 K=24 N=36";
  EXPECT_EQ(family, 1);
}

// The first generation is twice tune.population (6 here), without repeats: the
// start, then (an empty cache and history) up to half of it the start's neighbours, each the
// start with exactly one knob changed, then random points.
TEST(Tuner, TheFirstGenerationIsTwiceThePopulationWithTheStartsNeighbours) {
  Fixture f;
  std::vector<std::string> first, measured;
  tune(f, f.dir + "/cache", first, measured);
  ASSERT_EQ(first.size(), 12u);
  EXPECT_EQ(std::set<std::string>(first.begin(), first.end()).size(), first.size());
  auto start = knobs_of(first[0]);
  EXPECT_EQ(start["cpu.tile"], "1x1");
  int neighbours = 0;
  for (size_t i = 1; i < first.size(); ++i) {
    auto p = knobs_of(first[i]);
    ASSERT_EQ(p.size(), start.size()) << first[i];
    int changed = 0;
    for (const auto& [k, v] : start) changed += p[k] != v;
    EXPECT_GE(changed, 1) << first[i];
    if (i <= 6) {  // the neighbours come first
      EXPECT_EQ(changed, 1) << first[i];
    }
    neighbours += changed == 1;
  }
  EXPECT_GE(neighbours, 6);
  // The other routes come right after the start (the bad start is on the pipeline,
  // cpu.contract=0: the contraction route is that knob's other value; the system's BLAS, where
  // one loads, is cpu.blas's), each the start with that one knob changed.
  auto second = knobs_of(first[1]);
  EXPECT_TRUE(second["cpu.contract"] == "1" || second["cpu.blas"] == "1") << first[1];
  bool contract = false;
  for (size_t i = 1; i <= 2; ++i) {
    auto p = knobs_of(first[i]);
    contract = contract || (p["cpu.contract"] == "1" && p["cpu.tile"] == "1x1");
  }
  EXPECT_TRUE(contract) << first[1] << "\n" << first[2];
}

// A candidate that looked faster during the search (the hook divides its times by 1000) but
// not in the final comparison with the start (the hook makes it 10x slower there) is not the
// result: the start is, and the record the search wrote is replaced by the start's; the last
// progress report says so (best and default both the start's time).
TEST(Tuner, AWinnerThatDoesNotHoldUpGivesWayToTheStart) {
  Fixture f;
  std::string cache = f.dir + "/cache";
  std::string fluke;  // the first candidate other than the start
  std::string start_text;
  f.hooks.timed = [&](const std::string& knobs, bool confirming, double ms) {
    if (start_text.empty()) start_text = knobs;  // the start is measured first
    if (knobs == start_text) return ms;
    if (fluke.empty()) fluke = knobs;
    if (knobs != fluke) return ms * 1000;  // every other candidate loses
    return confirming ? ms * 10 + 1 : ms / 1000;
  };
  tc_options* o = f.bad_start(cache);
  tc_kernel* k = nullptr;
  Log log;
  ASSERT_EQ(f.tune(&k, o, on_progress, &log), TC_OK) << tc_last_error_message();
  std::string text = f.describe(k);
  EXPECT_TRUE(has(text, "did not hold up against the start")) << text;
  EXPECT_EQ(log.last.best_ms, log.last.default_ms);
  EXPECT_TRUE(has(text, "cpu.tile=1x1")) << text;  // the start's knobs are the result's
  auto store = tc::cache::Store::open(cache, false);
  auto records = kernel_records(*store);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].knobs, start_text);
  EXPECT_EQ(records[0].best_ms, records[0].default_ms);
  EXPECT_EQ(log.last.best_ms, records[0].best_ms);
  f.expect_same_as_start(k, o);
  tc_kernel_destroy(k);
  tc_options_destroy(o);
}

// A winner faster than the start by less than the margin one process's timings can tell (3%)
// gives way to the start; one faster by more stays. The hook gives the confirmation's times:
// the start 10 ms, the winner 9.8 (2% faster) or 9.0 (10%).
TEST(Tuner, AWinnerWithinTheMarginGivesWayToTheStart) {
  for (double winner_ms : {9.8, 9.0}) {
    Fixture f;
    std::string cache = f.dir + "/cache";
    std::string fluke, start_text;
    f.hooks.timed = [&](const std::string& knobs, bool confirming, double ms) {
      if (start_text.empty()) start_text = knobs;
      if (knobs == start_text) return confirming ? 10.0 : ms;
      if (fluke.empty()) fluke = knobs;
      if (knobs != fluke) return ms * 1000;
      return confirming ? winner_ms : ms / 1000;
    };
    tc_options* o = f.bad_start(cache);
    tc_kernel* k = nullptr;
    ASSERT_EQ(f.tune(&k, o), TC_OK) << tc_last_error_message();
    std::string text = f.describe(k);
    auto store = tc::cache::Store::open(cache, false);
    auto records = kernel_records(*store);
    ASSERT_EQ(records.size(), 1u);
    if (winner_ms > 9.5) {
      EXPECT_TRUE(has(text, "faster by less than 3%")) << text;
      EXPECT_EQ(records[0].knobs, start_text);
    } else {
      EXPECT_TRUE(has(text, "confirmed against the start in alternation")) << text;
      EXPECT_EQ(records[0].knobs, fluke);
    }
    tc_kernel_destroy(k);
    tc_options_destroy(o);
    f.hooks.timed = nullptr;
  }
}

// A winner that holds up stays, and the description gives both times of the comparison.
TEST(Tuner, AWinnerThatHoldsUpStays) {
  Fixture f;
  std::string cache = f.dir + "/cache";
  std::string start;
  f.hooks.first_population = [&](const std::vector<std::string>& p) { start = p[0]; };
  tc_options* o = f.bad_start(cache);
  tc_kernel* k = nullptr;
  ASSERT_EQ(f.tune(&k, o), TC_OK) << tc_last_error_message();
  f.hooks.first_population = nullptr;
  std::string text = f.describe(k);
  EXPECT_TRUE(has(text, "confirmed against the start in alternation")) << text;
  auto store = tc::cache::Store::open(cache, false);
  auto records = kernel_records(*store);
  ASSERT_EQ(records.size(), 1u);
  // The winner, not the start (it may differ from it in one knob only: a neighbour); both
  // texts name the same knobs.
  ASSERT_EQ(knobs_of(start)["cpu.tile"], "1x1") << start;
  EXPECT_EQ(knobs_of(records[0].knobs).size(), knobs_of(start).size()) << records[0].knobs << " / " << start;
  EXPECT_NE(knobs_of(records[0].knobs), knobs_of(start)) << records[0].knobs;
  tc_kernel_destroy(k);
  tc_options_destroy(o);
}

// ---- tune.isolation=process: candidates in the candidate runner ------------------------------

namespace {

// The runner of this build (the tests link libtc's stages, not libtc.so, so the library's
// folder is not where it is).
const bool kRunnerFound = ::setenv("TC_CANDIDATE_RUNNER", TC_TEST_CANDIDATE_RUNNER, 1) == 0;

// Tunes f's bad start in candidate runners; `pick` sees the first population (the start
// first) before any candidate runs, and may set the runner's test hooks.
tc_kernel* tune_isolated(Fixture& f, const std::string& cache, const std::function<void(const std::vector<std::string>&)>& pick,
                         int timeout_s = 60) {
  f.hooks.first_population = pick;
  tc_options* o = f.bad_start(cache);
  EXPECT_EQ(tc_options_set(o, "tune.isolation", "process"), TC_OK);
  EXPECT_EQ(tc_options_set(o, "tune.timeout", std::to_string(timeout_s).c_str()), TC_OK);
  tc_kernel* k = nullptr;
  EXPECT_EQ(f.tune(&k, o), TC_OK) << tc_last_error_message();
  tc_options_destroy(o);
  return k;
}

const tc::cache::HistoryEntry* entry_of(const std::vector<tc::cache::HistoryEntry>& history, const std::string& knobs) {
  for (const auto& h : history)
    if (h.knobs == knobs) return &h;
  return nullptr;
}

}  // namespace

// A candidate whose run kills its process (the hook: SIGSEGV in the runner, as a bad address
// would) fails alone: it is in the history with how its process ended, the runner is started
// afresh for the next candidate, the others are measured, a wrong one is still rejected (the
// check hook sees the runner's outputs), and the result computes what the start computes.
TEST(Isolation, ACandidateThatCrashesFailsAloneAndTheRunnerStartsAfresh) {
  ASSERT_TRUE(kRunnerFound);
  Fixture f;
  std::string cache = f.dir + "/cache";
  std::string crashing;
  f.hooks.after_check_run = [](int candidate, const std::vector<tc::runtime::TensorView>& outputs) {
    if (candidate == 1) reinterpret_cast<float*>(outputs[0].data)[0] += 1.0f;
  };
  tc_kernel* k = tune_isolated(f, cache, [&](const std::vector<std::string>& first) {
    crashing = first.at(1);
    ::setenv("TC_TEST_RUNNER_FAULT", crashing.c_str(), 1);
  });
  ::unsetenv("TC_TEST_RUNNER_FAULT");
  ASSERT_NE(k, nullptr);
  std::string d = f.describe(k);
  EXPECT_TRUE(has(d, "candidates measured in candidate runner processes (")) << d;
  EXPECT_FALSE(has(d, "(1 started")) << d;
  auto store = tc::cache::Store::open(cache, false);
  auto history = store->all_history(no_damage);
  const tc::cache::HistoryEntry* h = entry_of(history, crashing);
  ASSERT_NE(h, nullptr) << crashing;
  EXPECT_EQ(h->outcome, tc::cache::Outcome::RunFailed);
  EXPECT_TRUE(has(h->why, "its process (the candidate runner) was killed by signal 11 (Segmentation fault)")) << h->why;
  int measured = 0, wrong = 0;
  for (const auto& e : history) {
    measured += e.outcome == tc::cache::Outcome::Measured;
    wrong += e.outcome == tc::cache::Outcome::WrongResult;
  }
  EXPECT_GE(measured, 3);
  EXPECT_EQ(wrong, 1);
  tc_options* o = f.bad_start(cache);
  f.expect_same_as_start(k, o);
  tc_kernel_destroy(k);
  tc_options_destroy(o);
}

// A candidate that never finishes is killed once it has had what one at the cut-off (5x the
// best) would need, long before tune.timeout, and is counted cut off; the search goes on.
TEST(Isolation, ACandidateThatHangsIsKilledOnceSlowerThanTheCutOff) {
  ASSERT_TRUE(kRunnerFound);
  Fixture f(24, 16, 24);  // small: every other candidate's runs take milliseconds, under load too
  std::string cache = f.dir + "/cache";
  std::string hanging;
  tc_kernel* k = tune_isolated(
      f, cache,
      [&](const std::vector<std::string>& first) {
        hanging = first.at(2);
        ::setenv("TC_TEST_RUNNER_HANG", hanging.c_str(), 1);
      },
      600);
  ::unsetenv("TC_TEST_RUNNER_HANG");
  ASSERT_NE(k, nullptr);
  auto store = tc::cache::Store::open(cache, false);
  auto history = store->all_history(no_damage);
  const tc::cache::HistoryEntry* h = entry_of(history, hanging);
  ASSERT_NE(h, nullptr) << hanging;
  EXPECT_EQ(h->outcome, tc::cache::Outcome::CutOff);
  EXPECT_TRUE(has(h->why, "before its first timed run ended: slower than 5x the best so far")) << h->why;
  ASSERT_TRUE(has(h->why, "killed after ")) << h->why;
  double killed_after_s = std::stod(h->why.substr(h->why.find("killed after ") + 13));
  EXPECT_GE(killed_after_s, 3.0) << h->why;  // the slack for loading and a slow runner
  EXPECT_LT(killed_after_s, 60.0) << h->why;
  EXPECT_GE(history.size(), 4u);
  tc_kernel_destroy(k);
}

// The starting point has no best to be cut off against: one that never finishes in the runner
// is killed at tune.timeout, and tc_tune fails saying so.
TEST(Isolation, AStartThatHangsIsKilledAtTheTimeout) {
  ASSERT_TRUE(kRunnerFound);
  Fixture f(24, 16, 24);
  f.hooks.first_population = [](const std::vector<std::string>& first) {
    ::setenv("TC_TEST_RUNNER_HANG", first.at(0).c_str(), 1);
  };
  tc_options* o = f.bad_start("off");
  EXPECT_EQ(tc_options_set(o, "tune.isolation", "process"), TC_OK);
  EXPECT_EQ(tc_options_set(o, "tune.timeout", "2"), TC_OK);
  tc_kernel* k = nullptr;
  EXPECT_EQ(f.tune(&k, o), TC_ERROR_RUNTIME);
  ::unsetenv("TC_TEST_RUNNER_HANG");
  EXPECT_TRUE(has(tc_last_error_message(), "did not finish within 2 s (tune.timeout): its process was killed"))
      << tc_last_error_message();
  EXPECT_EQ(k, nullptr);
  tc_options_destroy(o);
}

// auto on host memory: a start whose call takes a second or more (here the timed hook says
// 1.5 s) has its candidates measured in the candidate runner, where one too slow to finish soon
// can be killed; a short start's are measured in this process (the next test).
TEST(Isolation, AutoOnTheHostMeasuresTheCandidatesOfALongStartInTheRunner) {
  ASSERT_TRUE(kRunnerFound);
  Fixture f(24, 16, 24);
  std::string start;
  f.hooks.first_population = [&](const std::vector<std::string>& first) { start = first.at(0); };
  f.hooks.timed = [&](const std::string& knobs, bool, double ms) { return knobs == start ? 1500.0 : ms; };
  tc_options* o = f.bad_start("off");
  tc_kernel* k = nullptr;
  ASSERT_EQ(f.tune(&k, o), TC_OK) << tc_last_error_message();
  std::string d = f.describe(k);
  EXPECT_TRUE(has(d, "candidates measured in candidate runner processes (1 started")) << d;
  tc_kernel_destroy(k);
  tc_options_destroy(o);
}

// tune.isolation=process without a runner is TC_ERROR_UNSUPPORTED naming where it looked,
// before any tuning; auto on host tensors runs candidates in the caller's process, as none does.
TEST(Isolation, WithoutARunnerProcessIsUnsupportedAndAutoOnTheHostNeedsNone) {
  Fixture f;
  std::string cache = f.dir + "/cache";
  ::setenv("TC_CANDIDATE_RUNNER", "/nonexistent/candidate-runner", 1);
  tc_options* o = f.bad_start(cache);
  tc_options_set(o, "tune.isolation", "process");
  tc_kernel* k = nullptr;
  EXPECT_EQ(f.tune(&k, o), TC_ERROR_UNSUPPORTED);
  EXPECT_TRUE(has(tc_last_error_message(), "no candidate runner at '/nonexistent/candidate-runner'"))
      << tc_last_error_message();
  EXPECT_EQ(k, nullptr);
  tc_options_set(o, "tune.isolation", "auto");
  ASSERT_EQ(f.tune(&k, o), TC_OK) << tc_last_error_message();
  EXPECT_TRUE(has(f.describe(k), "candidates measured in this process")) << f.describe(k);
  ::setenv("TC_CANDIDATE_RUNNER", TC_TEST_CANDIDATE_RUNNER, 1);
  tc_kernel_destroy(k);
  tc_options_destroy(o);
}

// The search ends when it stops improving: tune.patience generations in a row without a kernel
// more than 2% faster, however many generations tune.generations allows; the last progress
// report shows the planned total lowered to where it ended, and the description says why. With
// patience 0 it runs every generation; with neither limit reached the budget ends it.
TEST(Tuner, PatienceEndsASearchThatStopsImprovingAndTheDescriptionSaysWhy) {
  Fixture f;
  std::string start_text, first;
  f.hooks.timed = [&](const std::string& knobs, bool, double) {
    if (start_text.empty()) start_text = knobs;  // the start is measured first
    if (knobs == start_text) return 20.0;
    if (first.empty()) first = knobs;
    return knobs == first ? 10.0 : 9.9;  // one step, then nothing 2% faster
  };
  auto search = [&](const char* generations, const char* patience, const char* budget, Log& log) {
    start_text.clear();
    first.clear();
    tc_options* o = f.bad_start("off");
    EXPECT_EQ(tc_options_set(o, "tune.population", "3"), TC_OK);
    EXPECT_EQ(tc_options_set(o, "tune.generations", generations), TC_OK);
    EXPECT_EQ(tc_options_set(o, "tune.patience", patience), TC_OK);
    EXPECT_EQ(tc_options_set(o, "tune.budget", budget), TC_OK);
    tc_kernel* k = nullptr;
    EXPECT_EQ(f.tune(&k, o, on_progress, &log), TC_OK) << tc_last_error_message();
    std::string text = f.describe(k);
    tc_kernel_destroy(k);
    tc_options_destroy(o);
    return text;
  };
  Log patient;
  std::string text = search("50", "2", "600", patient);
  EXPECT_TRUE(has(text, "search: 3 generations, stopped early: no generation of the last 2 found a kernel more than "
                        "2% faster (tune.patience)"))
      << text;
  EXPECT_EQ(patient.last.generation, 3);
  EXPECT_EQ(patient.last.generations, 3);

  Log all;
  text = search("3", "0", "600", all);
  EXPECT_TRUE(has(text, "search: 3 generations, all 3 generations (tune.generations)")) << text;
  EXPECT_EQ(all.last.generations, 3);

  // Neither patience nor generations can end it: the budget does, however far the search got
  // in it (on a slow machine, maybe no further than the starting point).
  Log budget;
  auto t0 = std::chrono::steady_clock::now();
  text = search("1000", "0", "1", budget);
  double took_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(has(text, "the budget of 1 s ran out")) << text;
  EXPECT_GE(took_s, 1.0);  // it ends only once the budget has passed
  EXPECT_GE(budget.calls, 1);
  EXPECT_LT(budget.last.generation, 1000);
}
