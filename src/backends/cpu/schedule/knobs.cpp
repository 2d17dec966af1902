// knobs.cpp — the cpu.* knobs (schedule.h): their declarations, the values a tuner tries for a
// bound def, and CpuSchedule read from parsed knob values. What each value does is decided in the
// scheduler's files (scheduler.h) and on the routes (gemm_route.h, contraction/contraction.h).
#include <algorithm>
#include <thread>

#include "backends/contraction/contraction.h"
#include "backends/cpu/flatten_rows.h"
#include "backends/cpu/gemm_route.h"
#include "backends/cpu/schedule.h"
#include "backends/cpu/transpose_result.h"

namespace tc::backends::cpu {

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

// Widths: powers of two and the multiples of a 16-lane vector a register block spans (48: 3
// AVX-512 vectors); rows: powers of two up to 512, where a tile whose operand is in panels
// amortises the copy (sgemm 1024^3: 48x32 tiles 10.5 ms, 48x256 7.0).
std::vector<std::string> tiles(const ir::BoundDef& b) {
  auto [x, y] = computed_extents(b);
  std::vector<std::string> widths = powers_of_two(4, x, 256);
  for (int64_t w : {48, 96})
    if (w <= x) widths.push_back(std::to_string(w));
  std::vector<std::string> out;
  for (const auto& tx : widths)
    for (const auto& ty : powers_of_two(1, y, 512)) out.push_back(tx + "x" + ty);
  return out;
}

std::vector<Knob> declare() {
  Knob vectorize{"cpu.vectorize", KnobKind::Integer, "auto", "vector width, in 32-bit lanes (1: scalar code)", true};
  vectorize.min = 1;
  vectorize.max = 64;
  vectorize.domain = fixed_values({"1", "4", "8", "16"});
  Knob tile{"cpu.tile", KnobKind::Pair, "auto",
            "output tile of a reduction: X along the last (contiguous) dimension, Y along the register-blocked one", true};
  tile.min = 1;
  tile.max = 4096;
  tile.domain = tiles;
  Knob unroll{"cpu.unroll", KnobKind::Integer, "auto", "rows of the register block (accumulators per vector)", true};
  unroll.min = 1;
  unroll.max = 32;
  unroll.domain = fixed_values({"1", "2", "4", "6", "8", "12"});
  Knob parallel{"cpu.parallel", KnobKind::Choice, "auto", "run the outer tile loops on the thread pool, or not", true};
  parallel.choices = {"outer", "none"};
  parallel.domain = fixed_values({"outer", "none"});
  Knob inline_{"cpu.inline", KnobKind::Boolean, "auto",
               "inline single-use pointwise producers into their consumer: auto (not into reduction loops), 1 always, 0 never",
               true};
  inline_.domain = fixed_values({"0", "1"});
  Knob pack{"cpu.pack", KnobKind::Boolean, "1",
            "copy the operand of a reduction read along no output dimension (the B of A * B^T) with the output's last "
            "dimension innermost, so the register-blocked schedule applies"};
  pack.domain = fixed_values({"1", "0"});
  Knob fuse{"cpu.fuse", KnobKind::Boolean, "1",
            "compute a reduction tile by tile inside the pointwise consumer that reads it element for element (a bias "
            "and ReLU after a matmul), instead of on its own first"};
  fuse.domain = fixed_values({"1", "0"});
  Knob kblock{"cpu.kblock", KnobKind::Integer, "auto",
              "length of the blocks of a register-blocked reduction's outermost reduction variable: a tile's "
              "accumulators are kept in a buffer and each block of the reduction passes over all its register blocks, "
              "reading one slice of the streamed operand from L1; 0: the whole reduction per register block",
              true};
  kblock.min = 0;
  kblock.max = 65536;
  kblock.domain = fixed_values({"0", "64", "128", "256"});
  Knob rows{"cpu.rows", KnobKind::Integer, "auto",
            "rows of the outermost dimension per block where row reductions (softmax, layernorm) and the stages "
            "they feed are computed together block by block, and rows of a product computed transposed "
            "(cpu.transpose) per block of its result copied back (at least 8 there: a block holds whole 8x8 tiles); "
            "0: every stage over the whole tensor",
            true};
  rows.min = 0;
  rows.max = 4096;
  rows.domain = [](const ir::BoundDef& b) {
    std::vector<std::string> v = {"0"};
    int64_t n = 1;
    for (size_t t = 0; t < b.tensors.size(); ++t)
      if (b.def().tensors[t].role != ir::TensorRole::Input && !b.tensors[t].shape.empty())
        n = std::max(n, b.tensors[t].shape.front());
    for (const auto& r : powers_of_two(1, n, 64)) v.push_back(r);
    return v;
  };
  Knob panel{"cpu.panel", KnobKind::Choice, "auto",
             "copy a register-blocked reduction's operands per tile (per reduction block with cpu.kblock) into "
             "contiguous panels in the order the block reads them: the streamed operand (read along the tile's "
             "contiguous dimension) as a panel of the tile's width, the broadcast one (a convolution's weights, A "
             "in A * B) with the register block's dimension innermost; none, streamed, broadcast or both; auto: "
             "the streamed operand when a tile reads narrow strips of its rows and they overflow L1",
             true};
  panel.choices = {"none", "streamed", "broadcast", "both"};
  panel.domain = fixed_values({"none", "streamed", "broadcast", "both"});
  Knob blas{"cpu.blas", KnobKind::Boolean, "0",
            "compute a def that is one plain (batched) matrix product with the system's CBLAS sgemm/dgemm (loaded "
            "at run time: $TC_CBLAS, else OpenBLAS, BLIS, libblas.so.3); where there is none, or the def is not such "
            "a product, the pipeline computes it"};
  blas.tried_first = true;
  blas.domain = [](const ir::BoundDef& b) {
    return plan_gemm(b) && cblas() ? std::vector<std::string>{"0", "1"} : std::vector<std::string>{};
  };
  Knob fma{"cpu.fma", KnobKind::Boolean, "1",
           "accumulate a float32/float64 += reduction whose right-hand side is one product (a matmul's, a "
           "convolution's) with fused multiply-adds, one rounding a step as BLAS does; 0: a multiply, then an add "
           "(the reference's bits)"};
  Knob flatten{"cpu.flatten", KnobKind::Boolean, "auto",
               "compute a valid convolution's output at the positions h*W + w of its input's rows (W their "
               "length), vectors running along whole input planes instead of along output rows narrower than W, "
               "where the input's rows are W apart (else the general variant runs); auto: where the output rows "
               "leave more than 10% of the vector lanes unused, the flattened rows at most 12.5%, and the "
               "reduction is long enough for the lanes saved to pay for the copy back into the output's rows",
               true};
  flatten.domain = [](const ir::BoundDef& b) {
    return plan_row_flattening(b, 1, 0).empty() ? std::vector<std::string>{} : std::vector<std::string>{"0", "1"};
  };
  Knob transpose{"cpu.transpose", KnobKind::Boolean, "auto",
                 "compute a reduction none of whose reads is contiguous in its last written variable (C(m,n) +=! "
                 "A(m,k) * B(n,k)) with its last two dimensions swapped, its vectors along the second-last variable, "
                 "and copy the result back in 8x8 tiles transposed in registers; auto: where what it copies (A's M x K "
                 "and the result's M x N) is at most half of what the untransposed form copies (B's N x K)",
                 true};
  transpose.domain = [](const ir::BoundDef& b) {
    return plan_transposed_results(b, 1).empty() ? std::vector<std::string>{} : std::vector<std::string>{"0", "1"};
  };
  Knob contract{"cpu.contract", KnobKind::Boolean, "auto",
                "compute a def made of sums of products of two tensors (any index order, batch indices, float or "
                "double) with libtc's contraction code: both operands packed into micro-panels straight from their "
                "layouts, a register-blocked micro-kernel for the vector ISA, blocks sized from the host's caches, "
                "threads over blocks of the output, then the pointwise statements that follow each product (a bias, a "
                "ReLU); later products may read earlier ones' results; 0: the pipeline; auto: 1 unless cpu.fma=0 (its "
                "sums are fused multiply-adds) or the def is matrix products with an epilogue or several of them, or one "
                "matrix product cpu.transpose=auto computes transposed, or (batched) matrix products of under 24 MFLOP "
                "or into fewer than 32 x 32 values (the pipeline's schedules for those measured faster)",
                true};
  Knob blocks{"cpu.blocks", KnobKind::Sizes, "auto",
              "the contraction route's blocks MCxKCxNC: rows of A packed at a time (a multiple of the "
              "micro-kernel's), steps of the sum, columns of B packed at a time; auto: from the host's caches "
              "(a B block in half of L2, a B micro-panel in half of L1 or 32 steps of the sum per vector lane, whichever "
              "is more, an A block in half a thread's share of L3)",
              true};
  blocks.min = 1;
  blocks.max = 1 << 20;
  blocks.max_items = 3;
  blocks.domain = [](const ir::BoundDef& b) {
    return plan_contraction(b) ? std::vector<std::string>{"auto", "4096x256x128", "4096x256x256", "8192x256x512",
                                                           "4096x512x256", "8192x384x480", "2048x1024x128"}
                               : std::vector<std::string>{};
  };
  contract.tried_first = true;
  contract.domain = [](const ir::BoundDef& b) {
    return plan_contraction(b) ? std::vector<std::string>{"1", "0"} : std::vector<std::string>{};
  };
  return {vectorize, tile, unroll,    parallel,  inline_,  pack,     fuse,    kblock,
          rows,      panel, blas, fma, flatten, transpose, contract, blocks};
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
  s.rows = o.is_auto("cpu.rows") ? -1 : static_cast<int>(o.integer("cpu.rows"));
  s.kblock = o.is_auto("cpu.kblock") ? -1 : static_cast<int>(o.integer("cpu.kblock"));
  const std::string& panel = o.text("cpu.panel");
  s.panel_auto = o.is_auto("cpu.panel");
  s.panel_streamed = panel == "streamed" || panel == "both";
  s.panel_broadcast = panel == "broadcast" || panel == "both";
  s.blas = o.flag("cpu.blas");
  s.fma = o.flag("cpu.fma");
  s.flatten = o.is_auto("cpu.flatten") ? -1 : static_cast<int>(o.integer("cpu.flatten"));
  s.transpose = o.is_auto("cpu.transpose") ? -1 : static_cast<int>(o.integer("cpu.transpose"));
  s.contract = o.is_auto("cpu.contract") ? -1 : static_cast<int>(o.integer("cpu.contract"));
  if (!o.is_auto("cpu.blocks")) {
    const std::vector<int64_t>& b = o.get("cpu.blocks").sizes;
    s.blocks = {b[0], b.size() > 1 ? b[1] : 0, b.size() > 2 ? b[2] : 0};
  }
  s.threads = static_cast<int>(o.integer("threads"));
  if (s.threads == 0) s.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return s;
}

}  // namespace tc::backends::cpu
