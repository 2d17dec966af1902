// gradient.cpp — see gradient.h. Three passes over the forward def:
//   versions   every statement makes a new value (version) of the tensor it writes; each read
//              is resolved to the version it sees, and whether a version depends on a
//              floating-point input (only those get gradients) is recorded;
//   backward   statements in reverse: the written version's gradient times the partial
//              derivative of the right-hand side is added to the gradient of every version
//              read (and, where the statement kept the previous value, outside a partial box
//              or under an accumulation, that value's gradient too); the first covering
//              contribution initialises ('+=!'), others accumulate ('+=') after a zero fill;
//              computed subscripts scatter, unless gather_form.h turns them into a gather;
//   recompute  the forward statements whose versions the backward statements read, in order.
// Every generated statement ranges its index variables explicitly with the forward
// statement's inferred ranges, so the gradient iterates exactly the forward domains.
#include "grad/gradient.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>

#include "grad/derivative.h"
#include "grad/expr_build.h"
#include "grad/gather_form.h"
#include "lang/printer.h"
#include "support/error.h"

namespace tc::grad {

using lang::Expr;
using lang::ExprKind;
using lang::ReduceOp;
using lang::Ref;
using lang::TensorRole;
using lang::Tok;

namespace {

// One value of a tensor: what statement `writer` left in it (-1: an input as passed, or an
// output's or temporary's content before any statement wrote it).
struct Version {
  int tensor = -1;
  int writer = -1;
  std::string name;      // in the gradient def
  bool reaches = false;  // depends on a floating-point input: gets a gradient
};

// The gradient of one version: nothing yet, exactly a read-only input (d_<output>), or a
// tensor the gradient def writes.
struct Grad {
  enum State { Zero, Alias, Owned } state = Zero;
  std::string name;
};

struct ReadSite {
  const Expr* node = nullptr;  // in the statement's renamed right-hand side
  int version = -1;
  bool guarded = false;
  int stmt = -1;
};

struct StmtVersions {
  int writes = -1;  // version
  int prev = -1;    // the version it overwrites or accumulates into
  ExprPtr rhs;      // the right-hand side with reads renamed to versions
  std::vector<ReadSite> reads;
  std::vector<ExprPtr> write;  // a scatter's written subscripts, reads renamed
  // It writes every element of its tensor (its left-hand side variables span the extents),
  // or is a scatter (whose '+=!' zeroes, and '+=' keeps, the whole tensor). Otherwise the
  // elements outside its box keep the previous value.
  bool whole = true;
};

bool accumulates(const lang::Stmt& s) { return s.reduce != ReduceOp::None && !s.init; }

// The statement's operator as written (an '=' that sums over ranged variables is '+=!').
std::string op_text(const lang::Stmt& s) {
  switch (s.reduce) {
    case ReduceOp::None: return "=";
    case ReduceOp::Sum: return s.init ? "+=!" : "+=";
    case ReduceOp::Product: return s.init ? "*=!" : "*=";
    case ReduceOp::Min: return s.init ? "min=!" : "min=";
    case ReduceOp::Max: return s.init ? "max=!" : "max=";
  }
  return "=";
}

class GradientWriter {
 public:
  GradientWriter(const lang::Def& def, const infer::DefRanges& ranges, const lang::SourceText& source)
      : def_(def), ranges_(ranges), source_(source) {}

  std::string write() {
    check_differentiable();
    reserve_names();
    build_versions();
    seed_gradients();
    for (int s = static_cast<int>(def_.stmts.size()) - 1; s >= 0; --s) backward(s);
    finish_input_gradients();
    std::vector<std::string> recompute = recompute_statements();
    return assemble(recompute);
  }

 private:
  // ---- refusals ----
  [[noreturn]] void refuse(const lang::SourceLoc& loc, const std::string& why) const {
    lang::report(TC_ERROR_UNSUPPORTED, source_, def_.name, loc, "cannot differentiate '" + def_.name + "': " + why);
  }

