// expr_build.h — building TC expressions for generated source: literals, reads, sizes, arithmetic
// with the simplifications that keep a gradient readable (x * 1, x + 0, 0 * x), with nullptr
// standing for an exact zero. The trees are only printed (lang::to_source) and parsed again,
// so new nodes carry no sema annotations. It does not differentiate (derivative.h) or decide
// what to generate (gradient.h).
#pragma once

#include <string>
#include <vector>

#include "infer/ranges.h"
#include "lang/ast.h"

namespace tc::grad {

using lang::ExprPtr;

ExprPtr literal(const std::string& spelling);          // "1.0", "0.5", "2"
ExprPtr ident(const std::string& name);                // a name, or raw TC text printed as is
ExprPtr read(const std::string& tensor, const std::vector<ExprPtr>& subscripts);  // no subscripts: bare name
ExprPtr read_vars(const std::string& tensor, const std::vector<std::string>& vars);
std::vector<ExprPtr> idents(const std::vector<std::string>& names);
ExprPtr size(const infer::SymExpr& s);                 // a size expression, as TC text
ExprPtr clamp_into(ExprPtr e, const infer::Range& r);  // min(max(e, lo), hi - 1)
ExprPtr call(const std::string& name, std::vector<ExprPtr> args);
ExprPtr binary(lang::Tok op, ExprPtr a, ExprPtr b);
ExprPtr ternary(ExprPtr cond, ExprPtr then, ExprPtr otherwise);  // nullptr branches are 0.0

bool is_one(const ExprPtr& e);
ExprPtr add(ExprPtr a, ExprPtr b);  // nullptr: zero
ExprPtr sub(ExprPtr a, ExprPtr b);
ExprPtr mul(ExprPtr a, ExprPtr b);
ExprPtr neg(ExprPtr a);

}  // namespace tc::grad
