// plan.cpp — recognising a contraction (contraction.h): the statement's shape, its indices
// grouped into batch, M, N and K, the operands oriented so that O is written along N.
#include "backends/cpu/contraction/contraction.h"

#include <algorithm>

namespace tc::backends::cpu {

namespace {

bool not_one(std::string* why, const std::string& what) {
  if (why) *why = what;
  return false;
}

// The dimension of `r` each statement variable subscripts (-1: none), or false if a subscript
// is not exactly a variable, a variable subscripts two dimensions, or a subscript needs a check.
bool dims_of(const ir::BoundDef& bound, const ir::Read& r, size_t vars, std::vector<int>& dim) {
  dim.assign(vars, -1);
  if (r.guarded) return false;
  for (size_t d = 0; d < r.subscripts.size(); ++d) {
    const ir::Subscript& s = r.subscripts[d];
    if (s.var < 0 || dim[static_cast<size_t>(s.var)] >= 0 || !bound.proven(s)) return false;
    dim[static_cast<size_t>(s.var)] = static_cast<int>(d);
  }
  return true;
}

bool plan_into(const ir::BoundDef& bound, Contraction& c, std::string* why) {
  const ir::Def& def = bound.def();
  if (def.stmts.size() != 1) return not_one(why, "the def has " + std::to_string(def.stmts.size()) + " statements");
  const ir::Stmt& s = def.stmts[0];
  const ir::Tensor& out = def.tensors[s.lhs_tensor];
  if (s.scatter || s.reduce != ir::ReduceOp::Sum || out.role != ir::TensorRole::Output)
    return not_one(why, "the statement is not a += reduction into an output");
  c.type = out.type;
  if (c.type != ScalarType::Float32 && c.type != ScalarType::Float64) return not_one(why, "not float or double");
  const ir::Node& rhs = *s.rhs;
  bool product = rhs.op == ir::ExprOp::Binary && rhs.binop == ir::BinOp::Mul && rhs.operand_type == c.type &&
                 rhs.type == c.type && rhs.args.size() == 2 && rhs.args[0]->op == ir::ExprOp::Load &&
                 rhs.args[1]->op == ir::ExprOp::Load && s.reads.size() == 2;
  if (!product) return not_one(why, "the right-hand side is not a product of two tensor reads");
  const ir::Read* ra = &s.reads[rhs.args[0]->index];
  const ir::Read* rb = &s.reads[rhs.args[1]->index];
  for (const ir::Read* r : {ra, rb}) {
    const ir::Tensor& t = def.tensors[r->tensor];
    if (t.role != ir::TensorRole::Input || t.type != c.type) return not_one(why, "an operand is not an input of O's type");
  }
  size_t vars = s.vars.size();
  std::vector<int> in_a, in_b;
  if (!dims_of(bound, *ra, vars, in_a) || !dims_of(bound, *rb, vars, in_b))
    return not_one(why, "an operand's subscripts are not distinct index variables");
  // O is written along its innermost dimension: that index goes to N, so B is the operand
  // that has it (where only one does).
  size_t innermost = s.num_lhs_vars() - 1;
  if (s.num_lhs_vars() > 0 && in_a[innermost] >= 0 && in_b[innermost] < 0) {
    std::swap(ra, rb);
    std::swap(in_a, in_b);
  }
  c.a = def.tensors[ra->tensor].param_index;
  c.b = def.tensors[rb->tensor].param_index;
  c.o = out.param_index;
  c.accumulate = !s.init;
  for (size_t v = 0; v < vars; ++v) {
    ContractionIndex x;
    x.name = s.vars[v];
    x.lo = bound.ranges[0][v].first;
    x.hi = std::max(x.lo, bound.ranges[0][v].second);
    x.o = v < s.num_lhs_vars() ? static_cast<int>(v) : -1;
    x.a = in_a[v];
    x.b = in_b[v];
    bool o = x.o >= 0, a = x.a >= 0, b = x.b >= 0;
    if (o && a && b) c.batch.push_back(x);
    else if (o && a) c.m.push_back(x);
    else if (o && b) c.n.push_back(x);
    else if (!o && a && b) c.k.push_back(x);
    else if (o) return not_one(why, "index '" + x.name + "' of the output is in neither operand");
    else return not_one(why, "index '" + x.name + "' is summed over one operand alone");
  }
  return true;
}

std::string group_text(const std::vector<ContractionIndex>& g) {
  if (g.empty()) return "-";
  std::string out;
  for (const auto& x : g) out += (out.empty() ? "" : " ") + x.name + "=" + std::to_string(x.hi - x.lo);
  return out;
}

double extent(const std::vector<ContractionIndex>& g) {
  double n = 1;
  for (const auto& x : g) n *= static_cast<double>(x.hi - x.lo);
  return n;
}

}  // namespace

std::string Contraction::describe() const {
  return std::string(type == ScalarType::Float64 ? "float64" : "float32") + (accumulate ? " (adding to O)" : "") +
         "; batch " + group_text(batch) + "; M " + group_text(m) + "; N " + group_text(n) + "; K " + group_text(k);
}

double Contraction::flops() const { return 2 * extent(batch) * extent(m) * extent(n) * extent(k); }

std::optional<Contraction> plan_contraction(const ir::BoundDef& bound, std::string* why) {
  Contraction c;
  if (!plan_into(bound, c, why)) return std::nullopt;
  return c;
}

}  // namespace tc::backends::cpu
