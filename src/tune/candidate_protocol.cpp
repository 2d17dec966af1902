// candidate_protocol.cpp — see candidate_protocol.h.
#include "tune/candidate_protocol.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "support/error.h"

namespace tc::tune::protocol {

namespace {

class Writer {
 public:
  template <typename T>
  void fixed(T v) {
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void bytes(const std::string& s) {
    fixed<uint64_t>(s.size());
    out_ += s;
  }
  void tensor(const Tensor& t) {
    fixed(t.type);
    fixed<int32_t>(t.device.device_type);
    fixed<int32_t>(t.device.device_id);
    fixed<uint64_t>(t.shape.size());
    for (int64_t d : t.shape) fixed(d);
    bytes(t.data);
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(const std::string& in) : in_(in) {}
  template <typename T>
  T fixed() {
    T v;
    need(sizeof v);
    std::memcpy(&v, in_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string bytes() {
    uint64_t n = fixed<uint64_t>();
    need(n);
    std::string s = in_.substr(at_, n);
    at_ += n;
    return s;
  }
  Tensor tensor() {
    Tensor t;
    t.type = fixed<int32_t>();
    t.device.device_type = static_cast<DLDeviceType>(fixed<int32_t>());
    t.device.device_id = fixed<int32_t>();
    uint64_t ndim = fixed<uint64_t>();
    if (ndim > 64) fail(TC_ERROR_INTERNAL, "candidate runner: a message with a tensor of rank " + std::to_string(ndim));
    for (uint64_t d = 0; d < ndim; ++d) t.shape.push_back(fixed<int64_t>());
    t.data = bytes();
    return t;
  }
  uint64_t count() {
    uint64_t n = fixed<uint64_t>();
    need(n);  // every item takes at least a byte: a damaged count cannot make a huge vector
    return n;
  }
  void end() const {
    if (at_ != in_.size()) fail(TC_ERROR_INTERNAL, "candidate runner: a message with trailing bytes");
  }

 private:
  void need(uint64_t n) const {
    if (n > in_.size() - at_) fail(TC_ERROR_INTERNAL, "candidate runner: a truncated message");
  }
  const std::string& in_;
  size_t at_ = 0;
};

}  // namespace

std::string encode(const Setup& s) {
  Writer w;
  w.bytes(s.source);
  w.bytes(s.source_name);
  w.bytes(s.def);
  w.fixed<uint64_t>(s.inputs.size());
  for (const auto& t : s.inputs) w.tensor(t);
  w.bytes(s.shared_code);
  return w.take();
}

std::string encode(const Request& r) {
  Writer w;
  w.fixed<uint64_t>(r.options.size());
  for (const auto& [key, value] : r.options) {
    w.bytes(key);
    w.bytes(value);
  }
  w.bytes(r.knobs);
  w.bytes(r.artefact);
  w.fixed(r.cutoff_ms);
  w.fixed<int32_t>(r.check);
  return w.take();
}

std::string encode(const Reply& r) {
  Writer w;
  w.fixed(r.outcome);
  w.bytes(r.message);
  w.fixed<uint64_t>(r.outputs.size());
  for (const auto& o : r.outputs) w.bytes(o);
  w.fixed<uint64_t>(r.times_ms.size());
  for (double t : r.times_ms) w.fixed(t);
  return w.take();
}

Setup decode_setup(const std::string& message) {
  Reader r(message);
  Setup s;
  s.source = r.bytes();
  s.source_name = r.bytes();
  s.def = r.bytes();
  for (uint64_t i = 0, n = r.count(); i < n; ++i) s.inputs.push_back(r.tensor());
  s.shared_code = r.bytes();
  r.end();
  return s;
}

Request decode_request(const std::string& message) {
  Reader r(message);
  Request q;
  for (uint64_t i = 0, n = r.count(); i < n; ++i) {
    std::string key = r.bytes();
    q.options.emplace_back(std::move(key), r.bytes());
  }
  q.knobs = r.bytes();
  q.artefact = r.bytes();
  q.cutoff_ms = r.fixed<double>();
  q.check = r.fixed<int32_t>() != 0;
  r.end();
  return q;
}

Reply decode_reply(const std::string& message) {
  Reader r(message);
  Reply p;
  p.outcome = r.fixed<int32_t>();
  p.message = r.bytes();
  for (uint64_t i = 0, n = r.count(); i < n; ++i) p.outputs.push_back(r.bytes());
  for (uint64_t i = 0, n = r.count(); i < n; ++i) p.times_ms.push_back(r.fixed<double>());
  r.end();
  return p;
}

void send(int fd, const std::string& message) {
  std::string framed(8, '\0');
  uint64_t n = message.size();
  std::memcpy(framed.data(), &n, 8);
  framed += message;
  for (size_t done = 0; done < framed.size();) {
    ssize_t k = ::send(fd, framed.data() + done, framed.size() - done, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) fail(TC_ERROR_RUNTIME, std::string("candidate runner: cannot write to its pipe: ") + std::strerror(errno));
    done += static_cast<size_t>(k);
  }
}

Received receive(int fd, std::string& message, double timeout_s) {
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  std::string in;
  uint64_t want = 8;
  bool have_length = false;
  char buffer[65536];
  for (;;) {
    if (!have_length && in.size() == 8) {
      std::memcpy(&want, in.data(), 8);
      want += 8;
      have_length = true;
    }
    if (have_length && in.size() == want) break;
    int wait_ms = -1;
    if (timeout_s >= 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return Received::TimedOut;
      wait_ms = static_cast<int>(std::min<long long>(left, 1 << 30));
    }
    pollfd p{fd, POLLIN, 0};
    int ready = ::poll(&p, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) fail(TC_ERROR_RUNTIME, std::string("candidate runner: poll: ") + std::strerror(errno));
    if (ready == 0) continue;  // the deadline is checked above
    ssize_t k = ::read(fd, buffer, static_cast<size_t>(std::min<uint64_t>(sizeof buffer, want - in.size())));
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return Received::Closed;
    in.append(buffer, static_cast<size_t>(k));
  }
  message = in.substr(8);
  return Received::Message;
}

}  // namespace tc::tune::protocol
