// isl_util.h — what the cuda backend's isl passes share: a NULL from isl turned into a
// TC_ERROR_INTERNAL naming the step (with isl's own last message), and isl's malloc'd strings
// taken into std::string. Header-only.
#pragma once

#include <cstdlib>
#include <string>

#include <isl/ctx.h>

#include "support/error.h"

namespace tc::backends::cuda {

template <typename T>
T* checked(T* object, isl_ctx* ctx, const char* what) {
  if (object == nullptr) {
    const char* msg = isl_ctx_last_error_msg(ctx);
    fail(TC_ERROR_INTERNAL, std::string("isl failed at the cuda backend's ") + what + (msg ? ": " + std::string(msg) : ""));
  }
  return object;
}

inline std::string owned_text(char* s) {
  std::string out = s ? s : "(null)";
  std::free(s);
  return out;
}

}  // namespace tc::backends::cuda
