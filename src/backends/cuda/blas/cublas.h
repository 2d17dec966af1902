// cublas.h — cuBLAS and cuBLASLt, loaded with dlopen (libtc never links them): found once per
// process, and one call, cublasGemmStridedBatchedEx (cublasLtMatmul with an epilogue), made for
// a BlasCall (blas_plan.h) on a caller's stream in a device's primary context. One handle per device, made on the device's first call and kept
// for the process; a mutex per handle around setting its stream and queueing the call, so any
// number of threads may call. It does not decide what to call (blas_plan.h) nor fall back when
// cuBLAS is missing (cuda_backend.cpp).
#pragma once

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/cuda/blas/blas_plan.h"

namespace tc::backends::cuda {

class Cublas {
 public:
  // The first of `candidates` that dlopen loads with every function used here;
  // TC_ERROR_UNSUPPORTED naming each candidate and why it failed, if none does.
  explicit Cublas(const std::vector<std::string>& candidates);
  ~Cublas();
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  // The process's cuBLAS, found once (thread-safe): $TC_CUBLAS when set (a path: then only it),
  // else in $CUDA_HOME/lib64, /usr/local/cuda/lib64, then the loader's path (libcublas.so.13,
  // .so.12, .so); a failure is remembered and rethrown on every call.
  static const Cublas& get();
  static std::vector<std::string> default_candidates();

  std::string path() const { return path_; }
  std::string version() const;  // "13.0.0" (cublasGetProperty)

  // The device memory every call brings for cuBLAS's own use, as PyTorch gives it on Hopper: the
  // faster algorithms (split sums, the tensor-memory-accelerator kernels) need one.
  static constexpr size_t kWorkspaceBytes = size_t{32} << 20;

  // Queues `call` on `stream` of device `ordinal` (whose primary context the caller has made
  // current): x, y, c (and the bias) the device addresses of its tensors, `workspace`
  // kWorkspaceBytes of device memory (256-byte aligned) that nothing else uses until the call's
  // work on `stream` is done; a call with an epilogue through cuBLASLt (its descriptors and the
  // first algorithm its heuristic gives within that workspace made on the first call of the
  // shape on the device, then kept with the device's handle). TC_ERROR_RUNTIME with cuBLAS's
  // text where the handle cannot be made or the call is refused.
  void gemm(const BlasCall& call, int ordinal, void* stream, const void* x, const void* y, void* c,
            const void* bias, void* workspace) const;

 private:
  struct Api;
  struct LtPlan;
  using LtKey = std::array<int64_t, 15>;
  static LtKey lt_key(const BlasCall& call);  // what an LtPlan depends on: the call's shape
  struct Handle {
    void* handle = nullptr;  // cuBLAS's
    void* lt = nullptr;      // cuBLASLt's
    std::map<LtKey, std::unique_ptr<LtPlan>> lt_plans;  // by the call's shape
    std::mutex mutex;                                         // the stream, the plans
  };
  const LtPlan& lt_plan(const BlasCall& call, Handle& h, const void* bias) const;  // under h.mutex
  void lt_matmul(const BlasCall& call, Handle& h, void* stream, const void* x, const void* y, void* c, const void* bias,
                 const void* alpha, const void* beta, void* workspace) const;
  Handle& handle_on(int ordinal) const;  // made on first need (the context current)
  void check(int status, const char* call) const;
  std::string path_;
  const Api* api_ = nullptr;  // owned; the library stays loaded for the process
  mutable std::mutex handles_mutex_;
  mutable std::map<int, std::unique_ptr<Handle>> handles_;
};

}  // namespace tc::backends::cuda
