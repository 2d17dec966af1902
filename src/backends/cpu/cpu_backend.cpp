// cpu_backend.cpp — see cpu_backend.h. tc_run here: build halide_buffer_t views of the
// validated tensors (TC's last dimension is Halide's first), pick the variant, call it.
#include "backends/cpu/cpu_backend.h"

#include <algorithm>
#include <cstdio>
#include <cctype>
#include <climits>
#include <cpuid.h>
#include <cstdlib>
#include <mutex>
#include <new>

#include <unistd.h>

#include "backends/contraction/contraction.h"
#include "backends/cpu/contraction/gett.h"
#include "backends/cpu/gemm_route.h"
#include "backends/cpu/memory_levels.h"
#include "backends/cpu/jit.h"
#include "backends/cpu/lower.h"
#include "backends/cpu/schedule.h"
#include "backends/cpu/transpose_result.h"
#include "backends/cpu/values.h"
#include "backends/kept_code.h"
#include "ir/print.h"
#include "support/error.h"
#include "support/sha256.h"

namespace tc::backends::cpu {

using runtime::TensorView;

namespace {

// Below this many flops (multiply-adds counted twice) a (batched) matrix product takes the
// pipeline under cpu.contract=auto: its operands fit the caches, and the route's packing of
// both and its tables cost more than they save. Measured on 2 cores (docs/design/contractions.md):
// 64^3 11 us on the route against 6 on the pipeline, 192^3 90 against 80, 224^3 141 against
// 131-135, 64 products of 32^3 60 against 43; 256^3 204 against 223 and 8 products of 128^3
// 229 against 245 (33.5 MFLOP each: the route).
constexpr double kSmallProductFlops = 24e6;

// Whether every stage's result (per batch entry) has fewer than 32 x 32 values: a long sum
// into a few micro-tiles, which the route computes mostly padded (6 x 16 tiles) after packing
// all of K. Measured on 2 cores (docs/design/contractions.md): 8 x 10^6 x 8 11.3 ms on the route
// against 2.3 on the pipeline, 16 x 500000 x 16 6.9 against 4.2; 32 x 200000 x 32 even.
bool small_result(const ContractionPlan& plan) {
  for (const Contraction& c : plan.stages)
    if ((c.m[0].hi - c.m[0].lo) * (c.n[0].hi - c.n[0].lo) >= 32 * 32) return false;
  return true;
}

// "0.52", "8.39", "22.5".
std::string mflop_text(double flops) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", flops / 1e6);
  return buf;
}

// Why cpu.contract=auto leaves `plan` to the pipeline, "" where it does not: the pipeline's
// special cases for (batched) matrix products, where they measured faster (docs/design/contractions.md).
std::string pipeline_reason(const ContractionPlan& plan, const ir::BoundDef& bound) {
  if (!plan.matrix_products(true)) return "";
  if (plan.matrix_products() && plan.fused()) return "matrix products with an epilogue: the pipeline fuses it";
  if (plan.matrix_products() && !plan_transposed_results(bound, -1).empty())
    return "a matrix product the pipeline computes transposed";
  if (plan.flops() < kSmallProductFlops)
    return "a matrix product of " + mflop_text(plan.flops()) + " MFLOP: below 24 the pipeline, which packs nothing, measured faster";
  if (small_result(plan)) return "a matrix product into fewer than 32 x 32 values: the pipeline measured faster";
  return "";
}

// One compiled specialisation and what its arguments are.
struct Variant {
  std::unique_ptr<JitFunction> fn;
  std::vector<std::pair<int64_t, std::string>> buffers;  // bytes of each internal buffer, and its tensor
  bool has_sink = false;  // the pipeline's first output is the checks sink (lower.h), a 0-d uint32
  std::vector<int> caller_outputs;  // outputs whose entry values are passed as inputs, in order
  // The entry values are read from a copy taken before the call: with several pipeline
  // outputs Halide may write one output before another's stages read its entry values
  // through the second view of the same memory (it cannot know they alias).
  bool snapshot_caller_outputs = false;
  std::vector<GatherCheck> gather_checks;
  std::vector<int> flattened_inputs;  // inputs taken as one long row (lower.h); dense variant only
  std::string schedule;
};

struct HalideView {
  halide_buffer_t buffer{};
  halide_dimension_t dims[TC_MAX_NDIM]{};
};

// The stride Halide is given for dimension d: an innermost dimension of extent <= 1 may have
// any stride, and counts as unit-stride (so such tensors use the fast variant).
int64_t halide_stride(const TensorView& v, int d) {
  return d == v.ndim - 1 && v.shape[d] <= 1 ? 1 : v.strides[d];
}

bool dense_innermost(const TensorView& v) { return v.ndim == 0 || halide_stride(v, v.ndim - 1) == 1; }

// Whether v's rows (its last dimension) follow one another in memory: what a stage computed
// over flattened rows needs (flatten_rows.h).
bool rows_adjoin(const TensorView& v) {
  return v.ndim >= 2 && (v.shape[v.ndim - 2] <= 1 || v.strides[v.ndim - 2] == v.shape[v.ndim - 1]);
}

// The view of a flattened input: its innermost dimension spans all its rows (Halide order:
// dimension 0 is TC's last; dimension 1's stride, the row length, is what the code assumes).
void flatten_rows(const TensorView& v, HalideView& view) {
  int64_t row = v.shape[v.ndim - 1], rows = v.shape[v.ndim - 2];
  view.dims[0].extent = static_cast<int32_t>(row * rows);
  view.dims[1].stride = static_cast<int32_t>(row);
}

// A kernel takes large_buffers (lower.h, kMaxBufferBytes) only where a buffer needs it: one of
// its tensors larger (CpuKernel's constructor), or a view spanning more at run time (the wide
// variant).
bool has_large_buffers(const Halide::Target& t) { return t.has_feature(Halide::Target::LargeBuffers); }

// The first tensor of `b` (inputs, outputs, temporaries) whose elements take more than
// kMaxBufferBytes, and its bytes; {-1, 0} if none.
std::pair<int, int64_t> largest_tensor_over_32_bits(const ir::BoundDef& b) {
  for (size_t t = 0; t < b.def().tensors.size(); ++t) {
    int64_t n = buffer_bytes(bytes(b.def().tensors[t].type), b.tensors[t].shape);
    if (n > kMaxBufferBytes) return {static_cast<int>(t), n};
  }
  return {-1, 0};
}

// Bytes from the first to the last element of v, inclusive.
int64_t span_bytes(const TensorView& v) {
  int64_t last = 0;
  for (int d = 0; d < v.ndim; ++d) {
    if (v.shape[d] == 0) return 0;
    int64_t step = 0;
    if (__builtin_mul_overflow(v.shape[d] - 1, v.strides[d] < 0 ? -v.strides[d] : v.strides[d], &step) ||
        __builtin_add_overflow(last, step, &last))
      return INT64_MAX;
  }
  return last >= INT64_MAX / 8 ? INT64_MAX : (last + 1) * bytes(v.type);
}

// Halide reads a buffer whose host pointer is NULL as a bounds query and computes nothing; an
// empty tensor may legally have data == NULL, so such views point here instead (never read).
alignas(64) uint8_t empty_tensor_data[64];

// Fills `out` with a view of v (TC's last dimension is Halide's first); returns the first
// dimension whose stride does not fit the generated code's 32-bit strides, or -1.
int view_of(const TensorView& v, HalideView& out) {
  out.buffer.host = v.data != nullptr ? reinterpret_cast<uint8_t*>(v.data) : empty_tensor_data;
  out.buffer.type = storage_type(v.type);
  out.buffer.dimensions = v.ndim;
  out.buffer.dim = out.dims;
  for (int d = 0; d < v.ndim; ++d) {
    int64_t stride = halide_stride(v, d);
    if (stride > INT_MAX || stride < INT_MIN) return d;
    out.dims[v.ndim - 1 - d] = {0, static_cast<int32_t>(v.shape[d]), static_cast<int32_t>(stride), 0};
  }
  return -1;
}

// A cpu kernel's artefact: this format's first line; a fingerprint of the pipeline the object
// was compiled from (the def's canonical text, the target, the schedule as described, with the
// def's names as positions) and the def name the object's entry point was named after; then
// the object of the variant for dense tensors. Loading rebuilds the pipeline (milliseconds; the
// variants' metadata comes from it) and takes the object only if the fingerprints agree: a def
// renamed or reformatted (the same canonical text, so the same cache key) takes the code too.
// Format 2: the checks sink is the first output, not the last (the object's argument order).
// Format 3: the fingerprint is of the canonical text, not the def's name; the entry's name kept.
const std::string kArtefactMagic = "tc-cpu-object 3\n";
// A kernel on the cpu.blas route keeps no object: its artefact is this line and the plan. A
// process that loads it without a CBLAS compiles the pipeline instead.
const std::string kBlasArtefactMagic = "tc-cpu-blas 1\n";
// A kernel on the contraction route keeps no object either: this line and the plan.
const std::string kContractionArtefactMagic = "tc-cpu-contraction 1\n";

// `text` with each identifier that is a tensor's name, or ends in "_<name>" (Halide's Funcs:
// "s0_C", "out_C"), given the tensor's position instead ("t2", "s0_t2"), as canonical_text
// names it; the longest name that fits wins.
std::string with_positional_names(const std::string& text, const ir::Def& def) {
  auto ident = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (!ident(text[i])) {
      out += text[i++];
      continue;
    }
    size_t end = i;
    while (end < text.size() && ident(text[end])) ++end;
    std::string word = text.substr(i, end - i);
    size_t best = SIZE_MAX, best_length = 0;
    for (size_t t = 0; t < def.tensors.size(); ++t) {
      const std::string& name = def.tensors[t].name;
      if (name.size() <= best_length || name.size() > word.size()) continue;
      bool whole = word == name;
      bool suffix = word.size() > name.size() && word.compare(word.size() - name.size(), name.size(), name) == 0 &&
                    word[word.size() - name.size() - 1] == '_';
      if (whole || suffix) best = t, best_length = name.size();
    }
    out += best == SIZE_MAX ? word : word.substr(0, word.size() - best_length) + "t" + std::to_string(best);
    i = end;
  }
  return out;
}

