// sema.cpp — see sema.h. Passes, in order, per def:
//   declare_params     inputs/outputs, size names, duplicate names
//   declare_temporaries LHS tensors that are neither, with their rank
//   resolve_stmt       lets inlined, names resolved, index/reduction variables, rules
//                      (a scatter: its written subscripts too, its operator, its target's shape)
//   infer_types        expression types and un-annotated tensor types (to a fixpoint)
#include "lang/sema.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>

#include "lang/inline_calls.h"
#include "lang/printer.h"
#include "lang/typing.h"
#include "support/error.h"

namespace tc::lang {
namespace {

class DefChecker {
 public:
  DefChecker(const Program& prog, Def& def) : prog_(prog), def_(def) {}

  void run() {
    declare_params();
    declare_temporaries();
    check_call_ranks();
    for (size_t s = 0; s < def_.stmts.size(); ++s) resolve_stmt(static_cast<int>(s));
    check_outputs_written();
    infer_types();
    check_call_types();
  }

 private:
  // Backends index with 32-bit integers: a literal extent beyond that is not supported.
  void check_dim_literal(const DimSpec& d) const {
    if (d.is_literal() && d.value > kMaxExtent)
      report(TC_ERROR_UNSUPPORTED, prog_.source, def_.name, d.loc,
             "dimension " + std::to_string(d.value) + " exceeds the largest supported extent " + std::to_string(kMaxExtent));
  }

  [[noreturn]] void error(SourceLoc loc, const std::string& msg) const {
    report(TC_ERROR_SEMANTIC, prog_.source, def_.name, loc, msg);
  }

  // ---- declarations ----
  void declare_params() {
    std::set<std::string> names;
    auto declare_name = [&](const std::string& n, SourceLoc loc) {
      if (!names.insert(n).second) error(loc, "'" + n + "' is declared twice in '" + def_.name + "'");
    };
    for (const Param& p : def_.inputs) {
      declare_name(p.name, p.loc);
      TensorDecl t{p.name, TensorRole::Input, p.loc};
      t.type = *p.type;
      t.type_annotated = true;
      t.ndim = static_cast<int>(p.dims.size());
      check_rank(t.ndim, p.loc, p.name);
      t.dims = p.dims;
      t.param_index = static_cast<int>(&p - def_.inputs.data());
      for (const DimSpec& d : p.dims) {
        if (d.is_literal() && d.value < 0) error(d.loc, "a dimension cannot be negative");
        check_dim_literal(d);
        if (!d.is_literal() && !def_.is_size(d.name)) def_.size_names.push_back(d.name);
      }
      def_.tensors.push_back(t);
    }
    for (const Param& p : def_.outputs) {
      declare_name(p.name, p.loc);
      TensorDecl t{p.name, TensorRole::Output, p.loc};
      t.type_annotated = p.type.has_value();
      if (p.type) t.type = *p.type;
      t.ndim = p.has_dims ? static_cast<int>(p.dims.size()) : -1;  // -1: from the statements
      t.dims = p.dims;
      t.param_index = static_cast<int>(&p - def_.outputs.data());
      for (const DimSpec& d : p.dims) check_dim_literal(d);
      for (const DimSpec& d : p.dims)
        if (!d.is_literal() && !def_.is_size(d.name))
          error(d.loc, "size '" + d.name + "' of output '" + p.name +
                           "' is not a size of any input (output sizes are inferred; omit the type or use input sizes)");
      def_.tensors.push_back(t);
    }
    for (const std::string& s : def_.size_names)
      if (names.count(s)) {
        const TensorDecl& t = def_.tensors[def_.find_tensor(s)];
        error(t.loc, "'" + s + "' is both a size name and a tensor name");
      }
    if (def_.stmts.empty()) error(def_.loc, "'" + def_.name + "' has no statements");
  }

