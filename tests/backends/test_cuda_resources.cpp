// The cuda backend's code as fast GPU code is built, checked without a GPU: the paper's kernels at
// the benchmark's sizes (bench/kernels.py), default knobs, compiled by NVRTC for sm_90 and sm_80:
// no spilled registers (ptxas), shared memory in every one (each reuses an operand), no 64-bit
// integer multiply in any innermost loop (every index fits 32 bits there); every one (each a
// contraction, the convolutions as implicit GEMMs) on the contraction route (contraction/gemm.h),
// its operands copied by cp.async; sgemm in
// blocks of 256 threads, at least 8 fused multiply-adds per shared-memory load instruction in
// its inner loop (128-bit shared loads), its sum split in parts (split-K); softmax and layernorm
// on the row route (rows/row_plan.h) without spills. Also ptxas's
// report parsed and the occupancy computed from it (resources.h). Skipped where NVRTC is not
// installed.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "backends/cuda/nvrtc.h"
#include "backends/cuda/print_cuda.h"
#include "backends/cuda/resources.h"
#include "tune/options.h"
#include "infer_test_util.h"

namespace {

using tc::backends::cuda::KernelResources;
using tc::backends::cuda::Nvrtc;
using tc_test::Inputs;

TEST(CudaResources, PtxasLogParsed) {
  const std::string log =
      "ptxas info    : 2 bytes gmem\n"
      "ptxas info    : Compiling entry function 'mm_k0' for 'sm_90'\n"
      "ptxas info    : Function properties for mm_k0\n"
      "ptxas         .     16 bytes stack frame, 12 bytes spill stores, 8 bytes spill loads\n"
      "ptxas info    : Used 135 registers, used 1 barriers, 16768 bytes smem\n"
      "ptxas info    : Function properties for mm_k1\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 32 registers\n";
  auto r = tc::backends::cuda::parse_ptxas_log(log);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r["mm_k0"].registers, 135);
  EXPECT_EQ(r["mm_k0"].stack_bytes, 16);
  EXPECT_EQ(r["mm_k0"].spill_store_bytes, 12);
  EXPECT_EQ(r["mm_k0"].spill_load_bytes, 8);
  EXPECT_EQ(r["mm_k0"].shared_bytes, 16768);
  EXPECT_EQ(r["mm_k1"].registers, 32);
  EXPECT_EQ(r["mm_k1"].shared_bytes, 0);
}

// CUDA's occupancy calculator's answers for sm_90 (64 Ki registers, 64 warps, 32 blocks, 228 KiB
// of shared memory a SM, 1 KiB of it reserved per block).
TEST(CudaResources, Occupancy) {
  KernelResources mm;
  mm.registers = 135;  // 4352 registers a warp: 15 warps fit, 7 blocks of 2
  mm.shared_bytes = 16768;
  auto o = tc::backends::cuda::occupancy("sm_90", mm, 64);
  EXPECT_EQ(o.blocks_per_sm, 7);
  EXPECT_EQ(o.warps_per_sm, 14);
  EXPECT_EQ(o.limit, "registers");
  KernelResources conv;
  conv.registers = 80;
  conv.shared_bytes = 19184;  // 233472 / (19184 + 1024) = 11 blocks; registers allow 12
  o = tc::backends::cuda::occupancy("sm_90", conv, 64);
  EXPECT_EQ(o.blocks_per_sm, 11);
  EXPECT_EQ(o.limit, "shared memory");
  o = tc::backends::cuda::occupancy("sm_80", conv, 64);  // 167936 / 20208 = 8
  EXPECT_EQ(o.blocks_per_sm, 8);
  KernelResources light;
  light.registers = 24;  // 85 warps' registers: the threads (2048) limit first
  o = tc::backends::cuda::occupancy("sm_90", light, 256);
  EXPECT_EQ(o.warps_per_sm, 64);
  EXPECT_DOUBLE_EQ(o.fraction(), 1.0);
  EXPECT_EQ(o.limit, "threads");
  EXPECT_EQ(tc::backends::cuda::resources_text("sm_90", mm, 64),
            "135 registers, 0 bytes spilled, 0 bytes stack, 16768 bytes shared, occupancy 22% (14 of 64 warps a SM, "
            "7 blocks; limit: registers)");
}

