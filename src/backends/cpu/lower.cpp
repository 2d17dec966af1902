// lower.cpp — see lower.h.
#include "backends/cpu/lower.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "backends/cpu/lower_expr.h"
#include "backends/cpu/statement_facts.h"
#include "backends/cpu/values.h"
#include "support/error.h"

namespace tc::backends::cpu {

using Halide::Expr;
using Halide::Func;
using Halide::Var;
using ir::ReduceOp;
using ir::TensorRole;

namespace {


// The identity of a reduction and the combination of an accumulator with a value.
Expr identity(ReduceOp op, const Halide::Type& t) {
  bool b = t.is_bool();
  switch (op) {
    case ReduceOp::Product: return Halide::Internal::make_one(t);
    // The integer limits are opaque (values.h): with max(INT64_MIN, x) in view Halide's
    // simplifier decided 0 > max(INT64_MIN, x) was false for every x.
    case ReduceOp::Min:
      if (b) return Halide::Internal::make_bool(true);
      return t.is_float() ? Halide::Internal::make_const(t, INFINITY) : opaque_limit(t, false);
    case ReduceOp::Max:
      if (b) return Halide::Internal::make_bool(false);
      return t.is_float() ? Halide::Internal::make_const(t, -INFINITY) : opaque_limit(t, true);
    default: return Halide::Internal::make_zero(t);
  }
}

// acc OP v in the tensor's TC type t: the language's + and * (wrapping integers, float16
// rounded), and min/max that propagate NaN as the builtins do (a NaN anywhere in a min=/max=
// reduction makes its result NaN, as in the reference).
Expr combine(ReduceOp op, const Expr& acc, const Expr& v, ScalarType t) {
  bool b = acc.type().is_bool();
  switch (op) {
    case ReduceOp::Product: return b ? (acc && v) : arithmetic(ir::BinOp::Mul, acc, v, t, false);
    case ReduceOp::Min:
    case ReduceOp::Max: {
      if (b) return op == ReduceOp::Min ? (acc && v) : (acc || v);
      // v opaque (values.h): Halide's TrimNoOps would otherwise solve "min(acc, v) == acc" for
      // the loop variable with acc read once before the loop (a stale value), and O min=! j
      // stored every j (Halide 14). Floats go through the NaN selects, which it cannot solve.
      if (!is_float(t)) return op == ReduceOp::Min ? Halide::min(acc, opaque(v)) : Halide::max(acc, opaque(v));
      return Halide::select(Halide::is_nan(acc), acc, Halide::is_nan(v), v, ordered_min_max(op == ReduceOp::Min, acc, opaque(v)));
    }
    default: return b ? (acc || v) : arithmetic(ir::BinOp::Add, acc, v, t, false);
  }
}

// Whether Halide may split (rfactor) the update into vector lanes. Its own prover decides what
// is associative, asked exactly as rfactor asks it (the update as defined, not simplified: the
// simplified form proved `min=! ... && A(k)` on booleans associative where rfactor then refused
// it, differential fuzzer seed 239631165). It rejects float16's per-step rounding, int32/int64
// sums wrapping through their unsigned twin and the NaN rule of float min/max. One choice is
// libtc's: float products are never split, because another order meets 0 * inf or an overflow
// differently (NaN or inf instead of 0); float sums are (documented). float16 is never asked:
// every step rounds to half, which the prover rejects, and on a long right-hand side it takes
// seconds to (differential fuzzer, seed 102982754, program 462: `O3(i, j) +=! B(k, k) - (...)`
// over half tensors, 15 s; a 1024-node update of three reads and two ternaries, 22 s).
bool splittable(const Func& f, ReduceOp op, ScalarType t) {
  if ((op == ReduceOp::Product && is_float(t)) || is_float16_like(t)) return false;
  return Halide::Internal::prove_associativity(f.name(), f.update_args(0), f.update_values(0).as_vector())
      .associative();
}

// The bits of an integer with its magnitude bits flipped where it is negative: the map
// between a float's bits and its key, which is its own inverse.
Expr flip_negative_magnitudes(const Expr& bits) {
  int n = bits.type().bits();
  Expr magnitude = Halide::Internal::make_const(bits.type(), n == 64 ? INT64_MAX : INT32_MAX);
  return bits ^ ((bits >> (n - 1)) & magnitude);
}

// A float min=/max= reduction as an integer one (Stage::ordered_keys): a float's bits as a
// signed integer whose order is the floats' order (-0 below +0), a NaN of either sign mapped to
// the end where it wins (the largest key for max, the smallest for min). Integer max and min
// are associative to Halide's prover, so the reduction splits into vector lanes (rfactor)
// where the float form, with its NaN rule spelled out, does not; the result is the same
// value, except that a NaN comes back as the one NaN of its key (its payload is not kept)
// and max(-0, +0) is +0 in any order.
Expr ordered_key(const Expr& v, bool nan_wins_max) {
  Halide::Type kt = Halide::Int(v.type().bits());
  Expr nan_key = nan_wins_max ? kt.max() : kt.min();
  return Halide::select(Halide::is_nan(v), nan_key, flip_negative_magnitudes(Halide::reinterpret(kt, v)));
}

// The float a key stands for. The NaN keys come back as NaNs: the largest key as 0x7fff...,
// the smallest as 0xffff....
Expr from_ordered_key(const Expr& k) {
  return Halide::reinterpret(Halide::Float(k.type().bits()), flip_negative_magnitudes(k));
}

std::string halide_name(const std::string& prefix, const std::string& name) {
  return prefix + "_" + name;  // TC identifiers are valid C identifiers
}

class Builder {
 public:
  Builder(const ir::BoundDef& b, bool dense, bool checked, bool pack, bool fma, std::vector<RowFlattening> flattening,
          std::vector<int> transposed)
      : b_(b),
        def_(b.def()),
        dense_(dense),
        checked_(checked),
        pack_(pack),
        fma_(fma),
        flat_(std::move(flattening)),
        transposed_(std::move(transposed)) {}

