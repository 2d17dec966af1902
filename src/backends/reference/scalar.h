// scalar.h — one value of any TC scalar type, and the language's scalar semantics on it:
// conversions, arithmetic in the operand type (integers wrap, float32/float16 results are
// rounded to their precision), floor division, loads and stores of tensor elements.
#pragma once

#include <cstdint>

#include "lang/builtins.h"
#include "ir/expr.h"
#include "support/dtype.h"

namespace tc::backends::reference {

// The active member is given by the static type of the expression that produced it:
// Signed and Bool use i, Unsigned uses u, Float uses f (float32/float16 values are exactly
// representable as double).
union Scalar {
  int64_t i;
  uint64_t u;
  double f;
};

Scalar convert(Scalar v, ScalarType from, ScalarType to);
Scalar from_double(double x, ScalarType t);  // rounding/wrapping as needed
Scalar from_int(int64_t x, ScalarType t);
double to_double(Scalar v, ScalarType t);
bool truthy(Scalar v, ScalarType t);

// Arithmetic (+ - * / %) and comparisons (result: Bool) with both operands of type t.
Scalar binary(ir::BinOp op, Scalar a, Scalar b, ScalarType t);
Scalar negate(Scalar a, ScalarType t);
Scalar call_builtin(lang::BuiltinId id, const Scalar* args, ScalarType t);

// Identity of a reduction, and combining an accumulator with a value.
enum class Combine { Sum, Product, Min, Max };
Scalar identity(Combine c, ScalarType t);
Scalar combine(Combine c, Scalar acc, Scalar v, ScalarType t);

Scalar load(const char* p, ScalarType t);
void store(char* p, Scalar v, ScalarType t);

}  // namespace tc::backends::reference
