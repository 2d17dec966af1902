// cuda_backend.cpp — see cuda_backend.h. tc_run here: the tensors' devices checked against the
// kernel's mode (host memory when emulated, one GPU's memory otherwise), temporaries and the
// fault record allocated zeroed, the launches run in order, a recorded bad index reported as
// TC_ERROR_RUNTIME with the message the other backends give.
#include "backends/cuda/cuda_backend.h"

#include <isl/schedule.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>

#include "backends/cuda/blas/cublas.h"
#include "backends/cuda/contraction/gemm.h"
#include "backends/cuda/driver.h"
#include "backends/cuda/emulate.h"
#include "backends/cuda/mapping.h"
#include "backends/cuda/nvrtc.h"
#include "backends/cuda/print_cuda.h"
#include "backends/cuda/profile/instrumentation.h"
#include "backends/cuda/profile/profile.h"
#include "backends/cuda/resources.h"
#include "backends/cuda/rows/row_plan.h"
#include "backends/cuda/schedule.h"
#include "runtime/validate.h"
#include "support/error.h"

namespace tc::backends::cuda {

using runtime::TensorView;

namespace {

// What the contraction route computes: convolutions as implicit GEMMs (affine subscripts),
// float16 and bfloat16 products on tensor cores.
ContractionRules route_rules() {
  ContractionRules rules;
  rules.affine = true;
  rules.half = true;
  return rules;
}

// A route knob's values for the tuner: `values` where the def takes the route, else none.
std::function<std::vector<std::string>(const ir::BoundDef&)> on_the_route(std::vector<std::string> values) {
  return [values = std::move(values)](const ir::BoundDef& b) {
    return plan_contraction(b, nullptr, route_rules()) ? values : std::vector<std::string>{};
  };
}

std::vector<Knob> declare() {
  Knob emulate{"cuda.emulate", KnobKind::Boolean, "0",
               "run the generated CUDA C on the host instead (compiled by $CXX, every block and thread in turn, on "
               "kDLCPU tensors): a slow debugging and testing aid that needs no GPU"};
  Knob arch{"cuda.arch", KnobKind::Text, "auto",
            "the GPU architecture NVRTC compiles for: auto (the device's, which needs its driver) or sm_NN (compiles "
            "with no GPU present)"};
  arch.choices = {"auto", "sm_80", "sm_90"};
  arch.text_name = "sm_NN";
  Knob fusion{"cuda.fusion", KnobKind::Choice, "max",
              "how isl's scheduler fuses statements: max (wherever the dependences allow: fewer launches), min (each "
              "strongly connected component a kernel of its own) or preserve3 (max where it keeps each statement's "
              "parallel loops, up to 3, that min finds; else min)"};
  fusion.choices = {"max", "min", "preserve3"};
  fusion.domain = fixed_values({"max", "min", "preserve3"});
  Knob tile{"cuda.tile", KnobKind::Sizes, "auto",
            "tile sizes of each kernel's outermost band, outermost loop first (loops past the list, and auto: 32; "
            "auto cuts the loops on the y and z thread axes to the block's threads there where the band would "
            "have fewer blocks than an H100's 132 SMs)", true};
  tile.min = 1;
  tile.max = 4096;
  tile.max_items = 8;
  tile.domain = fixed_values({"auto", "8", "16", "64", "16x16", "8x32", "32x8", "64x16", "4x8x32"});
  Knob block{"cuda.block", KnobKind::Sizes, "auto",
             "threads per block along x, y, z (x: the innermost mapped loop), at most 1024 in all; auto: what the "
             "register tiles want (a tile's size over its copies along each axis: 8x8 at the default tiles), else 32x8",
             true};
  block.min = 1;
  block.max = 1024;
  block.domain = fixed_values({"auto", "32", "64", "128", "256", "32x4", "16x16", "32x16", "64x4", "128x2"});
  Knob grid{"cuda.grid", KnobKind::Sizes, "auto",
            "blocks along x, y, z; auto: one per tile of each mapped loop. The mapped loops stride over the grid and "
            "the block, so every grid and block computes the same result",
            true};
  grid.min = 1;
  grid.max = 2147483647;
  grid.domain = fixed_values({"auto", "16", "64", "256", "16x16", "64x8"});
  Knob registers{"cuda.private", KnobKind::Boolean, "1",
                 "keep a reduction's element in a register over an innermost loop that updates only it (one load "
                 "and one store instead of one each per iteration)"};
  registers.domain = fixed_values({"1", "0"});
  Knob regtile{"cuda.regtile", KnobKind::Sizes, "auto",
                "register tiles of kernels with a reduction: the values of the thread loops along x, y, z each thread "
                "computes at once, in registers (1: none); auto: 8x8 where a kernel has two thread axes or more and "
                "reuses an operand across one of them, with no gather (4x4 with several reduction loops), fewer "
                "along an axis with fewer values than 8 threads of those copies take (the fewest that cover it: 1, 2, "
                "4 or 8; along x 1, 4 or 8). "
                "The tiles of a register-tiled band's members cuda.tile leaves out: 8 per copy along x and y, 1 for "
                "its other parallel members",
                true};
  regtile.min = 1;
  regtile.max = 16;
  regtile.max_items = 3;
  regtile.domain = fixed_values({"auto", "1", "4x4", "8x4", "4x8", "8x8", "2x8", "8"});
  Knob fma{"cuda.fma", KnobKind::Boolean, "1",
           "a float32/float64 += reduction whose right-hand side is one product accumulates with fused multiply-adds "
           "(one rounding a step, as cpu.fma and BLAS do; 0: the reference's bits)"};
  fma.domain = fixed_values({"1", "0"});
  Knob shared{"cuda.shared", KnobKind::Boolean, "1",
              "copy each tile's reused reads of a read-only tensor into shared memory (by all of a block's threads, "
              "between __syncthreads), up to 48 KiB per block"};
  shared.domain = fixed_values({"0", "1"});
  Knob unroll{"cuda.unroll", KnobKind::Integer, "0",
              "unroll (by isl's AST generator) the point loops no thread is mapped to whose tile size is at most this "
              "(0: none)"};
  unroll.min = 0;
  unroll.max = 64;
  unroll.domain = fixed_values({"0", "4", "8", "32"});
  Knob reduction{"cuda.reduction", KnobKind::Choice, "none",
                 "how a reduction's loop is run: none (each thread reduces its own elements), or split across the "
                 "block's threads along x and combined by a tree (tree: shuffles within each warp, then the warps' "
                 "totals through shared memory) or by atomics (atomic); with tree and atomic, cuda.block's x must be "
                 "a multiple of 32, and where it is more than 32, its y times z at most 15"};
  reduction.choices = {"none", "tree", "atomic"};
  reduction.domain = fixed_values({"none", "tree", "atomic"});
  Knob schedule_time{"cuda.schedule_time", KnobKind::Integer, std::to_string(kScheduleTimeLimit.count()),
                     "milliseconds isl's scheduler may take for each attempt (the fusion asked for, then min fusion); "
                     "past the last, the statements run in their original order on one thread (correct, slow)"};
  schedule_time.min = 1;
  schedule_time.max = 3600000;
  Knob contract{"cuda.contract", KnobKind::Boolean, "auto",
                "compute a def made of sums of products of two tensors (any index order, batch indices, float or "
                "double, then pointwise statements: a bias, a ReLU) with the contraction route's GEMM-structured "
                "kernels instead of isl's schedule: one launch per product, block tiles (cuda.gemm_tile) of 256 "
                "threads, operands copied from their layouts into a ring of shared-memory buffers (cuda.stages; "
                "cp.async on sm_80 and later), 128-bit shared loads, each thread's outputs in registers; cuda.tile, "
                "cuda.block, cuda.grid, cuda.regtile, cuda.shared and cuda.unroll do not apply to it. auto: 1 where "
                "the def is such a product",
                true};
  contract.domain = on_the_route({"auto", "0"});
  std::string float_tiles;
  for (const GemmTile& t : gemm_tiles(ScalarType::Float32)) float_tiles += (float_tiles.empty() ? "" : ", ") + t.text();
  Knob gemm_tile{"cuda.gemm_tile", KnobKind::Text, "auto",
                 "the contraction route's block tile MxNxK (outputs along M and N, steps of the sum per stage): "
                 "float32 " + float_tiles + "; float64 the same but 128x128x8; float16 and bfloat16 128x128x32, "
                 "128x128x16, 64x64x16 (tensor cores; TF32: 128x128x16, 64x64x8). auto: of those that give at least 132 blocks (an H100's SMs), the largest whose tiles the "
                 "output fills within 5% as well as the best; else the fewest waves of blocks times outputs a "
                 "thread, then the best filled",
                 true};
  gemm_tile.text_name = "MxNxK";
  // The tuner tries the tiles of the def's type, where the def takes the route.
  gemm_tile.domain = [](const ir::BoundDef& b) {
    std::vector<std::string> names;
    if (std::optional<ContractionPlan> plan = plan_contraction(b, nullptr, route_rules())) {
      names.push_back("auto");
      for (const GemmTile& t : gemm_tiles(plan->stages[0].type)) names.push_back(t.text());
    }
    return names;
  };
  Knob stages{"cuda.stages", KnobKind::Integer, "3",
              "the contraction route's shared-memory buffers per operand: while the block computes on one, the "
              "copies into the others are in flight (2: double buffering); fewer where that many do not fit a "
              "block's 48 KiB of static shared memory (float64's 128x64x8 and 64x128x8 fit 3)"};
  stages.min = 2;
  stages.max = 4;
  stages.domain = on_the_route({"3", "2", "4"});
  Knob blocks{"cuda.gemm_blocks", KnobKind::Integer, "auto",
              "the contraction route's blocks an SM its kernels are compiled for (__launch_bounds__' minimum): "
              "ptxas keeps each thread within 65536 / (threads x blocks) registers (128 for 2 blocks of 256 "
              "threads), spilling what does not fit, so that that many blocks run on an SM at once; auto: no "
              "bound (ptxas's choice: the 128x128x8 float32 tile takes about 150 registers, one block an SM)",
              true};
  blocks.min = 1;
  blocks.max = 8;
  blocks.domain = on_the_route({"auto", "2"});
  Knob split{"cuda.split_k", KnobKind::Integer, "auto",
             "the contraction route's parts of each sum (split-K): each part's blocks sum a run of the K steps, then a "
             "second launch adds the parts in order, applies the epilogue and writes the output; auto: where the "
             "tile gives fewer than 132 blocks, enough parts to make up the difference, each of at least 128 steps, "
             "at most 16, but where a block is alone on its SM (the 128x128x8 float32 tile), the fewest parts with "
             "the fewest waves of 132 blocks per part (1: none; never with cuda.fma=0 or float16 and bfloat16)",
             true};
  split.min = 1;
  split.max = 64;
  split.domain = on_the_route({"auto", "1", "2", "4", "8"});
  Knob tf32{"cuda.tf32", KnobKind::Boolean, "0",
            "float32 contractions on the route through tensor cores (mma.sync m16n8k8): each operand value rounded "
            "to TF32 (10 bits of mantissa, as PyTorch's allow_tf32), the sums in float32; about 1e-3 relative "
            "error; tiles of 128x128x16 (256 threads) or 64x64x8 (128), no split sums; never with cuda.fma=0 (not searched by the "
            "tuner: it changes the results)"};
  Knob blas{"cuda.blas", KnobKind::Boolean, "0",
            "compute a def that is one plain matrix product (batched or not, either operand and the result in "
            "either order; float, double, float16 or bfloat16) with cuBLAS (cublasGemmStridedBatchedEx, loaded at "
            "run time), or followed by a bias along O's contiguous index and/or fmax(x, 0) with cuBLASLt "
            "(cublasLtMatmul's epilogue), instead of the generated kernel, which runs where "
            "cuBLAS cannot be loaded, the kernel is emulated or cuda.fma=0 asks for the reference's bits "
            "(tc_kernel_describe says why); the tuner measures both"};
  blas.domain = [](const ir::BoundDef& b) {
    return plan_blas(b) ? std::vector<std::string>{"0", "1"} : std::vector<std::string>{};
  };
  Knob rowwise{"cuda.rowwise", KnobKind::Boolean, "auto",
               "compute a row-wise def (softmax, layernorm: statements over the same leading indices, each with at "
               "most one more index, along the row, which reads move along in their last dimension; at least one "
               "a reduction along the row) as one kernel instead of isl's schedule: blockDim.y rows a block, "
               "blockDim.x threads a row (cuda.block; x a multiple of 32), each statement in turn, a reduction "
               "split across the row's threads and combined by a tree; cuda.tile, cuda.regtile, cuda.shared, "
               "cuda.unroll and cuda.reduction do not apply to it. auto: 1 where the def is row-wise, a row has at "
               "least 32 values and no reduction reads a matrix shared by the rows (a matrix product's), and the "
               "contraction route does not take it; float sums stay off it with cuda.fma=0",
               true};
  rowwise.domain = [](const ir::BoundDef& b) {
    return plan_rows(b, true) ? std::vector<std::string>{"auto", "0"} : std::vector<std::string>{};
  };
  return {emulate, arch, fusion, tile, block, grid, registers, regtile, fma, shared, unroll, reduction, schedule_time,
          contract, gemm_tile, stages, blocks, split, rowwise, tf32, blas};
}

const std::vector<Knob>& cuda_knobs() {
  static const std::vector<Knob> kKnobs = declare();
  return kKnobs;
}

constexpr int64_t kMaxThreadsPerBlock = 1024;

// cuda.reduction=tree|atomic and the row route split a reduction across the threads along x,
// which must be whole warps (shuffles, and a warp's lanes sharing y and z); where there are
// several warps along x, each group of them (one per y and z) synchronises with a hardware
// barrier of its own, and CUDA has 15 besides __syncthreads'. Why `block` cannot ("" where it
// can).
constexpr int64_t kNamedBarriers = 15;
std::string lanes_refusal(const std::vector<int64_t>& block) {
  if (block[0] % kWarpSize != 0) return "its x must be a multiple of " + std::to_string(kWarpSize) + " (whole warps)";
  int64_t groups = 1;
  for (size_t a = 1; a < block.size(); ++a) groups *= block[a];
  if (block[0] > kWarpSize && groups > kNamedBarriers)
    return "with x > " + std::to_string(kWarpSize) + ", its y times z must be at most " + std::to_string(kNamedBarriers) +
           " (one hardware barrier per row of threads along x)";
  return "";
}

void check_reduction_block(const KnobValues& o, const std::vector<int64_t>& block, const std::string& splitter) {
  std::string why = lanes_refusal(block);
  if (!why.empty()) fail(TC_ERROR_INVALID_ARGUMENT, splitter + ", but 'cuda.block' is '" + o.text("cuda.block") + "': " + why);
}

// Why the row route cannot run with cuda.block = `block` ("" where it can; empty: auto): it
// runs blockDim.y rows a block, so z must be 1.
std::string row_block_refusal(std::vector<int64_t> block) {
  if (block.empty()) return "";
  block.resize(3, 1);
  if (block[2] != 1) return "the row route runs blockDim.y rows a block, so its z must be 1";
  return lanes_refusal(block);
}

// The generated code and how it is launched, from a bound def and the options.
struct Generated {
  CudaSource source;
  std::vector<LaunchDims> dims;  // per launch
  std::string route;             // the contraction route's lines of the description ("" off it)
};

// The contraction route's plan where the def takes it (cuda.contract), else nullopt.
std::optional<ContractionPlan> contraction_route(const ir::BoundDef& bound, const KnobValues& o) {
  if (!o.is_auto("cuda.contract") && !o.flag("cuda.contract")) return std::nullopt;
  ContractionRules rules = route_rules();
  rules.half = o.flag("cuda.fma");  // tensor cores' float32 sums are not the reference's bits
  return plan_contraction(bound, nullptr, rules);
}

Generated generate_contraction(const ir::BoundDef& bound, const ContractionPlan& plan, const KnobValues& o,
                               bool statement_marks) {
  GemmOptions options;
  options.tf32 = o.flag("cuda.tf32") && o.flag("cuda.fma");
  const GemmMath math(plan.stages[0].type, options.tf32);
  if (!o.is_auto("cuda.gemm_tile")) {
    const std::string name = o.text("cuda.gemm_tile");
    options.tile = gemm_tile_named(name, math);
    if (!options.tile) {
      std::string allowed;
      for (const GemmTile& t : gemm_tiles(math)) allowed += (allowed.empty() ? "" : ", ") + t.text();
      fail(TC_ERROR_INVALID_ARGUMENT, "option 'cuda.gemm_tile' cannot be '" + name + "' for a " +
                                          tc::name(plan.stages[0].type) + (math.tf32 ? " (cuda.tf32=1)" : "") +
                                          " contraction (allowed: auto, " + allowed + ")");
    }
  }
  options.stages = static_cast<int>(o.integer("cuda.stages"));
  options.blocks_per_sm = o.is_auto("cuda.gemm_blocks") ? 0 : static_cast<int>(o.integer("cuda.gemm_blocks"));
  options.split = o.is_auto("cuda.split_k") ? 0 : o.integer("cuda.split_k");
  options.fma = o.flag("cuda.fma");
  options.statement_marks = statement_marks;
  GemmKernels k = print_gemm(bound, plan, options);
  Generated g;
  g.source = std::move(k.source);
  g.dims = std::move(k.dims);
  for (size_t s = 0; s < plan.stages.size(); ++s)
    g.route += "contraction route: " + plan.stages[s].describe(bound.def()) + "; tile " + k.shapes[s].tile.text() + ", " +
               (GemmMath(plan.stages[s].type, options.tf32).tensor_cores()
                    ? std::string("tensor cores (mma.sync") + (options.tf32 ? ", TF32" : "") + "), "
                    : std::string()) +
               std::to_string(k.shapes[s].stages) + " stages" +
               (k.shapes[s].blocks_per_sm > 0 ? ", registers for " + std::to_string(k.shapes[s].blocks_per_sm) +
                                                    " blocks an SM"
                                              : "") +
               (k.shapes[s].split > 1 ? ", the sum split in " + std::to_string(k.shapes[s].split) + " parts" : "") + "\n";
  if (g.source.scratch_bytes > 0) g.route += "scratch: " + std::to_string(g.source.scratch_bytes) + " bytes\n";
  return g;
}

// The row route's plan where the def takes it (cuda.rowwise), else nullopt.
// Under auto, a def the route would take with a cuda.block it cannot run goes to isl's schedule,
// which runs any block; cuda.rowwise=1 makes that block an error.
std::optional<RowPlan> row_route(const ir::BoundDef& bound, const KnobValues& o, const std::vector<int64_t>& block) {
  if (!o.is_auto("cuda.rowwise") && !o.flag("cuda.rowwise")) return std::nullopt;
  std::optional<RowPlan> plan = plan_rows(bound, o.flag("cuda.fma"));
  if (plan && o.is_auto("cuda.rowwise") &&
      (plan->shared_matrix || plan->longest() < kWarpSize || !row_block_refusal(block).empty()))
    return std::nullopt;
  return plan;
}

// The row route's block: cuda.block (x a multiple of 32, as many rows as y, z 1), or auto: a
// row's values over its threads, 4 a thread where there are rows for every SM, else 1 (at most
// 1024 threads), and 128 threads a block at least (several rows of 32 or 64 threads).
std::array<unsigned, 3> row_block(const RowPlan& plan, const KnobValues& o, const std::vector<int64_t>& block) {
  if (!block.empty()) {
    std::string why = row_block_refusal(block);
    if (!why.empty())
      fail(TC_ERROR_INVALID_ARGUMENT, "option 'cuda.rowwise' is 1, which runs each row on the threads along x, but "
                                      "'cuda.block' is '" + o.text("cuda.block") + "': " + why);
    return {static_cast<unsigned>(block[0]), static_cast<unsigned>(block.size() > 1 ? block[1] : 1), 1};
  }
  int64_t values = plan.row_count() >= kBlocksWanted ? (plan.longest() + 3) / 4 : plan.longest();
  int64_t x = std::clamp<int64_t>((values + kWarpSize - 1) / kWarpSize * kWarpSize, kWarpSize, kMaxThreadsPerBlock);
  return {static_cast<unsigned>(x), static_cast<unsigned>(x >= 128 ? 1 : 128 / x), 1};
}

Generated generate_rows(const ir::BoundDef& bound, const RowPlan& plan, const KnobValues& o,
                        const std::vector<int64_t>& block, bool statement_marks) {
  PrintOptions print;
  print.checked = o.flag("checked");
  print.fma = o.flag("cuda.fma");
  print.statement_marks = statement_marks;
  print.index32 = index32_fits(bound, {}, 1);
  Generated g;
  g.source = print_rows(bound, plan, print);
  LaunchDims d;
  d.block = row_block(plan, o, block);
  int64_t blocks = (plan.row_count() + d.block[1] - 1) / d.block[1];
  if (!o.is_auto("cuda.grid")) blocks = o.get("cuda.grid").sizes[0];
  d.grid[0] = static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, 2147483647));
  g.dims.push_back(d);
  g.route = "row route: " + plan.describe() + "; " + std::to_string(d.block[1]) + " rows a block, " +
            std::to_string(d.block[0]) + " threads a row\n";
  return g;
}

