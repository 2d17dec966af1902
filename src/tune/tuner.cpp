// tuner.cpp — see tuner.h.
#include "tune/tuner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <map>
#include <random>
#include <thread>

#include "cache/location.h"
#include "cache/store.h"
#include "support/error.h"

namespace tc::tune {

namespace testing {
std::function<void(int, const std::vector<runtime::TensorView>&)> after_check_run;
}

namespace {

using Clock = std::chrono::steady_clock;

// A point of the space: one value per tunable knob.
using Point = std::vector<std::string>;

struct Knob {
  std::string key;
  std::vector<std::string> values;  // the domain, the starting value included
};

struct Candidate {
  Point point;
  std::unique_ptr<backends::Kernel> kernel;
  std::string failure;  // why it failed to compile
  double ms = INFINITY;
};

// Row-major host buffers for the outputs, and views of them.
struct Outputs {
  std::vector<std::vector<char>> bytes;
  std::vector<runtime::TensorView> views;

  explicit Outputs(const std::vector<runtime::TensorSig>& sigs) : bytes(sigs.size()) {
    for (size_t o = 0; o < sigs.size(); ++o) {
      bytes[o].assign(static_cast<size_t>(sigs[o].num_elements()) * tc::bytes(sigs[o].type), 0);
      views.push_back(runtime::row_major_view(bytes[o].data(), sigs[o]));
    }
  }
  void zero() {
    for (auto& b : bytes) std::fill(b.begin(), b.end(), 0);
  }
};

// Whether got equals want within a tolerance that grows with the reduction length: floats
// reassociated by a schedule (rfactor) round differently.
// Integers and float16 (whose sums the cpu backend never reassociates) must be equal.
bool agrees(const std::vector<char>& got, const std::vector<char>& want, ScalarType t, int64_t reduction) {
  if (t != ScalarType::Float32 && t != ScalarType::Float64) return got == want;
  bool f64 = t == ScalarType::Float64;
  double tol = std::max<double>(16, 4.0 * static_cast<double>(reduction)) * (f64 ? 0x1p-52 : 0x1p-23);
  size_t n = got.size() / tc::bytes(t);
  auto value = [&](const std::vector<char>& b, size_t i) -> double {
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

std::string point_text(const std::vector<Knob>& knobs, const Point& p) {
  std::string out;
  for (size_t k = 0; k < knobs.size(); ++k) out += (out.empty() ? "" : " ") + knobs[k].key + "=" + p[k];
  return out;
}

std::string utc_now() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

class Tuner {
 public:
  Tuner(const ir::BoundDef& bound, const backends::OptionSet& options, const std::vector<runtime::TensorView>& inputs,
        const ProgressFn& progress)
      : bound_(bound), options_(options), backend_(options.backend()), target_(backend_.default_target()),
        inputs_(inputs), progress_(progress), outputs_(bound.outputs()), rng_(20261123) {
    backends::KnobValues tune = options.values_for(backend_);  // the tune.* options, parsed
    population_ = static_cast<int>(tune.integer("tune.population"));
    generations_ = static_cast<int>(tune.integer("tune.generations"));
    budget_s_ = static_cast<double>(tune.integer("tune.budget"));
    threads_ = static_cast<int>(tune.integer("tune.threads"));
    if (threads_ == 0) threads_ = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    genetic_ = tune.text("tune.strategy") == "genetic";
    for (const auto& k : backend_.knobs()) {
      if (!k.domain) continue;
      Knob knob{k.key, k.domain(bound)};
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
  }

  Compiled run() {
    start_ = Clock::now();
    Point start;
    for (const auto& k : knobs_) start.push_back(options_.get(k.key));
    std::vector<Point> population = {start};
    while (static_cast<int>(population.size()) < population_) population.push_back(random_point());
    for (gen_ = 1; gen_ <= generations_ && !stop_; ++gen_) {
      evaluate(population);
      if (stop_ || gen_ == generations_) break;
      population = genetic_ ? next_generation() : random_generation();
    }
    return result();
  }

 private:
  void open_cache() {
    std::optional<std::string> dir = cache::resolve_dir(options_.get("cache"));
    if (!dir) return;
    store_ = cache::Store::open(*dir, true);  // TC_ERROR_CACHE before any tuning
    key_ = cache_key(bound_, backend_, target_, options_);
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
    while (static_cast<int>(out.size()) < population_) {
      const Point* parents[3] = {&pick(), &pick(), &pick()};
      Point child;
      for (size_t k = 0; k < knobs_.size(); ++k) {
        child.push_back((*parents[std::uniform_int_distribution<int>(0, 2)(rng_)])[k]);
        if (std::uniform_real_distribution<double>(0, 1)(rng_) < mutation)
          child[k] = knobs_[k].values[std::uniform_int_distribution<size_t>(0, knobs_[k].values.size() - 1)(rng_)];
      }
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

  // Compiles the new points of `population` in parallel, then measures them one at a time.
  void evaluate(const std::vector<Point>& population) {
    std::vector<Candidate> fresh;
    for (const auto& p : population) {
      std::string text = point_text(knobs_, p);
      bool seen = measured_.count(text) > 0;
      for (const auto& c : fresh) seen = seen || c.point == p;
      if (!seen) fresh.push_back(Candidate{p, nullptr, "", INFINITY});
    }
    planned_ += static_cast<int64_t>(fresh.size());
    // The starting point first, alone: the others are compared with it, and this process's
    // first compilation initialises Halide's lazily built tables on one thread. Its failure is
    // tc_tune's (tc_compile would fail the same way); another candidate's is only counted.
    std::atomic<size_t> next{0};
    if (gen_ == 1) {
      fresh[0].kernel = backend_.compile(bound_, target_, options_.values_for(backend_));
      next = 1;
    }
    auto worker = [&] {
      for (size_t i; (i = next++) < fresh.size() && elapsed() <= budget_s_;) {
        try {
          fresh[i].kernel = backend_.compile(bound_, target_, options_of(fresh[i].point).values_for(backend_));
        } catch (const std::exception& e) {
          fresh[i].failure = e.what();
        }
      }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < threads_ && t < static_cast<int>(fresh.size()); ++t) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
    for (auto& c : fresh) {
      if (stop_) break;
      if (elapsed() > budget_s_) {
        stop_ = true;
        break;
      }
      if (c.kernel) measure(c);
      measured_[point_text(knobs_, c.point)] = {c.ms, c.point};
      if (c.ms < best_.ms) {
        best_.ms = c.ms;
        best_.point = c.point;
        best_.kernel = std::move(c.kernel);
        store_best();
      }
      ++done_;
      report();
    }
  }

  // One checked run, then the median of up to 7 timed runs (stopped early when the first run
  // is 5x slower than the best, or the runs take more than a second).
  void measure(Candidate& c) {
    int index = static_cast<int>(done_);
    try {
      outputs_.zero();
      c.kernel->run(inputs_, outputs_.views, backends::ExecutionContext{});
      if (testing::after_check_run) testing::after_check_run(index, outputs_.views);
      if (index == 0) {
        reference_ = outputs_.bytes;
      } else {
        for (size_t o = 0; o < outputs_.bytes.size(); ++o)
          if (!agrees(outputs_.bytes[o], reference_[o], outputs_.views[o].type, reduction_)) {
            c.failure = "computes a different result than the starting point (output " + std::to_string(o) + ")";
            rejected_++;
            return;
          }
      }
      std::vector<double> times;
      auto t_start = Clock::now();
      for (int r = 0; r < 7; ++r) {
        auto t0 = Clock::now();
        c.kernel->run(inputs_, outputs_.views, backends::ExecutionContext{});
        times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        if (times.size() == 1 && times[0] > 5 * best_.ms) break;
        if (std::chrono::duration<double>(Clock::now() - t_start).count() > 1.0) break;
      }
      std::sort(times.begin(), times.end());
      c.ms = times[times.size() / 2];
      if (index == 0) default_ms_ = c.ms;
    } catch (const std::exception& e) {
      if (index == 0) throw;  // the starting point cannot run: nothing to compare with
      c.failure = e.what();
      c.ms = INFINITY;
    }
  }

  void store_best() {
    if (!store_ || done_ == 0) return;  // the starting point is not a tuning result
    cache::Record r;
    r.key = key_;
    r.knobs = point_text(knobs_, best_.point);
    r.best_ms = best_.ms;
    r.default_ms = default_ms_;
    r.candidates = done_ + 1;
    r.date = utc_now();
    r.libtc = TC_VERSION_STRING;
    store_->put_if_faster(r);
  }

  void report() {
    if (!progress_) return;
    Progress p{gen_, generations_, done_, planned_, best_.ms, default_ms_, elapsed(), budget_s_};
    if (!progress_(p)) stop_ = true;
  }

  Compiled result() {
    Compiled out;
    if (best_.kernel) {
      out.options = options_of(best_.point);
      out.kernel = std::move(best_.kernel);
    } else {  // the budget ran out before the starting point was measured
      out.options = options_;
      out.kernel = backend_.compile(bound_, target_, options_.values_for(backend_));
    }
    char line[256];
    std::snprintf(line, sizeof line, "tuned now: %lld candidates (%lld rejected), best %.4g ms, start %.4g ms",
                  static_cast<long long>(done_), static_cast<long long>(rejected_), best_.ms, default_ms_);
    out.provenance = std::string(line) + (store_ ? ", stored in '" + store_->dir() + "'" : ", cache off");
    return out;
  }

  const ir::BoundDef& bound_;
  backends::OptionSet options_;
  const backends::Backend& backend_;
  backends::Target target_;
  const std::vector<runtime::TensorView>& inputs_;
  ProgressFn progress_;
  Outputs outputs_;
  std::vector<std::vector<char>> reference_;  // the starting point's outputs
  int64_t reduction_ = 1;
  std::mt19937_64 rng_;
  std::vector<Knob> knobs_;
  int population_ = 0, generations_ = 0, threads_ = 1, gen_ = 0;
  double budget_s_ = 60;
  bool genetic_ = true, stop_ = false;
  Clock::time_point start_;
  std::map<std::string, std::pair<double, Point>> measured_;
  Candidate best_;
  double default_ms_ = 0;
  int64_t done_ = 0, planned_ = 0, rejected_ = 0;
  std::shared_ptr<cache::Store> store_;
  std::string key_;
};

}  // namespace

Compiled tune(const ir::BoundDef& bound, const backends::OptionSet& options,
              const std::vector<runtime::TensorView>& inputs, const ProgressFn& progress) {
  return Tuner(bound, options, inputs, progress).run();
}

}  // namespace tc::tune
