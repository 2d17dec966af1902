// faulty_runner.cpp — the candidate runner with faults on demand, for the tests of fault
// containment (tests/tune/test_tuner.cpp's Isolation tests, tests/gpu/tune_on_gpu.py): libtc's
// runner loop (tune/candidate_runner.h) with hooks that make a candidate whose knob text
// contains $TC_TEST_RUNNER_FAULT die of SIGSEGV before its first run, and one whose text
// contains $TC_TEST_RUNNER_HANG sleep until killed. Tests point $TC_CANDIDATE_RUNNER at it;
// it is never installed, and libtc's own runner has no such hooks.
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "tune/candidate_runner.h"

namespace {

bool names(const char* variable, const std::string& knobs) {
  const char* text = std::getenv(variable);
  return text && *text && knobs.find(text) != std::string::npos;
}

}  // namespace

int main() {
  tc::tune::RunnerHooks hooks;
  hooks.before_run = [](const std::string& knobs) {
    if (names("TC_TEST_RUNNER_FAULT", knobs)) {
      ::signal(SIGSEGV, SIG_DFL);  // a sanitizer's handler would turn the signal into an exit status
      ::raise(SIGSEGV);
    }
    if (names("TC_TEST_RUNNER_HANG", knobs))
      for (;;) ::pause();
  };
  return tc::tune::serve_candidates(3, &hooks);  // the tuner gives the runner its socket as fd 3
}
