// values.cpp — see values.h.
#include "backends/cpu/values.h"

#include <cmath>
#include <utility>

#include "infer/to_halide.h"
#include "support/half.h"
#include "support/int_math.h"

namespace tc::backends::cpu {

namespace HI = Halide::Internal;
using Halide::Expr;
using ir::BinOp;

Halide::Type value_type(ScalarType t) {
  switch (kind(t)) {
    case ScalarKind::Bool: return Halide::Bool();
    case ScalarKind::Signed: return Halide::Int(bits(t));
    case ScalarKind::Unsigned: return Halide::UInt(bits(t));
    case ScalarKind::Float: return is_float16_like(t) ? Halide::Float(32) : Halide::Float(bits(t));
  }
  return Halide::Int(32);
}

Halide::Type storage_type(ScalarType t) {
  if (t == ScalarType::Bool) return Halide::UInt(8);
  if (is_float16_like(t)) return Halide::UInt(16);
  return value_type(t);
}

namespace {

// x's bits xor a 0 that LLVM cannot know either: whether the user context (a CallContext,
// never null) is null. A buffer's 0 is no good here: LLVM folds loads from the constant global
// Halide embeds a buffer in, and its GlobalOpt makes a 0-d buffer's never-stored global constant.
Expr opaque_to_llvm(const Expr& x) {
  static const Expr context = Halide::user_context_value();  // one Parameter: names must be unique
  Halide::Type bits = Halide::UInt(x.type().bits());
  Expr zero = Halide::select(Halide::reinterpret(Halide::UInt(64), context) == 0,
                             Halide::Internal::make_one(bits), Halide::Internal::make_zero(bits));
  return Halide::reinterpret(x.type(), Halide::reinterpret(bits, x) ^ zero);
}

Expr u32(uint32_t v) { return HI::make_const(Halide::UInt(32), v); }

// IEEE binary16 bits -> the float32 of the same value (exact; NaN stays NaN, with its payload).
Expr half_bits_to_float(const Expr& h) {
  Expr x = Halide::cast(Halide::UInt(32), h);
  Expr sign = (x & u32(0x8000)) << u32(16);
  Expr mag = x & u32(0x7fff);
  // Subnormals (and zero) are mantissa * 2^-24, exact in float32.
  Expr subnormal = Halide::reinterpret(Halide::UInt(32), Halide::cast(Halide::Float(32), mag) * 5.9604644775390625e-8f);
  Expr special = (mag << u32(13)) | u32(0x7f800000);  // infinity, NaN
  Expr normal = (mag << u32(13)) + u32(0x38000000);   // rebias the exponent: 127 - 15
  Expr bits = Halide::select(mag < u32(0x400), subnormal, mag >= u32(0x7c00), special, normal);
  return Halide::reinterpret(Halide::Float(32), bits | sign);
}

// float32 -> IEEE binary16 bits, rounding to nearest even; NaN gives the quiet NaN 0x7e00 (with
// the sign), like support/half.h's float_to_half, which the reference backend uses.
Expr float_to_half_bits(const Expr& f) {
  Expr b = Halide::reinterpret(Halide::UInt(32), f);
  Expr sign = (b >> u32(16)) & u32(0x8000);
  Expr a = b & u32(0x7fffffff);
  Expr r = a - u32(0x38000000);
  Expr normal = (r + u32(0xfff) + ((r >> u32(13)) & u32(1))) >> u32(13);
  // Below 2^-14 the result is subnormal: |f| * 2^24 (exact) rounded to an integer, ties to even.
  Expr magnitude = Halide::reinterpret(Halide::Float(32), a);
  Expr subnormal = Halide::cast(Halide::UInt(32), Halide::round(magnitude * 16777216.0f));
  Expr h = Halide::select(a > u32(0x7f800000), u32(0x7e00), a >= u32(0x477ff000), u32(0x7c00),
                          a < u32(0x38800000), subnormal, normal);
  return Halide::cast(Halide::UInt(16), h | sign);
}

// bfloat16 bits -> the float32 of the same value (its upper half).
Expr bfloat16_bits_to_float(const Expr& h) {
  return Halide::reinterpret(Halide::Float(32), Halide::cast(Halide::UInt(32), h) << u32(16));
}

// float32 -> bfloat16 bits, rounding to nearest even; NaN gives the quiet NaN 0x7fc0, like
// support/half.h's float_to_bfloat16.
Expr float_to_bfloat16_bits(const Expr& f) {
  Expr b = Halide::reinterpret(Halide::UInt(32), f);
  Expr rounded = (b + u32(0x7fff) + ((b >> u32(16)) & u32(1))) >> u32(16);
  return Halide::cast(Halide::UInt(16), Halide::select((b & u32(0x7fffffff)) > u32(0x7f800000), u32(0x7fc0), rounded));
}

// A comparison of float operands, opaque to Halide's simplifier and compiled without fast-math
// flags: StrictFloat protects float-valued expressions only, and the simplifier would rewrite
// !(a < b) as b <= a and LLVM fold comparisons assuming no NaN.
Expr strict_compare(const Expr& cmp, const Halide::Type& operands) {
  return operands.is_float() ? Halide::strict_float(cmp) : cmp;
}

Expr truthy(const Expr& x) {
  return x.type().is_bool() ? x : strict_compare(x != HI::make_zero(x.type()), x.type());
}

// Truncation toward zero, saturating at the type's limits; NaN gives 0. x: float32 or float64.
// The result is opaque (a strict_float tag): from the int64 limits in the select Halide's
// simplifier derived bounds that made int64(x) != 0 true for x = -0.3. The 64-bit limits are
// loaded (opaque_limit): from the constants Halide 14 bounds the select's value by [0, 1]
// (int64 of float(int8) values), and its clamp of an index read from such a tensor into those
// bounds made O2(int32(O2(i))) read O2(1) for O2(i) = 2.
Expr float_to_integer(const Expr& x, ScalarType to) {
  Halide::Type t = value_type(to);
  Expr d = Halide::cast(Halide::Float(64), x);  // exact
  Expr truncated = Halide::cast(t, d);
  auto f64 = [](double v) { return HI::make_const(Halide::Float(64), v); };
  auto limit = [&](bool lowest) {
    if (t.bits() < 64) return lowest ? t.min() : t.max();
    return opaque_limit(t, lowest);
  };
  if (kind(to) == ScalarKind::Signed) {
    Expr hi = f64(std::ldexp(1.0, bits(to) - 1));
    return Halide::strict_float(
        Halide::select(Halide::is_nan(d), HI::make_zero(t), d >= hi, limit(false), d <= -hi, limit(true), truncated));
  }
  Expr hi = f64(std::ldexp(1.0, bits(to)));
  return Halide::strict_float(
      Halide::select(Halide::is_nan(d) || d <= f64(0.0), HI::make_zero(t), d >= hi, limit(false), truncated));
}

// Halide assumes that int32 and int64 arithmetic never overflows (and simplifies on that
// basis, e.g. x + 1 > x to true); the unsigned twin wraps, as TC's integers do.
bool may_not_overflow_in_halide(const Halide::Type& t) { return t.is_int() && t.bits() >= 32; }

Expr wrapping(ir::BinOp op, const Expr& a, const Expr& b) {
  Halide::Type u = a.type().with_code(halide_type_uint);
  Expr ua = Halide::reinterpret(u, a), ub = Halide::reinterpret(u, b);
  Expr r = op == ir::BinOp::Add ? ua + ub : op == ir::BinOp::Sub ? ua - ub : ua * ub;
  return Halide::reinterpret(a.type(), r);
}

// Euclidean / and % that never trap: a zero divisor divides by 1 and gives 0; -1 divides by
// 1 too, with a / -1 the wrapping negation (MIN / -1 == MIN) and a % -1 == 0. MIN itself is
// never spelled: Halide folds a == MIN as a - MIN == 0, which overflows while folding.
Expr integer_division(ir::BinOp op, const Expr& a, const Expr& b) {
  Halide::Type t = a.type();
  Expr zero = HI::make_zero(t);
  Expr unsafe = b == zero;
  if (t.is_int()) unsafe = unsafe || b == HI::make_const(t, -1);
  Expr divisor = Halide::select(unsafe, HI::make_one(t), b);
  if (op == ir::BinOp::Mod) return Halide::select(b == zero, zero, a % divisor);
  Expr q = a / divisor;
  if (t.is_int()) q = Halide::select(b == HI::make_const(t, -1), negate(a, false), q);
  return Halide::select(b == zero, zero, q);
}

template <typename T>
bool compare(ir::BinOp op, T a, T b) {
  switch (op) {
    case ir::BinOp::Lt: return a < b;
    case ir::BinOp::Le: return a <= b;
    case ir::BinOp::Gt: return a > b;
    case ir::BinOp::Ge: return a >= b;
    case ir::BinOp::Eq: return a == b;
    default: return a != b;
  }
}

// a OP b for two integer constants (arithmetic or comparison), computed here with the
// language's rules: Halide's constant folding of int32/int64 refuses to overflow, also where
// it folds 2147483647 == -1 as a difference, or lowers 1 % 2147483647. Undefined when either
// operand is not an integer constant.
Expr fold_integer_constants(ir::BinOp op, const Expr& a, const Expr& b) {
  Halide::Type t = a.type();
  const int64_t *sa = HI::as_const_int(a), *sb = HI::as_const_int(b);
  const uint64_t *ua = HI::as_const_uint(a), *ub = HI::as_const_uint(b);
  if (!(sa && sb) && !(ua && ub)) return Expr();
  if (ir::is_comparison(op)) return HI::make_bool(sa ? compare(op, *sa, *sb) : compare(op, *ua, *ub));
  uint64_t x = sa ? static_cast<uint64_t>(*sa) : *ua, y = sa ? static_cast<uint64_t>(*sb) : *ub;
  uint64_t r = 0;
  switch (op) {
    case ir::BinOp::Add: r = x + y; break;
    case ir::BinOp::Sub: r = x - y; break;
    case ir::BinOp::Mul: r = x * y; break;
    case ir::BinOp::Div: r = sa ? static_cast<uint64_t>(euclid_div(*sa, *sb)) : (y ? x / y : 0); break;
    case ir::BinOp::Mod: r = sa ? static_cast<uint64_t>(euclid_mod(*sa, *sb)) : (y ? x % y : 0); break;
    default: return Expr();
  }
  int shift = 64 - t.bits();  // wrap to the type's width (two's complement)
  if (t.is_uint()) return HI::make_const(t, shift ? (r << shift) >> shift : r);
  return HI::make_const(t, static_cast<int64_t>(r << shift) >> shift);
}

// The sign bit of float type ft, as an unsigned integer of its width.
Expr sign_bit(const Halide::Type& ft) {
  return HI::make_const(Halide::UInt(ft.bits()), uint64_t{1} << (ft.bits() - 1));
}

// NumPy's floored modulo: fmod (exact), moved into the divisor's sign; a zero result takes the
// divisor's sign; a zero divisor gives NaN.
Expr floored_modulo(const Expr& a, const Expr& b, ScalarType t) {
  Halide::Type ft = a.type();
  Expr r = libm("fmod", {a, b}, t == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32);
  Expr zero = HI::make_zero(ft);
  Expr differ = r != zero && ((r < zero) != (b < zero));
  // A zero with b's sign, from b's sign bit (the simplifier takes -0.0 and 0.0 for one constant
  // and folds a select between them).
  Expr signed_zero = Halide::reinterpret(ft, Halide::reinterpret(Halide::UInt(ft.bits()), b) & sign_bit(ft));
  return rounded_to(Halide::select(differ, r + b, r == zero, signed_zero, r), t);
}

}  // namespace

Expr round_to_half(const Expr& f32) { return half_bits_to_float(float_to_half_bits(f32)); }

Expr rounded_to(const Expr& f32, ScalarType t) {
  if (t == ScalarType::Float16) return round_to_half(f32);
  if (t == ScalarType::BFloat16) return bfloat16_bits_to_float(float_to_bfloat16_bits(f32));
  return f32;
}

Expr from_storage(const Expr& stored, ScalarType t) {
  if (t == ScalarType::Bool) return stored != HI::make_zero(stored.type());
  if (t == ScalarType::Float16) return half_bits_to_float(stored);
  if (t == ScalarType::BFloat16) return bfloat16_bits_to_float(stored);
  return stored;
}

Expr to_storage(const Expr& value, ScalarType t) {
  if (t == ScalarType::Bool) return Halide::cast(Halide::UInt(8), value);
  if (t == ScalarType::Float16) return float_to_half_bits(value);
  if (t == ScalarType::BFloat16) return float_to_bfloat16_bits(value);
  return value;
}

Expr convert(const Expr& x, ScalarType from, ScalarType to) {
  if (from == to) return x;
  if (to == ScalarType::Bool) return truthy(x);
  if (is_float(from) && !is_float(to)) return float_to_integer(x, to);
  if (is_float16_like(to)) return rounded_to(Halide::cast(Halide::Float(32), x), to);
  // To a signed type from an integer type whose values it may not hold (uint32 to int32, uint16
  // to int16, wider types): through the unsigned twin, which wraps. Halide takes a cast of a
  // constant it cannot hold as signed overflow and folds it to signed_integer_overflow, which
  // bounds inference then cannot bound (`C(int32(O3), 0)` with O3 = (uint32)0 - 1: differential
  // fuzzer, seed 193678694, program 332), or fails on (an int16 O3 = uint16(0 - 1): seed
  // 155120966, program 24).
  bool holds = from == ScalarType::Bool ||
               (kind(from) == ScalarKind::Signed ? bits(from) <= bits(to) : bits(from) < bits(to));
  if (kind(to) == ScalarKind::Signed && !holds)
    return Halide::reinterpret(value_type(to), Halide::cast(Halide::UInt(bits(to)), x));
  // A bool as 1 or 0 through a select: Halide 14's intrinsic matching narrows the operands of
  // a product of casts, and on a cast from a 1-bit bool fails an internal assertion ("Attempting
  // to narrow a 1-bit type": `uint32(A() || 0) * C(0, j)` with C bool, differential fuzzer, seed
  // 106999742, program 490).
  if (from == ScalarType::Bool && x.type().is_bool())
    return Halide::select(x, HI::make_one(value_type(to)), HI::make_zero(value_type(to)));
  return Halide::cast(value_type(to), x);
}

Expr literal(double value, ScalarType t) {
  if (is_float(t)) {
    double v = tc::rounded_to_type(value, t);
    // Halide's float constants lose the sign of -0.0 (also of -5e-324 as float32): its bits.
    if (v == 0 && std::signbit(v)) return Halide::reinterpret(value_type(t), sign_bit(value_type(t)));
    return HI::make_const(value_type(t), v);
  }
  // A float literal of an integer type converts as a cast does: truncated, saturated; of bool,
  // nonzero is true.
  if (t == ScalarType::Bool) return HI::make_bool(value != 0);
  return HI::simplify(float_to_integer(HI::make_const(Halide::Float(64), value), t));
}

Expr literal(int64_t value, ScalarType t) {
  if (is_float(t)) return literal(static_cast<double>(value), t);
  if (t == ScalarType::Bool) return HI::make_bool(value != 0);
  return HI::make_const(value_type(t), value);
}

namespace {

// {0, 1}, read as memory: Halide's simplifier never folds them.
Halide::Buffer<uint32_t>& opaque_constants() {
  static Halide::Buffer<uint32_t> constants = [] {
    Halide::Buffer<uint32_t> b(2, "tc_opaque");
    b(0) = 0;
    b(1) = 1;
    return b;
  }();
  return constants;
}

}  // namespace

Expr opaque(const Expr& v) {
  Halide::Buffer<uint32_t>& constants = opaque_constants();
  Halide::Type t = v.type();
  if (t.is_bool()) return v;
  // Integers are multiplied by a loaded 1: the solver cannot divide by it, and the bounds
  // Halide derives stay true (a xor made it take an int64 for never negative).
  if (!t.is_float()) return v * Halide::cast(t, constants(Expr(1)));
  Halide::Type bits = Halide::UInt(t.bits());
  return Halide::reinterpret(t, Halide::reinterpret(bits, v) ^ Halide::cast(bits, constants(Expr(0))));
}

Expr opaque_zero_bit(const Halide::Type& t) {
  return Halide::cast(t, opaque_constants()(Expr(0)) != 0);
}

Expr opaque_limit(const Halide::Type& t, bool lowest) {
  // Per integer width (8, 16, 32, 64 bits): the signed lowest and highest, then the unsigned
  // highest (all ones); the unsigned lowest is 0. Stored as int64, narrowed exactly by the cast.
  static Halide::Buffer<int64_t> limits = [] {
    Halide::Buffer<int64_t> b(12, "tc_limits");
    int k = 0;
    for (int bits : {8, 16, 32, 64}) {
      int64_t hi = bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
      b(k++) = -hi - 1;
      b(k++) = hi;
      b(k++) = bits == 64 ? -1 : (int64_t{1} << bits) - 1;
    }
    return b;
  }();
  int width = t.bits() == 8 ? 0 : t.bits() == 16 ? 1 : t.bits() == 32 ? 2 : 3;
  if (t.is_uint() && lowest) return opaque(Halide::Internal::make_zero(t));
  int index = 3 * width + (t.is_uint() ? 2 : lowest ? 0 : 1);
  Expr v = limits(Expr(index));
  return t.is_uint() && t.bits() == 64 ? Halide::reinterpret(t, v) : Halide::cast(t, v);
}

Expr libm(const char* name, const std::vector<Expr>& args, ScalarType t) {
  bool dbl = t == ScalarType::Float64;
  Halide::Type ft = dbl ? Halide::Float(64) : Halide::Float(32);
  std::vector<Expr> a;
  // Arguments are opaque: LLVM would fold sinhf(4) or sinf(M) (M a size, so a constant) with
  // its own arithmetic, correctly rounded, where glibc's sinf(34) is 1 ulp below. One xor per call of a function libm computes one lane at a time.
  for (const Expr& x : args) a.push_back(opaque_to_llvm(Halide::cast(ft, x)));
  Expr r = HI::Call::make(ft, dbl ? name : std::string(name) + "f", a, HI::Call::PureExtern);
  return rounded_to(r, t);
}

Expr fused_multiply_add(const Expr& a, const Expr& b, const Expr& c) {
  const char* name = c.type().bits() == 64 ? "llvm.fma.f64" : "llvm.fma.f32";
  return HI::Call::make(c.type(), name, {a, b, c}, HI::Call::PureExtern);
}

namespace {

Expr comparison(ir::BinOp op, const Expr& a, const Expr& b) {
  // Halide's x86 code generator emits a <= b as !(a > b), true for NaN: spelled out instead,
  // each comparison opaque so that the simplifier cannot merge them back.
  if (a.type().is_float() && (op == ir::BinOp::Le || op == ir::BinOp::Ge)) {
    ir::BinOp strict = op == ir::BinOp::Le ? ir::BinOp::Lt : ir::BinOp::Gt;
    return strict_compare(infer::binary_op(strict, a, b), a.type()) || strict_compare(a == b, a.type());
  }
  return strict_compare(infer::binary_op(op, a, b), a.type());
}

// An integer constant beyond any index's reach (|c| >= 2^30), opaque: compared in a value, as in
// `2147483647 <= i ? O2(0, 0, 2 * i) : 0`, Halide's bounds took i >= 2147483647 and folding
// 2 * i overflowed. Other values as they are.
Expr opaque_if_beyond_indices(const Expr& x) {
  constexpr int64_t kReach = int64_t{1} << 30;
  const int64_t* v = HI::as_const_int(x);
  const uint64_t* u = HI::as_const_uint(x);
  const bool beyond = (v && (*v >= kReach || *v <= -kReach)) || (u && *u >= static_cast<uint64_t>(kReach));
  return beyond ? opaque(x) : x;
}

// Whether integer x is a constant, its type's largest (`largest`) or smallest value.
bool is_type_limit(const Expr& x, bool largest) {
  const Halide::Type t = x.type();
  if (const int64_t* v = HI::as_const_int(x)) return largest ? t.is_max(*v) : t.is_min(*v);
  // (Halide 14's Type::is_min(uint64_t) is false for every value, 0 of an unsigned type too)
  if (const uint64_t* u = HI::as_const_uint(x)) return largest ? t.is_max(*u) : *u == 0;
  return false;
}

// a OP b where one side is its integer type's largest or smallest value and that alone decides
// the comparison (j <= 2147483647, 2147483647 < j, j >= -2147483648, ...); undefined otherwise.
// Spelled out, Halide's bounds of a reduction index compared so (a select's condition) added 1
// to the constant and failed on the overflow; the comparison's operands are never needed for a
// check, which is a stage of its own.
Expr fold_against_type_limit(ir::BinOp op, Expr a, Expr b) {
  using B = ir::BinOp;
  const Halide::Type t = a.type();
  if (!t.is_int() && !t.is_uint()) return Expr();
  if (HI::is_const(a)) {  // MAX >= x as x <= MAX
    std::swap(a, b);
    op = op == B::Lt ? B::Gt : op == B::Gt ? B::Lt : op == B::Le ? B::Ge : op == B::Ge ? B::Le : op;
  }
  if (is_type_limit(b, true) && (op == B::Le || op == B::Gt)) return op == B::Le ? HI::const_true() : HI::const_false();
  if (is_type_limit(b, false) && (op == B::Ge || op == B::Lt)) return op == B::Ge ? HI::const_true() : HI::const_false();
  return Expr();
}

// a == b (or a != b) of signed integers compared as their bits: Halide's simplifier takes
// a == b for a - b == 0, and where both sides then fold to constants far apart (`1 != k -
// 2147483647` over a reduction of one step) folding the difference overflowed. Unsigned
// differences wrap, and equal bits are equal values.
Expr bitwise_equality(ir::BinOp op, const Expr& a, const Expr& b) {
  const Halide::Type u = a.type().with_code(halide_type_uint);
  return comparison(op, Halide::reinterpret(u, a), Halide::reinterpret(u, b));
}

// x simplified where that gives a constant (`abs(1)`: Halide's simplifier folds it, libtc's
// constant folding does not), else x as it is.
Expr folded_or_same(const Expr& x) {
  if (HI::is_const(x)) return x;
  Expr s = HI::simplify(x);
  return HI::is_const(s) ? s : x;
}

// x as the constant it folds to where it is a small expression of constants and indices alone
// (`K ? 0.0 : 1.0` at known sizes, `i < N ? 0 : 0.0`, where `i` is opaque: lower_expr.cpp), else
// x as it is. Bounded, so that a long right-hand side is not simplified again at every operation.
// Folded as TrimNoOps folds it, with strict_float stripped: a float comparison's strict_float
// hides `-0.3 <= N ? 0.0 : 1.0` from the simplifier, not from TrimNoOps.
Expr small_constant_or_same(const Expr& x) {
  if (HI::is_const(x)) return x;
  struct NoReads : HI::IRGraphVisitor {
    int nodes = 0;
    bool small = true;
    void include(const Expr& e) override {
      if (small && ++nodes > 64) small = false;
      if (small) HI::IRGraphVisitor::include(e);
    }
    void visit(const HI::Load*) override { small = false; }
    void visit(const HI::Call* c) override {
      if (c->is_intrinsic() || c->name == opaque_constants().name()) HI::IRGraphVisitor::visit(c);
      else small = false;
    }
  } no_reads;
  x.accept(&no_reads);
  if (!no_reads.small) return x;
  struct StripStrictFloat : HI::IRMutator {
    using HI::IRMutator::visit;
    Expr visit(const HI::Call* c) override {
      return c->is_intrinsic(HI::Call::strict_float) ? mutate(c->args[0]) : HI::IRMutator::visit(c);
    }
  } strip;
  const Expr folded = folded_or_same(strip.mutate(x));
  return HI::is_const(folded) ? folded : x;
}

bool folds_to_zero(const Expr& x) { return HI::is_const_zero(small_constant_or_same(x)); }

// x with every arm of its selects that folds to 0 opaque. Halide partitions a loop where a
// select's condition depends on the index and, in each part, simplifies the select to one arm:
// `x * (j >= 1 ? 10 : 0.0)` became `x * 0` where j < 1, and that folded to 0, the NaN in x lost.
// The other arm, which the loop's main part keeps, stays as it is.
Expr zero_arms_opaque(const Expr& x) {
  const auto* s = x.as<HI::Select>();
  if (s == nullptr) return x;
  auto arm = [](const Expr& v) { return folds_to_zero(v) ? opaque(v) : zero_arms_opaque(v); };
  return Halide::select(s->condition, arm(s->true_value), arm(s->false_value));
}

// The operands of float a OP b, with what Halide would fold away made opaque. Halide's TrimNoOps
// reads an update's value with strict_float stripped, simplifies x * 0, 0 / x and x - x to 0,
// and drops the loop of `acc + x * 0` as a store of acc: the NaN or infinity in x, which makes
// the reference's sum NaN, was lost (the gradient of `(K ? 0.0 : 1.0)`-weighted terms).
std::pair<Expr, Expr> kept_from_trimming(ir::BinOp op, const Expr& a, const Expr& b) {
  switch (op) {
    case ir::BinOp::Mul:
      if (folds_to_zero(a)) return {opaque(a), b};
      if (folds_to_zero(b)) return {a, opaque(b)};
      return {zero_arms_opaque(a), zero_arms_opaque(b)};
    case ir::BinOp::Div:
      if (folds_to_zero(a)) return {opaque(a), b};
      return {zero_arms_opaque(a), b};
    case ir::BinOp::Sub:
      if (HI::equal(a, b)) return {a, opaque(b)};
      break;
    default: break;
  }
  return {a, b};
}

}  // namespace

Expr arithmetic(ir::BinOp op, const Expr& a, const Expr& b, ScalarType t, bool native) {
  if (Expr folded = fold_integer_constants(op, a, b); folded.defined()) return folded;
  if (ir::is_comparison(op)) {
    if (native || a.type().is_float()) return comparison(op, a, b);
    // An operand that only folds to a constant (`abs(1)`) is taken as that constant: compared
    // with an opaque 2147483647, Halide's simplifier overflowed folding 2147483647 * (a loaded 1)
    // < 1 (differential fuzzer, seed 20261304, program 482); so is one beyond indices after folding.
    const Expr ca = folded_or_same(a), cb = folded_or_same(b);
    if (Expr folded = fold_integer_constants(op, ca, cb); folded.defined()) return folded;
    if (Expr folded = fold_against_type_limit(op, ca, cb); folded.defined()) return folded;
    if ((op == ir::BinOp::Eq || op == ir::BinOp::Ne) && may_not_overflow_in_halide(ca.type())) return bitwise_equality(op, ca, cb);
    return comparison(op, opaque_if_beyond_indices(ca), opaque_if_beyond_indices(cb));
  }
  if (is_float(t)) {
    if (op == ir::BinOp::Mod) return floored_modulo(a, b, t);
    const auto [ka, kb] = kept_from_trimming(op, a, b);
    return rounded_to(infer::binary_op(op, ka, kb), t);
  }
  // A divisor of a value (not of index arithmetic, whose bounds Halide must see) that folds to a
  // constant is opaque: Halide's own lowering of % 2147483647 overflows while folding constants,
  // also where the constant is only found by folding (`% abs(2147483647)`: differential fuzzer,
  // seed 128853225, program 56). Any other divisor of a value is opaque to LLVM, which divides
  // by it at run time anyway, a lane at a time: LLVM 14 moves a vector division into the arms of
  // a select its divisor is made of, and an arm that is a constant with a lane of 0 (j's ramp)
  // made that division undefined although the guard never divides by it; it took the other arm,
  // and `1 % (i ? A(0, j + 1) : j)` gave 0 in every lane.
  if (op == ir::BinOp::Div || op == ir::BinOp::Mod) {
    if (native) return integer_division(op, a, b);
    const Expr divisor = folded_or_same(b);
    return integer_division(op, a, HI::is_const(divisor) ? opaque(divisor) : opaque_to_llvm(b));
  }
  if (!native && may_not_overflow_in_halide(a.type())) return wrapping(op, a, b);
  return infer::binary_op(op, a, b);
}

Expr negate(const Expr& a, bool native) {
  if (!native && may_not_overflow_in_halide(a.type())) return wrapping(ir::BinOp::Sub, HI::make_zero(a.type()), a);
  // Halide's -x is 0 - x, which is +0 for x = 0.0; x * -1 is IEEE negation (exact, -0.0 too).
  if (a.type().is_float()) return a * HI::make_const(a.type(), -1.0);
  return -a;
}

Halide::Expr ordered_min_max(bool min, const Halide::Expr& a, const Halide::Expr& b) {
  return min ? Halide::select(a < b, a, b) : Halide::select(a < b, b, a);
}

Halide::Expr integer_min_max(bool min, const Halide::Expr& a, const Halide::Expr& b) {
  if (is_type_limit(b, min)) return a;
  if (is_type_limit(a, min)) return b;
  return min ? Halide::min(a, b) : Halide::max(a, b);
}

}  // namespace tc::backends::cpu