// A PTX loop: the lines from a label to the branch back to it.
struct PtxLoop {
  int fmas = 0, shared_loads = 0, wide_multiplies = 0;
};

// The innermost loops of a PTX text (no other loop inside), with their instruction counts.
std::vector<PtxLoop> innermost_loops(const std::string& ptx) {
  std::vector<std::string> lines;
  std::istringstream in(ptx);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::map<std::string, size_t> labels;
  static const std::regex label(R"(^\s*(\$L__BB\d+_\d+):)"), branch(R"(\bbra(?:\.uni)?\s+(\$L__BB\d+_\d+);)");
  std::smatch m;
  for (size_t i = 0; i < lines.size(); ++i)
    if (std::regex_search(lines[i], m, label)) labels[m[1]] = i;
  std::vector<std::pair<size_t, size_t>> loops;
  for (size_t i = 0; i < lines.size(); ++i)
    if (std::regex_search(lines[i], m, branch) && labels.count(m[1]) && labels[m[1]] < i) loops.emplace_back(labels[m[1]], i);
  static const std::regex wide(R"(\b(mul|mad)\.(lo|hi|wide)\.[su]64\b)");
  std::vector<PtxLoop> out;
  for (auto [a, b] : loops) {
    bool inner = true;
    for (auto [c, d] : loops) inner = inner && !(a <= c && d <= b && (c != a || d != b));
    if (!inner) continue;
    PtxLoop l;
    for (size_t i = a; i <= b; ++i) {
      l.fmas += lines[i].find("fma.rn.f") != std::string::npos;
      l.shared_loads += lines[i].find("ld.shared") != std::string::npos;
      l.wide_multiplies += std::regex_search(lines[i], wide);
    }
    out.push_back(l);
  }
  return out;
}

struct PaperKernel {
  const char* name;
  std::vector<tc_test::Shape> inputs;
};

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// bench/kernels/<name>.tc compiled for `arch` at the kernel's benchmark sizes (float32 inputs),
// default knobs.
std::unique_ptr<tc::backends::Kernel> compile_bench_kernel(const PaperKernel& k, const char* arch) {
  Inputs in;
  for (const auto& shape : k.inputs) in.f32(shape);
  auto p = tc_test::build(read_text(std::string(TC_SOURCE_DIR) + "/bench/kernels/" + k.name + ".tc"));
  tc::tune::OptionSet o;
  o.set("backend", "cuda");
  o.set("cuda.arch", arch);
  // isl's schedule on any machine: past cuda.schedule_time (5 s by default, which mlp3's
  // nine statements took under ASan on one core) a fallback of one launch per statement
  // stands in for it.
  o.set("cuda.schedule_time", "3600000");
  const tc::backends::Backend& cuda = tc::backends::find_backend("cuda");
  return cuda.compile(tc_test::bind_def(p, in), cuda.default_target(), o.values_for(cuda));
}

