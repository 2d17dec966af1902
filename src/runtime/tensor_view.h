// tensor_view.h — a validated, typed view of caller memory (from a DLTensor): base pointer
// (byte_offset applied), shape and strides in elements. What backends receive in run().
#pragma once

#include <cstdint>
#include <vector>

#include "support/dtype.h"
#include "tc/tc.h"

namespace tc::runtime {

struct TensorView {
  char* data = nullptr;
  ScalarType type = ScalarType::Float32;
  int ndim = 0;
  int64_t shape[TC_MAX_NDIM] = {};
  int64_t strides[TC_MAX_NDIM] = {};  // in elements

  int64_t num_elements() const {
    int64_t n = 1;
    for (int d = 0; d < ndim; ++d) n *= shape[d];
    return n;
  }
};

}  // namespace tc::runtime
