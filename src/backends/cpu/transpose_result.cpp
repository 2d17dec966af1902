// transpose_result.cpp — see transpose_result.h. The planner only: it builds no stage.
#include "backends/cpu/transpose_result.h"

#include <set>

namespace tc::backends::cpu {

namespace {

std::set<int> vars_in(const ir::Read& r, size_t d) {
  std::set<int> v;
  ir::collect_vars(*r.subscripts[d].index, v);
  return v;
}

double elements(const ir::BoundDef& b, int t) {
  double e = 1;
  for (int64_t x : b.tensors[t].shape) e *= static_cast<double>(x);
  return e;
}

// The elements of the tensors read with `var` in a subscript other than their last while no
// read of theirs is contiguous in it: the operands copied with `var`'s dimension innermost
// (lower.cpp, operands_to_pack) when the stage's vectors run along `var`.
double copied_for(const ir::BoundDef& b, const ir::Stmt& st, int var) {
  std::set<int> tensors;
  for (const ir::Read& r : st.reads) {
    size_t d = r.subscripts.size();
    if (d < 2 || r.tensor == st.lhs_tensor) continue;
    bool inner = vars_in(r, d - 1).count(var) > 0, other = false;
    for (size_t k = 0; k + 1 < d; ++k) other = other || vars_in(r, k).count(var) > 0;
    if (other && !inner) tensors.insert(r.tensor);
  }
  double e = 0;
  for (int t : tensors) e += elements(b, t);
  return e;
}

// Whether statement si can be computed transposed: a reduction with '!' over the whole of its
// tensor (2 or more dimensions), none of whose reads is contiguous in the last written
// variable, a gather or of its own tensor.
bool transposable(const ir::BoundDef& b, int si) {
  const ir::Stmt& st = b.def().stmts[si];
  size_t n = st.num_lhs_vars();
  if (st.scatter || st.reduce == ir::ReduceOp::None || !st.init || n < 2 || st.vars.size() == n) return false;
  const auto& shape = b.tensors[st.lhs_tensor].shape;
  const auto& ranges = b.ranges[si];
  for (size_t v = 0; v < st.vars.size(); ++v)
    if (ranges[v].first >= ranges[v].second) return false;
  for (size_t v = 0; v < n; ++v)
    if (ranges[v].first != 0 || ranges[v].second != shape[v]) return false;
  int last = static_cast<int>(n) - 1;
  for (const ir::Read& r : st.reads) {
    if (r.gather() || r.tensor == st.lhs_tensor) return false;
    if (!r.subscripts.empty() && vars_in(r, r.subscripts.size() - 1).count(last)) return false;
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
