// lower_expr.cpp — see lower_expr.h.
#include "backends/cpu/lower_expr.h"

#include <cmath>

#include "infer/to_halide.h"
#include "support/error.h"

namespace tc::backends::cpu {

using Halide::Expr;
using lang::BuiltinId;
using lang::ExprKind;
using lang::Ref;
using lang::Tok;

Halide::Type halide_type(ScalarType t) {
  switch (kind(t)) {
    case ScalarKind::Bool: return Halide::Bool();
    case ScalarKind::Signed: return Halide::Int(bits(t));
    case ScalarKind::Unsigned: return Halide::UInt(bits(t));
    case ScalarKind::Float: return Halide::Float(bits(t));
  }
  return Halide::Int(32);
}

namespace {

Expr truthy(const Expr& x) { return x.type().is_bool() ? x : x != Halide::Internal::make_zero(x.type()); }

Expr float_to_integer(const Expr& x, ScalarType to) {
  Expr wide = Halide::cast(Halide::Float(64), x);  // float16 has no saturating_cast of its own
  return Halide::select(Halide::is_nan(wide), Halide::Internal::make_zero(halide_type(to)),
                        Halide::saturating_cast(halide_type(to), Halide::trunc(wide)));
}

}  // namespace

Expr convert(Expr x, ScalarType from, ScalarType to) {
  if (from == to) return x;
  if (to == ScalarType::Bool) return truthy(x);
  if (is_float(from) && !is_float(to)) return float_to_integer(x, to);
  return Halide::cast(halide_type(to), x);
}

namespace {

// A libm function called from the generated code, in the precision of `t`: float32 and
// float16 call the float version (float16 rounds the result), float64 the double one.
Expr libm(const char* name, const std::vector<Expr>& args, ScalarType t) {
  bool dbl = t == ScalarType::Float64;
  Halide::Type ft = dbl ? Halide::Float(64) : Halide::Float(32);
  std::vector<Expr> a;
  for (const Expr& x : args) a.push_back(Halide::cast(ft, x));
  Expr r = Halide::Internal::Call::make(ft, dbl ? name : std::string(name) + "f", a, Halide::Internal::Call::PureExtern);
  return Halide::cast(halide_type(t), r);
}

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
    case BuiltinId::Copysign: return "copysign";
    case BuiltinId::Fma: return "fma";
    default: return nullptr;
  }
}

// min/max with the reference's NaN rule: a NaN operand gives NaN.
Expr nan_propagating(BuiltinId id, const Expr& a, const Expr& b) {
  Expr m = id == BuiltinId::Min ? Halide::min(a, b) : Halide::max(a, b);
  if (!a.type().is_float()) return m;
  return Halide::select(Halide::is_nan(a), a, Halide::is_nan(b), b, m);
}

// exp for float32 that vectorises (libm's expf is called one lane at a time): Cephes' expf,
// exp(x) = 2^n * exp(r) with |r| <= ln2/2 and a degree-6 polynomial for exp(r), within about
// 1 ulp of expf. 2^n is applied as two factors so that results that overflow to inf or
// underflow through the subnormals come out as IEEE arithmetic makes them.
Expr vector_exp_f32(const Expr& x_in) {
  Expr x = Halide::cast(Halide::Float(32), x_in);
  Expr xc = Halide::clamp(x, -104.0f, 89.0f);
  Expr n = Halide::floor(xc * 1.44269504088896341f + 0.5f);
  Expr r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  Expr p = 1.9875691500e-4f;
  for (float c : {1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f}) p = p * r + c;
  Expr y = p * r * r + r + 1.0f;
  Expr ni = Halide::cast(Halide::Int(32), n);
  Expr n1 = ni >> 1, n2 = ni - n1;
  auto pow2 = [](const Expr& k) { return Halide::reinterpret(Halide::Float(32), (k + 127) << 23); };
  Expr result = y * pow2(n1) * pow2(n2);
  return Halide::select(Halide::is_nan(x), x, result);
}

Expr builtin(BuiltinId id, const std::vector<Expr>& a, ScalarType t) {
  if (id == BuiltinId::Exp && t != ScalarType::Float64) return Halide::cast(halide_type(t), vector_exp_f32(a[0]));
  if (const char* name = libm_name(id)) return libm(name, a, t);
  Halide::Type ht = halide_type(t);
  switch (id) {
    case BuiltinId::Sqrt: return Halide::sqrt(a[0]);
    case BuiltinId::Rsqrt: return Halide::Internal::make_one(ht) / Halide::sqrt(a[0]);
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
    case BuiltinId::Abs:
      if (t == ScalarType::Bool || kind(t) == ScalarKind::Unsigned) return a[0];
      return Halide::cast(ht, Halide::abs(a[0]));  // Halide's abs of a signed int is unsigned
    default: break;
  }
  fail(TC_ERROR_INTERNAL, "cpu backend: builtin without a lowering");
}