  void check_differentiable() {
    bool float_in = false, float_out = false;
    for (const lang::TensorDecl& t : def_.tensors) {
      if (t.role == TensorRole::Input && is_float(t.type)) float_in = true;
      if (t.role == TensorRole::Output && is_float(t.type)) float_out = true;
    }
    if (!float_in) refuse(def_.loc, "it has no floating-point input, so there is nothing to differentiate");
    if (!float_out) refuse(def_.loc, "it has no floating-point output, so no gradient flows into it");
  }

  // ---- names ----
  void reserve_names() {
    for (const lang::TensorDecl& t : def_.tensors) taken_.insert(t.name);
    for (const std::string& n : def_.size_names) taken_.insert(n);
    for (const lang::Stmt& s : def_.stmts)
      for (const std::string& v : s.vars) taken_.insert(v);
    for (int id = 0; id <= static_cast<int>(lang::BuiltinId::Abs); ++id)
      taken_.insert(lang::builtin(static_cast<lang::BuiltinId>(id)).name);
    for (const char* n : {"float", "double", "half", "int", "byte", "char", "long", "bool", "float16", "float32",
                          "float64", "bfloat16", "bf16", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                          "def", "where", "in", "exists"})
      taken_.insert(n);
  }

  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int k = 1; taken_.count(name); ++k) name = base + "_" + std::to_string(k);
    taken_.insert(name);
    return name;
  }

  // ---- versions ----
  void build_versions() {
    std::vector<int> current(def_.tensors.size());
    std::vector<int> writers(def_.tensors.size(), 0), written(def_.tensors.size(), 0);
    for (const lang::Stmt& s : def_.stmts) ++writers[s.lhs_tensor];
    for (size_t t = 0; t < def_.tensors.size(); ++t) {
      Version v;
      v.tensor = static_cast<int>(t);
      // Before any statement: an input as passed; for others, the caller's content (never
      // computable in the gradient def: it is refused if needed), named apart from the tensor.
      bool input = def_.tensors[t].role == TensorRole::Input;
      v.name = input ? def_.tensors[t].name : fresh(def_.tensors[t].name + "_initial");
      v.reaches = def_.tensors[t].role == TensorRole::Input && is_float(def_.tensors[t].type);
      current[t] = add_version(v);
    }
    stmts_.resize(def_.stmts.size());
    for (size_t si = 0; si < def_.stmts.size(); ++si) {
      const lang::Stmt& s = def_.stmts[si];
      StmtVersions& sv = stmts_[si];
      sv.prev = current[s.lhs_tensor];
      sv.rhs = renamed(*s.rhs, static_cast<int>(si), current, sv.reads);
      if (s.is_scatter()) {
        std::vector<ReadSite> index_reads;  // integer: they carry no gradient
        for (const ExprPtr& a : s.write->args) sv.write.push_back(renamed(*a, static_cast<int>(si), current, index_reads));
      }
      sv.whole = s.is_scatter() || spans(idents(lhs_vars(static_cast<int>(si))), lhs_ranges(static_cast<int>(si)),
                                         ranges_.extents[s.lhs_tensor], true);
      Version v;
      v.tensor = s.lhs_tensor;
      v.writer = static_cast<int>(si);
      // The last writer keeps the tensor's name; earlier values get their own.
      const std::string& base = def_.tensors[s.lhs_tensor].name;
      v.name = ++written[s.lhs_tensor] == writers[s.lhs_tensor] ? base : fresh(base + "_v" + std::to_string(written[s.lhs_tensor]));
      v.reaches = is_float(def_.tensors[s.lhs_tensor].type) &&
                  (std::any_of(sv.reads.begin(), sv.reads.end(), [&](const ReadSite& r) { return versions_[r.version].reaches; }) ||
                   ((accumulates(s) || !sv.whole) && versions_[sv.prev].reaches));
      sv.writes = add_version(v);
      current[s.lhs_tensor] = sv.writes;
    }
    final_ = current;
  }

