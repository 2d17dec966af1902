// contraction.h — recognising a def that is a sequence of tensor contractions, for the
// backends' GEMM-structured routes (the cpu backend's gett.h, the cuda backend's
// cuda/contraction/): a def made of sums of products of two tensors, each
//   O(b..., m..., n...) +=! A(any order of b, m, k) * B(any order of b, n, k)
// with any number of batch (b: in O, A and B), M (in O and A), N (in O and B) and K (in A and B,
// summed) indices, in any order in each tensor, float or double, `+=` adding to O's entry
// values, and each followed by any number of pointwise statements updating O (an epilogue: a
// bias, a ReLU, a scale). A later contraction may read what an earlier one wrote (an MLP's
// layers through temporaries). What it recognises and how it is described; not when a backend
// uses it (cpu.contract, cuda.contract) and not the loops.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/bind.h"
#include "runtime/tensor_view.h"

namespace tc::backends {

// One index of the contraction: its range and, per tensor, which dimension it indexes (-1: none).
struct ContractionIndex {
  std::string name;
  int64_t lo = 0, hi = 0;  // the statement variable's range
  int o = -1, a = -1, b = -1;  // the dimension of O, A, B it subscripts
  // In an affine plan (plan_contraction's `affine`), its coefficient in the subscript of A's
  // (B's) dimension a (b), which other indices may share: a convolution's I(n, c, h + kh, ...)
  // has h and kh in dimension 2, each with coefficient 1; a stride-2 one, 2 * h + kh. Else 1.
  int64_t a_scale = 1, b_scale = 1;
  std::vector<int> e;          // per read of the epilogue (Contraction::epilogue_reads): the dimension
  int64_t extent() const { return hi - lo; }
};

// The values a group of indices takes together (the product of their extents; 1 for none).
int64_t extent(const std::vector<ContractionIndex>& group);

// One step of an epilogue statement, in postfix order: each pushes a value per element of O
// (Const, Out: O's value there, Read: an epilogue read) or replaces the top one (Neg) or two
// (the rest) by their result, computed as the reference computes it in O's type.
struct EpilogueOp {
  enum class Kind { Const, Out, Read, Neg, Add, Sub, Mul, Div, Fmax, Fmin, Max, Min };
  Kind kind = Kind::Const;
  double value = 0;  // Const
  int read = -1;     // Read: the entry of Contraction::epilogue_reads
};

// The deepest stack an epilogue statement may need (deeper ones stay on the pipeline).
constexpr int kMaxEpilogueDepth = 8;

struct Contraction {
  ScalarType type = ScalarType::Float32;
  int a = -1, b = -1;   // the operands: tensors of the def (Def::tensors; may be the same one)
  int o = -1;           // the tensor written
  bool accumulate = false;  // `+=` without `!`: O's entry values are added to
  std::vector<ContractionIndex> batch, m, n, k;  // the groups; m: O and A, n: O and B
  // In an affine plan, per dimension of A (B), its subscript's constant term (empty: none).
  std::vector<int64_t> a_shift, b_shift;
  // Pointwise statements after the sum, in order: each sets every element of O's box to the
  // value of its ops. epilogue_reads: the tensor of each read they make besides O's own value.
  std::vector<std::vector<EpilogueOp>> epilogue;
  std::vector<int> epilogue_reads;

  // "float32; batch -; M i=64; N j=32; K k=16" (and "; then 2 pointwise statements reading bias").
  std::string describe(const ir::Def& def) const;
  // Multiply-adds of one call.
  double flops() const;
};

// A def on the route: its contractions in the def's order.
struct ContractionPlan {
  std::vector<Contraction> stages;
  double flops() const;
  // Every stage a plain matrix product (one index per group; `batched`: and at most one batch
  // index, else none), and with an epilogue or more than one stage, or small: what
  // cpu.contract=auto leaves to the pipeline, whose register-blocked schedule fuses the
  // epilogue and reads an operand used once without packing it (measured faster on those:
  // docs/design/contractions.md).
  bool matrix_products(bool batched = false) const;
  bool fused() const;
};

// What a route can compute beyond products of float or double tensors whose subscripts are each
// exactly one index (the cpu backend's packing):
struct ContractionRules {
  // An operand's subscripts may be affine in the indices (integer coefficients and a constant,
  // each index in one subscript, proven in bounds): convolutions as implicit GEMMs, for a route
  // that reads operands through each index's step (the cuda backend's).
  bool affine = false;
  // float16 and bfloat16 products without an epilogue (the cuda backend's tensor cores).
  bool half = false;
};

// The plan for `bound` if its def is such a sequence of contractions, else nullopt and `why`
// (when given) says what does not fit. A and B are ordered so that O's innermost dimension
// (the one it is written along) belongs to the N group where it belongs to either. An operand
// is an input or a tensor an earlier stage wrote; a temporary is written whole, `+=!`.
std::optional<ContractionPlan> plan_contraction(const ir::BoundDef& bound, std::string* why = nullptr,
                                                ContractionRules rules = {});

}  // namespace tc::backends
