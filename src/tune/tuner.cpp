// tuner.cpp — see tuner.h.
#include "tune/tuner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include "cache/location.h"
#include "cache/remote_transfer.h"
#include "cache/store.h"
#include "lang/instantiate.h"
#include "support/error.h"
#include "support/sha256.h"
#include "tune/candidate_process.h"
#include "tune/measure.h"

namespace tc::tune {

namespace testing {
std::function<void(int, const std::vector<runtime::TensorView>&)> after_check_run;
std::function<void(const std::vector<std::string>&)> first_population;
std::function<void(const std::string&)> measuring;
std::function<double(const std::string&, bool, double)> timed;
}

namespace {

using Clock = std::chrono::steady_clock;

// A point of the space: one value per tunable knob.
using Point = std::vector<std::string>;

struct Knob {
  std::string key;
  std::vector<std::string> values;  // the domain, the starting value included
  bool tried_first = false;         // backends::Knob::tried_first
};

struct Candidate {
  Point point;
  std::unique_ptr<backends::Kernel> kernel;
  std::string failure;  // why it failed (to compile, to run, to agree), for the history
  cache::Outcome outcome = cache::Outcome::Measured;
  double ms = INFINITY;  // the median; a cut-off's one run; failures: INFINITY
};

// Where the outputs go: the inputs' device (the kernel checks they share one); host memory
// for a def without inputs.
DLDevice device_of(const std::vector<runtime::TensorView>& inputs) {
  return inputs.empty() ? DLDevice{kDLCPU, 0} : inputs[0].device;
}

// Whether got equals want within a tolerance that grows with the reduction length: floats
// reassociated by a schedule (rfactor) round differently.
// Integers, float16 and bfloat16 (whose sums the cpu backend never reassociates) must be equal.
bool agrees(const std::string& got, const std::string& want, ScalarType t, int64_t reduction) {
  if (t != ScalarType::Float32 && t != ScalarType::Float64) return got == want;
  bool f64 = t == ScalarType::Float64;
  double tol = std::max<double>(16, 4.0 * static_cast<double>(reduction)) * (f64 ? 0x1p-52 : 0x1p-23);
  size_t n = got.size() / tc::bytes(t);
  auto value = [&](const std::string& b, size_t i) -> double {
    if (f64) {
      double x;
      std::memcpy(&x, b.data() + 8 * i, 8);
      return x;
    }
    float x;
    std::memcpy(&x, b.data() + 4 * i, 4);
    return x;
  };
  double scale = 0;
  for (size_t i = 0; i < n; ++i) scale = std::max(scale, std::fabs(value(want, i)));
  for (size_t i = 0; i < n; ++i) {
    double a = value(got, i), b = value(want, i);
    if (std::isnan(a) != std::isnan(b)) return false;
    if (!std::isnan(a) && std::fabs(a - b) > tol * std::max(1.0, scale)) return false;
  }
  return true;
}

// Milliseconds for people: four significant digits ("0.00053"), not the cache's exact text.
std::string ms_text(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", ms);
  return text;
}

std::string point_text(const std::vector<Knob>& knobs, const Point& p) {
  std::string out;
  for (size_t k = 0; k < knobs.size(); ++k) out += (out.empty() ? "" : " ") + knobs[k].key + "=" + p[k];
  return out;
}

// A knob value as positive numbers ("16" -> {16}, "32x4" -> {32, 4}); empty if it is not one.
std::vector<double> numbers_of(const std::string& value) {
  std::vector<double> out;
  std::istringstream parts(value);
  std::string part;
  while (std::getline(parts, part, 'x')) {
    char* end = nullptr;
    double v = std::strtod(part.c_str(), &end);
    if (part.empty() || *end != '\0' || !(v > 0)) return {};
    out.push_back(v);
  }
  return out;
}

// The value of `domain` nearest to `value` when both read as numbers of the same arity (the
// distance of sizes is their ratio: log2), else nullopt. The tuner knows no backend: this is
// what lets a tile tuned at larger sizes seed a smaller size's search.
std::optional<std::string> nearest(const std::string& value, const std::vector<std::string>& domain) {
  std::vector<double> want = numbers_of(value);
  std::optional<std::string> best;
  double best_distance = INFINITY;
  for (const auto& candidate : domain) {
    std::vector<double> got = numbers_of(candidate);
    if (want.empty() || got.size() != want.size()) continue;
    double d = 0;
    for (size_t i = 0; i < got.size(); ++i) d += std::fabs(std::log2(got[i]) - std::log2(want[i]));
    if (d < best_distance) best_distance = d, best = candidate;
  }
  return best;
}

// "M=64 K=32 N=48": the sizes of a bound def, in the def's order, for people reading the cache;
// the dimensions of a rank-polymorphic def's `...` as "...[0]=8".
std::string sizes_text(const ir::BoundDef& bound) {
  std::string out;
  const auto& names = bound.def().size_names;
  for (size_t i = 0; i < names.size() && i < bound.size_values.size(); ++i)
    out += (out.empty() ? "" : " ") + names[i] + "=" + std::to_string(bound.size_values[i]);
  return lang::show_ellipsis(out, bound.program->ellipsis, TC_MAX_NDIM);
}

class Tuner {
 public:
  Tuner(const ir::BoundDef& bound, const backends::OptionSet& options, const backends::Backend& backend,
        const std::vector<runtime::TensorView>& inputs, const ProgressFn& progress)
      : bound_(bound), options_(options), backend_(backend), target_(backend_.default_target()),
        inputs_(inputs), progress_(progress), device_(device_of(inputs)), outputs_(backend_, device_, bound.outputs()),
        rng_(20261123) {
    backends::KnobValues tune = options.values_for(backend_);  // the tune.* options, parsed
    population_ = static_cast<int>(tune.integer("tune.population"));
    generations_ = static_cast<int>(tune.integer("tune.generations"));
    patience_ = static_cast<int>(tune.integer("tune.patience"));
    budget_s_ = tune.seconds("tune.budget");
    threads_ = static_cast<int>(tune.integer("tune.threads"));
    if (threads_ == 0) threads_ = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    genetic_ = tune.text("tune.strategy") == "genetic";
    timeout_s_ = static_cast<double>(tune.integer("tune.timeout"));
    for (const auto& k : backend_.knobs()) {
      if (!k.domain) continue;
      Knob knob{k.key, k.domain(bound), k.tried_first};
      const std::string& start = options.get(k.key);
      if (std::find(knob.values.begin(), knob.values.end(), start) == knob.values.end()) knob.values.insert(knob.values.begin(), start);
      knobs_.push_back(std::move(knob));
    }
    for (size_t s = 0; s < bound.def().stmts.size(); ++s) {
      int64_t n = 1;
      const auto& st = bound.def().stmts[s];
      for (size_t v = st.num_lhs_vars(); v < st.vars.size(); ++v) n *= bound.ranges[s][v].second - bound.ranges[s][v].first;
      reduction_ = std::max(reduction_, n);
    }
    open_cache();
    start_runner(tune.text("tune.isolation"));
  }

