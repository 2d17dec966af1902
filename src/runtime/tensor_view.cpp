// tensor_view.cpp — see tensor_view.h.
#include "runtime/tensor_view.h"

namespace tc::runtime {

int64_t TensorSig::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + ")";
}

TensorView row_major_view(char* data, const TensorSig& sig) {
  TensorView v;
  v.data = data;
  v.type = sig.type;
  v.ndim = static_cast<int>(sig.shape.size());
  int64_t stride = 1;
  for (int d = v.ndim - 1; d >= 0; --d) {
    v.shape[d] = sig.shape[d];
    v.strides[d] = stride;
    stride *= sig.shape[d];
  }
  return v;
}

}  // namespace tc::runtime
