// registry.cpp — see registry.h. The general options are declared here: every backend reads
// them.
#include "backends/registry.h"

#include <algorithm>

#include "backends/cpu/cpu_backend.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/reference/reference_backend.h"
#include "support/error.h"

namespace tc::backends {
namespace {

std::vector<Knob> declare_general() {
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
  return {backend, checked,
          integer_option("threads", "0", 0, 1024,
                         "threads a host kernel's parallel loops use, the caller included; 0: all cores")};
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

const std::vector<Knob>& general_options() {
  static const std::vector<Knob> kGeneral = declare_general();
  return kGeneral;
}

}  // namespace tc::backends
