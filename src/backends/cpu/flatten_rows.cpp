// flatten_rows.cpp — see flatten_rows.h.
#include "backends/cpu/flatten_rows.h"

#include <algorithm>
#include <cstdint>
#include <set>

#include "backends/cpu/statement_facts.h"

namespace tc::backends::cpu {

using ir::ExprOp;
using ir::Node;

namespace {

bool free_of(const Node& e, const std::set<int>& vars) {
  std::set<int> used;
  ir::collect_vars(e, used);
  for (int v : used)
    if (vars.count(v)) return false;
  return !ir::reads_tensor(e);
}

// e is `v`, or `v + x`, `x + v`, `v - x` with x free of `pure` (the statement's written
// variables): v with coefficient 1 plus reduction variables and constants.
bool is_var_plus(const Node& e, int v, const std::set<int>& pure) {
  if (e.op == ExprOp::Var) return e.index == v;
  if (e.op != ExprOp::Binary || (e.binop != ir::BinOp::Add && e.binop != ir::BinOp::Sub)) return false;
  const Node& a = *e.args[0];
  const Node& b = *e.args[1];
  if (is_var_plus(a, v, pure) && free_of(b, pure)) return true;
  return e.binop == ir::BinOp::Add && is_var_plus(b, v, pure) && free_of(a, pure);
}

// Whether e uses one of `vars` outside the subscripts of its loads.
bool uses_outside_loads(const Node& e, const std::set<int>& vars) {
  if (e.op == ExprOp::Var) return vars.count(e.index) > 0;
  if (e.op == ExprOp::Load) return false;
  for (const auto& a : e.args)
    if (uses_outside_loads(*a, vars)) return true;
  return false;
}

// The plan for statement si, or stmt = -1 where it cannot be flattened.
RowFlattening plan_statement(const ir::BoundDef& b, int si) {
  RowFlattening plan;
  const ir::Def& def = b.def();
  const ir::Stmt& st = def.stmts[si];
  size_t n = st.num_lhs_vars();
  if (n < 2 || !whole_reduction(b, si)) return plan;
  const auto& out_shape = b.tensors[st.lhs_tensor].shape;
  int w = static_cast<int>(n) - 1, h = w - 1;
  std::set<int> pure, rows = {h, w};
  for (int v = 0; v < static_cast<int>(n); ++v) pure.insert(v);
  if (uses_outside_loads(*st.rhs, rows)) return plan;
  int64_t row = 0, height = 0;
  for (const ir::Read& r : st.reads) {
    std::set<int> used;
    for (const auto& s : r.subscripts) ir::collect_vars(*s.index, used);
    if (!used.count(h) && !used.count(w)) continue;  // the weights
    size_t d = r.subscripts.size();
    if (def.tensors[r.tensor].role != ir::TensorRole::Input || d < 2 || r.guarded || r.gather()) return plan;
    for (const auto& s : r.subscripts)
      if (!b.proven(s)) return plan;
    if (!is_var_plus(*r.subscripts[d - 1].index, w, pure) || !is_var_plus(*r.subscripts[d - 2].index, h, pure))
      return plan;
    for (size_t k = 0; k + 2 < d; ++k) {
      std::set<int> other;
      ir::collect_vars(*r.subscripts[k].index, other);
      if (other.count(h) || other.count(w)) return plan;
    }
    const auto& shape = b.tensors[r.tensor].shape;
    if (row != 0 && (shape[d - 1] != row || shape[d - 2] != height)) return plan;  // one row length
    row = shape[d - 1];
    height = shape[d - 2];
    if (std::find(plan.inputs.begin(), plan.inputs.end(), r.tensor) == plan.inputs.end()) plan.inputs.push_back(r.tensor);
  }
  int64_t out_w = out_shape[n - 1], out_h = out_shape[n - 2];
  // The generated code's 32-bit extents: the input's flattened row, row x height, must fit.
  if (row == 0 || row < out_w || height < out_h || row * height > INT32_MAX) return {};
  plan.stmt = si;
  plan.row = row;
  plan.positions = (out_h - 1) * row + out_w;
  return plan;
}

// auto: the output's rows leave more than 10% of the lanes of the vectors that cover them
// unused, the flattened rows at most 12.5% (conv2d's 54 of 56: 64 computed, or 56), and the
// lanes saved pay for the copy back into the output's rows: per output element, the reduction
// steps times the lanes saved per element at least kCopyLanes. conv2d (576 steps, 0.15 lanes
// saved an element: 85) 6.88 -> 6.06 ms flattened; the TC paper's group convolution (36
// steps: 5.3) 5.3 -> 20.6 ms, its 50 MB of flattened results copied through memory.
constexpr double kCopyLanes = 32;

bool pays(const ir::BoundDef& b, const RowFlattening& plan, int vector_bytes) {
  const ir::Stmt& st = b.def().stmts[plan.stmt];
  size_t n = st.num_lhs_vars();
  int64_t lanes = std::max(1, vector_bytes / bytes(b.def().tensors[st.lhs_tensor].type));
  int64_t out_w = b.tensors[st.lhs_tensor].shape[n - 1];
  int64_t covered = (out_w + lanes - 1) / lanes * lanes;
  double steps = 1;
  for (size_t v = n; v < st.vars.size(); ++v)
    steps *= static_cast<double>(b.ranges[plan.stmt][v].second - b.ranges[plan.stmt][v].first);
  double saved = static_cast<double>(covered - plan.row) / static_cast<double>(out_w);
  return covered * 10 > out_w * 11 && (plan.row - out_w) * 8 <= plan.row && plan.positions >= 4 * lanes &&
         saved * steps >= kCopyLanes;
}

}  // namespace

std::vector<RowFlattening> plan_row_flattening(const ir::BoundDef& bound, int mode, int vector_bytes) {
  std::vector<RowFlattening> plans;
  if (mode == 0) return plans;
  for (size_t si = 0; si < bound.def().stmts.size(); ++si) {
    RowFlattening plan = plan_statement(bound, static_cast<int>(si));
    if (plan.stmt >= 0 && (mode > 0 || pays(bound, plan, vector_bytes))) plans.push_back(plan);
  }
  return plans;
}

}  // namespace tc::backends::cpu
