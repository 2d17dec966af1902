// lower_expr.cpp — see lower_expr.h.
#include "backends/cpu/lower_expr.h"

#include <cmath>

#include "backends/cpu/values.h"
#include "support/exp_f32.h"
#include "support/error.h"

namespace tc::backends::cpu {

using Halide::Expr;
using ir::ExprOp;
using lang::BuiltinId;

namespace {

const char* libm_name(BuiltinId id) {
  switch (id) {
    case BuiltinId::Exp: return "exp";
    case BuiltinId::Exp2: return "exp2";
    case BuiltinId::Expm1: return "expm1";
    case BuiltinId::Log: return "log";
    case BuiltinId::Log2: return "log2";
    case BuiltinId::Log10: return "log10";
    case BuiltinId::Log1p: return "log1p";
    case BuiltinId::Cbrt: return "cbrt";
    case BuiltinId::Sin: return "sin";
    case BuiltinId::Cos: return "cos";
    case BuiltinId::Tan: return "tan";
    case BuiltinId::Asin: return "asin";
    case BuiltinId::Acos: return "acos";
    case BuiltinId::Atan: return "atan";
    case BuiltinId::Sinh: return "sinh";
    case BuiltinId::Cosh: return "cosh";
    case BuiltinId::Tanh: return "tanh";
    case BuiltinId::Asinh: return "asinh";
    case BuiltinId::Acosh: return "acosh";
    case BuiltinId::Atanh: return "atanh";
    case BuiltinId::Erf: return "erf";
    case BuiltinId::Erfc: return "erfc";
    case BuiltinId::Pow: return "pow";
    case BuiltinId::Atan2: return "atan2";
    case BuiltinId::Hypot: return "hypot";
    case BuiltinId::Fmod: return "fmod";
    default: return nullptr;
  }
}

// min/max with the reference's NaN rule: a NaN operand gives NaN.
Expr nan_propagating(BuiltinId id, const Expr& a, const Expr& b) {
  if (!a.type().is_float()) return integer_min_max(id == BuiltinId::Min, a, b);
  return Halide::select(Halide::is_nan(a), a, Halide::is_nan(b), b, ordered_min_max(id == BuiltinId::Min, a, b));
}


// TC's exp for float32 (support/exp_f32.h: the definition, whose float32 operations this
// evaluates in the same order, vectorised; libm's expf would be called one lane at a time).
Expr vector_exp_f32(const Expr& x_in) {
  namespace E = tc::exp_f32;
  Expr x = Halide::cast(Halide::Float(32), x_in);
  Expr xc = Halide::max(Halide::min(x, E::kHighest), E::kLowest);
  Expr n = Halide::floor(fused_multiply_add(xc, E::kLog2E, 0.5f));
  Expr r = fused_multiply_add(n, -E::kLn2High, xc);
  r = fused_multiply_add(n, -E::kLn2Low, r);
  Expr p = E::kPoly[0];
  for (size_t i = 1; i < sizeof E::kPoly / sizeof E::kPoly[0]; ++i) p = fused_multiply_add(p, r, E::kPoly[i]);
  Expr y = fused_multiply_add(p * r, r, r) + 1.0f;
  Expr ni = Halide::cast(Halide::Int(32), n);
  Expr n1 = ni >> 1, n2 = ni - n1;
  auto pow2 = [](const Expr& k) { return Halide::reinterpret(Halide::Float(32), (k + 127) << 23); };
  Expr result = y * pow2(n1) * pow2(n2);
  return Halide::select(Halide::is_nan(x), x, result);
}

// id(a...) with arguments of TC type t (float16 held as float32, values.h).
Expr builtin(BuiltinId id, const std::vector<Expr>& a, ScalarType t) {
  auto rounded = [&](const Expr& x) { return rounded_to(x, t); };
  if (id == BuiltinId::Exp && t != ScalarType::Float64) return rounded(vector_exp_f32(a[0]));
  if (id == BuiltinId::Fma) {  // llvm.fma, vectorised, where libm's fma went one lane at a time
    Halide::Type ft = t == ScalarType::Float64 ? Halide::Float(64) : Halide::Float(32);
    return rounded(fused_multiply_add(Halide::cast(ft, a[0]), Halide::cast(ft, a[1]), Halide::cast(ft, a[2])));
  }
  if (const char* name = libm_name(id)) return libm(name, a, t);
  switch (id) {
    case BuiltinId::Sqrt: return rounded(Halide::sqrt(a[0]));
    case BuiltinId::Rsqrt: return rounded(Halide::Internal::make_one(a[0].type()) / Halide::sqrt(a[0]));
    // Exact: the result of these is a value of the argument's type.
    case BuiltinId::Fabs: return Halide::abs(a[0]);
    case BuiltinId::Floor: return Halide::floor(a[0]);
    case BuiltinId::Ceil: return Halide::ceil(a[0]);
    case BuiltinId::Round: return Halide::round(a[0]);  // ties to even, like nearbyint
    case BuiltinId::Trunc: return Halide::trunc(a[0]);
    // fmin/fmax return the other operand when one is NaN: Halide's min/max on floats do not
    // promise either rule, so both are spelled out.
    case BuiltinId::Fmax: return Halide::select(Halide::is_nan(a[0]), a[1], Halide::is_nan(a[1]), a[0], Halide::max(a[0], a[1]));
    case BuiltinId::Fmin: return Halide::select(Halide::is_nan(a[0]), a[1], Halide::is_nan(a[1]), a[0], Halide::min(a[0], a[1]));
    case BuiltinId::Min:
    case BuiltinId::Max: return nan_propagating(id, a[0], a[1]);
    // A NaN's sign counts as positive (the reference's rule: the sign of a computed NaN differs
    // between libm, LLVM and CUDA).
    case BuiltinId::Copysign: return Halide::select(Halide::is_nan(a[1]), Halide::abs(a[0]), libm("copysign", a, t));
    case BuiltinId::Abs:
      if (t == ScalarType::Bool || kind(t) == ScalarKind::Unsigned) return a[0];
      if (is_float(t)) return Halide::abs(a[0]);
      return Halide::cast(a[0].type(), Halide::abs(a[0]));  // Halide's abs of a signed int is unsigned
    default: break;
  }
  fail(TC_ERROR_INTERNAL, "cpu backend: builtin without a lowering");
}

Expr size_value(const ir::Node& e, const ir::BoundDef& b) {
  int64_t v = e.op == ExprOp::Dim ? b.tensors[e.index].shape[e.dim] : b.size_values[e.index];
  return Halide::Expr(static_cast<int32_t>(v));
}

Expr constant(const ir::Node& e) {
  if (e.is_float) return literal(e.float_value, e.type);
  return literal(e.int_value, e.type);
}

Expr both(const Expr& guard, const Expr& c) { return guard.defined() ? (guard && c) : c; }

class Lowerer {
 public:
  explicit Lowerer(const ExprContext& ctx) : ctx_(ctx) {}

