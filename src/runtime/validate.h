// validate.h — checks the DLTensors handed to tc_run against what the kernel was compiled for
// (device, dtype, rank, shape, strides, data) and turns them into TensorViews. Also rejects
// outputs whose elements overlap each other or any input.
#pragma once

#include <string>
#include <vector>

#include <dlpack/dlpack.h>

#include "ir/bind.h"
#include "runtime/tensor_view.h"

namespace tc::runtime {

struct ExpectedTensor {
  std::string what;  // "input 'A'" / "output 'C'"
  ir::TensorSig sig;
};

std::vector<TensorView> validate_tensors(const DLTensor* tensors, size_t count, const std::vector<ExpectedTensor>& expected,
                                         const char* kind /* "input" / "output" */);
// Outputs must not overlap themselves (strides), each other, or any input.
void check_no_overlap(const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                      const std::vector<ExpectedTensor>& input_names, const std::vector<ExpectedTensor>& output_names);

}  // namespace tc::runtime
