// parser.cpp — the TC grammar of tc-semantics.md:
//   def NAME ( arg, ... ) -> ( ret, ... ) { stmt* }      ('->' may also be followed by bare names)
//   stmt ::= ID ( exp, ... ) OP exp [where clause, ...] | ID OP exp ... | id, id = ID ( id, ... )
//   (left-hand side subscripts that are not all plain names make a scatter: ast.h, Stmt::write)
//   A literal `...` (rank polymorphism, lang/instantiate.h) may stand once in a type's
//   dimension list, a left-hand side's index list and an access's subscript list.
//   clause ::= ID in exp : exp | ID = [ exp , exp [ | ID = [ exp , exp ) | ID = exp | exists exp
// Expression precedence, low to high: ?: || && == != < <= > >= + - * / % unary postfix.
// Nesting deeper than kMaxDepth is reported, not recursed into, so hostile input cannot
// overflow the stack.
#include "lang/parser.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "lang/lexer.h"
#include "support/error.h"

namespace tc::lang {
namespace {

constexpr int kMaxDepth = 256;

class Parser {
 public:
  explicit Parser(const SourceText& src) : src_(src), toks_(lex(src)) {}

  std::vector<Def> parse_program() {
    std::vector<Def> defs;
    while (!at(Tok::End)) defs.push_back(parse_def());
    if (defs.empty()) error(peek().loc, "expected 'def': the source contains no definition");
    return defs;
  }

 private:
  // ---- token helpers ----
  const Token& peek(size_t k = 0) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }
  bool at(Tok k) const { return peek().kind == k; }
  Token next() { return toks_[pos_ < toks_.size() - 1 ? pos_++ : pos_]; }
  bool accept(Tok k) {
    if (!at(k)) return false;
    ++pos_;
    return true;
  }
  Token expect(Tok k, const char* context) {
    if (!at(k)) error(peek().loc, std::string("expected ") + describe(k) + " " + context + ", got " + shown(peek()));
    return next();
  }
  static std::string shown(const Token& t) {
    return t.kind == Tok::End ? "end of input" : "'" + t.text + "'";
  }
  [[noreturn]] void error(SourceLoc loc, const std::string& msg) const {
    report(TC_ERROR_SYNTAX, src_, def_name_, loc, msg);
  }

  // ---- definitions ----
  Def parse_def() {
    Def d;
    if (!at(Tok::Def)) error(peek().loc, "expected 'def', got " + shown(peek()));
    d.loc = next().loc;
    Token name = expect(Tok::Ident, "after 'def'");
    d.name = name.text;
    def_name_ = d.name;
    polymorphic_ = false;
    expect(Tok::LParen, "to open the parameter list");
    if (!at(Tok::RParen)) {
      do d.inputs.push_back(parse_param(/*output=*/false));
      while (accept(Tok::Comma));
    }
    expect(Tok::RParen, "to close the parameter list");
    expect(Tok::Arrow, "before the outputs");
    if (accept(Tok::LParen)) {
      do d.outputs.push_back(parse_param(/*output=*/true));
      while (accept(Tok::Comma));
      expect(Tok::RParen, "to close the output list");
    } else {
      do d.outputs.push_back(parse_param(/*output=*/true));
      while (accept(Tok::Comma));
    }
    expect(Tok::LBrace, "to open the body");
    while (!at(Tok::RBrace)) {
      if (at(Tok::End)) error(peek().loc, "expected '}' to close the body of '" + d.name + "'");
      d.stmts.push_back(parse_stmt());
    }
    next();
    def_name_.clear();
    d.polymorphic = polymorphic_;
    return d;
  }

  // "float(M, 3) A", "float a", and for outputs also "C" and "int32(M,N) C".
  Param parse_param(bool output) {
    Param p;
    Token first = expect(Tok::Ident, output ? "(an output name)" : "(a parameter type)");
    if (output && (at(Tok::Comma) || at(Tok::RParen) || at(Tok::LBrace))) {
      p.name = first.text;
      p.loc = first.loc;
      return p;
    }
    auto type = scalar_type_from_name(first.text);
    if (!type)
      error(first.loc, "unknown type '" + first.text +
                           "' (types: bool, uint8..uint64, int8..int64, float16/half, bfloat16/bf16, "
                           "float32/float, float64/double)");
    p.type = type;
    if (accept(Tok::LParen)) {
      p.has_dims = true;
      if (!at(Tok::RParen)) {
        do {
          p.dims.push_back(parse_dim());
          if (p.dims.back().ellipsis) {
            polymorphic_ = true;
            for (size_t i = 0; i + 1 < p.dims.size(); ++i)
              if (p.dims[i].ellipsis)
                error(p.dims.back().loc, "a tensor type may have at most one '...' (it stands for all the dimensions "
                                         "between the ones named)");
          }
        } while (accept(Tok::Comma));
      }
      expect(Tok::RParen, "to close the dimension list");
    }
    Token name = expect(Tok::Ident, "(the parameter name)");
    p.name = name.text;
    p.loc = name.loc;
    return p;
  }

