// microkernel_avx512.cpp — the micro-kernels for AVX-512F (microkernel.h): float 12 x 32 and
// double 12 x 16, twenty-four 512-bit accumulators, two registers for B's vectors and one for
// A's broadcast, of the thirty-two.
#include <immintrin.h>

#include <cstdint>

#include "backends/cpu/contraction/microkernel.h"

// GCC and Clang spell "compile what follows for this ISA" differently.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f")
#endif

#include "backends/cpu/contraction/microkernel_body.h"

namespace tc::backends::cpu {
namespace {

struct Avx512F32 {
  using V = __m512;
  static constexpr int kLanes = 16;
  static V zero() { return _mm512_setzero_ps(); }
  static V load(const float* p) { return _mm512_load_ps(p); }
  static V loadu(const float* p) { return _mm512_loadu_ps(p); }
  static void storeu(float* p, V x) { _mm512_storeu_ps(p, x); }
  static V broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
};

struct Avx512F64 {
  using V = __m512d;
  static constexpr int kLanes = 8;
  static V zero() { return _mm512_setzero_pd(); }
  static V load(const double* p) { return _mm512_load_pd(p); }
  static V loadu(const double* p) { return _mm512_loadu_pd(p); }
  static void storeu(double* p, V x) { _mm512_storeu_pd(p, x); }
  static V broadcast(const double* p) { return _mm512_set1_pd(*p); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  static V add(V a, V b) { return _mm512_add_pd(a, b); }
};

TC_MICROKERNEL(f32_12x32, Avx512F32, float, 12, 2)

TC_MICROKERNEL(f64_12x16, Avx512F64, double, 12, 2)

}  // namespace

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

// Every CPU with AVX-512F has AVX2: the AVX2 transposes pack for these kernels too.
MicroKernel<float> avx512_f32() { return {12, 32, f32_12x32, "avx512", avx2_f32().pack_transposed, 16}; }
MicroKernel<double> avx512_f64() { return {12, 16, f64_12x16, "avx512", avx2_f64().pack_transposed, 8}; }

}  // namespace tc::backends::cpu