  void declare_temporaries() {
    for (Stmt& s : def_.stmts) {
      if (s.is_call) fail(TC_ERROR_INTERNAL, "call statement survived inlining");
      if (def_.is_size(s.lhs)) error(s.loc, "cannot assign to size '" + s.lhs + "'");
      int t = def_.find_tensor(s.lhs);
      if (t < 0) {
        TensorDecl tmp{s.lhs, TensorRole::Temporary, s.loc};
        tmp.ndim = -1;
        def_.tensors.push_back(tmp);
        t = static_cast<int>(def_.tensors.size()) - 1;
      }
      TensorDecl& decl = def_.tensors[t];
      if (decl.role == TensorRole::Input)
        error(s.loc, "cannot write input '" + s.lhs + "': inputs are read-only (write to an output or a temporary)");
      int rank = static_cast<int>(s.lhs_rank());
      check_rank(rank, s.loc, s.lhs);
      if (decl.ndim < 0) {
        decl.ndim = rank;
      } else if (decl.ndim != rank) {
        error(s.loc, "'" + s.lhs + "' is written with " + std::to_string(rank) + " indices here but has rank " +
                         std::to_string(decl.ndim));
      }
      s.lhs_tensor = t;
    }
  }

  void check_rank(int rank, SourceLoc loc, const std::string& tensor) const {
    if (rank > TC_MAX_NDIM)
      report(TC_ERROR_UNSUPPORTED, prog_.source, def_.name, loc,
             "'" + tensor + "' has rank " + std::to_string(rank) + "; libtc supports at most " +
                 std::to_string(TC_MAX_NDIM) + " dimensions (TC_MAX_NDIM)");
  }

  // Arguments of inlined calls: existing tensors of the rank the callee declares.
  void check_call_ranks() const {
    for (const CallRequirement& r : def_.call_requirements) {
      int t = def_.find_tensor(r.tensor);
      if (t < 0) error(r.loc, "'" + r.tensor + "' passed to '" + r.callee + "' is not a tensor");
      if (def_.tensors[t].ndim != static_cast<int>(r.dims.size()))
        error(r.loc, "'" + r.tensor + "' has rank " + std::to_string(def_.tensors[t].ndim) + " but '" + r.callee +
                         "' declares its parameter '" + r.param + "' with rank " + std::to_string(r.dims.size()));
    }
  }

  void check_call_types() const {
    for (const CallRequirement& r : def_.call_requirements) {
      const TensorDecl& t = def_.tensors[def_.find_tensor(r.tensor)];
      if (t.type != r.type)
        error(r.loc, "'" + r.tensor + "' is " + name(t.type) + " but '" + r.callee + "' declares its parameter '" +
                         r.param + "' as " + name(r.type));
    }
  }

  void check_outputs_written() {
    for (const TensorDecl& t : def_.tensors)
      if (t.role == TensorRole::Output &&
          std::none_of(def_.stmts.begin(), def_.stmts.end(), [&](const Stmt& s) { return s.lhs == t.name; }))
        error(t.loc, "output '" + t.name + "' is never written by any statement");
  }

  // ---- statements ----
  struct StmtScope {
    Stmt* stmt;
    int index;
    std::map<std::string, ExprPtr> lets;
    std::vector<std::string> vars;  // in order of first appearance
    size_t inlined_nodes = 0;       // size of all let expansions so far
    void use_var(const std::string& v) {
      if (std::find(vars.begin(), vars.end(), v) == vars.end()) vars.push_back(v);
    }
  };

