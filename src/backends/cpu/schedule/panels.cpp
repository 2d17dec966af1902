// panels.cpp — a register-blocked reduction's operands copied per tile into contiguous panels
// (cpu.panel), and the cache model from the host's L1/L2 sizes that decides it by default
// (scheduler.h). Does not schedule the reduction itself (register_blocks.cpp).
#include <algorithm>

#include "backends/cpu/schedule/scheduler.h"

namespace tc::backends::cpu::scheduling {

std::string Scheduler::copy_panels(Stage& r, Func& w, const Tiling& t, const RVar* rko, int lanes_,
                                   const std::map<std::string, PanelOperand>& operands, bool streamed_panel, bool broadcast_panel) {
  if (!streamed_panel && !broadcast_panel) return "";
  std::string words;
  for (const auto& [name, o] : operands) {
    bool streamed = o.streamed && streamed_panel;
    bool broadcast = !o.streamed && o.block_arg >= 0 && broadcast_panel;
    if (!streamed && !broadcast) continue;
    CopySource source = copy_source(name);
    if (streamed && source.stage >= 0 && p_.stages[source.stage].kind == Stage::Kind::Pack &&
        p_.stages[source.stage].uses.size() == 1) {
      Halide::LoopLevel at = rko ? Halide::LoopLevel(r.func, *rko) : Halide::LoopLevel(w, t.tile);
      panel_packs_[source.stage] = {at, rko ? "reduction block of " + r.func.name() : "tile of " + w.name()};
      words += ", " + p_.stages[source.stage].tensor + " in panels";
      continue;
    }
    Func copy;
    std::string tensor;
    if (!copy_of(name, r.func, copy, tensor)) continue;
    if (rko) copy.compute_at(r.func, *rko);
    else copy.compute_at(w, t.tile);
    Var inner = store_innermost(copy, streamed ? o.inner_arg : o.block_arg);
    if (streamed && lanes_ > 1) copy.vectorize(inner, lanes_, Halide::TailStrategy::GuardWithIf);
    words += ", " + tensor + (streamed ? " in panels" : " in panels (block dimension innermost)");
  }
  return words;
}

std::map<std::string, Scheduler::PanelOperand> Scheduler::panel_operands(const Stage& r) const {
  std::map<std::string, PanelOperand> operands;
  std::string x = r.vars[0].name(), y = r.block_var >= 0 ? r.vars[r.block_var].name() : "";
  std::string self = r.func.name();
  auto found = [&](const Halide::Internal::Call* c) {
    if (c->name == self || c->args.empty()) return;
    // A gather's slice is wherever its indices point (all of LUT's rows for each tile).
    bool gathered = false;
    for (const Halide::Expr& a : c->args) gathered = gathered || reads_memory(a);
    if (gathered) {
      operands[c->name] = PanelOperand{0, -1, false, true, 0};
      return;
    }
    PanelOperand o;
    o.row = extent_of(c->name, 0);
    for (const Stage& s : p_.stages)
      if (s.kind == Stage::Kind::Pack && s.func.name() == c->name) {
        o.inner_arg = s.packed_var;
        o.row = s.extents[s.packed_var];
      }
    o.streamed = Halide::Internal::expr_uses_var(c->args[o.inner_arg], x);
    for (size_t a = 0; a < c->args.size() && !y.empty(); ++a)
      if (o.block_arg < 0 && Halide::Internal::expr_uses_var(c->args[a], y)) o.block_arg = static_cast<int>(a);
    auto [it, fresh] = operands.emplace(c->name, o);
    if (!fresh && !it->second.gathered) {  // read twice: a panel only if every read agrees
      it->second.streamed = it->second.streamed && o.streamed;
      if (it->second.block_arg != o.block_arg) it->second.block_arg = -1;
    }
  };
  for (const Halide::Expr& v : r.func.function().update(0).values()) for_each_load(v, found);
  return operands;
}

int64_t Scheduler::extent_of(const std::string& name, int arg) const {
  for (const auto& in : p_.inputs)
    if (in.defined() && Func(in).name() == name && arg < in.dimensions())
      if (const int64_t* e = Halide::Internal::as_const_int(in.parameter().extent_constraint(arg))) return *e;
  for (const Stage& s : p_.stages)
    if (s.func.name() == name && arg < static_cast<int>(s.extents.size())) return s.extents[arg];
  return 0;
}

bool Scheduler::wants_streamed_panel(const Stage& r, const std::map<std::string, PanelOperand>& operands, int tx) const {
  int64_t strips = static_cast<int64_t>(tx) * r.type.bytes() * reduction_length(r);
  // Over flattened rows the streamed reads are windows of one long row, which the tile's
  // neighbouring steps share: a panel would copy each window (conv2d 7.3 against 6.7 ms).
  if (2 * strips <= k_.l1_bytes || r.flattened_row) return false;
  for (const auto& [name, o] : operands)
    if (o.streamed && !o.gathered && o.row >= kPanelRowRatio * tx && copy_source(name).found()) return true;
  return false;
}

int Scheduler::panel_rows(const Stage& r, int tx, int fewest) const {
  int b = r.block_var;
  if (b < 0) return fewest;
  int64_t row_bytes = std::max<int64_t>(1, reduction_length(r) * r.type.bytes());
  int rows = fewest;
  while (rows * 2 <= kMaxPanelRows && rows * 2 * row_bytes <= k_.l2_bytes / 2) rows *= 2;
  int64_t columns = (r.extents[0] + tx - 1) / tx;
  while (rows > fewest && columns * row_tiles(r, rows) < kTasksPerThread * k_.threads) rows /= 2;
  return rows;
}

Var Scheduler::store_innermost(Func& copy, int arg) {
  std::vector<Var> args = copy.args();
  std::vector<Var> order = {args[arg]};
  for (size_t a = 0; a < args.size(); ++a)
    if (static_cast<int>(a) != arg) order.push_back(args[a]);
  if (order.size() >= 2) copy.reorder_storage(order).reorder(std::vector<VarOrRVar>(order.begin(), order.end()));
  return order[0];
}

void Scheduler::for_each_load(const Halide::Expr& e, const std::function<void(const Halide::Internal::Call*)>& fn) {
  struct Loads : Halide::Internal::IRVisitor {
    using IRVisitor::visit;
    const std::function<void(const Halide::Internal::Call*)>* fn = nullptr;
    void visit(const Halide::Internal::Call* c) override {
      if (c->call_type == Halide::Internal::Call::Image || c->call_type == Halide::Internal::Call::Halide) (*fn)(c);
      IRVisitor::visit(c);
    }
  } loads;
  loads.fn = &fn;
  e.accept(&loads);
}

bool Scheduler::reads_memory(const Halide::Expr& e) {
  bool found = false;
  for_each_load(e, [&](const Halide::Internal::Call*) { found = true; });
  return found;
}

Scheduler::CopySource Scheduler::copy_source(const std::string& name) const {
  for (size_t i = 0; i < p_.inputs.size(); ++i)
    if (p_.inputs[i].defined() && Func(p_.inputs[i]).name() == name) return {static_cast<int>(i), -1};
  for (size_t i = 0; i < p_.stages.size(); ++i)
    if (p_.stages[i].func.name() == name) {
      // A reduction is computed inside its host (its consumer, or a wrapper of its own), where
      // its readers find it: a copy of the reduction itself would read it outside that host,
      // which Halide refuses (differential fuzzer, seed 255611873: T(k,n) +=! ... read by
      // C(m,n) +=! A(m,k) * T(k,n) with cpu.panel=streamed did not compile).
      if (p_.stages[i].kind == Stage::Kind::Reduction) return {};
      if (!root_[i] || hosts_[i] >= 0 || block_host_[i] >= 0 || p_.stages[i].forced) return {};
      return {-1, static_cast<int>(i)};
    }
  return {};
}

bool Scheduler::copy_of(const std::string& name, Func consumer, Func& copy, std::string& tensor) {
  CopySource source = copy_source(name);
  if (source.input >= 0) {
    Halide::ImageParam& in = p_.inputs[source.input];
    copy = in.in(consumer);
    tensor = in.name().rfind("in_", 0) == 0 ? in.name().substr(3) : in.name();
    return true;
  }
  if (source.stage < 0) return false;
  Stage& s = p_.stages[source.stage];
  copy = s.func.in(consumer);
  tensor = s.tensor;
  return true;
}

}  // namespace tc::backends::cpu::scheduling
