// validate.h — the one validator of caller DLTensors. check_header checks what binding and
// running both need (dtype, rank, a shape array, sizes non-negative, and exact sizes when
// known); validate_tensors adds what running needs (a device the kernel's backend accepts,
// strides, data) and turns the tensors into TensorViews. check_no_overlap rejects outputs
// whose elements overlap each other or any input.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

#include "runtime/tensor_view.h"

namespace tc::runtime {

struct ExpectedHeader {
  const std::string& what;  // "input 'A'", "input 'A' (argument 1 of 'f')"; not copied per call
  ScalarType type;
  int ndim;
  const std::vector<int64_t>* shape;  // exact sizes; nullptr: any non-negative sizes
};

// TC_ERROR_SHAPE for a mismatch, TC_ERROR_INVALID_ARGUMENT for a NULL shape array.
void check_header(const DLTensor& x, const ExpectedHeader& e);

struct ExpectedTensor {
  std::string what;  // "input 'A'" / "output 'C'"
  TensorSig sig;
};

// Which device types a kernel reads and writes: its backend's, fixed at tc_compile as a bit
// set (DLPack's device types are small numbers), so tc_run tests one bit per tensor.
struct DeviceRule {
  std::string backend;  // for messages: "backend 'cpu' accepts kDLCPU (1)", built only on failure
  uint64_t mask = 0;    // bit t: device type t accepted
  // Asks `accepts` about every device type DLPack defines.
  static DeviceRule of(std::string backend, const std::function<bool(DLDeviceType)>& accepts);
  bool accepts(int device_type) const { return device_type >= 0 && device_type < 64 && ((mask >> device_type) & 1); }
};

// DLPack's name of a device type ("kDLCUDA"), "unknown" for a number it does not define.
const char* device_name(int device_type);

std::vector<TensorView> validate_tensors(const DLTensor* tensors, size_t count, const std::vector<ExpectedTensor>& expected,
                                         const char* kind /* "input" / "output" */, const DeviceRule& devices);
// Outputs must not overlap themselves (strides), each other, or any input.
void check_no_overlap(const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                      const std::vector<ExpectedTensor>& input_names, const std::vector<ExpectedTensor>& output_names);

}  // namespace tc::runtime