  DimSpec parse_dim() {
    DimSpec d;
    d.loc = peek().loc;
    if (at(Tok::Ident)) {
      d.name = next().text;
    } else if (at(Tok::Ellipsis)) {
      next();
      d.name = "...";
      d.ellipsis = true;
    } else if (at(Tok::IntLit)) {
      d.value = parse_int(next());
    } else {
      error(peek().loc, "expected a size name or an integer in a tensor type, got " + shown(peek()));
    }
    return d;
  }

  int64_t parse_int(const Token& t) const {
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(t.text.c_str(), &end, 10);
    if (errno == ERANGE) error(t.loc, "integer literal '" + t.text + "' is too large");
    return v;
  }

  // ---- statements ----
  static bool is_assign_op(Tok k) {
    switch (k) {
      case Tok::Assign: case Tok::PlusEq: case Tok::StarEq: case Tok::MinEq: case Tok::MaxEq:
      case Tok::PlusEqBang: case Tok::StarEqBang: case Tok::MinEqBang: case Tok::MaxEqBang:
        return true;
      default:
        return false;
    }
  }

  Stmt parse_stmt() {
    Stmt s;
    Token lhs = expect(Tok::Ident, "at the start of a statement");
    s.loc = lhs.loc;
    s.lhs = lhs.text;
    if (at(Tok::Comma)) return parse_call_stmt(std::move(s));
    if (accept(Tok::LParen)) {
      parse_lhs_subscripts(s);
      expect(Tok::RParen, "to close the left-hand side indices");
    } else {
      s.bare_lhs = true;
    }
    if (!is_assign_op(peek().kind))
      error(peek().loc, "expected '=' or a reduction operator (+=, *=, min=, max=, +=!, *=!, min=!, max=!), got " +
                            shown(peek()));
    s.op_loc = peek().loc;
    s.op = next().kind;
    s.rhs = parse_expr(0);
    if (accept(Tok::Where)) {
      do parse_where_clause(s);
      while (accept(Tok::Comma));
    }
    return s;
  }

  // The left-hand side's subscripts. Plain names (and one `...`) are the written element's
  // index variables, as always; any other expression, or a repeated name, makes the statement a scatter
  // (ast.h, Stmt::write), written through computed subscripts.
  void parse_lhs_subscripts(Stmt& s) {
    std::vector<ExprPtr> subs;
    if (!at(Tok::RParen)) {
      do {
        s.index_locs.push_back(peek().loc);
        if (at(Tok::Ellipsis)) {
          for (const ExprPtr& e : subs)
            if (e->kind == ExprKind::Ellipsis) error(peek().loc, "an index list may have at most one '...'");
          polymorphic_ = true;
          subs.push_back(make(ExprKind::Ellipsis, next().loc));
          if (!at(Tok::Comma) && !at(Tok::RParen))
            error(peek().loc, "'...' stands for index variables: it must be a whole subscript, as in " + s.lhs + "(n, ...)");
        } else {
          subs.push_back(parse_expr(0));
        }
      } while (accept(Tok::Comma));
    }
    // A repeated name (`D(i, i)`, a diagonal) is a scatter too: it writes fewer elements than
    // its variables span, which only an accumulation makes meaningful (sema says so otherwise).
    std::set<std::string> names;
    bool plain = std::all_of(subs.begin(), subs.end(), [&](const ExprPtr& e) {
      return e->kind == ExprKind::Ellipsis || (e->kind == ExprKind::Ident && names.insert(e->name).second);
    });
    if (plain) {
      for (const ExprPtr& e : subs) s.indices.push_back(e->kind == ExprKind::Ellipsis ? "..." : e->name);
      return;
    }
    auto write = make(ExprKind::Call, s.loc);
    write->name = s.lhs;
    write->args = std::move(subs);
    s.write = limit_height(write);
    // The index variables of a scatter are all iterated; what `...` would stand for there
    // (a written dimension, or iterated ones) is not defined: refused rather than guessed.
    for (size_t i = 0; i < s.write->args.size(); ++i)
      if (const Expr* dots = find_ellipsis(*s.write->args[i]))
        report(TC_ERROR_UNSUPPORTED, src_, def_name_, dots->loc,
               "'...' in the left-hand side of a scatter (a statement whose left-hand side has a computed subscript) "
               "is not supported; name its index variables");
  }