Generated generate(const ir::BoundDef& bound, const KnobValues& o, bool statement_marks = false) {
  std::vector<int64_t> block = o.is_auto("cuda.block") ? std::vector<int64_t>{} : o.get("cuda.block").sizes;
  int64_t threads = 1;
  for (int64_t n : block) threads *= n;
  if (threads > kMaxThreadsPerBlock)
    fail(TC_ERROR_INVALID_ARGUMENT, "option 'cuda.block' is '" + o.text("cuda.block") + "': " + std::to_string(threads) +
                                        " threads per block, more than CUDA's " + std::to_string(kMaxThreadsPerBlock));
  if (std::optional<ContractionPlan> plan = contraction_route(bound, o))
    return generate_contraction(bound, *plan, o, statement_marks);
  if (std::optional<RowPlan> plan = row_route(bound, o, block)) return generate_rows(bound, *plan, o, block, statement_marks);
  std::vector<int64_t> grid = o.is_auto("cuda.grid") ? std::vector<int64_t>{} : o.get("cuda.grid").sizes;
  MappingOptions mapping;
  if (!o.is_auto("cuda.tile")) mapping.tile = o.get("cuda.tile").sizes;
  mapping.shared = o.flag("cuda.shared");
  mapping.unroll = o.get("cuda.unroll").x;
  mapping.lanes = o.text("cuda.reduction") != "none";
  if (!block.empty())
    for (size_t a = 0; a < mapping.block.size(); ++a) mapping.block[a] = a < block.size() ? block[a] : 1;
  if (mapping.lanes)
    check_reduction_block(o, block.empty() ? std::vector<int64_t>(kDefaultBlock.begin(), kDefaultBlock.end()) : block,
                          "option 'cuda.reduction' is '" + o.text("cuda.reduction") +
                              "', which splits reductions across the threads along x");
  mapping.regtile_auto = o.is_auto("cuda.regtile") && o.flag("cuda.private");
  if (!o.is_auto("cuda.regtile") && o.flag("cuda.private")) mapping.regtile = o.get("cuda.regtile").sizes;
  std::string fusion_name = o.text("cuda.fusion");
  Fusion fusion = fusion_name == "min" ? Fusion::Min : fusion_name == "preserve3" ? Fusion::Preserve3 : Fusion::Max;
  PolyModel model(bound);
  mapping.reads = model.reads();
  for (size_t st = 0; st < bound.def().stmts.size(); ++st)
    if (bound.has_unproven_read(bound.def().stmts[st])) mapping.unproven_statements.insert("S" + std::to_string(st));
  isl_schedule* mapped =
      tile_and_mark(compute_schedule(model, fusion, std::chrono::milliseconds(o.integer("cuda.schedule_time"))), mapping);
  Generated g;
  try {
    PrintOptions print;
    print.checked = o.flag("checked");
    print.registers = o.flag("cuda.private");
    print.atomic_lanes = o.text("cuda.reduction") == "atomic";
    print.fma = o.flag("cuda.fma");
    print.statement_marks = statement_marks;
    int64_t max_tile = kLargestAutoTile;
    for (int64_t t : mapping.tile) max_tile = std::max(max_tile, t);
    print.index32 = index32_fits(bound, grid, max_tile);
    g.source = print_cuda(bound, model, mapped, print);
  } catch (...) {
    isl_schedule_free(mapped);
    throw;
  }
  isl_schedule_free(mapped);
  for (const Launch& l : g.source.launches) g.dims.push_back(launch_dims(l, grid, block));
  return g;
}