TEST(CudaResources, PaperKernelsAtBenchmarkSizes) {
  try {
    Nvrtc::get();
  } catch (const tc::Error& e) {
    GTEST_SKIP() << e.what();
  }
  const std::vector<PaperKernel> kernels = {
      {"sgemm", {{1024, 1024}, {1024, 1024}}},
      {"tmm", {{128, 1024}, {1000, 1024}}},
      {"tbmm", {{500, 26, 72}, {500, 26, 72}}},
      {"conv2d", {{8, 64, 56, 56}, {64, 64, 3, 3}}},
      {"group_conv", {{32, 32, 4, 56, 56}, {32, 4, 4, 3, 3}}},
      {"mlp3", {{128, 128}, {64, 128}, {64}, {32, 64}, {32}, {2, 32}, {2}}},
  };
  for (const char* arch : {"sm_90", "sm_80"}) {
    for (const PaperKernel& k : kernels) {
      SCOPED_TRACE(std::string(k.name) + " " + arch);
      auto kernel = compile_bench_kernel(k, arch);
      std::string described = kernel->describe(), code = kernel->code();
      EXPECT_GE(occurrences(described, " registers, 0 bytes spilled,"), 1u) << described;
      EXPECT_EQ(occurrences(described, " registers, 0 bytes spilled,"), occurrences(described, "bytes spilled"))
          << "every launch without spills: " << described;
      EXPECT_NE(code.find("__shared__ float tc_shared"), std::string::npos) << "no operand in shared memory";
      std::string ptx = Nvrtc::get().compile_ptx(code, std::string(k.name) + ".cu", arch);
      std::vector<PtxLoop> loops = innermost_loops(ptx);
      ASSERT_FALSE(loops.empty());
      PtxLoop busiest;
      for (const PtxLoop& l : loops) {
        EXPECT_EQ(l.wide_multiplies, 0) << "a 64-bit multiply in an innermost loop";
        // the loop with the most FMAs; of those, the one for full tiles (no flags: the fewest loads)
        if (l.fmas > busiest.fmas || (l.fmas == busiest.fmas && l.shared_loads < busiest.shared_loads)) busiest = l;
      }
      const std::string name = k.name;
      // every one a contraction (the convolutions as implicit GEMMs): the contraction route's
      EXPECT_NE(described.find("contraction route: "), std::string::npos) << described;
      EXPECT_NE(ptx.find("cp.async.ca.shared.global"), std::string::npos) << "operands copied with cp.async";
      EXPECT_NE(ptx.find("cp.async.wait_group"), std::string::npos);
      if (name == "sgemm") {
        EXPECT_NE(described.find("block 256x1x1"), std::string::npos) << "blocks of at least 128 threads: " << described;
        EXPECT_GE(busiest.fmas, 64) << "a 4x4 register tile over 8 steps at least";
        EXPECT_GE(busiest.fmas, 8 * busiest.shared_loads) << busiest.fmas << " FMAs, " << busiest.shared_loads
                                                          << " shared-memory loads";
        EXPECT_NE(ptx.find("ld.shared.v4.f32"), std::string::npos) << "128-bit shared loads";
        EXPECT_NE(ptx.find("cp.async.cg.shared.global"), std::string::npos) << "B's rows copied 16 bytes at a time";
        // 64 tiles of 128 x 128, one block an SM, for 132 SMs: the sum split in 2 parts (128 blocks
        // in one wave; 3 parts took two), added by a second launch
        EXPECT_NE(described.find("tile 128x128x8, 3 stages, the sum split in 2 parts"), std::string::npos) << described;
        EXPECT_NE(described.find("sgemm_k1 grid 4096x1x1 block 256x1x1"), std::string::npos) << described;
      }
    }
  }
}

// float16 and bfloat16 products on tensor cores: mma.sync in the PTX for sm_80 and sm_90, no
// spills, 128 x 128 tiles of 256 threads (8 warps of 64 x 32 outputs: 4 x 4 mma tiles, two
// steps of 16 a stage) in a 2-stage pipeline whose copies are 16-byte cp.async.
TEST(CudaResources, HalfProductsUseTensorCores) {
  try {
    Nvrtc::get();
  } catch (const tc::Error& e) {
    GTEST_SKIP() << e.what();
  }
  const tc::backends::Backend& cuda = tc::backends::find_backend("cuda");
  for (const char* type : {"float16", "bfloat16"}) {
    for (const char* arch : {"sm_90", "sm_80"}) {
      SCOPED_TRACE(std::string(type) + " " + arch);
      auto p = tc_test::build(std::string("def mm(") + type + "(M,K) A, " + type + "(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }");
      Inputs in;
      tc::ScalarType t = std::string(type) == "float16" ? tc::ScalarType::Float16 : tc::ScalarType::BFloat16;
      in.add(t, {4096, 4096}).add(t, {4096, 4096});
      tc::tune::OptionSet o;
      o.set("backend", "cuda");
      o.set("cuda.arch", arch);
      auto kernel = cuda.compile(tc_test::bind_def(p, in), cuda.default_target(), o.values_for(cuda));
      std::string described = kernel->describe();
      EXPECT_NE(described.find("tile 128x128x32, tensor cores (mma.sync), 2 stages"), std::string::npos) << described;
      EXPECT_NE(described.find("mm_k0 grid 32x32x1 block 256x1x1"), std::string::npos) << described;
      EXPECT_NE(described.find(" registers, 0 bytes spilled,"), std::string::npos) << described;
      std::string ptx = Nvrtc::get().compile_ptx(kernel->code(), "mm.cu", arch);
      std::string mma = std::string("mma.sync.aligned.m16n8k16.row.col.f32.") + (t == tc::ScalarType::Float16 ? "f16.f16" : "bf16.bf16");
      EXPECT_EQ(occurrences(ptx, mma), 32u) << "4 x 4 mma a warp, 2 steps a stage";
      EXPECT_NE(ptx.find("cp.async.cg.shared.global"), std::string::npos) << "16-byte copies";
    }
  }
}

