// microkernel_avx512.cpp — the micro-kernels for AVX-512F (microkernel.h): float 12 x 32 and
// double 12 x 16, twenty-four 512-bit accumulators, two registers for B's vectors and one for
// A's broadcast, of the thirty-two; and the transposing packs (16 x 16 floats, 8 x 8 doubles
// through registers).
#include <immintrin.h>

#include <cstdint>

#include "backends/cpu/contraction/microkernel.h"

// GCC and Clang spell "compile what follows for this ISA" differently.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f")
// GCC 12's headers build the shuffles' masked forms on _mm512_undefined_ps(), which its
// -Wmaybe-uninitialized takes for a read of an uninitialised value (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
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

// The transposing packs (microkernel.h), a 512-bit register of K steps at a time: groups of
// 16 runs of floats (8 of doubles) through registers, as the AVX2 packs do 8 (4), each block
// fetching the next group's runs at the same place (see microkernel_avx2.cpp). Twice
// the values per shuffle of the AVX2 transposes: a float packed from L2 in 0.10-0.11 ns instead
// of 0.23, from memory in 0.45-0.48 instead of 0.9 (ccsd2's runs of 16 floats into panels of 32,
// Zen 5).
// The blocks are written value by value, not as loops over arrays of registers: GCC left such
// loops rolled, the arrays on the stack (0.26 ns from L2, 1.1 from memory).

// 16 x 16 floats: pairs of rows interleaved, then quads, then the 128-bit lanes of four rows
// gathered and those of sixteen: 64 shuffles for 256 values.
#define TC_PAIR(a, b, lo, hi) const __m512 lo = _mm512_unpacklo_ps(a, b), hi = _mm512_unpackhi_ps(a, b)
// uQ..uQ+3, lane L: rows Q..Q+3 of columns 4L, 4L+1, 4L+2, 4L+3.
#define TC_QUAD(t0, t1, t2, t3, u0, u1, u2, u3)                                                  \
  const __m512 u0 = _mm512_shuffle_ps(t0, t2, 0x44), u1 = _mm512_shuffle_ps(t0, t2, 0xEE),       \
               u2 = _mm512_shuffle_ps(t1, t3, 0x44), u3 = _mm512_shuffle_ps(t1, t3, 0xEE)
#define TC_LANES(u0, u4, u8, u12, r0, r4, r8, r12)                                                \
  do {                                                                                            \
    const __m512 v = _mm512_shuffle_f32x4(u0, u4, 0x44), w = _mm512_shuffle_f32x4(u0, u4, 0xEE);  \
    const __m512 v2 = _mm512_shuffle_f32x4(u8, u12, 0x44), w2 = _mm512_shuffle_f32x4(u8, u12, 0xEE); \
    r0 = _mm512_shuffle_f32x4(v, v2, 0x88), r4 = _mm512_shuffle_f32x4(v, v2, 0xDD);               \
    r8 = _mm512_shuffle_f32x4(w, w2, 0x88), r12 = _mm512_shuffle_f32x4(w, w2, 0xDD);              \
  } while (0)