  static const Expr* find_ellipsis(const Expr& e) {
    if (e.kind == ExprKind::Ellipsis) return &e;
    for (const ExprPtr& a : e.args)
      if (const Expr* found = find_ellipsis(*a)) return found;
    return nullptr;
  }

  Stmt parse_call_stmt(Stmt s) {
    s.is_call = true;
    s.call_outputs.push_back(s.lhs);
    while (accept(Tok::Comma)) s.call_outputs.push_back(expect(Tok::Ident, "in the output list of a call").text);
    s.op_loc = expect(Tok::Assign, "after the outputs of a call").loc;
    s.rhs = parse_expr(0);
    return s;
  }

  void parse_where_clause(Stmt& s) {
    if (accept(Tok::Exists)) {
      s.exists.push_back(parse_expr(0));
      return;
    }
    if (at(Tok::Ellipsis))
      error(peek().loc, "'...' cannot be given a range or a value in a where clause: its extents are those of "
                        "the '...' in the parameters' types");
    Token var = expect(Tok::Ident, "in a where clause ('i in lo:hi', 'x = exp' or 'exists exp')");
    if (accept(Tok::In)) {
      RangeConstraint r;
      r.var = var.text;
      r.loc = var.loc;
      r.lo = parse_expr(0);
      expect(Tok::Colon, "between the bounds of a range (ranges are written 'i in lo:hi', half-open)");
      r.hi = parse_expr(0);
      s.ranges.push_back(std::move(r));
      return;
    }
    if (at(Tok::Assign)) {
      next();
      if (at(Tok::LBracket)) {
        s.ranges.push_back(parse_bracket_range(var));
        return;
      }
      Let l;
      l.name = var.text;
      l.loc = var.loc;
      l.value = parse_expr(0);
      s.lets.push_back(std::move(l));
      return;
    }
    error(peek().loc, "expected 'in' or '=' after '" + var.text + "' in a where clause, got " + shown(peek()));
  }

  // The TC docs' spelling of a range, `k = [lo, hi[` (or `[lo, hi)`): exactly `k in lo:hi`,
  // half-open. A closing ']' would say the bound is included, which TC ranges never are.
  RangeConstraint parse_bracket_range(const Token& var) {
    RangeConstraint r;
    r.var = var.text;
    r.loc = var.loc;
    expect(Tok::LBracket, "to open a range");
    r.lo = parse_expr(0);
    std::string between = "between the bounds of a range ('" + var.text + " = [lo, hi[', half-open)";
    expect(Tok::Comma, between.c_str());
    r.hi = parse_expr(0);
    if (at(Tok::RBracket))
      error(peek().loc, "ranges are half-open: write '" + var.text + " = [lo, hi[' or '" + var.text +
                            " in lo:hi' (hi is not included), not '[lo, hi]'");
    if (!accept(Tok::LBracket) && !accept(Tok::RParen))
      error(peek().loc, "expected '[' or ')' to close the range '" + var.text + " = [lo, hi[', got " + shown(peek()));
    return r;
  }

