// candidate_protocol.h — what the tuner and its candidate runner say to each other (the runner:
// a child process that compiles, checks and times candidates where a fault cannot take the
// tuner down; tune.isolation=process, candidate_process.h). Messages go over a stream socket
// (send() without SIGPIPE when the other end is gone), each an
// 8-byte length then its bytes; inside, fixed-width integers, doubles and byte strings in this
// machine's byte order. Both ends are the same build of libtc: there is no versioning. It does
// not start processes or run kernels.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <dlpack/dlpack.h>

namespace tc::tune::protocol {

// A tensor as dense row-major bytes on the host, with the device it is to be put on.
struct Tensor {
  int32_t type = 0;  // a tc::ScalarType
  DLDevice device{kDLCPU, 0};
  std::vector<int64_t> shape;
  std::string data;
};

// Sent once, when a runner starts: the program, the def and its inputs.
struct Setup {
  std::string source, source_name;  // the program's text and name (lang::SourceText)
  std::string def;                  // the entry's name
  std::vector<Tensor> inputs;
  std::string shared_code;          // the backend's shared code (Backend::shared_code), "" for none
};

// One candidate to measure.
struct Request {
  std::vector<std::pair<std::string, std::string>> options;  // every option's key and value
  std::string knobs;     // the searched knobs' values as text ("cpu.tile=32x4 ..."), for messages
  std::string artefact;  // the tuner's compiled code (Kernel::artefact), "" to compile here
  double cutoff_ms = 0;  // a first timed run slower than this stops it (0: never)
  bool check = true;     // one untimed run first, whose outputs come back
};

struct Reply {
  enum Outcome : int32_t { Measured = 0, CompileFailed = 1, RunFailed = 2, CutOff = 3 };
  int32_t outcome = Measured;
  std::string message;               // why it failed
  std::vector<std::string> outputs;  // the checked run's, row-major (with Request::check)
  std::vector<double> times_ms;      // the timed runs'
};

std::string encode(const Setup& s);
std::string encode(const Request& r);
std::string encode(const Reply& r);
// Each throws TC_ERROR_INTERNAL for a message that is not one (truncated, trailing bytes).
Setup decode_setup(const std::string& message);
Request decode_request(const std::string& message);
Reply decode_reply(const std::string& message);

// One whole message to socket `fd`; TC_ERROR_RUNTIME with errno's text when the other end is gone.
void send(int fd, const std::string& message);

enum class Received { Message, Closed, TimedOut };
// The next whole message from `fd`, waiting at most `timeout_s` seconds (negative: no limit).
// Closed: end of file (the writer exited) before a whole message.
Received receive(int fd, std::string& message, double timeout_s);

}  // namespace tc::tune::protocol