  void resolve_stmt(int index) {
    Stmt& s = def_.stmts[index];
    StmtScope scope{&s, index};
    for (size_t i = 0; i < s.indices.size(); ++i) {
      const std::string& v = s.indices[i];
      if (def_.is_size(v) || def_.find_tensor(v) >= 0)
        error(s.index_locs[i], "'" + v + "' is a " + (def_.is_size(v) ? "size" : "tensor") +
                                   "; left-hand side indices must be fresh index variable names");
      for (size_t j = 0; j < i; ++j)
        if (s.indices[j] == v) error(s.index_locs[i], "index variable '" + v + "' appears twice on the left-hand side");
      scope.use_var(v);
    }
    for (Let& l : s.lets) {
      bool is_lhs_index = std::find(s.indices.begin(), s.indices.end(), l.name) != s.indices.end();
      if (def_.is_size(l.name) || def_.find_tensor(l.name) >= 0 || scope.lets.count(l.name) || is_lhs_index)
        error(l.loc, "'" + l.name + "' is already defined; pick another name for this let");
      resolve(l.value, scope);
      scope.lets[l.name] = l.value;
    }
    current_stmt_ = index;
    if (s.is_scatter()) resolve_write(s, scope);
    resolve(s.rhs, scope);
    for (ExprPtr& e : s.exists) resolve(e, scope);
    for (RangeConstraint& r : s.ranges) {
      if (std::find(scope.vars.begin(), scope.vars.end(), r.var) == scope.vars.end())
        error(r.loc, "where clause gives a range to '" + r.var + "', which the statement does not use");
      for (const RangeConstraint& other : s.ranges)
        if (&other != &r && other.var == r.var && other.loc.offset < r.loc.offset)
          error(r.loc, "'" + r.var + "' has two ranges in the where clause");
      resolve_size_expr(r.lo);
      resolve_size_expr(r.hi);
    }
    s.vars = scope.vars;
    classify_reduction(s);
    if (s.is_scatter()) {
      check_scatter(s, index);
    } else {
      check_self_reads(s, s.rhs);
    }
  }

  // ---- scatters ----
  // The written subscripts are expressions of the statement's scope, like a read's; the
  // write itself is not a read (a temporary it writes need not exist yet).
  void resolve_write(Stmt& s, StmtScope& scope) {
    for (ExprPtr& a : s.write->args) resolve(a, scope);
    s.write->ref = Ref::Tensor;
    s.write->tensor = s.lhs_tensor;
  }

  // When every written subscript is a plain index variable, the first that repeats an earlier
  // one (what then makes the statement a scatter); else 0.
  static size_t repeated_subscript(const Stmt& s) {
    for (size_t d = 0; d < s.write->args.size(); ++d)
      if (s.write->args[d]->kind != ExprKind::Ident) return 0;
    for (size_t d = 1; d < s.write->args.size(); ++d)
      for (size_t e = 0; e < d; ++e)
        if (s.write->args[d]->name == s.write->args[e]->name) return d;
    return 0;
  }

  // The first subscript that is not a plain index variable: what makes the statement a scatter.
  static size_t computed_subscript(const Stmt& s) {
    for (size_t d = 0; d < s.write->args.size(); ++d) {
      const Expr& a = *s.write->args[d];
      if (a.kind != ExprKind::Ident || a.ref != Ref::Index) return d;
    }
    return 0;
  }

