// poly_model.cpp — see poly_model.h. The sets and maps are written as isl's text syntax and
// read by isl (the IR's subscripts are small trees: printing them is simpler, and leaks less
// readily, than building each through the isl_aff API).
#include "backends/cuda/poly_model.h"

#include <optional>
#include <set>

#include <isl/ctx.h>
#include <isl/flow.h>
#include <isl/options.h>
#include <isl/set.h>
#include <isl/union_map.h>
#include <isl/union_set.h>
#include <isl/version.h>

#include "backends/cuda/isl_util.h"
#include "support/error.h"

namespace tc::backends::cuda {
namespace {

// isl keywords a tensor may be named after: such a name gets a trailing '_' in the model.
const std::set<std::string> kIslWords = {"and", "or", "xor", "not", "implies", "mod", "floor", "ceil", "min", "max",
                                         "exists", "true", "false", "infty", "NaN", "rat", "cdiv_q", "fdiv_q",
                                         "tdiv_q", "tdiv_r"};

}  // namespace

std::string tuple_name(const std::string& tensor) { return kIslWords.count(tensor) ? tensor + "_" : tensor; }

namespace {

std::string var(int k) { return "i" + std::to_string(k); }

std::string var_list(size_t n) {
  std::string out;
  for (size_t k = 0; k < n; ++k) out += (k ? ", " : "") + var(static_cast<int>(k));
  return out;
}

// The value of an integer expression of constants and sizes only, at the bound sizes.
std::optional<int64_t> constant(const ir::Node& e, const ir::BoundDef& b) {
  switch (e.op) {
    case ir::ExprOp::Const:
      if (e.is_float) return std::nullopt;
      return e.int_value;
    case ir::ExprOp::Size: return b.size_values[static_cast<size_t>(e.index)];
    case ir::ExprOp::Dim: return b.tensors[static_cast<size_t>(e.index)].shape[static_cast<size_t>(e.dim)];
    default: return std::nullopt;
  }
}

// The subscript in isl syntax over the statement's variables i0, i1, ..., or nullopt where it
// is not (quasi-)affine at the bound sizes.
std::optional<std::string> affine(const ir::Node& e, const ir::BoundDef& b) {
  if (!is_integer(e.type)) return std::nullopt;
  if (auto c = constant(e, b)) return std::to_string(*c);
  if (e.op == ir::ExprOp::Var) return var(e.index);
  if (e.op == ir::ExprOp::Neg) {
    auto a = affine(*e.args[0], b);
    return a ? std::optional<std::string>("(-" + *a + ")") : std::nullopt;
  }
  if (e.op != ir::ExprOp::Binary || !is_integer(e.operand_type)) return std::nullopt;
  auto l = affine(*e.args[0], b), r = affine(*e.args[1], b);
  if (!l || !r) return std::nullopt;
  auto lc = constant(*e.args[0], b), rc = constant(*e.args[1], b);
  switch (e.binop) {
    case ir::BinOp::Add: return "(" + *l + " + " + *r + ")";
    case ir::BinOp::Sub: return "(" + *l + " - " + *r + ")";
    case ir::BinOp::Mul:
      if (!lc && !rc) return std::nullopt;  // a product of variables
      return "(" + *l + " * " + *r + ")";
    case ir::BinOp::Div:  // floor division equals TC's Euclidean one for a positive divisor
      if (!rc || *rc <= 0) return std::nullopt;
      return "floor(" + *l + " / " + *r + ")";
    case ir::BinOp::Mod:
      if (!rc || *rc <= 0) return std::nullopt;
      return "(" + *l + " mod " + *r + ")";
    default: return std::nullopt;
  }
}

// "lo0 <= i0 < hi0 and ..." over the first n variables of statement s.
std::string box(const ir::BoundDef& b, size_t s, size_t n) {
  std::string out;
  for (size_t v = 0; v < n; ++v) {
    const auto& [lo, hi] = b.ranges[s][v];
    out += (v ? " and " : "") + std::to_string(lo) + " <= " + var(static_cast<int>(v)) + " < " + std::to_string(hi);
  }
  return out.empty() ? "" : " : " + out;
}

// A read of `tensor` by `instance` (say "S0[i0, i1]"): each subscript exactly where affine,
// else anywhere in that dimension.
std::string read_text(const ir::BoundDef& b, const std::string& instance, const ir::Read& r) {
  const auto& shape = b.tensors[static_cast<size_t>(r.tensor)].shape;
  std::string outs, constraints;
  for (size_t d = 0; d < r.subscripts.size(); ++d) {
    std::string o = "o" + std::to_string(d);
    outs += (d ? ", " : "") + o;
    auto a = affine(*r.subscripts[d].index, b);
    std::string c = a ? o + " = " + *a : "0 <= " + o + " < " + std::to_string(shape[d]);
    constraints += (constraints.empty() ? "" : " and ") + c;
  }
  return instance + " -> " + tuple_name(b.def().tensors[static_cast<size_t>(r.tensor)].name) + "[" + outs + "]" +
         (constraints.empty() ? "" : " : " + constraints);
}

struct Texts {
  std::string domains, writes, may_writes, reads, order;  // may_writes: scatters' (over-approximated)
  void add(std::string& to, const std::string& part) { to += (to.empty() ? "" : "; ") + part; }
};

// "0 <= i0 < n0 and ..." over a whole tensor of this shape ("" for a 0-d one).
std::string whole_box(const std::vector<int64_t>& shape) {
  std::string out;
  for (size_t d = 0; d < shape.size(); ++d)
    out += (d ? " and " : "") + std::string("0 <= ") + var(static_cast<int>(d)) + " < " + std::to_string(shape[d]);
  return out;
}

// The part of output `t` that no statement writes, as constraints on i0, i1, ... ("" when one
// statement writes all of it: then no Z statement). Those elements are 0 after a run, as on
// every backend (the reference's zero fill).
std::optional<std::string> unwritten(const ir::BoundDef& b, size_t t) {
  const auto& shape = b.tensors[t].shape;
  std::string out = whole_box(shape);
  for (size_t s = 0; s < b.def().stmts.size(); ++s) {
    const ir::Stmt& st = b.def().stmts[s];
    if (static_cast<size_t>(st.lhs_tensor) != t) continue;
    if (st.scatter) return std::nullopt;  // counts as writing the whole tensor, as in the reference
    bool full = true;
    std::string written;
    for (size_t d = 0; d < st.num_lhs; ++d) {
      const auto& [lo, hi] = b.ranges[s][d];
      full = full && lo <= 0 && hi >= shape[d];
      written += (d ? " and " : "") + std::to_string(lo) + " <= " + var(static_cast<int>(d)) + " < " + std::to_string(hi);
    }
    if (full) return std::nullopt;
    out += (out.empty() ? "not (" : " and not (") + written + ")";
  }
  return out;
}

// A scatter `S<s>`: it writes (and reads: it accumulates) its element through the written
// subscripts, each exact where affine, else anywhere along that dimension; with '!', `I<s>`
// first sets the whole tensor to 0.
template <typename Schedule>
void add_scatter(const ir::BoundDef& b, size_t s, Texts& t, Schedule&& schedule) {
  const ir::Stmt& st = b.def().stmts[s];
  size_t tensor = static_cast<size_t>(st.lhs_tensor);
  const auto& shape = b.tensors[tensor].shape;
  if (st.init) {
    std::string init = "I" + std::to_string(s) + "[" + var_list(shape.size()) + "]";
    std::string whole = whole_box(shape);
    t.add(t.domains, init + (whole.empty() ? "" : " : " + whole));
    t.add(t.writes, init + " -> " + tuple_name(b.def().tensors[tensor].name) + "[" + var_list(shape.size()) + "]");
    schedule(init, shape.size());
  }
  std::string instance = "S" + std::to_string(s) + "[" + var_list(st.vars.size()) + "]";
  t.add(t.domains, instance + box(b, s, st.vars.size()));
  std::string written = read_text(b, instance, st.write);
  t.add(t.may_writes, written);
  t.add(t.reads, written);
  for (const ir::Read& r : st.reads) t.add(t.reads, read_text(b, instance, r));
  schedule(instance, st.vars.size());
}

// The statement texts: `Z<t>` (the unwritten elements of output t set to 0) first, then per
// statement `I<s>` (a '!' reduction's identity) and `S<s>`, in the def's order.
Texts model_texts(const ir::BoundDef& b) {
  const ir::Def& def = b.def();
  size_t depth = 0;
  for (const auto& st : def.stmts) depth = std::max(depth, st.vars.size());
  for (const auto& sig : b.tensors) depth = std::max(depth, sig.shape.size());
  Texts t;
  int position = 0;
  auto schedule = [&](const std::string& instance, size_t n) {
    std::string dims = std::to_string(position++);
    for (size_t k = 0; k < depth; ++k) dims += ", " + (k < n ? var(static_cast<int>(k)) : std::string("0"));
    t.add(t.order, instance + " -> [" + dims + "]");
  };
  for (size_t x = 0; x < def.tensors.size(); ++x) {
    if (def.tensors[x].role != ir::TensorRole::Output) continue;
    std::optional<std::string> rest = unwritten(b, x);
    if (!rest) continue;
    size_t rank = b.tensors[x].shape.size();
    std::string zero = "Z" + std::to_string(x) + "[" + var_list(rank) + "]";
    t.add(t.domains, zero + (rest->empty() ? "" : " : " + *rest));
    t.add(t.writes, zero + " -> " + tuple_name(def.tensors[x].name) + "[" + var_list(rank) + "]");
    schedule(zero, rank);
  }
  for (size_t s = 0; s < def.stmts.size(); ++s) {
    const ir::Stmt& st = def.stmts[s];
    std::string tensor = tuple_name(def.tensors[static_cast<size_t>(st.lhs_tensor)].name);
    if (st.scatter) {
      add_scatter(b, s, t, schedule);
      continue;
    }
    std::string written = tensor + "[" + var_list(st.num_lhs) + "]";
    if (st.init && st.reduce != ir::ReduceOp::None) {
      std::string init = "I" + std::to_string(s) + "[" + var_list(st.num_lhs) + "]";
      t.add(t.domains, init + box(b, s, st.num_lhs));
      t.add(t.writes, init + " -> " + written);
      schedule(init, st.num_lhs);
    }
    std::string instance = "S" + std::to_string(s) + "[" + var_list(st.vars.size()) + "]";
    t.add(t.domains, instance + box(b, s, st.vars.size()));
    t.add(t.writes, instance + " -> " + written);
    if (st.reduce != ir::ReduceOp::None) t.add(t.reads, instance + " -> " + written);  // accumulates
    for (const ir::Read& r : st.reads) t.add(t.reads, read_text(b, instance, r));
    schedule(instance, st.vars.size());
  }
  return t;
}

std::string braces(const std::string& body) { return "{ " + body + " }"; }

isl_union_map* read_map(isl_ctx* ctx, const std::string& body, const isl_union_set* domains, const char* what) {
  isl_union_map* m = checked(isl_union_map_read_from_str(ctx, braces(body).c_str()), ctx, what);
  return checked(isl_union_map_intersect_domain(m, isl_union_set_copy(const_cast<isl_union_set*>(domains))), ctx, what);
}

// Dependences of `sinks` on earlier sources in `order`: must sources (exact writes) kill older
// ones, may sources (a scatter's over-approximated writes; reads, for anti dependences) do
// not. Either may be NULL.
isl_union_map* depend(const isl_union_map* sinks, const isl_union_map* must, const isl_union_map* may,
                      const isl_union_map* order) {
  auto copy = [](const isl_union_map* m) { return isl_union_map_copy(const_cast<isl_union_map*>(m)); };
  isl_union_access_info* info = isl_union_access_info_from_sink(copy(sinks));
  if (must) info = isl_union_access_info_set_must_source(info, copy(must));
  if (may) info = isl_union_access_info_set_may_source(info, copy(may));
  info = isl_union_access_info_set_schedule_map(info, copy(order));
  isl_union_flow* flow = isl_union_access_info_compute_flow(info);
  isl_union_map* deps = isl_union_flow_get_may_dependence(flow);
  isl_union_flow_free(flow);
  return deps;
}

// Every pair of instances of a scatter: their updates are atomic additions, which commute, so
// the dependences between them (all pairs: the written element is over-approximated) do not
// order them, and the scatter's loops may run in parallel.
isl_union_map* scatter_self_pairs(isl_ctx* ctx, const ir::BoundDef& b) {
  std::string pairs;
  const ir::Def& def = b.def();
  for (size_t s = 0; s < def.stmts.size(); ++s) {
    if (!def.stmts[s].scatter) continue;
    size_t n = def.stmts[s].vars.size();
    std::string other;
    for (size_t k = 0; k < n; ++k) other += (k ? ", " : "") + std::string("j") + std::to_string(k);
    pairs += (pairs.empty() ? "" : "; ") + std::string("S") + std::to_string(s) + "[" + var_list(n) + "] -> S" +
             std::to_string(s) + "[" + other + "]";
  }
  return isl_union_map_read_from_str(ctx, braces(pairs).c_str());
}

// libtc must run the isl it was compiled against (Debian's libisl, TC_ISL_VERSION from
// pkg-config): libLLVM-14 exports a bundled copy of isl (Polly's), and a link that lists LLVM
// first resolves every isl call there (src/CMakeLists.txt links libisl before it).
void require_linked_isl() {
  static const bool ok = std::string(isl_version()).rfind(std::string("isl-") + TC_ISL_VERSION, 0) == 0;
  if (!ok)
    fail(TC_ERROR_INTERNAL, std::string("libtc calls isl '") + isl_version() + "', not the isl " + TC_ISL_VERSION +
                                " it was compiled against (a link that resolves isl in another library, such as "
                                "libLLVM's bundled copy): a build error, please report it");
}

}  // namespace

PolyModel::PolyModel(const ir::BoundDef& bound) {
  require_linked_isl();
  ctx_ = isl_ctx_alloc();
  if (ctx_ == nullptr) fail(TC_ERROR_NO_MEMORY, "isl_ctx_alloc failed");
  isl_options_set_on_error(ctx_, ISL_ON_ERROR_CONTINUE);  // no messages on stderr: errors are returned
  isl_union_map *exact = nullptr, *may = nullptr;  // the writes, exact and over-approximated
  try {
    Texts t = model_texts(bound);
    domains_ = checked(isl_union_set_read_from_str(ctx_, braces(t.domains).c_str()), ctx_, "domains");
    exact = read_map(ctx_, t.writes, domains_, "writes");
    may = read_map(ctx_, t.may_writes, domains_, "scatter writes");
    writes_ = checked(isl_union_map_union(isl_union_map_copy(exact), isl_union_map_copy(may)), ctx_, "writes");
    reads_ = read_map(ctx_, t.reads, domains_, "reads");
    order_ = read_map(ctx_, t.order, domains_, "order");
    flow_ = checked(depend(reads_, exact, may, order_), ctx_, "flow dependences");
    isl_union_map* anti = checked(depend(writes_, nullptr, reads_, order_), ctx_, "anti dependences");
    isl_union_map* output = depend(writes_, exact, may, order_);
    isl_union_map_free(exact);
    isl_union_map_free(may);
    exact = may = nullptr;
    deps_ = checked(isl_union_map_union(isl_union_map_union(isl_union_map_copy(flow_), anti), output), ctx_, "dependences");
    deps_ = checked(isl_union_map_subtract(deps_, checked(scatter_self_pairs(ctx_, bound), ctx_, "scatter pairs")), ctx_,
                    "dependences");
  } catch (...) {
    isl_union_map_free(exact);
    isl_union_map_free(may);
    release();
    throw;
  }
}

PolyModel::~PolyModel() { release(); }

void PolyModel::release() {
  isl_union_set_free(domains_);
  isl_union_map_free(reads_);
  isl_union_map_free(writes_);
  isl_union_map_free(order_);
  isl_union_map_free(flow_);
  isl_union_map_free(deps_);
  domains_ = nullptr;
  reads_ = writes_ = order_ = flow_ = deps_ = nullptr;
  if (ctx_) isl_ctx_free(ctx_);
  ctx_ = nullptr;
}

std::string PolyModel::text() const {
  auto map = [](const isl_union_map* m) { return owned_text(isl_union_map_to_str(const_cast<isl_union_map*>(m))); };
  return "domains: " + owned_text(isl_union_set_to_str(domains_)) + "\nwrites: " + map(writes_) + "\nreads: " +
         map(reads_) + "\nflow: " + map(flow_) + "\ndependences: " + map(deps_) + "\n";
}

}  // namespace tc::backends::cuda
