// ast.cpp — small helpers of the syntax tree (deep copy, lookups, queries).
#include "lang/ast.h"

#include <algorithm>

namespace tc::lang {

ExprPtr Expr::clone() const {
  auto e = std::make_shared<Expr>(*this);
  for (auto& a : e->args) a = a->clone();
  return e;
}

int Def::find_tensor(const std::string& n) const {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == n) return static_cast<int>(i);
  return -1;
}

bool Def::is_size(const std::string& n) const {
  return std::find(size_names.begin(), size_names.end(), n) != size_names.end();
}

size_t count_nodes(const Expr& e) {
  size_t n = 1;
  for (const auto& a : e.args) n += count_nodes(*a);
  return n;
}

bool reads_tensor(const Expr& e) {
  if (e.ref == Ref::Tensor) return true;
  for (const auto& a : e.args)
    if (reads_tensor(*a)) return true;
  return false;
}

namespace {
void add_tensor_reads(const Expr& e, std::vector<const Expr*>& out) {
  if (e.ref == Ref::Tensor) out.push_back(&e);
  for (const auto& a : e.args) add_tensor_reads(*a, out);
}
}  // namespace

std::vector<const Expr*> tensor_reads(const Expr& e) {
  std::vector<const Expr*> out;
  add_tensor_reads(e, out);
  return out;
}

void collect_index_vars(const Expr& e, std::set<std::string>& out) {
  if (e.kind == ExprKind::Ident && e.ref == Ref::Index) out.insert(e.name);
  for (const auto& a : e.args) collect_index_vars(*a, out);
}

}  // namespace tc::lang