  // Whether each subscript is a variable of `ranges` ranging over its dimension's whole extent
  // (`distinct`: and none is repeated).
  static bool spans(const std::vector<ExprPtr>& subscripts, const Ranges& ranges,
                    const std::vector<infer::SymExpr>& extents, bool distinct) {
    std::set<std::string> seen;
    for (size_t d = 0; d < subscripts.size(); ++d) {
      const Expr& e = *subscripts[d];
      if (e.kind != ExprKind::Ident || (distinct && !seen.insert(e.name).second)) return false;
      auto r = std::find_if(ranges.begin(), ranges.end(), [&](const auto& x) { return x.first == e.name; });
      if (r == ranges.end() || !r->second.spans(extents[d])) return false;
    }
    return true;
  }

  int add_version(const Version& v) {
    versions_.push_back(v);
    grads_.emplace_back();
    by_name_[v.name] = static_cast<int>(versions_.size()) - 1;
    return static_cast<int>(versions_.size()) - 1;
  }

  bool is_guarded(int stmt, const Expr* node) const {
    for (const infer::Access& a : ranges_.stmts[stmt].accesses)
      if (a.expr == node) return a.guarded;
    return false;
  }

  // A copy of `e` whose tensor reads name the versions they see; T.d becomes its extent.
  ExprPtr renamed(const Expr& e, int stmt, const std::vector<int>& current, std::vector<ReadSite>& reads) {
    if (e.kind == ExprKind::Dim)
      return ident(ranges_.extents[e.tensor][static_cast<size_t>(e.int_value)].to_tc_source());
    auto copy = std::make_shared<Expr>(e);
    for (ExprPtr& a : copy->args) a = renamed(*a, stmt, current, reads);
    if (e.ref == Ref::Tensor) {
      int v = current[e.tensor];
      copy->name = versions_[v].name;
      reads.push_back(ReadSite{copy.get(), v, is_guarded(stmt, &e), stmt});
    }
    return copy;
  }

  // ---- gradients ----
  void seed_gradients() {
    for (size_t t = 0; t < def_.tensors.size(); ++t) {
      const lang::TensorDecl& decl = def_.tensors[t];
      if (!is_float(decl.type)) continue;
      if (decl.role == TensorRole::Output) {
        output_grads_.push_back({static_cast<int>(t), fresh("d_" + decl.name)});
        grads_[final_[t]] = Grad{Grad::Alias, output_grads_.back().second};
      } else if (decl.role == TensorRole::Input) {
        input_grads_.push_back({static_cast<int>(t), fresh("d_" + decl.name)});
        grads_[static_cast<size_t>(t)].name = input_grads_.back().second;  // version t is input t
      }
    }
  }

  Ranges stmt_ranges(int si) const {
    Ranges out;
    for (size_t k = 0; k < def_.stmts[si].vars.size(); ++k)
      out.push_back({def_.stmts[si].vars[k], ranges_.stmts[si].vars[k]});
    return out;
  }

  Ranges lhs_ranges(int si) const {
    Ranges out = stmt_ranges(si);
    out.resize(def_.stmts[si].num_lhs_vars());
    return out;
  }

  // Variables over the whole of tensor t ("i0 in 0:E0, ..."), named once per def.
  Ranges whole_ranges(int t) {
    Ranges out;
    const auto& extents = ranges_.extents[t];
    for (size_t d = 0; d < extents.size(); ++d) {
      if (d == dim_vars_.size()) dim_vars_.push_back(fresh("i" + std::to_string(d)));
      out.push_back({dim_vars_[d], infer::Range{infer::SymExpr::constant(0), extents[d]}});
    }
    return out;
  }

  static std::vector<std::string> names_of(const Ranges& ranges) {
    std::vector<std::string> out;
    for (const auto& r : ranges) out.push_back(r.first);
    return out;
  }

