// statement_facts.cpp — see statement_facts.h.
#include "backends/cpu/statement_facts.h"

namespace tc::backends::cpu {

std::set<int> subscript_vars(const ir::Read& read, size_t d) {
  std::set<int> out;
  ir::collect_vars(*read.subscripts[d].index, out);
  return out;
}

namespace {

// Adds to `out` the variables of e that step it by +1 (`sign` the sign e enters the subscript
// with), to `other` those that step it any other way.
void stepping_vars(const ir::Node& e, int sign, std::set<int>& out, std::set<int>& other) {
  if (e.op == ir::ExprOp::Var) {
    (sign > 0 ? out : other).insert(e.index);
  } else if (e.op == ir::ExprOp::Binary && (e.binop == ir::BinOp::Add || e.binop == ir::BinOp::Sub)) {
    stepping_vars(*e.args[0], sign, out, other);
    stepping_vars(*e.args[1], e.binop == ir::BinOp::Sub ? -sign : sign, out, other);
  } else if (e.op == ir::ExprOp::Cast && !e.args.empty()) {
    stepping_vars(*e.args[0], sign, out, other);
  } else {
    ir::collect_vars(e, other);
  }
}

}  // namespace

std::set<int> unit_step_vars(const ir::Read& read, size_t d) {
  std::set<int> out, other;
  if (read.subscripts[d].kind == ir::IndexKind::DataDependent) return out;
  stepping_vars(*read.subscripts[d].index, 1, out, other);
  for (int v : other) out.erase(v);  // `k + k`, `k - k`: not one step
  return out;
}

bool whole_reduction(const ir::BoundDef& bound, int si) {
  const ir::Stmt& st = bound.def().stmts[si];
  size_t n = st.num_lhs_vars();
  if (st.scatter || st.reduce == ir::ReduceOp::None || !st.init || st.vars.size() == n) return false;
  const auto& shape = bound.tensors[st.lhs_tensor].shape;
  const auto& ranges = bound.ranges[si];
  for (size_t v = 0; v < st.vars.size(); ++v)
    if (ranges[v].first >= ranges[v].second) return false;
  for (size_t v = 0; v < n; ++v)
    if (ranges[v].first != 0 || ranges[v].second != shape[v]) return false;
  return true;
}

std::map<int, int> operands_to_pack(const ir::Stmt& st, int inner) {
  for (const ir::Read& r : st.reads)
    if (!r.subscripts.empty() && subscript_vars(r, r.subscripts.size() - 1).count(inner)) return {};
  std::map<int, int> pack;
  for (const ir::Read& r : st.reads) {
    if (r.tensor == st.lhs_tensor || r.subscripts.size() < 2 || pack.count(r.tensor) || r.gather()) continue;
    for (size_t d = 0; d + 1 < r.subscripts.size(); ++d)
      if (r.subscripts[d].var == inner) pack[r.tensor] = static_cast<int>(d);
  }
  return pack;
}

}  // namespace tc::backends::cpu
