// registry.cpp — see registry.h. The general options are declared here: they apply to every
// backend.
#include "backends/registry.h"

#include <algorithm>

#include "backends/cpu/cpu_backend.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/reference/reference_backend.h"
#include "cache/remote.h"
#include "support/error.h"

namespace tc::backends {
namespace {

std::vector<Knob> general_options() {
  Knob backend{"backend", KnobKind::Choice, all_backends().front()->name(), ""};
  std::string help;
  for (const Backend* b : all_backends()) {
    backend.choices.push_back(b->name());
    help += std::string(help.empty() ? "" : "; ") + b->name() + ": " + b->summary();
  }
  backend.help = "which backend compiles the kernel (" + help + ")";
  Knob checked{"checked", KnobKind::Boolean, "1",
               "check data-dependent reads (gathers) at run time: an index out of range is TC_ERROR_RUNTIME; "
               "0: cpu clamps such an index into range"};
  auto integer = [](const char* key, const char* def, int64_t lo, int64_t hi, const char* help) {
    Knob k{key, KnobKind::Integer, def, help};
    k.min = lo;
    k.max = hi;
    return k;
  };
  Knob cache{"cache", KnobKind::Text, "auto",
             "the compilation cache (tuned kernels): auto ($TC_CACHE_DIR, else $XDG_CACHE_HOME/libtc, else "
             "~/.cache/libtc), off, or a directory"};
  cache.choices = {"auto", "off"};
  cache.text_name = "DIR";
  Knob remote{"cache.remote", KnobKind::Text, "off",
              "the remote tier of the compilation cache, shared by many machines: a Redis server (redis://HOST:PORT[/DB] "
              "or unix:///PATH) looked up after the local cache and before compiling; records are signed with "
              "cache.remote_key's secret (docs/guide/tuning-and-cache.md)"};
  remote.choices = {"off"};
  remote.text_name = "URL";
  remote.check_text = cache::check_remote_url;
  Knob remote_key{"cache.remote_key", KnobKind::Text, "none",
                  "the file holding the secret that signs and checks the remote tier's records (required with "
                  "cache.remote; a leading ~/ is $HOME; refused unless it is yours and no one else can read it: chmod 600)"};
  remote_key.choices = {"none"};
  remote_key.text_name = "FILE";
  // The tuner's own options (src/tune; read by tc_tune only).
  Knob strategy{"tune.strategy", KnobKind::Choice, "genetic",
                "tc_tune's search: genetic (fitness 1/time, three parents, uniform crossover, mutation, elites) or random"};
  strategy.choices = {"genetic", "random"};
  Knob isolation{"tune.isolation", KnobKind::Choice, "auto",
                 "where tc_tune runs candidates: process (a child process, the candidate runner: a candidate that "
                 "crashes or hangs fails alone), none (in the caller's process), auto (process for tensors on a GPU, "
                 "where a fault would poison the caller's CUDA context; none for host memory)"};
  isolation.choices = {"auto", "process", "none"};
  Knob budget{"tune.budget", KnobKind::Seconds, "60",
              "tc_tune: seconds for the search after the starting point, which is always measured and stored first "
              "(0: the starting point only); the best so far is kept"};
  budget.min = 0;
  budget.max = 86400 * 1000;
  return {backend,
          checked,
          integer("threads", "0", 0, 1024, "threads a host kernel's parallel loops use, the caller included; 0: all cores"),
          cache,
          remote,
          remote_key,
          integer("cache.remote_timeout", "300", 1, 60000,
                  "milliseconds the remote cache may take to connect and to answer each call; past it the lookup "
                  "falls back to compiling (and lookups skip the server for 30 s)"),
          strategy,
          integer("tune.population", "16", 2, 1000, "tc_tune: candidates per generation (the first: twice as many)"),
          integer("tune.generations", "1000", 1, 1000,
                  "tc_tune: at most this many generations (tune.budget or tune.patience ends the search first)"),
          integer("tune.patience", "3", 0, 1000,
                  "tc_tune: end the search after this many generations in a row found no kernel more than 2% faster "
                  "(0: only tune.budget and tune.generations end it)"),
          budget,
          integer("tune.threads", "0", 0, 256, "tc_tune: threads compiling candidates; 0: all cores"),
          isolation,
          integer("tune.timeout", "60", 1, 86400,
                  "tc_tune with tune.isolation=process: seconds one candidate may take in its process (loading, "
                  "checking, timing) before it is killed and counted as failed")};
}

const std::vector<Knob>& general() {
  static const std::vector<Knob> kGeneral = general_options();
  return kGeneral;
}

}  // namespace

const std::vector<const Backend*>& all_backends() {
  static const std::vector<const Backend*> kBackends = {&cpu::backend(), &reference::backend(), &cuda::backend()};
  return kBackends;
}

const Backend& find_backend(const std::string& name) {
  std::string known;
  for (const Backend* b : all_backends()) {
    if (name == b->name()) return *b;
    known += std::string(known.empty() ? "" : ", ") + b->name();
  }
  fail(TC_ERROR_INVALID_ARGUMENT, "no backend named '" + name + "' in this build (backends: " + known + ")");
}

const std::vector<const Knob*>& all_options() {
  static const std::vector<const Knob*> kAll = [] {
    std::vector<const Knob*> all;
    for (const Knob& k : general()) all.push_back(&k);
    for (const Backend* b : all_backends())
      for (const Knob& k : b->knobs()) all.push_back(&k);
    return all;
  }();
  return kAll;
}

const Knob& find_option(const std::string& key) {
  std::string known;
  for (const Knob* k : all_options()) {
    if (k->key == key) return *k;
    known += (known.empty() ? "" : ", ") + k->key;
  }
  fail(TC_ERROR_INVALID_ARGUMENT, "unknown option '" + key + "' (known options: " + known + ")");
}

void OptionSet::set(const std::string& key, const std::string& value) {
  find_option(key).parse(value);
  values_[key] = value;
}

const std::string& OptionSet::get(const std::string& key) const {
  const Knob& k = find_option(key);
  auto it = values_.find(key);
  return it != values_.end() ? it->second : k.default_value;
}

std::string OptionSet::to_string() const {
  std::string out;
  for (const Knob* k : all_options()) out += (out.empty() ? "" : " ") + k->key + "=" + get(k->key);
  return out;
}

KnobValues OptionSet::values_for(const Backend& backend) const {
  std::vector<const Knob*> knobs;
  for (const Knob& k : general()) knobs.push_back(&k);
  for (const Knob& k : backend.knobs()) knobs.push_back(&k);
  KnobValues out(knobs);
  for (const auto& [key, value] : values_) {
    const Knob& k = find_option(key);
    bool applies = std::find(knobs.begin(), knobs.end(), &k) != knobs.end();
    if (applies) out.set(key, value);
  }
  return out;
}

}  // namespace tc::backends