  LoweredPipeline build() {
    current_.assign(def_.tensors.size(), -1);
    initial_.assign(def_.tensors.size(), -1);
    p_.caller_outputs.resize(def_.num_outputs);
    p_.output_stage.resize(def_.num_outputs);
    make_inputs();
    for (size_t s = 0; s < def_.stmts.size(); ++s) lower_statement(static_cast<int>(s));
    make_outputs();
    if (checked_) make_checks_sink();
    return std::move(p_);
  }

 private:
  const std::vector<int64_t>& shape(int t) const { return b_.tensors[t].shape; }

  // Halide order: dimension d of a Func is TC dimension ndim-1-d.
  std::vector<int64_t> halide_extents(int t) const {
    std::vector<int64_t> e(shape(t).rbegin(), shape(t).rend());
    return e;
  }

  void constrain(Halide::OutputImageParam p, int t) {
    auto e = halide_extents(t);
    for (size_t d = 0; d < e.size(); ++d) p.dim(static_cast<int>(d)).set_bounds(0, static_cast<int>(e[d]));
    // Halide assumes a unit innermost stride unless told otherwise.
    if (!e.empty()) p.dim(0).set_stride(dense_ ? Expr(1) : Expr());
  }

  void make_inputs() {
    p_.inputs.resize(def_.num_inputs);
    for (size_t t = 0; t < def_.tensors.size(); ++t) {
      const auto& decl = def_.tensors[t];
      if (decl.role != TensorRole::Input) continue;
      Halide::ImageParam p(storage_type(decl.type), decl.ndim, halide_name("in", decl.name));
      constrain(p, static_cast<int>(t));
      if (flattened_input(static_cast<int>(t))) {  // rows Win apart, read as one long row
        const auto& e = shape(static_cast<int>(t));
        int64_t row = e[e.size() - 1], rows = e[e.size() - 2];
        p.dim(0).set_bounds(0, static_cast<int>(row * rows));
        p.dim(1).set_stride(static_cast<int>(row));
        p_.flattened_inputs.push_back(decl.param_index);
      }
      p_.inputs[decl.param_index] = p;
    }
  }

  bool flattened_input(int t) const {
    for (const RowFlattening& f : flat_)
      if (std::find(f.inputs.begin(), f.inputs.end(), t) != f.inputs.end()) return true;
    return false;
  }

  const RowFlattening* flattening_of(int si) const {
    for (const RowFlattening& f : flat_)
      if (f.stmt == si) return &f;
    return nullptr;
  }

  // Statement si's result from the stage g that computed it in another layout, at the
  // positions `at` gives for each point: O(args) = G(at(args)). Pointwise in every dimension but
  // the last two.
  int copy_back(int si, int t, int g, const std::string& suffix,
                const std::function<std::vector<Expr>(const std::vector<Expr>&)>& at) {
    Stage u = new_stage(Stage::Kind::Pointwise, t, "s" + std::to_string(si) + suffix, dim_names(t));
    u.stmt = si;
    int me = add_stage(u);
    Stage& s = p_.stages[me];
    std::vector<Expr> args = as_exprs(s.vars);
    // A min=/max= computed on ordered keys is decoded here, as read() decodes it (a transposed
    // float min=! of bool values read by a max= after it: differential fuzzer, seed 212672514).
    Expr value = p_.stages[g].func(at(args));
    s.func(args) = p_.stages[g].ordered_keys ? from_ordered_key(value) : value;
    p_.stages[g].uses.push_back({me, false, false, static_cast<int>(args.size()) - 2, /*whole_rows=*/true});
    return me;
  }

  // Over flattened rows: O(..., h, w) = G(..., 0, h·Win + w).
  int unflatten(int si, int t, int g, int64_t row) {
    return copy_back(si, t, g, "_rows", [row](const std::vector<Expr>& args) {
      std::vector<Expr> at = args;
      at[0] = args[1] * static_cast<int>(row) + args[0];
      at[1] = 0;
      return at;
    });
  }

  // Transposed (transpose_result.h): O(..., m, n) = G(..., n, m).
  int transpose_back(int si, int t, int g) {
    return copy_back(si, t, g, "_transposed", [](const std::vector<Expr>& args) {
      std::vector<Expr> at = args;
      std::swap(at[0], at[1]);
      return at;
    });
  }

  int add_stage(Stage s) {
    p_.stages.push_back(std::move(s));
    return static_cast<int>(p_.stages.size()) - 1;
  }

  Stage new_stage(Stage::Kind kind, int t, const std::string& name, const std::vector<std::string>& var_names) {
    Stage s;
    s.kind = kind;
    s.func = Func(halide_name(name, def_.tensors[t].name));
    s.type = value_type(def_.tensors[t].type);
    s.tensor = def_.tensors[t].name;
    s.extents = halide_extents(t);
    for (size_t d = 0; d < s.extents.size(); ++d) s.vars.emplace_back(var_names[var_names.size() - 1 - d]);
    return s;
  }

  std::vector<std::string> dim_names(int t) const {
    std::vector<std::string> n;
    for (int d = 0; d < def_.tensors[t].ndim; ++d) n.push_back("d" + std::to_string(d));
    return n;
  }

  static std::vector<Expr> as_exprs(const std::vector<Var>& v) { return {v.begin(), v.end()}; }

