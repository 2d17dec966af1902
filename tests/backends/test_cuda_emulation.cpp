// test_cuda_emulation.cpp — the cuda backend's CUDA C (src/backends/cuda/print_cuda.*) run by
// the emulation (emulate.*): the text NVRTC would get, compiled for the host, every block and
// thread in turn. Each def goes through the whole pipeline so far (model, isl schedule with
// max and min fusion, tiling and block/thread marks, printing) and its outputs are compared
// with values computed here, for several grid and block sizes (the mapped loops stride, so
// every size must give the same result); and NVRTC (nvrtc.*) compiling the same text to
// cubins. White-box.
#include <gtest/gtest.h>

#include <isl/schedule.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <dirent.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>
#include <string>
#include <vector>

#include "backends/cuda/driver.h"
#include "tune/options.h"
#include "backends/cuda/emulate.h"
#include "backends/kept_code.h"
#include "backends/cuda/mapping.h"
#include "backends/cuda/nvrtc.h"
#include "backends/cuda/print_cuda.h"
#include "backends/cuda/schedule.h"
#include "infer_test_util.h"

using namespace tc::backends::cuda;
using tc::backends::KeptCode;
using tc_test::Inputs;

namespace {

struct Emulated {
  CudaSource source;
  std::vector<std::vector<char>> tensors;  // every tensor of the def, Def::tensors order
};

// Compiles `src` for these inputs and runs it emulated; the outputs' bytes in Def order.
Emulated emulate(const std::string& src, Inputs& in, const std::vector<std::vector<char>>& inputs, Fusion fusion,
            const std::vector<int64_t>& tile, std::array<unsigned, 3> grid, std::array<unsigned, 3> block) {
  auto p = tc_test::build(src);
  auto bound = tc_test::bind_def(p, in);
  PolyModel model(bound);
  isl_schedule* mapped = tile_and_mark(compute_schedule(model, fusion), {tile});
  Emulated r;
  try {
    r.source = print_cuda(bound, model, mapped, tc::backends::cuda::PrintOptions{});
  } catch (...) {
    isl_schedule_free(mapped);
    throw;
  }
  isl_schedule_free(mapped);
  EmulatedKernels kernels(r.source);
  std::vector<void*> pointers;
  size_t next_input = 0;
  for (size_t t = 0; t < bound.tensors.size(); ++t) {
    size_t bytes = static_cast<size_t>(bound.tensors[t].num_elements()) * tc::bytes(bound.tensors[t].type);
    if (bound.def().tensors[t].role == tc::lang::TensorRole::Input) r.tensors.push_back(inputs[next_input++]);
    else r.tensors.emplace_back(std::max<size_t>(bytes, 1), '\x55');  // garbage: every element must be written
    pointers.push_back(r.tensors.back().data());
  }
  std::vector<unsigned long long> fault(r.source.fault_words, 0);
  pointers.push_back(fault.data());
  std::vector<LaunchDims> dims;
  for (const Launch& l : r.source.launches)
    dims.push_back(launch_dims(l, {grid[0], grid[1], grid[2]}, {block[0], block[1], block[2]}));
  kernels.run(pointers, dims);
  return r;
}

template <typename T>
std::vector<char> bytes_of(const std::vector<T>& v) {
  const char* p = reinterpret_cast<const char*>(v.data());
  return std::vector<char>(p, p + v.size() * sizeof(T));
}

template <typename T>
std::vector<T> values_of(const std::vector<char>& b) {
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

std::vector<float> ramp(size_t n, int seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(static_cast<int>((i * 7 + static_cast<size_t>(seed) * 3) % 11) - 5);
  return v;
}

const std::vector<std::array<unsigned, 3>> kGrids = {{1, 1, 1}, {2, 3, 1}, {5, 1, 2}};
const std::vector<std::array<unsigned, 3>> kBlocks = {{1, 1, 1}, {4, 2, 1}, {3, 5, 2}};

}  // namespace

TEST(CudaEmulation, MatmulEveryFusionGridAndBlock) {
  const int M = 13, K = 7, N = 9;
  std::vector<float> A = ramp(M * K, 1), B = ramp(K * N, 2), want(M * N, 0);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      for (int k = 0; k < K; ++k) want[i * N + j] += A[i * K + k] * B[k * N + j];
  for (Fusion f : {Fusion::Max, Fusion::Min})
    for (size_t g = 0; g < kGrids.size(); ++g) {
      Inputs in;
      in.f32({M, K}).f32({K, N});
      Emulated r = emulate("def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }", in,
                      {bytes_of(A), bytes_of(B)}, f, {8, 4, 4}, kGrids[g], kBlocks[g]);
      EXPECT_EQ(values_of<float>(r.tensors[2]), want) << r.source.text;
    }
}

// A tile loop of one value above the marks (n: 2 < its tile of 32), which isl prints no loop
// for: the marks below it still find their loops, which step over the blocks and threads (found
// on the first GPU run: such kernels guarded every statement by block and thread instead, and
// each thread walked the whole nest: conv2d 63,000x PyTorch's time).
TEST(CudaEmulation, ALoopOfOneValueAboveTheMarksLeavesTheOthersIndexed) {
  const int N = 2, C = 40, H = 36;
  std::vector<float> I = ramp(N * C * H, 3), want(I.size());
  for (size_t i = 0; i < I.size(); ++i) want[i] = I[i] * 2;
  for (size_t g = 0; g < kGrids.size(); ++g) {
    Inputs in;
    in.f32({N, C, H});
    Emulated r = emulate("def f(float(N,C,H) I) -> (O) { O(n,c,h) = I(n,c,h) * 2 }", in, {bytes_of(I)}, Fusion::Max, {32, 32, 32},
                         kGrids[g], kBlocks[g]);
    EXPECT_EQ(values_of<float>(r.tensors[1]), want);
    for (const char* index : {"blockIdx.y", "blockIdx.x", "threadIdx.z", "threadIdx.y", "threadIdx.x"})
      EXPECT_NE(r.source.text.find(std::string("), ") + index + ", "), std::string::npos) << index << " strides no loop:\n"
                                                                                        << r.source.text;
    EXPECT_EQ(r.source.text.find("== (long long)threadIdx"), std::string::npos) << r.source.text;
  }
}

TEST(CudaEmulation, SoftmaxTemporariesAndBuiltins) {
  const int N = 5, D = 11;
  std::vector<float> X = ramp(N * D, 3);
  std::vector<float> want(N * D);
  for (int n = 0; n < N; ++n) {
    float mx = -INFINITY, s = 0;
    for (int d = 0; d < D; ++d) mx = std::max(mx, X[n * D + d]);
    for (int d = 0; d < D; ++d) s += std::exp(X[n * D + d] - mx);
    for (int d = 0; d < D; ++d) want[n * D + d] = std::exp(X[n * D + d] - mx) / s;
  }
  for (Fusion f : {Fusion::Max, Fusion::Min}) {
    Inputs in;
    in.f32({N, D});
    Emulated r = emulate(
        "def softmax(float(N,D) X) -> (O) {\n  mx(n) max=! X(n,d)\n  e(n,d) = exp(X(n,d) - mx(n))\n"
        "  s(n) +=! e(n,d)\n  O(n,d) = e(n,d) / s(n)\n}",
        in, {bytes_of(X)}, f, {4, 4}, {2, 2, 1}, {3, 2, 1});
    std::vector<float> got = values_of<float>(r.tensors[1]);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << i << "\n" << r.source.text;
  }
}

// Integers: Euclidean division and modulo, wrapping, a saturating float-to-int conversion, and
// a gather whose indices binding does not prove (clamped into the table).
TEST(CudaEmulation, IntegerSemanticsAndGathers) {
  std::vector<int32_t> a = {-7, 7, -1, 2147483647, 5};
  std::vector<float> lut = {10, 11, 12, 13};
  std::vector<int32_t> idx = {2, 0, 3, 1, 2};
  Inputs in;
  in.add(tc::ScalarType::Int32, {5}).f32({4}).add(tc::ScalarType::Int32, {5});
  Emulated r = emulate(
      "def f(int32(N) A, float(E) LUT, int32(N) I) -> (Q, R, W, S, G) {\n"
      "  Q(i) = A(i) / -2\n  R(i) = A(i) % 3\n  W(i) = A(i) + 1\n  S(i) = int32(float(A(i)) * 4.0)\n"
      "  G(i) = LUT(I(i))\n}",
      in, {bytes_of(a), bytes_of(lut), bytes_of(idx)}, Fusion::Max, {2}, {2, 1, 1}, {2, 1, 1});
  EXPECT_EQ(values_of<int32_t>(r.tensors[3]), (std::vector<int32_t>{4, -3, 1, -1073741823, -2}));
  EXPECT_EQ(values_of<int32_t>(r.tensors[4]), (std::vector<int32_t>{2, 1, 2, 1, 2}));
  EXPECT_EQ(values_of<int32_t>(r.tensors[5]), (std::vector<int32_t>{-6, 8, 0, -2147483647 - 1, 6}));
  EXPECT_EQ(values_of<int32_t>(r.tensors[6]), (std::vector<int32_t>{-28, 28, -4, 2147483647, 20}));
  EXPECT_EQ(values_of<float>(r.tensors[7]), (std::vector<float>{12, 10, 13, 11, 12}));
}

// Modulo by INT64_MIN: |INT64_MIN| is no int64 (the differential fuzzer's seed 149050256 found
// the reference's copy of this arithmetic overflowing).
TEST(CudaEmulation, Int64ModuloByInt64Min) {
  std::vector<int64_t> b = {-1, 5, INT64_MIN + 1, 0, INT64_MIN};
  std::vector<int64_t> a = {INT64_MIN};
  Inputs in;
  in.add(tc::ScalarType::Int64, {}).add(tc::ScalarType::Int64, {5});
  Emulated r = emulate("def f(int64 A, int64(N) B) -> (O) { O(i) = B(i) % A }", in, {bytes_of(a), bytes_of(b)},
                       Fusion::Max, {4}, {2, 1, 1}, {2, 1, 1});
  EXPECT_EQ(values_of<int64_t>(r.tensors[2]), (std::vector<int64_t>{INT64_MAX, 5, 1, 0, 0}));
}

// A 0-d reduction (no band: a kernel of its own, one thread) and a statement that reads the
// output of the one before it.
TEST(CudaEmulation, ScalarReductionAndChains) {
  std::vector<float> x = ramp(20, 4);
  float sum = 0;
  for (float v : x) sum += v;
  Inputs in;
  in.f32({20});
  Emulated r = emulate("def f(float(N) X) -> (s, Y) {\n  s +=! X(i)\n  Y(i) = X(i) - s\n}", in, {bytes_of(x)},
                  Fusion::Min, {8}, {3, 1, 1}, {2, 1, 1});
  EXPECT_EQ(values_of<float>(r.tensors[1]), std::vector<float>{sum});
  std::vector<float> y = values_of<float>(r.tensors[2]);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], x[i] - sum) << i;
}

