// contraction.h — the cpu backend's contraction route: a def that is one sum of products of two
// tensors,
//   O(b..., m..., n...) +=! A(any order of b, m, k) * B(any order of b, n, k)
// with any number of batch (b: in O, A and B), M (in O and A), N (in O and B) and K (in A and B,
// summed) indices, in any order in each tensor, float or double, `+=` adding to O's entry
// values, is computed by libtc's own GEMM-structured code (gett.h) instead of the Halide
// pipeline: A and B packed into micro-panels straight from their strided layouts (the
// permutation happens in the packing, never as a separate transpose), a register-blocked
// micro-kernel for the vector ISA, cache blocking from the host's cache sizes, threads over
// blocks of the output. What it recognises and how it is described; not when to use it (the
// cpu.contract knob) and not the loops (gett.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/bind.h"
#include "runtime/tensor_view.h"

namespace tc::backends::cpu {

// One index of the contraction: its range and, per tensor, which dimension it indexes (-1: none).
struct ContractionIndex {
  std::string name;
  int64_t lo = 0, hi = 0;  // the statement variable's range
  int o = -1, a = -1, b = -1;  // the dimension of O, A, B it subscripts
};

struct Contraction {
  ScalarType type = ScalarType::Float32;
  int a = -1, b = -1;   // input parameter positions (may be the same tensor)
  int o = -1;           // output parameter position
  bool accumulate = false;  // `+=` without `!`: O's entry values are added to
  std::vector<ContractionIndex> batch, m, n, k;  // the groups; m: O and A, n: O and B

  // "O(i,j) = A(i,k) B(k,j): batch -, M i, N j, K k" with the group sizes.
  std::string describe() const;
  // Multiply-adds of one call.
  double flops() const;
};

// The plan for `bound` if its def is one such contraction, else nullopt and `why` (when
// given) says what does not fit. A and B are ordered so that O's innermost dimension (the one
// it is written along) belongs to the N group where it belongs to either.
std::optional<Contraction> plan_contraction(const ir::BoundDef& bound, std::string* why = nullptr);

}  // namespace tc::backends::cpu
