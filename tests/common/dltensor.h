// dltensor.h — a DLTensor on the host for the C API tests: data, shape and strides the
// caller's (nothing copied or owned), byte_offset 0.
#pragma once

#include <cstdint>

#include <dlpack/dlpack.h>

namespace tc_test {

inline DLTensor host_tensor(void* data, int32_t ndim, int64_t* shape, DLDataType type, int64_t* strides = nullptr) {
  DLTensor t{};
  t.data = data;
  t.device = {kDLCPU, 0};
  t.ndim = ndim;
  t.dtype = type;
  t.shape = shape;
  t.strides = strides;
  return t;
}

}  // namespace tc_test
