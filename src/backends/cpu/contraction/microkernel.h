// microkernel.h — the innermost block of a contraction (gett.h): an MR x NR tile of the output
// accumulated in vector registers over kc steps from an A micro-panel (kc x MR values, MR per
// step) and a B micro-panel (kc x NR values, NR per step), then written (or added) to memory.
// One per vector ISA and element type, picked once per process for this CPU (AVX-512F, else
// AVX2 with FMA, else portable scalar code). It does not pack, block or thread.
#pragma once

#include <cstdint>
#include <string>

namespace tc::backends::cpu {

// Writes the tile: row r (0 <= r < mr), column j (0 <= j < nr) to c[rows[r] + j], the tile's
// value when `add` is false, added to what is there when it is true. a and b are aligned to 64
// bytes; a holds kc * mr values, b kc * nr. The tile's lines of c are fetched while the sum
// runs; where c is a scratch tile that the caller then copies to the output (a tile whose
// columns cross from one run of the output into another), `fetch` names the output's lines
// instead (`fetches` addresses; null: c's rows).
template <typename T>
using MicroKernelFn = void (*)(int64_t kc, const T* a, const T* b, T* c, const int64_t* rows, bool add,
                               const void* const* fetch, int fetches);

// Packs `width` runs into a micro-panel: dst[k * step * width + c] = src[c][k] for c < width,
// k < kc (a transpose: each run is one row or column of an operand whose K values follow one
// another, the panel holds `width` values per step of K; `step` > 1 where the run's values
// lie every step-th step of the panel's K order). Vector loads and in-register transposes
// where the ISA has them; the packing's generic loops otherwise (null).
template <typename T>
using TransposePackFn = void (*)(T* dst, const T* const* src, int width, int64_t kc, int step);

template <typename T>
struct MicroKernel {
  int mr = 0, nr = 0;
  MicroKernelFn<T> run = nullptr;
  const char* isa = "";  // "avx512", "avx2", "scalar"
  TransposePackFn<T> pack_transposed = nullptr;
  int lanes = 1;  // values per vector register: the multiply-adds one instruction does
};

// The fastest micro-kernel this CPU runs, per element type (float, double).
template <typename T>
const MicroKernel<T>& host_microkernel();

// The micro-kernels of one ISA, for tests (null `run` where the CPU lacks the ISA).
template <typename T>
MicroKernel<T> microkernel_for(const std::string& isa);

// Each ISA's kernels (microkernel_avx2.cpp, microkernel_avx512.cpp, microkernel.cpp). Callable
// only on a CPU with the ISA.
MicroKernel<float> avx512_f32();
MicroKernel<double> avx512_f64();
MicroKernel<float> avx2_f32();
MicroKernel<double> avx2_f64();
MicroKernel<float> scalar_f32();
MicroKernel<double> scalar_f64();

}  // namespace tc::backends::cpu
