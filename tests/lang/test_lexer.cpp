// test_lexer.cpp — white-box tests of src/lang/lexer.cpp and the diagnostics it produces.
#include <gtest/gtest.h>

#include "lang_test_util.h"

using tc::lang::Tok;
using tc::lang::Token;
using tc_test::error_of;
using tc_test::lex;

namespace {

std::vector<Tok> kinds(const std::string& text) {
  std::vector<Tok> out;
  for (const Token& t : lex(text)) out.push_back(t.kind);
  return out;
}

std::vector<std::string> texts(const std::string& text) {
  std::vector<std::string> out;
  for (const Token& t : lex(text))
    if (t.kind != Tok::End) out.push_back(t.text);
  return out;
}

std::string lex_error(const std::string& text, const std::string& file = "") {
  return error_of([&] { lex(text, file); }, TC_ERROR_SYNTAX);
}

}  // namespace

TEST(Lexer, EmptySourceIsJustEnd) {
  auto toks = lex("");
  ASSERT_EQ(toks.size(), 1u);
  EXPECT_EQ(toks[0].kind, Tok::End);
  EXPECT_EQ(kinds("   \n\t  # only a comment\n"), std::vector<Tok>{Tok::End});
}

TEST(Lexer, Punctuation) {
  EXPECT_EQ(kinds("( ) { } [ ] , . : ? ->"),
            (std::vector<Tok>{Tok::LParen, Tok::RParen, Tok::LBrace, Tok::RBrace, Tok::LBracket, Tok::RBracket,
                              Tok::Comma, Tok::Dot, Tok::Colon, Tok::Question, Tok::Arrow, Tok::End}));
}

TEST(Lexer, ArithmeticAndLogicalOperators) {
  EXPECT_EQ(kinds("+ - * / % ! && || == != < <= > >= ="),
            (std::vector<Tok>{Tok::Plus, Tok::Minus, Tok::Star, Tok::Slash, Tok::Percent, Tok::Not, Tok::AndAnd,
                              Tok::OrOr, Tok::Eq, Tok::Ne, Tok::Lt, Tok::Le, Tok::Gt, Tok::Ge, Tok::Assign,
                              Tok::End}));
}

TEST(Lexer, ReductionOperatorsAreSingleTokens) {
  EXPECT_EQ(kinds("+= *= min= max= +=! *=! min=! max=!"),
            (std::vector<Tok>{Tok::PlusEq, Tok::StarEq, Tok::MinEq, Tok::MaxEq, Tok::PlusEqBang, Tok::StarEqBang,
                              Tok::MinEqBang, Tok::MaxEqBang, Tok::End}));
  EXPECT_EQ(texts("+=! min=! max="), (std::vector<std::string>{"+=!", "min=!", "max="}));
}

TEST(Lexer, ReductionOperatorsInAStatement) {
  EXPECT_EQ(kinds("A(i) min=! B(i)"),
            (std::vector<Tok>{Tok::Ident, Tok::LParen, Tok::Ident, Tok::RParen, Tok::MinEqBang, Tok::Ident,
                              Tok::LParen, Tok::Ident, Tok::RParen, Tok::End}));
  // No whitespace between the operator and a following '!' operand changes nothing for '=':
  EXPECT_EQ(kinds("A(i)=!B(i)")[4], Tok::Assign);
  EXPECT_EQ(kinds("A(i)=!B(i)")[5], Tok::Not);
}

TEST(Lexer, MinMaxAreIdentifiersUnlessFollowedBySingleEquals) {
  EXPECT_EQ(kinds("min(a, b)")[0], Tok::Ident);
  EXPECT_EQ(kinds("max == 1"), (std::vector<Tok>{Tok::Ident, Tok::Eq, Tok::IntLit, Tok::End}));
  EXPECT_EQ(kinds("min = 1"), (std::vector<Tok>{Tok::Ident, Tok::Assign, Tok::IntLit, Tok::End}));
  EXPECT_EQ(kinds("max=!=")[0], Tok::MaxEq);  // "!=" is not a bang
  EXPECT_EQ(kinds("max=!=")[1], Tok::Ne);
  EXPECT_EQ(kinds("minimum=1")[0], Tok::Ident);
  EXPECT_EQ(texts("minimum=1")[0], "minimum");
}

