// reductions.cpp — reductions split across the threads along x (cuda.reduction=tree|atomic): the
// lanes' shares combined by shuffles and shared memory, or by atomics.
#include "backends/cuda/print/printer.h"

#include "backends/cuda/isl_util.h"
#include "support/error.h"

namespace tc::backends::cuda::print {

// ---- reductions across the threads along x (cuda.reduction=tree|atomic) ----
// Under a "lanes" mark threadIdx.x is no loop's: a reduction loop that in_register would
// keep in one thread's register is split round robin across the threads along x (blockDim.x
// is a multiple of 32, so a warp's lanes share threadIdx.y and z, and so do all the threads
// of a group, those along x: every loop and guard outside the split loop is the same for a
// group). Each thread reduces its share into tc_acc from the identity; then (tree) each
// warp's lanes combine theirs in a tree of shuffles (16, 8, 4, 2, 1 apart); where a group
// has several warps, lane 0 of each writes its warp's total to shared memory (the prelude's
// tc_warp_totals) and, after the group's barrier, the group's first warp combines them in a
// second tree; thread 0 combines the total into the element. Or (atomic) each thread
// combines its own into the element atomically. Every other statement there runs on thread
// 0 only (lane_zero); a group barrier (tc_group_sync) before each split loop makes what
// thread 0 wrote before visible to the group, and keeps a warp from overwriting the shared
// totals the first warp is still reading.
std::string Printer::lane_zero(const std::string& guard) const {
  if (lanes_ == 0 || accumulating_) return guard;
  return guard.empty() ? "threadIdx.x == 0" : "threadIdx.x == 0 && " + guard;
}

void Printer::across_lanes(const Element& e, std::string& out, int depth, const std::function<void(std::string&, int)>& body) {
  const ir::Stmt& st = b_.def().stmts[e.stmt];
  const ir::Tensor& t = written_tensor(e);
  std::string element = element_of(e), type = c_type(t.type), identity_value = identity(st.reduce, t.type);
  axes_->synchronises = true;
  int d = open_element(e, std::string("reduced across the threads along x over the loop (") +
                              (atomic_lanes_ ? "atomics" : "a tree of shuffles, then of the warps' totals") + ")",
                       e.guard, out, depth);
  out += pad(d) + "tc_group_sync();  // thread 0's earlier writes, seen by every thread along x\n";
  out += pad(d) + type + " tc_acc = " + identity_value + ";\n";
  accumulate(e, body, out, d);
  if (atomic_lanes_) {
    out += pad(d) + "tc_atomic_update(&" + element + ", [&](" + storage_type(t.type) + " tc_old) { return (" +
           storage_type(t.type) + ")" + stored(rounded(combined(st.reduce, load_as("tc_old", t.type), "tc_acc"), t.type), t.type) +
           "; });\n";
    out += pad(d) + "tc_group_sync();  // every thread's update, seen by thread 0's later statements\n";
  } else {
    group_tree(st.reduce, t.type, out, d);
    out += pad(d) + "if (threadIdx.x == 0) " + element + " = " +
           stored(rounded(combined(st.reduce, load_as(element, t.type), "tc_acc"), t.type), t.type) + ";\n";
  }
  close_element(out, d, depth);
}

// The threads along x of a group combine their tc_acc: a tree of shuffles in each warp, then,
// where the group has several warps, a tree of the warps' totals (through the prelude's
// tc_warp_totals, after the group's barrier) in its first warp. Thread 0 gets the total.
void Printer::group_tree(ir::ReduceOp op, ScalarType type, std::string& out, int d) {
  std::string member = "." + total_member(type), w = std::to_string(kWarpSize);
  warp_totals_ = true;
  warp_tree(op, type, out, d);
  out += pad(d) + "if (blockDim.x > " + w + ") {  // several warps: their totals through shared memory\n";
  out += pad(d + 1) + "if (threadIdx.x % " + w + " == 0) tc_warp_totals[tc_warp_index()]" + member + " = tc_acc;\n";
  out += pad(d + 1) + "tc_group_sync();\n";
  out += pad(d + 1) + "if (threadIdx.x < " + w + ") {  // the group's first warp\n";
  out += pad(d + 2) + "tc_acc = threadIdx.x < blockDim.x / " + w + " ? tc_warp_totals[tc_warp_index() + threadIdx.x]" +
         member + " : " + identity(op, type) + ";\n";
  warp_tree(op, type, out, d + 2);
  out += pad(d + 1) + "}\n";
  out += pad(d) + "}\n";
}

// The member of tc_total (the prelude) that holds a reduction of type t.
std::string Printer::total_member(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "b";
    case ScalarType::UInt8: return "u8";
    case ScalarType::UInt16: return "u16";
    case ScalarType::UInt32: return "u32";
    case ScalarType::UInt64: return "u64";
    case ScalarType::Int8: return "s8";
    case ScalarType::Int16: return "s16";
    case ScalarType::Int32: return "s32";
    case ScalarType::Int64: return "s64";
    case ScalarType::Float32: case ScalarType::Float16: case ScalarType::BFloat16:
      return "f32";  // float16 and bfloat16 are computed as float
    case ScalarType::Float64: return "f64";
  }
  return "u64";
}

// A warp's lanes combine their tc_acc; lane 0 gets the total.
void Printer::warp_tree(ir::ReduceOp op, ScalarType type, std::string& out, int d) const {
  out += pad(d) + "for (int tc_off = " + std::to_string(kWarpSize / 2) + "; tc_off > 0; tc_off /= 2)\n";
  out += pad(d + 1) + "tc_acc = " + rounded(combined(op, "tc_acc", "tc_shfl_down(tc_acc, tc_off)"), type) + ";\n";
}

// `acc` combined with `value` by a reduction.
std::string Printer::combined(ir::ReduceOp op, const std::string& acc, const std::string& value) {
  switch (op) {
    case ir::ReduceOp::Sum: return "tc_add(" + acc + ", " + value + ")";
    case ir::ReduceOp::Product: return "tc_mul(" + acc + ", " + value + ")";
    case ir::ReduceOp::Min: return "tc_min(" + acc + ", " + value + ")";
    case ir::ReduceOp::Max: return "tc_max(" + acc + ", " + value + ")";
    case ir::ReduceOp::None: break;
  }
  return value;
}

}  // namespace tc::backends::cuda::print
