// cublas.cpp — see cublas.h. The few cuBLAS functions libtc calls, declared here with their C
// signatures and enum values (cublas_api.h and library_types.h are not needed to build).
#include "backends/cuda/blas/cublas.h"

#include "backends/cuda/nvrtc.h"
#include "support/dynamic_library.h"
#include "support/error.h"

namespace tc::backends::cuda {
namespace {

using Status = int;  // cublasStatus_t; 0 is CUBLAS_STATUS_SUCCESS
constexpr int kOpN = 0, kOpT = 1;                                                  // cublasOperation_t
constexpr int kR16F = 2, kR16BF = 14, kR32F = 0, kR64F = 1;                        // cudaDataType
constexpr int kCompute32F = 68, kCompute64F = 70;                                  // cublasComputeType_t
constexpr int kGemmDefault = -1;                                                   // cublasGemmAlgo_t
constexpr int kMajorVersion = 0, kMinorVersion = 1, kPatchLevel = 2;               // libraryPropertyType

int data_type(ScalarType t) {
  switch (t) {
    case ScalarType::Float16: return kR16F;
    case ScalarType::BFloat16: return kR16BF;
    case ScalarType::Float64: return kR64F;
    default: return kR32F;
  }
}

}  // namespace

struct Cublas::Api {
  Status (*create)(void**);
  Status (*set_stream)(void*, void*);
  Status (*gemm)(void*, int, int, int, int, int, const void*, const void*, int, int, long long, const void*, int, int,
                 long long, const void*, void*, int, int, long long, int, int, int);
  Status (*property)(int, int*);
  const char* (*status_string)(Status);
};

Cublas::Cublas(const std::vector<std::string>& candidates) {
  auto api = std::make_unique<Api>();
  std::string tried;
  std::optional<LoadedLibrary> lib = load_first(
      candidates,
      [&](void* h, std::string& missing) {
        bind_function(h, "cublasCreate_v2", api->create, missing);
        bind_function(h, "cublasSetStream_v2", api->set_stream, missing);
        bind_function(h, "cublasGemmStridedBatchedEx", api->gemm, missing);
        bind_function(h, "cublasGetProperty", api->property, missing);
        bind_function(h, "cublasGetStatusString", api->status_string, missing);
      },
      tried);
  if (!lib) fail(TC_ERROR_UNSUPPORTED, "cuBLAS was not found; tried:" + tried);
  path_ = lib->path;
  api_ = api.release();
}

// The handles are not destroyed: at exit the driver may be gone before them.
Cublas::~Cublas() { delete api_; }

std::vector<std::string> Cublas::default_candidates() {
  return toolkit_library_candidates("TC_CUBLAS", {"libcublas.so.13", "libcublas.so.12", "libcublas.so"});
}

const Cublas& Cublas::get() { return load_once<Cublas>(); }

std::string Cublas::version() const {
  int major = 0, minor = 0, patch = 0;
  api_->property(kMajorVersion, &major);
  api_->property(kMinorVersion, &minor);
  api_->property(kPatchLevel, &patch);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

void Cublas::check(int status, const char* call) const {
  if (status != 0)
    fail(TC_ERROR_RUNTIME, std::string("cuBLAS: ") + call + " failed: " + api_->status_string(status) + " (status " +
                               std::to_string(status) + ")");
}

Cublas::Handle& Cublas::handle_on(int ordinal) const {
  std::lock_guard<std::mutex> lock(handles_mutex_);
  auto it = handles_.find(ordinal);
  if (it != handles_.end()) return *it->second;
  auto h = std::make_unique<Handle>();
  check(api_->create(&h->handle), "cublasCreate");
  return *handles_.emplace(ordinal, std::move(h)).first->second;
}

void Cublas::gemm(const BlasCall& call, int ordinal, void* stream, const void* x, const void* y, void* c) const {
  Handle& h = handle_on(ordinal);
  const bool dbl = call.type == ScalarType::Float64;
  const float one_f = 1, beta_f = call.accumulate ? 1.0f : 0.0f;
  const double one_d = 1, beta_d = call.accumulate ? 1.0 : 0.0;
  const void* alpha = dbl ? static_cast<const void*>(&one_d) : &one_f;
  const void* beta = dbl ? static_cast<const void*>(&beta_d) : &beta_f;
  const int type = data_type(call.type);
  std::lock_guard<std::mutex> lock(h.mutex);  // the stream is the handle's until the call is queued
  check(api_->set_stream(h.handle, stream), "cublasSetStream");
  check(api_->gemm(h.handle, call.x_trans ? kOpT : kOpN, call.y_trans ? kOpT : kOpN, static_cast<int>(call.m),
                   static_cast<int>(call.n), static_cast<int>(call.k), alpha, x, type, static_cast<int>(call.ldx),
                   call.stride_x, y, type, static_cast<int>(call.ldy), call.stride_y, beta, c, type,
                   static_cast<int>(call.ldc), call.stride_c, static_cast<int>(call.batch),
                   dbl ? kCompute64F : kCompute32F, kGemmDefault),
        "cublasGemmStridedBatchedEx");
}

}  // namespace tc::backends::cuda
