// plan.cpp — recognising a def on the contraction route (contraction.h): each stage's product
// statement, its indices grouped into batch, M, N and K, the operands oriented so that O is
// written along N; the pointwise statements after it compiled into its epilogue.
#include "backends/contraction/contraction.h"

#include <algorithm>
#include <map>

namespace tc::backends {

namespace {

bool not_one(std::string* why, const std::string& what) {
  if (why) *why = what;
  return false;
}

// "statement 3 " where the def has several (the first keeps the one-statement wording).
std::string which(size_t si) { return si == 0 ? "" : "statement " + std::to_string(si + 1) + ": "; }

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

// e's terms, times `scale`, added to `coef` (per statement variable) and `constant`, where e is
// affine in the statement's variables with integer coefficients; else false.
bool affine_terms(const ir::Node& e, int64_t scale, std::map<int, int64_t>& coef, int64_t& constant) {
  auto literal = [](const ir::Node& n, int64_t& v) {
    if (n.op != ir::ExprOp::Const || n.is_float) return false;
    v = n.int_value;
    return true;
  };
  int64_t v = 0;
  switch (e.op) {
    case ir::ExprOp::Const:
      if (!literal(e, v)) return false;
      constant += scale * v;
      return true;
    case ir::ExprOp::Var: coef[e.index] += scale; return true;
    case ir::ExprOp::Cast: return !is_float(e.type) && affine_terms(*e.args[0], scale, coef, constant);
    case ir::ExprOp::Neg: return affine_terms(*e.args[0], -scale, coef, constant);
    case ir::ExprOp::Binary:
      if (e.binop == ir::BinOp::Add)
        return affine_terms(*e.args[0], scale, coef, constant) && affine_terms(*e.args[1], scale, coef, constant);
      if (e.binop == ir::BinOp::Sub)
        return affine_terms(*e.args[0], scale, coef, constant) && affine_terms(*e.args[1], -scale, coef, constant);
      if (e.binop == ir::BinOp::Mul && literal(*e.args[0], v)) return affine_terms(*e.args[1], scale * v, coef, constant);
      if (e.binop == ir::BinOp::Mul && literal(*e.args[1], v)) return affine_terms(*e.args[0], scale * v, coef, constant);
      return false;
    default: return false;
  }
}

// dims_of for affine subscripts: also each variable's coefficient, and each subscript's
// constant term; false where a subscript is not affine, needs a check, or a variable is in two.
bool affine_dims_of(const ir::BoundDef& bound, const ir::Read& r, size_t vars, std::vector<int>& dim,
                    std::vector<int64_t>& scale, std::vector<int64_t>& shift) {
  dim.assign(vars, -1);
  scale.assign(vars, 1);
  shift.assign(r.subscripts.size(), 0);
  if (r.guarded) return false;
  for (size_t d = 0; d < r.subscripts.size(); ++d) {
    const ir::Subscript& s = r.subscripts[d];
    std::map<int, int64_t> coef;
    if (!bound.proven(s) || !affine_terms(*s.index, 1, coef, shift[d])) return false;
    for (const auto& [var, c] : coef) {
      if (c == 0) continue;
      if (var < 0 || static_cast<size_t>(var) >= vars || dim[static_cast<size_t>(var)] >= 0) return false;
      dim[static_cast<size_t>(var)] = static_cast<int>(d);
      scale[static_cast<size_t>(var)] = c;
    }
  }
  return true;
}

// What a stage may read: an input, or a tensor an earlier stage finished (never the one it writes).
bool readable(const ir::Def& def, const std::vector<char>& done, int tensor, int written, ScalarType type) {
  const ir::Tensor& t = def.tensors[static_cast<size_t>(tensor)];
  return tensor != written && t.type == type && (t.role == ir::TensorRole::Input || done[static_cast<size_t>(tensor)]);
}

bool product_into(const ir::BoundDef& bound, size_t si, const std::vector<char>& done, const ContractionRules& rules,
                  Contraction& c, std::string* why) {
  const ir::Def& def = bound.def();
  const ir::Stmt& s = def.stmts[si];
  const ir::Tensor& out = def.tensors[s.lhs_tensor];
  const std::string at = which(si);
  if (s.scatter || s.reduce != ir::ReduceOp::Sum || out.role == ir::TensorRole::Input)
    return not_one(why, at + "the statement is not a += reduction into an output");
  c.type = out.type;
  bool half = rules.half && is_float16_like(c.type);
  if (c.type != ScalarType::Float32 && c.type != ScalarType::Float64 && !half)
    return not_one(why, at + (rules.half ? "not float, double, float16 or bfloat16" : "not float or double"));
  const ir::Node& rhs = *s.rhs;
  bool product = rhs.op == ir::ExprOp::Binary && rhs.binop == ir::BinOp::Mul && rhs.operand_type == c.type &&
                 rhs.type == c.type && rhs.args.size() == 2 && rhs.args[0]->op == ir::ExprOp::Load &&
                 rhs.args[1]->op == ir::ExprOp::Load && s.reads.size() == 2;
  if (!product) return not_one(why, at + "the right-hand side is not a product of two tensor reads");
  const ir::Read* ra = &s.reads[rhs.args[0]->index];
  const ir::Read* rb = &s.reads[rhs.args[1]->index];
  for (const ir::Read* r : {ra, rb})
    if (!readable(def, done, r->tensor, s.lhs_tensor, c.type))
      return not_one(why, at + "an operand is not an input (or a tensor computed before) of O's type");
  size_t vars = s.vars.size();
  std::vector<int> in_a, in_b;
  std::vector<int64_t> scale_a(vars, 1), scale_b(vars, 1);
  if (rules.affine) {
    if (!affine_dims_of(bound, *ra, vars, in_a, scale_a, c.a_shift) ||
        !affine_dims_of(bound, *rb, vars, in_b, scale_b, c.b_shift))
      return not_one(why, at + "an operand's subscripts are not affine in distinct index variables");
  } else if (!dims_of(bound, *ra, vars, in_a) || !dims_of(bound, *rb, vars, in_b)) {
    return not_one(why, at + "an operand's subscripts are not distinct index variables");
  }
  if (out.role == ir::TensorRole::Temporary) {
    if (!s.init && !done[static_cast<size_t>(s.lhs_tensor)])
      return not_one(why, at + "it adds to a temporary nothing wrote before");
    const std::vector<int64_t>& shape = bound.tensors[static_cast<size_t>(s.lhs_tensor)].shape;
    for (size_t v = 0; v < s.num_lhs_vars(); ++v)
      if (bound.ranges[si][v].first != 0 || bound.ranges[si][v].second != shape[v])
        return not_one(why, at + "it writes part of a temporary");
  }
  // O is written along its innermost dimension: that index goes to N, so B is the operand
  // that has it (where only one does).
  size_t innermost = s.num_lhs_vars() - 1;
  if (s.num_lhs_vars() > 0 && in_a[innermost] >= 0 && in_b[innermost] < 0) {
    std::swap(ra, rb);
    std::swap(in_a, in_b);
    std::swap(scale_a, scale_b);
    std::swap(c.a_shift, c.b_shift);
  }
  c.a = ra->tensor;
  c.b = rb->tensor;
  c.o = s.lhs_tensor;
  c.accumulate = !s.init;
  for (size_t v = 0; v < vars; ++v) {
    ContractionIndex x;
    x.name = s.vars[v];
    x.lo = bound.ranges[si][v].first;
    x.hi = std::max(x.lo, bound.ranges[si][v].second);
    x.o = v < s.num_lhs_vars() ? static_cast<int>(v) : -1;
    x.a = in_a[v];
    x.b = in_b[v];
    x.a_scale = scale_a[v];
    x.b_scale = scale_b[v];
    bool o = x.o >= 0, a = x.a >= 0, b = x.b >= 0;
    if (o && a && b) c.batch.push_back(x);
    else if (o && a) c.m.push_back(x);
    else if (o && b) c.n.push_back(x);
    else if (!o && a && b) c.k.push_back(x);
    else if (o) return not_one(why, at + "index '" + x.name + "' of the output is in neither operand");
    else return not_one(why, at + "index '" + x.name + "' is summed over one operand alone");
  }
  return true;
}

// The index of the contraction that walks O's dimension `d`.
ContractionIndex* index_of_dim(Contraction& c, int d) {
  for (auto* g : {&c.batch, &c.m, &c.n})
    for (auto& x : *g)
      if (x.o == d) return &x;
  return nullptr;
}

// One pointwise statement's right-hand side compiled into postfix ops (EpilogueOp).
struct EpilogueCompiler {
  const ir::BoundDef& bound;
  const ir::Stmt& s;
  const std::vector<char>& done;
  Contraction& c;
  std::vector<EpilogueOp>& ops;
  std::string problem;
  int depth = 0, deepest = 0;

