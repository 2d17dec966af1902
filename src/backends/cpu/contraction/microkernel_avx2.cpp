// microkernel_avx2.cpp — the micro-kernels for AVX2 with FMA (microkernel.h): float 6 x 16 and
// double 6 x 8, twelve 256-bit accumulators (BLIS's Haswell blocks), the other four registers
// for B's vectors and A's broadcast; and the transposing packs (8 x 8 floats, 4 x 4 doubles
// through registers), which the AVX-512 packs use for panels narrower than their groups.
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

// 4 rows of 8 floats, r[0..3], to 4 registers of two steps each: r[i] holds column i in its low
// half, column i + 4 in its high half.
inline void transpose_halves(__m256 r[4]) {
  __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  r[0] = _mm256_shuffle_ps(t0, t2, 0x44);
  r[1] = _mm256_shuffle_ps(t0, t2, 0xEE);
  r[2] = _mm256_shuffle_ps(t1, t3, 0x44);
  r[3] = _mm256_shuffle_ps(t1, t3, 0xEE);
}

// 2 rows of 4 doubles: r[i] holds column i in its low half, column i + 2 in its high half.
inline void transpose_halves(__m256d r[2]) {
  __m256d t0 = _mm256_unpacklo_pd(r[0], r[1]), t1 = _mm256_unpackhi_pd(r[0], r[1]);
  r[0] = t0;
  r[1] = t1;
}

// 8 x 8 floats (4 x 4 doubles): rows r[0..7] become columns. Each half of the rows transposed two
// steps to a register, then the low halves of the two gathered into one register, the high
// halves into another.
template <typename V, int L>
inline void transpose(V r[L]) {
  transpose_halves(r);
  transpose_halves(r + L / 2);
#pragma GCC unroll 4
  for (int i = 0; i < L / 2; ++i) {
    const V lo = r[i], hi = r[i + L / 2];
    if constexpr (L == 8) {
      r[i] = _mm256_permute2f128_ps(lo, hi, 0x20), r[i + L / 2] = _mm256_permute2f128_ps(lo, hi, 0x31);
    } else {
      r[i] = _mm256_permute2f128_pd(lo, hi, 0x20), r[i + L / 2] = _mm256_permute2f128_pd(lo, hi, 0x31);
    }
  }
}

// The first n (<= all) lanes of a half register to p, in pieces of 4, 2 and 1 floats (2 and 1
// doubles): AMD's masked stores are microcoded, dozens of cycles each.
inline void store_first(float* p, __m128 part, int n) {
  if (n == 4) return _mm_storeu_ps(p, part);
  if (n >= 2) _mm_storel_pi(reinterpret_cast<__m64*>(p), part), part = _mm_movehl_ps(part, part), p += 2, n -= 2;
  if (n >= 1) _mm_store_ss(p, part);
}
inline void store_first(double* p, __m128d part, int n) {
  if (n == 2) return _mm_storeu_pd(p, part);
  _mm_store_sd(p, part);
}

// The first n (< all) lanes of x to p: the first of its low half, or all of that and the first of
// its high half.
inline void store_first(float* p, __m256 x, int n) {
  if (n < 4) return store_first(p, _mm256_castps256_ps128(x), n);
  _mm_storeu_ps(p, _mm256_castps256_ps128(x));
  if (n > 4) store_first(p + 4, _mm256_extractf128_ps(x, 1), n - 4);
}
inline void store_first(double* p, __m256d x, int n) {
  if (n < 2) return store_first(p, _mm256_castpd256_pd128(x), n);
  _mm_storeu_pd(p, _mm256_castpd256_pd128(x));
  if (n > 2) store_first(p + 2, _mm256_extractf128_pd(x, 1), n - 2);
}

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
  using Half = __m128;
  static void transpose(V r[kLanes]) { cpu::transpose<V, kLanes>(r); }
  static void transpose_halves(V r[kLanes / 2]) { cpu::transpose_halves(r); }
  static Half low(V x) { return _mm256_castps256_ps128(x); }
  static Half high(V x) { return _mm256_extractf128_ps(x, 1); }
  static void store_first(float* p, V x, int n) { cpu::store_first(p, x, n); }
  static void store_first(float* p, Half x, int n) { cpu::store_first(p, x, n); }
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
  using Half = __m128d;
  static void transpose(V r[kLanes]) { cpu::transpose<V, kLanes>(r); }
  static void transpose_halves(V r[kLanes / 2]) { cpu::transpose_halves(r); }
  static Half low(V x) { return _mm256_castpd256_pd128(x); }
  static Half high(V x) { return _mm256_extractf128_pd(x, 1); }
  static void store_first(double* p, V x, int n) { cpu::store_first(p, x, n); }
  static void store_first(double* p, Half x, int n) { cpu::store_first(p, x, n); }
};