// A compiled (not emulated) kernel's artefact, what the compilation cache keeps: this
// format's first line, then the architecture, the fault record's size (and the scratch
// buffer's, where there is one), each launch (kernel,
// axes, grid, block) and each run-time check, then (on the contraction route) the route's
// lines of the description, the CUDA C text, the cubin and ptxas's
// resource report, each after a line giving its length in bytes (the report is absent from
// artefacts written before it: the kernel then describes no resources).
constexpr const char* kArtefactMagic = "libtc-cuda-kernel 1";

std::string artefact_of(const std::string& arch, const Generated& g, const Cubin& cubin) {
  std::string out = std::string(kArtefactMagic) + "\narch " + arch + "\nfault_words " +
                    std::to_string(g.source.fault_words) + "\n";
  if (g.source.scratch_bytes > 0) out += "scratch_bytes " + std::to_string(g.source.scratch_bytes) + "\n";
  for (size_t k = 0; k < g.source.launches.size(); ++k) {
    const Launch& l = g.source.launches[k];
    const LaunchDims& d = g.dims[k];
    out += "launch " + l.kernel + " " + std::to_string(l.grid_axes) + " " + std::to_string(l.block_axes);
    for (unsigned n : d.grid) out += " " + std::to_string(n);
    for (unsigned n : d.block) out += " " + std::to_string(n);
    out += "\n";
  }
  for (const GatherCheck& c : g.source.checks)
    out += "check " + std::to_string(c.stmt) + " " + std::to_string(c.read) + " " + std::to_string(c.dim) + " " +
           std::to_string(c.write ? 1 : 0) + "\n";
  if (!g.route.empty()) out += "route " + std::to_string(g.route.size()) + "\n" + g.route;
  out += "source " + std::to_string(g.source.text.size()) + "\n" + g.source.text;
  out += "cubin " + std::to_string(cubin.bytes.size()) + "\n" + cubin.bytes;
  out += "ptxas " + std::to_string(cubin.ptxas_log.size()) + "\n" + cubin.ptxas_log;
  return out;
}