// The same text is valid CUDA: NVRTC, loaded with dlopen, makes a cubin (an ELF file) of it for
// sm_80 and sm_90 with no GPU present. Skipped where NVRTC is not installed.
TEST(CudaEmulation, TheTextCompilesToCubinsWithNvrtc) {
  const Nvrtc* nvrtc = nullptr;
  try {
    nvrtc = &Nvrtc::get();
  } catch (const tc::Error& e) {
    GTEST_SKIP() << e.what();
  }
  std::vector<float> A = ramp(6 * 5, 1), B = ramp(5 * 4, 2), X = ramp(3 * 7, 3);
  Inputs mm_in, sm_in;
  mm_in.f32({6, 5}).f32({5, 4});
  sm_in.f32({3, 7});
  std::vector<Emulated> runs;
  runs.push_back(emulate("def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }", mm_in,
                         {bytes_of(A), bytes_of(B)}, Fusion::Max, {4, 4}, {1, 1, 1}, {1, 1, 1}));
  runs.push_back(emulate("def softmax(float(N,D) X) -> (O) {\n  mx(n) max=! X(n,d)\n  e(n,d) = exp(X(n,d) - mx(n))\n"
                         "  s(n) +=! e(n,d)\n  O(n,d) = e(n,d) / s(n)\n}",
                         sm_in, {bytes_of(X)}, Fusion::Min, {4, 4}, {1, 1, 1}, {1, 1, 1}));
  for (const Emulated& r : runs)
    for (const char* arch : {"sm_80", "sm_90"}) {
      std::string cubin = nvrtc->compile_cubin(r.source.text, "kernels.cu", arch).bytes;
      ASSERT_GE(cubin.size(), 4u) << arch;
      EXPECT_EQ(cubin.substr(0, 4), "\x7f" "ELF") << arch;
    }
  std::string m = tc_test::error_of([&] { nvrtc->compile_cubin("this is not CUDA", "bad.cu", "sm_90"); }, TC_ERROR_COMPILE);
  EXPECT_NE(m.find("NVRTC could not compile"), std::string::npos) << m;
}

