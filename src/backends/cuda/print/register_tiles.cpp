// register_tiles.cpp — register tiles (cuda.regtile): several values per thread in lockstep, registers
// kept across the reduction's tiles (hoisted), 128-bit loads and stores of their runs.
#include "backends/cuda/print/printer.h"

#include "backends/cuda/isl_util.h"
#include "support/error.h"

namespace tc::backends::cuda::print {

// Whether every copy is inside its loops: each loop's flags, once.
std::string Printer::all_inside(const std::vector<Copy>& copies) {
  std::string all;
  for (const Copy& c : copies)
    for (const std::string& f : c.flags)
      if (!mentions(all, f)) all += (all.empty() ? "" : " && ") + f;
  return all.empty() ? "true" : all;
}

bool Printer::tiles_copies(isl_ast_node* loop_node, const std::string& mark, const MarkedMember& member) {
  if (member.copies <= 1 || mark[0] != 't' || lanes_ > 0 || accumulating_) return false;
  int64_t run = run_of(loop_node, mark);
  return member.copies % run == 0 &&
         (run > 1 || isl_c(isl_ast_node_for_get_inc(loop_node)) == std::to_string(mapping_of(mark).stride));
}

// The values of thread loop `node` (of mark `mark`) a thread owns in a row: the mark's stride
// over a loop of step 1 (mapping.h, kVectorValues), else 1 (values blockDim apart).
int64_t Printer::run_of(isl_ast_node* node, const std::string& mark) {
  int64_t stride = mapping_of(mark).stride;
  return stride > 1 && isl_c(isl_ast_node_for_get_inc(node)) == "1" ? stride : 1;
}

// A loop's bounds and step as one text (separated: "c5" must not run into the next term).
std::string Printer::loop_header_text(isl_ast_node* loop) {
  return isl_c(isl_ast_node_for_get_init(loop)) + " ; " + isl_c(isl_ast_node_for_get_cond(loop)) + " ; " +
         isl_c(isl_ast_node_for_get_inc(loop));
}

// Whether C text is an integer literal that is a multiple of `n`.
bool Printer::is_multiple_literal(const std::string& text, int64_t n) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 18) return false;
  return std::stoll(text) % n == 0;
}

// Whether C text mentions one of the copies' bound iterators.
bool Printer::depends_on_copies(const std::string& text, const std::vector<Copy>& copies) {
  for (const auto& [it, value] : copies.front().values)
    if (mentions(text, it)) return true;
  return false;
}

// Every occurrence of identifier `name` in C text replaced by `by`.
std::string Printer::replaced(const std::string& text, const std::string& name, const std::string& by) {
  auto ident = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
  std::string out;
  size_t from = 0;
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    if ((at > 0 && ident(text[at - 1])) || (at + name.size() < text.size() && ident(text[at + name.size()]))) continue;
    out += text.substr(from, at - from) + by;
    from = at + name.size();
  }
  return out + text.substr(from);
}

// The register-tiled thread loop `node` (of mark `mark`) inside `outer` copies.
void Printer::register_tile(isl_ast_node* node, const std::string& mark, const MarkedMember& member,
                            const std::vector<Copy>& outer, std::string& out, int depth) {
  std::string it = isl_c(isl_ast_node_for_get_iterator(node)), cond = isl_c(isl_ast_node_for_get_cond(node));
  std::string base = it + "_t";
  out += pad(depth) + "for (" + idx_ + " " + base + " = " + first_value(node, mark) + "; " + replaced(cond, it, base) + "; " +
         base + " += " + std::to_string(member.copies / run_of(node, mark)) + " * " + thread_step(node, mark) + ") {  // " +
         std::to_string(member.copies) + " values per thread, in registers\n";
  std::vector<Copy> copies = open_copies(node, mark, member, outer, out, depth + 1);
  {
    std::vector<std::string> marks = owned_;
    marks.push_back(mark);
    Scoped<std::vector<std::string>> owned(owned_, marks);
    lockstep_child(isl_ast_node_for_get_body(node), copies, out, depth + 1);
  }
  out += pad(depth) + "}\n";
}

