// describe.cpp — see describe.h.
#include "ir/describe.h"

#include "lang/printer.h"

namespace tc::ir {

// Halide prints "((I + 1)/2)"; drop parentheses that enclose the whole expression.
std::string extent_text(const infer::SymExpr& e) {
  std::string s = e.to_string();
  while (s.size() >= 2 && s.front() == '(' && s.back() == ')') {
    int depth = 0;
    size_t close = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
      if (depth == 0) {
        close = i;
        break;
      }
    }
    if (close != s.size() - 1) break;
    s = s.substr(1, s.size() - 2);
  }
  return s;
}

namespace {

const char* role_name(lang::TensorRole r) {
  switch (r) {
    case lang::TensorRole::Input: return "input";
    case lang::TensorRole::Output: return "output";
    default: return "temporary";
  }
}

}  // namespace

std::string describe(const lang::Def& def, const infer::DefRanges& ranges) {
  std::string out = "def " + def.name + "\n";
  for (size_t t = 0; t < def.tensors.size(); ++t) {
    const auto& decl = def.tensors[t];
    out += std::string("  ") + role_name(decl.role) + " " + decl.name + ": " + name(decl.type) + "(";
    for (size_t d = 0; d < ranges.extents[t].size(); ++d) out += (d ? ", " : "") + extent_text(ranges.extents[t][d]);
    out += ")\n";
  }
  for (size_t s = 0; s < def.stmts.size(); ++s) {
    const auto& st = def.stmts[s];
    // A scatter shows its write, computed subscripts and all ("scatter into H(I(i))").
    std::string written = st.is_scatter() ? "scatter into " + lang::to_source(*st.write) : st.lhs;
    out += "  statement " + std::to_string(s + 1) + " (line " + std::to_string(st.loc.line) + ", " + written + "):";
    for (size_t v = 0; v < st.vars.size(); ++v) {
      const auto& r = ranges.stmts[s].vars[v];
      out += " " + st.vars[v] + " in " + extent_text(r.lo) + ":" + extent_text(r.hi) +
             (!st.is_scatter() && v >= st.num_lhs_vars() ? " (reduction)" : "");
      if (v + 1 < st.vars.size()) out += ",";
    }
    out += "\n";
  }
  return out;
}

}  // namespace tc::ir