// Reads an artefact back (throws TC_ERROR_CACHE when it is not one this build wrote).
struct ArtefactReader {
  const std::string& text;
  size_t at = 0;

  [[noreturn]] static void bad(const std::string& why) {
    fail(TC_ERROR_CACHE, "not a cuda kernel artefact of this libtc (" + why + ")");
  }
  std::string line() {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) bad("truncated");
    std::string l = text.substr(at, end - at);
    at = end + 1;
    return l;
  }
  // The number after "<label> " on a line of its own.
  size_t number(const std::string& label) {
    std::string l = line();
    if (l.rfind(label + " ", 0) != 0) bad("no " + label);
    std::string digits = l.substr(label.size() + 1);
    if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos)
      bad("a bad " + label + " line");
    return std::stoul(digits);
  }
  std::string bytes(const std::string& label) {
    size_t n = number(label);
    if (at + n > text.size()) bad("truncated " + label);
    std::string out = text.substr(at, n);
    at += n;
    return out;
  }
};

void read_artefact(const std::string& artefact, std::string& arch, Generated& g, Cubin& cubin) {
  ArtefactReader r{artefact};
  if (r.line() != kArtefactMagic) ArtefactReader::bad("another format");
  std::string l = r.line();
  if (l.rfind("arch ", 0) != 0) ArtefactReader::bad("no arch");
  arch = l.substr(5);
  g.source.fault_words = r.number("fault_words");
  if (artefact.compare(r.at, 14, "scratch_bytes ") == 0) g.source.scratch_bytes = r.number("scratch_bytes");
  for (;;) {
    size_t mark = r.at;
    l = r.line();
    std::istringstream in(l);
    std::string word;
    in >> word;
    if (word == "launch") {
      Launch launch;
      LaunchDims d;
      in >> launch.kernel >> launch.grid_axes >> launch.block_axes >> d.grid[0] >> d.grid[1] >> d.grid[2] >> d.block[0] >>
          d.block[1] >> d.block[2];
      if (!in) ArtefactReader::bad("a bad launch line");
      g.source.launches.push_back(launch);
      g.dims.push_back(d);
    } else if (word == "check") {
      GatherCheck c{};
      int write = 0;
      in >> c.stmt >> c.read >> c.dim >> write;
      if (!in) ArtefactReader::bad("a bad check line");
      c.write = write != 0;
      g.source.checks.push_back(c);
    } else {
      r.at = mark;
      break;
    }
  }
  if (artefact.compare(r.at, 6, "route ") == 0) g.route = r.bytes("route");
  g.source.text = r.bytes("source");
  cubin.bytes = r.bytes("cubin");
  if (r.at < artefact.size()) cubin.ptxas_log = r.bytes("ptxas");
}

