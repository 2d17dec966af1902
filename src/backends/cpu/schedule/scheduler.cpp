// scheduler.cpp — the scheduler's frame (scheduler.h): where each stage is computed (inlined,
// at root, inside a host), root stages and scatters, and apply_schedule. The concerns with
// more to decide have files of their own: row_blocks, transposing_hosts, register_blocks, panels.
#include <algorithm>

#include "backends/cpu/schedule/scheduler.h"
#include "backends/cpu/values.h"

namespace tc::backends::cpu::scheduling {

int largest_power_of_two_at_most(int64_t n) {
  int p = 1;
  while (p * 2 <= n && p < 1024) p *= 2;
  return p;
}

std::string Scheduler::run() {
  size_t n = p_.stages.size();
  host_.assign(n, -1);
  hosts_.assign(n, -1);
  root_.assign(n, false);
  for (size_t i = 0; i < n; ++i) place(static_cast<int>(i));
  form_transposing_hosts();
  form_row_blocks();
  for (size_t i = 0; i < n; ++i)
    if (root_[i] && block_host_[i] < 0 && p_.stages[i].kind != Stage::Kind::Output &&
        p_.stages[i].kind != Stage::Kind::Reduction && p_.stages[i].kind != Stage::Kind::Pack)
      bound_whole(p_.stages[i].func, p_.stages[i]);  // a reduction is computed inside its host, a copy may be a panel
  // The transposing hosts first: their reductions' copies are computed at their block loop.
  for (size_t i = 0; i < n; ++i)
    if (transposing_rows_[i] > 0) schedule_transposing_host(static_cast<int>(i));
  for (size_t i = 0; i < n; ++i) {
    Stage& s = p_.stages[i];
    int b = block_host_[i];
    if (s.kind == Stage::Kind::Reduction) schedule_reduction(static_cast<int>(i));
    else if (s.kind == Stage::Kind::Pack) continue;
    else if (block_rows_[i] > 0) schedule_row_blocks(static_cast<int>(i));
    else if (root_[i] && b >= 0) schedule_in_block(in_block(s, b), b);
    else if (transposing_rows_[i] > 0) continue;  // scheduled first
    else if (root_[i] && hosts_[i] < 0) schedule_root(s);
    if (s.kind == Stage::Kind::Scatter) schedule_scatter(s);
    else if (!root_[i]) say(s, "inlined into its consumer");
  }
  // Copies (Pack stages) last: a reduction whose operand is in panels takes its copy in
  // (panel_packs_).
  for (size_t i = 0; i < n; ++i)
    if (p_.stages[i].kind == Stage::Kind::Pack) schedule_pack(p_.stages[i], static_cast<int>(i));
  return log_;
}

int Scheduler::lanes(const Stage& s) const {
  int bits = std::max(8, s.type.bits());
  if (k_.vector > 0) return std::max(1, k_.vector * 32 / bits);
  Halide::Type t = s.type.is_bool() ? Halide::UInt(8) : s.type;
  return std::max(1, target_.natural_vector_size(t));
}

int Scheduler::innermost_lanes(const Stage& s) const {
  return static_cast<int>(std::min<int64_t>(lanes(s), largest_power_of_two_at_most(s.extents[0])));
}

void Scheduler::bound_whole(Func f, const Stage& s) {
  std::vector<Var> args = f.args();
  size_t outermost = std::min(s.extents.size(), args.size()) - 1;
  for (size_t d = 0; d < s.extents.size() && d < args.size(); ++d) {
    Halide::Expr extent = static_cast<int>(s.extents[d]);
    if (d == outermost && s.bytes() > kMaxBufferBytes) extent = opaque(extent);
    f.bound(args[d], static_cast<int>(s.min(d)), extent);
  }
}

void Scheduler::place(int i) {
  Stage& s = p_.stages[i];
  switch (s.kind) {
    case Stage::Kind::Output:
    case Stage::Kind::Pack:
    case Stage::Kind::Initial:  // a snapshot of the caller's buffer, before anything writes it
    case Stage::Kind::Partial:
    // A scatter is computed whole at root; schedule_root schedules its pure definition (the
    // tensor before it) and schedule_scatter its update: serial in its own order, or in
    // parallel only over a variable that is exactly a written subscript (different values
    // write different elements), so no knob value can make it racy.
    case Stage::Kind::Scatter: root_[i] = true; return;
    case Stage::Kind::Reduction: {
      root_[i] = true;
      if (s.uses.size() == 1) {
        const Use& u = s.uses[0];
        Stage& c = p_.stages[u.consumer];
        bool pure_consumer = c.kind == Stage::Kind::Pointwise || c.kind == Stage::Kind::Output;
        // The host is tiled by the reduction's extents: it must have the same domain (a
        // consumer reading t1(i) over fewer i would get tiles shifted below 0).
        bool same_domain = c.extents == s.extents && c.mins == s.mins;
        if (k_.fuse && u.pointwise && !u.in_loop && pure_consumer && same_domain && hosts_[u.consumer] < 0) {
          int host = last_of_inlined_chain(u.consumer);
          host_[i] = host;
          hosts_[host] = i;
          root_[host] = true;
        }
      }
      return;
    }
    case Stage::Kind::Pointwise: {
      if (hosts_[i] >= 0) return;  // already made a root host
      bool single = s.uses.size() == 1;
      bool inline_it = k_.inline_mode == 1 ? single : k_.inline_mode == 0 ? false : single && !s.uses[0].in_loop;
      // A check is computed whole at root, never inlined: the sink reads only two of its points.
      if (s.forced) inline_it = false;
      root_[i] = !inline_it;
      return;
    }
  }
}

bool Scheduler::will_inline(const Stage& c) const {
  if (c.kind != Stage::Kind::Pointwise || c.forced || c.uses.size() != 1) return false;
  return k_.inline_mode == 1 || (k_.inline_mode < 0 && !c.uses[0].in_loop);
}

int Scheduler::last_of_inlined_chain(int c) const {
  while (will_inline(p_.stages[c])) {
    const Use& u = p_.stages[c].uses[0];
    const Stage& next = p_.stages[u.consumer];
    bool pure_next = next.kind == Stage::Kind::Pointwise || next.kind == Stage::Kind::Output;
    bool same_domain = next.extents == p_.stages[c].extents && next.mins == p_.stages[c].mins;
    if (!u.pointwise || u.in_loop || !pure_next || !same_domain || hosts_[u.consumer] >= 0) break;
    c = u.consumer;
  }
  return c;
}

Var Scheduler::fuse_outer(Func& f, std::vector<Var> outer, const std::string& name, bool run_parallel) {
  Var fused = outer[0];
  for (size_t d = 1; d < outer.size(); ++d) {
    Var v(name + std::to_string(d));
    f.fuse(fused, outer[d], v);
    fused = v;
  }
  if (run_parallel) f.parallel(fused);
  return fused;
}

int64_t Scheduler::elements(const Stage& s) {
  int64_t e = 1;
  for (int64_t x : s.extents) e *= x;
  return e;
}

int64_t Scheduler::reduction_length(const Stage& r) {
  int64_t n = 1;
  for (int k = 0; k < r.rdom.dimensions(); ++k)
    if (const int64_t* e = Halide::Internal::as_const_int(r.rdom[k].extent())) n *= *e;
  return n;
}

int64_t Scheduler::row_tiles(const Stage& r, int ty) {
  int b = r.block_var;
  int64_t n = b >= 0 ? (r.extents[b] + ty - 1) / ty : 1;
  for (size_t d = 1; d < r.extents.size(); ++d)
    if (static_cast<int>(d) != b) n *= r.extents[d];
  return n;
}

void Scheduler::schedule_root(Stage& s) {
  Func& f = s.func;
  f.compute_root();
  size_t n = s.vars.size();
  if (n == 0) {
    say(s, "computed at root");
    return;
  }
  int L = innermost_lanes(s);
  std::string what = "computed at root";
  Var inner = s.vars[0];
  bool run_parallel = parallel() && elements(s) >= kMinParallelElements;
  // A long 1-d stage runs in parallel chunks of 4096 elements, each vectorised (split first:
  // splitting the vectorised variable would make chunks of 4096 vectors, which ShiftInwards
  // then shifts below index 0 whenever the extent is under 4096 vectors).
  if (n == 1 && run_parallel) {
    Var o("o"), i("i");
    f.split(s.vars[0], o, i, 4096, Halide::TailStrategy::ShiftInwards).parallel(o);
    inner = i;
    what += ", chunks of 4096 in parallel";
  }
  if (L > 1) {
    f.vectorize(inner, L, Halide::TailStrategy::ShiftInwards);
    what += ", vectorized " + std::to_string(L);
  }
  if (n >= 2) {
    std::vector<Var> outer(s.vars.begin() + 1, s.vars.end());
    fuse_outer(f, outer, f.name() + "_par", run_parallel);
    what += run_parallel ? ", outer loops in parallel" : parallel() ? ", one thread (small)" : "";
  }
  say(s, what);
}

void Scheduler::schedule_scatter(Stage& s) {
  if (!parallel() || s.scatter_parallel_rvar < 0 || s.scatter_parallel_rvar != s.rdom.dimensions() - 1) return;
  Halide::RVar r = s.rdom[s.scatter_parallel_rvar];
  s.func.update(0).parallel(r);
  say(s, "update in parallel over " + r.name());
}

}  // namespace tc::backends::cpu::scheduling

namespace tc::backends::cpu {

std::string apply_schedule(LoweredPipeline& p, const CpuSchedule& s, const Halide::Target& target) {
  return scheduling::Scheduler(p, s, target).run();
}

}  // namespace tc::backends::cpu
