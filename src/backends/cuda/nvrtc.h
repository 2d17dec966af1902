// nvrtc.h — NVRTC, CUDA's run-time compiler, loaded with dlopen (libtc never links CUDA, so it
// builds, runs and passes its tests without it): CUDA C to a cubin for one GPU architecture.
// An explicit architecture compiles with no GPU present, so code can be made and cached for
// other machines. It does not load or launch cubins (the driver API) nor pick the
// architecture of a device.
#pragma once

#include <string>
#include <vector>

namespace tc::backends::cuda {

struct Cubin {
  std::string bytes;
  std::string ptxas_log;  // ptxas -v's report (registers, spills, shared memory per function)
};

// Where a CUDA toolkit library is looked for (NVRTC, cuBLAS): $`variable` when set (a path: then
// only it), else each of `sonames` in $CUDA_HOME/lib64, /usr/local/cuda/lib64, then the loader's
// path.
std::vector<std::string> toolkit_library_candidates(const char* variable, const std::vector<std::string>& sonames);

class Nvrtc {
 public:
  // The first of `candidates` (paths or sonames) that dlopen loads with every function used
  // here; TC_ERROR_UNSUPPORTED naming each candidate and why it failed, if none does.
  explicit Nvrtc(const std::vector<std::string>& candidates);
  ~Nvrtc();
  Nvrtc(const Nvrtc&) = delete;
  Nvrtc& operator=(const Nvrtc&) = delete;

  // The process's NVRTC, found once (thread-safe): $TC_NVRTC when set (a path: then only it),
  // else in $CUDA_HOME/lib64, /usr/local/cuda/lib64, then the loader's path (libnvrtc.so.13,
  // .so.12, .so); a failure is remembered and rethrown on every call.
  static const Nvrtc& get();
  static std::vector<std::string> default_candidates();

  std::string path() const { return path_; }
  std::string version() const;  // "13.0"

  // A cubin of `source` for `arch` ("sm_80", "sm_90"), with IEEE arithmetic (-fmad=false: the
  // text's fmaf calls are its only fused multiply-adds) and ptxas's resource report:
  // TC_ERROR_COMPILE with NVRTC's log if it does not compile. The cubin and report kept
  // (kept_code.h) for the same source, architecture, options and NVRTC when there are; else
  // compiled, and kept.
  Cubin compile_cubin(const std::string& source, const std::string& name, const std::string& arch) const;

  // The PTX of `source` for `arch`'s virtual architecture (sm_90: compute_90), with the same
  // options, never kept: what tests and tools read the instruction mix from.
  std::string compile_ptx(const std::string& source, const std::string& name, const std::string& arch) const;

 private:
  struct Api;
  Cubin compile(const std::string& source, const std::string& name, const std::string& arch, bool ptx) const;
  std::string identity_;  // the version and the library's file, for the kept cubins' key
  std::string path_;
  const Api* api_ = nullptr;  // owned; the library itself stays loaded for the process
};

}  // namespace tc::backends::cuda
