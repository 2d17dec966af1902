// range_inference.cpp — the algorithm of tc-range-inference.md, statement by statement:
//   - rounds over the unresolved index variables; each round looks at every tensor subscript
//     with exactly one unresolved variable, eliminates the resolved ones with Halide's
//     and_condition_over_domain, solves with solve_for_inner_interval, and intersects;
//   - inferred lower bounds are clamped at 0 (index variables are non-negative unless a where
//     clause says otherwise);
//   - an LHS index that no access constrains takes the extent other statements give that
//     dimension of the same tensor (the paper's sconv2d);
//   - statements are visited until a fixpoint, because a statement that reads a temporary or
//     output needs that tensor's final extents (the maximum over all its writers).
// It also records preconditions: bounds of every subscript, checked at binding (those of
// guarded reads only tell binding whether a run-time check can be dropped).
// A scatter (Stmt::write) is different in two ways: its written access constrains its
// variables like a read of the tensor it writes (whose extents must come from elsewhere: an
// annotation or earlier plain statements, which sema checked), and it never gives that
// tensor extents; its written subscripts get preconditions like a read's.
// It does not bind concrete sizes (src/ir/bind.cpp does).
#include "infer/range_inference.h"

#include <Halide.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>

#include "infer/to_halide.h"
#include "lang/printer.h"
#include "support/error.h"

namespace tc::infer {

namespace HI = Halide::Internal;
using lang::Def;
using lang::Expr;
using lang::ExprKind;
using lang::Ref;
using lang::Stmt;
using lang::Tok;

namespace {

void collect_accesses(const Expr& e, bool guarded, std::vector<Access>& out) {
  if (e.ref == Ref::Tensor) out.push_back(Access{&e, guarded});  // a bare 0-d tensor name too
  bool short_circuit = e.kind == ExprKind::Binary && (e.op == Tok::AndAnd || e.op == Tok::OrOr);
  for (size_t i = 0; i < e.args.size(); ++i) {
    bool branch = (e.kind == ExprKind::Ternary && i > 0) || (short_circuit && i == 1);
    collect_accesses(*e.args[i], guarded || branch, out);
  }
}

std::string join_quoted(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? (i + 1 == v.size() ? " and '" : ", '") : "'") + v[i] + "'";
  return out;
}

enum class State { Pending, WaitLhs, Done };

class DefInference {
 public:
  DefInference(const lang::Program& prog, const Def& def) : prog_(prog), def_(def) {
    for (const std::string& s : def.size_names) size_bounds_.push(s, HI::Interval(0, HI::Interval::pos_inf()));
    extents_.resize(def.tensors.size());
    known_.assign(def.tensors.size(), false);
    for (size_t t = 0; t < def.tensors.size(); ++t) {
      const auto& decl = def.tensors[t];
      if (decl.role != lang::TensorRole::Input) continue;
      for (const auto& d : decl.dims)
        extents_[t].push_back(d.is_literal() ? Halide::Expr(static_cast<int>(d.value)) : size_var(d.name));
      known_[t] = true;
    }
    states_.assign(def.stmts.size(), State::Pending);
    writers_.resize(def.tensors.size());
    for (size_t s = 0; s < def.stmts.size(); ++s) writers_[def.stmts[s].lhs_tensor].push_back(static_cast<int>(s));
    ranges_.resize(def.stmts.size());
    lhs_free_.resize(def.stmts.size());
  }

  DefRanges run() {
    while (std::count(states_.begin(), states_.end(), State::Done) < static_cast<long>(states_.size())) {
      bool progress = false;
      for (size_t s = 0; s < def_.stmts.size(); ++s) {
        if (states_[s] != State::Pending || !attempt(static_cast<int>(s))) continue;
        progress = true;
        int t = def_.stmts[s].lhs_tensor;  // finalise at once, so a chain of temporaries resolves in one sweep
        if (!known_[t]) finalize(t);
      }
      for (size_t t = 0; t < def_.tensors.size(); ++t)
        if (!known_[t] && finalize(static_cast<int>(t))) progress = true;
      if (!progress) report_deadlock();
    }
    return result();
  }

 private:
  [[noreturn]] void error(lang::SourceLoc loc, const std::string& msg) const {
    lang::report(TC_ERROR_SEMANTIC, prog_.source, def_.name, loc, msg);
  }

  Halide::Expr simplify(const Halide::Expr& e) const { return HI::simplify(e, true, size_bounds_); }

  DimExtentFn dim_fn() const {
    return [this](int t, int d) { return known_[t] ? extents_[t][d] : Halide::Expr(); };
  }