#define TC_FOR16(X) X(0); X(1); X(2); X(3); X(4); X(5); X(6); X(7); X(8); X(9); X(10); X(11); X(12); X(13); X(14); X(15)
#define TC_FOR8(X) X(0); X(1); X(2); X(3); X(4); X(5); X(6); X(7)
// A block of fewer steps than lanes (`steps`, the last of a run) loads only those (a masked
// load reads nothing past them) and stores only their rows.
inline __attribute__((always_inline)) __m512 load_steps(const float* p, int steps) {
  return steps == 16 ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << steps) - 1), p);
}
inline __attribute__((always_inline)) __m512d load_steps(const double* p, int steps) {
  return steps == 8 ? _mm512_loadu_pd(p) : _mm512_maskz_loadu_pd(static_cast<__mmask8>((1u << steps) - 1), p);
}
inline __attribute__((always_inline)) void store(float* p, __m512 x) { _mm512_storeu_ps(p, x); }
inline __attribute__((always_inline)) void store(double* p, __m512d x) { _mm512_storeu_pd(p, x); }
#define TC_LOAD(c) auto r##c = (__builtin_prefetch(ahead[c] + k), load_steps(s[c] + k, steps))
#define TC_STORE(c) \
  if (c < steps) store(d + c * row, r##c)

// Values k..k+steps-1 (steps <= 16) of the runs s[0..15] into rows k.. of dst (`row` apart).
inline __attribute__((always_inline)) void pack_block(float* d, const float* const* s, const float* const* ahead,
                                                      int64_t k, int64_t row, int steps) {
  TC_FOR16(TC_LOAD);
  TC_PAIR(r0, r1, t0, t1);
  TC_PAIR(r2, r3, t2, t3);
  TC_PAIR(r4, r5, t4, t5);
  TC_PAIR(r6, r7, t6, t7);
  TC_PAIR(r8, r9, t8, t9);
  TC_PAIR(r10, r11, t10, t11);
  TC_PAIR(r12, r13, t12, t13);
  TC_PAIR(r14, r15, t14, t15);
  TC_QUAD(t0, t1, t2, t3, u0, u1, u2, u3);
  TC_QUAD(t4, t5, t6, t7, u4, u5, u6, u7);
  TC_QUAD(t8, t9, t10, t11, u8, u9, u10, u11);
  TC_QUAD(t12, t13, t14, t15, u12, u13, u14, u15);
  TC_LANES(u0, u4, u8, u12, r0, r4, r8, r12);
  TC_LANES(u1, u5, u9, u13, r1, r5, r9, r13);
  TC_LANES(u2, u6, u10, u14, r2, r6, r10, r14);
  TC_LANES(u3, u7, u11, u15, r3, r7, r11, r15);
  TC_FOR16(TC_STORE);
}

// 8 x 8 doubles the same way: pairs of rows interleaved, then the 128-bit lanes of pairs
// gathered and those of eight: 24 shuffles for 64 values.
#define TC_PAIR_D(a, b, lo, hi) const __m512d lo = _mm512_unpacklo_pd(a, b), hi = _mm512_unpackhi_pd(a, b)
// t2G + c, lane L: rows 2G, 2G+1 of column 2L + c.
#define TC_LANES_D(t0, t2, t4, t6, r0, r2, r4, r6)                                                \
  do {                                                                                            \
    const __m512d v = _mm512_shuffle_f64x2(t0, t2, 0x44), w = _mm512_shuffle_f64x2(t0, t2, 0xEE); \
    const __m512d v2 = _mm512_shuffle_f64x2(t4, t6, 0x44), w2 = _mm512_shuffle_f64x2(t4, t6, 0xEE); \
    r0 = _mm512_shuffle_f64x2(v, v2, 0x88), r2 = _mm512_shuffle_f64x2(v, v2, 0xDD);               \
    r4 = _mm512_shuffle_f64x2(w, w2, 0x88), r6 = _mm512_shuffle_f64x2(w, w2, 0xDD);               \
  } while (0)

inline __attribute__((always_inline)) void pack_block(double* d, const double* const* s, const double* const* ahead,
                                                      int64_t k, int64_t row, int steps) {
  TC_FOR8(TC_LOAD);
  TC_PAIR_D(r0, r1, t0, t1);
  TC_PAIR_D(r2, r3, t2, t3);
  TC_PAIR_D(r4, r5, t4, t5);
  TC_PAIR_D(r6, r7, t6, t7);
  TC_LANES_D(t0, t2, t4, t6, r0, r2, r4, r6);
  TC_LANES_D(t1, t3, t5, t7, r1, r3, r5, r7);
  TC_FOR8(TC_STORE);
}

#undef TC_PAIR
#undef TC_QUAD
#undef TC_LANES
#undef TC_FOR16
#undef TC_FOR8
#undef TC_LOAD
#undef TC_STORE
#undef TC_PAIR_D
#undef TC_LANES_D

// Groups of L runs, L steps at a time (the last block of a run's steps masked), where the
// panel is whole groups (B's panels: 32 floats, 16 doubles wide); the AVX2 pack otherwise. A
// panel of 12 runs (A's, every micro-kernel's MR) as one 16-lane group, its last 4 lanes
// repeating its first, was slower than the AVX2 pack (ccsd1's A panels of 12 runs of 312 floats:
// 46 ms against 43), and as a group of 8 doubles and 4 through the AVX2 pack, 2-3% slower on
// the largest float64 terms (ccsd9, ccsd18); a run's last steps through the AVX2 pack were
// slower than a masked block (intensli4's runs of 72 floats: 16% of the time on the last 8).
template <typename T, int L>
void pack_transposed(T* dst, const T* const* src, int width, int64_t kc, int step, TransposePackFn<T> narrower) {
  if (width % L != 0) return narrower(dst, src, width, kc, step);
  const int64_t row = int64_t{step} * width;  // between one step of a run and the next in dst
  for (int c0 = 0; c0 < width; c0 += L) {
    const T* const* s = src + c0;
    const T* const* ahead = c0 + L < width ? s + L : s;  // the next group's runs
    int64_t k = 0;
    for (; k + L <= kc; k += L) pack_block(dst + k * row + c0, s, ahead, k, row, L);
    if (k < kc) pack_block(dst + k * row + c0, s, ahead, k, row, static_cast<int>(kc - k));
  }
}

void pack_transposed_f32(float* dst, const float* const* src, int width, int64_t kc, int step) {
  pack_transposed<float, 16>(dst, src, width, kc, step, avx2_f32().pack_transposed);
}

void pack_transposed_f64(double* dst, const double* const* src, int width, int64_t kc, int step) {
  pack_transposed<double, 8>(dst, src, width, kc, step, avx2_f64().pack_transposed);
}

}  // namespace

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC diagnostic pop
#pragma GCC pop_options
#endif

MicroKernel<float> avx512_f32() { return {12, 32, f32_12x32, "avx512", pack_transposed_f32, 16}; }
MicroKernel<double> avx512_f64() { return {12, 16, f64_12x16, "avx512", pack_transposed_f64, 8}; }

}  // namespace tc::backends::cpu
