// statements.cpp — a statement instance printed: its variables, ownership guard and update (plain, kept in
// a register, split across lanes), and scatters.
#include "backends/cuda/print/printer.h"

#include "backends/cuda/isl_util.h"
#include "support/error.h"

namespace tc::backends::cuda::print {

Printer::Call Printer::call_of(isl_ast_node* node) const {
  Call c;
  isl::id annotation = isl::manage(isl_ast_node_get_annotation(node));
  if (!annotation.is_null()) c.guard = ownership_guard(isl_id_get_name(annotation.get()));
  isl::ast_expr call = isl::manage(isl_ast_node_user_get_expr(node));
  isl::ast_expr callee = isl::manage(isl_ast_expr_get_op_arg(call.get(), 0));
  c.name = isl_id_get_name(isl::manage(isl_ast_expr_get_id(callee.get())).get());
  for (int i = 1; i < isl_ast_expr_get_op_n_arg(call.get()); ++i)
    c.args.push_back(isl_c(isl_ast_expr_get_op_arg(call.get(), i)));
  c.index = std::stoul(c.name.substr(1));
  return c;
}

std::string Printer::variable(size_t k, const std::string& value) const {
  return "const " + idx_ + " i" + std::to_string(k) + " = " + value + ";\n";
}

// A statement instance: its variables, then (where no marked loop iterates a mapped value)
// a guard that leaves the block unless this block and thread own it, then its update.
void Printer::statement(isl_ast_node* node, std::string& out, int depth) {
  Call c = call_of(node);
  out += pad(depth) + "{\n";
  if (statement_marks_) out += pad(depth + 1) + "TC_STATEMENT();\n";
  if (accumulating_ && c.name[0] == 'S' && c.index == accumulating_->stmt) {  // in_register: into tc_acc
    const ir::Stmt& st = b_.def().stmts[c.index];
    // A copy's statement (per_copy) defines its written variables too: its register's are not in scope.
    for (size_t k = acc_name_ == "tc_acc" ? st.num_lhs : 0; k < c.args.size(); ++k)
      out += pad(depth + 1) + variable(k, c.args[k]);
    out += pad(depth + 1) + acc_name_ + " = " + updated(st, c.index, acc_name_, false, out, depth + 1) + ";\n";
    out += pad(depth) + "}\n";
    return;
  }
  for (size_t k = 0; k < c.args.size(); ++k) out += pad(depth + 1) + variable(k, c.args[k]);
  c.guard = lane_zero(c.guard);
  if (c.guard.empty()) {
    statement_update(c.name, c.index, c.args.size(), out, depth + 1);
  } else {
    out += pad(depth + 1) + "if (" + c.guard + ") {\n";
    statement_update(c.name, c.index, c.args.size(), out, depth + 2);
    out += pad(depth + 1) + "}\n";
  }
  out += pad(depth) + "}\n";
}

// Whether C text `text` uses the identifier `name`.
bool Printer::mentions(const std::string& text, const std::string& name) {
  auto ident = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1))
    if ((at == 0 || !ident(text[at - 1])) && (at + name.size() == text.size() || !ident(text[at + name.size()])))
      return true;
  return false;
}

// The update of statement instance `name` (Z<t>, I<s>, S<s>) whose `rank` variables i0, ...
// are defined, as lines `depth` levels in.
void Printer::statement_update(const std::string& name, size_t s, size_t rank, std::string& out, int depth) {
  if (name[0] == 'Z') {  // an output's unwritten elements: 0
    const ir::Tensor& t = b_.def().tensors[s];
    std::vector<std::string> at;
    for (size_t k = 0; k < rank; ++k) at.push_back("i" + std::to_string(k));
    out += pad(depth) + param(t) + "[" + offset(s, at) + "] = " + stored(zero_of(t.type), t.type) + ";\n";
    return;
  }
  const ir::Stmt& st = b_.def().stmts[s];
  const ir::Tensor& t = b_.def().tensors[static_cast<size_t>(st.lhs_tensor)];
  if (st.scatter && name[0] == 'S') return scatter(st, s, out, depth);
  std::vector<std::string> lhs;  // I<s>: its arguments are the written element (a scatter's: any)
  for (size_t k = 0; k < (name[0] == 'I' ? rank : st.num_lhs); ++k) lhs.push_back("i" + std::to_string(k));
  std::string element = param(t) + "[" + offset(static_cast<size_t>(st.lhs_tensor), lhs) + "]";
  std::string value;
  ScalarType tt = t.type;
  if (name[0] == 'I') {
    value = identity(st.reduce, tt);
  } else if (st.reduce == ir::ReduceOp::None) {
    value = begin_statement(st, s, false, out, depth);
  } else {
    value = updated(st, s, load_as(element, tt), false, out, depth);
  }
  out += pad(depth) + element + " = " + stored(value, tt) + ";\n";
}