  // Every tensor read of the right-hand side and the exists clauses, and of a scatter's
  // written subscripts (gathers such as the I(b, l) of d_LUT(I(b, l), d)).
  static std::vector<Access> all_accesses(const Stmt& s) {
    std::vector<Access> all;
    if (s.is_scatter())
      for (const auto& a : s.write->args) collect_accesses(*a, false, all);
    collect_accesses(*s.rhs, false, all);
    for (const auto& e : s.exists) collect_accesses(*e, false, all);
    return all;
  }

  // The accesses that constrain ranges: reads with subscripts, except of the written tensor
  // (reads of its own element); for a scatter also its write, first (a scatter reads
  // nothing of the tensor it writes: sema).
  static std::vector<Access> accesses_of(const Stmt& s) {
    std::vector<Access> out;
    if (s.is_scatter()) out.push_back(Access{s.write.get(), false});
    for (const Access& a : all_accesses(s))
      if (a.expr->tensor != s.lhs_tensor && a.expr->kind == ExprKind::Call) out.push_back(a);
    return out;
  }

  // Resolved variables as Halide's inclusive intervals.
  HI::Scope<HI::Interval> domain_scope(const std::map<std::string, Range>& ranges) const {
    HI::Scope<HI::Interval> scope;
    for (const auto& [name, r] : ranges) scope.push(name, HI::Interval(r.lo.halide(), simplify(r.hi.halide() - 1)));
    return scope;
  }

  // An integer literal that index arithmetic (32-bit) cannot hold, or nullptr.
  static const Expr* oversized_literal(const Expr& e) {
    if (e.kind == ExprKind::IntLit && (e.int_value > INT32_MAX || e.int_value < INT32_MIN)) return &e;
    for (const auto& a : e.args)
      if (const Expr* big = oversized_literal(*a)) return big;
    return nullptr;
  }

  // Where clauses give ranges up front; returns false if a bound needs an unknown extent.
  bool where_ranges(const Stmt& s, std::map<std::string, Range>& ranges) const {
    for (const auto& r : s.ranges) {
      for (const Expr* bound : {r.lo.get(), r.hi.get()})
        if (const Expr* big = oversized_literal(*bound))
          lang::report(TC_ERROR_UNSUPPORTED, prog_.source, def_.name, big->loc,
                       "range bound " + std::to_string(big->int_value) +
                           " is outside the supported 32-bit index range (extents are at most " +
                           std::to_string(lang::kMaxExtent) + ")");
      Halide::Expr lo = to_halide(*r.lo, dim_fn()), hi = to_halide(*r.hi, dim_fn());
      if (!lo.defined() || !hi.defined()) return false;
      Range range{SymExpr(simplify(lo)), SymExpr(simplify(hi)), true};
      ranges[r.var] = range;
    }
    return true;
  }

  // One statement: true if it made progress (Done or WaitLhs).
  bool attempt(int si) {
    const Stmt& s = def_.stmts[si];
    std::map<std::string, Range> ranges;
    if (!where_ranges(s, ranges)) return false;
    std::set<std::string> unresolved;
    for (const auto& v : s.vars)
      if (!ranges.count(v)) unresolved.insert(v);
    std::vector<Access> accesses = accesses_of(s);
    bool blocked = false;
    while (!unresolved.empty()) {
      std::map<std::string, HI::Interval> found;
      std::map<std::string, const Expr*> source;
      HI::Scope<HI::Interval> resolved = domain_scope(ranges);
      for (const Access& a : accesses)
        for (size_t d = 0; d < a.expr->args.size(); ++d)
          constrain(*a.expr, static_cast<int>(d), resolved, unresolved, found, source, blocked);
      if (found.empty()) break;
      for (auto& [v, iv] : found) {
        if (!iv.has_lower_bound() || !iv.has_upper_bound())
          error(source[v]->loc, "cannot infer a finite range for '" + v + "' from '" + lang::to_source(*source[v]) +
                                    "'; add a where clause such as 'where " + v + " in 0:N'");
        Halide::Expr lo = simplify(Halide::max(iv.min, 0));
        Halide::Expr hi = simplify(iv.max + 1);
        ranges[v] = Range{SymExpr(lo), SymExpr(hi), false};
        unresolved.erase(v);
      }
    }
    if (!unresolved.empty() && blocked) return false;
    std::vector<std::string> lhs_free, stuck;
    std::set<std::string> in_accesses;
    for (const Access& a : accesses)
      for (const auto& arg : a.expr->args) lang::collect_index_vars(*arg, in_accesses);
    for (const auto& v : s.vars) {
      if (!unresolved.count(v)) continue;
      bool on_lhs = std::find(s.indices.begin(), s.indices.end(), v) != s.indices.end();
      (on_lhs && !in_accesses.count(v) ? lhs_free : stuck).push_back(v);
    }
    if (!stuck.empty()) report_unresolved(s, stuck, accesses);
    ranges_[si] = std::move(ranges);
    lhs_free_[si] = lhs_free;
    states_[si] = lhs_free.empty() ? State::Done : State::WaitLhs;
    return true;
  }