  // ---- expressions ----
  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& parser) : p(parser) {
      if (++p.depth_ > kMaxDepth)
        p.error(p.peek().loc, "expression nested too deeply (more than " + std::to_string(kMaxDepth) + " levels)");
    }
    ~DepthGuard() { --p.depth_; }
  };

  static int precedence(Tok k) {
    switch (k) {
      case Tok::OrOr: return 1;
      case Tok::AndAnd: return 2;
      case Tok::Eq: case Tok::Ne: return 3;
      case Tok::Lt: case Tok::Le: case Tok::Gt: case Tok::Ge: return 4;
      case Tok::Plus: case Tok::Minus: return 5;
      case Tok::Star: case Tok::Slash: case Tok::Percent: return 6;
      default: return -1;
    }
  }

  // Every later pass recurses over expressions, so a tree as tall as a long operator chain
  // ("a + a + ... + a") would overflow the stack there: cap the height of every node.
  ExprPtr limit_height(ExprPtr e) {
    int h = 0;
    for (const auto& a : e->args) h = std::max(h, a->height);
    e->height = h + 1;
    if (e->height > kMaxDepth)
      error(e->loc, "expression nested too deeply (more than " + std::to_string(kMaxDepth) +
                        " levels of operators); split it with a where clause or a temporary");
    return e;
  }

  ExprPtr make(ExprKind kind, SourceLoc loc) {
    auto e = std::make_shared<Expr>();
    e->kind = kind;
    e->loc = loc;
    return e;
  }

  // min_prec 0 admits the ternary operator.
  ExprPtr parse_expr(int min_prec) {
    DepthGuard guard(*this);
    ExprPtr lhs = parse_unary();
    for (;;) {
      Tok k = peek().kind;
      int prec = precedence(k);
      if (prec < 0 || prec < min_prec) break;
      Token op = next();
      ExprPtr rhs = parse_expr(prec + 1);
      auto e = make(ExprKind::Binary, op.loc);
      e->op = op.kind;
      e->args = {lhs, rhs};
      lhs = limit_height(e);
    }
    if (min_prec == 0 && at(Tok::Question)) {
      Token q = next();
      auto e = make(ExprKind::Ternary, q.loc);
      ExprPtr then_e = parse_expr(0);
      expect(Tok::Colon, "in a conditional expression 'c ? a : b'");
      ExprPtr else_e = parse_expr(0);
      e->args = {lhs, then_e, else_e};
      return limit_height(e);
    }
    return lhs;
  }

  ExprPtr parse_unary() {
    if (at(Tok::Minus) || at(Tok::Not) || at(Tok::Plus)) {
      DepthGuard guard(*this);
      Token op = next();
      ExprPtr operand = parse_unary();
      if (op.kind == Tok::Plus) return operand;
      auto e = make(ExprKind::Unary, op.loc);
      e->op = op.kind;
      e->args = {operand};
      return limit_height(e);
    }
    return parse_postfix();
  }

  ExprPtr parse_postfix() {
    const Token& t = peek();
    switch (t.kind) {
      case Tok::IntLit: {
        Token lit = next();
        auto e = make(ExprKind::IntLit, lit.loc);
        e->name = lit.text;
        e->int_value = parse_int(lit);
        return e;
      }
      case Tok::FloatLit: {
        Token lit = next();
        auto e = make(ExprKind::FloatLit, lit.loc);
        e->name = lit.text;
        e->float_value = std::strtod(lit.text.c_str(), nullptr);
        return e;
      }
      case Tok::LParen: {
        next();
        ExprPtr inner = parse_expr(0);
        expect(Tok::RParen, "to close the parenthesis");
        return inner;
      }
      case Tok::Ident:
        return parse_name();
      case Tok::Ellipsis:
        error(t.loc, "'...' stands for index variables: it may only be a whole subscript of a tensor access, as in "
                     "X(n, ...)");
      default:
        error(t.loc, "expected an expression, got " + shown(t));
    }
  }

  // `...` as a whole subscript: the index variables of the dimensions `...` stands for.
  ExprPtr parse_ellipsis_subscript(const Expr& access) {
    Token dots = next();
    if (!at(Tok::Comma) && !at(Tok::RParen))
      error(dots.loc, "'...' stands for index variables: it must be a whole subscript, as in " + access.name + "(n, ...)");
    for (const ExprPtr& a : access.args)
      if (a->kind == ExprKind::Ellipsis) error(dots.loc, "an index list may have at most one '...'");
    polymorphic_ = true;
    return make(ExprKind::Ellipsis, dots.loc);
  }

  ExprPtr parse_name() {
    Token id = next();
    if (accept(Tok::Dot)) {
      Token n = expect(Tok::IntLit, "after '.' (a dimension number, as in T.0)");
      auto e = make(ExprKind::Dim, id.loc);
      e->name = id.text;
      e->int_value = parse_int(n);
      return e;
    }
    if (accept(Tok::LParen)) {
      auto e = make(ExprKind::Call, id.loc);
      e->name = id.text;
      if (!at(Tok::RParen)) {
        do e->args.push_back(at(Tok::Ellipsis) ? parse_ellipsis_subscript(*e) : parse_expr(0));
        while (accept(Tok::Comma));
      }
      expect(Tok::RParen, "to close the argument list");
      return limit_height(e);
    }
    auto e = make(ExprKind::Ident, id.loc);
    e->name = id.text;
    return e;
  }

  const SourceText& src_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::string def_name_;
  bool polymorphic_ = false;  // the def being parsed has a `...`
};

}  // namespace

Program parse(SourceText source) {
  Program p;
  p.source = std::move(source);
  p.defs = Parser(p.source).parse_program();
  return p;
}

}  // namespace tc::lang