  // A scatter accumulates with '+=' or '+=!' only (several points may hit one element, in an
  // unspecified order: only a sum is independent of it); it reads nothing of the tensor it
  // writes (that too would depend on the order); and it does not give its tensor a shape, so
  // the shape must come from an annotated output or an earlier plain statement.
  void check_scatter(const Stmt& s, int index) const {
    size_t d = computed_subscript(s);
    if (s.op != Tok::PlusEq && s.op != Tok::PlusEqBang && repeated_subscript(s))
      error(s.index_locs[repeated_subscript(s)], "index variable '" + s.write->args[repeated_subscript(s)]->name +
                                                    "' appears twice on the left-hand side; only a scatter ('+=' or "
                                                    "'+=!') may write a diagonal such as D(i, i)");
    if (s.op != Tok::PlusEq && s.op != Tok::PlusEqBang)
      error(s.index_locs[d], "a computed left-hand side subscript ('" + to_source(*s.write->args[d]) +
                                 "') makes this statement a scatter; scatters accumulate with '+=' or '+=!' only");
    std::vector<const Expr*> reads;
    for (const ExprPtr& a : s.write->args) for (const Expr* r : tensor_reads(*a)) reads.push_back(r);
    for (const Expr* r : tensor_reads(*s.rhs)) reads.push_back(r);
    for (const ExprPtr& e : s.exists) for (const Expr* r : tensor_reads(*e)) reads.push_back(r);
    for (const Expr* r : reads)
      if (r->tensor == s.lhs_tensor)
        error(r->loc, "this scatter reads '" + s.lhs + "', the tensor it writes; a scatter updates '" + s.lhs +
                          "' at its points in an unspecified order, so it may not read it (read a copy an earlier "
                          "statement makes instead)");
    const TensorDecl& decl = def_.tensors[s.lhs_tensor];
    if (decl.has_dims_annotation()) return;
    for (int i = 0; i < index; ++i)
      if (def_.stmts[i].lhs_tensor == s.lhs_tensor && !def_.stmts[i].is_scatter()) return;
    std::string dims;  // an example annotation: "(N0, N1)"
    for (size_t k = 0; k < s.lhs_rank(); ++k) dims += std::string(k ? ", " : "") + "N" + std::to_string(k);
    std::string fix = decl.role == TensorRole::Output
                          ? "annotate the output with its dimensions, as in '-> (" +
                                std::string(decl.type_annotated ? name(decl.type) : "float") + "(" + dims + ") " + s.lhs +
                                ")', or write '" + s.lhs + "' with a plain statement first"
                          : "write '" + s.lhs + "' with a plain statement first (temporaries get their shape from "
                            "the plain statements writing them)";
    error(s.loc, "this scatter cannot give '" + s.lhs + "' its shape (computed subscripts do not define extents): " + fix);
  }

  static bool ranged(const Stmt& s, const std::string& var) {
    return std::any_of(s.ranges.begin(), s.ranges.end(), [&](const RangeConstraint& r) { return r.var == var; });
  }

  static bool all_reduction_vars_ranged(const Stmt& s) {
    for (size_t i = s.num_lhs_vars(); i < s.vars.size(); ++i)
      if (!ranged(s, s.vars[i])) return false;
    return true;
  }

  void classify_reduction(Stmt& s) {
    switch (s.op) {
      case Tok::PlusEq: s.reduce = ReduceOp::Sum; break;
      case Tok::StarEq: s.reduce = ReduceOp::Product; break;
      case Tok::MinEq: s.reduce = ReduceOp::Min; break;
      case Tok::MaxEq: s.reduce = ReduceOp::Max; break;
      case Tok::PlusEqBang: s.reduce = ReduceOp::Sum; s.init = true; break;
      case Tok::StarEqBang: s.reduce = ReduceOp::Product; s.init = true; break;
      case Tok::MinEqBang: s.reduce = ReduceOp::Min; s.init = true; break;
      case Tok::MaxEqBang: s.reduce = ReduceOp::Max; s.init = true; break;
      default: s.reduce = ReduceOp::None; break;
    }
    if (s.is_scatter()) return;  // every variable is iterated; the operator is checked by check_scatter
    if (s.reduce == ReduceOp::None && s.vars.size() > s.num_lhs_vars() && all_reduction_vars_ranged(s)) {
      // The spec's `A(i) = B(2*i + k) where k = [0, 2[`, "equivalent" to B(2*i) + B(2*i + 1):
      // '=' over index variables the where clause ranges explicitly sums over them, as '+=!'.
      // Without explicit ranges such a variable is more likely a misspelled tensor or size.
      s.reduce = ReduceOp::Sum;
      s.init = true;
    }
    if (s.reduce == ReduceOp::None && s.vars.size() > s.num_lhs_vars()) {
      std::string red;  // those without an explicit range: ranged ones alone would be summed
      for (size_t i = s.num_lhs_vars(); i < s.vars.size(); ++i)
        if (!ranged(s, s.vars[i])) red += (red.empty() ? "'" : ", '") + s.vars[i] + "'";
      error(s.op_loc, "index variable(s) " + red + " appear only on the right-hand side, so this is a reduction: "
                      "use a reduction operator such as '+=!' instead of '=' (or, if " + red +
                      " is a misspelled tensor or size, fix the name)");
    }
  }