  // The condition "subscript d of access is in bounds", if it has exactly one unresolved variable.
  void constrain(const Expr& access, int d, const HI::Scope<HI::Interval>& resolved,
                 const std::set<std::string>& unresolved, std::map<std::string, HI::Interval>& found,
                 std::map<std::string, const Expr*>& source, bool& blocked) const {
    Halide::Expr idx = to_halide(*access.args[d], dim_fn());
    if (!idx.defined()) return;
    std::string var;
    int count = 0;
    for (const auto& v : unresolved)
      if (HI::expr_uses_var(idx, v)) {
        var = v;
        ++count;
      }
    if (count != 1) return;
    if (!known_[access.tensor]) {
      blocked = true;
      return;
    }
    Halide::Expr cond = 0 <= idx && idx < extents_[access.tensor][d];
    cond = simplify(HI::and_condition_over_domain(cond, resolved));
    HI::Interval iv = HI::solve_for_inner_interval(cond, var);
    auto it = found.find(var);
    if (it == found.end()) {
      found[var] = iv;
      source[var] = &access;
      return;
    }
    HI::Interval& cur = it->second;
    if (iv.has_lower_bound()) cur.min = cur.has_lower_bound() ? simplify(Halide::max(cur.min, iv.min)) : iv.min;
    if (iv.has_upper_bound()) cur.max = cur.has_upper_bound() ? simplify(Halide::min(cur.max, iv.max)) : iv.max;
  }

  [[noreturn]] void report_unresolved(const Stmt& s, const std::vector<std::string>& stuck,
                                      const std::vector<Access>& accesses) const {
    // Ambiguous: the variable only appears in subscripts together with other unknowns.
    for (const Access& a : accesses)
      for (const auto& arg : a.expr->args) {
        std::set<std::string> vs;
        lang::collect_index_vars(*arg, vs);
        std::vector<std::string> together;
        for (const auto& v : stuck)
          if (vs.count(v)) together.push_back(v);
        if (together.size() >= 2 || (together.size() == 1 && !to_halide(*arg, dim_fn()).defined()))
          error(arg->loc, "cannot infer the range" + std::string(together.size() > 1 ? "s of " : " of ") +
                              join_quoted(together) + " from '" + lang::to_source(*a.expr) +
                              "'; add a where clause such as 'where " + together.back() + " in 0:N'");
      }
    error(s.loc, "cannot infer the range of " + join_quoted(stuck) +
                     ": no tensor access constrains it; add a where clause such as 'where " + stuck.front() + " in 0:N'");
  }

  // Extents of a non-input tensor, once no plain writer is pending; resolves LHS-free
  // variables. Scatters do not count: they write within extents given otherwise, and wait for
  // them (their write constrains their ranges).
  bool finalize(int t) {
    std::vector<int> writers;
    for (int s : writers_[t])
      if (!def_.stmts[s].is_scatter()) writers.push_back(s);
    for (int s : writers)
      if (states_[s] == State::Pending) return false;
    const auto& decl = def_.tensors[t];
    std::vector<Halide::Expr> ext(decl.ndim);
    for (int d = 0; d < decl.ndim; ++d) {
      Halide::Expr e;
      for (int w : writers) {
        const std::string& v = def_.stmts[w].indices[d];
        auto it = ranges_[w].find(v);
        if (it == ranges_[w].end()) continue;
        Halide::Expr hi = it->second.hi.halide();
        e = e.defined() ? Halide::max(e, hi) : hi;
      }
      if (!e.defined() && decl.has_dims_annotation()) e = annotated_dim(decl, d);
      if (!e.defined()) {
        if (writers.empty()) fail(TC_ERROR_INTERNAL, "range inference: '" + decl.name + "' has no shape (sema lets no scatter define one)");
        const Stmt& s = def_.stmts[writers.front()];
        error(s.index_locs[d], "cannot infer the range of '" + s.indices[d] + "': no access in this statement constrains it "
                               "and no other statement writing '" + decl.name + "' sets dimension " + std::to_string(d) +
                               "; add a where clause such as 'where " + s.indices[d] + " in 0:N'");
      }
      ext[d] = simplify(Halide::max(e, 0));
    }
    extents_[t] = ext;
    for (int w : writers) {
      for (const auto& v : lhs_free_[w]) {
        int d = static_cast<int>(std::find(def_.stmts[w].indices.begin(), def_.stmts[w].indices.end(), v) -
                                 def_.stmts[w].indices.begin());
        ranges_[w][v] = Range{SymExpr(Halide::Expr(0)), SymExpr(ext[d]), false};
      }
      lhs_free_[w].clear();
      states_[w] = State::Done;
    }
    known_[t] = true;
    return true;
  }

