// candidate_process.h — the tuner's candidate runner, from the tuner's side: a child process
// (the executable `tc/candidate-runner` of this build) that gets the program and the inputs
// once, then one candidate at a time, and compiles (or loads), checks and times it where a
// fault cannot take the tuner down: a candidate that kills its process (SIGSEGV, abort, an
// illegal address that poisons its CUDA context and makes it exit) or outlives the time limit
// (then it is killed) is a failed candidate with the reason, and the next candidate gets a
// fresh runner. It does not decide what a reply means (the tuner compares outputs and times).
#pragma once

#include <sys/types.h>

#include <string>

#include "tune/candidate_protocol.h"

namespace tc::tune {

// Where the runner is: $TC_CANDIDATE_RUNNER when set, else `tc/candidate-runner` in the folder
// of the library (or executable) this code is linked into (build/src/tc/ in the build tree,
// $libdir/tc/ installed).
std::string candidate_runner_path();

class CandidateProcess {
 public:
  // Checks that the runner exists and is executable (TC_ERROR_UNSUPPORTED naming the path and
  // $TC_CANDIDATE_RUNNER); starts it at the first measure().
  explicit CandidateProcess(protocol::Setup setup);
  ~CandidateProcess();  // kills and reaps a running runner
  CandidateProcess(const CandidateProcess&) = delete;
  CandidateProcess& operator=(const CandidateProcess&) = delete;

  // One candidate, within `timeout_s` seconds (its compilation included). A runner that
  // ends or times out gives RunFailed saying how ("the candidate's process was killed by
  // signal 11 (Segmentation fault)"), and is started afresh for the next; `timed_out` says
  // which of the two it was.
  protocol::Reply measure(const protocol::Request& request, double timeout_s, bool& timed_out);

  int starts() const { return starts_; }  // runners started so far
  const std::string& path() const { return path_; }

 private:
  void start();
  // Reaps the runner (killing it first if `kill`) and says how it ended.
  std::string stop(bool kill);

  std::string path_;
  std::string setup_;  // the encoded Setup, sent to every runner started
  pid_t pid_ = -1;
  int socket_ = -1;    // our end of the socket pair; the runner's is its fd 3
  int starts_ = 0;
};

}  // namespace tc::tune