  void push(EpilogueOp op) {
    ops.push_back(op);
    int popped = op.kind <= EpilogueOp::Kind::Read ? 0 : op.kind == EpilogueOp::Kind::Neg ? 1 : 2;
    depth += 1 - popped;
    deepest = std::max(deepest, depth);
  }

  bool fail(const std::string& what) {
    problem = what;
    return false;
  }

  bool read(const ir::Read& r) {
    if (r.guarded) return fail("a read under a condition");
    if (r.tensor == c.o) {
      if (!r.pointwise) return fail("a read of O at another element than the one it writes: " + r.text);
      push({EpilogueOp::Kind::Out});
      return true;
    }
    const ir::Def& def = bound.def();
    if (!readable(def, done, r.tensor, c.o, c.type))
      return fail("a read of a tensor that is not an input (or computed before) of O's type: " + r.text);
    std::vector<int> dim;
    if (!dims_of(bound, r, s.vars.size(), dim)) return fail("a read whose subscripts are not distinct indices: " + r.text);
    int entry = static_cast<int>(c.epilogue_reads.size());
    c.epilogue_reads.push_back(r.tensor);
    for (auto* g : {&c.batch, &c.m, &c.n, &c.k})
      for (auto& x : *g) x.e.push_back(-1);
    for (size_t v = 0; v < dim.size(); ++v)
      if (dim[v] >= 0) index_of_dim(c, static_cast<int>(v))->e[static_cast<size_t>(entry)] = dim[v];
    push({EpilogueOp::Kind::Read, 0, entry});
    return true;
  }

