// scalar.cpp — see scalar.h. Integer '/' and '%' are support/int_math.h's (Euclidean). Float '%'
// is NumPy's floored modulo: fmod (exact) moved into the divisor's sign, a zero result with
// the divisor's sign, NaN for a zero divisor. Float to integer conversion truncates toward zero
// and saturates (NaN gives 0). Integer to float conversion rounds once (float16 and bfloat16:
// to float32, then to the 16-bit type). No input makes the oracle itself undefined (it runs under UBSan).
#include "backends/reference/scalar.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "support/exp_f32.h"
#include "support/half.h"
#include "support/int_math.h"

namespace tc::backends::reference {
namespace {

int64_t wrap_signed(int64_t x, int bits) {
  if (bits == 64) return x;
  uint64_t m = (uint64_t{1} << bits) - 1;
  uint64_t u = static_cast<uint64_t>(x) & m;
  uint64_t sign = uint64_t{1} << (bits - 1);
  return static_cast<int64_t>((u ^ sign) - sign);
}

uint64_t wrap_unsigned(uint64_t x, int bits) { return bits == 64 ? x : x & ((uint64_t{1} << bits) - 1); }

// Saturating float -> integer conversion (truncating toward zero).
int64_t float_to_signed(double x, int bits) {
  if (std::isnan(x)) return 0;
  double hi = std::ldexp(1.0, bits - 1);
  if (x >= hi) return bits == 64 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(hi) - 1;
  if (x <= -hi) return bits == 64 ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(hi);
  return static_cast<int64_t>(std::trunc(x));
}

uint64_t float_to_unsigned(double x, int bits) {
  if (std::isnan(x) || x <= 0) return 0;
  double hi = std::ldexp(1.0, bits);
  if (x >= hi) return bits == 64 ? std::numeric_limits<uint64_t>::max() : static_cast<uint64_t>(hi) - 1;
  return static_cast<uint64_t>(std::trunc(x));
}

template <typename T>
Scalar compare(ir::BinOp op, T a, T b) {
  bool r = false;
  switch (op) {
    case ir::BinOp::Eq: r = a == b; break;
    case ir::BinOp::Ne: r = a != b; break;
    case ir::BinOp::Lt: r = a < b; break;
    case ir::BinOp::Le: r = a <= b; break;
    case ir::BinOp::Gt: r = a > b; break;
    case ir::BinOp::Ge: r = a >= b; break;
    default: break;
  }
  Scalar s{};
  s.i = r;
  return s;
}

template <typename F>
F floored_modulo(F a, F b) {
  F r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) return r + b;
  if (r == 0) return b < 0 ? -F(0) : F(0);
  return r;
}

Scalar float_binary(ir::BinOp op, double a, double b, ScalarType t) {
  switch (op) {
    case ir::BinOp::Add: return from_double(a + b, t);
    case ir::BinOp::Sub: return from_double(a - b, t);
    case ir::BinOp::Mul: return from_double(a * b, t);
    case ir::BinOp::Div: return from_double(a / b, t);
    case ir::BinOp::Mod:  // in the type's precision (float16 in float32, then rounded)
      if (t == ScalarType::Float64) return from_double(floored_modulo(a, b), t);
      return from_double(floored_modulo(static_cast<float>(a), static_cast<float>(b)), t);
    default: return compare(op, a, b);
  }
}

Scalar signed_binary(ir::BinOp op, int64_t a, int64_t b, ScalarType t) {
  auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (op) {
    case ir::BinOp::Add: return from_int(static_cast<int64_t>(ua + ub), t);
    case ir::BinOp::Sub: return from_int(static_cast<int64_t>(ua - ub), t);
    case ir::BinOp::Mul: return from_int(static_cast<int64_t>(ua * ub), t);
    case ir::BinOp::Div: return from_int(euclid_div(a, b), t);
    case ir::BinOp::Mod: return from_int(euclid_mod(a, b), t);
    default: return compare(op, a, b);
  }
}

Scalar unsigned_binary(ir::BinOp op, uint64_t a, uint64_t b, ScalarType t) {
  Scalar s{};
  switch (op) {
    case ir::BinOp::Add: s.u = a + b; break;
    case ir::BinOp::Sub: s.u = a - b; break;
    case ir::BinOp::Mul: s.u = a * b; break;
    case ir::BinOp::Div: s.u = b ? a / b : 0; break;
    case ir::BinOp::Mod: s.u = b ? a % b : 0; break;
    default: return compare(op, a, b);
  }
  s.u = wrap_unsigned(s.u, bits(t));
  return s;
}

}  // namespace

