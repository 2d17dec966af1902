// expressions.cpp — the IR's expressions as C: loads (checked or clamped where unproven, from shared
// memory where a copy holds the tensor), builtins, offsets, reduction identities.
#include "backends/cuda/print/printer.h"

#include <cmath>

#include "backends/cuda/isl_util.h"
#include "support/error.h"

namespace tc::backends::cuda::print {


std::string Printer::identity(ir::ReduceOp op, ScalarType t) const {
  bool f = is_float(t);
  switch (op) {
    case ir::ReduceOp::Sum: return zero_of(t);
    case ir::ReduceOp::Product: return f ? float_literal(1, t) : int_literal(1, t);
    case ir::ReduceOp::Min:
      if (f) return float_literal(INFINITY, t);
      if (t == ScalarType::Bool) return "true";
      return kind(t) == ScalarKind::Unsigned ? "((" + c_type(t) + ")~0ull)"
                                             : int_literal(static_cast<int64_t>((uint64_t{1} << (bits(t) - 1)) - 1), t);
    case ir::ReduceOp::Max:
      if (f) return float_literal(-INFINITY, t);
      if (kind(t) == ScalarKind::Unsigned || t == ScalarType::Bool) return int_literal(0, t);
      return int_literal(static_cast<int64_t>(uint64_t{1} << (bits(t) - 1)), t);
    case ir::ReduceOp::None: break;
  }
  return int_literal(0, t);
}

// The element offset of tensor t at these subscripts (index expressions), row-major.
std::string Printer::offset(size_t t, const std::vector<std::string>& subs) const {
  const auto& shape = b_.tensors[t].shape;
  if (subs.empty()) return "0";
  std::string out;
  int64_t stride = 1;
  for (size_t d = subs.size(); d-- > 0;) {
    std::string term = stride == 1 ? "(" + subs[d] + ")" : "(" + subs[d] + ") * " + index_literal(stride);
    out = out.empty() ? term : term + " + " + out;
    stride *= shape[d];
  }
  return out;
}

std::string Printer::expr(const ir::Node& e) {
  auto arg = [&](size_t i, ScalarType to) { return convert(expr(*e.args[i]), e.args[i]->type, to); };
  switch (e.op) {
    case ir::ExprOp::Const:
      if (e.is_float && !is_float(e.type))  // a float literal settled into an integer or bool type: converted as a cast
        return convert(float_literal(e.float_value, ScalarType::Float64), ScalarType::Float64, e.type);
      // An integer literal settled into a float type: converted as a cast too (to float16: to
      // float, then to half — 2147483647 is inf there; printed as a float it was finite:
      // differential fuzzer, seed 111071554, program 132).
      if (!e.is_float && is_float(e.type))
        return convert(int_literal(e.int_value, ScalarType::Int64), ScalarType::Int64, e.type);
      return e.is_float ? float_literal(e.float_value, e.type) : int_literal(e.int_value, e.type);
    case ir::ExprOp::Var: return "((int)i" + std::to_string(e.index) + ")";
    case ir::ExprOp::Size: return int_literal(b_.size_values[static_cast<size_t>(e.index)], e.type);
    case ir::ExprOp::Dim: return int_literal(b_.tensors[static_cast<size_t>(e.index)].shape[static_cast<size_t>(e.dim)], e.type);
    case ir::ExprOp::Load: return load(e);
    case ir::ExprOp::Neg: return "tc_neg(" + arg(0, e.type) + ")";
    case ir::ExprOp::Not: return "(!" + arg(0, ScalarType::Bool) + ")";
    case ir::ExprOp::And: return "(" + arg(0, ScalarType::Bool) + " && " + arg(1, ScalarType::Bool) + ")";
    case ir::ExprOp::Or: return "(" + arg(0, ScalarType::Bool) + " || " + arg(1, ScalarType::Bool) + ")";
    case ir::ExprOp::Select:
      return "(" + arg(0, ScalarType::Bool) + " ? " + arg(1, e.type) + " : " + arg(2, e.type) + ")";
    case ir::ExprOp::Cast: return arg(0, e.type);
    case ir::ExprOp::Binary: {
      std::string a = arg(0, e.operand_type), b = arg(1, e.operand_type);
      if (is_comparison(e.binop)) return "(" + a + " " + spelling(e.binop) + " " + b + ")";
      const char* f = e.binop == ir::BinOp::Add ? "tc_add" : e.binop == ir::BinOp::Sub ? "tc_sub"
                    : e.binop == ir::BinOp::Mul ? "tc_mul" : e.binop == ir::BinOp::Div ? "tc_div" : "tc_mod";
      return convert(rounded(std::string(f) + "(" + a + ", " + b + ")", e.operand_type), e.operand_type, e.type);
    }
    case ir::ExprOp::Builtin: return builtin(e);
  }
  return "0";
}

std::string Printer::builtin(const ir::Node& e) {
  using B = lang::BuiltinId;
  std::string args;
  for (size_t i = 0; i < e.args.size(); ++i)
    args += (i ? ", " : "") + convert(expr(*e.args[i]), e.args[i]->type, e.type);
  switch (e.builtin) {
    case B::Min: return "tc_min(" + args + ")";
    case B::Max: return "tc_max(" + args + ")";
    case B::Abs: return "tc_abs(" + args + ")";
    case B::Rsqrt: return rounded("tc_rsqrt(" + args + ")", e.type);
    case B::Copysign: return rounded("tc_copysign(" + args + ")", e.type);
    case B::Exp:
      if (e.type != ScalarType::Float64) return rounded("tc_expf(" + args + ")", e.type);
      break;
    default: break;
  }
  std::string name = e.builtin == B::Round ? "nearbyint" : lang::builtin(e.builtin).name;
  bool single = e.type == ScalarType::Float32 || is_float16_like(e.type);
  return rounded(name + (single ? "f" : "") + "(" + args + ")", e.type);
}

std::string Printer::load(const ir::Node& e) {
  const ir::Read& r = stmt_->reads[static_cast<size_t>(e.index)];
  const auto& shape = b_.tensors[static_cast<size_t>(r.tensor)].shape;
  const ir::Tensor& t = b_.def().tensors[static_cast<size_t>(r.tensor)];
  bool empty = false;  // an empty tensor: nothing to load; checked subscripts still report
  for (int64_t extent : shape) empty = empty || extent == 0;
  std::vector<std::string> subs;
  for (size_t d = 0; d < e.args.size(); ++d) {
    // Unproven subscripts are checked or clamped in 64 bits (an int64 gather's index may not fit
    // 32), their results (inside the tensor) and proven ones are index-typed.
    std::string s = (b_.proven(r.subscripts[d]) ? "(" + idx_ + ")" : std::string("(long long)")) + expr(*e.args[d]);
    std::string extent = std::to_string(shape[d]) + "ll";
    if (!b_.proven(r.subscripts[d])) {  // checked and clamped, or clamped
      if (checked_) {
        s = "(" + idx_ + ")tc_checked(" + s + ", " + extent + ", tc_fault, " + std::to_string(out_.checks.size()) +
            "ull, tc_at, " + std::to_string(stmt_->vars.size()) + ")";
        out_.checks.push_back({stmt_index_, static_cast<size_t>(e.index), d, false});
      } else {
        s = "(" + idx_ + ")tc_clamp(" + s + ", " + extent + ")";
      }
    }
    subs.push_back(s);
  }
  if (empty) {  // the checks for their record (every index of an empty dimension is out of bounds), then 0
    std::string checks;
    for (size_t d = 0; d < subs.size(); ++d)
      if (!b_.proven(r.subscripts[d]) && checked_) checks += "(void)" + subs[d] + ", ";
    return checks.empty() ? zero_of(t.type) : "(" + checks + zero_of(t.type) + ")";
  }
  if (const SharedArray* a = shared_copy(static_cast<size_t>(r.tensor))) {  // its proven subscripts, in the box
    std::string at;
    for (size_t k = 0; k < subs.size(); ++k) {
      int64_t stride = a->stride(k);
      std::string term = "(" + subs[k] + " - " + offset_name(*a, k) + ")";
      at += (at.empty() ? "" : " + ") + (stride == 1 ? term : term + " * " + index_literal(stride));
    }
    return load_as(a->name + "[" + (at.empty() ? "0" : at) + "]", t.type);
  }
  return load_as(param(t) + "[" + offset(static_cast<size_t>(r.tensor), subs) + "]", t.type);
}

}  // namespace tc::backends::cuda::print