  // Reads of the tensor being written must be of exactly the element being written.
  void check_self_reads(const Stmt& s, const ExprPtr& e) {
    if (e->ref == Ref::Tensor && e->tensor == s.lhs_tensor) {
      bool same = e->args.size() == s.indices.size();
      for (size_t i = 0; same && i < e->args.size(); ++i)
        same = e->args[i]->kind == ExprKind::Ident && e->args[i]->ref == Ref::Index && e->args[i]->name == s.indices[i];
      if (!same)
        error(e->loc, "statement writes '" + s.lhs + "(" + join(s.indices) + ")' but reads '" + s.lhs +
                          "' at a different element; a statement may only read the element it writes of its own "
                          "left-hand side tensor (write the result to a new tensor instead)");
    }
    for (const ExprPtr& a : e->args) check_self_reads(s, a);
  }

  static std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : ",") + x;
    return out;
  }

  // ---- expressions ----
  void resolve(ExprPtr& e, StmtScope& scope) {
    switch (e->kind) {
      case ExprKind::IntLit:
      case ExprKind::FloatLit:
        return;
      case ExprKind::Ident:
        return resolve_ident(e, scope);
      case ExprKind::Dim:
        return resolve_dim(*e);
      case ExprKind::Call:
        return resolve_call(e, scope);
      default:
        for (ExprPtr& a : e->args) resolve(a, scope);
    }
  }

  void resolve_ident(ExprPtr& e, StmtScope& scope) {
    auto let = scope.lets.find(e->name);
    if (let != scope.lets.end()) {
      scope.inlined_nodes += count_nodes(*let->second);
      if (scope.inlined_nodes > kMaxInlinedNodes)
        error(e->loc, "inlining the where-clause lets makes this statement too large (over " +
                          std::to_string(kMaxInlinedNodes) + " operations); use a temporary instead");
      e = let->second->clone();  // lets are inlined
      return;
    }
    if (def_.is_size(e->name)) {
      e->ref = Ref::Size;
      return;
    }
    int t = def_.find_tensor(e->name);
    if (t >= 0) {
      if (def_.tensors[t].ndim != 0)
        error(e->loc, "tensor '" + e->name + "' has rank " + std::to_string(def_.tensors[t].ndim) +
                          "; index it, as in " + e->name + "(...)");
      e->ref = Ref::Tensor;
      e->tensor = t;
      check_readable(*e, scope);
      return;
    }
    if (find_builtin(e->name) || scalar_type_from_name(e->name))
      error(e->loc, "'" + e->name + "' is a function; call it with arguments");
    e->ref = Ref::Index;
    scope.use_var(e->name);
  }

  void resolve_dim(Expr& e) {
    int t = def_.find_tensor(e.name);
    if (t < 0) error(e.loc, "'" + e.name + "' in '" + e.name + "." + std::to_string(e.int_value) + "' is not a tensor");
    if (e.int_value < 0 || e.int_value >= def_.tensors[t].ndim)
      error(e.loc, "tensor '" + e.name + "' has rank " + std::to_string(def_.tensors[t].ndim) + ", so '" + e.name + "." +
                       std::to_string(e.int_value) + "' does not exist");
    const TensorDecl& decl = def_.tensors[t];
    bool written_before = decl.role == TensorRole::Input;
    for (int i = 0; i < current_stmt_ && !written_before; ++i) written_before = def_.stmts[i].lhs_tensor == t;
    if (!written_before && decl.role != TensorRole::Input)
      error(e.loc, "'" + e.name + "." + std::to_string(e.int_value) + "' uses the shape of '" + e.name +
                       "', which no earlier statement writes");
    e.ref = Ref::Size;
    e.tensor = t;
  }