// Without CUDA: TC_ERROR_UNSUPPORTED naming every place it looked.
TEST(CudaEmulation, NoNvrtcIsUnsupportedNamingWhereItLooked) {
  std::string m = tc_test::error_of([] { Nvrtc({"/nonexistent/libnvrtc.so.13", "libnvrtc-not-there.so"}); },
                                    TC_ERROR_UNSUPPORTED);
  EXPECT_NE(m.find("NVRTC (CUDA's run-time compiler) was not found"), std::string::npos) << m;
  EXPECT_NE(m.find("/nonexistent/libnvrtc.so.13"), std::string::npos) << m;
  EXPECT_NE(m.find("libnvrtc-not-there.so"), std::string::npos) << m;
  EXPECT_NE(Nvrtc::default_candidates()[0].find("libnvrtc.so"), std::string::npos);
}

// The CUDA driver: without libcuda.so.1 (this machine has no GPU), TC_ERROR_UNSUPPORTED naming
// every place it looked; the toolkit's stub library (every driver function, no driver) binds
// all the functions libtc uses, so their names are right, and then cuInit refuses: also
// UNSUPPORTED, with the driver's own text. On a GPU machine Driver::get() finds the real one.
TEST(CudaDriver, NoDriverIsUnsupportedNamingWhereItLooked) {
  std::string m = tc_test::error_of([] { Driver({"/nonexistent/libcuda.so.1", "libcuda-not-there.so.1"}); },
                                    TC_ERROR_UNSUPPORTED);
  EXPECT_NE(m.find("the CUDA driver (libcuda.so.1) was not found"), std::string::npos) << m;
  EXPECT_NE(m.find("/nonexistent/libcuda.so.1"), std::string::npos) << m;
  EXPECT_NE(m.find("libcuda-not-there.so.1"), std::string::npos) << m;
  std::vector<std::string> defaults = Driver::default_candidates();
  EXPECT_EQ(defaults.back(), "libcuda.so.1");
}

