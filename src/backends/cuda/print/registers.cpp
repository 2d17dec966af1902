// registers.cpp — a reduction's element kept in a register over a loop or run that updates only it
// (cuda.private): finding the element, loading it before and storing it after.
#include "backends/cuda/print/printer.h"

#include "backends/cuda/isl_util.h"
#include "support/error.h"

namespace tc::backends::cuda::print {

// Whether every statement instance under `node` updates one element (`e`: filled from the
// first, compared with the others); `inner` collects the iterators of the loops passed.
bool Printer::one_element(isl_ast_node* node, std::optional<Element>& e, std::vector<std::string>& inner) const {
  switch (isl_ast_node_get_type(node)) {
    case isl_ast_node_user: {
      Call c = call_of(node);
      if (c.name[0] != 'S') return false;
      const ir::Stmt& st = b_.def().stmts[c.index];
      if (st.scatter || st.reduce == ir::ReduceOp::None) return false;
      for (const ir::Read& r : st.reads)
        if (r.tensor == st.lhs_tensor) return false;
      for (size_t k = st.num_lhs; k < c.args.size(); ++k)
        if (mentions(c.guard, "i" + std::to_string(k))) return false;
      Element mine{c.index, std::vector<std::string>(c.args.begin(), c.args.begin() + static_cast<long>(st.num_lhs)), c.guard};
      if (!e) e = mine;
      return *e == mine;
    }
    case isl_ast_node_for: {
      inner.push_back(isl_c(isl_ast_node_for_get_iterator(node)));
      return one_element(isl::manage(isl_ast_node_for_get_body(node)).get(), e, inner);
    }
    case isl_ast_node_if: {
      if (isl_ast_node_if_has_else_node(node) != isl_bool_false) return false;
      return one_element(isl::manage(isl_ast_node_if_get_then_node(node)).get(), e, inner);
    }
    case isl_ast_node_block: {
      isl::ast_node_list children = isl::manage(isl_ast_node_block_get_children(node));
      bool ok = true;
      for (int i = 0; ok && i < isl_ast_node_list_n_ast_node(children.get()); ++i)
        ok = one_element(isl::manage(isl_ast_node_list_get_ast_node(children.get(), i)).get(), e, inner);
      return ok;
    }
    default: return false;  // marks: mapped loops inside
  }
}

// The condition, C over the iterators outside `node`, under which some statement instance
// under `node` runs: "" where always; none where it would need a loop's iterator inside. A
// loop runs where its condition holds at its first value (isl's bounds are monotone) and its
// body runs on every iteration.
std::optional<std::string> Printer::reached(isl_ast_node* node) const {
  switch (isl_ast_node_get_type(node)) {
    case isl_ast_node_user: return std::string();
    case isl_ast_node_for: {
      std::optional<std::string> body = reached(isl::manage(isl_ast_node_for_get_body(node)).get());
      if (!body || mentions(*body, isl_c(isl_ast_node_for_get_iterator(node)))) return std::nullopt;
      return both(runs(node), *body);
    }
    case isl_ast_node_if: {
      if (isl_ast_node_if_has_else_node(node) != isl_bool_false) return std::nullopt;
      std::optional<std::string> then = reached(isl::manage(isl_ast_node_if_get_then_node(node)).get());
      if (!then) return std::nullopt;
      return both(isl_c(isl_ast_node_if_get_cond(node)), *then);
    }
    case isl_ast_node_block: {
      isl::ast_node_list children = isl::manage(isl_ast_node_block_get_children(node));
      std::optional<std::string> any;
      for (int i = 0; i < isl_ast_node_list_n_ast_node(children.get()); ++i) {
        std::optional<std::string> r = reached(isl::manage(isl_ast_node_list_get_ast_node(children.get(), i)).get());
        if (r && r->empty()) return r;
        if (!r) return std::nullopt;
        any = any ? either(*any, *r) : *r;
      }
      return any;
    }
    default: return std::nullopt;
  }
}

// Where `loop` runs at least once: its condition at its first value; "" where its bounds are
// constants and it does.
std::string Printer::runs(isl_ast_node* loop) {
  return trip_count(loop) > 0 ? "" : at_first_value(loop, isl_c(isl_ast_node_for_get_cond(loop)));
}

// C text over `loop`'s iterator with the iterator at its first value.
std::string Printer::at_first_value(isl_ast_node* loop, const std::string& text) {
  return replaced(text, isl_c(isl_ast_node_for_get_iterator(loop)), "(" + isl_c(isl_ast_node_for_get_init(loop)) + ")");
}

// C conditions, "" being true.
std::string Printer::both(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return a + b;
  return "(" + a + ") && (" + b + ")";
}

std::string Printer::either(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return "";
  return "(" + a + ") || (" + b + ")";
}

// Whether `node` updates one element only, which can stay in a register over it; `e`, where it
// holds the element of nodes before (a run's), gets `node`'s reached joined to theirs.
bool Printer::promotable(isl_ast_node* node, std::optional<Element>& e) const {
  if (!private_ || accumulating_) return false;
  const std::optional<std::string> before = e ? std::optional<std::string>(e->reached) : std::nullopt;
  std::vector<std::string> inner;
  if (!one_element(node, e, inner) || !e) return false;
  for (const std::string& it : inner) {
    if (mentions(e->guard, it)) return false;
    for (const std::string& sub : e->lhs)
      if (mentions(sub, it)) return false;
  }
  std::optional<std::string> r = reached(node);
  if (!r) return false;
  e->reached = before ? either(*before, *r) : *r;
  return true;
}

// The children of block `node` in order, in runs: two or more consecutive children updating
// one element (promotable: an unrolled loop's statements) as one run, with that element; any
// other child alone, with none.
void Printer::in_runs(isl_ast_node* node, const std::function<void(isl_ast_node_list*, int, int, const Element*)>& each) {
  isl::ast_node_list children = isl::manage(isl_ast_node_block_get_children(node));
  int n = isl_ast_node_list_n_ast_node(children.get());
  for (int i = 0; i < n;) {
    std::optional<Element> e;
    int end = i;
    for (; end < n; ++end) {
      std::optional<Element> next = e;
      if (!promotable(isl::manage(isl_ast_node_list_get_ast_node(children.get(), end)).get(), next)) break;
      e = next;
    }
    if (end - i < 2) end = i + 1;
    each(children.get(), i, end, end - i >= 2 ? &*e : nullptr);
    i = end;
  }
}

// Prints `body` (what updates e's element) with the element in tc_acc.
void Printer::in_register(const Element& e, std::string& out, int depth, const std::function<void(std::string&, int)>& body) {
  const ir::Tensor& t = written_tensor(e);
  std::string element = element_of(e);
  int d = open_element(e, "in a register over the loop", lane_zero(e.guard), out, depth);
  out += pad(d) + c_type(t.type) + " tc_acc = " + load_as(element, t.type) + ";\n";
  accumulate(e, body, out, d);
  out += pad(d) + element + " = " + stored("tc_acc", t.type) + ";\n";
  close_element(out, d, depth);
}

const ir::Tensor& Printer::written_tensor(const Element& e) const {
  return b_.def().tensors[static_cast<size_t>(b_.def().stmts[e.stmt].lhs_tensor)];
}

// e's element, at the variables open_element defines (i0, i1, ...).
std::string Printer::element_of(const Element& e) const {
  const ir::Stmt& st = b_.def().stmts[e.stmt];
  std::vector<std::string> lhs;
  for (size_t k = 0; k < st.num_lhs; ++k) lhs.push_back("i" + std::to_string(k));
  return param(written_tensor(e)) + "[" + offset(static_cast<size_t>(st.lhs_tensor), lhs) + "]";
}

// Opens the scope of e's element: its written subscripts as variables, then `guard` where some
// instance runs (e.reached). Returns the depth inside.
int Printer::open_element(const Element& e, const std::string& how, const std::string& guard, std::string& out, int depth) {
  int d = depth + 1;
  out += pad(depth) + "{  // " + written_tensor(e).name + "'s element " + how + "\n";
  for (size_t k = 0; k < e.lhs.size(); ++k) out += pad(d) + variable(k, e.lhs[k]);
  const std::string condition = both(e.reached, guard);
  if (!condition.empty()) out += pad(d++) + "if (" + condition + ") {\n";
  return d;
}

// Closes what open_element opened (`d`: the depth it returned).
void Printer::close_element(std::string& out, int d, int depth) {
  if (d > depth + 1) out += pad(--d) + "}\n";
  out += pad(depth) + "}\n";
}

// Prints `body` with e's statements accumulating into tc_acc.
void Printer::accumulate(const Element& e, const std::function<void(std::string&, int)>& body, std::string& out, int d) {
  Scoped<const Element*> accumulating(accumulating_, &e);
  body(out, d);
}

}  // namespace tc::backends::cuda::print
