// cached_compile.cpp — see cached_compile.h.
#include "tune/cached_compile.h"

#include <cstdio>
#include <mutex>
#include <set>
#include <sstream>
#include <sys/stat.h>

#include "cache/location.h"
#include "cache/record.h"
#include "cache/store.h"
#include "ir/print.h"
#include "support/error.h"
#include "support/sha256.h"

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
  for (const auto& [key, value] : knob_text_values(knobs)) options.set(key, value);
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

// Puts the backend's shared code kept in the cache at `dir` in place if the process has none
// yet, whether or not the kernel is looked up (the shared code does not depend on knobs); "" or
// why the kept copy could not be used.
std::string use_shared_code(const std::string& dir, const backends::Backend& backend, const backends::Target& target) {
  std::string key = shared_code_key(backend, target);
  if (key.empty() || backend.has_shared_code(target) || !exists(dir)) return "";
  try {
    std::optional<cache::Record> r = cache::Store::open(dir, false)->get(key);
    if (r) backend.use_shared_code(target, r->artefact);
    return "";
  } catch (const Error& e) {
    return std::string("; the cached runtime was not used: ") + e.what();
  }
}

// Keeps the backend's shared code (cpu: Halide's runtime object, about 1 s to build) in the cache
// at `dir` once a compile in this process has it, so that the next process links it instead of
// building it again: a process's first compile is then as fast as its later ones. Once per
// process, cache and backend; creates the cache like the tuner would. A cache that cannot be
// written is left alone: this is an optimisation, never a reason for a compile to fail.
void keep_shared_code(const std::string& dir, const backends::Backend& backend, const backends::Target& target) {
  static std::mutex mutex;
  static std::set<std::string> done;  // dir + '\n' + backend
  if (shared_code_key(backend, target).empty() || !backend.has_shared_code(target)) return;
  std::lock_guard<std::mutex> lock(mutex);
  if (!done.insert(dir + "\n" + backend.name()).second) return;
  try {
    store_shared_code(*cache::Store::open(dir, true), backend, target);
  } catch (const Error&) {
  }
}

// The kernel from a record's compiled code, or null with `why` set when it cannot be used here.
std::unique_ptr<backends::Kernel> load_artefact(const ir::BoundDef& bound, const backends::Backend& backend,
                                                const backends::Target& target, const backends::OptionSet& options,
                                                const cache::Record& r, std::string& why) {
  if (r.artefact.empty()) {
    why = "no compiled code stored";
    return nullptr;
  }
  try {
    return backend.load(bound, target, options.values_for(backend), r.artefact);
  } catch (const Error& e) {
    why = e.what();
    return nullptr;
  }
}

// What every key text starts with: its kind and the schema, the libtc version, the backend.
std::string header_lines(const char* kind, const backends::Backend& backend) {
  return std::string(kind) + " " + std::to_string(cache::kSchemaVersion) + "\nlibtc " TC_VERSION_STRING "\nbackend " +
         backend.name() + "\n";
}

// What a key and a family share: the header, the target and `checked` lines.
std::string key_lines(const char* kind, const backends::Backend& backend, const backends::Target& target,
                      const backends::OptionSet& options) {
  return header_lines(kind, backend) + "target " + backend.target_key(target) + "\nchecked " + options.get("checked") +
         "\n";
}

}  // namespace

std::map<std::string, std::string> knob_text_values(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream words(text);
  std::string kv;
  while (words >> kv) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos) fail(TC_ERROR_INVALID_ARGUMENT, "stored knob '" + kv + "' is not KEY=VALUE");
    out[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return out;
}

std::string shared_code_key(const backends::Backend& backend, const backends::Target& target) {
  std::string key = backend.shared_code_key(target);
  if (key.empty()) return key;
  return header_lines("tc-shared-code", backend) + key;
}

void store_shared_code(cache::Store& store, const backends::Backend& backend, const backends::Target& target) {
  std::string key = shared_code_key(backend, target);
  if (key.empty() || store.get(key)) return;
  cache::Record r;
  r.key = key;
  r.def = "(shared code)";
  r.backend = backend.name();
  r.target = backend.target_key(target);
  r.libtc = TC_VERSION_STRING;
  r.date = cache::utc_now();
  r.artefact = backend.shared_code(target);
  if (!r.artefact.empty()) store.put_if_faster(r);
}

std::string cache_key(const ir::BoundDef& bound, const backends::Backend& backend, const backends::Target& target,
                      const backends::OptionSet& options) {
  return key_lines("tc-cache-key", backend, target, options) + ir::canonical_text(bound);
}

std::string family_key(const ir::Def& def, const backends::Backend& backend, const backends::Target& target,
                       const backends::OptionSet& options) {
  return sha256_hex(key_lines("tc-cache-family", backend, target, options) + ir::family_text(def));
}

Compiled compile(const ir::BoundDef& bound, const backends::OptionSet& options) {
  const backends::Backend& backend = options.backend();
  backends::Target target = backend.default_target();
  Compiled out;
  out.options = options;
  std::optional<std::string> dir = cache::resolve_dir(options.get("cache"));
  std::string set_by_hand = explicit_knobs(backend, options);
  std::string runtime_note = dir ? use_shared_code(*dir, backend, target) : "";
  if (!dir) {
    out.provenance = "cache: off";
  } else if (!set_by_hand.empty()) {
    out.provenance = "cache: not consulted (knobs set explicitly: " + set_by_hand + ")" + runtime_note;
  } else if (!exists(*dir)) {
    out.provenance = "cache: miss (no cache at '" + *dir + "' yet)";
  } else {
    try {
      auto store = cache::Store::open(*dir, false);
      std::optional<cache::Record> r = store->get(cache_key(bound, backend, target, options));
      if (!r) {
        out.provenance = "cache: miss in '" + *dir + "'" + runtime_note;
      } else {
        out.options = with_knobs(options, r->knobs);
        out.cache_hit = true;
        std::string why;
        out.kernel = load_artefact(bound, backend, target, out.options, *r, why);
        out.provenance = "cache: hit in '" + *dir + "': " + r->knobs + " (tuned " + r->date + ", " + speedup(*r) +
                         " faster than the default, " + std::to_string(r->candidates) + " candidates); " +
                         (out.kernel ? "code loaded from the cache" : "compiled from the stored knobs: " + why) +
                         runtime_note;
      }
    } catch (const Error& e) {
      out.options = options;
      out.cache_hit = false;
      out.kernel.reset();
      out.provenance = std::string("cache: not used: ") + e.what();
    }
  }
  if (!out.kernel) out.kernel = backend.compile(bound, target, out.options.values_for(backend));
  if (dir) keep_shared_code(*dir, backend, target);
  return out;
}

}  // namespace tc::tune