  // An output's contents before any statement writes it: the caller's values where some
  // statement writes, 0 where none does (so unwritten elements end up 0).
  int initial_stage(int t) {
    if (initial_[t] >= 0) return initial_[t];
    const auto& decl = def_.tensors[t];
    Stage s = new_stage(Stage::Kind::Initial, t, "entry", dim_names(t));
    Halide::ImageParam& caller = p_.caller_outputs[decl.param_index];
    caller = Halide::ImageParam(storage_type(decl.type), decl.ndim, halide_name("caller", decl.name));
    constrain(caller, t);
    Expr written = Halide::Internal::make_bool(false);
    for (size_t i = 0; i < def_.stmts.size(); ++i) {
      if (def_.stmts[i].lhs_tensor != t) continue;
      if (def_.stmts[i].scatter) {  // may write anywhere: the caller's values everywhere
        written = Halide::Internal::make_bool(true);
        break;
      }
      Expr inside = Halide::Internal::make_bool(true);
      for (int d = 0; d < decl.ndim; ++d) {
        auto [lo, hi] = b_.ranges[i][d];
        const Var& v = s.vars[decl.ndim - 1 - d];
        inside = inside && v >= static_cast<int>(lo) && v < static_cast<int>(hi);
      }
      written = written || inside;
    }
    written = Halide::Internal::simplify(written);
    Expr caller_value = from_storage(caller(as_exprs(s.vars)), decl.type);
    s.func(s.vars) = Halide::Internal::is_const_one(written) ? caller_value
                                                             : Halide::select(written, caller_value, Halide::Internal::make_zero(s.type));
    initial_[t] = add_stage(std::move(s));
    return initial_[t];
  }

  // The value of tensor t at Halide-order indices `idx`, as seen by stage `consumer`; a
  // pointwise read of the whole tensor unless the caller says which rows it reads.
  Expr read(int t, const std::vector<Expr>& idx, int consumer, bool pointwise, bool in_loop = false, int leading = 0,
            std::optional<bool> whole_rows = std::nullopt) {
    const auto& decl = def_.tensors[t];
    if (decl.role == TensorRole::Input) return from_storage(p_.inputs[decl.param_index](idx), decl.type);
    int version = current_[t];
    if (version < 0) {
      if (decl.role == TensorRole::Temporary) return Halide::Internal::make_zero(value_type(decl.type));
      version = initial_stage(t);
    }
    Stage& s = p_.stages[version];
    s.uses.push_back({consumer, pointwise, in_loop, pointwise ? static_cast<int>(idx.size()) : leading,
                      whole_rows.value_or(pointwise)});
    return s.ordered_keys ? from_ordered_key(s.func(idx)) : s.func(idx);
  }

  // The stages a check reads (other than the statement's own): they must know it uses them,
  // so that none is scheduled inside the statement where the check could not see it.
  void record_check_uses(const Expr& e, int check_stage) {
    struct Finder : Halide::Internal::IRVisitor {
      std::set<std::string> funcs;
      using IRVisitor::visit;
      void visit(const Halide::Internal::Call* c) override {
        if (c->call_type == Halide::Internal::Call::Halide) funcs.insert(c->name);
        IRVisitor::visit(c);
      }
    } finder;
    e.accept(&finder);
    for (size_t k = 0; k < p_.stages.size(); ++k)
      if (static_cast<int>(k) != check_stage && finder.funcs.count(p_.stages[k].func.name()))
        p_.stages[k].uses.push_back({check_stage, false, false});
  }

  // The run-time check of subscript d of `access` (index i, evaluated under `guard` when that
  // is defined), as a stage of its own over just the loop variables it depends on: computed
  // once per point (LUT(I(b,l), d) checks I(b,l) once per (b,l), not once per d nor inside a
  // vectorised reduction), and forced over its whole domain (make_checks_sink), so that no
  // simplification of the statement (a clamp to one element, 'x * 0') can drop it. Its
  // message carries the index and those variables' values: "tc-gather:K:I;v0;v1". It stores
  // one byte per point, and the statement reads the index where it always did, not from the
  // check: lut1's 6400 indices stored as int32 and read back made checked=1 11-13% slower than
  // checked=0, against 2-3% now (bench/ab.py; L1 misses over checked=0, callgrind: 770 per
  // call before, 530 after). The checks still run before the statements: the sink is the
  // pipeline's first output (cpu_backend.cpp), and Halide realises the producers of its
  // outputs in their order.
  void check_stage(const ir::Read& access, int d, const Expr& i, const Expr& guard, bool write = false) {
    int64_t extent = shape(access.tensor)[d];
    for (const auto& [lo, hi] : b_.ranges[current_stmt_])
      if (lo >= hi) return;  // the statement runs at no point: the read is never evaluated
    Expr ok = i >= Halide::Internal::make_zero(i.type()) && i < Halide::Internal::make_const(i.type(), extent);
    if (guard.defined()) ok = !guard || ok;
    const std::vector<std::string>& stmt_vars = def_.stmts[current_stmt_].vars;
    std::vector<std::string> names;
    std::vector<Var> fvars;  // Halide order
    std::vector<int64_t> extents, mins;
    Expr body = i;
    for (size_t v = stmt_vars.size(); v-- > 0;) {
      const auto* var = loop_vars_[v].as<Halide::Internal::Variable>();
      if (var == nullptr) return;  // never evaluated (an empty reduction): nothing to check
      if (!Halide::Internal::expr_uses_var(ok, var->name)) continue;
      Var fv("g_" + stmt_vars[v]);
      body = Halide::Internal::substitute(var->name, fv, body);
      ok = Halide::Internal::substitute(var->name, fv, ok);
      fvars.push_back(fv);
      extents.push_back(b_.ranges[current_stmt_][v].second - b_.ranges[current_stmt_][v].first);
      mins.push_back(b_.ranges[current_stmt_][v].first);
      names.insert(names.begin(), stmt_vars[v]);  // statement order, for the message
    }
    int k = static_cast<int>(p_.gather_checks.size());
    p_.gather_checks.push_back({access.loc, access.text, def_.tensors[access.tensor].name, write, d, extent, names});
    std::vector<Expr> message = {Halide::Internal::StringImm::make("tc-gather:" + std::to_string(k) + ":"),
                                 Halide::cast(Halide::Int(64), body)};
    for (auto it = fvars.rbegin(); it != fvars.rend(); ++it) {  // in statement order
      message.push_back(Halide::Internal::StringImm::make(";"));
      message.push_back(*it);
    }
    Stage s;
    s.kind = Stage::Kind::Pointwise;
    s.func = Func("check" + std::to_string(k) + "_" + def_.tensors[access.tensor].name);
    s.type = i.type();  // the checked index's: its vector width is the stage's
    s.vars = fvars;
    s.extents = extents;
    s.mins = mins;
    s.forced = true;
    Expr one = Halide::Internal::make_one(Halide::UInt(8));
    s.func(fvars) = Halide::Internal::Call::make(Halide::UInt(8), Halide::Internal::Call::require,
                                                 {ok, one, Halide::Internal::requirement_failed_error(ok, message)},
                                                 Halide::Internal::Call::PureIntrinsic);
    int me = add_stage(std::move(s));
    record_check_uses(p_.stages[me].func.value(), me);
  }