// The schedule's text names Funcs as Halide uniquifies them per process ("s0_C$3"): the
// counters are dropped, the structure is kept.
std::string fingerprint(const ir::BoundDef& bound, const Halide::Target& target, const std::string& schedule) {
  std::string text = ir::canonical_text(bound) + "\n" + target.to_string() + "\n";
  for (size_t i = 0; i < schedule.size(); ++i) {
    if (schedule[i] == '$' && i + 1 < schedule.size() && std::isdigit(static_cast<unsigned char>(schedule[i + 1]))) {
      while (i + 1 < schedule.size() && std::isdigit(static_cast<unsigned char>(schedule[i + 1]))) ++i;
      continue;
    }
    text += schedule[i];
  }
  return sha256_hex(with_positional_names(text, bound.def()));
}

// An artefact's parts.
struct StoredObject {
  std::string object, entry_def;  // the object; the def name its entry point was named after
};

// The object of `artefact` if its fingerprint is `expected`; throws otherwise.
StoredObject object_of(const std::string& artefact, const std::string& expected) {
  size_t head = kArtefactMagic.size(), print = head + 64;
  size_t line_end = artefact.find('\n', print);
  if (artefact.compare(0, head, kArtefactMagic) != 0 || line_end == std::string::npos || artefact[print] != ' ' ||
      line_end == print + 1)
    fail(TC_ERROR_INVALID_ARGUMENT, "cpu backend: the stored code is not in this build's format");
  if (artefact.compare(head, 64, expected) != 0)
    fail(TC_ERROR_INVALID_ARGUMENT, "cpu backend: the stored code was compiled from another pipeline");
  return {artefact.substr(line_end + 1), artefact.substr(print + 1, line_end - print - 1)};
}

