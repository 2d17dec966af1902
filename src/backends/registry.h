// registry.h — every backend of this build, and the general options (backend, checked, threads),
// which every backend reads. It links each backend library.
#pragma once

#include <string>
#include <vector>

#include "backends/backend.h"

namespace tc::backends {

const std::vector<const Backend*>& all_backends();
// Throws TC_ERROR_INVALID_ARGUMENT naming the backends of this build.
const Backend& find_backend(const std::string& name);

// The general options, which every backend reads: backend, checked, threads. The whole list of
// options, with the cache's and the tuner's, is tune/options.h's.
const std::vector<Knob>& general_options();

}  // namespace tc::backends