  // A subscript as an integer type in which it can be compared with 0 and the extent: narrow
  // types widen to int32; uint32 and int64 to int64; uint64 is reinterpreted (an index of 2^63
  // or more is negative, so out of bounds, as in the reference).
  static Expr comparable_index(const Expr& i) {
    Halide::Type t = i.type();
    if (t.is_bool() || t.bits() < 32 || (t.is_int() && t.bits() == 32)) return Halide::cast(Halide::Int(32), i);
    if (t.is_uint() && t.bits() == 64) return Halide::reinterpret(Halide::Int(64), i);
    return Halide::cast(Halide::Int(64), i);
  }

  // Subscript d of `access`, which binding did not prove in bounds (a gather, a read under a
  // guard, an index inference cannot bound): with `checked` a bad index is a run-time error
  // where the read is evaluated; then it is clamped into the tensor. Undefined if the
  // dimension is empty (there is nothing to read; the caller reads a zero).
  Expr unproven_index(const ir::Read& access, int d, Expr i, const Expr& guard) {
    int64_t extent = shape(access.tensor)[d];
    i = comparable_index(i);
    Expr lo = Halide::Internal::make_zero(i.type()), hi = Halide::Internal::make_const(i.type(), extent - 1);
    if (extent == 0) return Expr();
    if (checked_) check_stage(access, d, i, guard);
    // A subscript of loop variables alone is taken less a 0 that Halide cannot fold: where
    // every lane of a vector of this read clamps to the same element, Halide 14's
    // FlattenNestedRamps finds each lane a constant and divides by their stride, 0 (SIGFPE
    // while compiling). Its bounds, and so the region Halide infers, grow by at most one
    // element, still inside the tensor. A data-dependent subscript's lanes are never
    // constants, and gathers keep their speed (lut1, lut2: 7-15% slower with it).
    if (access.subscripts[d].kind != ir::IndexKind::DataDependent) i = i - opaque_zero_bit(i.type());
    return Halide::clamp(i, lo, hi);
  }

  // A read of an empty tensor: a zero, and with `checked` the error the reference reports
  // when such a read is evaluated (every index is out of bounds).
  Expr read_of_empty(const ir::Read& access, int d, const Expr& i, const Expr& guard) {
    if (checked_) check_stage(access, d, comparable_index(i), guard);
    return Halide::Internal::make_zero(value_type(def_.tensors[access.tensor].type));
  }

  Expr load(const ir::Read& access, std::vector<Expr> index, const Expr& guard, int consumer, bool full_box,
            bool in_loop) {
    int t = access.tensor;
    bool gather = access.gather();
    std::vector<Expr> idx;
    bool clamped = false;  // some index is clamped (and checked): not the consumer's own point
    for (size_t d = 0; d < index.size(); ++d) {
      int dim = static_cast<int>(d);
      Expr i = index[d];
      if (b_.proven(access.subscripts[d])) {
        if (shape(t)[d] == 0) return Halide::Internal::make_zero(value_type(def_.tensors[t].type));  // never evaluated
      } else {
        clamped = true;
        i = unproven_index(access, dim, i, guard);
        if (!i.defined()) return read_of_empty(access, dim, index[d], guard);
      }
      idx.push_back(Halide::cast(Halide::Int(32), i));
    }
    std::reverse(idx.begin(), idx.end());
    auto pack = pack_dims_.find(t);
    if (pack != pack_dims_.end() && !gather) return packed(t, pack->second, consumer)(idx);
    // Pointwise means read at the consumer's own point, which lets the scheduler compute a
    // reduction tile by tile inside the consumer; a clamped index may read anywhere in the
    // tensor, so a tile of the consumer would need all of it.
    // In a transposed stage (transpose_result.h) the last two subscripts are not at the
    // consumer's own point.
    int leading = leading_subscripts(access);
    if (transposed_stmt_) leading = std::min(leading, static_cast<int>(def_.stmts[current_stmt_].num_lhs_vars()) - 2);
    return read(t, idx, consumer, full_box && !clamped && access.pointwise && !transposed_stmt_, in_loop, leading,
                whole_rows(access));
  }

  // Use::whole_rows of a read in the current statement: every subscript after the first is a
  // statement variable (proven, so never clamped) ranging over the whole of its dimension, and
  // not the first written one, which a row block fixes (`t(i, i)` reads one column a row).
  bool whole_rows(const ir::Read& access) const {
    const auto& ranges = b_.ranges[current_stmt_];
    for (size_t d = 1; d < access.subscripts.size(); ++d) {
      const ir::Subscript& s = access.subscripts[d];
      if (!b_.proven(s) || s.var <= 0 || ranges[s.var].first != 0 ||
          ranges[s.var].second != shape(access.tensor)[d])
        return false;
    }
    return true;
  }