  static void collect_names(const Expr& e, std::set<std::string>& out) {
    if (e.kind == ExprKind::Ident || e.kind == ExprKind::Call) out.insert(e.name);
    for (const ExprPtr& a : e.args) collect_names(*a, out);
  }

  // " where v in lo:hi, ..." for the variables the text uses.
  static std::string where_clause(const Ranges& ranges, const std::set<std::string>& used) {
    std::string out;
    for (const auto& [v, r] : ranges) {
      if (!used.count(v)) continue;
      out += (out.empty() ? " where " : ", ") + v + " in " + r.lo.to_tc_source() + ":" + r.hi.to_tc_source();
    }
    return out;
  }

  // One generated statement: "lhs op value where ...", over the variables both sides use.
  static std::string statement(const ExprPtr& lhs, const std::string& op, const ExprPtr& value, const Ranges& ranges) {
    std::set<std::string> used;
    collect_names(*lhs, used);
    collect_names(*value, used);
    return "  " + lang::to_source(*lhs) + " " + op + " " + lang::to_source(*value) + where_clause(ranges, used);
  }

  // "target(i0, ...) = source(i0, ...)" (source "": 0.0) over the whole of forward tensor t.
  std::string whole_assignment(const std::string& target, int t, const std::string& source) {
    Ranges whole = whole_ranges(t);
    std::vector<std::string> vars = names_of(whole);
    return statement(read_vars(target, vars), "=", source.empty() ? literal("0.0") : read_vars(source, vars), whole);
  }

  // Whether the contribution writes every element of version v's tensor exactly once per
  // point of the other variables (then it may initialise with '+=!').
  bool covers(const Contribution& c, int v) const {
    return spans(c.subscripts, c.ranges, ranges_.extents[versions_[v].tensor], true);
  }

  // Adds the contribution to version v's gradient as one statement (after a zero fill or a
  // copy of the seed when needed).
  void contribute(int v, Contribution c, const std::set<std::string>& solve_first = {}) {
    Grad& g = grads_[v];
    // A scatter through affine subscripts becomes a gather over the gradient's elements.
    std::vector<std::string> dims = names_of(whole_ranges(versions_[v].tensor));
    to_gather_form(c, ranges_.extents[versions_[v].tensor], dims, solve_first);
    if (g.state == Grad::Alias) {
      std::string seed = g.name;
      g = Grad{Grad::Owned, fresh(seed + "_total")};
      backward_.push_back(whole_assignment(g.name, versions_[v].tensor, seed));
    }
    bool init = false;
    if (g.state == Grad::Zero) {
      if (g.name.empty()) g.name = fresh("d_" + versions_[v].name);
      if (covers(c, v)) {
        init = true;
      } else {
        backward_.push_back(whole_assignment(g.name, versions_[v].tensor, ""));
      }
      g.state = Grad::Owned;
    }
    std::set<std::string> used;
    for (const ExprPtr& s : c.subscripts) collect_names(*s, used);
    collect_names(*c.value, used);
    // A forward variable the contribution no longer mentions still counts its points.
    for (const auto& [var, r] : c.ranges) {
      if (used.count(var)) continue;
      c.value = mul(c.value, r.lo.provably_equal(infer::SymExpr::constant(0)) ? size(r.hi)
                                                                              : binary(Tok::Minus, size(r.hi), size(r.lo)));
    }
    backward_.push_back(statement(read(g.name, c.subscripts), init ? "+=!" : "+=", c.value, c.ranges));
    reads_.push_back(c.value);
    for (const ExprPtr& s : c.subscripts) reads_.push_back(s);
  }

  // Whether every subscript of the read is an index variable ranging over exactly its
  // dimension (a guarded read such as ReLU's 'X(i) > 0 ? X(i) : 0' is then in bounds anyway).
  bool in_bounds(const ReadSite& site) const {
    return spans(site.node->args, stmt_ranges(site.stmt), ranges_.extents[versions_[site.version].tensor], false);
  }