Scalar from_double(double x, ScalarType t) {
  Scalar s{};
  switch (kind(t)) {
    case ScalarKind::Float: s.f = rounded_to_type(x, t); break;
    case ScalarKind::Bool: s.i = x != 0; break;
    case ScalarKind::Signed: s.i = float_to_signed(x, bits(t)); break;
    case ScalarKind::Unsigned: s.u = float_to_unsigned(x, bits(t)); break;
  }
  return s;
}

// An integer as float type t, rounded once (float16: once to float32, then to half).
template <typename I>
double int_to_float(I x, ScalarType t) {
  if (t == ScalarType::Float64) return static_cast<double>(x);
  return rounded_to_type(static_cast<float>(x), t);
}

Scalar from_int(int64_t x, ScalarType t) {
  Scalar s{};
  switch (kind(t)) {
    case ScalarKind::Float: s.f = int_to_float(x, t); break;
    case ScalarKind::Bool: s.i = x != 0; break;
    case ScalarKind::Signed: s.i = wrap_signed(x, bits(t)); break;
    case ScalarKind::Unsigned: s.u = wrap_unsigned(static_cast<uint64_t>(x), bits(t)); break;
  }
  return s;
}

double to_double(Scalar v, ScalarType t) {
  switch (kind(t)) {
    case ScalarKind::Float: return v.f;
    case ScalarKind::Unsigned: return static_cast<double>(v.u);
    default: return static_cast<double>(v.i);
  }
}

bool truthy(Scalar v, ScalarType t) {
  switch (kind(t)) {
    case ScalarKind::Float: return v.f != 0;
    case ScalarKind::Unsigned: return v.u != 0;
    default: return v.i != 0;
  }
}

Scalar convert(Scalar v, ScalarType from, ScalarType to) {
  if (from == to) return v;
  switch (kind(from)) {
    case ScalarKind::Float: return from_double(v.f, to);
    case ScalarKind::Unsigned:
      if (is_float(to)) return Scalar{.f = int_to_float(v.u, to)};
      return from_int(static_cast<int64_t>(v.u), to);
    default: return from_int(v.i, to);
  }
}

Scalar binary(ir::BinOp op, Scalar a, Scalar b, ScalarType t) {
  switch (kind(t)) {
    case ScalarKind::Float: return float_binary(op, a.f, b.f, t);
    case ScalarKind::Unsigned: return unsigned_binary(op, a.u, b.u, t);
    case ScalarKind::Bool:
      if (ir::is_comparison(op)) return compare(op, a.i, b.i);
      return signed_binary(op, a.i, b.i, ScalarType::Int32);
    case ScalarKind::Signed: return signed_binary(op, a.i, b.i, t);
  }
  return a;
}

Scalar negate(Scalar a, ScalarType t) {
  switch (kind(t)) {
    case ScalarKind::Float: return from_double(-a.f, t);
    case ScalarKind::Unsigned: {
      Scalar s;
      s.u = wrap_unsigned(0 - a.u, bits(t));
      return s;
    }
    default: return from_int(static_cast<int64_t>(0 - static_cast<uint64_t>(a.i)), t);
  }
}