TEST(CudaDriver, TheToolkitsStubBindsEveryFunctionThenCuInitRefuses) {
  const char* stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (access(stub, R_OK) != 0) GTEST_SKIP() << "no CUDA toolkit stub at " << stub;
  std::string m = tc_test::error_of([&] { Driver({stub}); }, TC_ERROR_UNSUPPORTED);
  EXPECT_EQ(m.find("lacks"), std::string::npos) << m;  // every function bound
  EXPECT_NE(m.find("did not initialise (cuInit: error 34, CUDA_ERROR_STUB_LIBRARY"), std::string::npos) << m;
  EXPECT_NE(m.find(stub), std::string::npos) << m;
}

// The compilation cache's artefact of a compiled (not emulated) kernel: the backend's load()
// gives back a kernel with the same CUDA C and launches, without compiling; anything else is
// TC_ERROR_CACHE (then the cache compiles instead). Skipped where NVRTC is not installed.
TEST(CudaBackend, ArtefactRoundTrip) {
  try {
    Nvrtc::get();
  } catch (const tc::Error& e) {
    GTEST_SKIP() << e.what();
  }
  Inputs in;
  in.f32({6, 5}).f32({5, 4});
  auto p = tc_test::build("def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }");
  auto bound = tc_test::bind_def(p, in);
  const tc::backends::Backend& cuda = tc::backends::find_backend("cuda");
  tc::tune::OptionSet o;
  o.set("backend", "cuda");
  o.set("cuda.arch", "sm_90");
  tc::backends::KnobValues values = o.values_for(cuda);
  auto kernel = cuda.compile(bound, cuda.default_target(), values);
  std::string artefact = kernel->artefact();
  ASSERT_EQ(artefact.rfind("libtc-cuda-kernel 1\narch sm_90\n", 0), 0u) << artefact.substr(0, 80);
  auto loaded = cuda.load(bound, cuda.default_target(), values, artefact);
  EXPECT_EQ(loaded->code(), kernel->code());
  EXPECT_EQ(loaded->describe(), kernel->describe());
  EXPECT_EQ(loaded->artefact(), artefact);
  tc_test::error_of([&] { cuda.load(bound, cuda.default_target(), values, artefact.substr(0, artefact.size() / 2)); },
                    TC_ERROR_CACHE);
  tc_test::error_of([&] { cuda.load(bound, cuda.default_target(), values, "libtc-cpu-kernel"); }, TC_ERROR_CACHE);
  std::string bad_length = artefact;  // a length that is not a number: refused as well, not thrown as something else
  bad_length.replace(bad_length.find("\nsource ") + 8, 1, "x");
  tc_test::error_of([&] { cuda.load(bound, cuda.default_target(), values, bad_length); }, TC_ERROR_CACHE);
  o.set("cuda.emulate", "1");
  EXPECT_EQ(cuda.compile(bound, cuda.default_target(), o.values_for(cuda))->artefact(), "");  // emulated: never cached code
}