TEST(Lexer, KeywordsAndIdentifiers) {
  EXPECT_EQ(kinds("def where in exists"),
            (std::vector<Tok>{Tok::Def, Tok::Where, Tok::In, Tok::Exists, Tok::End}));
  EXPECT_EQ(kinds("define wherever inx _exists x1 _ __a9"),
            (std::vector<Tok>{Tok::Ident, Tok::Ident, Tok::Ident, Tok::Ident, Tok::Ident, Tok::Ident, Tok::Ident,
                              Tok::End}));
  EXPECT_EQ(texts("define _x1"), (std::vector<std::string>{"define", "_x1"}));
}

TEST(Lexer, DimensionSelectorIsNotANumber) {
  EXPECT_EQ(kinds("T.0"), (std::vector<Tok>{Tok::Ident, Tok::Dot, Tok::IntLit, Tok::End}));
  EXPECT_EQ(texts("T.12"), (std::vector<std::string>{"T", ".", "12"}));
  EXPECT_EQ(kinds("A.1 + .5"), (std::vector<Tok>{Tok::Ident, Tok::Dot, Tok::IntLit, Tok::Plus, Tok::FloatLit, Tok::End}));
}

TEST(Lexer, LeadingDotNumber) {
  auto toks = lex("(.5)");
  ASSERT_EQ(toks.size(), 4u);
  EXPECT_EQ(toks[1].kind, Tok::FloatLit);
  EXPECT_EQ(toks[1].text, ".5");
  EXPECT_EQ(kinds("x * .25")[2], Tok::FloatLit);
  // A lone '.' not followed by a digit is a Dot.
  EXPECT_EQ(kinds(". x")[0], Tok::Dot);
}

TEST(Lexer, IntegerLiterals) {
  auto toks = lex("1 0 42 007");
  EXPECT_EQ(texts("1 0 42 007"), (std::vector<std::string>{"1", "0", "42", "007"}));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(toks[i].kind, Tok::IntLit) << i;
}

TEST(Lexer, FloatLiterals) {
  const char* cases[] = {".5", "3E-5", "1e-5", "2.0f", "1.", "1.5", "1e+3", "7e2", "2.5F", "1.e3", ".5e-1f"};
  for (const char* c : cases) {
    auto toks = lex(c);
    ASSERT_EQ(toks.size(), 2u) << c;
    EXPECT_EQ(toks[0].kind, Tok::FloatLit) << c;
    EXPECT_EQ(toks[0].text, c);
  }
}

TEST(Lexer, ExponentNeedsDigits) {
  // "1e" and "2f" are not numbers: letters glued to a number are an error, not a new identifier.
  std::string m = lex_error("1e");
  EXPECT_NE(m.find("in number literal"), std::string::npos) << m;
  m = lex_error("x = 2f");
  EXPECT_NE(m.find("'f'"), std::string::npos) << m;
  EXPECT_NE(m.find("1:6: error:"), std::string::npos) << m;
  lex_error("3abc");
}

TEST(Lexer, NumberFollowedByOperator) {
  EXPECT_EQ(kinds("1-2"), (std::vector<Tok>{Tok::IntLit, Tok::Minus, Tok::IntLit, Tok::End}));
  EXPECT_EQ(kinds("1 -2"), (std::vector<Tok>{Tok::IntLit, Tok::Minus, Tok::IntLit, Tok::End}));
  lex_error("1e-x");  // an exponent needs digits
  EXPECT_EQ(kinds("2.0f*x"), (std::vector<Tok>{Tok::FloatLit, Tok::Star, Tok::Ident, Tok::End}));
}

