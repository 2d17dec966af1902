// reference_backend.cpp — the interpreter. tc_run order of events:
//   1. temporaries are allocated zeroed, per call (so concurrent runs share nothing);
//   2. output elements that no statement writes are set to 0;
//   3. statements run in source order; each walks its domain (LHS variables outer, reduction
//      variables inner, ascending); '!' statements first set their LHS box to the identity;
//      a statement that reads its own LHS reads a snapshot taken before it starts;
//      a scatter evaluates its written subscripts at each point (in the same order) and adds
//      the right-hand side there ('+=!' first zeroes the whole tensor).
// In checked mode (default) every tensor read is bounds-checked and the first bad index is a
// TC_ERROR_RUNTIME naming the access, the index and the loop variables. Unchecked, an index out
// of bounds is clamped into the tensor (a read of an empty tensor gives 0): binding proved every
// other read in bounds, so this is the same rule as the cpu backend's and never reads outside.
// A scatter's written subscript out of bounds is likewise a TC_ERROR_RUNTIME when checked
// (statements before it have run: unlike the cpu backend, the interpreter does not check
// first); unchecked, that point's update is skipped, never written outside.
// Running out of memory for a temporary is TC_ERROR_NO_MEMORY naming it.
#include "backends/reference/reference_backend.h"

#include <cstring>
#include <new>

#include "backends/reference/eval_tree.h"
#include "support/error.h"

namespace tc::backends::reference {

using runtime::row_major_view;
using runtime::TensorView;

namespace {

struct CompiledStmt {
  const ir::Stmt* stmt;
  Node rhs;
  int lhs;
  ScalarType lhs_type;
  bool reduce;
  Combine combine;
  bool init;
  bool reads_self;
  std::vector<std::pair<int64_t, int64_t>> ranges;  // per var
  std::vector<Node> write;  // a scatter's written subscripts; empty for a plain statement
};

bool reads_tensor(const Node& n, int t) {
  if (n.op == Node::Op::Load && n.slot == t) return true;
  for (const Node& a : n.args)
    if (reads_tensor(a, t)) return true;
  return false;
}

Combine combine_of(ir::ReduceOp r) {
  switch (r) {
    case ir::ReduceOp::Product: return Combine::Product;
    case ir::ReduceOp::Min: return Combine::Min;
    case ir::ReduceOp::Max: return Combine::Max;
    default: return Combine::Sum;
  }
}

std::vector<std::string> values_of(const int64_t* vars, size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.push_back(std::to_string(vars[i]));
  return out;
}

int64_t element_offset(const TensorView& v, const int64_t* idx) {
  int64_t off = 0;
  for (int d = 0; d < v.ndim; ++d) off += idx[d] * v.strides[d];
  return off;
}

// Calls f(idx) for every point of the box [lo, hi) in row-major order.
template <typename F>
void for_box(const std::vector<std::pair<int64_t, int64_t>>& box, F&& f) {
  size_t n = box.size();
  std::vector<int64_t> idx(n);
  for (size_t d = 0; d < n; ++d) {
    if (box[d].first >= box[d].second) return;
    idx[d] = box[d].first;
  }
  for (;;) {
    f(idx.data());
    size_t d = n;
    while (d > 0) {
      --d;
      if (++idx[d] < box[d].second) break;
      idx[d] = box[d].first;
      if (d == 0) return;
    }
    if (n == 0) return;
  }
}

class Interpreter {
 public:
  Interpreter(const ir::BoundDef& b, bool checked, std::vector<TensorView>& views, const CompiledStmt& s)
      : b_(b), checked_(checked), views_(views), s_(s) {}

