// program.cpp — builds the checked program: parse -> sema -> range inference -> description, IR.
#include "ir/program.h"

#include "ir/describe.h"
#include "ir/from_ast.h"
#include "infer/range_inference.h"
#include "lang/parser.h"
#include "lang/sema.h"
#include "support/error.h"

namespace tc::ir {

size_t Program::find_def(const char* entry) const {
  if (entry == nullptr) {
    if (ast.defs.size() == 1) return 0;
    std::string names;
    for (const auto& d : ast.defs) names += (names.empty() ? "" : ", ") + d.name;
    fail(TC_ERROR_INVALID_ARGUMENT, "entry is NULL but the program has " + std::to_string(ast.defs.size()) +
                                        " defs (" + names + "); name the one to use");
  }
  for (size_t i = 0; i < ast.defs.size(); ++i)
    if (ast.defs[i].name == entry) return i;
  std::string names;
  for (const auto& d : ast.defs) names += (names.empty() ? "" : ", ") + d.name;
  fail(TC_ERROR_INVALID_ARGUMENT, std::string("no def named '") + entry + "' (the program defines: " + names + ")");
}

std::shared_ptr<const Program> build_program(const std::string& source, const std::string& source_name) {
  auto p = std::make_shared<Program>();
  p->ast = lang::parse(lang::SourceText{source, source_name});
  lang::check(p->ast);
  auto text = std::make_shared<const lang::SourceText>(p->ast.source);
  for (const auto& d : p->ast.defs) {
    p->ranges.push_back(infer::infer_ranges(p->ast, d));
    p->descriptions.push_back(describe(d, p->ranges.back()));
    p->ir.push_back(from_ast(d, p->ranges.back(), text));
  }
  return p;
}

}  // namespace tc::ir
