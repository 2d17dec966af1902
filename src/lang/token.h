// token.h — the tokens of the TC language.
#pragma once

#include <string>

#include "lang/diagnostics.h"

namespace tc::lang {

enum class Tok {
  End, Ident, IntLit, FloatLit,
  // keywords
  Def, Where, In, Exists,
  // punctuation
  LParen, RParen, LBrace, RBrace, LBracket, RBracket, Comma, Dot, Colon, Question, Arrow,
  Ellipsis,  // ... (rank-polymorphic dimensions and index lists)
  // operators
  Plus, Minus, Star, Slash, Percent, Not, AndAnd, OrOr,
  Eq, Ne, Lt, Le, Gt, Ge,
  Assign,  // =
  // reductions: plain and with '!' (initialising)
  PlusEq, StarEq, MinEq, MaxEq, PlusEqBang, StarEqBang, MinEqBang, MaxEqBang,
};

struct Token {
  Tok kind = Tok::End;
  std::string text;
  SourceLoc loc;
};

const char* describe(Tok kind);  // for "expected X, got Y" messages

inline bool is_comparison(Tok k) {
  return k == Tok::Eq || k == Tok::Ne || k == Tok::Lt || k == Tok::Le || k == Tok::Gt || k == Tok::Ge;
}

}  // namespace tc::lang
