// cached_compile.cpp — see cached_compile.h.
#include "tune/cached_compile.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <sstream>
#include <sys/stat.h>

#include "cache/location.h"
#include "cache/record.h"
#include "cache/remote.h"
#include "cache/store.h"
#include "ir/print.h"
#include "support/error.h"
#include "support/sha256.h"

namespace tc::tune {
namespace {

// The backend's knobs the caller set explicitly, as "cpu.tile, cpu.unroll".
std::string explicit_knobs(const backends::Backend& backend, const OptionSet& options) {
  std::string out;
  for (const auto& k : backend.knobs())
    if (options.is_set(k.key)) out += (out.empty() ? "" : ", ") + k.key;
  return out;
}

// options with a record's knob values applied ("cpu.tile=32x4 cpu.unroll=8"). Throws
// TC_ERROR_INVALID_ARGUMENT when a stored value is no longer valid.
OptionSet with_knobs(OptionSet options, const std::string& knobs) {
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
// yet, whether or not the kernel is looked up (the shared code does not depend on knobs); when
// the local cache lacks it and a remote tier is given, the remote's copy, kept locally. "" or why
// the kept copy could not be used.
std::string use_shared_code(const std::string& dir, const backends::Backend& backend, const backends::Target& target,
                            const cache::Remote* remote) {
  std::string key = shared_code_key(backend, target);
  if (key.empty() || backend.has_shared_code(target)) return "";
  try {
    std::optional<cache::Record> r;
    if (exists(dir)) r = cache::Store::open(dir, false)->get(key);
    if (!r && remote && (r = remote->get(key))) cache::Store::open(dir, true)->put_if_faster(*r);
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
                                                const backends::Target& target, const OptionSet& options,
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
  return std::string(kind) + " " + std::to_string(cache::kSchemaVersion) + "\nlibtc " LIBTC_VERSION_STRING "\nbackend " +
         backend.name() + "\n";
}

// What a key and a family share: the header, the target and `checked` lines.
std::string key_lines(const char* kind, const backends::Backend& backend, const backends::Target& target,
                      const OptionSet& options) {
  return header_lines(kind, backend) + "target " + backend.target_key(target) + "\nchecked " + options.get("checked") +
         "\n";
}

// What the cache tiers hold for a key: the record and the tier that served it, the provenance's
// first words ("cache: hit in '<dir>'", "cache: miss in '<dir>'; remote '<url>': miss"), and
// notes on what could not be used, for the end of the line.
struct Lookup {
  std::optional<cache::Record> record;
  Tier tier = Tier::None;
  std::string provenance;
  std::string notes;
};

// The local tier, then the remote one; a remote hit is kept in the local cache (created if need
// be) so that the next process finds it there. Neither tier failing is an error: the caller
// compiles.
Lookup look_up(const std::string& dir, const std::string& key, const OptionSet& options,
               const backends::Backend& backend, const backends::Target& target) {
  Lookup out;
  std::shared_ptr<cache::Store> local;
  std::string local_state = "miss (no cache at '" + dir + "' yet)";
  if (exists(dir)) {
    try {
      local = cache::Store::open(dir, false);
      out.record = local->get(key);
      local_state = "miss in '" + dir + "'";
    } catch (const Error& e) {
      local_state = std::string("not used: ") + e.what();
    }
  }
  if (out.record) {
    out.tier = Tier::Local;
    out.provenance = "cache: hit in '" + dir + "'";
    out.notes = use_shared_code(dir, backend, target, nullptr);
    return out;
  }
  std::shared_ptr<cache::Remote> remote;
  std::string remote_state;
  try {
    remote = open_remote(options);
    std::string paused = remote ? remote->paused() : "";
    if (!paused.empty()) {
      remote_state = "; remote not used: " + paused;
      remote.reset();
    } else if (remote) {
      out.record = remote->get(key);
      remote_state = out.record ? "" : "; remote '" + remote->url() + "': miss";
    }
  } catch (const Error& e) {
    remote_state = std::string("; remote not used: ") + e.what();
    remote.reset();
  }
  if (!out.record) {
    out.provenance = "cache: " + local_state + remote_state;
    out.notes = use_shared_code(dir, backend, target, remote.get());
    return out;
  }
  out.tier = Tier::Remote;
  out.provenance = "cache: hit in remote '" + remote->url() + "'";
  try {
    if (!local) local = cache::Store::open(dir, true);
    local->put_if_faster(*out.record);
    out.provenance += " (kept in '" + dir + "')";
  } catch (const Error& e) {
    out.notes = std::string("; not kept locally: ") + e.what();
  }
  out.notes += use_shared_code(dir, backend, target, remote.get());
  return out;
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
  r.libtc = LIBTC_VERSION_STRING;
  r.date = cache::utc_now();
  r.artefact = backend.shared_code(target);
  if (!r.artefact.empty()) store.put_if_faster(r);
}

std::string cache_key(const ir::BoundDef& bound, const backends::Backend& backend, const backends::Target& target,
                      const OptionSet& options) {
  return key_lines("tc-cache-key", backend, target, options) + ir::canonical_text(bound);
}

std::string family_key(const ir::Def& def, const backends::Backend& backend, const backends::Target& target,
                       const OptionSet& options) {
  return sha256_hex(key_lines("tc-cache-family", backend, target, options) + ir::family_text(def));
}

// The cache's options, read here (the cache stage stores records and knows no options).
const std::vector<backends::Knob>& cache_options() {
  using backends::text_option;
  static const std::vector<backends::Knob> kOptions = [] {
    backends::Knob remote = text_option(
        "cache.remote", "off", {"off"}, "URL",
        "the remote tier of the compilation cache, shared by many machines: a Redis server (redis://HOST:PORT[/DB] "
        "or unix:///PATH) looked up after the local cache and before compiling; records are signed with "
        "cache.remote_key's secret (docs/guide/tuning-and-cache.md)");
    remote.check_text = cache::check_remote_url;
    return std::vector<backends::Knob>{
        text_option("cache", "auto", {"auto", "off"}, "DIR",
                    "the compilation cache (tuned kernels): auto ($TC_CACHE_DIR, else $XDG_CACHE_HOME/libtc, else "
                    "~/.cache/libtc), off, or a directory"),
        remote,
        text_option("cache.remote_key", "none", {"none"}, "FILE",
                    "the file holding the secret that signs and checks the remote tier's records (required with "
                    "cache.remote; a leading ~/ is $HOME; refused unless it is yours and no one else can read it: "
                    "chmod 600)"),
        backends::integer_option("cache.remote_timeout", "300", 1, 60000,
                                 "milliseconds the remote cache may take to connect and to answer each call; past it "
                                 "the lookup falls back to compiling (and lookups skip the server for 30 s)")};
  }();
  return kOptions;
}

std::shared_ptr<cache::Remote> open_remote(const OptionSet& options) {
  if (options.get("cache.remote") == "off") return nullptr;
  cache::RemoteSettings settings;
  settings.url = options.get("cache.remote");
  settings.key_file = options.get("cache.remote_key") == "none" ? "" : options.get("cache.remote_key");
  const char* home = std::getenv("HOME");
  if (settings.key_file.rfind("~/", 0) == 0 && home) settings.key_file = home + settings.key_file.substr(1);
  settings.timeout_ms = std::stoi(options.get("cache.remote_timeout"));  // validated: 1..60000
  return cache::Remote::open(settings);
}

Compiled compile(const ir::BoundDef& bound, const OptionSet& options) {
  const backends::Backend& backend = options.backend();
  backends::Target target = backend.default_target();
  Compiled out;
  out.options = options;
  std::optional<std::string> dir = cache::resolve_dir(options.get("cache"));
  std::string set_by_hand = explicit_knobs(backend, options);
  if (!dir) {
    out.provenance = "cache: off";
  } else if (!set_by_hand.empty()) {
    out.provenance = "cache: not consulted (knobs set explicitly: " + set_by_hand + ")" +
                     use_shared_code(*dir, backend, target, nullptr);
  } else {
    Lookup found = look_up(*dir, cache_key(bound, backend, target, options), options, backend, target);
    out.provenance = found.provenance;
    if (found.record) {
      try {
        out.options = with_knobs(options, found.record->knobs);
        std::string why;
        out.kernel = load_artefact(bound, backend, target, out.options, *found.record, why);
        out.tier = found.tier;
        out.provenance += ": " + found.record->knobs + " (tuned " + found.record->date + ", " + speedup(*found.record) +
                          " faster than the default, " + std::to_string(found.record->candidates) + " candidates); " +
                          (out.kernel ? "code loaded from the cache" : "compiled from the stored knobs: " + why);
      } catch (const Error& e) {
        out.options = options;
        out.kernel.reset();
        out.provenance = std::string("cache: not used: ") + e.what();
      }
    }
    out.provenance += found.notes;
  }
  if (!out.kernel) out.kernel = backend.compile(bound, target, out.options.values_for(backend));
  if (dir) keep_shared_code(*dir, backend, target);
  return out;
}

}  // namespace tc::tune