  Compiled run() {
    start_ = Clock::now();
    for (const auto& k : knobs_) start_point_.push_back(options_.get(k.key));
    load_history();
    reference_run();
    std::vector<Point> population = first_population();
    if (testing::first_population) {
      std::vector<std::string> texts;
      for (const Point& p : population) texts.push_back(point_text(knobs_, p));
      testing::first_population(texts);
    }
    gen_ = 1;
    double best_before_search = best_.ms;  // the history's: the first generation is measured against it
    measure_start();
    if (!stop_ && elapsed() > budget_s_)
      stop("the budget of " + ms_text(budget_s_) + " s ran out after the starting point (tune.budget)");
    for (; gen_ <= generations_ && !stop_; ++gen_) {
      settled_ = false;
      double best_before = gen_ == 1 ? best_before_search : best_.ms;
      evaluate(population, best_before);
      if (!settled_ && !stop_) settle_generation(best_before);
      if (!stop_ && elapsed() > budget_s_) stop_budget();  // a generation of known points measures nothing
      if (stop_ || gen_ >= generations_) break;
      population = genetic_ ? next_generation() : random_generation();
    }
    if (stop_reason_.empty()) stop_reason_ = "all " + std::to_string(generations_) + " generations (tune.generations)";
    // Nothing beat the starting point: its record, stored before the search, now counts every
    // candidate the search measured.
    if (start_stored_ && done_ > 1 && best_.point == start_point_) store_->replace_if_knobs(best_record(), point_text(knobs_, start_point_));
    confirm();
    Compiled out = result();
    out.provenance += publish();
    return out;
  }

 private:
  void open_cache() {
    std::optional<std::string> dir = cache::resolve_dir(options_.get("cache"));
    if (!dir) return;
    store_ = cache::Store::open(*dir, true);  // TC_ERROR_CACHE before any tuning
    key_ = cache_key(bound_, backend_, target_, options_);
    family_ = family_key(bound_.def(), backend_, target_, options_);
    remote_ = open_remote(options_);  // a key file it refuses: TC_ERROR_CACHE before any tuning
    pull();
  }

  // What other machines measured of this key (the remote tier's record and history) joins the
  // local history before the search, which then measures none of it again. A remote that
  // cannot be used is noted, never an error.
  void pull() {
    if (!remote_) return;
    try {
      cache::Moved m = cache::pull_key(*store_, *remote_, key_);
      remote_note_ = "remote '" + remote_->url() + "': " + std::to_string(m.history) + " history entries and " +
                     std::to_string(m.records) + " records taken before the search";
    } catch (const Error& e) {
      remote_note_ = std::string("remote not read: ") + e.what();
    }
  }

