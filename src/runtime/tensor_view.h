// tensor_view.h — tensors as the runtime sees them: a signature (dtype and shape, what a
// kernel is compiled for) and a validated, typed view of caller memory (from a DLTensor) on
// its device: base pointer (byte_offset applied), shape and strides in elements. What
// backends receive in run().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

#include "support/dtype.h"
#include "tc/tc.h"

namespace tc::runtime {

struct TensorSig {
  ScalarType type;
  std::vector<int64_t> shape;
  int64_t num_elements() const;
};

std::string shape_text(const std::vector<int64_t>& shape);  // "(2, 3)"

struct TensorView {
  char* data = nullptr;  // device memory for a device other than kDLCPU
  DLDevice device{kDLCPU, 0};
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

// The strides, in elements, of a dense row-major tensor of `shape` (the last dimension's 1).
std::vector<int64_t> dense_strides(const std::vector<int64_t>& shape);

// A host view of `data` holding a tensor of signature sig in row-major order (libtc's own
// buffers: temporaries, snapshots, the tuner's outputs).
TensorView row_major_view(char* data, const TensorSig& sig);

// Whether a view is row-major without gaps (dimensions of extent 1 may have any stride; a view
// with no elements is dense whatever its strides).
bool is_dense(const TensorView& v);
// Copies between a strided host view and dense row-major storage (to_dense: view -> dense).
void copy_dense(const TensorView& v, char* dense_data, bool to_dense);

}  // namespace tc::runtime
