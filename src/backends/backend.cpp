// backend.cpp — see backend.h: what a backend that cannot reload compiled code answers, what
// a kernel that cannot be profiled answers (kernel.h), and host memory (every backend's for
// kDLCPU).
#include "backends/backend.h"

#include <algorithm>
#include <vector>

#include "runtime/validate.h"
#include "support/error.h"

namespace tc::backends {

std::string Kernel::profile(const std::vector<runtime::TensorView>&, const std::vector<runtime::TensorView>&,
                            const std::string&) const {
  fail(TC_ERROR_UNSUPPORTED, "a profile is made for backend=cuda kernels compiled with cuda.emulate=1 (they run on the "
                             "host, where every memory access can be recorded)");
}

namespace {
class HostMemory : public DeviceMemory {
 public:
  explicit HostMemory(size_t bytes) : size_(bytes), bytes_(std::max<size_t>(bytes, 1), 0) {}
  char* data() const override { return const_cast<char*>(bytes_.data()); }
  void zero() override { std::fill(bytes_.begin(), bytes_.end(), 0); }
  void read(char* host) const override { std::copy_n(bytes_.begin(), size_, host); }
  void write(const char* host) override { std::copy_n(host, size_, bytes_.begin()); }

 private:
  size_t size_;
  std::vector<char> bytes_;  // at least one byte: an empty tensor still has an address
};
}  // namespace

std::unique_ptr<DeviceMemory> Backend::allocate(const DLDevice& device, size_t bytes) const {
  if (device.device_type != kDLCPU)
    fail(TC_ERROR_UNSUPPORTED, std::string("the ") + name() + " backend has no memory in " +
                                   runtime::device_name(device.device_type));
  return std::make_unique<HostMemory>(bytes);
}

void Backend::copy_to_host(const runtime::TensorView& tensor, char* host) const {
  if (tensor.device.device_type != kDLCPU)
    fail(TC_ERROR_UNSUPPORTED, std::string("the ") + name() + " backend cannot read memory of " +
                                   runtime::device_name(tensor.device.device_type));
  runtime::copy_dense(tensor, host, true);
}

std::unique_ptr<Kernel> Backend::load(const ir::BoundDef&, const Target&, const KnobValues&, const std::string&) const {
  fail(TC_ERROR_UNSUPPORTED, std::string("the ") + name() + " backend cannot reload compiled code");
}

void Backend::use_shared_code(const Target&, const std::string&) const {
  fail(TC_ERROR_UNSUPPORTED, std::string("the ") + name() + " backend has no shared code");
}

}  // namespace tc::backends
