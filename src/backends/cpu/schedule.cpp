// schedule.cpp — see schedule.h. The default schedule:
//   - producers used once, outside any reduction loop, are inlined; others computed whole;
//   - a reduction is computed tile by tile inside its host: the pointwise consumer that reads
//     it element for element (fusing, say, a bias and ReLU into a matmul), else a copy
//     (Func::in). The host is tiled TX x TY over the contiguous dimension and the register
//     block dimension; the reduction runs over a TX x U block whose accumulators stay in
//     registers, vectorised along the contiguous dimension, with the reduction loops outside
//     the block (the classic register-blocked matmul);
//   - a reduction whose reads are contiguous only along a reduction variable (dot products,
//     row sums) is vectorised along that variable instead, through rfactor;
//   - root stages vectorise their contiguous dimension and run their outer loops in parallel.
#include "backends/cpu/schedule.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

namespace tc::backends::cpu {

using Halide::Func;
using Halide::RVar;
using Halide::Var;
using Halide::VarOrRVar;

namespace {

// The largest extent of any computed tensor in its last (contiguous) dimension, and in the one
// before it: the tile sizes worth trying.
std::pair<int64_t, int64_t> computed_extents(const ir::BoundDef& b) {
  int64_t x = 1, y = 1;
  for (size_t t = 0; t < b.tensors.size(); ++t) {
    if (b.def().tensors[t].role == ir::TensorRole::Input) continue;
    const auto& shape = b.tensors[t].shape;
    if (!shape.empty()) x = std::max(x, shape.back());
    if (shape.size() >= 2) y = std::max(y, shape[shape.size() - 2]);
  }
  return {x, y};
}

std::vector<std::string> tiles(const ir::BoundDef& b) {
  auto [x, y] = computed_extents(b);
  std::vector<std::string> out;
  for (const auto& tx : powers_of_two(4, x, 256))
    for (const auto& ty : powers_of_two(1, y, 64)) out.push_back(tx + "x" + ty);
  return out;
}

std::vector<Knob> declare() {
  auto fixed = [](std::vector<std::string> v) { return [v](const ir::BoundDef&) { return v; }; };
  Knob vectorize{"cpu.vectorize", KnobKind::Integer, "auto", "vector width, in 32-bit lanes (1: scalar code)", true};
  vectorize.min = 1;
  vectorize.max = 64;
  vectorize.domain = fixed({"1", "4", "8", "16"});
  Knob tile{"cpu.tile", KnobKind::Pair, "auto",
            "output tile of a reduction: X along the last (contiguous) dimension, Y along the register-blocked one", true};
  tile.min = 1;
  tile.max = 4096;
  tile.domain = tiles;
  Knob unroll{"cpu.unroll", KnobKind::Integer, "auto", "rows of the register block (accumulators per vector)", true};
  unroll.min = 1;
  unroll.max = 32;
  unroll.domain = fixed({"1", "2", "4", "8"});
  Knob parallel{"cpu.parallel", KnobKind::Choice, "auto", "run the outer tile loops on the thread pool, or not", true};
  parallel.choices = {"outer", "none"};
  parallel.domain = fixed({"outer", "none"});
  Knob inline_{"cpu.inline", KnobKind::Boolean, "auto",
               "inline single-use pointwise producers into their consumer: auto (not into reduction loops), 1 always, 0 never",
               true};
  inline_.domain = fixed({"0", "1"});
  Knob pack{"cpu.pack", KnobKind::Boolean, "1",
            "copy the operand of a reduction read along no output dimension (the B of A * B^T) with the output's last "
            "dimension innermost, so the register-blocked schedule applies"};
  pack.domain = fixed({"1", "0"});
  Knob fuse{"cpu.fuse", KnobKind::Boolean, "1",
            "compute a reduction tile by tile inside the pointwise consumer that reads it element for element (a bias "
            "and ReLU after a matmul), instead of on its own first"};
  fuse.domain = fixed({"1", "0"});
  return {vectorize, tile, unroll, parallel, inline_, pack, fuse};
}

}  // namespace

const std::vector<Knob>& cpu_knobs() {
  static const std::vector<Knob> kKnobs = declare();
  return kKnobs;
}

CpuSchedule CpuSchedule::from_options(const KnobValues& o) {
  CpuSchedule s;
  auto number = [&](const char* key) { return o.is_auto(key) ? 0 : static_cast<int>(o.integer(key)); };
  s.vector = number("cpu.vectorize");
  if (!o.is_auto("cpu.tile")) {
    s.tile_x = static_cast<int>(o.get("cpu.tile").x);
    s.tile_y = static_cast<int>(o.get("cpu.tile").y);
  }
  s.unroll = number("cpu.unroll");
  s.parallel = o.text("cpu.parallel") != "none";
  s.inline_mode = o.is_auto("cpu.inline") ? -1 : static_cast<int>(o.integer("cpu.inline"));
  s.pack = o.flag("cpu.pack");
  s.fuse = o.flag("cpu.fuse");
  s.threads = static_cast<int>(o.integer("threads"));
  if (s.threads == 0) s.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return s;
}

namespace {

int largest_power_of_two_at_most(int64_t n) {
  int p = 1;
  while (p * 2 <= n && p < 1024) p *= 2;
  return p;
}

class Scheduler {
 public:
  Scheduler(LoweredPipeline& p, const CpuSchedule& k, const Halide::Target& t) : p_(p), k_(k), target_(t) {}