class CudaKernel : public Kernel {
 public:
  // Compiles, or (artefact not null: what artefact() gave) takes the code from the artefact.
  CudaKernel(const ir::BoundDef& bound, const KnobValues& o, const std::string* artefact = nullptr)
      : b_(bound), options_(o), emulate_(o.flag("cuda.emulate")), fusion_(o.text("cuda.fusion")),
        tile_(o.text("cuda.tile")) {
    choose_blas(o);
    if (artefact != nullptr) {
      if (emulate_) fail(TC_ERROR_CACHE, "an emulated cuda kernel has no artefact");
      read_artefact(*artefact, arch_, generated_, cubin_);
      memory_ = call_memory();
      return;
    }
    generated_ = generate(bound, o);
    memory_ = call_memory();
    if (emulate_) {
      emulated_ = std::make_unique<EmulatedKernels>(generated_.source);
      return;
    }
    arch_ = o.text("cuda.arch");
    bool named = arch_.rfind("sm_", 0) == 0 && arch_.size() >= 5 && arch_.find_first_not_of("0123456789", 3) == std::string::npos;
    if (arch_ != "auto" && !named)
      fail(TC_ERROR_INVALID_ARGUMENT, "option 'cuda.arch' cannot be '" + arch_ + "' (allowed: auto, or sm_NN: sm_80, sm_90, ...)");
    if (arch_ == "auto") arch_ = Driver::get().arch(0);
    cubin_ = Nvrtc::get().compile_cubin(generated_.source.text, b_.def().name + ".cu", arch_);
  }

  ~CudaKernel() override {
    for (auto& [device, loaded] : modules_) {
      try {
        Driver::get().unload_module(device, loaded.module);
      } catch (const Error&) {  // the context may be gone at exit: nothing to release then
      }
    }
  }

  void run(const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
           const ExecutionContext& context) const override {
    if (emulate_) return run_emulated(inputs, outputs, context);
    run_on_device(inputs, outputs, context);
  }

