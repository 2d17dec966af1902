// cached_compile.h — compiling through the compilation cache: the cache key of a bound def for
// a backend and options (the canonical text of the IR, the backend, its target key, the options
// that change results, the cache schema and the libtc version) and its family (the same def at
// any sizes), and tc_compile's path: look the key up; on a hit, link the record's compiled code
// (warm start) or, when that code cannot be used here, compile with the record's knob values;
// without a record, or when the cache cannot be used, compile the default (the reason goes
// into the kernel's description; a broken cache never breaks a compile). The backend's shared
// code (cpu: Halide's runtime) is taken from the cache when it holds it, and put there (the
// cache created if need be) by the first compile of a process that had to build it, so that
// later processes start warm. It does not tune: besides that shared code, only the tuner writes.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "backends/knob.h"
#include "cache/remote.h"
#include "cache/store.h"
#include "ir/bind.h"
#include "tune/options.h"

namespace tc::tune {

// The cache's options (cache, cache.remote, cache.remote_key, cache.remote_timeout), read here.
const std::vector<backends::Knob>& cache_options();

std::string cache_key(const ir::BoundDef& bound, const backends::Backend& backend, const backends::Target& target,
                      const OptionSet& options);
// The record field `family`: the SHA-256 of what cache_key says of a def at any sizes (its
// family text, print.h); records of one family are the same def at other sizes, which seed the
// tuner.
std::string family_key(const ir::Def& def, const backends::Backend& backend, const backends::Target& target,
                       const OptionSet& options);

// The knob values of a record's text ("cpu.tile=32x4 cpu.unroll=8"), by key; throws
// TC_ERROR_INVALID_ARGUMENT on a word that is not KEY=VALUE.
std::map<std::string, std::string> knob_text_values(const std::string& text);

// The key text of a backend's shared code for a target (Backend::shared_code_key), or "".
std::string shared_code_key(const backends::Backend& backend, const backends::Target& target);
// Stores the backend's shared code in `store` unless it is there or the backend has none.
void store_shared_code(cache::Store& store, const backends::Backend& backend, const backends::Target& target);

// Which cache tier a kernel's knob values came from (tc_kernel_cache_hit's values).
enum class Tier { None = 0, Local = 1, Remote = 2 };

struct Compiled {
  std::unique_ptr<backends::Kernel> kernel;
  OptionSet options;  // what it was compiled with: the caller's, plus a record's knobs
  Tier tier = Tier::None;
  std::string provenance;       // one line for tc_kernel_describe: "cache: hit in ...", "cache: miss ..."
};

// The remote tier options cache.remote, cache.remote_key and cache.remote_timeout name, or null
// for cache.remote=off; a key file path starting "~/" is in $HOME. Throws TC_ERROR_CACHE for a
// key file it refuses (cache/signing.h).
std::shared_ptr<cache::Remote> open_remote(const OptionSet& options);

// The cache is consulted unless option cache=off or the caller set any of the backend's knobs
// (explicit knobs win over tuned ones).
Compiled compile(const ir::BoundDef& bound, const OptionSet& options);

}  // namespace tc::tune