  // The winner (the local cache's record of the key, the faster of this search's and any
  // earlier) and the key's history go to the remote tier, with the backend's shared code; the
  // remote keeps the faster record. What came of it, for the provenance.
  std::string publish() {
    if (!remote_) return "";
    try {
      cache::Moved m = cache::push_key(*store_, *remote_, key_);
      std::string shared = shared_code_key(backend_, target_);
      if (!shared.empty()) cache::push_key(*store_, *remote_, shared);
      return "; " + remote_note_ + "; published: " + (!m.offered ? "no record" : m.records ? "record stored" : "the remote's record was as fast or faster") +
             ", " + std::to_string(m.history) + " history entries";
    } catch (const Error& e) {
      return "; " + remote_note_ + "; remote not updated: " + e.what();
    }
  }

  // tune.isolation: candidates measured in a candidate runner (process; auto: for tensors
  // not in host memory, where a fault would poison the caller's CUDA context) or here (none;
  // auto when the runner is missing, which the result's provenance says).
  void start_runner(const std::string& isolation) {
    if (isolation == "none" || (isolation == "auto" && device_.device_type == kDLCPU)) return;
    try {
      runner_ = std::make_unique<CandidateProcess>(runner_setup());
    } catch (const Error& e) {
      if (isolation == "process") throw;
      isolation_note_ = std::string("candidates ran in this process: ") + e.what();
    }
  }

  // What a runner needs: the program, the entry, and the inputs' bytes.
  protocol::Setup runner_setup() const {
    protocol::Setup setup;
    setup.source = bound_.program->ast.source.text;
    setup.source_name = bound_.program->ast.source.file_name;
    setup.def = bound_.def().name;
    std::vector<runtime::TensorSig> sigs = bound_.inputs();
    for (size_t i = 0; i < inputs_.size(); ++i) {
      protocol::Tensor t;
      t.type = static_cast<int32_t>(sigs[i].type);
      t.device = inputs_[i].device;
      t.shape = sigs[i].shape;
      t.data.resize(static_cast<size_t>(sigs[i].num_elements()) * tc::bytes(sigs[i].type));
      try {
        backend_.copy_to_host(inputs_[i], t.data.data());
      } catch (const Error& e) {  // which input: the backend knows only a view
        fail(e.status(), bound_.expected(ir::TensorRole::Input)[i].what + ": " + e.what());
      }
      setup.inputs.push_back(std::move(t));
    }
    // The code every kernel links against (cpu: Halide's runtime object, which the start's
    // compilation would build anyway): a runner given it need not build its own.
    setup.shared_code = backend_.shared_code(target_);
    return setup;
  }

  // What the history knows of this key becomes measured_ (a timed point's time is its fitness;
  // a failed point is never tried again) and may be the best so far. Damaged entries, and those
  // of another set of knobs (another libtc), are ignored.
  void load_history() {
    if (!store_) return;
    for (const cache::HistoryEntry& h : store_->history(key_, [](const std::string&, const std::string&) {})) {
      std::map<std::string, std::string> values;
      try {
        values = knob_text_values(h.knobs);
      } catch (const Error&) {
        continue;  // not this libtc's text: as if unknown
      }
      Point p;
      for (const auto& k : knobs_) p.push_back(values.count(k.key) ? values[k.key] : "");
      if (point_text(knobs_, p) != h.knobs) continue;
      double ms = h.timed() ? h.ms : INFINITY;
      measured_[h.knobs] = {ms, p};
      if (p == start_point_ && h.timed()) default_ms_ = ms;
      if (ms < best_.ms) {
        best_.ms = ms;
        best_.point = p;
      }
    }
  }

  // The starting point, compiled and run once before anything else: every candidate's outputs
  // are compared with its outputs; this process's first compilation initialises Halide's lazily
  // built tables on one thread; and its failure is tc_tune's (tc_compile would fail the same
  // way). Run whether or not the history knows its time: running is not measuring.
  void reference_run() {
    start_kernel_ = backend_.compile(bound_, target_, options_.values_for(backend_));
    outputs_.zero();
    start_kernel_->run(inputs_, outputs_.views, backends::ExecutionContext{});
    if (testing::after_check_run) testing::after_check_run(0, outputs_.views);
    reference_ = outputs_.read();
  }

  // The starting point is measured (unless the history knows its time) and stored before the
  // search spends the budget on anything else: however soon the search ends — a budget shorter
  // than one more compilation, a machine slower than expected, a killed process — the result
  // has a time and the cache a measured kernel for the key. It is the first candidate reported.
  void measure_start() {
    std::string text = point_text(knobs_, start_point_);
    if (!(default_ms_ > 0)) {
      ++planned_;
      Candidate c{start_point_, std::move(start_kernel_), "", cache::Outcome::Measured, INFINITY};
      if (testing::measuring) testing::measuring(text);
      measure(c);
      keep_code_time(c);
      start_kernel_ = std::move(c.kernel);
      measured_[text] = {c.ms, c.point};
      remember(c);
      ++done_;
      if (c.ms < best_.ms) {
        best_.ms = c.ms;
        best_.point = c.point;
        best_.kernel = nullptr;  // the start's code stays in start_kernel_
      }
    }
    if (store_) {
      store_shared_code_once();
      start_stored_ = store_->put_if_faster(record_of(start_point_, default_ms_, start_kernel_.get()));
      stored_ = stored_ || start_stored_;
    }
    if (done_ > 0) report();
  }