  // The launches, and for a cubin each kernel's resources (resources.h): registers, spills,
  // shared memory and theoretical occupancy at its block.
  std::string describe() const override {
    std::string out = std::string("backend: cuda (") +
                      (emulate_ ? "emulated on the host" : arch_ + " cubin, " + std::to_string(cubin_.bytes.size()) + " bytes") +
                      ")\n" + blas_note_ +
                      (generated_.route.empty() ? "fusion: " + fusion_ + "\ntile: " + tile_ + "\n" : generated_.route) +
                      "launches:\n";
    std::map<std::string, KernelResources> resources = parse_ptxas_log(cubin_.ptxas_log);
    for (size_t k = 0; k < generated_.source.launches.size(); ++k) {
      const std::string& name = generated_.source.launches[k].kernel;
      const auto& block = generated_.dims[k].block;
      out += "  " + name + " grid " + dims_text(generated_.dims[k].grid) + " block " + dims_text(block) + "\n";
      auto it = resources.find(name);
      if (it != resources.end())
        out += "    " + resources_text(arch_, it->second, static_cast<long long>(block[0]) * block[1] * block[2]) + "\n";
    }
    return out;
  }

  std::string code() const override { return generated_.source.text; }

  // The instrumented build is made on the first call (the text printed again with statement
  // marks: the same text with them removed, which is checked) and kept.
  std::string profile(const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                      const std::string& gpu_name) const override {
    if (!emulate_)
      fail(TC_ERROR_UNSUPPORTED, "a profile runs the kernel on the host: compile it with cuda.emulate=1 (this one is a " +
                                     arch_ + " cubin)");
    const profile::Gpu& gpu = profile::gpu_named(gpu_name);
    const profile::Profiler& profiler = profiler_for_profile();
    std::vector<std::vector<char>> storage;
    std::vector<void*> params = host_params(inputs, outputs, storage);
    std::vector<profile::Region> tensors;
    for (size_t t = 0; t < b_.def().tensors.size(); ++t) {
      auto begin = reinterpret_cast<uintptr_t>(params[t]);
      tensors.push_back({begin, begin + tensor_bytes(t)});
    }
    if (generated_.source.scratch_bytes > 0) {  // global memory too
      auto begin = reinterpret_cast<uintptr_t>(params.back());
      tensors.push_back({begin, begin + generated_.source.scratch_bytes});
    }
    return profiler.run(params, tensors, generated_.dims, gpu,
                        profile::occupancy_on(gpu, generated_.source.text, generated_.source.launches, generated_.dims));
  }

  std::string artefact() const override { return emulate_ ? std::string() : artefact_of(arch_, generated_, cubin_); }

 private:
  // The name of the tensor at position t of Def::tensors, as messages give it.
  std::string what(size_t t) const {
    const auto& decl = b_.def().tensors[t];
    const char* role = decl.role == ir::TensorRole::Input ? "input" : decl.role == ir::TensorRole::Output ? "output" : "temporary";
    return std::string(role) + " '" + decl.name + "'";
  }

  // The views of every tensor of the def (temporaries: none), Def::tensors order.
  std::vector<const TensorView*> views(const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs) const {
    std::vector<const TensorView*> out;
    for (const auto& decl : b_.def().tensors) {
      if (decl.role == ir::TensorRole::Input) out.push_back(&inputs[decl.param_index]);
      else if (decl.role == ir::TensorRole::Output) out.push_back(&outputs[decl.param_index]);
      else out.push_back(nullptr);
    }
    return out;
  }

  size_t tensor_bytes(size_t t) const {
    return static_cast<size_t>(b_.tensors[t].num_elements()) * bytes(b_.tensors[t].type);
  }