// The first value of thread loop `node` (of mark `mark`) that this thread owns, and the step
// between the values it owns.
// With runs (run_of > 1): the first value of the first run it owns, which may lie below the
// loop's first value (open_copies' flags test both bounds).
std::string Printer::first_value(isl_ast_node* node, const std::string& mark) const {
  Mapping m = mapping_of(mark);
  std::string init = isl_c(isl_ast_node_for_get_init(node)), inc = isl_c(isl_ast_node_for_get_inc(node));
  int64_t run = run_of(node, mark);
  if (run > 1) {
    std::string q = "tc_floord(" + init + ", " + std::to_string(run) + ")";
    return std::to_string(run) + " * (" + q + " + tc_first(" + q + ", " + m.index + ", " + m.count + "))";
  }
  return "(" + init + ") + (" + inc + ") * tc_first(tc_floord(" + init + ", " + inc + "), " + m.index + ", " + m.count + ")";
}

// The step between a thread's values (with runs: between its runs).
std::string Printer::thread_step(isl_ast_node* node, const std::string& mark) const {
  int64_t run = run_of(node, mark);
  return "(" + (run > 1 ? std::to_string(run) : isl_c(isl_ast_node_for_get_inc(node))) + ") * (" + idx_ + ")" +
         mapping_of(mark).count;
}

// The copies of a register-tiled thread loop inside `outer` ones, from its value <it>_t: each
// copy's value and its flag (the loop's condition there) defined; the launch's threads along
// the axis recorded.
std::vector<Printer::Copy> Printer::open_copies(isl_ast_node* node, const std::string& mark, const MarkedMember& member,
                                       const std::vector<Copy>& outer, std::string& out, int depth) {
  size_t axis = static_cast<size_t>(mapping_of(mark).index.back() - 'x');
  axes_->threads[axis] = std::max(axes_->threads[axis], (std::max<int64_t>(member.tile, 1) + member.copies - 1) / member.copies);
  axes_->block_axes = std::max(axes_->block_axes, static_cast<int>(axis) + 1);
  std::string it = isl_c(isl_ast_node_for_get_iterator(node)), cond = isl_c(isl_ast_node_for_get_cond(node));
  std::string init = isl_c(isl_ast_node_for_get_init(node));
  std::string base = it + "_t", step = thread_step(node, mark);
  int64_t run = run_of(node, mark);
  // A run's first value may lie below the loop's first one, unless that starts a run.
  bool below = run > 1 && !is_multiple_literal(init, run);
  std::vector<Copy> copies;
  for (int64_t r = 0; r < member.copies; ++r) {
    std::string value = it + "_" + std::to_string(r), flag = "tc_in_" + value;
    std::string offset = run > 1 ? std::to_string(r / run) + " * " + step + " + " + std::to_string(r % run)
                                 : std::to_string(r) + " * " + step;
    out += pad(depth) + "const " + idx_ + " " + value + " = " + base + " + " + offset + ";\n";
    out += pad(depth) + "const bool " + flag + " = " + replaced(cond, it, value) +
           (below ? " && " + value + " >= (" + init + ")" : "") + ";\n";
    for (const Copy& o : outer) {
      Copy c = o;
      c.values.emplace_back(it, value);
      c.flags.push_back(flag);
      c.suffix += "_" + std::to_string(r);
      c.run_key += "_" + (run > 1 ? "r" + std::to_string(r / run) : std::to_string(r));
      if (run > 1) c.lane = r % run;
      copies.push_back(std::move(c));
    }
  }
  return copies;
}

