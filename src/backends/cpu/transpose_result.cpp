// transpose_result.cpp — see transpose_result.h. The planner only: it builds no stage.
#include "backends/cpu/transpose_result.h"

#include "backends/cpu/statement_facts.h"

namespace tc::backends::cpu {

namespace {

double elements(const ir::BoundDef& b, int t) {
  double e = 1;
  for (int64_t x : b.tensors[t].shape) e *= static_cast<double>(x);
  return e;
}

// The elements the lowering copies when the stage's vectors run along written variable `var`.
double copied_for(const ir::BoundDef& b, const ir::Stmt& st, int var) {
  double e = 0;
  for (const auto& [tensor, dim] : operands_to_pack(st, var)) e += elements(b, tensor);
  return e;
}

// Whether statement si can be computed transposed: a whole reduction with '!' of 2 or more
// dimensions, none of whose reads is contiguous in the last written variable, a gather or of
// its own tensor.
bool transposable(const ir::BoundDef& b, int si) {
  const ir::Stmt& st = b.def().stmts[si];
  int last = static_cast<int>(st.num_lhs_vars()) - 1;
  if (last < 1 || !whole_reduction(b, si)) return false;
  for (const ir::Read& r : st.reads) {
    if (r.gather() || r.tensor == st.lhs_tensor) return false;
    if (!r.subscripts.empty() && subscript_vars(r, r.subscripts.size() - 1).count(last)) return false;
  }
  return true;
}

// auto: transposed where what it copies (the operands for vectors along the second-last
// variable, and the result, which the copy back reads once) is at most this share of what the
// untransposed stage copies (per tile, once per tile row of the result).
// tmm 128x1000x1024 (2 threads, Xeon): B's 1M elements copied per tile against A's 128K once
// and the 128K results transposed back.
constexpr double kCopyRatio = 0.5;

bool pays(const ir::BoundDef& b, int si) {
  const ir::Stmt& st = b.def().stmts[si];
  int last = static_cast<int>(st.num_lhs_vars()) - 1;
  double untransposed = copied_for(b, st, last);
  double transposed = copied_for(b, st, last - 1) + elements(b, st.lhs_tensor);
  return transposed <= kCopyRatio * untransposed;
}

}  // namespace

std::vector<int> plan_transposed_results(const ir::BoundDef& bound, int mode) {
  std::vector<int> plans;
  if (mode == 0) return plans;
  for (size_t si = 0; si < bound.def().stmts.size(); ++si) {
    int s = static_cast<int>(si);
    if (transposable(bound, s) && (mode > 0 || pays(bound, s))) plans.push_back(s);
  }
  return plans;
}

}  // namespace tc::backends::cpu
