// from_ast.cpp — see from_ast.h.
#include "ir/from_ast.h"

#include <algorithm>
#include <map>
#include <set>

#include "lang/printer.h"
#include "support/error.h"

namespace tc::ir {

using lang::ExprKind;
using lang::Ref;
using lang::Tok;

namespace {

// Affine in the variables: constants, sizes, T.d and variables combined by + - and unary
// minus, and * where one side uses no variable.
bool affine(const lang::Expr& e) {
  switch (e.kind) {
    case ExprKind::IntLit:
    case ExprKind::Dim: return true;
    case ExprKind::Ident: return e.ref == Ref::Index || e.ref == Ref::Size;
    case ExprKind::Unary: return e.op == Tok::Minus && affine(*e.args[0]);
    case ExprKind::Binary: {
      if (e.op == Tok::Plus || e.op == Tok::Minus) return affine(*e.args[0]) && affine(*e.args[1]);
      if (e.op != Tok::Star) return false;
      std::set<std::string> a, b;
      lang::collect_index_vars(*e.args[0], a);
      lang::collect_index_vars(*e.args[1], b);
      return affine(*e.args[0]) && affine(*e.args[1]) && (a.empty() || b.empty());
    }
    default: return false;
  }
}

class StmtBuilder {
 public:
  StmtBuilder(const lang::Def& def, const lang::Stmt& st, const infer::StmtRanges& ranges,
              const std::set<std::pair<const lang::Expr*, int>>& proven,
              const std::map<std::pair<const lang::Expr*, int>, int>& guarded)
      : def_(def), st_(st), ranges_(ranges), proven_(proven), guarded_(guarded) {}

  Stmt build() {
    Stmt s;
    s.lhs_tensor = st_.lhs_tensor;
    s.vars = st_.vars;
    s.num_lhs = st_.num_lhs_vars();
    s.domain = ranges_.vars;
    s.reduce = st_.reduce;
    s.init = st_.init;
    s.loc = st_.loc;
    s.index_locs = st_.index_locs;
    if (st_.is_scatter()) {
      s.scatter = true;
      s.write = access(*st_.write, /*write=*/true);
    }
    s.rhs = expr(*st_.rhs);
    s.reads = std::move(reads_);
    return s;
  }

 private:
  int var_slot(const std::string& name) const {
    auto it = std::find(st_.vars.begin(), st_.vars.end(), name);
    if (it == st_.vars.end()) fail(TC_ERROR_INTERNAL, "IR: unbound index variable '" + name + "'");
    return static_cast<int>(it - st_.vars.begin());
  }

  int size_slot(const std::string& name) const {
    auto it = std::find(def_.size_names.begin(), def_.size_names.end(), name);
    if (it == def_.size_names.end()) fail(TC_ERROR_INTERNAL, "IR: unknown size '" + name + "'");
    return static_cast<int>(it - def_.size_names.begin());
  }

  const infer::Access& access_of(const lang::Expr& e) const {
    for (const auto& a : ranges_.accesses)
      if (a.expr == &e) return a;
    fail(TC_ERROR_INTERNAL, "IR: a tensor read range inference did not record");
  }

  Node node(ExprOp op, const lang::Expr& e) const {
    Node n;
    n.op = op;
    n.type = e.type;
    return n;
  }

  // The read gets its number before its subscripts are visited: reads are numbered outermost
  // first, as range inference lists them.
  Expr load(const lang::Expr& e) {
    Node n = node(ExprOp::Load, e);
    n.index = static_cast<int>(reads_.size());
    reads_.emplace_back();
    Read r = access(e, /*write=*/false);
    for (const Subscript& sub : r.subscripts) n.args.push_back(sub.index);
    reads_[n.index] = std::move(r);
    return std::make_shared<const Node>(std::move(n));
  }

  // A tensor access: a read, or a scatter's write (never guarded, never pointwise; its own
  // element is not "proven" for free as a read of the written element is).
  Read access(const lang::Expr& e, bool write) {
    Read r;
    r.tensor = e.tensor;
    r.guarded = !write && access_of(e).guarded;
    r.loc = e.loc;
    r.text = lang::to_source(e);
    r.pointwise = !write && !st_.is_scatter() && e.args.size() == st_.num_lhs_vars();
    for (size_t d = 0; d < e.args.size(); ++d) {
      const lang::Expr& a = *e.args[d];
      Subscript sub;
      sub.index = expr(a);
      sub.kind = lang::reads_tensor(a) ? IndexKind::DataDependent : affine(a) ? IndexKind::Affine : IndexKind::NonAffine;
      sub.proven = (!write && e.tensor == st_.lhs_tensor) || proven_.count({&e, static_cast<int>(d)}) > 0;
      if (auto g = guarded_.find({&e, static_cast<int>(d)}); g != guarded_.end()) sub.guarded_precondition = g->second;
      if (a.kind == ExprKind::Ident && a.ref == Ref::Index) sub.var = var_slot(a.name);
      r.pointwise = r.pointwise && sub.var == static_cast<int>(d);
      r.subscripts.push_back(std::move(sub));
    }
    return r;
  }

