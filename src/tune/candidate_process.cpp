// candidate_process.cpp — see candidate_process.h. One socket pair per runner (a socket, not
// pipes, so that writing to a runner that died is an error, MSG_NOSIGNAL, not SIGPIPE in the
// caller's process); posix_spawn, because a process that has initialised CUDA cannot fork a
// child that uses it.
#include "tune/candidate_process.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "support/error.h"

extern char** environ;

namespace tc::tune {

std::string candidate_runner_path() {
  if (const char* env = std::getenv("TC_CANDIDATE_RUNNER"); env && *env) return env;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&candidate_runner_path), &info) == 0 || !info.dli_fname)
    return "tc/candidate-runner";
  std::string self = info.dli_fname;
  size_t slash = self.rfind('/');
  std::string dir = slash == std::string::npos ? std::string(".") : self.substr(0, slash);
  if (char* real = ::realpath(dir.c_str(), nullptr)) {  // "/usr/lib", not "/usr/bin/../lib"
    dir = real;
    std::free(real);
  }
  return dir + "/tc/candidate-runner";
}

CandidateProcess::CandidateProcess(protocol::Setup setup) : path_(candidate_runner_path()), setup_(protocol::encode(setup)) {
  if (::access(path_.c_str(), X_OK) != 0)
    fail(TC_ERROR_UNSUPPORTED, "tune.isolation=process: no candidate runner at '" + path_ + "' (" + std::strerror(errno) +
                                   "): it is installed beside libtc as tc/candidate-runner; $TC_CANDIDATE_RUNNER names "
                                   "another");
}

CandidateProcess::~CandidateProcess() {
  if (pid_ > 0) stop(true);
}

void CandidateProcess::start() {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
    fail(TC_ERROR_RUNTIME, std::string("candidate runner: socketpair: ") + std::strerror(errno));
  int child_end = pair[1];
  if (child_end == 3) {  // dup2(3, 3) would keep close-on-exec
    child_end = ::fcntl(pair[1], F_DUPFD_CLOEXEC, 10);
    ::close(pair[1]);
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, child_end, 3);
  char* argv[] = {const_cast<char*>(path_.c_str()), nullptr};
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, path_.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(child_end);
  if (rc != 0) {
    ::close(pair[0]);
    fail(TC_ERROR_RUNTIME, "candidate runner: cannot start '" + path_ + "': " + std::strerror(rc));
  }
  pid_ = pid;
  socket_ = pair[0];
  ++starts_;
  // The setup, answered once: a runner that cannot set up (the program, the inputs on the
  // device) fails every candidate the same way, so that is the tuner's error, not theirs.
  std::string ack;
  protocol::Received got = protocol::Received::Closed;
  try {
    protocol::send(socket_, setup_);
    got = protocol::receive(socket_, ack, 120);
  } catch (const Error&) {
  }
  if (got == protocol::Received::Message) {
    protocol::Reply r = protocol::decode_reply(ack);
    if (r.outcome == protocol::Reply::Measured) return;
    stop(false);
    fail(TC_ERROR_RUNTIME, "the candidate runner could not set up: " + r.message);
  }
  std::string how = stop(got == protocol::Received::TimedOut);
  fail(TC_ERROR_RUNTIME, "the candidate runner '" + path_ + "' " + how + " while setting up");
}

std::string CandidateProcess::stop(bool kill) {
  if (kill) ::kill(pid_, SIGKILL);
  ::close(socket_);  // a runner waiting for a request reads the end of file and exits
  socket_ = -1;
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  if (kill) return "was killed";
  if (WIFSIGNALED(status))
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + ::strsignal(WTERMSIG(status)) + ")";
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

protocol::Reply CandidateProcess::measure(const protocol::Request& request, double timeout_s, bool& timed_out) {
  timed_out = false;
  if (pid_ < 0) start();
  std::string message;
  protocol::Received got = protocol::Received::Closed;
  try {
    protocol::send(socket_, protocol::encode(request));
    got = protocol::receive(socket_, message, timeout_s);
  } catch (const Error&) {  // the runner is gone: its end of the socket is closed
  }
  protocol::Reply r;
  if (got == protocol::Received::Message) {
    r = protocol::decode_reply(message);
    if (r.outcome == protocol::Reply::RunFailed) stop(false);  // it exits after a failed run
    return r;
  }
  r.outcome = protocol::Reply::RunFailed;
  if (got == protocol::Received::TimedOut) {
    timed_out = true;
    stop(true);
    r.message = "did not finish within " + std::to_string(static_cast<long long>(timeout_s)) +
                " s (tune.timeout): its process was killed";
  } else {
    r.message = "its process (the candidate runner) " + stop(false);
  }
  return r;
}

}  // namespace tc::tune
