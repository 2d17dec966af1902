// lang_test_util.h — helpers shared by the white-box tests of src/lang.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lang/ast.h"
#include "lang/lexer.h"
#include "lang/parser.h"
#include "lang/sema.h"
#include "common/error_of.h"
#include "support/error.h"

namespace tc_test {

inline std::vector<tc::lang::Token> lex(const std::string& text, const std::string& file = "") {
  return tc::lang::lex(tc::lang::SourceText{text, file});
}

inline tc::lang::Program parse(const std::string& text, const std::string& file = "") {
  return tc::lang::parse(tc::lang::SourceText{text, file});
}

// Parses and checks.
inline tc::lang::Program checked(const std::string& text) {
  tc::lang::Program p = parse(text);
  tc::lang::check(p);
  return p;
}

inline std::string syntax_error(const std::string& text) {
  return error_of([&] { parse(text); }, TC_ERROR_SYNTAX);
}

inline std::string semantic_error(const std::string& text) {
  return error_of([&] { checked(text); }, TC_ERROR_SEMANTIC);
}

inline const tc::lang::TensorDecl& tensor(const tc::lang::Def& d, const std::string& name) {
  int t = d.find_tensor(name);
  if (t < 0) throw std::runtime_error("no tensor " + name);
  return d.tensors[t];
}

}  // namespace tc_test
