// prelude.cpp — the text every printed kernel starts with: prelude.cuh (TC's scalar semantics
// as device functions, embedded at build time) and TC's float32 exp, whose constants come from
// support/exp_f32.h; and the warps' totals a reduction across threads needs.
#include <cstdio>
#include <string>

#include "backends/cuda/print/printer.h"
#include "support/exp_f32.h"

namespace tc::backends::cuda {
namespace print {
namespace {

// TC's scalar semantics as device functions, valid CUDA and host C++ alike (the emulation
// compiles the same text for the host). Mirrors src/backends/reference/scalar.cpp.
constexpr const char* kPrelude =
#include "backends/cuda/print/prelude.inc"
    ;

// Where a reduction is split across several warps (cuda.reduction=tree): each warp's total, in
// the member of the reduction's type, one slot per warp of a block (at most 32), shared by all
// such reductions of a kernel (the group's barrier before each keeps them apart). After the
// prelude in the texts that use it.
constexpr const char* kWarpTotals = R"(// The warps' totals of reductions across threads (cuda.reduction=tree)
union tc_total {
  bool b; unsigned char u8; unsigned short u16; unsigned int u32; unsigned long long u64;
  signed char s8; short s16; int s32; long long s64; float f32; double f64;
};
__shared__ tc_total tc_warp_totals[32];
)";

// TC's float32 exp as CUDA C: support/exp_f32.h's algorithm, operation for operation (its
// constants taken from there), so that the GPU and the emulation give the reference's bits.
std::string exp_f32_text() {
  namespace E = tc::exp_f32;
  auto f = [](float v) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%af", static_cast<double>(v));
    return std::string(buf);
  };
  std::string poly = "  float p = " + f(E::kPoly[0]) + ";\n";
  for (size_t i = 1; i < sizeof E::kPoly / sizeof E::kPoly[0]; ++i) poly += "  p = fmaf(p, r, " + f(E::kPoly[i]) + ");\n";
  return "// float32 exp: libtc's one definition (src/support/exp_f32.h), step for step\n"
         "TC_DEVICE float tc_pow2f(int k) { union { unsigned u; float f; } x; x.u = (unsigned)(k + 127) << 23; return x.f; }\n"
         "TC_DEVICE float tc_expf(float x) {\n"
         "  if (x != x) return x;\n"
         "  float xc = x < " + f(E::kHighest) + " ? x : " + f(E::kHighest) + ";\n"
         "  xc = xc > " + f(E::kLowest) + " ? xc : " + f(E::kLowest) + ";\n"
         "  float n = floorf(fmaf(xc, " + f(E::kLog2E) + ", 0.5f));\n"
         "  float r = fmaf(n, " + f(-E::kLn2High) + ", xc);\n"
         "  r = fmaf(n, " + f(-E::kLn2Low) + ", r);\n" + poly +
         "  float y = fmaf(p * r, r, r) + 1.0f;\n"
         "  int ni = (int)n, n1 = ni >> 1, n2 = ni - n1;\n"
         "  return y * tc_pow2f(n1) * tc_pow2f(n2);\n"
         "}\n";
}

}  // namespace

const char* warp_totals_text() { return kWarpTotals; }

}  // namespace print

const std::string& cuda_prelude() {
  static const std::string prelude = std::string(print::kPrelude) + print::exp_f32_text() + "\n";
  return prelude;
}

}  // namespace tc::backends::cuda
