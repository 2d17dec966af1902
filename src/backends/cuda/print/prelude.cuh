// TC's scalar semantics (libtc: src/backends/cuda/print/prelude.cuh)
#define TC_DEVICE __device__ __forceinline__
TC_DEVICE long long tc_imin(long long a, long long b) { return a < b ? a : b; }
TC_DEVICE long long tc_imax(long long a, long long b) { return a > b ? a : b; }
TC_DEVICE long long tc_floord(long long n, long long d) { return n < 0 ? -((-n + d - 1) / d) : n / d; }
TC_DEVICE long long tc_clamp(long long i, long long n) { return i < 0 ? 0 : i >= n ? n - 1 : i; }
// The block (or thread) that runs the instances whose mapped schedule value is v: values step by
// `stride`; consecutive steps go to consecutive ones of `count`, round robin. One rule for every
// loop and every statement, so instances with equal values run on one thread.
TC_DEVICE long long tc_owner(long long v, long long stride, long long count) {
  long long r = tc_floord(v, stride) % count;
  return r < 0 ? r + count : r;
}
// The first step of a loop (its first value's step index q) that `id` owns.
TC_DEVICE long long tc_first(long long q, long long id, long long count) {
  long long r = (id - q) % count;
  return r < 0 ? r + count : r;
}
// A bad index of check `id`, recorded if it is the first (check id + 1, the index, the
// statement's variables there).
TC_DEVICE void tc_record(unsigned long long* fault, unsigned long long id, long long i, const long long* at, int vars) {
  if (atomicCAS(fault, 0ull, id + 1) == 0ull) {
    fault[1] = (unsigned long long)i;
    for (int k = 0; k < vars; ++k) fault[2 + k] = (unsigned long long)at[k];
  }
}
// A checked read's index: in [0, n), else recorded and the read clamped.
TC_DEVICE long long tc_checked(long long i, long long n, unsigned long long* fault, unsigned long long id,
                               const long long* at, int vars) {
  if (i >= 0 && i < n) return i;
  tc_record(fault, id, i, at, vars);
  return tc_clamp(i, n);
}
TC_DEVICE float tc_nanf() { union { unsigned u; float f; } x; x.u = 0x7fc00000u; return x.f; }
TC_DEVICE double tc_nan() { union { unsigned long long u; double f; } x; x.u = 0x7ff8000000000000ull; return x.f; }
TC_DEVICE float tc_inff() { union { unsigned u; float f; } x; x.u = 0x7f800000u; return x.f; }
TC_DEVICE double tc_inf() { union { unsigned long long u; double f; } x; x.u = 0x7ff0000000000000ull; return x.f; }
// Integers wrap: computed modulo 2^64, then narrowed.
template <typename T> TC_DEVICE T tc_add(T a, T b) { return (T)((unsigned long long)a + (unsigned long long)b); }
template <typename T> TC_DEVICE T tc_sub(T a, T b) { return (T)((unsigned long long)a - (unsigned long long)b); }
template <typename T> TC_DEVICE T tc_mul(T a, T b) { return (T)((unsigned long long)a * (unsigned long long)b); }
template <typename T> TC_DEVICE T tc_neg(T a) { return (T)(0ull - (unsigned long long)a); }
TC_DEVICE float tc_add(float a, float b) { return a + b; }
TC_DEVICE double tc_add(double a, double b) { return a + b; }
TC_DEVICE float tc_sub(float a, float b) { return a - b; }
TC_DEVICE double tc_sub(double a, double b) { return a - b; }
TC_DEVICE float tc_mul(float a, float b) { return a * b; }
TC_DEVICE double tc_mul(double a, double b) { return a * b; }
TC_DEVICE float tc_neg(float a) { return -a; }
TC_DEVICE double tc_neg(double a) { return -a; }
// Euclidean integer division (support/int_math.h): 0 <= a % b < |b|; by zero gives 0.
TC_DEVICE long long tc_ediv(long long a, long long b) {
  if (b == 0) return 0;
  if (b == -1) return (long long)(0ull - (unsigned long long)a);
  long long q = a / b;
  if (a % b < 0) q += b > 0 ? -1 : 1;
  return q;
}
TC_DEVICE long long tc_emod(long long a, long long b) {
  if (b == 0 || b == -1) return 0;
  long long r = a % b;
  if (r >= 0) return r;
  unsigned long long magnitude = b < 0 ? 0ull - (unsigned long long)b : (unsigned long long)b;
  return (long long)((unsigned long long)r + magnitude);
}
template <typename T> TC_DEVICE T tc_div(T a, T b) {
  if ((T)-1 < (T)0) return (T)tc_ediv((long long)a, (long long)b);
  return b == 0 ? (T)0 : (T)(a / b);
}
template <typename T> TC_DEVICE T tc_mod(T a, T b) {
  if ((T)-1 < (T)0) return (T)tc_emod((long long)a, (long long)b);
  return b == 0 ? (T)0 : (T)(a % b);
}
TC_DEVICE float tc_div(float a, float b) { return a / b; }
TC_DEVICE double tc_div(double a, double b) { return a / b; }
// Floats: NumPy's floored modulo.
TC_DEVICE float tc_mod(float a, float b) {
  float r = fmodf(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) return r + b;
  if (r == 0) return b < 0 ? -0.0f : 0.0f;
  return r;
}
TC_DEVICE double tc_mod(double a, double b) {
  double r = fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) return r + b;
  if (r == 0) return b < 0 ? -0.0 : 0.0;
  return r;
}
// min and max: NaN if either is NaN; of equal values (-0.0 and 0.0), min the second, max the
// first, as the reference decides them (a < b).
template <typename T> TC_DEVICE T tc_min(T a, T b) { return a < b ? a : b; }
template <typename T> TC_DEVICE T tc_max(T a, T b) { return a < b ? b : a; }
TC_DEVICE float tc_min(float a, float b) { return (a != a || b != b) ? tc_nanf() : a < b ? a : b; }
TC_DEVICE double tc_min(double a, double b) { return (a != a || b != b) ? tc_nan() : a < b ? a : b; }
TC_DEVICE float tc_max(float a, float b) { return (a != a || b != b) ? tc_nanf() : a < b ? b : a; }
TC_DEVICE double tc_max(double a, double b) { return (a != a || b != b) ? tc_nan() : a < b ? b : a; }
template <typename T> TC_DEVICE T tc_abs(T a) { return a < (T)0 ? tc_neg(a) : a; }
TC_DEVICE float tc_abs(float a) { return fabsf(a); }
TC_DEVICE double tc_abs(double a) { return fabs(a); }
// copysign with a NaN's sign counted as positive (the reference's rule).
TC_DEVICE float tc_copysign(float x, float y) { return y != y ? fabsf(x) : copysignf(x, y); }
TC_DEVICE double tc_copysign(double x, double y) { return y != y ? fabs(x) : copysign(x, y); }
TC_DEVICE float tc_rsqrt(float a) { return 1.0f / sqrtf(a); }
TC_DEVICE double tc_rsqrt(double a) { return 1.0 / sqrt(a); }
// float16 is stored as its bits (unsigned short) and computed as float, every result rounded
// to half (round to nearest even), as support/half.h does for the other backends.
TC_DEVICE float tc_h2f(unsigned short h) {
  unsigned sign = (unsigned)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {
      int e = -1;
      do { ++e; man <<= 1; } while ((man & 0x400u) == 0);
      bits = sign | (unsigned)(127 - 15 - e) << 23 | (man & 0x3ffu) << 13;
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | man << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | man << 13;
  }
  union { unsigned u; float f; } x; x.u = bits; return x.f;
}
TC_DEVICE unsigned short tc_f2h(float f) {
  union { unsigned u; float f; } v; v.f = f;
  unsigned x = v.u, abs = x & 0x7fffffffu;
  unsigned short sign = (unsigned short)((x >> 16) & 0x8000u);
  if (abs >= 0x7f800000u) return sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u);
  if (abs >= 0x477ff000u) return sign | 0x7c00u;
  if (abs < 0x33000001u) return sign;
  unsigned exp = abs >> 23, man = (abs & 0x7fffffu) | 0x800000u;
  int shift = exp < 113 ? (int)(126 - exp) : 13;
  unsigned half_man = man >> shift, rem = man & ((1u << shift) - 1), halfway = 1u << (shift - 1);
  if (rem > halfway || (rem == halfway && (half_man & 1u))) ++half_man;
  if (exp < 113) return sign | (unsigned short)half_man;
  return sign | (unsigned short)(((exp - 112) << 10) + (half_man - 0x400u));
}
TC_DEVICE float tc_rh(float f) { return tc_h2f(tc_f2h(f)); }
// bfloat16 likewise: stored as its bits (float's upper half), computed as float, every result
// rounded to nearest even (a NaN gives 0x7fc0), as support/half.h does.
TC_DEVICE float tc_b2f(unsigned short b) { union { unsigned u; float f; } x; x.u = (unsigned)b << 16; return x.f; }
TC_DEVICE unsigned short tc_f2b(float f) {
  union { unsigned u; float f; } v; v.f = f;
  if ((v.u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0u;
  return (unsigned short)((v.u + 0x7fffu + ((v.u >> 16) & 1u)) >> 16);
}
TC_DEVICE float tc_rb(float f) { return tc_b2f(tc_f2b(f)); }
// A scatter's update, atomic (several threads may add to one element): CUDA's atomicAdd for 4-
// and 8-byte elements (integers wrap), a compare-and-swap of the aligned 32-bit word holding
// a 1- or 2-byte element (bool: or; float16, bfloat16: added as float, rounded to the type).
template <typename Op> TC_DEVICE void tc_atomic_field(void* p, unsigned width, Op op) {
  unsigned long long a = (unsigned long long)p;
  unsigned* word = (unsigned*)(a & ~3ull);
  unsigned shift = (unsigned)(a & 3ull) * 8u, mask = (width == 1 ? 0xffu : 0xffffu) << shift;
  unsigned old = *word, assumed;
  do {
    assumed = old;
    unsigned next = (op((assumed & mask) >> shift) << shift) & mask;
    old = atomicCAS(word, assumed, (assumed & ~mask) | next);
  } while (old != assumed);
}
struct tc_add_s8 { signed char v; TC_DEVICE unsigned operator()(unsigned x) const { return (unsigned char)tc_add((signed char)x, v); } };
struct tc_add_u8 { unsigned char v; TC_DEVICE unsigned operator()(unsigned x) const { return (unsigned char)tc_add((unsigned char)x, v); } };
struct tc_add_s16 { short v; TC_DEVICE unsigned operator()(unsigned x) const { return (unsigned short)tc_add((short)x, v); } };
struct tc_add_u16 { unsigned short v; TC_DEVICE unsigned operator()(unsigned x) const { return (unsigned short)tc_add((unsigned short)x, v); } };
struct tc_or_bool { bool v; TC_DEVICE unsigned operator()(unsigned x) const { return (x != 0u || v) ? 1u : 0u; } };
struct tc_add_half { float v; TC_DEVICE unsigned operator()(unsigned x) const { return tc_f2h(tc_h2f((unsigned short)x) + v); } };
struct tc_add_bf16 { float v; TC_DEVICE unsigned operator()(unsigned x) const { return tc_f2b(tc_b2f((unsigned short)x) + v); } };
TC_DEVICE void tc_atomic_add(float* p, float v) { atomicAdd(p, v); }
TC_DEVICE void tc_atomic_add(double* p, double v) { atomicAdd(p, v); }
TC_DEVICE void tc_atomic_add(int* p, int v) { atomicAdd((unsigned*)p, (unsigned)v); }
TC_DEVICE void tc_atomic_add(unsigned* p, unsigned v) { atomicAdd(p, v); }
TC_DEVICE void tc_atomic_add(long long* p, long long v) { atomicAdd((unsigned long long*)p, (unsigned long long)v); }
TC_DEVICE void tc_atomic_add(unsigned long long* p, unsigned long long v) { atomicAdd(p, v); }
TC_DEVICE void tc_atomic_add(signed char* p, signed char v) { tc_add_s8 op = {v}; tc_atomic_field(p, 1, op); }
TC_DEVICE void tc_atomic_add(unsigned char* p, unsigned char v) { tc_add_u8 op = {v}; tc_atomic_field(p, 1, op); }
TC_DEVICE void tc_atomic_add(short* p, short v) { tc_add_s16 op = {v}; tc_atomic_field(p, 2, op); }
TC_DEVICE void tc_atomic_add(unsigned short* p, unsigned short v) { tc_add_u16 op = {v}; tc_atomic_field(p, 2, op); }
TC_DEVICE void tc_atomic_or(unsigned char* p, bool v) { tc_or_bool op = {v}; tc_atomic_field(p, 1, op); }
TC_DEVICE void tc_atomic_add_half(unsigned short* p, float v) { tc_add_half op = {v}; tc_atomic_field(p, 2, op); }
TC_DEVICE void tc_atomic_add_bf16(unsigned short* p, float v) { tc_add_bf16 op = {v}; tc_atomic_field(p, 2, op); }
// An element updated atomically: f maps its stored value to the new one (the lanes' partial
// reductions combined into it, cuda.reduction=atomic). 4 and 8 bytes: a compare-and-swap of the
// element; 1 and 2 bytes: of the aligned 32-bit word that holds it.
template <typename T, typename F> TC_DEVICE void tc_atomic_cas32(T* p, F f) {
  unsigned* w = (unsigned*)p;
  unsigned old = *w, assumed;
  do {
    assumed = old;
    union { unsigned u; T v; } cur, next;
    cur.u = assumed;
    next.v = f(cur.v);
    old = atomicCAS(w, assumed, next.u);
  } while (old != assumed);
}
template <typename T, typename F> TC_DEVICE void tc_atomic_cas64(T* p, F f) {
  unsigned long long* w = (unsigned long long*)p;
  unsigned long long old = *w, assumed;
  do {
    assumed = old;
    union { unsigned long long u; T v; } cur, next;
    cur.u = assumed;
    next.v = f(cur.v);
    old = atomicCAS(w, assumed, next.u);
  } while (old != assumed);
}
template <typename T, typename F> struct tc_narrow {
  F f;
  TC_DEVICE unsigned operator()(unsigned x) const { return (unsigned)(unsigned short)f((T)x) & (sizeof(T) == 1 ? 0xffu : 0xffffu); }
};
template <typename F> TC_DEVICE void tc_atomic_update(float* p, F f) { tc_atomic_cas32(p, f); }
template <typename F> TC_DEVICE void tc_atomic_update(int* p, F f) { tc_atomic_cas32(p, f); }
template <typename F> TC_DEVICE void tc_atomic_update(unsigned* p, F f) { tc_atomic_cas32(p, f); }
template <typename F> TC_DEVICE void tc_atomic_update(double* p, F f) { tc_atomic_cas64(p, f); }
template <typename F> TC_DEVICE void tc_atomic_update(long long* p, F f) { tc_atomic_cas64(p, f); }
template <typename F> TC_DEVICE void tc_atomic_update(unsigned long long* p, F f) { tc_atomic_cas64(p, f); }
template <typename F> TC_DEVICE void tc_atomic_update(signed char* p, F f) { tc_narrow<signed char, F> op = {f}; tc_atomic_field(p, 1, op); }
template <typename F> TC_DEVICE void tc_atomic_update(unsigned char* p, F f) { tc_narrow<unsigned char, F> op = {f}; tc_atomic_field(p, 1, op); }
template <typename F> TC_DEVICE void tc_atomic_update(short* p, F f) { tc_narrow<short, F> op = {f}; tc_atomic_field(p, 2, op); }
template <typename F> TC_DEVICE void tc_atomic_update(unsigned short* p, F f) { tc_narrow<unsigned short, F> op = {f}; tc_atomic_field(p, 2, op); }
// A warp's lanes combine their partial reductions (cuda.reduction=tree): lane l gets lane
// l + off's value (its own past the warp's end).
template <typename T> TC_DEVICE T tc_shfl_down(T v, int off) { return (T)__shfl_down_sync(0xffffffffu, (long long)v, off); }
TC_DEVICE float tc_shfl_down(float v, int off) { return __shfl_down_sync(0xffffffffu, v, off); }
TC_DEVICE double tc_shfl_down(double v, int off) { return __shfl_down_sync(0xffffffffu, v, off); }
TC_DEVICE bool tc_shfl_down(bool v, int off) { return __shfl_down_sync(0xffffffffu, (int)v, off) != 0; }
// The threads along x that share threadIdx.y and z (a reduction's loop is split across them,
// cuda.reduction=tree|atomic; blockDim.x is a multiple of 32) wait for each other and see each
// other's writes: one warp with __syncwarp, several with the hardware barrier 1 + their
// group's index (the host allows at most 15 groups then; barrier 0 is __syncthreads').
TC_DEVICE void tc_group_sync() {
  if (blockDim.x == 32) __syncwarp();
  else __barrier_sync_count(1u + threadIdx.y + blockDim.y * threadIdx.z, blockDim.x);
}
// The index of the calling thread's warp in its block (threads numbered x fastest).
TC_DEVICE unsigned tc_warp_index() { return (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) / 32u; }
// Float to integer: truncated toward zero, saturated, NaN gives 0.
TC_DEVICE long long tc_f2s(double x, int bits) {
  if (x != x) return 0;
  double hi = ldexp(1.0, bits - 1);
  if (x >= hi) return bits == 64 ? 9223372036854775807ll : (long long)hi - 1;
  if (x <= -hi) return bits == 64 ? -9223372036854775807ll - 1 : -(long long)hi;
  return (long long)trunc(x);
}
TC_DEVICE unsigned long long tc_f2u(double x, int bits) {
  if (x != x || x <= 0) return 0;
  double hi = ldexp(1.0, bits);
  if (x >= hi) return bits == 64 ? 18446744073709551615ull : (unsigned long long)hi - 1;
  return (unsigned long long)trunc(x);
}