  Scalar eval(const Node& n, const int64_t* vars) const {
    switch (n.op) {
      case Node::Op::Const: return n.value;
      case Node::Op::Var: return from_int(vars[n.slot], n.type);
      case Node::Op::Load: return load_element(n, vars);
      case Node::Op::Neg: return negate(convert(eval(n.args[0], vars), n.args[0].type, n.type), n.type);
      case Node::Op::Not: return from_int(!truthy(eval(n.args[0], vars), n.args[0].type), ScalarType::Bool);
      case Node::Op::And:
        return from_int(truthy(eval(n.args[0], vars), n.args[0].type) && truthy(eval(n.args[1], vars), n.args[1].type),
                        ScalarType::Bool);
      case Node::Op::Or:
        return from_int(truthy(eval(n.args[0], vars), n.args[0].type) || truthy(eval(n.args[1], vars), n.args[1].type),
                        ScalarType::Bool);
      case Node::Op::Binary: {
        Scalar a = convert(eval(n.args[0], vars), n.args[0].type, n.operand_type);
        Scalar c = convert(eval(n.args[1], vars), n.args[1].type, n.operand_type);
        return convert(binary(n.binop, a, c, n.operand_type), ir::is_comparison(n.binop) ? ScalarType::Bool : n.operand_type, n.type);
      }
      case Node::Op::Select: {
        const Node& pick = truthy(eval(n.args[0], vars), n.args[0].type) ? n.args[1] : n.args[2];
        return convert(eval(pick, vars), pick.type, n.type);
      }
      case Node::Op::Cast: return convert(eval(n.args[0], vars), n.args[0].type, n.type);
      case Node::Op::Builtin: {
        Scalar args[3];
        for (size_t i = 0; i < n.args.size(); ++i) args[i] = convert(eval(n.args[i], vars), n.args[i].type, n.type);
        return call_builtin(n.builtin, args, n.type);
      }
    }
    return n.value;
  }

 private:
  Scalar load_element(const Node& n, const int64_t* vars) const {
    const TensorView& v = views_[n.slot];
    int64_t idx[TC_MAX_NDIM];
    for (size_t d = 0; d < n.args.size(); ++d) {
      Scalar s = eval(n.args[d], vars);
      idx[d] = kind(n.args[d].type) == ScalarKind::Unsigned ? static_cast<int64_t>(s.u) : s.i;
      if (idx[d] >= 0 && idx[d] < v.shape[d]) continue;
      if (checked_) out_of_bounds(n, static_cast<int>(d), idx[d], vars);
      if (v.shape[d] == 0) return from_int(0, v.type);
      idx[d] = idx[d] < 0 ? 0 : v.shape[d] - 1;
    }
    return load(v.data + element_offset(v, idx) * bytes(v.type), v.type);
  }

  [[noreturn]] void out_of_bounds(const Node& n, int d, int64_t index, const int64_t* vars) const {
    const ir::Read& read = s_.stmt->reads[n.read];
    fail(TC_ERROR_RUNTIME, b_.def().out_of_bounds(read.loc, read.text, false, b_.def().tensors[n.slot].name,
                                                  std::to_string(index), d, views_[n.slot].shape[d], s_.stmt->vars,
                                                  values_of(vars, s_.stmt->vars.size())));
  }

  const ir::BoundDef& b_;
  bool checked_;
  std::vector<TensorView>& views_;
  const CompiledStmt& s_;
};

class ReferenceKernel : public Kernel {
 public:
  ReferenceKernel(const ir::BoundDef& bound, bool checked) : b_(bound), checked_(checked) {
    const ir::Def& def = b_.def();
    for (size_t i = 0; i < def.stmts.size(); ++i) {
      const ir::Stmt& s = def.stmts[i];
      CompiledStmt c{&s, lower(*s.rhs, b_, s), s.lhs_tensor, def.tensors[s.lhs_tensor].type,
                     s.reduce != ir::ReduceOp::None, combine_of(s.reduce), s.init, false, b_.ranges[i]};
      c.reads_self = reads_tensor(c.rhs, s.lhs_tensor);
      if (s.scatter)
        for (const ir::Subscript& sub : s.write.subscripts) c.write.push_back(lower(*sub.index, b_, s));
      stmts_.push_back(std::move(c));
    }
    for (size_t t = 0; t < def.tensors.size(); ++t)
      if (def.tensors[t].role == ir::TensorRole::Output) plan_zero_fill(static_cast<int>(t));
  }

