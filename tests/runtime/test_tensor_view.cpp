// test_tensor_view.cpp — runtime::is_dense, which decides whether the cuda backend can hand a
// tensor to its kernel as it is: row-major without gaps, extent-1 dimensions and tensors with no
// elements taking any strides (PyTorch gives an empty CUDA tensor strides of its own; found on
// the first GPU run, where such inputs were refused as "not contiguous").
#include <gtest/gtest.h>

#include "runtime/tensor_view.h"

namespace {

tc::runtime::TensorView view(std::initializer_list<int64_t> shape, std::initializer_list<int64_t> strides) {
  tc::runtime::TensorView v;
  v.ndim = static_cast<int>(shape.size());
  int d = 0;
  for (int64_t e : shape) v.shape[d++] = e;
  d = 0;
  for (int64_t s : strides) v.strides[d++] = s;
  return v;
}

TEST(IsDense, RowMajorIsDense) { EXPECT_TRUE(tc::runtime::is_dense(view({2, 3}, {3, 1}))); }

TEST(IsDense, TransposedAndGappedAreNot) {
  EXPECT_FALSE(tc::runtime::is_dense(view({2, 3}, {1, 2})));
  EXPECT_FALSE(tc::runtime::is_dense(view({2, 3}, {4, 1})));
}

TEST(IsDense, ExtentOneTakesAnyStride) { EXPECT_TRUE(tc::runtime::is_dense(view({2, 1, 3}, {3, 7, 1}))); }

TEST(IsDense, NoElementsTakesAnyStrides) {
  EXPECT_TRUE(tc::runtime::is_dense(view({0, 3}, {0, 0})));
  EXPECT_TRUE(tc::runtime::is_dense(view({4, 0}, {1, 4})));
}

TEST(IsDense, ScalarIsDense) { EXPECT_TRUE(tc::runtime::is_dense(view({}, {}))); }

}  // namespace
