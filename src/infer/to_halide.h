// to_halide.h — translates the integer part of TC expressions (index arithmetic, size names,
// T.d, min/max, ?:) into Halide expressions for the solver. Anything else (tensor reads,
// floats, other builtins) has no symbolic meaning and yields an undefined Expr.
#pragma once

#include <Halide.h>

#include <functional>

#include "lang/ast.h"
#include "lang/operators.h"

namespace tc::infer {

// `dim_extent(tensor, dim)` returns the extent of T.d, or an undefined Expr when not yet known.
using DimExtentFn = std::function<Halide::Expr(int tensor, int dim)>;

Halide::Expr to_halide(const lang::Expr& e, const DimExtentFn& dim_extent);
Halide::Expr index_var(const std::string& name);
// a OP b with Halide's operators, whose integer / and % are the language's (Euclidean). The
// cpu backend's value arithmetic builds on it too.
Halide::Expr binary_op(lang::BinOp op, const Halide::Expr& a, const Halide::Expr& b);
Halide::Expr size_var(const std::string& name);

}  // namespace tc::infer