// The row-wise benchmark kernels (softmax, layernorm) at their sizes: the row route, one launch
// of a block of 1024 threads per row (128 rows: fewer than an H100's SMs, so a thread a value),
// no spills, and in the PTX the warp shuffles of the row's tree and the named barriers between
// statements.
TEST(CudaResources, RowKernelsAtBenchmarkSizes) {
  try {
    Nvrtc::get();
  } catch (const tc::Error& e) {
    GTEST_SKIP() << e.what();
  }
  const std::vector<PaperKernel> kernels = {
      {"softmax", {{128, 1000}}},
      {"layernorm", {{128, 1024}, {1024}, {1024}}},
  };
  for (const char* arch : {"sm_90", "sm_80"}) {
    for (const PaperKernel& k : kernels) {
      SCOPED_TRACE(std::string(k.name) + " " + arch);
      auto kernel = compile_bench_kernel(k, arch);
      std::string described = kernel->describe();
      EXPECT_NE(described.find("row route: 2 reduced along the row, 2 pointwise; 128 rows"), std::string::npos) << described;
      EXPECT_NE(described.find(std::string(k.name) + "_rows grid 128x1x1 block 1024x1x1"), std::string::npos) << described;
      EXPECT_EQ(occurrences(described, " registers, 0 bytes spilled,"), 1u) << described;
      std::string ptx = Nvrtc::get().compile_ptx(kernel->code(), std::string(k.name) + ".cu", arch);
      EXPECT_NE(ptx.find("shfl.sync.down"), std::string::npos);
      EXPECT_NE(ptx.find("barrier.sync"), std::string::npos);
    }
  }
}