Expr size_value(const lang::Expr& e, const ir::BoundDef& b) {
  int64_t v = e.kind == ExprKind::Dim ? b.tensors[e.tensor].shape[e.int_value] : b.sizes.at(e.name);
  return Halide::Expr(static_cast<int32_t>(v));
}

Expr constant(const lang::Expr& e) {
  Halide::Type t = halide_type(e.type);
  if (e.kind == ExprKind::FloatLit) return Halide::Internal::make_const(t, e.float_value);
  if (is_float(e.type)) return Halide::Internal::make_const(t, static_cast<double>(e.int_value));
  if (e.type == ScalarType::Bool) return Halide::Internal::make_bool(e.int_value != 0);
  return Halide::Internal::make_const(t, e.int_value);
}

class Lowerer {
 public:
  explicit Lowerer(const ExprContext& ctx) : ctx_(ctx) {}

  // `guarded`: inside a ?: branch or the right operand of && / ||.
  Expr lower(const lang::Expr& e, bool guarded) {
    switch (e.kind) {
      case ExprKind::IntLit:
      case ExprKind::FloatLit: return constant(e);
      case ExprKind::Dim: return convert(size_value(e, *ctx_.bound), ScalarType::Int32, e.type);
      case ExprKind::Ident:
        if (e.ref == Ref::Size) return convert(size_value(e, *ctx_.bound), ScalarType::Int32, e.type);
        if (e.ref == Ref::Tensor) return ctx_.load(e, {}, guarded);
        return index_var(e);
      case ExprKind::Unary: {
        Expr x = lower(*e.args[0], guarded);
        if (e.op == Tok::Not) return !truthy(x);
        return -convert(x, e.args[0]->type, e.type);
      }
      case ExprKind::Binary: return binary(e, guarded);
      case ExprKind::Ternary: {
        Expr c = truthy(lower(*e.args[0], guarded));
        Expr a = convert(lower(*e.args[1], true), e.args[1]->type, e.type);
        Expr b = convert(lower(*e.args[2], true), e.args[2]->type, e.type);
        return Halide::select(c, a, b);
      }
      case ExprKind::Call: return call(e, guarded);
    }
    fail(TC_ERROR_INTERNAL, "cpu backend: unknown expression kind");
  }

 private:
  Expr index_var(const lang::Expr& e) {
    const auto& names = *ctx_.var_names;
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == e.name) return convert(ctx_.vars[i], ScalarType::Int32, e.type);
    fail(TC_ERROR_INTERNAL, "cpu backend: unbound index variable '" + e.name + "'");
  }

  Expr binary(const lang::Expr& e, bool guarded) {
    if (e.op == Tok::AndAnd || e.op == Tok::OrOr) {
      Expr a = truthy(lower(*e.args[0], guarded));
      Expr b = truthy(lower(*e.args[1], true));
      return e.op == Tok::AndAnd ? (a && b) : (a || b);
    }
    ScalarType t = e.operand_type;
    // bool operands of arithmetic compute in int32, as the reference does.
    ScalarType work = (t == ScalarType::Bool && !lang::is_comparison(e.op)) ? ScalarType::Int32 : t;
    Expr a = convert(convert(lower(*e.args[0], guarded), e.args[0]->type, t), t, work);
    Expr b = convert(convert(lower(*e.args[1], guarded), e.args[1]->type, t), t, work);
    Expr r = infer::binary_op(e.op, a, b);
    ScalarType produced = lang::is_comparison(e.op) ? ScalarType::Bool : work;
    return convert(r, produced, e.type);
  }

  Expr call(const lang::Expr& e, bool guarded) {
    if (e.ref == Ref::Tensor) {
      std::vector<Expr> index;
      for (const auto& a : e.args) index.push_back(lower(*a, guarded));
      return ctx_.load(e, index, guarded);
    }
    if (e.ref == Ref::Cast) return convert(lower(*e.args[0], guarded), e.args[0]->type, e.type);
    std::vector<Expr> args;
    for (const auto& a : e.args) args.push_back(convert(lower(*a, guarded), a->type, e.type));
    return builtin(e.builtin, args, e.type);
  }

 private:
  const ExprContext& ctx_;
};

}  // namespace

Expr lower_expr(const lang::Expr& e, const ExprContext& ctx) {
  return Lowerer(ctx).lower(e, false);
}

}  // namespace tc::backends::cpu
