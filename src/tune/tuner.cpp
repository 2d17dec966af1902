// tuner.cpp — see tuner.h. The tuner's run from start to result (tuner_internal.h): the cache
// opened and its history read, the starting point run and stored, generations searched
// (search.cpp) and evaluated (evaluation.cpp), the winner stored and published, the description.
#include "tune/tuner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <random>
#include <thread>

#include "cache/location.h"
#include "lang/instantiate.h"
#include "support/error.h"
#include "tune/tuner_internal.h"

namespace tc::tune::tuning {

DLDevice device_of(const std::vector<runtime::TensorView>& inputs) {
  return inputs.empty() ? DLDevice{kDLCPU, 0} : inputs[0].device;
}

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

std::string sizes_text(const ir::BoundDef& bound) {
  std::string out;
  const auto& names = bound.def().size_names;
  for (size_t i = 0; i < names.size() && i < bound.size_values.size(); ++i)
    out += (out.empty() ? "" : " ") + names[i] + "=" + std::to_string(bound.size_values[i]);
  return lang::show_ellipsis(out, bound.program->ellipsis, TC_MAX_NDIM);
}

Tuner::Tuner(const ir::BoundDef& bound, const OptionSet& options, const backends::Backend& backend,
             const std::vector<runtime::TensorView>& inputs, const ProgressFn& progress, const TuneHooks* hooks)
    : bound_(bound), options_(options), backend_(backend), target_(backend_.default_target()),
      inputs_(inputs), progress_(progress), hooks_(hooks ? *hooks : TuneHooks{}), device_(device_of(inputs)),
      outputs_(backend_, device_, bound.outputs()), rng_(20261123) {
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
  isolation_ = tune.text("tune.isolation");
  if (isolation_ == "process" || (isolation_ == "auto" && device_.device_type != kDLCPU)) start_runner();
}

Compiled Tuner::run() {
  start_ = Clock::now();
  for (const auto& k : knobs_) start_point_.push_back(options_.get(k.key));
  load_history();
  reference_run();
  std::vector<Point> population = first_population();
  if (hooks_.first_population) {
    std::vector<std::string> texts;
    for (const Point& p : population) texts.push_back(point_text(knobs_, p));
    hooks_.first_population(texts);
  }
  gen_ = 1;
  double best_before_search = best_.ms;  // the history's: the first generation is measured against it
  measure_start();
  start_runner_for_long_calls();
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

void Tuner::open_cache() {
  std::optional<std::string> dir = cache::resolve_dir(options_.get("cache"));
  if (!dir) return;
  store_ = cache::Store::open(*dir, true);  // TC_ERROR_CACHE before any tuning
  key_ = cache_key(bound_, backend_, target_, options_);
  family_ = family_key(bound_.def(), backend_, target_, options_);
  remote_ = open_remote(options_);  // a key file it refuses: TC_ERROR_CACHE before any tuning
  pull();
}

void Tuner::pull() {
  if (!remote_) return;
  try {
    cache::Moved m = cache::pull_key(*store_, *remote_, key_);
    remote_note_ = "remote '" + remote_->url() + "': " + std::to_string(m.history) + " history entries and " +
                   std::to_string(m.records) + " records taken before the search";
  } catch (const Error& e) {
    remote_note_ = std::string("remote not read: ") + e.what();
  }
}

std::string Tuner::publish() {
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

void Tuner::start_runner() {
  try {
    runner_ = std::make_unique<CandidateProcess>(runner_setup());
  } catch (const Error& e) {
    if (isolation_ == "process") throw;
    isolation_note_ = std::string("candidates ran in this process: ") + e.what();
  }
}

void Tuner::start_runner_for_long_calls() {
  if (runner_ || isolation_ != "auto" || !(default_ms_ >= kLongCallMs)) return;
  double bytes = 0;
  auto add = [&](const std::vector<runtime::TensorView>& views) {
    for (const runtime::TensorView& v : views) bytes += static_cast<double>(v.num_elements()) * tc::bytes(v.type);
  };
  add(inputs_);
  add(outputs_.views);
  if (bytes <= kRunnerCopyBytes) start_runner();
}

protocol::Setup Tuner::runner_setup() const {
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

void Tuner::load_history() {
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

void Tuner::reference_run() {
  start_kernel_ = backend_.compile(bound_, target_, options_.values_for(backend_));
  outputs_.zero();
  start_kernel_->run(inputs_, outputs_.views, backends::ExecutionContext{});
  if (hooks_.after_check_run) hooks_.after_check_run(0, outputs_.views);
  reference_ = outputs_.read();
}

void Tuner::measure_start() {
  std::string text = point_text(knobs_, start_point_);
  if (!(default_ms_ > 0)) {
    ++planned_;
    Candidate c{start_point_, std::move(start_kernel_), "", cache::Outcome::Measured, INFINITY};
    if (hooks_.measuring) hooks_.measuring(text);
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

OptionSet Tuner::options_of(const Point& p) const {
  OptionSet o = options_;
  for (size_t k = 0; k < knobs_.size(); ++k) o.set(knobs_[k].key, p[k]);
  return o;
}

void Tuner::stop(std::string why) {
  stop_ = true;
  stop_reason_ = std::move(why);
}

void Tuner::remember(const Candidate& c) {
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

void Tuner::store_best() {
  if (!store_) return;
  store_shared_code_once();
  stored_ = store_->put_if_faster(best_record()) || stored_;
}

void Tuner::store_shared_code_once() {
  if (shared_code_stored_) return;
  store_shared_code(*store_, backend_, target_);
  shared_code_stored_ = true;
}

cache::Record Tuner::best_record() const {
  const backends::Kernel* code = best_.kernel ? best_.kernel.get() : best_.point == start_point_ ? start_kernel_.get() : nullptr;
  return record_of(best_.point, best_.ms, code);
}

cache::Record Tuner::record_of(const Point& point, double ms, const backends::Kernel* code) const {
  cache::Record r;
  r.key = key_;
  r.knobs = point_text(knobs_, point);
  r.best_ms = ms;
  r.default_ms = default_ms_;
  r.candidates = std::max<int64_t>(done_, 1);
  r.date = cache::utc_now();
  r.libtc = LIBTC_VERSION_STRING;
  r.backend = backend_.name();
  r.family = family_;
  r.def = bound_.def().name;
  r.sizes = sizes_text(bound_);
  r.target = backend_.target_key(target_);
  r.artefact = code ? code->artefact() : std::string();
  return r;
}

std::string Tuner::storage_text() const {
  if (!store_) return "cache off";
  if (stored_) return "stored in '" + store_->dir() + "'";
  return "nothing stored in '" + store_->dir() + "': its record of this key is as fast or faster";
}

std::string Tuner::isolation_text() const {
  if (runner_)
    return "candidates measured in candidate runner processes (" + std::to_string(runner_->starts()) + " started, " +
           runner_->path() + ")";
  return isolation_note_.empty() ? std::string("candidates measured in this process") : isolation_note_;
}

void Tuner::report(bool after_search) {
  if (!progress_) return;
  Progress p{gen_, generations_, done_, planned_, best_.ms, default_ms_, elapsed(), budget_s_};
  if (!progress_(p) && !after_search) stop("stopped by the progress callback");
}

Compiled Tuner::result() {
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

}  // namespace tc::tune::tuning

namespace tc::tune {

// The tuner's options, read by the Tuner's constructor.
const std::vector<backends::Knob>& tuner_options() {
  using backends::choice_option;
  using backends::integer_option;
  static const std::vector<backends::Knob> kOptions = [] {
    backends::Knob budget{"tune.budget", backends::KnobKind::Seconds, "60",
                          "tc_tune: seconds for the search after the starting point, which is always measured and "
                          "stored first (0: the starting point only); the best so far is kept"};
    budget.min = 0;
    budget.max = 86400 * 1000;
    return std::vector<backends::Knob>{
        choice_option("tune.strategy", "genetic", {"genetic", "random"},
                      "tc_tune's search: genetic (fitness 1/time, three parents, uniform crossover, mutation, elites) "
                      "or random"),
        integer_option("tune.population", "16", 2, 1000, "tc_tune: candidates per generation (the first: twice as many)"),
        integer_option("tune.generations", "1000", 1, 1000,
                       "tc_tune: at most this many generations (tune.budget or tune.patience ends the search first)"),
        integer_option("tune.patience", "3", 0, 1000,
                       "tc_tune: end the search after this many generations in a row found no kernel more than 2% "
                       "faster (0: only tune.budget and tune.generations end it)"),
        budget,
        integer_option("tune.threads", "0", 0, 256, "tc_tune: threads compiling candidates; 0: all cores"),
        choice_option("tune.isolation", "auto", {"auto", "process", "none"},
                      "where tc_tune runs candidates: process (a child process, the candidate runner: a candidate "
                      "that crashes or hangs fails alone), none (in the caller's process), auto (process for tensors "
                      "on a GPU, where a fault would poison the caller's CUDA context, and for host memory where the "
                      "start's call takes a second or more, so that a candidate too slow to finish soon is killed; "
                      "none for other host memory)"),
        integer_option("tune.timeout", "60", 1, 86400,
                       "tc_tune with tune.isolation=process: seconds one candidate may take in its process (loading, "
                       "checking, timing) before it is killed and counted as failed")};
  }();
  return kOptions;
}

Compiled tune(const ir::BoundDef& bound, const OptionSet& options,
              const std::vector<runtime::TensorView>& inputs, const ProgressFn& progress, const TuneHooks* hooks) {
  return tuning::Tuner(bound, options, options.backend(), inputs, progress, hooks).run();
}

Compiled tune_on(const backends::Backend& backend, const ir::BoundDef& bound, const OptionSet& options,
                 const std::vector<runtime::TensorView>& inputs, const TuneHooks* hooks) {
  return tuning::Tuner(bound, options, backend, inputs, nullptr, hooks).run();
}

}  // namespace tc::tune
