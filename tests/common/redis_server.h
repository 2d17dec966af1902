// redis_server.h — a real Debian redis-server for the remote cache tier's tests: started on a
// free loopback port with a temporary directory (no persistence: a restart starts empty),
// stopped (SIGKILL, as a crash would) by stop() or the destructor; and one command to it through
// hiredis, for tests that change what the server holds or how it behaves.
#pragma once

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace tc_test {

// A TCP socket bound to a free loopback port; *port is set to it.
inline int loopback_socket(int* port) {
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  *port = ntohs(a.sin_port);
  return s;
}

// A loopback TCP port nothing listens on now.
inline int free_port() {
  int port = 0;
  ::close(loopback_socket(&port));
  return port;
}

class RedisServer {
 public:
  explicit RedisServer(std::string dir) : dir_(std::move(dir)), port_(free_port()) { start(); }
  ~RedisServer() { stop(); }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  int port() const { return port_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

  // Starts it (again) on the same port and waits until it answers PING.
  void start() {
    std::string port = std::to_string(port_);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::execlp("redis-server", "redis-server", "--port", port.c_str(), "--bind", "127.0.0.1", "--dir", dir_.c_str(),
               "--save", "", "--appendonly", "no", "--logfile", (dir_ + "/redis.log").c_str(), nullptr);
      std::_Exit(127);
    }
    for (int i = 0; i < 200; ++i) {
      if (command({"PING"}) == "PONG") return;
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = 0;
        FAIL() << "redis-server did not start (exit " << WEXITSTATUS(status)
               << "; tools/install-deps.sh installs Debian's redis-server)";
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    FAIL() << "redis-server on port " << port_ << " does not answer";
  }
  // Kills it (SIGKILL: nothing is saved, clients see the connection drop).
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = 0;
  }

  // The reply to one command as text ("PONG", a string's bytes, an integer, "(nil)", or
  // "ERR ..."), "" when the server cannot be reached.
  std::string command(const std::vector<std::string>& args) const {
    redisContext* c = redisConnectWithTimeout("127.0.0.1", port_, timeval{1, 0});
    if (!c || c->err) {
      if (c) redisFree(c);
      return "";
    }
    std::vector<const char*> argv;
    std::vector<size_t> lengths;
    for (const std::string& a : args) {
      argv.push_back(a.data());
      lengths.push_back(a.size());
    }
    auto* r = static_cast<redisReply*>(redisCommandArgv(c, static_cast<int>(argv.size()), argv.data(), lengths.data()));
    std::string out;
    if (r) {
      if (r->type == REDIS_REPLY_INTEGER) out = std::to_string(r->integer);
      else if (r->type == REDIS_REPLY_NIL) out = "(nil)";
      else if (r->type == REDIS_REPLY_ARRAY) out = std::to_string(r->elements) + " elements";
      else out.assign(r->str, r->len);
      freeReplyObject(r);
    }
    redisFree(c);
    return out;
  }

 private:
  std::string dir_;
  int port_;
  pid_t pid_ = 0;
};

}  // namespace tc_test
