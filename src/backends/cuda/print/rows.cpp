// rows.cpp — the row route's kernel (cuda.rowwise; rows/row_plan.h says which defs): one
// launch, blockDim.y rows a block and blockDim.x threads (whole warps) a row, the blocks striding
// over the rows. Each statement runs in turn for the row: a pointwise one's values along the row
// go round robin to the row's threads (neighbouring threads, neighbouring elements: coalesced),
// a reduction along the row is split the same way, each thread reducing its share in a
// register, then combined by the group's tree (reductions.cpp) and written by thread 0, as is a
// statement of one value per row. The row's threads wait for each other between statements
// (tc_group_sync), so a statement sees what the ones before it wrote in its row; rows never
// read one another's. Expressions, loads, checks and updates are the isl path's
// (expressions.cpp, statements.cpp): the route changes who runs an instance, not what it computes.
#include "backends/cuda/print/printer.h"

namespace tc::backends::cuda::print {

CudaSource Printer::run_rows(const RowPlan& plan) {
  Launch launch;
  launch.kernel = b_.def().name + "_rows";
  launch.grid_axes = 1;
  launch.block_axes = 2;
  launch.synchronises = true;
  const std::string rows = std::to_string(plan.row_count()) + "ll";
  std::string body = pad(1) + "// blockDim.y rows a block, blockDim.x threads a row; the statements in turn\n";
  body += pad(1) + "for (long long tc_rows = (long long)blockIdx.x * blockDim.y; tc_rows < " + rows +
          "; tc_rows += (long long)gridDim.x * blockDim.y) {\n";
  body += pad(2) + "const long long tc_row = tc_rows + threadIdx.y;\n";
  body += pad(2) + "const bool tc_live = tc_row < " + rows + ";  // a last block's rows past the end idle\n";
  int64_t inner = 1;  // the row indices, the last fastest
  for (size_t k = plan.rows.size(); k-- > 0;) {
    std::string value = inner == 1 ? "tc_row" : "tc_row / " + std::to_string(inner) + "ll";
    if (k > 0) value = "(" + value + ") % " + std::to_string(plan.rows[k]) + "ll";
    body += pad(2) + variable(k, "(" + idx_ + ")(" + value + ")");
    inner *= plan.rows[k];
  }
  for (size_t i = 0; i < plan.stmts.size(); ++i) {
    if (i > 0) body += pad(2) + "tc_group_sync();  // the row's earlier statements, seen by all its threads\n";
    row_statement(plan.stmts[i], body, 2);
  }
  body += pad(2) + "tc_group_sync();  // the warps' totals read before the next rows' reductions write them\n";
  body += pad(1) + "}\n";
  kernels_ += "extern \"C\" __global__ void " + launch.kernel + "(" + kernel_parameters(b_.def()) + ") {\n" + body + "}\n\n";
  out_.launches.push_back(launch);
  return finished();
}

// Statement s's new value of its element `element`: its right-hand side, or a reduction's
// update of the element (of the identity, under '!').
std::string Printer::row_value(const ir::Stmt& st, size_t s, const std::string& element, std::string& out, int depth) {
  ScalarType t = b_.def().tensors[static_cast<size_t>(st.lhs_tensor)].type;
  if (st.reduce == ir::ReduceOp::None) return begin_statement(st, s, false, out, depth);
  return updated(st, s, st.init ? identity(st.reduce, t) : load_as(element, t), false, out, depth);
}

void Printer::row_statement(const RowStatement& rs, std::string& out, int depth) {
  const ir::Stmt& st = b_.def().stmts[rs.stmt];
  const ir::Tensor& t = b_.def().tensors[static_cast<size_t>(st.lhs_tensor)];
  std::vector<std::string> lhs;
  for (size_t k = 0; k < st.num_lhs; ++k) lhs.push_back("i" + std::to_string(k));
  const std::string element = param(t) + "[" + offset(static_cast<size_t>(st.lhs_tensor), lhs) + "]";
  auto along = [&](int d, const std::string& what, const std::function<void(std::string&, int)>& instance) {
    std::string i = "i" + std::to_string(rs.var);
    out += pad(d) + "if (tc_live) {  // " + what + "\n";
    out += pad(d + 1) + "for (" + idx_ + " " + i + " = " + index_literal(rs.lo) + " + (" + idx_ + ")threadIdx.x; " + i +
           " < " + index_literal(rs.hi) + "; " + i + " += (" + idx_ + ")blockDim.x) {\n";
    if (statement_marks_) out += pad(d + 2) + "TC_STATEMENT();\n";
    instance(out, d + 2);
    out += pad(d + 1) + "}\n" + pad(d) + "}\n";
  };
  switch (rs.along) {
    case RowStatement::Along::None:
      out += pad(depth) + "if (tc_live && threadIdx.x == 0) {  // " + t.name + ": one value a row\n" +
             (statement_marks_ ? pad(depth + 1) + "TC_STATEMENT();\n" : "");
      out += pad(depth + 1) + element + " = " + stored(row_value(st, rs.stmt, element, out, depth + 1), t.type) + ";\n";
      out += pad(depth) + "}\n";
      return;
    case RowStatement::Along::Written:
      along(depth, t.name + " along the row, its values round robin to the row's threads", [&](std::string& o, int d) {
        o += pad(d) + element + " = " + stored(row_value(st, rs.stmt, element, o, d), t.type) + ";\n";
      });
      return;
    case RowStatement::Along::Reduced: {
      out += pad(depth) + "{\n";
      out += pad(depth + 1) + c_type(t.type) + " tc_acc = " + identity(st.reduce, t.type) + ";\n";
      along(depth + 1, t.name + " reduced along the row: each thread its share, then the row's tree", [&](std::string& o, int d) {
        o += pad(d) + "tc_acc = " + updated(st, rs.stmt, "tc_acc", false, o, d) + ";\n";
      });
      group_tree(st.reduce, t.type, out, depth + 1);
      std::string start = st.init ? identity(st.reduce, t.type) : load_as(element, t.type);
      out += pad(depth + 1) + "if (tc_live && threadIdx.x == 0) " + element + " = " +
             stored(rounded(combined(st.reduce, start, "tc_acc"), t.type), t.type) + ";\n";
      out += pad(depth) + "}\n";
      return;
    }
  }
}

}  // namespace tc::backends::cuda::print