// float32 as TF32 on tensor cores (cuda.tf32=1): mma.sync m16n8k8 in the PTX for sm_80 and
// sm_90, each fragment value rounded by cvt.rna.tf32.f32, no spills, 128 x 128 tiles of 256
// threads in a 2-stage pipeline.
TEST(CudaResources, Tf32ProductsUseTensorCores) {
  try {
    Nvrtc::get();
  } catch (const tc::Error& e) {
    GTEST_SKIP() << e.what();
  }
  const tc::backends::Backend& cuda = tc::backends::find_backend("cuda");
  auto p = tc_test::build("def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }");
  for (const char* arch : {"sm_90", "sm_80"}) {
    SCOPED_TRACE(arch);
    Inputs in;
    in.f32({4096, 4096}).f32({4096, 4096});
    tc::tune::OptionSet o;
    o.set("backend", "cuda");
    o.set("cuda.arch", arch);
    o.set("cuda.tf32", "1");
    auto kernel = cuda.compile(tc_test::bind_def(p, in), cuda.default_target(), o.values_for(cuda));
    std::string described = kernel->describe();
    EXPECT_NE(described.find("tile 128x128x16, tensor cores (mma.sync, TF32), 2 stages"), std::string::npos) << described;
    EXPECT_NE(described.find("mm_k0 grid 32x32x1 block 256x1x1"), std::string::npos) << described;
    EXPECT_NE(described.find(" registers, 0 bytes spilled,"), std::string::npos) << described;
    std::string ptx = Nvrtc::get().compile_ptx(kernel->code(), "mm.cu", arch);
    EXPECT_EQ(occurrences(ptx, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"), 32u) << "4 x 4 mma a warp, 2 steps a stage";
    EXPECT_NE(ptx.find("cp.async"), std::string::npos);
    EXPECT_NE(ptx.find("cvt.rna.tf32.f32"), std::string::npos);
  }
}

// A square matrix product of `type` (n x n operands) compiled by NVRTC for sm_90 with `knobs`:
// tc_kernel_describe's text.
std::string described_product(tc::ScalarType type, int64_t n, const std::vector<std::pair<const char*, const char*>>& knobs) {
  const char* t = type == tc::ScalarType::Float64 ? "double" : "float";
  auto p = tc_test::build(std::string("def mm(") + t + "(M,K) A, " + t + "(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }");
  Inputs in;
  in.add(type, {n, n}).add(type, {n, n});
  tc::tune::OptionSet o;
  o.set("backend", "cuda");
  o.set("cuda.arch", "sm_90");
  for (const auto& [key, value] : knobs) o.set(key, value);
  const tc::backends::Backend& cuda = tc::backends::find_backend("cuda");
  return cuda.compile(tc_test::bind_def(p, in), cuda.default_target(), o.values_for(cuda))->describe();
}

// cuda.stages past a block's 48 KiB of static shared memory: as many as fit (float64's
// 128x64x8 tile takes 12,544 bytes a stage: 3 of 4), and the text compiles.
TEST(CudaResources, PipelineStagesFitSharedMemory) {
  try {
    Nvrtc::get();
  } catch (const tc::Error& e) {
    GTEST_SKIP() << e.what();
  }
  std::string described =
      described_product(tc::ScalarType::Float64, 1024, {{"cuda.gemm_tile", "128x64x8"}, {"cuda.stages", "4"}});
  EXPECT_NE(described.find("tile 128x64x8, 3 stages"), std::string::npos) << described;
  EXPECT_NE(described.find(" 37632 bytes shared"), std::string::npos) << described;
}

// cuda.gemm_blocks=2: the 128x128x8 float32 tile compiled for 2 blocks of 256 threads an SM
// (__launch_bounds__): ptxas keeps it within 128 registers, where it takes about 150 unbounded.
TEST(CudaResources, GemmBlocksBoundTheRegisters) {
  try {
    Nvrtc::get();
  } catch (const tc::Error& e) {
    GTEST_SKIP() << e.what();
  }
  auto registers = [](const std::string& described) {
    std::smatch m;
    EXPECT_TRUE(std::regex_search(described, m, std::regex("(\\d+) registers, "))) << described;
    return m.empty() ? 0 : std::stoi(m[1]);
  };
  const std::string bounded = described_product(tc::ScalarType::Float32, 4096,
                                                {{"cuda.gemm_tile", "128x128x8"}, {"cuda.gemm_blocks", "2"}});
  EXPECT_LE(registers(bounded), 128) << bounded;
  EXPECT_NE(bounded.find("registers for 2 blocks an SM"), std::string::npos) << bounded;
  EXPECT_NE(bounded.find("(16 of 64 warps a SM, 2 blocks; limit: registers)"), std::string::npos) << bounded;
  const std::string free = described_product(tc::ScalarType::Float32, 4096, {{"cuda.gemm_tile", "128x128x8"}});
  EXPECT_GT(registers(free), 128) << free;
}

}  // namespace

namespace {

// 32-bit indices where every index fits: tensors and ranges within 2^29, and the mapped loops'
// values within a tile past twice their extent (one block per tile) or the tiles of the grid.
TEST(CudaResources, IndexWidthFromTheBoundSizes) {
  using tc::backends::cuda::index32_fits;
  auto p = tc_test::build("def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }");
  Inputs small;
  small.f32({1024, 1024}).f32({1024, 1024});
  EXPECT_TRUE(index32_fits(tc_test::bind_def(p, small), {}, 64));
  EXPECT_TRUE(index32_fits(tc_test::bind_def(p, small), {65535, 65535}, 64));
  EXPECT_FALSE(index32_fits(tc_test::bind_def(p, small), {2147483647}, 64)) << "2^31 blocks of 64 along x";
  Inputs large;  // A: 2^30 elements
  large.f32({32768, 32768}).f32({32768, 4});
  EXPECT_FALSE(index32_fits(tc_test::bind_def(p, large), {}, 64));
  Inputs wide;  // k ranges over 2^30 values
  wide.f32({1, 1 << 30}).f32({1 << 30, 1});
  EXPECT_FALSE(index32_fits(tc_test::bind_def(p, wide), {}, 64));
}

}  // namespace