// Whether statement st's update is acc = fma(a, b, acc): a float32/float64 += reduction whose
// right-hand side is one product of its type (cuda.fma).
bool Printer::fused(const ir::Stmt& st) const {
  ScalarType t = b_.def().tensors[static_cast<size_t>(st.lhs_tensor)].type;
  const ir::Node& e = *st.rhs;
  return fma_ && st.reduce == ir::ReduceOp::Sum && (t == ScalarType::Float32 || t == ScalarType::Float64) &&
         e.op == ir::ExprOp::Binary && e.binop == ir::BinOp::Mul && e.type == t && e.operand_type == t;
}

// Reduction statement s's new value of `acc` (its element, or a register holding it), after
// what begin_statement prints.
std::string Printer::updated(const ir::Stmt& st, size_t s, const std::string& acc, bool checks_write, std::string& out, int depth) {
  ScalarType t = b_.def().tensors[static_cast<size_t>(st.lhs_tensor)].type;
  if (!fused(st)) return rounded(combined(st.reduce, acc, begin_statement(st, s, checks_write, out, depth)), t);
  begin_statement_variables(st, s, checks_write, out, depth);
  const ir::Node& e = *st.rhs;
  std::string a = convert(expr(*e.args[0]), e.args[0]->type, t), b = convert(expr(*e.args[1]), e.args[1]->type, t);
  return std::string(t == ScalarType::Float32 ? "fmaf(" : "fma(") + a + ", " + b + ", " + acc + ")";
}

// Statement s's right-hand side as a value of its tensor's type, after (where something is
// checked: its reads, or `checks_write`) the statement's variables as an array for the fault
// record, printed `depth` levels in.
std::string Printer::begin_statement(const ir::Stmt& st, size_t s, bool checks_write, std::string& out, int depth) {
  begin_statement_variables(st, s, checks_write, out, depth);
  return convert(expr(*st.rhs), st.rhs->type, b_.def().tensors[static_cast<size_t>(st.lhs_tensor)].type);
}

void Printer::begin_statement_variables(const ir::Stmt& st, size_t s, bool checks_write, std::string& out, int depth) {
  stmt_ = &st;
  stmt_index_ = s;
  if (checked_ && (checks_write || b_.has_unproven_read(st))) {
    std::string at;
    for (size_t k = 0; k < st.vars.size(); ++k) at += (k ? ", " : "") + std::string("i") + std::to_string(k);
    out += pad(depth) + "const long long tc_at[] = {" + (at.empty() ? "0" : at) + "};\n";
  }
}

// A scatter's update: the written subscripts, each not proven in bounds checked (checked=1:
// the first bad one recorded) and the update skipped where one is outside; then the value
// added atomically.
void Printer::scatter(const ir::Stmt& st, size_t s, std::string& out, int depth) {
  size_t tensor = static_cast<size_t>(st.lhs_tensor);
  const ir::Tensor& t = b_.def().tensors[tensor];
  const auto& shape = b_.tensors[tensor].shape;
  bool checks_write = false;
  for (const ir::Subscript& sub : st.write.subscripts) checks_write = checks_write || !b_.proven(sub);
  std::string value = begin_statement(st, s, checks_write, out, depth);
  std::vector<std::string> written;
  out += pad(depth) + "bool tc_inside = true;\n";
  for (size_t d = 0; d < st.write.subscripts.size(); ++d) {
    const ir::Subscript& sub = st.write.subscripts[d];
    std::string w = "w" + std::to_string(d);
    written.push_back(w);
    out += pad(depth) + "const long long " + w + " = (long long)" + expr(*sub.index) + ";\n";
    if (b_.proven(sub)) continue;
    out += pad(depth) + "if (tc_inside && !(" + w + " >= 0 && " + w + " < " + std::to_string(shape[d]) + "ll)) {\n" +
           pad(depth + 1) + "tc_inside = false;\n";
    if (checked_) {
      out += pad(depth + 1) + "tc_record(tc_fault, " + std::to_string(out_.checks.size()) + "ull, " + w + ", tc_at, " +
             std::to_string(st.vars.size()) + ");\n";
      out_.checks.push_back({s, 0, d, true});
    }
    out += pad(depth) + "}\n";
  }
  std::string element = "&" + param(t) + "[" + offset(tensor, written) + "]";
  std::string update;
  if (t.type == ScalarType::Bool) update = "tc_atomic_or(" + element + ", (bool)(" + value + "))";
  else if (t.type == ScalarType::Float16) update = "tc_atomic_add_half(" + element + ", (float)(" + value + "))";
  else if (t.type == ScalarType::BFloat16) update = "tc_atomic_add_bf16(" + element + ", (float)(" + value + "))";
  else update = "tc_atomic_add(" + element + ", (" + c_type(t.type) + ")(" + value + "))";
  out += pad(depth) + "if (tc_inside) " + update + ";\n";
}

}  // namespace tc::backends::cuda::print