// Objects compiled by earlier processes of this user, or this one (kept_code.h): a compile of a
// pipeline compiled before links the kept object (about a millisecond) instead of generating
// code again (0.03-1 s).
const KeptCode& kept_objects() {
  static const KeptCode kept("tc-cpu-objects-kept-" + std::to_string(getuid()));
  return kept;
}

// The values of the options a cpu compile reads (its knobs, `checked` and `threads`), as text.
std::string compile_options_text(const KnobValues& options) {
  std::string out = "checked=" + options.text("checked") + "\nthreads=" + options.text("threads") + "\n";
  for (const Knob& k : cpu_knobs()) out += k.key + "=" + options.text(k.key) + "\n";
  return out;
}

class CpuKernel : public Kernel {
 public:
  // Compiles, or takes the dense variant's code from `artefact` (what artefact() gave) when not null.
  // On the cpu.blas route the pipeline is compiled only when a call's layout needs it.
  CpuKernel(const ir::BoundDef& bound, const KnobValues& options, const std::string* artefact = nullptr)
      : b_(bound), schedule_(CpuSchedule::from_options(options)), checked_(options.flag("checked")),
        target_(jit_target()), options_text_(compile_options_text(options)) {
    auto [large, large_bytes] = largest_tensor_over_32_bits(b_);
    if (large >= 0) {
      target_ = target_.with_feature(Halide::Target::LargeBuffers);
      large_note_ = "64-bit buffer offsets (large_buffers): '" + b_.def().tensors[large].name + "' takes " +
                    std::to_string(large_bytes) + " bytes\n";
    }
    size_t ni = b_.def().num_inputs;
    tensor_names_.resize(ni + b_.def().num_outputs);
    for (const auto& t : b_.def().tensors) {
      if (t.role == ir::TensorRole::Input) tensor_names_[t.param_index] = "input '" + t.name + "'";
      if (t.role == ir::TensorRole::Output) tensor_names_[ni + t.param_index] = "output '" + t.name + "'";
    }
    if (schedule_.blas) choose_blas();
    // A stored object is checked now, whatever the route. Not through dense()'s call_once: a
    // throw out of it passes through pthread_once, which ThreadSanitizer's interceptor does not
    // survive (it left "ignores enabled" at exit: WarmStart.CodeThatCannotBeUsedIsCompiledFromTheKnobs).
    bool stored_object = artefact && artefact->compare(0, kBlasArtefactMagic.size(), kBlasArtefactMagic) != 0 &&
                         artefact->compare(0, kContractionArtefactMagic.size(), kContractionArtefactMagic) != 0;
    if (!gemm_ && !stored_object) choose_contraction();
    if ((!gemm_ && !contraction_) || stored_object) {
      dense_ = build(true, stored_object ? artefact : nullptr);
      dense_built_ = true;
    }
  }

