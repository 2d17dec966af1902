// tuner.h — the autotuner: searches the knobs a backend declares (it knows no backend) for the
// fastest kernel of a bound def on the caller's own inputs. Strategies: `genetic` (the TC paper's:
// fitness 1/time, roulette selection of three parents, uniform crossover, mutation, elites carried
// over; a child that is a known point is drawn again, then replaced by a random one) and `random`. With the cache on, the tuning history (cache/history.h) records every
// candidate tried for the key — its time, or why it failed — and is read first: a point it knows is
// never measured again (its stored time is its fitness; a failed point is skipped), nor is a point
// whose compiled code is byte for byte a measured one's (knobs the kernel does not use): it takes
// that one's time. The first population holds the starting point (the caller's options), the knobs
// of the cache's records of the same def at any sizes (its `family`; values outside this size's
// domains moved to the nearest one), the history's best points, the other values of the knobs a
// backend asks to be tried first (another route: cpu.blas, cpu.contract), then the start's
// neighbours and random points. The starting point is compiled and run once first: its outputs are
// what every candidate's must agree with (a candidate computing something else is discarded, never
// stored). Then, whatever the budget, it is measured (unless the history knows its time) and
// stored, so that every tune has an answer: tune.budget bounds the search after it (0: the starting
// point only). Candidates of a generation are compiled in parallel (tune.threads) and measured one
// at a time: one checked run, then the median of repeated runs, cut short when far slower than the
// best (a call of a second or more: its checked run is its one timed run). A candidate that fails
// to compile or run is a failure, not an error. The best so far goes to the cache as it improves,
// with its compiled code and (once) the backend's shared code, so a killed run keeps its progress
// and later processes start warm. Before it returns, the winner is timed against the starting point
// in alternation: a winner that does not hold up (it beat a start measured in a slower spell of the
// machine) gives way to the starting point, in the result and in the cache record the search wrote.
// The budget (tune.budget seconds) bounds the search after the starting point (a compile already
// started runs to its end; the final comparison runs after it). The description says what was
// stored, and when nothing was, why. Candidates run on the inputs' device: the outputs are
// allocated there by the backend, read back to be compared, and a timed run lasts until the
// backend's wait() says its queued work is done. With tune.isolation=process (auto: for tensors
// outside host memory) candidates are checked and timed in a candidate runner
// (candidate_process.h), where a crash or a hang fails only them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "runtime/tensor_view.h"
#include "tune/cached_compile.h"

namespace tc::tune {

struct Progress {
  int generation = 0, generations = 0;  // 1-based current, planned
  int64_t done = 0, planned = 0;        // candidates measured (or failed), planned
  double best_ms = 0, default_ms = 0;
  double elapsed_s = 0, budget_s = 0;
};

// Called after every measured candidate; returning false stops the search (the best is kept).
// Called once more, its return ignored, when the final comparison gives the result back to the start.
using ProgressFn = std::function<bool(const Progress&)>;

// What a test observes or changes in a search, passed to tune() (the library's own callers pass
// none; an empty member does nothing).
struct TuneHooks {
  // Called with each candidate's outputs after its checked run (candidate 0 is the starting
  // point): a test makes a candidate compute a wrong result through it.
  std::function<void(int candidate, const std::vector<runtime::TensorView>& outputs)> after_check_run;
  // Called once with the first population's points as knob texts, in order.
  std::function<void(const std::vector<std::string>& points)> first_population;
  // Called with every candidate's knob text as its measurement begins (a failed compilation
  // included; not for points the history knows).
  std::function<void(const std::string& knobs)> measuring;
  // Every timed run's milliseconds pass through it (knob text; whether it is the final
  // comparison of winner and start): a test makes a candidate look faster than it is.
  std::function<double(const std::string& knobs, bool confirming, double ms)> timed;
};

// The tuner's options (tune.*).
const std::vector<backends::Knob>& tuner_options();

// Tunes; stores the best in the cache of options' `cache` (unless off) and returns it compiled.
// Throws TC_ERROR_CACHE when the cache cannot be written, before any tuning.
Compiled tune(const ir::BoundDef& bound, const OptionSet& options,
              const std::vector<runtime::TensorView>& inputs, const ProgressFn& progress,
              const TuneHooks* hooks = nullptr);

// tune() with `backend` in place of the one the options name (a test's stand-in for a device
// backend: memory of another device type, runs that return before their work is done).
Compiled tune_on(const backends::Backend& backend, const ir::BoundDef& bound, const OptionSet& options,
                 const std::vector<runtime::TensorView>& inputs, const TuneHooks* hooks);

}  // namespace tc::tune
