// tuner_internal.h — the tuner (tuner.h) as one class, declared once for the files that define
// it by concern (the sections below name them), and the small helpers they share. Nothing
// outside src/tune includes it.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cache/store.h"
#include "cache/remote_transfer.h"
#include "tune/candidate_process.h"
#include "tune/measure.h"
#include "tune/tuner.h"

namespace tc::tune::tuning {

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
DLDevice device_of(const std::vector<runtime::TensorView>& inputs);

// Whether got equals want within a tolerance that grows with the reduction length: floats
// reassociated by a schedule (rfactor) round differently.
// Integers, float16 and bfloat16 (whose sums the cpu backend never reassociates) must be equal.
bool agrees(const std::string& got, const std::string& want, ScalarType t, int64_t reduction);

// Milliseconds for people: four significant digits ("0.00053"), not the cache's exact text.
std::string ms_text(double ms);

std::string point_text(const std::vector<Knob>& knobs, const Point& p);

// A knob value as positive numbers ("16" -> {16}, "32x4" -> {32, 4}); empty if it is not one.
std::vector<double> numbers_of(const std::string& value);

// The value of `domain` nearest to `value` when both read as numbers of the same arity (the
// distance of sizes is their ratio: log2), else nullopt. The tuner knows no backend: this is
// what lets a tile tuned at larger sizes seed a smaller size's search.
std::optional<std::string> nearest(const std::string& value, const std::vector<std::string>& domain);

// "M=64 K=32 N=48": the sizes of a bound def, in the def's order, for people reading the cache;
// the dimensions of a rank-polymorphic def's `...` as "...[0]=8".
std::string sizes_text(const ir::BoundDef& bound);

class Tuner {
 public:
  Tuner(const ir::BoundDef& bound, const OptionSet& options, const backends::Backend& backend,
        const std::vector<runtime::TensorView>& inputs, const ProgressFn& progress, const TuneHooks* hooks);

  Compiled run();

 private:
  // ---- tuner.cpp: the run from start to result, the cache (history, records, remote tier), reports ----
  void open_cache();

  // What other machines measured of this key (the remote tier's record and history) joins the
  // local history before the search, which then measures none of it again. A remote that
  // cannot be used is noted, never an error.
  void pull();

  // The winner (the local cache's record of the key, the faster of this search's and any
  // earlier) and the key's history go to the remote tier, with the backend's shared code; the
  // remote keeps the faster record. What came of it, for the provenance.
  std::string publish();

  // tune.isolation: candidates measured in a candidate runner (process; auto: for tensors
  // not in host memory, where a fault would poison the caller's CUDA context) or here (none;
  // auto when the runner is missing, which the result's provenance says). Starts the runner:
  // a failure is tc_tune's with process, a note with auto.
  void start_runner();

  // auto on host memory, once the start is measured: a start of kLongCallMs or more gets its
  // candidates measured in a runner too (where tensors of at most kRunnerCopyBytes make the
  // runner's copy cheap), so that one too slow to finish soon can be killed (runner_limit_s)
  // instead of running to its end (in this process a run cannot be interrupted, and a scalar
  // candidate of a contraction of a second runs for a minute).
  void start_runner_for_long_calls();
  static constexpr double kRunnerCopyBytes = 1 << 30;

  // How long a candidate (not the start: it has no best to be cut off against) may take in the
  // runner: tune.timeout, or less once the best is known: kRunnerSlackS (loading its code, the
  // runner's own pace under a sanitizer), the checked run and the first timed run at 5 times
  // the best (past which time_runs cuts it off anyway) and time_runs' second of timed runs.
  double runner_limit_s() const;

  // A candidate whose first run takes longer is cut off: 5 times the best so far (infinite
  // before anything is measured).
  double cut_off_ms() const { return 5 * best_.ms; }
  static constexpr double kRunnerSlackS = 3;

  // What a runner needs: the program, the entry, and the inputs' bytes.
  protocol::Setup runner_setup() const;

  // What the history knows of this key becomes measured_ (a timed point's time is its fitness;
  // a failed point is never tried again) and may be the best so far. Damaged entries, and those
  // of another set of knobs (another libtc), are ignored.
  void load_history();

  // The starting point, compiled and run once before anything else: every candidate's outputs
  // are compared with its outputs; this process's first compilation initialises Halide's lazily
  // built tables on one thread; and its failure is tc_tune's (tc_compile would fail the same
  // way). Run whether or not the history knows its time: running is not measuring.
  void reference_run();

  // The starting point is measured (unless the history knows its time) and stored before the
  // search spends the budget on anything else: however soon the search ends — a budget shorter
  // than one more compilation, a machine slower than expected, a killed process — the result
  // has a time and the cache a measured kernel for the key. It is the first candidate reported.
  void measure_start();

  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  OptionSet options_of(const Point& p) const;

  // Ends the search after the current candidate, saying why.
  void stop(std::string why);

  void stop_budget() { stop("the budget of " + ms_text(budget_s_) + " s ran out (tune.budget)"); }

  // The candidate's outcome in the history, one write transaction, so that no later run of this
  // key measures it again.
  void remember(const Candidate& c);

  // A faster kernel than any before it goes to the cache at once (put_if_faster keeps a faster
  // record another run stored), so that a killed search keeps its progress.
  void store_best();

  // The backend's shared code, before the first kernel that needs it.
  void store_shared_code_once();

  cache::Record best_record() const;

  // The record of `point`, timed `ms`, with `code`'s compiled code (none: compiled on a hit).
  cache::Record record_of(const Point& point, double ms, const backends::Kernel* code) const;