  void resolve_call(ExprPtr& e, StmtScope& scope) {
    int t = def_.find_tensor(e->name);
    if (t >= 0) {
      const TensorDecl& decl = def_.tensors[t];
      if (static_cast<int>(e->args.size()) != decl.ndim)
        error(e->loc, "tensor '" + e->name + "' has rank " + std::to_string(decl.ndim) + " but is indexed with " +
                          std::to_string(e->args.size()) + " indices");
      e->ref = Ref::Tensor;
      e->tensor = t;
      check_readable(*e, scope);
      for (ExprPtr& a : e->args) resolve(a, scope);
      return;
    }
    if (const Builtin* b = find_builtin(e->name)) {
      if (static_cast<int>(e->args.size()) != b->arity)
        error(e->loc, "'" + e->name + "' takes " + std::to_string(b->arity) + " argument" + (b->arity == 1 ? "" : "s") +
                          ", got " + std::to_string(e->args.size()));
      e->ref = Ref::Builtin;
      e->builtin = b->id;
      for (ExprPtr& a : e->args) resolve(a, scope);
      return;
    }
    if (auto ty = scalar_type_from_name(e->name)) {
      if (e->args.size() != 1) error(e->loc, "a cast to '" + e->name + "' takes one argument");
      e->ref = Ref::Cast;
      e->cast_to = *ty;
      resolve(e->args[0], scope);
      return;
    }
    for (const Def& d : prog_.defs)
      if (d.name == e->name)
        error(e->loc, "def '" + e->name + "' can only be called by a statement of its own, as in 'out = " + e->name +
                          "(x, y)' or 'a, b = " + e->name + "(x, y)'");
    if (def_.is_size(e->name)) error(e->loc, "'" + e->name + "' is a size, not a tensor or function");
    error(e->loc, "unknown tensor or function '" + e->name + "'");
  }

  // A temporary must be written by an earlier statement before it can be read.
  void check_readable(const Expr& e, const StmtScope& scope) {
    const TensorDecl& decl = def_.tensors[e.tensor];
    if (decl.role != TensorRole::Temporary) return;
    for (int i = 0; i < scope.index; ++i)
      if (def_.stmts[i].lhs_tensor == e.tensor) return;
    error(e.loc, "temporary '" + e.name + "' is read before any statement writes it");
  }

  // Range bounds: integers over sizes, literals and T.d; no index variables, no tensor reads.
  void resolve_size_expr(ExprPtr& e) {
    switch (e->kind) {
      case ExprKind::IntLit:
        return;
      case ExprKind::FloatLit:
        error(e->loc, "range bounds must be integers");
      case ExprKind::Ident:
        if (!def_.is_size(e->name))
          error(e->loc, "range bounds may only use sizes, integers and T.d, not '" + e->name + "'");
        e->ref = Ref::Size;
        return;
      case ExprKind::Dim:
        return resolve_dim(*e);
      case ExprKind::Call:
        if (e->name == "min" || e->name == "max") {
          if (e->args.size() != 2) error(e->loc, "'" + e->name + "' takes 2 arguments");
          e->ref = Ref::Builtin;
          e->builtin = find_builtin(e->name)->id;
          for (ExprPtr& a : e->args) resolve_size_expr(a);
          return;
        }
        error(e->loc, "range bounds may only use sizes, integers, T.d and min/max, not '" + e->name + "(...)'");
      default:
        for (ExprPtr& a : e->args) resolve_size_expr(a);
    }
  }