  // The subscripts a contribution writes for the read at `site`: those of the read, clamped
  // into the tensor when the read was guarded (evaluated only where its guard holds, while
  // the contribution, zero elsewhere, is added at every point).
  std::vector<ExprPtr> write_subscripts(const ReadSite& site) const {
    std::vector<ExprPtr> out;
    const auto& extents = ranges_.extents[versions_[site.version].tensor];
    bool clamp = site.guarded && !in_bounds(site);
    for (size_t d = 0; d < site.node->args.size(); ++d) {
      ExprPtr sub = site.node->args[d]->clone();
      if (clamp) {
        sub = clamp_into(sub, infer::Range{infer::SymExpr::constant(0), extents[d]});
      } else if (sub->kind == ExprKind::Ident && sub->ref == Ref::Tensor) {
        sub = call(sub->name, {});  // a 0-d tensor as `r()`: a bare name would be a variable there
      } else if (sub->kind == ExprKind::Ident && sub->ref == Ref::Size) {
        sub = binary(Tok::Plus, sub, literal("0"));  // likewise for a size
      }
      out.push_back(sub);
    }
    return out;
  }

  ExprPtr converted(ExprPtr value, ScalarType value_type, ScalarType to) const {
    if (value_type == to) return value;
    return call(name(to), {std::move(value)});
  }

  // The element statement si writes, of the tensor named `tensor` (its version or gradient).
  ExprPtr written(int si, const std::string& tensor) const {
    const lang::Stmt& s = def_.stmts[si];
    if (!s.is_scatter()) return read_vars(tensor, lhs_vars(si));
    std::vector<ExprPtr> subs;
    for (const ExprPtr& a : stmts_[si].write) subs.push_back(a->clone());
    return read(tensor, subs);
  }

  std::vector<std::string> lhs_vars(int si) const {
    const lang::Stmt& s = def_.stmts[si];
    return std::vector<std::string>(s.vars.begin(), s.vars.begin() + static_cast<long>(s.num_lhs_vars()));
  }

  // "lo <= v && v < hi && ..." over the statement's written box, in the whole tensor's
  // variables `vars`.
  ExprPtr in_box(int si, const std::vector<std::string>& vars) const {
    ExprPtr cond;
    for (size_t d = 0; d < vars.size(); ++d) {
      const infer::Range& r = ranges_.stmts[si].vars[d];
      // to_tc_source parenthesises every compound expression: the texts are operands as they are.
      ExprPtr both = binary(Tok::AndAnd, binary(Tok::Le, ident(r.lo.to_tc_source()), ident(vars[d])),
                            binary(Tok::Lt, ident(vars[d]), ident(r.hi.to_tc_source())));
      cond = cond ? binary(Tok::AndAnd, cond, both) : both;
    }
    return cond;
  }

