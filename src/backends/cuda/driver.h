// driver.h — the CUDA driver API, loaded with dlopen (libcuda.so.1; libtc never links it):
// found and initialised once per process, with what the cuda backend needs of it first — the
// driver's version, the devices and their compute capability (for `cuda.arch=auto` and the
// cubin cache's key, never a card's name) — and what launching a kernel takes: modules,
// functions, launches, stream-ordered memory, in each device's primary context. A machine
// without a driver or without a GPU gets TC_ERROR_UNSUPPORTED naming what was not found and
// why. It does not compile (nvrtc.h).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace tc::backends::cuda {

class Driver {
 public:
  // The first of `candidates` that dlopen loads with every function used here, initialised
  // (cuInit). TC_ERROR_UNSUPPORTED naming each candidate and why it failed, or cuInit's error
  // (no device, a stub library, an old driver) with the driver's own text.
  explicit Driver(const std::vector<std::string>& candidates);
  ~Driver();
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  // The process's driver, found once (thread-safe) from default_candidates(); a failure is
  // remembered and rethrown on every call.
  static const Driver& get();
  // $TC_CUDA_DRIVER when set (a path: then only it), else "libcuda.so.1" from the loader's path.
  static std::vector<std::string> default_candidates();

  std::string path() const { return path_; }
  int version() const;       // cuDriverGetVersion: 13000 for CUDA 13.0
  int device_count() const;  // 0 when the driver sees no GPU
  // (major, minor) of device `ordinal`: (9, 0) for an H100. TC_ERROR_INVALID_ARGUMENT for an
  // ordinal the driver does not have.
  std::pair<int, int> compute_capability(int ordinal) const;
  // "sm_90" for (9, 0): the NVRTC architecture of that device.
  std::string arch(int ordinal) const;

  // Launching (the cuda backend's kernels). Every call below runs in device `ordinal`'s primary
  // context, retained once per process and kept (pushed for the call, popped after); all
  // failures are TC_ERROR_RUNTIME with the driver's text.
  // A module loaded from a cubin, and a function of it (cuModuleLoadData, cuModuleGetFunction).
  void* load_module(int ordinal, const std::string& cubin) const;
  void unload_module(int ordinal, void* module) const;
  void* function(int ordinal, void* module, const std::string& name) const;
  // cuLaunchKernel on `stream` (NULL: the default stream), no dynamic shared memory.
  void launch(int ordinal, void* function, const unsigned grid[3], const unsigned block[3], void* stream,
              void** args) const;
  // Stream-ordered device memory (cuMemAllocFromPoolAsync, cuMemsetD8Async, cuMemFreeAsync),
  // from a pool per device that keeps up to kPoolKeeps bytes of freed memory for later calls.
  static constexpr unsigned long long kPoolKeeps = 256ull << 20;
  unsigned long long allocate(int ordinal, size_t bytes, void* stream) const;
  void zero(int ordinal, unsigned long long pointer, size_t bytes, void* stream) const;
  void release(int ordinal, unsigned long long pointer, void* stream) const;
  // Device to host, then waits for the stream (cuMemcpyDtoHAsync, cuStreamSynchronize).
  void copy_to_host(int ordinal, void* host, unsigned long long pointer, size_t bytes, void* stream) const;
  // Host to device on `stream` (cuMemcpyHtoDAsync); `host` must stay valid until the stream
  // passes it (the callers wait).
  void copy_from_host(int ordinal, unsigned long long pointer, const void* host, size_t bytes, void* stream) const;
  // Waits for the work queued on `stream` (cuStreamSynchronize).
  void synchronize(int ordinal, void* stream) const;
  // f() with device `ordinal`'s primary context current on the calling thread, as CUDA's
  // libraries (cuBLAS) expect it; popped after, an exception included.
  void with_context(int ordinal, const std::function<void()>& f) const;

 private:
  struct Api;
  void check(int result, const char* call) const;  // TC_ERROR_RUNTIME with the driver's text
  void* context(int ordinal) const;                 // the retained primary context
  void* pool(int ordinal) const;                    // libtc's memory pool on the device, made once
  template <typename F>
  void in_context(int ordinal, F&& f) const;        // f() with the device's context current
  std::string path_;
  const Api* api_ = nullptr;  // owned; the library itself stays loaded for the process
};

}  // namespace tc::backends::cuda
