// inline_calls.cpp — see inline_calls.h.
#include "lang/inline_calls.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "support/error.h"

namespace tc::lang {
namespace {

// Inlining copies a callee's statements into each caller, so a chain of defs each calling the
// previous one twice grows exponentially: the copies count against kMaxInlinedNodes.
size_t count_nodes(const Stmt& s) {
  size_t n = 1 + (s.rhs ? count_nodes(*s.rhs) : 0) + (s.write ? count_nodes(*s.write) : 0);
  for (const auto& r : s.ranges) n += count_nodes(*r.lo) + count_nodes(*r.hi);
  for (const auto& l : s.lets) n += count_nodes(*l.value);
  for (const auto& e : s.exists) n += count_nodes(*e);
  return n;
}

bool is_reserved(const std::string& n) { return find_builtin(n) || scalar_type_from_name(n); }

const Def* find_def(const Program& p, const std::string& name) {
  for (const Def& d : p.defs)
    if (d.name == name) return &d;
  return nullptr;
}

// A call statement, normalised: outputs, callee, argument names.
struct Call {
  SourceLoc loc;
  std::vector<std::string> outputs;
  std::string callee;
  std::vector<std::string> args;
};

class Inliner {
 public:
  explicit Inliner(Program& p) : prog_(p) {}

  void run() {
    for (Def& d : prog_.defs) {
      current_ = &d;
      copied_nodes_ = 0;
      std::vector<std::string> stack{d.name};
      std::vector<Stmt> out;
      for (const Stmt& s : d.stmts) expand(d, s, stack, out);
      d.stmts = std::move(out);
    }
  }

 private:
  [[noreturn]] void error(const Def& def, SourceLoc loc, const std::string& msg) const {
    report(TC_ERROR_SEMANTIC, prog_.source, def.name, loc, msg);
  }

  // "a = f(x)" with f a def is a call too (the grammar's single-output form).
  std::optional<Call> as_call(const Def& def, const Stmt& s) const {
    const Expr* rhs = s.rhs.get();
    bool single = !s.is_call && s.bare_lhs && s.op == Tok::Assign && rhs && rhs->kind == ExprKind::Call &&
                  find_def(prog_, rhs->name) && s.ranges.empty() && s.lets.empty() && s.exists.empty();
    if (!s.is_call && !single) return std::nullopt;
    if (s.is_call && (!rhs || rhs->kind != ExprKind::Call))
      error(def, s.loc, "a call statement needs a def call on the right, as in 'a, b = f(x, y)'");
    Call c{s.loc, s.is_call ? s.call_outputs : std::vector<std::string>{s.lhs}, rhs->name, {}};
    for (const auto& a : rhs->args) {
      if (a->kind != ExprKind::Ident) error(def, a->loc, "arguments of a call to '" + c.callee + "' must be tensor names");
      c.args.push_back(a->name);
    }
    return c;
  }

  void expand(const Def& def, const Stmt& s, std::vector<std::string>& stack, std::vector<Stmt>& out) {
    auto call = as_call(def, s);
    if (!call) {
      out.push_back(s);
      return;
    }
    const Def* callee = find_def(prog_, call->callee);
    if (!callee) error(def, s.loc, "'" + call->callee + "' is not a def of this program");
    for (const auto& n : stack)
      if (n == callee->name) error(def, s.loc, "recursive call of '" + callee->name + "' cannot be inlined");
    if (call->args.size() != callee->inputs.size() || call->outputs.size() != callee->outputs.size())
      error(def, s.loc, "'" + callee->name + "' takes " + std::to_string(callee->inputs.size()) + " inputs and returns " +
                            std::to_string(callee->outputs.size()) + " outputs; the call passes " +
                            std::to_string(call->args.size()) + " and assigns " + std::to_string(call->outputs.size()));
    // The callee's own calls first, then rename its statements into the caller.
    stack.push_back(callee->name);
    std::vector<Stmt> body;
    for (const Stmt& cs : callee->stmts) expand(*callee, cs, stack, body);
    stack.pop_back();
    shape_scattered_outputs(*callee, body);
    Renamer r = renamer(def, *callee, *call, body);
    // Only the def being expanded records requirements; a nested call's arguments are the
    // callee's own tensors, already checked by the outer call's requirements on its inputs.
    if (stack.size() == 1) record_requirements(*current_, *callee, *call);
    if (stack.size() == 1) top_call_loc_ = call->loc;
    for (const Stmt& cs : body) {
      copied_nodes_ += count_nodes(cs);
      if (copied_nodes_ > kMaxInlinedNodes)
        error(*current_, stack.size() == 1 ? call->loc : top_call_loc_,
              "inlining the calls of '" + current_->name + "' makes it too large (over " +
                  std::to_string(kMaxInlinedNodes) +
                  " expression nodes copied; each call copies its callee's statements)");
      out.push_back(r.stmt(cs, *callee));
    }
  }

