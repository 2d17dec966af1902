// lower.h — a bound def as a Halide pipeline: one Func per version of each tensor a statement
// writes (so a statement that reads its own LHS reads the version before it: the snapshot
// semantics for free), pure definitions for '=' statements, update definitions over an RDom
// for reductions (with the identity first for '!'), the caller's values where an output is
// read before it is written or accumulated into, zeros where nothing writes it, and one
// pure copy per output that writes the caller's buffer. Reads that may leave the tensor (in
// an untaken ?: branch, or gathers) are clamped, and with `checked` a gather out of range is
// a run-time error. A scatter is a Scatter stage: its previous version (or zeros for '+=!')
// as the pure definition, then one update over an RDom of all its variables whose left-hand
// side is the computed subscripts, clamped into the tensor (checked first with `checked`,
// else the update is skipped where a subscript is out of bounds). A statement computed over
// flattened rows (flatten_rows.h) or transposed (transpose_result.h) is a stage over those
// positions, then a pointwise copy back into the tensor's order. It records what the
// scheduler needs; it does not schedule.
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <vector>

#include <Halide.h>

#include "backends/cpu/flatten_rows.h"
#include "ir/bind.h"

namespace tc::backends::cpu {

struct Use {
  int consumer = -1;       // stage index
  bool pointwise = false;  // read at exactly the consumer's own pure variables
  bool in_loop = false;    // read inside the consumer's reduction loop (once per reduction step)
  // How many leading TC subscripts are exactly the consumer's own leading variables, in order
  // (all of them when pointwise): `mx(n)` read by `e(n,d)` has 1, so the consumer's rows need
  // only the same rows of the producer (the scheduler's row blocks).
  int leading = 0;
  // Every subscript after the first ranges over the producer's whole dimension, so a block of
  // the consumer's rows reads whole rows of the producer: a stage tiled along its own extents
  // can then be computed in each block (a read of one column would shift its tiles out of
  // bounds).
  bool whole_rows = false;
};

// Halide's code addresses a buffer with 32-bit offsets unless its target has large_buffers
// (64-bit offsets): the cpu backend takes that only for a kernel with a buffer past this size
// (cpu_backend.cpp), whose kept temporaries past it get a size known only when they are
// allocated (schedule/scheduler.cpp: Halide 14 sizes constant allocations in 32 bits).
constexpr int64_t kMaxBufferBytes = INT32_MAX;

// Bytes of a box of `extents` elements of `element_bytes` each, saturating at INT64_MAX.
inline int64_t buffer_bytes(int64_t element_bytes, const std::vector<int64_t>& extents) {
  int64_t n = element_bytes;
  for (int64_t e : extents) n = e != 0 && n > INT64_MAX / e ? INT64_MAX : n * e;
  return n;
}

struct Stage {
  enum class Kind {
    Initial,    // an output's contents on entry (caller's values, zeros where never written)
    Pointwise,  // '=' over the whole tensor, or a reduction with an empty domain
    Reduction,  // a reduction over the whole tensor: pure init + one update over `rdom`
    Partial,    // a statement that writes part of the tensor: updates over the written box
    Output,     // the copy into the caller's output buffer
    Pack,       // a copy of a reduction's operand stored with another dimension innermost
    Scatter,    // a scatter: pure init + one update at computed subscripts, which must stay
                // serial (several points may update one element): only the init is scheduled
  };
  Kind kind = Kind::Pointwise;
  Halide::Func func;
  Halide::Type type;
  std::string tensor;             // the TC tensor this stage holds a version (or copy) of; "" for checks
  std::vector<Halide::Var> vars;  // Halide order: vars[0] is TC's last (contiguous) index
  std::vector<int64_t> extents;   // per var
  std::vector<int64_t> mins;      // per var, where the domain starts; empty: at 0
  int64_t min(size_t d) const { return mins.empty() ? 0 : mins[d]; }
  int64_t bytes() const { return buffer_bytes(std::max(1, type.bytes()), extents); }
  // Holds run-time checks, so it is computed over its whole domain (through the checks sink)
  // even where no output needs it: a bad index is an error wherever the reference meets it.
  bool forced = false;
  int stmt = -1;                  // defining statement, -1 for Initial and Output
  std::vector<Use> uses;
  // Reduction and Scatter: the update's domain, rdom[0] the statement's last (reduction)
  // variable.
  Halide::RDom rdom;
  // Reduction only:
  int contiguous_rvar = -1;       // rdom dimension the reads are contiguous in, when they are
                                  // contiguous in no pure variable (dot-product reductions)
  int block_var = -1;             // var whose iterations share the vector reads (register block)
  bool fused_multiply_add = false;  // a += reduction of one product, as acc = fma(a, b, acc) (cpu.fma)
  // A reduction over flattened rows (flatten_rows.h): the input rows' length Win, its vars[0]
  // the position h·Win + w and vars[1] (h) of extent 1; 0 where not flattened.
  int64_t flattened_row = 0;
  // A reduction computed transposed (transpose_result.h): vars[0] is the statement's
  // second-last written variable, vars[1] its last.
  bool transposed = false;
  // A float min=/max= reduction computed on integer keys in the floats' order (lower.cpp,
  // ordered_key): its Func is integer, and every read of it converts back to the float.
  bool ordered_keys = false;
  // Pack only: the var (Halide order) stored innermost.
  int packed_var = -1;
  // Scatter only: the outermost RDom dimension that is exactly one of the written subscripts
  // (no two of its values write one element), or -1; the update runs in parallel over it when
  // it is the RDom's outermost dimension (schedule/register_blocks.cpp).
  int scatter_parallel_rvar = -1;
};

// A subscript checked at run time (not proven by binding): the generated code reports
// "tc-gather:<number>:<index>" and the kernel turns it into a located message.
struct GatherCheck {
  lang::SourceLoc loc;
  std::string access;  // source text
  std::string tensor;
  bool write = false;  // a scatter's written subscript ("writes ... out of bounds")
  int dim = 0;
  int64_t extent = 0;
  std::vector<std::string> vars;  // the statement's loop variables, reported with their values
};

struct LoweredPipeline {
  std::vector<Halide::ImageParam> inputs;          // per def input, in parameter order
  std::vector<Halide::ImageParam> caller_outputs;  // per def output; defined when its entry values are read
  std::vector<int> output_stage;                   // per def output: its Output stage
  std::vector<Stage> stages;
  std::vector<GatherCheck> gather_checks;
  // Inputs (parameter positions) a stage reads over flattened rows: the generated code takes
  // them with their innermost dimension as long as their last two (rows Win apart).
  std::vector<int> flattened_inputs;
  // With checks: a 0-d uint32 Func reading every forced stage over its whole domain, compiled
  // as the pipeline's first output, so that the checks run before any statement (its value
  // means nothing); -1 when there is nothing to force.
  int sink_stage = -1;
};

// dense_innermost: every tensor's last dimension has stride 1 (the fast variant). pack: read
// a reduction's transposed operand from a copy (a Pack stage; the cpu.pack knob). fma: a
// float32/float64 += reduction of one product accumulates with fused multiply-adds (cpu.fma).
// flattening: the statements computed over flattened rows (plan_row_flattening; only with
// dense_innermost); transposed: those computed transposed (plan_transposed_results).
LoweredPipeline lower(const ir::BoundDef& bound, bool dense_innermost, bool checked, bool pack, bool fma,
                      const std::vector<RowFlattening>& flattening = {}, const std::vector<int>& transposed = {});

}  // namespace tc::backends::cpu
