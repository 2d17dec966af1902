// errors.cpp — version, status strings and the thread-local last-error message.
#include <string>

#include "api/status.h"
#include "tc/tc.h"

namespace tc::api {
namespace {
thread_local std::string t_last_error;
}

void set_last_error(const std::string& message) noexcept {
  try {
    t_last_error = message;
  } catch (...) {  // no memory for the message: keep a static one rather than throw into C
    t_last_error.clear();
    t_last_error.shrink_to_fit();
  }
}
const char* last_error() { return t_last_error.c_str(); }

}  // namespace tc::api

extern "C" {

TC_API int tc_version_number(void) { return LIBTC_VERSION_NUMBER; }
TC_API const char* tc_version_string(void) { return LIBTC_VERSION_STRING; }

TC_API const char* tc_strerror(int status) {
  switch (status) {
    case TC_OK: return "ok";
    case TC_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case TC_ERROR_SYNTAX: return "syntax error";
    case TC_ERROR_SEMANTIC: return "semantic error";
    case TC_ERROR_SHAPE: return "shape error";
    case TC_ERROR_UNSUPPORTED: return "unsupported";
    case TC_ERROR_COMPILE: return "compile error";
    case TC_ERROR_RUNTIME: return "runtime error";
    case TC_ERROR_CACHE: return "cache error";
    case TC_ERROR_NO_MEMORY: return "out of memory";
    case TC_ERROR_INTERNAL: return "internal error";
    default: return "unknown status";
  }
}

TC_API const char* tc_last_error_message(void) { return tc::api::last_error(); }

}  // extern "C"