// Whether loop L has the shape above; `plan` filled where it does.
bool Printer::plan_hoist(isl_ast_node* loop, Hoist& plan) {
  if (!private_ || accumulating_ || lanes_ > 0) return false;
  std::string it = isl_c(isl_ast_node_for_get_iterator(loop));
  std::vector<std::string> outer_its = {it};
  auto mentions_any = [&](const std::string& text) {
    for (const std::string& o : outer_its)
      if (mentions(text, o)) return true;
    return false;
  };
  isl_ast_node* node = plan.keep(isl_ast_node_for_get_body(loop));
  if (isl_ast_node_get_type(node) == isl_ast_node_mark) {
    std::string name = mark_name(node);
    if (name == "shared") {
      isl::id k = isl::manage(isl_ast_node_get_annotation(node));
      if (k.is_null()) return false;
      plan.shared = std::stoul(isl_id_get_name(k.get()) + 6);
      if (plan.shared >= promotions_.size()) return false;
      node = plan.keep(isl_ast_node_mark_get_node(node));
    }
  }
  while (isl_ast_node_get_type(node) == isl_ast_node_mark) {
    std::string name = mark_name(node);
    if (!is_mapping(name) || name[0] != 't') return false;
    MarkedMember member = member_of(node);
    isl_ast_node* inner = plan.keep(isl_ast_node_mark_get_node(node));
    if (isl_ast_node_get_type(inner) != isl_ast_node_for || !iterates(inner, member.loop) ||
        !tiles_copies(inner, name, member))
      return false;
    if (mentions_any(loop_header_text(inner))) return false;
    plan.levels.push_back({inner, name, member});
    outer_its.push_back(isl_c(isl_ast_node_for_get_iterator(inner)));
    node = plan.keep(isl_ast_node_for_get_body(inner));
  }
  if (plan.levels.empty()) return false;
  // The statements' guards as they are printed inside the thread loops (their marks owned).
  Scoped<std::vector<std::string>> owned(owned_, owned_with(plan.levels));
  return plan_hoisted_body(node, plan, outer_its);
}

// The marks of the enclosing mapped loops and those of `levels`.
std::vector<std::string> Printer::owned_with(const std::vector<HoistLevel>& levels) const {
  std::vector<std::string> marks = owned_;
  for (const HoistLevel& l : levels) marks.push_back(l.mark);
  return marks;
}

bool Printer::plan_hoisted_body(isl_ast_node* node, Hoist& plan, std::vector<std::string> outer_its) {
  const std::string it = outer_its.front();
  auto mentions_any = [&](const std::string& text) {
    for (const std::string& o : outer_its)
      if (mentions(text, o)) return true;
    return false;
  };
  if (isl_ast_node_get_type(node) == isl_ast_node_block) {
    isl::ast_node_list children = isl::manage(isl_ast_node_block_get_children(node));
    if (isl_ast_node_list_n_ast_node(children.get()) != 2) return false;
    plan.init = plan.keep(isl_ast_node_list_get_ast_node(children.get(), 0));
    plan.region = plan.keep(isl_ast_node_list_get_ast_node(children.get(), 1));
  } else {
    plan.region = node;
  }
  if (isl_ast_node_get_type(plan.region) != isl_ast_node_for) return false;
  std::optional<Element> e;
  if (!promotable(plan.region, e)) return false;
  plan.e = *e;
  if (mentions(plan.e.guard, it)) return false;
  for (const std::string& sub : plan.e.lhs)
    if (mentions(sub, it)) return false;
  outer_its.erase(outer_its.begin());  // the thread loops' iterators: the region's loop is printed once for all copies
  if (mentions_any(loop_header_text(plan.region)) || mentions_any(plan.e.reached)) return false;
  if (plan.init) {  // if (<a condition on L only>) I<s>(the element)
    if (isl_ast_node_get_type(plan.init) != isl_ast_node_if || isl_ast_node_if_has_else_node(plan.init) != isl_bool_false)
      return false;
    if (mentions_any(isl_c(isl_ast_node_if_get_cond(plan.init)))) return false;
    isl_ast_node* then = plan.keep(isl_ast_node_if_get_then_node(plan.init));
    if (isl_ast_node_get_type(then) != isl_ast_node_user) return false;
    Call c = call_of(then);
    if (c.name[0] != 'I' || c.index != plan.e.stmt || c.args != plan.e.lhs || c.guard != plan.e.guard) return false;
  }
  return true;
}

