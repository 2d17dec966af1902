// blas_plan.h — the cuda backend's library route (cuda.blas): a def that is one plain matrix
// product, batched or not, either operand and the result stored in either order,
//   O(b, i, j) +=! A(b, i, k) * B(b, k, j)   (any order of the indices in each tensor)
// float, double, float16 or bfloat16 (summed in float), `+=` adding to O's entry values, as one
// cuBLAS call (cublasGemmStridedBatchedEx) on the dense row-major tensors the backend takes; and
// such a product followed by a bias along O's contiguous index and/or a ReLU (`fmax(x, 0)`), as
// fcrelu's layer, as one cublasLtMatmul call with that epilogue.
// cuBLAS is column-major: the plan reads the row-major product as the column-major one whose
// rows are O's contiguous index (C = A·B, or its transpose Bᵀ·Aᵀ), each operand transposed or
// not by which of its indices is contiguous, so nothing is copied. What it recognises and the
// call's arguments; not loading cuBLAS or calling it (cublas.h), nor when the route is taken
// (cuda_backend.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/bind.h"

namespace tc::backends::cuda {

// One cublasGemmStridedBatchedEx call, column-major: for each of `batch` entries,
// C = op(X) · op(Y) (+ C where `accumulate`), C m x n with leading dimension ldc; op(X) m x k,
// op(Y) k x n. x, y, c: the def's tensors (Def::tensors) X, Y and C are; strides in elements.
// With an epilogue, one cublasLtMatmul call of the same operands instead.
struct BlasCall {
  ScalarType type = ScalarType::Float32;
  int x = -1, y = -1, c = -1;
  bool x_trans = false, y_trans = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t ldx = 0, ldy = 0, ldc = 0;
  int64_t batch = 1;
  int64_t stride_x = 0, stride_y = 0, stride_c = 0;
  bool accumulate = false;
  // After the sum (cuBLASLt's epilogue, cublasLtMatmul): a vector added along C's rows (the
  // def's bias along O's contiguous index), then max(x, 0).
  int bias = -1;  // the tensor, -1: none
  bool relu = false;
  bool lt() const { return bias >= 0 || relu; }

  // "cublasGemmStridedBatchedEx, float32, column-major: C (48 x 64, ld 48) = B (ld 48) * A^T (ld 32), k 32"
  std::string describe(const ir::Def& def) const;
};

// The call for `bound` where its def is one such product over whole tensors, else nullopt and
// `why` (where given) says what is not plain.
std::optional<BlasCall> plan_blas(const ir::BoundDef& bound, std::string* why = nullptr);

}  // namespace tc::backends::cuda