  bool compile(const ir::Node& e) {
    using K = EpilogueOp::Kind;
    switch (e.op) {
      case ir::ExprOp::Const:
        if (e.type == ScalarType::Bool) return fail("a boolean");
        push({K::Const, e.is_float ? e.float_value : static_cast<double>(e.int_value)});
        return true;
      case ir::ExprOp::Load: return read(s.reads[static_cast<size_t>(e.index)]);
      case ir::ExprOp::Cast:
        if (e.type != c.type || (e.args[0]->op != ir::ExprOp::Const && e.args[0]->type != c.type))
          return fail("a conversion");
        return compile(*e.args[0]);
      case ir::ExprOp::Neg:
        if (e.type != c.type) return fail("a negation in another type");
        if (!compile(*e.args[0])) return false;
        push({K::Neg});
        return true;
      case ir::ExprOp::Binary: {
        K kind;
        switch (e.binop) {
          case ir::BinOp::Add: kind = K::Add; break;
          case ir::BinOp::Sub: kind = K::Sub; break;
          case ir::BinOp::Mul: kind = K::Mul; break;
          case ir::BinOp::Div: kind = K::Div; break;
          default: return fail("the operator " + std::string(spelling(e.binop)));
        }
        if (e.type != c.type || e.operand_type != c.type) return fail("an operation in another type");
        return binary(e, kind);
      }
      case ir::ExprOp::Builtin: {
        using B = lang::BuiltinId;
        K kind;
        switch (e.builtin) {
          case B::Fmax: kind = K::Fmax; break;
          case B::Fmin: kind = K::Fmin; break;
          case B::Max: kind = K::Max; break;
          case B::Min: kind = K::Min; break;
          default: return fail("the function " + std::string(lang::builtin(e.builtin).name));
        }
        if (e.type != c.type) return fail("a function in another type");
        return binary(e, kind);
      }
      default: return fail("an index, a size, a comparison or a condition");
    }
  }

