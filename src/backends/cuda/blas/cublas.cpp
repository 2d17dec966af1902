// cublas.cpp — see cublas.h. The few cuBLAS functions libtc calls, declared here with their C
// signatures and enum values (cublas_api.h and library_types.h are not needed to build).
#include "backends/cuda/blas/cublas.h"

#include <algorithm>
#include <iterator>

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
// cuBLASLt's attributes and epilogues (cublasLt.h)
constexpr int kDescTransA = 3, kDescTransB = 4, kDescEpilogue = 7, kDescBiasPointer = 8;
constexpr int kEpilogueRelu = 2, kEpilogueBias = 4;
constexpr int kLayoutBatchCount = 5, kLayoutBatchOffset = 6;
constexpr int kPrefMaxWorkspace = 1;

// cublasLtMatmulHeuristicResult_t: the algorithm, its workspace, its status, then more.
struct LtHeuristic {
  uint64_t algo[8];
  size_t workspace;
  Status state;
  float waves;
  int reserved[4];
};

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
  Status (*set_workspace)(void*, void*, size_t);
  Status (*gemm)(void*, int, int, int, int, int, const void*, const void*, int, int, long long, const void*, int, int,
                 long long, const void*, void*, int, int, long long, int, int, int);
  Status (*property)(int, int*);
  const char* (*status_string)(Status);
  // cuBLASLt
  Status (*lt_create)(void**);
  Status (*lt_desc_create)(void**, int, int);
  Status (*lt_desc_destroy)(void*);
  Status (*lt_desc_set)(void*, int, const void*, size_t);
  Status (*lt_layout_create)(void**, int, uint64_t, uint64_t, int64_t);
  Status (*lt_layout_destroy)(void*);
  Status (*lt_layout_set)(void*, int, const void*, size_t);
  Status (*lt_pref_create)(void**);
  Status (*lt_pref_destroy)(void*);
  Status (*lt_pref_set)(void*, int, const void*, size_t);
  Status (*lt_heuristic)(void*, void*, void*, void*, void*, void*, void*, int, LtHeuristic*, int*);
  Status (*lt_matmul)(void*, void*, const void*, const void*, void*, const void*, void*, const void*, const void*, void*,
                      void*, void*, const void*, void*, size_t, void*);
};

// cuBLASLt's descriptors of one call's shape and the algorithm its heuristic chose: made on the
// first call of that shape on a device and kept with the device's handle (a kernel calls with
// one shape every time, so a tc_run pays for one attribute set, the bias pointer, not for the
// descriptors and the heuristic).
struct Cublas::LtPlan {
  const Api* api = nullptr;
  void *desc = nullptr, *layouts[3] = {nullptr, nullptr, nullptr};
  uint64_t algo[8] = {};
  LtPlan() = default;
  LtPlan(const LtPlan&) = delete;
  LtPlan& operator=(const LtPlan&) = delete;
  ~LtPlan() {
    for (void* l : layouts)
      if (l) api->lt_layout_destroy(l);
    if (desc) api->lt_desc_destroy(desc);
  }
};

