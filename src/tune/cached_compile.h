// cached_compile.h — compiling through the compilation cache: the cache key of a bound def for
// a backend and options (the canonical text of the IR, the backend, its target key, the options
// that change results, the cache schema and the libtc version), and tc_compile's path: look the
// key up, compile with the knob values a record holds, or without them when there is no record
// or the cache cannot be used (the reason goes into the kernel's description; a broken cache
// never breaks a compile). It does not tune or write the cache.
#pragma once

#include <memory>
#include <string>

#include "backends/registry.h"
#include "ir/bind.h"

namespace tc::tune {

std::string cache_key(const ir::BoundDef& bound, const backends::Backend& backend, const backends::Target& target,
                      const backends::OptionSet& options);

struct Compiled {
  std::unique_ptr<backends::Kernel> kernel;
  backends::OptionSet options;  // what it was compiled with: the caller's, plus a record's knobs
  bool cache_hit = false;
  std::string provenance;       // one line for tc_kernel_describe: "cache: hit in ...", "cache: miss ..."
};

// The cache is consulted unless option cache=off or the caller set any of the backend's knobs
// (explicit knobs win over tuned ones).
Compiled compile(const ir::BoundDef& bound, const backends::OptionSet& options);

}  // namespace tc::tune