  // A callee output that its annotation alone shapes (its first writer a '+=!' scatter, which
  // does not define extents) becomes a tensor of the caller, where no annotation shapes it: a
  // plain statement zeroing it over the annotated dimensions goes first. It changes nothing the
  // scatter computes ('+=!' zeroes the whole tensor anyway) and gives the tensor its shape.
  static void shape_scattered_outputs(const Def& callee, std::vector<Stmt>& body) {
    for (const Param& out : callee.outputs) {
      if (!out.has_dims || out.dims.empty()) continue;
      auto first = std::find_if(body.begin(), body.end(), [&](const Stmt& s) { return s.lhs == out.name; });
      if (first == body.end() || !first->is_scatter() || first->op != Tok::PlusEqBang) continue;
      Stmt zero;
      zero.loc = first->loc;
      zero.lhs = out.name;
      zero.op = Tok::Assign;
      zero.op_loc = first->op_loc;
      zero.rhs = literal(0, first->loc);
      for (size_t d = 0; d < out.dims.size(); ++d) {
        const DimSpec& dim = out.dims[d];
        RangeConstraint r;
        r.var = "d" + std::to_string(d);  // a caller name it clashes with is renamed (rename_locals)
        r.loc = dim.loc;
        r.lo = literal(0, dim.loc);
        if (dim.is_literal()) {
          r.hi = literal(dim.value, dim.loc);
        } else {
          r.hi = std::make_shared<Expr>();
          r.hi->kind = ExprKind::Ident;
          r.hi->loc = dim.loc;
          r.hi->name = dim.name;  // the callee's size: the argument's extent after renaming
        }
        zero.indices.push_back(r.var);
        zero.index_locs.push_back(first->loc);
        zero.ranges.push_back(r);
      }
      body.insert(first, zero);
    }
  }

  static ExprPtr literal(int64_t v, SourceLoc loc) {
    auto e = std::make_shared<Expr>();
    e->kind = ExprKind::IntLit;
    e->loc = loc;
    e->int_value = v;
    e->name = std::to_string(v);
    return e;
  }

  struct Renamer {
    std::map<std::string, std::string> names;                     // tensors and clashing locals
    std::map<std::string, std::pair<std::string, int>> sizes;     // callee size -> (arg, dim)
    std::map<std::string, ScalarType> output_casts;               // annotated callee outputs

    ExprPtr expr(const Expr& e) const {
      auto size = sizes.find(e.name);
      if (e.kind == ExprKind::Ident && size != sizes.end()) {
        auto d = std::make_shared<Expr>();
        d->kind = ExprKind::Dim;
        d->loc = e.loc;
        d->name = size->second.first;
        d->int_value = size->second.second;
        return d;
      }
      auto out = std::make_shared<Expr>(e);
      bool named = e.kind == ExprKind::Ident || e.kind == ExprKind::Call || e.kind == ExprKind::Dim;
      auto it = names.find(e.name);
      if (named && it != names.end()) out->name = it->second;
      for (auto& a : out->args) a = expr(*a);
      return out;
    }
    std::string name(const std::string& n) const {
      auto it = names.find(n);
      return it == names.end() ? n : it->second;
    }
    Stmt stmt(const Stmt& s, const Def& callee) const {
      Stmt o = s;
      o.lhs = name(s.lhs);
      for (auto& i : o.indices) i = name(i);
      if (s.write) o.write = expr(*s.write);  // a fresh copy: sema annotates it in place
      o.rhs = expr(*s.rhs);
      auto cast = output_casts.find(s.lhs);
      if (cast != output_casts.end()) {  // keep the callee's declared output type
        auto c = std::make_shared<Expr>();
        c->kind = ExprKind::Call;
        c->loc = o.rhs->loc;
        c->name = info(cast->second).name;
        c->args = {o.rhs};
        o.rhs = c;
      }
      for (auto& r : o.ranges) {
        r.var = name(r.var);
        r.lo = expr(*r.lo);
        r.hi = expr(*r.hi);
      }
      for (auto& l : o.lets) {
        l.name = name(l.name);
        l.value = expr(*l.value);
      }
      for (auto& e : o.exists) e = expr(*e);
      return o;
    }
  };

