// lexer.h — turns TC source text into tokens. Knows spelling only, not grammar.
#pragma once

#include <vector>

#include "lang/token.h"

namespace tc::lang {

// Throws tc::Error(TC_ERROR_SYNTAX) at the first character that starts no token.
std::vector<Token> lex(const SourceText& src);

}  // namespace tc::lang