// The emulation's barriers, on hand-written CUDA C: a block's __syncthreads waits for all its
// threads (each thread reads what the others wrote to shared memory before the barrier), a
// warp's shuffles combine 32 lanes while the block's warps run different numbers of rounds,
// a named barrier (__barrier_sync_count, what tc_group_sync uses for several warps along x)
// waits for its count of threads while other rows run other numbers of rounds, and a
// __syncthreads or named barrier some threads never reach fails the run instead of hanging.
namespace {

CudaSource hand_written(const std::string& kernel, const std::string& body) {
  CudaSource s;
  s.text = "extern \"C\" __global__ void " + kernel + "(int* out, unsigned long long* tc_fault) {\n" + body + "}\n";
  Launch l;
  l.kernel = kernel;
  l.grid_axes = 1;
  l.block_axes = 2;
  l.synchronises = true;
  s.launches = {l};
  s.param_types = {"int*", "unsigned long long*"};
  return s;
}

void run_hand_written(const CudaSource& s, std::vector<int>& out, std::array<unsigned, 3> grid,
                      std::array<unsigned, 3> block) {
  EmulatedKernels kernels(s);
  std::vector<unsigned long long> fault(2, 0);
  LaunchDims d;
  d.grid = grid;
  d.block = block;
  kernels.run({out.data(), fault.data()}, {d});
}

}  // namespace

TEST(CudaEmulation, SyncthreadsWaitsForTheWholeBlock) {
  // Each thread writes its id, then (after the barrier) reads its neighbour's: wrong without a
  // barrier, since thread t + 1 runs after thread t.
  CudaSource s = hand_written("neighbours",
                              "  __shared__ int ids[64];\n"
                              "  unsigned t = threadIdx.x + blockDim.x * threadIdx.y;\n"
                              "  ids[t] = (int)(t + 100 * blockIdx.x);\n"
                              "  __syncthreads();\n"
                              "  out[blockIdx.x * 64 + t] = ids[(t + 1) % 64];\n");
  std::vector<int> out(128, -1);
  run_hand_written(s, out, {2, 1, 1}, {32, 2, 1});
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 64; ++t) EXPECT_EQ(out[static_cast<size_t>(b * 64 + t)], (t + 1) % 64 + 100 * b) << b << " " << t;
}