TEST(Lexer, CommentsRunToEndOfLine) {
  EXPECT_EQ(kinds("a # b c d\nd # e\n#f"), (std::vector<Tok>{Tok::Ident, Tok::Ident, Tok::End}));
  EXPECT_EQ(texts("a # @@@ $ non-ascii \xc3\xa9\nb"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(kinds("a#b"), (std::vector<Tok>{Tok::Ident, Tok::End}));
}

TEST(Lexer, LineAndColumnPositions) {
  auto toks = lex("def f\n  # comment\n\tA(i)  +=! B\n");
  ASSERT_GE(toks.size(), 8u);
  EXPECT_EQ(toks[0].loc.line, 1);
  EXPECT_EQ(toks[0].loc.col, 1);
  EXPECT_EQ(toks[1].loc.line, 1);
  EXPECT_EQ(toks[1].loc.col, 5);
  EXPECT_EQ(toks[2].text, "A");
  EXPECT_EQ(toks[2].loc.line, 3);
  EXPECT_EQ(toks[2].loc.col, 2);  // a tab counts as one column
  EXPECT_EQ(toks[6].kind, Tok::PlusEqBang);
  EXPECT_EQ(toks[6].loc.line, 3);
  EXPECT_EQ(toks[6].loc.col, 8);
  EXPECT_EQ(toks[7].loc.col, 12);
  // Offsets are byte offsets into the text.
  EXPECT_EQ(toks[2].loc.offset, std::string("def f\n  # comment\n\t").size());
  // The End token sits after the last character.
  EXPECT_EQ(toks.back().kind, Tok::End);
  EXPECT_EQ(toks.back().loc.line, 4);
}

TEST(Lexer, BadCharacterIsSyntaxErrorWithLocationAndCaret) {
  std::string m = lex_error("def f\n  x @ y");
  EXPECT_NE(m.find("f:2:5: error:"), std::string::npos) << m;
  EXPECT_NE(m.find("unexpected character '@'"), std::string::npos) << m;
  EXPECT_NE(m.find("\n  x @ y\n    ^"), std::string::npos) << m;
}

TEST(Lexer, BadCharacters) {
  for (const char* s : {"$", "`", "\\", "&", "|", "'", "\"", ";", "~", "^"}) {
    std::string m = lex_error(std::string("a ") + s);
    EXPECT_NE(m.find("1:3: error:"), std::string::npos) << s << ": " << m;
    EXPECT_NE(m.find("unexpected character"), std::string::npos) << s << ": " << m;
    EXPECT_NE(m.find("^"), std::string::npos) << s << ": " << m;
  }
}

TEST(Lexer, NonAsciiBytesAreReportedAsHex) {
  std::string m = lex_error("a = \xc3\xa9");  // "é" in UTF-8
  EXPECT_NE(m.find("1:5: error:"), std::string::npos) << m;
  EXPECT_NE(m.find("byte 0xc3"), std::string::npos) << m;
  m = lex_error("\x01");
  EXPECT_NE(m.find("byte 0x01"), std::string::npos) << m;
  m = lex_error("x\xff");
  EXPECT_NE(m.find("byte 0xff"), std::string::npos) << m;
  m = lex_error(std::string("a\0b", 3));
  EXPECT_NE(m.find("byte 0x00"), std::string::npos) << m;
}

TEST(Lexer, ErrorNamesFileOrDefOrSource) {
  EXPECT_NE(lex_error("def foo(float(N) A) -> B { @ }", "kernels.tc").find("kernels.tc:1:28: error:"),
            std::string::npos);
  EXPECT_NE(lex_error("def foo(float(N) A) -> B { @ }").find("foo:1:28: error:"), std::string::npos);
  EXPECT_NE(lex_error("def a() -> B {}\ndef bar() -> C { @ }").find("bar:2:18: error:"), std::string::npos);
  EXPECT_NE(lex_error("@").find("<source>:1:1: error:"), std::string::npos);
}

TEST(Lexer, CaretKeepsTabs) {
  std::string m = lex_error("\t\tx @");
  EXPECT_NE(m.find("\n\t\tx @\n\t\t  ^"), std::string::npos) << m;
}

TEST(Lexer, DescribeTokens) {
  EXPECT_STREQ(tc::lang::describe(Tok::MinEqBang), "'min=!'");
  EXPECT_STREQ(tc::lang::describe(Tok::Arrow), "'->'");
  EXPECT_STREQ(tc::lang::describe(Tok::End), "end of input");
  EXPECT_STREQ(tc::lang::describe(Tok::Ident), "an identifier");
}