  void run(const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
           const ExecutionContext&) const override {
    if (gemm_ && run_gemm(*gemm_, *blas_, inputs, outputs, schedule_.threads)) return;
    if (contraction_)
      return run_contraction_plan(*contraction_, b_, inputs, outputs, schedule_.threads, blocking_, &layouts_);
    bool dense = true;
    for (const auto& v : inputs) dense = dense && dense_innermost(v);
    for (const auto& v : outputs) dense = dense && dense_innermost(v);
    // The dense variant reads its flattened inputs' rows as one: they must be a row apart.
    if (dense)
      for (int i : this->dense().flattened_inputs) dense = dense && rows_adjoin(inputs[i]);
    size_t ni = inputs.size();
    std::vector<HalideView> views(ni + outputs.size());
    bool wide = false;  // a view spans more than 32-bit offsets reach
    for (size_t i = 0; i < views.size(); ++i) {
      const TensorView& v = i < ni ? inputs[i] : outputs[i - ni];
      int bad = view_of(v, views[i]);
      if (bad >= 0)
        fail(TC_ERROR_UNSUPPORTED, "cpu backend: " + tensor_names_[i] + " dimension " + std::to_string(bad) +
                                       " has stride " + std::to_string(v.strides[bad]) +
                                       ", beyond the 32-bit strides (in elements) Halide's buffers have");
      wide = wide || span_bytes(v) > kMaxBufferBytes;
    }
    const Variant& variant = wide && !has_large_buffers(target_) ? this->wide() : dense ? this->dense() : general();
    for (int i : variant.flattened_inputs) flatten_rows(inputs[i], views[i]);
    std::vector<halide_buffer_t*> args;
    args.reserve(views.size() + variant.caller_outputs.size() + 1);
    for (size_t i = 0; i < ni; ++i) args.push_back(&views[i].buffer);
    std::vector<HalideView> snapshot_views(variant.caller_outputs.size());
    std::vector<std::vector<uint8_t>> snapshots(variant.caller_outputs.size());
    for (size_t k = 0; k < variant.caller_outputs.size(); ++k) {
      int o = variant.caller_outputs[k];
      if (!variant.snapshot_caller_outputs) {
        args.push_back(&views[ni + o].buffer);
        continue;
      }
      snapshot_of(outputs[o], views[ni + o], tensor_names_[ni + o], snapshots[k], snapshot_views[k]);
      args.push_back(&snapshot_views[k].buffer);
    }
    uint32_t sink_value = 0;
    halide_buffer_t sink{};
    sink.host = reinterpret_cast<uint8_t*>(&sink_value);
    sink.type = halide_type_of<uint32_t>();
    if (variant.has_sink) args.push_back(&sink);
    for (size_t i = 0; i < outputs.size(); ++i) args.push_back(&views[ni + i].buffer);
    CallOutcome outcome = variant.fn->call(args, schedule_.threads);
    if (outcome.status != 0) report(variant, outcome);
  }