// Loop L (plan_hoist's) printed with the registers across it where each thread loop runs
// once and every copy is inside its loops (a full tile: no flag is tested inside L, which
// keeps the registers the flags would take), and as it is elsewhere.
void Printer::hoisted(isl_ast_node* loop, const Hoist& plan, std::string& out, int depth) {
  std::string once;
  for (const HoistLevel& l : plan.levels) {
    Mapping m = mapping_of(l.mark);
    once += (once.empty() ? "" : " && ") + std::to_string(l.member.copies) + " * (" + idx_ + ")" + m.count +
            " >= " + index_literal(std::max<int64_t>(l.member.tile, 1));
  }
  const ir::Stmt& st = b_.def().stmts[plan.e.stmt];
  ScalarType type = written_tensor(plan.e).type;
  int d = depth + 1, dd = depth + 2;
  out += pad(depth) + "{  // " + written_tensor(plan.e).name + "'s elements in registers across the loop where each "
         "thread loop runs once and every copy is inside\n";
  // Whether to: in a scope of its own, so that neither branch keeps its values alive (a
  // compiler that reused them in the other branch ran out of registers: 64 bytes spilled).
  auto open_all = [&](std::string& o, int at) {
    std::vector<Copy> copies{Copy{}};
    for (const HoistLevel& l : plan.levels) {
      std::string it = isl_c(isl_ast_node_for_get_iterator(l.loop));
      o += pad(at) + "const " + idx_ + " " + it + "_t = " + first_value(l.loop, l.mark) + ";\n";
      copies = open_copies(l.loop, l.mark, l.member, copies, o, at);
    }
    return copies;
  };
  // The registers' elements exist where the region runs; where it does not at L's first value
  // the other branch, which keeps them per iteration of L, serves.
  once = both(once, both(runs(loop), at_first_value(loop, plan.e.reached)));
  out += pad(d) + "bool tc_hoist = " + once + ";\n";
  out += pad(d) + "if (tc_hoist) {\n";
  out += pad(d + 1) + "tc_hoist = " + all_inside(open_all(out, d + 1)) + ";\n";
  out += pad(d) + "}\n";
  out += pad(d) + "if (tc_hoist) {\n";
  std::vector<Copy> copies = open_all(out, dd);
  {
    Scoped<std::vector<std::string>> owned(owned_, owned_with(plan.levels));
    Scoped<bool> unguarded(unguarded_copies_, true);
    load_registers(plan.e, copies, out, dd);
    std::string it = isl_c(isl_ast_node_for_get_iterator(loop));
    out += pad(dd) + "for (" + idx_ + " " + it + " = " + isl_c(isl_ast_node_for_get_init(loop)) + "; " +
           isl_c(isl_ast_node_for_get_cond(loop)) + "; " + it + " += " + isl_c(isl_ast_node_for_get_inc(loop)) + ") {\n";
    static const std::vector<SharedArray> kNone;
    shared_scope(plan.shared == SIZE_MAX ? kNone : promotions_[plan.shared], out, dd + 1, [&](std::string& o, int d3) {
      if (plan.init) {
        o += pad(d3) + "if (" + isl_c(isl_ast_node_if_get_cond(plan.init)) + ") {  // the elements' initialisation\n";
        for (const Copy& c : copies) o += pad(d3 + 1) + "tc_acc" + c.suffix + " = " + identity(st.reduce, type) + ";\n";
        o += pad(d3) + "}\n";
      }
      accumulate(plan.e, [&](std::string& o2, int d2) { plain_loop(plan.region, copies, o2, d2); }, o, d3);
    });
    out += pad(dd) + "}\n";
    store_registers(plan.e, copies, out, dd);
  }
  out += pad(d) + "} else {\n";
  {
    Scoped<int> as_is(not_hoisting_, not_hoisting_ + 1);
    loop_as_is(loop, out, dd);
  }
  out += pad(d) + "}\n";
  out += pad(depth) + "}\n";
}

