/* candidate-runner — the tuner's child process for tune.isolation=process: libtc's own
 * executable, started by tc_tune with its socket as fd 3 (src/tune/candidate_process.cpp).
 * All it does is in libtc (src/tune/candidate_runner.cpp), reached through the one exported
 * function that is not part of the API. Installed as <libdir>/tc/candidate-runner, where libtc
 * looks for it. */
int tc_candidate_runner_main(int fd);

int main(void) { return tc_candidate_runner_main(3); }
