// candidate_runner_entry.cpp — libtc's one exported function outside the API: the entry of the
// candidate runner (programs/candidate-runner, the tuner's child process for
// tune.isolation=process), which is libtc's own executable and runs libtc's code in a fresh
// process. Not declared in tc.h: nothing else calls it. No exception crosses it.
#include "tc/tc.h"
#include "tune/candidate_runner.h"

extern "C" TC_API int tc_candidate_runner_main(int fd) { return tc::tune::serve_candidates(fd); }
