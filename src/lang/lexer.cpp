// lexer.cpp — the TC lexer: identifiers, C-style number literals, operators, '#' comments.
// Reduction operators are single tokens ("+=!", "min="), as in the original TC lexer;
// "T.0" lexes as Ident Dot IntLit because a '.' right after an identifier is a dimension
// selector, never the start of a number.
#include "lang/lexer.h"

#include <cctype>
#include <map>

#include "support/error.h"

namespace tc::lang {

const char* describe(Tok kind) {
  switch (kind) {
    case Tok::End: return "end of input";
    case Tok::Ident: return "an identifier";
    case Tok::IntLit: return "an integer";
    case Tok::FloatLit: return "a number";
    case Tok::Def: return "'def'";
    case Tok::Where: return "'where'";
    case Tok::In: return "'in'";
    case Tok::Exists: return "'exists'";
    case Tok::LParen: return "'('";
    case Tok::RParen: return "')'";
    case Tok::LBrace: return "'{'";
    case Tok::RBrace: return "'}'";
    case Tok::LBracket: return "'['";
    case Tok::Ellipsis: return "'...'";
    case Tok::RBracket: return "']'";
    case Tok::Comma: return "','";
    case Tok::Dot: return "'.'";
    case Tok::Colon: return "':'";
    case Tok::Question: return "'?'";
    case Tok::Arrow: return "'->'";
    case Tok::Plus: return "'+'";
    case Tok::Minus: return "'-'";
    case Tok::Star: return "'*'";
    case Tok::Slash: return "'/'";
    case Tok::Percent: return "'%'";
    case Tok::Not: return "'!'";
    case Tok::AndAnd: return "'&&'";
    case Tok::OrOr: return "'||'";
    case Tok::Eq: return "'=='";
    case Tok::Ne: return "'!='";
    case Tok::Lt: return "'<'";
    case Tok::Le: return "'<='";
    case Tok::Gt: return "'>'";
    case Tok::Ge: return "'>='";
    case Tok::Assign: return "'='";
    case Tok::PlusEq: return "'+='";
    case Tok::StarEq: return "'*='";
    case Tok::MinEq: return "'min='";
    case Tok::MaxEq: return "'max='";
    case Tok::PlusEqBang: return "'+=!'";
    case Tok::StarEqBang: return "'*=!'";
    case Tok::MinEqBang: return "'min=!'";
    case Tok::MaxEqBang: return "'max=!'";
  }
  return "a token";
}

namespace {

class Lexer {
 public:
  explicit Lexer(const SourceText& src) : src_(src), s_(src.text) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    for (;;) {
      skip_space_and_comments();
      Token t;
      t.loc = loc();
      if (pos_ >= s_.size()) {
        t.kind = Tok::End;
        out.push_back(t);
        return out;
      }
      lex_one(t, out.empty() ? Tok::End : out.back().kind);
      t.text = s_.substr(t.loc.offset, pos_ - t.loc.offset);
      out.push_back(std::move(t));
    }
  }

 private:
  SourceLoc loc() const { return SourceLoc{line_, static_cast<int>(pos_ - line_start_) + 1, pos_}; }
  char peek(size_t k = 0) const { return pos_ + k < s_.size() ? s_[pos_ + k] : '\0'; }
  void advance(size_t n = 1) {
    for (size_t i = 0; i < n && pos_ < s_.size(); ++i) {
      if (s_[pos_] == '\n') {
        ++line_;
        line_start_ = pos_ + 1;
      }
      ++pos_;
    }
  }

  void skip_space_and_comments() {
    for (;;) {
      unsigned char c = static_cast<unsigned char>(peek());
      if (c == '#') {
        while (pos_ < s_.size() && peek() != '\n') advance();
      } else if (c != '\0' && std::isspace(c)) {
        advance();
      } else {
        return;
      }
    }
  }

  static bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
  static bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
  static bool digit(char c) { return c >= '0' && c <= '9'; }

