// kernel.h — what every backend produces: a compiled kernel with one run() over validated
// tensor views on the kernel's device. Backends know nothing of each other or of the C API.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "runtime/tensor_view.h"

namespace tc::backends {

// Where and how one run executes: the stream of the kernel's device to queue work on (a
// CUstream for cuda; NULL is the device's default stream). Host backends (cpu, reference)
// run synchronously and get NULL.
struct ExecutionContext {
  void* stream = nullptr;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Thread-safe: may be called from many threads at once; keeps scratch state per call.
  virtual void run(const std::vector<runtime::TensorView>& inputs, const std::vector<runtime::TensorView>& outputs,
                   const ExecutionContext& context) const = 0;
  // What was compiled and how (backend, options, schedule decisions), for tc_kernel_describe.
  virtual std::string describe() const = 0;
  // The compiled code as bytes that Backend::load turns back into this kernel in a later
  // process (the cache keeps them), or "" when the backend cannot reload its kernels.
  virtual std::string artefact() const { return {}; }
  // The code it runs, as text (cpu: Halide's lowered loop nest), for tc_kernel_code; "" when
  // the backend generates none (the reference interpreter). May take as long as lowering.
  virtual std::string code() const { return {}; }
  // A profile of one run on these tensors for the GPU named `gpu` (tc_kernel_profile), where
  // the backend can make one without running on a device (cuda.emulate=1).
  virtual std::string profile(const std::vector<runtime::TensorView>& inputs, const std::vector<runtime::TensorView>& outputs,
                              const std::string& gpu) const;
  // How long worker threads a run started may keep the cores busy after it returns, spinning
  // before they sleep: a kernel timed in that window runs beside them (the tuner waits it out).
  virtual std::chrono::milliseconds spins_after_run() const { return std::chrono::milliseconds{0}; }
};

}  // namespace tc::backends
