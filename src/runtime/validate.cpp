// validate.cpp — see validate.h. Messages name the tensor, the dimension, expected and got.
#include "runtime/validate.h"

#include <algorithm>
#include <numeric>

#include "support/error.h"

namespace tc::runtime {

void check_header(const DLTensor& x, const ExpectedHeader& e) {
  const std::string& what = e.what;
  auto type = from_dlpack(x.dtype);
  if (!type) fail(TC_ERROR_SHAPE, what + ": unsupported dtype " + dlpack_to_string(x.dtype) + "; expected " + name(e.type));
  if (*type != e.type) fail(TC_ERROR_SHAPE, what + ": expected dtype " + name(e.type) + ", got " + name(*type));
  if (x.ndim != e.ndim)
    fail(TC_ERROR_SHAPE, what + ": expected rank " + std::to_string(e.ndim) + ", got " + std::to_string(x.ndim));
  if (e.ndim > 0 && x.shape == nullptr) fail(TC_ERROR_INVALID_ARGUMENT, what + ": shape is NULL");
  for (int d = 0; d < e.ndim; ++d) {
    int64_t got = x.shape[d];
    if (e.shape != nullptr && got != (*e.shape)[d])
      fail(TC_ERROR_SHAPE, what + " dimension " + std::to_string(d) + ": expected size " + std::to_string((*e.shape)[d]) +
                               ", got " + std::to_string(got) + " (expected shape " + shape_text(*e.shape) + ")");
    if (got < 0)
      fail(TC_ERROR_SHAPE, what + " dimension " + std::to_string(d) + ": size " + std::to_string(got) + " is negative");
  }
}

namespace {

// DLPack's device types (dlpack.h), with their names for messages.
constexpr std::pair<DLDeviceType, const char*> kDeviceTypes[] = {
    {kDLCPU, "kDLCPU"},       {kDLCUDA, "kDLCUDA"},       {kDLCUDAHost, "kDLCUDAHost"},
    {kDLOpenCL, "kDLOpenCL"}, {kDLVulkan, "kDLVulkan"},   {kDLMetal, "kDLMetal"},
    {kDLVPI, "kDLVPI"},       {kDLROCM, "kDLROCM"},       {kDLROCMHost, "kDLROCMHost"},
    {kDLExtDev, "kDLExtDev"}, {kDLCUDAManaged, "kDLCUDAManaged"}};


// "kDLCPU (1)", the device types `devices` accepts, for a message.
std::string accepted(const DeviceRule& devices) {
  std::string out;
  for (const auto& [type, name] : kDeviceTypes)
    if (devices.accepts(type)) out += (out.empty() ? "" : ", ") + std::string(name) + " (" + std::to_string(type) + ")";
  return out.empty() ? "no device type" : out;
}

TensorView view_of(const DLTensor& x, const ExpectedTensor& e, const DeviceRule& devices) {
  const std::string& what = e.what;
  int ndim = static_cast<int>(e.sig.shape.size());
  if (!devices.accepts(x.device.device_type))
    fail(TC_ERROR_SHAPE, what + ": device type " + std::to_string(x.device.device_type) + " (" +
                             device_name(x.device.device_type) + ") is not supported by this kernel: backend '" +
                             devices.backend + "' accepts " + accepted(devices));
  check_header(x, ExpectedHeader{what, e.sig.type, ndim, &e.sig.shape});
  TensorView v;
  v.type = e.sig.type;
  v.ndim = ndim;
  v.device = x.device;
  for (int d = 0; d < ndim; ++d) v.shape[d] = x.shape[d];
  int64_t row_major = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    int64_t s = x.strides ? x.strides[d] : row_major;
    if (s < 0)
      fail(TC_ERROR_SHAPE, what + " dimension " + std::to_string(d) + ": negative stride " + std::to_string(s) +
                               " is not supported");
    // Keep every byte offset representable: |offset| < 2^62 whatever the element size.
    if (v.shape[d] > 1 && s > (int64_t{1} << 58) / (v.shape[d] - 1))
      fail(TC_ERROR_SHAPE, what + " dimension " + std::to_string(d) + ": stride " + std::to_string(s) +
                               " is too large for extent " + std::to_string(v.shape[d]));
    v.strides[d] = s;
    row_major *= v.shape[d];
  }
  if (x.data == nullptr && v.num_elements() > 0) fail(TC_ERROR_INVALID_ARGUMENT, what + ": data is NULL");
  v.data = static_cast<char*>(x.data) + x.byte_offset;
  return v;
}

// Byte range [lo, hi) a view touches; empty views touch nothing.
std::pair<uintptr_t, uintptr_t> span(const TensorView& v) {
  if (v.num_elements() == 0) return {0, 0};
  int64_t last = 0;
  for (int d = 0; d < v.ndim; ++d) last += (v.shape[d] - 1) * v.strides[d];
  auto lo = reinterpret_cast<uintptr_t>(v.data);
  return {lo, lo + static_cast<uintptr_t>((last + 1) * bytes(v.type))};
}

// True if two distinct indices of the view can address the same element. An empty view has no
// elements (its row-major strides for shape (2, 0) are (0, 1)).
bool self_overlapping(const TensorView& v) {
  if (v.num_elements() == 0) return false;
  std::vector<int> dims;
  for (int d = 0; d < v.ndim; ++d)
    if (v.shape[d] > 1) dims.push_back(d);
  std::sort(dims.begin(), dims.end(), [&](int a, int b) { return v.strides[a] < v.strides[b]; });
  int64_t reach = 1;  // elements spanned by the faster dimensions
  for (int d : dims) {
    if (v.strides[d] < reach) return true;
    reach = v.strides[d] * v.shape[d];
  }
  return false;
}

}  // namespace

