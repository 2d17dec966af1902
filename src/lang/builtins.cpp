// builtins.cpp — the builtin function table.
#include "lang/builtins.h"

namespace tc::lang {
namespace {

using T = BuiltinTyping;
const Builtin kBuiltins[] = {
    {BuiltinId::Exp, "exp", 1, T::FloatMath},       {BuiltinId::Exp2, "exp2", 1, T::FloatMath},
    {BuiltinId::Expm1, "expm1", 1, T::FloatMath},   {BuiltinId::Log, "log", 1, T::FloatMath},
    {BuiltinId::Log2, "log2", 1, T::FloatMath},     {BuiltinId::Log10, "log10", 1, T::FloatMath},
    {BuiltinId::Log1p, "log1p", 1, T::FloatMath},   {BuiltinId::Sqrt, "sqrt", 1, T::FloatMath},
    {BuiltinId::Rsqrt, "rsqrt", 1, T::FloatMath},   {BuiltinId::Cbrt, "cbrt", 1, T::FloatMath},
    {BuiltinId::Fabs, "fabs", 1, T::FloatMath},     {BuiltinId::Floor, "floor", 1, T::FloatMath},
    {BuiltinId::Ceil, "ceil", 1, T::FloatMath},     {BuiltinId::Round, "round", 1, T::FloatMath},
    {BuiltinId::Trunc, "trunc", 1, T::FloatMath},   {BuiltinId::Sin, "sin", 1, T::FloatMath},
    {BuiltinId::Cos, "cos", 1, T::FloatMath},       {BuiltinId::Tan, "tan", 1, T::FloatMath},
    {BuiltinId::Asin, "asin", 1, T::FloatMath},     {BuiltinId::Acos, "acos", 1, T::FloatMath},
    {BuiltinId::Atan, "atan", 1, T::FloatMath},     {BuiltinId::Sinh, "sinh", 1, T::FloatMath},
    {BuiltinId::Cosh, "cosh", 1, T::FloatMath},     {BuiltinId::Tanh, "tanh", 1, T::FloatMath},
    {BuiltinId::Asinh, "asinh", 1, T::FloatMath},   {BuiltinId::Acosh, "acosh", 1, T::FloatMath},
    {BuiltinId::Atanh, "atanh", 1, T::FloatMath},   {BuiltinId::Erf, "erf", 1, T::FloatMath},
    {BuiltinId::Erfc, "erfc", 1, T::FloatMath},     {BuiltinId::Pow, "pow", 2, T::FloatMath},
    {BuiltinId::Atan2, "atan2", 2, T::FloatMath},   {BuiltinId::Hypot, "hypot", 2, T::FloatMath},
    {BuiltinId::Fmod, "fmod", 2, T::FloatMath},     {BuiltinId::Fmax, "fmax", 2, T::FloatMath},
    {BuiltinId::Fmin, "fmin", 2, T::FloatMath},     {BuiltinId::Copysign, "copysign", 2, T::FloatMath},
    {BuiltinId::Fma, "fma", 3, T::FloatMath},       {BuiltinId::Min, "min", 2, T::Generic},
    {BuiltinId::Max, "max", 2, T::Generic},         {BuiltinId::Abs, "abs", 1, T::Generic},
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