  void backward(int si) {
    const lang::Stmt& s = def_.stmts[si];
    const StmtVersions& sv = stmts_[si];
    const Version& out = versions_[sv.writes];
    const Grad& g = grads_[sv.writes];
    if (g.state == Grad::Zero || !out.reaches) return;  // no gradient flows through it
    std::vector<std::string> lhs = lhs_vars(si);
    ExprPtr d_out = written(si, g.name);
    ScalarType type = def_.tensors[s.lhs_tensor].type;
    ExprPtr seed = d_out;
    if (s.reduce == ReduceOp::Product)
      refuse(s.op_loc, "'*=' reductions have no gradient in libtc (the quotient rule fails at zeros); "
                       "write the product with exp and log, or as separate factors");
    std::string ties;  // min=/max=: the tensor counting the terms equal to the result
    if (s.reduce == ReduceOp::Min || s.reduce == ReduceOp::Max) {
      // The result's gradient is split evenly among the terms equal to it (every point of the
      // domain whose value is the result, and the accumulated value for min=/max= without
      // '!'), as PyTorch's amax does: a term read at several points gets its share per point.
      ExprPtr result = read_vars(out.name, lhs);
      ExprPtr equal = binary(Tok::Eq, converted(sv.rhs->clone(), s.rhs->type, type), result);
      reads_.push_back(equal);
      ties = fresh("ties_" + out.name);
      backward_.push_back(statement(read_vars(ties, lhs), "+=!", ternary(equal, literal("1.0"), nullptr), stmt_ranges(si)));
      if (accumulates(s)) {
        ExprPtr kept = binary(Tok::Eq, read_vars(versions_[sv.prev].name, lhs), read_vars(out.name, lhs));
        reads_.push_back(kept);
        backward_.push_back(statement(read_vars(ties, lhs), "+=", ternary(kept, literal("1.0"), nullptr), lhs_ranges(si)));
      }
      seed = ternary(equal->clone(), binary(Tok::Slash, d_out, read_vars(ties, lhs)), nullptr);
    }
    // Reads of one version at the same subscripts share one contribution (their partials sum).
    std::vector<std::pair<const ReadSite*, ExprPtr>> groups;
    std::map<std::string, size_t> group_of;
    for (const ReadSite& site : sv.reads) {
      if (!versions_[site.version].reaches) continue;
      ExprPtr p;
      try {
        p = partial(*sv.rhs, site.node);
      } catch (const Inexpressible& e) {
        refuse(e.loc, e.reason);
      }
      if (!p) continue;
      std::string key = lang::to_source(*site.node) + (site.guarded && !in_bounds(site) ? "?" : "");
      auto [it, fresh_group] = group_of.emplace(key, groups.size());
      if (fresh_group) groups.push_back({&site, p});
      else groups[it->second].second = add(groups[it->second].second, p);
    }
    std::vector<std::string> lhs_names = lhs_vars(si);
    std::set<std::string> solve_first(lhs_names.begin(), lhs_names.end());
    for (const auto& [site, p] : groups)
      contribute(site->version, Contribution{write_subscripts(*site), mul(seed->clone(), p), stmt_ranges(si)}, solve_first);
    backward_to_previous(si, ties);
  }

  // The gradient of the value the statement overwrote or accumulated into: where it kept it
  // (outside a partial box; everywhere for '+=' and for a scatter's '+=') the written value's
  // gradient passes through; min=/max= without '!' pass the kept value its share of ties.
  void backward_to_previous(int si, const std::string& ties) {
    const lang::Stmt& s = def_.stmts[si];
    const StmtVersions& sv = stmts_[si];
    if (!versions_[sv.prev].reaches) return;
    const std::string& d_new = grads_[sv.writes].name;
    const std::string& prev = versions_[sv.prev].name;
    const std::string& now = versions_[sv.writes].name;
    bool minmax = s.reduce == ReduceOp::Min || s.reduce == ReduceOp::Max;
    auto inside = [&](const std::vector<std::string>& vars) -> ExprPtr {
      if (!accumulates(s)) return nullptr;  // overwritten: no gradient
      if (!minmax) return read_vars(d_new, vars);
      return ternary(binary(Tok::Eq, read_vars(prev, vars), read_vars(now, vars)),
                     binary(Tok::Slash, read_vars(d_new, vars), read_vars(ties, vars)), nullptr);
    };
    if (s.is_scatter()) {
      if (!accumulates(s)) return;  // '+=!' zeroed the whole tensor first
      Ranges whole = whole_ranges(s.lhs_tensor);
      std::vector<std::string> vars = names_of(whole);
      contribute(sv.prev, Contribution{idents(vars), read_vars(d_new, vars), whole});
    } else if (sv.whole) {
      if (!accumulates(s)) return;
      std::vector<std::string> vars = lhs_vars(si);
      ExprPtr value = inside(vars);
      reads_.push_back(value);
      contribute(sv.prev, Contribution{idents(vars), value, lhs_ranges(si)});
    } else {
      Ranges whole = whole_ranges(s.lhs_tensor);
      std::vector<std::string> vars = names_of(whole);
      ExprPtr value = ternary(in_box(si, vars), inside(vars), read_vars(d_new, vars));
      reads_.push_back(value);
      contribute(sv.prev, Contribution{idents(vars), value, whole});
    }
  }

