// error.h — the one exception type the core throws, carrying a C status and a message.
// The C facade (src/api) is the only place that catches it and turns it into a status plus
// the thread-local message; nothing below the facade knows about thread-local state.
#pragma once

#include <stdexcept>
#include <string>

#include "tc/tc.h"

namespace tc {

class Error : public std::runtime_error {
 public:
  Error(int status, std::string message) : std::runtime_error(std::move(message)), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

[[noreturn]] inline void fail(int status, const std::string& message) { throw Error(status, message); }

}  // namespace tc