  bool binary(const ir::Node& e, EpilogueOp::Kind kind) {
    if (e.args.size() != 2 || !compile(*e.args[0]) || !compile(*e.args[1])) return problem.empty() ? fail("arity") : false;
    push({kind});
    return true;
  }
};

// Statement si as a pointwise update of c's O over the box c writes, compiled into its epilogue.
bool epilogue_into(const ir::BoundDef& bound, size_t si, const std::vector<char>& done, Contraction& c,
                   std::string* why) {
  const ir::Stmt& s = bound.def().stmts[si];
  const std::string at = which(si) + "after the product, ";
  if (s.init || s.vars.size() != s.num_lhs_vars()) return not_one(why, at + "the statement is not pointwise");
  for (size_t v = 0; v < s.vars.size(); ++v) {
    const ContractionIndex* x = index_of_dim(c, static_cast<int>(v));
    if (!x || bound.ranges[si][v].first != x->lo || std::max(x->lo, bound.ranges[si][v].second) != x->hi)
      return not_one(why, at + "the statement writes another box than the product");
  }
  std::vector<EpilogueOp> ops;
  EpilogueCompiler compiler{bound, s, done, c, ops, {}};
  if (!compiler.compile(*s.rhs)) return not_one(why, at + "the statement has " + compiler.problem);
  if (compiler.deepest > kMaxEpilogueDepth) return not_one(why, at + "the statement is too deep an expression");
  c.epilogue.push_back(std::move(ops));
  return true;
}

std::string group_text(const std::vector<ContractionIndex>& g) {
  if (g.empty()) return "-";
  std::string out;
  for (const auto& x : g) out += (out.empty() ? "" : " ") + x.name + "=" + std::to_string(x.hi - x.lo);
  return out;
}


}  // namespace

std::string Contraction::describe(const ir::Def& def) const {
  std::string text = std::string(name(type)) +
                     (accumulate ? " (adding to O)" : "") + "; batch " + group_text(batch) + "; M " + group_text(m) +
                     "; N " + group_text(n) + "; K " + group_text(k);
  if (epilogue.empty()) return text;
  text += "; then " + std::to_string(epilogue.size()) + " pointwise statement" + (epilogue.size() > 1 ? "s" : "");
  std::vector<int> seen;
  for (int t : epilogue_reads)
    if (std::find(seen.begin(), seen.end(), t) == seen.end()) {
      text += (seen.empty() ? " reading " : ", ") + def.tensors[static_cast<size_t>(t)].name;
      seen.push_back(t);
    }
  return text;
}

int64_t extent(const std::vector<ContractionIndex>& group) {
  int64_t n = 1;
  for (const auto& x : group) n *= x.extent();
  return n;
}

double Contraction::flops() const {
  return 2.0 * static_cast<double>(extent(batch)) * static_cast<double>(extent(m)) * static_cast<double>(extent(n)) *
         static_cast<double>(extent(k));
}

double ContractionPlan::flops() const {
  double total = 0;
  for (const auto& c : stages) total += c.flops();
  return total;
}

bool ContractionPlan::matrix_products(bool batched) const {
  for (const auto& c : stages)
    if (c.batch.size() > (batched ? 1u : 0u) || c.m.size() != 1 || c.n.size() != 1 || c.k.size() != 1) return false;
  return true;
}

bool ContractionPlan::fused() const {
  return stages.size() > 1 || std::any_of(stages.begin(), stages.end(), [](const Contraction& c) { return !c.epilogue.empty(); });
}

std::optional<ContractionPlan> plan_contraction(const ir::BoundDef& bound, std::string* why, ContractionRules rules) {
  const ir::Def& def = bound.def();
  ContractionPlan plan;
  std::vector<char> done(def.tensors.size(), 0);
  for (size_t si = 0; si < def.stmts.size();) {
    Contraction c;
    if (!product_into(bound, si, done, rules, c, why)) return std::nullopt;
    if (!plan.stages.empty() && c.type != plan.stages[0].type) {
      not_one(why, which(si) + "its type is not the first product's");
      return std::nullopt;
    }
    for (++si; si < def.stmts.size() && def.stmts[si].lhs_tensor == c.o && def.stmts[si].reduce == ir::ReduceOp::None &&
               !def.stmts[si].scatter;
         ++si) {
      if (is_float16_like(c.type)) {
        not_one(why, which(si) + "a " + std::string(name(c.type)) + " product has no epilogue on the route");
        return std::nullopt;
      }
      if (!epilogue_into(bound, si, done, c, why)) return std::nullopt;
    }
    done[static_cast<size_t>(c.o)] = 1;
    plan.stages.push_back(std::move(c));
  }
  if (plan.stages.empty()) {
    not_one(why, "the def has no statement");
    return std::nullopt;
  }
  return plan;
}

}  // namespace tc::backends