  // A BLAS library's workers spin after a call, OpenBLAS's for about 0.1 s; libtc's own pool's
  // for 0.2 ms (runtime/thread_pool.cpp).
  std::chrono::milliseconds spins_after_run() const override {
    return std::chrono::milliseconds{gemm_ ? 100 : 1};
  }

  std::string describe() const override {
    std::string text = "backend: cpu (Halide, compiled for " + target_.to_string() + ")\nthreads: " +
                       std::to_string(schedule_.threads) + "\ncaches: " + host_memory_levels().describe() + "\n";
    if (schedule_.blas) text += "blas: " + blas_note_ + "\n";
    if (!contraction_ && !contraction_note_.empty()) text += "contraction: " + contraction_note_ + "\n";
    if (gemm_) return text + "schedule (for layouts BLAS does not take, compiled on first use):\n" + route_schedule_;
    if (contraction_) return text + "schedule:\n" + contraction_lines();
    return text + large_note_ + "schedule:\n" + dense().schedule;
  }

  // Lowered again (no machine code is made), once: a kernel from the cache has no pipeline.
  std::string code() const override {
    std::call_once(code_once_, [&] {  // a throw leaves it to the next call
      quiet_halide_reporter();
      LoweredPipeline p = lower_pipeline(true);
      apply_schedule(p, schedule_, target_);
      code_ = lowered_loop_nest(outputs(p), arguments(p), target_, b_.def().name);
      if (gemm_) code_ = "// cpu.blas: " + blas_note_ + "; the pipeline below runs only for layouts BLAS does not take\n" + code_;
      if (contraction_)
        code_ = "// " + contraction_lines("// ") + "// the pipeline below (cpu.contract=0) does not run\n" + code_;
    });
    return code_;
  }

  std::string artefact() const override {
    if (gemm_) return kBlasArtefactMagic + gemm_->describe() + "\n";
    if (contraction_) return kContractionArtefactMagic + contraction_lines();
    const Variant& d = dense();
    return kArtefactMagic + fingerprint(b_, target_, d.schedule) + " " + d.fn->entry_def() + "\n" + d.fn->object();
  }

 private:
  // `target`: target_, or the wide variant's (with large_buffers).
  Variant build(bool dense, const std::string* artefact = nullptr, const Halide::Target* target = nullptr) const {
    const Halide::Target& t = target ? *target : target_;
    Variant v;
    LoweredPipeline p = lower_pipeline(dense);
    v.schedule = apply_schedule(p, schedule_, t);
    std::vector<Halide::Argument> args = arguments(p);
    for (size_t o = 0; o < p.caller_outputs.size(); ++o)
      if (p.caller_outputs[o].defined()) v.caller_outputs.push_back(static_cast<int>(o));
    std::vector<Halide::Func> outs = outputs(p);
    v.has_sink = p.sink_stage >= 0;
    v.snapshot_caller_outputs = !v.caller_outputs.empty() && outs.size() > 1;
    v.gather_checks = p.gather_checks;
    v.flattened_inputs = p.flattened_inputs;
    v.buffers = buffer_sizes(p);
    if (artefact) {
      StoredObject stored = object_of(*artefact, fingerprint(b_, t, v.schedule));
      v.fn = std::make_unique<JitFunction>(std::move(stored.object), stored.entry_def);
      return v;
    }
    // A kept object is its entry's def name, a line break, then the object.
    kept_objects().use_or_make(
        kept_key(dense, t, v.schedule),
        [&](const std::string& kept) {
          size_t line = kept.find('\n');
          if (line == std::string::npos) fail(TC_ERROR_INTERNAL, "cpu backend: a kept object without its entry's name");
          v.fn = std::make_unique<JitFunction>(kept.substr(line + 1), kept.substr(0, line));
        },
        [&] {
          v.fn = std::make_unique<JitFunction>(outs, args, t, b_.def().name);
          return v.fn->entry_def() + "\n" + v.fn->object();
        });
    return v;
  }