  Expr expr(const lang::Expr& e) {
    if (e.ref == Ref::Tensor) return load(e);
    Node n = node(ExprOp::Const, e);
    switch (e.kind) {
      case ExprKind::IntLit: n.int_value = e.int_value; break;
      case ExprKind::FloatLit:
        n.is_float = true;
        n.float_value = e.float_value;
        break;
      case ExprKind::Dim:
        n.op = ExprOp::Dim;
        n.index = e.tensor;
        n.dim = static_cast<int>(e.int_value);
        break;
      case ExprKind::Ident:
        n.op = e.ref == Ref::Size ? ExprOp::Size : ExprOp::Var;
        n.index = e.ref == Ref::Size ? size_slot(e.name) : var_slot(e.name);
        break;
      case ExprKind::Unary: n.op = e.op == Tok::Not ? ExprOp::Not : ExprOp::Neg; break;
      case ExprKind::Binary:
        if (e.op == Tok::AndAnd || e.op == Tok::OrOr) {
          n.op = e.op == Tok::AndAnd ? ExprOp::And : ExprOp::Or;
        } else {
          n.op = ExprOp::Binary;
          std::optional<BinOp> op = lang::binop_of(e.op);
          if (!op) fail(TC_ERROR_INTERNAL, "IR: unexpected binary operator");
          n.binop = *op;
          n.operand_type = e.operand_type;
        }
        break;
      case ExprKind::Ternary: n.op = ExprOp::Select; break;
      case ExprKind::Ellipsis: fail(TC_ERROR_INTERNAL, "IR: '...' left in a def after instantiation");
      case ExprKind::Call:
        if (e.ref == Ref::Cast) {
          n.op = ExprOp::Cast;
        } else {
          n.op = ExprOp::Builtin;
          n.builtin = e.builtin;
        }
        break;
    }
    for (const auto& a : e.args) n.args.push_back(expr(*a));
    return std::make_shared<const Node>(std::move(n));
  }

  const lang::Def& def_;
  const lang::Stmt& st_;
  const infer::StmtRanges& ranges_;
  const std::set<std::pair<const lang::Expr*, int>>& proven_;
  const std::map<std::pair<const lang::Expr*, int>, int>& guarded_;
  std::vector<Read> reads_;
};

}  // namespace

std::shared_ptr<const Def> from_ast(const lang::Def& def, const infer::DefRanges& ranges,
                                    std::shared_ptr<const lang::SourceText> source) {
  auto out = std::make_shared<Def>();
  out->name = def.name;
  out->num_inputs = def.inputs.size();
  out->num_outputs = def.outputs.size();
  out->size_names = def.size_names;
  out->source = std::move(source);
  out->preconditions = ranges.preconditions;
  out->call_requirements = def.call_requirements;
  for (size_t t = 0; t < def.tensors.size(); ++t) {
    const lang::TensorDecl& d = def.tensors[t];
    Tensor x;
    x.name = d.name;
    x.role = d.role;
    x.type = d.type;
    x.ndim = d.ndim;
    x.param_index = d.param_index;
    x.declared = d.dims;
    x.extents = ranges.extents[t];
    x.loc = d.loc;
    out->tensors.push_back(std::move(x));
  }
  std::set<std::pair<const lang::Expr*, int>> proven;
  std::map<std::pair<const lang::Expr*, int>, int> guarded;  // -> its precondition
  for (size_t k = 0; k < ranges.preconditions.size(); ++k) {
    const auto& p = ranges.preconditions[k];
    if (p.guarded) guarded[{p.expr, p.dim}] = static_cast<int>(k);
    else proven.insert({p.expr, p.dim});
  }
  for (size_t s = 0; s < def.stmts.size(); ++s)
    out->stmts.push_back(StmtBuilder(def, def.stmts[s], ranges.stmts[s], proven, guarded).build());
  return out;
}

}  // namespace tc::ir