  // ---- types ----
  void infer_types() {
    // Un-annotated tensors take the promoted type of everything written to them; iterate
    // because a statement may read a tensor whose type a later statement widens.
    std::map<int, Typed> written;
    for (int round = 0; round < 16; ++round) {
      std::map<int, Typed> now;
      for (Stmt& s : def_.stmts) {
        Typed rhs = type_of(*s.rhs);
        for (ExprPtr& e : s.exists) type_of(*e);
        if (s.is_scatter())
          for (size_t d = 0; d < s.write->args.size(); ++d) {
            const Expr& a = *s.write->args[d];
            Typed t = type_of(*s.write->args[d]);
            if (!is_integer(t.type))
              error(s.index_locs[d], "left-hand side subscript '" + to_source(a) + "' of '" + s.lhs +
                                         "' must be an integer, got " + name(t.type));
          }
        for (RangeConstraint& r : s.ranges) {
          require_integer(*r.lo, "a range bound");
          require_integer(*r.hi, "a range bound");
        }
        auto it = now.find(s.lhs_tensor);
        now[s.lhs_tensor] = it == now.end() ? rhs : unify(it->second, rhs);
      }
      bool changed = false;
      for (auto& [t, ty] : now) {
        TensorDecl& decl = def_.tensors[t];
        if (decl.type_annotated) continue;
        ScalarType settled = ty.type;
        if (decl.type != settled) changed = true;
        decl.type = settled;
      }
      if (!changed && round > 0) break;
    }
    for (Stmt& s : def_.stmts) {
      settle(*s.rhs, def_.tensors[s.lhs_tensor].type);
      check_reduction_type(s);
    }
  }

  void check_reduction_type(const Stmt& s) {
    if (s.is_scatter() && def_.tensors[s.lhs_tensor].type == ScalarType::Bool)
      error(s.op_loc, "'" + s.lhs + "' is bool, and a scatter adds: scatter into an integer tensor (and compare it "
                      "with 0 afterwards) instead");
    if (s.reduce != ReduceOp::None && def_.tensors[s.lhs_tensor].type == ScalarType::Bool &&
        (s.reduce == ReduceOp::Sum || s.reduce == ReduceOp::Product))
      error(s.op_loc, "'" + s.lhs + "' is bool; use min/max reductions (logical and/or) or cast the values");
  }

  void require_integer(Expr& e, const char* what) {
    Typed t = type_of(e);
    if (!is_integer(t.type)) error(e.loc, std::string(what) + " must be an integer, got " + name(t.type));
  }

  // Gives weak literals (and their negations) the type of the operation they take part in, so
  // that backends materialise "0.1" directly in float64 next to a float64 operand.
  void settle(Expr& e, ScalarType t) const {
    if (!e.weak) return;
    fold_negated_literal(e);
    check_literal_fits(e, t);
    e.type = t;
    e.weak = false;
    for (ExprPtr& a : e.args) settle(*a, t);
  }
  // "-128" is one literal of the operand's type (int8 here), not 128 negated: 128 does not fit;
  // "-1e10" given int32 saturates to -2147483648, not to -2147483647.
  static void fold_negated_literal(Expr& e) {
    if (e.kind != ExprKind::Unary || e.op != Tok::Minus) return;
    const Expr& lit = *e.args[0];
    if (lit.kind != ExprKind::IntLit && lit.kind != ExprKind::FloatLit) return;
    e.name = "-" + lit.name;
    e.kind = lit.kind;
    e.int_value = -lit.int_value;  // 0 .. INT64_MAX: the lexer refuses larger literals
    e.float_value = -lit.float_value;
    e.args.clear();
  }

  // "A(i) < 300" with int8 A would silently compare against 44: refuse literals that change value.
  // A negated literal is one literal by now (fold_negated_literal).
  void check_literal_fits(const Expr& e, ScalarType t) const {
    if (e.kind != ExprKind::IntLit) return;
    if (!is_integer(t) && t != ScalarType::Bool) return;
    long double v = static_cast<long double>(e.int_value);
    long double lo = kind(t) == ScalarKind::Signed ? -std::ldexp(1.0L, bits(t) - 1) : 0;
    long double hi = kind(t) == ScalarKind::Signed ? std::ldexp(1.0L, bits(t) - 1) - 1 : std::ldexp(1.0L, bits(t)) - 1;
    if (t == ScalarType::Bool) hi = 1;
    if (v < lo || v > hi)
      error(e.loc, "integer literal " + e.name + " does not fit in " + name(t) +
                       ", the type it is used with here; cast the other operand (e.g. int32(...))");
  }

  void settle_all(Expr& e, size_t first, ScalarType t) const {
    for (size_t i = first; i < e.args.size(); ++i) settle(*e.args[i], t);
  }