  std::string run() {
    size_t n = p_.stages.size();
    host_.assign(n, -1);
    hosts_.assign(n, -1);
    root_.assign(n, false);
    for (size_t i = 0; i < n; ++i) place(static_cast<int>(i));
    for (size_t i = 0; i < n; ++i)
      if (root_[i] && p_.stages[i].kind != Stage::Kind::Output && p_.stages[i].kind != Stage::Kind::Reduction)
        bound_whole(p_.stages[i].func, p_.stages[i]);  // a reduction is computed inside its host, bounded instead
    for (size_t i = 0; i < n; ++i) {
      Stage& s = p_.stages[i];
      if (s.kind == Stage::Kind::Reduction) schedule_reduction(static_cast<int>(i));
      else if (s.kind == Stage::Kind::Pack) schedule_pack(s);
      else if (root_[i] && hosts_[i] < 0) schedule_root(s);
      else if (!root_[i]) say(s, "inlined into its consumer");
    }
    return log_;
  }

 private:
  // Lanes for this stage's element type: the knob counts 32-bit lanes.
  int lanes(const Stage& s) const {
    int bits = std::max(8, s.type.bits());
    if (k_.vector > 0) return std::max(1, k_.vector * 32 / bits);
    Halide::Type t = s.type.is_bool() ? Halide::UInt(8) : s.type;
    return std::max(1, target_.natural_vector_size(t));
  }

  void say(const Stage& s, const std::string& what) { log_ += s.func.name() + ": " + what + "\n"; }

  // A stage computed on its own is computed over its whole domain, as the language runs every
  // statement whole. Without this a consumer needing fewer elements than one tile gets a
  // tile shifted inwards past the domain's start (ShiftInwards), reading inputs at -1.
  static void bound_whole(Func f, const Stage& s) {
    std::vector<Var> args = f.args();
    for (size_t d = 0; d < s.extents.size() && d < args.size(); ++d)
      f.bound(args[d], static_cast<int>(s.min(d)), static_cast<int>(s.extents[d]));
  }