namespace {

// Float math in the precision of t: float32 (and float16, rounded after) use the float
// overloads, float64 the double ones.
double float_builtin(lang::BuiltinId id, const double* a, ScalarType t) {
  using B = lang::BuiltinId;
  bool dbl = t == ScalarType::Float64;
  auto u = [&](auto fd, auto ff) { return dbl ? fd(a[0]) : static_cast<double>(ff(static_cast<float>(a[0]))); };
  auto bi = [&](auto fd, auto ff) {
    return dbl ? fd(a[0], a[1]) : static_cast<double>(ff(static_cast<float>(a[0]), static_cast<float>(a[1])));
  };
  switch (id) {
    case B::Exp: return u([](double x) { return std::exp(x); }, [](float x) { return exp_f32::evaluate(x); });
    case B::Exp2: return u([](double x) { return std::exp2(x); }, [](float x) { return std::exp2(x); });
    case B::Expm1: return u([](double x) { return std::expm1(x); }, [](float x) { return std::expm1(x); });
    case B::Log: return u([](double x) { return std::log(x); }, [](float x) { return std::log(x); });
    case B::Log2: return u([](double x) { return std::log2(x); }, [](float x) { return std::log2(x); });
    case B::Log10: return u([](double x) { return std::log10(x); }, [](float x) { return std::log10(x); });
    case B::Log1p: return u([](double x) { return std::log1p(x); }, [](float x) { return std::log1p(x); });
    case B::Sqrt: return u([](double x) { return std::sqrt(x); }, [](float x) { return std::sqrt(x); });
    case B::Rsqrt: return u([](double x) { return 1.0 / std::sqrt(x); }, [](float x) { return 1.0f / std::sqrt(x); });
    case B::Cbrt: return u([](double x) { return std::cbrt(x); }, [](float x) { return std::cbrt(x); });
    case B::Fabs: return u([](double x) { return std::fabs(x); }, [](float x) { return std::fabs(x); });
    case B::Floor: return u([](double x) { return std::floor(x); }, [](float x) { return std::floor(x); });
    case B::Ceil: return u([](double x) { return std::ceil(x); }, [](float x) { return std::ceil(x); });
    case B::Round: return u([](double x) { return std::nearbyint(x); }, [](float x) { return std::nearbyint(x); });
    case B::Trunc: return u([](double x) { return std::trunc(x); }, [](float x) { return std::trunc(x); });
    case B::Sin: return u([](double x) { return std::sin(x); }, [](float x) { return std::sin(x); });
    case B::Cos: return u([](double x) { return std::cos(x); }, [](float x) { return std::cos(x); });
    case B::Tan: return u([](double x) { return std::tan(x); }, [](float x) { return std::tan(x); });
    case B::Asin: return u([](double x) { return std::asin(x); }, [](float x) { return std::asin(x); });
    case B::Acos: return u([](double x) { return std::acos(x); }, [](float x) { return std::acos(x); });
    case B::Atan: return u([](double x) { return std::atan(x); }, [](float x) { return std::atan(x); });
    case B::Sinh: return u([](double x) { return std::sinh(x); }, [](float x) { return std::sinh(x); });
    case B::Cosh: return u([](double x) { return std::cosh(x); }, [](float x) { return std::cosh(x); });
    case B::Tanh: return u([](double x) { return std::tanh(x); }, [](float x) { return std::tanh(x); });
    case B::Asinh: return u([](double x) { return std::asinh(x); }, [](float x) { return std::asinh(x); });
    case B::Acosh: return u([](double x) { return std::acosh(x); }, [](float x) { return std::acosh(x); });
    case B::Atanh: return u([](double x) { return std::atanh(x); }, [](float x) { return std::atanh(x); });
    case B::Erf: return u([](double x) { return std::erf(x); }, [](float x) { return std::erf(x); });
    case B::Erfc: return u([](double x) { return std::erfc(x); }, [](float x) { return std::erfc(x); });
    case B::Pow: return bi([](double x, double y) { return std::pow(x, y); }, [](float x, float y) { return std::pow(x, y); });
    case B::Atan2: return bi([](double x, double y) { return std::atan2(x, y); }, [](float x, float y) { return std::atan2(x, y); });
    case B::Hypot: return bi([](double x, double y) { return std::hypot(x, y); }, [](float x, float y) { return std::hypot(x, y); });
    case B::Fmod: return bi([](double x, double y) { return std::fmod(x, y); }, [](float x, float y) { return std::fmod(x, y); });
    case B::Fmax: return bi([](double x, double y) { return std::fmax(x, y); }, [](float x, float y) { return std::fmax(x, y); });
    case B::Fmin: return bi([](double x, double y) { return std::fmin(x, y); }, [](float x, float y) { return std::fmin(x, y); });
    // A NaN's sign counts as positive (IEEE leaves the sign of a computed NaN unspecified, and
    // libm, Halide and CUDA produce different ones): copysign is where it would show.
    case B::Copysign:
      return bi([](double x, double y) { return std::isnan(y) ? std::fabs(x) : std::copysign(x, y); },
                [](float x, float y) { return std::isnan(y) ? std::fabs(x) : std::copysign(x, y); });
    case B::Fma:
      return dbl ? std::fma(a[0], a[1], a[2])
                 : static_cast<double>(std::fma(static_cast<float>(a[0]), static_cast<float>(a[1]), static_cast<float>(a[2])));
    default: return 0;
  }
}

}  // namespace

Scalar call_builtin(lang::BuiltinId id, const Scalar* args, ScalarType t) {
  using B = lang::BuiltinId;
  if (id == B::Min || id == B::Max) {
    bool less = truthy(binary(ir::BinOp::Lt, args[0], args[1], t), ScalarType::Bool);
    if (is_float(t) && (std::isnan(args[0].f) || std::isnan(args[1].f))) return from_double(NAN, t);
    return (id == B::Min) == less ? args[0] : args[1];
  }
  if (id == B::Abs) {
    if (is_float(t)) return from_double(std::fabs(args[0].f), t);
    if (kind(t) == ScalarKind::Unsigned) return args[0];
    return args[0].i < 0 ? negate(args[0], t) : args[0];
  }
  double a[3] = {0, 0, 0};
  for (int i = 0; i < lang::builtin(id).arity; ++i) a[i] = args[i].f;
  return from_double(float_builtin(id, a, t), t);
}