  Typed set(Expr& e, Typed t) {
    e.type = t.type;
    e.weak = t.weak;
    return t;
  }

  Typed type_of(Expr& e) {
    switch (e.kind) {
      case ExprKind::IntLit: return set(e, {ScalarType::Int32, true});
      case ExprKind::FloatLit: return set(e, {ScalarType::Float32, true});
      case ExprKind::Ident:
      case ExprKind::Dim:
        if (e.ref == Ref::Tensor) return set(e, {def_.tensors[e.tensor].type, false});
        return set(e, {ScalarType::Int32, false});
      case ExprKind::Unary: {
        Typed a = type_of(*e.args[0]);
        if (e.op == Tok::Not) return set(e, {ScalarType::Bool, false});
        return set(e, {arithmetic_type(a.type), a.weak});
      }
      case ExprKind::Binary: return type_binary(e);
      case ExprKind::Ternary: {
        Typed c = type_of(*e.args[0]);
        (void)c;
        Typed r = unify(type_of(*e.args[1]), type_of(*e.args[2]));
        settle_all(e, 1, r.type);
        r.weak = false;
        return set(e, r);
      }
      case ExprKind::Call: return type_call(e);
      case ExprKind::Ellipsis: break;  // instantiation replaced every one (lang/instantiate.h)
    }
    fail(TC_ERROR_INTERNAL, "sema: '...' left in a def after instantiation");
  }

  Typed type_binary(Expr& e) {
    Typed a = type_of(*e.args[0]);
    Typed b = type_of(*e.args[1]);
    if (e.op == Tok::AndAnd || e.op == Tok::OrOr) return set(e, {ScalarType::Bool, false});
    // Operands meet in their unified type; bool only stays bool for == and !=.
    ScalarType u = unify(a, b).type;
    if (u == ScalarType::Bool && e.op != Tok::Eq && e.op != Tok::Ne) u = ScalarType::Int32;
    settle_all(e, 0, u);
    e.operand_type = u;
    return set(e, {is_comparison(e.op) ? ScalarType::Bool : u, false});  // only a literal itself is weak
  }

  Typed type_call(Expr& e) {
    if (e.ref == Ref::Tensor) {
      for (ExprPtr& a : e.args) require_integer(*a, ("index of '" + e.name + "'").c_str());
      return set(e, {def_.tensors[e.tensor].type, false});
    }
    if (e.ref == Ref::Cast) {
      // An integer literal cast on its own has no operand to take the type of: int32 where it
      // fits, else int64, so that float64(3000000000) is 3e9 and int64(4294967297) keeps its
      // value (an int32 literal wrapped them: -1294967296 and 1).
      Expr& a = *e.args[0];
      if (type_of(a).weak && is_integer(a.type)) {
        fold_negated_literal(a);
        const bool fits = a.int_value >= INT32_MIN && a.int_value <= INT32_MAX;
        settle(a, fits ? ScalarType::Int32 : ScalarType::Int64);
      }
      return set(e, {e.cast_to, false});
    }
    Typed r = type_of(*e.args[0]);
    for (size_t i = 1; i < e.args.size(); ++i) r = unify(r, type_of(*e.args[i]));
    settle_all(e, 0, r.type);
    r.weak = false;
    if (builtin(e.builtin).typing == BuiltinTyping::FloatMath && !is_float(r.type)) r.type = ScalarType::Float32;
    if (r.type == ScalarType::Bool) r.type = ScalarType::Int32;
    return set(e, r);
  }

  const Program& prog_;
  Def& def_;
  int current_stmt_ = 0;
};

}  // namespace

void check(Program& program) {
  inline_calls(program);
  std::set<std::string> names;
  for (Def& d : program.defs) {
    if (!names.insert(d.name).second)
      report(TC_ERROR_SEMANTIC, program.source, d.name, d.loc, "def '" + d.name + "' is defined twice");
    DefChecker(program, d).run();
  }
}

}  // namespace tc::lang
