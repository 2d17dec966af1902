// driver.h — the CUDA driver API, loaded with dlopen (libcuda.so.1; libtc never links it):
// found and initialised once per process, with what the cuda backend needs of it first — the
// driver's version, the devices and their compute capability (for `cuda.arch=auto` and the
// cubin cache's key, never a card's name). A machine without a driver or without a GPU gets
// TC_ERROR_UNSUPPORTED naming what was not found and why. It does not compile (nvrtc.h) and
// does not yet load modules or launch kernels (issue 13: the next step on a GPU machine).
#pragma once

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
  // $TC_CUDA_DRIVER when set (a path), then "libcuda.so.1" from the loader's path.
  static std::vector<std::string> default_candidates();

  std::string path() const { return path_; }
  int version() const;       // cuDriverGetVersion: 13000 for CUDA 13.0
  int device_count() const;  // 0 when the driver sees no GPU
  // (major, minor) of device `ordinal`: (9, 0) for an H100. TC_ERROR_INVALID_ARGUMENT for an
  // ordinal the driver does not have.
  std::pair<int, int> compute_capability(int ordinal) const;
  // "sm_90" for (9, 0): the NVRTC architecture of that device.
  std::string arch(int ordinal) const;

 private:
  struct Api;
  void check(int result, const char* call) const;  // TC_ERROR_RUNTIME with the driver's text
  std::string path_;
  const Api* api_ = nullptr;  // owned; the library itself stays loaded for the process
};

}  // namespace tc::backends::cuda
