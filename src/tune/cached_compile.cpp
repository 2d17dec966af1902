// cached_compile.cpp — see cached_compile.h.
#include "tune/cached_compile.h"

#include <cstdio>
#include <sstream>
#include <sys/stat.h>

#include "cache/location.h"
#include "cache/record.h"
#include "cache/store.h"
#include "ir/print.h"
#include "support/error.h"

namespace tc::tune {
namespace {

// The backend's knobs the caller set explicitly, as "cpu.tile, cpu.unroll".
std::string explicit_knobs(const backends::Backend& backend, const backends::OptionSet& options) {
  std::string out;
  for (const auto& k : backend.knobs())
    if (options.is_set(k.key)) out += (out.empty() ? "" : ", ") + k.key;
  return out;
}

// options with a record's knob values applied ("cpu.tile=32x4 cpu.unroll=8"). Throws
// TC_ERROR_INVALID_ARGUMENT when a stored value is no longer valid.
backends::OptionSet with_knobs(backends::OptionSet options, const std::string& knobs) {
  std::istringstream words(knobs);
  std::string kv;
  while (words >> kv) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos) fail(TC_ERROR_INVALID_ARGUMENT, "stored knob '" + kv + "' is not KEY=VALUE");
    options.set(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return options;
}

std::string speedup(const cache::Record& r) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2fx", r.best_ms > 0 ? r.default_ms / r.best_ms : 0.0);
  return buf;
}

bool exists(const std::string& dir) {
  struct stat st{};
  return ::stat(dir.c_str(), &st) == 0;
}

}  // namespace

std::string cache_key(const ir::BoundDef& bound, const backends::Backend& backend, const backends::Target& target,
                      const backends::OptionSet& options) {
  return "tc-cache-key " + std::to_string(cache::kSchemaVersion) + "\nlibtc " TC_VERSION_STRING "\nbackend " +
         backend.name() + "\ntarget " + backend.target_key(target) + "\nchecked " + options.get("checked") + "\n" +
         ir::canonical_text(bound);
}

Compiled compile(const ir::BoundDef& bound, const backends::OptionSet& options) {
  const backends::Backend& backend = options.backend();
  backends::Target target = backend.default_target();
  Compiled out;
  out.options = options;
  std::optional<std::string> dir = cache::resolve_dir(options.get("cache"));
  std::string set_by_hand = explicit_knobs(backend, options);
  if (!dir) {
    out.provenance = "cache: off";
  } else if (!set_by_hand.empty()) {
    out.provenance = "cache: not consulted (knobs set explicitly: " + set_by_hand + ")";
  } else if (!exists(*dir)) {
    out.provenance = "cache: miss (no cache at '" + *dir + "' yet)";
  } else {
    try {
      auto store = cache::Store::open(*dir, false);
      std::optional<cache::Record> r = store->get(cache_key(bound, backend, target, options));
      if (!r) {
        out.provenance = "cache: miss in '" + *dir + "'";
      } else {
        out.options = with_knobs(options, r->knobs);
        out.cache_hit = true;
        out.provenance = "cache: hit in '" + *dir + "': " + r->knobs + " (tuned " + r->date + ", " + speedup(*r) +
                         " faster than the default, " + std::to_string(r->candidates) + " candidates)";
      }
    } catch (const Error& e) {
      out.options = options;
      out.provenance = std::string("cache: not used: ") + e.what();
    }
  }
  out.kernel = backend.compile(bound, target, out.options.values_for(backend));
  return out;
}

}  // namespace tc::tune