// Walks and frees `node` for every copy (lockstep).
void Printer::lockstep_child(isl_ast_node* node, const std::vector<Copy>& copies, std::string& out, int depth) {
  isl::ast_node owned = isl::manage(node);
  lockstep(node, copies, out, depth);
}

void Printer::lockstep(isl_ast_node* node, const std::vector<Copy>& copies, std::string& out, int depth) {
  switch (isl_ast_node_get_type(node)) {
    case isl_ast_node_for: {
      std::string header = loop_header_text(node);
      if (depends_on_copies(header, copies)) return per_copy(node, copies, out, depth);
      std::optional<Element> e;
      if (promotable(node, e) && !depends_on_copies(e->reached, copies)) {
        return registers_per_copy(*e, copies, out, depth,
                                  [&](std::string& o, int d) { plain_loop(node, copies, o, d); });
      }
      return plain_loop(node, copies, out, depth);
    }
    case isl_ast_node_if: {
      std::string cond = isl_c(isl_ast_node_if_get_cond(node));
      if (depends_on_copies(cond, copies)) return per_copy(node, copies, out, depth);
      out += pad(depth) + "if (" + cond + ") {\n";
      lockstep_child(isl_ast_node_if_get_then_node(node), copies, out, depth + 1);
      if (isl_ast_node_if_has_else_node(node) == isl_bool_true) {
        out += pad(depth) + "} else {\n";
        lockstep_child(isl_ast_node_if_get_else_node(node), copies, out, depth + 1);
      }
      out += pad(depth) + "}\n";
      return;
    }
    case isl_ast_node_block:  // a run updating one element (an unrolled loop's): a register per copy
      return in_runs(node, [&](isl_ast_node_list* children, int from, int to, const Element* e) {
        auto print = [&](std::string& o, int d) {
          for (int k = from; k < to; ++k) lockstep_child(isl_ast_node_list_get_ast_node(children, k), copies, o, d);
        };
        if (e && !depends_on_copies(e->reached, copies)) registers_per_copy(*e, copies, out, depth, print);
        else print(out, depth);
      });
    case isl_ast_node_mark: {
      std::string name = mark_name(node);
      isl::ast_node owned_inner = isl::manage(isl_ast_node_mark_get_node(node));
      isl_ast_node* inner = owned_inner.get();
      bool nested = false;
      if (is_mapping(name) && isl_ast_node_get_type(inner) == isl_ast_node_for) {
        MarkedMember member = member_of(node);
        std::string header = loop_header_text(inner);
        if (iterates(inner, member.loop) && tiles_copies(inner, name, member) && !depends_on_copies(header, copies)) {
          nested = true;  // open_copies records the launch's axis
          register_tile(inner, name, member, copies, out, depth);
        }
      }
      if (!nested) per_copy(node, copies, out, depth);
      return;
    }
    default: return per_copy(node, copies, out, depth);
  }
}

// A loop whose bounds are the same for every copy: once, its body in lockstep.
void Printer::plain_loop(isl_ast_node* node, const std::vector<Copy>& copies, std::string& out, int depth) {
  std::string it = isl_c(isl_ast_node_for_get_iterator(node));
  out += pad(depth) + "for (" + idx_ + " " + it + " = " + isl_c(isl_ast_node_for_get_init(node)) + "; " +
         isl_c(isl_ast_node_for_get_cond(node)) + "; " + it + " += " + isl_c(isl_ast_node_for_get_inc(node)) + ") {\n";
  lockstep_child(isl_ast_node_for_get_body(node), copies, out, depth + 1);
  out += pad(depth) + "}\n";
}

