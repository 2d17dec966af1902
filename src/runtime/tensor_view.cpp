// tensor_view.cpp — see tensor_view.h.
#include "runtime/tensor_view.h"

#include <cstring>
#include <vector>

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

std::vector<int64_t> dense_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

TensorView row_major_view(char* data, const TensorSig& sig) {
  TensorView v;
  v.data = data;
  v.type = sig.type;
  v.ndim = static_cast<int>(sig.shape.size());
  const std::vector<int64_t> strides = dense_strides(sig.shape);
  for (int d = 0; d < v.ndim; ++d) {
    v.shape[d] = sig.shape[static_cast<size_t>(d)];
    v.strides[d] = strides[static_cast<size_t>(d)];
  }
  return v;
}

bool is_dense(const TensorView& v) {
  if (v.num_elements() == 0) return true;  // no element is addressed: any strides will do (PyTorch's, say)
  int64_t expected = 1;
  for (int d = v.ndim - 1; d >= 0; --d) {
    if (v.shape[d] != 1 && v.strides[d] != expected) return false;
    expected *= v.shape[d];
  }
  return true;
}

void copy_dense(const TensorView& v, char* dense_data, bool to_dense) {
  size_t w = bytes(v.type);
  int64_t n = v.num_elements();
  std::vector<int64_t> idx(static_cast<size_t>(v.ndim), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t off = 0;
    for (int d = 0; d < v.ndim; ++d) off += idx[static_cast<size_t>(d)] * v.strides[d];
    char* strided = v.data + off * static_cast<int64_t>(w);
    char* packed = dense_data + flat * static_cast<int64_t>(w);
    if (to_dense) std::memcpy(packed, strided, w);
    else std::memcpy(strided, packed, w);
    for (int d = v.ndim - 1; d >= 0; --d) {
      if (++idx[static_cast<size_t>(d)] < v.shape[d]) break;
      idx[static_cast<size_t>(d)] = 0;
    }
  }
}

}  // namespace tc::runtime