  // Use::leading of a read in the current statement: its subscripts that are, from the first,
  // exactly the statement's written variables in order (proven, so never clamped).
  int leading_subscripts(const ir::Read& access) const {
    size_t lhs = def_.stmts[current_stmt_].num_lhs_vars();
    int k = 0;
    while (static_cast<size_t>(k) < access.subscripts.size() && static_cast<size_t>(k) < lhs &&
           b_.proven(access.subscripts[k]) && access.subscripts[k].var == k)
      ++k;
    return k;
  }

  // The Pack stage of tensor t (its current version) with TC dimension `dim` innermost.
  Func packed(int t, int dim, int consumer) {
    int version = def_.tensors[t].role == TensorRole::Input ? -2 : current_[t];
    auto key = std::make_tuple(t, version, dim);
    auto it = packs_.find(key);
    if (it != packs_.end()) {
      p_.stages[it->second].uses.push_back({consumer, false, true});
      return p_.stages[it->second].func;
    }
    Stage s = new_stage(Stage::Kind::Pack, t, "packed", dim_names(t));
    int ndim = def_.tensors[t].ndim;
    s.packed_var = ndim - 1 - dim;
    int me = add_stage(s);
    std::vector<Expr> pure = as_exprs(p_.stages[me].vars);
    Expr value = read(t, pure, me, true);
    Stage& st = p_.stages[me];
    st.func(pure) = value;
    std::vector<Var> storage = {st.vars[st.packed_var]};
    for (int d = 0; d < ndim; ++d)
      if (d != st.packed_var) storage.push_back(st.vars[d]);
    st.func.reorder_storage(storage);
    st.uses.push_back({consumer, false, true});
    packs_[key] = me;
    return st.func;
  }

  // With cpu.fma, the product of a float32/float64 += reduction whose right-hand side is one
  // product (a matmul's, a convolution's): its update becomes acc = fma(a, b, acc). Not a
  // reduction split into vector lanes (contiguous_rvar: rfactor needs the sum's associativity,
  // and reassociates anyway), not float16 (rounded to half after each step).
  const Halide::Internal::Mul* fusable_product(const ir::Stmt& st, const Expr& rhs, ScalarType t) const {
    if (!fma_ || st.reduce != ReduceOp::Sum || (t != ScalarType::Float32 && t != ScalarType::Float64)) return nullptr;
    return rhs.as<Halide::Internal::Mul>();
  }

  // Whether a float min=/max= reduction is lowered on ordered keys: only where that lets it
  // split into vector lanes (its reads run along a reduction variable: softmax's row maximum),
  // which its float form, with the NaN rule, cannot; across rows the float form is cheaper.
  bool keys_split_into_lanes(Stage& s, const ir::Stmt& st, const Halide::Type& type) {
    if ((st.reduce != ReduceOp::Min && st.reduce != ReduceOp::Max) || !type.is_float()) return false;
    analyse_reduction(s, st, [] { return true; });
    return s.contiguous_rvar >= 0;
  }

  // A transposed stage (transpose_result.h) swaps Halide dimensions 0 and 1: its own inverse.
  int swapped(int d) const { return transposed_stmt_ && d < 2 ? 1 - d : d; }

  // The Halide dimension of written variable v of n: TC order reversed, then swapped.
  int halide_dim(int v, int n) const { return swapped(n - 1 - v); }

  // The written variable of the current stage's Halide dimension d: the inverse.
  int statement_var(const ir::Stmt& st, int d) const { return static_cast<int>(st.num_lhs_vars()) - 1 - swapped(d); }

  // The statement variable the current stage stores innermost.
  int innermost_var(const ir::Stmt& st) const { return statement_var(st, 0); }

  // Which pure variable (Halide order) the contiguous reads run along, and which share them.
  // `split_allowed`: whether the update may be split into vector lanes (splittable()), asked
  // only where the reads make it matter.
  void analyse_reduction(Stage& s, const ir::Stmt& st, const std::function<bool()>& split_allowed) {
    s.contiguous_rvar = s.block_var = -1;
    size_t n = st.num_lhs_vars();
    if (n == 0) return;  // a 0-d result: one scalar accumulator
    int inner = innermost_var(st);
    bool inner_contiguous = false;
    std::set<int> contiguous_red, with_inner;
    for (const ir::Read& r : st.reads) {
      if (r.subscripts.empty()) continue;
      auto pack = pack_dims_.find(r.tensor);
      const size_t last_dim = pack != pack_dims_.end() ? pack->second : r.subscripts.size() - 1;
      std::set<int> last = subscript_vars(r, last_dim);
      std::set<int> all;
      for (size_t d = 0; d < r.subscripts.size(); ++d) ir::collect_vars(*r.subscripts[d].index, all);
      if (last.count(inner)) inner_contiguous = true;
      // Split into vector lanes only along a variable that steps the read by one element: the
      // lanes of `t(i, 2 * j)` read every other value (and Halide 14's code for that split of
      // a max over an intermediate crashed).
      for (int v : unit_step_vars(r, last_dim))
        if (v >= static_cast<int>(n)) contiguous_red.insert(v);
      if (all.count(inner)) with_inner.insert(all.begin(), all.end());
    }
    if (!inner_contiguous && !contiguous_red.empty() && split_allowed()) {
      size_t nred = st.vars.size() - n;
      for (size_t k = 0; k < nred; ++k)  // rdom[k] is reduction variable nred-1-k
        if (contiguous_red.count(static_cast<int>(n + nred - 1 - k))) {
          s.contiguous_rvar = static_cast<int>(k);
          break;
        }
    }
    for (size_t d = 1; d < n && s.block_var < 0; ++d)
      if (!with_inner.count(statement_var(st, static_cast<int>(d)))) s.block_var = static_cast<int>(d);
    if (s.block_var < 0 && n >= 2) s.block_var = 1;
  }