// `node` once per copy: the copy's values bound, under its flags (unless unguarded_copies_),
// updating the copy's register where a reduction is kept in one.
void Printer::per_copy(isl_ast_node* node, const std::vector<Copy>& copies, std::string& out, int depth) {
  for (const Copy& c : copies) {
    out += pad(depth) + "{\n";
    for (const auto& [it, value] : c.values) out += pad(depth + 1) + "const " + idx_ + " " + it + " = " + value + ";\n";
    std::string inside = unguarded_copies_ ? "" : c.inside();
    int d = depth + 1;
    if (!inside.empty()) out += pad(d++) + "if (" + inside + ") {\n";
    acc_name_ = accumulating_ ? "tc_acc" + c.suffix : "tc_acc";
    walk(node, out, d);
    acc_name_ = "tc_acc";
    if (!inside.empty()) out += pad(--d) + "}\n";
    out += pad(depth) + "}\n";
  }
}

// e's element of every copy in a register (tc_acc<suffix>) while `body` updates it: loaded
// before (where the copy is inside and owns it), stored after; the body printed twice, for
// when every copy is inside (no flags) and for when some is not.
void Printer::registers_per_copy(const Element& e, const std::vector<Copy>& copies, std::string& out, int depth,
                                 const std::function<void(std::string&, int)>& body) {
  out += pad(depth) + "{  // " + written_tensor(e).name + "'s elements in registers over the loop, one per copy\n";
  int d = depth + 1;
  if (!e.reached.empty()) out += pad(d++) + "if (" + e.reached + ") {\n";
  load_registers(e, copies, out, d);
  accumulate_copies(e, copies, out, d, body);
  store_registers(e, copies, out, d);
  if (!e.reached.empty()) out += pad(--d) + "}\n";
  out += pad(depth) + "}\n";
}

// For each copy whose element is inside its loops and owned here (e's guard): `action`, with
// the copy's values and e's written variables defined.
void Printer::each_element(const Element& e, const std::vector<Copy>& copies, std::string& out, int d,
                           const std::function<std::string(const Copy&)>& action) {
  for (const Copy& c : copies) {
    out += pad(d) + "{\n";
    for (const auto& [it, value] : c.values) out += pad(d + 1) + "const " + idx_ + " " + it + " = " + value + ";\n";
    std::string inside = unguarded_copies_ ? "" : c.inside();
    if (!e.guard.empty()) inside += (inside.empty() ? "" : " && ") + std::string("(") + e.guard + ")";
    for (size_t k = 0; k < e.lhs.size(); ++k) out += pad(d + 1) + variable(k, e.lhs[k]);
    out += pad(d + 1) + (inside.empty() ? "" : "if (" + inside + ") ") + action(c) + "\n";
    out += pad(d) + "}\n";
  }
}

// Declares each copy's register (tc_acc<suffix>) and loads its element.
void Printer::load_registers(const Element& e, const std::vector<Copy>& copies, std::string& out, int d) {
  const ir::Tensor& t = written_tensor(e);
  std::string element = element_of(e);
  for (const Copy& c : copies) out += pad(d) + c_type(t.type) + " tc_acc" + c.suffix + " = " + zero_of(t.type) + ";\n";
  std::vector<Copy> single = vector_runs(e, copies, /*load=*/true, out, d);
  each_element(e, single, out, d, [&](const Copy& c) { return "tc_acc" + c.suffix + " = " + load_as(element, t.type) + ";"; });
}

void Printer::store_registers(const Element& e, const std::vector<Copy>& copies, std::string& out, int d) {
  const ir::Tensor& t = written_tensor(e);
  std::string element = element_of(e);
  std::vector<Copy> single = vector_runs(e, copies, /*load=*/false, out, d);
  each_element(e, single, out, d, [&](const Copy& c) { return element + " = " + stored("tc_acc" + c.suffix, t.type) + ";"; });
}