  // The key of a variant's object among the kept ones: everything its code depends on, that is
  // libtc's build (its code generation), Halide's version, the pipeline's fingerprint (the def's
  // canonical text with the sizes, the target, the schedule), which variant, and the options it
  // read. "" where libtc's build is unknown: nothing is kept then.
  std::string kept_key(bool dense, const Halide::Target& t, const std::string& schedule) const {
    const std::string build = library_build();
    if (build.empty()) return "";
    return kArtefactMagic + build + "\n" + target_key() + "\n" + (dense ? "dense" : "any layout") + "\n" +
           options_text_ + fingerprint(b_, t, schedule);
  }

  // The pipeline's outputs: the checks sink first (so every check runs before anything is
  // written), then the def's outputs.
  static std::vector<Halide::Func> outputs(const LoweredPipeline& p) {
    std::vector<Halide::Func> outs;
    if (p.sink_stage >= 0) outs.push_back(p.stages[p.sink_stage].func);
    for (int s : p.output_stage) outs.push_back(p.stages[s].func);
    return outs;
  }

  // The pipeline's arguments: the inputs, then the outputs whose entry values it reads.
  static std::vector<Halide::Argument> arguments(const LoweredPipeline& p) {
    std::vector<Halide::Argument> args;
    for (const auto& in : p.inputs) args.push_back(in);
    for (const auto& o : p.caller_outputs)
      if (o.defined()) args.push_back(o);
    return args;
  }

  // cpu.blas: the GEMM plan and the library, when the def is a plain product and a CBLAS loads;
  // else the pipeline, and the description says why.
  void choose_blas() {
    std::string why;
    std::optional<GemmPlan> plan = plan_gemm(b_, &why);
    const Cblas* lib = plan ? cblas(&why) : nullptr;
    if (!lib) {
      blas_note_ = "not used (" + why + "): the pipeline computes it";
      return;
    }
    gemm_ = plan;
    blas_ = lib;
    blas_note_ = plan->describe() + " from " + lib->path;
    LoweredPipeline p = lower_pipeline(true);  // the fallback's schedule, described without compiling it
    route_schedule_ = apply_schedule(p, schedule_, target_);
  }

  // cpu.contract: the contraction route, where the def is one contraction (contraction.h) and
  // neither cpu.contract=0 nor cpu.fma=0 (its sums are fused multiply-adds) keeps it on the
  // pipeline; the description says which, and why not where it was asked for.
  void choose_contraction() {
    if (schedule_.contract == 0) return;
    std::string why;
    std::optional<ContractionPlan> plan = plan_contraction(b_, &why);
    if (plan && !schedule_.fma) plan.reset(), why = "cpu.fma=0 asks for a multiply and an add per step";
    if (plan && schedule_.contract < 0) {
      std::string pipeline = pipeline_reason(*plan, b_);
      if (!pipeline.empty()) {
        contraction_note_ = "not used by default (" + pipeline + "; cpu.contract=1 takes the route)";
        return;
      }
    }
    if (!plan) {
      if (schedule_.contract == 1) contraction_note_ = "not used (" + why + "): the pipeline computes it";
      return;
    }
    contraction_ = plan;
    const ScalarType type = plan->stages[0].type;
    blocking_ = default_blocking(type, host_memory_levels(), schedule_.threads);
    if (schedule_.blocks[0] > 0) blocking_.mc = schedule_.blocks[0];  // cpu.blocks, each size given
    if (schedule_.blocks[1] > 0) blocking_.kc = schedule_.blocks[1];
    if (schedule_.blocks[2] > 0) blocking_.nc = schedule_.blocks[2];
    contraction_note_ = describe_gett(type, blocking_);
  }

  // "C: contraction route: float32; batch -; M i=64; ...; micro-kernel ...": the route's
  // schedule, a line per stage, each after `prefix`.
  std::string contraction_lines(const std::string& prefix = "") const {
    std::string text;
    for (const Contraction& c : contraction_->stages)
      text += (text.empty() ? "" : prefix) + b_.def().tensors[static_cast<size_t>(c.o)].name +
              ": contraction route: " + c.describe(b_.def()) + "; " + contraction_note_ + "\n";
    return text;
  }

  // The variant for dense tensors: compiled (or taken from the stored object) at construction,
  // or on the cpu.blas route by the first call whose layout BLAS does not take.
  const Variant& dense() const {
    if (!dense_built_) std::call_once(dense_once_, [&] { dense_ = build(true); });  // a throw leaves it to the next call
    return dense_;
  }