TEST(CudaEmulation, ShufflesCombineAWarpsLanes) {
  // Warp y runs y + 1 rounds of a 32-lane sum (warps out of step, as under a mapped loop).
  CudaSource s = hand_written("warp_sums",
                              "  for (unsigned r = 0; r <= threadIdx.y; ++r) {\n"
                              "    int v = (int)(threadIdx.x + r);\n"
                              "    for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off);\n"
                              "    __syncwarp();\n"
                              "    if (threadIdx.x == 0) out[threadIdx.y * 4 + r] = v;\n"
                              "  }\n");
  std::vector<int> out(16, -1);
  run_hand_written(s, out, {1, 1, 1}, {32, 4, 1});
  for (int y = 0; y < 4; ++y)
    for (int r = 0; r < 4; ++r) EXPECT_EQ(out[static_cast<size_t>(y * 4 + r)], r <= y ? 496 + 32 * r : -1) << y << " " << r;
}

// A block of `threads` along x whose threads do not all reach a barrier: the run fails.
static void expect_divergence_fails(const CudaSource& s, unsigned threads) {
  std::vector<int> out(threads, 0);
  try {
    run_hand_written(s, out, {1, 1, 1}, {threads, 1, 1});
    FAIL() << "expected TC_ERROR_INTERNAL";
  } catch (const tc::Error& e) {
    EXPECT_EQ(e.status(), TC_ERROR_INTERNAL);
    EXPECT_NE(std::string(e.what()).find("did not all reach the same barrier"), std::string::npos) << e.what();
  }
}

TEST(CudaEmulation, ABarrierNotEveryThreadReachesFails) {
  expect_divergence_fails(hand_written("diverges",
                                       "  if (threadIdx.x == 3) return;\n"
                                       "  __syncthreads();\n"
                                       "  out[threadIdx.x] = 1;\n"),
                          32);
}

TEST(CudaEmulation, NamedBarriersSynchroniseARowOfWarps) {
  // Row y (two warps along x) runs y + 1 rounds; in each, thread x writes to shared memory,
  // waits at the row's barrier, then reads thread x + 1's value (x = 31 reads the other
  // warp's): wrong without the barrier, and a hang if the barrier waited for the whole block.
  CudaSource s = hand_written("rows",
                              "  __shared__ int v[3][64];\n"
                              "  for (unsigned r = 0; r <= threadIdx.y; ++r) {\n"
                              "    v[threadIdx.y][threadIdx.x] = (int)(threadIdx.x + 100 * r);\n"
                              "    __barrier_sync_count(1 + threadIdx.y, blockDim.x);\n"
                              "    int next = v[threadIdx.y][(threadIdx.x + 1) % 64];\n"
                              "    __barrier_sync_count(1 + threadIdx.y, blockDim.x);\n"
                              "    out[(threadIdx.y * 3 + r) * 64 + threadIdx.x] = next;\n"
                              "  }\n");
  std::vector<int> out(9 * 64, -1);
  run_hand_written(s, out, {1, 1, 1}, {64, 3, 1});
  for (int y = 0; y < 3; ++y)
    for (int r = 0; r < 3; ++r)
      for (int x = 0; x < 64; ++x)
        EXPECT_EQ(out[static_cast<size_t>((y * 3 + r) * 64 + x)], r <= y ? (x + 1) % 64 + 100 * r : -1) << y << " " << r << " " << x;
}

TEST(CudaEmulation, ANamedBarrierShortOfItsCountFails) {
  expect_divergence_fails(hand_written("short_row",
                                       "  if (threadIdx.x == 40) return;\n"
                                       "  __barrier_sync_count(1, blockDim.x);\n"
                                       "  out[threadIdx.x] = 1;\n"),
                          64);
}

