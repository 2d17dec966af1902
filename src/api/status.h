// status.h — the boundary between C++ and C: runs a body, turns any exception into a status
// and this thread's last-error message. The only place that knows about thread-local errors.
#pragma once

#include <string>

namespace tc::api {

void set_last_error(const std::string& message) noexcept;
const char* last_error();

// Runs f(); returns TC_OK or the status of the exception it threw.
template <typename F>
int guarded(F&& f);

}  // namespace tc::api

#include "api/status_impl.h"