Cublas::Cublas(const std::vector<std::string>& candidates) {
  auto api = std::make_unique<Api>();
  std::string tried;
  std::optional<LoadedLibrary> lib = load_first(
      candidates,
      [&](void* h, std::string& missing) {
        bind_function(h, "cublasCreate_v2", api->create, missing);
        bind_function(h, "cublasSetStream_v2", api->set_stream, missing);
        bind_function(h, "cublasSetWorkspace_v2", api->set_workspace, missing);
        bind_function(h, "cublasGemmStridedBatchedEx", api->gemm, missing);
        bind_function(h, "cublasGetProperty", api->property, missing);
        bind_function(h, "cublasGetStatusString", api->status_string, missing);
      },
      tried);
  if (!lib) fail(TC_ERROR_UNSUPPORTED, "cuBLAS was not found; tried:" + tried);
  // cuBLASLt beside it (cuBLAS itself needs it): the same directory, else the loader's path.
  std::string dir = lib->path.substr(0, lib->path.rfind('/') + 1), lt_tried;
  std::optional<LoadedLibrary> lt = load_first(
      {dir + "libcublasLt.so.13", dir + "libcublasLt.so.12", dir + "libcublasLt.so", "libcublasLt.so.13",
       "libcublasLt.so.12"},
      [&](void* h, std::string& missing) {
        bind_function(h, "cublasLtCreate", api->lt_create, missing);
        bind_function(h, "cublasLtMatmulDescCreate", api->lt_desc_create, missing);
        bind_function(h, "cublasLtMatmulDescDestroy", api->lt_desc_destroy, missing);
        bind_function(h, "cublasLtMatmulDescSetAttribute", api->lt_desc_set, missing);
        bind_function(h, "cublasLtMatrixLayoutCreate", api->lt_layout_create, missing);
        bind_function(h, "cublasLtMatrixLayoutDestroy", api->lt_layout_destroy, missing);
        bind_function(h, "cublasLtMatrixLayoutSetAttribute", api->lt_layout_set, missing);
        bind_function(h, "cublasLtMatmulPreferenceCreate", api->lt_pref_create, missing);
        bind_function(h, "cublasLtMatmulPreferenceDestroy", api->lt_pref_destroy, missing);
        bind_function(h, "cublasLtMatmulPreferenceSetAttribute", api->lt_pref_set, missing);
        bind_function(h, "cublasLtMatmulAlgoGetHeuristic", api->lt_heuristic, missing);
        bind_function(h, "cublasLtMatmul", api->lt_matmul, missing);
      },
      lt_tried);
  if (!lt) fail(TC_ERROR_UNSUPPORTED, "cuBLASLt was not found beside " + lib->path + "; tried:" + lt_tried);
  path_ = lib->path;
  api_ = api.release();
}

// The handles (and their cuBLASLt plans) are not destroyed: at exit the driver may be gone
// before them.
Cublas::~Cublas() {
  for (auto& entry : handles_) static_cast<void>(entry.second.release());
  delete api_;
}

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
  check(api_->lt_create(&h->lt), "cublasLtCreate");
  return *handles_.emplace(ordinal, std::move(h)).first->second;
}

// Every field of the call but its tensors' places among the def's (made on every call: a few
// integers, no text).
Cublas::LtKey Cublas::lt_key(const BlasCall& c) {
  return {static_cast<int>(c.type), c.x_trans, c.y_trans, c.m, c.n, c.k, c.ldx, c.ldy, c.ldc, c.batch, c.stride_x,
          c.stride_y, c.stride_c, c.bias >= 0, c.relu};
}

