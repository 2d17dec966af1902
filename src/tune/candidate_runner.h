// candidate_runner.h — the candidate runner's loop (tune.isolation=process): what the
// executable tc/candidate-runner runs, through libtc's entry tc_candidate_runner_main (not part
// of the API: the executable is libtc's own, programs/candidate-runner). The other side is
// candidate_process.h; the messages are candidate_protocol.h.
#pragma once

#include <functional>
#include <string>

namespace tc::tune {

// What a test runner (tests/tune/faulty_runner.cpp) does to a candidate before its first run
// (crash, hang); libtc's runner has none.
struct RunnerHooks {
  std::function<void(const std::string& knobs)> before_run;
};

// Serves the tuner on socket `fd` until it closes its end (0), after a failed run (0: the
// device's state is unknown, the tuner starts a fresh runner), or when the setup fails (1)
// or the tuner is gone mid-message (2).
int serve_candidates(int fd, const RunnerHooks* hooks = nullptr);

}  // namespace tc::tune
