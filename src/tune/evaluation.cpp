// evaluation.cpp — a candidate compiled, checked against the starting point's outputs and timed
// (tuner_internal.h), in process or in the candidate runner; identical code measured once; the
// outcome of a generation; the final comparison of winner and start. Chooses no points.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

#include "support/error.h"
#include "support/sha256.h"
#include "tune/tuner_internal.h"

namespace tc::tune::tuning {

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

void Tuner::settle_generation(double best_before) {
  settled_ = true;
  bool improved = best_.ms < best_before * (1 - kImprovement);  // also a first time after none (inf)
  stale_ = improved ? 0 : stale_ + 1;
  if (patience_ > 0 && stale_ >= patience_ && gen_ < generations_) {
    generations_ = gen_;
    stop_reason_ = "stopped early: no generation of the last " + std::to_string(patience_) + " found a kernel more than " +
                   std::to_string(static_cast<int>(kImprovement * 100)) + "% faster (tune.patience)";
  }
}

void Tuner::evaluate(const std::vector<Point>& population, double best_before) {
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
    if (hooks_.measuring) hooks_.measuring(point_text(knobs_, c.point));
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

void Tuner::measure(Candidate& c) {
  bool is_start = c.point == start_point_;
  if (runner_) return measure_in_runner(c, is_start);
  try {
    if (!is_start) {
      outputs_.zero();
      double check_ms = timed_run(backend_, *c.kernel, device_, inputs_, outputs_.views);
      if (hooks_.after_check_run) hooks_.after_check_run(++checked_, outputs_.views);
      if (!agrees_with_start(c, outputs_.read())) return;
      if (check_ms >= kLongCallMs) {  // a long call: its checked run is its one timed run
        Timing t;
        t.ms = {adjusted(c.point, false, check_ms)};
        t.cut_off = t.ms[0] > cut_off_ms();
        return take_times(c, t, is_start);
      }
    }
    Timing t = time_runs(
        [&] { return adjusted(c.point, false, timed_run(backend_, *c.kernel, device_, inputs_, outputs_.views)); },
        cut_off_ms());
    take_times(c, t, is_start);
  } catch (const std::exception& e) {
    if (is_start) throw;  // it ran in reference_run: a failure now is tc_tune's
    c.failure = e.what();
    c.outcome = cache::Outcome::RunFailed;
    c.ms = INFINITY;
  }
}

void Tuner::measure_in_runner(Candidate& c, bool is_start) {
  protocol::Request q;
  OptionSet options = options_of(c.point);
  for (const backends::Knob* k : tune::all_options()) q.options.emplace_back(k->key, options.get(k->key));
  q.knobs = point_text(knobs_, c.point);
  q.artefact = c.kernel->artefact();
  q.cutoff_ms = std::isfinite(best_.ms) ? cut_off_ms() : 0;
  q.check = !is_start;
  const double limit_s = is_start ? timeout_s_ : runner_limit_s();
  bool timed_out = false;
  protocol::Reply r = runner_->measure(q, limit_s, timed_out);
  if (timed_out && limit_s < timeout_s_) {  // killed at the cut-off's bound, not at tune.timeout
    c.outcome = cache::Outcome::CutOff;
    c.ms = limit_s * 1e3;
    c.failure = "killed after " + ms_text(limit_s) + " s, before its first timed run ended: slower than 5x the best so far (" +
                ms_text(best_.ms) + " ms)";
    return;
  }
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
    if (hooks_.after_check_run) hooks_.after_check_run(++checked_, views);
    if (!agrees_with_start(c, r.outputs)) return;
  }
  Timing t;
  t.ms = r.times_ms;
  for (double& ms : t.ms) ms = adjusted(c.point, false, ms);
  t.cut_off = r.outcome == protocol::Reply::CutOff;
  take_times(c, t, is_start);
}

double Tuner::runner_limit_s() const {
  if (!std::isfinite(best_.ms)) return timeout_s_;
  return std::min(timeout_s_, kRunnerSlackS + 2 * cut_off_ms() / 1e3 + 1.0);
}

bool Tuner::same_code_as_measured(Candidate& c) {
  auto it = code_times_.find(code_digest(c));
  if (it == code_times_.end()) return false;
  c.ms = it->second.ms;
  c.outcome = it->second.outcome;
  c.failure = "the same code as " + it->second.knobs;
  return true;
}

void Tuner::keep_code_time(const Candidate& c) {
  if (c.outcome != cache::Outcome::Measured && c.outcome != cache::Outcome::CutOff) return;
  std::string digest = code_digest(c);
  if (!digest.empty()) code_times_.emplace(digest, CodeTime{c.ms, c.outcome, point_text(knobs_, c.point)});
}

std::string Tuner::code_digest(const Candidate& c) {
  std::string code = c.kernel ? c.kernel->artefact() : std::string();
  return code.empty() ? std::string() : sha256_hex(code);
}

bool Tuner::agrees_with_start(Candidate& c, const std::vector<std::string>& got) {
  for (size_t o = 0; o < got.size(); ++o)
    if (!agrees(got[o], reference_[o], outputs_.views[o].type, reduction_)) {
      c.failure = "computes a different result than the starting point (output " + std::to_string(o) + ")";
      c.outcome = cache::Outcome::WrongResult;
      rejected_++;
      return false;
    }
  return true;
}

void Tuner::take_times(Candidate& c, const Timing& t, bool is_start) {
  if (t.ms.empty()) fail(TC_ERROR_INTERNAL, "a candidate measured without a timed run");
  if (t.cut_off) {
    c.outcome = cache::Outcome::CutOff;
    c.failure = "its first run took more than 5x the best so far (" + ms_text(best_.ms) + " ms)";
  }
  c.ms = median(t.ms);
  if (is_start) default_ms_ = c.ms;
}

double Tuner::adjusted(const Point& p, bool confirming, double ms) const {
  return hooks_.timed ? hooks_.timed(point_text(knobs_, p), confirming, ms) : ms;
}

void Tuner::confirm() {
  if (best_.point == start_point_ || !best_.kernel || !(default_ms_ > 0)) return;
  std::unique_ptr<backends::Kernel> start = std::move(start_kernel_);
  std::vector<double> start_ms, best_ms;
  auto time = [&](const backends::Kernel& k, const Point& p) {
    return adjusted(p, true, timed_run(backend_, k, device_, inputs_, outputs_.views));
  };
  // Blocks of runs, each after a pause, the order swapped every round: a kernel timed right
  // after another can find the other's worker threads still spinning on the cores (measured: a
  // contraction's 12.4 ms took 15.1 right after a cblas_sgemm and 12.7 after a pause of 0.1 s).
  // The pause lasts as long as that spin can (Kernel::spins_after_run): 0.2 s where either
  // kernel calls a BLAS, a few milliseconds otherwise.
  // Long kernels get fewer runs (one per block at least): the comparison takes about a quarter
  // of the budget, not 18 calls of a kernel of seconds (a 279-GFLOP contraction's 1.5 s each
  // made a 10 s search take 70).
  const double pair_ms = std::max(best_.ms, 0.0) + default_ms_;
  const int per_block = static_cast<int>(
      std::clamp(kConfirmShare * budget_s_ * 1e3 / (kConfirmRounds * pair_ms), 1.0, double{kConfirmRuns / kConfirmRounds}));
  const auto pause = std::max(kConfirmPauseMin, 2 * std::max(start->spins_after_run(), best_.kernel->spins_after_run()));
  for (int round = 0; round < kConfirmRounds; ++round)
    for (int side = 0; side < 2; ++side) {
      std::this_thread::sleep_for(pause);
      bool timing_start = (side == 0) == (round % 2 == 0);
      for (int r = 0; r < per_block; ++r)
        if (timing_start) start_ms.push_back(time(*start, start_point_));
        else best_ms.push_back(time(*best_.kernel, best_.point));
    }
  double s = median(start_ms), b = median(best_ms);
  confirmation_ = "confirmed against the start in alternation: " + ms_text(b) + " ms against " +
                  ms_text(s) + " ms";
  if (b < s * (1 - kConfirmMargin)) return;
  std::string refuted = point_text(knobs_, best_.point);
  confirmation_ = "the winner " + refuted + " did not hold up against the start in alternation (" +
                  ms_text(b) + " ms against " + ms_text(s) + " ms" +
                  (b < s ? ", faster by less than " + std::to_string(static_cast<int>(kConfirmMargin * 100)) + "%" : "") +
                  "): the start is the result";
  best_.ms = s;
  best_.point = start_point_;
  best_.kernel = std::move(start);
  default_ms_ = s;
  if (store_) store_->replace_if_knobs(best_record(), refuted);
  report(true);
}

double Tuner::median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace tc::tune::tuning
