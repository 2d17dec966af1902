// test_cpu_large_buffers.cpp — tensors past 2 GiB on the cpu backend, through the C
// API: a 2.4 GB embedding table (600M floats) gathered from, its last rows beyond 2^31 bytes;
// a small view strided across a 2.4 GB allocation given to a kernel compiled for dense small
// tensors (the wide variant, compiled on first use); the description says when a kernel has
// 64-bit offsets and a kernel on small tensors keeps 32-bit ones. The big allocations are
// calloc'd and only a few of their pages are touched (reading untouched pages maps the zero
// page), so the tests need little memory; where even the address space or the allocator
// refuses, they skip with a message. The kept temporary takes 2.15 GB for real (skipped where
// less than 6 GB is available). Under ThreadSanitizer (tools/sanitize.sh runs the unit tests)
// the 2 GB tests are skipped: its shadow memory fails under such pressure.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "common/dltensor.h"
#include "tc/tc.h"

namespace {

// GCC says which sanitizer instruments the build with __SANITIZE_*__, clang with __has_feature.
#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_THREAD__) || __has_feature(thread_sanitizer)
constexpr bool kUnderThreadSanitizer = true;
#else
constexpr bool kUnderThreadSanitizer = false;
#endif
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
constexpr bool kUnderAddressSanitizer = true;
#else
constexpr bool kUnderAddressSanitizer = false;
#endif

// MemAvailable of /proc/meminfo in bytes (0 where it cannot be read).
int64_t available_memory() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

constexpr int64_t kRows = 6000000, kWidth = 100;  // 600M floats: 2.4e9 bytes

DLTensor tensor(void* data, int32_t ndim, int64_t* shape, DLDataType type, int64_t* strides = nullptr) {
  return tc_test::host_tensor(data, ndim, shape, type, strides);
}

const DLDataType kF32{kDLFloat, 32, 1}, kI32{kDLInt, 32, 1};

struct Compiled {
  tc_program* program = nullptr;
  tc_kernel* kernel = nullptr;
  ~Compiled() {
    tc_kernel_destroy(kernel);
    tc_program_destroy(program);
  }
  std::string describe() const {
    const char* text = nullptr;
    EXPECT_EQ(tc_kernel_describe(kernel, &text), TC_OK);
    return text ? text : "";
  }
};

void compile(Compiled& c, const char* source, const DLTensor* inputs, size_t n) {
  ASSERT_EQ(tc_define(&c.program, source), TC_OK) << tc_last_error_message();
  tc_options* o = nullptr;
  tc_options_create(&o);
  tc_options_set(o, "cache", "off");
  ASSERT_EQ(tc_compile(&c.kernel, c.program, nullptr, inputs, n, o), TC_OK) << tc_last_error_message();
  tc_options_destroy(o);
}

TEST(CpuLargeBuffers, AnEmbeddingTablePast2GiB) {
  if (kUnderThreadSanitizer) GTEST_SKIP() << "ThreadSanitizer's shadow memory for 2 GB buffers";
  float* table = static_cast<float*>(std::calloc(static_cast<size_t>(kRows * kWidth), sizeof(float)));
  if (!table) GTEST_SKIP() << "calloc of " << kRows * kWidth * 4 << " bytes failed: memory or address space is short";
  // Rows 0, 3 and the last two (their bytes start past 2^31) hold r + d / 1000.
  const int32_t rows[] = {0, 3, kRows - 2, kRows - 1, 3};
  for (int32_t r : rows)
    for (int64_t d = 0; d < kWidth; ++d) table[r * kWidth + d] = static_cast<float>(r) + static_cast<float>(d) / 1000.0f;
  int64_t table_shape[] = {kRows, kWidth}, index_shape[] = {5};
  int32_t index[5];
  for (int i = 0; i < 5; ++i) index[i] = rows[i];
  DLTensor in[] = {tensor(table, 2, table_shape, kF32), tensor(index, 1, index_shape, kI32)};
  Compiled c;
  compile(c, "def embed(float(E,D) T, int32(N) I) -> (O) { O(n, d) = T(I(n), d) }", in, 2);
  std::string d = c.describe();
  EXPECT_NE(d.find("large_buffers"), std::string::npos) << d;
  EXPECT_NE(d.find("64-bit buffer offsets (large_buffers): 'T' takes 2400000000 bytes"), std::string::npos) << d;
  std::vector<float> out(5 * kWidth, -1.0f);
  int64_t out_shape[] = {5, kWidth};
  DLTensor o = tensor(out.data(), 2, out_shape, kF32);
  ASSERT_EQ(tc_run(c.kernel, in, 2, &o, 1), TC_OK) << tc_last_error_message();
  for (int i = 0; i < 5; ++i)
    for (int64_t k = 0; k < kWidth; ++k)
      ASSERT_EQ(out[i * kWidth + k], static_cast<float>(rows[i]) + static_cast<float>(k) / 1000.0f) << i << " " << k;
  // A gathered index out of range is still reported, with the row count as the bound.
  index[1] = static_cast<int32_t>(kRows);
  EXPECT_EQ(tc_run(c.kernel, in, 2, &o, 1), TC_ERROR_RUNTIME);
  EXPECT_NE(std::string(tc_last_error_message()).find("6000000"), std::string::npos) << tc_last_error_message();
  std::free(table);
}

TEST(CpuLargeBuffers, AViewSpanningPast2GiB) {
  if (kUnderThreadSanitizer) GTEST_SKIP() << "ThreadSanitizer's shadow memory for 2 GB buffers";
  int64_t shape[] = {2};
  std::vector<float> small(2, 1.0f), out(2, 0.0f);
  DLTensor dense = tensor(small.data(), 1, shape, kF32);
  Compiled c;
  compile(c, "def twice(float(N) X) -> (Y) { Y(i) = 2 * X(i) }", &dense, 1);
  std::string d = c.describe();
  EXPECT_EQ(d.find("large_buffers"), std::string::npos) << "small tensors keep 32-bit offsets: " << d;
  float* big = static_cast<float*>(std::calloc(static_cast<size_t>(kRows * kWidth) + 1, sizeof(float)));
  if (!big) GTEST_SKIP() << "calloc of " << (kRows * kWidth + 1) * 4 << " bytes failed: memory or address space is short";
  big[0] = 1.5f;
  big[kRows * kWidth] = -4.0f;  // 2.4e9 bytes after the first element
  int64_t strides[] = {kRows * kWidth};
  DLTensor view = tensor(big, 1, shape, kF32, strides);
  DLTensor y = tensor(out.data(), 1, shape, kF32);
  ASSERT_EQ(tc_run(c.kernel, &view, 1, &y, 1), TC_OK) << tc_last_error_message();
  EXPECT_EQ(out[0], 3.0f);
  EXPECT_EQ(out[1], -8.0f);
  // and the dense variant still serves dense tensors
  ASSERT_EQ(tc_run(c.kernel, &dense, 1, &y, 1), TC_OK) << tc_last_error_message();
  EXPECT_EQ(out[0], 2.0f);
  std::free(big);
}

// What the cpu backend refused before its 64-bit offsets, compiled only (running them takes 4.4 and 17
// GB): a temporary of 4.36e9 bytes (it was a heap overflow once: Halide wrapped the
// allocation's size at 2^32 bytes) and an output of 2^34 bytes.
TEST(CpuLargeBuffers, ATemporaryAndAnOutputPast4GiBCompileWithWideOffsets) {
  struct Case {
    const char* source;
    int64_t n;
    const char* note;
  } cases[] = {{"def f(float(N) A) -> (O) {\n  t(i,j) = A(i) * A(j)\n  O(i) +=! t(i,j)\n}", 33000,
                "'t' takes 4356000000 bytes"},
               {"def f(float(N) A) -> (O) { O(i,j) = A(i) * A(j) }", 65536, "'O' takes 17179869184 bytes"}};
  for (const Case& k : cases) {
    std::vector<float> a(static_cast<size_t>(k.n));
    int64_t shape[] = {k.n};
    DLTensor in = tensor(a.data(), 1, shape, kF32);
    Compiled c;
    compile(c, k.source, &in, 1);
    std::string d = c.describe();
    EXPECT_NE(d.find(std::string("64-bit buffer offsets (large_buffers): ") + k.note), std::string::npos) << d;
  }
}

// A temporary kept in memory (two consumers: not inlined) past 2^31-1 bytes, run: 23200^2
// floats (2.15e9 bytes). Halide 14 sizes an allocation of constant extents in 32 bits whatever
// the target; its extent is given through an opaque value (schedule/scheduler.cpp, bound_whole), so it
// is allocated at run time with 64-bit sizes. One of 4e12 bytes compiles too; running it is
// TC_ERROR_NO_MEMORY naming it (not run under AddressSanitizer, whose allocator aborts on it;
// under ThreadSanitizer the test is skipped).
TEST(CpuLargeBuffers, AKeptTemporaryPast2GiB) {
  if (kUnderThreadSanitizer) GTEST_SKIP() << "ThreadSanitizer's shadow memory for 2 GB buffers";
  if (available_memory() < (int64_t{6} << 30))
    GTEST_SKIP() << "less than 6 GB of memory available (" << available_memory() << " bytes)";
  const char* source = "def f(float(N) A) -> (O, P) {\n  t(i,j) = A(i) * A(j)\n  O(i) +=! t(i,j)\n  P(j) max=! t(i,j)\n}";
  const int64_t n = 23200;
  std::vector<float> a(static_cast<size_t>(n)), o(static_cast<size_t>(n)), p(static_cast<size_t>(n));
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += a[static_cast<size_t>(i)] = static_cast<float>(i % 5);
  int64_t shape[] = {n};
  DLTensor in = tensor(a.data(), 1, shape, kF32);
  Compiled c;
  compile(c, source, &in, 1);
  std::string d = c.describe();
  EXPECT_NE(d.find("'t' takes 2152960000 bytes"), std::string::npos) << d;
  DLTensor outs[] = {tensor(o.data(), 1, shape, kF32), tensor(p.data(), 1, shape, kF32)};
  ASSERT_EQ(tc_run(c.kernel, &in, 1, outs, 2), TC_OK) << tc_last_error_message();
  for (int64_t i = 0; i < n; i += 997) {
    ASSERT_EQ(o[static_cast<size_t>(i)], static_cast<float>(a[static_cast<size_t>(i)] * sum)) << i;  // exact: small integers
    ASSERT_EQ(p[static_cast<size_t>(i)], a[static_cast<size_t>(i)] * 4.0f) << i;
  }
  // 4e12 bytes: compiled, and refused by the allocator when it runs (a sanitizer's allocator
  // aborts on such a request instead of failing it: compiled only there)
  std::vector<float> big(1000000, 1.0f), big_o(1000000), big_p(1000000);
  int64_t big_shape[] = {1000000};
  DLTensor big_in = tensor(big.data(), 1, big_shape, kF32);
  Compiled huge;
  compile(huge, source, &big_in, 1);
  DLTensor big_outs[] = {tensor(big_o.data(), 1, big_shape, kF32), tensor(big_p.data(), 1, big_shape, kF32)};
  if (kUnderAddressSanitizer) return;
  EXPECT_EQ(tc_run(huge.kernel, &big_in, 1, big_outs, 2), TC_ERROR_NO_MEMORY);
  EXPECT_NE(std::string(tc_last_error_message()).find("bytes for 't' could not be allocated"), std::string::npos)
      << tc_last_error_message();
}

TEST(CpuLargeBuffers, AStrideBeyond32BitsIsRefused) {
  int64_t shape[] = {2};
  std::vector<float> small(2, 1.0f);
  DLTensor dense = tensor(small.data(), 1, shape, kF32);
  Compiled c;
  compile(c, "def twice(float(N) X) -> (Y) { Y(i) = 2 * X(i) }", &dense, 1);
  // never dereferenced: refused before running; the output lies before the view (no overlap)
  std::vector<float> both(4, 1.0f);
  int64_t strides[] = {int64_t{1} << 32};
  DLTensor view = tensor(both.data() + 2, 1, shape, kF32, strides);
  DLTensor y = tensor(both.data(), 1, shape, kF32);
  EXPECT_EQ(tc_run(c.kernel, &view, 1, &y, 1), TC_ERROR_UNSUPPORTED);
  EXPECT_NE(std::string(tc_last_error_message()).find("input 'X' dimension 0 has stride 4294967296"), std::string::npos)
      << tc_last_error_message();
}

}  // namespace
