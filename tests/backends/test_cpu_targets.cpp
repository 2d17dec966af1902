// test_cpu_targets.cpp — the cpu backend's pipelines (lower.h, schedule.h) compiled to object
// code for x86 targets other than this machine's, white-box: nothing is run, so a target this
// CPU lacks (AVX-512) is compiled too. What it guards: LLVM 14 aborting the process in its
// instruction selection for one target and not another (a bool of int16 comparisons over 5
// elements, left to LLVM's SLP vectoriser, on AVX-512 with the Cannon Lake extensions).
#include <gtest/gtest.h>

#include <Halide.h>

#include <cstdio>
#include <string>
#include <unistd.h>

#include "backends/cpu/lower.h"
#include "backends/cpu/schedule.h"
#include "tune/options.h"
#include "infer_test_util.h"

using namespace tc_test;

namespace {

// Targets as Halide names a host of each kind (the x86 hosts libtc runs on, AVX2 to Sapphire
// Rapids), with the features libtc's JIT target adds.
const char* const kTargets[] = {
    "x86-64-linux-avx-avx2-f16c-fma-sse41",
    "x86-64-linux-avx-avx2-avx512-avx512_skylake-f16c-fma-sse41",
    "x86-64-linux-avx-avx2-avx512-avx512_cannonlake-avx512_skylake-f16c-fma-sse41",
    "x86-64-linux-avx-avx2-avx512-avx512_cannonlake-avx512_sapphirerapids-avx512_skylake-f16c-fma-sse41",
};

// Lowers and schedules `src` (default knobs) for `target` and compiles it to an object file.
void compile_for(const std::string& src, const std::vector<std::pair<tc::ScalarType, Shape>>& in,
                 const std::string& target) {
  ProgramPtr p = build(src);
  Inputs inputs;
  for (const auto& [type, shape] : in) inputs.add(type, shape);
  tc::ir::BoundDef b = bind_def(p, inputs);
  Halide::Target t(target + "-strict_float-user_context");
  tc::tune::OptionSet o;
  auto schedule = tc::backends::cpu::CpuSchedule::from_options(o.values_for(tc::backends::find_backend("cpu")));
  tc::backends::cpu::LoweredPipeline lp = tc::backends::cpu::lower(b, true, true, true, true);
  tc::backends::cpu::apply_schedule(lp, schedule, t);
  std::vector<Halide::Func> outs;
  if (lp.sink_stage >= 0) outs.push_back(lp.stages[lp.sink_stage].func);
  for (int s : lp.output_stage) outs.push_back(lp.stages[s].func);
  std::vector<Halide::Argument> args(lp.inputs.begin(), lp.inputs.end());
  std::string object = "/tmp/tc-targets-" + std::to_string(::getpid()) + ".o";
  Halide::Pipeline(outs).compile_to_object(object, args, "f", t);
  std::remove(object.c_str());
}

}  // namespace

TEST(CpuTargets, ABoolOfInt16ComparisonsCompilesForEveryTarget) {
  for (const char* target : kTargets)
    compile_for("def main(int16(5) I) -> (O1) { O1(i, j, k) = 0 < I(k) where i in 0:5, j in 0:5  O2(i) = O1(0, 0, i) }",
                {{tc::ScalarType::Int16, {5}}}, target);
}

TEST(CpuTargets, AMatmulAndASoftmaxCompileForEveryTarget) {
  for (const char* target : kTargets) {
    compile_for("def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }",
                {{tc::ScalarType::Float32, {37, 29}}, {tc::ScalarType::Float32, {29, 53}}}, target);
    compile_for(kSoftmax, {{tc::ScalarType::Float32, {7, 33}}}, target);
  }
}
