// gradient.h — reverse-mode differentiation of one def, TC -> TC: the source of a new def
// "<name>_grad" that recomputes what it needs of the forward def and then, statement by
// statement in reverse, accumulates the gradient of every floating-point tensor it reads
// (docs/guide/language.md "Gradients"). A tensor written by several statements is treated as one
// value per statement (its versions); reads through computed subscripts (affine or gathers)
// become scatter-adds. It produces text only: the caller defines it like any program, so the
// gradient is checked, inferred and compiled by the ordinary pipeline on every backend. It
// does not bind shapes or run anything.
#pragma once

#include <string>

#include "infer/ranges.h"
#include "lang/ast.h"

namespace tc::grad {

// `def` is checked and call-inlined (lang::check), not rank-polymorphic; `ranges` its
// inference. Throws tc::Error(TC_ERROR_UNSUPPORTED), located in `source`, where a gradient
// cannot be expressed.
std::string gradient_source(const lang::Def& def, const infer::DefRanges& ranges, const lang::SourceText& source);

}  // namespace tc::grad