  // What this search left in the cache.
  std::string storage_text() const;

  std::string isolation_text() const;

  // Where the search stands, to the progress callback; `after_search`: the final comparison gave
  // the result back to the start, so the last report the caller has is the result's (a stop
  // request then changes nothing).
  void report(bool after_search = false);

  Compiled result();

  // ---- search.cpp: which points are tried: the first population, genetic and random generations ----
  // The first generation, twice tune.population: the starting point; the knobs of every record
  // of this def at any sizes (this one's first, fitted to this size's domains by fit()); the
  // history's best points; the start's neighbours, each the start with one knob changed (up to
  // half: the default is usually near a good point, and one knob — the tile's rows, the
  // panels — is often all that stands between them); then random points.
  std::vector<Point> first_population();

  // The start with each other value of a knob the backend asks to be tried first (another
  // route: the system's BLAS, the pipeline instead of the contraction route).
  std::vector<Point> alternatives_first() const;

  // Up to `n` distinct points that differ from the start in one knob each, knobs and values
  // drawn at random.
  std::vector<Point> neighbours_of_start(size_t n);

  // A record's knobs as a point of this search. A value outside this size's domain (a tile
  // larger than these extents) becomes the domain's nearest value when both are numbers or NxM
  // pairs, else the starting point's; so does a knob the record does not name.
  Point fit(const std::string& knobs) const;

  Point random_point();

  std::vector<Point> random_generation();

  // Roulette on fitness 1/time over everything measured; uniform crossover of three parents;
  // each knob re-drawn with probability 1/knobs; the best points carried over unchanged.
  std::vector<Point> next_generation();

  // ---- evaluation.cpp: compiling, checking and timing candidates, a generation's outcome, the final comparison ----
  // A generation found something faster when its best is more than this share faster than the
  // best before it: smaller differences are within the run-to-run spread of a measurement.
  static constexpr double kImprovement = 0.02;

  // The end of generation gen_: counts the generations in a row that found nothing faster and
  // ends the search at tune.patience of them, lowering the planned total to this generation
  // (so the progress reported next shows where the search ends).
  void settle_generation(double best_before);

  // Compiles the points of `population` that neither this run nor the history knows, in
  // parallel, then measures them one at a time; each one's outcome goes to the history. The
  // generation is settled before its last candidate is reported.
  void evaluate(const std::vector<Point>& population, double best_before);

  // One checked run (not for the starting point: reference_run was its), then the timed runs
  // (measure.h), here or in the candidate runner.
  void measure(Candidate& c);

  // A call at least this long is timed once, by its checked run: time_runs would time one more
  // (it stops once its runs have taken a second), doubling what a candidate of seconds costs.
  static constexpr double kLongCallMs = 1000;

  // The same in the candidate runner: a candidate that kills its process, or outlives
  // tune.timeout, fails alone.
  void measure_in_runner(Candidate& c, bool is_start);

  // A candidate whose compiled code is byte for byte that of one measured before (knobs the
  // kernel does not use: a tile size on the contraction route) is not measured again: it takes
  // that candidate's time and outcome, and the history says whose.
  bool same_code_as_measured(Candidate& c);

  // After a measurement: the time of this code, for candidates that compile to the same.
  void keep_code_time(const Candidate& c);

  static std::string code_digest(const Candidate& c);

  // Whether a candidate's outputs agree with the starting point's; if not, it is rejected.
  bool agrees_with_start(Candidate& c, const std::vector<std::string>& got);

  // A candidate's time is the median of its timed runs; a cut-off's is its one run's.
  void take_times(Candidate& c, const Timing& t, bool is_start);

  double adjusted(const Point& p, bool confirming, double ms) const;

  // Winner and start timed in alternation, kConfirmRuns each (their medians compared; fewer
  // where that would take more than kConfirmShare of the budget, one per block at least) in
  // kConfirmRounds blocks of runs each, a pause before each block (while the workers of the kernel
  // timed last may still spin): the search measured them
  // minutes apart in one long-lived process, and a start timed in a slow spell of the machine
  // (measured on a 2-core VM: tmm's default 1.40 ms in the tuning process, 0.83 in a fresh one)
  // or right after a BLAS candidate let a slower winner through. A winner that does not hold up
  // gives way to the start, in the result and in the record this search stored; so does one
  // faster by less than kConfirmMargin: one process's timings of two kernels differ by 3-6%
  // from another's (measured: a route's sgemm 1024 12.8-15.8 ms in the tuner's process, 12.1-12.4
  // in fresh ones; a contraction's confirmed winner 6% slower than its start in fresh ones).
  static constexpr int kConfirmRuns = 9, kConfirmRounds = 3;
  static constexpr double kConfirmShare = 0.25, kConfirmMargin = 0.03;
  // The pause before a block: twice the longer time either kernel's threads spin after a run
  // (Kernel::spins_after_run: 0.2 s after a BLAS call), at least kConfirmPauseMin.
  static constexpr std::chrono::milliseconds kConfirmPauseMin{5};

  void confirm();

  static double median(std::vector<double> v);

  const ir::BoundDef& bound_;
  OptionSet options_;
  const backends::Backend& backend_;
  backends::Target target_;
  const std::vector<runtime::TensorView>& inputs_;
  ProgressFn progress_;
  const TuneHooks hooks_;
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
  std::string isolation_;                     // tune.isolation
  double timeout_s_ = 60;
};

}  // namespace tc::tune::tuning
