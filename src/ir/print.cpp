// print.cpp — see print.h. Expressions print as s-expressions with their types:
//   (+ float32 a b)          a binary operation in its operand type (a comparison gives bool)
//   (-> float32 x)           a conversion (Cast), or any node whose type differs from the
//                            operation's natural result, wrapped around it
//   t0[v0, (+ int32 v2 1)]   a read
// A statement prints its write as `t0(v0, v1)` (the written element's variables), or for a
// scatter as `t0[...]` with its subscripts, like a read: so two scatters that differ only in
// a written subscript have different canonical texts (cache keys).
#include "ir/print.h"

#include <cstdio>
#include <map>

#include "ir/describe.h"
#include "support/error.h"

namespace tc::ir {
namespace {

const char* role_name(TensorRole r) {
  switch (r) {
    case TensorRole::Input: return "input";
    case TensorRole::Output: return "output";
    default: return "temporary";
  }
}

const char* reduce_text(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "+=";
    case ReduceOp::Product: return "*=";
    case ReduceOp::Min: return "min=";
    case ReduceOp::Max: return "max=";
    default: return "=";
  }
}

std::string hex_float(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}

// Names: the program's, or positions (bound, and the family text). Extents and ranges: numbers
// (bound) or symbolic in the sizes' names.
class Printer {
 public:
  Printer(const Def& def, const BoundDef* bound, bool positional) : def_(def), bound_(bound), positional_(positional) {
    if (positional_)
      for (size_t s = 0; s < def_.size_names.size(); ++s) sizes_[def_.size_names[s]] = size_name(static_cast<int>(s));
  }

  std::string run() {
    std::string out = bound_ ? "tc-ir 1 bound\n" : positional_ ? "tc-ir 1 family\n" : "tc-ir 1 def " + def_.name + "\n";
    for (size_t s = 0; s < def_.size_names.size(); ++s)
      out += "size " + size_name(static_cast<int>(s)) +
             (bound_ ? " = " + std::to_string(bound_->size_values[s]) : std::string()) + "\n";
    for (size_t t = 0; t < def_.tensors.size(); ++t) out += tensor_line(static_cast<int>(t));
    for (const Stmt& s : def_.stmts) out += stmt_line(s);
    return out;
  }

 private:
  std::string tensor_name(int t) const { return positional_ ? "t" + std::to_string(t) : def_.tensors[t].name; }
  std::string size_name(int s) const { return positional_ ? "s" + std::to_string(s) : def_.size_names[s]; }
  std::string var_name(const Stmt& st, int v) const { return positional_ ? "v" + std::to_string(v) : st.vars[v]; }
  std::string symbolic(const infer::SymExpr& e) const { return extent_text(positional_ ? e.renamed(sizes_) : e); }

  std::string tensor_line(int t) const {
    const Tensor& x = def_.tensors[t];
    std::string out = std::string(role_name(x.role)) + " " + tensor_name(t) + ": " + name(x.type) + "(";
    for (int d = 0; d < x.ndim; ++d)
      out += (d ? ", " : "") + (bound_ ? std::to_string(bound_->tensors[t].shape[d]) : symbolic(x.extents[d]));
    return out + ")\n";
  }

  std::string stmt_line(const Stmt& st) {
    size_t si = static_cast<size_t>(&st - def_.stmts.data());
    std::string out = tensor_name(st.lhs_tensor);
    if (st.scatter) {
      out += "[";
      for (size_t d = 0; d < st.write.subscripts.size(); ++d) out += (d ? ", " : "") + expr(*st.write.subscripts[d].index, st);
      out += "]";
    } else {
      out += "(";
      for (size_t v = 0; v < st.num_lhs; ++v) out += (v ? ", " : "") + var_name(st, static_cast<int>(v));
      out += ")";
    }
    out += " " + std::string(reduce_text(st.reduce)) + (st.init ? "!" : "") + " {";
    for (size_t v = 0; v < st.vars.size(); ++v) {
      std::string lo, hi;
      if (bound_) {
        lo = std::to_string(bound_->ranges[si][v].first);
        hi = std::to_string(bound_->ranges[si][v].second);
      } else {
        lo = symbolic(st.domain[v].lo);
        hi = symbolic(st.domain[v].hi);
      }
      out += (v ? ", " : "") + var_name(st, static_cast<int>(v)) + " in " + lo + ":" + hi;
    }
    return out + "} " + expr(*st.rhs, st) + "\n";
  }

  std::string args(const Node& e, const Stmt& st) {
    std::string out;
    for (const auto& a : e.args) out += " " + expr(*a, st);
    return out;
  }

  std::string expr(const Node& e, const Stmt& st) {
    std::string t = name(e.type);
    switch (e.op) {
      case ExprOp::Const:
        return e.is_float ? hex_float(e.float_value) + ":" + t : std::to_string(e.int_value) + ":" + t;
      case ExprOp::Var: return var_name(st, e.index);
      case ExprOp::Size: return size_name(e.index);
      case ExprOp::Dim: return tensor_name(e.index) + "." + std::to_string(e.dim);
      case ExprOp::Load: {
        std::string out = tensor_name(st.reads[e.index].tensor) + "[";
        for (size_t d = 0; d < e.args.size(); ++d) out += (d ? ", " : "") + expr(*e.args[d], st);
        return out + "]";
      }
      case ExprOp::Neg: return "(neg " + t + args(e, st) + ")";
      case ExprOp::Not: return "(!" + args(e, st) + ")";
      case ExprOp::And: return "(&&" + args(e, st) + ")";
      case ExprOp::Or: return "(||" + args(e, st) + ")";
      case ExprOp::Binary: {
        std::string op = std::string("(") + spelling(e.binop) + " " + name(e.operand_type) + args(e, st) + ")";
        ScalarType natural = is_comparison(e.binop) ? ScalarType::Bool : e.operand_type;
        return natural == e.type ? op : "(-> " + t + " " + op + ")";
      }
      case ExprOp::Select: return "(?: " + t + args(e, st) + ")";
      case ExprOp::Cast: return "(-> " + t + args(e, st) + ")";
      case ExprOp::Builtin: return "(" + std::string(lang::builtin(e.builtin).name) + " " + t + args(e, st) + ")";
    }
    fail(TC_ERROR_INTERNAL, "IR printer: unknown node");
  }

  const Def& def_;
  const BoundDef* bound_;
  bool positional_;
  std::map<std::string, std::string> sizes_;  // positional: the size names' positional names
};

}  // namespace

std::string to_text(const Def& def) { return Printer(def, nullptr, false).run(); }

std::string canonical_text(const BoundDef& bound) { return Printer(bound.def(), &bound, true).run(); }

std::string family_text(const Def& def) { return Printer(def, nullptr, true).run(); }

}  // namespace tc::ir
