// instantiate.cpp — see instantiate.h.
#include "lang/instantiate.h"

#include <algorithm>
#include <cctype>

#include "support/error.h"

namespace tc::lang {
namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool has_ellipsis(const std::vector<DimSpec>& dims) {
  return std::any_of(dims.begin(), dims.end(), [](const DimSpec& d) { return d.ellipsis; });
}

bool has_ellipsis(const Stmt& s) {
  if (std::find(s.indices.begin(), s.indices.end(), "...") != s.indices.end()) return true;
  bool found = false;
  auto visit = [&](const Expr& e, auto& self) -> void {
    if (e.kind == ExprKind::Ellipsis) found = true;
    for (const ExprPtr& a : e.args) self(*a, self);
  };
  if (s.rhs) visit(*s.rhs, visit);
  for (const Let& l : s.lets) visit(*l.value, visit);
  for (const ExprPtr& e : s.exists) visit(*e, visit);
  return found;
}

// The def a statement calls (`h = f(x)`, `a, b = f(x)`), or "".
std::string callee(const Stmt& s) {
  bool call = s.is_call || (s.bare_lhs && s.op == Tok::Assign && s.rhs && s.rhs->kind == ExprKind::Call);
  return call && s.rhs && s.rhs->kind == ExprKind::Call ? s.rhs->name : "";
}

SourceLoc ellipsis_loc(const Stmt& s) {
  for (size_t i = 0; i < s.indices.size(); ++i)
    if (s.indices[i] == "...") return s.index_locs[i];
  return s.loc;
}

void expand_dims(std::vector<DimSpec>& dims, int rank, const EllipsisNames& names) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (!dims[i].ellipsis) continue;
    DimSpec at = dims[i];
    std::vector<DimSpec> expanded;
    for (int k = 0; k < rank; ++k) {
      DimSpec d;
      d.name = names.size(k);
      d.loc = at.loc;
      expanded.push_back(d);
    }
    dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(i));
    dims.insert(dims.begin() + static_cast<std::ptrdiff_t>(i), expanded.begin(), expanded.end());
    return;  // at most one per type (the parser's rule)
  }
}

void expand_expr(const ExprPtr& e, int rank, const EllipsisNames& names) {
  size_t i = 0;
  while (i < e->args.size()) {
    if (e->args[i]->kind != ExprKind::Ellipsis) {
      expand_expr(e->args[i], rank, names);
      ++i;
      continue;
    }
    SourceLoc loc = e->args[i]->loc;
    std::vector<ExprPtr> vars;
    for (int k = 0; k < rank; ++k) {
      auto v = std::make_shared<Expr>();
      v->kind = ExprKind::Ident;
      v->loc = loc;
      v->name = names.index(k);
      vars.push_back(v);
    }
    e->args.erase(e->args.begin() + static_cast<std::ptrdiff_t>(i));
    e->args.insert(e->args.begin() + static_cast<std::ptrdiff_t>(i), vars.begin(), vars.end());
    i += vars.size();
  }
}

void expand_stmt(Stmt& s, int rank, const EllipsisNames& names) {
  for (size_t i = 0; i < s.indices.size(); ++i) {
    if (s.indices[i] != "...") continue;
    SourceLoc loc = s.index_locs[i];
    s.indices.erase(s.indices.begin() + static_cast<std::ptrdiff_t>(i));
    s.index_locs.erase(s.index_locs.begin() + static_cast<std::ptrdiff_t>(i));
    for (int k = 0; k < rank; ++k) {
      s.indices.insert(s.indices.begin() + static_cast<std::ptrdiff_t>(i) + k, names.index(k));
      s.index_locs.insert(s.index_locs.begin() + static_cast<std::ptrdiff_t>(i) + k, loc);
    }
    break;
  }
  if (s.rhs) expand_expr(s.rhs, rank, names);
  for (Let& l : s.lets) expand_expr(l.value, rank, names);
  for (ExprPtr& e : s.exists) expand_expr(e, rank, names);
  for (RangeConstraint& r : s.ranges) {
    expand_expr(r.lo, rank, names);
    expand_expr(r.hi, rank, names);
  }
}

// Replaces the identifier `from` (whole words only) by `to`.
void replace_word(std::string& text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
    bool starts = at == 0 || !ident_char(text[at - 1]);
    bool ends = at + from.size() == text.size() || !ident_char(text[at + from.size()]);
    if (starts && ends) {
      text.replace(at, from.size(), to);
      at += to.size();
    } else {
      at += from.size();
    }
  }
}

}  // namespace

EllipsisNames ellipsis_names(const SourceText& source) {
  EllipsisNames n;
  while (source.text.find(n.size_prefix) != std::string::npos || source.text.find(n.index_prefix) != std::string::npos) {
    n.size_prefix = "_" + n.size_prefix;
    n.index_prefix = "_" + n.index_prefix;
  }
  return n;
}

void check_polymorphism(const Program& program) {
  auto is_polymorphic = [&](const std::string& name) {
    return std::any_of(program.defs.begin(), program.defs.end(),
                       [&](const Def& d) { return d.polymorphic && d.name == name; });
  };
  for (const Def& d : program.defs) {
    for (const Stmt& s : d.stmts) {
      std::string f = callee(s);
      if (!f.empty() && is_polymorphic(f))
        report(TC_ERROR_UNSUPPORTED, program.source, d.name, s.rhs->loc,
               "'" + f + "' has '...' in its signature: calling a rank-polymorphic def from another def is not "
               "supported (call it from the API, which picks the rank from the inputs)");
    }
    if (!d.polymorphic) continue;
    for (const Param& p : d.outputs)
      for (const DimSpec& dim : p.dims)
        if (dim.ellipsis)
          report(TC_ERROR_SEMANTIC, program.source, d.name, dim.loc,
                 "an output's type may not have '...': its dimensions are inferred from the statements (write "
                 "'" + p.name + "(..., i)' on the left-hand side instead)");
    bool typed = std::any_of(d.inputs.begin(), d.inputs.end(), [](const Param& p) { return has_ellipsis(p.dims); });
    if (typed) continue;
    for (const Stmt& s : d.stmts)
      if (has_ellipsis(s))
        report(TC_ERROR_SEMANTIC, program.source, d.name, ellipsis_loc(s),
               "'...' in an index list stands for the dimensions of the '...' in an input's type, and no input of '" +
                   d.name + "' has one (declare, say, 'float(N, ...) X')");
  }
}

void instantiate(Def& def, int rank, const EllipsisNames& names) {
  for (Param& p : def.inputs) expand_dims(p.dims, rank, names);
  for (Stmt& s : def.stmts) expand_stmt(s, rank, names);
}

std::string show_ellipsis(std::string text, const EllipsisNames& names, int rank) {
  for (int k = rank - 1; k >= 0; --k) {
    std::string shown = rank == 1 ? "..." : "...[" + std::to_string(k) + "]";
    replace_word(text, names.size(k), shown);
    replace_word(text, names.index(k), shown);
  }
  return text;
}

}  // namespace tc::lang