  // `guard`: the condition under which e is evaluated (undefined: always).
  Expr lower(const ir::Node& e, const Expr& guard) {
    switch (e.op) {
      case ExprOp::Const: return constant(e);
      case ExprOp::Size:
      case ExprOp::Dim: return convert(size_value(e, *ctx_.bound), ScalarType::Int32, e.type);
      case ExprOp::Var: return convert(index_value(ctx_.vars[e.index]), ScalarType::Int32, e.type);
      case ExprOp::Load: return load(e, guard);
      case ExprOp::Not: return !convert(lower(*e.args[0], guard), e.args[0]->type, ScalarType::Bool);
      case ExprOp::Neg: return negate(convert(lower(*e.args[0], guard), e.args[0]->type, e.type), native());
      case ExprOp::And:
      case ExprOp::Or: return logical(e, guard);
      case ExprOp::Binary: return binary(e, guard);
      case ExprOp::Select: {
        Expr c = convert(lower(*e.args[0], guard), e.args[0]->type, ScalarType::Bool);
        Expr a = convert(lower(*e.args[1], both(guard, c)), e.args[1]->type, e.type);
        Expr b = convert(lower(*e.args[2], both(guard, !c)), e.args[2]->type, e.type);
        return Halide::select(c, a, b);
      }
      case ExprOp::Cast: return convert(lower(*e.args[0], guard), e.args[0]->type, e.type);
      case ExprOp::Builtin: {
        std::vector<Expr> args;
        for (const auto& a : e.args) args.push_back(convert(lower(*a, guard), a->type, e.type));
        return builtin(e.builtin, args, e.type);
      }
    }
    fail(TC_ERROR_INTERNAL, "cpu backend: unknown IR node");
  }

 private:
  Expr logical(const ir::Node& e, const Expr& guard) {
    bool is_and = e.op == ExprOp::And;
    Expr a = convert(lower(*e.args[0], guard), e.args[0]->type, ScalarType::Bool);
    Expr b = convert(lower(*e.args[1], both(guard, is_and ? a : !a)), e.args[1]->type, ScalarType::Bool);
    return is_and ? (a && b) : (a || b);
  }

  Expr binary(const ir::Node& e, const Expr& guard) {
    ScalarType t = e.operand_type;
    // bool operands of arithmetic compute in int32, as the reference does.
    ScalarType work = (t == ScalarType::Bool && !ir::is_comparison(e.binop)) ? ScalarType::Int32 : t;
    Expr a = convert(convert(lower(*e.args[0], guard), e.args[0]->type, t), t, work);
    Expr b = convert(convert(lower(*e.args[1], guard), e.args[1]->type, t), t, work);
    Expr r = arithmetic(e.binop, a, b, work, native());
    ScalarType produced = ir::is_comparison(e.binop) ? ScalarType::Bool : work;
    return convert(r, produced, e.type);
  }

  // An index read as a value is opaque (values.h): Halide 14 splits the loop over j where j meets
  // the value it is compared with (`max(j, A(i))`, `A(i) <= j ? x : y`), computing the point from
  // that value in int32, which wraps near the int32 limits (the kernel wrote out of bounds).
  // In a subscript the index stays visible to Halide's bounds inference.
  Expr index_value(const Expr& var) const { return place_ == Place::Value ? opaque(var) : var; }

  // A subscript binding proved in bounds is lowered as native index arithmetic, which Halide's
  // bounds inference understands (it cannot overflow).
  Expr load(const ir::Node& e, const Expr& guard) {
    const ir::Read& read = ctx_.stmt->reads[e.index];
    std::vector<Expr> index;
    for (size_t d = 0; d < e.args.size(); ++d) {
      const Place outer = place_;
      place_ = ctx_.bound->proven(read.subscripts[d]) ? Place::ProvenSubscript : Place::Subscript;
      index.push_back(lower(*e.args[d], guard));
      place_ = outer;
    }
    return ctx_.load(e.index, index, guard);
  }

  // Where the expression being lowered stands: native() is index arithmetic that cannot overflow.
  enum class Place { Value, Subscript, ProvenSubscript };
  bool native() const { return place_ == Place::ProvenSubscript; }

  const ExprContext& ctx_;
  Place place_ = Place::Value;
};

}  // namespace

Expr lower_expr(const ir::Node& e, const ExprContext& ctx) {
  return Lowerer(ctx).lower(e, Expr());
}

}  // namespace tc::backends::cpu