  LoweredPipeline lower_pipeline(bool dense) const {
    // No statement is both: a flattened convolution reads its input contiguously along its
    // output's rows, which a transposed one does not.
    std::vector<RowFlattening> flattening =
        plan_row_flattening(b_, schedule_.flatten, target_.natural_vector_size(Halide::UInt(8)));
    return lower(b_, dense, checked_, schedule_.pack, schedule_.fma, flattening,
                 plan_transposed_results(b_, schedule_.transpose));
  }

  // The variant for tensors whose innermost stride is not 1, compiled on first use.
  const Variant& general() const {
    std::call_once(general_once_, [&] { general_ = build(false); });  // a throw leaves it to the next call
    return general_;
  }

  // The variant for views that span more than 32-bit offsets reach (a small tensor strided
  // across a large allocation), where no tensor of the kernel needs 64-bit offsets itself: any
  // layout, large_buffers, compiled on first use.
  const Variant& wide() const {
    std::call_once(wide_once_, [&] {  // a throw leaves it to the next call
      Halide::Target t = target_.with_feature(Halide::Target::LargeBuffers);
      wide_ = build(false, nullptr, &t);
    });
    return wide_;
  }

  // `copy`: a view of a copy (into `bytes`) of what `view` spans, strides kept, for reading an
  // output's entry values while the pipeline writes the output itself.
  void snapshot_of(const TensorView& v, const HalideView& view, const std::string& what, std::vector<uint8_t>& bytes,
                   HalideView& copy) const {
    copy = view;
    copy.buffer.dim = copy.dims;
    int64_t n = span_bytes(v);
    if (n <= 0) return;
    try {
      bytes.assign(view.buffer.host, view.buffer.host + n);
    } catch (const std::bad_alloc&) {
      fail(TC_ERROR_NO_MEMORY, "cpu backend: out of memory running '" + b_.def().name + "': " + std::to_string(n) +
                                   " bytes for a copy of the entry values of " + what + " could not be allocated");
    }
    copy.buffer.host = bytes.data();
  }

  // Every stage's whole extent in bytes, and its tensor (an allocation that fails is reported
  // by the tensor closest in size). None is past kMaxBufferBytes without large_buffers: the
  // constructor chose it from the tensors' sizes, and every stage holds one of them.
  std::vector<std::pair<int64_t, std::string>> buffer_sizes(const LoweredPipeline& p) const {
    std::vector<std::pair<int64_t, std::string>> sizes;
    for (const Stage& s : p.stages) sizes.emplace_back(s.bytes(), s.tensor);
    return sizes;
  }

  [[noreturn]] void report(const Variant& v, const CallOutcome& outcome) const {
    const std::string& def = b_.def().name;
    if (!outcome.thread_failure.empty())
      fail(TC_ERROR_NO_MEMORY, "cpu backend: '" + def + "' could not start its worker threads (threads=" +
                                   std::to_string(schedule_.threads) + "): " + outcome.thread_failure +
                                   "; set a smaller 'threads' option");
    if (outcome.failed_allocation != 0)
      fail(TC_ERROR_NO_MEMORY, "cpu backend: out of memory running '" + def + "': " +
                                   std::to_string(outcome.failed_allocation) + " bytes for " +
                                   buffer_named(v, outcome.failed_allocation) + " could not be allocated");
    if (outcome.error.find("tc-gather:") != std::string::npos) fail(TC_ERROR_RUNTIME, explain(v, outcome.error));
    fail(TC_ERROR_INTERNAL, "cpu backend: '" + def + "' failed at run time (a libtc bug: please report it with the " +
                                "program; backend=reference runs it)" + halide_detail(outcome.error));
  }

  // The tensor whose internal buffer is closest in size to a failed allocation of `bytes`.
  static std::string buffer_named(const Variant& v, size_t bytes) {
    const std::pair<int64_t, std::string>* best = nullptr;
    for (const auto& b : v.buffers)
      if (!b.second.empty() && (best == nullptr || std::llabs(b.first - static_cast<int64_t>(bytes)) <
                                                       std::llabs(best->first - static_cast<int64_t>(bytes))))
        best = &b;
    return best ? "'" + best->second + "'" : "an internal buffer";
  }