  // Halide gives an update only the reduction variables its definition mentions: the
  // reference runs 'O(i) +=! 1 where exists C(i, j)' once per j, so every variable of dom is
  // mentioned (return_second(r, rhs) is rhs; the simplifier drops it after the loops exist).
  static Expr mention_every_rvar(Expr rhs, const Halide::RDom& dom) {
    if (!dom.defined()) return rhs;
    for (int k = 0; k < dom.dimensions(); ++k)
      if (!Halide::Internal::expr_uses_var(rhs, dom[k].name()))
        rhs = Halide::Internal::Call::make(rhs.type(), Halide::Internal::Call::return_second, {Expr(dom[k]), rhs},
                                           Halide::Internal::Call::PureIntrinsic);
    return rhs;
  }

  // A scatter (ir::Stmt::scatter): a Scatter stage whose pure definition is the tensor before
  // the statement (zeros for '+=!': the whole tensor) and whose one update, over an RDom of
  // all the statement's variables, adds the right-hand side at the computed subscripts. Each
  // written index is clamped into the tensor, which gives Halide the update's bounds; it is a
  // no-op where binding proved the subscript, or with `checked`, whose check stage (run
  // before any statement) reports a bad index first. Unchecked, a point with an index out of
  // bounds leaves the element as it was (the reference skips it). The update is serial, except
  // over a variable that is exactly one written subscript (the scheduler may parallelise it:
  // different values write different elements, and each element's additions keep their order).
  void lower_scatter(int si) {
    const ir::Stmt& st = def_.stmts[si];
    const auto& ranges = b_.ranges[si];
    int t = st.lhs_tensor;
    bool no_points = false, no_elements = false;
    for (const auto& [lo, hi] : ranges) no_points = no_points || lo >= hi;
    for (int64_t e : shape(t)) no_elements = no_elements || e == 0;  // nothing can be written
    bool empty = no_points || no_elements;
    // A tensor without elements takes no write, but with `checked` its points' written
    // subscripts are still checked: every one is out of bounds, which the reference reports
    // (a gradient's scatter into an empty temporary: grad_fuzz, seed 1, program 52).
    bool check_only = empty && !no_points && checked_;

    Stage s = new_stage(Stage::Kind::Scatter, t, "s" + std::to_string(si), dim_names(t));
    s.stmt = si;
    int me = add_stage(s);
    std::vector<Halide::Range> region;  // rdom[0] is the last variable: loops nest as the reference's
    for (size_t v = st.vars.size(); v-- > 0;)
      region.emplace_back(static_cast<int>(ranges[v].first), static_cast<int>(ranges[v].second - ranges[v].first));
    // A scatter with no variable (`d_B(0) += ...`) runs at its one point: an update without
    // an RDom.
    Halide::RDom dom;
    bool runs = !empty;
    if ((runs || check_only) && !region.empty()) dom = Halide::RDom(region, "r_s" + std::to_string(si));
    if (runs) p_.stages[me].rdom = dom;

    std::vector<Expr> pure = as_exprs(p_.stages[me].vars);
    Halide::Type type = p_.stages[me].type;
    Expr before = st.init ? identity(ReduceOp::Sum, type) : read(t, pure, me, true);
    if (!runs && !check_only) {
      p_.stages[me].func(pure) = before;
      current_[t] = me;
      return;
    }
    pack_dims_.clear();
    ExprContext ctx;
    ctx.bound = &b_;
    ctx.stmt = &st;
    for (size_t v = 0; v < st.vars.size(); ++v) ctx.vars.push_back(dom[static_cast<int>(st.vars.size() - 1 - v)]);
    loop_vars_ = ctx.vars;
    current_stmt_ = si;
    ctx.load = [&](int read, std::vector<Expr> index, const Expr& guard) {
      return load(st.reads[read], std::move(index), guard, me, /*full_box=*/false, /*in_loop=*/true);
    };
    if (check_only) {
      for (size_t d = 0; d < st.write.subscripts.size(); ++d)
        if (!b_.proven(st.write.subscripts[d]))
          check_stage(st.write, static_cast<int>(d), comparable_index(lower_expr(*st.write.subscripts[d].index, ctx)),
                      Expr(), /*write=*/true);
      p_.stages[me].func(pure) = before;
      current_[t] = me;
      return;
    }
    std::vector<Expr> idx;
    Expr inside = Halide::Internal::make_bool(true);
    std::vector<int> plain_uses(st.vars.size(), 0);  // per variable: written subscripts that are exactly it
    for (const ir::Subscript& sub : st.write.subscripts)
      if (sub.var >= 0) ++plain_uses[static_cast<size_t>(sub.var)];
    for (size_t d = 0; d < st.write.subscripts.size(); ++d) {
      const ir::Subscript& sub = st.write.subscripts[d];
      if (sub.var >= 0 && b_.proven(sub) && plain_uses[static_cast<size_t>(sub.var)] == 1) {
        // Exactly a variable, in bounds: written as the bare RVar so that Halide sees that
        // different values of it write different elements (the scheduler may then run the
        // update in parallel over it: scatter_parallel_rvar).
        idx.push_back(dom[static_cast<int>(st.vars.size() - 1 - static_cast<size_t>(sub.var))]);
        int rvar = static_cast<int>(st.vars.size() - 1 - static_cast<size_t>(sub.var));
        p_.stages[me].scatter_parallel_rvar = std::max(p_.stages[me].scatter_parallel_rvar, rvar);
        continue;
      }
      Expr i = comparable_index(lower_expr(*sub.index, ctx));
      Expr lo = Halide::Internal::make_zero(i.type()), hi = Halide::Internal::make_const(i.type(), shape(t)[d] - 1);
      if (!b_.proven(sub)) {
        if (checked_) check_stage(st.write, static_cast<int>(d), i, Expr(), /*write=*/true);
        else inside = inside && i >= lo && i <= hi;
      }
      idx.push_back(Halide::cast(Halide::Int(32), Halide::clamp(i, lo, hi)));
    }
    std::reverse(idx.begin(), idx.end());
    Expr rhs = mention_every_rvar(convert(lower_expr(*st.rhs, ctx), st.rhs->type, def_.tensors[t].type), dom);
    Func& f = p_.stages[me].func;
    f(pure) = before;
    Expr sum = combine(ReduceOp::Sum, f(idx), rhs, def_.tensors[t].type);
    f(idx) = Halide::Internal::is_const_one(inside) ? sum : Halide::select(inside, sum, f(idx));
    current_[t] = me;
  }