  const profile::Profiler& profiler_for_profile() const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!profiler_) {
      Generated marked = generate(b_, options_, true);
      if (profile::without_statement_marks(marked.source.text) != generated_.source.text)
        fail(TC_ERROR_INTERNAL, "cuda profile: the text printed again for the profile differs from the kernel's (isl's "
                                "scheduling stopped at its time limit differently? raise cuda.schedule_time)");
      profiler_ = std::make_unique<profile::Profiler>(marked.source);
    }
    return *profiler_;
  }

  // Host buffers of every tensor (Def::tensors order: the views' memory where dense, else a
  // dense copy in `storage`; temporaries zeroed), then the fault record (zeroed, in `storage`
  // after the tensors'), then the scratch buffer where the text has one.
  std::vector<void*> host_params(const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                                 std::vector<std::vector<char>>& storage) const {
    std::vector<const TensorView*> v = views(inputs, outputs);
    storage.assign(v.size() + 2, {});
    std::vector<void*> params(v.size());
    for (size_t t = 0; t < v.size(); ++t) {
      if (v[t] != nullptr && v[t]->device.device_type != kDLCPU)
        fail(TC_ERROR_SHAPE, what(t) + " is in " + runtime::device_name(v[t]->device.device_type) +
                                 " memory, but this cuda kernel was compiled with cuda.emulate=1 and runs on the host "
                                 "(kDLCPU tensors)");
      if (v[t] != nullptr && runtime::is_dense(*v[t])) {
        params[t] = v[t]->data;
        continue;
      }
      storage[t].assign(std::max<size_t>(tensor_bytes(t), 1), 0);  // temporaries start at 0, as on every backend
      if (v[t] != nullptr) runtime::copy_dense(*v[t], storage[t].data(), true);
      params[t] = storage[t].data();
    }
    storage[v.size()].assign(std::max<size_t>(generated_.source.fault_words, 1) * sizeof(unsigned long long), 0);
    params.push_back(storage[v.size()].data());
    if (generated_.source.scratch_bytes > 0) {
      storage.back().assign(generated_.source.scratch_bytes, 0);
      params.push_back(storage.back().data());
    }
    return params;
  }

  void run_emulated(const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                    const ExecutionContext& context) const {
    if (context.stream != nullptr)
      fail(TC_ERROR_INVALID_ARGUMENT, "stream must be NULL for a cuda kernel compiled with cuda.emulate=1, which runs on the host");
    std::vector<const TensorView*> v = views(inputs, outputs);
    std::vector<std::vector<char>> storage;
    std::vector<void*> params = host_params(inputs, outputs, storage);
    emulated_->run(params, generated_.dims);
    for (size_t t = 0; t < v.size(); ++t)
      if (v[t] != nullptr && !storage[t].empty() && b_.def().tensors[t].role == ir::TensorRole::Output)
        runtime::copy_dense(*v[t], storage[t].data(), false);
    std::vector<unsigned long long> fault(generated_.source.fault_words, 0);
    std::memcpy(fault.data(), storage[v.size()].data(), fault.size() * sizeof(unsigned long long));
    report(fault);
  }

  void run_on_device(const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                     const ExecutionContext& context) const {
    std::vector<const TensorView*> v = views(inputs, outputs);
    int device = -1;
    for (size_t t = 0; t < v.size(); ++t) {
      if (v[t] == nullptr) continue;
      if (v[t]->device.device_type != kDLCUDA)
        fail(TC_ERROR_SHAPE, what(t) + " is in " + runtime::device_name(v[t]->device.device_type) +
                                 " memory, but cuda kernels read and write GPU memory (kDLCUDA); cuda.emulate=1 runs "
                                 "on host tensors");
      if (device >= 0 && v[t]->device.device_id != device)
        fail(TC_ERROR_SHAPE, what(t) + " is on CUDA device " + std::to_string(v[t]->device.device_id) +
                                 ", the tensors before it on device " + std::to_string(device) + ": one kernel runs on one device");
      device = v[t]->device.device_id;
      if (!runtime::is_dense(*v[t]))
        fail(TC_ERROR_UNSUPPORTED, what(t) + " is not contiguous (row-major): the cuda backend reads and writes dense "
                                             "tensors (make it contiguous first)");
    }
    if (device < 0) device = 0;
    const Driver& driver = Driver::get();  // after the tensors: a host tensor is the caller's error, driver or not
    if (blas_) {
      const BlasCall& call = *blas_;
      // cuBLAS's workspace: a block of the pool on the caller's stream, freed after the call.
      unsigned long long workspace = 0;
      try {
        workspace = driver.allocate(device, Cublas::kWorkspaceBytes, context.stream);
        driver.with_context(device, [&] {
          Cublas::get().gemm(call, device, context.stream, v[static_cast<size_t>(call.x)]->data,
                             v[static_cast<size_t>(call.y)]->data, v[static_cast<size_t>(call.c)]->data,
                             call.bias >= 0 ? v[static_cast<size_t>(call.bias)]->data : nullptr,
                             reinterpret_cast<void*>(workspace));
        });
      } catch (const Error& e) {  // named as the generated kernels' failures are: the def, what ran
        if (workspace) driver.release(device, workspace, context.stream);
        fail(e.status(), b_.def().name + ": the library route's " + call.describe(b_.def()) + ": " + e.what());
      }
      driver.release(device, workspace, context.stream);
      return;
    }
    const std::vector<void*>& functions = functions_on(device);
    // The kernels' parameters: the tensors, the fault record, the scratch buffer where the text
    // has one. What the call allocates (the fault record, the temporaries, the scratch buffer)
    // is one block of the device's pool, its zeroed part first (memory_), so that a call costs
    // one allocation, at most one memset and one free besides its launches.
    const CallMemory& memory = memory_;
    const bool scratch = generated_.source.scratch_bytes > 0;
    const size_t fault_at = v.size();
    std::vector<unsigned long long> pointers(v.size() + (scratch ? 2 : 1), 0);
    unsigned long long block = 0;
    if (memory.bytes > 0) {
      block = driver.allocate(device, memory.bytes, context.stream);
      if (memory.zeroed > 0) driver.zero(device, block, memory.zeroed, context.stream);
    }
    for (size_t t = 0; t < v.size(); ++t)
      pointers[t] = v[t] != nullptr ? reinterpret_cast<unsigned long long>(v[t]->data) : block + memory.offsets[t];
    if (memory.faults) pointers[fault_at] = block;
    if (scratch) pointers.back() = block + memory.scratch_at;
    std::vector<void*> args;
    for (auto& p : pointers) args.push_back(&p);
    try {
      for (size_t k = 0; k < functions.size(); ++k)
        driver.launch(device, functions[k], generated_.dims[k].grid.data(), generated_.dims[k].block.data(),
                      context.stream, args.data());
    } catch (...) {
      if (block) driver.release(device, block, context.stream);
      throw;
    }
    if (!memory.faults) {
      if (block) driver.release(device, block, context.stream);
      return;  // queued; nothing to read back
    }
    // The fault record read back (which waits for the stream).
    std::vector<unsigned long long> fault(generated_.source.fault_words, 0);
    driver.copy_to_host(device, fault.data(), block, fault.size() * sizeof(unsigned long long), context.stream);
    driver.release(device, block, context.stream);
    report(fault);
  }

  // Where a call's own device memory goes in its one block: the fault record (where the text
  // has checks) and the temporaries whose first values matter (a reduction without '!' into
  // one: BoundDef::overwrites) in the first `zeroed` bytes, then the other temporaries, then
  // the scratch buffer; each piece 256-byte aligned, as cuMemAlloc's own blocks are. Laid out
  // once, with the kernel: it depends on the def and the text only.
  struct CallMemory {
    bool faults = false;
    std::vector<size_t> offsets;  // per tensor of the def: a temporary's offset in the block
    size_t scratch_at = 0;        // where the text has a scratch buffer
    size_t zeroed = 0, bytes = 0;
  };

  CallMemory call_memory() const {
    constexpr size_t kAlign = 256;
    auto place = [&](size_t& end, size_t n) {
      size_t at = (end + kAlign - 1) / kAlign * kAlign;
      end = at + std::max<size_t>(n, 1);
      return at;
    };
    const auto& tensors = b_.def().tensors;
    CallMemory m;
    m.offsets.assign(tensors.size(), 0);
    size_t end = 0;
    m.faults = !generated_.source.checks.empty();  // without checks, the kernels never touch the record
    if (m.faults) place(end, generated_.source.fault_words * sizeof(unsigned long long));
    for (int zeroed = 1; zeroed >= 0; --zeroed) {
      for (size_t t = 0; t < tensors.size(); ++t)
        if (tensors[t].role == ir::TensorRole::Temporary && b_.overwrites(t) != static_cast<bool>(zeroed))
          m.offsets[t] = place(end, tensor_bytes(t));
      if (zeroed) m.zeroed = end;
    }
    if (generated_.source.scratch_bytes > 0) m.scratch_at = place(end, generated_.source.scratch_bytes);
    m.bytes = end;
    return m;
  }

  // The kernel's functions on `device`, its module loaded there on first need.
  const std::vector<void*>& functions_on(int device) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = modules_.find(device);
    if (it != modules_.end()) return it->second.functions;
    const Driver& driver = Driver::get();
    Loaded loaded;
    loaded.module = driver.load_module(device, cubin_.bytes);
    for (const Launch& l : generated_.source.launches) loaded.functions.push_back(driver.function(device, loaded.module, l.kernel));
    return modules_.emplace(device, std::move(loaded)).first->second.functions;
  }

  // TC_ERROR_RUNTIME for a recorded bad index: the read, the index, the dimension and its
  // extent, and the statement's variables there (as the cpu and reference backends say it).
  void report(const std::vector<unsigned long long>& fault) const {
    if (fault[0] == 0 || fault[0] > generated_.source.checks.size()) return;
    const GatherCheck& g = generated_.source.checks[fault[0] - 1];
    const ir::Stmt& st = b_.def().stmts[g.stmt];
    const ir::Read& r = g.write ? st.write : st.reads[g.read];
    std::vector<std::string> values;
    for (size_t i = 0; i < st.vars.size(); ++i) values.push_back(std::to_string(static_cast<int64_t>(fault[2 + i])));
    fail(TC_ERROR_RUNTIME, b_.def().out_of_bounds(r.loc, r.text, g.write, b_.def().tensors[static_cast<size_t>(r.tensor)].name,
                                                  std::to_string(static_cast<int64_t>(fault[1])), static_cast<int>(g.dim),
                                                  b_.tensors[static_cast<size_t>(r.tensor)].shape[g.dim], st.vars, values));
  }

  struct Loaded {
    void* module = nullptr;
    std::vector<void*> functions;  // per launch
  };

  // cuda.blas=1: the cuBLAS call where the def is one plain product and cuBLAS loads (else the
  // generated kernel runs), and the description's line saying which and why.
  void choose_blas(const KnobValues& o) {
    if (!o.flag("cuda.blas")) return;
    const std::string head = "library route (cuda.blas): ";
    std::string why;
    std::optional<BlasCall> call = plan_blas(b_, &why);
    if (!call) {
      blas_note_ = head + "not taken: " + why + "\n";
    } else if (emulate_) {
      blas_note_ = head + "not taken: the emulation runs on the host, cuBLAS on a GPU\n";
    } else if (!o.flag("cuda.fma")) {
      blas_note_ = head + "not taken: cuda.fma=0 asks for the reference's bits, which cuBLAS's sums are not\n";
    } else {
      try {
        const Cublas& lib = Cublas::get();
        blas_ = call;
        blas_note_ = head + call->describe(b_.def()) + ", cuBLAS " + lib.version() + " (" + lib.path() +
                     "); the launches below are not run\n";
      } catch (const Error& e) {
        blas_note_ = head + "not taken: " + e.what() + "\n";
      }
    }
  }

  ir::BoundDef b_;
  KnobValues options_;  // to print the text again for a profile
  bool emulate_;
  std::optional<BlasCall> blas_;
  std::string blas_note_;
  std::string fusion_, tile_;
  Generated generated_;
  CallMemory memory_;  // what run_on_device allocates, laid out with the kernel
  std::unique_ptr<EmulatedKernels> emulated_;
  mutable std::unique_ptr<profile::Profiler> profiler_;  // made by the first profile()
  std::string arch_;
  Cubin cubin_;
  mutable std::mutex mutex_;
  mutable std::map<int, Loaded> modules_;  // per device ordinal
};

