// values.h — how the generated code holds TC values, and the language's conversions on them
// (the reference backend's scalar.cpp is the oracle; docs/guide/language.md states the rules):
//   - in memory (the caller's tensors) bool is a byte, any nonzero byte being true, and
//     float16 and bfloat16 are their 16 bits: Halide's own float16/bfloat16 arithmetic and
//     conversions are never used (Halide 14 turns a float16 NaN into infinity);
//   - in registers and internal buffers float16 and bfloat16 values are float32 values that
//     are exactly representable in the type: every operation computes in float32 and rounds
//     to the type (round to nearest even) with this file's conversions;
//   - signed 32- and 64-bit arithmetic wraps (two's complement): Halide assumes it never
//     overflows, so + - * and negation are done on the unsigned twin and reinterpreted;
//   - integer / and % are Euclidean with x / 0 == 0, x % 0 == 0 and MIN / -1 == MIN, with no
//     instruction that can trap; float % is NumPy's floored modulo (NaN for a zero divisor).
// It knows nothing of tensors, statements or schedules.
#pragma once

#include <vector>

#include <Halide.h>

#include "ir/expr.h"
#include "support/dtype.h"

namespace tc::backends::cpu {

Halide::Type value_type(ScalarType t);    // in registers and internal buffers
Halide::Type storage_type(ScalarType t);  // in the caller's buffers: bool uint8, float16/bfloat16 uint16

Halide::Expr from_storage(const Halide::Expr& stored, ScalarType t);
Halide::Expr to_storage(const Halide::Expr& value, ScalarType t);

// A float32 value rounded to the nearest float16 value (ties to even), still as float32.
Halide::Expr round_to_half(const Halide::Expr& f32);
// A float32 value rounded to t where t is float16 or bfloat16 (ties to even), still as float32;
// any other t: unchanged.
Halide::Expr rounded_to(const Halide::Expr& f32, ScalarType t);

// x of TC type `from` converted to `to` as the language converts: bool is x != 0, float to
// integer truncates toward zero and saturates (NaN gives 0), integers wrap.
Halide::Expr convert(const Halide::Expr& x, ScalarType from, ScalarType to);

// A literal's value in type t (float literals rounded to t's precision).
Halide::Expr literal(double value, ScalarType t);
Halide::Expr literal(int64_t value, ScalarType t);

// v, unchanged, in a form Halide's simplifier cannot see through: an integer times a 1 loaded
// from memory, a float's bits xor a loaded 0. For an operand Halide must not solve for or fold.
// LLVM does see through it (Halide embeds the table as a constant global, whose loads LLVM
// folds, so it costs nothing in a loop); libm()'s arguments, which LLVM must not fold either,
// are hidden another way.
Halide::Expr opaque(const Halide::Expr& v);

// A 0 of integer type t that Halide's simplifier knows only to be 0 or 1 (a loaded 0 compared
// with 0); LLVM folds it, as opaque's.
Halide::Expr opaque_zero_bit(const Halide::Type& t);

// The lowest (or highest) value of integer type t, loaded from a constant table: no
// simplifier knows it. opaque(INT32_MIN) is INT32_MIN times a loaded 1, and Halide 14 rewrote
// max(INT32_MIN * c, -1 * c) as min(c * (INT32_MIN / -1), c) * -1, whose constant wraps: a
// max=! of -1 gave INT32_MIN (differential fuzzer, seed 180004621, program 79).
Halide::Expr opaque_limit(const Halide::Type& t, bool lowest);

// name(args) of libm ("exp", "fmod", ...) in t's precision: float32 and float16 call the float
// version (float16 rounds the result), float64 the double one. Not vectorised by Halide.
Halide::Expr libm(const char* name, const std::vector<Halide::Expr>& args, ScalarType t);

// a * b + c with one rounding (llvm.fma: vfmadd where the CPU has FMA, exact in software where
// not), for float32 or float64 operands. Halide calls it one lane at a time; LLVM's SLP
// vectoriser makes the lanes one vector FMA again (measured: sgemm 1024^3 on a 2-core Xeon,
// 2 threads, 30.3 -> 19.8 ms as a reduction's update).
Halide::Expr fused_multiply_add(const Halide::Expr& a, const Halide::Expr& b, const Halide::Expr& c);

// a OP b for operands of TC type t (arithmetic in t, comparisons give bool). `native`: index
// arithmetic whose range binding proved, so Halide may assume it does not overflow (which its
// bounds inference needs).
Halide::Expr arithmetic(ir::BinOp op, const Halide::Expr& a, const Halide::Expr& b, ScalarType t, bool native);
Halide::Expr negate(const Halide::Expr& a, bool native);

// min(a, b) or max(a, b) of floats as the reference decides equal values (-0.0 and 0.0): min
// the second, max the first (a < b ? ...); NaN is the caller's (Halide's min and max give the
// second of equal values for both).
Halide::Expr ordered_min_max(bool min, const Halide::Expr& a, const Halide::Expr& b);

// min(a, b) or max(a, b) of integers, where one is the type's largest (min) or smallest (max)
// value: the other. Halide 14's bounds inference takes max(x, 0) of a uint32 x for unbounded,
// and a read or scatter indexed by it failed to compile (`D(max(I(j), 0)) += X(j)`).
Halide::Expr integer_min_max(bool min, const Halide::Expr& a, const Halide::Expr& b);

}  // namespace tc::backends::cpu
