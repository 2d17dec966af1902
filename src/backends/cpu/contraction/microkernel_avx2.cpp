// microkernel_avx2.cpp — the micro-kernels for AVX2 with FMA (microkernel.h): float 6 x 16 and
// double 6 x 8, twelve 256-bit accumulators (BLIS's Haswell blocks), the other four registers
// for B's vectors and A's broadcast.
#include <immintrin.h>

#include <cstdint>

#include "backends/cpu/contraction/microkernel.h"

// GCC and Clang spell "compile what follows for this ISA" differently.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif

#include "backends/cpu/contraction/microkernel_body.h"

namespace tc::backends::cpu {
namespace {

struct Avx2F32 {
  using V = __m256;
  static constexpr int kLanes = 8;
  static V zero() { return _mm256_setzero_ps(); }
  static V load(const float* p) { return _mm256_load_ps(p); }
  static V loadu(const float* p) { return _mm256_loadu_ps(p); }
  static void storeu(float* p, V x) { _mm256_storeu_ps(p, x); }
  static V broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
};

struct Avx2F64 {
  using V = __m256d;
  static constexpr int kLanes = 4;
  static V zero() { return _mm256_setzero_pd(); }
  static V load(const double* p) { return _mm256_load_pd(p); }
  static V loadu(const double* p) { return _mm256_loadu_pd(p); }
  static void storeu(double* p, V x) { _mm256_storeu_pd(p, x); }
  static V broadcast(const double* p) { return _mm256_broadcast_sd(p); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  static V add(V a, V b) { return _mm256_add_pd(a, b); }
};

void f32_6x16(int64_t kc, const float* a, const float* b, float* c, const int64_t* rows, bool add) {
  ukernel::tile<Avx2F32, float, 6, 2>(kc, a, b, c, rows, add);
}

void f64_6x8(int64_t kc, const double* a, const double* b, double* c, const int64_t* rows, bool add) {
  ukernel::tile<Avx2F64, double, 6, 2>(kc, a, b, c, rows, add);
}

}  // namespace

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

MicroKernel<float> avx2_f32() { return {6, 16, f32_6x16, "avx2"}; }
MicroKernel<double> avx2_f64() { return {6, 8, f64_6x8, "avx2"}; }

}  // namespace tc::backends::cpu
