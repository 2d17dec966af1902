// inputs.h — the inputs `tc run` and `tc tune` make: the entry's input tensors shaped by
// --size and filled with deterministic pseudo-random values (float16 and bfloat16 through
// float32, converted by libtc itself), with the options of --backend and --option.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cli.h"

namespace tc_cli {

bool allocate(std::vector<char>& buf, size_t bytes, const char* tensor);

// float16 or bfloat16: 16-bit floats the tool converts through float32.
inline bool is_half(DLDataType dt) { return (dt.code == kDLFloat || dt.code == kDLBfloat) && dt.bits == 16; }

// float32 <-> float16 or bfloat16 of whole buffers, computed by libtc itself (the tool includes
// tc.h only): four defs on the reference backend, whose casts round to nearest even, compiled on
// first use for each chunk length (at most two lengths per direction: full chunks and the
// remainder).
class HalfConverter {
 public:
  // float32 values -> bits of `half` (float16 or bfloat16); both buffers hold n elements.
  bool to_half(DLDataType half, const void* src, void* dst, int64_t n) {
    return convert(half.code == kDLBfloat ? "to_bf16" : "to_half", kF32, half, src, dst, n);
  }
  // bits of `half` -> float32 values.
  bool to_float(DLDataType half, const void* src, void* dst, int64_t n) {
    return convert(half.code == kDLBfloat ? "bf16_to_float" : "to_float", half, kF32, src, dst, n);
  }

 private:
  static constexpr DLDataType kF32{kDLFloat, 32, 1};
  static constexpr int64_t kChunk = int64_t{1} << 24;  // elements per call (an extent is < 2^31)

  bool init();  // the conversion program and its options, on first use
  bool convert(const char* entry, DLDataType from, DLDataType to, const void* src, void* dst, int64_t n);

  Program prog_;
  Options opts_;
  std::map<std::pair<std::string, int64_t>, Kernel> kernels_;
};

// One element as a double (float16 buffers are converted to float32 before they are summed).
double element(const char* p, DLDataType dt);

DLTensor make_tensor(std::vector<char>& buf, DLDataType dt, int ndim, int64_t* shape);

// The entry's inputs, shaped by --size and filled deterministically (the same for run and tune).
struct Inputs {
  std::vector<std::vector<char>> bufs;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<DLTensor> tensors;
};

// What run and tune start from: the options, the program, the entry's parameter counts and its
// deterministic inputs. False (with the message printed) if any of them cannot be had.
struct Job {
  Options opts;
  Program prog;
  size_t ni = 0, no = 0;
  HalfConverter half;
  Inputs in;
};

bool prepare(const char* path, const RunArgs& a, Job& j);

}  // namespace tc_cli