  // "... tc-gather:<k>:<index>;<v0>;<v1>..." -> the located message of check k.
  std::string explain(const Variant& v, const std::string& error) const {
    size_t at = error.find("tc-gather:");
    size_t colon = at == std::string::npos ? at : error.find(':', at + 10);
    if (colon != std::string::npos) {
      size_t k = std::strtoul(error.c_str() + at + 10, nullptr, 10);
      if (k < v.gather_checks.size()) {
        const GatherCheck& g = v.gather_checks[k];
        std::vector<std::string> values = split_values(error.substr(colon + 1));  // the index, then the variables
        return b_.def().out_of_bounds(g.loc, g.access, g.write, g.tensor, values[0], g.dim, g.extent, g.vars,
                                      std::vector<std::string>(values.begin() + 1, values.end()));
      }
    }
    return "cpu backend: '" + b_.def().name + "' failed a bounds check at run time";
  }

  // "7;1;0\n" -> {"7", "1", "0"}: the runtime pads and ends the message with whitespace.
  static std::vector<std::string> split_values(const std::string& s) {
    std::vector<std::string> out(1);
    for (char c : s) {
      if (c == ';') out.emplace_back();
      else if (!std::isspace(static_cast<unsigned char>(c))) out.back() += c;
    }
    return out;
  }

  ir::BoundDef b_;
  CpuSchedule schedule_;
  bool checked_;
  Halide::Target target_;
  std::string options_text_;  // the options the compile read: part of a kept object's key
  std::vector<std::string> tensor_names_;  // inputs then outputs, in parameter order: "input 'A'"
  std::optional<GemmPlan> gemm_;  // the cpu.blas route, when taken
  const Cblas* blas_ = nullptr;
  std::string blas_note_;
  std::string route_schedule_;  // on the route: the fallback pipeline's schedule, for describe()
  std::optional<ContractionPlan> contraction_;  // the cpu.contract route, when taken
  GettOptions blocking_;
  mutable GettLayouts layouts_;  // the route's layouts by the strides of the calls so far
  std::string contraction_note_;
  bool dense_built_ = false;  // by the constructor (else by dense(), once)
  mutable std::once_flag dense_once_;
  mutable Variant dense_;
  mutable std::once_flag general_once_;
  mutable Variant general_;
  mutable std::once_flag wide_once_;
  mutable Variant wide_;
  std::string large_note_;  // describe()'s line where the kernel has large_buffers
  mutable std::once_flag code_once_;
  mutable std::string code_;
};

// Halide's compile time grows faster than linearly with the number of stages (about 5 s for
// 300 chained statements): beyond this many statements the cpu backend refuses, and says so.
constexpr size_t kMaxStatements = 128;

class CpuBackend : public Backend {
 public:
  const char* name() const override { return "cpu"; }
  const char* summary() const override { return "Halide pipeline compiled for this machine"; }
  bool accepts(DLDeviceType t) const override { return t == kDLCPU; }
  bool runs_on_host() const override { return true; }
  Target default_target() const override { return Target{}; }
  std::string target_key(const Target&) const override { return cpu::target_key(); }
  const std::vector<Knob>& knobs() const override { return cpu_knobs(); }
  std::unique_ptr<Kernel> compile(const ir::BoundDef& bound, const Target&, const KnobValues& options) const override {
    quiet_halide_reporter();
    size_t n = bound.def().stmts.size();
    if (n > kMaxStatements)
      fail(TC_ERROR_UNSUPPORTED, "'" + bound.def().name + "' has " + std::to_string(n) +
                                     " statements; the cpu backend compiles at most " + std::to_string(kMaxStatements) +
                                     " per def (compile time grows quickly with pipeline length): use backend=reference");
    return std::make_unique<CpuKernel>(bound, options);
  }
  std::unique_ptr<Kernel> load(const ir::BoundDef& bound, const Target&, const KnobValues& options,
                               const std::string& artefact) const override {
    quiet_halide_reporter();
    return std::make_unique<CpuKernel>(bound, options, &artefact);
  }
  std::string shared_code_key(const Target& target) const override { return "halide runtime for " + target_key(target); }
  bool has_shared_code(const Target&) const override { return has_runtime_object(); }
  void use_shared_code(const Target&, const std::string& code) const override { use_runtime_object(code); }
  std::string shared_code(const Target&) const override { return runtime_object(); }
};

}  // namespace

const Backend& backend() {
  static const CpuBackend kBackend;
  return kBackend;
}

}  // namespace tc::backends::cpu