// Kept code (kept_code.h): a text compiled once is kept and taken by the next compile of the
// same text, by the emulation (its host object, loaded where it lies) and by NVRTC (its cubin);
// a damaged kept file is a miss, compiled again and replaced, never used; a directory others
// can write is not used. Each test gets a $TMPDIR of its own (ctest runs each in a process of
// its own, and the kept directories are found on first use), so that no concurrent test adds
// files to the directories it lists.
namespace {

struct FreshTmpdir {
  std::string dir;
  FreshTmpdir() {
    char name[] = "/tmp/tc-kept-test-XXXXXX";
    dir = mkdtemp(name) ? name : "";
    setenv("TMPDIR", dir.c_str(), 1);
  }
  ~FreshTmpdir() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
};

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') names.push_back(dir + "/" + e->d_name);
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

ino_t inode_of(const std::string& path) {
  struct stat st{};
  return stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

// Ten bytes in place of `path` (a new file, as another process would see one).
void damage(const std::string& path) {
  std::ofstream(path + ".damaged", std::ios::binary) << "\x7f" "ELF12345\n";
  ASSERT_EQ(std::rename((path + ".damaged").c_str(), path.c_str()), 0);
}

// A kernel no earlier run compiled: its constant is this process's id and the time.
CudaSource unique_kernel(int& offset) {
  const std::string unique = std::to_string(getpid()) + std::to_string(time(nullptr));
  offset = static_cast<int>(std::stoll(unique) % 1000003);
  return hand_written("kept", "  out[threadIdx.x] = (int)(threadIdx.x + " + unique + "ll % 1000003);\n");
}

}  // namespace

TEST(KeptCode, KeepsFindsAndRefusesDamagedFilesAndOthersDirectories) {
  FreshTmpdir tmp;
  KeptCode kept("kept-test");
  EXPECT_EQ(kept.dir(), tmp.dir + "/kept-test");
  EXPECT_FALSE(kept.usable()) << "made by the first keep, not before";
  EXPECT_FALSE(kept.find("key a"));
  ASSERT_TRUE(kept.keep("key a", std::string("bytes\0of a", 10)));
  ASSERT_TRUE(kept.usable());
  ASSERT_TRUE(kept.keep("key b", ""));
  EXPECT_EQ(kept.find("key a").value_or("none"), std::string("bytes\0of a", 10));
  EXPECT_EQ(kept.find("key b").value_or("none"), "");
  EXPECT_NE(kept.path("key a"), kept.path("key b"));
  // One byte changed: the checksum no longer matches.
  {
    std::fstream f(kept.path("key a"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(1);
    f.put('X');
  }
  EXPECT_FALSE(kept.find("key a"));
  ASSERT_TRUE(kept.keep("key a", "new"));
  EXPECT_EQ(kept.find("key a").value_or("none"), "new");
  EXPECT_EQ(files_in(kept.dir()).size(), 2u) << "no staged file left behind";
  // A directory others can write: not used.
  ASSERT_EQ(chmod(kept.dir().c_str(), 0777), 0);
  KeptCode shared("kept-test");
  EXPECT_FALSE(shared.usable());
  EXPECT_FALSE(shared.find("key a"));
  EXPECT_FALSE(shared.keep("key c", "c"));
}

TEST(CudaEmulation, ACompiledTextIsKeptLoadedAgainAndReplacedWhenDamaged) {
  FreshTmpdir tmp;
  const std::string dir = kept_objects_dir();
  ASSERT_FALSE(dir.empty()) << "no directory for kept objects in $TMPDIR";
  int offset = 0;
  CudaSource s = unique_kernel(offset);
  auto check = [&] {
    std::vector<int> out(32, -1);
    run_hand_written(s, out, {1, 1, 1}, {32, 1, 1});
    for (int t = 0; t < 32; ++t) ASSERT_EQ(out[static_cast<size_t>(t)], t + offset) << t;
  };
  check();
  std::vector<std::string> kept = files_in(dir);
  ASSERT_EQ(kept.size(), 1u) << "the compiled text is kept as one file";
  // Damaged: nothing in this process has loaded it from there yet.
  damage(kept[0]);
  check();
  const ino_t inode = inode_of(kept[0]);
  EXPECT_GT(std::filesystem::file_size(kept[0]), 10u) << "the damaged file was replaced by a new compile";
  check();
  EXPECT_EQ(inode_of(kept[0]), inode) << "the third compile loaded the kept file instead of keeping a new one";
}

// The names of the shared objects this process has loaded that contain `part`, as opened.
std::vector<std::string> loaded_objects_named(const std::string& part) {
  std::vector<std::string> names;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        if (info->dlpi_name && *info->dlpi_name) static_cast<std::vector<std::string>*>(data)->push_back(info->dlpi_name);
        return 0;
      },
      &names);
  names.erase(std::remove_if(names.begin(), names.end(), [&](const std::string& n) { return n.find(part) == std::string::npos; }),
              names.end());
  return names;
}

// NVRTC opens its builtins by name where the loader looks. Found in a directory on no loader
// path (here: links to this machine's NVRTC and builtins), the builtins come from that
// directory, as a toolkit found through CUDA_HOME alone needs (the loader's path would give
// this machine's own, or none: "failed to open libnvrtc-builtins.so.13.0").
TEST(CudaEmulation, NvrtcsBuiltinsComeFromItsOwnDirectory) {
  FreshTmpdir tmp;
  std::string found;
  for (const std::string& c : Nvrtc::default_candidates())
    if (c.find('/') != std::string::npos && std::filesystem::exists(c)) {
      found = c;
      break;
    }
  if (found.empty()) GTEST_SKIP() << "no NVRTC in a toolkit directory";
  const std::filesystem::path real_dir = std::filesystem::path(found).parent_path();
  const std::string links = tmp.dir + "/toolkit";
  std::filesystem::create_directory(links);
  for (const auto& entry : std::filesystem::directory_iterator(real_dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("libnvrtc", 0) == 0) std::filesystem::create_symlink(entry.path(), links + "/" + name);
  }
  const std::string nvrtc_path = links + "/" + std::filesystem::path(found).filename().string();
  ASSERT_TRUE(loaded_objects_named("libnvrtc").empty()) << "this test needs a process that has not loaded NVRTC";
  Nvrtc nvrtc({nvrtc_path});
  ASSERT_EQ(nvrtc.path(), nvrtc_path);
  int offset = 0;
  EXPECT_EQ(nvrtc.compile_cubin(unique_kernel(offset).text, "builtins.cu", "sm_80").bytes.substr(0, 4), "\x7f" "ELF");
  std::vector<std::string> builtins = loaded_objects_named("libnvrtc-builtins");
  ASSERT_EQ(builtins.size(), 1u) << "NVRTC's builtins loaded once";
  EXPECT_EQ(builtins[0], links + "/libnvrtc-builtins.so." + nvrtc.version());
}

TEST(CudaEmulation, NvrtcKeepsACubinAndCompilesAgainWhenItIsDamaged) {
  FreshTmpdir tmp;
  const Nvrtc* nvrtc = nullptr;
  try {
    nvrtc = &Nvrtc::get();
  } catch (const tc::Error& e) {
    GTEST_SKIP() << e.what();
  }
  int offset = 0;
  CudaSource s = unique_kernel(offset);
  const std::string dir = tmp.dir + "/tc-nvrtc-kept-" + std::to_string(getuid());
  std::string cubin = nvrtc->compile_cubin(s.text, "kept.cu", "sm_80").bytes;
  ASSERT_EQ(cubin.substr(0, 4), "\x7f" "ELF");
  std::vector<std::string> kept = files_in(dir);
  ASSERT_EQ(kept.size(), 2u) << "the cubin and ptxas's report are kept as two files in " << dir;
  const ino_t inode = inode_of(kept[0]);
  EXPECT_EQ(nvrtc->compile_cubin(s.text, "kept.cu", "sm_80").bytes, cubin);
  EXPECT_EQ(inode_of(kept[0]), inode) << "the second compile took the kept cubin";
  EXPECT_EQ(files_in(dir).size(), 2u);
  EXPECT_NE(nvrtc->compile_cubin(s.text, "kept.cu", "sm_90").bytes, cubin) << "another architecture: another cubin";
  EXPECT_EQ(files_in(dir).size(), 4u);
  damage(kept[0]);
  EXPECT_EQ(nvrtc->compile_cubin(s.text, "kept.cu", "sm_80").bytes, cubin);
  EXPECT_GT(std::filesystem::file_size(kept[0]), 10u) << "the damaged file was replaced by a new compile";
}
