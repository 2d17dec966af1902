// row_plan.cpp — see row_plan.h.
#include "backends/cuda/rows/row_plan.h"

#include <algorithm>
#include <set>

namespace tc::backends::cuda {
namespace {

// Fills `why` (where given) and returns nullopt.
std::optional<RowPlan> refuse(std::string* why, const std::string& reason) {
  if (why) *why = reason;
  return std::nullopt;
}

// The statement variables subscript `sub` uses.
std::set<int> vars_of(const ir::Subscript& sub) {
  std::set<int> vars;
  ir::collect_vars(*sub.index, vars);
  return vars;
}

// Why statement s's read `r` cannot run on the route ("" where it can): a tensor the def writes
// is read in the same row (its leading subscripts are the row's indices) and after a statement
// wrote it, the statement's own element only where it is not a reduction along the row; and
// the index along the row, where there is one, moves only in the read tensor's last dimension.
std::string read_refusal(const ir::Def& def, size_t s, const RowStatement& rs, const ir::Read& r, size_t p) {
  const ir::Stmt& st = def.stmts[s];
  const std::string& name = def.tensors[static_cast<size_t>(r.tensor)].name;
  for (size_t d = 0; d < r.subscripts.size(); ++d)
    if (rs.var >= 0 && d + 1 < r.subscripts.size() && vars_of(r.subscripts[d]).count(rs.var))
      return "'" + r.text + "' moves along the row in a dimension of '" + name + "' other than its last";
  bool written_before = false, written = false;
  for (size_t w = 0; w < def.stmts.size(); ++w)
    if (def.stmts[w].lhs_tensor == r.tensor) {
      written = true;
      written_before = written_before || w < s;
    }
  if (!written) return "";
  if (r.tensor == st.lhs_tensor) {
    if (rs.along == RowStatement::Along::Reduced) return "'" + r.text + "' reads the element its statement reduces into";
    if (!r.pointwise) return "'" + r.text + "' reads another element of the tensor its statement writes";
    return "";
  }
  if (!written_before) return "'" + r.text + "' reads '" + name + "' before a statement writes it";
  if (r.subscripts.size() < p) return "'" + r.text + "' reads '" + name + "' outside its row";
  for (size_t d = 0; d < p; ++d)
    if (r.subscripts[d].var != static_cast<int>(d) || vars_of(r.subscripts[d]).size() != 1)
      return "'" + r.text + "' reads '" + name + "' outside its row";
  return "";
}

// Whether output t is written whole by one statement (else some of its elements would be
// zeroed by the model's Z statement, which the route does not print).
bool written_whole(const ir::BoundDef& bound, size_t t) {
  const ir::Def& def = bound.def();
  const std::vector<int64_t>& shape = bound.tensors[t].shape;
  for (size_t s = 0; s < def.stmts.size(); ++s) {
    const ir::Stmt& st = def.stmts[s];
    if (st.lhs_tensor != static_cast<int>(t) || st.num_lhs != shape.size()) continue;
    bool whole = true;
    for (size_t k = 0; k < shape.size(); ++k)
      whole = whole && bound.ranges[s][k] == std::pair<int64_t, int64_t>{0, shape[k]};
    if (whole) return true;
  }
  return false;
}

// Whether read `r` of a reduction along the row (index `var`) moves along the row in a matrix
// (two dimensions or more) that some row index does not select.
bool shared_matrix(const ir::Read& r, int var, size_t p) {
  if (r.subscripts.size() < 2 || !vars_of(r.subscripts.back()).count(var)) return false;
  std::set<int> used;
  for (const ir::Subscript& sub : r.subscripts)
    for (int v : vars_of(sub)) used.insert(v);
  for (size_t k = 0; k < p; ++k)
    if (!used.count(static_cast<int>(k))) return true;
  return false;
}

}  // namespace

int64_t RowPlan::row_count() const {
  int64_t n = 1;
  for (int64_t r : rows) n *= r;
  return n;
}

int64_t RowPlan::longest() const {
  int64_t n = 0;
  for (const RowStatement& s : stmts) n = std::max(n, s.hi - s.lo);
  return n;
}

std::string RowPlan::describe() const {
  int reduced = 0, written = 0, per_row = 0;
  for (const RowStatement& s : stmts)
    (s.along == RowStatement::Along::Reduced ? reduced : s.along == RowStatement::Along::Written ? written : per_row)++;
  std::string out = std::to_string(reduced) + " reduced along the row, " + std::to_string(written) + " pointwise";
  if (per_row > 0) out += ", " + std::to_string(per_row) + " one value a row";
  std::string shape;
  for (int64_t r : rows) shape += (shape.empty() ? "" : "x") + std::to_string(r);
  return out + "; " + std::to_string(row_count()) + " rows (" + shape + "), up to " + std::to_string(longest()) +
         " values along a row";
}

std::optional<RowPlan> plan_rows(const ir::BoundDef& bound, bool fma, std::string* why) {
  const ir::Def& def = bound.def();
  if (def.stmts.empty()) return refuse(why, "no statements");
  size_t p = SIZE_MAX;
  for (const ir::Stmt& st : def.stmts) {
    if (st.scatter) return refuse(why, "a scatter");
    p = std::min(p, st.num_lhs);
  }
  if (p == 0) return refuse(why, "a statement writes a tensor of no dimension");
  RowPlan plan;
  const std::vector<int64_t>& first = bound.tensors[static_cast<size_t>(def.stmts[0].lhs_tensor)].shape;
  plan.rows.assign(first.begin(), first.begin() + static_cast<std::ptrdiff_t>(p));
  bool reduces = false;
  for (size_t s = 0; s < def.stmts.size(); ++s) {
    const ir::Stmt& st = def.stmts[s];
    const std::string& lhs = def.tensors[static_cast<size_t>(st.lhs_tensor)].name;
    const std::vector<int64_t>& shape = bound.tensors[static_cast<size_t>(st.lhs_tensor)].shape;
    if (st.num_lhs > p + 1 || st.vars.size() > p + 1)
      return refuse(why, "the statement writing '" + lhs + "' has more than one index besides the row's");
    for (size_t k = 0; k < p; ++k)
      if (shape[k] != plan.rows[k] || bound.ranges[s][k] != std::pair<int64_t, int64_t>{0, plan.rows[k]})
        return refuse(why, "the statement writing '" + lhs + "' does not run over every row");
    RowStatement rs;
    rs.stmt = s;
    if (st.vars.size() == p + 1) {
      rs.along = st.num_lhs == p + 1 ? RowStatement::Along::Written : RowStatement::Along::Reduced;
      rs.var = static_cast<int>(p);
      rs.lo = bound.ranges[s][p].first;
      rs.hi = bound.ranges[s][p].second;
    }
    if (rs.along == RowStatement::Along::Reduced) {
      reduces = true;
      ScalarType t = def.tensors[static_cast<size_t>(st.lhs_tensor)].type;
      bool ordered = st.reduce == ir::ReduceOp::Sum || st.reduce == ir::ReduceOp::Product;
      if (!fma && ordered && is_float(t))
        return refuse(why, "'" + lhs + "' sums floats, whose order cuda.fma=0 keeps the reference's");
    }
    for (const ir::Read& r : st.reads) {
      std::string reason = read_refusal(def, s, rs, r, p);
      if (!reason.empty()) return refuse(why, reason);
      if (rs.along == RowStatement::Along::Reduced && shared_matrix(r, rs.var, p)) plan.shared_matrix = true;
    }
    plan.stmts.push_back(rs);
  }
  if (!reduces) return refuse(why, "no reduction along a row");
  for (size_t t = 0; t < def.tensors.size(); ++t)
    if (def.tensors[t].role == ir::TensorRole::Output && !written_whole(bound, t))
      return refuse(why, "no statement writes all of output '" + def.tensors[t].name + "'");
  return plan;
}

}  // namespace tc::backends::cuda