  void place(int i) {
    Stage& s = p_.stages[i];
    switch (s.kind) {
      case Stage::Kind::Output:
      case Stage::Kind::Pack:
      case Stage::Kind::Initial:  // a snapshot of the caller's buffer, before anything writes it
      case Stage::Kind::Partial: root_[i] = true; return;
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
            host_[i] = u.consumer;
            hosts_[u.consumer] = i;
            root_[u.consumer] = true;
          }
        }
        return;
      }
      case Stage::Kind::Pointwise: {
        if (hosts_[i] >= 0) return;  // already made a root host
        bool single = s.uses.size() == 1;
        bool inline_it = k_.inline_mode == 1 ? single : k_.inline_mode == 0 ? false : single && !s.uses[0].in_loop;
        root_[i] = !inline_it;
        return;
      }
    }
  }

  // Fuses `outer` (in loop order, innermost first) into one loop, run in parallel if asked.
  Var fuse_outer(Func& f, std::vector<Var> outer, const std::string& name) {
    Var fused = outer[0];
    for (size_t d = 1; d < outer.size(); ++d) {
      Var v(name + std::to_string(d));
      f.fuse(fused, outer[d], v);
      fused = v;
    }
    if (k_.parallel) f.parallel(fused);
    return fused;
  }

  void schedule_root(Stage& s) {
    Func& f = s.func;
    f.compute_root();
    size_t n = s.vars.size();
    if (n == 0) {
      say(s, "computed at root");
      return;
    }
    int L = lanes(s);
    std::string what = "computed at root";
    Var inner = s.vars[0];
    // A long 1-d stage runs in parallel chunks of 4096 elements, each vectorised (split first:
    // splitting the vectorised variable would make chunks of 4096 vectors, which ShiftInwards
    // then shifts below index 0 whenever the extent is under 4096 vectors).
    if (n == 1 && k_.parallel && s.extents[0] >= 16384) {
      Var o("o"), i("i");
      f.split(s.vars[0], o, i, 4096, Halide::TailStrategy::ShiftInwards).parallel(o);
      inner = i;
      what += ", chunks of 4096 in parallel";
    }
    if (s.extents[0] >= L && L > 1) {
      f.vectorize(inner, L, Halide::TailStrategy::ShiftInwards);
      what += ", vectorized " + std::to_string(L);
    }
    if (n >= 2) {
      std::vector<Var> outer(s.vars.begin() + 1, s.vars.end());
      fuse_outer(f, outer, f.name() + "_par");
      if (k_.parallel) what += ", outer loops in parallel";
    }
    say(s, what);
  }

  // A transposing copy: 8x8 tiles vectorised both ways (whole rows in, shuffles, whole rows
  // out), tiles in parallel.
  void schedule_pack(Stage& s) {
    Func& f = s.func;
    f.compute_root();
    int inner = s.packed_var, from = 0;
    int tile = 8;
    bool tiled = s.extents[inner] >= tile && s.extents[from] >= tile && s.type.bits() <= 32;
    std::vector<Var> outer;
    if (tiled) {
      Var xi("xi"), yi("yi"), xo("xo"), yo("yo");
      const auto shift = Halide::TailStrategy::ShiftInwards;
      f.split(s.vars[inner], xo, xi, tile, shift).split(s.vars[from], yo, yi, tile, shift);
      std::vector<VarOrRVar> order = {xi, yi, xo, yo};
      outer = {xo, yo};
      for (size_t d = 1; d < s.vars.size(); ++d)
        if (static_cast<int>(d) != inner) {
          order.push_back(s.vars[d]);
          outer.push_back(s.vars[d]);
        }
      f.reorder(order).vectorize(xi).vectorize(yi);
    } else {
      for (size_t d = 0; d < s.vars.size(); ++d)
        if (static_cast<int>(d) != inner) outer.push_back(s.vars[d]);
    }
    if (!outer.empty()) fuse_outer(f, outer, f.name() + "_par");
    say(s, std::string("copy with dimension ") + std::to_string(s.vars.size() - 1 - inner) + " innermost" +
               (tiled ? ", 8x8 tiles transposed in vector registers" : ""));
  }

  // The host of reduction i: its pointwise consumer, or a copy made for it.
  Func host_func(int i, Stage& r, std::string& name) {
    if (host_[i] >= 0) {
      name = p_.stages[host_[i]].func.name();
      return p_.stages[host_[i]].func;
    }
    Func w = r.func.in();
    bound_whole(w, r);
    name = "a copy";
    return w;
  }

  void schedule_reduction(int i) {
    Stage& r = p_.stages[i];
    std::string host_name;
    Func w = host_func(i, r, host_name);
    w.compute_root();
    size_t n = r.vars.size();
    if (n == 0) {
      r.func.compute_at(w, Var::outermost());
      say(r, "scalar reduction, computed inside " + host_name);
      return;
    }
    if (r.contiguous_rvar >= 0) return schedule_dot(r, w, host_name);
    schedule_blocked(r, w, host_name);
  }

  // The loop order of a reduction's update, innermost first: `inner`, the block var, the
  // reduction variables (rdom dimension `replaced`, if any, by `replacement`), then the other
  // pure vars (extent 1 inside a block).
  std::vector<VarOrRVar> block_outside_in(const Stage& r, std::vector<VarOrRVar> order, int replaced,
                                          const RVar& replacement = RVar()) const {
    int b = r.block_var;
    if (b >= 0) order.push_back(r.vars[b]);
    for (int k = 0; k < r.rdom.dimensions(); ++k) order.push_back(k == replaced ? replacement : r.rdom[k]);
    for (size_t d = 1; d < r.vars.size(); ++d)
      if (static_cast<int>(d) != b) order.push_back(r.vars[d]);
    return order;
  }

  // Tiles of the host: TX along vars[0], TY along the block var; the remaining pure vars and
  // the tile loops are fused into one parallel loop `outer`, and each tile's rows are split
  // into blocks of U (yi: the block loop, yii: the rows of one block).
  struct Tiling {
    int tx = 1, ty = 1, u = 1;
    Var xi{"xi"}, yi{"yi"}, yii{"yii"}, outer;
  };

  // X is the caller's (it depends on the vector width); Y and U come from the knobs.
  Tiling tile_host(Stage& r, Func& w, int tx, int default_ty, int default_u) {
    size_t n = r.vars.size();
    int b = r.block_var;
    Tiling t;
    t.tx = tx;
    t.ty = b >= 0 ? static_cast<int>(std::min<int64_t>(k_.tile_y ? k_.tile_y : default_ty, r.extents[b])) : 1;
    t.u = std::min(k_.unroll ? k_.unroll : default_u, t.ty);
    std::vector<Var> hv = w.args();  // the host's pure vars, in the order of r.vars
    Var xo("xo"), yo("yo");
    // ShiftInwards everywhere: tiles overlap at the edges instead of reading past them
    // (overlapping tiles recompute identical values; the caller's outputs are never read
    // here, the Initial stage snapshots them).
    const auto shift = Halide::TailStrategy::ShiftInwards;
    w.split(hv[0], xo, t.xi, t.tx, shift);
    std::vector<VarOrRVar> order = {t.xi};
    std::vector<Var> outer = {xo};
    if (b >= 0) {
      w.split(hv[b], yo, t.yi, t.ty, shift);
      order.push_back(t.yi);
      outer.push_back(yo);
    }
    for (size_t d = 1; d < n; ++d)
      if (static_cast<int>(d) != b) outer.push_back(hv[d]);
    order.insert(order.end(), outer.begin(), outer.end());
    w.reorder(order);
    t.outer = fuse_outer(w, outer, w.name() + "_tile");
    if (b >= 0) w.split(t.yi, t.yi, t.yii, t.u, shift);
    return t;
  }

  void schedule_blocked(Stage& r, Func& w, const std::string& host_name) {
    int L = lanes(r);
    int b = r.block_var;
    if (r.extents[0] < L) L = largest_power_of_two_at_most(r.extents[0]);
    // The block width must be a multiple of the vector width: the block is computed whole.
    int tx = k_.tile_x ? k_.tile_x : 2 * L;
    tx = std::max(L, static_cast<int>(std::min<int64_t>(tx, r.extents[0])) / L * L);
    Tiling t = tile_host(r, w, tx, 32, 4);
    if (L > 1) w.vectorize(t.xi, L);
    if (b >= 0) w.unroll(t.yii);
    Func& f = r.func;
    f.compute_at(w, b >= 0 ? t.yi : t.outer);
    std::vector<VarOrRVar> order = block_outside_in(r, {r.vars[0]}, -1);
    if (L > 1) f.vectorize(r.vars[0], L);
    if (b >= 0) f.unroll(r.vars[b]);
    auto u = f.update();
    u.reorder(order);
    if (L > 1) u.vectorize(r.vars[0], L);
    if (t.tx > L && t.tx % L == 0) u.unroll(r.vars[0]);
    if (b >= 0) u.unroll(r.vars[b]);
    say(r, "register-blocked " + std::to_string(t.tx) + "x" + std::to_string(t.u) + " (vector " + std::to_string(L) +
               "), tiles " + std::to_string(t.tx) + "x" + std::to_string(t.ty) + " inside " + host_name +
               (k_.parallel ? ", tiles in parallel" : ""));
  }

  // Reductions along a contiguous reduction variable: split it by the vector width and
  // rfactor the lanes into a vector of partial results, summed once per output element.
  void schedule_dot(Stage& r, Func& w, const std::string& host_name) {
    RVar rc = r.rdom[r.contiguous_rvar];
    int64_t extent = *Halide::Internal::as_const_int(rc.extent());  // the RDom is built from constants
    int L = lanes(r);
    while (L > 1 && extent % L != 0) L /= 2;
    int b = r.block_var;
    int tx = static_cast<int>(std::min<int64_t>(k_.tile_x ? k_.tile_x : 4, r.extents[0]));
    Tiling t = tile_host(r, w, tx, 4, 4);
    if (b >= 0) w.unroll(t.yii);
    Var at = b >= 0 ? t.yi : t.outer;
    Func& f = r.func;
    f.compute_at(w, at);
    if (L < 4) {
      say(r, "scalar reduction, blocks inside " + host_name);
      return;
    }
    RVar rco("rco"), rci("rci");
    Var lane("lane");
    f.update().split(rc, rco, rci, L);
    Func partial = f.update().rfactor(rci, lane);
    partial.compute_at(w, at).vectorize(lane);
    std::vector<VarOrRVar> order = block_outside_in(r, {lane, r.vars[0]}, r.contiguous_rvar, rco);
    partial.update().reorder(order).vectorize(lane);
    if (t.tx > 1) partial.update().unroll(r.vars[0]);
    if (b >= 0) partial.update().unroll(r.vars[b]);
    say(r, "vectorized along its contiguous reduction variable (rfactor " + std::to_string(L) + " lanes), blocks " +
               std::to_string(t.tx) + "x" + std::to_string(t.u) + " inside " + host_name);
  }

  LoweredPipeline& p_;
  const CpuSchedule& k_;
  Halide::Target target_;
  std::vector<int> host_;   // per reduction stage: the stage hosting it, -1: a copy
  std::vector<int> hosts_;  // per stage: the reduction it hosts, -1
  std::vector<bool> root_;
  std::string log_;
};

}  // namespace

std::string apply_schedule(LoweredPipeline& p, const CpuSchedule& s, const Halide::Target& target) {
  return Scheduler(p, s, target).run();
}

}  // namespace tc::backends::cpu
