// typing.cpp — promotion rules:
//   - literals are weak: an integer literal takes the other operand's type; a float literal takes
//     a float operand's type, else float32; two literals give int32 / float32;
//   - float beats integer; the wider type wins; at equal width unsigned beats signed;
//     float16 with bfloat16 gives float32 (neither holds the other's values);
//   - bool takes part in arithmetic as int32.
#include "lang/typing.h"

namespace tc::lang {

ScalarType arithmetic_type(ScalarType t) { return t == ScalarType::Bool ? ScalarType::Int32 : t; }

namespace {

ScalarType promote_strong(ScalarType a, ScalarType b) {
  if (a == b) return a;
  a = arithmetic_type(a);
  b = arithmetic_type(b);
  if (is_float(a) != is_float(b)) return is_float(a) ? a : b;
  if (is_float16_like(a) && is_float16_like(b)) return ScalarType::Float32;
  if (bits(a) != bits(b)) return bits(a) > bits(b) ? a : b;
  if (kind(a) == ScalarKind::Unsigned) return a;
  return b;
}

}  // namespace

Typed unify(Typed a, Typed b) {
  if (a.weak && b.weak) {
    bool fl = is_float(a.type) || is_float(b.type);
    return {fl ? ScalarType::Float32 : ScalarType::Int32, true};
  }
  if (a.weak || b.weak) {
    Typed w = a.weak ? a : b;
    Typed s = a.weak ? b : a;
    if (is_float(w.type) && !is_float(s.type)) return {ScalarType::Float32, false};
    return {s.type == ScalarType::Bool ? ScalarType::Int32 : s.type, false};
  }
  return {promote_strong(a.type, b.type), false};
}

}  // namespace tc::lang