Scalar identity(Combine c, ScalarType t) {
  switch (c) {
    case Combine::Sum: return from_int(0, t);
    case Combine::Product: return from_int(1, t);
    case Combine::Min:
      if (is_float(t)) return from_double(INFINITY, t);
      if (kind(t) == ScalarKind::Unsigned) return Scalar{.u = wrap_unsigned(~uint64_t{0}, bits(t))};
      if (t == ScalarType::Bool) return from_int(1, t);
      return from_int(static_cast<int64_t>((uint64_t{1} << (bits(t) - 1)) - 1), t);
    case Combine::Max:
      if (is_float(t)) return from_double(-INFINITY, t);
      if (kind(t) == ScalarKind::Unsigned || t == ScalarType::Bool) return from_int(0, t);
      return from_int(static_cast<int64_t>(uint64_t{1} << (bits(t) - 1)), t);
  }
  return from_int(0, t);
}

Scalar combine(Combine c, Scalar acc, Scalar v, ScalarType t) {
  switch (c) {
    case Combine::Sum: return binary(ir::BinOp::Add, acc, v, t);
    case Combine::Product: return binary(ir::BinOp::Mul, acc, v, t);
    case Combine::Min: {
      lang::BuiltinId id = lang::BuiltinId::Min;
      Scalar args[2] = {acc, v};
      return call_builtin(id, args, t);
    }
    case Combine::Max: {
      Scalar args[2] = {acc, v};
      return call_builtin(lang::BuiltinId::Max, args, t);
    }
  }
  return acc;
}

Scalar load(const char* p, ScalarType t) {
  Scalar s{};
  switch (t) {
    case ScalarType::Bool: { uint8_t x; std::memcpy(&x, p, 1); s.i = x != 0; break; }
    case ScalarType::UInt8: { uint8_t x; std::memcpy(&x, p, 1); s.u = x; break; }
    case ScalarType::UInt16: { uint16_t x; std::memcpy(&x, p, 2); s.u = x; break; }
    case ScalarType::UInt32: { uint32_t x; std::memcpy(&x, p, 4); s.u = x; break; }
    case ScalarType::UInt64: { uint64_t x; std::memcpy(&x, p, 8); s.u = x; break; }
    case ScalarType::Int8: { int8_t x; std::memcpy(&x, p, 1); s.i = x; break; }
    case ScalarType::Int16: { int16_t x; std::memcpy(&x, p, 2); s.i = x; break; }
    case ScalarType::Int32: { int32_t x; std::memcpy(&x, p, 4); s.i = x; break; }
    case ScalarType::Int64: { int64_t x; std::memcpy(&x, p, 8); s.i = x; break; }
    case ScalarType::Float16: { uint16_t x; std::memcpy(&x, p, 2); s.f = half_to_float(x); break; }
    case ScalarType::BFloat16: { uint16_t x; std::memcpy(&x, p, 2); s.f = bfloat16_to_float(x); break; }
    case ScalarType::Float32: { float x; std::memcpy(&x, p, 4); s.f = x; break; }
    case ScalarType::Float64: { double x; std::memcpy(&x, p, 8); s.f = x; break; }
  }
  return s;
}

void store(char* p, Scalar v, ScalarType t) {
  switch (t) {
    case ScalarType::Bool: { uint8_t x = v.i != 0; std::memcpy(p, &x, 1); break; }
    case ScalarType::UInt8: { auto x = static_cast<uint8_t>(v.u); std::memcpy(p, &x, 1); break; }
    case ScalarType::UInt16: { auto x = static_cast<uint16_t>(v.u); std::memcpy(p, &x, 2); break; }
    case ScalarType::UInt32: { auto x = static_cast<uint32_t>(v.u); std::memcpy(p, &x, 4); break; }
    case ScalarType::UInt64: { std::memcpy(p, &v.u, 8); break; }
    case ScalarType::Int8: { auto x = static_cast<int8_t>(v.i); std::memcpy(p, &x, 1); break; }
    case ScalarType::Int16: { auto x = static_cast<int16_t>(v.i); std::memcpy(p, &x, 2); break; }
    case ScalarType::Int32: { auto x = static_cast<int32_t>(v.i); std::memcpy(p, &x, 4); break; }
    case ScalarType::Int64: { std::memcpy(p, &v.i, 8); break; }
    case ScalarType::Float16: { uint16_t x = float_to_half(static_cast<float>(v.f)); std::memcpy(p, &x, 2); break; }
    case ScalarType::BFloat16: { uint16_t x = float_to_bfloat16(static_cast<float>(v.f)); std::memcpy(p, &x, 2); break; }
    case ScalarType::Float32: { auto x = static_cast<float>(v.f); std::memcpy(p, &x, 4); break; }
    case ScalarType::Float64: { std::memcpy(p, &v.f, 8); break; }
  }
}

}  // namespace tc::backends::reference
