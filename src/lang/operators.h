// operators.h — the language's binary arithmetic and comparison operators as meanings rather
// than tokens (&& and || are control flow, not listed): what the IR and every evaluator of
// index or value arithmetic switch on. The lexer's tokens map to them once (binop_of).
#pragma once

#include <optional>

#include "lang/token.h"

namespace tc::lang {

enum class BinOp { Add, Sub, Mul, Div, Mod, Lt, Le, Gt, Ge, Eq, Ne };

inline bool is_comparison(BinOp op) { return op >= BinOp::Lt; }
const char* spelling(BinOp op);             // "+", "<", ...
std::optional<BinOp> binop_of(Tok token);   // nullopt for && || and non-operators

}  // namespace tc::lang