  void finish_input_gradients() {
    for (const auto& [t, name] : input_grads_)
      if (grads_[static_cast<size_t>(t)].state == Grad::Zero)
        backward_.push_back(whole_assignment(name, t, ""));
  }

  // ---- recompute ----
  void mark_needed(const Expr& e, std::set<int>& needed) const {
    if (e.kind == ExprKind::Ident || e.kind == ExprKind::Call) {
      auto it = by_name_.find(e.name);
      bool input = it != by_name_.end() && def_.tensors[versions_[it->second].tensor].role == TensorRole::Input;
      if (it != by_name_.end() && !input) needed.insert(it->second);
    }
    for (const ExprPtr& a : e.args) mark_needed(*a, needed);
  }

  // Whether recomputing statement si starts from the previous value (it keeps some of it).
  bool keeps_previous(int si) const {
    return accumulates(def_.stmts[si]) || !stmts_[si].whole;
  }

  std::vector<std::string> recompute_statements() {
    std::set<int> needed;
    for (const ExprPtr& e : reads_) mark_needed(*e, needed);
    std::vector<bool> emit(def_.stmts.size(), false);
    for (int si = static_cast<int>(def_.stmts.size()) - 1; si >= 0; --si) {
      const StmtVersions& sv = stmts_[si];
      if (!needed.count(sv.writes)) continue;
      emit[si] = true;
      mark_needed(*sv.rhs, needed);
      for (const ExprPtr& a : sv.write) mark_needed(*a, needed);
      // A partial overwrite of a value no statement wrote keeps zeros (docs: unwritten
      // elements are 0); an accumulation needs the value itself.
      if (accumulates(def_.stmts[si]) || (keeps_previous(si) && versions_[sv.prev].writer >= 0)) needed.insert(sv.prev);
    }
    for (int v : needed) {
      const Version& ver = versions_[v];
      if (ver.writer >= 0 || def_.tensors[ver.tensor].role == TensorRole::Input) continue;
      // An output's or temporary's content before any statement wrote it: the caller's.
      for (const lang::Stmt& s : def_.stmts)
        if (s.lhs_tensor == ver.tensor)
          refuse(s.loc, "the gradient needs '" + def_.tensors[ver.tensor].name + "' as the caller passed it (this statement " +
                            (accumulates(s) ? "accumulates into it without '!'" : "reads it before writing it") +
                            "), and the caller's content is not an input of the gradient");
      refuse(def_.loc, "the gradient needs the initial content of '" + def_.tensors[ver.tensor].name + "'");
    }
    std::vector<std::string> out;
    for (size_t si = 0; si < def_.stmts.size(); ++si)
      if (emit[si]) recompute(static_cast<int>(si), out);
    return out;
  }

  void recompute(int si, std::vector<std::string>& out) {
    const lang::Stmt& s = def_.stmts[si];
    const StmtVersions& sv = stmts_[si];
    const std::string& name = versions_[sv.writes].name;
    if (keeps_previous(si) || s.is_scatter()) {
      // The value starts from the previous one (or zeros), as a tensor of its own here; this
      // also gives a scatter's tensor its shape.
      bool from_prev = keeps_previous(si) && versions_[sv.prev].writer >= 0;
      out.push_back(whole_assignment(name, s.lhs_tensor, from_prev ? versions_[sv.prev].name : ""));
    }
    ExprPtr rhs = converted(sv.rhs->clone(), s.rhs->type, def_.tensors[s.lhs_tensor].type);
    // After the copy, a scatter accumulates ('+=!' would zero the copy again: same result).
    std::string op = s.is_scatter() ? "+=" : op_text(s);
    out.push_back(statement(written(si, name), op, rhs, stmt_ranges(si)));
  }

