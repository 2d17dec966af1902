// backend.h — the interface every backend implements, and nothing else: a name, the device
// types whose memory its kernels read and write, its declared knobs (knob.h), compile(),
// which turns a bound def into a Kernel for a target with parsed knob values, and the means to
// reload a compiled kernel's code (load, shared code) that the compilation cache uses. The C facade
// finds backends by name in the registry (registry.h) and knows no backend's type.
#pragma once

#include <memory>
#include <vector>

#include <dlpack/dlpack.h>

#include "backends/kernel.h"
#include "backends/knob.h"
#include "ir/bind.h"

namespace tc::backends {

// What a kernel is compiled for: the device that will run it.
struct Target {
  DLDevice device{kDLCPU, 0};
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  virtual const char* summary() const = 0;  // one line, for the help of option 'backend'
  // Whether tensors in memory of this device type can be passed to its kernels.
  virtual bool accepts(DLDeviceType device_type) const = 0;
  // Whether its kernels run on the host and return when done (then tc_run_async's stream
  // must be NULL); otherwise run() only queues work on the context's stream.
  virtual bool runs_on_host() const = 0;
  // The device a kernel is compiled for when the caller names none.
  virtual Target default_target() const = 0;
  // What a compiled kernel depends on besides the def and the knobs, for the cache's key: the
  // target as precisely as the generated code depends on it (cpu: Halide's target string with
  // the CPU's features, and the Halide version), never a device's marketing name.
  virtual std::string target_key(const Target& target) const = 0;
  // This backend's own knobs ("cpu.*"); the general options (registry.h) come on top.
  virtual const std::vector<Knob>& knobs() const = 0;
  // `options` holds the general options and this backend's knobs, parsed.
  virtual std::unique_ptr<Kernel> compile(const ir::BoundDef& bound, const Target& target,
                                          const KnobValues& options) const = 0;

  // Reloading compiled code (the compilation cache's warm start). A backend that cannot reload
  // keeps these defaults: kernels have no artefact and nothing is shared.
  //
  // A kernel from what Kernel::artefact() gave for the same bound def, target and options, in
  // this process or an earlier one, without compiling. Throws when the artefact cannot be used
  // here (another machine's code, another build's format): the caller compiles instead.
  virtual std::unique_ptr<Kernel> load(const ir::BoundDef& bound, const Target& target, const KnobValues& options,
                                       const std::string& artefact) const;
  // Code every kernel of this backend links against, made once per process (cpu: Halide's
  // runtime object, about 0.9 s to build and 3 ms to link). A cache keeps it under this key so
  // that a fresh process links the kept copy instead of building it; "" when there is none.
  virtual std::string shared_code_key(const Target&) const { return {}; }
  virtual bool has_shared_code(const Target&) const { return true; }
  // Puts `code` (what shared_code gave, from a cache) in place when none is yet; throws when it
  // cannot be used here (then the backend makes its own when it first needs it).
  virtual void use_shared_code(const Target&, const std::string& code) const;
  // The shared code in place, made first if there is none yet ("" when there is none).
  virtual std::string shared_code(const Target&) const { return {}; }
};

}  // namespace tc::backends