  Halide::Expr annotated_dim(const lang::TensorDecl& decl, int d) const {
    const auto& dim = decl.dims[d];
    return dim.is_literal() ? Halide::Expr(static_cast<int>(dim.value)) : size_var(dim.name);
  }

  [[noreturn]] void report_deadlock() const {
    for (size_t s = 0; s < def_.stmts.size(); ++s) {
      if (states_[s] != State::Pending) continue;
      for (const Access& a : accesses_of(def_.stmts[s]))
        if (!known_[a.expr->tensor])
          error(a.expr->loc, "cannot infer ranges: this statement " +
                                 std::string(a.expr == def_.stmts[s].write.get() ? "writes" : "reads") + " '" +
                                 a.expr->name + "', whose shape depends on this statement or on a later one; add where clauses");
      error(def_.stmts[s].loc, "cannot infer ranges of this statement: its where clause uses the shape of a tensor "
                               "that is not known yet");
    }
    fail(TC_ERROR_INTERNAL, "range inference made no progress");
  }

  DefRanges result() const {
    DefRanges out;
    for (size_t t = 0; t < def_.tensors.size(); ++t) {
      std::vector<SymExpr> ext;
      for (const auto& e : extents_[t]) ext.emplace_back(simplify(e));
      out.extents.push_back(ext);
    }
    for (size_t s = 0; s < def_.stmts.size(); ++s) {
      StmtRanges sr;
      for (const auto& v : def_.stmts[s].vars) sr.vars.push_back(ranges_[s].at(v));
      sr.accesses = all_accesses(def_.stmts[s]);
      out.stmts.push_back(sr);
      add_preconditions(static_cast<int>(s), out.preconditions);
    }
    return out;
  }

  // Bounds of a subscript over the domain `scope`; a ?: in it is bounded branch by branch, each
  // over the part of the domain where it is taken ('A(i > 0 ? i - 1 : 0)' reads 0..N-2, not -1).
  HI::Interval narrowed_bounds(const Halide::Expr& e, const HI::Scope<HI::Interval>& scope) const {
    const auto* sel = e.as<HI::Select>();
    if (sel == nullptr) return HI::bounds_of_expr_in_scope(e, scope);
    HI::Interval taken = narrowed_bounds(sel->true_value, narrowed(scope, sel->condition));
    HI::Interval other = narrowed_bounds(sel->false_value, narrowed(scope, simplify(!sel->condition)));
    return HI::Interval::make_union(taken, other);
  }

  // scope with each variable of `cond` limited to where cond may hold.
  static HI::Scope<HI::Interval> narrowed(const HI::Scope<HI::Interval>& scope, const Halide::Expr& cond) {
    HI::Scope<HI::Interval> out;
    for (auto it = scope.cbegin(); it != scope.cend(); ++it) {
      HI::Interval iv = it.value();
      if (HI::expr_uses_var(cond, it.name()))
        iv = HI::Interval::make_intersection(iv, HI::solve_for_outer_interval(cond, it.name()));
      out.push(it.name(), iv);
    }
    return out;
  }

  void add_preconditions(int si, std::vector<Precondition>& out) const {
    const Stmt& s = def_.stmts[si];
    HI::Scope<HI::Interval> scope = domain_scope(ranges_[si]);
    std::vector<Access> accesses = all_accesses(s);
    if (s.is_scatter()) accesses.insert(accesses.begin(), Access{s.write.get(), false});
    for (const Access& a : accesses) {
      bool write = a.expr == s.write.get();
      if (a.expr->tensor == s.lhs_tensor && !write) continue;
      for (size_t d = 0; d < a.expr->args.size(); ++d) {
        Halide::Expr idx = to_halide(*a.expr->args[d], dim_fn());
        if (!idx.defined()) continue;
        HI::Interval b = narrowed_bounds(simplify(idx), scope);
        if (!b.is_bounded()) continue;
        out.push_back(Precondition{si, a.expr, a.expr->loc, lang::to_source(*a.expr), a.expr->tensor, static_cast<int>(d),
                                   SymExpr(simplify(b.min)), SymExpr(simplify(b.max)), write, a.guarded});
      }
    }
  }

  const lang::Program& prog_;
  const Def& def_;
  HI::Scope<HI::Interval> size_bounds_;
  std::vector<std::vector<Halide::Expr>> extents_;
  std::vector<bool> known_;
  std::vector<State> states_;
  std::vector<std::vector<int>> writers_;  // per tensor: the statements writing it
  std::vector<std::map<std::string, Range>> ranges_;
  std::vector<std::vector<std::string>> lhs_free_;
};

}  // namespace

DefRanges infer_ranges(const lang::Program& program, const lang::Def& def) {
  return DefInference(program, def).run();
}

}  // namespace tc::infer