  // ---- the def ----
  std::string dims_text(const std::vector<std::string>& dims) const {
    if (dims.empty()) return "";
    std::string out = "(";
    for (size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + dims[i];
    return out + ")";
  }

  std::vector<std::string> declared_dims(const lang::TensorDecl& t) const {
    std::vector<std::string> out;
    for (const lang::DimSpec& d : t.dims) out.push_back(d.text());
    return out;
  }

  // An output's dims for its gradient's type: sizes and literals as inferred; an extent that
  // is an expression gets a size name of its own (d_<output>'s extent there is then read
  // from the argument; its reads are checked against the forward ranges).
  std::vector<std::string> output_dims(int t) {
    const lang::TensorDecl& decl = def_.tensors[t];
    if (decl.has_dims_annotation()) return declared_dims(decl);
    std::vector<std::string> out;
    for (size_t d = 0; d < ranges_.extents[t].size(); ++d) {
      std::string text = ranges_.extents[t][d].to_tc_source();
      bool plain = def_.is_size(text) || (!text.empty() && std::all_of(text.begin(), text.end(), ::isdigit));
      out.push_back(plain ? text : fresh(decl.name + "_dim" + std::to_string(d)));
    }
    return out;
  }

  std::string assemble(const std::vector<std::string>& recompute) {
    std::ostringstream os;
    os << "# The gradient of '" << def_.name << "', generated by libtc (tc_gradient).\n"
       << "# Inputs: those of '" << def_.name << "', then d_<output> per floating-point output.\n"
       << "# Outputs: d_<input> per floating-point input.\n";
    os << "def " << def_.name << "_grad(";
    bool first = true;
    for (const lang::TensorDecl& t : def_.tensors) {
      if (t.role != TensorRole::Input) continue;
      os << (first ? "" : ", ") << name(t.type) << dims_text(declared_dims(t)) << " " << t.name;
      first = false;
    }
    for (const auto& [t, gname] : output_grads_)
      os << ", " << name(def_.tensors[t].type) << dims_text(output_dims(t)) << " " << gname;
    os << ") -> (";
    first = true;
    for (const auto& [t, gname] : input_grads_) {
      os << (first ? "" : ", ") << name(def_.tensors[t].type) << dims_text(declared_dims(def_.tensors[t])) << " " << gname;
      first = false;
    }
    os << ") {\n";
    if (!recompute.empty()) os << "  # the forward values the gradient reads\n";
    for (const std::string& line : recompute) os << line << "\n";
    os << "  # the gradients, statement by statement in reverse\n";
    for (const std::string& line : backward_) os << line << "\n";
    os << "}\n";
    return os.str();
  }

  const lang::Def& def_;
  const infer::DefRanges& ranges_;
  const lang::SourceText& source_;
  std::set<std::string> taken_;
  std::vector<Version> versions_;  // the first def_.tensors.size() are the initial values, by tensor
  std::vector<Grad> grads_;        // per version
  std::map<std::string, int> by_name_;
  std::vector<StmtVersions> stmts_;
  std::vector<int> final_;  // per tensor: its last version
  std::vector<std::pair<int, std::string>> input_grads_, output_grads_;  // tensor, gradient name
  std::vector<std::string> backward_;
  std::vector<std::string> dim_vars_;
  std::vector<ExprPtr> reads_;  // everything the backward statements evaluate
};

}  // namespace

std::string gradient_source(const lang::Def& def, const infer::DefRanges& ranges, const lang::SourceText& source) {
  return GradientWriter(def, ranges, source).write();
}

}  // namespace tc::grad