TC_MICROKERNEL(f32_6x16, Avx2F32, float, 6, 2)

TC_MICROKERNEL(f64_6x8, Avx2F64, double, 6, 2)

// A group of at most kLanes / 2 runs (A's last 4 of 12 floats, 2 of 6 doubles), kLanes steps of K
// at a time: each register after the transpose holds two steps, half a register each. As a
// whole group, its missing lanes repeating its first run and stored a piece at a time, it took
// twice the time (a 12-run panel of 16-float runs: 185 cycles a run against 86).
template <typename Ops, typename T>
inline void pack_half_group(T* dst, const T* const* src, int n, int64_t kc, int64_t row) {
  constexpr int L = Ops::kLanes, H = L / 2;
  const T* s[H];
  for (int c = 0; c < H; ++c) s[c] = src[c < n ? c : 0];
  int64_t k = 0;
  for (; k + L <= kc; k += L) {
    typename Ops::V r[H];
#pragma GCC unroll 4
    for (int c = 0; c < H; ++c) r[c] = Ops::loadu(s[c] + k);
    Ops::transpose_halves(r);
    T* d = dst + k * row;
#pragma GCC unroll 4
    for (int i = 0; i < H; ++i) {
      Ops::store_first(d + i * row, Ops::low(r[i]), n);
      Ops::store_first(d + (i + H) * row, Ops::high(r[i]), n);
    }
  }
  for (; k < kc; ++k)
    for (int c = 0; c < n; ++c) dst[k * row + c] = s[c][k];
}

// Groups of kLanes runs, kLanes steps of K at a time through registers; a last group of more
// than half of them (a width of 6 floats) repeats its first run in the lanes it lacks and stores
// only its own, one of at most half (pack_half_group) two steps to a register.
// Each step also fetches the next group's runs at the same place: a panel's runs are often far
// apart (intensli1's 16 rows of A 453 KB apart) and a run is only kc long, too short for the
// hardware's stream prefetchers to start before it ends, so without it every line is a
// demand miss (intensli1 float64 on Zen 5: 9.8 ms, 6.7 with the fetch; 66% of it packing).
template <typename Ops, typename T>
void pack_transposed(T* dst, const T* const* src, int width, int64_t kc, int step) {
  const int64_t row = int64_t{step} * width;  // between one step of a run and the next in dst
  constexpr int L = Ops::kLanes;
  for (int c0 = 0; c0 < width; c0 += L) {
    int n = width - c0 < L ? width - c0 : L;
    if (n <= L / 2) {
      pack_half_group<Ops>(dst + c0, src + c0, n, kc, row);
      continue;
    }
    const T* s[L];
    for (int c = 0; c < L; ++c) s[c] = src[c0 + (c < n ? c : 0)];
    const int next = c0 + L < width ? width - c0 - L : 0;  // runs in the next group
    const T* ahead[L];
    for (int c = 0; c < L; ++c) ahead[c] = next > 0 ? src[c0 + L + (c < next ? c : 0)] : s[c];
    int64_t k = 0;
    for (; k + L <= kc; k += L) {
      typename Ops::V r[L];
#pragma GCC unroll 16
      for (int c = 0; c < L; ++c) __builtin_prefetch(ahead[c] + k);  // the last group: its own lines, already loading
#pragma GCC unroll 8
      for (int c = 0; c < L; ++c) r[c] = Ops::loadu(s[c] + k);
      Ops::transpose(r);
#pragma GCC unroll 8
      for (int i = 0; i < L; ++i) {
        T* d = dst + (k + i) * row + c0;
        if (n == L) Ops::storeu(d, r[i]);
        else Ops::store_first(d, r[i], n);
      }
    }
    for (; k < kc; ++k)
      for (int c = 0; c < n; ++c) dst[k * row + c0 + c] = s[c][k];
  }
}

void pack_transposed_f32(float* dst, const float* const* src, int width, int64_t kc, int step) {
  pack_transposed<Avx2F32, float>(dst, src, width, kc, step);
}

void pack_transposed_f64(double* dst, const double* const* src, int width, int64_t kc, int step) {
  pack_transposed<Avx2F64, double>(dst, src, width, kc, step);
}

}  // namespace

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

MicroKernel<float> avx2_f32() { return {6, 16, f32_6x16, "avx2", pack_transposed_f32, 8}; }
MicroKernel<double> avx2_f64() { return {6, 8, f64_6x8, "avx2", pack_transposed_f64, 4}; }

}  // namespace tc::backends::cpu
