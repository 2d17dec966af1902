// expr.cpp — see expr.h.
#include "ir/expr.h"

namespace tc::ir {

void collect_vars(const Node& e, std::set<int>& out) {
  if (e.op == ExprOp::Var) out.insert(e.index);
  for (const auto& a : e.args) collect_vars(*a, out);
}

bool reads_tensor(const Node& e) {
  if (e.op == ExprOp::Load) return true;
  for (const auto& a : e.args)
    if (reads_tensor(*a)) return true;
  return false;
}

}  // namespace tc::ir
