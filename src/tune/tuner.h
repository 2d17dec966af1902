// tuner.h — the autotuner: searches the knobs a backend declares (it knows no backend) for the
// fastest kernel of a bound def on the caller's own inputs. Strategies: `genetic` (the TC
// paper's: fitness 1/time, roulette selection of three parents, uniform crossover, mutation,
// elites carried over) and `random`. The first population holds the starting point (the
// caller's options) and random points. Candidates of a generation are compiled in parallel
// (tune.threads) and measured one at a time: one run whose outputs are compared with the
// starting point's (a candidate computing something else is discarded, never stored), then the
// median of repeated runs, cut short when far slower than the best. A candidate that fails to
// compile or run is a failure, not an error. The best so far goes to the cache as it improves,
// so a killed run keeps its progress; the budget (tune.budget seconds) bounds the whole search.
#pragma once

#include <functional>
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
using ProgressFn = std::function<bool(const Progress&)>;

// Tunes; stores the best in the cache of options' `cache` (unless off) and returns it compiled.
// Throws TC_ERROR_CACHE when the cache cannot be written, before any tuning.
Compiled tune(const ir::BoundDef& bound, const backends::OptionSet& options,
              const std::vector<runtime::TensorView>& inputs, const ProgressFn& progress);

namespace testing {
// Test-only: called with each candidate's outputs after its checked run (candidate 0 is the
// starting point); a test makes a candidate compute a wrong result through it.
extern std::function<void(int candidate, const std::vector<runtime::TensorView>& outputs)> after_check_run;
}  // namespace testing

}  // namespace tc::tune