  // The first generation, twice tune.population: the starting point; the knobs of every record
  // of this def at any sizes (this one's first, fitted to this size's domains by fit()); the
  // history's best points; the start's neighbours, each the start with one knob changed (up to
  // half: the default is usually near a good point, and one knob — the tile's rows, the
  // panels — is often all that stands between them); then random points.
  std::vector<Point> first_population() {
    size_t size = 2 * static_cast<size_t>(population_);
    std::vector<Point> out = {start_point_};
    auto add = [&](const Point& p) {
      if (out.size() < size && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
    };
    if (store_) {
      std::vector<cache::Record> family;
      for (cache::Record& r : store_->all([](const std::string&, const std::string&) {}))
        if (r.family == family_) family.insert(r.key == key_ ? family.begin() : family.end(), std::move(r));
      for (const cache::Record& r : family) add(fit(r.knobs));
    }
    std::vector<std::pair<double, Point>> known;
    for (const auto& [text, c] : measured_)
      if (std::isfinite(c.first)) known.push_back(c);
    std::sort(known.begin(), known.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < known.size() && static_cast<int>(i) < std::max(1, population_ / 5); ++i) add(known[i].second);
    for (const Point& p : alternatives_first()) add(p);
    for (const Point& p : neighbours_of_start(size / 2)) add(p);
    while (out.size() < size) out.push_back(random_point());
    return out;
  }

  // The start with each other value of a knob the backend asks to be tried first (another
  // route: the system's BLAS, the pipeline instead of the contraction route).
  std::vector<Point> alternatives_first() const {
    std::vector<Point> out;
    for (size_t k = 0; k < knobs_.size(); ++k) {
      if (!knobs_[k].tried_first) continue;
      for (const std::string& v : knobs_[k].values) {
        Point p = start_point_;
        p[k] = v;
        if (p != start_point_) out.push_back(std::move(p));
      }
    }
    return out;
  }

  // Up to `n` distinct points that differ from the start in one knob each, knobs and values
  // drawn at random.
  std::vector<Point> neighbours_of_start(size_t n) {
    std::vector<Point> out;
    size_t choices = 0;
    for (const auto& k : knobs_) choices += k.values.size() - 1;
    for (size_t tries = 0; out.size() < std::min(n, choices) && tries < 20 * n; ++tries) {
      size_t k = std::uniform_int_distribution<size_t>(0, knobs_.size() - 1)(rng_);
      const auto& values = knobs_[k].values;
      Point p = start_point_;
      p[k] = values[std::uniform_int_distribution<size_t>(0, values.size() - 1)(rng_)];
      if (p != start_point_ && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(std::move(p));
    }
    return out;
  }

  // A record's knobs as a point of this search. A value outside this size's domain (a tile
  // larger than these extents) becomes the domain's nearest value when both are numbers or NxM
  // pairs, else the starting point's; so does a knob the record does not name.
  Point fit(const std::string& knobs) const {
    std::map<std::string, std::string> values;
    try {
      values = knob_text_values(knobs);
    } catch (const Error&) {
      return start_point_;  // not this libtc's text
    }
    Point p = start_point_;
    for (size_t k = 0; k < knobs_.size(); ++k) {
      auto it = values.find(knobs_[k].key);
      if (it == values.end()) continue;
      const auto& domain = knobs_[k].values;
      if (std::find(domain.begin(), domain.end(), it->second) != domain.end()) p[k] = it->second;
      else if (auto near = nearest(it->second, domain)) p[k] = *near;
    }
    return p;
  }

  Point random_point() {
    Point p;
    for (const auto& k : knobs_) p.push_back(k.values[std::uniform_int_distribution<size_t>(0, k.values.size() - 1)(rng_)]);
    return p;
  }

  std::vector<Point> random_generation() {
    std::vector<Point> out;
    for (int i = 0; i < population_; ++i) out.push_back(random_point());
    return out;
  }

  // Roulette on fitness 1/time over everything measured; uniform crossover of three parents;
  // each knob re-drawn with probability 1/knobs; the best points carried over unchanged.
  std::vector<Point> next_generation() {
    std::vector<std::pair<double, Point>> ranked;
    for (const auto& [text, c] : measured_)
      if (std::isfinite(c.first)) ranked.emplace_back(c.first, c.second);
    std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    if (ranked.empty()) return random_generation();
    std::vector<Point> out;
    int elites = std::max(1, population_ / 5);
    for (int i = 0; i < elites && i < static_cast<int>(ranked.size()); ++i) out.push_back(ranked[i].second);
    double total = 0;
    for (const auto& r : ranked) total += 1.0 / r.first;
    auto pick = [&]() -> const Point& {
      double x = std::uniform_real_distribution<double>(0, total)(rng_);
      for (const auto& r : ranked)
        if ((x -= 1.0 / r.first) <= 0) return r.second;
      return ranked.back().second;
    };
    double mutation = 1.0 / std::max<size_t>(1, knobs_.size());
    // A child that is a point measured before, or one of this generation's, is drawn again (a
    // generation of known points measures nothing); after kDraws tries, a random point.
    constexpr int kDraws = 20;
    auto known = [&](const Point& p) {
      return measured_.count(point_text(knobs_, p)) > 0 || std::find(out.begin(), out.end(), p) != out.end();
    };
    while (static_cast<int>(out.size()) < population_) {
      Point child;
      for (int draw = 0; draw < kDraws && (child.empty() || known(child)); ++draw) {
        const Point* parents[3] = {&pick(), &pick(), &pick()};
        child.clear();
        for (size_t k = 0; k < knobs_.size(); ++k) {
          child.push_back((*parents[std::uniform_int_distribution<int>(0, 2)(rng_)])[k]);
          if (std::uniform_real_distribution<double>(0, 1)(rng_) < mutation)
            child[k] = knobs_[k].values[std::uniform_int_distribution<size_t>(0, knobs_[k].values.size() - 1)(rng_)];
        }
      }
      if (known(child)) child = random_point();
      out.push_back(std::move(child));
    }
    return out;
  }

  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  backends::OptionSet options_of(const Point& p) const {
    backends::OptionSet o = options_;
    for (size_t k = 0; k < knobs_.size(); ++k) o.set(knobs_[k].key, p[k]);
    return o;
  }

  // Ends the search after the current candidate, saying why.
  void stop(std::string why) {
    stop_ = true;
    stop_reason_ = std::move(why);
  }
  void stop_budget() { stop("the budget of " + ms_text(budget_s_) + " s ran out (tune.budget)"); }

  // A generation found something faster when its best is more than this share faster than the
  // best before it: smaller differences are within the run-to-run spread of a measurement.
  static constexpr double kImprovement = 0.02;

  // The end of generation gen_: counts the generations in a row that found nothing faster and
  // ends the search at tune.patience of them, lowering the planned total to this generation
  // (so the progress reported next shows where the search ends).
  void settle_generation(double best_before) {
    settled_ = true;
    bool improved = best_.ms < best_before * (1 - kImprovement);  // also a first time after none (inf)
    stale_ = improved ? 0 : stale_ + 1;
    if (patience_ > 0 && stale_ >= patience_ && gen_ < generations_) {
      generations_ = gen_;
      stop_reason_ = "stopped early: no generation of the last " + std::to_string(patience_) + " found a kernel more than " +
                     std::to_string(static_cast<int>(kImprovement * 100)) + "% faster (tune.patience)";
    }
  }

  // Compiles the points of `population` that neither this run nor the history knows, in
  // parallel, then measures them one at a time; each one's outcome goes to the history. The
  // generation is settled before its last candidate is reported.
  void evaluate(const std::vector<Point>& population, double best_before) {
    std::vector<Candidate> fresh;
    for (const auto& p : population) {
      std::string text = point_text(knobs_, p);
      bool seen = measured_.count(text) > 0;
      for (const auto& c : fresh) seen = seen || c.point == p;
      if (!seen) fresh.push_back(Candidate{p, nullptr, "", cache::Outcome::Measured, INFINITY});
    }
    planned_ += static_cast<int64_t>(fresh.size());
    std::atomic<size_t> next{0};
    auto worker = [&] {
      for (size_t i; (i = next++) < fresh.size() && elapsed() <= budget_s_;) {
        try {
          fresh[i].kernel = backend_.compile(bound_, target_, options_of(fresh[i].point).values_for(backend_));
        } catch (const std::exception& e) {
          fresh[i].failure = e.what();
          fresh[i].outcome = cache::Outcome::CompileFailed;
        }
      }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < threads_ && t < static_cast<int>(fresh.size()); ++t) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
    for (size_t i = 0; i < fresh.size(); ++i) {
      Candidate& c = fresh[i];
      if (stop_) break;
      if (elapsed() > budget_s_ || (!c.kernel && c.failure.empty())) {  // not compiled: the budget ran out
        stop_budget();
        break;
      }
      if (testing::measuring) testing::measuring(point_text(knobs_, c.point));
      if (c.kernel && !same_code_as_measured(c)) {
        measure(c);
        keep_code_time(c);
      }
      measured_[point_text(knobs_, c.point)] = {c.ms, c.point};
      remember(c);
      ++done_;
      if (c.ms < best_.ms) {
        best_.ms = c.ms;
        best_.point = c.point;
        best_.kernel = std::move(c.kernel);
        store_best();
      }
      if (i + 1 == fresh.size()) settle_generation(best_before);
      report();
    }
  }

  // One checked run (not for the starting point: reference_run was its), then the timed runs
  // (measure.h), here or in the candidate runner.
  void measure(Candidate& c) {
    bool is_start = c.point == start_point_;
    if (runner_) return measure_in_runner(c, is_start);
    try {
      if (!is_start) {
        outputs_.zero();
        double check_ms = timed_run(backend_, *c.kernel, device_, inputs_, outputs_.views);
        if (testing::after_check_run) testing::after_check_run(++checked_, outputs_.views);
        if (!agrees_with_start(c, outputs_.read())) return;
        if (check_ms >= kLongCallMs) {  // a long call: its checked run is its one timed run
          Timing t;
          t.ms = {adjusted(c.point, false, check_ms)};
          t.cut_off = t.ms[0] > 5 * best_.ms;
          return take_times(c, t, is_start);
        }
      }
      Timing t = time_runs(
          [&] { return adjusted(c.point, false, timed_run(backend_, *c.kernel, device_, inputs_, outputs_.views)); },
          5 * best_.ms);
      take_times(c, t, is_start);
    } catch (const std::exception& e) {
      if (is_start) throw;  // it ran in reference_run: a failure now is tc_tune's
      c.failure = e.what();
      c.outcome = cache::Outcome::RunFailed;
      c.ms = INFINITY;
    }
  }

  // A call at least this long is timed once, by its checked run: time_runs would time one more
  // (it stops once its runs have taken a second), doubling what a candidate of seconds costs.
  static constexpr double kLongCallMs = 1000;

  // The same in the candidate runner: a candidate that kills its process, or outlives
  // tune.timeout, fails alone.
  void measure_in_runner(Candidate& c, bool is_start) {
    protocol::Request q;
    backends::OptionSet options = options_of(c.point);
    for (const backends::Knob* k : backends::all_options()) q.options.emplace_back(k->key, options.get(k->key));
    q.knobs = point_text(knobs_, c.point);
    q.artefact = c.kernel->artefact();
    q.cutoff_ms = std::isfinite(best_.ms) ? 5 * best_.ms : 0;
    q.check = !is_start;
    protocol::Reply r = runner_->measure(q, timeout_s_);
    if (r.outcome == protocol::Reply::CompileFailed || r.outcome == protocol::Reply::RunFailed) {
      if (is_start)
        fail(TC_ERROR_RUNTIME, "the starting point ran in this process but not in the candidate runner: " + r.message);
      c.failure = (r.outcome == protocol::Reply::CompileFailed ? "in the candidate runner: " : "") + r.message;
      c.outcome = r.outcome == protocol::Reply::CompileFailed ? cache::Outcome::CompileFailed : cache::Outcome::RunFailed;
      c.ms = INFINITY;
      return;
    }
    if (!is_start) {
      std::vector<runtime::TensorSig> sigs = bound_.outputs();
      if (r.outputs.size() != sigs.size()) fail(TC_ERROR_INTERNAL, "the candidate runner sent the wrong number of outputs");
      std::vector<runtime::TensorView> views;
      for (size_t o = 0; o < sigs.size(); ++o) views.push_back(runtime::row_major_view(r.outputs[o].data(), sigs[o]));
      if (testing::after_check_run) testing::after_check_run(++checked_, views);
      if (!agrees_with_start(c, r.outputs)) return;
    }
    Timing t;
    t.ms = r.times_ms;
    for (double& ms : t.ms) ms = adjusted(c.point, false, ms);
    t.cut_off = r.outcome == protocol::Reply::CutOff;
    take_times(c, t, is_start);
  }

  // A candidate whose compiled code is byte for byte that of one measured before (knobs the
  // kernel does not use: a tile size on the contraction route) is not measured again: it takes
  // that candidate's time and outcome, and the history says whose.
  bool same_code_as_measured(Candidate& c) {
    auto it = code_times_.find(code_digest(c));
    if (it == code_times_.end()) return false;
    c.ms = it->second.ms;
    c.outcome = it->second.outcome;
    c.failure = "the same code as " + it->second.knobs;
    return true;
  }

  // After a measurement: the time of this code, for candidates that compile to the same.
  void keep_code_time(const Candidate& c) {
    if (c.outcome != cache::Outcome::Measured && c.outcome != cache::Outcome::CutOff) return;
    std::string digest = code_digest(c);
    if (!digest.empty()) code_times_.emplace(digest, CodeTime{c.ms, c.outcome, point_text(knobs_, c.point)});
  }

  static std::string code_digest(const Candidate& c) {
    std::string code = c.kernel ? c.kernel->artefact() : std::string();
    return code.empty() ? std::string() : sha256_hex(code);
  }

  // Whether a candidate's outputs agree with the starting point's; if not, it is rejected.
  bool agrees_with_start(Candidate& c, const std::vector<std::string>& got) {
    for (size_t o = 0; o < got.size(); ++o)
      if (!agrees(got[o], reference_[o], outputs_.views[o].type, reduction_)) {
        c.failure = "computes a different result than the starting point (output " + std::to_string(o) + ")";
        c.outcome = cache::Outcome::WrongResult;
        rejected_++;
        return false;
      }
    return true;
  }

  // A candidate's time is the median of its timed runs; a cut-off's is its one run's.
  void take_times(Candidate& c, const Timing& t, bool is_start) {
    if (t.ms.empty()) fail(TC_ERROR_INTERNAL, "a candidate measured without a timed run");
    if (t.cut_off) {
      c.outcome = cache::Outcome::CutOff;
      c.failure = "its first run took more than 5x the best so far (" + ms_text(best_.ms) + " ms)";
    }
    c.ms = median(t.ms);
    if (is_start) default_ms_ = c.ms;
  }

  double adjusted(const Point& p, bool confirming, double ms) const {
    return testing::timed ? testing::timed(point_text(knobs_, p), confirming, ms) : ms;
  }

  // Winner and start timed in alternation, kConfirmRuns each (their medians compared): the
  // search measured them minutes apart in one long-lived process, and a start timed in a slow
  // spell of the machine (measured on a 2-core VM: tmm's default 1.40 ms in the tuning process,
  // 0.83 in a fresh one) let a slower winner through. A winner that does not hold up gives way
  // to the start, in the result and in the record this search stored.
  static constexpr int kConfirmRuns = 9;

  void confirm() {
    if (best_.point == start_point_ || !best_.kernel || !(default_ms_ > 0)) return;
    std::unique_ptr<backends::Kernel> start = std::move(start_kernel_);
    std::vector<double> start_ms, best_ms;
    auto time = [&](const backends::Kernel& k, const Point& p) {
      return adjusted(p, true, timed_run(backend_, k, device_, inputs_, outputs_.views));
    };
    for (int r = 0; r < kConfirmRuns; ++r) {
      start_ms.push_back(time(*start, start_point_));
      best_ms.push_back(time(*best_.kernel, best_.point));
    }
    double s = median(start_ms), b = median(best_ms);
    confirmation_ = "confirmed against the start in alternation: " + ms_text(b) + " ms against " +
                    ms_text(s) + " ms";
    if (b < s) return;
    std::string refuted = point_text(knobs_, best_.point);
    confirmation_ = "the winner " + refuted + " did not hold up against the start in alternation (" +
                    ms_text(b) + " ms against " + ms_text(s) + " ms): the start is the result";
    best_.ms = s;
    best_.point = start_point_;
    best_.kernel = std::move(start);
    default_ms_ = s;
    if (store_) store_->replace_if_knobs(best_record(), refuted);
  }

  static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  }

  // The candidate's outcome in the history, one write transaction, so that no later run of this
  // key measures it again.
  void remember(const Candidate& c) {
    if (!store_) return;
    cache::HistoryEntry h;
    h.key = key_;
    h.knobs = point_text(knobs_, c.point);
    h.outcome = c.outcome;
    h.ms = h.timed() ? c.ms : 0;
    h.why = c.failure;
    h.date = cache::utc_now();
    store_->put_history(h);
  }

  // A faster kernel than any before it goes to the cache at once (put_if_faster keeps a faster
  // record another run stored), so that a killed search keeps its progress.
  void store_best() {
    if (!store_) return;
    store_shared_code_once();
    stored_ = store_->put_if_faster(best_record()) || stored_;
  }

  // The backend's shared code, before the first kernel that needs it.
  void store_shared_code_once() {
    if (shared_code_stored_) return;
    store_shared_code(*store_, backend_, target_);
    shared_code_stored_ = true;
  }

  cache::Record best_record() const {
    const backends::Kernel* code = best_.kernel ? best_.kernel.get() : best_.point == start_point_ ? start_kernel_.get() : nullptr;
    return record_of(best_.point, best_.ms, code);
  }

  // The record of `point`, timed `ms`, with `code`'s compiled code (none: compiled on a hit).
  cache::Record record_of(const Point& point, double ms, const backends::Kernel* code) const {
    cache::Record r;
    r.key = key_;
    r.knobs = point_text(knobs_, point);
    r.best_ms = ms;
    r.default_ms = default_ms_;
    r.candidates = std::max<int64_t>(done_, 1);
    r.date = cache::utc_now();
    r.libtc = TC_VERSION_STRING;
    r.backend = backend_.name();
    r.family = family_;
    r.def = bound_.def().name;
    r.sizes = sizes_text(bound_);
    r.target = backend_.target_key(target_);
    r.artefact = code ? code->artefact() : std::string();
    return r;
  }

  // What this search left in the cache.
  std::string storage_text() const {
    if (!store_) return "cache off";
    if (stored_) return "stored in '" + store_->dir() + "'";
    return "nothing stored in '" + store_->dir() + "': its record of this key is as fast or faster";
  }

  std::string isolation_text() const {
    if (runner_)
      return "candidates measured in candidate runner processes (" + std::to_string(runner_->starts()) + " started, " +
             runner_->path() + ")";
    return isolation_note_.empty() ? std::string("candidates measured in this process") : isolation_note_;
  }

  void report() {
    if (!progress_) return;
    Progress p{gen_, generations_, done_, planned_, best_.ms, default_ms_, elapsed(), budget_s_};
    if (!progress_(p)) stop("stopped by the progress callback");
  }

  Compiled result() {
    if (!best_.kernel && !best_.point.empty() && best_.point != start_point_) {
      // The best is known only from the history: compiled for the result, and offered to the
      // cache as any improvement is (put_if_faster keeps the faster record).
      try {
        best_.kernel = backend_.compile(bound_, target_, options_of(best_.point).values_for(backend_));
        if (default_ms_ > 0) store_best();
      } catch (const std::exception&) {  // it compiled when it was measured; the start will do
      }
    }
    Compiled out;
    if (best_.kernel) {
      out.options = options_of(best_.point);
      out.kernel = std::move(best_.kernel);
    } else {  // the start is the best, or the budget ran out before it was measured
      out.options = options_;
      out.kernel = start_kernel_ ? std::move(start_kernel_) : backend_.compile(bound_, target_, options_.values_for(backend_));
    }
    char line[256];
    std::snprintf(line, sizeof line, "tuned now: %lld candidates (%lld rejected), best %.4g ms, start %.4g ms",
                  static_cast<long long>(done_), static_cast<long long>(rejected_), best_.ms, default_ms_);
    int generations_run = std::min(gen_, generations_);  // gen_ is one past the last after a full search
    out.provenance = std::string(line) + "; search: " + std::to_string(generations_run) + " generation" +
                     (generations_run == 1 ? "" : "s") + ", " + stop_reason_ + ", " + storage_text() +
                     (confirmation_.empty() ? "" : "; " + confirmation_) + "; " + isolation_text();
    return out;
  }

  const ir::BoundDef& bound_;
  backends::OptionSet options_;
  const backends::Backend& backend_;
  backends::Target target_;
  const std::vector<runtime::TensorView>& inputs_;
  ProgressFn progress_;
  DLDevice device_;  // the inputs' and outputs'
  DeviceTensors outputs_;  // on the inputs' device
  std::vector<std::string> reference_;  // the starting point's outputs
  int64_t reduction_ = 1;
  std::mt19937_64 rng_;
  std::vector<Knob> knobs_;
  int population_ = 0, generations_ = 0, threads_ = 1, gen_ = 0;
  int patience_ = 0, stale_ = 0;  // tune.patience; generations in a row that found nothing faster
  bool settled_ = false;          // settle_generation ran for gen_
  std::string stop_reason_;       // why the search ended, for the description
  double budget_s_ = 60;
  bool genetic_ = true, stop_ = false;
  Clock::time_point start_;
  std::map<std::string, std::pair<double, Point>> measured_;
  struct CodeTime {
    double ms;
    cache::Outcome outcome;
    std::string knobs;  // the candidate that was measured
  };
  std::map<std::string, CodeTime> code_times_;  // by the SHA-256 of a measured candidate's code
  Candidate best_;
  Point start_point_;
  std::unique_ptr<backends::Kernel> start_kernel_;  // until a candidate or the result takes it
  double default_ms_ = 0;
  int64_t done_ = 0, planned_ = 0, rejected_ = 0, checked_ = 0;
  std::shared_ptr<cache::Store> store_;
  std::shared_ptr<cache::Remote> remote_;  // option cache.remote, or null
  std::string remote_note_;                // what pull() found
  std::string key_, family_;
  bool stored_ = false;              // a record of this search's went to the cache
  bool start_stored_ = false;        // the starting point's record did
  bool shared_code_stored_ = false;  // the backend's shared code went to the cache
  std::string confirmation_;  // what the final comparison of winner and start found
  std::unique_ptr<CandidateProcess> runner_;  // tune.isolation=process: where candidates run
  std::string isolation_note_;                // why they did not, where auto wanted it
  double timeout_s_ = 60;
};

}  // namespace

Compiled tune(const ir::BoundDef& bound, const backends::OptionSet& options,
              const std::vector<runtime::TensorView>& inputs, const ProgressFn& progress) {
  return Tuner(bound, options, options.backend(), inputs, progress).run();
}

namespace testing {
Compiled tune_with(const backends::Backend& backend, const ir::BoundDef& bound, const backends::OptionSet& options,
                   const std::vector<runtime::TensorView>& inputs) {
  return Tuner(bound, options, backend, inputs, nullptr).run();
}
}  // namespace testing

}  // namespace tc::tune
