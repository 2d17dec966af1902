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

namespace {

// Sema, range inference, description and IR of every def of p->ast (instances included).
void check_and_infer(Program& p, int shown_rank) {
  lang::check(p.ast);
  auto text = std::make_shared<const lang::SourceText>(p.ast.source);
  for (size_t i = 0; i < p.ast.defs.size(); ++i) {
    const auto& d = p.ast.defs[i];
    p.ranges.push_back(infer::infer_ranges(p.ast, d));
    std::string description = describe(d, p.ranges.back());
    if (i < p.polymorphic.size() && p.polymorphic[i])
      description = lang::show_ellipsis(description, p.ellipsis, shown_rank);
    p.descriptions.push_back(description);
    p.ir.push_back(from_ast(d, p.ranges.back(), text));
  }
}

// Rethrows an error of an instance with the instance's names written as `...`.
template <typename F>
auto showing_ellipsis(const lang::EllipsisNames& names, int rank, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error& e) {
    throw Error(e.status(), lang::show_ellipsis(e.what(), names, rank));
  }
}

}  // namespace

std::shared_ptr<const Program> build_program(const std::string& source, const std::string& source_name) {
  auto p = std::make_shared<Program>();
  p->ast = lang::parse(lang::SourceText{source, source_name});
  lang::check_polymorphism(p->ast);
  p->ellipsis = lang::ellipsis_names(p->ast.source);
  for (auto& d : p->ast.defs) {
    p->polymorphic.push_back(d.polymorphic);
    p->written_inputs.push_back(d.inputs);
    if (d.polymorphic) lang::instantiate(d, 1, p->ellipsis);
  }
  showing_ellipsis(p->ellipsis, 1, [&] { check_and_infer(*p, 1); });
  return p;
}

std::shared_ptr<const Program> Program::instance(size_t def_index, int rank) const {
  std::lock_guard<std::mutex> lock(instances_mu_);
  auto key = std::make_pair(def_index, rank);
  auto it = instances_.find(key);
  if (it != instances_.end()) return it->second;
  auto q = std::make_shared<Program>();
  q->ast = lang::parse(ast.source);  // a fresh tree: instantiation rewrites it in place
  q->ellipsis = ellipsis;
  for (size_t i = 0; i < q->ast.defs.size(); ++i) {
    auto& d = q->ast.defs[i];
    q->polymorphic.push_back(false);
    q->written_inputs.push_back(d.inputs);
    if (d.polymorphic) lang::instantiate(d, i == def_index ? rank : 1, ellipsis);
  }
  showing_ellipsis(ellipsis, rank, [&] { check_and_infer(*q, rank); });
  instances_[key] = q;
  return q;
}

}  // namespace tc::ir