  Renamer renamer(const Def& caller, const Def& callee, const Call& call, const std::vector<Stmt>& body) {
    // Names already used in the caller, including fresh ones from its earlier calls.
    auto it = taken_.find(&caller);
    if (it == taken_.end()) it = taken_.emplace(&caller, caller_names(caller)).first;
    std::set<std::string>& taken = it->second;
    Renamer r;
    for (size_t i = 0; i < callee.inputs.size(); ++i) {
      r.names[callee.inputs[i].name] = call.args[i];
      for (size_t d = 0; d < callee.inputs[i].dims.size(); ++d) {
        const DimSpec& dim = callee.inputs[i].dims[d];
        if (!dim.is_literal() && !r.sizes.count(dim.name)) r.sizes[dim.name] = {call.args[i], static_cast<int>(d)};
      }
    }
    for (size_t i = 0; i < callee.outputs.size(); ++i) {
      r.names[callee.outputs[i].name] = call.outputs[i];
      if (callee.outputs[i].type) r.output_casts[callee.outputs[i].name] = *callee.outputs[i].type;
    }
    std::set<std::string> callee_tensors;
    for (const auto& p : callee.inputs) callee_tensors.insert(p.name);
    for (const auto& p : callee.outputs) callee_tensors.insert(p.name);
    for (const Stmt& s : body)  // temporaries: fresh names
      if (!callee_tensors.count(s.lhs) && !r.names.count(s.lhs)) r.names[s.lhs] = fresh(callee.name + "_" + s.lhs, taken);
    for (const Stmt& s : body) rename_locals(s, r, taken);
    return r;
  }

  // Index variables and lets of the callee that collide with a caller name get a fresh one.
  void rename_locals(const Stmt& s, Renamer& r, std::set<std::string>& taken) {
    std::set<std::string> locals(s.indices.begin(), s.indices.end());
    for (const auto& l : s.lets) locals.insert(l.name);
    collect_idents(*s.rhs, locals);
    if (s.write)
      for (const auto& a : s.write->args) collect_idents(*a, locals);
    for (const auto& e : s.exists) collect_idents(*e, locals);
    for (const auto& n : locals)
      if (!r.names.count(n) && !r.sizes.count(n) && taken.count(n)) r.names[n] = fresh(n, taken);
  }

  static void collect_idents(const Expr& e, std::set<std::string>& out) {
    if (e.kind == ExprKind::Ident && !is_reserved(e.name)) out.insert(e.name);
    for (const auto& a : e.args) collect_idents(*a, out);
  }

  static std::set<std::string> caller_names(const Def& d) {
    std::set<std::string> n;
    for (const auto& p : d.inputs) {
      n.insert(p.name);
      for (const auto& dim : p.dims)
        if (!dim.is_literal()) n.insert(dim.name);
    }
    for (const auto& p : d.outputs) n.insert(p.name);
    for (const auto& s : d.stmts) {
      n.insert(s.lhs);
      for (const auto& o : s.call_outputs) n.insert(o);
    }
    return n;
  }

  std::string fresh(const std::string& base, std::set<std::string>& taken) {
    std::string name = base;
    for (int k = 1; taken.count(name); ++k) name = base + "_" + std::to_string(k);
    taken.insert(name);
    return name;
  }

  void record_requirements(Def& caller, const Def& callee, const Call& call) {
    int id = ++call_count_;
    for (size_t i = 0; i < callee.inputs.size(); ++i) {
      CallRequirement req{call.loc, id, callee.name, callee.inputs[i].name, call.args[i], *callee.inputs[i].type,
                          callee.inputs[i].dims};
      caller.call_requirements.push_back(req);
    }
  }

  Program& prog_;
  Def* current_ = nullptr;
  size_t copied_nodes_ = 0;  // for the def being expanded, across all its (nested) calls
  SourceLoc top_call_loc_;   // the call statement of current_ being expanded
  std::map<const Def*, std::set<std::string>> taken_;
  int call_count_ = 0;
};

}  // namespace

void inline_calls(Program& program) { Inliner(program).run(); }

}  // namespace tc::lang
