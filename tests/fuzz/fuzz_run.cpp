// fuzz_run.cpp — libFuzzer target for tc_infer_outputs / tc_compile / tc_run: the bytes pick
// one of a fixed set of programs, then dtypes, ranks, shapes (small), strides (including
// negative, zero and overlapping ones), byte offsets and tensor contents. Every call must
// return a status; a run that succeeds must write only inside its outputs (checked with
// canaries around every output buffer).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tc/tc.h"

namespace {

const char* kPrograms[] = {
    "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }",
    "def lut(float(E,D) L, int32(B,N) I) -> (O) { O(b,d) +=! L(I(b,n), d) }",
    "def conv(float(N,C,H,W) I, float(F,C,KH,KW) W1) -> (O) { O(n,f,h,w) +=! I(n,c,h+kh,w+kw) * W1(f,c,kh,kw) }",
    "def sm(float(N,D) X) -> (O) { m(n) max=! X(n,d)\n e(n,d) = exp(X(n,d) - m(n))\n s(n) +=! e(n,d)\n O(n,d) = e(n,d)/s(n) }",
    "def pool(float(B,H) X) -> (O) { O(b,i) max=! X(b, 2*i + k) where k in 0:2 }",
    "def cast(int8(N) A, uint16(N) B) -> (O, P) { O(i) = float(A(i)) / (B(i) + 1)\n P(i) = A(i) % 3 }",
    "def scal(double a, double(N) X) -> (Y) { Y(i) = a * X(i) + (i > 2 ? X(i - 1) : 0) }",
    "def sgemm(float a, float b, float(N,M) A, float(M,K) B) -> (C) { C(i,j) = b * C(i,j)\n C(i,j) += a * A(i,k) * B(k,j) }",
    "def pre(float(N) B, float(M) C, float(P) D) -> (A) { A(i,j) = B(i) * C(i+j) * D(j) }",
    "def h(half(N) X, bool(N) M) -> (Y) { Y(i) = M(i) ? X(i) * 2 : -X(i) }",
};

struct Reader {
  const uint8_t* p;
  size_t n;
  uint8_t byte() { return n ? (--n, *p++) : 0; }
};

const DLDataType kTypes[] = {{kDLFloat, 32, 1}, {kDLInt, 32, 1}, {kDLInt, 8, 1},  {kDLUInt, 16, 1},
                             {kDLFloat, 64, 1}, {kDLFloat, 16, 1}, {TC_DL_BOOL, 8, 1}, {kDLFloat, 32, 2}};

constexpr size_t kCanary = 64;

struct Buffer {
  std::vector<uint8_t> bytes;
  int64_t shape[TC_MAX_NDIM];
  int64_t strides[TC_MAX_NDIM];
};

// Makes a tensor whose memory (plus canaries on both sides) covers every element it addresses.
DLTensor make(Reader& r, Buffer& b, DLDataType dt, int ndim, const int64_t* shape, bool fuzz_strides) {
  int64_t elem = 1, span = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    b.shape[d] = shape[d];
    int64_t s = elem;
    if (fuzz_strides && (r.byte() & 3) == 0) s = static_cast<int8_t>(r.byte()) % 5;  // may be 0 or negative
    b.strides[d] = s;
    elem *= shape[d] > 0 ? shape[d] : 1;
    if (shape[d] > 0) span += (shape[d] - 1) * (s > 0 ? s : -s);
  }
  int64_t bytes_per = dt.bits / 8 * (dt.lanes ? dt.lanes : 1);
  if (bytes_per <= 0) bytes_per = 1;
  int64_t offset_elems = fuzz_strides ? (r.byte() % 3) : 0;
  b.bytes.assign(static_cast<size_t>((span + offset_elems) * bytes_per) + 2 * kCanary, 0xA5);
  for (size_t i = kCanary; i + kCanary < b.bytes.size(); ++i) b.bytes[i] = r.byte() & 0x3f;
  DLTensor t{};
  t.data = b.bytes.data() + kCanary;
  t.device = {kDLCPU, 0};
  t.ndim = ndim;
  t.dtype = dt;
  t.shape = b.shape;
  t.strides = b.strides;
  t.byte_offset = static_cast<uint64_t>(offset_elems * bytes_per);
  return t;
}

bool canaries_intact(const Buffer& b) {
  for (size_t i = 0; i < kCanary; ++i)
    if (b.bytes[i] != 0xA5 || b.bytes[b.bytes.size() - 1 - i] != 0xA5) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader r{data, size};
  const char* src = kPrograms[r.byte() % (sizeof kPrograms / sizeof *kPrograms)];
  tc_program* prog = nullptr;
  if (tc_define(&prog, src) != TC_OK) abort();
  size_t ni = 0, no = 0;
  tc_program_num_params(prog, nullptr, &ni, &no);
  std::vector<Buffer> in_bufs(ni);
  std::vector<DLTensor> inputs(ni);
  for (size_t i = 0; i < ni; ++i) {
    tc_param_info info = TC_STRUCT_INIT(tc_param_info);
    tc_program_input_info(prog, nullptr, i, &info);
    bool mutate = (r.byte() & 7) == 0;
    DLDataType dt = mutate ? kTypes[r.byte() % 8] : info.dtype;
    int ndim = mutate ? r.byte() % 5 : info.ndim;
    int64_t shape[TC_MAX_NDIM];
    for (int d = 0; d < ndim; ++d) shape[d] = r.byte() % 7;
    inputs[i] = make(r, in_bufs[i], dt, ndim, shape, true);
  }
  tc_tensor_info infos[4] = {TC_STRUCT_INIT(tc_tensor_info), TC_STRUCT_INIT(tc_tensor_info),
                             TC_STRUCT_INIT(tc_tensor_info), TC_STRUCT_INIT(tc_tensor_info)};
  size_t cap = 4;
  int st = tc_infer_outputs(prog, nullptr, inputs.data(), ni, infos, &cap);
  tc_kernel* k = nullptr;
  // The reference backend: thousands of executions a second instead of one JIT compilation
  // (~0.3 s) each; validation, overlap checks and canaries are the same for every backend.
  static tc_options* reference = [] {
    tc_options* o = nullptr;
    tc_options_create(&o);
    tc_options_set(o, "backend", "reference");
    return o;
  }();
  int st2 = tc_compile(&k, prog, nullptr, inputs.data(), ni, reference);
  if ((st == TC_OK) != (st2 == TC_OK)) abort();  // inference and compilation agree on validity
  if (st2 == TC_OK) {
    std::vector<Buffer> out_bufs(no);
    std::vector<DLTensor> outputs(no);
    for (size_t o = 0; o < no; ++o)
      outputs[o] = make(r, out_bufs[o], infos[o].dtype, infos[o].ndim, infos[o].shape, (r.byte() & 3) == 0);
    int rs = tc_run(k, inputs.data(), ni, outputs.data(), no);
    if (rs == TC_ERROR_INTERNAL || (rs != TC_OK && tc_last_error_message()[0] == '\0')) abort();
    for (const Buffer& b : out_bufs)
      if (!canaries_intact(b)) abort();  // wrote outside an output
    for (const Buffer& b : in_bufs)
      if (!canaries_intact(b)) abort();
  }
  tc_kernel_destroy(k);
  tc_program_destroy(prog);
  return 0;
}
