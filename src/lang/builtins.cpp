// builtins.cpp — the builtin function table (see builtins.h).
#include "lang/builtins.h"

namespace tc::lang {
namespace {

using T = BuiltinTyping;
// Derivatives: a NaN argument of fmax/fmin/max/min loses to the other (as the value does).
#define MAXLIKE_X "(x > y || y != y) ? 1.0 : (x == y ? 0.5 : 0.0)"
#define MAXLIKE_Y "(y > x || x != x) ? 1.0 : (x == y ? 0.5 : 0.0)"
#define MINLIKE_X "(x < y || y != y) ? 1.0 : (x == y ? 0.5 : 0.0)"
#define MINLIKE_Y "(y < x || x != x) ? 1.0 : (x == y ? 0.5 : 0.0)"
#define SIGN_X "x > 0.0 ? 1.0 : (x < 0.0 ? -1.0 : 0.0)"
const Builtin kBuiltins[] = {
    {BuiltinId::Exp, "exp", 1, T::FloatMath, {"exp(x)"}},
    {BuiltinId::Exp2, "exp2", 1, T::FloatMath, {"exp2(x) * 0.6931471805599453"}},
    {BuiltinId::Expm1, "expm1", 1, T::FloatMath, {"exp(x)"}},
    {BuiltinId::Log, "log", 1, T::FloatMath, {"1.0 / x"}},
    {BuiltinId::Log2, "log2", 1, T::FloatMath, {"1.0 / (x * 0.6931471805599453)"}},
    {BuiltinId::Log10, "log10", 1, T::FloatMath, {"1.0 / (x * 2.302585092994046)"}},
    {BuiltinId::Log1p, "log1p", 1, T::FloatMath, {"1.0 / (1.0 + x)"}},
    {BuiltinId::Sqrt, "sqrt", 1, T::FloatMath, {"0.5 / sqrt(x)"}},
    {BuiltinId::Rsqrt, "rsqrt", 1, T::FloatMath, {"-0.5 * rsqrt(x) / x"}},
    {BuiltinId::Cbrt, "cbrt", 1, T::FloatMath, {"cbrt(x) / (3.0 * x)"}},
    {BuiltinId::Fabs, "fabs", 1, T::FloatMath, {SIGN_X}},
    {BuiltinId::Floor, "floor", 1, T::FloatMath, {"0"}},
    {BuiltinId::Ceil, "ceil", 1, T::FloatMath, {"0"}},
    {BuiltinId::Round, "round", 1, T::FloatMath, {"0"}},
    {BuiltinId::Trunc, "trunc", 1, T::FloatMath, {"0"}},
    {BuiltinId::Sin, "sin", 1, T::FloatMath, {"cos(x)"}},
    {BuiltinId::Cos, "cos", 1, T::FloatMath, {"-sin(x)"}},
    {BuiltinId::Tan, "tan", 1, T::FloatMath, {"1.0 + tan(x) * tan(x)"}},
    {BuiltinId::Asin, "asin", 1, T::FloatMath, {"rsqrt(1.0 - x * x)"}},
    {BuiltinId::Acos, "acos", 1, T::FloatMath, {"-rsqrt(1.0 - x * x)"}},
    {BuiltinId::Atan, "atan", 1, T::FloatMath, {"1.0 / (1.0 + x * x)"}},
    {BuiltinId::Sinh, "sinh", 1, T::FloatMath, {"cosh(x)"}},
    {BuiltinId::Cosh, "cosh", 1, T::FloatMath, {"sinh(x)"}},
    {BuiltinId::Tanh, "tanh", 1, T::FloatMath, {"1.0 - tanh(x) * tanh(x)"}},
    {BuiltinId::Asinh, "asinh", 1, T::FloatMath, {"rsqrt(x * x + 1.0)"}},
    {BuiltinId::Acosh, "acosh", 1, T::FloatMath, {"rsqrt(x * x - 1.0)"}},
    {BuiltinId::Atanh, "atanh", 1, T::FloatMath, {"1.0 / (1.0 - x * x)"}},
    {BuiltinId::Erf, "erf", 1, T::FloatMath, {"1.1283791670955126 * exp(-(x * x))"}},
    {BuiltinId::Erfc, "erfc", 1, T::FloatMath, {"-1.1283791670955126 * exp(-(x * x))"}},
    {BuiltinId::Pow, "pow", 2, T::FloatMath, {"y * pow(x, y - 1.0)", "x == 0.0 ? 0.0 : pow(x, y) * log(x)"}},
    {BuiltinId::Atan2, "atan2", 2, T::FloatMath, {"y / (x * x + y * y)", "-x / (x * x + y * y)"}},
    {BuiltinId::Hypot, "hypot", 2, T::FloatMath, {"x / hypot(x, y)", "y / hypot(x, y)"}},
    {BuiltinId::Fmod, "fmod", 2, T::FloatMath, {"1.0", "-trunc(x / y)"}},
    {BuiltinId::Fmax, "fmax", 2, T::FloatMath, {MAXLIKE_X, MAXLIKE_Y}},
    {BuiltinId::Fmin, "fmin", 2, T::FloatMath, {MINLIKE_X, MINLIKE_Y}},
    {BuiltinId::Copysign, "copysign", 2, T::FloatMath, {"copysign(1.0, x) * copysign(1.0, y)", "0"}},
    {BuiltinId::Fma, "fma", 3, T::FloatMath, {"y", "x", "1.0"}},
    {BuiltinId::Min, "min", 2, T::Generic, {MINLIKE_X, MINLIKE_Y}},
    {BuiltinId::Max, "max", 2, T::Generic, {MAXLIKE_X, MAXLIKE_Y}},
    {BuiltinId::Abs, "abs", 1, T::Generic, {SIGN_X}},
};

}  // namespace

const Builtin* find_builtin(const std::string& name) {
  for (const Builtin& b : kBuiltins)
    if (name == b.name) return &b;
  return nullptr;
}

const Builtin& builtin(BuiltinId id) {
  for (const Builtin& b : kBuiltins)
    if (b.id == id) return b;
  return kBuiltins[0];
}

}  // namespace tc::lang
