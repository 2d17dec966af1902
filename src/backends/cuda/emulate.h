// emulate.h — the emulation mode (cuda.emulate=1), the way Triton's interpreter
// lets people debug without a GPU: the CUDA C text print_cuda made, exactly as it would go to
// NVRTC, compiled for the host by the system C++ compiler ($CXX, else c++; -fno-builtin: libm
// calls stay calls) with a header that defines CUDA's built-ins (__global__, __device__,
// blockIdx, threadIdx, gridDim, blockDim, the atomics used),
// loaded with dlopen, and its launches run on host buffers: every block, and every thread of
// it, one after another; a kernel that synchronises (__syncthreads, __syncwarp, shuffles, named
// barriers) runs a block's threads as coroutines (ucontext) that take turns from barrier to
// barrier (a block's barrier passed when all its live threads are there, a warp's when its
// live lanes are, a named one when its count of threads is), its __shared__ arrays shared by
// them. Atomics are plain updates (one thread runs at a time).
// A compiled text is kept (kept_code.h: per user, keyed by the compiler, its flags, the header
// and the text) and loaded by any later compile of the same text, in this process or another.
// Slow; for tests and debugging. It does not check the text against NVRTC (nvrtc.h does).
#pragma once

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "backends/cuda/print_cuda.h"

namespace tc::backends::cuda {

// What a variant of the emulation adds to it (the profile's instrumented build:
// profile/instrumentation.h): a header after the emulation's (precompiled with it), compiler
// flags, and per launch an entry point `<kernel><suffix>` in place of the plain one.
struct EmulationVariant {
  std::string header, flags, suffix;
  std::function<std::string(const Launch&, const std::vector<std::string>& param_types)> entry_point;
};

// `<kernel>_body(void** a)`: the launch's kernel called with its arguments a[0], ... (what an
// entry point runs per thread).
std::string emulated_body(const Launch& launch, const std::vector<std::string>& param_types);

// Where compiled texts are kept for the compiler in use ("" when they cannot be: no private
// directory could be made in $TMPDIR, or the header could not be precompiled).
std::string kept_objects_dir();

class EmulatedKernels {
 public:
  // Compiles `source` (TC_ERROR_COMPILE with the compiler's message if it fails), plain or as
  // `variant` (which must outlive this).
  explicit EmulatedKernels(const CudaSource& source, const EmulationVariant* variant = nullptr);
  ~EmulatedKernels();
  EmulatedKernels(const EmulatedKernels&) = delete;
  EmulatedKernels& operator=(const EmulatedKernels&) = delete;

  // Runs every launch in order on `params` (one host pointer per parameter: the tensors, then
  // the fault record), launch k with dims[k].
  void run(const std::vector<void*>& params, const std::vector<LaunchDims>& dims) const;

  // A variant's entry point of launch k (its signature is the variant's).
  void* entry(size_t k) const { return entries_.at(k); }

 private:
  using Entry = int (*)(void**, const unsigned*, const unsigned*);
  void build(const CudaSource& source);  // loads the text's kept object, else compiles and keeps it
  // Compiles `text` to dir/kernels.so (header "": none precompiled, the header goes in dir).
  void compile(const std::string& dir, const std::string& text, std::string header) const;
  static void remove_dir(const std::string& dir);
  void unload();
  void* library_ = nullptr;
  std::vector<void*> entries_;
  std::vector<Launch> launches_;
  const EmulationVariant* variant_;
};

}  // namespace tc::backends::cuda