  void lower_statement(int si) {
    const ir::Stmt& st = def_.stmts[si];
    if (st.scatter) return lower_scatter(si);
    const auto& ranges = b_.ranges[si];
    size_t n = st.num_lhs_vars();
    for (size_t v = 0; v < n; ++v)
      if (ranges[v].first >= ranges[v].second) return;  // writes nothing
    int t = st.lhs_tensor;
    bool full_box = true;
    for (size_t v = 0; v < n; ++v) full_box = full_box && ranges[v].first == 0 && ranges[v].second == shape(t)[v];
    bool reduce = st.reduce != ReduceOp::None;
    bool empty_reduction = false;
    for (size_t v = n; v < st.vars.size(); ++v) empty_reduction = empty_reduction || ranges[v].first >= ranges[v].second;

    std::vector<std::string> names(st.vars.begin(), st.vars.begin() + static_cast<long>(n));
    const RowFlattening* flat = flattening_of(si);
    transposed_stmt_ = !flat && std::find(transposed_.begin(), transposed_.end(), si) != transposed_.end();
    Stage s = new_stage(Stage::Kind::Pointwise, t, "s" + std::to_string(si) + (transposed_stmt_ ? "_transpose" : ""), names);
    s.stmt = si;
    if (flat) {  // w is the flattened position, h is 0 (flatten_rows.h)
      s.extents[0] = flat->positions;
      s.extents[1] = 1;
      s.flattened_row = flat->row;
    }
    if (transposed_stmt_) {  // vars[0] is the second-last written variable, vars[1] the last
      std::swap(s.vars[0], s.vars[1]);
      std::swap(s.extents[0], s.extents[1]);
      s.transposed = true;
    }
    int me = add_stage(s);  // placeholder: reads lowered below record this index as their consumer

    // The domain: pure variables for a full-box LHS, else an RDom over the box (plus the
    // reduction variables either way). rdom[0] is the last variable, so loops nest like the
    // reference's (first variable outermost).
    std::vector<Halide::Range> region;
    size_t first_rdom_var = full_box ? n : 0;
    for (size_t v = st.vars.size(); v-- > first_rdom_var;)
      region.emplace_back(static_cast<int>(ranges[v].first), static_cast<int>(ranges[v].second - ranges[v].first));
    Halide::RDom dom;
    if (!region.empty() && !(full_box && empty_reduction)) dom = Halide::RDom(region, "r_s" + std::to_string(si));

    bool in_loop = reduce && !empty_reduction;
    pack_dims_.clear();
    if (pack_ && full_box && reduce && st.vars.size() > n && n >= 2) pack_dims_ = operands_to_pack(st, innermost_var(st));
    ExprContext ctx;
    ctx.bound = &b_;
    ctx.stmt = &st;
    for (size_t v = 0; v < st.vars.size(); ++v) {
      if (v < first_rdom_var) ctx.vars.push_back(s.vars[halide_dim(static_cast<int>(v), static_cast<int>(n))]);
      else if (dom.defined()) ctx.vars.push_back(dom[static_cast<int>(st.vars.size() - 1 - v)]);
      else ctx.vars.push_back(Expr(static_cast<int>(ranges[v].first)));  // empty reduction: never evaluated
    }
    loop_vars_ = ctx.vars;
    current_stmt_ = si;
    ctx.load = [&](int read, std::vector<Expr> index, const Expr& guard) {
      return load(st.reads[read], std::move(index), guard, me, full_box, in_loop);
    };
    Expr rhs = convert(lower_expr(*st.rhs, ctx), st.rhs->type, def_.tensors[t].type);
    if (dom.defined()) rhs = mention_every_rvar(rhs, dom);

    std::vector<Expr> pure = as_exprs(p_.stages[me].vars);
    Halide::Type type = p_.stages[me].type;
    // The version before this statement (may create the Initial stage: read it before taking
    // references into p_.stages).
    bool needs_previous = !full_box || (reduce && !st.init);
    Expr previous = needs_previous ? read(t, pure, me, true) : Expr();
    Stage& out = p_.stages[me];
    Func& f = out.func;
    bool has_rvars = st.vars.size() > n;
    if (full_box && (!reduce || empty_reduction)) {
      // '=' over the whole tensor; or a reduction over nothing: the identity, or unchanged.
      f(pure) = !reduce ? rhs : (st.init ? identity(st.reduce, type) : previous);
      out.kind = Stage::Kind::Pointwise;
    } else if (full_box && !has_rvars) {
      // "O(i) += x(i)": one combination per element.
      f(pure) = combine(st.reduce, st.init ? identity(st.reduce, type) : previous, rhs, def_.tensors[t].type);
      out.kind = Stage::Kind::Pointwise;
    } else if (full_box) {
      Expr start = st.init ? identity(st.reduce, type) : previous;
      out.kind = Stage::Kind::Reduction;
      out.rdom = dom;
      const Halide::Internal::Mul* product = fusable_product(st, rhs, def_.tensors[t].type);
      // Fused only where the reads are not contiguous along a reduction variable (such a
      // reduction is split into lanes if its update is associative, which an fma is not).
      if (product) analyse_reduction(out, st, [] { return true; });
      if (product && out.contiguous_rvar < 0) {
        f(pure) = start;
        f(pure) = fused_multiply_add(product->a, product->b, f(pure));
        out.fused_multiply_add = true;
      } else if (keys_split_into_lanes(out, st, type)) {
        bool is_max = st.reduce == ReduceOp::Max;
        f(pure) = ordered_key(start, is_max);
        Expr key = opaque(ordered_key(rhs, is_max));
        f(pure) = is_max ? Halide::max(f(pure), key) : Halide::min(f(pure), key);
        out.type = f.output_types()[0];
        out.ordered_keys = true;
      } else {
        f(pure) = start;
        f(pure) = combine(st.reduce, f(pure), rhs, def_.tensors[t].type);
        analyse_reduction(out, st, [&] { return splittable(f, st.reduce, def_.tensors[t].type); });
      }
    } else {
      f(pure) = previous;
      std::vector<Expr> box;
      for (size_t v = 0; v < n; ++v) box.push_back(ctx.vars[n - 1 - v]);
      if (reduce && st.init) {
        std::vector<Halide::Range> lhs_region(region.end() - static_cast<long>(n), region.end());
        Halide::RDom lhs_dom(lhs_region, "r_init" + std::to_string(si));
        std::vector<Expr> lhs_box;
        for (size_t v = 0; v < n; ++v) lhs_box.push_back(lhs_dom[static_cast<int>(v)]);
        f(lhs_box) = identity(st.reduce, type);
      }
      if (!(reduce && empty_reduction)) f(box) = reduce ? combine(st.reduce, f(box), rhs, def_.tensors[t].type) : rhs;
      out.kind = Stage::Kind::Partial;
    }
    current_[t] = flat ? unflatten(si, t, me, flat->row) : transposed_stmt_ ? transpose_back(si, t, me) : me;
    transposed_stmt_ = false;
  }

