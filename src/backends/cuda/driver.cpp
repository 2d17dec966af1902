// driver.cpp — see driver.h. The driver functions libtc calls, declared here with their C
// signatures (cuda.h is not needed to build); the `_v2` names are the ones cuda.h maps the
// plain names to. Bound all at once, so a library missing one is refused up front.
#include "backends/cuda/driver.h"

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

#include "support/dynamic_library.h"
#include "support/error.h"

namespace tc::backends::cuda {

using Result = int;  // CUresult; 0 is CUDA_SUCCESS
using Device = int;  // CUdevice
using Context = void*;
using Module = void*;
using Function = void*;
using Stream = void*;
using DevicePointer = unsigned long long;  // CUdeviceptr

using MemoryPool = void*;  // CUmemoryPool

constexpr int kComputeCapabilityMajor = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kComputeCapabilityMinor = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
constexpr int kPoolReleaseThreshold = 4;      // CU_MEMPOOL_ATTR_RELEASE_THRESHOLD

// CUmemPoolProps with the fields libtc sets; the rest (handle types, sizes, usage, reserved
// bytes) zero, with room to spare: the driver reads its own struct's size.
struct PoolProps {
  int alloc_type = 1;     // CU_MEM_ALLOCATION_TYPE_PINNED
  int handle_types = 0;   // CU_MEM_HANDLE_TYPE_NONE
  int location_type = 1;  // CU_MEM_LOCATION_TYPE_DEVICE
  int location_id = 0;    // the device ordinal
  unsigned char rest[256] = {};
};

struct Driver::Api {
  Result (*init)(unsigned);
  Result (*driver_version)(int*);
  Result (*device_count)(int*);
  Result (*device_get)(Device*, int);
  Result (*device_attribute)(int*, int, Device);
  Result (*error_string)(Result, const char**);
  // For loading and launching (the next step): bound now so that a driver lacking one is
  // refused when it is found, not at the first launch.
  Result (*primary_ctx_retain)(Context*, Device);
  Result (*primary_ctx_release)(Device);
  Result (*ctx_push)(Context);
  Result (*ctx_pop)(Context*);
  Result (*module_load_data)(Module*, const void*);
  Result (*module_unload)(Module);
  Result (*module_function)(Function*, Module, const char*);
  Result (*launch)(Function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, Stream, void**,
                   void**);
  Result (*stream_synchronize)(Stream);
  Result (*mem_pool_create)(MemoryPool*, const PoolProps*);
  Result (*mem_pool_set_attribute)(MemoryPool, int, void*);
  Result (*mem_alloc_from_pool_async)(DevicePointer*, size_t, MemoryPool, Stream);
  Result (*mem_free_async)(DevicePointer, Stream);
  Result (*memset_d8_async)(DevicePointer, unsigned char, size_t, Stream);
  Result (*memcpy_dtoh_async)(void*, DevicePointer, size_t, Stream);
  Result (*memcpy_htod_async)(DevicePointer, const void*, size_t, Stream);
};

namespace {

// The driver's text for `r`, or for the errors that come before it can give one (cuInit on a
// stub or an old driver) a text of our own.
std::string error_text(Result (*error_string)(Result, const char**), Result r) {
  const char* text = nullptr;
  if (error_string(r, &text) == 0 && text != nullptr) return text;
  switch (r) {
    case 34: return "CUDA_ERROR_STUB_LIBRARY: this is the toolkit's stub library, not a driver";
    case 35: return "CUDA_ERROR_INSUFFICIENT_DRIVER: the driver is older than the runtime needs";
    case 100: return "CUDA_ERROR_NO_DEVICE: no CUDA-capable device";
    default: return "unknown error";
  }
}

}  // namespace

Driver::Driver(const std::vector<std::string>& candidates) {
  auto api = std::make_unique<Api>();
  std::string tried;
  std::optional<LoadedLibrary> lib = load_first(
      candidates,
      [&](void* h, std::string& missing) {
        bind_function(h, "cuInit", api->init, missing);
        bind_function(h, "cuDriverGetVersion", api->driver_version, missing);
        bind_function(h, "cuDeviceGetCount", api->device_count, missing);
        bind_function(h, "cuDeviceGet", api->device_get, missing);
        bind_function(h, "cuDeviceGetAttribute", api->device_attribute, missing);
        bind_function(h, "cuGetErrorString", api->error_string, missing);
        bind_function(h, "cuDevicePrimaryCtxRetain", api->primary_ctx_retain, missing);
        bind_function(h, "cuDevicePrimaryCtxRelease_v2", api->primary_ctx_release, missing);
        bind_function(h, "cuCtxPushCurrent_v2", api->ctx_push, missing);
        bind_function(h, "cuCtxPopCurrent_v2", api->ctx_pop, missing);
        bind_function(h, "cuModuleLoadData", api->module_load_data, missing);
        bind_function(h, "cuModuleUnload", api->module_unload, missing);
        bind_function(h, "cuModuleGetFunction", api->module_function, missing);
        bind_function(h, "cuLaunchKernel", api->launch, missing);
        bind_function(h, "cuStreamSynchronize", api->stream_synchronize, missing);
        bind_function(h, "cuMemPoolCreate", api->mem_pool_create, missing);
        bind_function(h, "cuMemPoolSetAttribute", api->mem_pool_set_attribute, missing);
        bind_function(h, "cuMemAllocFromPoolAsync", api->mem_alloc_from_pool_async, missing);
        bind_function(h, "cuMemFreeAsync", api->mem_free_async, missing);
        bind_function(h, "cuMemsetD8Async", api->memset_d8_async, missing);
        bind_function(h, "cuMemcpyDtoHAsync_v2", api->memcpy_dtoh_async, missing);
        bind_function(h, "cuMemcpyHtoDAsync_v2", api->memcpy_htod_async, missing);
      },
      tried);
  if (!lib)
    fail(TC_ERROR_UNSUPPORTED, "the CUDA driver (libcuda.so.1) was not found; tried:" + tried +
                                   "\n(backend=cuda needs an NVIDIA GPU with its driver installed)");
  Result r = api->init(0);
  if (r != 0) {
    fail(TC_ERROR_UNSUPPORTED, "the CUDA driver at '" + lib->path + "' did not initialise (cuInit: error " +
                                   std::to_string(r) + ", " + error_text(api->error_string, r) +
                                   ")\n(backend=cuda needs an NVIDIA GPU with its driver installed)");
  }
  path_ = lib->path;
  api_ = api.release();
}

Driver::~Driver() { delete api_; }

std::vector<std::string> Driver::default_candidates() {
  if (const char* path = std::getenv("TC_CUDA_DRIVER"); path && *path) return {path};
  return {"libcuda.so.1"};
}

const Driver& Driver::get() { return load_once<Driver>(); }

void Driver::check(int result, const char* call) const {
  if (result == 0) return;
  fail(TC_ERROR_RUNTIME, std::string("CUDA driver: ") + call + " failed: error " + std::to_string(result) + ", " +
                             error_text(api_->error_string, result));
}

int Driver::version() const {
  int v = 0;
  check(api_->driver_version(&v), "cuDriverGetVersion");
  return v;
}

int Driver::device_count() const {
  int n = 0;
  check(api_->device_count(&n), "cuDeviceGetCount");
  return n;
}

std::pair<int, int> Driver::compute_capability(int ordinal) const {
  int n = device_count();
  if (ordinal < 0 || ordinal >= n)
    fail(TC_ERROR_INVALID_ARGUMENT, "CUDA device " + std::to_string(ordinal) + " does not exist (the driver sees " +
                                        std::to_string(n) + ")");
  Device d = 0;
  check(api_->device_get(&d, ordinal), "cuDeviceGet");
  int major = 0, minor = 0;
  check(api_->device_attribute(&major, kComputeCapabilityMajor, d), "cuDeviceGetAttribute");
  check(api_->device_attribute(&minor, kComputeCapabilityMinor, d), "cuDeviceGetAttribute");
  return {major, minor};
}

std::string Driver::arch(int ordinal) const {
  auto [major, minor] = compute_capability(ordinal);
  return "sm_" + std::to_string(major) + std::to_string(minor);
}

void* Driver::context(int ordinal) const {
  static std::mutex mutex;
  static std::map<int, Context> contexts;  // retained for the process, as the library is kept
  std::lock_guard<std::mutex> lock(mutex);
  auto it = contexts.find(ordinal);
  if (it != contexts.end()) return it->second;
  compute_capability(ordinal);  // TC_ERROR_INVALID_ARGUMENT for a device the driver does not have
  Device d = 0;
  check(api_->device_get(&d, ordinal), "cuDeviceGet");
  Context c = nullptr;
  check(api_->primary_ctx_retain(&c, d), "cuDevicePrimaryCtxRetain");
  contexts[ordinal] = c;
  return c;
}

template <typename F>
void Driver::in_context(int ordinal, F&& f) const {
  check(api_->ctx_push(context(ordinal)), "cuCtxPushCurrent");
  try {
    f();
  } catch (...) {
    Context popped = nullptr;
    api_->ctx_pop(&popped);
    throw;
  }
  Context popped = nullptr;
  check(api_->ctx_pop(&popped), "cuCtxPopCurrent");
}

void Driver::with_context(int ordinal, const std::function<void()>& f) const { in_context(ordinal, f); }

void* Driver::load_module(int ordinal, const std::string& cubin) const {
  Module m = nullptr;
  in_context(ordinal, [&] { check(api_->module_load_data(&m, cubin.data()), "cuModuleLoadData"); });
  return m;
}

void Driver::unload_module(int ordinal, void* module) const {
  in_context(ordinal, [&] { check(api_->module_unload(module), "cuModuleUnload"); });
}

void* Driver::function(int ordinal, void* module, const std::string& name) const {
  Function f = nullptr;
  in_context(ordinal, [&] { check(api_->module_function(&f, module, name.c_str()), "cuModuleGetFunction"); });
  return f;
}

void Driver::launch(int ordinal, void* function, const unsigned grid[3], const unsigned block[3], void* stream,
                    void** args) const {
  in_context(ordinal, [&] {
    check(api_->launch(function, grid[0], grid[1], grid[2], block[0], block[1], block[2], 0, stream, args, nullptr),
          "cuLaunchKernel");
  });
}

// The device's pool is libtc's own, not the device's default one (whose settings belong to
// the process): freed memory up to kPoolKeeps stays mapped through synchronisations, so a
// call's temporaries cost no mapping when the next call asks for them again.
void* Driver::pool(int ordinal) const {
  static std::mutex mutex;
  static std::map<int, MemoryPool> pools;  // kept for the process, as the contexts are
  void* c = context(ordinal);
  std::lock_guard<std::mutex> lock(mutex);
  auto it = pools.find(ordinal);
  if (it != pools.end()) return it->second;
  PoolProps props;
  props.location_id = ordinal;
  MemoryPool p = nullptr;
  check(api_->ctx_push(c), "cuCtxPushCurrent");
  Result created = api_->mem_pool_create(&p, &props);
  unsigned long long keep = kPoolKeeps;
  Result set = created == 0 ? api_->mem_pool_set_attribute(p, kPoolReleaseThreshold, &keep) : 0;
  Context popped = nullptr;
  api_->ctx_pop(&popped);
  check(created, "cuMemPoolCreate");
  check(set, "cuMemPoolSetAttribute");
  pools[ordinal] = p;
  return p;
}

unsigned long long Driver::allocate(int ordinal, size_t bytes, void* stream) const {
  DevicePointer p = 0;
  void* from = pool(ordinal);
  in_context(ordinal, [&] { check(api_->mem_alloc_from_pool_async(&p, bytes, from, stream), "cuMemAllocFromPoolAsync"); });
  return p;
}

void Driver::zero(int ordinal, unsigned long long pointer, size_t bytes, void* stream) const {
  in_context(ordinal, [&] { check(api_->memset_d8_async(pointer, 0, bytes, stream), "cuMemsetD8Async"); });
}

void Driver::release(int ordinal, unsigned long long pointer, void* stream) const {
  in_context(ordinal, [&] { check(api_->mem_free_async(pointer, stream), "cuMemFreeAsync"); });
}

void Driver::copy_to_host(int ordinal, void* host, unsigned long long pointer, size_t bytes, void* stream) const {
  in_context(ordinal, [&] {
    check(api_->memcpy_dtoh_async(host, pointer, bytes, stream), "cuMemcpyDtoHAsync");
    check(api_->stream_synchronize(stream), "cuStreamSynchronize");
  });
}

void Driver::copy_from_host(int ordinal, unsigned long long pointer, const void* host, size_t bytes, void* stream) const {
  in_context(ordinal, [&] { check(api_->memcpy_htod_async(pointer, host, bytes, stream), "cuMemcpyHtoDAsync"); });
}

void Driver::synchronize(int ordinal, void* stream) const {
  in_context(ordinal, [&] { check(api_->stream_synchronize(stream), "cuStreamSynchronize"); });
}

}  // namespace tc::backends::cuda