const Cublas::LtPlan& Cublas::lt_plan(const BlasCall& call, Handle& h, const void* bias) const {
  std::unique_ptr<LtPlan>& slot = h.lt_plans[lt_key(call)];
  if (slot) return *slot;
  auto lt = std::make_unique<LtPlan>();
  lt->api = api_;
  const bool dbl = call.type == ScalarType::Float64;
  const int type = data_type(call.type);
  check(api_->lt_desc_create(&lt->desc, dbl ? kCompute64F : kCompute32F, dbl ? kR64F : kR32F), "cublasLtMatmulDescCreate");
  const int trans_x = call.x_trans ? kOpT : kOpN, trans_y = call.y_trans ? kOpT : kOpN;
  const int epilogue = (call.bias >= 0 ? kEpilogueBias : 0) | (call.relu ? kEpilogueRelu : 0);
  check(api_->lt_desc_set(lt->desc, kDescTransA, &trans_x, sizeof trans_x), "cublasLtMatmulDescSetAttribute");
  check(api_->lt_desc_set(lt->desc, kDescTransB, &trans_y, sizeof trans_y), "cublasLtMatmulDescSetAttribute");
  check(api_->lt_desc_set(lt->desc, kDescEpilogue, &epilogue, sizeof epilogue), "cublasLtMatmulDescSetAttribute");
  // The stored matrices: op(X) m x k is X k x m transposed; C (and D, the same) m x n.
  const int64_t shapes[3][3] = {{call.x_trans ? call.k : call.m, call.x_trans ? call.m : call.k, call.ldx},
                                {call.y_trans ? call.n : call.k, call.y_trans ? call.k : call.n, call.ldy},
                                {call.m, call.n, call.ldc}};
  const int64_t strides[3] = {call.stride_x, call.stride_y, call.stride_c};
  const int batch = static_cast<int>(call.batch);
  for (int i = 0; i < 3; ++i) {
    check(api_->lt_layout_create(&lt->layouts[i], type, static_cast<uint64_t>(shapes[i][0]),
                                 static_cast<uint64_t>(shapes[i][1]), shapes[i][2]),
          "cublasLtMatrixLayoutCreate");
    if (batch > 1) {
      check(api_->lt_layout_set(lt->layouts[i], kLayoutBatchCount, &batch, sizeof batch),
            "cublasLtMatrixLayoutSetAttribute");
      check(api_->lt_layout_set(lt->layouts[i], kLayoutBatchOffset, &strides[i], sizeof strides[i]),
            "cublasLtMatrixLayoutSetAttribute");
    }
  }
  // The first call's bias for the heuristic (later calls set theirs before the call).
  if (bias) check(api_->lt_desc_set(lt->desc, kDescBiasPointer, &bias, sizeof bias), "cublasLtMatmulDescSetAttribute");
  const size_t workspace = kWorkspaceBytes;  // what every call brings
  void* pref = nullptr;
  check(api_->lt_pref_create(&pref), "cublasLtMatmulPreferenceCreate");
  LtHeuristic best{};
  int found = 0;
  int status = api_->lt_pref_set(pref, kPrefMaxWorkspace, &workspace, sizeof workspace);
  if (status == 0)
    status = api_->lt_heuristic(h.lt, lt->desc, lt->layouts[0], lt->layouts[1], lt->layouts[2], lt->layouts[2], pref, 1,
                                &best, &found);
  api_->lt_pref_destroy(pref);
  check(status, "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0) fail(TC_ERROR_RUNTIME, "cuBLAS: cublasLtMatmulAlgoGetHeuristic found no algorithm for this product");
  std::copy(std::begin(best.algo), std::end(best.algo), std::begin(lt->algo));
  slot = std::move(lt);
  return *slot;
}

void Cublas::lt_matmul(const BlasCall& call, Handle& h, void* stream, const void* x, const void* y, void* c,
                       const void* bias, const void* alpha, const void* beta, void* workspace) const {
  const LtPlan& lt = lt_plan(call, h, bias);
  if (bias) check(api_->lt_desc_set(lt.desc, kDescBiasPointer, &bias, sizeof bias), "cublasLtMatmulDescSetAttribute");
  check(api_->lt_matmul(h.lt, lt.desc, alpha, x, lt.layouts[0], y, lt.layouts[1], beta, c, lt.layouts[2], c, lt.layouts[2],
                        lt.algo, workspace, kWorkspaceBytes, stream),
        "cublasLtMatmul");
}

void Cublas::gemm(const BlasCall& call, int ordinal, void* stream, const void* x, const void* y, void* c,
                  const void* bias, void* workspace) const {
  Handle& h = handle_on(ordinal);
  const bool dbl = call.type == ScalarType::Float64;
  const float one_f = 1, beta_f = call.accumulate ? 1.0f : 0.0f;
  const double one_d = 1, beta_d = call.accumulate ? 1.0 : 0.0;
  const void* alpha = dbl ? static_cast<const void*>(&one_d) : &one_f;
  const void* beta = dbl ? static_cast<const void*>(&beta_d) : &beta_f;
  const int type = data_type(call.type);
  std::lock_guard<std::mutex> lock(h.mutex);  // the stream is the handle's until the call is queued
  if (call.lt()) return lt_matmul(call, h, stream, x, y, c, bias, alpha, beta, workspace);
  check(api_->set_stream(h.handle, stream), "cublasSetStream");
  check(api_->set_workspace(h.handle, workspace, kWorkspaceBytes), "cublasSetWorkspace");
  check(api_->gemm(h.handle, call.x_trans ? kOpT : kOpN, call.y_trans ? kOpT : kOpN, static_cast<int>(call.m),
                   static_cast<int>(call.n), static_cast<int>(call.k), alpha, x, type, static_cast<int>(call.ldx),
                   call.stride_x, y, type, static_cast<int>(call.ldy), call.stride_y, beta, c, type,
                   static_cast<int>(call.ldc), call.stride_c, static_cast<int>(call.batch),
                   dbl ? kCompute64F : kCompute32F, kGemmDefault),
        "cublasGemmStridedBatchedEx");
}

}  // namespace tc::backends::cuda