  void make_outputs() {
    for (size_t t = 0; t < def_.tensors.size(); ++t) {
      const auto& decl = def_.tensors[t];
      if (decl.role != TensorRole::Output) continue;
      int ti = static_cast<int>(t);
      Stage s = new_stage(Stage::Kind::Output, ti, "out", dim_names(ti));
      s.type = storage_type(decl.type);
      int me = add_stage(s);
      std::vector<Expr> pure = as_exprs(p_.stages[me].vars);
      Expr value = current_[t] >= 0 ? read(ti, pure, me, true) : Halide::Internal::make_zero(value_type(decl.type));
      Func& f = p_.stages[me].func;  // after read(), which may add stages
      f(pure) = to_storage(value, decl.type);
      constrain(f.output_buffer(), ti);
      p_.output_stage[decl.param_index] = me;
    }
  }

  // A value folded into the sink: its bits, so that no simplification can drop the read.
  static Expr fold(const Expr& v) {
    if (v.type().is_bool()) return Halide::cast(Halide::UInt(32), v);
    Expr bits = Halide::reinterpret(Halide::UInt(v.type().bits()), v);
    return Halide::cast(Halide::UInt(32), bits);
  }

  // The checks sink, an extra output that makes every check stage run: a check is computed at
  // root over its whole domain (the scheduler bounds root stages to their domain and never
  // inlines a check), so the sink reads just its first and last point — every index is still
  // checked, also where a simplification of the statement dropped the read (a clamp to one
  // element, 'x * 0'). It used to read every point: a scalar pass over the indices that cost
  // lut1 (128x50 indices) a sixth of its run time.
  void make_checks_sink() {
    std::vector<int> forced;
    for (size_t i = 0; i < p_.stages.size(); ++i) {
      const Stage& s = p_.stages[i];
      bool empty = std::any_of(s.extents.begin(), s.extents.end(), [](int64_t e) { return e == 0; });
      if (s.forced && !empty) forced.push_back(static_cast<int>(i));
    }
    if (forced.empty()) return;
    Stage sink;
    sink.kind = Stage::Kind::Output;
    sink.func = Func("checks");
    sink.type = Halide::UInt(32);
    int me = add_stage(sink);
    Func f = p_.stages[me].func;
    f() = Halide::Internal::make_zero(Halide::UInt(32));
    for (int i : forced) {
      Stage& s = p_.stages[i];
      std::vector<Expr> first, last;
      for (size_t d = 0; d < s.extents.size(); ++d) {
        first.push_back(static_cast<int>(s.min(d)));
        last.push_back(static_cast<int>(s.min(d) + s.extents[d] - 1));
      }
      f() = f() + fold(s.func(first)) + fold(s.func(last));
      s.uses.push_back({me, false, false});
    }
    p_.sink_stage = me;
  }

  const ir::BoundDef& b_;
  const ir::Def& def_;
  bool dense_, checked_, pack_, fma_;
  std::vector<RowFlattening> flat_;
  std::vector<int> transposed_;  // statements computed transposed (transpose_result.h)
  bool transposed_stmt_ = false;  // the statement being lowered is one
  LoweredPipeline p_;
  // The statement being lowered: its index, its variables' values (in Stmt::vars order) and
  // the operands it reads packed (statement_facts.h, operands_to_pack).
  int current_stmt_ = -1;
  std::vector<Expr> loop_vars_;
  std::map<int, int> pack_dims_;
  std::map<std::tuple<int, int, int>, int> packs_;  // (tensor, version, dim) -> Pack stage
  std::vector<int> current_;  // per tensor: stage of its latest version, -1 before any write
  std::vector<int> initial_;  // per output tensor: its Initial stage, -1 until needed
};

}  // namespace

LoweredPipeline lower(const ir::BoundDef& bound, bool dense_innermost, bool checked, bool pack, bool fma,
                      const std::vector<RowFlattening>& flattening, const std::vector<int>& transposed) {
  return Builder(bound, dense_innermost, checked, pack, fma, dense_innermost ? flattening : std::vector<RowFlattening>{},
                 transposed)
      .build();
}

}  // namespace tc::backends::cpu