// ---- 128-bit accesses of a register tile's runs (mapping.h, kVectorValues) ----
// Where every copy is inside (hoisted()'s full tiles), the copies of a float32 element that
// form runs of 4 along x (Copy::lane) are loaded (`load`) or stored together: each copy's
// address taken where it is owned here (e's guard; else null), and where the four are
// adjacent and the first is 16-byte aligned (the layout, the tensor's address and the run's
// place decide: tested at run time, the compiler folds what it can), one float4 access; else
// each non-null address alone. Returns the copies left to each_element.
std::vector<Printer::Copy> Printer::vector_runs(const Element& e, const std::vector<Copy>& copies, bool load, std::string& out, int d) {
  if (written_tensor(e).type != ScalarType::Float32 || !unguarded_copies_) return copies;
  std::vector<std::string> keys;
  std::map<std::string, std::vector<const Copy*>> runs;
  for (const Copy& c : copies) {
    if (c.lane < 0) continue;
    if (!runs.count(c.run_key)) keys.push_back(c.run_key);
    runs[c.run_key].push_back(&c);
  }
  std::vector<Copy> single;
  for (const Copy& c : copies)
    if (c.lane < 0 || runs[c.run_key].size() != static_cast<size_t>(kVectorValues)) single.push_back(c);
  std::string element = element_of(e);
  for (const std::string& key : keys) {
    const std::vector<const Copy*>& run = runs[key];
    if (run.size() != static_cast<size_t>(kVectorValues)) continue;
    auto at = [](size_t k) { return "tc_ptr" + std::to_string(k); };
    auto acc = [&](size_t k) { return "tc_acc" + run[k]->suffix; };
    out += pad(d) + "{  // a run of 4 adjacent elements: one 128-bit access where the address allows\n";
    std::string adjacent = at(0), vector = load ? "const float4 tc_v = *(const float4*)tc_ptr0;" : "float4 tc_v;", one;
    for (size_t k = 0; k < run.size(); ++k) {
      out += pad(d + 1) + "float* " + at(k) + " = nullptr;\n";
      if (k > 0) adjacent += " && " + at(k) + " == tc_ptr0 + " + std::to_string(k);
      std::string lane = std::string("tc_v.") + "xyzw"[k];
      vector += " " + (load ? acc(k) + " = " + lane : lane + " = " + acc(k)) + ";";
      one += pad(d + 2) + "if (" + at(k) + ") " + (load ? acc(k) + " = *" + at(k) : "*" + at(k) + " = " + acc(k)) + ";\n";
    }
    if (!load) vector += " *(float4*)tc_ptr0 = tc_v;";
    for (size_t k = 0; k < run.size(); ++k)
      each_element(e, {*run[k]}, out, d + 1, [&](const Copy&) { return at(k) + " = &" + element + ";"; });
    out += pad(d + 1) + "if (" + adjacent + " && (unsigned long long)tc_ptr0 % 16ull == 0) {\n";
    out += pad(d + 2) + vector + "\n";
    out += pad(d + 1) + "} else {\n" + one;
    out += pad(d + 1) + "}\n";
    out += pad(d) + "}\n";
  }
  return single;
}

// `body` with e's statements updating the copies' registers: printed twice, for when every copy
// is inside (no flags) and for when some is not; once, with the flags, in hoisted()'s other
// branch (edge tiles: its full tiles took the first branch), which keeps the kernel's
// registers within what ptxas allocates without spilling.
void Printer::accumulate_copies(const Element& e, const std::vector<Copy>& copies, std::string& out, int d,
                                const std::function<void(std::string&, int)>& body) {
  if (not_hoisting_ > 0) return accumulate(e, body, out, d);  // hoisted()'s other branch: full tiles took the first
  out += pad(d) + "if (" + all_inside(copies) + ") {  // every copy inside\n";
  {
    Scoped<bool> unguarded(unguarded_copies_, true);
    accumulate(e, body, out, d + 1);
  }
  out += pad(d) + "} else {\n";
  accumulate(e, body, out, d + 1);
  out += pad(d) + "}\n";
}

}  // namespace tc::backends::cuda::print
