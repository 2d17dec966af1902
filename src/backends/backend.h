// backend.h — the interface every backend implements, and nothing else: a name, the device
// types whose memory its kernels read and write, its declared knobs (knob.h), compile(),
// which turns a bound def into a Kernel for a target with parsed knob values, the means to
// reload a compiled kernel's code (load, shared code) that the compilation cache uses, and
// memory on its devices with a wait for queued work (what the tuner needs to run and time
// kernels on the caller's device). The C facade finds backends by name in the registry
// (registry.h) and knows no backend's type.
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

// Memory on one device, freed when destroyed. A backend's allocate() makes it.
class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  virtual char* data() const = 0;           // the device address (kDLCPU: a host address)
  virtual void zero() = 0;                  // every byte 0, ordered before work queued later
  virtual void read(char* host) const = 0;  // every byte to `host`, after the work queued before
  virtual void write(const char* host) = 0; // every byte from `host`, ordered before work queued later
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

  // Memory for tensors the caller does not hand in (the tuner's outputs, on its inputs'
  // device), and the wait that makes a run's time its kernels' time. Every backend gives
  // host memory for kDLCPU; one whose kernels use another device's memory overrides
  // allocate() for it (cuda: cuMemAllocFromPoolAsync), others are TC_ERROR_UNSUPPORTED.
  virtual std::unique_ptr<DeviceMemory> allocate(const DLDevice& device, size_t bytes) const;
  // Returns when the work run() queued on `device` with a NULL stream is done. Host backends'
  // runs return when done: they keep this default, which returns at once.
  virtual void wait(const DLDevice& device) const { (void)device; }
  // A tensor of a caller's, in memory of a device this backend accepts, as dense row-major
  // bytes on the host (`host` holds its elements). kDLCPU: any strides; others: what the
  // backend's kernels accept (cuda: dense). The tuner's copy of its inputs for a runner.
  virtual void copy_to_host(const runtime::TensorView& tensor, char* host) const;
};

}  // namespace tc::backends