  std::string describe() const override {
    return "backend: reference (interpreter)\n";
  }

  void run(const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
           const ExecutionContext&) const override {
    ir::CallTensors call = ir::call_tensors(b_, inputs, outputs, "reference backend");
    for (const ZeroFill& z : zero_fills_) zero_unwritten(z, call.views[z.tensor]);
    for (const CompiledStmt& s : stmts_) execute(s, call.views);
  }

 private:
  // The box a statement writes: its written variables' ranges; a scatter's, the whole tensor.
  std::vector<std::pair<int64_t, int64_t>> lhs_box(const CompiledStmt& s) const {
    if (s.stmt->scatter) {
      std::vector<std::pair<int64_t, int64_t>> all;
      for (int64_t e : b_.tensors[s.lhs].shape) all.emplace_back(0, e);
      return all;
    }
    return {s.ranges.begin(), s.ranges.begin() + static_cast<long>(s.stmt->num_lhs_vars())};
  }

  // An output needs zero-filling unless one statement writes all of it; decided at compile.
  struct ZeroFill {
    int tensor;
    std::vector<std::vector<std::pair<int64_t, int64_t>>> written;  // LHS boxes of its writers
  };

  void plan_zero_fill(int t) {
    ZeroFill z{t, {}};
    const auto& shape = b_.tensors[t].shape;
    for (const auto& s : stmts_) {
      if (s.lhs != t) continue;
      auto box = lhs_box(s);
      bool full = true;
      for (size_t d = 0; d < shape.size(); ++d) full = full && box[d].first <= 0 && box[d].second >= shape[d];
      if (full) return;
      z.written.push_back(box);
    }
    zero_fills_.push_back(std::move(z));
  }

  void zero_unwritten(const ZeroFill& z, const TensorView& v) const {
    int64_t n = v.num_elements();
    std::vector<bool> written;
    try {
      written.assign(static_cast<size_t>(n), false);
    } catch (const std::bad_alloc&) {
      fail(TC_ERROR_NO_MEMORY, "reference backend: out of memory running '" + b_.def().name + "': no room to track " +
                                   "which elements of output '" + b_.def().tensors[z.tensor].name + "' are written");
    }
    auto flat = [&](const int64_t* idx) {
      int64_t f = 0;
      for (int d = 0; d < v.ndim; ++d) f = f * v.shape[d] + idx[d];
      return f;
    };
    for (const auto& box : z.written) for_box(box, [&](const int64_t* idx) { written[flat(idx)] = true; });
    std::vector<std::pair<int64_t, int64_t>> all;
    for (int d = 0; d < v.ndim; ++d) all.emplace_back(0, v.shape[d]);
    Scalar zero = from_int(0, v.type);
    for_box(all, [&](const int64_t* idx) {
      if (!written[flat(idx)]) store(v.data + element_offset(v, idx) * bytes(v.type), zero, v.type);
    });
  }

  // Zeroed row-major storage for a tensor of signature sig.
  std::vector<char> allocate(const ir::TensorSig& sig, const std::string& what) const {
    size_t n = static_cast<size_t>(sig.num_elements()) * bytes(sig.type);
    try {
      return std::vector<char>(n, 0);
    } catch (const std::bad_alloc&) {
      fail(TC_ERROR_NO_MEMORY, "reference backend: out of memory running '" + b_.def().name + "': " +
                                   std::to_string(n) + " bytes for " + what + " could not be allocated");
    }
  }