// GPU memory in a device's primary context, on its default stream (the tuner's outputs).
class CudaMemory : public DeviceMemory {
 public:
  CudaMemory(int device, size_t bytes)
      : device_(device), bytes_(bytes), pointer_(Driver::get().allocate(device, std::max<size_t>(bytes, 1), nullptr)) {}
  ~CudaMemory() override {
    try {
      Driver::get().release(device_, pointer_, nullptr);
    } catch (const Error&) {  // the context may be gone at exit: nothing to release then
    }
  }
  char* data() const override { return reinterpret_cast<char*>(pointer_); }
  void zero() override { Driver::get().zero(device_, pointer_, std::max<size_t>(bytes_, 1), nullptr); }
  void read(char* host) const override { Driver::get().copy_to_host(device_, host, pointer_, bytes_, nullptr); }
  void write(const char* host) override {
    Driver::get().copy_from_host(device_, pointer_, host, bytes_, nullptr);
    Driver::get().synchronize(device_, nullptr);  // `host` may go away when this returns
  }

 private:
  int device_;
  size_t bytes_;
  unsigned long long pointer_;
};

class CudaBackend : public Backend {
 public:
  const char* name() const override { return "cuda"; }
  const char* summary() const override {
    return "isl-scheduled CUDA C, compiled by NVRTC and launched through the CUDA driver (cuda.emulate=1: run on the host)";
  }
  bool accepts(DLDeviceType t) const override { return t == kDLCUDA || t == kDLCPU; }  // kDLCPU: emulated kernels
  bool runs_on_host() const override { return false; }
  Target default_target() const override { return Target{DLDevice{kDLCUDA, 0}}; }
  std::string target_key(const Target& target) const override {
    std::string key = "cuda";
    try {
      const Driver& d = Driver::get();
      key += " " + d.arch(target.device.device_id) + " driver " + std::to_string(d.version());
    } catch (const Error&) {
      key += " (no driver)";
    }
    try {
      key += " nvrtc " + Nvrtc::get().version();
    } catch (const Error&) {
      key += " (no nvrtc)";
    }
    return key;
  }
  const std::vector<Knob>& knobs() const override { return cuda_knobs(); }
  std::unique_ptr<Kernel> compile(const ir::BoundDef& bound, const Target&, const KnobValues& options) const override {
    return std::make_unique<CudaKernel>(bound, options);
  }
  std::unique_ptr<Kernel> load(const ir::BoundDef& bound, const Target&, const KnobValues& options,
                               const std::string& artefact) const override {
    return std::make_unique<CudaKernel>(bound, options, &artefact);
  }
  std::unique_ptr<DeviceMemory> allocate(const DLDevice& device, size_t bytes) const override {
    if (device.device_type != kDLCUDA) return Backend::allocate(device, bytes);
    return std::make_unique<CudaMemory>(device.device_id, bytes);
  }
  void wait(const DLDevice& device) const override {
    if (device.device_type == kDLCUDA) Driver::get().synchronize(device.device_id, nullptr);
  }
  void copy_to_host(const TensorView& tensor, char* host) const override {
    if (tensor.device.device_type != kDLCUDA) return Backend::copy_to_host(tensor, host);
    if (!runtime::is_dense(tensor))
      fail(TC_ERROR_UNSUPPORTED, "a GPU tensor that is not contiguous (row-major) cannot be copied to the host");
    Driver::get().copy_to_host(tensor.device.device_id, host, reinterpret_cast<unsigned long long>(tensor.data),
                               static_cast<size_t>(tensor.num_elements()) * bytes(tensor.type), nullptr);
  }
};

}  // namespace

const Backend& backend() {
  static const CudaBackend kBackend;
  return kBackend;
}

}  // namespace tc::backends::cuda
