// test_cpu_argument_checks.cpp — the cpu kernel's code checks none of its buffer arguments
// again (lowering_pass_argument_checks.cpp), so what those checks guarded is checked here
// through the C API: the loop nest has no argument check but the 32-bit size guards; a call
// with an inner stride that is not 1 after the dense variant ran (the stride was one of the
// removed checks) runs the strided variant and gives the right values; the caller's mistakes
// the removed checks would have caught (dtype, rank, extent) are refused by tc_run first.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/dltensor.h"
#include "tc/tc.h"

namespace {

const char* const kSource =
    "def fcrelu(float(B,M) I, float(N,M) W1, float(N) B1) -> (O1) {\n"
    "  O1(b, n) +=! I(b, m) * W1(n, m)\n"
    "  O1(b, n) = fmax(O1(b, n) + B1(n), 0)\n"
    "}\n";
constexpr int64_t kB = 4, kM = 8, kN = 6;
const DLDataType kF32{kDLFloat, 32, 1};

DLTensor tensor(float* data, int32_t ndim, int64_t* shape, int64_t* strides = nullptr, DLDataType type = kF32) {
  return tc_test::host_tensor(data, ndim, shape, type, strides);
}

struct Fcrelu : ::testing::Test {
  tc_program* program = nullptr;
  tc_kernel* kernel = nullptr;
  int64_t si[2] = {kB, kM}, sw[2] = {kN, kM}, sb[1] = {kN}, so[2] = {kB, kN};
  std::vector<float> I, W, bias;

  void SetUp() override {
    for (int64_t k = 0; k < kB * kM; ++k) I.push_back(static_cast<float>(k % 7) - 3);
    for (int64_t k = 0; k < kN * kM; ++k) W.push_back(static_cast<float>(k % 5) - 2);
    for (int64_t k = 0; k < kN; ++k) bias.push_back(static_cast<float>(k) - 2);
    DLTensor in[3] = {tensor(I.data(), 2, si), tensor(W.data(), 2, sw), tensor(bias.data(), 1, sb)};
    ASSERT_EQ(tc_define(&program, kSource), TC_OK) << tc_last_error_message();
    tc_options* o = nullptr;
    ASSERT_EQ(tc_options_create(&o), TC_OK);
    tc_options_set(o, "cache", "off");
    tc_options_set(o, "cpu.contract", "0");  // the Halide pipeline, not the packed-GEMM route
    ASSERT_EQ(tc_compile(&kernel, program, "fcrelu", in, 3, o), TC_OK) << tc_last_error_message();
    tc_options_destroy(o);
  }
  void TearDown() override {
    tc_kernel_destroy(kernel);
    tc_program_destroy(program);
  }

  // O1 computed here from I(b, m) read at I_data[b * row + m * step].
  std::vector<float> expected(const float* i_data, int64_t row, int64_t step) const {
    std::vector<float> out(kB * kN);
    for (int64_t b = 0; b < kB; ++b)
      for (int64_t n = 0; n < kN; ++n) {
        float s = 0;
        for (int64_t m = 0; m < kM; ++m) s += i_data[b * row + m * step] * W[n * kM + m];
        out[b * kN + n] = std::max(s + bias[n], 0.0f);
      }
    return out;
  }
};

TEST_F(Fcrelu, ItsLoopNestKeepsOnlyTheSizeGuardsOfItsArguments) {
  const char* text = nullptr;
  ASSERT_EQ(tc_kernel_code(kernel, &text), TC_OK) << tc_last_error_message();
  std::string code = text;
  for (const char* removed : {"halide_error_buffer_argument_is_null", "halide_error_bad_type", "halide_error_bad_dimensions",
                              "halide_error_access_out_of_bounds", "halide_error_buffer_extents_negative",
                              "halide_error_constraint_violated", "halide_error_host_is_null",
                              "halide_error_device_dirty_with_no_device_support"})
    EXPECT_EQ(code.find(removed), std::string::npos) << removed << " is still in:\n" << code;
  EXPECT_NE(code.find("halide_error_buffer_allocation_too_large"), std::string::npos) << code;
}

TEST_F(Fcrelu, AStridedInputAfterADenseOneRunsTheStridedVariant) {
  std::vector<float> out(kB * kN, -1.0f);
  DLTensor o = tensor(out.data(), 2, so);
  DLTensor dense[3] = {tensor(I.data(), 2, si), tensor(W.data(), 2, sw), tensor(bias.data(), 1, sb)};
  ASSERT_EQ(tc_run(kernel, dense, 3, &o, 1), TC_OK) << tc_last_error_message();
  EXPECT_EQ(out, expected(I.data(), kM, 1));

  // I's values every other float: inner stride 2, which the dense variant's code assumes is 1.
  std::vector<float> wide(2 * kB * kM, 1000.0f);
  for (int64_t k = 0; k < kB * kM; ++k) wide[2 * k] = I[k];
  int64_t strides[2] = {2 * kM, 2};
  DLTensor strided[3] = {tensor(wide.data(), 2, si, strides), tensor(W.data(), 2, sw), tensor(bias.data(), 1, sb)};
  std::fill(out.begin(), out.end(), -1.0f);
  ASSERT_EQ(tc_run(kernel, strided, 3, &o, 1), TC_OK) << tc_last_error_message();
  EXPECT_EQ(out, expected(wide.data(), 2 * kM, 2));
}

TEST_F(Fcrelu, WhatTheRemovedChecksCaughtIsRefusedBeforeTheCall) {
  std::vector<float> out(kB * kN);
  DLTensor o = tensor(out.data(), 2, so);
  int64_t short_shape[2] = {kB, kM - 1}, flat[1] = {kB * kM};
  struct Case {
    const char* what;
    DLTensor input;
  } cases[] = {
      {"dtype", tensor(I.data(), 2, si, nullptr, DLDataType{kDLFloat, 64, 1})},
      {"rank", tensor(I.data(), 1, flat)},
      {"extent", tensor(I.data(), 2, short_shape)},
  };
  for (const Case& c : cases) {
    DLTensor in[3] = {c.input, tensor(W.data(), 2, sw), tensor(bias.data(), 1, sb)};
    EXPECT_EQ(tc_run(kernel, in, 3, &o, 1), TC_ERROR_SHAPE) << c.what;
    EXPECT_NE(std::string(tc_last_error_message()).find("input 'I'"), std::string::npos)
        << c.what << ": " << tc_last_error_message();
  }
}

}  // namespace
