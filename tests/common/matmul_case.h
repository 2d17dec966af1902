// matmul_case.h — a float32 matmul through the C API for the cache and tuner tests: inputs of
// small integers (exact in any order of summation, so every schedule gives the same bits) as
// DLTensors, the defined program, a temporary directory for caches, and helpers to run and
// describe a kernel.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "tc/tc.h"

namespace tc_test {

class MatmulCase {
 public:
  static constexpr const char* kSrc = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }";

  MatmulCase(int m, int k, int n) : m_(m), n_(n), a(size_t(m) * k), b(size_t(k) * n) {
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>((i * 7) % 11) - 5;
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>((i * 5) % 13) - 6;
    sa[0] = m, sa[1] = k, sb[0] = k, sb[1] = n, sc[0] = m, sc[1] = n;
    in[0] = tensor(a.data(), sa);
    in[1] = tensor(b.data(), sb);
    EXPECT_EQ(tc_define(&program, kSrc), TC_OK);
    char tmpl[] = "/tmp/tc-test-XXXXXX";
    dir = ::mkdtemp(tmpl);
  }
  ~MatmulCase() {
    tc_program_destroy(program);
    std::system(("rm -rf '" + dir + "'").c_str());
  }
  MatmulCase(const MatmulCase&) = delete;
  MatmulCase& operator=(const MatmulCase&) = delete;

  static DLTensor tensor(float* data, int64_t* shape) {
    DLTensor t{};
    t.data = data;
    t.device = {kDLCPU, 0};
    t.ndim = 2;
    t.dtype = {kDLFloat, 32, 1};
    t.shape = shape;
    return t;
  }
  std::vector<float> run(tc_kernel* k) {
    std::vector<float> c(size_t(m_) * n_, -1.0f);
    DLTensor out = tensor(c.data(), sc);
    EXPECT_EQ(tc_run(k, in, 2, &out, 1), TC_OK) << tc_last_error_message();
    return c;
  }
  static int hit(tc_kernel* k) {
    int h = -1;
    EXPECT_EQ(tc_kernel_cache_hit(k, &h), TC_OK);
    return h;
  }
  static std::string describe(tc_kernel* k) {
    const char* text = nullptr;
    EXPECT_EQ(tc_kernel_describe(k, &text), TC_OK);
    return text ? text : "";
  }

 private:
  int m_, n_;

 public:
  std::vector<float> a, b;
  int64_t sa[2], sb[2], sc[2];
  DLTensor in[2];
  tc_program* program = nullptr;
  std::string dir;
};

}  // namespace tc_test