const char* device_name(int t) {
  for (const auto& [type, name] : kDeviceTypes)
    if (type == t) return name;
  return "unknown";
}

DeviceRule DeviceRule::of(std::string backend, const std::function<bool(DLDeviceType)>& accepts) {
  DeviceRule r{std::move(backend), 0};
  for (const auto& [type, name] : kDeviceTypes)
    if (accepts(type)) r.mask |= uint64_t{1} << type;
  return r;
}

std::vector<TensorView> validate_tensors(const DLTensor* tensors, size_t count, const std::vector<ExpectedTensor>& expected,
                                         const char* kind, const DeviceRule& devices) {
  if (count != expected.size())
    fail(TC_ERROR_INVALID_ARGUMENT, "the kernel takes " + std::to_string(expected.size()) + " " + kind +
                                        (expected.size() == 1 ? "" : "s") + ", got " + std::to_string(count));
  if (count > 0 && tensors == nullptr)
    fail(TC_ERROR_INVALID_ARGUMENT, std::string(kind) + "s is NULL but the count is " + std::to_string(count));
  std::vector<TensorView> views;
  views.reserve(count);
  for (size_t i = 0; i < count; ++i) views.push_back(view_of(tensors[i], expected[i], devices));
  return views;
}

void check_no_overlap(const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                      const std::vector<ExpectedTensor>& input_names, const std::vector<ExpectedTensor>& output_names) {
  for (size_t o = 0; o < outputs.size(); ++o) {
    if (self_overlapping(outputs[o]))
      fail(TC_ERROR_SHAPE, output_names[o].what + ": its strides make different elements share memory");
    auto a = span(outputs[o]);
    auto overlaps = [&](const TensorView& other) {
      auto b = span(other);
      return a.first < a.second && b.first < b.second && a.first < b.second && b.first < a.second;
    };
    for (size_t p = 0; p < o; ++p)
      if (overlaps(outputs[p]))
        fail(TC_ERROR_SHAPE, output_names[o].what + " overlaps " + output_names[p].what + " in memory");
    for (size_t i = 0; i < inputs.size(); ++i)
      if (overlaps(inputs[i]))
        fail(TC_ERROR_SHAPE, output_names[o].what + " overlaps " + input_names[i].what +
                                 " in memory; inputs are read-only, so outputs must not alias them");
  }
}

}  // namespace tc::runtime
