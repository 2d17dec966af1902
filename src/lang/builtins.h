// builtins.h — the table of builtin functions (CUDA-style math plus min/max/abs): names,
// arities, how their result type is derived, and their partial derivatives. The one list;
// sema checks calls against it, every backend implements each entry, and the gradient
// generator (src/grad) differentiates through it.
#pragma once

#include <string>

namespace tc::lang {

enum class BuiltinId {
  Exp, Exp2, Expm1, Log, Log2, Log10, Log1p, Sqrt, Rsqrt, Cbrt, Fabs, Floor, Ceil, Round, Trunc,
  Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Tanh, Asinh, Acosh, Atanh, Erf, Erfc,
  Pow, Atan2, Hypot, Fmod, Fmax, Fmin, Copysign, Fma,
  Min, Max, Abs,
};

enum class BuiltinTyping {
  FloatMath,  // result has the (promoted) float type of the arguments; integers become float32
  Generic,    // result has the promoted type of the arguments (integers stay integers)
};

struct Builtin {
  BuiltinId id;
  const char* name;
  int arity;
  BuiltinTyping typing;
  // Per argument, the partial derivative of the result with respect to that argument, as a TC
  // expression in the arguments `x`, `y`, `z` (first, second, third); "0" where it is zero
  // almost everywhere (floor, ...). Ties of min/max-like functions split the gradient evenly.
  const char* derivative[3];
};

const Builtin* find_builtin(const std::string& name);  // nullptr if not a builtin
const Builtin& builtin(BuiltinId id);

}  // namespace tc::lang