  void lex_one(Token& t, Tok previous) {
    char c = peek();
    if (ident_start(c)) return lex_word(t);
    if (digit(c) || (c == '.' && digit(peek(1)) && previous != Tok::Ident)) return lex_number(t);
    lex_operator(t);
  }

  void lex_word(Token& t) {
    size_t start = pos_;
    while (ident_char(peek())) advance();
    std::string w = s_.substr(start, pos_ - start);
    static const std::map<std::string, Tok> kKeywords = {
        {"def", Tok::Def}, {"where", Tok::Where}, {"in", Tok::In}, {"exists", Tok::Exists}};
    auto it = kKeywords.find(w);
    t.kind = it != kKeywords.end() ? it->second : Tok::Ident;
    // "min=" / "max=" (but not "min ==") are reduction operators.
    if ((w == "min" || w == "max") && peek() == '=' && peek(1) != '=') {
      advance();
      bool bang = peek() == '!' && peek(1) != '=';
      if (bang) advance();
      t.kind = w == "min" ? (bang ? Tok::MinEqBang : Tok::MinEq) : (bang ? Tok::MaxEqBang : Tok::MaxEq);
    }
  }

  void lex_number(Token& t) {
    bool is_float = false;
    while (digit(peek())) advance();
    if (peek() == '.') {
      is_float = true;
      advance();
      while (digit(peek())) advance();
    }
    if ((peek() == 'e' || peek() == 'E') &&
        (digit(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && digit(peek(2))))) {
      is_float = true;
      advance(2);
      while (digit(peek())) advance();
    }
    if (is_float && (peek() == 'f' || peek() == 'F')) advance();  // C's float suffix
    if (ident_char(peek()))
      report(TC_ERROR_SYNTAX, src_, "", loc(),
             std::string("unexpected character '") + peek() + "' in number literal");
    t.kind = is_float ? Tok::FloatLit : Tok::IntLit;
  }

  void lex_operator(Token& t) {
    struct Op { const char* text; Tok kind; };
    // Longest first.
    static const Op kOps[] = {
        {"...", Tok::Ellipsis},   {"+=!", Tok::PlusEqBang}, {"*=!", Tok::StarEqBang}, {"->", Tok::Arrow}, {"+=", Tok::PlusEq},
        {"*=", Tok::StarEq},      {"==", Tok::Eq},          {"!=", Tok::Ne},    {"<=", Tok::Le},
        {">=", Tok::Ge},          {"&&", Tok::AndAnd},      {"||", Tok::OrOr},  {"(", Tok::LParen},
        {")", Tok::RParen},       {"{", Tok::LBrace},       {"}", Tok::RBrace}, {"[", Tok::LBracket},
        {"]", Tok::RBracket},     {",", Tok::Comma},        {".", Tok::Dot},    {":", Tok::Colon},
        {"?", Tok::Question},     {"+", Tok::Plus},         {"-", Tok::Minus},  {"*", Tok::Star},
        {"/", Tok::Slash},        {"%", Tok::Percent},      {"!", Tok::Not},    {"<", Tok::Lt},
        {">", Tok::Gt},           {"=", Tok::Assign},
    };
    for (const Op& op : kOps) {
      size_t n = std::char_traits<char>::length(op.text);
      if (s_.compare(pos_, n, op.text) == 0) {
        advance(n);
        t.kind = op.kind;
        return;
      }
    }
    unsigned char c = static_cast<unsigned char>(peek());
    std::string shown = (c >= 0x20 && c < 0x7f) ? std::string("'") + static_cast<char>(c) + "'"
                                                 : "byte 0x" + hex(c);
    report(TC_ERROR_SYNTAX, src_, "", loc(), "unexpected character " + shown);
  }

  static std::string hex(unsigned char c) {
    const char* d = "0123456789abcdef";
    return std::string{d[c >> 4], d[c & 15]};
  }

  const SourceText& src_;
  const std::string& s_;
  size_t pos_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;
};

}  // namespace

std::vector<Token> lex(const SourceText& src) { return Lexer(src).run(); }

}  // namespace tc::lang