  void execute(const CompiledStmt& s, std::vector<TensorView>& views) const {
    TensorView target = views[s.lhs];
    std::vector<char> snapshot;
    if (s.reads_self) {
      const ir::TensorSig& sig = b_.tensors[s.lhs];
      snapshot = allocate(sig, "a copy of '" + b_.def().tensors[s.lhs].name + "'");
      TensorView copy = row_major_view(snapshot.data(), sig);
      std::vector<std::pair<int64_t, int64_t>> all;
      for (int d = 0; d < target.ndim; ++d) all.emplace_back(0, target.shape[d]);
      size_t w = bytes(sig.type);
      for_box(all, [&](const int64_t* idx) {
        std::memcpy(copy.data + element_offset(copy, idx) * w, target.data + element_offset(target, idx) * w, w);
      });
      views[s.lhs] = copy;
    }
    size_t w = bytes(s.lhs_type);
    if (s.init) {
      Scalar id = identity(s.combine, s.lhs_type);
      for_box(lhs_box(s), [&](const int64_t* idx) { store(target.data + element_offset(target, idx) * w, id, s.lhs_type); });
    }
    Interpreter interp(b_, checked_, views, s);
    if (s.stmt->scatter) return scatter(s, target, interp);
    for_box(s.ranges, [&](const int64_t* vars) {
      char* p = target.data + element_offset(target, vars) * w;
      Scalar v = convert(interp.eval(s.rhs, vars), s.rhs.type, s.lhs_type);
      if (s.reduce) v = combine(s.combine, load(p, s.lhs_type), v, s.lhs_type);
      store(p, v, s.lhs_type);
    });
    views[s.lhs] = target;
  }

  // At each point: the written element (subscripts evaluated, each read in them checked as
  // any read), then the right-hand side, added there. A written index out of bounds is an
  // error (checked) or skips the point (unchecked).
  void scatter(const CompiledStmt& s, const TensorView& target, const Interpreter& interp) const {
    size_t w = bytes(s.lhs_type);
    int64_t idx[TC_MAX_NDIM];
    for_box(s.ranges, [&](const int64_t* vars) {
      bool inside = true;
      for (size_t d = 0; d < s.write.size(); ++d) {
        const Node& sub = s.write[d];
        Scalar x = interp.eval(sub, vars);
        idx[d] = kind(sub.type) == ScalarKind::Unsigned ? static_cast<int64_t>(x.u) : x.i;
        if (idx[d] >= 0 && idx[d] < target.shape[d]) continue;
        if (checked_) write_out_of_bounds(s, static_cast<int>(d), idx[d], target.shape[d], vars);
        inside = false;
      }
      if (!inside) return;
      char* p = target.data + element_offset(target, idx) * w;
      Scalar v = convert(interp.eval(s.rhs, vars), s.rhs.type, s.lhs_type);
      store(p, combine(s.combine, load(p, s.lhs_type), v, s.lhs_type), s.lhs_type);
    });
  }

  [[noreturn]] void write_out_of_bounds(const CompiledStmt& s, int d, int64_t index, int64_t extent,
                                        const int64_t* vars) const {
    const ir::Read& write = s.stmt->write;
    fail(TC_ERROR_RUNTIME, b_.def().out_of_bounds(write.loc, write.text, true, b_.def().tensors[s.lhs].name,
                                                  std::to_string(index), d, extent, s.stmt->vars,
                                                  values_of(vars, s.stmt->vars.size())));
  }

  ir::BoundDef b_;
  bool checked_;
  std::vector<CompiledStmt> stmts_;
  std::vector<ZeroFill> zero_fills_;
};

class ReferenceBackend : public Backend {
 public:
  const char* name() const override { return "reference"; }
  const char* summary() const override { return "the interpreter, the semantic oracle"; }
  bool accepts(DLDeviceType t) const override { return t == kDLCPU; }
  bool runs_on_host() const override { return true; }
  Target default_target() const override { return Target{}; }
  std::string target_key(const Target&) const override { return "host (interpreter)"; }
  const std::vector<Knob>& knobs() const override {
    static const std::vector<Knob> kNone;
    return kNone;
  }
  std::unique_ptr<Kernel> compile(const ir::BoundDef& bound, const Target&, const KnobValues& options) const override {
    return std::make_unique<ReferenceKernel>(bound, options.flag("checked"));
  }
};

}  // namespace

const Backend& backend() {
  static const ReferenceBackend kBackend;
  return kBackend;
}

}  // namespace tc::backends::reference
