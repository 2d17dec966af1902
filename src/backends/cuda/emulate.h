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
#include <string>
#include <vector>

#include "backends/cuda/print_cuda.h"

namespace tc::backends::cuda {

// Where compiled texts are kept for the compiler in use ("" when they cannot be: no private
// directory could be made in $TMPDIR, or the header could not be precompiled).
std::string kept_objects_dir();

class EmulatedKernels {
 public:
  // Compiles `source` (TC_ERROR_COMPILE with the compiler's message if it fails).
  explicit EmulatedKernels(const CudaSource& source);
  ~EmulatedKernels();
  EmulatedKernels(const EmulatedKernels&) = delete;
  EmulatedKernels& operator=(const EmulatedKernels&) = delete;

  // Runs every launch in order on `params` (one host pointer per parameter: the tensors, then
  // the fault record), launch k with dims[k].
  void run(const std::vector<void*>& params, const std::vector<LaunchDims>& dims) const;

 private:
  using Entry = int (*)(void**, const unsigned*, const unsigned*);
  void build(const CudaSource& source);  // loads the text's kept object, else compiles and keeps it
  // Compiles `text` to dir/kernels.so (header "": none precompiled, the header goes in dir).
  static void compile(const std::string& dir, const std::string& text, std::string header);
  static void remove_dir(const std::string& dir);
  void unload();
  void* library_ = nullptr;
  std::vector<Entry> entries_;
  std::vector<Launch> launches_;
};

}  // namespace tc::backends::cuda
